"""Gating: does a candidate network beat the current best? Decided by an SPRT, never a win rate.

The match (docs RATING.md sections 2 and 5):

* games come in **pairs**: the same opening twice, the candidate playing Black in one game and
  White in the other, so that the first-move advantage cancels inside each pair;
* results are counted per pair in the **pentanomial** buckets ``(LL, LD, WL+DD, WD, WW)`` from the
  candidate's side, and after each pair a GSPRT (``gomoku_ai.rating.sprt``; logistic Elo by
  default, ``H0: elo0 = 0`` against ``H1: elo1``, ``alpha = beta = 0.05``) decides: LLR above the
  upper bound -> ``accept``; below the lower -> ``reject``; neither by ``max_games`` ->
  ``inconclusive`` (the loop does not promote);
* openings come from a file (``records.read_openings``), extended by the 8 board symmetries on
  square boards, or are random (1-3 stones near the centre, seeded); an opening is reused only
  when there are more pairs than openings (``openings_reused`` in the result);
* players search a fixed number of visits, without noise, always playing the most visited move
  (KataGo's advice: fixed visits, one search thread, so that speed has no influence). Tests and
  other callers may pass their own players (anything with ``new_game()`` and ``choose(board)``)
  or a ``player_factory``.

Pairs are played in this process one after the other, or as tasks of a worker pool
(:mod:`gomoku_ai.workers`, local processes or Ray actors; :class:`GateWorker` loads each network
once per version): the SPRT then takes the finished pairs in pair order, so the decision is the
sequential one. The Elo estimate after an SPRT stop is biased (RATING.md 2); it
is reported with its 95 % interval for information only.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Protocol, Sequence, Tuple, Union

import numpy as np

from .. import movegen, rating
from ..board import Board
from ..evaluator import Evaluator
from ..mcts import MCTS, MCTSConfig
from ..rules import BLACK, WHITE, Rule
from ..workers import (ModelCache, ModelRef, Pool, Task, WorkerSpec, make_pool, model_version,
                       resolve)
from .selfplay import Opening, make_evaluator, model_label, openings_to_flat, random_opening


class GatePlayer(Protocol):
    """What the gate needs from a player."""

    name: str

    def new_game(self) -> None: ...

    def choose(self, board: Board) -> int: ...


class SearchPlayer:
    """MCTS with a fixed number of visits, no noise, the most visited move, tree reuse."""

    def __init__(self, evaluator: Evaluator, visits: int, name: str = "",
                 mcts: Optional[Dict[str, Any]] = None, seed: int = 0) -> None:
        cfg = MCTSConfig(**(mcts or {}))
        cfg.dirichlet_alpha = 0.0
        self.visits = int(visits)
        self.name = name or evaluator.name
        self.mcts = MCTS(evaluator, cfg, seed=seed)

    def new_game(self) -> None:
        self.mcts.reset()

    def choose(self, board: Board) -> int:
        self.mcts.search(board, visits=self.visits)
        return self.mcts.best_move()


class RandomPlayer:
    """Uniformly random among the empty squares next to a stone (a test opponent)."""

    def __init__(self, seed: int = 0, name: str = "random") -> None:
        self.rng = np.random.default_rng(seed)
        self.name = name

    def new_game(self) -> None:
        pass

    def choose(self, board: Board) -> int:
        cand = movegen.near_empty(board, 1) or board.empty_squares()
        return int(self.rng.choice(cand))


def default_player_factory(visits: int, batch_size: int = 8, backend: str = "auto",
                           mcts: Optional[Dict[str, Any]] = None) -> Callable[[Any, str], Any]:
    """Players from specs: a player object (returned as is), an :class:`Evaluator`, a model path,
    ``"heuristic"`` or ``"uniform"`` -> :class:`SearchPlayer` with ``visits``."""
    def factory(spec: Any, role: str) -> Any:
        if hasattr(spec, "choose") and hasattr(spec, "new_game"):
            return spec
        ev = make_evaluator(spec, batch_size=batch_size, backend=backend)
        return SearchPlayer(ev, visits, name=f"{role}:{model_label(spec)}", mcts=mcts)
    return factory


# ============================================================================ openings
def _sym(x: int, y: int, k: int, w: int, h: int) -> Tuple[int, int]:
    """Symmetry ``k`` (0..7) of a square board about its centre."""
    n = w - 1
    for _ in range(k % 4):
        x, y = n - y, x
    if k >= 4:
        x, y = y, x
    return x, y


def gate_openings(openings: Union[None, str, os.PathLike, Sequence], board: Board, pairs: int,
                  seed: int, symmetries: bool = True) -> Tuple[List[Opening], bool]:
    """``pairs`` openings (flat moves) and whether any had to be reused."""
    w, h = board.width, board.height
    flat = openings_to_flat(openings, w, h)
    if flat is None:
        rng = np.random.default_rng(np.random.SeedSequence([seed, 0x6A7E]))
        out: List[Opening] = []
        seen = set()
        tries = 0
        while len(out) < pairs and tries < 50 * pairs + 100:
            tries += 1
            op = random_opening(board, rng, (1, 3), 2)
            if op in seen:
                continue
            seen.add(op)
            out.append(op)
        reused = len(out) < pairs
        while len(out) < pairs:
            out.append(out[len(out) % max(1, len(seen))])
        return out, reused
    pool: List[Opening] = []
    seen = set()
    ks = range(8) if (symmetries and w == h) else range(1)
    for k in ks:
        for op in flat:
            t = tuple(y * w + x for x, y in (_sym(m % w, m // w, k, w, h) for m in op))
            key = tuple(sorted(t[0::2])) + (-1,) + tuple(sorted(t[1::2]))
            if key not in seen:
                seen.add(key)
                pool.append(t)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0x0BE7]))
    order = [pool[i] for i in rng.permutation(len(pool))]
    reused = pairs > len(order)
    return [order[i % len(order)] for i in range(pairs)], reused


# ============================================================================ games
def play_match_game(black: Any, white: Any, board: Board, opening: Opening,
                    max_plies: Optional[int] = None) -> Tuple[Optional[int], str, List[int]]:
    """Play one game from ``opening``; returns (winner or None, how it ended, moves). A player
    that returns an illegal move loses."""
    b = board.copy()
    for m in opening:
        if not b.is_empty(m):
            raise ValueError(f"opening {opening} repeats a square")
        if b.push(m):
            raise ValueError(f"opening {opening} already ends the game")
    black.new_game()
    white.new_game()
    while True:
        if b.winner is not None:
            return b.winner, "five", list(b.moves)
        if b.is_full():
            return None, "board_full", list(b.moves)
        if max_plies is not None and len(b.moves) >= max_plies:
            return None, "max_plies", list(b.moves)
        p = black if b.side_to_move == BLACK else white
        m = int(p.choose(b))
        if not b.is_empty(m):
            return 3 - b.side_to_move, "illegal", list(b.moves)
        if movegen.is_forbidden(b, m):
            return WHITE, "forbidden", list(b.moves) + [m]
        b.push(m)


def _score(winner: Optional[int], colour: int) -> float:
    return 0.5 if winner is None else (1.0 if winner == colour else 0.0)


# ============================================================================ the gate
@dataclass
class GateConfig:
    visits: int = 200
    max_games: int = 400
    elo0: float = 0.0
    elo1: float = 30.0
    alpha: float = 0.05
    beta: float = 0.05
    model: str = "logistic"          # rating.sprt model: logistic | normalized
    max_plies: Optional[int] = None
    seed: int = 1
    symmetries: bool = True
    sprt: bool = True                # False: play all max_games (a fixed-length match)


# ============================================================================ gate pairs on a pool
class GateError(RuntimeError):
    """A gate pair failed with an error in its worker (a bug, an unreadable model)."""


def spec_version(spec: Any) -> Optional[str]:
    """The network version a player spec stands for: ``"<name>@<sha12>"`` of a model path
    (:func:`~gomoku_ai.workers.model_version`), ``"heuristic"``/``"uniform"`` as they are, None
    for objects (players, evaluators: nothing on disk identifies them)."""
    if not isinstance(spec, (str, os.PathLike)):
        return None
    s = os.fspath(spec)
    if s in ("heuristic", "uniform"):
        return s
    from ..net import ModelError, model_basename
    try:
        return model_version(model_basename(s))
    except (OSError, ValueError, ModelError):
        return Path(s).name


class GateWorker:
    """The gate worker of a pool (also reached through the self-play worker, so that the training
    loop's one pool serves both): plays one colour-swapped pair per task.

    Each side's network comes with the task (a shared :class:`~gomoku_ai.workers.ModelRef`, a
    model path, ``"heuristic"``/``"uniform"``); it is loaded once per version and its
    :class:`SearchPlayer` built once per (version, visits), then reused across pairs.
    """

    def __init__(self, net_backend: str = "auto") -> None:
        self.net_backend = net_backend
        self.models = {"candidate": ModelCache(self._load), "best": ModelCache(self._load)}
        self.players: Dict[str, Tuple[Any, SearchPlayer]] = {}

    def _load(self, base: Path) -> Any:
        from ..net import load_model
        return load_model(base, backend=self.net_backend, threads=1)

    def player(self, role: str, spec: Any, visits: int, batch_size: int = 8,
               mcts: Optional[Dict[str, Any]] = None) -> Tuple[str, SearchPlayer]:
        """``(version, player)`` for one side of a pair."""
        spec = resolve(spec)
        if isinstance(spec, (str, os.PathLike)) and os.fspath(spec) in ("heuristic", "uniform"):
            version = label = os.fspath(spec)
            make: Callable[[], Evaluator] = lambda: make_evaluator(version)  # noqa: E731
        else:
            from ..evaluator import NetworkEvaluator
            version, net = self.models[role].get(spec)
            label = str(net.name)
            make = lambda: NetworkEvaluator(net, batch_size=batch_size)  # noqa: E731
        key = (version, int(visits), int(batch_size), json.dumps(mcts or {}, sort_keys=True))
        cur = self.players.get(role)
        if cur is None or cur[0] != key:
            self.players[role] = (key, SearchPlayer(make(), visits, name=f"{role}:{label}",
                                                    mcts=mcts))
        return version, self.players[role][1]

    def run(self, payload: Dict[str, Any]) -> Dict[str, Any]:
        visits, bs, mcts = int(payload["visits"]), int(payload.get("batch_size", 8)), \
            payload.get("mcts")
        cv, pc = self.player("candidate", payload["candidate"], visits, bs, mcts)
        bv, pb = self.player("best", payload["best"], visits, bs, mcts)
        w, h, rule, n = payload["board"]
        board = Board(w, h, Rule.parse(rule), n)
        opening = tuple(payload["opening"])
        w1, e1, _ = play_match_game(pc, pb, board, opening, payload.get("max_plies"))
        w2, e2, _ = play_match_game(pb, pc, board, opening, payload.get("max_plies"))
        return {"pair": int(payload["pair"]), "winners": [w1, w2], "ends": [e1, e2],
                "candidate_version": cv, "best_version": bv}

    def close(self) -> None:
        for cache in self.models.values():
            cache.close()
        self.players.clear()


def gate_spec(net_backend: str = "auto") -> WorkerSpec:
    """The :class:`WorkerSpec` of gate workers: one thread, one CPU each."""
    return WorkerSpec(f"{__name__}:GateWorker", {"net_backend": net_backend}, threads=1)


# ============================================================================ the gate
class _Tally:
    """Counts of the pairs taken so far, from the candidate's side, and the SPRT over them."""

    def __init__(self, cfg: GateConfig) -> None:
        self.cfg = cfg
        self.penta = [0, 0, 0, 0, 0]
        self.wins = self.draws = self.losses = 0
        self.cand_black = [0.0, 0]   # score, games
        self.cand_white = [0.0, 0]
        self.black_wins = self.white_wins = 0
        self.ends: Dict[str, int] = {}
        self.pairs = 0
        self.res: Optional[rating.SprtResult] = None
        self.notes: List[str] = []

    def add(self, rec: Dict[str, Any]) -> None:
        cfg = self.cfg
        w1, w2 = rec["winners"]
        s1, s2 = _score(w1, BLACK), _score(w2, WHITE)   # the candidate's scores
        self.penta[rating.pair_bucket(s1, s2)] += 1
        for s in (s1, s2):
            self.wins += s == 1.0
            self.draws += s == 0.5
            self.losses += s == 0.0
        self.cand_black[0] += s1
        self.cand_black[1] += 1
        self.cand_white[0] += s2
        self.cand_white[1] += 1
        for wnr in (w1, w2):
            self.black_wins += wnr == BLACK
            self.white_wins += wnr == WHITE
        for e in rec["ends"]:
            self.ends[e] = self.ends.get(e, 0) + 1
        self.pairs += 1
        try:
            self.res = rating.sprt(self.penta, cfg.elo0, cfg.elo1, cfg.alpha, cfg.beta,
                                   model=cfg.model)
        except rating.RatingError as e:   # e.g. a normalised hypothesis outside the data range
            self.res = None
            if f"sprt: {e}" not in self.notes:
                self.notes.append(f"sprt: {e}")

    @property
    def decision(self) -> Optional[str]:
        if self.res is None or self.res.decision is None:
            return None
        return "accept" if self.res.decision == "H1" else "reject"


def _append_pair(jpath: Optional[Path], rec: Dict[str, Any]) -> None:
    if jpath is None:
        return
    jpath.parent.mkdir(parents=True, exist_ok=True)
    with open(jpath, "a", encoding="utf-8") as f:
        f.write(json.dumps(rec) + "\n")
        f.flush()
        os.fsync(f.fileno())


def _pooled_pairs(pool: Pool, payload: Callable[[int], Dict[str, Any]], todo: List[int],
                  done: Dict[int, Dict[str, Any]], max_pairs: int, jpath: Optional[Path],
                  seed: int, info: Dict[str, Any],
                  log: Optional[Callable[[Dict[str, Any]], None]]) -> Iterator[Dict[str, Any]]:
    """Pair records in pair-index order: journal pairs as they are, the others played on
    ``pool`` (tasks handed out lazily in index order, so that at most one per worker runs ahead).
    A finished pair waits until every earlier one is in; a lost pair is skipped (``info
    ["lost"]``); finished pairs never yielded (the consumer stopped) are counted in
    ``info["discarded"]``."""
    pending: Dict[int, Dict[str, Any]] = {}
    lost = info.setdefault("lost", [])
    tasks = (Task(("gate_pair", i), payload(i)) for i in todo)
    results = pool.run(tasks)
    nxt = 0
    try:
        while nxt < max_pairs:
            if nxt in done:
                rec = done[nxt]
            elif nxt in pending:
                rec = pending.pop(nxt)
            elif nxt in lost:
                nxt += 1
                continue
            else:
                try:
                    r = next(results)
                except StopIteration:
                    break
                i = int(r.key[1])
                if r.kind == "ok":
                    rec = {"pair": i, "seed": seed, "opening": list(payload(i)["opening"]),
                           **r.value, "worker": r.worker, "attempts": r.attempts}
                    _append_pair(jpath, rec)
                    pending[i] = rec
                elif r.kind == "lost":
                    lost.append(i)
                    if log is not None:
                        log({"note": f"gate pair {i} not played: {r.error}"})
                else:
                    raise GateError(f"gate pair {i} failed on {r.worker or 'a worker'}:\n"
                                    f"{r.error}")
                continue
            yield rec
            nxt += 1
    finally:
        info["discarded"] = len(pending)
        results.close()


def run_gate(candidate: Any, best: Any, *, board: Optional[Board] = None,
             width: int = 15, height: Optional[int] = None, n: int = 5,
             rule: str = "freestyle", openings: Union[None, str, os.PathLike, Sequence] = None,
             config: Optional[GateConfig] = None,
             player_factory: Optional[Callable[[Any, str], Any]] = None,
             journal: Union[None, str, os.PathLike] = None,
             log: Optional[Callable[[Dict[str, Any]], None]] = None,
             pool: Optional[Pool] = None, workers: int = 0, backend: str = "local",
             address: Optional[str] = None, net_backend: str = "auto",
             **overrides: Any) -> Dict[str, Any]:
    """Candidate vs best in colour-swapped pairs until the SPRT decides or ``max_games``.

    ``candidate``/``best``: model paths, ``"heuristic"``/``"uniform"``, evaluators or player
    objects (see :func:`default_player_factory`); ``player_factory(spec, role)`` replaces the
    default. ``overrides`` are :class:`GateConfig` fields. ``journal``: a JSONL file of finished
    pairs; a rerun with the same arguments continues from it instead of replaying them (pairs
    recorded with other network versions are not taken).

    Where the pairs are played: in this process, one after the other (the default), or as tasks
    of ``pool`` (kept open by the caller; :class:`GateWorker` or self-play workers) or of
    ``workers`` new workers on ``backend`` (``"local"``/``"ray"``, ``address`` as in
    :func:`~gomoku_ai.workers.make_pool`). On a pool ``candidate``/``best`` must be model paths
    or ``"heuristic"``/``"uniform"`` (no objects, no ``player_factory``); pairs run in parallel
    but the SPRT takes them in pair order, only the unbroken prefix of finished pairs, so the
    decision and the counts equal the sequential gate's; pairs finished beyond the decision are
    discarded (``discarded_pairs``), a pair lost with its worker is skipped (``lost_pairs``).

    Returns ``decision`` (``accept``/``reject``/``inconclusive``), game and pair counts, W/D/L
    and the pentanomial counts from the candidate's side, Elo with its 95 % interval, LLR and
    bounds, colour statistics, and the network versions that played (``candidate_version``,
    ``best_version``; every journal line has them too, with the ``worker`` on a pool).
    """
    cfg = config or GateConfig()
    if overrides:
        cfg = GateConfig(**{**cfg.__dict__, **overrides})
    if board is None:
        board = Board(width, height, Rule.parse(rule), n)
    if cfg.max_games < 2:
        raise ValueError("max_games must be at least 2 (one pair)")
    pooled = pool is not None or workers >= 1
    if not pooled and backend != "local":
        raise ValueError(f"the {backend} backend needs at least one worker")
    versions = {"candidate_version": spec_version(candidate), "best_version": spec_version(best)}
    if pooled:
        if player_factory is not None:
            raise ValueError("a gate on a pool builds its own players: no player_factory")
        for role, spec in (("candidate", candidate), ("best", best)):
            if not isinstance(spec, (str, os.PathLike)):
                raise ValueError(f"a gate on a pool needs a model path or 'heuristic'/'uniform' "
                                 f"for the {role}, not a {type(spec).__name__}")
        p_cand: Any = None
        p_best: Any = None
        names = {"candidate": f"candidate:{model_label(candidate)}",
                 "best": f"best:{model_label(best)}"}
    else:
        factory = player_factory or default_player_factory(cfg.visits)
        p_cand = factory(candidate, "candidate")
        p_best = factory(best, "best")
        names = {"candidate": getattr(p_cand, "name", str(candidate)),
                 "best": getattr(p_best, "name", str(best))}
    max_pairs = cfg.max_games // 2
    ops, reused = gate_openings(openings, board, max_pairs, cfg.seed, cfg.symmetries)
    done: Dict[int, Dict[str, Any]] = {}
    jpath = Path(journal) if journal is not None else None
    if jpath is not None and jpath.exists():
        from ..fileio import read_jsonl
        for rec in read_jsonl(jpath):
            if rec.get("seed") == cfg.seed and 0 <= int(rec.get("pair", -1)) < max_pairs \
                    and tuple(rec.get("opening", ())) == ops[int(rec["pair"])] \
                    and all(rec.get(k) in (None, v) or v is None for k, v in versions.items()):
                done[int(rec["pair"])] = rec
    t0 = time.perf_counter()
    info: Dict[str, Any] = {}
    where: Dict[str, Any] = {"backend": "in-process", "workers": 0}
    own_pool = False
    todo = [i for i in range(max_pairs) if i not in done]
    if pooled and not todo:     # every pair is in the journal: nothing to start
        records: Iterator[Dict[str, Any]] = (done[i] for i in range(max_pairs))
        info["lost"], info["discarded"] = [], 0
    elif pooled:
        if pool is None:
            pool = make_pool(gate_spec(net_backend), max(1, min(workers, len(todo))),
                             backend=backend, address=address)
            own_pool = True
        where = pool.describe()
        from ..net import model_basename
        shared = {role: (os.fspath(spec) if os.fspath(spec) in ("heuristic", "uniform")
                         else pool.share(ModelRef.from_path(model_basename(spec))))
                  for role, spec in (("candidate", candidate), ("best", best))}
        dims = (board.width, board.height, board.rule.value, board.n)

        def payload(i: int) -> Dict[str, Any]:
            return {"kind": "gate_pair", "pair": i, "opening": list(ops[i]),
                    "candidate": shared["candidate"], "best": shared["best"],
                    "visits": cfg.visits, "batch_size": 8, "mcts": None, "board": dims,
                    "max_plies": cfg.max_plies}

        records = _pooled_pairs(pool, payload, todo, done, max_pairs, jpath, cfg.seed, info, log)
    else:
        def sequential() -> Iterator[Dict[str, Any]]:
            for i in range(max_pairs):
                if i in done:
                    yield done[i]
                    continue
                w1, e1, _ = play_match_game(p_cand, p_best, board, ops[i], cfg.max_plies)
                w2, e2, _ = play_match_game(p_best, p_cand, board, ops[i], cfg.max_plies)
                rec = {"pair": i, "seed": cfg.seed, "opening": list(ops[i]),
                       "winners": [w1, w2], "ends": [e1, e2], **versions}
                _append_pair(jpath, rec)
                yield rec

        records = sequential()
    tally = _Tally(cfg)
    decision: Optional[str] = None
    try:
        for rec in records:
            tally.add(rec)
            if log is not None:
                log({"pair": int(rec["pair"]), "penta": list(tally.penta),
                     "llr": None if tally.res is None else round(tally.res.llr, 4)})
            if cfg.sprt and tally.decision is not None:
                decision = tally.decision
                break
    finally:
        records.close()
        if own_pool and pool is not None:
            pool.close()
    if not cfg.sprt:
        decision = tally.decision   # the LLR after all games
    res, penta, pairs = tally.res, tally.penta, tally.pairs
    games = 2 * pairs
    est = rating.pentanomial(penta)
    lower, upper = rating.sprt_bounds(cfg.alpha, cfg.beta)
    out: Dict[str, Any] = {
        "decision": decision or "inconclusive",
        "games": games, "pairs": pairs,
        "wins": tally.wins, "draws": tally.draws, "losses": tally.losses,
        "pentanomial": list(penta),
        "score": round(est.score, 4),
        "elo": round(est.elo, 1),
        "ci95": [round(est.elo_lo, 1), round(est.elo_hi, 1)],
        "elo_err": round(est.elo_err, 1),
        "los": round(est.los, 4),
        "llr": None if res is None else round(res.llr, 4),
        "bounds": [round(lower, 4), round(upper, 4)],
        "elo0": cfg.elo0, "elo1": cfg.elo1, "alpha": cfg.alpha, "beta": cfg.beta,
        "sprt_model": cfg.model,
        "candidate_black_score": round(tally.cand_black[0] / max(1, tally.cand_black[1]), 4),
        "candidate_white_score": round(tally.cand_white[0] / max(1, tally.cand_white[1]), 4),
        "black_wins": tally.black_wins, "white_wins": tally.white_wins, "ends": tally.ends,
        "openings_reused": reused and pairs > len(set(ops)),
        "visits": cfg.visits if player_factory is None else None, "max_games": cfg.max_games,
        "elapsed_s": round(time.perf_counter() - t0, 2),
        "candidate": names["candidate"], "best": names["best"], **versions,
        "where": where,
    }
    if pooled:
        out["lost_pairs"] = sorted(info.get("lost", []))
        out["discarded_pairs"] = int(info.get("discarded", 0))
    if est.se == 0 and est.score in (0.0, 1.0):
        b = rating.perfect_score_bound(games)
        out["perfect_score_elo_bound"] = round(b if est.score == 1.0 else -b, 1)
    if tally.notes:
        out["notes"] = tally.notes
    return out
