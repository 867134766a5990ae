"""PUCT Monte Carlo tree search with proven-result backup (MCTS-solver) and built-in five threats.

Notation follows the AlphaGo Zero paper: for a node with visit count ``n`` and a child ``i`` with
prior ``P[i]``, visit count ``N[i]`` and mean value ``Q[i]``, selection maximises

    Q[i] + c_puct * P[i] * sqrt(n) / (1 + N[i])

``Q[i]`` is the value of child ``i`` **from the point of view of the side to move at the node**
(the player who would play move ``i``); values lie in [-1, 1]. Unvisited children start at the
first-play-urgency value ``node value - fpu_reduction``.

Speed: the children's statistics of a node live in numpy arrays (one ``argmax`` over
``Q + k * PU`` per level, where ``PU = P / (1 + N)`` is kept up to date incrementally, 0 for a child
proven lost), the board is
played forward and back with ``push``/``pop`` (no copies), and five threats are tracked
incrementally from the parent (a move can only create fives through its own four lines).

Tactics built into every node (exact, rule-aware through ``Board.makes_five``):

- the side to move can make five: the node is a proven win (no evaluation needed);
- the opponent threatens five: the only children are the blocking squares (none legal -> loss);
- after an open three of the opponent, the only children are its defence points and our fours;
- a node below the root left with a single child (mostly the block of a four) is not evaluated:
  the simulation goes on through that move (``MCTSConfig.forced_pass``), so a forcing line costs
  one evaluation per free choice, not per move;
- optionally (``MCTSConfig.leaf_vcf_nodes``), a short VCF search (:mod:`gomoku_ai.tactics`) for the
  side to move at a node below the root, once per node when a simulation reaches it with
  ``leaf_vcf_after`` visits: a VCF makes the node a proven win, so the move that allowed it is a
  proven loss for its mover. Sound: a returned VCF is a forced win, a missed one only leaves the
  node to the network.

Proven results are backed up (MCTS-solver, Winands et al. 2008): a child proven lost for its side to
move makes the parent a proven win; a node all of whose children are proven wins for the opponent
is a proven loss. A proven root stops the search. Children are the empty squares within
``radius`` (Chebyshev distance, default 2) of a stone; every move that makes or blocks a four lies
there, which is what makes the loss proofs sound in practice.

Layout: :class:`Node` (one position's children statistics); :class:`SearchTree`, the node store
(root, reuse between searches, node creation and expansion); :func:`_descend` and :func:`_backup`,
selection with virtual loss and the backup of values and proofs (the innermost loop, kept as two
plain functions); :class:`MCTS`, the search driver (limits, batches, the optional evaluation thread)
and the results (best move, visits, value, principal variation).
"""
from __future__ import annotations

import dataclasses
import math
import random
import threading
import time
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

import numpy as np

from . import checks, movegen, native, tactics, vct
from .board import Board
from .evaluator import AsyncEvaluator, Evaluator, OffloadError, PendingEvaluation, evaluate_symmetric
from .rules import BLACK, EMPTY, WALL, Rule, opponent

WIN_Q = 10.0  # Q of a proven winning child (dominates any exploration bonus)
LOSS_Q = -10.0
NODE_BYTES = 4000  # bytes per node with ~60 children (tracemalloc, 15x15 middle game: ~3950)


class Node:
    """One position in the tree. Statistics of its children are numpy arrays indexed like ``moves``."""

    __slots__ = ("moves", "P", "N", "W", "Q", "PU", "children", "n", "proven", "win_move",
                 "my_fives", "opp_fives", "value", "expanded", "terminal", "n_lost", "vcf_checked",
                 "vct_checked")

    def __init__(self) -> None:
        self.moves: np.ndarray = _EMPTY_MOVES
        self.P = self.N = self.W = self.Q = self.PU = _EMPTY_F
        self.children: List[Optional["Node"]] = []
        self.n = 0                    # visits through this node (sum of N plus its own evaluation)
        self.proven = 0               # +1: side to move wins, -1: side to move loses, 0: unknown
        self.win_move = -1            # a winning move when proven == +1
        self.my_fives: List[int] = []   # squares where the side to move makes five
        self.opp_fives: List[int] = []  # squares where the opponent makes five
        self.value = 0.0              # evaluator's value for the side to move
        self.expanded = False
        self.terminal: Optional[float] = None  # exact value of a finished game (draw: 0.0)
        self.n_lost = 0               # children proven winning for the opponent
        self.vcf_checked = False      # the side to move's VCF was searched (MCTSConfig.leaf_vcf_nodes)
        self.vct_checked = False      # the side to move's VCT was searched (MCTSConfig.tree_vct_visits)


#: the C core's tree arithmetic (:func:`gomoku_ai.native.tree_ops`) used by :func:`_descend`,
#: :func:`_backup` and :meth:`SearchTree.candidates_all`; None: their Python code (the same tree)
_TREE_OPS = native.tree_ops()
#: the C core's node creation (:func:`gomoku_ai.native.node_ops`: :func:`_three_replies` and the
#: fives of :func:`_init_threats`) for the boards it serves; None: the Python code (the same lists)
_NODE_OPS = native.node_ops()

_EMPTY_MOVES = np.zeros(0, np.int32)
_EMPTY_F = np.zeros(0, np.float64)


class StopReason(checks.StrKind):
    """Why a search ended (equal to its string: ``stats.stopped_by == "time"`` holds)."""

    NONE = ""
    SOLVED = "solved"    # the root was proven
    VISITS = "visits"    # the visit limit
    TIME = "time"        # the deadline
    STOP = "stop"        # the stop event
    SETTLED = "settled"  # before the deadline: the best move could no longer change (a managed clock)


@dataclass
class SearchStats:
    """Counters of one :meth:`MCTS.search` call."""

    simulations: int = 0
    evaluations: int = 0     # leaves sent to the evaluator
    batches: int = 0
    new_nodes: int = 0
    max_depth: int = 0
    elapsed_s: float = 0.0
    eval_s: float = 0.0      # time spent inside the evaluator
    stopped_by: StopReason = StopReason.NONE
    extended_s: float = 0.0  # time searched past the deadline because the choice was unsettled
    leaf_vcf_wins: int = 0   # nodes proven won by a VCF (MCTSConfig.leaf_vcf_nodes)
    leaf_vcf_cuts: int = 0   # moves proven lost by a sibling's refutation (MCTSConfig.leaf_vcf_cut)
    tree_vct_wins: int = 0   # nodes proven won by a VCT (MCTSConfig.tree_vct_visits)
    tree_vct_searches: int = 0  # VCT searches made for it
    cache_hits: int = 0      # leaves expanded from the evaluation cache (MCTSConfig.eval_cache)
    forced_passes: int = 0   # single-child nodes gone through unevaluated (MCTSConfig.forced_pass)

    def absorb(self, later: "SearchStats") -> None:
        """Add the counters of a ``later`` search call of the same move (the same tree, resumed):
        counts and times add up, the depth is the deeper, the stop reason the later one's."""
        for f in dataclasses.fields(self):
            mine, theirs = getattr(self, f.name), getattr(later, f.name)
            if f.name == "max_depth":
                setattr(self, f.name, max(mine, theirs))
            elif f.name == "stopped_by":
                setattr(self, f.name, theirs)
            else:
                setattr(self, f.name, mine + theirs)


#: the most entries the leaf VCF table (:attr:`SearchTree.vcf_tt`) keeps (about 100 bytes each, so
#: about 20 MB); past it the table is dropped and starts again
LEAF_VCF_TT_MAX = 200_000
#: the leaf VCF's attacker-node budget (:attr:`MCTSConfig.leaf_vcf_nodes` None) where the compiled
#: prover serves the board's rule (:func:`gomoku_ai.native.serves`). 15x15, 1 s a move, against
#: AIWine, paired with 30 at the same time: +0.025 [-0.049, +0.099] and +0.090 [+0.022, +0.158]
#: a game over two pairs of 100 games (benchmarks/results/s20)
LEAF_VCF_NODES_NATIVE = 300
#: ... and where the Python prover runs (renju, caro, no compiler, PYGOMOKU_NATIVE=0): it pays
#: about ten times more per node, so the budget measured before the C core
#: (benchmarks/results/leaf-vcf)
LEAF_VCF_NODES_PYTHON = 30

#: :func:`time_verdict` does not stop a search as settled before this share of its budget
SETTLE_MIN_SHARE = 0.25
#: the best move is unsettled while it has fewer than this many times the runner-up's visits ...
UNSETTLED_VISIT_RATIO = 1.5
#: ... or while the runner-up's Q is higher than the best's by more than this
UNSETTLED_Q_GAP = 0.03


def time_verdict(N: np.ndarray, Q: np.ndarray, sims_per_s: float, elapsed_s: float,
                 budget_s: float, extend_s: float) -> Optional[StopReason]:
    """What a clock-managed search does at a clock check, from the root's children's visits ``N``
    and values ``Q`` (side to move), its speed and its times (s since the start; ``budget_s``: the
    soft deadline, ``extend_s`` >= it: the latest it may run): ``SETTLED`` (stop now: the
    runner-up cannot catch up with the best in the budget left at this speed), ``TIME`` (stop: the
    budget is spent and the choice is settled, or the extension is spent too) or None (go on).

    Unsettled means the most visited child has under :data:`UNSETTLED_VISIT_RATIO` times the
    runner-up's visits, or the runner-up's Q is higher by over :data:`UNSETTLED_Q_GAP`. Pure: the
    tests call it with made-up numbers."""
    if len(N) < 2:
        return StopReason.SETTLED if elapsed_s >= SETTLE_MIN_SHARE * budget_s else None
    top2 = np.argpartition(-N, 1)[:2]
    b, r = (int(top2[0]), int(top2[1])) if N[top2[0]] >= N[top2[1]] else \
        (int(top2[1]), int(top2[0]))
    lead = float(N[b] - N[r])
    if elapsed_s < budget_s:
        left = sims_per_s * (budget_s - elapsed_s)
        if elapsed_s >= SETTLE_MIN_SHARE * budget_s and lead > left:
            return StopReason.SETTLED
        return None
    unsettled = N[b] < UNSETTLED_VISIT_RATIO * N[r] or (N[r] > 0 and Q[r] > Q[b] + UNSETTLED_Q_GAP)
    if unsettled and elapsed_s < extend_s:
        return None
    return StopReason.TIME


@dataclass
class MCTSConfig:
    """Search parameters (all dimensionless unless stated)."""

    c_puct: float = 1.8
    policy_temp: float = 1.0          # the priors are softmax(logits / policy_temp) over a node's
                                      # children: > 1 flattens them (more visits off the network's
                                      # first choice), < 1 sharpens them. 15x15, 400 visits, 100
                                      # games each against 1: 0.8 -10 [-65, +44], 1.3 +7 [-39, +54],
                                      # 1.7 -67 [-120, -17] Elo (benchmarks/results/s14)
    fpu_reduction: float = 0.25       # an unvisited child's Q: its parent's less this. 15x15, 400
                                      # visits, 100 games each against 0.25: 0.1 -78 [-134, -25],
                                      # 0.45 +7 [-47, +61], 0.7 +7 [-48, +62] Elo
                                      # (benchmarks/results/s15)
    fpu_reduction_root: float = 0.0
    root_fpu_on_reuse: bool = False   # True: a kept subtree's root gets fpu_reduction_root for its
                                      # unvisited children (False: keeps its non-root value); measured
                                      # -1.7 +/- 36 Elo, so off (benchmarks/results/root-fpu)
    radius: int = 2
    virtual_loss: float = 1.0
    dirichlet_alpha: float = 0.0      # > 0: add Dirichlet noise to root priors (self-play only)
    noise_fraction: float = 0.25
    max_nodes: int = 60_000           # tree size cap; beyond it leaves are evaluated but not kept
    check_every: int = 16             # simulations between clock checks
    three_replies: bool = True        # after an open three, only its defence points and our fours
    pipeline: bool = False            # evaluate one batch in a second thread while the next is
                                      # gathered (needs evaluator batches > 1; opt-in: slower with
                                      # the shipped 4x32 network, benchmarks/bench_pipeline.py)
    offload_batch: int = 12           # leaves per batch while the network runs in a second process
                                      # (MCTS.offload; bench_pipeline.py: 12 beat 4, 8 and 16)
    leaf_vcf_nodes: Optional[int] = None  # > 0: a VCF search of this many attacker nodes for the
                                      # side to move at a node below the root; a VCF proves it won
                                      # (0: off). None: LEAF_VCF_NODES_NATIVE (300) where the C
                                      # prover serves the rule, else LEAF_VCF_NODES_PYTHON (30)
                                      # (leaf_vcf_budget). 30 at 15x15, 100 games each: +127
                                      # [+71, +183] Elo at 400 visits (at creation), +74 [+12, +141]
                                      # at 1 s a move (after 2) (benchmarks/results/leaf-vcf)
    leaf_vcf_after: int = 2           # ... searched when a simulation reaches the node with this
                                      # many visits (its own evaluation is the first): 0 when it is
                                      # created, 1 when the search first passes through it, ...
    leaf_vcf_tt: bool = True          # the leaf VCF searches of a tree share one transposition
                                      # table (SearchTree.vcf_tt; an entry is a fact about its
                                      # position, see tactics._vcf_in)
    leaf_vcf_cut: bool = False        # True: when a leaf VCF refutes a move and its line also wins as
                                      # if the mover had passed, the mover's other moves that cannot
                                      # touch the line (nor make a four) are proven lost at once
                                      # (freestyle and standard; :func:`_cut_siblings`). Sound, but
                                      # measured nothing: -10 [-25, +4.5] Elo at 400 visits and, with
                                      # the rest of session 12, -28 [-81, +24] at 1 s, so off
                                      # (benchmarks/results/s12)

    tree_vct_visits: int = 0          # > 0: a VCT search (gomoku_ai.vct) for the side to move at a
                                      # node below the root when a simulation reaches it with this
                                      # many visits, where the C core serves the rule; a VCT proves
                                      # the node won (0: off)
    tree_vct_nodes: int = 100         # ... its attacker-node limit (its VCFs: LEAF_VCF_NODES_NATIVE)
    tree_vct_depth: int = 3           # ... and its depth (threats before the final VCF)
    forced_pass: bool = True          # a node below the root with a single child (a forced reply:
                                      # the block of a four, mostly) is not evaluated; the
                                      # simulation goes on through its one move to the next node
                                      # (its value is that of the line below it). A fifth of the
                                      # nodes of a 15x15 search are such replies. 15x15, 800
                                      # visits, 100 games against False: +45 [+3, +89] Elo
                                      # (pentanomial; benchmarks/results/s30)
    random_symmetry: bool = True      # each leaf is evaluated through a random symmetry of the
                                      # board (evaluators that can, Evaluator.transforms: the
                                      # network), so that the network's asymmetric errors do not
                                      # repeat through the tree (its views of a position differ
                                      # on the best move one time in four)
    root_symmetries: bool = True      # the root's priors and value are the mean over all the
                                      # board's symmetries (evaluate_symmetric; a kept subtree's
                                      # root gets new priors so): one batch of 8 a move. Both
                                      # switches together, 15x15, 800 visits, 100 games against
                                      # neither: +56 [+13, +101] Elo (pentanomial); 20x20 +0
                                      # [-73, +73]; against AIWine at 1 s, both boards, +0.023 a
                                      # game [-0.037, +0.082]; ~5 % fewer simulations/s
                                      # (benchmarks/results/s31)
    lcb_z: float = 0.0                # > 0: the move to play (and the order of the root's candidates)
                                      # is by a lower confidence bound, Q - lcb_z / sqrt(N), among
                                      # the root children with at least lcb_min_share of the most
                                      # visited one's visits (not proven lost), instead of by visits
                                      # alone: a move the network rates low but the search rates
                                      # higher on fewer visits can be played (the idea of Leela
                                      # Zero's and KataGo's LCB selection, with one spread for all
                                      # children). 0: the most visited (the default). A
                                      # managed clock's settle test (time_verdict) still reads
                                      # visits alone
    lcb_min_share: float = 0.1
    eval_cache: int = 4096            # the network's outputs of this many recently evaluated
                                      # positions are kept (EvalCache; 0: off), so that a position
                                      # reached again (a transposition, or a branch of the last
                                      # move's tree) is not evaluated twice: on our side of match
                                      # games at 1,000 visits a move, 14 % fewer evaluations on
                                      # 20x20 (11-12 % more simulations/s) and 11 % on 15x15,
                                      # nearly all of the hits within the last 1,000 positions
                                      # (benchmarks/bench_eval_cache.py, results/s28).
                                      # Only for evaluators that say they are deterministic and
                                      # costly (Evaluator.cacheable)

    def __post_init__(self) -> None:
        checks.check_mcts_config(self)   # ConfigError (a ValueError) naming the field


def root_order(N: np.ndarray, Q: np.ndarray, cfg: MCTSConfig) -> np.ndarray:
    """The root children's indices, the move to play first, from their visits ``N`` and values ``Q``
    (side to move at the root): by visits (ties: higher Q), proven losses last; with ``cfg.lcb_z`` > 0,
    the children with at least ``cfg.lcb_min_share`` of the most visits first, by Q - lcb_z / sqrt(N)."""
    q = np.clip(Q, -1, 1)
    lost = Q <= LOSS_Q
    key = N + 1e-3 * q
    key[lost] = -1.0
    if cfg.lcb_z > 0 and len(N) > 1:
        top = float(N.max())
        ok = (N >= max(1.0, cfg.lcb_min_share * top)) & ~lost
        if ok.any():
            # the eligible children rank above the rest (whose key stays their visits, < 2 + top)
            key = np.where(ok, top + 4.0 + q - cfg.lcb_z / np.sqrt(np.maximum(N, 1.0)), key)
    return np.argsort(-key, kind="stable")


def leaf_vcf_budget(cfg: MCTSConfig, board: Board) -> int:
    """The leaf VCF's attacker-node budget for searches of ``board``: ``cfg.leaf_vcf_nodes``, or
    where that is None, the default for the prover that serves the board's rule
    (:data:`LEAF_VCF_NODES_NATIVE` or :data:`LEAF_VCF_NODES_PYTHON`). 0: no leaf VCF."""
    if cfg.leaf_vcf_nodes is not None:
        return cfg.leaf_vcf_nodes
    return LEAF_VCF_NODES_NATIVE if native.serves(board) else LEAF_VCF_NODES_PYTHON


def config_overrides(text: str) -> Dict[str, Any]:
    """Parse ``"c_puct=1.2,fpu_reduction=0.3"`` (the ``PYGOMOKU_MCTS`` A/B switch) into
    :class:`MCTSConfig` field values, each converted to its field's type (bool: 0/1, true/false).
    An unknown field, a malformed item or a value of the wrong type is a
    :class:`~gomoku_ai.checks.ConfigError` naming it; the values' ranges are checked when the
    config is built (``dataclasses.replace``)."""
    kinds = {f.name: type(getattr(MCTSConfig(), f.name)) for f in dataclasses.fields(MCTSConfig)}
    kinds["leaf_vcf_nodes"] = int       # None by default (leaf_vcf_budget); set, a count
    return checks.field_values(text, kinds, "PYGOMOKU_MCTS")


def with_overrides(cfg: MCTSConfig, text: str) -> MCTSConfig:
    """``cfg`` with the fields of ``text`` (:func:`config_overrides`) replaced; ``cfg`` itself when there
    are none. A bad field, value or range is a :class:`~gomoku_ai.checks.ConfigError` naming it."""
    overrides = config_overrides(text)
    return dataclasses.replace(cfg, **overrides) if overrides else cfg


_Path = List[Tuple[Node, int]]            # (node, child index) from the root down
_Leaf = Tuple[_Path, Node, Any, Tuple[int, int], int]  # a leaf to evaluate: its path, node,
                                          # prepared input, eval_key and symmetry id
_Evaluated = Tuple[np.ndarray, np.ndarray, float]   # logits, values, seconds in the evaluator


# ============================================================================ the evaluation cache
class EvalCache:
    """The evaluator's outputs (logits over every square, value for the side to move) of the
    positions evaluated last, at most ``capacity`` of them, the least recently used dropped first.

    A key is :func:`eval_key`: the stones, the side to move and the last move, i.e. everything the
    network's input planes hold but the board's size and walls, for which the owner keeps one
    cache (:meth:`SearchTree.attach` clears it when they change)."""

    def __init__(self, capacity: int) -> None:
        self._d: "OrderedDict[Tuple[int, int], Tuple[np.ndarray, float]]" = OrderedDict()
        self._capacity = capacity

    @property
    def capacity(self) -> int:
        """The most entries kept; lowering it drops the least recently used at once."""
        return self._capacity

    @capacity.setter
    def capacity(self, n: int) -> None:
        self._capacity = n
        self._trim()

    def _trim(self) -> None:
        while len(self._d) > max(0, self._capacity):
            self._d.popitem(last=False)

    def __len__(self) -> int:
        return len(self._d)

    def get(self, key: Tuple[int, int]) -> Optional[Tuple[np.ndarray, float]]:
        """(logits, value) stored for ``key`` (marked as just used), or None."""
        hit = self._d.get(key)
        if hit is not None:
            self._d.move_to_end(key)
        return hit

    def put(self, key: Tuple[int, int], logits: np.ndarray, value: float) -> None:
        """Keep a copy of ``logits`` (float32, one per square) and ``value`` for ``key``."""
        if self._capacity <= 0:
            return
        self._d[key] = (np.array(logits, np.float32), float(value))
        self._d.move_to_end(key)
        self._trim()

    def clear(self) -> None:
        self._d.clear()


def eval_key(board: Board) -> Tuple[int, int]:
    """The :class:`EvalCache` key of ``board``: its Zobrist hash (stones and side to move) and its
    last move (-1: none), the parts of the network's input that vary within a game."""
    return board.hash, (board.moves[-1] if board.moves else -1)


def eval_cache_bytes(entries: int, n_squares: int) -> int:
    """The most memory (bytes) an evaluation cache of ``entries`` entries holds on a board of
    ``n_squares`` squares: float32 logits and about 200 bytes of bookkeeping per entry."""
    return entries * (4 * n_squares + 200)


# ============================================================================ the node store
class SearchTree:
    """The node store of a search: the root, its position key for reuse, the node count, and how
    nodes are made (the fives at creation; the children, priors and value at expansion).

    :meth:`attach` and :meth:`expand` say when the root has just got priors, so that the owner
    can run its :meth:`MCTS.prepare_root` hook. ``cfg`` and ``rng`` are shared with the owning
    :class:`MCTS` (the tree holds no reference back to it).
    """

    def __init__(self, cfg: MCTSConfig, rng: np.random.Generator) -> None:
        self.cfg = cfg
        self.rng = rng
        self.root: Optional[Node] = None
        self.key: Tuple[Any, ...] = ()    # (width, height, rule, walls, moves, side to move)
        self.n_nodes = 0
        self.board: Optional[Board] = None      # the board being searched (played forward/back)
        self.restrict: Optional[Set[int]] = None  # allowed root children, None: all
        self._near_root: np.ndarray = np.zeros((0, 0), bool)
        self._root_len = 0
        self._ctx: Optional[tactics._Ctx] = None  # the tactics view of ``board`` (set by attach)
        #: _NODE_OPS when the C core serves ``board`` (set by attach), and the board's arguments
        #: for it (:func:`gomoku_ai.native.geometry`)
        self.node_ops: Optional[native.NodeOps] = None
        self.geometry: Tuple[int, int, int, int] = (0, 0, 0, 0)
        self.leaf_vcf_nodes = 0                 # leaf_vcf_budget for ``board`` (set by attach)
        #: the leaf VCF searches' transposition table (Board.hash -> fours searched without a
        #: VCF), kept across moves and searches of the same board (size, rule, walls), dropped
        #: past LEAF_VCF_TT_MAX entries
        self.vcf_tt: Dict[int, int] = {}
        self._vcf_tt_key: Tuple[Any, ...] = ()
        #: the evaluator's outputs of recent positions (cfg.eval_cache entries), kept like vcf_tt
        self.eval_cache = EvalCache(cfg.eval_cache)

    def reset(self) -> None:
        """Forget the tree."""
        self.root = None
        self.key = ()
        self.n_nodes = 0

    # ------------------------------------------------------------------ tree reuse
    def attach(self, board: Board, restrict: Optional[Set[int]]) -> bool:
        """Point the search at ``board``: keep the subtree of the moves played since, if any.
        ``restrict``: the root's children are limited to these moves (None: no limit); a kept
        subtree keeps the statistics of the children it allows (:meth:`_restrict_kept`).
        True when the root is a kept subtree that already has priors."""
        before = self.restrict          # the current root's restriction (None: it has none)
        self.restrict = restrict
        self.board = board
        self._ctx = tactics._Ctx(board)
        self.node_ops = _NODE_OPS if _NODE_OPS is not None and native.serves(board) else None
        self.geometry = native.geometry(board)
        self.leaf_vcf_nodes = leaf_vcf_budget(self.cfg, board)
        self._root_len = len(board.moves)
        self._near_root = movegen.near_mask(board, self.cfg.radius)

        walls = tuple(sorted(int(m) for m in np.flatnonzero(board.cells.reshape(-1) == WALL)))
        key_prefix = (board.width, board.height, board.rule, walls)
        tt_key = key_prefix + (board.n,)
        if tt_key != self._vcf_tt_key:
            self.vcf_tt = {}
            self.eval_cache.clear()
            self._vcf_tt_key = tt_key
        self.eval_cache.capacity = self.cfg.eval_cache
        moves = tuple(board.moves)
        node = self._kept_subtree(key_prefix, moves, board.side_to_move)
        if node is not None and node is self.root and before is not None and restrict != before:
            node = None         # the same root searched again under another restriction, or none
        if node is not None and restrict is not None and node.expanded and \
                not self._restrict_kept(node, restrict):
            node = None
        if node is None or node.terminal is not None:
            reused = False
            self.n_nodes = 1
            node = Node()
            self.init_root_threats(node, board)
        else:
            reused = True
            self.n_nodes = self.count(node)
            if node.expanded and self.cfg.root_fpu_on_reuse:
                self._root_fpu(node)
        self.root = node
        self.key = key_prefix + (moves, board.side_to_move)
        return reused and node.expanded

    def _root_fpu(self, node: Node) -> None:
        """Give the unvisited children of a kept ``node`` (about to become the root) the root's
        first-play urgency: it was expanded below the root, with the smaller non-root value
        (node value - ``fpu_reduction``), which narrows what a reused root tries."""
        open_ = (node.N <= 0) & (node.Q > LOSS_Q) & (node.Q < WIN_Q)
        node.Q[open_] = node.value - self.cfg.fpu_reduction_root

    @staticmethod
    def _restrict_kept(node: Node, restrict: Set[int]) -> bool:
        """Limit the children of the kept, expanded ``node`` (about to become the root) to the
        moves of ``restrict``, keeping their visits, values and subtrees, with the priors
        renormalised over them. The children are those a fresh root would get: its candidates
        that are in ``restrict``, all of them when none is. False (start a fresh root instead)
        when ``node`` is already proven, since its proof may rest on a child now left out."""
        if node.proven != 0:
            return False
        keep = [i for i, m in enumerate(node.moves.tolist()) if m in restrict]
        if not keep or len(keep) == len(node.moves):
            return True
        idx = np.asarray(keep, np.int64)
        node.moves = node.moves[idx]
        p = node.P[idx]
        node.P = p / p.sum() if p.sum() > 0 else np.full(len(idx), 1.0 / len(idx))
        node.N = node.N[idx]
        node.W = node.W[idx]
        node.Q = node.Q[idx]
        node.PU = explore_terms(node)
        node.children = [node.children[i] for i in keep]
        node.n = 1 + int(node.N.sum())
        node.n_lost = sum(1 for ch in node.children if ch is not None and ch.proven == 1)
        if node.n_lost == len(keep):
            node.proven = -1
        return True

    def _kept_subtree(self, key_prefix: Tuple[Any, ...], moves: Tuple[int, ...],
                      side_to_move: int) -> Optional[Node]:
        """The node of the current tree at the position reached by ``moves``, when the board
        (``key_prefix``) is the same and ``moves`` extend the current root's; else None."""
        if self.root is None or self.key[:4] != key_prefix:
            return None
        old: Tuple[int, ...] = self.key[4]
        old_side: int = self.key[5]
        expected_side = old_side if (len(moves) - len(old)) % 2 == 0 else opponent(old_side)
        if moves[:len(old)] != old or side_to_move != expected_side:
            return None
        node: Optional[Node] = self.root
        for m in moves[len(old):]:
            if node is None or not node.expanded:
                return None
            hit = np.flatnonzero(node.moves == m)
            node = node.children[int(hit[0])] if len(hit) else None
        return node

    @staticmethod
    def count(node: Node) -> int:
        """Number of nodes in the subtree of ``node`` (itself included)."""
        total, stack = 0, [node]
        while stack:
            nd = stack.pop()
            total += 1
            stack.extend(c for c in nd.children if c is not None)
        return total

    # ------------------------------------------------------------------ node creation
    def init_root_threats(self, node: Node, board: Board) -> None:
        """Fives for both sides at the root, by a scan of the squares near stones."""
        if board.winner is not None:
            # the side that just moved has won: the side to move has lost
            node.terminal = -1.0
            return
        me = board.side_to_move
        opp = opponent(me)
        cands = self.candidates_all(board)
        node.my_fives = [m for m in cands if board.makes_five(m, me)]
        node.opp_fives = [m for m in cands if board.makes_five(m, opp)]
        if node.my_fives:
            node.proven = 1
            node.win_move = node.my_fives[0]
        elif board.is_full():
            node.terminal = 0.0

    def candidates_all(self, board: Board) -> List[int]:
        """Empty squares within ``radius`` of a stone: the root's mask plus the moves since
        (ascending)."""
        if _TREE_OPS is not None:
            return _TREE_OPS.near_candidates(self._near_root, board._buf, board.width, board.height,
                                             board.moves, self._root_len, self.cfg.radius)
        near = self._near_root.copy()
        r = self.cfg.radius
        w = board.width
        for m in board.moves[self._root_len:]:
            x, y = m % w, m // w
            near[max(0, y - r):y + r + 1, max(0, x - r):x + r + 1] = True
        return np.flatnonzero(near & (board.cells == EMPTY)).tolist()

    # ------------------------------------------------------------------ expansion
    def set_candidates(self, node: Node, board: Board) -> None:
        """Choose the children of ``node``; ``board`` must be at the node's position."""
        cands: List[int]
        if node.opp_fives:
            cands = sorted(set(node.opp_fives))
        elif board.moves:
            cands = (_three_replies(board, self._ctx, self) if self.cfg.three_replies else None) \
                or self.candidates_all(board)
        else:
            h, w = board.height, board.width
            cx, cy = w // 2, h // 2
            cands = [y * w + x for y in range(max(0, cy - 2), min(h, cy + 3))
                     for x in range(max(0, cx - 2), min(w, cx + 3)) if board.is_empty(y * w + x)]
            if not cands:
                cands = board.empty_squares()
        cands = movegen.without_forbidden(board, cands)
        if self.restrict is not None and node is self.root:
            kept = [m for m in cands if m in self.restrict]
            cands = kept or cands
        node.moves = np.asarray(cands, np.int32)

    def expand(self, node: Node, logits: np.ndarray, value: float, is_root: bool) -> bool:
        """Attach priors (softmax of ``logits`` over the chosen children) and the leaf value
        (side to move's view); a node without children is a proven loss or a draw. True when
        ``node`` is the root (``is_root``) and got priors."""
        cands = node.moves
        k = len(cands)
        node.value = value
        node.expanded = True
        if k == 0:
            node.proven = -1 if node.opp_fives else 0
            if node.proven == 0:
                node.terminal = 0.0   # no legal move left for this side: a draw
            node.moves = _EMPTY_MOVES
            return False
        moves = cands
        p = priors(logits, moves, self.cfg.policy_temp)
        if is_root and self.cfg.dirichlet_alpha > 0 and k > 1:
            noise = self.rng.dirichlet([self.cfg.dirichlet_alpha] * k)
            f = self.cfg.noise_fraction
            p = (1 - f) * p + f * noise
        node.moves = moves
        node.P = p
        node.N = np.zeros(k)
        node.W = np.zeros(k)
        fpu = value - (self.cfg.fpu_reduction_root if is_root else self.cfg.fpu_reduction)
        node.Q = np.full(k, fpu)
        node.PU = p.copy()
        node.children = [None] * k
        return is_root and node is self.root


def _init_threats(tree: SearchTree, child: Node, parent: Node, m: int, board: Board) -> None:
    """Fives at ``child`` (reached by move ``m``; ``board`` at the child's position) derived from
    ``parent`` plus the lines of ``m`` (in C where ``tree`` has its node_ops: the same lists)."""
    me = board.side_to_move            # side to move at the child
    ops = tree.node_ops
    theirs: Optional[List[int]]
    if ops is not None:
        mine, theirs = ops.child_fives(board._buf, *tree.geometry, m, me, parent.opp_fives,
                                       parent.my_fives)
    else:
        mine = [s for s in parent.opp_fives if s != m and board.makes_five(s, me)]
        opp = opponent(me)
        theirs = None if mine else _new_fives(board, m, opp) + \
            [s for s in parent.my_fives if s != m and board.makes_five(s, opp)]
    child.my_fives = mine
    if mine:
        child.proven = 1
        child.win_move = mine[0]
        return
    assert theirs is not None
    child.opp_fives = theirs
    if board.is_full():
        child.terminal = 0.0


# ============================================================================ selection and backup
def _descend(tree: SearchTree, board: Board, stats: SearchStats
             ) -> Tuple[_Path, Optional[Node], Optional[float]]:
    """Select from ``tree``'s root down to a leaf, pushing the moves on ``board`` and adding
    virtual loss; a new child is created (and kept while the tree is under ``max_nodes``).

    Returns (path, leaf, value): value is set for terminal/proven leaves (backed up at once);
    leaf is a new node to evaluate; (path, None, None) signals a collision.
    """
    node = tree.root
    assert node is not None, "attach() first"
    path: _Path = []
    cfg = tree.cfg
    vl = cfg.virtual_loss
    c = cfg.c_puct
    select_vl = _TREE_OPS.select_vl if _TREE_OPS is not None else None
    while True:
        if node.terminal is not None:
            return path, node, node.terminal
        if node.proven:
            return path, node, float(node.proven)
        if not node.expanded:
            # an unexpanded node below the root is a leaf pending in this batch: a collision
            return (path, None, None) if path else (path, node, None)
        if tree.leaf_vcf_nodes and path and not node.vcf_checked and node.n + 1 >= cfg.leaf_vcf_after:
            line = _leaf_vcf(tree, node, stats)
            if line is not None:
                if cfg.leaf_vcf_cut:
                    stats.leaf_vcf_cuts += _cut_siblings(tree, board, path[-1], line)
                return path, node, 1.0
        if cfg.tree_vct_visits and path and not node.vct_checked and node.n + 1 >= cfg.tree_vct_visits:
            if _tree_vct(tree, board, node, stats):
                return path, node, 1.0
        if select_vl is not None:   # the same selection and virtual loss, in C
            i = select_vl(node.Q, node.PU, node.P, node.N, node.W, node.n, c, vl, LOSS_Q, WIN_Q)
        else:
            i = select_child(node, c)
            # virtual loss: count the visit now, as a loss for the mover
            N, W = node.N, node.W
            N[i] += vl
            W[i] -= vl
            if node.Q[i] > LOSS_Q and node.Q[i] < WIN_Q:
                node.Q[i] = W[i] / N[i]
            node.PU[i] = node.P[i] / (1.0 + N[i])
        path.append((node, i))
        m = int(node.moves[i])
        board.push_quiet(m)     # never a five: a node with a five-point is proven, left above
        if len(path) > stats.max_depth:
            stats.max_depth = len(path)
        child = node.children[i]
        if child is None:
            child, value = _new_child(tree, board, node, i, m, stats)
            return path, child, value
        node = child


def _new_child(tree: SearchTree, board: Board, node: Node, i: int, m: int,
               stats: SearchStats) -> Tuple[Node, Optional[float]]:
    """Create child ``i`` of ``node`` (reached by move ``m``, already pushed on ``board``), kept
    while the tree is under ``max_nodes``: :func:`_descend`'s leaf and its value when it is
    terminal or proven (else None)."""
    cfg = tree.cfg
    child = Node()
    _init_threats(tree, child, node, m, board)
    stats.new_nodes += 1
    if tree.leaf_vcf_nodes and cfg.leaf_vcf_after <= 0:
        _leaf_vcf(tree, child, stats)   # (no sibling cut: the child may not be kept)
    if tree.n_nodes < cfg.max_nodes:
        node.children[i] = child
        tree.n_nodes += 1
    if child.terminal is not None:
        return child, child.terminal
    if child.proven:
        return child, float(child.proven)
    return child, None


def _pass_forced(tree: SearchTree, board: Board, path: _Path, leaf: Node, stats: SearchStats
                 ) -> Tuple[Node, Optional[float]]:
    """While the new ``leaf`` (below the root, its candidates set, ``board`` at its position) has a
    single child, expand it without an evaluation (prior 1, value 0: only its one edge reads it)
    and go on through that move (virtual loss on the edge, as :func:`_descend` does) to the next
    node (:attr:`MCTSConfig.forced_pass`), each step appended to ``path``. Returns the node reached
    and its value when it is terminal or proven (else None: its candidates are set, it needs an
    evaluation). The edge bookkeeping repeats :func:`_descend`'s on purpose: that loop stays
    inline (one function call per level costs the hot path more than these few lines)."""
    vl = tree.cfg.virtual_loss
    while len(leaf.moves) == 1:
        leaf.expanded = True
        leaf.P = np.ones(1)
        leaf.N = np.full(1, vl)
        leaf.W = np.full(1, -vl)
        leaf.Q = leaf.W / leaf.N    # virtual_loss > 0 (MCTSConfig's check)
        leaf.PU = leaf.P / (1.0 + leaf.N)
        leaf.children = [None]
        path.append((leaf, 0))
        m = int(leaf.moves[0])
        board.push_quiet(m)     # never a five: a node that has one is proven
        stats.forced_passes += 1
        if len(path) > stats.max_depth:
            stats.max_depth = len(path)
        leaf, value = _new_child(tree, board, leaf, 0, m, stats)
        if value is not None:
            return leaf, value
        tree.set_candidates(leaf, board)
    return leaf, None


def _leaf_vcf(tree: SearchTree, node: Node, stats: SearchStats) -> Optional[List[int]]:
    """Search a VCF for the side to move at ``node`` (the tree's board is at its position), once per
    node, within ``tree.leaf_vcf_nodes`` attacker nodes. One found proves the node won, so the move that
    led to it is a proven loss for its mover (MCTS-solver backup). The VCF line when it was proven,
    else None."""
    node.vcf_checked = True
    ctx = tree._ctx
    if node.proven or node.terminal is not None or ctx is None:
        return None
    tt = None
    if tree.cfg.leaf_vcf_tt:
        if len(tree.vcf_tt) > LEAF_VCF_TT_MAX:
            tree.vcf_tt = {}
        tt = tree.vcf_tt
    res = tactics._vcf_in(ctx, tree.leaf_vcf_nodes, None, tt=tt)
    if not res.line:
        return None
    node.proven = 1
    node.win_move = res.line[0]
    stats.leaf_vcf_wins += 1
    return list(res.line)


def _tree_vct(tree: SearchTree, board: Board, node: Node, stats: SearchStats) -> bool:
    """Search a VCT for the side to move at ``node`` (``board`` at its position, unchanged on
    return), once per node, within ``tree_vct_nodes`` attacker nodes and no clock (so that a
    visit-limited search stays deterministic). One found proves the node won, as the leaf VCF does.
    Only where the C core serves the rule (the Python VCT costs too much per node). True when the
    node was proven."""
    node.vct_checked = True
    cfg = tree.cfg
    if node.proven or node.terminal is not None or not native.serves(board):
        return False
    stats.tree_vct_searches += 1
    res = vct.vct_search(board, max_depth=cfg.tree_vct_depth, node_limit=cfg.tree_vct_nodes,
                         vcf_nodes=LEAF_VCF_NODES_NATIVE)
    if not res.line:
        return False
    node.proven = 1
    node.win_move = res.line[0]
    stats.tree_vct_wins += 1
    return True


def _cut_siblings(tree: SearchTree, board: Board, edge: Tuple[Node, int], line: List[int]) -> int:
    """After the leaf VCF refuted the move of ``edge`` = (parent, index) with ``line`` (``board`` at the
    child's position, restored on return): when ``line`` also wins from the parent's position as if
    its side to move had passed (replayed, :func:`tactics.is_vcf_line`), every other child of the
    parent is lost unless its move lies within n steps of a square of ``line`` on one of the four
    lines, or makes a four or five: any other stone can neither occupy, block nor lengthen a step
    of the line, nor make a counter-four with the defender's forced replies (the argument of
    :func:`tactics.find_vcf_defences`, which narrows its candidates the same way). Those children
    get the proven-loss value (they are not visited again, and the parent is proven lost when
    none is left). FREESTYLE and STANDARD only (renju's forbidden points and caro's blocked ends
    make "cannot touch" depend on more than distance). Returns the number of moves cut."""
    parent, i = edge
    ctx = tree._ctx
    if ctx is None or parent.proven or board.rule not in (Rule.FREESTYLE, Rule.STANDARD) or \
            len(parent.moves) - parent.n_lost <= 1:
        return 0
    m = board.pop()
    try:
        board.pass_turn()
        try:
            valid = tactics.is_vcf_line(board, line)
        finally:
            board.pass_turn()
        if not valid:
            return 0
        keep = tactics._relevant(ctx, line)
        me = board.side_to_move
        keep.update(f.move for f in tactics._four_moves(ctx, me, check_forbidden=False))
        keep.update(tactics._five_points(ctx, me))
    finally:
        board.push_quiet(m)
    Q = parent.Q
    cut = 0
    for j, mv in enumerate(parent.moves.tolist()):
        if j != i and mv not in keep and LOSS_Q < Q[j] < WIN_Q:
            Q[j] = LOSS_Q
            parent.PU[j] = 0.0          # never selected again (see _backup)
            parent.n_lost += 1
            cut += 1
    # the refuted edge itself is counted by the backup (its child is proven); the parent is
    # proven lost there too when every child is lost
    return cut


def _backup(path: _Path, value: Optional[float], vl: float, fpu_reduction: float) -> None:
    """Undo virtual loss ``vl`` along ``path`` and add ``value`` (leaf side-to-move's view);
    ``value`` None only reverts. Propagates proven results; an edge left without visits gets
    back its first-play-urgency value (node value - ``fpu_reduction``)."""
    v = value
    edge = _TREE_OPS.backup_edge if _TREE_OPS is not None else None
    for node, i in reversed(path):
        if edge is not None:
            child = node.children[i]
            if child is None or not child.proven:   # the common edge, in C (the same arithmetic)
                if v is not None:
                    v = -v
                    node.n += 1
                edge(node.Q, node.PU, node.P, node.N, node.W, i, vl, v,
                     node.value - fpu_reduction, LOSS_Q, WIN_Q)
                continue
        N, W = node.N, node.W
        if vl:
            N[i] -= vl
            W[i] += vl
        if v is not None:
            v = -v
            N[i] += 1.0
            W[i] += v
            node.n += 1
        child = node.children[i]
        if child is not None and child.proven and node.Q[i] > LOSS_Q and node.Q[i] < WIN_Q:
            if child.proven == -1:
                node.Q[i] = WIN_Q
                if node.proven == 0:
                    node.proven = 1
                    node.win_move = int(node.moves[i])
            else:
                node.Q[i] = LOSS_Q
                node.n_lost += 1
                if node.n_lost == len(node.moves) and node.proven == 0:
                    node.proven = -1
        elif node.Q[i] > LOSS_Q and node.Q[i] < WIN_Q:
            node.Q[i] = W[i] / N[i] if N[i] > 0 else node.value - fpu_reduction
        # a proven loss gets no exploration term: LOSS_Q alone does not outweigh it for a
        # well-liked move once the parent has thousands of visits
        node.PU[i] = 0.0 if node.Q[i] <= LOSS_Q else node.P[i] / (1.0 + N[i])


# ============================================================================ the search
class MCTS:
    """A search tree over one game; reuse it between moves with :meth:`search` on later positions.

    The driver: :meth:`search` runs batches of simulations (gather leaves with
    :func:`_descend`, evaluate them, expand and :func:`_backup`), optionally pipelined with a
    second thread; the tree itself is a :class:`SearchTree` (:attr:`tree`).
    """

    def __init__(self, evaluator: Evaluator, config: Optional[MCTSConfig] = None,
                 seed: int = 0) -> None:
        self.evaluator = evaluator
        self.tree = SearchTree(config or MCTSConfig(), np.random.default_rng(seed))
        self._sym_rng = random.Random(seed)     # the leaves' symmetries (MCTSConfig.random_symmetry)
        self._transforms: Tuple[int, ...] = (0,)
        self._averaged: Optional[Node] = None   # the root whose priors are already the mean
        self._pool: Optional[ThreadPoolExecutor] = None
        self._inflight: Optional[Tuple[List[_Leaf], "Future[_Evaluated] | PendingEvaluation"]] = None
        #: where batches are evaluated while the next is gathered (a network in a second process,
        #: :class:`gomoku_ai.net.evalworker.EvalWorker`); None: in this process. On an
        #: :class:`OffloadError` the batch is evaluated here and this is set back to None.
        self.offload: Optional[AsyncEvaluator] = None

    # ------------------------------------------------------------------ state
    @property
    def cfg(self) -> MCTSConfig:
        """The search parameters (shared with the tree; may be changed between searches)."""
        return self.tree.cfg

    @cfg.setter
    def cfg(self, value: MCTSConfig) -> None:
        self.tree.cfg = value

    @property
    def rng(self) -> np.random.Generator:
        """The random generator of the root noise and of :meth:`sample_move`."""
        return self.tree.rng

    @rng.setter
    def rng(self, value: np.random.Generator) -> None:
        self.tree.rng = value

    @property
    def root(self) -> Optional[Node]:
        """The root node (None before the first search and after :meth:`reset`)."""
        return self.tree.root

    @property
    def root_key(self) -> Tuple[Any, ...]:
        """The root's position: (width, height, rule, walls, moves, side to move)."""
        return self.tree.key

    @property
    def n_nodes(self) -> int:
        """Nodes kept in the tree."""
        return self.tree.n_nodes

    # ------------------------------------------------------------------ public
    def reset(self) -> None:
        """Forget the tree."""
        self.tree.reset()
        self._averaged = None

    def search(self, board: Board, visits: Optional[int] = None,
               deadline: Optional[float] = None, stop: Optional[threading.Event] = None,
               progress: Optional[Callable[["MCTS", SearchStats], None]] = None,
               progress_every_s: float = 0.25,
               restrict: Optional[Sequence[int]] = None,
               extend_to: Optional[float] = None) -> SearchStats:
        """Run simulations from ``board`` (left unchanged) until a limit is reached.

        ``visits``: stop when the root has this many visits (reused ones count, as in Leela);
        ``deadline``: a ``time.perf_counter()`` instant; ``stop``: an event set by another thread.
        ``extend_to`` (an instant after ``deadline``; for a game clock, where time saved on one
        move is spent on another): the clock is *managed* by :func:`time_verdict`: the search
        stops before the deadline once the best move is settled, and goes on past it, up to
        ``extend_to``, while it is not.
        ``restrict``: the root's children are limited to these moves (e.g. the defences against
        the opponent's VCF); a reused tree keeps what it knows of them.
        At least one simulation is always run so that the root is expanded.
        """
        t0 = time.perf_counter()
        stats = SearchStats()
        kept = self.tree.attach(board, None if restrict is None else set(int(m) for m in restrict))
        root = self.root
        assert root is not None
        cfg = self.cfg
        self._transforms = tuple(self.evaluator.transforms((board.height, board.width)))
        if kept:
            self._average_kept_root(root, board)
            self.prepare_root(root, reused=True)
        else:
            self._averaged = None   # (never keep the old tree alive through this reference)
        batch = max(1, int(self.evaluator.batch_size))
        if self.offload is not None:
            batch = cfg.offload_batch
        next_progress = t0 + progress_every_s
        while True:
            if root.proven != 0 or root.terminal is not None:
                stats.stopped_by = StopReason.SOLVED
                break
            if visits is not None and root.n >= visits and root.expanded:
                stats.stopped_by = StopReason.VISITS
                break
            if stats.simulations and stats.simulations % cfg.check_every < batch:
                now = time.perf_counter()
                if extend_to is not None and deadline is not None and root.expanded:
                    el = now - t0
                    verdict = time_verdict(root.N, root.Q, stats.simulations / max(el, 1e-6),
                                           el, deadline - t0, extend_to - t0)
                    if verdict is not None:
                        stats.stopped_by = verdict
                        break
                elif deadline is not None and now >= deadline:
                    stats.stopped_by = StopReason.TIME
                    break
                if progress is not None and now >= next_progress:
                    stats.elapsed_s = now - t0
                    progress(self, stats)
                    next_progress = now + progress_every_s
            if stop is not None and stop.is_set() and root.expanded:
                stats.stopped_by = StopReason.STOP
                break
            want = batch
            if visits is not None:
                want = max(1, min(batch, visits - root.n))
            if not root.expanded:
                want = 1
            if (cfg.pipeline or self.offload is not None) and batch > 1 and root.expanded:
                self._run_pipelined(want, stats)
            else:
                self._drain(stats)
                self._run_batch(want, stats)
        self._drain(stats)
        stats.elapsed_s = time.perf_counter() - t0
        if deadline is not None:
            stats.extended_s = max(0.0, t0 + stats.elapsed_s - deadline)
        if progress is not None:
            progress(self, stats)
        return stats

    def close(self) -> None:
        """Stop the evaluation thread of a pipelined search (started on first use)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def prepare_root(self, node: Node, reused: bool) -> None:
        """Extension point, called once per search as soon as the root has priors: when a kept
        subtree becomes the root (``reused=True``) or right after a fresh root is expanded
        (``reused=False``). The base class does nothing; self-play adds Dirichlet noise here
        (:class:`gomoku_ai.training.selfplay.SelfPlayMCTS`). May change ``node.P``/``node.PU``."""

    # ------------------------------------------------------------------ results
    def best_move(self) -> int:
        """The move to play: a proven win, else the most visited child (ties: higher Q)."""
        root = self.root
        if root is None or not root.expanded and root.proven != 1:
            raise RuntimeError("search() has not expanded the root")
        if root.proven == 1:
            return int(root.win_move)
        if root.proven == -1:
            # every move loses: prefer the one the search resisted with longest (most visits)
            return int(root.moves[int(np.argmax(root.N))])
        return int(root.moves[int(root_order(root.N, root.Q, self.cfg)[0])])

    def sample_move(self, temperature: float) -> int:
        """Self-play: sample a root child with probability proportional to N^(1/temperature)."""
        root = self.root
        assert root is not None
        if root.proven == 1 or temperature <= 1e-3:
            return self.best_move()
        N = root.N.copy()
        N[root.Q <= LOSS_Q] = 0.0
        if N.sum() <= 0:
            return self.best_move()
        p = N ** (1.0 / temperature)
        p /= p.sum()
        return int(root.moves[int(self.rng.choice(len(p), p=p))])

    def root_visits(self, size: int) -> np.ndarray:
        """Visit counts of the root's children as a dense (size,) float32 array (policy target)."""
        out = np.zeros(size, np.float32)
        root = self.root
        if root is not None and root.expanded:
            out[root.moves] = root.N
        if root is not None and root.proven == 1 and out.sum() == 0:
            out[root.win_move] = 1.0
        return out

    def root_value(self) -> float:
        """Value of the root for its side to move: proven result, else visit-weighted Q."""
        root = self.root
        if root is None:
            return 0.0
        if root.proven:
            return float(root.proven)
        if root.terminal is not None:
            return root.terminal
        if not root.expanded or root.N.sum() <= 0:
            return root.value
        N = root.N
        q = np.clip(root.Q, -1, 1)
        return float((N * q).sum() / N.sum())

    def principal_variation(self, max_len: int = 20) -> List[int]:
        """Most-visited line from the root (proven wins followed first)."""
        pv: List[int] = []
        node = self.root
        while node is not None and len(pv) < max_len:
            if node.proven == 1:
                pv.append(int(node.win_move))
                i = int(np.flatnonzero(node.moves == node.win_move)[0]) \
                    if node.expanded and (node.moves == node.win_move).any() else -1
                node = node.children[i] if i >= 0 else None
                continue
            if not node.expanded or len(node.moves) == 0 or node.N.max() <= 0:
                break
            i = int(np.argmax(node.N))
            pv.append(int(node.moves[i]))
            node = node.children[i]
        return pv

    def top_moves(self, k: int = 5) -> List[Tuple[int, int, float, float]]:
        """Up to ``k`` root children as (move, visits, Q for the side to move, prior), best first in
        :func:`root_order`'s order, the one :meth:`best_move` plays by (visits, ties by Q, proven losses
        last; the lower confidence bound where ``cfg.lcb_z`` > 0), so that the first is the move
        played unless the root is proven."""
        root = self.root
        if root is None or not root.expanded:
            return []
        order = root_order(root.N, root.Q, self.cfg)[:k]
        return [(int(root.moves[i]), int(root.N[i]), float(np.clip(root.Q[i], -1, 1)),
                 float(root.P[i])) for i in order]

    # ------------------------------------------------------------------ batches
    def _run_batch(self, want: int, stats: SearchStats) -> None:
        """Gather up to ``want`` leaves, evaluate them in one call, expand and back them up."""
        board = self.tree.board
        assert board is not None
        pending = self._gather(want, stats)
        if not pending:
            return
        logits, values, el = self._evaluate_timed([p[2] for p in pending],
                                                  (board.height, board.width))
        self._finish(pending, logits, values, el, stats)

    def _gather(self, want: int, stats: SearchStats) -> List[_Leaf]:
        """Descend ``want`` times (virtual loss on each path); terminal and proven leaves are
        backed up at once, the others returned for evaluation (their paths keep the virtual loss)."""
        tree = self.tree
        board = tree.board
        assert board is not None
        pending: List[_Leaf] = []
        vl = tree.cfg.virtual_loss
        fpu = tree.cfg.fpu_reduction
        cache = self._cache()
        for _ in range(want):
            path, leaf, value = _descend(tree, board, stats)
            if leaf is not None and value is None:
                tree.set_candidates(leaf, board)
                if path and tree.cfg.forced_pass:
                    leaf, value = _pass_forced(tree, board, path, leaf, stats)
            if leaf is not None and value is None:
                key = eval_key(board)
                root_mean = not path and tree.cfg.root_symmetries and len(self._transforms) > 1
                hit = cache.get(key) if cache is not None and not root_mean else None
                if root_mean:
                    self._expand_averaged(leaf, board, key, stats)
                elif hit is None:
                    ks = self._transforms if tree.cfg.random_symmetry else (0,)
                    k = ks[self._sym_rng.randrange(len(ks))] if len(ks) > 1 else 0
                    pending.append((path, leaf, self.evaluator.prepare_transformed(board, k) if k
                                    else self.evaluator.prepare(board), key, k))
                else:       # evaluated before: expanded and backed up now, as _finish would
                    self._expand_backup(path, leaf, hit[0], hit[1])
                    stats.cache_hits += 1
                    stats.simulations += 1
            for _ in range(len(path)):
                board.pop()
            if value is not None:
                _backup(path, value, vl, fpu)
                stats.simulations += 1
            elif leaf is None:   # collision with a leaf already pending (this batch or in flight)
                _backup(path, None, vl, fpu)
                break
        return pending

    def _average_kept_root(self, root: Node, board: Board) -> None:
        """A kept subtree's ``root`` (``board`` at its position) gets, once, the mean priors over
        the board's symmetries (:attr:`MCTSConfig.root_symmetries`); its statistics stay."""
        cfg = self.cfg
        if cfg.root_symmetries and root is not self._averaged and len(self._transforms) > 1 \
                and len(root.moves) > 1:
            root.P = priors(evaluate_symmetric(self.evaluator, board)[0], root.moves, cfg.policy_temp)
            root.PU = explore_terms(root)
        self._averaged = root

    def _expand_averaged(self, root: Node, board: Board, key: Tuple[int, int], stats: SearchStats) -> None:
        """Expand the new ``root`` (``board`` at its position) with its evaluation through every
        symmetry (:attr:`MCTSConfig.root_symmetries`), kept in the cache in place of one view."""
        t = time.perf_counter()
        logits, value = evaluate_symmetric(self.evaluator, board)
        self._finish([([], root, None, key, 0)], logits[None], np.array([value]),
                     time.perf_counter() - t, stats)
        self._averaged = root

    def _finish(self, pending: List[_Leaf], logits: np.ndarray, values: np.ndarray,
                eval_s: float, stats: SearchStats) -> None:
        """Count one evaluated batch (``eval_s`` seconds inside the evaluator), expand the leaves
        of ``pending`` and back their values up."""
        stats.eval_s += eval_s
        stats.evaluations += len(pending)
        stats.batches += 1
        tree = self.tree
        cache = self._cache()
        board = tree.board
        assert board is not None
        shape = (board.height, board.width)
        for k, (path, leaf, _, key, sym) in enumerate(pending):
            v = float(values[k])
            lg = self.evaluator.restore(logits[k], sym, shape) if sym else logits[k]
            if cache is not None:
                cache.put(key, lg, v)
            self._expand_backup(path, leaf, lg, v)
            stats.simulations += 1

    def _cache(self) -> Optional[EvalCache]:
        """The tree's evaluation cache when this search uses one (MCTSConfig.eval_cache > 0 and a
        cacheable evaluator), else None."""
        tree = self.tree
        return tree.eval_cache if tree.cfg.eval_cache > 0 and self.evaluator.cacheable else None

    def _expand_backup(self, path: _Path, leaf: Node, logits: np.ndarray, value: float) -> None:
        """Expand ``leaf`` (its candidates already set) with the evaluator's ``logits`` and
        ``value`` (side to move's view) and back the value up ``path``, removing its virtual loss."""
        tree = self.tree
        if tree.expand(leaf, logits, value, is_root=not path):
            self.prepare_root(leaf, reused=False)
        if leaf.proven:
            value = float(leaf.proven)
        elif leaf.terminal is not None:
            value = leaf.terminal
        _backup(path, value, tree.cfg.virtual_loss, tree.cfg.fpu_reduction)

    def _evaluate_timed(self, items: List[Any], shape: Tuple[int, int]) -> _Evaluated:
        """The evaluator's (logits, values) for ``items`` and the seconds it took."""
        t = time.perf_counter()
        logits, values = self.evaluator.evaluate(items, shape)
        return logits, values, time.perf_counter() - t

    def _run_pipelined(self, want: int, stats: SearchStats) -> None:
        """Gather a batch while the previous one is evaluated by :attr:`offload` (another process)
        or else in the pool's thread (onnxruntime and numpy release the GIL), then finish the
        previous batch and submit this one. The tree is only touched by the calling thread."""
        board = self.tree.board
        assert board is not None
        pending = self._gather(want, stats)
        self._drain(stats)
        if not pending:
            return
        items = [p[2] for p in pending]
        shape = (board.height, board.width)
        fut: "Future[_Evaluated] | PendingEvaluation"
        if self.offload is not None:
            try:
                fut = self.offload.submit(items, shape)
            except OffloadError:
                self.offload = None
                self._finish(pending, *self._evaluate_timed(items, shape), stats)
                return
        else:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mcts-eval")
            fut = self._pool.submit(self._evaluate_timed, items, shape)
        self._inflight = (pending, fut)

    def _drain(self, stats: SearchStats) -> None:
        """Wait for the batch in flight, if any, and finish it (evaluated here when the offload
        fails; the offload is then dropped)."""
        if self._inflight is None:
            return
        pending, fut = self._inflight
        self._inflight = None
        try:
            logits, values, el = fut.result()
        except OffloadError:
            self.offload = None
            board = self.tree.board
            assert board is not None
            logits, values, el = self._evaluate_timed([p[2] for p in pending],
                                                      (board.height, board.width))
        self._finish(pending, logits, values, el, stats)


def _three_replies(board: Board, ctx: Optional[tactics._Ctx] = None,
                   tree: Optional[SearchTree] = None) -> Optional[List[int]]:
    """The only moves worth searching when the opponent's last move made an open three: the
    three's defence points (its straight-four points and the five-points of those fours) and every
    move that makes us a four. Any other move lets the opponent make a straight four, so this is a
    safe restriction (a superset of the non-losing moves). None when the last move made no open
    three, or the rule makes the three unreliable (caro's blocked ends; renju Black's threes, whose
    points may be forbidden). The side to move has no five-point of the opponent to block here.
    ``ctx``: the search's tactics view of ``board`` (made here when None); ``tree``: the search's
    tree, whose node_ops (when set) compute the same list in C."""
    if not board.moves or board.rule is Rule.CARO:
        return None
    me = board.side_to_move
    opp = opponent(me)
    if board.rule is Rule.RENJU and opp == BLACK:
        return None
    m = board.moves[-1]
    if board[m] != opp:
        return None
    if tree is not None and tree.node_ops is not None:
        return tree.node_ops.three_replies(board._buf, *tree.geometry, m, opp)
    if ctx is None or ctx.board is not board:
        ctx = tactics._Ctx(board)
    fd = ctx.fd
    points: Set[int] = set()
    for d in range(4):
        inf = ctx.info(m, d, opp)
        if inf.fpts or not inf.tpts:
            continue
        step = fd[d]
        for off in inf.tpts:
            t = m + off * step
            points.add(t)
            points.update(t + o * step for o in ctx.info(t, d, opp).fpts)
    if not points:
        return None
    points.update(f.move for f in tactics._four_moves(ctx, me, check_forbidden=False))
    return sorted(q for q in points if board.is_empty(q))


def priors(logits: np.ndarray, moves: np.ndarray, policy_temp: float) -> np.ndarray:
    """The priors of children ``moves``: the softmax of ``logits`` (over every square) at those
    squares, divided by ``policy_temp`` first (:attr:`MCTSConfig.policy_temp`); float64."""
    lg = logits[moves].astype(np.float64)
    if policy_temp != 1.0:
        lg /= policy_temp
    lg -= lg.max()
    p = np.exp(lg)
    p /= p.sum()
    return p


def explore_terms(node: Node) -> np.ndarray:
    """``P / (1 + N)`` of ``node``'s children (the ``PU`` array), 0 for a child proven lost (Q at
    LOSS_Q): such a child is never selected while another is open."""
    pu = node.P / (1.0 + node.N)
    pu[node.Q <= LOSS_Q] = 0.0
    return pu


def select_child(node: Node, c_puct: float) -> int:
    """Index of the child maximising Q + c_puct * P * sqrt(n + 1) / (1 + N) (ties: lowest index).

    ``n + 1`` rather than ``n`` so that the priors order the children from the first visit on.
    """
    return int((node.Q + (c_puct * math.sqrt(node.n + 1)) * node.PU).argmax())


def _new_fives(board: Board, m: int, color: int) -> List[int]:
    """Squares where ``color`` would make five using its stone at ``m`` (which must be on board)."""
    buf = board._buf
    pi = board._pad[m]
    n = board.n
    out: List[int] = []
    inv = None
    for step in board._dirs:
        for s in (step, -step):
            a = pi + s
            run = 1
            while buf[a] == color:
                a += s
                run += 1
            if buf[a] != EMPTY:
                continue
            b = a + s
            beyond = 0
            while buf[b] == color:
                b += s
                beyond += 1
            back = pi - s
            while buf[back] == color:
                back -= s
                run += 1
            if run + 1 + beyond >= n:
                if inv is None:
                    inv = _inverse_pad(board)
                sq = inv[a]
                if board.makes_five(sq, color):
                    out.append(sq)
    return out


_inv_cache: Dict[Tuple[int, int], Dict[int, int]] = {}


def _inverse_pad(board: Board) -> Dict[int, int]:
    """Square index of each padded-buffer index of ``board`` (cached per board size)."""
    key = (board.width, board.height)
    inv = _inv_cache.get(key)
    if inv is None:
        inv = {p: i for i, p in enumerate(board._pad)}
        _inv_cache[key] = inv
    return inv
