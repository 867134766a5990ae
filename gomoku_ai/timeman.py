"""Time management: from the Gomocup time controls to a soft and a hard deadline for one move.

Inputs are what the manager sends (docs/PROTOCOL.md sections 6-7), all in milliseconds:

* ``timeout_turn``: the per-move limit; **0 = answer at once** (static evaluation only); ``None`` when the
  manager never sent it (c-gomoku-cli omits it when there is no per-move limit).
* ``timeout_match``: the whole-game limit; 0 = no limit.
* ``time_left``: what remains of the game clock; may be **negative** (already over time);
  ``2147483647`` (:data:`UNLIMITED`) = unlimited.

:func:`compute_deadlines` returns :class:`Deadlines` ``(soft_ms, hard_ms)`` measured from *now* (the moment
the caller asks, normally when the move request has been read): the search should not start new work after
``soft_ms`` and must have returned by ``hard_ms``. ``None`` means "no time limit" (a node or depth limit, or
the user's patience, ends the search). ``(0, 0)`` means "answer at once": the player must still return a legal,
tactically sane move (win in one, block a five).

Policy
------
* ``margin = MARGIN_BASE_MS + MARGIN_FRACTION * limit``, capped at ``MARGIN_MAX_MS``; it is taken off the turn
  limit and off the time left separately (each with its own size).
* ``soft = min(available / expected_moves_left + 0.8 * increment, turn_limit - margin)`` where
  ``available = time_left - margin(time_left) - reserve``; ``reserve`` keeps ``MOVE_OVERHEAD_MS`` for each move
  the game could still need (half the empty squares; at most 30 % of the time left), because even a move
  answered at once costs a few ms; and the expected number of our remaining moves is
  ``max(MIN_MOVES_LEFT, (EXPECTED_GAME_PLIES - move_number) / 2)``, never more than the empty squares allow.
* ``hard = min(turn_limit - margin, available * HARD_SHARE_OF_LEFT)``, and at least ``soft``: one move may
  overrun its share, but never spends more than a quarter of the remaining clock.
* ``used_ms`` (time already spent on this request before the search starts, e.g. the process start-up for the
  first move, which GomocupJudge charges to the first move) is subtracted from both.
* No turn limit and no game clock: ``DEFAULT_TURN_MS`` applies unless the search has another limit (visits or
  depth), in which case there is no time limit at all.

The margin, and how it was measured
-----------------------------------
The margin covers what happens between our deadline and the manager reading the move: the player noticing the
deadline (its own stop-check granularity), the brain's watchdog grace (:data:`WATCHDOG_GRACE_MS`; the brain
answers a fallback move if the player overruns its hard deadline by that much), thread wake-up and GIL hand-over,
writing and flushing one line, and OS scheduling jitter on a loaded machine. Measured on the development machine
(Linux, 2 cores, CPython 3.11, ``python engine.py`` as a subprocess with PYTHONUNBUFFERED unset, times taken by
the test process from just before writing the request to the moment its reader thread got the reply line):

* ``sleepy`` diagnostic player (thinks exactly until its deadline), 100 requests at timeout_turn 200:
  move read minus hard deadline: median 0.7 ms, max 2.3 ms;
* the real player (MCTS + VCF), 20 mid-game positions at timeout_turn 500: median 0.8 ms, max 5.2 ms over;
* ``YXSTOP`` written -> move read (sleepy, 30 times): median 0.4 ms, max 0.5 ms;
* ``stuck`` player (ignores deadlines and the stop event): the fallback move is read 0.7-0.8 ms after
  hard deadline + ``WATCHDOG_GRACE_MS``.

So a player that checks the clock every few milliseconds needs under 10 ms beyond its deadline, and even a
player that hangs costs ``WATCHDOG_GRACE_MS`` + 1 ms. The margin (60 ms + 2 % of the limit, i.e. 80 ms at 1 s and
160 ms at 5 s) is several times that, because the managers' clocks also include what we cannot see from
inside: process suspension and resumption by Piskvork/GomocupJudge (P11), PyInstaller's two-process start, a
loaded tournament machine, and Windows' coarser timers. The tests in ``tests/test_brain_conformance.py``
print these numbers again (``pytest -s``).

Start-up: GomocupJudge starts the clock of the first move before the interpreter has even started
(PROTOCOL.md section 7). :func:`process_age_ms` reads the process creation time from the OS, and the brain
charges the time it spent before reading the first move request (the interpreter, imports, START) to that move
as ``used_ms``. Measured: process creation -> OK about 140-220 ms, -> first move 220 ms with timeout_turn 0,
and with timeout_turn 1000 the first move arrives at 920 ms after process creation.
"""
from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from typing import Optional

from .board import Board
from .rules import WALL

UNLIMITED = 2147483647  #: ``INFO time_left`` value meaning "no game clock"

MARGIN_BASE_MS = 60.0      #: fixed part of the safety margin
MARGIN_FRACTION = 0.02     #: part of the margin proportional to the limit
MARGIN_MAX_MS = 400.0      #: the margin never exceeds this
WATCHDOG_GRACE_MS = 40.0   #: the brain answers a fallback move this long after an overrun hard deadline
DEFAULT_TURN_MS = 5000     #: per-move time when the manager gives no limit at all (nor a visit/depth limit)
EXPECTED_GAME_PLIES = 100  #: plies a typical game lasts (both sides); used to spread the game clock
MIN_MOVES_LEFT = 12.0      #: never plan for fewer of our own moves than this
HARD_SHARE_OF_LEFT = 0.25  #: one move never spends more than this share of the time left
INCREMENT_USE = 0.8        #: share of the per-move increment (Yixin ``time_increment``) spent on top
MOVE_OVERHEAD_MS = 10.0    #: clock reserved per possible remaining move for answering at all
RESERVE_SHARE = 0.3        #: the per-move reserve never exceeds this share of the time left


@dataclass(frozen=True)
class Deadlines:
    """Soft and hard deadline in ms from now; ``None`` = no time limit. ``soft_ms <= hard_ms``."""

    soft_ms: Optional[float]
    hard_ms: Optional[float]

    @property
    def instant(self) -> bool:
        """True when the move must be answered at once (hard deadline 0)."""
        return self.hard_ms is not None and self.hard_ms <= 0.0


INSTANT = Deadlines(0.0, 0.0)


def margin_ms(limit_ms: float) -> float:
    """The safety margin kept back from a limit of ``limit_ms``."""
    return min(MARGIN_MAX_MS, MARGIN_BASE_MS + MARGIN_FRACTION * max(0.0, float(limit_ms)))


def overhead_reserve_ms(time_left: int, empty_squares: Optional[int]) -> float:
    """Clock kept back for the fixed cost of each move the game may still need (``MOVE_OVERHEAD_MS`` per
    possible remaining move of ours, at most ``RESERVE_SHARE`` of the time left): once the budget is spent,
    moves are answered at once, and those still cost a few ms each."""
    moves = (empty_squares + 1) // 2 if empty_squares is not None and empty_squares > 0 else \
        EXPECTED_GAME_PLIES // 2
    return min(MOVE_OVERHEAD_MS * moves, RESERVE_SHARE * max(0, time_left))


def expected_moves_left(move_number: int, empty_squares: Optional[int] = None) -> float:
    """How many more of *our* moves the game is expected to last, at ply ``move_number`` (stones on the
    board); at least ``MIN_MOVES_LEFT``, at most what the empty squares allow (when given, and > 0)."""
    n = max(MIN_MOVES_LEFT, (EXPECTED_GAME_PLIES - max(0, move_number)) / 2.0)
    if empty_squares is not None and empty_squares > 0:
        n = min(n, max(1.0, (empty_squares + 1) // 2))
    return n


def clock_is_limited(timeout_match: Optional[int], time_left: Optional[int]) -> bool:
    """Does ``time_left`` count? Not when it is unknown or UNLIMITED, nor when the manager said the game has
    no limit (``timeout_match 0``); a finite time_left without any timeout_match counts."""
    if time_left is None or time_left >= UNLIMITED:
        return False
    return timeout_match is None or timeout_match > 0


def compute_deadlines(timeout_turn: Optional[int], timeout_match: Optional[int], time_left: Optional[int],
                      move_number: int = 0, empty_squares: Optional[int] = None, used_ms: float = 0.0,
                      increment_ms: int = 0, other_limit: bool = False) -> Deadlines:
    """Deadlines for one move (see the module docstring for the policy).

    ``time_left`` None (never sent) with a ``timeout_match`` means the whole match time is left.
    ``move_number`` is the number of stones on the board, ``empty_squares`` the number of free squares (for
    the end of the game), ``used_ms`` the time already spent on this request, ``increment_ms`` the per-move
    increment, and ``other_limit`` whether a visit or depth limit will also end the search.
    """
    if timeout_turn is not None and timeout_turn <= 0:
        return INSTANT
    if time_left is None and timeout_match:
        time_left = timeout_match  # no time_left yet: the whole game is still ahead
    turn_cap: Optional[float] = None
    if timeout_turn is not None:
        turn_cap = timeout_turn - margin_ms(timeout_turn)
    soft: Optional[float]
    hard: Optional[float]
    if clock_is_limited(timeout_match, time_left):
        assert time_left is not None
        available = time_left - margin_ms(max(0, time_left)) - overhead_reserve_ms(time_left, empty_squares)
        if available <= 0:
            return INSTANT
        share = available / expected_moves_left(move_number, empty_squares)
        share += INCREMENT_USE * max(0, increment_ms)
        soft = min(share, available)
        hard = available * HARD_SHARE_OF_LEFT
        if turn_cap is not None:
            soft = min(soft, turn_cap)
            hard = min(hard, turn_cap)
        hard = max(hard, soft)
    elif turn_cap is not None:
        soft = hard = turn_cap
    elif other_limit:
        return Deadlines(None, None)
    else:
        soft = hard = DEFAULT_TURN_MS - margin_ms(DEFAULT_TURN_MS)
    soft = max(0.0, soft - used_ms)
    hard = max(0.0, hard - used_ms)
    if hard <= 0.0:
        return INSTANT
    return Deadlines(min(soft, hard), hard)


def charge(time_left: Optional[int], used_ms: float) -> Optional[int]:
    """``time_left`` after spending ``used_ms`` (unlimited stays unlimited; may go negative)."""
    if time_left is None or time_left >= UNLIMITED:
        return time_left
    return int(round(time_left - used_ms))


# ------------------------------------------------------------------------------------------ process age
def process_age_ms() -> Optional[float]:
    """Milliseconds since this process (or, for a PyInstaller one-file bundle, its bootloader parent) was
    created, from the OS; None when it cannot be found out. Used to charge start-up time to the first move."""
    try:
        if sys.platform.startswith("linux"):
            return _linux_age_ms(os.getpid(), frozen_parent=_is_onefile())
        if sys.platform == "win32":
            return _windows_age_ms()
    except Exception:  # noqa: BLE001 - best effort; never let this break a move
        return None
    return None


def _is_onefile() -> bool:
    return bool(getattr(sys, "frozen", False) and hasattr(sys, "_MEIPASS"))


def _linux_start_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat", "rb") as f:
        stat = f.read().decode("ascii", "replace")
    fields = stat[stat.rindex(")") + 2:].split()
    return int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22 (starttime), counted from field 3


def _linux_age_ms(pid: int, frozen_parent: bool = False) -> float:
    with open("/proc/uptime", "rb") as f:
        uptime = float(f.read().split()[0])
    start = _linux_start_s(pid)
    if frozen_parent:
        try:
            ppid = os.getppid()
            if os.path.realpath(f"/proc/{ppid}/exe") == os.path.realpath(sys.executable):
                start = min(start, _linux_start_s(ppid))
        except OSError:
            pass
    return max(0.0, (uptime - start) * 1000.0)


def _windows_age_ms() -> Optional[float]:
    import ctypes
    from ctypes import wintypes

    k32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]

    def creation(handle: int) -> Optional[int]:
        ft = [wintypes.FILETIME() for _ in range(4)]
        if not k32.GetProcessTimes(wintypes.HANDLE(handle), *[ctypes.byref(t) for t in ft]):
            return None
        return (ft[0].dwHighDateTime << 32) | ft[0].dwLowDateTime

    now_ft = wintypes.FILETIME()
    k32.GetSystemTimeAsFileTime(ctypes.byref(now_ft))
    now = (now_ft.dwHighDateTime << 32) | now_ft.dwLowDateTime
    k32.GetCurrentProcess.restype = wintypes.HANDLE
    start = creation(k32.GetCurrentProcess())
    if start is None:
        return None
    if _is_onefile():
        k32.OpenProcess.restype = wintypes.HANDLE
        h = k32.OpenProcess(0x1000, False, os.getppid())  # PROCESS_QUERY_LIMITED_INFORMATION
        if h:
            try:
                buf = ctypes.create_unicode_buffer(1024)
                size = wintypes.DWORD(1024)
                if k32.QueryFullProcessImageNameW(wintypes.HANDLE(h), 0, buf, ctypes.byref(size)):
                    if os.path.normcase(buf.value) == os.path.normcase(sys.executable):
                        parent = creation(h)
                        if parent is not None:
                            start = min(start, parent)
            finally:
                k32.CloseHandle(wintypes.HANDLE(h))
    return max(0.0, (now - start) / 10_000.0)  # FILETIME counts 100 ns


def monotonic_ms() -> float:
    """The clock all deadlines use, in ms: ``time.perf_counter`` (monotonic and system-wide; on Windows it is
    QueryPerformanceCounter, whereas ``time.monotonic`` ticks in 15.6 ms steps before Python 3.13)."""
    return time.perf_counter() * 1000.0


#: a move with no time control and no visit limit (ms): 90 % of the default turn time
UNTIMED_MOVE_MS = DEFAULT_TURN_MS * 0.9


# ---------------------------------------------------------------- deadlines of a move on a board
def count_walls(b: Board) -> int:
    """Blocked squares (``BOARD`` field 3) on ``b``."""
    return int((b.cells == WALL).sum())


def move_deadlines(board: Board, timeout_turn: Optional[int], timeout_match: Optional[int],
                   time_left: Optional[int], used_ms: float = 0.0, increment_ms: int = 0,
                   other_limit: bool = False) -> Deadlines:
    """:func:`compute_deadlines` for the side to move of ``board``: the Gomocup time
    controls (ms; ``timeout_turn`` None: not sent, 0: answer at once; ``time_left`` None: not sent), the time
    already spent on the request (``used_ms``), the per-move increment (ms) and whether a visit or depth limit
    also ends the search; the move number is the stones on the board, the empty squares leave out walls.
    Returns soft and hard deadlines in ms from now."""
    return compute_deadlines(timeout_turn, timeout_match, time_left, move_number=len(board.moves),
                             empty_squares=board.size - len(board.moves) - count_walls(board),
                             used_ms=used_ms, increment_ms=increment_ms, other_limit=other_limit)


def movetime_deadlines(movetime_ms: float, turn_ms: int, time_left_ms: Optional[int]) -> Deadlines:
    """A fixed time per move (ms), kept within the per-move limit less its margin (``turn_ms`` > 0) and within
    :data:`HARD_SHARE_OF_LEFT` of the game clock less its margin (``time_left_ms`` given);
    soft == hard."""
    t = movetime_ms
    if turn_ms > 0:
        t = min(t, turn_ms - margin_ms(turn_ms))
    if time_left_ms is not None:
        cap = max(0.0, time_left_ms - margin_ms(max(0, time_left_ms))) * HARD_SHARE_OF_LEFT
        t = min(t, cap)
    return Deadlines(max(0.0, t), max(0.0, t))


def untimed_deadlines() -> Deadlines:
    """A move with no time control and no visit limit: :data:`UNTIMED_MOVE_MS` (soft == hard)."""
    return Deadlines(UNTIMED_MOVE_MS, UNTIMED_MOVE_MS)
