"""The brain's move requests: deadlines, the search on a worker thread, the queue served meanwhile, one answer.

:class:`SearchSupervisor` handles a request that owes a move (BEGIN, TURN, BOARD): it derives the deadlines
from the game's clocks (:meth:`protocol.game.Game.deadlines`, start-up time charged to the first move),
starts the player's think call as a :class:`protocol.think.ThinkJob` and, while it runs, keeps taking entries
from the inbox: ``INFO`` is applied at once (a time INFO may bring the hard deadline forward), everything else
is deferred until the move has been sent, and a command that changes the position or owes a reply of its own
(:data:`PREEMPTING`, or a BOARD block) also stops the search early: a manager that sends one has stopped
waiting for the move. Then it answers exactly one move (:func:`protocol.think.choose_answer`) and charges the
game clock.

:class:`SearchControl` is the part the reader thread touches: ``YXSTOP``/``STOP`` stop the current search
(or the next one, when it was read after that request), ``END`` and EOF stop it too.

Guarantees: the player is given :data:`STOP_GRACE_MS` after a stop request to return and
:data:`gomoku_ai.timeman.WATCHDOG_GRACE_MS` after its hard deadline; otherwise the brain answers a fallback
move (the player's best move so far, or :func:`protocol.fallback.quick_move`; an immediate win or forced block
always comes first). A result that arrives later is dropped; the player is not called again until that late
call has returned (meanwhile requests get fallback moves, :class:`protocol.players.PlayerSlot`).
"""
from __future__ import annotations

import gc
import logging
import queue
import threading
from typing import Callable, List, Optional, Set

from gomoku_ai import movegen, timeman
from gomoku_ai.board import Board
from gomoku_ai.player import Limit, SearchInfo

from . import lines as L
from .framing import END, EOF, SEARCH_DONE, WAKE, Block, Inbox, Item, LineWriter
from .game import Game, StartupCharge
from .players import PlayerSlot
from .think import MAX_WAIT_S, Answer, ThinkJob, as_move, choose_answer, legal, now_ms

log = logging.getLogger("pygomoku.brain")

STOP_GRACE_MS = 120.0   #: after YXSTOP (or a preempting command, or EOF), wait this long for the player


#: Commands that, arriving during a search, stop it early (as do BOARD / YXBOARD / SWAP2BOARD blocks).
PREEMPTING = (L.Start, L.RectStart, L.Restart, L.Begin, L.Turn, L.Takeback, L.Play, L.YxNBest,
              L.YxSearchDefend)
REALTIME_EVERY_MS = 200.0   #: the least time between two realtime best-move reports (show_detail 1 or 3)
_TIME_KEYS = ("time_left", "timeout_turn", "timeout_match")


class SearchControl:
    """The search in progress, shared by the reader thread (stop requests, END, EOF) and the main thread.
    ``end_read``: END was read (nothing after it is read; what is owed before it is answered at once);
    ``ended``: the main thread reached END, or the exit watchdog fired (nothing more is written); ``eof``: the
    input ended or END was read (every search from now on gets zero time)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._job: Optional[ThinkJob] = None
        self._last_stop_seq = 0
        self.ended = False
        self.end_read = False
        self.eof = False

    def begin(self, job: ThinkJob, seq: int, t0: float) -> None:
        """``job`` is the search of the request read as line ``seq``; a stop read after it applies at once."""
        with self._lock:
            self._job = job
            if self._last_stop_seq > seq:
                job.request_stop(t0, STOP_GRACE_MS, "YXSTOP before the search started")

    def finish(self) -> None:
        with self._lock:
            self._job = None

    def stop(self, seq: int, t: float) -> None:
        """YXSTOP / STOP read as line ``seq`` at ``t`` (reader thread)."""
        with self._lock:
            self._last_stop_seq = seq
            if self._job is not None:
                self._job.request_stop(t, STOP_GRACE_MS, "YXSTOP")

    def input_ended(self, why: str = "EOF") -> None:
        """EOF or END (reader thread): the search in progress stops (its move is answered within
        :data:`STOP_GRACE_MS`) and what is still owed is answered at once, with zero time."""
        self.eof = True
        if why == "END":
            self.end_read = True
        with self._lock:
            if self._job is not None:
                self._job.request_stop(now_ms(), STOP_GRACE_MS, why)


class SearchSupervisor:
    """Answers move requests (see the module docstring). ``apply_info`` applies an INFO that arrives during
    a search; ``ready_at()`` is when the reader began reading (for the start-up charge)."""

    def __init__(self, game: Game, players: PlayerSlot, inbox: Inbox, writer: LineWriter,
                 control: SearchControl, startup: StartupCharge, ready_at: Callable[[], Optional[float]],
                 apply_info: Callable[[L.Info], None]) -> None:
        self._game = game
        self._players = players
        self._inbox = inbox
        self._writer = writer
        self._control = control
        self._startup = startup
        self._ready_at = ready_at
        self._apply_info = apply_info
        self._count = 0
        self.moves_sent = 0

    def answer(self, item: Item, nbest: Optional[int] = None) -> None:
        """Search the current position for the side to move and answer exactly one move (or ERROR:
        :class:`protocol.game.GameError` when the game is over or the board full); ``nbest``: first tell that
        many best root moves in MESSAGE lines (YXNBEST)."""
        b = self._game.check_can_move()
        paused = gc.isenabled()
        if paused:
            gc.disable()
        try:
            self._answer(b, item, nbest)
        finally:
            if paused:
                gc.enable()

    def _answer(self, b: Board, item: Item, nbest: Optional[int]) -> None:
        """:meth:`answer` with the cyclic garbage collector paused. A full collection walks every tracked
        object, the search tree's included (20 ms with a tree of 12,000 nodes, 75,000 objects, here); one
        that fell inside a search came straight off the move's safety margin. The tree makes no reference cycles (refcounting
        frees it), so nothing piles up meanwhile, and the collections that are due run once the move is out."""
        settings = self._game.settings
        if not self._startup.first_move_done:
            self._startup.first_move_done = True
            used = self._startup.used_ms(item.t, self._ready_at())
        else:
            used = now_ms() - item.t
        dl = self._game.deadlines(used)
        if self._control.eof:
            dl = timeman.INSTANT
        self._count += 1
        realtime = _Realtime(self._writer, b) if settings.show_detail in (1, 3) else None
        job = ThinkJob(on_info=realtime.report if realtime is not None else None, keep_best=True,
                       on_done=self._on_done)
        t0 = now_ms()
        job.set_hard_deadline(None if dl.hard_ms is None else t0 + dl.hard_ms, timeman.WATCHDOG_GRACE_MS)
        self._control.begin(job, item.seq, t0)
        if job.stop.is_set():
            dl = timeman.INSTANT
        player = self._players.ensure(self._game.rule(), *self._game.size())
        started = False
        if player is not None:
            wait = 0.05 if dl.hard_ms is None else min(0.05, dl.hard_ms / 1000.0)
            if self._players.idle.wait(wait):
                self._players.configure(player, settings)
                self._players.idle.clear()
                limit = Limit(soft_ms=dl.soft_ms, hard_ms=dl.hard_ms, visits=settings.max_node,
                              depth=settings.max_depth)
                job.start(player, b.copy(), limit)
                started = True
            else:
                log.warning("player still busy with an abandoned search; answering a fallback move")
        log.debug("think #%d: soft %s hard %s used %.1f ms", self._count, dl.soft_ms, dl.hard_ms, used)
        info = None
        try:
            if started:
                info = self._supervise(job)
        except Exception:  # noqa: BLE001 - still answer a move
            log.exception("search supervision failed; fallback move")
            job.stop.set()
            info = None
        finally:
            self._control.finish()
            if realtime is not None:
                realtime.close()
        if self._control.ended:
            return
        self._send_answer(job, item.t, info, nbest)

    def _on_done(self, job: ThinkJob) -> None:
        """The worker thread's last act: the player is free, and the main thread looks again."""
        self._players.idle.set()
        self._inbox.put(SEARCH_DONE)

    def _supervise(self, job: ThinkJob) -> Optional[SearchInfo]:
        """Wait for the worker while serving the inbox; returns what the player returned, or None for a
        fallback (overrun, error, END)."""
        while not job.done:
            now = now_ms()
            if job.overran(now):
                log.warning("player did not return %.0f ms after the stop; fallback move", job.grace)
                return None
            wake = job.wake_at()
            try:
                it = self._inbox.get(None if wake is None else min(MAX_WAIT_S, max(0.0, (wake - now) / 1000.0)))
            except queue.Empty:
                continue
            if it is SEARCH_DONE or it is WAKE:
                continue  # job.done says whether it is ours
            if it is END or it is EOF:
                job.request_stop(now_ms(), STOP_GRACE_MS, repr(it))
                self._inbox.defer(it)   # answered first; the main loop then ends at it
                continue
            if isinstance(it, Item) and isinstance(it.cmd, L.Info) and not self._inbox.has_deferred:
                try:
                    self._apply_info(it.cmd)
                    if it.cmd.key in _TIME_KEYS:
                        self._retime(job)
                except Exception:  # noqa: BLE001
                    log.exception("INFO during search failed")
                continue
            self._inbox.defer(it)
            if isinstance(it, Item) and isinstance(it.cmd, PREEMPTING + (Block,)):
                job.request_stop(now_ms(), STOP_GRACE_MS, f"{type(it.cmd).__name__} arrived")
        if job.error is not None:
            log.error("player raised %r", job.error, exc_info=job.error)
            return None
        return job.info

    def _retime(self, job: ThinkJob) -> None:
        """A time INFO arrived during the search: bring the hard deadline forward if the new limits demand
        it (a human shortening the clock); it is never pushed back."""
        if self._game.board is None or job.hard_fired:
            return
        dl = self._game.deadlines(0.0)
        if dl.hard_ms is not None and job.bring_hard_deadline_forward(now_ms() + dl.hard_ms):
            log.debug("hard deadline brought forward to %.0f ms from now", dl.hard_ms)

    def _send_answer(self, job: ThinkJob, t_recv: float, info: Optional[SearchInfo],
                     nbest: Optional[int] = None) -> None:
        b = self._game.board
        assert b is not None
        ans = choose_answer(b, info, job.best)
        blocked = self._game.blocked
        if ans is not None and ans.move in blocked:
            ans = avoid_blocked(b, ans, blocked)
        if ans is None:
            self._writer.write_lines([L.format_error("no legal move")])
            return
        out: List[str] = []
        if nbest is not None:
            out.extend(L.format_message(t) for t in nbest_messages(b, ans, nbest, blocked))
        if self._game.settings.show_detail:
            out.append(L.format_message(detail_message(b, ans.info) if ans.info is not None else
                                        f"fallback move {b.move_name(ans.move)}"))
        x, y = b.xy(ans.move)
        me = b.side_to_move
        b.push(ans.move)
        self._game.my_color = me
        out.append(L.format_move(x, y))
        self._writer.write_lines(out)
        self.moves_sent += 1
        try:
            used = now_ms() - t_recv
            self._game.charge_clock(t_recv)
            log.info("move %s (%s) after %.0f ms", L.format_move(x, y), ans.source, used)
        except Exception:  # noqa: BLE001 - the move is out; nothing may follow it
            log.exception("bookkeeping after the move failed")


def detail_message(b: Board, info: SearchInfo) -> str:
    """Rapfi's UCI-like MESSAGE text for a finished search: ``depth 3-3 ev 52.3 n 1234 n/ms 12 tm 800 pv h8 i9``
    (``ev`` our win rate in percent, ``n`` visits, ``tm`` ms, the PV in ``h8`` notation). ``info`` comes from
    the player unchecked (missing fields count as 0)."""
    depth = int(getattr(info, "depth", 0) or 0)
    winrate = getattr(info, "winrate", 0.5)
    visits = int(getattr(info, "visits", 0) or 0)
    nps = float(getattr(info, "nodes_per_s", 0.0) or 0.0)
    tm = int(getattr(info, "elapsed_ms", 0.0) or 0)
    pv = [as_move(m) for m in (getattr(info, "pv", None) or [info.move])]
    pv_text = " ".join(b.move_name(m) for m in pv[:20] if m is not None and 0 <= m < b.size)
    pv_text = pv_text or b.move_name(as_move(info.move) or 0)
    return (f"depth {depth}-{depth} ev {100.0 * winrate:.1f} n {visits} n/ms {int(nps / 1000.0)} "
            f"tm {tm} pv {pv_text}")


class _Realtime:
    """Reports the search's best move while it runs, as Yixin-Board reads it (``MESSAGE REALTIME REFRESH``
    then ``MESSAGE REALTIME BEST x,y``; Rapfi's ``show_detail`` 1 and 3): on the worker thread, when the best
    move changes, at most every :data:`REALTIME_EVERY_MS`; nothing once :meth:`close` was called (before the
    move is written)."""

    def __init__(self, writer: LineWriter, board: Board) -> None:
        self._writer = writer
        self._board = board
        self._lock = threading.Lock()
        self._open = True
        self._last_move: Optional[int] = None
        self._last_at = -REALTIME_EVERY_MS

    def report(self, info: SearchInfo) -> None:
        m = as_move(getattr(info, "move", None))
        now = now_ms()
        if m is None or not (0 <= m < self._board.size) or m == self._last_move \
                or now - self._last_at < REALTIME_EVERY_MS:
            return
        x, y = self._board.xy(m)
        with self._lock:
            if self._open:
                self._writer.write_lines([L.format_message("REALTIME REFRESH"),
                                          L.format_message(f"REALTIME BEST {L.format_move(x, y)}")])
                self._last_move, self._last_at = m, now

    def close(self) -> None:
        with self._lock:
            self._open = False


def avoid_blocked(b: Board, ans: Answer, blocked: Set[int]) -> Optional[Answer]:
    """``ans`` moved off the YXBLOCK squares: the most visited root move that is legal and not blocked, else
    the first legal square near the stones that is not blocked, else (an empty board, whose centre the
    player answers without a search) the free legal square nearest the centre; None when every legal
    square is blocked."""
    for c in (ans.info.candidates if ans.info is not None else []):
        if c.move not in blocked and legal(b, c.move):
            return Answer(c.move, ans.info)
    near = (m for m in movegen.near_empty(b, 2) if m not in blocked and legal(b, m))
    free = next(near, None)
    if free is None:
        (cx, cy), w = b.xy(b.centre), b.width
        rest = [m for m in movegen.legal_moves(b) if m not in blocked]
        free = min(rest, key=lambda m: (max(abs(m % w - cx), abs(m // w - cy)), m), default=None)
    return None if free is None else Answer(free, None)


def nbest_messages(b: Board, ans: Answer, n: int, blocked: Set[int]) -> List[str]:
    """The YXNBEST lines: ``n`` root moves not blocked, the answer first (the player may prefer a move to the
    most visited one), then the most visited, each ``multipv k ev <win % of the side to move> n <visits> pv
    <move>``; one line for the answer alone when the search has no candidates (a tactical answer); none for a
    fallback move."""
    info = ans.info
    free = [c for c in (info.candidates if info is not None else []) if c.move not in blocked]
    cands = sorted(free, key=lambda c: c.move != ans.move)[:n]   # stable: the rest keep their order
    if not cands:
        return [detail_message(b, info)] if info is not None else []
    return [f"multipv {k} ev {50.0 * (c.q + 1.0):.1f} n {c.visits} pv {b.move_name(c.move)}"
            for k, c in enumerate(cands, 1)]
