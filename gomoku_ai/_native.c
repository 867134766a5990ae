/* The optional C core of the tactics (gomoku_ai._native), a CPython extension. Its only caller is
 * gomoku_ai/native.py, which documents the arguments:
 *   search()        the VCF prover of tactics._VCF, for FREESTYLE and STANDARD (exact five);
 *   window_scans()  tactics._window_scans, every rule (the same lists in the same order);
 *   threats()       vct._threats, and four_moves(): tactics._four_moves, FREESTYLE and STANDARD;
 *   vct()           the VCT search of vct._VCT (without verify_defences), FREESTYLE and STANDARD;
 *   clear()         empties the prover's transposition table;
 *   select_vl(), backup_edge(), near_candidates()
 *                   the MCTS tree's arithmetic of gomoku_ai/mcts.py (every rule; see below);
 *   three_replies(), child_fives()
 *                   the MCTS node creation of gomoku_ai/mcts.py, FREESTYLE and STANDARD;
 *   encode()        the network's input planes of a transformed board (gomoku_ai/net/encoding.py).
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
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <math.h>

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
    const struct Lines *g;       /* the board's lines (count_lines) */
    unsigned char lcnt[256];     /* stones (either colour) on each of g's lines: set by count_lines,
                                  * vput and vdel, so right at every VCT node and when a VCF starts
                                  * (place / clear_cell inside a VCF leave it stale: unread there).
                                  * A line with fewer stones than a window needs is skipped */
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
typedef struct Lines {
    int w, h, count;
    unsigned char len[256], dir[256];
    short flat[256][32];
    short pad[256][32];          /* the same squares in a Search's cells (load_cells: off = w + 2) */
    unsigned char lid[MAX_CELLS][4];   /* the line through a padded square in each direction */
} Lines;

static const Lines *board_lines(int w, int h) {
    static const int DX[4] = {1, 0, 1, -1}, DY[4] = {0, 1, 1, 1};
    static Lines g = {0, 0, 0, {0}, {0}, {{0}}, {{0}}};
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
                    g.pad[g.count][L] = (short)((yy + 1) * (w + 1) + xx + w + 2);
                    g.flat[g.count][L++] = (short)(yy * w + xx);
                }
                g.len[g.count] = (unsigned char)L;
                g.dir[g.count] = (unsigned char)d;
                for (int k = 0; k < L; k++) g.lid[g.pad[g.count][k]][d] = (unsigned char)g.count;
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
    int n = s->n, att = s->att, dfn = s->dfn;
    const Lines *g = s->g;
    for (int li = 0; li < g->count; li++) {
        int L = g->len[li];
        if (L < n || s->lcnt[li] < n - 2) continue;   /* no window with n - 2 stones */
        const short *q = g->pad[li];
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

/* The prover's buffers, shared by every search (one at a time: the GIL is held throughout). */
static int *g_cands = NULL;
static int g_capc = 0;
static unsigned g_tried[MAX_CELLS];
static unsigned g_stamp = 0;

/* The transposition table, the Zobrist keys and the candidate stack, made at the first search. */
static int prover_tables(void) {
    if (!tt) {
        tt = (TTEntry *)calloc(TT_SIZE, sizeof(TTEntry));
        if (!tt) return -1;
        uint64_t seed = 0x5EED60C0FFEEull;
        for (int i = 0; i < MAX_CELLS; i++)
            for (int c = 0; c < 4; c++) zob[i][c] = splitmix(&seed);
    }
    if (!g_cands) {
        g_cands = (int *)malloc(sizeof(int) * 4096);
        if (!g_cands) return -1;
        g_capc = 4096;
    }
    return 0;
}

/* The key of a prover position: the salt (rule, size) with the attacker, and every stone and wall. */
static uint64_t key_base(unsigned long long salt, int att) {
    uint64_t hs = salt * 0x9E3779B97F4A7C15ull + (uint64_t)att;
    return splitmix(&hs);
}

static uint64_t stones_key(const Search *s) {
    uint64_t h = 0;
    for (int pi = 0; pi < s->size; pi++) {
        int v = s->cell[pi];
        if (v != EMPTY) h ^= zob[pi][v];
    }
    return h;
}

/* Copy a Board buffer (validated by the caller: need cells) into s, shifted by off = p + 1 WALL
 * cells: a step off the board's first row or last row lands on a WALL here too (Python reads
 * index -1 of its buffer for one of them). */
static void load_cells(Search *s, const void *cells, Py_ssize_t need, int w, int h, int n, int exact) {
    int p = w + 1, off = p + 1;
    memset(s->cell, WALL, sizeof(s->cell));
    memcpy(s->cell + off, cells, (size_t)need);
    s->off = off; s->w = w; s->h = h; s->p = p; s->n = n; s->exact = exact;
    s->size = (int)need + 2 * off;
    s->dirs[0] = 1; s->dirs[1] = p; s->dirs[2] = p + 1; s->dirs[3] = p - 1;
}

/* Count the stones of each of s's lines (Search.lcnt), for the callers that scan the whole board
 * (the VCF, the VCT, the threat lists): one pass over the cells, after load_cells. */
static void count_lines(Search *s) {
    const Lines *g = board_lines(s->w, s->h);
    s->g = g;
    memset(s->lcnt, 0, sizeof(s->lcnt));
    for (int y = 0; y < s->h; y++)
        for (int x = 0, pi = (y + 1) * s->p + s->off; x < s->w; x++, pi++)
            if (s->cell[pi] == 1 || s->cell[pi] == 2)
                for (int d = 0; d < 4; d++) s->lcnt[g->lid[pi][d]]++;
}

/* The VCF of att on s's cells (prover_tables made): iterative deepening up to max_depth fours.
 * key: the position's key (key_base(salt, att) ^ stones_key). deadline: CLOCK_MONOTONIC seconds,
 * <= 0 for none. Writes the line (padded squares) to s->line and returns its length (0: none),
 * -1 when the candidate stack cannot grow; *depth, *complete and s->nodes, s->aborted say the rest. */
static int vcf_run(Search *s, int att, long long node_limit, int max_depth, double deadline,
                   uint32_t table, uint64_t key, int *depth_out, int *complete_out) {
    if (g_stamp > 0xF0000000u) { memset(g_tried, 0, sizeof(g_tried)); g_stamp = 0; }
    s->att = att; s->dfn = 3 - att;
    s->nodes = 0; s->cut = 0; s->aborted = 0;
    s->node_limit = node_limit;
    s->table = table;
    s->deadline = deadline;
    s->cands = g_cands; s->capc = g_capc; s->ncands = 0;
    s->tried = g_tried; s->stamp = g_stamp;
    s->hash = key;
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
    g_cands = s->cands; g_capc = s->capc; g_stamp = s->stamp;    /* (the stack may have grown) */
    *depth_out = depth;
    *complete_out = complete;
    return rc ? -1 : len;
}

/* A Python list of the flat squares of the padded squares line[0..len). */
static PyObject *flat_list(const Search *s, const int *line, int len) {
    PyObject *out = PyList_New(len);
    if (!out) return NULL;
    for (int i = 0; i < len; i++) {
        PyObject *v = PyLong_FromLong(to_flat(s, line[i]));
        if (!v) { Py_DECREF(out); return NULL; }
        PyList_SET_ITEM(out, i, v);
    }
    return out;
}

/* search(buf, width, height, n, exact, attacker, node_limit, max_depth, budget_s, salt, table)
 *   -> (line list of flat moves or None, nodes, depth, complete, aborted) */
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
    if (prover_tables()) { PyBuffer_Release(&buf); return PyErr_NoMemory(); }
    static Search S;
    Search *s = &S;
    load_cells(s, buf.buf, need, w, h, n, exact);
    count_lines(s);
    PyBuffer_Release(&buf);
    int depth, complete;
    int len = vcf_run(s, att, node_limit, max_depth, budget > 0 ? now_s() + budget : 0, table,
                      key_base(salt, att) ^ stones_key(s), &depth, &complete);
    if (len < 0) return PyErr_NoMemory();
    PyObject *line;
    if (len > 0) {
        line = flat_list(s, s->line, len);
        if (!line) return NULL;
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

typedef struct { int five, nf, nt; int fpts[8]; int tpts[16]; } LineInfo;

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

/* tactics._line_info of a line's window a (2n + 1 squares, a[n] the move taken as a c stone;
 * everything past the first WALL is WALL): five, the five-points (offsets from the move) and the
 * straight-four points (tpts: their number nt and the offsets, ascending, as the Python tuple; a
 * window of 2n - 1 <= 15 squares holds them all). */
static void line_eval(unsigned char *a, int n, int exact, int c, LineInfo *r) {
    int L = 2 * n + 1, i = n, lo, hi;
    r->five = row_wins(a, L, i, c, n, exact, &lo, &hi);
    r->nf = points(a, L, i, i, c, n, exact, r->fpts);
    if (r->nf > 8) r->nf = 8;
    r->nt = 0;
    if (r->five) return;
    int lo_r = i - n + 1, hi_r = i + n - 1;
    for (int e = lo_r; e <= hi_r; e++) {
        if (a[e] != EMPTY) continue;
        a[e] = (unsigned char)c;
        int five_pt = row_wins(a, L, e, c, n, exact, &lo, &hi) && lo <= i && i <= hi;
        int pts = five_pt ? 0 : points(a, L, i, e, c, n, exact, NULL);
        a[e] = EMPTY;
        if (pts >= 2) { if (r->nt < 16) r->tpts[r->nt] = e - i; r->nt++; }
    }
}

/* line_eval for n = 5 through a table filled as it is used: the window's 10 other squares, each
 * empty (0), c (1) or anything else (2: the other colour and WALL read alike), are the index.
 * An entry: bit 0 five, bits 1-9 the five-points at offsets -4..4, bits 10-18 the straight-four
 * points, bit 31 filled. */
#define LT_N 5
#define LT_SIZE 59049                   /* 3^10 */
static uint32_t line_tab[2][LT_SIZE];

static int lt_index(const unsigned char *a, int c) {
    int idx = 0;
    for (int k = 0; k <= 2 * LT_N; k++) {
        if (k == LT_N) continue;
        idx = 3 * idx + (a[k] == EMPTY ? 0 : a[k] == c ? 1 : 2);
    }
    return idx;
}

static uint32_t lt_pack(const LineInfo *r) {
    uint32_t e = 0x80000000u | (uint32_t)(r->five != 0);
    for (int k = 0; k < r->nf; k++) e |= 1u << (1 + r->fpts[k] + LT_N - 1);
    for (int k = 0; k < r->nt; k++) e |= 1u << (10 + r->tpts[k] + LT_N - 1);
    return e;
}

static void lt_unpack(uint32_t e, LineInfo *r) {
    r->five = (int)(e & 1u);
    r->nf = r->nt = 0;
    for (int b = 0; b < 2 * LT_N - 1; b++) {
        if (e >> (1 + b) & 1u) r->fpts[r->nf++] = b - (LT_N - 1);
        if (e >> (10 + b) & 1u) r->tpts[r->nt++] = b - (LT_N - 1);
    }
}

/* line_eval of a (n = LT_N) through line_tab. */
static void line_lookup(unsigned char *a, int exact, int c, LineInfo *r) {
    uint32_t *slot = &line_tab[exact != 0][lt_index(a, c)];
    if (!*slot) {
        line_eval(a, LT_N, exact, c, r);
        *slot = lt_pack(r);
        return;
    }
    lt_unpack(*slot, r);
}

/* tactics._line_info of the line through pi along step, pi taken as a c stone (line_eval). */
static void line_info(const Search *s, int pi, int step, int c, LineInfo *r) {
    int n = s->n, i = n;
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
    if (n == LT_N) line_lookup(a, s->exact, c, r);
    else line_eval(a, n, s->exact, c, r);
}

/* line_table_check() -> mismatches: every window of n = 5 (each of its 10 other squares empty, c,
 * the other colour or WALL; c = 1 and 2; exact or not) through line_lookup against line_eval. */
static PyObject *line_table_check(PyObject *self, PyObject *args) {
    (void)self; (void)args;
    long bad = 0;
    unsigned char a[2 * LT_N + 1], w[2 * LT_N + 1];
    for (int exact = 0; exact < 2; exact++)
        for (int c = 1; c <= 2; c++)
            for (long code = 0; code < (1L << (4 * LT_N)); code++) {
                for (int k = 0, j = 0; k <= 2 * LT_N; k++)
                    a[k] = k == LT_N ? (unsigned char)c : (unsigned char)((code >> (2 * j++)) & 3);
                LineInfo x, y;
                memcpy(w, a, sizeof(a));
                line_eval(w, LT_N, exact, c, &x);
                memcpy(w, a, sizeof(a));
                line_lookup(w, exact, c, &y);
                if (x.five != y.five || x.nf != y.nf || x.nt != y.nt
                    || memcmp(x.fpts, y.fpts, sizeof(int) * (size_t)x.nf)
                    || memcmp(x.tpts, y.tpts, sizeof(int) * (size_t)(x.nt < 16 ? x.nt : 16)))
                    bad++;
            }
    return PyLong_FromLong(bad);
}

/* Check a board's geometry and colour c, copy its cells into s (shifted by off, as search())
 * and release buf, in every case. -1 with ValueError set when refused. */
static int take_board(Search *s, Py_buffer *buf, int w, int h, int n, int exact, int c) {
    Py_ssize_t need = (Py_ssize_t)(h + 2) * (w + 1) + 1;
    if (w < 5 || h < 5 || w > 32 || h > 32 || n < 3 || n > 8 || (c != 1 && c != 2)
        || buf->len != need) {
        PyBuffer_Release(buf);
        PyErr_SetString(PyExc_ValueError, "_native: bad board geometry or colour");
        return -1;
    }
    load_cells(s, buf->buf, need, w, h, n, exact);
    PyBuffer_Release(buf);
    return 0;
}

/* The board of a threats / four_moves call. */
static int load_board(Search *s, PyObject *args, int *c) {
    Py_buffer buf;
    int w, h, n, exact;
    if (!PyArg_ParseTuple(args, "y*iiiii", &buf, &w, &h, &n, &exact, c)) return -1;
    if (take_board(s, &buf, w, h, n, exact, *c)) return -1;
    count_lines(s);
    return 0;
}

/* The padded index in s of flat square m; -1 with ValueError set when m is off the board. */
static int padded(const Search *s, long m) {
    if (m < 0 || m >= (long)s->w * s->h) {
        PyErr_SetString(PyExc_ValueError, "_native: a square is off the board");
        return -1;
    }
    return (int)((m / s->w + 1) * s->p + m % s->w + s->off);
}

/* The empty squares of the n-windows holding exactly k stones of c and empty squares otherwise,
 * each once, in the order of tactics._window_squares (first met). Returns how many (<= max). With
 * lines, lines[i] is the number of board lines (directions) through out[i] with such a window. */
static int window_squares(const Search *s, int c, int k, int *out, int max, int *lines) {
    static int mark[MAX_CELLS], last[MAX_CELLS];   /* mark: 1 + the square's index in out */
    const unsigned char *b = s->cell;
    int n = s->n, cnt = 0;
    const Lines *g = s->g;
    memset(mark, 0, sizeof(mark));
    for (int li = 0; li < g->count; li++) {
        int L = g->len[li];
        if (s->lcnt[li] < k) continue;          /* no window with k stones of c */
        const short *q = g->pad[li];
        int cc = 0, ce = 0;
        for (int j = 0; j < L; j++) {
            int v = b[q[j]];
            cc += v == c; ce += v == EMPTY;
            if (j >= n) { int u = b[q[j - n]]; cc -= u == c; ce -= u == EMPTY; }
            if (j < n - 1 || cc != k || ce != n - k) continue;
            for (int t = j - n + 1; t <= j; t++) {
                int e = q[t];
                if (b[e] != EMPTY) continue;
                if (!mark[e]) {
                    if (cnt >= max) continue;
                    mark[e] = cnt + 1; last[e] = -1; out[cnt] = e;
                    if (lines) lines[cnt] = 0;
                    cnt++;
                }
                if (lines && last[e] != li) { last[e] = li; lines[mark[e] - 1]++; }   /* once a line */
            }
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

static int quiet_cmp(const void *x, const void *y) {
    const int *a = (const int *)x, *b = (const int *)y;   /* (move, lines) */
    if (a[1] != b[1]) return b[1] - a[1];
    return a[0] - b[0];
}

/* vct._threats of c on s: rows (padded move, fours, threes), most threatening first, then by
 * move. Returns how many. */
static int threat_rows(const Search *s, int c, int rows[][3]) {
    static int sq[MAX_CELLS];
    int ns = window_squares(s, c, s->n - 3, sq, MAX_CELLS, NULL), nr = 0;
    for (int k = 0; k < ns; k++) {
        int m = sq[k], fours = 0, threes = 0, five = 0;
        for (int d = 0; d < 4 && !five; d++) {
            LineInfo li;
            line_info(s, m, s->dirs[d], c, &li);
            if (li.five) five = 1;
            else if (li.nf) fours++;
            else if (li.nt) threes++;
        }
        if (five || !(fours || threes)) continue;
        rows[nr][0] = m; rows[nr][1] = fours; rows[nr][2] = threes; nr++;
    }
    qsort(rows, (size_t)nr, sizeof(rows[0]), threat_cmp);   /* (padded order is flat order) */
    return nr;
}

/* vct._quiet_threats of c on s: the empty squares of the n-windows holding exactly n - 3 stones of
 * c and empty squares otherwise (after such a move a four can follow along that line) that make no
 * five, four or open three, as rows (padded move, lines): the number of lines (directions) through
 * the square with such a window, the most first, then by move. Returns how many. */
static int quiet_rows(const Search *s, int c, int rows[][2]) {
    static int sq[MAX_CELLS], lines[MAX_CELLS];
    int ns = window_squares(s, c, s->n - 3, sq, MAX_CELLS, lines);
    int nr = 0;
    for (int i = 0; i < ns; i++) {
        int m = sq[i], hot = 0;
        for (int d = 0; d < 4 && !hot; d++) {
            LineInfo li;
            line_info(s, m, s->dirs[d], c, &li);
            hot = li.five || li.nf || li.nt;
        }
        if (hot) continue;
        rows[nr][0] = m; rows[nr][1] = lines[i]; nr++;
    }
    qsort(rows, (size_t)nr, sizeof(rows[0]), quiet_cmp);   /* (padded order is flat order) */
    return nr;
}

/* threats(buf, width, height, n, exact, colour) -> [(move, fours, threes), ...]: vct._threats
 * (moves making a four or an open three, not a five; most threatening first, then by move). */
static PyObject *threats(PyObject *self, PyObject *args) {
    static Search T;
    static int rows[MAX_CELLS][3];
    int c;
    (void)self;
    if (load_board(&T, args, &c)) return NULL;
    int nr = threat_rows(&T, c, rows);
    PyObject *out = PyList_New(nr);
    if (!out) return NULL;
    for (int k = 0; k < nr; k++) {
        PyObject *t = Py_BuildValue("(iii)", to_flat(&T, rows[k][0]), rows[k][1], rows[k][2]);
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
    if (load_board(&T, args, &c)) return NULL;
    int ns = window_squares(&T, c, T.n - 2, sq, MAX_CELLS, NULL);
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

/* ---------------------------------------------------------------------------------------------
 * The VCT (gomoku_ai.vct._VCT without verify_defences), FREESTYLE and STANDARD: the same AND/OR
 * search, move for move, on the prover's board, with its inner VCF searches made by vcf_run. The
 * search's memos (its transposition table by depth, and its VCF answers by position) are hash maps
 * of their own; the move-ordering hints stay the caller's Python dictionaries (vct.Hints), keyed
 * by the position's key relative to the search's root. */

typedef struct { uint64_t *k; long long *v; unsigned char *used; size_t cap, cnt; } Map;

static void map_free(Map *m) { free(m->k); free(m->v); free(m->used); memset(m, 0, sizeof(*m)); }

static void map_clear(Map *m) { if (m->used) memset(m->used, 0, m->cap); m->cnt = 0; }

static size_t map_slot(const Map *m, uint64_t key) {
    size_t i = (size_t)(key ^ (key >> 29)) & (m->cap - 1);
    while (m->used[i] && m->k[i] != key) i = (i + 1) & (m->cap - 1);
    return i;
}

static int map_get(const Map *m, uint64_t key, long long *val) {
    if (!m->cnt) return 0;
    size_t i = map_slot(m, key);
    if (!m->used[i]) return 0;
    *val = m->v[i];
    return 1;
}

static int map_put(Map *m, uint64_t key, long long val) {
    if (2 * (m->cnt + 1) > m->cap) {               /* grow to keep the load under one half */
        Map g;
        g.cap = m->cap ? 2 * m->cap : 1024;
        g.cnt = 0;
        g.k = (uint64_t *)malloc(g.cap * sizeof(uint64_t));
        g.v = (long long *)malloc(g.cap * sizeof(long long));
        g.used = (unsigned char *)calloc(g.cap, 1);
        if (!g.k || !g.v || !g.used) { map_free(&g); return -1; }
        for (size_t i = 0; i < m->cap; i++)
            if (m->used[i]) {
                size_t j = map_slot(&g, m->k[i]);
                g.used[j] = 1; g.k[j] = m->k[i]; g.v[j] = m->v[i]; g.cnt++;
            }
        map_free(m);
        *m = g;
    }
    size_t i = map_slot(m, key);
    if (!m->used[i]) { m->used[i] = 1; m->k[i] = key; m->cnt++; }
    m->v[i] = val;
    return 0;
}

#define VCT_LINE 256        /* the longest line kept: VCF lines are at most 2 * 40 + 3 moves, and
                             * a VCT adds two a level */
#define VCT_MAX_DEPTH 20    /* each level holds about 40 KB of stack */
#define VCT_ABORT (-1)

typedef struct {
    Search *s;
    int att, dfn, side;            /* attacker, defender, side to move */
    uint64_t stones, base[3], root;
    long long nodes, node_limit, vcf_total, cut;
    int vcf_nodes, max_threats, replay;
    int max_quiet;                 /* the root's quiet candidates (quiet_rows), after its threats */
    double deadline;               /* CLOCK_MONOTONIC seconds; <= 0: none */
    uint32_t table;
    int error;                     /* a Python exception is set (memory, hints) */
    Map tt, memo;
    int *pool;                     /* the VCF lines of memo */
    size_t npool, cappool;
    PyObject *hatt, *hdef;         /* vct.Hints.attack and .defence, or NULL */
} VCT;

static void vput(VCT *v, int pi, int c) {
    Search *s = v->s;
    s->cell[pi] = (unsigned char)c; v->stones ^= zob[pi][c]; v->side = 3 - v->side;
    for (int d = 0; d < 4; d++) s->lcnt[s->g->lid[pi][d]]++;
}
static void vdel(VCT *v, int pi) {
    Search *s = v->s;
    int c = s->cell[pi];
    s->cell[pi] = EMPTY; v->stones ^= zob[pi][c]; v->side = 3 - v->side;
    for (int d = 0; d < 4; d++) s->lcnt[s->g->lid[pi][d]]--;
}
static uint64_t vkey(const VCT *v) { return v->base[v->side] ^ v->stones; }

static int vtick(VCT *v) {
    v->nodes++;
    if (v->nodes >= v->node_limit) return VCT_ABORT;
    if (v->deadline > 0 && now_s() > v->deadline) return VCT_ABORT;
    return 0;
}

static int vfail(VCT *v) { v->error = 1; return VCT_ABORT; }

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* The sorted five-points (padded squares) of both colours, in one pass over the board's
 * n-windows: fp[c - 1][0..nfp[c - 1]). */
static void vfive_points(VCT *v, int fp[2][MAX_CELLS], int nfp[2]) {
    static unsigned mark[2][MAX_CELLS], stamp = 0;
    if (++stamp == 0) { memset(mark, 0, sizeof(mark)); stamp = 1; }
    const Search *s = v->s;
    const unsigned char *b = s->cell;
    int n = s->n;
    const Lines *g = s->g;
    nfp[0] = nfp[1] = 0;
    for (int li = 0; li < g->count; li++) {
        int L = g->len[li];
        if (L < n || s->lcnt[li] < n - 1) continue;   /* no window with n - 1 stones of a colour */
        const short *q = g->pad[li];
        int cnt[4] = {0, 0, 0, 0};
        for (int k = 0; k < L; k++) {
            cnt[b[q[k]]]++;
            if (k >= n) cnt[b[q[k - n]]]--;
            if (k < n - 1 || cnt[EMPTY] != 1) continue;
            int c = cnt[1] == n - 1 ? 1 : cnt[2] == n - 1 ? 2 : 0;
            if (!c) continue;
            int e = -1;
            for (int i = k - n + 1; i <= k; i++) if (b[q[i]] == EMPTY) e = q[i];
            if (mark[c - 1][e] == stamp) continue;
            mark[c - 1][e] = stamp;
            if (makes_five(s, e, c)) fp[c - 1][nfp[c - 1]++] = e;
        }
    }
    qsort(fp[0], (size_t)nfp[0], sizeof(int), cmp_int);
    qsort(fp[1], (size_t)nfp[1], sizeof(int), cmp_int);
}

/* _VCT._vcf: the side to move's VCF, memoised by position for the whole search. Writes the line
 * to out, *aborted; returns its length (0: none) or VCT_ABORT. */
static int vvcf(VCT *v, int *out, int *aborted) {
    if (v->deadline > 0 && now_s() > v->deadline) return VCT_ABORT;
    uint64_t key = vkey(v);
    long long hit;
    if (map_get(&v->memo, key, &hit)) {
        int len = (int)((hit >> 1) & 0xFF);
        *aborted = (int)(hit & 1);
        if (len) memcpy(out, v->pool + (hit >> 9), sizeof(int) * (size_t)len);
        return len;
    }
    int len = 0, ab = 1;
    Search *s = v->s;
    if (!(v->deadline > 0 && v->deadline - now_s() <= 0)) {   /* native.vcf: no time, no search */
        int depth, complete;
        len = vcf_run(s, v->side, v->vcf_nodes > 1 ? v->vcf_nodes : 1, 40, v->deadline, v->table,
                      key, &depth, &complete);
        if (len < 0) { PyErr_NoMemory(); return vfail(v); }
        v->vcf_total += s->nodes;
        ab = s->aborted;
        memcpy(out, s->line, sizeof(int) * (size_t)len);
    }
    if (v->npool + (size_t)len > v->cappool) {
        size_t cap = v->cappool ? 2 * v->cappool : 4096;
        while (cap < v->npool + (size_t)len) cap *= 2;
        int *np = (int *)realloc(v->pool, cap * sizeof(int));
        if (!np) { PyErr_NoMemory(); return vfail(v); }
        v->pool = np; v->cappool = cap;
    }
    if (len) memcpy(v->pool + v->npool, out, sizeof(int) * (size_t)len);   /* (no pool yet: len 0) */
    if (map_put(&v->memo, key, ((long long)v->npool << 9) | (len << 1) | ab)) {
        PyErr_NoMemory();
        return vfail(v);
    }
    v->npool += (size_t)len;
    *aborted = ab;
    return len;
}

/* The hint of a dictionary (vct.Hints) for the current position: a padded square, or -1. */
static int vhint(VCT *v, PyObject *dict) {
    if (!dict) return -1;
    PyObject *key = PyLong_FromUnsignedLongLong(vkey(v) ^ v->root);
    if (!key) return vfail(v), -2;
    PyObject *val = PyDict_GetItemWithError(dict, key);
    Py_DECREF(key);
    if (!val) return PyErr_Occurred() ? (vfail(v), -2) : -1;
    long f = PyLong_AsLong(val);
    if (f == -1 && PyErr_Occurred()) { PyErr_Clear(); return -1; }
    const Search *s = v->s;
    if (f < 0 || f >= (long)s->w * s->h) return -1;
    return (int)((f / s->w + 1) * s->p + f % s->w + s->off);
}

static int vset_hint(VCT *v, PyObject *dict, uint64_t rel, int pi) {
    if (!dict) return 0;
    PyObject *key = PyLong_FromUnsignedLongLong(rel);
    PyObject *val = key ? PyLong_FromLong(to_flat(v->s, pi)) : NULL;
    int rc = (key && val) ? PyDict_SetItem(dict, key, val) : -1;
    Py_XDECREF(key); Py_XDECREF(val);
    return rc ? vfail(v) : 0;
}

/* vct._first: moves[0..n) with m moved to the front when it is one of them. */
static void vfirst(int *moves, int n, int m) {
    if (m < 0 || n == 0 || moves[0] == m) return;
    for (int i = 1; i < n; i++)
        if (moves[i] == m) {
            memmove(moves + 1, moves, sizeof(int) * (size_t)i);
            moves[0] = m;
            return;
        }
}

static int vdefend(VCT *v, int depth, int *out);

/* The tests of an attacker node (attacker to move) before its threats are tried: VCT_ABORT; 0, no
 * win (the defender has two five-points, or no depth is left: a cut); 1, a win (its line, of
 * length *len, written to out: a five or a VCF); 2, go on: *block is the defender's five-point the
 * attacker must take, or -1. */
static int or_node(VCT *v, int depth, int *out, int *len, int *block) {
    if (vtick(v)) return VCT_ABORT;
    int fp[2][MAX_CELLS], nfp[2];
    vfive_points(v, fp, nfp);
    if (nfp[v->att - 1]) { out[0] = fp[v->att - 1][0]; *len = 1; return 1; }
    int nd = nfp[v->dfn - 1];
    if (nd >= 2) return 0;
    int ab;
    *len = vvcf(v, out, &ab);
    if (*len < 0) return VCT_ABORT;
    if (*len > 0) return 1;
    if (depth <= 0) { v->cut++; return 0; }
    *block = nd ? fp[v->dfn - 1][0] : -1;
    return 2;
}

/* The attacker's candidates at a node that goes on: the block, or its threats (vct._threats, at
 * most max_threats of them) and, at the root, at most max_quiet quiet moves (quiet_rows: the
 * defender node keeps those that threaten a VCF), the hint first. Their number, or VCT_ABORT. */
static int attacker_cands(VCT *v, int block, int *cands) {
    int nc = 0;
    if (block >= 0) cands[nc++] = block;
    else {
        static int rows[MAX_CELLS][3];
        int nr = threat_rows(v->s, v->att, rows);
        for (int i = 0; i < nr && nc < v->max_threats; i++) cands[nc++] = rows[i][0];
        if (v->max_quiet > 0 && vkey(v) == v->root) {
            static int qrows[MAX_CELLS][2];
            int nq = quiet_rows(v->s, v->att, qrows);
            for (int i = 0; i < nq && i < v->max_quiet; i++) cands[nc++] = qrows[i][0];
        }
    }
    int hint = vhint(v, v->hatt);
    if (hint == -2) return VCT_ABORT;
    vfirst(cands, nc, hint);
    return nc;
}

/* _VCT._attack: attacker to move. The winning line's length written to out, 0, or VCT_ABORT. */
static int vattack(VCT *v, int depth, int *out) {
    int len = 0, block = -1;
    int rc = or_node(v, depth, out, &len, &block);
    if (rc != 2) return rc == 1 ? len : rc;
    uint64_t h = vkey(v);
    long long known;
    if (map_get(&v->tt, h, &known) && known >= depth) return 0;
    long long cut0 = v->cut;
    int cands[MAX_CELLS];
    int nc = attacker_cands(v, block, cands);
    if (nc < 0) return VCT_ABORT;
    for (int i = 0; i < nc; i++) {
        int m = cands[i];
        vput(v, m, v->att);
        int sub = vdefend(v, depth - 1, out + 1);
        vdel(v, m);
        if (sub < 0) return VCT_ABORT;
        if (sub > 0) {
            if (vset_hint(v, v->hatt, h ^ v->root, m)) return VCT_ABORT;
            out[0] = m;
            return sub + 1;
        }
    }
    if (map_put(&v->tt, h, v->cut != cut0 ? depth : INF_DEPTH)) { PyErr_NoMemory(); return vfail(v); }
    return 0;
}

/* _VCT._replay: the threatened VCF replayed after the defender's reply r (on the board, attacker
 * to move). Its length written to out when it still wins, 0 when not, or VCT_ABORT. */
static int vreplay(VCT *v, const int *threat, int tl, int r, int *out) {
    for (int i = 0; i < tl; i++) if (threat[i] == r) return 0;
    if (vtick(v)) return VCT_ABORT;
    Search *s = v->s;
    int F[8], pushed[VCT_LINE], np = 0, len = 0;
    if (fives_through(s, r, v->dfn, F)) return 0;
    for (int k = 0; k < tl; k += 2) {
        int m = threat[k];
        if (s->cell[m] != EMPTY) break;
        if (makes_five(s, m, v->att)) { memcpy(out, threat, sizeof(int) * (size_t)(k + 1)); len = k + 1; break; }
        vput(v, m, v->att);
        pushed[np++] = m;
        int nf = fives_through(s, m, v->att, F);
        qsort(F, (size_t)nf, sizeof(int), cmp_int);
        if (nf >= 2) {
            memcpy(out, threat, sizeof(int) * (size_t)(k + 1));
            out[k + 1] = F[0]; out[k + 2] = F[1];
            len = k + 3;
            break;
        }
        if (nf != 1 || k == tl - 1 || threat[k + 1] != F[0]) break;
        vput(v, F[0], v->dfn);
        pushed[np++] = F[0];
        if (fives_through(s, F[0], v->dfn, F)) break;
    }
    while (np) vdel(v, pushed[--np]);
    return len;
}

/* The squares where a c stone would turn a block of the VCF line[0..tl) (the odd indices, marked
 * st in blk) into a counter-four (tactics._reply_zone): the empty squares, other than blocks, of
 * the n-windows through a block with no stone of the other colour or WALL and at least n - 2
 * stones of c, the line's blocks counted as c. Those not yet marked st in mark are marked and
 * appended to cand (ncand of them so far); returns the new count. */
static int counter_squares(const Search *s, const int *line, int tl, int c, const unsigned *blk,
                           unsigned st, unsigned *mark, int *cand, int ncand) {
    int n = s->n, other = 3 - c;
    const unsigned char *b = s->cell;
    for (int i = 1; i < tl; i += 2) {
        int r = line[i];
        for (int d = 0; d < 4; d++) {
            int step = s->dirs[d], cell[2 * 8 - 1], own[2 * 8 - 1], wall = 0, k;
            for (k = 0; k < n - 1; k++) {        /* everything past the first WALL is WALL */
                int q = r - (k + 1) * step;
                if (!wall && b[q] == WALL) wall = 1;
                cell[n - 2 - k] = wall ? -1 : q;
            }
            cell[n - 1] = r;
            wall = 0;
            for (k = 0; k < n - 1; k++) {
                int q = r + (k + 1) * step;
                if (!wall && b[q] == WALL) wall = 1;
                cell[n + k] = wall ? -1 : q;
            }
            for (k = 0; k < 2 * n - 1; k++) {
                int q = cell[k];
                own[k] = q >= 0 && (b[q] == c || (b[q] == EMPTY && blk[q] == st));
            }
            for (int a = 0; a < n; a++) {        /* the windows [a, a + n) through the centre */
                int cnt = 0, bad = 0;
                for (k = a; k < a + n; k++) {
                    if (cell[k] < 0 || b[cell[k]] == other) { bad = 1; break; }
                    cnt += own[k];
                }
                if (bad || cnt < n - 2) continue;
                for (k = a; k < a + n; k++) {
                    int q = cell[k];
                    if (b[q] == EMPTY && !own[k] && mark[q] != st) { mark[q] = st; cand[ncand++] = q; }
                }
            }
        }
    }
    return ncand;
}

/* The tests of a defender node (after an attacker move): VCT_ABORT; 0, the attacker does not win
 * here (the defender has a five-point, the move threatened nothing, or the defender may win first
 * with its free move); 1, the attacker wins whatever the reply (its line, *len, written to out);
 * 2, go on: the replies to try (*nrep of them, the hint first) and the threatened VCF (*tl moves,
 * 0 after a four) that a reply must stop. */
static int and_node(VCT *v, int *out, int *len, int *replies, int *nrep_out, int *threat, int *tl_out) {
    Search *s = v->s;
    int fp[2][MAX_CELLS], nfp[2], nrep = 0, tl = 0;
    vfive_points(v, fp, nfp);
    if (nfp[v->dfn - 1]) return 0;                  /* the defender wins at once */
    int nf = nfp[v->att - 1], *F = fp[v->att - 1];
    if (nf >= 2) { out[0] = F[0]; out[1] = F[1]; *len = 2; return 1; }
    if (nf == 1) replies[nrep++] = F[0];
    else {
        int ab;
        v->side = v->att;                            /* the defender passes */
        tl = vvcf(v, threat, &ab);
        v->side = v->dfn;
        if (tl <= 0) return tl;                      /* no threat: the move was not forcing */
        int counter[VCT_LINE];
        int cl = vvcf(v, counter, &ab);
        if (cl < 0) return VCT_ABORT;
        if (cl > 0 || ab) return 0;                  /* the defender may win first */
        /* every move that could stop the threatened VCF (tactics._reply_zone): its own squares,
         * the squares that would turn one of its blocks into a counter-four, and the defender's
         * fours; the threat's own squares first */
        static unsigned mark[MAX_CELLS], blk[MAX_CELLS], stamp = 0;
        if (++stamp == 0) { memset(mark, 0, sizeof(mark)); memset(blk, 0, sizeof(blk)); stamp = 1; }
        unsigned st = stamp;
        int cand[MAX_CELLS], ncand = 0;
        for (int i = 0; i < tl; i++) {
            int q = threat[i];
            if (i & 1) blk[q] = st;
            if (s->cell[q] == EMPTY && mark[q] != st) { mark[q] = st; cand[ncand++] = q; }
        }
        ncand = counter_squares(s, threat, tl, v->dfn, blk, st, mark, cand, ncand);
        int sq[MAX_CELLS];
        int ns = window_squares(s, v->dfn, s->n - 2, sq, MAX_CELLS, NULL);
        for (int i = 0; i < ns; i++) {
            int m = sq[i], five = 0, four = 0;
            if (mark[m] == st) continue;
            for (int d = 0; d < 4; d++) {
                LineInfo li;
                line_info(s, m, s->dirs[d], v->dfn, &li);
                if (li.five) { five = 1; break; }
                if (li.nf) four = 1;
            }
            if (four && !five) { mark[m] = st; cand[ncand++] = m; }
        }
        for (int i = 0; i < tl; i++)       /* (taken: marked with another stamp, skipped below) */
            if (mark[threat[i]] == st) { replies[nrep++] = threat[i]; mark[threat[i]] = st - 1; }
        qsort(cand, (size_t)ncand, sizeof(int), cmp_int);
        for (int i = 0; i < ncand; i++) if (mark[cand[i]] == st) replies[nrep++] = cand[i];
    }
    int hint = vhint(v, v->hdef);
    if (hint == -2) return VCT_ABORT;
    vfirst(replies, nrep, hint);
    *nrep_out = nrep;
    *tl_out = tl;
    return 2;
}

/* _VCT._defend: defender to move after an attacker move. The attacker's winning line from here
 * written to out (its length), 0, or VCT_ABORT. */
static int vdefend(VCT *v, int depth, int *out) {
    int replies[MAX_CELLS], nrep = 0, threat[VCT_LINE], tl = 0, len = 0;
    int rc = and_node(v, out, &len, replies, &nrep, threat, &tl);
    if (rc != 2) return rc == 1 ? len : rc;
    uint64_t h = vkey(v);
    int first = 0, scratch[VCT_LINE];
    for (int i = 0; i < nrep; i++) {
        int r = replies[i], *dst = first ? scratch : out + 1;
        vput(v, r, v->dfn);
        int sub = (tl > 0 && v->replay) ? vreplay(v, threat, tl, r, dst) : 0;
        if (sub == 0) sub = vattack(v, depth, dst);
        vdel(v, r);
        if (sub < 0) return VCT_ABORT;
        if (sub == 0) {
            if (vset_hint(v, v->hdef, h ^ v->root, r)) return VCT_ABORT;
            return 0;
        }
        if (!first) { out[0] = r; first = sub + 1; }
    }
    return first;
}

/* ---------------------------------------------------------------------------------------------
 * The same AND/OR tree searched by depth-first proof-number search (df-pn; vct.PN_VCT): nodes and
 * their tests as above (or_node, attacker_cands, and_node), but the next node to expand is the
 * most proving one (the attacker move closest to a proof, the defender reply closest to a
 * disproof) rather than the next one in depth-first order, so effort goes where a proof is
 * nearest. Each node's proof and disproof numbers live in v->tt by position: a position fixes the
 * number of attacker moves made, so the depth left is the same wherever it is met. Rather than
 * deepening one level at a time, the depth is capped at 1, 2, 3, 5, 8, 12, then max_depth, each a
 * fresh search while the one before was cut (a node past the cap is disproved), so that short
 * wins are found first. The
 * move-ordering hints are read as by the other search and written for each decided node (the
 * attacker move that proves it, the reply that disproves it). */

#define PN_INF 0x1fffffff           /* 29 bits: a proof (pn 0) or a disproof (dn 0) */

static uint32_t pn_sum(uint32_t a, uint32_t b) { uint32_t t = a + b; return t >= PN_INF ? PN_INF : t; }

/* Store a node's numbers; 0, or VCT_ABORT when out of memory. */
static int pn_store(VCT *v, uint64_t key, uint32_t pn, uint32_t dn) {
    if (map_put(&v->tt, key, ((long long)pn << 29) | dn)) { PyErr_NoMemory(); return vfail(v); }
    return 0;
}

/* A position's numbers: stored, or 1 and 1 for one not yet searched. */
static void pn_load(const VCT *v, uint64_t key, uint32_t *pn, uint32_t *dn) {
    long long e;
    if (map_get(&v->tt, key, &e)) { *pn = (uint32_t)(e >> 29); *dn = (uint32_t)(e & PN_INF); }
    else { *pn = 1; *dn = 1; }
}

/* The moves of a node that goes on (attacker: its candidates; defender: its replies), their count
 * (0 when the node is decided, *pn and *dn then set), or VCT_ABORT. line: a buffer of VCT_LINE. */
static int pn_children(VCT *v, int attacker, int depth, int *kids, int *line, int *len,
                       uint32_t *pn, uint32_t *dn) {
    int rc, nk = 0;
    if (attacker) {
        int block = -1;
        rc = or_node(v, depth, line, len, &block);
        if (rc == 2) {
            nk = attacker_cands(v, block, kids);
            if (nk < 0) return VCT_ABORT;
            if (nk == 0) rc = 0;
        }
    } else {
        int threat[VCT_LINE], tl = 0;
        rc = and_node(v, line, len, kids, &nk, threat, &tl);
        if (rc == 2 && nk == 0) rc = 0;               /* (as vdefend: no reply, no line) */
    }
    if (rc < 0) return VCT_ABORT;
    if (rc != 2) { *pn = rc == 1 ? 0 : PN_INF; *dn = rc == 1 ? PN_INF : 0; return 0; }
    return nk;
}

/* Expand the node (attacker to move when attacker; depth: attacker moves left) until its proof
 * number reaches thpn or its disproof number thdn, or it is decided. 0, or VCT_ABORT. */
static int pn_mid(VCT *v, int attacker, int depth, uint32_t thpn, uint32_t thdn) {
    static int line[VCT_LINE];      /* scratch: the line of a decided node is not kept here */
    uint64_t h = vkey(v);
    int kids[MAX_CELLS], len = 0;
    uint32_t pn, dn;
    int nk = pn_children(v, attacker, depth, kids, line, &len, &pn, &dn);
    if (nk <= 0) return nk < 0 ? VCT_ABORT : pn_store(v, h, pn, dn);
    int c = attacker ? v->att : v->dfn, sub_depth = attacker ? depth - 1 : depth;
    uint64_t keys[MAX_CELLS];
    for (int i = 0; i < nk; i++) { vput(v, kids[i], c); keys[i] = vkey(v); vdel(v, kids[i]); }
    for (;;) {
        /* attacker: pn the least of the children's, dn their sum; defender: the other way */
        uint32_t least = PN_INF + 1, second = PN_INF, sum = 0, cp = 0, cd = 0;
        int best = 0;
        for (int i = 0; i < nk; i++) {
            uint32_t p, d;
            pn_load(v, keys[i], &p, &d);
            uint32_t mine = attacker ? p : d, other = attacker ? d : p;
            sum = pn_sum(sum, other);
            if (mine < least) { second = least; least = mine; best = i; cp = p; cd = d; }
            else if (mine < second) second = mine;
        }
        if (second > PN_INF) second = PN_INF;
        pn = attacker ? least : sum;
        dn = attacker ? sum : least;
        if (least == 0                                 /* decided by kids[best]: a hint */
            && vset_hint(v, attacker ? v->hatt : v->hdef, h ^ v->root, kids[best])) return VCT_ABORT;
        if (pn == 0 || dn == 0 || pn >= thpn || dn >= thdn) return pn_store(v, h, pn, dn);
        /* the child's thresholds: its own number may grow to just past the second best (by a
         * quarter more, to switch less often); the other number takes the parent's slack */
        uint64_t grow = (uint64_t)second + second / 4 + 1;
        uint32_t near = grow < PN_INF ? (uint32_t)grow : PN_INF;
        uint32_t tp, td;
        if (attacker) {
            tp = thpn < near ? thpn : near;
            td = thdn >= PN_INF ? PN_INF : (uint32_t)((uint64_t)thdn - dn + cd);
        } else {
            td = thdn < near ? thdn : near;
            tp = thpn >= PN_INF ? PN_INF : (uint32_t)((uint64_t)thpn - pn + cp);
        }
        vput(v, kids[best], c);
        int rc = pn_mid(v, !attacker, sub_depth, tp, td);
        vdel(v, kids[best]);
        if (rc < 0) return VCT_ABORT;
    }
}

/* The line of a proved node, from the proved children in v->tt: its length written to out, 0 when
 * a child's proof is missing (it never is), or VCT_ABORT. */
static int pn_line(VCT *v, int attacker, int depth, int *out, int room) {
    int kids[MAX_CELLS], len = 0;
    uint32_t pn, dn;
    if (room < 96) return 0;                          /* (a VCF line is at most 83 moves) */
    int nk = pn_children(v, attacker, depth, kids, out, &len, &pn, &dn);
    if (nk < 0) return VCT_ABORT;
    if (nk == 0) return pn == 0 ? len : 0;
    int c = attacker ? v->att : v->dfn;
    for (int i = 0; i < nk; i++) {
        vput(v, kids[i], c);
        pn_load(v, vkey(v), &pn, &dn);
        int sub = pn == 0 ? pn_line(v, !attacker, attacker ? depth - 1 : depth, out + 1, room - 1) : 0;
        vdel(v, kids[i]);
        if (sub < 0) return VCT_ABORT;
        if (sub > 0) { out[0] = kids[i]; return sub + 1; }
        if (!attacker) return 0;                        /* every reply is proved, the first too */
    }
    return 0;
}

/* The df-pn search from v's root: the line's length written to line (0: none), or VCT_ABORT. */
static int pn_root(VCT *v, int max_depth, int *line, int room) {
    if (pn_mid(v, 1, max_depth, PN_INF, PN_INF) < 0) return VCT_ABORT;
    uint32_t pn, dn;
    pn_load(v, vkey(v), &pn, &dn);
    if (pn != 0 && dn != 0) return VCT_ABORT;         /* saturated, not decided: not finished */
    if (pn != 0) return 0;
    long long limit = v->node_limit;
    double deadline = v->deadline;
    v->node_limit = LLONG_MAX; v->deadline = 0;     /* the proof is there: read it whatever the limits */
    int len = pn_line(v, 1, max_depth, line, room);
    v->node_limit = limit; v->deadline = deadline;
    return len;
}

/* vct(buf, width, height, n, exact, attacker, max_depth, node_limit, vcf_nodes, max_threats,
 *     budget_s, salt, table, replay, hints_attack, hints_defence, start_depth, proof_numbers)
 *   -> (line list of flat moves or None, nodes, vcf_nodes, aborted, depth); proof_numbers: the
 * df-pn search (pn_root) in place of the iterative deepening (its caps below start_depth skipped;
 * replay unused). */
static PyObject *vct_search(PyObject *self, PyObject *args) {
    Py_buffer buf;
    int w, h, n, exact, att, max_depth, vcf_nodes, max_threats, replay, start, pns, max_quiet;
    long long node_limit;
    double budget;
    unsigned long long salt;
    unsigned int table;
    PyObject *hatt, *hdef;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*iiiiiiLiidKIpOOipi", &buf, &w, &h, &n, &exact, &att, &max_depth,
                          &node_limit, &vcf_nodes, &max_threats, &budget, &salt, &table, &replay,
                          &hatt, &hdef, &start, &pns, &max_quiet))
        return NULL;
    Py_ssize_t need = (Py_ssize_t)(h + 2) * (w + 1) + 1;
    if (w < 5 || h < 5 || w > 32 || h > 32 || n < 3 || n > 8 || (att != 1 && att != 2)
        || buf.len != need || max_threats < 0 || max_quiet < 0 || max_depth > VCT_MAX_DEPTH || (hatt != Py_None && !PyDict_Check(hatt))
        || (hdef != Py_None && !PyDict_Check(hdef))) {
        PyBuffer_Release(&buf);
        PyErr_SetString(PyExc_ValueError, "_native.vct: bad board geometry or arguments");
        return NULL;
    }
    if (prover_tables()) { PyBuffer_Release(&buf); return PyErr_NoMemory(); }
    static Search S;
    VCT V;
    VCT *v = &V;
    memset(v, 0, sizeof(V));
    v->s = &S;
    load_cells(v->s, buf.buf, need, w, h, n, exact);
    count_lines(v->s);
    PyBuffer_Release(&buf);
    v->att = att; v->dfn = 3 - att; v->side = att;
    v->stones = stones_key(v->s);
    v->base[1] = key_base(salt, 1); v->base[2] = key_base(salt, 2);
    v->root = vkey(v);
    v->node_limit = node_limit; v->vcf_nodes = vcf_nodes; v->max_threats = max_threats;
    v->max_quiet = max_quiet;
    v->replay = replay; v->table = table;
    v->deadline = budget > 0 ? now_s() + budget : 0;
    v->hatt = hatt == Py_None ? NULL : hatt;
    v->hdef = hdef == Py_None ? NULL : hdef;
    int line[VCT_LINE * 2], len = 0, depth = 0, aborted = 0;
    if (pns) {
        static const int caps[] = {1, 2, 3, 5, 8, 12, INT_MAX};
        for (int i = 0; i < 7 && max_depth >= 1; i++) {
            depth = caps[i] < max_depth ? caps[i] : max_depth;
            if (depth < start && depth < max_depth) continue;     /* (the hints' depth) */
            map_clear(&v->tt);
            long long cut0 = v->cut;
            int r = pn_root(v, depth, line, VCT_LINE * 2 - 8);
            if (r < 0) { aborted = 1; break; }
            if (r > 0) { len = r; break; }
            if (v->cut == cut0 || depth == max_depth) break;
        }
    }
    else for (depth = start < 1 ? 1 : start; depth <= max_depth; depth++) {
        map_clear(&v->tt);
        long long cut0 = v->cut;
        int r = vattack(v, depth, line);
        if (r < 0) { aborted = 1; break; }
        if (r > 0) { len = r; break; }
        if (v->cut == cut0) break;
    }
    if (depth > max_depth) depth = max_depth;
    map_free(&v->tt);
    map_free(&v->memo);
    free(v->pool);
    if (v->error) return NULL;
    PyObject *out;
    if (len > 0) {
        out = flat_list(v->s, line, len);
        if (!out) return NULL;
    } else {
        out = Py_None;
        Py_INCREF(out);
    }
    return Py_BuildValue("(NLLii)", out, v->nodes, v->vcf_total, aborted, depth);
}

static PyObject *vcf_clear(PyObject *self, PyObject *args) {
    (void)self; (void)args;
    if (tt) memset(tt, 0, sizeof(TTEntry) * TT_SIZE);
    Py_RETURN_NONE;
}

/* ---------------------------------------------------------------------------------------------
 * Node creation in the MCTS tree (gomoku_ai/mcts.py), FREESTYLE and STANDARD. */

/* Is s a four-move of c (a five-point on some line through it, no five)? tactics._four_moves. */
static int is_four_move(const Search *s, int m, int c) {
    int four = 0;
    for (int d = 0; d < 4; d++) {
        LineInfo li;
        line_info(s, m, s->dirs[d], c, &li);
        if (li.five) return 0;
        if (li.nf) four = 1;
    }
    return four;
}

/* three_replies(buf, width, height, n, exact, move, colour) -> [square, ...] ascending, or None:
 * mcts._three_replies past its rule checks. colour's stone on move (flat) makes an open three on
 * some line (no four there): its straight-four points and their five-points, plus every move
 * that makes the other colour a four, the empty ones; None when it makes no such three. */
static PyObject *three_replies(PyObject *self, PyObject *args) {
    static Search T;
    static unsigned char mark[MAX_CELLS];
    static int sq[MAX_CELLS];
    Py_buffer buf;
    int w, h, n, exact, c;
    long mv;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*iiiili", &buf, &w, &h, &n, &exact, &mv, &c)) return NULL;
    if (take_board(&T, &buf, w, h, n, exact, c)) return NULL;
    count_lines(&T);
    int m = padded(&T, mv);
    if (m < 0) return NULL;
    if (T.cell[m] != c) { PyErr_SetString(PyExc_ValueError, "three_replies: move is not a stone of colour"); return NULL; }
    memset(mark, 0, (size_t)T.size);
    int any = 0;
    for (int d = 0; d < 4; d++) {
        LineInfo li;
        int step = T.dirs[d];
        line_info(&T, m, step, c, &li);
        if (li.nf || !li.nt) continue;
        for (int k = 0; k < li.nt && k < 16; k++) {
            int t = m + li.tpts[k] * step;
            LineInfo l2;
            mark[t] = 1; any = 1;
            line_info(&T, t, step, c, &l2);
            for (int j = 0; j < l2.nf; j++) mark[t + l2.fpts[j] * step] = 1;
        }
    }
    if (!any) Py_RETURN_NONE;
    int ns = window_squares(&T, 3 - c, n - 2, sq, MAX_CELLS, NULL);
    for (int k = 0; k < ns; k++)
        if (!mark[sq[k]] && is_four_move(&T, sq[k], 3 - c)) mark[sq[k]] = 1;
    PyObject *out = PyList_New(0);
    for (int pi = 0; out && pi < T.size; pi++) {
        if (!mark[pi] || T.cell[pi] != EMPTY) continue;
        PyObject *v = PyLong_FromLong(to_flat(&T, pi));
        if (!v || PyList_Append(out, v) < 0) { Py_XDECREF(v); Py_CLEAR(out); }
        else Py_DECREF(v);
    }
    return out;
}

/* Append to out the squares of the list sq (flat) other than m where c would make five. 0, or
 * -1 with an exception set. */
static int fives_of_list(const Search *s, PyObject *sq, long m, int c, PyObject *out) {
    if (!PyList_Check(sq)) { PyErr_SetString(PyExc_TypeError, "child_fives: fives must be lists"); return -1; }
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(sq); k++) {
        PyObject *o = PyList_GET_ITEM(sq, k);
        long q = PyLong_AsLong(o);
        if (q == -1 && PyErr_Occurred()) return -1;
        if (q == m) continue;
        int pi = padded(s, q);
        if (pi < 0) return -1;
        if (s->cell[pi] == EMPTY && makes_five(s, pi, c) && PyList_Append(out, o) < 0) return -1;
    }
    return 0;
}

/* child_fives(buf, width, height, n, exact, move, colour, parent_opp_fives, parent_my_fives)
 * -> (my_fives, opp_fives or None): mcts._init_threats of the child reached by move (flat, on the
 * board), colour to move there. my_fives: the parent's opp_fives where colour now makes five; when
 * there are none, opp_fives: mcts._new_fives of the other colour through move (each line, each
 * side, the first empty square past the run, in Board._dirs order, repeats kept), then the
 * parent's my_fives where the other colour makes five. */
static PyObject *child_fives(PyObject *self, PyObject *args) {
    static Search T;
    Py_buffer buf;
    int w, h, n, exact, c;
    long mv;
    PyObject *popp, *pmy;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*iiiiliOO", &buf, &w, &h, &n, &exact, &mv, &c, &popp, &pmy)) return NULL;
    if (take_board(&T, &buf, w, h, n, exact, c)) return NULL;
    int m = padded(&T, mv);
    if (m < 0) return NULL;
    int o = 3 - c;
    if (T.cell[m] != o) { PyErr_SetString(PyExc_ValueError, "child_fives: move is not the mover's stone"); return NULL; }
    PyObject *mine = PyList_New(0), *theirs = NULL;
    if (!mine || fives_of_list(&T, popp, mv, c, mine) < 0) goto fail;
    if (PyList_GET_SIZE(mine)) return Py_BuildValue("(NO)", mine, Py_None);
    theirs = PyList_New(0);
    if (!theirs) goto fail;
    const unsigned char *b = T.cell;
    for (int d = 0; d < 4; d++) {
        int step = T.dirs[d];
        for (int sgn = 1; sgn >= -1; sgn -= 2) {
            int st = sgn * step, a = m + st, run = 1, beyond = 0;
            while (b[a] == o) { a += st; run++; }
            if (b[a] != EMPTY) continue;
            for (int q = a + st; b[q] == o; q += st) beyond++;
            for (int q = m - st; b[q] == o; q -= st) run++;
            if (run + 1 + beyond >= n && makes_five(&T, a, o)) {
                PyObject *v = PyLong_FromLong(to_flat(&T, a));
                if (!v || PyList_Append(theirs, v) < 0) { Py_XDECREF(v); goto fail; }
                Py_DECREF(v);
            }
        }
    }
    if (fives_of_list(&T, pmy, mv, o, theirs) < 0) goto fail;
    return Py_BuildValue("(NN)", mine, theirs);
fail:
    Py_XDECREF(mine);
    Py_XDECREF(theirs);
    return NULL;
}

/* ---------------------------------------------------------------------------------------------
 * The network's input planes (gomoku_ai/net/encoding.py, version 1) of a board seen through one of
 * the dihedral transforms of gomoku_ai/net/symmetries.py, written into a float32 buffer. */

/* encode(cells, width, height, side_to_move, last_move, k, out) -> None: out (a writable C-contiguous
 * float32 buffer of 5 * height * width) gets transform_planes(encode(board), k): own stones, the
 * opponent's, on-board (not WALL), black to move (constant), the last move (flat; -1: none). */
static PyObject *encode_planes(PyObject *self, PyObject *args) {
    Py_buffer cb, ob;
    int w, h, stm, k;
    long last;
    PyObject *outobj;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*iiiliO", &cb, &w, &h, &stm, &last, &k, &outobj)) return NULL;
    long p = w + 1, area = (long)w * h;
    if (w < 1 || h < 1 || w > 32 || h > 32 || (stm != 1 && stm != 2) || k < 0 || k > 7
        || cb.len != (h + 2) * p + 1 || last < -1 || last >= area) {
        PyBuffer_Release(&cb);
        PyErr_SetString(PyExc_ValueError, "encode: bad board geometry, side, move or transform");
        return NULL;
    }
    if (PyObject_GetBuffer(outobj, &ob, PyBUF_WRITABLE | PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) {
        PyBuffer_Release(&cb);
        return NULL;
    }
    if (ob.itemsize != 4 || !ob.format || strcmp(ob.format, "f") != 0 || ob.len != 5 * area * 4) {
        PyBuffer_Release(&cb); PyBuffer_Release(&ob);
        PyErr_SetString(PyExc_TypeError, "encode: out must be a C-contiguous float32 array of 5 * height * width");
        return NULL;
    }
    const unsigned char *cells = cb.buf;
    float *own = ob.buf, *opp = own + area, *on = opp + area, *btm = on + area, *lm = btm + area;
    int H2 = (k & 4) ? w : h, W2 = (k & 4) ? h : w;      /* the transformed board's rows, columns */
    long j = 0, lastj = -1;
    for (int y2 = 0; y2 < H2; y2++) {
        int y1 = (k & 2) ? H2 - 1 - y2 : y2;
        for (int x2 = 0; x2 < W2; x2++, j++) {
            int x1 = (k & 1) ? W2 - 1 - x2 : x2;
            int y = (k & 4) ? x1 : y1, x = (k & 4) ? y1 : x1;    /* the square it comes from */
            int v = cells[(y + 1) * p + x];
            own[j] = v == stm ? 1.0f : 0.0f;
            opp[j] = v == 3 - stm ? 1.0f : 0.0f;
            on[j] = v != WALL ? 1.0f : 0.0f;
            btm[j] = stm == 1 ? 1.0f : 0.0f;
            lm[j] = 0.0f;
            if ((long)y * w + x == last) lastj = j;
        }
    }
    if (lastj >= 0) lm[lastj] = 1.0f;
    PyBuffer_Release(&cb);
    PyBuffer_Release(&ob);
    Py_RETURN_NONE;
}

/* ---------------------------------------------------------------- the MCTS tree's edge arithmetic
 * select_vl() and backup_edge() do what the pure-Python loops of gomoku_ai/mcts.py (_descend,
 * _backup) do on one node's child statistics, the same float64 operations in the same order, so
 * that a search gives the identical tree with or without them. The statistics are the node's numpy
 * arrays Q, PU, P, N, W (float64, C-contiguous, one entry per child), read and written through the
 * buffer protocol (no numpy headers). */
typedef struct { Py_buffer b[5]; int held; Py_ssize_t k; double *q, *pu, *p, *n, *w; } Stats;

static void stats_release(Stats *st) {
    for (int j = 0; j < st->held; j++) PyBuffer_Release(&st->b[j]);
    st->held = 0;
}

static int stats_get(Stats *st, PyObject *const *arrays) {
    st->held = 0;
    for (int j = 0; j < 5; j++) {
        if (PyObject_GetBuffer(arrays[j], &st->b[j], PyBUF_WRITABLE | PyBUF_FORMAT) < 0) {
            stats_release(st);
            return -1;
        }
        st->held = j + 1;
        const char *f = st->b[j].format;
        if (st->b[j].itemsize != 8 || !f || !((f[0] == 'd' && !f[1]) || (f[0] == '<' && f[1] == 'd' && !f[2])
                                              || (f[0] == '=' && f[1] == 'd' && !f[2]))
            || st->b[j].len != st->b[0].len) {
            stats_release(st);
            PyErr_SetString(PyExc_TypeError, "_native tree: Q, PU, P, N, W must be float64 arrays of one length");
            return -1;
        }
    }
    st->k = st->b[0].len / 8;
    st->q = st->b[0].buf; st->pu = st->b[1].buf; st->p = st->b[2].buf;
    st->n = st->b[3].buf; st->w = st->b[4].buf;
    return 0;
}

/* select_vl(Q, PU, P, N, W, n, c_puct, vl, loss_q, win_q) -> i: the child maximising
 * Q + (c_puct * sqrt(n + 1)) * PU (the first of equals, or the first NaN, as numpy's argmax), then
 * its virtual loss: N[i] += vl, W[i] -= vl, Q[i] = W[i] / N[i] unless Q[i] is proven
 * (<= loss_q or >= win_q), PU[i] = P[i] / (1 + N[i]). */
static PyObject *select_vl(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 10) { PyErr_SetString(PyExc_TypeError, "select_vl: 10 arguments"); return NULL; }
    long long n = PyLong_AsLongLong(args[5]);
    double c = PyFloat_AsDouble(args[6]), vl = PyFloat_AsDouble(args[7]);
    double loss = PyFloat_AsDouble(args[8]), win = PyFloat_AsDouble(args[9]);
    if (PyErr_Occurred()) return NULL;
    Stats st;
    if (stats_get(&st, args) < 0) return NULL;
    if (st.k == 0) { stats_release(&st); PyErr_SetString(PyExc_ValueError, "select_vl: no children"); return NULL; }
    double coef = c * sqrt((double)(n + 1));
    Py_ssize_t best = 0;
    double top = st.q[0] + coef * st.pu[0];
    if (top == top) {
        for (Py_ssize_t j = 1; j < st.k; j++) {
            double s = st.q[j] + coef * st.pu[j];
            if (s != s) { best = j; break; }
            if (s > top) { top = s; best = j; }
        }
    }
    Py_ssize_t i = best;
    st.n[i] += vl;
    st.w[i] -= vl;
    if (st.q[i] > loss && st.q[i] < win) st.q[i] = st.w[i] / st.n[i];
    st.pu[i] = st.p[i] / (1.0 + st.n[i]);
    stats_release(&st);
    return PyLong_FromSsize_t(i);
}

/* backup_edge(Q, PU, P, N, W, i, vl, v, fpu_q, loss_q, win_q) -> None: child i's share of a backup whose
 * child is not proven: N[i] -= vl, W[i] += vl (vl != 0); with a value v (not None) N[i] += 1,
 * W[i] += v; Q[i] = W[i] / N[i] (fpu_q without visits) unless proven; PU[i] = 0 for a proven
 * loss (Q[i] <= loss_q), else P[i] / (1 + N[i]). */
static PyObject *backup_edge(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 11) { PyErr_SetString(PyExc_TypeError, "backup_edge: 11 arguments"); return NULL; }
    Py_ssize_t i = PyLong_AsSsize_t(args[5]);
    double vl = PyFloat_AsDouble(args[6]);
    int has_v = args[7] != Py_None;
    double v = has_v ? PyFloat_AsDouble(args[7]) : 0.0;
    double fpu_q = PyFloat_AsDouble(args[8]), loss = PyFloat_AsDouble(args[9]);
    double win = PyFloat_AsDouble(args[10]);
    if (PyErr_Occurred()) return NULL;
    Stats st;
    if (stats_get(&st, args) < 0) return NULL;
    if (i < 0 || i >= st.k) { stats_release(&st); PyErr_SetString(PyExc_IndexError, "backup_edge: child index"); return NULL; }
    if (vl != 0.0) { st.n[i] -= vl; st.w[i] += vl; }
    if (has_v) { st.n[i] += 1.0; st.w[i] += v; }
    if (st.q[i] > loss && st.q[i] < win) st.q[i] = st.n[i] > 0 ? st.w[i] / st.n[i] : fpu_q;
    st.pu[i] = st.q[i] <= loss ? 0.0 : st.p[i] / (1.0 + st.n[i]);
    stats_release(&st);
    Py_RETURN_NONE;
}

/* near_candidates(near_root, cells, w, h, moves, start, r) -> list: the empty squares (ascending flat
 * indices) that are True in near_root (bool, h * w: the squares within r of a stone at the root) or
 * within Chebyshev distance r of one of moves[start:] (the moves since the root), as
 * SearchTree.candidates_all computes them in gomoku_ai/mcts.py. cells is the board's padded buffer
 * (see the top of this file: EMPTY 0). */
static PyObject *near_candidates(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 7) { PyErr_SetString(PyExc_TypeError, "near_candidates: 7 arguments"); return NULL; }
    long w = PyLong_AsLong(args[2]), h = PyLong_AsLong(args[3]);
    Py_ssize_t start = PyLong_AsSsize_t(args[5]);
    long r = PyLong_AsLong(args[6]);
    if (PyErr_Occurred()) return NULL;
    PyObject *moves = args[4];
    if (!PyList_Check(moves)) { PyErr_SetString(PyExc_TypeError, "near_candidates: moves must be a list"); return NULL; }
    if (w < 1 || h < 1 || w > 32 || h > 32 || r < 0 || start < 0) {
        PyErr_SetString(PyExc_ValueError, "near_candidates: bad geometry");
        return NULL;
    }
    Py_buffer nb, cb;
    if (PyObject_GetBuffer(args[0], &nb, PyBUF_FORMAT) < 0) return NULL;
    if (nb.itemsize != 1 || nb.len != w * h || !nb.format || strcmp(nb.format, "?") != 0) {
        PyBuffer_Release(&nb);
        PyErr_SetString(PyExc_TypeError, "near_candidates: near_root must be a bool array of h * w");
        return NULL;
    }
    if (PyObject_GetBuffer(args[1], &cb, PyBUF_SIMPLE) < 0) { PyBuffer_Release(&nb); return NULL; }
    long p = w + 1;
    if (cb.len != (h + 2) * p + 1) {
        PyBuffer_Release(&nb); PyBuffer_Release(&cb);
        PyErr_SetString(PyExc_ValueError, "near_candidates: cells is not the padded board of w x h");
        return NULL;
    }
    unsigned char near[32 * 32];
    memcpy(near, nb.buf, (size_t)(w * h));
    PyBuffer_Release(&nb);
    Py_ssize_t nm = PyList_GET_SIZE(moves);
    for (Py_ssize_t k = start; k < nm; k++) {
        long m = PyLong_AsLong(PyList_GET_ITEM(moves, k));
        if (m < 0 || m >= w * h) {
            PyBuffer_Release(&cb);
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "near_candidates: a move is off the board");
            return NULL;
        }
        long x = m % w, y = m / w;
        long y0 = y - r < 0 ? 0 : y - r, y1 = y + r >= h ? h - 1 : y + r;
        long x0 = x - r < 0 ? 0 : x - r, x1 = x + r >= w ? w - 1 : x + r;
        for (long yy = y0; yy <= y1; yy++)
            memset(near + yy * w + x0, 1, (size_t)(x1 - x0 + 1));
    }
    const unsigned char *cells = cb.buf;
    PyObject *out = PyList_New(0);
    for (long i = 0; out && i < w * h; i++) {
        if (near[i] && cells[(i / w + 1) * p + i % w] == EMPTY) {
            PyObject *v = PyLong_FromLong(i);
            if (!v || PyList_Append(out, v) < 0) { Py_XDECREF(v); Py_CLEAR(out); break; }
            Py_DECREF(v);
        }
    }
    PyBuffer_Release(&cb);
    return out;
}

static PyMethodDef methods[] = {
    {"select_vl", (PyCFunction)(void (*)(void))select_vl, METH_FASTCALL, "MCTS selection with virtual loss (see gomoku_ai/mcts.py)."},
    {"backup_edge", (PyCFunction)(void (*)(void))backup_edge, METH_FASTCALL, "MCTS backup of one edge (see gomoku_ai/mcts.py)."},
    {"near_candidates", (PyCFunction)(void (*)(void))near_candidates, METH_FASTCALL, "SearchTree.candidates_all (see gomoku_ai/mcts.py)."},
    {"search", vcf_search, METH_VARARGS, "VCF search (see gomoku_ai/native.py)."},
    {"clear", vcf_clear, METH_NOARGS, "Empty the transposition table."},
    {"window_scans", window_scans, METH_VARARGS, "Window scans (see gomoku_ai/native.py)."},
    {"threats", threats, METH_VARARGS, "vct._threats (see gomoku_ai/native.py)."},
    {"four_moves", four_moves, METH_VARARGS, "tactics._four_moves (see gomoku_ai/native.py)."},
    {"vct", vct_search, METH_VARARGS, "vct._VCT (see gomoku_ai/native.py)."},
    {"line_table_check", line_table_check, METH_NOARGS, "Windows whose table entry differs from the direct line_info (0)."},
    {"three_replies", three_replies, METH_VARARGS, "mcts._three_replies (see gomoku_ai/native.py)."},
    {"child_fives", child_fives, METH_VARARGS, "mcts._init_threats (see gomoku_ai/native.py)."},
    {"encode", encode_planes, METH_VARARGS, "net.encoding planes of a transformed board (see gomoku_ai/native.py)."},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_native",
                                    "The C core: VCF prover, VCT search, window scans, the MCTS tree arithmetic and node creation, the input planes.", -1, methods};

PyMODINIT_FUNC PyInit__native(void) { return PyModule_Create(&module); }
