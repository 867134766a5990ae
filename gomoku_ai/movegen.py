"""Legality and move generation: the one place that says where the side to move may play.

A move ``m`` (a flat index, ``m = y * width + x``) is **legal** for the side to move when it is on the
board, the square is empty (not a stone, not a wall) and -- only when ``board.rule`` is
:attr:`Rule.RENJU` and **Black** is to move -- it is not a forbidden point (an overline, a
double-four or a double-three; :mod:`gomoku_ai.renju` decides, exactly). White and every other rule
are never restricted. Whether the game is already over is not part of legality: ask
:meth:`Board.outcome` for that.

Every function here answers for **the side to move** of ``board`` unless a ``color`` argument says
otherwise, and leaves the board unchanged. Lists of squares are ascending flat indices unless they
are filters of a caller's list (then they keep the caller's order); masks are numpy ``bool``
arrays, flat ``(width * height,)`` or ``(height, width)`` as each function says.

Fast paths: the renju detector runs only under renju with Black to move, and then only on the few
squares that can be forbidden (:func:`gomoku_ai.renju.forbidden_points` prefilters them). A detector
error is never read as "legal": it propagates to the caller.
"""
from __future__ import annotations

import enum
import operator
from typing import Iterable, List, Optional

import numpy as np

from . import renju
from .board import Board
from .rules import BLACK, EMPTY, WHITE, Rule

__all__ = ["ForbiddenKind", "is_legal", "legal_moves", "legal_mask", "restricts", "is_forbidden",
           "forbidden_kind", "forbidden_points", "without_forbidden", "near_mask", "near_empty"]


class ForbiddenKind(str, enum.Enum):
    """Why a renju point is forbidden for Black (the values are :mod:`gomoku_ai.renju`'s names)."""

    OVERLINE = renju.OVERLINE
    DOUBLE_FOUR = renju.DOUBLE_FOUR
    DOUBLE_THREE = renju.DOUBLE_THREE

    @property
    def label(self) -> str:
        """Human form for messages: ``overline``, ``double-four``, ``double-three``."""
        return self.value.replace("_", "-")


def restricts(board: Board, color: Optional[int] = None) -> bool:
    """Can ``color`` (default: the side to move) have forbidden points on ``board``? True only under
    renju for Black. O(1); lets a hot loop skip the detector altogether."""
    c = board.side_to_move if color is None else color
    return board.rule is Rule.RENJU and c == BLACK


def is_legal(board: Board, m: int) -> bool:
    """May the side to move play the flat index ``m``? False when ``m`` is off the board, the square
    holds a stone or a wall, or (renju, Black to move) it is a forbidden point. The game being over
    is not checked. A detector error propagates."""
    if not board.is_empty(m):
        return False
    return not (restricts(board) and renju.is_forbidden(board, m, BLACK))


def legal_moves(board: Board) -> List[int]:
    """Every legal move of the side to move, ascending flat indices (the empty squares less the
    renju forbidden points when Black is to move under renju)."""
    empty = board.empty_squares()
    bad = forbidden_points(board)
    if bad:
        drop = set(bad)
        empty = [m for m in empty if m not in drop]
    return empty


def legal_mask(board: Board) -> np.ndarray:
    """Boolean array of shape ``(width * height,)``: True on the legal moves of the side to move
    (:func:`legal_moves`). A new array; the caller may write to it."""
    mask = (board.cells == EMPTY).reshape(-1)
    bad = forbidden_points(board)
    if bad:
        mask[bad] = False
    return mask


def is_forbidden(board: Board, m: int, color: Optional[int] = None) -> bool:
    """Is the empty square ``m`` a forbidden point for ``color`` (default: the side to move)? Only
    ever True under renju for Black. Raises ValueError when ``m`` is off the board or not empty.

    (Unlike :func:`gomoku_ai.renju.is_forbidden`, which applies the renju definitions to any
    board, this respects ``board.rule``.)"""
    if board.rule is Rule.RENJU and (board.side_to_move if color is None else color) == BLACK:
        return renju.is_forbidden(board, m, BLACK)      # (checks ``m`` itself: the hot path)
    if not board.is_empty(m):
        raise ValueError(f"square {m} is off the {board.width}x{board.height} board or not empty")
    return False


def forbidden_kind(board: Board, m: int) -> Optional[ForbiddenKind]:
    """Why the side to move may not play the empty square ``m``, or None when it may (or when the
    rule or the colour has no forbidden points). A renju five is never forbidden. Raises
    ValueError when ``m`` is off the board or not empty."""
    if not restricts(board):
        if not board.is_empty(m):
            raise ValueError(f"square {m} is off the {board.width}x{board.height} board or not "
                             "empty")
        return None
    kind = renju.classify(board, m)                     # (raises ValueError on a bad ``m``)
    return ForbiddenKind(kind) if kind in renju.FORBIDDEN_KINDS else None


def forbidden_points(board: Board) -> List[int]:
    """Ascending flat indices of the side to move's forbidden points: empty unless the rule is
    renju and Black is to move."""
    if not restricts(board):
        return []
    return renju.forbidden_points(board, BLACK)


def without_forbidden(board: Board, moves: Iterable[int]) -> List[int]:
    """A new list of ``moves`` (empty squares) less the side to move's forbidden points, in the
    given order. Fast path: when nothing can be forbidden (:func:`restricts` is False) the squares
    are copied unchecked; otherwise a square that is off the board or not empty raises
    ValueError."""
    if not restricts(board):
        return list(moves)
    return [m for m in moves if not renju.is_forbidden(board, m, BLACK)]


def _radius(radius: int) -> int:
    r = operator.index(radius)
    if r < 1:
        raise ValueError(f"radius must be at least 1 (squares, Chebyshev distance), got {radius!r}")
    return r


def near_mask(board: Board, radius: int) -> np.ndarray:
    """Boolean array of shape ``(height, width)``: True on every square (occupied or not) within
    Chebyshev distance ``radius`` (squares, >= 1) of a black or white stone; walls are not stones.
    All False on a board without stones. Raises ValueError for ``radius < 1``."""
    r = _radius(radius)
    h, w = board.height, board.width
    stones = (board.cells == BLACK) | (board.cells == WHITE)
    near = np.zeros((h + 2 * r, w + 2 * r), bool)
    for dy in range(2 * r + 1):
        for dx in range(2 * r + 1):
            near[dy:dy + h, dx:dx + w] |= stones
    return near[r:r + h, r:r + w].copy()


def near_empty(board: Board, radius: int) -> List[int]:
    """Ascending flat indices of the empty squares within Chebyshev distance ``radius`` (squares,
    >= 1) of a black or white stone; ``[]`` on a board without stones. Emptiness only: renju
    forbidden points are *not* removed (see :func:`without_forbidden`). Raises ValueError for
    ``radius < 1``."""
    near = near_mask(board, radius)
    return np.flatnonzero(near & (board.cells == EMPTY)).tolist()
