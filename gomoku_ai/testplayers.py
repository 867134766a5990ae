"""Diagnostic players for testing the brain's timing (selected with ``PYGOMOKU_PLAYER``; never in play).

* ``sleepy``: picks its move at once (the default player with a zero time limit), then waits until the soft
  deadline (or the hard one, or forever when there is neither) or until the stop event is set, and returns.
  It behaves like a search that uses its whole budget, so tests can check YXSTOP, END and INFO while thinking,
  and measure how far past the deadline the move arrives.
* ``stuck``: ignores deadlines and the stop event and sleeps ``PYGOMOKU_STUCK_S`` seconds (default 30) before
  returning; tests use it to check the brain's watchdog (a fallback move at the hard deadline, and never a
  second move later).

* :class:`GateEvaluator`: the heuristic evaluator, except that every evaluation waits until the test
  opens its gate; tests of the HTTP service use it to hold a search while they send more requests.

The players have the :class:`gomoku_ai.player.Thinker` interface: ``think(board, limit, stop, on_info)``,
``new_game()``, ``memory_limit_bytes``, ``thread_num``. :func:`gomoku_ai.shipped.make_player` selects them;
this module was ``protocol/testplayers.py`` (which still re-exports them).
"""
from __future__ import annotations

import os
import threading
import time
from typing import Optional, Sequence, Tuple

import numpy as np

from .board import Board
from .evaluator import HeuristicEvaluator
from .player import InfoCallback, Limit, Player, SearchInfo, Source, Thinker


def _default_player() -> Thinker:
    return Player()


class SleepyPlayer:
    """Thinks until its soft deadline or the stop event (see the module docstring)."""

    name = "sleepy"

    def __init__(self, inner: Optional[Thinker] = None) -> None:
        self.inner = inner if inner is not None else _default_player()
        self.memory_limit_bytes: Optional[int] = None
        self.thread_num = 1

    def new_game(self) -> None:
        self.inner.new_game()

    def think(self, board: Board, limit: Limit, stop: Optional[threading.Event] = None,
              on_info: Optional[InfoCallback] = None) -> SearchInfo:
        t0 = time.perf_counter()
        info = self.inner.think(board, Limit(soft_ms=0.0, hard_ms=0.0), None, None)
        target = limit.soft_ms if limit.soft_ms is not None else limit.hard_ms
        end = None if target is None else t0 + target / 1000.0
        ev = stop if stop is not None else threading.Event()
        last_info = t0
        while True:
            now = time.perf_counter()
            if ev.is_set() or (end is not None and now >= end):
                break
            if on_info is not None and now - last_info >= 0.1:
                last_info = now
                info.elapsed_ms = (now - t0) * 1000.0
                on_info(info)
            ev.wait(0.05 if end is None else max(0.0, min(0.05, end - now)))
        info.elapsed_ms = (time.perf_counter() - t0) * 1000.0
        info.source = Source.SLEEPY
        return info


class StuckPlayer:
    """Ignores every limit and the stop event (see the module docstring)."""

    name = "stuck"

    def __init__(self, seconds: Optional[float] = None, inner: Optional[Thinker] = None) -> None:
        self.seconds = float(os.environ.get("PYGOMOKU_STUCK_S", "30")) if seconds is None else seconds
        self.inner = inner if inner is not None else _default_player()
        self.memory_limit_bytes: Optional[int] = None
        self.thread_num = 1

    def new_game(self) -> None:
        self.inner.new_game()

    def think(self, board: Board, limit: Limit, stop: Optional[threading.Event] = None,
              on_info: Optional[InfoCallback] = None) -> SearchInfo:
        info = self.inner.think(board, Limit(soft_ms=0.0, hard_ms=0.0), None, None)
        time.sleep(self.seconds)
        info.source = Source.STUCK
        return info


class GateEvaluator(HeuristicEvaluator):
    """The heuristic evaluator, but every :meth:`evaluate` first sets :attr:`entered` and waits
    for :attr:`gate` (at most ``wait_s`` seconds, so a failing test cannot hang)."""

    def __init__(self, wait_s: float = 10.0) -> None:
        super().__init__()
        self.entered = threading.Event()
        self.gate = threading.Event()
        self.wait_s = wait_s

    def evaluate(self, items: Sequence[object], shape: Tuple[int, int]
                 ) -> Tuple[np.ndarray, np.ndarray]:
        self.entered.set()
        self.gate.wait(self.wait_s)
        return super().evaluate(items, shape)
