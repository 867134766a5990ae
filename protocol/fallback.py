"""Quick moves that need no search: the brain's safety net and its Swap2 opening choices.

:func:`quick_move` answers within a few milliseconds on any board: win in one, block the opponent's five, else a
square that lengthens our lines or cuts the opponent's, near the stones. The brain plays it when the player
overruns its hard deadline, raises, or returns an illegal move, so that a move is always sent in time.

The Swap2 helpers are deliberately simple (a static count of open five-square windows); they are legal and
sane, not strong.
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from gomoku_ai import movegen
from gomoku_ai.board import Board
from gomoku_ai.rules import BLACK, EMPTY, WHITE, Rule, opponent

Point = Tuple[int, int]


def quick_move(board: Board) -> Optional[int]:
    """A legal move for the side to move, chosen in a few ms; None when no empty square is left.

    The renju forbidden points come from :func:`gomoku_ai.movegen.forbidden_points`; an error of
    the detector propagates (the brain reports it) rather than let a forbidden move through."""
    me = board.side_to_move
    opp = opponent(me)
    forbidden = set(movegen.forbidden_points(board))
    near = [m for m in movegen.near_empty(board, 2) if m not in forbidden]
    for m in near:
        if board.makes_five(m, me):
            return m
    for m in near:
        if board.makes_five(m, opp):
            return m
    if near:
        def score(m: int) -> float:
            s = 0.0
            for d in range(4):
                mine = board.run(m, me, d)[0]
                theirs = board.run(m, opp, d)[0]
                s += mine * mine + 0.8 * theirs * theirs
            return s
        return max(near, key=score)
    cx, cy = (board.width - 1) / 2.0, (board.height - 1) / 2.0
    best = None
    best_d = 0.0
    for m in board.empty_squares():
        if m in forbidden:
            continue
        x, y = board.xy(m)
        dd = (x - cx) ** 2 + (y - cy) ** 2
        if best is None or dd < best_d:
            best, best_d = m, dd
    if best is None:
        empties = board.empty_squares()
        return empties[0] if empties else None
    return best


# ------------------------------------------------------------------------------------------ Swap2
def swap2_opening(width: int, height: int) -> List[Point]:
    """Three stones (black, white, black) near the centre for SWAP2BOARD with no stones: a loose shape (the
    two black stones share no line) so that, by :func:`swap2_decision`'s own measure, Black is not ahead."""
    cx, cy = width // 2, height // 2
    pts = [(cx, cy), (cx + 1, cy), (cx + 1, cy + 2)]  # the black stones a knight's move apart: not in line
    if any(not (0 <= x < width and 0 <= y < height) for x, y in pts):
        pts = [(cx, cy), (cx - 1, cy), (cx - 1, cy - 2)]
    return pts


def window_score(board: Board, color: int, min_stones: int = 1) -> float:
    """Sum over every five-square window on the board that holds no opponent stone or wall and at least
    ``min_stones`` stones of ``color`` of ``4 ** (stones of color in it)``."""
    cells = board.cells
    w, h = board.width, board.height
    total = 0.0
    for dx, dy in ((1, 0), (0, 1), (1, 1), (1, -1)):
        for y in range(h):
            for x in range(w):
                ex, ey = x + 4 * dx, y + 4 * dy
                if not (0 <= ex < w and 0 <= ey < h):
                    continue
                k = 0
                for i in range(5):
                    v = int(cells[y + i * dy, x + i * dx])
                    if v == color:
                        k += 1
                    elif v != EMPTY:
                        k = -1
                        break
                if k >= max(1, min_stones):
                    total += 4.0 ** k
    return total


def board_from_sequence(width: int, height: int, points: Sequence[Point], rule: Rule) -> Board:
    """A board with ``points`` played alternately from Black; raises IllegalMoveError / BoardSizeError."""
    b = Board(width, height, rule)
    for x, y in points:
        b.play(b.index(x, y))
    return b


def swap2_decision(board: Board) -> Optional[int]:
    """After 3 or 5 opening stones (White to move): None = SWAP (take Black), else White's move.

    Only windows with two or more stones of one colour count (connected stones with room to grow). Black is
    judged better, and we SWAP, when its score is at least 48 (e.g. two black stones at most two squares apart
    on an open line) and more than twice White's (White's tempo is worth about that). Crude, not tuned.
    """
    sb = window_score(board, BLACK, min_stones=2)
    sw = window_score(board, WHITE, min_stones=2)
    if sb >= 48.0 and sb > 2.0 * sw:
        return None
    return quick_move(board)
