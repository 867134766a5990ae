"""Tactics: fives, fours, threes, VCF (victory by continuous fours) and the root threat summary.

Everything here is written from the point of view of **the side to move** unless a ``color``
argument says otherwise. Moves are flat indices (``m = y * width + x``); times are seconds of
:func:`time.perf_counter` (``deadline`` is an absolute ``perf_counter()`` value, not a duration).

How it stays fast in pure Python
--------------------------------
* The board is only ever read **along the four lines through a square**. A line is read with one
  extended slice of :attr:`Board._buf` (2n+1 cells centred on the square, padded with WALL at the
  board edge) and the analysis of that pattern -- does the centre make five, which empty squares
  would then make five (*five-points*), which would make a four, which a straight four -- is
  computed once per distinct pattern and memoised (one dict per rule, colour and ``n``).
* Whole-board questions (:func:`five_points`, the VCF root) slice each board line once, skip lines
  with too few stones (``bytes.count``, in C), and look the rest up by their cells in a table of
  line answers (:func:`_window_scans`): a line's n-windows are scanned only the first time its
  contents are seen. The scans a VCF root needs (both colours' five- and four-candidates) are
  made in one pass and kept in the :class:`_Ctx` until the stones change
  (:attr:`Board.stones_key`), so the VCT's many VCF searches at one position share them.
* The VCF search uses :meth:`Board.push` / :meth:`Board.pop` (make/undo), a transposition table on
  :attr:`Board.hash`, iterative deepening on the number of attacker fours, and an incremental
  candidate list: the attacker's possible fours at a node are the root's four-candidates plus the
  four-candidates created on the lines through the attacker's own moves since the root (a
  defender stone can only destroy fours). The list is a superset; each candidate is checked on
  its own line before it is expanded.

Rules
-----
Five-points respect ``board.rule``: FREESTYLE five or more; STANDARD exactly five (a move that
makes six is not a five, so ``XXXX.X`` holds no five-point and ``XXX..X`` is not a four); RENJU
exactly five for Black and five or more for White; CARO five or more unless both ends of the row
are opponent stones (a defender can also stop a caro four at the far end of the row). Under RENJU
a Black move is never proposed on a forbidden point (:func:`gomoku_ai.movegen.is_forbidden`), and a
Black defender who can only block on a forbidden point cannot block.

Known limitations
-----------------
* Only continuous-four threats are searched here (VCF). Threats that need a three on the way
  (a three-three, a four-three whose three is made first) are the job of :mod:`gomoku_ai.vct`,
  which builds on this module; :func:`analyse` does not see them until they become a VCF threat
  (an open three *is* one: its straight four is a one-move VCF).
* "No VCF" and "this move defends" are proofs only within the node limit and deadline
  (:attr:`VCFResult.complete`, :attr:`ThreatInfo.aborted` say when they were cut).
* :func:`find_vcf_defences` tests the squares near the threat line (plus our fours). Under renju
  a stone farther away can, in rare recursive cases, change whether a Black point is forbidden
  (a "false three" becoming real); such distant defences are not found.
* Everything assumes the board's own ``n`` (five by default); renju forbidden points come from
  :mod:`gomoku_ai.renju`, which assumes ``n == 5``.

Public API: :func:`five_points`, :func:`winning_moves`, :func:`must_block`, :func:`blocking_moves`,
:func:`five_points_through`, :func:`four_moves`, :func:`three_moves`, :func:`find_vcf`,
:func:`vcf_search`, :func:`is_vcf_line`, :func:`find_vcf_defences`, :func:`analyse`.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, NamedTuple, Optional, Sequence, Set, Tuple

from . import movegen, native
from .board import Board
from .rules import BLACK, EMPTY, WALL, WHITE, Rule, opponent

__all__ = [
    "FourMove", "VCFResult", "ThreatInfo",
    "five_points", "winning_moves", "must_block", "blocking_moves", "five_points_through",
    "four_moves", "three_moves", "find_vcf", "vcf_search", "is_vcf_line", "find_vcf_defences",
    "analyse",
]

_INF_DEPTH = 1 << 30

# ---------------------------------------------------------------------------------------------
# geometry (per board shape)

_DXY = ((1, 0), (0, 1), (1, 1), (-1, 1))   # the order of Board._dirs: 1, p, p + 1, p - 1


class _Geo:
    """Precomputed slices for one (width, height, n).

    ``seg[d][m]`` = (lo, hi, step, pre, post): ``pre + buf[lo:hi:step] + post`` is the 2n+1 cells
    of the line through ``m`` along direction ``d``, centred on ``m``, WALL-padded past the edge.
    ``fd[d]`` is the flat-index step of direction ``d``. ``lines`` lists every board line of at
    least ``n`` squares as (lo, hi, step, flat start, flat step, length, d). ``near[m]`` (lazy) is
    the squares within ``n`` steps of ``m`` along its four lines.
    """

    __slots__ = ("w", "h", "n", "p", "seg", "fd", "lines", "_near")

    def __init__(self, w: int, h: int, n: int) -> None:
        self.w, self.h, self.n = w, h, n
        p = w + 1
        self.p = p
        steps = (1, p, p + 1, p - 1)
        self.fd = tuple(dx + dy * w for dx, dy in _DXY)
        wall = bytes([WALL])
        self.seg = []
        for d, (dx, dy) in enumerate(_DXY):
            step = steps[d]
            row = []
            for m in range(w * h):
                x, y = m % w, m // w
                pi = (y + 1) * p + x
                kl = 0
                while kl < n and 0 <= x - (kl + 1) * dx < w and 0 <= y - (kl + 1) * dy < h:
                    kl += 1
                kr = 0
                while kr < n and 0 <= x + (kr + 1) * dx < w and 0 <= y + (kr + 1) * dy < h:
                    kr += 1
                row.append((pi - kl * step, pi + kr * step + 1, step,
                            wall * (n - kl), wall * (n - kr)))
            self.seg.append(row)
        self.lines = []
        for d, (dx, dy) in enumerate(_DXY):
            step = steps[d]
            starts = []
            for y in range(h):
                for x in range(w):
                    if not (0 <= x - dx < w and 0 <= y - dy < h):   # first square of a line
                        starts.append((x, y))
            for x, y in starts:
                length = 0
                while 0 <= x + length * dx < w and 0 <= y + length * dy < h:
                    length += 1
                if length < n:
                    continue
                pi = (y + 1) * p + x
                self.lines.append((pi, pi + (length - 1) * step + 1, step, y * w + x,
                                   self.fd[d], length, d))
        self._near: Optional[List[Tuple[int, ...]]] = None

    def near(self, m: int) -> Tuple[int, ...]:
        """Squares within ``n`` steps of ``m`` on its four lines (``m`` included)."""
        if self._near is None:
            w, h, n = self.w, self.h, self.n
            out = []
            for q in range(w * h):
                x, y = q % w, q // w
                s = {q}
                for dx, dy in _DXY:
                    for k in range(-n, n + 1):
                        xx, yy = x + k * dx, y + k * dy
                        if 0 <= xx < w and 0 <= yy < h:
                            s.add(yy * w + xx)
                out.append(tuple(sorted(s)))
            self._near = out
        return self._near[m]


_GEO: Dict[Tuple[int, int, int], _Geo] = {}


def _geo(board: Board) -> _Geo:
    key = (board.width, board.height, board.n)
    g = _GEO.get(key)
    if g is None:
        g = _GEO[key] = _Geo(*key)
    return g


# ---------------------------------------------------------------------------------------------
# line patterns

class _LineInfo(NamedTuple):
    """Analysis of one line through a square, with the square itself taken as a ``color`` stone.

    Offsets are in steps along the direction, relative to the square.

    five:   the square completes a winning row on this line.
    fpts:   five-points: empty squares that would then complete a winning row containing the
            square (one = a four, two or more = a straight four / two fours in one line).
    fcands: empty squares ``e`` such that a stone on ``e`` as well creates a five-point whose row
            contains both the square and ``e`` (the fours this square helps to make).
    tpts:   the subset of ``fcands`` that make two or more five-points (straight-four points; a
            non-empty ``tpts`` without ``fpts`` means the square makes a three on this line).
    long:   the square's row on this line is longer than n (an overline; a five under FREESTYLE).
    """

    five: bool
    fpts: Tuple[int, ...]
    fcands: Tuple[int, ...]
    tpts: Tuple[int, ...]
    long: bool


_AMBIGUOUS = None  # caro: a row touches the end of the window; read the whole line instead


def _line_info(cells: Sequence[int], i: int, c: int, rule: Rule, n: int) -> _LineInfo:
    """Pure analysis of ``cells`` (a line; anything out of range is WALL) around index ``i``."""
    a = list(cells)
    L = len(a)
    for k in range(i - 1, -1, -1):
        if a[k] == WALL:
            for q in range(k):
                a[q] = WALL
            break
    for k in range(i + 1, L):
        if a[k] == WALL:
            for q in range(k + 1, L):
                a[q] = WALL
            break
    a[i] = c
    o = opponent(c)
    exact = rule is Rule.STANDARD or (rule is Rule.RENJU and c == BLACK)
    caro = rule is Rule.CARO

    def row(j: int) -> Optional[Tuple[int, int]]:
        """(first, last) of the winning row through j, or None."""
        lo = j - 1
        while lo >= 0 and a[lo] == c:
            lo -= 1
        hi = j + 1
        while hi < L and a[hi] == c:
            hi += 1
        length = hi - lo - 1
        if length < n or (exact and length != n):
            return None
        if caro and lo >= 0 and hi < L and a[lo] == o and a[hi] == o:
            return None
        return lo + 1, hi - 1

    lo_r, hi_r = max(0, i - n + 1), min(L - 1, i + n - 1)

    def points(e: int) -> List[int]:
        out = []
        lo_need, hi_need = min(i, e), max(i, e)
        for j in range(lo_r, hi_r + 1):
            if a[j] != EMPTY:
                continue
            a[j] = c
            r = row(j)
            a[j] = EMPTY
            if r is not None and r[0] <= lo_need and hi_need <= r[1]:
                out.append(j - i)
        return out

    five = row(i) is not None
    lo = i - 1
    while lo >= 0 and a[lo] == c:
        lo -= 1
    hi = i + 1
    while hi < L and a[hi] == c:
        hi += 1
    long = hi - lo - 1 > n
    fpts = tuple(points(i))
    fcands: List[int] = []
    tpts: List[int] = []
    if not five:
        for e in range(lo_r, hi_r + 1):
            if a[e] != EMPTY:
                continue
            a[e] = c
            r = row(e)
            if r is not None and r[0] <= i <= r[1]:
                a[e] = EMPTY
                continue            # e is a five-point, not a four-point
            pts = points(e)
            a[e] = EMPTY
            if pts:
                fcands.append(e - i)
                if len(pts) >= 2:
                    tpts.append(e - i)
    return _LineInfo(five, fpts, tuple(fcands), tuple(tpts), long)


def _window_info(key: bytes, c: int, rule: Rule, n: int) -> Optional[_LineInfo]:
    """Analysis of a 2n+1 window; ``_AMBIGUOUS`` for caro rows that may run past the window."""
    if rule is Rule.CARO:
        a = list(key)
        i = n
        for k in range(i - 1, -1, -1):
            if a[k] == WALL:
                break
        else:
            if a[0] == c:
                return _AMBIGUOUS
        for k in range(i + 1, len(a)):
            if a[k] == WALL:
                break
        else:
            if a[-1] == c:
                return _AMBIGUOUS
    return _line_info(key, n, c, rule, n)


_TABLES: Dict[Tuple[Rule, int, int], Dict[bytes, Optional[_LineInfo]]] = {}


def _table(rule: Rule, n: int, c: int) -> Dict[bytes, Optional[_LineInfo]]:
    key = (rule, n, c)
    t = _TABLES.get(key)
    if t is None:
        t = _TABLES[key] = {}
    return t


class _Ctx:
    """A view of one board for a search: buffer, geometry and pattern tables for both colours,
    and the window scans of the last position asked (:meth:`windows`). One search keeps one (a VCT
    shares its own with its VCF searches); it assumes the walls do not change while it lives."""

    __slots__ = ("board", "buf", "pad", "geo", "rule", "n", "tabs", "fd", "seg", "caro", "renju",
                 "_wkey", "_wval", "_fives", "_wants")

    def __init__(self, board: Board) -> None:
        self.board = board
        self.buf = board._buf
        self.pad = board._pad
        self.geo = g = _geo(board)
        self.rule = board.rule
        self.n = board.n
        # indexed by colour; the EMPTY slot is an unused placeholder (no line is read for EMPTY)
        self.tabs: Tuple[Dict[bytes, Optional[_LineInfo]], ...] = (
            {}, _table(board.rule, board.n, BLACK), _table(board.rule, board.n, WHITE))
        self.fd = g.fd
        self.seg = g.seg
        self.caro = board.rule is Rule.CARO
        self.renju = board.rule is Rule.RENJU
        # the last position's window scans (see windows), by the board's stones_key
        self._wkey: Optional[int] = None
        self._wval: Tuple[List[Tuple[int, int]], ...] = ()
        self._fives: List[Optional[List[int]]] = [None, None, None]
        n = board.n
        self._wants = ((BLACK, n - 1), (WHITE, n - 1), (BLACK, n - 2), (WHITE, n - 2))

    def windows(self, c: int) -> Tuple[List[Tuple[int, int]], List[Tuple[int, int]]]:
        """:func:`_window_squares` of ``c`` with n - 1 stones (five-point candidates) and with
        n - 2 (four candidates) at the board's current position. All four scans (both colours) are
        made in one pass and kept until the stones change: a VCT node asks for them up to six
        times (its five-points, then its VCF searches, passing or not). Do not modify the lists."""
        key = self.board.stones_key
        if key != self._wkey:
            self._wval = tuple(_window_scans(self, self._wants))
            self._fives = [None, None, None]
            self._wkey = key
        v = self._wval
        return (v[0], v[2]) if c == BLACK else (v[1], v[3])

    def five_points(self, c: int) -> List[int]:
        """Sorted five-points of ``c`` now (a new list; kept with :meth:`windows`)."""
        fours = self.windows(c)[0]
        f = self._fives[c]
        if f is None:
            f = self._fives[c] = _five_points(self, c, fours)
        return list(f)

    def info(self, m: int, d: int, c: int) -> _LineInfo:
        """Line ``d`` through ``m`` with ``m`` taken as a ``c`` stone (``m`` empty or ``c``)."""
        lo, hi, step, pre, post = self.seg[d][m]
        key = pre + self.buf[lo:hi:step] + post
        tab = self.tabs[c]
        try:
            r = tab[key]
        except KeyError:
            r = tab[key] = _window_info(key, c, self.rule, self.n)
        if r is None:
            r = self._info_slow(m, d, c)
        return r

    def _info_slow(self, m: int, d: int, c: int) -> _LineInfo:
        """The whole line (caro rows longer than the window)."""
        buf = self.buf
        step = self.board._dirs[d]
        pi = self.pad[m]
        a = pi
        while buf[a - step] != WALL:
            a -= step
        b = pi
        while buf[b + step] != WALL:
            b += step
        cells = list(buf[a:b + 1:step])
        return _line_info(cells, (pi - a) // step, c, self.rule, self.n)

    def fives_of(self, m: int, c: int) -> List[int]:
        """Five-points of ``c`` on the lines through ``m`` (``m`` taken as a ``c`` stone)."""
        fd = self.fd
        out: List[int] = []
        for d in range(4):
            for off in self.info(m, d, c).fpts:
                out.append(m + off * fd[d])
        return out

    def forbidden(self, m: int, infos: Optional[Sequence[_LineInfo]] = None) -> bool:
        """Renju: is the empty ``m`` forbidden for Black? ``infos``: the four line infos of ``m``
        for Black when the caller has them. A move that is no five, no overline, has at most one
        five-point and a three on at most one line cannot be forbidden; only the others are
        handed to :func:`gomoku_ai.movegen.is_forbidden`."""
        if infos is None:
            info = self.info
            infos = (info(m, 0, BLACK), info(m, 1, BLACK), info(m, 2, BLACK), info(m, 3, BLACK))
        fives = threes = 0
        for inf in infos:
            if inf.five:
                return False
            if inf.long:
                break
            if inf.fpts:
                fives += len(inf.fpts)
            elif inf.tpts:
                threes += 1
        else:
            if fives <= 1 and threes <= 1:
                return False
        return movegen.is_forbidden(self.board, m, BLACK)

    def flat(self, pi: int) -> int:
        p = self.geo.p
        return (pi // p - 1) * self.geo.w + pi % p


# ---------------------------------------------------------------------------------------------
# whole-board scans

def _window_squares(ctx: _Ctx, c: int, need: int) -> List[Tuple[int, int]]:
    """(square, direction) of the empty squares of every n-window holding exactly ``need`` stones
    of ``c`` and nothing but empty squares otherwise. Deduplicated, in board-line order."""
    return _window_scans(ctx, ((c, need),))[0]


def _window_scans(ctx: _Ctx, wants: Tuple[Tuple[int, int], ...]
                  ) -> List[List[Tuple[int, int]]]:
    """:func:`_window_squares` for each (colour, need) of ``wants``, in one pass over the lines.

    Hot (every VCF search needs four of these scans, :meth:`_Ctx.windows`): each board line's
    answers, already as (square, direction) pairs, are looked up by the line's number and cells
    in :data:`_LINE_SQUARES`, so a line is scanned window by window (:func:`_line_squares`) only
    the first time its contents are seen at that place. A square appears once per direction, and
    two lines never share a (square, direction), so no set is needed. With the C core
    (:func:`gomoku_ai.native.window_scans`) the same lists come from C."""
    if native.ENABLED:
        return native.window_scans(ctx.board, wants)
    geo = ctx.geo
    n = ctx.n
    tkey = (wants, geo.w, geo.h, n)
    entry = _LINE_SQUARES.get(tkey)
    if entry is None or entry[1][0] > _LINE_SQUARES_MAX:
        entry = _LINE_SQUARES[tkey] = ([{} for _ in geo.lines], [0])
    tables, size = entry
    bb = bytes(ctx.buf)
    outs: List[List[Tuple[int, int]]] = [[] for _ in wants]
    for table, (lo, hi, step, m0, fd, _length, d) in zip(tables, geo.lines):
        key = bb[lo:hi:step]
        found = table.get(key)
        if found is None:
            found = table[key] = tuple(
                (i, tuple((m0 + off * fd, d) for off in offs))
                for i, offs in enumerate(_line_squares(key, c, need, n) for c, need in wants)
                if offs)
            size[0] += 1
        for i, squares in found:
            outs[i].extend(squares)
    return outs


#: per (wants, width, height, n) of :func:`_window_scans`: for each board line (in the order of
#: ``_Geo.lines``) its cells -> the non-empty answers as (want index, ((square, direction), ...)),
#: and the number of entries in all. The tables are dropped when they hold over
#: :data:`_LINE_SQUARES_MAX` entries (a few hundred bytes each, so a few MB at most; the VCT searches
#: of 98 positions from 98 games, 3,000 nodes each, filled about 4,200 line contents)
_LINE_SQUARES: Dict[Tuple[Tuple[Tuple[int, int], ...], int, int, int],
                    Tuple[List[Dict[bytes, Tuple[Tuple[int, Tuple[Tuple[int, int], ...]], ...]]],
                          List[int]]] = {}
_LINE_SQUARES_MAX = 40_000


def _line_squares(cells: bytes, c: int, need: int, n: int) -> Tuple[int, ...]:
    """Positions (0-based along the line ``cells``) of the empty squares of every n-window of the
    line that holds exactly ``need`` stones of ``c`` and empty squares otherwise; each position
    once, in the order first met (windows left to right, squares left to right)."""
    empties = n - need
    out: List[int] = []
    for s in range(len(cells) - n + 1):
        w = cells[s:s + n]
        if w.count(c) == need and w.count(EMPTY) == empties:
            j = w.find(EMPTY)
            while j >= 0:
                if s + j not in out:
                    out.append(s + j)
                j = w.find(EMPTY, j + 1)
    return tuple(out)


def _five_points(ctx: _Ctx, c: int,
                 squares: Optional[List[Tuple[int, int]]] = None) -> List[int]:
    """Sorted five-points of ``c`` (a new list); ``squares``: :func:`_window_squares` of ``c``
    with n - 1 stones (None: :meth:`_Ctx.five_points`, which keeps them for the position)."""
    if squares is None:
        return ctx.five_points(c)
    board = ctx.board
    out: List[int] = []
    for m, _d in squares:
        if m not in out and board.makes_five(m, c):
            out.append(m)
    out.sort()
    return out


def five_points(board: Board, color: int) -> List[int]:
    """Sorted empty squares where ``color`` would complete a winning row now (``board.rule``:
    exact five for STANDARD and renju Black, caro ends). A renju five is never forbidden."""
    return _five_points(_Ctx(board), color)


def winning_moves(board: Board) -> List[int]:
    """Moves that win at once (make five) for the side to move, sorted. Empty if the game is over."""
    if board.winner is not None:
        return []
    return five_points(board, board.side_to_move)


def must_block(board: Board) -> List[int]:
    """The opponent's five-points: squares where the side *not* to move would make five next move.

    If the side to move cannot win at once, it must occupy one of these (more than one means it
    has lost, barring its own five). Under CARO a row can also be stopped at its far end; see
    :func:`blocking_moves` for every square that removes all the opponent's five-points.
    """
    if board.winner is not None:
        return []
    return five_points(board, opponent(board.side_to_move))


def five_points_through(board: Board, m: int, color: int) -> List[int]:
    """Five-points of ``color`` on the four lines through ``m`` only (``m`` taken as a ``color``
    stone, e.g. the move just played). O(1): use it at search leaves after the last move instead
    of the whole-board :func:`five_points`. Returns only rows that contain ``m``."""
    return _Ctx(board).fives_of(m, color)


def _caro_block_candidates(ctx: _Ctx, threats: Iterable[int], c: int) -> List[int]:
    """Squares that may stop ``c``'s caro five-points: the points and the empty ends of the rows
    they would complete."""
    buf, pad = ctx.buf, ctx.pad
    dirs = ctx.board._dirs
    out: List[int] = []
    for f in threats:
        if f not in out:
            out.append(f)
        pf = pad[f]
        for step in dirs:
            a = pf - step
            while buf[a] == c:
                a -= step
            b = pf + step
            while buf[b] == c:
                b += step
            if (b - a) // step - 1 < ctx.n:
                continue
            for q in (a, b):
                if buf[q] == EMPTY:
                    fq = ctx.flat(q)
                    if fq not in out:
                        out.append(fq)
    return out


def _blocks(ctx: _Ctx, threats: List[int], c: int) -> List[int]:
    """Moves for the side to move (the opponent of ``c``) after which ``c`` has none of ``threats`` left."""
    if not threats:
        return []
    board = ctx.board
    if not ctx.caro:
        return list(threats) if len(threats) == 1 else []
    out = []
    for s in _caro_block_candidates(ctx, threats, c):
        board.push(s)
        try:
            if not any(board.makes_five(f, c) for f in threats if board[f] == EMPTY):
                out.append(s)
        finally:
            board.pop()
    return sorted(out)


def blocking_moves(board: Board) -> List[int]:
    """Moves of the side to move that leave the opponent no five-point (empty when it has none, or
    when no single move stops them all). Equal to :func:`must_block` when that has one point,
    except under CARO where blocking the far end of the row can also work. Renju forbidden points
    for a Black mover are *not* removed here (:func:`analyse` does)."""
    ctx = _Ctx(board)
    c = opponent(board.side_to_move)
    return _blocks(ctx, _five_points(ctx, c), c)


# ---------------------------------------------------------------------------------------------
# fours and threes

class FourMove(NamedTuple):
    """A move that makes a four for ``color`` in :func:`four_moves`.

    ``fives``: the five-points it creates (flat indices). ``straight``: two or more of them lie
    on one line (an open/straight four ``.XXXX.``, or ``X.XXX.X`` filled in the middle).
    ``double``: five-points on two or more lines (a double four). Either way, ``len(fives) >= 2``
    means the opponent cannot block with one stone (except under CARO, or where renju forbids it).
    """

    move: int
    fives: Tuple[int, ...]
    straight: bool
    double: bool


def _four_moves(ctx: _Ctx, c: int, check_forbidden: bool = True) -> List[FourMove]:
    if native.serves(ctx.board):
        return [FourMove(*t) for t in native.four_moves(ctx.board, c)]
    fd = ctx.fd
    out: List[FourMove] = []
    done: Set[int] = set()
    for m, _d in _window_squares(ctx, c, ctx.n - 2):
        if m in done:
            continue
        done.add(m)
        fives: List[int] = []
        straight = False
        lines = 0
        is_five = False
        for d in range(4):
            inf = ctx.info(m, d, c)
            if inf.five:
                is_five = True
                break
            if inf.fpts:
                lines += 1
                if len(inf.fpts) >= 2:
                    straight = True
                fives.extend(m + off * fd[d] for off in inf.fpts)
        if is_five or not fives:
            continue
        out.append(FourMove(m, tuple(fives), straight, lines >= 2))
    if check_forbidden and ctx.renju and c == BLACK and out:
        out = [f for f in out if not ctx.forbidden(f.move)]
    out.sort()
    return out


def four_moves(board: Board, color: Optional[int] = None) -> List[FourMove]:
    """Every move that makes a four (at least one five-point) for ``color`` (default: the side to
    move), sorted by move. Moves that make five at once are not listed (see
    :func:`winning_moves`). Under STANDARD/renju-Black a row that could only become six is not a
    four. Renju forbidden points are left out for Black."""
    color = board.side_to_move if color is None else color
    return _four_moves(_Ctx(board), color)


def three_moves(board: Board, color: Optional[int] = None) -> List[int]:
    """Moves that make an open three for ``color`` (default: the side to move): afterwards one
    more stone makes a straight four on that line. Moves that make a four or five on the same line
    are not counted as threes there. Renju Black: the move must not be forbidden and at least one
    straight-four point must itself be allowed (a *real* three). Sorted."""
    color = board.side_to_move if color is None else color
    ctx = _Ctx(board)
    fd = ctx.fd
    renju_black = ctx.renju and color == BLACK
    out: List[int] = []
    done: Set[int] = set()
    for m, _d in _window_squares(ctx, color, ctx.n - 3):
        if m in done:
            continue
        done.add(m)
        ok = False
        for d in range(4):
            inf = ctx.info(m, d, color)
            if inf.five:
                ok = False
                break
            if inf.tpts and not inf.fpts:
                if not renju_black:
                    ok = True
                    continue
                pi = ctx.pad[m]
                ctx.buf[pi] = color
                try:
                    if any(not ctx.forbidden(m + off * fd[d]) for off in inf.tpts):
                        ok = True
                finally:
                    ctx.buf[pi] = EMPTY
        if ok and not (renju_black and ctx.forbidden(m)):
            out.append(m)
    out.sort()
    return out


# ---------------------------------------------------------------------------------------------
# VCF

class _Abort(Exception):
    pass


@dataclass
class VCFResult:
    """What :func:`vcf_search` found.

    ``line``: the winning line or None (see :func:`find_vcf` for its format). ``nodes``: attacker
    nodes searched. ``complete``: True when "no VCF" is proved for every length (not cut by
    ``max_depth``, ``node_limit`` or the deadline). ``aborted``: the node limit or the deadline
    stopped the search. ``depth``: the last depth (number of attacker fours) searched.
    ``elapsed_s``: wall time in seconds.
    """

    line: Optional[List[int]]
    nodes: int = 0
    complete: bool = False
    aborted: bool = False
    depth: int = 0
    elapsed_s: float = 0.0


class _VCF:
    """Depth-first VCF prover for the side to move (the attacker)."""

    def __init__(self, board: Board, node_limit: int, deadline: Optional[float],
                 ctx: Optional[_Ctx] = None, tt: Optional[Dict[int, int]] = None) -> None:
        self.ctx = ctx = ctx if ctx is not None else _Ctx(board)
        self.board = board
        self.buf = ctx.buf
        self.pad = ctx.pad
        self.att = board.side_to_move
        self.dfn = opponent(self.att)
        self.node_limit = node_limit
        self.deadline = deadline
        self.nodes = 0
        self.cut = 0
        self.tt: Dict[int, int] = tt if tt is not None else {}
        self.caro = ctx.caro
        self.att_forbid = ctx.renju and self.att == BLACK
        self.dfn_forbid = ctx.renju and self.dfn == BLACK

    def run(self, max_depth: int) -> VCFResult:
        ctx = self.ctx
        t0 = time.perf_counter()
        res = VCFResult(None)
        own = ctx.five_points(self.att)
        if own:
            res.line = [own[0]]
            res.elapsed_s = time.perf_counter() - t0
            return res
        D = ctx.five_points(self.dfn)
        cands = list(ctx.windows(self.att)[1])     # a copy: used as a stack below
        try:
            for depth in range(1, max_depth + 1):
                res.depth = depth
                cut0 = self.cut
                line = self._attack(depth, cands, D)
                if line is not None:
                    res.line = line
                    break
                if self.cut == cut0:
                    res.complete = True
                    break
        except _Abort:
            res.aborted = True
        res.nodes = self.nodes
        res.elapsed_s = time.perf_counter() - t0
        return res

    def _attack(self, depth: int, cands: List[Tuple[int, int]], D: List[int]) -> Optional[List[int]]:
        """Attacker to move with no five-point of its own; ``D``: the defender's five-points.
        Returns a winning line or None (no VCF within ``depth`` fours).

        Kept in one piece (about 95 lines) on purpose: this is the VCF prover's innermost
        recursion, one call per attacker node (``benchmarks/bench_vct.py``). A helper per tried
        four would add a Python call for every candidate square of every node and split the
        paired ``push``/``pop`` of ``m`` and ``r`` and the shared ``cands`` stack (appended here,
        cut back in ``finally``) over several functions.
        """
        self.nodes += 1
        if self.nodes >= self.node_limit:
            raise _Abort
        if self.deadline is not None and not (self.nodes & 63) and time.perf_counter() > self.deadline:
            raise _Abort
        board = self.board
        h = board.hash
        tt = self.tt
        known = tt.get(h, -1)
        if known >= depth:
            if known < _INF_DEPTH:
                self.cut += 1           # a depth-limited failure: deeper search might still win
            return None
        cut0 = self.cut
        ctx = self.ctx
        buf, pad, fd = self.buf, self.pad, ctx.fd
        info = ctx.info
        att, dfn = self.att, self.dfn
        caro = self.caro
        if D and not caro:
            if len(D) >= 2:
                tt[h] = _INF_DEPTH
                return None
            order: Sequence[Tuple[int, int]] = ((D[0], -1),)
        else:
            order = cands
        tried: Set[int] = set()
        for idx in range(len(order) - 1, -1, -1):
            m, d0 = order[idx]
            if buf[pad[m]] != EMPTY or m in tried:
                continue
            if d0 >= 0:
                i0 = info(m, d0, att)
                if not i0.fpts:
                    continue
                # the line read for the test is reused (a fifth of the line reads of a search)
                infos = (i0 if d0 == 0 else info(m, 0, att), i0 if d0 == 1 else info(m, 1, att),
                         i0 if d0 == 2 else info(m, 2, att), i0 if d0 == 3 else info(m, 3, att))
            else:
                infos = (info(m, 0, att), info(m, 1, att), info(m, 2, att), info(m, 3, att))
            tried.add(m)
            F = [m + off * fd[d] for d in range(4) for off in infos[d].fpts]
            if not F:
                continue
            if self.att_forbid and ctx.forbidden(m, infos):
                continue
            if len(F) == 1 and depth == 1 and not self.dfn_forbid and not caro:
                self.cut += 1           # a single four needs at least one more four
                continue
            board.push_quiet(m)
            try:
                if D and caro and any(board.makes_five(x, dfn) for x in D if buf[pad[x]] == EMPTY):
                    continue            # the defender's five is still there
                if caro:
                    R = _blocks(ctx, F, att)
                elif len(F) == 1:
                    R = F
                else:
                    R = []
                if self.dfn_forbid and R:
                    R = [r for r in R if not ctx.forbidden(r)]
                if not R:
                    return self._finish(m, F)
                if depth == 1:
                    self.cut += 1
                    continue
                n0 = len(cands)
                for d in range(4):
                    step = fd[d]
                    for off in infos[d].fcands:
                        cands.append((m + off * step, d))
                line: Optional[List[int]] = None
                try:
                    for r in R:
                        board.push_quiet(r)
                        try:
                            Dn = ctx.fives_of(r, dfn)
                            sub = self._attack(depth - 1, cands, Dn)
                        finally:
                            board.pop()
                        if sub is None:
                            line = None
                            break
                        if line is None:
                            line = [m, r] + sub
                finally:
                    del cands[n0:]
                if line is not None:
                    return line
            finally:
                board.pop()
        old = tt.get(h, -1)
        val = depth if self.cut != cut0 else _INF_DEPTH
        if val > old:
            tt[h] = val
        return None

    def _finish(self, m: int, F: List[int]) -> List[int]:
        """Line for an unblockable threat just made by ``m`` (board has ``m`` pushed): the
        defender's reply shown is a five-point it may legally take, then the attacker's five."""
        board = self.board
        ctx = self.ctx
        legal = [f for f in F if not (self.dfn_forbid and ctx.forbidden(f))]
        if not legal:
            return [m]                  # renju: Black's only blocks are forbidden
        r = legal[0]
        board.push(r)
        try:
            for f in F:
                if f != r and board.makes_five(f, self.att):
                    return [m, r, f]
        finally:
            board.pop()
        return [m]   # pragma: no cover - only reachable through an inconsistent rule set


def vcf_search(board: Board, max_depth: int = 40, node_limit: int = 20000,
               deadline: Optional[float] = None) -> VCFResult:
    """Search a VCF for the side to move; returns a :class:`VCFResult` with statistics.

    ``max_depth``: most attacker fours in the line (the final double threat counts as one).
    ``node_limit``: attacker nodes, summed over the iterative-deepening passes. ``deadline``:
    absolute :func:`time.perf_counter` time. The board is left unchanged.
    """
    t0 = time.perf_counter()
    if board.winner is not None:
        return VCFResult(None, complete=True)
    if native.serves(board):
        res = _native_vcf(board, node_limit, deadline, max_depth)
    else:
        res = _VCF(board, node_limit, deadline).run(max_depth)
    res.elapsed_s = time.perf_counter() - t0
    return res


def _native_vcf(board: Board, node_limit: int, deadline: Optional[float],
                max_depth: int, tt: Optional[Dict[int, int]] = None) -> VCFResult:
    """The C prover (:mod:`gomoku_ai.native`), as a :class:`VCFResult`; ``tt`` as in
    :func:`_vcf_in` (the C table that goes with it: :func:`gomoku_ai.native.table_for`)."""
    r = native.vcf(board, node_limit, max_depth, deadline, native.table_for(tt))
    return VCFResult(r.line, nodes=r.nodes, complete=r.complete, aborted=r.aborted, depth=r.depth)


def _vcf_in(ctx: _Ctx, node_limit: int, deadline: Optional[float],
            max_depth: int = 40, tt: Optional[Dict[int, int]] = None) -> VCFResult:
    """:func:`vcf_search` on ``ctx.board`` reusing the caller's ``ctx`` (its window scans are
    kept between calls at the same stones: :meth:`_Ctx.windows`).

    ``tt``: a transposition table shared by the caller's VCF searches (by ``Board.hash``, which
    includes the side to move: the attacker of each entry). An entry says "no VCF within that many
    fours" (or none at all) for the position, whatever search stored it: a node's candidate fours
    are a superset of the fours on the board at any root (the root's four-windows plus those each
    attacker stone of the path opens) and its defender five-points are complete, so what a node
    proves does not depend on the root it was reached from. A VCT's VCF searches overlap heavily
    (neighbouring nodes, the deeper passes of its iterative deepening)."""
    t0 = time.perf_counter()
    if ctx.board.winner is not None:
        return VCFResult(None, complete=True)
    if native.serves(ctx.board):
        res = _native_vcf(ctx.board, node_limit, deadline, max_depth, tt)
    else:
        res = _VCF(ctx.board, node_limit, deadline, ctx, tt).run(max_depth)
    res.elapsed_s = time.perf_counter() - t0
    return res


def find_vcf(board: Board, max_depth: int = 40, node_limit: int = 20000,
             deadline: Optional[float] = None) -> Optional[List[int]]:
    """A victory by continuous fours for the side to move, or None (none found within limits).

    The line alternates attacker and defender moves, starting and ending with the attacker:
    ``[a1, r1, a2, r2, ..., ak]``. Every ``a_i`` before the last makes a four; ``r_i`` is the
    defender's forced reply (its only legal move that does not lose at once; under CARO the first
    of several proved replies). The last attacker move makes five, except in one renju case: when
    White's four can only be blocked on a point forbidden to Black, the line ends with that four.
    When the attacker's four is unblockable (two five-points), the line shows the defender taking
    one five-point and the attacker completing the other. ``[m]`` alone means ``m`` wins at once.

    The attacker must answer a four of the defender (a five-point the defender already has, or one
    made by a forced reply) with a four on that square; otherwise the line fails. Renju: Black
    never plays a forbidden point; a Black defender cannot block on one. Limits as in
    :func:`vcf_search` (the shortest line in number of fours is found first).
    """
    return vcf_search(board, max_depth, node_limit, deadline).line


def is_vcf_line(board: Board, line: Sequence[int], strict: bool = False) -> bool:
    """Check a :func:`find_vcf` line by replaying it on ``board`` (restored afterwards): every
    attacker move but the last makes a four whose single legal block is the next move; the last
    move makes five (or is a renju White four that Black may only block on forbidden points).
    A True answer proves the win under FREESTYLE, STANDARD and RENJU. Under CARO a four may have
    several blocks (the five-point, or the far end of the row); the line only shows one of them,
    so True proves the win only with ``strict=True``, which also requires every block shown to
    be the defender's only one."""
    if not line or len(line) % 2 == 0 or board.winner is not None:
        return False
    ctx = _Ctx(board)
    att = board.side_to_move
    dfn = opponent(att)
    pushed = 0
    try:
        for k, m in enumerate(line):
            if not board.is_empty(m):
                return False
            if k % 2 == 0:
                if ctx.renju and att == BLACK and board.makes_five(m, att) is False \
                        and ctx.forbidden(m):
                    return False
                win = board.push(m)
                pushed += 1
                if k == len(line) - 1:
                    if win:
                        return True
                    if ctx.renju and dfn == BLACK and not _five_points(ctx, dfn):
                        F = _five_points(ctx, att)
                        return bool(F) and all(ctx.forbidden(f) for f in F)
                    return False
                if win:
                    return False
                if _five_points(ctx, dfn):
                    return False        # the defender would win first
                F = _five_points(ctx, att)
                if not F:
                    return False        # not a four
                blocks = _blocks(ctx, F, att)
                if ctx.renju and dfn == BLACK:
                    blocks = [b for b in blocks if not ctx.forbidden(b)]
                nxt = line[k + 1]
                if not blocks:
                    # unstoppable: any legal reply, then the five (checked as the last move)
                    if k + 2 != len(line) - 1:
                        return False
                    if ctx.renju and dfn == BLACK and ctx.forbidden(nxt):
                        return False
                elif nxt not in blocks or (strict and len(blocks) > 1):
                    return False
            else:
                if board.push(m):
                    return False
                pushed += 1
        return False
    finally:
        for _ in range(pushed):
            board.pop()


# ---------------------------------------------------------------------------------------------
# VCF defence

def _relevant(ctx: _Ctx, line: Iterable[int]) -> Set[int]:
    """Empty squares within n steps, along the four lines, of any square of ``line``."""
    buf, pad, geo = ctx.buf, ctx.pad, ctx.geo
    out: Set[int] = set()
    for m in line:
        for q in geo.near(m):
            if buf[pad[q]] == EMPTY:
                out.add(q)
    return out


def _reply_zone(ctx: _Ctx, line: Sequence[int], dfn: int) -> Set[int]:
    """The squares where a ``dfn`` stone can break the VCF ``line`` (attacker moves at even
    indices, the defender's forced blocks at odd ones; found from this position as if the defender
    passed). Freestyle and exact five only. A defender stone breaks a VCF only by occupying one of
    its squares (every empty square of a four's window is a later attacker move or the five-point,
    so all lie on the line), by making a four itself (the caller adds the defender's fours) or by
    turning a forced block into a counter-four: the empty squares of the n-windows through a
    block that hold no attacker stone and, counting the line's blocks as defender stones, at least
    n - 2 defender stones. Everything else leaves the line winning, so a VCT search may skip it (a
    subset of :func:`_relevant`'s squares)."""
    buf, pad, geo, n = ctx.buf, ctx.pad, ctx.geo, ctx.n
    out: Set[int] = {m for m in line if buf[pad[m]] == EMPTY}
    blocks = set(line[1::2])
    att = opponent(dfn)
    for r in blocks:
        for d in range(4):
            lo, hi, step, pre, post = geo.seg[d][r]
            cells = pre + buf[lo:hi:step] + post
            fd = geo.fd[d]
            own = [c == dfn or (c == EMPTY and r + (i - n) * fd in blocks)
                   for i, c in enumerate(cells)]
            for a in range(1, n + 1):           # the windows [a, a + n) through the centre n
                win = cells[a:a + n]
                if att in win or WALL in win or sum(own[a:a + n]) < n - 2:
                    continue
                for i in range(a, a + n):
                    if cells[i] == EMPTY and not own[i]:
                        out.add(r + (i - n) * fd)
    return out


def find_vcf_defences(board: Board, threat_line: Optional[Sequence[int]] = None,
                      node_limit: int = 5000, deadline: Optional[float] = None,
                      max_depth: int = 40) -> Optional[List[int]]:
    """Moves of the side to move after which the opponent has no VCF any more.

    ``threat_line``: the opponent's VCF from this position as if we passed (searched here when
    not given). Returns None when the opponent has no VCF (nothing to defend), otherwise the
    sorted list of defending moves -- empty when nothing stops it. The list includes our own
    five-points and every own four that leaves the opponent without a VCF (it must answer the four
    and its answer does not continue its attack: the four gains a tempo).

    Candidates: the empty squares within n steps (on the four lines) of the squares of the threat
    line -- a stone anywhere else can neither occupy, block, lengthen (exact five, caro ends) nor
    counter (a defender four made with a forced reply) any step of it -- plus our fours and fives.
    Each is verified with :func:`find_vcf` for the opponent (``node_limit`` nodes each, so "no VCF"
    means none found within that budget). Under FREESTYLE/STANDARD a refuted candidate's new
    threat line, when it also wins without the candidate (checked by replay), narrows the remaining
    candidates to its own neighbourhood. When ``deadline`` (absolute ``perf_counter()`` time)
    passes, the candidates not yet verified are returned as defences, unproved. Renju: a Black
    defender's forbidden points are never returned.
    """
    return _defences(board, threat_line, node_limit, deadline, max_depth)[0]


def _final_threats(ctx: _Ctx, line: Sequence[int]) -> List[int]:
    """Renju: when the opponent's ``line`` (the side to move's opponent attacks) ends with a four
    that Black may only block on forbidden points, those points -- our stones near them can make
    them allowed. Else []."""
    board = ctx.board
    if not ctx.renju or not line:
        return []
    board.pass_turn()
    pushed = 0
    try:
        won = False
        for m in line:
            if board[m] != EMPTY:
                return []
            won = board.push(m)
            pushed += 1
        return [] if won else _five_points(ctx, opponent(board.side_to_move))
    finally:
        for _ in range(pushed):
            board.pop()
        board.pass_turn()


def _defences(board: Board, threat_line: Optional[Sequence[int]], node_limit: int,
              deadline: Optional[float], max_depth: int
              ) -> Tuple[Optional[List[int]], int, bool]:
    """:func:`find_vcf_defences`, the number of VCF nodes it searched, and whether a limit cut
    it short (some search aborted, or candidates returned unverified)."""
    if board.winner is not None:
        return None, 0, False
    nodes = 0
    aborted = False
    ctx = _Ctx(board)
    me = board.side_to_move
    if threat_line is None:
        board.pass_turn()
        try:
            res = vcf_search(board, max_depth, node_limit * 4, deadline)
        finally:
            board.pass_turn()
        nodes += res.nodes
        if res.line is None:
            return None, nodes, res.aborted
        threat_line = res.line
    threat_line = list(threat_line)
    rel = _relevant(ctx, threat_line + _final_threats(ctx, threat_line))
    counter = set(_five_points(ctx, me)) | {f.move for f in _four_moves(ctx, me, False)}
    order = [m for m in threat_line if m in rel]
    order += sorted(rel - set(order))
    order += sorted(counter - rel)
    prune = ctx.rule in (Rule.FREESTYLE, Rule.STANDARD)
    known: List[List[int]] = [threat_line]
    me_forbid = ctx.renju and me == BLACK
    defences: List[int] = []
    tested: Set[int] = set()
    for idx, s in enumerate(order):
        if s in tested:
            continue
        tested.add(s)
        if s not in rel and s not in counter:
            continue                    # pruned by a later threat line
        if deadline is not None and time.perf_counter() > deadline:
            rest = [q for q in order[idx:] if q in rel or q in counter]
            defences.extend(q for q in rest if not (me_forbid and ctx.forbidden(q)))
            aborted = True
            break
        if me_forbid and ctx.forbidden(s):
            continue
        if board.push(s):
            board.pop()
            defences.append(s)          # we win at once
            continue
        try:
            # cheap refutation first: one of the threat lines seen so far still wins
            if any(is_vcf_line(board, k, strict=True) for k in known[-3:]):
                continue
            res = vcf_search(board, max_depth, node_limit, deadline)
        finally:
            board.pop()
        nodes += res.nodes
        if res.line is None:
            defences.append(s)
            aborted = aborted or res.aborted
            continue
        known.append(res.line)
        if prune and s not in counter:
            board.pass_turn()
            try:
                valid = is_vcf_line(board, res.line)
            finally:
                board.pass_turn()
            if valid:
                rel &= _relevant(ctx, res.line)
    return sorted(set(defences)), nodes, aborted


# ---------------------------------------------------------------------------------------------
# root summary

@dataclass
class ThreatInfo:
    """The tactical situation for the side to move, from :func:`analyse`.

    ``kind``:
      ``"over"``   the game is already decided (``moves`` empty).
      ``"win"``    ``moves`` are the squares that make five now.
      ``"vcf"``    ``line`` is a forced win by continuous fours (``moves == [line[0]]``).
      ``"block"``  the opponent has one five-point (or, caro, rows we can stop): ``moves`` are the
                   only moves that do not lose at once.
      ``"defend"`` the opponent threatens a VCF (an open three, a four-three, ...; ``threat``
                   is its line as if we passed): ``moves`` are the moves that stop it, including
                   our own fours that gain a tempo. A search should only consider these.
      ``"lost"``   nothing stops the opponent (two five-points, or a VCF with no defence); ``moves``
                   are the least bad candidates (a five-point to block, the threat's first move),
                   possibly empty.
      ``"none"``   no immediate tactics; ``moves`` empty (search freely).
    ``nodes``: VCF nodes spent; ``elapsed_s``: seconds. ``aborted``: a node limit or the
    deadline cut a search short, so a "no VCF" (ours or the opponent's) or a verified defence may
    be wrong -- the move sets stay safe supersets where they can (unverified defences are kept).
    """

    kind: str
    moves: List[int] = field(default_factory=list)
    line: List[int] = field(default_factory=list)
    threat: List[int] = field(default_factory=list)
    nodes: int = 0
    elapsed_s: float = 0.0
    aborted: bool = False

    @property
    def forced(self) -> bool:
        """True when the move set is a hard restriction (``win``, ``vcf``, ``block``, ``defend``)."""
        return self.kind in ("win", "vcf", "block", "defend")


def analyse(board: Board, deadline: Optional[float] = None, node_limit: int = 20000,
            defend: bool = True) -> ThreatInfo:
    """The tactical situation for the side to move, checked in this order: a five now (``win``);
    the opponent's five-point to block (``block``, or ``lost`` when it has two); our VCF
    (``vcf``); the opponent's VCF as if we passed -- an open three, a four-three, any forcing
    win -- and the moves that stop it (``defend``, or ``lost`` when none does); else ``none``.
    See :class:`ThreatInfo`.

    ``deadline``: absolute :func:`time.perf_counter` time for all the searches together;
    ``node_limit``: per VCF search (the defence checks use a quarter of it each). With
    ``defend=False`` the ``defend`` move set is not verified: it is every empty square within n
    steps of the threat line plus our fours (a superset of the defences, much cheaper). Never
    proposes a renju-forbidden move for Black. The board is left unchanged.
    """
    t0 = time.perf_counter()
    nodes = 0
    aborted = False

    def done(kind: str, moves: Sequence[int] = (), line: Sequence[int] = (),
             threat: Sequence[int] = ()) -> ThreatInfo:
        return ThreatInfo(kind, list(moves), list(line), list(threat), nodes,
                          time.perf_counter() - t0, aborted)

    if board.winner is not None or board.is_full():
        return done("over")
    ctx = _Ctx(board)
    me = board.side_to_move
    opp = opponent(me)
    win = _five_points(ctx, me)
    if win:
        return done("win", win, [win[0]])
    me_forbid = ctx.renju and me == BLACK
    threats = _five_points(ctx, opp)
    if threats:
        blocks = _blocks(ctx, threats, opp)
        if me_forbid:
            blocks = [b for b in blocks if not ctx.forbidden(b)]
        if not blocks:
            fallback = [t for t in threats if not (me_forbid and ctx.forbidden(t))]
            return done("lost", fallback[:1], threat=threats[:1])
        res = vcf_search(board, node_limit=node_limit, deadline=deadline)
        nodes += res.nodes
        aborted = res.aborted
        if res.line:
            return done("vcf", res.line[:1], res.line)
        return done("block", blocks, threat=threats[:1])
    res = vcf_search(board, node_limit=node_limit, deadline=deadline)
    nodes += res.nodes
    aborted = res.aborted
    if res.line:
        return done("vcf", res.line[:1], res.line)
    board.pass_turn()
    try:
        res = vcf_search(board, node_limit=node_limit, deadline=deadline)
    finally:
        board.pass_turn()
    nodes += res.nodes
    aborted = aborted or res.aborted
    if not res.line:
        return done("none")
    threat = res.line
    if not defend:
        cand = _relevant(ctx, threat) | {f.move for f in _four_moves(ctx, me)}
        cand |= set(_five_points(ctx, me))
        if me_forbid:
            cand = {c for c in cand if not ctx.forbidden(c)}
        return done("defend", sorted(cand), threat=threat)
    defs, n, cut = _defences(board, threat, max(1000, node_limit // 4), deadline, 40)
    nodes += n
    aborted = aborted or cut
    if not defs:
        first = [threat[0]] if not (me_forbid and ctx.forbidden(threat[0])) else []
        return done("lost", first, threat=threat)
    return done("defend", defs, threat=threat)
