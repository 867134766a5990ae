"""The terminal UI's engine: which :class:`~gomoku_ai.player.Player` plays, its searches, and what they say.

:class:`EngineSeat` holds the player factory and the per-move :class:`~gomoku_ai.player.Limit`, builds the
Player for the session's rule and board size (again only when the factory would give another one), and runs a
search in a worker thread (:class:`protocol.think.ThinkJob`, no deadline) while the caller shows its progress;
Ctrl-C (SIGINT) sets the search's stop event, so the best move so far comes back. :func:`snapshot` and
:meth:`EngineSeat.policy` turn a search or the evaluator's policy into the :class:`~tools.tui.session.Analysis`
the overlay draws.
"""
from __future__ import annotations

import os
import signal
import threading
from types import FrameType
from typing import Callable, Hashable, List, Optional, Tuple

import numpy as np

from gomoku_ai import movegen
from gomoku_ai.board import Board
from gomoku_ai.net.model import masked_softmax
from gomoku_ai.player import Limit, Player, SearchInfo
from gomoku_ai.rules import BLACK, Rule
from gomoku_ai.shipped import factory_key, make_with, takes_size
from protocol.think import ThinkJob

from .render import Thinking, View
from .session import Analysis, GameSession

__all__ = ["EngineSeat", "model_label", "snapshot"]

#: how the caller waits for a started search: ``wait(job, thinking)`` returns once ``job`` is done
Waiter = Callable[[ThinkJob, Thinking], None]


class EngineSeat:
    """The engine of a terminal session. ``factory(rule, width, height)`` (or ``factory(rule)``) gives the
    Player for a rule and board size; it is called again when what it would give changes (its
    ``key(rule, width, height)`` when it has one, else the rule, and the size for a factory that takes it).
    ``limit`` is the per-move budget; ``model`` and ``label`` name what plays (see :meth:`describe`)."""

    def __init__(self, factory: Callable[..., Player], session: GameSession, limit: Limit,
                 model: Optional[str] = None, label: str = "") -> None:
        self.factory = factory
        self._sized = takes_size(factory)
        self.model = model
        self.label = label
        self.key = self._key(session)
        self.player = self._make(session)
        self.limit = limit
        self.lock = threading.Lock()   # held while the live view is updated or drawn
        self.interrupted = False       # the last search was stopped by Ctrl-C

    # ------------------------------------------------------------------ the player
    def _key(self, session: GameSession) -> Hashable:
        return factory_key(self.factory, session.rule, session.board.width, session.board.height, self._sized)

    def _make(self, session: GameSession) -> Player:
        return make_with(self.factory, session.rule, session.board.width, session.board.height, self._sized)

    def ensure(self, session: GameSession) -> bool:
        """Build the Player for ``session``'s rule and board size if the factory would give another one than
        the current; True when it did."""
        key = self._key(session)
        if key == self.key:
            return False
        self.player = self._make(session)
        self.key = key
        return True

    def describe(self, rule: Rule) -> str:
        """``LABEL, BUDGET`` for the panel: what plays (the label, else the model's or the evaluator's name)
        and its per-move budget (visits or seconds)."""
        lim = self.limit
        budget = f"{lim.visits:,} visits" if lim.visits else f"{(lim.soft_ms or 0) / 1000:g} s"
        return f"{self.label or model_label(self.model, self.player)}, {budget}"

    # ------------------------------------------------------------------ searches
    def think(self, session: GameSession, view: View, purpose: str, wait: Waiter) -> SearchInfo:
        """Search ``session``'s position with :attr:`limit` in a worker thread; ``view.thinking`` and
        ``view.live_analysis`` follow its progress (under :attr:`lock`) while ``wait`` waits for it. Ctrl-C
        stops it (:attr:`interrupted`); the best move so far comes back. The final analysis is stored in
        ``session.analyses`` (and its win rate as ``session.last_eval``). Raises what the search raised
        (:class:`~gomoku_ai.player.NoMoveError` when there is no move). The caller has made the Player current
        (:meth:`ensure`)."""
        board = session.board.copy()
        key = session.key()
        tk = Thinking(purpose=purpose, color=session.side, limit_ms=self.limit.soft_ms,
                      limit_visits=self.limit.visits)
        view.thinking = tk

        def on_info(info: SearchInfo) -> None:  # worker thread
            a = snapshot(board, info, key)
            with self.lock:
                tk.elapsed_ms = info.elapsed_ms
                tk.visits = info.visits
                tk.nodes_per_s = info.nodes_per_s
                tk.move = info.move
                tk.winrate = info.winrate
                tk.pv = list(info.pv)
                tk.source = info.source
                view.live_analysis = a

        job = ThinkJob(on_info, name="engine")

        def interrupt(signum: int, frame_: Optional[FrameType]) -> None:
            job.stop.set()
            tk.stopping = True
            self.interrupted = True

        self.interrupted = False
        try:
            old = signal.signal(signal.SIGINT, interrupt)
        except ValueError:  # not the main thread (e.g. embedded): Ctrl-C cannot be caught here
            old = None
        job.start(self.player, board, self.limit)
        try:
            wait(job, tk)
        except KeyboardInterrupt:  # a Ctrl-C that reached the default handler after all
            job.stop.set()
            self.interrupted = True
            job.wait()
        finally:
            if old is not None:
                signal.signal(signal.SIGINT, old)
            view.thinking = None
            view.live_analysis = None
        if job.error is not None:
            raise job.error
        info = job.info
        assert info is not None  # Player.think returns a SearchInfo or raises
        a = snapshot(board, info, key)
        session.analyses[key] = a
        if a.black_winrate is not None:
            session.last_eval = (session.ply, a.black_winrate)
        return info

    def policy(self, session: GameSession) -> Optional[Analysis]:
        """The evaluator's policy for the position on the board (a cheap overlay, no search); None when the
        game is over, there is no legal move, or the evaluator fails (the overlay is optional). The caller has
        made the Player current (:meth:`ensure`)."""
        b = session.board
        if session.is_over():
            return None
        ev = self.player.evaluator
        try:
            item = ev.prepare(b)
            logits, values = ev.evaluate([item], (b.height, b.width))
        except Exception:  # noqa: BLE001 - the overlay is optional
            return None
        legal = movegen.legal_mask(b)
        if not legal.any():
            return None
        p = masked_softmax(np.asarray(logits[0], np.float64).reshape(1, -1), legal[None], np.float64)[0]
        order = np.argsort(-p)[:4]
        v = float(values[0])
        black = (v + 1) / 2 if session.side == BLACK else (1 - v) / 2
        flat = np.ptp(p[legal]) < 1e-9
        return Analysis(key=session.key(), heat=None if flat else p.astype(np.float32), pv=[],
                        black_winrate=None if ev.name in ("uniform",) else black,
                        top=[] if flat else [(int(m), float(p[m]), None) for m in order],
                        source="policy")


def snapshot(board: Board, info: SearchInfo, key: Tuple[int, int]) -> Analysis:
    """An Analysis of the searched position ``board`` from a SearchInfo and its root candidates (called in the
    search thread with a progress report, or after the search finished): visit shares as the heat, the top
    five moves with their win rates for the side to move, Black's win chance (none for a static answer)."""
    side = board.side_to_move
    wr = info.winrate
    black_wr: Optional[float] = wr if side == BLACK else 1.0 - wr
    heat = None
    top: List[Tuple[int, float, Optional[float]]] = []
    source = info.source or "search"
    if info.source == "mcts":
        source = "search"
        visits = info.visit_map(board.size)
        tot = float(visits.sum())
        if tot > 0:
            heat = visits / tot
        for m, n, q, _prior in info.candidates[:5]:
            if tot > 0:
                top.append((m, n / tot, (q + 1.0) / 2.0))
    else:
        heat = np.zeros(board.size, np.float32)
        heat[info.move] = 1.0
        top = [(info.move, 1.0, wr)]
    if info.source in ("static", "block5", "centre"):
        black_wr = None  # no evaluation behind these answers
    return Analysis(key=key, heat=heat, pv=list(info.pv), black_winrate=black_wr, top=top,
                    source=source, visits=info.visits, move=info.move)


def model_label(model: Optional[str], player: Player) -> str:
    """What plays: the model's file name, or the evaluator's name."""
    if player.evaluator.name == "network":
        base = getattr(getattr(player.evaluator, "network", None), "basename", None)
        if base is not None:
            return base.name
        if model:
            return os.path.splitext(os.path.basename(str(model)))[0]
        return "network"
    return player.evaluator.name
