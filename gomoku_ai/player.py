"""The one object that turns (position, limits) into a move.

The brain (``protocol.brain``), the terminal UI, the tournament runner and the HTTP service all call
:meth:`Player.think`, so there is exactly one way the engine chooses a move.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Callable, List, Optional

from .board import Board


@dataclass(frozen=True)
class Limit:
    """How long / how far to search. Every field is optional; the search stops at the first one hit.

    ``soft_ms``: the search should not start new work after this (ms from the start of the call).
    ``hard_ms``: the move must be returned by then (ms from the start of the call).
    ``visits``: maximum number of MCTS simulations (Gomocup ``max_node``).
    ``depth``: maximum search depth in plies where the search has one (Gomocup ``max_depth``).
    """

    soft_ms: Optional[float] = None
    hard_ms: Optional[float] = None
    visits: Optional[int] = None
    depth: Optional[int] = None


@dataclass
class SearchInfo:
    """What a search found, from the point of view of the side to move at the root.

    ``value`` is in [-1, 1] (1 = the side to move wins); ``winrate`` = (value + 1) / 2.
    ``pv`` is the principal variation starting with ``move`` (flat indices). ``elapsed_ms`` is the wall
    time of the call. ``proven`` is +1 / -1 when the result is proved (win / loss), else 0.
    """

    move: int
    value: float = 0.0
    visits: int = 0
    nodes_per_s: float = 0.0
    depth: int = 0
    pv: List[int] = field(default_factory=list)
    elapsed_ms: float = 0.0
    proven: int = 0
    source: str = ""  # which part decided: "win1", "block4", "vcf", "mcts", ...

    @property
    def winrate(self) -> float:
        return (self.value + 1.0) / 2.0


InfoCallback = Callable[[SearchInfo], None]


class NoMoveError(RuntimeError):
    """The position has no legal move (full board, or the game is already over)."""


class Player:
    """Chooses moves. Thread-safe to *stop* (set ``stop``) from another thread while it thinks.

    This is the interface every front end uses:

    - :meth:`think` (board, limit, stop event, info callback) -> :class:`SearchInfo`; the board is
      left as it was given; the move is always legal (empty, and not renju-forbidden for Black).
    - :meth:`new_game` forgets any state kept between moves (e.g. a reused search tree).
    - :attr:`memory_limit_bytes` caps the memory the player may use for its search tree.
    """

    name = "pygomoku"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.memory_limit_bytes: Optional[int] = None

    def new_game(self) -> None:
        """Forget state kept between moves."""

    def think(self, board: Board, limit: Limit, stop: Optional[threading.Event] = None,
              on_info: Optional[InfoCallback] = None) -> SearchInfo:
        """Choose a move for the side to move. Raises NoMoveError if there is none."""
        t0 = time.perf_counter()
        move, source = _simple_choice(board)
        info = SearchInfo(move=move, pv=[move], source=source,
                          elapsed_ms=(time.perf_counter() - t0) * 1000.0)
        if on_info is not None:
            on_info(info)
        return info


def _simple_choice(board: Board) -> "tuple[int, str]":
    """Placeholder until MCTS lands: win in one, block a five, else the empty square nearest to the
    stones' centre of mass."""
    if board.winner is not None:
        raise NoMoveError("the game is already over")
    empties = board.empty_squares()
    if not empties:
        raise NoMoveError("the board is full")
    me = board.side_to_move
    for m in empties:
        if board.makes_five(m, me):
            return m, "win1"
    for m in empties:
        if board.makes_five(m, 3 - me):
            return m, "block5"
    if not board.moves:
        return board.index(board.width // 2, board.height // 2), "center"
    xs = [board.xy(m) for m in board.moves]
    cx = sum(x for x, _ in xs) / len(xs)
    cy = sum(y for _, y in xs) / len(xs)
    best = min(empties, key=lambda m: (board.xy(m)[0] - cx) ** 2 + (board.xy(m)[1] - cy) ** 2)
    return best, "heuristic"
