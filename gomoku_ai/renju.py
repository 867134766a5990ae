"""Renju forbidden-move detection for Black (overline, double-four, double-three).

Definitions (RIF renju rules, as implemented by renju programs such as RenLib, Yixin and Rapfi):

* **five** -- exactly five black stones in an unbroken row. A Black move that makes a five wins and
  is *never* forbidden, whatever else it makes in the other lines.
* **overline** -- six or more black stones in an unbroken row. Forbidden.
* **four** -- a row of five squares holding four black stones and one empty square, such that Black
  playing the empty square makes exactly five (not an overline). The fours made by a move are the
  fours that contain it; two fours are distinct when their four stones differ. A *straight four*
  (``.XXXX.`` with both ends making exactly five) is one four with two completion points, while
  ``X.XXX.X`` (played in the middle) and ``XX.XX.XX`` are *two* fours in one line.
* **three** (an *open* or *real* three) -- a line that Black can turn into a straight four by one
  more move that is itself not forbidden. The check is recursive: for every empty point ``e`` of
  the line such that a black stone on ``e`` makes a straight four containing the new stone, ``e``
  is tested as a Black move (with the new stone on the board, by this same definition); the line
  is a three when at least one such ``e`` is allowed. A line that holds a four is counted as a four,
  not as a three.
* **double-four** -- a move that makes two or more fours; **double-three** -- a move that makes two
  or more threes. Both are forbidden; a four-three is allowed.

Precedence (:func:`classify`): five, then overline, then double-four, then double-three.

Only the four lines through the tested point are examined, each within five squares of it: whether
a line is a five, an overline, how many fours it holds, and which points would make it a straight
four depend on those eleven squares alone, so the line analysis is tabulated (lazily, on the
pattern of those squares) and the board is only read along the lines. Trial stones are written to
``Board._buf`` and always removed again. The recursion only happens for candidate double-threes.

These functions evaluate the renju definitions whatever ``board.rule`` is; they assume five in a
row wins (``board.n == 5``). :func:`forbidden_points` and :func:`forbidden_mask` return nothing
unless the board plays :attr:`Rule.RENJU` and the colour asked about (the side to move by default)
is Black -- White is never restricted.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import numpy as np

from .board import Board
from .rules import BLACK, EMPTY, WALL, WHITE, Rule

__all__ = ["FIVE", "OVERLINE", "DOUBLE_FOUR", "DOUBLE_THREE", "OK", "FORBIDDEN_KINDS",
           "classify", "is_forbidden", "forbidden_points", "forbidden_mask"]

# classify() results
FIVE = "five"
OVERLINE = "overline"
DOUBLE_FOUR = "double_four"
DOUBLE_THREE = "double_three"
OK = "ok"
FORBIDDEN_KINDS = frozenset((OVERLINE, DOUBLE_FOUR, DOUBLE_THREE))

# internal status codes
_OK, _FIVE, _OVER, _D4, _D3 = 0, 1, 2, 3, 4
_NAMES = (OK, FIVE, OVERLINE, DOUBLE_FOUR, DOUBLE_THREE)

_R = 5                      # squares read on each side of the tested point
_W = 2 * _R + 1             # window length; the tested point is at index _R
_BLOCK = b"\x03"
_WHITE_TO_WALL = bytes.maketrans(bytes([WHITE]), bytes([WALL]))

# One line's analysis: (kind, fours, straight-four offsets). ``kind`` is _FIVE, _OVER or _OK;
# ``fours`` the number of distinct fours through the centre; the offsets (from the centre, in steps)
# are the empty points where a black stone makes a straight four containing the centre -- only
# given when the line holds no four.
_LineInfo = Tuple[int, int, Tuple[int, ...]]
_LINE_CACHE: Dict[bytes, _LineInfo] = {}


def _analyse(key: bytes) -> _LineInfo:
    """Analyse one line window (``_W`` cells, the centre black). Pure; used to fill the cache."""
    a = [c if c in (EMPTY, BLACK) else WALL for c in key]
    # the line ends at the first blocked square on each side; what lies beyond is irrelevant
    for i in range(_R - 1, -1, -1):
        if a[i] == WALL:
            for j in range(i):
                a[j] = WALL
            break
    for i in range(_R + 1, _W):
        if a[i] == WALL:
            for j in range(i + 1, _W):
                a[j] = WALL
            break

    def span(i: int) -> Tuple[int, int]:
        lo = i
        while lo > 0 and a[lo - 1] == BLACK:
            lo -= 1
        hi = i
        while hi < _W - 1 and a[hi + 1] == BLACK:
            hi += 1
        return lo, hi

    lo, hi = span(_R)
    n = hi - lo + 1
    if n == 5:
        return _FIVE, 0, ()
    if n >= 6:                      # a run reaching the window's edge is at least six long
        return _OVER, 0, ()

    def five_points() -> List[Tuple[int, int, int]]:
        """(point, lo, hi): empty points where black makes exactly five containing the centre."""
        out = []
        for e in range(1, _W - 1):
            if a[e] != EMPTY:
                continue
            a[e] = BLACK
            l2, h2 = span(e)
            a[e] = EMPTY
            if h2 - l2 == 4 and l2 <= _R <= h2:
                out.append((e, l2, h2))
        return out

    pts = five_points()
    # two completion points with the same four stones are one (straight) four; that happens
    # exactly when they are five apart, with the four stones between them
    stones = {frozenset(range(l2, h2 + 1)) - {e} for e, l2, h2 in pts}
    fours = len(stones)
    threes: List[int] = []
    if fours == 0:      # (a line with a four never also has such a point; skipping it is cheaper)
        for e in range(_R - 3, _R + 4):
            if a[e] != EMPTY:
                continue
            a[e] = BLACK
            l2, h2 = span(e)
            if (h2 - l2 == 3 and l2 <= _R <= h2 and a[l2 - 1] == EMPTY and a[h2 + 1] == EMPTY
                    and a[l2 - 2] != BLACK and a[h2 + 2] != BLACK):
                threes.append(e - _R)
            a[e] = EMPTY
    return _OK, fours, tuple(threes)


def _line(buf: bytearray, pi: int, step: int) -> _LineInfo:
    """Analysis of the line through padded index ``pi`` (a black stone there) along ``step``."""
    lo = pi - _R * step
    if lo >= 0:
        key = bytes(buf[lo:pi + (_R + 1) * step:step])
    else:
        k = pi // step
        key = _BLOCK * (_R - k) + bytes(buf[pi - k * step:pi + (_R + 1) * step:step])
    if len(key) < _W:
        key += _BLOCK * (_W - len(key))
    key = key.translate(_WHITE_TO_WALL)
    info = _LINE_CACHE.get(key)
    if info is None:
        info = _LINE_CACHE[key] = _analyse(key)
    return info


def _status(buf: bytearray, pi: int, dirs: Tuple[int, ...]) -> int:
    """Status code of a black move on the empty padded square ``pi``; ``buf`` is restored."""
    buf[pi] = BLACK
    try:
        over = False
        fours = 0
        cand: List[Tuple[int, Tuple[int, ...]]] = []
        for step in dirs:
            kind, nf, th = _line(buf, pi, step)
            if kind == _FIVE:
                return _FIVE
            if kind == _OVER:
                over = True
            fours += nf
            if th:
                cand.append((step, th))
        if over:
            return _OVER
        if fours >= 2:
            return _D4
        left = len(cand)
        if left < 2:
            return _OK
        threes = 0
        for step, th in cand:
            left -= 1
            for off in th:
                if _status(buf, pi + off * step, dirs) <= _FIVE:   # _OK or _FIVE: allowed
                    threes += 1
                    break
            if threes >= 2:
                return _D3
            if threes + left < 2:
                return _OK
        return _OK
    finally:
        buf[pi] = EMPTY


def classify(board: Board, m: int) -> str:
    """What a Black stone on the empty square ``m`` makes under the renju rules.

    Returns ``"five"`` (exactly five in some line: wins, never forbidden), ``"overline"``,
    ``"double_four"``, ``"double_three"`` (the three forbidden kinds, in this precedence) or
    ``"ok"``. Raises ValueError when ``m`` is off the board or occupied. The board is unchanged.
    """
    if not 0 <= m < board.size:
        raise ValueError(f"square {m} is off the {board.width}x{board.height} board")
    pi = board._pad[m]
    if board._buf[pi] != EMPTY:
        raise ValueError(f"square {board.move_name(m)} is occupied")
    return _NAMES[_status(board._buf, pi, board._dirs)]


def is_forbidden(board: Board, m: int, color: int = BLACK) -> bool:
    """True when ``color`` playing the empty square ``m`` is a renju forbidden move (an overline,
    double-four or double-three for Black; see :func:`classify`). Always False for White."""
    if color != BLACK:
        return False
    if not 0 <= m < board.size:
        raise ValueError(f"square {m} is off the {board.width}x{board.height} board")
    pi = board._pad[m]
    buf = board._buf
    if buf[pi] != EMPTY:
        raise ValueError(f"square {board.move_name(m)} is occupied")
    return _status(buf, pi, board._dirs) >= _OVER


def _candidates(board: Board) -> List[int]:
    """Empty squares that see at least four black stones within four squares along their lines
    (no white stone or wall between): every forbidden point does (a double-three needs two other
    stones in each of two lines, a double-four at least four others, an overline five)."""
    buf = board._buf
    p = board._p
    pad = board._pad
    count: Dict[int, int] = {}
    for m in np.flatnonzero(board.cells.reshape(-1) == BLACK).tolist():
        pi = pad[m]
        for step in board._dirs:
            for s in (step, -step):
                q = pi
                for _ in range(4):
                    q += s
                    c = buf[q]
                    if c == EMPTY:
                        count[q] = count.get(q, 0) + 1
                    elif c != BLACK:
                        break
    out = []
    for q, k in count.items():
        if k >= 4:
            r = q // p - 1
            out.append(r * board.width + (q - (r + 1) * p))
    out.sort()
    return out


def forbidden_points(board: Board, color: Optional[int] = None) -> List[int]:
    """Sorted flat indices of the squares where ``color`` (default: the side to move) may not play.

    Empty unless ``board.rule`` is RENJU and the colour is Black.
    """
    color = board.side_to_move if color is None else color
    if board.rule is not Rule.RENJU or color != BLACK:
        return []
    buf = board._buf
    pad = board._pad
    dirs = board._dirs
    return [m for m in _candidates(board) if _status(buf, pad[m], dirs) >= _OVER]


def forbidden_mask(board: Board, color: Optional[int] = None) -> np.ndarray:
    """Boolean array of shape ``(width * height,)``: True on the squares of
    :func:`forbidden_points` (all False for White or a non-renju board)."""
    mask = np.zeros(board.size, dtype=bool)
    pts = forbidden_points(board, color)
    if pts:
        mask[pts] = True
    return mask
