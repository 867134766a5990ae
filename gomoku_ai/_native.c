/* The optional C core of the tactics (gomoku_ai._native), a CPython extension. Its only caller is
 * gomoku_ai/native.py, which documents the arguments:
 *   search()        the VCF prover of tactics._VCF, for FREESTYLE and STANDARD (exact five);
 *   window_scans()  tactics._window_scans, every rule (the same lists in the same order);
 *   threats()       vct._threats, and four_moves(): tactics._four_moves, FREESTYLE and STANDARD;
 *   clear()         empties the prover's transposition table.
 * None of them releases the GIL, so the static state below is never used by two calls at once.
 *
 * search() is the same algorithm as tactics._VCF:
 * iterative deepening on the number of attacker fours; at each attacker node the defender's
 * five-points D (two or more: no VCF; one: the attacker must take it, with a four); candidates from
 * a stack of four-windows (the root's, plus those each attacker stone of the line opens), tried
 * newest first; a four with two or more five-points wins; with one, the defender's only reply is
 * that five-point and the search goes on with the reply's own five-points as the next D. A
 * transposition table stores "no VCF within d fours" (or within any number) per position and
 * attacker. It is one array for the process, but every entry carries the number of the caller's
 * table (gomoku_ai.native.table_for): a search sees only its own table's entries, so its answer
 * never depends on unrelated searches made before it (entries of other tables are overwritten).
 *
 * The board is the padded buffer of gomoku_ai.board.Board: cell (x, y) at (y + 1) * p + x with
 * p = width + 1; EMPTY 0, BLACK 1, WHITE 2, WALL 3, and a WALL column, a WALL row above and one
 * below. It is copied p + 1 cells into a WALL-filled array (Search.off), so that every walk along
 * a line stops at a WALL before it leaves the array.
 *
 * Renju and caro stay in Python (tactics._VCF): their forbidden points and blocked fives are
 * not modelled here.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define EMPTY 0
#define WALL 3
#define MAX_CELLS 1200           /* (32 + 2) * 33 + 1 = 1123, plus 2 x 34 WALL cells around */
#define MAX_LINE 128             /* 2 * max_depth + 3 moves at max_depth 62 */
#define INF_DEPTH 0x3fffffff
#define TT_BITS 19               /* 2^19 entries x 16 bytes = 8 MB */
#define TT_SIZE (1u << TT_BITS)

typedef struct { uint64_t key; int32_t depth; uint32_t table; } TTEntry;

static TTEntry *tt = NULL;
static uint64_t zob[MAX_CELLS][4];

typedef struct {
    unsigned char cell[MAX_CELLS];
    int w, h, p, n, exact, att, dfn, size, off;
    int dirs[4];
    uint64_t hash;
    uint32_t table;              /* the caller's table number: other numbers' entries are empty */
    long long nodes, node_limit, cut;
    double deadline;             /* CLOCK_MONOTONIC seconds; <= 0: none */
    int aborted;
    int *cands;                  /* stack of candidate squares (padded indices) */
    int ncands, capc;
    unsigned *tried;             /* tried[pi] == stamp: tried at the node of that stamp (a deeper
                                  * node may re-mark a square; it is then tried again here, which
                                  * costs a TT probe, never a wrong answer) */
    unsigned stamp;
    int line[MAX_LINE];
} Search;

static uint64_t splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Does a c stone on the empty pi make a winning row along direction step? */
static int five_dir(const Search *s, int pi, int c, int step) {
    const unsigned char *b = s->cell;
    int len = 1, q = pi - step;
    while (b[q] == c) { len++; q -= step; }
    q = pi + step;
    while (b[q] == c) { len++; q += step; }
    return s->exact ? len == s->n : len >= s->n;
}

static int makes_five(const Search *s, int pi, int c) {
    for (int d = 0; d < 4; d++)
        if (five_dir(s, pi, c, s->dirs[d])) return 1;
    return 0;
}

/* Five-points of c made by its stone on m (already placed): along each line through m, the first
 * empty square on either side whose filling makes a winning row along that line (a row through
 * such a square and m holds no other empty square). Writes up to 8 points; returns how many. */
static int fives_through(const Search *s, int m, int c, int *out) {
    const unsigned char *b = s->cell;
    int k = 0;
    for (int d = 0; d < 4; d++) {
        int step = s->dirs[d];
        for (int sgn = -1; sgn <= 1; sgn += 2) {
            int q = m + sgn * step;
            while (b[q] == c) q += sgn * step;
            if (b[q] == EMPTY && five_dir(s, q, c, step)) {
                int dup = 0;
                for (int i = 0; i < k; i++) if (out[i] == q) dup = 1;
                if (!dup) out[k++] = q;
            }
        }
    }
    return k;
}

static int push_cand(Search *s, int q) {
    if (s->ncands >= s->capc) {
        int cap = s->capc * 2;
        int *nc = (int *)realloc(s->cands, sizeof(int) * (size_t)cap);
        if (!nc) return -1;
        s->cands = nc;
        s->capc = cap;
    }
    s->cands[s->ncands++] = q;
    return 0;
}

/* The empty squares of the n-window starting at a (along step) if it holds exactly n - 2 stones
 * of c and nothing else but empty squares. */
static int window_four(Search *s, int a, int step, int c) {
    const unsigned char *b = s->cell;
    int e[2], ne = 0, own = 0;
    for (int i = 0; i < s->n; i++) {
        int v = b[a + i * step];
        if (v == c) own++;
        else if (v == EMPTY) { if (ne < 2) e[ne] = a + i * step; ne++; }
        else return 0;
    }
    if (own != s->n - 2 || ne != 2) return 0;
    if (push_cand(s, e[0]) || push_cand(s, e[1])) return -1;
    return 0;
}

/* Windows through m (a c stone) along each direction. */
static int windows_through(Search *s, int m, int c) {
    const unsigned char *b = s->cell;
    for (int d = 0; d < 4; d++) {
        int step = s->dirs[d];
        /* the farthest start towards -step that stays on the board (at most n - 1 back) */
        int back = 0;
        while (back < s->n - 1 && b[m - (back + 1) * step] != WALL) back++;
        for (int k = back; k >= 0; k--) {
            int a = m - k * step;
            /* the window a .. a + (n-1) step must stay on the board */
            int ok = 1;
            for (int i = 0; i < s->n; i++) if (b[a + i * step] == WALL) { ok = 0; break; }
            if (!ok) break;
            if (window_four(s, a, step, c)) return -1;
        }
    }
    return 0;
}

static void place(Search *s, int pi, int c) { s->cell[pi] = (unsigned char)c; s->hash ^= zob[pi][c]; }
static void clear_cell(Search *s, int pi, int c) { s->cell[pi] = EMPTY; s->hash ^= zob[pi][c]; }

/* Attacker to move, no five-point of its own; D: the defender's five-points (nd of them). Returns
 * the length of a winning line written at line[ply..], 0 for none, -1 when aborted. */
static int attack(Search *s, int depth, int nd, const int *D, int ply) {
    s->nodes++;
    if (s->nodes >= s->node_limit) { s->aborted = 1; return -1; }
    if (s->deadline > 0 && !(s->nodes & 63) && now_s() > s->deadline) { s->aborted = 1; return -1; }
    uint64_t h = s->hash;
    TTEntry *e = &tt[h & (TT_SIZE - 1)];
    int hit = e->key == h && e->table == s->table;
    int known = hit ? e->depth : -1;
    if (known >= depth) {
        if (known < INF_DEPTH) s->cut++;
        return 0;
    }
    if (nd >= 2) {
        e->key = h; e->depth = INF_DEPTH; e->table = s->table;
        return 0;
    }
    if (ply + 3 > MAX_LINE) { s->cut++; return 0; }
    long long cut0 = s->cut;
    unsigned stamp = ++s->stamp;
    int att = s->att, dfn = s->dfn;
    int top = nd ? 1 : s->ncands;
    for (int idx = top - 1; idx >= 0; idx--) {
        int m = nd ? D[0] : s->cands[idx];
        if (s->cell[m] != EMPTY || s->tried[m] == stamp) continue;
        s->tried[m] = stamp;
        int F[8];
        place(s, m, att);
        int nf = fives_through(s, m, att, F);
        if (nf == 0) { clear_cell(s, m, att); continue; }
        if (nf >= 2) {
            s->line[ply] = m; s->line[ply + 1] = F[0]; s->line[ply + 2] = F[1];
            clear_cell(s, m, att);
            return 3;
        }
        if (depth == 1) { s->cut++; clear_cell(s, m, att); continue; }
        int n0 = s->ncands;
        if (windows_through(s, m, att)) { s->ncands = n0; clear_cell(s, m, att); s->aborted = 1; return -1; }
        int r = F[0];
        place(s, r, dfn);
        int Dn[8];
        int ndn = fives_through(s, r, dfn, Dn);
        int sub = attack(s, depth - 1, ndn, Dn, ply + 2);
        clear_cell(s, r, dfn);
        s->ncands = n0;
        clear_cell(s, m, att);
        if (sub < 0) return -1;
        if (sub > 0) {
            s->line[ply] = m; s->line[ply + 1] = r;
            return sub + 2;
        }
    }
    int val = s->cut != cut0 ? depth : INF_DEPTH;
    if (e->key != h || e->table != s->table || val > e->depth) {
        e->key = h; e->depth = val; e->table = s->table;
    }
    return 0;
}

/* The board lines of one geometry, in the order of tactics._Geo.lines (direction by direction:
 * (1, 0), (0, 1), (1, 1), (-1, 1); lines by their first square in row-major order), as flat
 * squares; kept for the last width and height asked. */
typedef struct { int w, h, count; unsigned char len[256], dir[256]; short flat[256][32]; } Lines;

static const Lines *board_lines(int w, int h) {
    static const int DX[4] = {1, 0, 1, -1}, DY[4] = {0, 1, 1, 1};
    static Lines g = {0, 0, 0, {0}, {0}, {{0}}};
    if (g.w == w && g.h == h) return &g;
    g.count = 0;
    for (int d = 0; d < 4; d++)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                int px = x - DX[d], py = y - DY[d];
                if (0 <= px && px < w && 0 <= py && py < h) continue;   /* not a line's start */
                int L = 0;
                while (L < 32) {
                    int xx = x + L * DX[d], yy = y + L * DY[d];
                    if (xx < 0 || xx >= w || yy >= h) break;
                    g.flat[g.count][L++] = (short)(yy * w + xx);
                }
                g.len[g.count] = (unsigned char)L;
                g.dir[g.count] = (unsigned char)d;
                g.count++;
            }
    g.w = w; g.h = h;
    return &g;
}

/* One pass over every n-window of the board (line by line, as tactics._Geo.lines orders them):
 * the attacker's five-point with the smallest index (own), the defender's five-points (D, at most
 * two are kept: two already refute every VCF), and the root's four candidates, the empty squares
 * of the windows holding n - 2 attacker stones and nothing else (each once per line). Returns -1
 * when the candidate stack cannot grow. */
static int root_scan(Search *s, int *own, int *D, int *nd) {
    const unsigned char *b = s->cell;
    int n = s->n, w = s->w, att = s->att, dfn = s->dfn;
    const Lines *g = board_lines(w, s->h);
    int q[32];
    for (int li = 0; li < g->count; li++) {
        int L = g->len[li];
        if (L < n) continue;
        for (int k = 0; k < L; k++) {
            int m = g->flat[li][k];
            q[k] = (m / w + 1) * s->p + m % w + s->off;
        }
        int ca = 0, cd = 0, ce = 0;       /* attacker, defender, empty in the window */
        unsigned seen = 0;
        for (int k = 0; k < L; k++) {
            int v = b[q[k]];
            ca += v == att; cd += v == dfn; ce += v == EMPTY;
            if (k >= n) {
                int u = b[q[k - n]];
                ca -= u == att; cd -= u == dfn; ce -= u == EMPTY;
            }
            if (k < n - 1) continue;
            int st = k - n + 1;
            if (ce == 1 && (ca == n - 1 || cd == n - 1)) {
                int e = -1;
                for (int i = st; i <= k; i++) if (b[q[i]] == EMPTY) e = q[i];
                if (ca == n - 1) {
                    if ((*own < 0 || e < *own) && makes_five(s, e, att)) *own = e;
                } else if (*nd < 2 && makes_five(s, e, dfn)
                           && !(*nd == 1 && D[0] == e)) {
                    D[(*nd)++] = e;
                }
            } else if (ce == 2 && ca == n - 2) {
                for (int i = st; i <= k; i++) {
                    if (b[q[i]] != EMPTY || (seen >> i) & 1u) continue;
                    seen |= 1u << i;
                    if (push_cand(s, q[i])) return -1;
                }
            }
        }
    }
    return 0;
}

static int to_flat(const Search *s, int q) { int pi = q - s->off; return (pi / s->p - 1) * s->w + pi % s->p; }

/* search(buf, width, height, n, exact, attacker, node_limit, max_depth, budget_s, salt, table)
 *   -> (line tuple of flat moves or None, nodes, depth, complete, aborted) */
static PyObject *vcf_search(PyObject *self, PyObject *args) {
    Py_buffer buf;
    int w, h, n, exact, att, max_depth;
    long long node_limit;
    double budget;
    unsigned long long salt;
    unsigned int table;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*iiiiiLidKI", &buf, &w, &h, &n, &exact, &att, &node_limit,
                          &max_depth, &budget, &salt, &table))
        return NULL;
    int p = w + 1;
    Py_ssize_t need = (Py_ssize_t)(h + 2) * p + 1;
    if (w < 5 || h < 5 || w > 32 || h > 32 || n < 3 || n > 8 || (att != 1 && att != 2)
        || buf.len != need || max_depth < 1) {
        PyBuffer_Release(&buf);
        PyErr_SetString(PyExc_ValueError, "_native.search: bad board geometry or arguments");
        return NULL;
    }
    if (!tt) {
        tt = (TTEntry *)calloc(TT_SIZE, sizeof(TTEntry));
        if (!tt) { PyBuffer_Release(&buf); return PyErr_NoMemory(); }
        uint64_t seed = 0x5EED60C0FFEEull;
        for (int i = 0; i < MAX_CELLS; i++)
            for (int c = 0; c < 4; c++) zob[i][c] = splitmix(&seed);
    }
    /* one search at a time: the GIL is held throughout, so the state and its buffers are static */
    static Search S;
    static int *cands = NULL;
    static int capc = 0;
    static unsigned tried[MAX_CELLS];
    static unsigned stamp = 0;
    Search *s = &S;
    if (!cands) {
        cands = (int *)malloc(sizeof(int) * 4096);
        if (!cands) { PyBuffer_Release(&buf); return PyErr_NoMemory(); }
        capc = 4096;
    }
    if (stamp > 0xF0000000u) { memset(tried, 0, sizeof(tried)); stamp = 0; }
    /* the board's buffer shifted by off = p + 1 WALL cells: a step off the board's first row or
     * last row lands on a WALL here too (Python reads index -1 of its buffer for one of them) */
    int off = p + 1;
    memset(s->cell, WALL, sizeof(s->cell));
    memcpy(s->cell + off, buf.buf, (size_t)need);
    PyBuffer_Release(&buf);
    s->off = off;
    s->w = w; s->h = h; s->p = p; s->n = n; s->exact = exact; s->att = att; s->dfn = 3 - att;
    s->size = (int)need + 2 * off;
    s->dirs[0] = 1; s->dirs[1] = p; s->dirs[2] = p + 1; s->dirs[3] = p - 1;
    s->nodes = 0; s->cut = 0; s->aborted = 0;
    s->node_limit = node_limit;
    s->table = table;
    s->deadline = budget > 0 ? now_s() + budget : 0;
    s->cands = cands; s->capc = capc; s->ncands = 0;
    s->tried = tried; s->stamp = stamp;
    /* the position's key: salt (rule, size, attacker) and every stone and wall on the board */
    uint64_t hs = salt * 0x9E3779B97F4A7C15ull + (uint64_t)att;
    s->hash = splitmix(&hs);
    for (int pi = 0; pi < s->size; pi++) {
        int v = s->cell[pi];
        if (v != EMPTY) s->hash ^= zob[pi][v];
    }
    int len = 0, depth = 0, complete = 0;
    int D[2], nd = 0, own = -1;
    int rc = root_scan(s, &own, D, &nd);
    if (rc == 0 && own >= 0) {
        s->line[0] = own;
        len = 1;
    } else if (rc == 0) {
        for (depth = 1; depth <= max_depth; depth++) {
            long long cut0 = s->cut;
            int r = attack(s, depth, nd, D, 0);
            if (r < 0) break;
            if (r > 0) { len = r; break; }
            if (s->cut == cut0) { complete = 1; break; }
        }
        if (depth > max_depth) depth = max_depth;
    }
    cands = s->cands; capc = s->capc; stamp = s->stamp;    /* (the stack may have grown) */
    if (rc) return PyErr_NoMemory();
    PyObject *line;
    if (len > 0) {
        line = PyList_New(len);
        if (!line) return NULL;
        for (int i = 0; i < len; i++) PyList_SET_ITEM(line, i, PyLong_FromLong(to_flat(s, s->line[i])));
    } else {
        line = Py_None;
        Py_INCREF(line);
    }
    return Py_BuildValue("(NLiii)", line, s->nodes, depth, complete, s->aborted);
}

/* window_scans(buf, width, height, n, wants) -> [[(square, direction), ...] for each want]
 *
 * For each (colour, need) of wants: the empty squares of every n-window holding exactly need stones
 * of that colour and empty squares otherwise, as tactics._window_scans gives them: the board's lines
 * in the order of tactics._Geo.lines (direction by direction: (1, 0), (0, 1), (1, 1), (-1, 1);
 * lines by their first square in row-major order; lines shorter than n left out), and along a line
 * windows left to right and their squares left to right, each square once per line. */
static PyObject *window_scans(PyObject *self, PyObject *args) {
    Py_buffer buf;
    int w, h, n;
    PyObject *wants;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*iiiO!", &buf, &w, &h, &n, &PyTuple_Type, &wants)) return NULL;
    int p = w + 1;
    Py_ssize_t nw = PyTuple_GET_SIZE(wants);
    int col[8], need[8];
    if (w < 1 || h < 1 || w > 32 || h > 32 || n < 1 || n > 32 || nw > 8
        || buf.len != (Py_ssize_t)(h + 2) * p + 1) {
        PyBuffer_Release(&buf);
        PyErr_SetString(PyExc_ValueError, "_native.window_scans: bad board geometry or wants");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < nw; i++) {
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(wants, i), "ii", &col[i], &need[i])) {
            PyBuffer_Release(&buf);
            return NULL;
        }
    }
    const unsigned char *b = (const unsigned char *)buf.buf;
    PyObject *outs = PyList_New(nw);
    if (!outs) { PyBuffer_Release(&buf); return NULL; }
    for (Py_ssize_t i = 0; i < nw; i++) {
        PyObject *l = PyList_New(0);
        if (!l) { Py_DECREF(outs); PyBuffer_Release(&buf); return NULL; }
        PyList_SET_ITEM(outs, i, l);
    }
    const Lines *g = board_lines(w, h);
    unsigned char cells[32];
    for (int li = 0; li < g->count; li++) {
        int L = g->len[li], d = g->dir[li];
        if (L < n) continue;
        const short *flat = g->flat[li];
        int tot[4] = {0, 0, 0, 0};
        for (int k = 0; k < L; k++) {
            int m = flat[k];
            cells[k] = b[(m / w + 1) * p + m % w] & 3;
            tot[cells[k]]++;
        }
        int any = 0;                          /* can a window of this line hold what is wanted? */
        for (Py_ssize_t i = 0; i < nw; i++)
            if (tot[col[i] & 3] >= need[i] && tot[EMPTY] >= n - need[i]) any = 1;
        if (!any) continue;
        /* stones of each kind in the window starting at st, for every st */
        unsigned char cnt[32][4];
        int c4[4] = {0, 0, 0, 0};
        for (int k = 0; k < L; k++) {
            c4[cells[k]]++;
            if (k >= n) c4[cells[k - n]]--;
            if (k >= n - 1) for (int v = 0; v < 4; v++) cnt[k - n + 1][v] = (unsigned char)c4[v];
        }
        for (Py_ssize_t i = 0; i < nw; i++) {
            unsigned seen = 0;
            PyObject *out = PyList_GET_ITEM(outs, i);
            int ci = col[i] & 3;
            for (int st = 0; st + n <= L; st++) {
                if (cnt[st][ci] != need[i] || cnt[st][EMPTY] != n - need[i]) continue;
                for (int k = st; k < st + n; k++) {
                    if (cells[k] != EMPTY || (seen >> k) & 1u) continue;
                    seen |= 1u << k;
                    PyObject *t = PyTuple_New(2);
                    if (!t) { Py_DECREF(outs); PyBuffer_Release(&buf); return NULL; }
                    PyTuple_SET_ITEM(t, 0, PyLong_FromLong(flat[k]));
                    PyTuple_SET_ITEM(t, 1, PyLong_FromLong(d));
                    if (PyList_Append(out, t)) {
                        Py_DECREF(t); Py_DECREF(outs); PyBuffer_Release(&buf);
                        return NULL;
                    }
                    Py_DECREF(t);
                }
            }
        }
    }
    PyBuffer_Release(&buf);
    return outs;
}

/* ---------------------------------------------------------------------------------------------
 * Threat moves: tactics._line_info for FREESTYLE and exact five (not caro), and the two whole-board
 * lists built on it, vct._threats and tactics._four_moves. */

typedef struct { int five, nf, nt; int fpts[8]; } LineInfo;

/* The run of c through j in a (length L): its ends in *lo, *hi; does it win? */
static int row_wins(const unsigned char *a, int L, int j, int c, int n, int exact, int *lo, int *hi) {
    int l = j - 1, h = j + 1;
    while (l >= 0 && a[l] == c) l--;
    while (h < L && a[h] == c) h++;
    int len = h - l - 1;
    *lo = l + 1; *hi = h - 1;
    return exact ? len == n : len >= n;
}

/* Five-points of the window a (m at index i, taken as c) whose winning row holds i and e. */
static int points(unsigned char *a, int L, int i, int e, int c, int n, int exact, int *out) {
    int k = 0, lo_need = i < e ? i : e, hi_need = i > e ? i : e;
    int lo_r = i - n + 1 < 0 ? 0 : i - n + 1, hi_r = i + n - 1 > L - 1 ? L - 1 : i + n - 1;
    for (int j = lo_r; j <= hi_r; j++) {
        if (a[j] != EMPTY) continue;
        int lo, hi;
        a[j] = (unsigned char)c;
        int ok = row_wins(a, L, j, c, n, exact, &lo, &hi);
        a[j] = EMPTY;
        if (ok && lo <= lo_need && hi_need <= hi) { if (out && k < 8) out[k] = j - i; k++; }
    }
    return k;
}

/* tactics._line_info of the line through pi along step, pi taken as a c stone: five, the
 * five-points (offsets in steps from pi) and the number of straight-four points (tpts). */
static void line_info(const Search *s, int pi, int step, int c, LineInfo *r) {
    int n = s->n, L = 2 * n + 1, i = n;
    unsigned char a[2 * 8 + 1];
    const unsigned char *b = s->cell;
    a[i] = (unsigned char)c;
    int k, wall = 0;
    for (k = 1; k <= n; k++) {          /* everything past the first WALL is WALL */
        if (!wall && b[pi - k * step] == WALL) wall = 1;
        a[i - k] = wall ? WALL : b[pi - k * step];
    }
    wall = 0;
    for (k = 1; k <= n; k++) {
        if (!wall && b[pi + k * step] == WALL) wall = 1;
        a[i + k] = wall ? WALL : b[pi + k * step];
    }
    int lo, hi;
    r->five = row_wins(a, L, i, c, n, s->exact, &lo, &hi);
    r->nf = points(a, L, i, i, c, n, s->exact, r->fpts);
    if (r->nf > 8) r->nf = 8;
    r->nt = 0;
    if (r->five) return;
    int lo_r = i - n + 1, hi_r = i + n - 1;
    for (int e = lo_r; e <= hi_r; e++) {
        if (a[e] != EMPTY) continue;
        a[e] = (unsigned char)c;
        int five_pt = row_wins(a, L, e, c, n, s->exact, &lo, &hi) && lo <= i && i <= hi;
        int pts = five_pt ? 0 : points(a, L, i, e, c, n, s->exact, NULL);
        a[e] = EMPTY;
        if (pts >= 2) r->nt++;
    }
}

/* The board of a threats / four_moves call in S-like form (cells shifted by off, as search()). */
static int load_board(Search *s, PyObject *args, int *c, int *need_stones) {
    Py_buffer buf;
    int w, h, n, exact;
    if (!PyArg_ParseTuple(args, "y*iiiii", &buf, &w, &h, &n, &exact, c)) return -1;
    int p = w + 1;
    Py_ssize_t need = (Py_ssize_t)(h + 2) * p + 1;
    if (w < 5 || h < 5 || w > 32 || h > 32 || n < 3 || n > 8 || (*c != 1 && *c != 2)
        || buf.len != need) {
        PyBuffer_Release(&buf);
        PyErr_SetString(PyExc_ValueError, "_native: bad board geometry or colour");
        return -1;
    }
    int off = p + 1;
    memset(s->cell, WALL, sizeof(s->cell));
    memcpy(s->cell + off, buf.buf, (size_t)need);
    PyBuffer_Release(&buf);
    s->off = off; s->w = w; s->h = h; s->p = p; s->n = n; s->exact = exact;
    s->dirs[0] = 1; s->dirs[1] = p; s->dirs[2] = p + 1; s->dirs[3] = p - 1;
    (void)need_stones;
    return 0;
}

/* The empty squares of the n-windows holding exactly k stones of c and empty squares otherwise,
 * each once, in the order of tactics._window_squares (first met). Returns how many (<= max). */
static int window_squares(const Search *s, int c, int k, int *out, int max) {
    static unsigned char mark[MAX_CELLS];
    const unsigned char *b = s->cell;
    int n = s->n, cnt = 0, q[32];
    const Lines *g = board_lines(s->w, s->h);
    memset(mark, 0, sizeof(mark));
    for (int li = 0; li < g->count; li++) {
        int L = g->len[li];
        for (int t = 0; t < L; t++) {
            int m = g->flat[li][t];
            q[t] = (m / s->w + 1) * s->p + m % s->w + s->off;
        }
        int cc = 0, ce = 0;
        for (int j = 0; j < L; j++) {
            int v = b[q[j]];
            cc += v == c; ce += v == EMPTY;
            if (j >= n) { int u = b[q[j - n]]; cc -= u == c; ce -= u == EMPTY; }
            if (j < n - 1 || cc != k || ce != n - k) continue;
            for (int t = j - n + 1; t <= j; t++)
                if (b[q[t]] == EMPTY && !mark[q[t]] && cnt < max) { mark[q[t]] = 1; out[cnt++] = q[t]; }
        }
    }
    return cnt;
}

static int threat_cmp(const void *x, const void *y) {
    const int *a = (const int *)x, *b = (const int *)y;   /* (flat move, fours, threes) */
    int ka = 2 * a[1] + a[2], kb = 2 * b[1] + b[2];
    if (ka != kb) return kb - ka;
    if (a[1] != b[1]) return b[1] - a[1];
    return a[0] - b[0];
}

/* threats(buf, width, height, n, exact, colour) -> [(move, fours, threes), ...]: vct._threats
 * (moves making a four or an open three, not a five; most threatening first, then by move). */
static PyObject *threats(PyObject *self, PyObject *args) {
    static Search T;
    static int sq[MAX_CELLS], rows[MAX_CELLS][3];
    int c;
    (void)self;
    if (load_board(&T, args, &c, NULL)) return NULL;
    int ns = window_squares(&T, c, T.n - 3, sq, MAX_CELLS), nr = 0;
    for (int k = 0; k < ns; k++) {
        int m = sq[k], fours = 0, threes = 0, five = 0;
        for (int d = 0; d < 4 && !five; d++) {
            LineInfo li;
            line_info(&T, m, T.dirs[d], c, &li);
            if (li.five) five = 1;
            else if (li.nf) fours++;
            else if (li.nt) threes++;
        }
        if (five || !(fours || threes)) continue;
        rows[nr][0] = to_flat(&T, m); rows[nr][1] = fours; rows[nr][2] = threes; nr++;
    }
    qsort(rows, (size_t)nr, sizeof(rows[0]), threat_cmp);
    PyObject *out = PyList_New(nr);
    if (!out) return NULL;
    for (int k = 0; k < nr; k++) {
        PyObject *t = Py_BuildValue("(iii)", rows[k][0], rows[k][1], rows[k][2]);
        if (!t) { Py_DECREF(out); return NULL; }
        PyList_SET_ITEM(out, k, t);
    }
    return out;
}

/* four_moves(buf, width, height, n, exact, colour) -> [(move, (five-points...), straight,
 * double), ...] sorted by move: tactics._four_moves without the renju check. */
static PyObject *four_moves(PyObject *self, PyObject *args) {
    static Search T;
    static int sq[MAX_CELLS];
    int c;
    (void)self;
    if (load_board(&T, args, &c, NULL)) return NULL;
    int ns = window_squares(&T, c, T.n - 2, sq, MAX_CELLS);
    PyObject *out = PyList_New(0);
    if (!out) return NULL;
    for (int k = 0; k < ns; k++) {
        int m = sq[k], five = 0, lines = 0, straight = 0, nf = 0, F[32];
        for (int d = 0; d < 4 && !five; d++) {
            LineInfo li;
            line_info(&T, m, T.dirs[d], c, &li);
            if (li.five) { five = 1; break; }
            if (li.nf) {
                lines++;
                if (li.nf >= 2) straight = 1;
                for (int j = 0; j < li.nf; j++) F[nf++] = to_flat(&T, m + li.fpts[j] * T.dirs[d]);
            }
        }
        if (five || !nf) continue;
        PyObject *fives = PyTuple_New(nf);
        if (!fives) { Py_DECREF(out); return NULL; }
        for (int j = 0; j < nf; j++) PyTuple_SET_ITEM(fives, j, PyLong_FromLong(F[j]));
        PyObject *t = Py_BuildValue("(iNOO)", to_flat(&T, m), fives, straight ? Py_True : Py_False,
                                    lines >= 2 ? Py_True : Py_False);
        if (!t || PyList_Append(out, t)) { Py_XDECREF(t); Py_DECREF(out); return NULL; }
        Py_DECREF(t);
    }
    if (PyList_Sort(out)) { Py_DECREF(out); return NULL; }
    return out;
}

static PyObject *vcf_clear(PyObject *self, PyObject *args) {
    (void)self; (void)args;
    if (tt) memset(tt, 0, sizeof(TTEntry) * TT_SIZE);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"search", vcf_search, METH_VARARGS, "VCF search (see gomoku_ai/native.py)."},
    {"clear", vcf_clear, METH_NOARGS, "Empty the transposition table."},
    {"window_scans", window_scans, METH_VARARGS, "Window scans (see gomoku_ai/native.py)."},
    {"threats", threats, METH_VARARGS, "vct._threats (see gomoku_ai/native.py)."},
    {"four_moves", four_moves, METH_VARARGS, "tactics._four_moves (see gomoku_ai/native.py)."},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_native", "The C core: VCF prover and window scans.", -1, methods};

PyMODINIT_FUNC PyInit__native(void) { return PyModule_Create(&module); }
