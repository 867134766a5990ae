"""Thinking with a deadline, a grace period and a fallback: how every front end runs a player's search.

A front end runs ``player.think`` on a worker thread so that it can stop it, bound it, and do without it
when it does not return in time. This module is that one piece, used by the brain
(:mod:`protocol.supervise`), the terminal UI (``tools/tui/engine.py``) and the tournament's in-process players
(``tools/tournament/players.py``); ``gomoku_ai`` never imports it (it may import :mod:`protocol.fallback`).

* :class:`ThinkJob`: one call of :meth:`gomoku_ai.player.Thinker.think` on a daemon thread, with its
  ``stop`` event. :meth:`ThinkJob.request_stop` sets the event and gives the player a grace period to return
  (the earliest end of grace of all requests counts); :meth:`ThinkJob.set_hard_deadline` is a stop request
  that fires by itself when the deadline passes. :meth:`ThinkJob.overran` says when the player has had its
  time, :meth:`ThinkJob.wake_at` when next to look, and :meth:`ThinkJob.wait` blocks until one or the other
  (the brain instead serves its command queue while it waits). ``best`` is the last
  :class:`~gomoku_ai.player.SearchInfo` the player reported, the best move so far.
* :func:`choose_answer`: the move to send: the player's when it is legal, else :func:`fallback_move` (an
  immediate win or forced block first, then the best move so far, then :func:`protocol.fallback.quick_move`).
* Deadlines are derived in one place, :mod:`gomoku_ai.timeman` (``move_deadlines`` for the Gomocup time
  controls on a board, ``movetime_deadlines`` for a fixed time per move within the clock,
  ``untimed_deadlines`` without a time control), which the brain, the tournament and the match layer use.

What each front end does when the player overruns:

* the brain answers a fallback move (:func:`choose_answer`) ``STOP_GRACE_MS`` after a stop request (YXSTOP,
  a preempting command, EOF) and :data:`gomoku_ai.timeman.WATCHDOG_GRACE_MS` after the hard deadline; the
  late result is dropped;
* the tournament gives the player its budget plus the tolerance as a hard deadline with no grace: at that
  point the stop event is set and the player loses on time;
* the terminal UI has no deadline: Ctrl-C sets the stop event and it waits for the player's best move.

All times are milliseconds on the :func:`gomoku_ai.timeman.monotonic_ms` clock: absolute times (``*_at``) on
that clock, durations (``*_ms``, ``grace``) in ms.
"""
from __future__ import annotations

import logging
import operator
import threading
import traceback
from dataclasses import dataclass
from typing import Callable, Literal, Optional

from gomoku_ai import movegen, timeman
from gomoku_ai.board import Board
from gomoku_ai.player import InfoCallback, Limit, SearchInfo, Thinker
from gomoku_ai.rules import opponent

from . import fallback

log = logging.getLogger("pygomoku.think")

MAX_WAIT_S = 3600.0   #: longest single wait (threading's TIMEOUT_MAX is ~49 days on Windows)
#: per-move time (soft and hard, ms) of a tournament player with no time control and no visit limit


def now_ms() -> float:
    """The clock of every deadline here (:func:`gomoku_ai.timeman.monotonic_ms`), in ms."""
    return timeman.monotonic_ms()


# ------------------------------------------------------------------------------------------ the job
class ThinkJob:
    """One ``player.think(board, limit, stop, on_info)`` call on a daemon worker thread.

    ``on_info``: called (on the worker thread) with each progress report; ``keep_best``: record the reports
    in ``best`` even without ``on_info`` (the player is given an ``on_info`` only when one of the two asks
    for it). ``on_done``: called on the worker thread once the call has returned or raised (``done`` is then
    True). ``name``: the thread's name.

    After the call: ``info`` is what it returned (unchecked: a player may return anything), or ``error`` and
    ``traceback`` (the last six frames, as text) what it raised. A job can be made, given stop requests and a
    hard deadline before :meth:`start`, or never started at all.
    """

    def __init__(self, on_info: Optional[InfoCallback] = None, *, keep_best: bool = False,
                 on_done: Optional[Callable[["ThinkJob"], None]] = None, name: str = "pygomoku-think") -> None:
        self.stop = threading.Event()
        self.stop_at: Optional[float] = None   # when the earliest-ending stop request was made
        self.grace = 0.0                       # its grace period (ms)
        self.hard_at: Optional[float] = None   # absolute hard deadline
        self.hard_grace = 0.0                  # grace after the hard deadline (ms)
        self.hard_fired = False
        self.best: Optional[SearchInfo] = None
        self.info: Optional[SearchInfo] = None
        self.error: Optional[BaseException] = None
        self.traceback = ""
        self.started_at: Optional[float] = None
        self.done = False
        self._finished = threading.Event()
        self._on_info = on_info
        self._keep_best = keep_best
        self._on_done = on_done
        self._name = name

    def start(self, player: Thinker, board: Board, limit: Limit) -> None:
        """Start ``player.think(board, limit, ...)`` on a new daemon thread (``board`` is the player's to keep:
        pass a copy)."""
        self.started_at = now_ms()
        th = threading.Thread(target=self._run, args=(player, board, limit), name=self._name, daemon=True)
        th.start()

    def _run(self, player: Thinker, board: Board, limit: Limit) -> None:
        report = self._report if (self._on_info is not None or self._keep_best) else None
        try:
            self.info = player.think(board, limit, self.stop, report)
        except BaseException as e:  # noqa: BLE001 - handed to the waiting thread
            self.error = e
            self.traceback = traceback.format_exc(limit=6)
        finally:
            self.done = True
            self._finished.set()
            if self._on_done is not None:
                self._on_done(self)

    def _report(self, info: SearchInfo) -> None:
        self.best = info
        if self._on_info is not None:
            self._on_info(info)

    # ------------------------------------------------------------------ stopping
    def request_stop(self, at: float, grace: float, why: str) -> None:
        """Set the stop event; the player has until ``at + grace`` to return (an earlier end of grace from
        another request stands). Safe from any thread."""
        if self.stop_at is None or at + grace < self.stop_at + self.grace:
            self.stop_at, self.grace = at, grace
            log.debug("stop requested (%s)", why)
        self.stop.set()

    def set_hard_deadline(self, at: Optional[float], grace: float) -> None:
        """At ``at`` (None: no deadline yet) the job stops itself with a stop request of ``grace`` ms, seen by
        :meth:`overran`; ``grace`` also applies to a deadline set later by
        :meth:`bring_hard_deadline_forward`."""
        self.hard_at = at
        self.hard_grace = grace

    def bring_hard_deadline_forward(self, at: float) -> bool:
        """Move the hard deadline to ``at`` if that is earlier and it has not fired yet; never later.
        Returns whether it moved."""
        if self.hard_fired or (self.hard_at is not None and at >= self.hard_at):
            return False
        self.hard_at = at
        return True

    def overran(self, now: float) -> bool:
        """True once a stop request's grace has run out at ``now`` (the caller then does without the player).
        Fires the hard deadline first when it is due. For the thread that waits."""
        if self.hard_at is not None and now >= self.hard_at and not self.hard_fired:
            self.hard_fired = True
            self.request_stop(self.hard_at, self.hard_grace, "hard deadline")
        return self.stop_at is not None and now >= self.stop_at + self.grace

    def wake_at(self) -> Optional[float]:
        """When :meth:`overran` may next change (the end of grace, or the hard deadline); None: not before a
        stop request."""
        wake: Optional[float] = None
        if self.stop_at is not None:
            wake = self.stop_at + self.grace
        if self.hard_at is not None and not self.hard_fired:
            wake = self.hard_at if wake is None else min(wake, self.hard_at)
        return wake

    def wait(self, poll_s: Optional[float] = None, on_poll: Optional[Callable[[], None]] = None) -> bool:
        """Block until the call returned (True) or overran (False). With ``poll_s`` (seconds), wake at least
        that often and call ``on_poll`` after each wait (a live display)."""
        while not self.done:
            now = now_ms()
            if self.overran(now):
                return False
            wake = self.wake_at()
            timeout = MAX_WAIT_S if wake is None else max(0.0, (wake - now) / 1000.0)
            if poll_s is not None:
                timeout = min(timeout, poll_s)
            finished = self._finished.wait(min(MAX_WAIT_S, timeout))
            if on_poll is not None:
                on_poll()
            if finished:
                break
        return True


def think_with_deadline(player: Thinker, board: Board, limit: Limit, deadline_ms: Optional[float] = None,
                        grace_ms: float = 0.0, name: str = "pygomoku-think") -> ThinkJob:
    """Run ``player.think`` on a worker thread (``board`` is copied) and wait until it returns, or until
    ``deadline_ms`` (ms from now; None: no deadline) plus ``grace_ms`` have passed: then the stop event is
    set at the deadline and the job comes back with ``done`` False (the thread may still be running)."""
    job = ThinkJob(name=name)
    if deadline_ms is not None:
        job.set_hard_deadline(now_ms() + deadline_ms, grace_ms)
    job.start(player, board.copy(), limit)
    job.wait()
    return job


# ------------------------------------------------------------------------------------------ the answer
@dataclass(frozen=True)
class Answer:
    """The move to send for one request: the player's (``info`` is its report) or a fallback (``info``
    None)."""

    move: int
    info: Optional[SearchInfo]

    @property
    def source(self) -> Literal["player", "fallback"]:
        """Where the move came from: the player's answer, or :func:`fallback_move`."""
        return "player" if self.info is not None else "fallback"


def choose_answer(board: Board, info: Optional[SearchInfo], best: Optional[SearchInfo]) -> Optional[Answer]:
    """The move to play for the side to move of ``board``: ``info.move`` when the player returned a legal
    one (an empty square, not renju-forbidden), else :func:`fallback_move` from the best move so far
    (``best``); None when no square is left. ``info`` and ``best`` come from the player unchecked."""
    if info is not None:
        m = as_move(getattr(info, "move", None))
        if m is not None and legal(board, m):
            return Answer(m, info)
        log.error("player returned an illegal move %r; fallback move", getattr(info, "move", None))
    fb = fallback_move(board, best)
    return None if fb is None else Answer(fb, None)


def fallback_move(b: Board, best: Optional[SearchInfo]) -> Optional[int]:
    """The move to play without the player: an immediate win or the block of the opponent's five first, then
    the player's best move so far (``best``) when it is legal, else :func:`protocol.fallback.quick_move`;
    None when no square is left."""
    m = fallback.quick_move(b)
    if m is None:
        return None
    me = b.side_to_move
    if b.makes_five(m, me) or b.makes_five(m, opponent(me)):
        return m  # a win or a forced block beats any unfinished search
    bm = as_move(getattr(best, "move", None))
    if bm is not None and legal(b, bm):
        return bm
    return m


def as_move(m: object) -> Optional[int]:
    """``m`` as a Python int if it is an integer of any kind (numpy integers included), else None."""
    if isinstance(m, bool):
        return None
    try:
        return operator.index(m)  # type: ignore[arg-type]
    except TypeError:
        return None


def legal(b: Board, m: int) -> bool:
    """May the side to move play ``m`` (:func:`gomoku_ai.movegen.is_legal`: on the board, empty, not a renju
    forbidden point)? A failing detector is logged and the move counts as illegal, never as legal."""
    try:
        return movegen.is_legal(b, m)
    except Exception:  # noqa: BLE001 - the brain must answer; an unchecked move is not sent
        log.exception("legality check of move %r failed; treating the move as illegal", m)
        return False
