"""The one object that turns (position, limits) into a move.

The brain (``protocol.brain``), the terminal UI, the tournament runner and the HTTP service all call
:meth:`Player.think`, so there is exactly one way the engine chooses a move. :class:`Thinker` is that
interface as a protocol (what front ends may rely on); :class:`SearchInfo` is what a search reports, its root
candidates included, so that front ends never read the search tree itself.
"""
from __future__ import annotations

import dataclasses
import logging
import os
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Dict, List, NamedTuple, Optional, Protocol, Set, Tuple

import numpy as np

from . import checks, movegen, tactics, vct
from .board import Board
from .evaluator import Evaluator, HeuristicEvaluator
from .mcts import MCTS, NODE_BYTES, MCTSConfig, SearchStats, eval_cache_bytes, with_overrides
from .rules import opponent

if TYPE_CHECKING:
    from .net.evalworker import EvalWorker

log = logging.getLogger("pygomoku.player")


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

    def __post_init__(self) -> None:
        checks.non_negative(self, "soft_ms", "hard_ms", "visits", "depth", allow_none=True)


class Source(checks.StrKind):
    """Which part of :meth:`Player.think` decided the move (``SearchInfo.source``; written as its string to
    logs, PGN comments and JSON answers)."""

    NONE = ""             # not named (a test double's answer)
    WIN1 = "win1"         # a five at once
    BLOCK5 = "block5"     # the only block of the opponent's five
    LOST = "lost"         # the opponent has fives we cannot all block: any legal move
    VCF = "vcf"           # our proven VCF
    VCT = "vct"           # our proven VCT
    STATIC = "static"     # no time to search: the evaluator's best prior
    CENTRE = "centre"     # the first stone of a game: the centre of the empty board, no search
    MCTS = "mcts"         # the tree search
    POLICY = "policy"     # the HTTP service's answer below its time floor: the network's best prior
    SLEEPY = "sleepy"     # the diagnostic players of :mod:`gomoku_ai.testplayers`
    STUCK = "stuck"


class Quietness(checks.StrKind):
    """What the quiet-move preference knows of a candidate: the opponent's VCT search after it
    (:func:`_quiet_status`)."""

    OPEN = "open"         # not searched yet, or cut by its node limit or the deadline
    QUIET = "quiet"       # the search ended without a VCT: no VCT within our threat rules
    LOST = "lost"         # a VCT was found: lost, as far as those rules go


class Candidate(NamedTuple):
    """One move at the root of a search, from the point of view of the side to move at the root.

    ``visits``: simulations that went through the move; ``q``: its mean value in [-1, 1] (1 = the side
    to move wins); ``prior``: the evaluator's probability for it, in [0, 1].
    """

    move: int
    visits: int
    q: float
    prior: float


@dataclass
class SearchInfo:
    """What a search found, from the point of view of the side to move at the root.

    ``value`` is in [-1, 1] (1 = the side to move wins); ``winrate`` = (value + 1) / 2.
    ``pv`` is the principal variation starting with ``move`` (flat indices). ``elapsed_ms`` is the wall
    time of the call. ``proven`` is +1 / -1 when the result is proved (win / loss), else 0.
    ``candidates``: every expanded root move of an MCTS answer, most visited first (equal visits: in the
    root's move order); empty for an answer that needed no tree (a tactic, the static choice).
    ``root_visits``: the candidates' visits added up (the root's children; ``visits`` is the root's own
    count, which also counts its first evaluation).
    """

    move: int
    value: float = 0.0
    visits: int = 0
    nodes_per_s: float = 0.0
    depth: int = 0
    pv: List[int] = field(default_factory=list)
    elapsed_ms: float = 0.0
    proven: int = 0
    source: Source = Source.NONE  # which part decided
    candidates: List[Candidate] = field(default_factory=list)
    root_visits: int = 0

    @property
    def winrate(self) -> float:
        return (self.value + 1.0) / 2.0

    def visit_map(self, size: int) -> np.ndarray:
        """The candidates' visits as a dense ``(size,)`` float32 array over the board's squares (flat
        indices); a proven win without visits (won before any simulation) puts 1 on the move."""
        out = np.zeros(size, np.float32)
        for c in self.candidates:
            out[c.move] = c.visits
        if self.proven == 1 and out.sum() == 0:
            out[self.move] = 1.0
        return out


InfoCallback = Callable[[SearchInfo], None]


class Thinker(Protocol):
    """What the front ends drive (the brain, :mod:`protocol.think`, the terminal UI, the tournament):
    :class:`Player`, the diagnostic players of :mod:`gomoku_ai.testplayers`, and test doubles.

    - :meth:`think` chooses a move for the side to move of ``board`` within ``limit`` (the board is left as
      it was given); it returns early, with its best move so far, once ``stop`` is set (from another
      thread), and may report progress through ``on_info`` (called on the thinking thread). It raises
      :class:`NoMoveError` when there is no move.
    - :meth:`new_game` forgets what was kept between moves (the search tree).
    - ``memory_limit_bytes`` (bytes; None: the player's default) and ``thread_num`` (Gomocup
      ``INFO thread_num``) are set by the brain before each search.
    """

    memory_limit_bytes: Optional[int]
    thread_num: int

    def think(self, board: Board, limit: Limit, stop: Optional[threading.Event] = None,
              on_info: Optional[InfoCallback] = None) -> SearchInfo: ...

    def new_game(self) -> None: ...


class NoMoveError(RuntimeError):
    """The position has no legal move (full board, or the game is already over)."""


class Player:
    """Chooses moves with MCTS guided by an evaluator, plus root tactics (fives, VCF).

    This is the interface every front end uses:

    - :meth:`think` (board, limit, stop event, info callback) -> :class:`SearchInfo`; the board is
      left as it was given; the move is always legal (empty, and not renju-forbidden for Black).
      It may be stopped from another thread by setting ``stop``; it then returns at once with the
      best move so far.
    - :meth:`new_game` forgets the search tree kept between moves.
    - :attr:`memory_limit_bytes` caps the memory of the search tree (None: the config's default).
    """

    def __init__(self, evaluator: Optional[Evaluator] = None, config: Optional[MCTSConfig] = None,
                 seed: int = 0, use_vcf: bool = True, name: str = "pygomoku",
                 reuse_tree: bool = True, use_vct: Optional[bool] = None) -> None:
        self.evaluator = evaluator if evaluator is not None else HeuristicEvaluator()
        self.config = config or MCTSConfig()
        self.seed = seed
        self.use_vcf = use_vcf
        # VCT (threes as well as fours) at the root; default: with the VCF tactics, unless the
        # environment says PYGOMOKU_VCT=0 (for A/B matches against the same engine without it)
        self.use_vct = (use_vcf and os.environ.get("PYGOMOKU_VCT", "1") != "0") \
            if use_vct is None else use_vct
        self.name = name
        self.reuse_tree = reuse_tree
        self.memory_limit_bytes: Optional[int] = None
        self._thread_num = 1
        # clock management (stop when settled, extend when not; only with a game clock), unless
        # PYGOMOKU_TIME_MANAGE=0 (A/B matches)
        self.manage_time = os.environ.get("PYGOMOKU_TIME_MANAGE", "1") != "0"
        self._time_bank_ms = 0.0   # ms saved by settled moves, for unsettled ones (this game)
        # the move-ordering memory of this move's defence checks (one per think, vct.Hints)
        self._hints = vct.Hints()
        # the root's defences against an opponent VCF are also checked against its VCT, and a VCT
        # defence cut short by its limits still restricts the root to the moves not refuted,
        # unless PYGOMOKU_VCT_FILTER=0 (A/B matches against the older root)
        self.vct_filter = os.environ.get("PYGOMOKU_VCT_FILTER", "1") != "0"
        # a restricted root keeps the reused tree's statistics of the moves it allows, unless
        # PYGOMOKU_RESTRICT_REUSE=0 (A/B matches: the tree is reset, as before session 8)
        self.restrict_reuse = os.environ.get("PYGOMOKU_RESTRICT_REUSE", "1") != "0"
        # with a clock, A/B switches: PYGOMOKU_ATTACK="DEPTH,NODES" (our VCT, ATTACK_SEARCH), _THREAT
        # (the opponent's VCT as if we passed, THREAT_SEARCH), _CHECK (the check of the search's
        # choice, CHECK_SEARCH), PYGOMOKU_CHECK_TIME="SHARE,CAP_MS" (the time kept for that check,
        # CHECK_SHARE, CHECK_MAX_MS), PYGOMOKU_DEFENCE_LEVELS="D,N,SHARE,CAP_MS;..." (DEFENCE_LEVELS)
        self.threat_search: Tuple[int, int] = _switch("PYGOMOKU_THREAT")
        self.check_search: Tuple[int, int] = _switch("PYGOMOKU_CHECK")
        self.quiet: Optional[Quiet] = _switch("PYGOMOKU_QUIET")   # _quiet_choice
        self.check_time: Tuple[float, float] = _switch("PYGOMOKU_CHECK_TIME")
        self.check_resume = os.environ.get("PYGOMOKU_CHECK_RESUME", "1") != "0"   # _checked_search
        self.attack_search: Tuple[int, int] = _switch("PYGOMOKU_ATTACK")
        self.attack_quiet: int = _switch("PYGOMOKU_ATTACK_QUIET")   # ATTACK_QUIET
        self.defence_prior: int = _switch("PYGOMOKU_DEFENCE_PRIOR")   # DEFENCE_PRIOR_MOVES
        self.defence_levels: Tuple[Tuple[int, int, float, float], ...] = _switch("PYGOMOKU_DEFENCE_LEVELS")
        self.defence_drop = os.environ.get("PYGOMOKU_DEFENCE_DROP", "1") != "0"   # _safe_defences
        # A/B switch: PYGOMOKU_MCTS="c_puct=1.2,fpu_reduction=0.3" (MCTSConfig fields)
        self.config = with_overrides(self.config, os.environ.get("PYGOMOKU_MCTS", ""))
        if os.environ.get("PYGOMOKU_THREE_REPLIES", "1") == "0":
            # A/B switch: search every move after an open three
            self.config = dataclasses.replace(self.config, three_replies=False)
        self.mcts = MCTS(self.evaluator, self.config, seed=seed)
        self._eval_cache_entries = self.config.eval_cache   # as configured (plan_memory lowers it)
        # the network in a second process (thread_num >= 2); never restarted once it failed
        self._worker: Optional["EvalWorker"] = None
        # A/B switch: PYGOMOKU_WORKER=0 keeps the search on one core whatever thread_num says
        self.use_worker = os.environ.get("PYGOMOKU_WORKER", "1") != "0"
        self._refusal_said: Optional[str] = None

    @property
    def thread_num(self) -> int:
        """Threads the manager allows (Gomocup ``INFO thread_num``). With 2 or more, the network is
        evaluated in a second process (:mod:`gomoku_ai.net.evalworker`) while the search gathers
        the next batch, when the evaluator is a network loaded from files and the memory limit
        leaves room for the worker (:meth:`worker_refusal`); the worker starts here and is used
        from the first search after it is ready. (A second *thread* does not help: the tree work
        holds the GIL, bench_pipeline.py.) With 1 the worker is stopped."""
        return self._thread_num

    @thread_num.setter
    def thread_num(self, n: int) -> None:
        self._thread_num = max(1, int(n))
        if self._thread_num >= 2:
            self._start_worker()
        elif self._worker is not None and not self._worker.failed:
            self._stop_worker()

    @property
    def worker(self) -> Optional["EvalWorker"]:
        """The evaluation worker, if one was started (its ``state`` and ``reason`` say how it went)."""
        return self._worker

    def worker_refusal(self) -> Optional[str]:
        """Why no evaluation worker may run now (None: it may). Managers that count memory add the
        children's virtual memory to the brain's (GomocupJudge), so the worker needs
        ``memory_limit_bytes`` >= BASELINE_BYTES + WORKER_BYTES + a small tree."""
        from .net.evalworker import WORKER_BYTES
        if not self.use_worker:
            return "PYGOMOKU_WORKER=0"
        if os.name == "nt":
            return "no evaluation worker on Windows yet (it waits on pipes with select)"
        net = getattr(self.evaluator, "network", None)
        if net is None or getattr(net, "basename", None) is None:
            return f"the {self.evaluator.name} evaluator has no network files"
        need = BASELINE_BYTES + WORKER_BYTES + MIN_TREE_NODES * NODE_BYTES
        if self.memory_limit_bytes is not None and 0 < self.memory_limit_bytes < need:
            return (f"max_memory {self.memory_limit_bytes // 2**20} MB leaves no room for a second "
                    f"process (needs {need // 2**20} MB)")
        return None

    def _start_worker(self) -> None:
        if self._worker is not None and (self._worker.active or self._worker.failed):
            return
        refusal = self.worker_refusal()
        if refusal is not None:
            if refusal != self._refusal_said:
                log.info("thread_num %d: the search stays on one core (%s)", self._thread_num, refusal)
                self._refusal_said = refusal
            return
        from .net.evalworker import EvalWorker
        self._worker = EvalWorker(getattr(self.evaluator, "network")).start()

    def _stop_worker(self) -> None:
        if self._worker is not None:
            self._worker.close()
            self._worker = None
        self.mcts.offload = None

    def _sync_offload(self) -> None:
        """Before a search: evaluate in the worker when it is ready and still allowed."""
        w = self._worker
        self.mcts.offload = None
        if w is None or self._thread_num < 2:
            return
        if self.worker_refusal() is not None:
            self._stop_worker()     # no longer allowed (a smaller max_memory)
        elif w.poll():
            self.mcts.offload = w

    def close(self) -> None:
        """Stop the evaluation worker and the pipeline thread, if any (the player stays usable)."""
        self._stop_worker()
        self.mcts.close()

    def new_game(self) -> None:
        """Forget the search tree (and the time saved for later moves)."""
        self.mcts.reset()
        self._time_bank_ms = 0.0

    def _plan_memory(self, n_squares: int) -> None:
        """The search's node cap and cache size (:func:`plan_memory`) for a board of ``n_squares``."""
        budget = None
        if self.memory_limit_bytes is not None:
            budget = self.memory_limit_bytes - BASELINE_BYTES
            if self._worker is not None and self._worker.alive:
                from .net.evalworker import WORKER_BYTES
                budget -= WORKER_BYTES
        plan_memory(self.mcts.cfg, budget, self._eval_cache_entries, n_squares)

    def think(self, board: Board, limit: Limit, stop: Optional[threading.Event] = None,
              on_info: Optional[InfoCallback] = None) -> SearchInfo:
        """Choose a move for the side to move. Raises NoMoveError if there is none.

        ``limit.soft_ms`` bounds the search, ``limit.hard_ms`` is the point by which the call
        returns whatever happens (tactics get a share of the soft budget first).
        """
        t0 = time.perf_counter()
        if board.winner is not None:
            raise NoMoveError("the game is already over")
        if board.is_full():
            raise NoMoveError("the board is full")

        def done(info: SearchInfo) -> SearchInfo:
            info.elapsed_ms = (time.perf_counter() - t0) * 1000.0
            if on_info is not None:
                on_info(info)
            return info

        first = _first_stone(board)
        if first is not None:
            return done(SearchInfo(move=first, pv=[first], source=Source.CENTRE))
        quick = _immediate(board)
        if quick is not None:
            move, source, value = quick
            return done(SearchInfo(move=move, value=value, pv=[move], source=source,
                                   proven=int(value) if abs(value) == 1 else 0))

        soft = limit.soft_ms
        hard = limit.hard_ms if limit.hard_ms is not None else soft
        if hard is not None and soft is not None:
            soft = min(soft, hard)
        instant = soft is not None and soft <= 0 and not limit.visits
        restrict: Optional[List[int]] = None
        threatened = False      # the opponent has a VCF or VCT as if we passed (or it is not known)
        if self.use_vcf and not instant:
            found = self._root_tactics(board, t0, soft, stop)
            if isinstance(found, SearchInfo):
                return done(found)
            restrict, threatened = found
        if instant:
            move = self._static_choice(board)
            return done(SearchInfo(move=move, pv=[move], source=Source.STATIC))

        self._sync_offload()
        self._plan_memory(board.size)
        if not self.reuse_tree or (restrict is not None and not self.restrict_reuse):
            self.mcts.reset()
        check = threatened and self.use_vct and self.vct_filter
        deadline = _search_deadline(t0, soft, self.check_time if check else None, self.quiet)
        extend_to = self._extend_to(t0, soft, hard)
        visits = limit.visits

        def progress(m: MCTS, st: SearchStats) -> None:
            if on_info is not None and m.root is not None and m.root.expanded:
                on_info(_search_info(m, st, t0))

        report = progress if on_info is not None else None
        stats = self.mcts.search(board, visits=visits, deadline=deadline, stop=stop, progress=report,
                                 restrict=restrict, extend_to=extend_to)
        if extend_to is not None and soft is not None:
            self._bank(t0, soft)
        info = _search_info(self.mcts, stats, t0)
        if check and info.proven == 0 and (stop is None or not stop.is_set()):
            resume = self.check_resume and soft is not None and extend_to is None and visits is None
            info = _checked_search(self, board, info, stats, t0, soft, restrict, stop, resume, report)
        if self.quiet is not None and soft is not None and info.proven == 0:
            info = _quiet_search(self, board, info, stats, t0, soft, restrict, stop, report, not (check or visits))
        if not board.is_empty(info.move):
            raise AssertionError("search produced an occupied square")  # never expected
        return done(info)

    def root_tactics(self, board: Board, soft_ms: Optional[float]
                     ) -> "SearchInfo | Tuple[Optional[List[int]], bool]":
        """What the move search does before it searches (:meth:`_root_tactics`), from now, for the side
        to move on ``board`` (left unchanged): a proven win as a SearchInfo, else ``(restrict,
        threatened)``. ``soft_ms``: the move's soft time limit in ms (None: node limits alone).
        For analysis tools (benchmarks/announced_wins.py)."""
        return self._root_tactics(board, time.perf_counter(), soft_ms, None)

    def _root_tactics(self, board: Board, t0: float, soft: Optional[float],
                      stop: Optional[threading.Event]
                      ) -> "SearchInfo | Tuple[Optional[List[int]], bool]":
        """The root's tactics before the search: our VCF, then the opponent's (and the moves that
        stop it), then our VCT and the opponent's (:meth:`_root_vct`). A proven win as a
        SearchInfo to play, else ``(restrict, threatened)``: the moves the search is limited to
        (None: all) and whether the opponent has a VCF or VCT as if we passed. ``soft`` in ms
        from ``t0`` (None: node limits alone)."""
        # caps only: a VCF search usually ends in well under 50 ms (bench_tactics), and these
        # phases do not watch ``stop``, so they are kept short. Without a clock (a visit limit)
        # their node limits alone bound them, so that the move does not depend on the machine's
        # speed (a deadline made a caro defence that takes ~0.5 s come and go with the load)
        budget = 0.15 * (soft if soft is not None else 2000.0)
        dl = None if soft is None else t0 + min(budget, 500.0) / 1000.0
        # every defence check of this move (the root's levels, then the search's choice) is the
        # opponent's VCT after one of our moves: they share one move-ordering memory
        self._hints = vct.Hints()
        line = _find_vcf(board, dl)
        if line:
            return SearchInfo(move=line[0], value=1.0, pv=list(line), proven=1,
                              source=Source.VCF, depth=len(line))
        restrict: Optional[List[int]] = None
        if stop is None or not stop.is_set():
            dl2 = None if soft is None else t0 + min(2 * budget, 1000.0) / 1000.0
            defences = _vcf_defences(board, dl2)
            if defences is not None:
                restrict = defences if defences else None
                if restrict and self.use_vct and self.vct_filter:
                    restrict = self._safe_defences(board, restrict, t0, soft)
                # a VCT (threes) cannot outrun the opponent's VCF: none searched
                return restrict, True
        if self.use_vct and (stop is None or not stop.is_set()):
            return self._root_vct(board, t0, soft)
        return None, False

    def _extend_to(self, t0: float, soft: Optional[float], hard: Optional[float]
                   ) -> Optional[float]:
        """The latest instant (``perf_counter``) a managed search may run to, or None when the
        clock is not managed: a game clock, i.e. the hard deadline (ms from ``t0``) well past the
        soft one. The search then stops early when its choice is settled and spends what that
        saved (the bank) on moves whose choice is not (:func:`gomoku_ai.mcts.time_verdict`)."""
        if not self.manage_time or soft is None or hard is None or \
                hard <= soft * EXTEND_MIN_HEADROOM:
            return None
        extra = min(self._time_bank_ms, (EXTEND_MAX_FACTOR - 1.0) * soft, 0.5 * (hard - soft))
        return t0 + (soft + max(0.0, extra)) / 1000.0

    def _bank(self, t0: float, soft: float) -> None:
        """After a managed search: bank what it saved against its soft budget (ms), or take out
        what it spent past it; at most BANK_MAX_FACTOR x soft is kept."""
        used_ms = (time.perf_counter() - t0) * 1000.0
        self._time_bank_ms = min(max(0.0, self._time_bank_ms + soft - used_ms),
                                 BANK_MAX_FACTOR * soft)

    def _root_vct(self, board: Board, t0: float, soft: Optional[float]
                  ) -> "SearchInfo | Tuple[Optional[List[int]], bool]":
        """Root VCT (after the VCF checks found nothing to play or defend): our VCT as a proven
        win (a SearchInfo to play), else ``(restrict, threatened)``: the moves that stop the
        opponent's VCT (a restriction of the root, None when there is none or nothing stops it)
        and whether the opponent has a VCT as if we passed (or it was not ruled out). Spends at
        most about 12% and 25% of the soft budget (capped at 0.4 s and 0.6 s) on the attack and on
        finding the opponent's threat, measured from ``t0``, then :meth:`_safe_defences`; without
        a soft budget, :data:`VCT_NODES_NO_CLOCK` attacker nodes."""
        if soft is None:
            # no clock (a visit limit): node limits only, so that the move does not depend on the
            # machine's speed (fixed-visit matches replay exactly)
            dl = dl2 = None
            attack_nodes, defence_nodes, vcf_nodes, total = VCT_NODES_NO_CLOCK
            attack_depth, quiet = ROOT_VCT_DEPTH, 0
        else:
            dl = t0 + min(0.12 * soft, 400.0) / 1000.0
            dl2 = t0 + min((0.25 if self.vct_filter else 0.20) * soft, 600.0) / 1000.0
            (attack_depth, attack_nodes), quiet = self.attack_search, self.attack_quiet
            defence_nodes, vcf_nodes, total = 3000, 2000, None
            if time.perf_counter() >= dl:
                return None, False
        res = vct.vct_search(board, max_depth=attack_depth, node_limit=attack_nodes, deadline=dl,
                             vcf_nodes=vcf_nodes, quiet_moves=quiet)
        if res.line:
            return SearchInfo(move=res.line[0], value=1.0, pv=list(res.line), proven=1,
                              source=Source.VCT, depth=len(res.line))
        if dl2 is not None and time.perf_counter() >= dl2:
            return None, False
        if not self.vct_filter:
            defs, aborted = vct.vct_defences(board, max_depth=3, node_limit=defence_nodes,
                                             deadline=dl2, vcf_nodes=vcf_nodes, total_nodes=total)
            if not defs or aborted:
                return None, False      # no threat, no defence found, or not checked: search freely
            return movegen.without_forbidden(board, defs) or None, True
        board.pass_turn()
        try:
            depth, nodes = self.threat_search if soft is not None else (3, 2 * defence_nodes)
            threat = vct.vct_search(board, max_depth=depth, node_limit=nodes,
                                    deadline=dl2, vcf_nodes=vcf_nodes)
        finally:
            board.pass_turn()
        if threat.line is None:
            return None, False          # no threat found: search freely
        lg = self._prior_logits(board) if self.defence_prior > 0 else None
        cands = movegen.without_forbidden(board, _with_prior_moves(
            board, vct.defence_candidates(board, threat.line), lg, self.defence_prior))
        if not cands:
            return None, True
        return self._safe_defences(board, cands, t0, soft, lg), True

    def _checked_choice(self, board: Board, info: SearchInfo, t0: float, soft: Optional[float]
                        ) -> SearchInfo:
        """:func:`_checked_choice` with this move's defence-check hints."""
        return _checked_choice(board, info, t0, soft, self._hints, self.check_search)

    def _safe_defences(self, board: Board, defences: List[int], t0: float, soft: Optional[float],
                       lg: Optional[np.ndarray] = None) -> List[int]:
        """``defences`` (non-empty: the moves that might stop an opponent's VCF or VCT) less those
        after which the opponent has a VCT (:func:`gomoku_ai.vct.safe_moves`), all of them when
        every one loses. Checked in the order of the evaluator's prior, so that the likeliest moves
        are checked first: at depth 3 until about 30% of the soft budget (ms, from ``t0``; at most
        0.6 s), then the survivors at depth 5 until about 45% (at most 0.9 s), which drops what it
        refutes; without a clock, at depth 3 on node limits alone (deterministic). ``lg``: the
        evaluator's policy logits of ``board`` where the caller has them."""
        if len(defences) > 1:
            lg = self._prior_logits(board) if lg is None else lg
            defences = sorted(defences, key=lambda mv: -float(lg[mv]))
        if soft is None:
            _a, node_limit, vcf_nodes, total = VCT_NODES_NO_CLOCK
            res = vct.safe_moves(board, defences, max_depth=3, node_limit=node_limit,
                                 vcf_nodes=vcf_nodes, total_nodes=total, hints=self._hints)
            return res.kept or defences
        kept = defences
        for level, (depth, nodes, share, cap) in enumerate(self.defence_levels):
            dl = t0 + min(share * soft, cap) / 1000.0
            if time.perf_counter() >= dl or (level > 0 and len(kept) <= 1):
                break
            res = vct.safe_moves(board, kept, max_depth=depth, node_limit=nodes,
                                 deadline=dl, vcf_nodes=2000, hints=self._hints)
            # what a level refutes is proved lost (a VCT found), so it goes while something is
            # left; PYGOMOKU_DEFENCE_DROP=0 (A/B): a deeper level counts only with a verified move
            if not res.kept or (level > 0 and not res.verified and not self.defence_drop):
                break
            kept = res.kept
        return kept

    def _prior_logits(self, board: Board) -> np.ndarray:
        """The evaluator's policy logits for the side to move, ``(size,)`` over flat indices."""
        item = self.evaluator.prepare(board)
        logits, _ = self.evaluator.evaluate([item], (board.height, board.width))
        return logits[0]

    def _static_choice(self, board: Board) -> int:
        """Answer-at-once move: the evaluator's best prior among the legal candidates."""
        lg = self._prior_logits(board)
        return max(_candidates(board), key=lambda mv: lg[mv])


#: the root's defence checks with a clock (:meth:`Player._safe_defences`): (VCT depth, attacker
#: nodes per move, share of the soft budget and cap in ms by which the level ends, from the start)
DEFENCE_LEVELS = ((3, 3000, 0.30, 600.0), (5, 10000, 0.45, 900.0))

#: the root's search for our own VCT: its depth without a clock, and with a clock (VCT depth,
#: attacker nodes); it stops at about 12 % of the soft budget (at most 400 ms) whatever the limits.
#: Depth 8 since session 40 (was 5): with ATTACK_QUIET, on our positions of 400 games, it finds 16
#: and 20 more wins in about 1,100 positions on 15x15 and 20x20, for 11-12 ms more a move on
#: average (benchmarks/results/s40)
ROOT_VCT_DEPTH = 5
ATTACK_SEARCH = (8, 30000)

#: with a clock, our VCT's first move may also be one of this many quiet moves (vct._quiet_threats:
#: no four or three, but a VCF threat after it); PYGOMOKU_ATTACK_QUIET=0 turns them off (session 40)
ATTACK_QUIET = 40

#: the root's search for the opponent's VCT as if we passed, with a clock: (VCT depth, attacker nodes)
THREAT_SEARCH = (3, 6000)

#: against the opponent's VCT, the evaluator's this many favourite moves are defence candidates too
#: (:func:`_with_prior_moves`; PYGOMOKU_DEFENCE_PRIOR=N; 0: none, the default until measured)
DEFENCE_PRIOR_MOVES = 0

#: with a clock, the check of the search's choice under threat (:func:`_checked_choice`): the
#: opponent's VCT after the move, (VCT depth, attacker nodes); depth 20 with the proof-number VCT
#: was not better in games (session 38, benchmarks/results/s38)
CHECK_SEARCH = (3, 3000)

#: under threat, the search stops CHECK_SHARE of the soft budget early (at most CHECK_MAX_MS, ms)
#: and the rest checks its choice, and after a refutation the next of its CHECK_MOVES most
#: visited moves (:meth:`Player._checked_choice`)
CHECK_SHARE = 0.08
CHECK_MAX_MS = 100.0
CHECK_MOVES = 6

#: ... but when the check accepts the search's own move quickly, the search goes on until twice the
#: check's time, at least RESUME_KEEP_MS, is left, if that gives it RESUME_MIN_MS or more (ms)
RESUME_KEEP_MS = 10.0
RESUME_MIN_MS = 15.0


class Quiet(NamedTuple):
    """The quiet-move preference's settings (``PYGOMOKU_QUIET``, on by default since session 37;
    :func:`_quiet_choice`)."""
    depth: int = 20           # the opponent's VCT search after a candidate: VCT depth
    nodes: int = 3000         # ... and attacker nodes
    moves: int = 4            # the search's first candidates looked at
    share: float = 0.25       # each with at least this share of the most visited one's visits
    time_share: float = 0.1   # the search stops this share of the soft budget early for it
    cap_ms: float = 100.0     # ... at most this many ms
    first_nodes: int = 300    # a first round over the candidates with this many nodes each (0: none)
    pn_nodes: int = 3000      # where the deepening leaves the search's own move open, the proof-number
                              # search's attacker nodes (0: none); a VCT it finds rules the move out


#: PYGOMOKU_QUIET=1
QUIET_SEARCH = Quiet()

#: VCT limits of a move searched without a clock: (attacker nodes of the attack, of each defence
#: check, nodes of each inner VCF, attacker nodes of all the defence checks); deterministic
VCT_NODES_NO_CLOCK = (300, 100, 300, 600)

#: a game clock is managed (see :func:`gomoku_ai.mcts.time_verdict`) when the hard deadline is over
#: this many times the soft one. A search that settles early banks the time it saved (at most
#: BANK_MAX_FACTOR x the current soft budget); an unsettled one may spend the bank, up to
#: EXTEND_MAX_FACTOR x its soft budget in all. So the game never spends more than without it.
EXTEND_MIN_HEADROOM = 1.2
EXTEND_MAX_FACTOR = 2.0
BANK_MAX_FACTOR = 3.0
MIN_TREE_NODES = 2_000   # the smallest tree cap, whatever the memory limit
BASELINE_BYTES = 180 * 1024 * 1024  # VmPeak of the brain with onnxruntime and a model, before search (bench_brain)


#: the on/off A/B switches ("0" turns the part off; unset or "1" leaves it on -- except
#: PYGOMOKU_VCT_PN, off unless "1")
FLAGS = ("PYGOMOKU_VCT", "PYGOMOKU_VCT_FILTER", "PYGOMOKU_VCT_REPLAY", "PYGOMOKU_VCT_HINTS",
         "PYGOMOKU_RESTRICT_REUSE", "PYGOMOKU_THREE_REPLIES", "PYGOMOKU_TIME_MANAGE", "PYGOMOKU_WORKER",
         "PYGOMOKU_NATIVE", "PYGOMOKU_VCT_NATIVE", "PYGOMOKU_CHECK_RESUME", "PYGOMOKU_DEFENCE_DROP",
         "PYGOMOKU_VCT_PN")


def plan_memory(cfg: MCTSConfig, budget: Optional[int], cache_entries: int, n_squares: int) -> None:
    """Set ``cfg``'s evaluation-cache size and node cap for a board of ``n_squares`` squares within
    ``budget`` bytes (None: no limit, the cache gets ``cache_entries``, its configured size): the
    cache (:func:`gomoku_ai.mcts.eval_cache_bytes`) gets at most a quarter, the tree the rest."""
    if budget is None:
        cfg.eval_cache = cache_entries
        return
    cfg.eval_cache = min(cache_entries, max(0, budget // 4) // eval_cache_bytes(1, n_squares))
    budget -= eval_cache_bytes(cfg.eval_cache, n_squares)
    cfg.max_nodes = max(MIN_TREE_NODES, min(cfg.max_nodes * 50, budget // NODE_BYTES))


def check_switches() -> None:
    """Parse the player's A/B switches in the environment (:data:`VALUED` and the on/off
    :data:`FLAGS`, which take "0" or "1") as :class:`Player` will; raises :class:`checks.ConfigError`
    naming the first malformed one. For front ends that refuse a typo before any command (a player
    made later inside the brain would fail on every move and the brain fall back to its static move;
    a flag such as ``PYGOMOKU_VCT=off`` would silently leave the part on)."""
    for name in FLAGS:
        if os.environ.get(name, "").strip() not in ("", "0", "1"):
            raise checks.ConfigError(f"{name}={os.environ[name]!r}: expected 0 (off) or 1 (on)")
    with_overrides(MCTSConfig(), os.environ.get("PYGOMOKU_MCTS", ""))
    for name in _PARSERS:
        _switch(name)


def _threat_search(text: str, name: str = "PYGOMOKU_THREAT",
                   default: Tuple[int, int] = THREAT_SEARCH) -> Tuple[int, int]:
    """``"DEPTH,NODES"`` (the ``PYGOMOKU_THREAT``, ``PYGOMOKU_CHECK`` or ``PYGOMOKU_ATTACK`` A/B switch,
    ``name``) as a pair; "" is ``default`` (:data:`THREAT_SEARCH`, :data:`CHECK_SEARCH`,
    :data:`ATTACK_SEARCH`)."""
    if not text.strip():
        return default
    try:
        depth, nodes = (int(x) for x in text.split(","))
    except ValueError:
        raise checks.ConfigError(f"{name}={text!r}: expected DEPTH,NODES (two integers)") from None
    if depth < 1 or nodes < 1:
        raise checks.ConfigError(f"{name}={text!r}: depth and nodes must be positive")
    return depth, nodes


def _count(text: str, name: str, default: int) -> int:
    """A count switch (``PYGOMOKU_ATTACK_QUIET``): a non-negative integer; "" is ``default``."""
    if not text.strip():
        return default
    try:
        value = int(text)
    except ValueError:
        raise checks.ConfigError(f"{name}={text!r}: expected a count (an integer >= 0)") from None
    if value < 0:
        raise checks.ConfigError(f"{name}={text!r}: must be >= 0")
    return value


def _check_time(text: str) -> Tuple[float, float]:
    """``"SHARE,CAP_MS"`` (the ``PYGOMOKU_CHECK_TIME`` A/B switch: the share of the soft budget, at most
    CAP_MS ms, that a search under threat leaves to the check of its choice) as a pair; "" is
    (:data:`CHECK_SHARE`, :data:`CHECK_MAX_MS`)."""
    if not text.strip():
        return CHECK_SHARE, CHECK_MAX_MS
    try:
        share, cap = (float(x) for x in text.split(","))
    except ValueError:
        raise checks.ConfigError(f"PYGOMOKU_CHECK_TIME={text!r}: expected SHARE,CAP_MS") from None
    if not 0.0 <= share < 1.0 or cap < 0.0:
        raise checks.ConfigError(f"PYGOMOKU_CHECK_TIME={text!r}: SHARE must be in [0, 1) and CAP_MS >= 0")
    return share, cap


def _defence_levels(text: str) -> Tuple[Tuple[int, int, float, float], ...]:
    """``"DEPTH,NODES,SHARE,CAP_MS;..."`` (the ``PYGOMOKU_DEFENCE_LEVELS`` A/B switch) as levels like
    :data:`DEFENCE_LEVELS`; "" is :data:`DEFENCE_LEVELS`."""
    if not text.strip():
        return DEFENCE_LEVELS
    levels = []
    for item in text.split(";"):
        try:
            d, n, share, cap = item.split(",")
            level = (int(d), int(n), float(share), float(cap))
        except ValueError:
            raise checks.ConfigError(f"PYGOMOKU_DEFENCE_LEVELS={text!r}: {item!r} is not "
                                     "DEPTH,NODES,SHARE,CAP_MS") from None
        if level[0] < 1 or level[1] < 1 or not 0.0 < level[2] <= 1.0 or level[3] <= 0.0:
            raise checks.ConfigError(f"PYGOMOKU_DEFENCE_LEVELS={text!r}: {item!r} is out of range")
        levels.append(level)
    return tuple(levels)


def _quiet(text: str) -> Optional[Quiet]:
    """``PYGOMOKU_QUIET``: "0" is off (None), "" (unset) or "1" :data:`QUIET_SEARCH`, "DEPTH,NODES", or
    ``field=value`` pairs of :class:`Quiet` separated by commas (the others keep their defaults),
    e.g. ``moves=6,share=0.1``."""
    t = text.strip()
    if t == "0":
        return None
    if t in ("", "1"):
        return QUIET_SEARCH
    if "=" not in t:
        depth, nodes = _threat_search(t, "PYGOMOKU_QUIET", (QUIET_SEARCH.depth, QUIET_SEARCH.nodes))
        return QUIET_SEARCH._replace(depth=depth, nodes=nodes)
    kinds = {name: type(value) for name, value in QUIET_SEARCH._asdict().items()}
    q = QUIET_SEARCH._replace(**checks.field_values(t, kinds, "PYGOMOKU_QUIET"))
    if min(q.depth, q.nodes, q.moves) < 1 or q.cap_ms < 0 or min(q.pn_nodes, q.first_nodes) < 0 or \
            not (0.0 <= q.share < 1.0 and 0.0 <= q.time_share < 1.0):
        raise checks.ConfigError(f"PYGOMOKU_QUIET={text!r}: out of range (depth, nodes, moves >= 1; "
                                 "cap_ms, first_nodes, pn_nodes >= 0; shares in [0, 1))")
    return q


#: the root tactics' valued A/B switches: each one's parser of its text ("" gives its default)
_PARSERS: Dict[str, Callable[[str], Any]] = {
    "PYGOMOKU_THREAT": lambda t: _threat_search(t, "PYGOMOKU_THREAT", THREAT_SEARCH),
    "PYGOMOKU_CHECK": lambda t: _threat_search(t, "PYGOMOKU_CHECK", CHECK_SEARCH),
    "PYGOMOKU_ATTACK": lambda t: _threat_search(t, "PYGOMOKU_ATTACK", ATTACK_SEARCH),
    "PYGOMOKU_ATTACK_QUIET": lambda t: _count(t, "PYGOMOKU_ATTACK_QUIET", ATTACK_QUIET),
    "PYGOMOKU_DEFENCE_PRIOR": lambda t: _count(t, "PYGOMOKU_DEFENCE_PRIOR", DEFENCE_PRIOR_MOVES),
    "PYGOMOKU_CHECK_TIME": _check_time,
    "PYGOMOKU_DEFENCE_LEVELS": _defence_levels,
    "PYGOMOKU_QUIET": _quiet,
}
#: the A/B switches with values (:func:`check_switches`)
VALUED = ("PYGOMOKU_MCTS",) + tuple(_PARSERS)


def _switch(name: str) -> Any:
    """The valued switch ``name`` (a key of :data:`_PARSERS`) read from the environment and parsed;
    its default when unset. A malformed value is a :class:`checks.ConfigError` naming it."""
    return _PARSERS[name](os.environ.get(name, ""))


def _checked_search(p: Player, board: Board, info: SearchInfo, stats: SearchStats, t0: float,
                    soft: Optional[float], restrict: Optional[List[int]],
                    stop: Optional[threading.Event], resume: bool,
                    progress: Optional[Callable[[MCTS, SearchStats], None]]) -> SearchInfo:
    """The search's choice under threat, checked (:meth:`Player._checked_choice`). The search of
    ``p`` stopped early to leave the check its share of the soft budget (ms from ``t0``); when the
    check accepts the search's own move and takes much less than that (``resume``: a plain clock),
    the search goes on (the same tree, if the root has a choice) until twice the check's time, at
    least :data:`RESUME_KEEP_MS`, is left, and its choice then is checked again. ``stats``: the
    search's counters, the resumed searches' added."""
    while True:
        t_check = time.perf_counter()
        checked = p._checked_choice(board, info, t0, soft)
        now = time.perf_counter()
        if not resume or checked.move != info.move or len(info.candidates) < 2 or \
                soft is None or (stop is not None and stop.is_set()):
            return checked
        end = t0 + soft / 1000.0 - max(2.0 * (now - t_check), RESUME_KEEP_MS / 1000.0)
        if end - now < RESUME_MIN_MS / 1000.0:
            return checked
        info = _resumed(p, board, stats, t0, end, restrict, stop, progress)
        if info.proven != 0:
            return info


def _checked_choice(board: Board, info: SearchInfo, t0: float, soft: Optional[float],
                    hints: vct.Hints, check: Tuple[int, int] = CHECK_SEARCH) -> SearchInfo:
    """After a search under threat: the most visited candidate after which the opponent has no
    VCF or VCT (:func:`gomoku_ai.vct.safe_moves`, ``check`` = (depth, attacker nodes) with a clock,
    depth 3 without, sharing the move-ordering ``hints``),
    checked in the order of the visits among the first :data:`CHECK_MOVES` not proven lost, until
    the end of the soft budget (ms from ``t0``; node limits alone without a clock). A move whose
    check is cut short is accepted; when every checked move loses, the search's own choice stands."""
    if soft is None:
        dl = None
        depth = 3
        _a, node_limit, vcf_nodes, _t = VCT_NODES_NO_CLOCK
    else:
        dl = t0 + soft / 1000.0
        (depth, node_limit), vcf_nodes = check, 2000
    best = info.candidates[0].visits if info.candidates else 0
    order = [c for c in info.candidates if c.q > -0.999 and c.visits * 50 >= best]
    for c in order[:CHECK_MOVES]:
        if dl is not None and time.perf_counter() >= dl:
            break
        if vct.safe_moves(board, [c.move], max_depth=depth, node_limit=node_limit,
                          deadline=dl, vcf_nodes=vcf_nodes, hints=hints).kept:
            return _play_candidate(info, c)
    return info


def _play_candidate(info: SearchInfo, c: Candidate) -> SearchInfo:
    """``info`` with the root candidate ``c`` as its move (unchanged when it already is)."""
    return info if c.move == info.move else dataclasses.replace(info, move=c.move, value=c.q, pv=[c.move])


def _search_deadline(t0: float, soft: Optional[float], check: Optional[Tuple[float, float]],
                     quiet: Optional[Quiet]) -> Optional[float]:
    """When the search stops (perf_counter seconds): the soft budget (ms from ``t0``) less the share
    that the check of its choice (``check`` = (share, cap ms), None: no check) and the quiet-move
    preference (``quiet``, None: off) take after it; None without a clock."""
    if soft is None:
        return None
    keep = min(check[0] * soft, check[1]) if check is not None else 0.0
    keep += min(quiet.time_share * soft, quiet.cap_ms) if quiet is not None else 0.0
    return t0 + (soft - keep) / 1000.0


def _quiet_choice(board: Board, info: SearchInfo, deadline: float,
                  quiet: Quiet = QUIET_SEARCH) -> SearchInfo:
    """The quiet-move preference (the ``PYGOMOKU_QUIET`` A/B switch): among the search's first
    ``quiet.moves`` candidates with at least ``quiet.share`` of the best one's visits and not
    proven lost, in the order of their visits, the first after which the opponent's VCT search
    (``quiet.depth``, ``quiet.nodes`` attacker nodes) ends without a VCT before its node limit: within
    our threat rules, a proof that the opponent has none (session 36: true after 61 % of the holding
    moves of the 20x20 blunder set and 2.1 % of the losing ones). A candidate that makes a four is
    never taken as quiet: the opponent's forced block ends its VCT search at once, but the threat
    is only put off by a move. The candidates are first searched with ``quiet.first_nodes`` nodes
    each, then the open ones ranked above the first proven quiet with ``quiet.nodes``: a proof
    usually takes a few hundred nodes, a search that ends in its limit all of them (session 39:
    on 20x20, 96 ms at the median and 526 ms at the 90th percentile, so that the first open candidate
    used to take the whole time). When none is proven quiet by ``deadline`` (perf_counter seconds),
    or the search's own move is, its choice stands, unless an opponent's VCT was found after it: then
    the first candidate not proven lost so is played (:func:`_unquiet_choice`). The quiet search is
    the iterative deepening, not the
    proof-number one: that one also proves "no VCT" where a threat tree is large but refutable, and
    so after moves that lose to a longer mate (session 38: n18 of the test's game, refuted by Rapfi,
    in 67 nodes); the deepening ends within its limit only where the opponent's threats are few,
    the signal the games of session 37 measured."""
    best = info.candidates[0].visits if info.candidates else 0
    order = [c for c in info.candidates[:quiet.moves] if c.q > -0.999 and c.visits >= quiet.share * best]
    if len(order) < 2:
        return info
    fours = {f.move for f in tactics.four_moves(board)}
    status: Dict[int, Quietness] = {c.move: Quietness.OPEN for c in order if c.move not in fours}
    rounds = (quiet.first_nodes, quiet.nodes) if 0 < quiet.first_nodes < quiet.nodes else (quiet.nodes,)
    for nodes in rounds:
        # a quiet proof usually takes a few hundred nodes, a search that finds nothing all of them:
        # a first round with few nodes reaches every candidate before the time is up, and the
        # next gives the rest to the open ones ranked above the first proven quiet
        for c in order:
            st = status.get(c.move)
            if st is Quietness.QUIET:
                return _play_candidate(info, c)
            if st is not Quietness.OPEN:
                continue
            if time.perf_counter() >= deadline:
                return _unquiet_choice(board, info, order, status, quiet, deadline)
            if _quiet_status(board, c.move, quiet.depth, nodes, deadline, status) is Quietness.QUIET:
                break
    return _unquiet_choice(board, info, order, status, quiet, deadline)


def _unquiet_choice(board: Board, info: SearchInfo, order: List[Candidate], status: Dict[int, Quietness],
                    quiet: Quiet, deadline: float) -> SearchInfo:
    """The end of :func:`_quiet_choice`: the first of ``order`` proven quiet (``status``), else the
    search's move unless the opponent has a VCT after it (:func:`_not_proven_lost`; when the
    deepening left it open, ``quiet.pn_nodes`` of the proof-number search, whose VCTs are as sound,
    look for one before ``deadline``)."""
    first = next((c for c in order if status.get(c.move) is Quietness.QUIET), None)
    if first is not None:
        return _play_candidate(info, first)
    if status.get(info.move) is Quietness.OPEN and quiet.pn_nodes and time.perf_counter() < deadline:
        board.push(info.move)
        try:
            if vct.vct_search(board, quiet.depth, quiet.pn_nodes, deadline=deadline,
                              proof_numbers=True).line is not None:
                status[info.move] = Quietness.LOST
        finally:
            board.pop()
    return _not_proven_lost(info, order, {m for m, st in status.items() if st is Quietness.LOST})


def _quiet_status(board: Board, move: int, depth: int, nodes: int, deadline: float,
                  status: Dict[int, Quietness]) -> Quietness:
    """After ``move`` of the side to move, the opponent's VCT search (the iterative deepening to
    ``depth`` with ``nodes`` attacker nodes, cut at ``deadline``, perf_counter seconds): LOST when it
    finds a VCT, QUIET when it ends without one, OPEN when cut; also written to ``status[move]``."""
    board.push(move)
    try:
        r = vct.vct_search(board, depth, nodes, deadline=deadline, proof_numbers=False)
    finally:
        board.pop()
    status[move] = Quietness.LOST if r.line is not None else Quietness.OPEN if r.aborted else Quietness.QUIET
    return status[move]


def _not_proven_lost(info: SearchInfo, order: List[Candidate], lost: Set[int]) -> SearchInfo:
    """The search's choice, unless the opponent's VCT after it was found (``lost``): then the first of
    ``order`` (candidates by visits) not in ``lost``, checked or not; the choice stands when all are."""
    if info.move not in lost:
        return info
    return next((_play_candidate(info, c) for c in order if c.move not in lost), info)


def _quiet_search(p: Player, board: Board, info: SearchInfo, stats: SearchStats, t0: float, soft: float,
                  restrict: Optional[List[int]], stop: Optional[threading.Event],
                  progress: Optional[Callable[[MCTS, SearchStats], None]], resume: bool) -> SearchInfo:
    """The quiet-move preference (:func:`_quiet_choice`, ``p.quiet``) after the search of ``p``, which
    stopped early to leave it its time (ms from ``t0``, soft budget ``soft``); nothing once ``stop``
    is set. When it keeps the search's own move (its most visited: not a move the check under
    threat chose instead) and ``resume`` (False under threat, where a resumed search's new choice would
    go unchecked, and with a visit limit, which a resumed search would pass), the search goes on (the
    same tree) with the time left, if that is :data:`RESUME_MIN_MS` or more, and its choice then
    stands: the time kept for a change that did not come is not lost. ``stats`` gets the resumed
    search's counters."""
    assert p.quiet is not None
    if stop is not None and stop.is_set():
        return info
    end = t0 + soft / 1000.0
    chosen = _quiet_choice(board, info, end, p.quiet)
    if chosen.move != info.move or not resume or not info.candidates or info.move != info.candidates[0].move \
            or end - time.perf_counter() < RESUME_MIN_MS / 1000.0 or (stop is not None and stop.is_set()):
        return chosen
    return _resumed(p, board, stats, t0, end, restrict, stop, progress)


def _resumed(p: Player, board: Board, stats: SearchStats, t0: float, end: float,
             restrict: Optional[List[int]], stop: Optional[threading.Event],
             progress: Optional[Callable[[MCTS, SearchStats], None]]) -> SearchInfo:
    """The search of ``p`` gone on (the same tree) until ``end`` (perf_counter seconds), its counters
    added to ``stats``: its choice then (``t0``: the move's start)."""
    stats.absorb(p.mcts.search(board, deadline=end, stop=stop, progress=progress, restrict=restrict))
    return _search_info(p.mcts, stats, t0)


def _search_info(m: MCTS, st: SearchStats, t0: float) -> SearchInfo:
    """The root's move, value, candidates and counts after ``m``'s search (``t0``: its start,
    perf_counter s)."""
    move = m.best_move()
    pv = m.principal_variation()
    if not pv or pv[0] != move:
        pv = [move]
    el = time.perf_counter() - t0
    root = m.root
    cands = [Candidate(*c) for c in m.top_moves(len(root.moves))] \
        if root is not None and root.expanded else []
    return SearchInfo(move=move, value=m.root_value(), visits=int(root.n if root else 0),
                      nodes_per_s=st.simulations / max(st.elapsed_s, 1e-9),
                      depth=st.max_depth, pv=pv, elapsed_ms=el * 1000.0,
                      proven=int(root.proven) if root else 0, source=Source.MCTS,
                      candidates=cands, root_visits=sum(c.visits for c in cands))


def _with_prior_moves(board: Board, cands: List[int], logits: Optional[np.ndarray], k: int) -> List[int]:
    """``cands`` (the moves that might stop an opponent's VCT, :func:`gomoku_ai.vct.defence_candidates`)
    followed by the ``k`` legal moves near the stones with the highest ``logits`` (the evaluator's
    policy for the side to move) not among them. The candidates are the squares by the threat's
    first moves and our own fours and threes; a defence by a counter-attack or from farther away is
    not one of them (session 43: in Rapfi's games against itself, its move against a VCT lay outside
    them in 2 % of the threatened positions, was still safe there, and was our network's first
    choice in a third of those). The root's safe check verifies these like the rest. ``logits``
    None (or ``k`` 0): ``cands`` alone."""
    if k <= 0 or logits is None:
        return cands
    have = set(cands)
    others = sorted((m for m in _candidates(board) if m not in have), key=lambda m: -float(logits[m]))
    return cands + others[:k]


def _candidates(board: Board) -> List[int]:
    """Legal squares within distance 2 of a stone (the centre on an empty board); all legal
    squares if none is near."""
    if not board.moves:
        if board.is_empty(board.centre):
            return [board.centre]
        cands = movegen.legal_moves(board)
    else:
        cands = movegen.without_forbidden(board, movegen.near_empty(board, 2)) \
            or movegen.legal_moves(board)
    if not cands:
        raise NoMoveError("no legal move")
    return cands


def _first_stone(board: Board) -> Optional[int]:
    """:attr:`Board.centre` when nothing has been played yet and it is free and legal, else None.
    Every rule opens there, and a search of the empty board (225 or 400 near-equal squares) would
    spend the whole budget to choose among them: without INFO it took 4.3 s to play 6,6 on 15x15."""
    if board.moves:
        return None
    centre = board.centre
    if not board.is_empty(centre) or movegen.without_forbidden(board, [centre]) != [centre]:
        return None
    return centre


def _immediate(board: Board) -> Optional[Tuple[int, Source, float]]:
    """A move that needs no search: a five (value +1), the only block of the opponent's five, or
    any legal move when the opponent has an unstoppable double threat (value -1)."""
    me = board.side_to_move
    opp = opponent(me)
    cands = _candidates(board)
    for m in cands:
        if board.makes_five(m, me):
            return m, Source.WIN1, 1.0
    threats = [m for m in board.empty_squares() if board.makes_five(m, opp)]
    if not threats:
        return None
    blocks = movegen.without_forbidden(board, threats)
    if len(set(threats)) == 1 and blocks:
        return blocks[0], Source.BLOCK5, 0.0
    if not blocks:
        return cands[0], Source.LOST, -1.0
    return None  # several fives to block: let the search see it (it proves the loss or a trick)


def _find_vcf(board: Board, deadline: Optional[float]) -> Optional[List[int]]:
    """Our VCF (attacker and forced replies alternating, first move ours), or None."""
    return tactics.find_vcf(board, deadline=deadline)


def _vcf_defences(board: Board, deadline: Optional[float]) -> Optional[List[int]]:
    """None when the opponent has no VCF; else the moves that stop it (empty: nothing does)."""
    d = tactics.find_vcf_defences(board, deadline=deadline)
    return None if d is None else movegen.without_forbidden(board, d)
