"""Self-play: games of the current network against itself, written as training shards and SGF.

Each game is played by the engine's own MCTS (tactics, solver and all) with the additions of
AlphaZero / KataGo self-play:

* **Dirichlet noise** on the root priors of every *full* search: ``alpha = noise_total / k`` for a
  root with ``k`` candidate moves (KataGo's total-concentration form; ``noise_total = 10``), mixed in
  with weight ``noise_fraction`` (0.25). Reused roots get fresh noise as well.
* **Temperature**: moves are sampled from the root visits with ``temperature`` for the first
  ``temp_moves`` plies after the opening, then ``temp_final`` (0 = the most visited move).
* **Playout-cap randomisation** (KataGo, Wu 2019): each move is a full search (``visits_full``)
  with probability ``p_full``, else a fast one (``visits_fast``, no noise). Only full-search
  positions become training positions (policy target = normalised root visits, ``move = -1``);
  every kept position gets the final result as value target. The SGF move comments say which
  kind of search chose each move (``full``/``fast``, visits, root value).
* **Tree reuse** between moves (the searcher keeps the subtree of the move played).
* **Resignation**: the side to move resigns when, over the last ``resign_plies`` plies (both
  sides' searches), every root value says it is losing by more than ``-resign_threshold``. In a
  fraction ``resign_disabled_fraction`` of the games resignation is off; there the first point
  where it *would* have resigned is remembered, the game is played out, and it counts as a false
  resignation when that side then won or drew. ``false_resign_rate`` = false resignations /
  games that would have resigned (KataGo and Leela Zero tune the threshold to keep it under ~5 %).
* **Openings**: a file (``records.read_openings`` formats) or 1-3 random stones near the centre.

Output, per batch of ``games_per_shard`` games (``<prefix>-<batch>.npz`` and
``sgf/<prefix>-<batch>.sgf``, both written atomically), plus one JSON line per batch appended to
``selfplay.jsonl``. A batch whose shard exists is not played again, so an interrupted run resumes.
Every line and every SGF game names the network version that played it (``model_version``,
``"<name>@<sha12>"`` of the weights; in the game comment ``GC``) and the worker that did
(``worker``; the SGF ``PC`` property).

Games are deterministic given ``seed``: game ``g`` draws all its randomness from
``SeedSequence([seed, g])``, batches are fixed ranges of games, and the network runs in one
onnxruntime thread; the output does not depend on the number of workers nor on the backend.

Batches are tasks of a worker pool (:mod:`gomoku_ai.workers`: local processes or Ray actors,
one thread each). A :class:`SelfPlayWorker` loads the network once per version, plays a batch and
*returns* it; the driver writes every file, so both backends and the in-process path
(``workers=0``) share one code path. Workers never import torch.
"""
from __future__ import annotations

import json
import numbers
import os
import sys
import time
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from .. import checks
from ..fileio import read_jsonl
from ..board import Board
from ..evaluator import Evaluator
from ..match import adjudicate
from ..mcts import MCTS, MCTSConfig, Node, explore_terms
from ..players import PlayerKind, as_spec, make_evaluator
from ..rules import BLACK, WHITE, Rule, Termination, opponent
from ..workers import ModelCache, ModelRef, Pool, Task, WorkerSpec, make_pool, resolve
from .dataset import Positions, save_shard
from .openings import Opening, openings_to_flat, random_opening

if TYPE_CHECKING:
    from ..net import Network

JSONL_NAME = "selfplay.jsonl"


# ============================================================================ configuration
@dataclass
class SelfPlayConfig:
    """Everything that shapes the games (see the module docstring)."""

    width: int = 15
    height: Optional[int] = None
    n: int = 5                          # winning length
    rule: str = "freestyle"
    visits_full: int = 400
    visits_fast: int = 64
    p_full: float = 0.25
    temperature: float = 1.0
    temp_moves: int = 8                 # plies after the opening played with ``temperature``
    temp_final: float = 0.0
    noise_total: float = 10.0           # Dirichlet alpha = noise_total / number of root children
    noise_fraction: float = 0.25
    resign_threshold: float = -0.90     # root value (side to move) below which it is losing
    resign_plies: int = 4               # consecutive plies (both sides) that must agree
    resign_disabled_fraction: float = 0.10
    opening_stones: Tuple[int, int] = (1, 3)   # random openings: min..max stones
    opening_radius: int = 2             # random stones within this distance of the centre
    max_plies: Optional[int] = None     # adjudicate a draw after this many plies (None: board full)
    games_per_shard: int = 8
    batch_size: int = 8                 # leaves per network call
    tree_reuse: bool = True
    mcts: Dict[str, Any] = field(default_factory=dict)   # MCTSConfig overrides (c_puct, ...)

    def __post_init__(self) -> None:
        checks.board_fields(self)
        checks.rule_name(self, "rule")
        checks.at_least(self, 1, "visits_full", "visits_fast", "batch_size")
        checks.fraction(self, "p_full", "noise_fraction", "resign_disabled_fraction")
        checks.non_negative(self, "temperature", "temp_moves", "temp_final", "resign_plies", "opening_radius",
                            "games_per_shard")
        checks.positive(self, "noise_total")
        checks.finite(self, "resign_threshold")
        st = self.opening_stones
        checks.require(isinstance(st, (tuple, list)) and len(st) == 2
                       and all(isinstance(k, numbers.Integral) for k in st) and 0 <= st[0] <= st[1],
                       self, "opening_stones", "a (min, max) pair of integers, 0 <= min <= max")
        checks.at_least(self, 1, "max_plies", allow_none=True)
        checks.require(isinstance(self.mcts, dict), self, "mcts", "a dict of MCTSConfig fields")
        try:
            MCTSConfig(**self.mcts)           # its __post_init__ checks the values
        except TypeError:
            checks.fail(self, "mcts", "a dict of MCTSConfig fields")
        except checks.ConfigError as e:
            checks.fail(self, "mcts", f"valid MCTSConfig overrides ({e})")

    def board(self) -> Board:
        return Board(self.width, self.height, Rule.parse(self.rule), self.n)

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "SelfPlayConfig":
        names = {f.name for f in fields(cls)}
        unknown = set(d) - names
        if unknown:
            raise ValueError(f"unknown self-play settings: {', '.join(sorted(unknown))}")
        d = dict(d)
        if "opening_stones" in d:
            d["opening_stones"] = tuple(d["opening_stones"])
        return cls(**d)


# ============================================================================ search with noise
class SelfPlayMCTS(MCTS):
    """MCTS whose root priors get Dirichlet noise while :attr:`noise` is on, on a fresh root (at
    its expansion) *and* on a reused one (at attach time): ``alpha = noise_total / k``.

    Uses the :meth:`~gomoku_ai.mcts.MCTS.prepare_root` hook, since the base class's own
    ``dirichlet_alpha`` only reaches roots expanded as roots, not reused subtrees.
    """

    def __init__(self, evaluator: Evaluator, config: Optional[MCTSConfig] = None, seed: int = 0,
                 noise_total: float = 10.0, noise_fraction: float = 0.25) -> None:
        config = config or MCTSConfig()
        config.dirichlet_alpha = 0.0       # noise is applied here, not by the base class
        super().__init__(evaluator, config, seed)
        self.noise = False
        self.noise_total = noise_total
        self.noise_fraction = noise_fraction
        self.noised_roots = 0

    def _add_noise(self, node: Node) -> None:
        k = len(node.moves)
        if k < 2 or self.noise_fraction <= 0:
            return
        eta = self.rng.dirichlet(np.full(k, self.noise_total / k))
        p = (1.0 - self.noise_fraction) * node.P + self.noise_fraction * eta
        node.P = p
        node.PU = explore_terms(node)
        self.noised_roots += 1

    def prepare_root(self, node: Node, reused: bool) -> None:
        if self.noise and node.proven == 0:
            self._add_noise(node)


# ============================================================================ resignation
class ResignTracker:
    """Root values of consecutive plies; says who resigns.

    ``update(stm, value)`` records the root value of the side to move and returns ``stm`` when,
    over the last ``plies`` plies, every value seen from ``stm``'s side (own values as they are,
    the opponent's negated) is below ``threshold``; else None.
    """

    def __init__(self, threshold: float, plies: int) -> None:
        self.threshold = threshold
        self.plies = max(1, int(plies))
        self.history: List[Tuple[int, float]] = []

    def update(self, stm: int, value: float) -> Optional[int]:
        self.history.append((stm, float(value)))
        if len(self.history) < self.plies:
            return None
        for colour, v in self.history[-self.plies:]:
            mine = v if colour == stm else -v
            if not mine < self.threshold:
                return None
        return stm


def is_false_resignation(would_resign: Optional[int], winner: Optional[int]) -> Optional[bool]:
    """For a game played out with resignation off: None when nobody would have resigned, else
    whether the side that would have resigned went on to win or draw (``winner`` None = draw)."""
    if would_resign is None:
        return None
    return winner != opponent(would_resign)


# ============================================================================ one game
@dataclass
class GameResultInfo:
    """What one game produced (positions are full-search positions only)."""

    moves: List[int]
    opening_len: int
    winner: Optional[int]
    termination: Termination
    resign_enabled: bool
    would_resign: Optional[int]        # resignation off: who would have resigned (first time)
    would_resign_ply: Optional[int]
    resigned: Optional[int]            # resignation on: who resigned
    comments: Dict[int, str]
    cells: List[np.ndarray]
    stm: List[int]
    last: List[int]
    pi: List[np.ndarray]
    full_moves: int = 0
    fast_moves: int = 0
    simulations: int = 0
    evaluations: int = 0

    @property
    def false_resign(self) -> Optional[bool]:
        if self.resign_enabled:
            return None
        return is_false_resignation(self.would_resign, self.winner)


def play_game(evaluator: Evaluator, cfg: SelfPlayConfig, game_seed: Sequence[int],
              openings: Optional[List[Opening]] = None) -> GameResultInfo:
    """Play one self-play game; all randomness comes from ``SeedSequence(game_seed)``."""
    ss = np.random.SeedSequence(list(game_seed))
    s_game, s_mcts = ss.spawn(2)
    rng = np.random.default_rng(s_game)
    board = cfg.board()
    size = board.size
    mcfg = MCTSConfig(**cfg.mcts)
    mcts = SelfPlayMCTS(evaluator, mcfg, seed=int(s_mcts.generate_state(1)[0]),
                        noise_total=cfg.noise_total, noise_fraction=cfg.noise_fraction)
    resign_enabled = bool(rng.random() >= cfg.resign_disabled_fraction)
    if openings:
        opening = openings[int(rng.integers(len(openings)))]
    else:
        opening = random_opening(board, rng, cfg.opening_stones, cfg.opening_radius)
    comments: Dict[int, str] = {}
    for m in opening:
        if not board.is_empty(m):
            raise ValueError(f"opening {opening} repeats a square")
        comments[len(board.moves)] = "opening"
        if board.push(m):
            raise ValueError(f"opening {opening} already ends the game")
    info = GameResultInfo(moves=[], opening_len=len(opening), winner=None,
                          termination=Termination.BOARD_FULL, resign_enabled=resign_enabled,
                          would_resign=None, would_resign_ply=None, resigned=None,
                          comments=comments, cells=[], stm=[], last=[], pi=[])
    tracker = ResignTracker(cfg.resign_threshold, cfg.resign_plies)
    ply = 0
    while True:
        end = adjudicate(board, cfg.max_plies)
        if end is not None:
            info.winner, info.termination, _ = end
            break
        full = bool(rng.random() < cfg.p_full)
        visits = cfg.visits_full if full else cfg.visits_fast
        if not cfg.tree_reuse:
            mcts.reset()
        mcts.noise = full and cfg.noise_fraction > 0
        st = mcts.search(board, visits=visits)
        info.simulations += st.simulations
        info.evaluations += st.evaluations
        value = mcts.root_value()
        stm = board.side_to_move
        if full:
            info.full_moves += 1
            visits_arr = mcts.root_visits(size)
            total = float(visits_arr.sum())
            if total > 0:
                info.cells.append(board.cells.copy())
                info.stm.append(stm)
                info.last.append(board.moves[-1] if board.moves else -1)
                info.pi.append(visits_arr / total)
        else:
            info.fast_moves += 1
        who = tracker.update(stm, value)
        if who is not None:
            if resign_enabled:
                info.resigned = who
                info.winner = opponent(who)
                info.termination = Termination.RESIGNATION
                comments[len(board.moves)] = f"resigns v={value:+.3f}"
                break
            if info.would_resign is None:
                info.would_resign = who
                info.would_resign_ply = len(board.moves)
        temp = cfg.temperature if ply < cfg.temp_moves else cfg.temp_final
        move = mcts.sample_move(temp) if temp > 1e-3 else mcts.best_move()
        if not board.is_empty(move):
            raise AssertionError("self-play search chose an occupied square")
        comments[len(board.moves)] = (f"{'full' if full else 'fast'} {int(mcts.root.n) if mcts.root else 0}"
                                      f" v={value:+.3f}")
        board.push(move)
        ply += 1
    info.moves = list(board.moves)
    return info


# ============================================================================ evaluators and files
class SelfPlayError(RuntimeError):
    """A self-play batch failed with an error in its worker (a bug, an unreadable model): the run
    stops; batches already written stay and a rerun resumes after the fix."""


def shard_path(out_dir: Path, prefix: str, batch: int) -> Path:
    return Path(out_dir) / f"{prefix}-{batch:05d}.npz"


def sgf_path(out_dir: Path, prefix: str, batch: int) -> Path:
    return Path(out_dir) / "sgf" / f"{prefix}-{batch:05d}.sgf"


# ============================================================================ worker side: a batch
def play_batch(evaluator: Evaluator, cfg: SelfPlayConfig, seed: int, first: int, count: int,
               openings: Optional[List[Opening]] = None, label: str = "",
               version: str = "") -> Dict[str, Any]:
    """Play games ``first .. first + count - 1`` of the run with ``seed``; write nothing.

    Returns ``{"positions": Positions, "records": [GameRecord, ...], "stats": {...}}``: the
    full-search positions of the games (``game`` = index within the batch), one record per game
    (players ``label``; the game comment ``GC`` names seed, game, opening length, resignation and
    ``model_version=<version>``) and the batch's counts (``elapsed_s``: wall seconds of play).
    """
    from ..records import GameRecord, GameResult
    t0 = time.perf_counter()
    games: List[GameResultInfo] = []
    for g in range(first, first + count):
        games.append(play_game(evaluator, cfg, (seed, g), openings))
    elapsed = time.perf_counter() - t0
    board = cfg.board()
    # ---- positions
    cells, stm, last, pi, z, game_id = [], [], [], [], [], []
    for k, gi in enumerate(games):
        for c, s, lm, p in zip(gi.cells, gi.stm, gi.last, gi.pi):
            cells.append(c)
            stm.append(s)
            last.append(lm)
            pi.append(p)
            z.append(0.0 if gi.winner is None else (1.0 if gi.winner == s else -1.0))
            game_id.append(k)
    n = len(cells)
    h, w = board.height, board.width
    pos = Positions(
        cells=np.stack(cells).astype(np.int8) if n else np.zeros((0, h, w), np.int8),
        stm=np.array(stm, np.int8), last=np.array(last, np.int16),
        move=np.full(n, -1, np.int16), z=np.array(z, np.float32),
        zw=np.ones(n, np.float32), game=np.array(game_id, np.int32),
        pi=(np.stack(pi).astype(np.float16) if n else np.zeros((0, h * w), np.float16)))
    # ---- game records
    records = []
    for k, gi in enumerate(games):
        b = cfg.board()
        for m in gi.moves:
            b.push(m)
        note = (f"selfplay seed={seed} game={first + k} n={cfg.n} opening={gi.opening_len}"
                f" resign={'on' if gi.resign_enabled else 'off'}")
        if gi.would_resign is not None:
            note += f" would_resign={'B' if gi.would_resign == BLACK else 'W'}" \
                    f"@{gi.would_resign_ply}"
        if gi.false_resign is not None:
            note += f" false_resign={int(gi.false_resign)}"
        if version:
            note += f" model_version={version}"
        records.append(GameRecord.from_board(b, GameResult(gi.winner, gi.termination),
                                             black=label, white=label,
                                             metadata={"sgf": {"GC": note},
                                                       "move_comments": gi.comments}))
    # ---- stats
    plies = [len(gi.moves) - gi.opening_len for gi in games]
    disabled = [gi for gi in games if not gi.resign_enabled]
    would = [gi for gi in disabled if gi.would_resign is not None]
    stats: Dict[str, Any] = {
        "first_game": first, "games": count,
        "positions": n, "full_moves": sum(gi.full_moves for gi in games),
        "fast_moves": sum(gi.fast_moves for gi in games),
        "simulations": sum(gi.simulations for gi in games),
        "evaluations": sum(gi.evaluations for gi in games),
        "black_wins": sum(gi.winner == BLACK for gi in games),
        "white_wins": sum(gi.winner == WHITE for gi in games),
        "draws": sum(gi.winner is None for gi in games),
        "resigned": sum(gi.resigned is not None for gi in games),
        "resign_disabled": len(disabled), "would_resign": len(would),
        "false_resigns": sum(bool(gi.false_resign) for gi in would),
        "plies": sum(plies), "max_plies": max(plies) if plies else 0,
        "elapsed_s": round(elapsed, 3), "model_version": version,
        "pid": os.getpid(), "torch_loaded": "torch" in sys.modules,
    }
    stats["false_resign_rate"] = (round(stats["false_resigns"] / stats["would_resign"], 4)
                                  if stats["would_resign"] else None)
    return {"positions": pos, "records": records, "stats": stats}


def _evaluator_spec(model: Any) -> Any:
    """The :class:`~gomoku_ai.players.InProcessSpec` of a self-play ``model`` that names an evaluator
    without a network (``"heuristic"``, ``"uniform"``, ``"pure"``), or None for a network (a path, a
    :class:`~gomoku_ai.workers.ModelRef`). ValueError for ``"random"``, which has no evaluator."""
    if not isinstance(model, (str, os.PathLike)):
        return None
    spec = as_spec(model)
    if spec.kind is PlayerKind.MODEL:
        return None
    if spec.kind is PlayerKind.RANDOM:
        raise ValueError(f"self-play needs an evaluator; {spec.text!r} has none")
    return spec


class SelfPlayWorker:
    """The self-play worker of a pool (``WorkerSpec("gomoku_ai.training.selfplay:SelfPlayWorker")``,
    see :func:`selfplay_spec`): plays one batch of games per task and returns it (positions,
    game records, stats) for the driver to write.

    The network comes with each task: a :class:`~gomoku_ai.workers.ModelRef` (usually as a
    :meth:`Pool.share <gomoku_ai.workers.Pool.share>` handle), a model path on a disk the worker
    shares, a player spec of :mod:`gomoku_ai.players` that names an evaluator without a network
    (``"heuristic"``, ``"uniform"``, ...), or (in this process only) an :class:`Evaluator`. The
    worker loads a network once per version (:class:`~gomoku_ai.workers.ModelCache`) and keeps it
    for the tasks that follow; a task naming a newer version (training promoted one) loads that.

    Gate pairs are not played here: the training loop's one pool runs
    :class:`~gomoku_ai.training.poolworker.TrainingWorker`, which serves both.
    """

    def __init__(self, net_backend: str = "auto") -> None:
        self.net_backend = net_backend
        self.models = ModelCache(self._load)

    def _load(self, base: Path) -> Network:
        from ..net import load_model
        return load_model(base, backend=self.net_backend, threads=1)

    def evaluator(self, model: Any, batch_size: int = 8) -> Tuple[str, str, Evaluator]:
        """``(version, label, evaluator)`` for a task's model (see the class docstring)."""
        model = resolve(model)
        if isinstance(model, Evaluator):
            return model.name, model.name, model
        spec = _evaluator_spec(model)
        if spec is not None:
            return spec.text, spec.text, make_evaluator(spec)
        from ..evaluator import NetworkEvaluator
        version, net = self.models.get(model)
        return version, str(net.name), NetworkEvaluator(net, batch_size=batch_size)

    def run(self, payload: Dict[str, Any]) -> Dict[str, Any]:
        kind = payload.get("kind", "selfplay")
        if kind != "selfplay":
            raise ValueError(f"a self-play worker cannot run a {kind!r} task")
        cfg: SelfPlayConfig = payload["config"]
        version, label, ev = self.evaluator(payload["model"], cfg.batch_size)
        out = play_batch(ev, cfg, int(payload["seed"]), int(payload["first_game"]),
                         int(payload["games"]), resolve(payload.get("openings")), label, version)
        out["stats"].update(prefix=payload["prefix"], batch=int(payload["batch"]))
        return out

    def close(self) -> None:
        self.models.close()


def selfplay_spec(net_backend: str = "auto") -> WorkerSpec:
    """The :class:`WorkerSpec` of self-play workers: one thread, one CPU each (the training loop's pool, which
    also plays gate pairs, is :func:`~gomoku_ai.training.poolworker.training_spec`)."""
    return WorkerSpec(f"{__name__}:SelfPlayWorker", {"net_backend": net_backend}, threads=1)


# ============================================================================ driver side: files
def write_batch(out_dir: Union[str, os.PathLike], prefix: str, batch: int,
                played: Dict[str, Any], worker: str) -> Dict[str, Any]:
    """Write a batch returned by :func:`play_batch`: the SGF collection first, then the shard (its
    existence marks the batch done), each atomically. ``worker`` (which worker played it) goes to
    every game's ``PC`` property and to the stats, which are returned with the file names."""
    from ..fileio import atomic_write_text
    from ..records import write_sgf
    texts = []
    for rec in played["records"]:
        rec.metadata.setdefault("sgf", {})["PC"] = worker
        texts.append(write_sgf(rec))
    sp = sgf_path(Path(out_dir), prefix, batch)
    sp.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(sp, "".join(texts))
    spath = shard_path(Path(out_dir), prefix, batch)
    save_shard(played["positions"], spath)   # may hold 0 positions (no full search in any game)
    stats = {"prefix": prefix, "batch": batch, **played["stats"]}
    stats.update(shard=spath.name, sgf=f"sgf/{sp.name}", worker=worker)
    return stats


# ============================================================================ the driver
def _append_jsonl(path: Path, rec: Dict[str, Any]) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(rec) + "\n")
        f.flush()
        os.fsync(f.fileno())


def summarize(batches: Iterable[Dict[str, Any]], wall_s: Optional[float] = None) -> Dict[str, Any]:
    """Totals over batch stats lines, with rates."""
    keys = ("games", "positions", "full_moves", "fast_moves", "simulations", "evaluations",
            "black_wins", "white_wins", "draws", "resigned", "resign_disabled", "would_resign",
            "false_resigns", "plies")
    tot: Dict[str, Any] = {k: 0 for k in keys}
    elapsed = 0.0
    nb = 0
    for b in batches:
        nb += 1
        for k in keys:
            tot[k] += int(b.get(k, 0))
        elapsed += float(b.get("elapsed_s", 0.0))
    tot["batches"] = nb
    tot["false_resign_rate"] = (round(tot["false_resigns"] / tot["would_resign"], 4)
                                if tot["would_resign"] else None)
    tot["mean_plies"] = round(tot["plies"] / tot["games"], 2) if tot["games"] else 0.0
    tot["worker_s"] = round(elapsed, 3)
    if wall_s is not None:
        tot["wall_s"] = round(wall_s, 3)
        if wall_s > 0:
            tot["games_per_hour"] = round(tot["games"] * 3600.0 / wall_s, 1)
            tot["positions_per_s"] = round(tot["positions"] / wall_s, 3)
            tot["moves_per_s"] = round((tot["full_moves"] + tot["fast_moves"]) / wall_s, 3)
            tot["simulations_per_s"] = round(tot["simulations"] / wall_s, 1)
    return tot


def _batch_payload(model: Any, cfg: SelfPlayConfig, seed: int, openings: Any, prefix: str,
                   batch: int, first: int, count: int) -> Dict[str, Any]:
    return {"kind": "selfplay", "model": model, "config": cfg, "seed": int(seed),
            "openings": openings, "prefix": prefix, "batch": int(batch), "first_game": int(first),
            "games": int(count)}


def _plan_batches(out: Path, prefix: str, seed: int, games: int, gps: int
                  ) -> Tuple[List[Tuple[int, int, int]], List[Dict[str, Any]]]:
    """The batches ``(batch, first game, games)`` of ``games`` games by ``gps`` that are still to
    play in ``out``, and the stats lines of those already written (shard present, same count)."""
    tasks = [(b, b * gps, min(gps, games - b * gps)) for b in range((games + gps - 1) // gps)]
    done: Dict[int, Dict[str, Any]] = {}
    for rec in read_jsonl(out / JSONL_NAME):
        if rec.get("prefix") == prefix and rec.get("seed") == seed and not rec.get("lost"):
            done[int(rec["batch"])] = rec
    todo = [t for t in tasks if not (t[0] in done and shard_path(out, prefix, t[0]).exists()
                                     and done[t[0]].get("games") == t[2])]
    return todo, [done[t[0]] for t in tasks if t not in todo]


def _run_config(config: Optional[SelfPlayConfig], board_size: Union[int, Tuple[int, int]], n: int,
                rule: str, visits_full: int, visits_fast: int, p_full: float,
                overrides: Dict[str, Any]) -> SelfPlayConfig:
    """The settings of :func:`run_selfplay`: ``config``, else one from the explicit arguments;
    with ``overrides`` applied and the visit counts and ``p_full`` checked."""
    if config is None:
        w, h = (board_size, None) if isinstance(board_size, int) else board_size
        config = SelfPlayConfig(width=int(w), height=None if h is None else int(h), n=n,
                                rule=rule, visits_full=visits_full, visits_fast=visits_fast,
                                p_full=p_full)
    if overrides:
        config = replace(config, **overrides)
    if config.visits_full < 1 or config.visits_fast < 1:
        raise ValueError("visits must be at least 1")
    if not 0.0 <= config.p_full <= 1.0:
        raise ValueError("p_full must be in [0, 1]")
    return config


class _RunJournal:
    """The files and counts of one :func:`run_selfplay` call: writes each finished batch (and its
    ``selfplay.jsonl`` line) or the line of a lost one, and keeps the stats, the lost batches and
    the network versions seen (those of batches found done included)."""

    def __init__(self, out: Path, prefix: str, seed: int, label: str,
                 results: List[Dict[str, Any]],
                 log: Optional[Callable[[Dict[str, Any]], None]]) -> None:
        self.out, self.prefix, self.seed, self.label, self.log = out, prefix, seed, label, log
        self.jsonl = out / JSONL_NAME
        self.results = results
        self.lost: List[int] = []
        self.versions = sorted({str(r["model_version"]) for r in results if r.get("model_version")})

    def finish(self, batch: int, played: Dict[str, Any], worker: str, attempts: int) -> None:
        """Write the batch ``played`` by ``worker`` (after ``attempts`` tries)."""
        stats = write_batch(self.out, self.prefix, batch, played, worker)
        stats.update(attempts=attempts, seed=int(self.seed), model=self.label)
        _append_jsonl(self.jsonl, stats)
        self.results.append(stats)
        if stats.get("model_version") and stats["model_version"] not in self.versions:
            self.versions.append(stats["model_version"])
        if self.log is not None:
            self.log(stats)

    def not_played(self, batch: int, first: int, count: int, why: str, attempts: int) -> None:
        """Record that every attempt at the batch was lost (``why``)."""
        prefix = self.prefix
        rec = {"prefix": prefix, "batch": batch, "first_game": first, "games_lost": count,
               "lost": True, "attempts": attempts, "seed": int(self.seed), "model": self.label,
               "error": why, "note": f"self-play batch {prefix}-{batch:05d} not played: {why}"}
        _append_jsonl(self.jsonl, rec)
        self.lost.append(batch)
        if self.log is not None:
            self.log(rec)


def _play_here(todo: List[Tuple[int, int, int]], model: Any, config: SelfPlayConfig, seed: int,
               flat_openings: Any, prefix: str, net_backend: str, journal: _RunJournal) -> None:
    """Play the batches of ``todo`` in this process (``model``: an Evaluator or a model text)
    and hand each to ``journal``."""
    runner = SelfPlayWorker(net_backend)
    try:
        for b, first, count in todo:
            played = runner.run(_batch_payload(model, config, seed, flat_openings, prefix, b,
                                               first, count))
            journal.finish(b, played, "in-process", 1)
    finally:
        runner.close()


def _play_on_pool(pool: Pool, todo: List[Tuple[int, int, int]], model_path: Any,
                  config: SelfPlayConfig, seed: int, flat_openings: Any, prefix: str,
                  batch_limit_s: Optional[float], journal: _RunJournal) -> None:
    """Play the batches of ``todo`` as tasks of ``pool`` (``model_path``: a path or a spec, never
    an Evaluator object; the network and the openings shared once) and hand each outcome to
    ``journal``; a batch whose worker raised raises :class:`SelfPlayError` (the batches still
    running are abandoned)."""
    named = _evaluator_spec(model_path)
    if named is not None:
        model: Any = named.text
    else:
        from ..net import model_basename
        model = pool.share(ModelRef.from_path(model_basename(model_path)))
    shared_openings = None if flat_openings is None else pool.share(flat_openings)
    by_key = {("selfplay", prefix, b): (b, first, count) for b, first, count in todo}
    jobs = [Task(key, _batch_payload(model, config, seed, shared_openings, prefix, b,
                                     first, count), limit_s=batch_limit_s)
            for key, (b, first, count) in by_key.items()]
    outcomes = pool.run(jobs)
    try:
        for r in outcomes:
            b, first, count = by_key[r.key]
            if r.kind == "ok":
                journal.finish(b, r.value, r.worker, r.attempts)
            elif r.kind == "lost":
                journal.not_played(b, first, count, r.error or "lost", r.attempts)
            else:
                raise SelfPlayError(f"self-play batch {prefix}-{b:05d} failed on "
                                    f"{r.worker or 'a worker'}:\n{r.error}")
    finally:
        outcomes.close()   # on an error: the batches still running are abandoned


def run_selfplay(model_path: Union[str, os.PathLike, Evaluator], out_dir: Union[str, os.PathLike],
                 games: int, workers: int = 1, visits_full: int = 400, visits_fast: int = 64,
                 p_full: float = 0.25, board_size: Union[int, Tuple[int, int]] = 15,
                 rule: str = "freestyle", seed: int = 1,
                 openings: Union[None, str, os.PathLike, Sequence] = None, *,
                 n: int = 5, prefix: str = "sp", config: Optional[SelfPlayConfig] = None,
                 log: Optional[Callable[[Dict[str, Any]], None]] = None,
                 backend: str = "local", address: Optional[str] = None,
                 pool: Optional[Pool] = None, net_backend: str = "auto",
                 batch_limit_s: Optional[float] = None, **overrides: Any) -> Dict[str, Any]:
    """Play ``games`` self-play games with the model at ``model_path`` into ``out_dir``.

    Where the games are played: ``pool`` (a :class:`~gomoku_ai.workers.Pool` of
    :func:`selfplay_spec` workers, kept open by the caller so that its workers and their loaded
    networks outlive this call), else ``workers`` new workers on ``backend`` (``"local"``
    processes or ``"ray"`` actors; ``address`` as in :func:`~gomoku_ai.workers.make_pool`),
    closed at the end; ``workers = 0`` plays in this process (also the only way to pass an
    :class:`Evaluator` object as ``model_path``). Every way runs the same batch code and writes
    the same files: only the ``PC`` property of the SGF games and the ``worker``/``pid``/
    ``attempts``/``elapsed_s`` fields of the ``selfplay.jsonl`` lines say where a batch ran.

    ``board_size``: an int or (width, height). ``config`` gives every setting at once (the
    explicit arguments then are ignored except ``games``/``workers``/``seed``/``openings``);
    ``overrides`` are further :class:`SelfPlayConfig` fields (``temp_moves=...``). ``net_backend``:
    how workers run the network (``load_model``'s ``auto``/``onnx``/``numpy``).
    ``batch_limit_s``: wall seconds a batch may take before its worker is killed and the attempt
    counted as lost.

    Batches already written (their shard exists and has a stats line) are skipped. A batch whose
    every attempt was lost (its worker or node died) is not written: a ``"lost": true`` line
    (with a ``note``) goes to ``selfplay.jsonl`` and to ``log``, the run goes on, and a rerun plays
    it. A batch whose worker raised stops the run with :class:`SelfPlayError`. Returns the totals
    of this call's batches (played or found), with rates over the wall time of the call.
    """
    config = _run_config(config, board_size, n, rule, visits_full, visits_fast, p_full, overrides)
    in_process = pool is None and (isinstance(model_path, Evaluator) or workers <= 0)
    if in_process and backend != "local":
        raise ValueError(f"the {backend} backend needs at least one worker")
    if isinstance(model_path, Evaluator) and not in_process:
        raise ValueError("an Evaluator object can only play in this process (workers=0)")
    board = config.board()   # checks the size and rule
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    flat_openings = openings_to_flat(openings, board.width, board.height)
    todo, found = _plan_batches(out, prefix, seed, games, max(1, int(config.games_per_shard)))
    label = "in-process" if isinstance(model_path, Evaluator) else os.fspath(model_path)
    t0 = time.perf_counter()
    journal = _RunJournal(out, prefix, seed, label, found, log)
    where: Dict[str, Any] = {"backend": "in-process", "workers": 0}
    if todo and in_process:
        _play_here(todo, model_path if isinstance(model_path, Evaluator) else label, config,
                   seed, flat_openings, prefix, net_backend, journal)
    elif todo:
        own = pool is None
        if pool is None:
            pool = make_pool(selfplay_spec(net_backend), min(workers, len(todo)), backend=backend,
                             address=address)
        try:
            where = pool.describe()
            _play_on_pool(pool, todo, model_path, config, seed, flat_openings, prefix,
                          batch_limit_s, journal)
        finally:
            if own:
                pool.close()
    wall = time.perf_counter() - t0
    summary = summarize(journal.results, wall_s=wall)
    summary["played_batches"] = len(todo) - len(journal.lost)
    summary["lost_batches"] = sorted(journal.lost)
    summary["model_versions"] = journal.versions
    summary["where"] = where
    summary["out_dir"] = str(out)
    summary["prefix"] = prefix
    summary["config"] = asdict(config)
    return summary
