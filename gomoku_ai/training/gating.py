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
* both sides are the engine that ships: :class:`~gomoku_ai.player.Player` (MCTS with the root
  VCF/VCT solver, one network batch of 4 leaves) built by
  :func:`~gomoku_ai.players.resolve_player` from a player spec (a model path, ``"heuristic"``,
  ``"uniform"``, ...: the vocabulary of :mod:`gomoku_ai.players`), searching a fixed number of
  visits, without noise, always playing the most visited move (KataGo's advice: fixed visits, one
  search thread, so that speed has no influence); no time limit applies;
* games are refereed by :func:`gomoku_ai.match.play_game` (``max_plies`` is a draw by
  :attr:`~gomoku_ai.rules.Termination.ADJUDICATION`; an illegal move, a forbidden one or a crash
  loses); game ``g`` of pair ``k`` seeds its players with :func:`~gomoku_ai.match.game_seed`
  ``(seed, 2k + g)``, so a pair plays the same on any worker. Tests and other callers may pass
  their own :class:`~gomoku_ai.match.GamePlayer` objects or a ``player_factory``.

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
from typing import (TYPE_CHECKING, Any, Callable, Dict, Generator, Iterator, List, Optional, Sequence, Tuple,
                    Union)

import numpy as np

from .. import checks, rating
from ..board import Board
from ..match import GameConfig, GamePlayer, PlayedGame, game_seed, play_game
from ..net.symmetries import symmetry_ids, transform_move
from ..players import (EnginePlayer, InProcessSpec, PlayerKind, as_spec, resolve_player,
                       spec_label)
from ..rules import BLACK, WHITE, Rule, Termination
from ..workers import (ModelCache, ModelRef, Pool, Task, WorkerSpec, make_pool, model_version,
                       resolve)
from .openings import Opening, openings_to_flat, random_opening

if TYPE_CHECKING:
    from ..net import Network

#: ``engine`` of the journal lines of gates played by the shipped Player (earlier lines, played by
#: a bare MCTS, are not taken: such a gate is replayed)
GATE_ENGINE = "player"


def default_player_factory(visits: int, backend: str = "auto",
                           rule: Rule = Rule.FREESTYLE) -> Callable[[Any, str], GamePlayer]:
    """Players from specs: a :class:`~gomoku_ai.match.GamePlayer` (returned as is), else a player
    spec or model path -> :func:`~gomoku_ai.players.resolve_player` with ``visits`` (for a spec
    without its own), named ``"<role>:<label>"``."""
    def factory(spec: Any, role: str) -> GamePlayer:
        if isinstance(spec, GamePlayer):
            return spec
        return resolve_player(spec, visits=visits, rule=rule, backend=backend,
                              name=f"{role}:{spec_label(spec)}")
    return factory


# ============================================================================ openings
def gate_openings(openings: Union[None, str, os.PathLike, Sequence], board: Board, pairs: int,
                  seed: int, symmetries: bool = True) -> Tuple[List[Opening], bool]:
    """``pairs`` openings (flat moves) and whether any had to be reused. A file's openings are
    extended by the 8 board symmetries (:mod:`gomoku_ai.net.symmetries`) on square boards."""
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
    ks = symmetry_ids(h, w) if (symmetries and w == h) else (0,)
    for k in ks:
        for op in flat:
            t = tuple(transform_move(m, k, h, w) for m in op)
            key = tuple(sorted(t[0::2])) + (-1,) + tuple(sorted(t[1::2]))
            if key not in seen:
                seen.add(key)
                pool.append(t)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0x0BE7]))
    order = [pool[i] for i in rng.permutation(len(pool))]
    reused = pairs > len(order)
    return [order[i % len(order)] for i in range(pairs)], reused


# ============================================================================ games
def play_pair(candidate: GamePlayer, best: GamePlayer, cfg: GameConfig, opening: Opening,
              seed: int, pair: int) -> Tuple[PlayedGame, PlayedGame]:
    """Pair ``pair`` from ``opening`` (flat moves): the candidate Black, then White; each game's
    players seeded with :func:`~gomoku_ai.match.game_seed` ``(seed, 2 * pair + g)``."""
    xy = [(m % cfg.width, m // cfg.width) for m in opening]
    first = play_game((candidate, best), cfg, opening=xy, seed=game_seed(seed, 2 * pair))
    second = play_game((best, candidate), cfg, opening=xy, seed=game_seed(seed, 2 * pair + 1))
    return first, second


def pair_record(pair: int, first: PlayedGame, second: PlayedGame) -> Dict[str, Any]:
    """The journal fields of a played pair: each game's winner and termination (its value)."""
    return {"pair": pair, "winners": [first.winner, second.winner],
            "ends": [first.termination.value, second.termination.value], "engine": GATE_ENGINE}


def gate_game_config(board: Board, max_plies: Optional[int]) -> GameConfig:
    """The referee's settings of a gate on ``board``: no time limit (fixed visits decide)."""
    return GameConfig(board.width, board.height, board.rule, max_plies=max_plies,
                      move_timeout_ms=None, n=board.n)


def _score(winner: Optional[int], colour: int) -> float:
    return 0.5 if winner is None else (1.0 if winner == colour else 0.0)


# ============================================================================ the gate
#: the SPRT models a gate can use (:func:`gomoku_ai.rating.sprt` on pentanomial counts)
SPRT_MODELS = ("logistic", "normalized")


@dataclass
class GateConfig:
    """How a candidate is gated against the best: ``visits`` per move, at most ``max_games`` games (in
    colour-swapped pairs), an SPRT of ``elo0`` against ``elo1`` (Elo) with error rates ``alpha``/``beta``
    unless ``sprt`` is False; ``max_plies``: a game is a draw after this many plies (None: board full)."""

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

    def __post_init__(self) -> None:
        checks.at_least(self, 1, "visits")
        checks.at_least(self, 2, "max_games")      # games are played in colour-swapped pairs
        checks.finite(self, "elo0", "elo1")
        checks.in_open_range(self, 0, 1, "alpha", "beta")
        checks.one_of(self, "model", SPRT_MODELS)
        checks.at_least(self, 1, "max_plies", allow_none=True)


# ============================================================================ gate pairs on a pool
class GateError(RuntimeError):
    """A gate pair failed with an error in its worker (a bug, an unreadable model)."""


def _network_spec(spec: Any) -> Optional[InProcessSpec]:
    """The :class:`~gomoku_ai.players.InProcessSpec` of a spec that names a network (a model path or
    ``model:PATH``), else None (a spec without a network, or a player object)."""
    if not isinstance(spec, (str, os.PathLike, InProcessSpec)):
        return None
    s = as_spec(spec)
    return s if s.kind is PlayerKind.MODEL else None


def spec_version(spec: Any) -> Optional[str]:
    """The network version a player spec stands for: ``"<name>@<sha12>"`` of a model path
    (:func:`~gomoku_ai.workers.model_version`), the spec itself for one without a network
    (``"heuristic"``, ``"uniform"``), None for objects (players: nothing on disk identifies them)."""
    if not isinstance(spec, (str, os.PathLike)):
        return None
    net = _network_spec(spec)
    if net is None:
        return os.fspath(spec)
    from ..net import ModelError, model_basename
    try:
        return model_version(model_basename(net.model_path))
    except (OSError, ValueError, ModelError):
        return Path(str(net.model)).name


class GateWorker:
    """The gate worker of a pool (also reached through
    :class:`~gomoku_ai.training.poolworker.TrainingWorker`, so that the training loop's one pool
    serves self-play and gating): plays one colour-swapped pair per task.

    Each side comes with the task: a shared :class:`~gomoku_ai.workers.ModelRef` (or a model
    path) whose network is loaded once per version, or a spec without a network
    (``"heuristic"``/``"uniform"``, ...); its :class:`~gomoku_ai.players.EnginePlayer` is built
    once per (version, visits) and reused across pairs (each game starts a fresh Player).
    """

    def __init__(self, net_backend: str = "auto") -> None:
        self.net_backend = net_backend
        self.models = {"candidate": ModelCache(self._load), "best": ModelCache(self._load)}
        self.players: Dict[str, Tuple[Any, EnginePlayer]] = {}

    def _load(self, base: Path) -> Network:
        from ..net import load_model
        return load_model(base, backend=self.net_backend, threads=1)

    def player(self, role: str, spec: Any, visits: int, rule: Rule = Rule.FREESTYLE
               ) -> Tuple[str, EnginePlayer]:
        """``(version, player)`` for one side of a pair."""
        spec = resolve(spec)
        if isinstance(spec, str) and _network_spec(spec) is None:
            version = label = spec
            make: Callable[[], EnginePlayer] = lambda: resolve_player(  # noqa: E731
                spec, visits=visits, rule=rule, name=f"{role}:{label}")
        else:
            from ..evaluator import NetworkEvaluator
            net_spec = _network_spec(spec)
            version, net = self.models[role].get(net_spec.model if net_spec is not None else spec)
            label = str(net.name)
            make = lambda: resolve_player(  # noqa: E731
                InProcessSpec(PlayerKind.MODEL, f"model:{label}"),
                visits=visits, name=f"{role}:{label}", version=version,
                evaluator=NetworkEvaluator(net, batch_size=4))
        key = (version, int(visits), rule)
        cur = self.players.get(role)
        if cur is None or cur[0] != key:
            self.players[role] = (key, make())
        return version, self.players[role][1]

    def run(self, payload: Dict[str, Any]) -> Dict[str, Any]:
        w, h, rule, n = payload["board"]
        board = Board(w, h, Rule.parse(rule), n)
        visits = int(payload["visits"])
        cv, pc = self.player("candidate", payload["candidate"], visits, board.rule)
        bv, pb = self.player("best", payload["best"], visits, board.rule)
        first, second = play_pair(pc, pb, gate_game_config(board, payload.get("max_plies")),
                                  tuple(payload["opening"]), int(payload["seed"]),
                                  int(payload["pair"]))
        return {**pair_record(int(payload["pair"]), first, second),
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
        self.ends: Dict[Termination, int] = {}
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
            t = Termination(e)   # journal lines hold the enum's value
            self.ends[t] = self.ends.get(t, 0) + 1
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


#: the pair records of a gate, in pair order (a generator: closing it abandons the pairs still running)
PairRecords = Generator[Dict[str, Any], None, None]


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
                  log: Optional[Callable[[Dict[str, Any]], None]]) -> PairRecords:
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


def _pool_side(pool: Pool, spec: Any) -> Any:
    """What a pool task carries for one side: a spec without a network as its text, a network as
    a shared :class:`~gomoku_ai.workers.ModelRef`."""
    net = _network_spec(spec)
    if net is None:
        return os.fspath(spec)
    from ..net import model_basename
    return pool.share(ModelRef.from_path(model_basename(net.model_path)))


def _gate_players(candidate: Any, best: Any, cfg: GateConfig, board: Board, pooled: bool,
                  player_factory: Optional[Callable[[Any, str], Any]]
                  ) -> Tuple[Any, Any, Dict[str, str]]:
    """The two players of an in-process gate (None, None on a pool, after checking that both
    sides are specs) and the names the result reports for them."""
    if pooled:
        if player_factory is not None:
            raise ValueError("a gate on a pool builds its own players: no player_factory")
        for role, spec in (("candidate", candidate), ("best", best)):
            if not isinstance(spec, (str, os.PathLike)):
                raise ValueError(f"a gate on a pool needs a player spec or a model path for the "
                                 f"{role}, not a {type(spec).__name__}")
        names = {"candidate": f"candidate:{spec_label(candidate)}",
                 "best": f"best:{spec_label(best)}"}
        return None, None, names
    factory = player_factory or default_player_factory(cfg.visits, rule=board.rule)
    p_cand = factory(candidate, "candidate")
    p_best = factory(best, "best")
    names = {"candidate": getattr(p_cand, "name", str(candidate)),
             "best": getattr(p_best, "name", str(best))}
    return p_cand, p_best, names


def _journal_pairs(jpath: Optional[Path], seed: int, ops: List[Opening], max_pairs: int,
                   versions: Dict[str, Optional[str]]) -> Dict[int, Dict[str, Any]]:
    """The pairs of the journal at ``jpath`` that this gate can take, by pair index: same seed,
    played by the shipped Player, same opening, and network versions that match (or unknown)."""
    done: Dict[int, Dict[str, Any]] = {}
    if jpath is not None and jpath.exists():
        from ..fileio import read_jsonl
        for rec in read_jsonl(jpath):
            if rec.get("seed") == seed and rec.get("engine") == GATE_ENGINE \
                    and 0 <= int(rec.get("pair", -1)) < max_pairs \
                    and tuple(rec.get("opening", ())) == ops[int(rec["pair"])] \
                    and all(rec.get(k) in (None, v) or v is None for k, v in versions.items()):
                done[int(rec["pair"])] = rec
    return done


def _pool_records(pool: Pool, candidate: Any, best: Any, board: Board, cfg: GateConfig,
                  ops: List[Opening], todo: List[int], done: Dict[int, Dict[str, Any]],
                  max_pairs: int, jpath: Optional[Path], info: Dict[str, Any],
                  log: Optional[Callable[[Dict[str, Any]], None]]) -> PairRecords:
    """The pair records of a gate on ``pool``: both sides shared with the workers, the pairs of
    ``todo`` played as tasks (see :func:`_pooled_pairs`)."""
    shared = {role: _pool_side(pool, spec)
              for role, spec in (("candidate", candidate), ("best", best))}
    dims = (board.width, board.height, board.rule.value, board.n)

    def payload(i: int) -> Dict[str, Any]:
        return {"kind": "gate_pair", "pair": i, "seed": cfg.seed, "opening": list(ops[i]),
                "candidate": shared["candidate"], "best": shared["best"],
                "visits": cfg.visits, "board": dims, "max_plies": cfg.max_plies}

    return _pooled_pairs(pool, payload, todo, done, max_pairs, jpath, cfg.seed, info, log)


def _sequential_records(p_cand: Any, p_best: Any, gcfg: GameConfig, cfg: GateConfig,
                        ops: List[Opening], done: Dict[int, Dict[str, Any]], max_pairs: int,
                        jpath: Optional[Path], versions: Dict[str, Optional[str]]
                        ) -> PairRecords:
    """The pair records of an in-process gate in pair order: journal pairs as they are, the
    others played here under ``gcfg`` (and journaled) when the consumer asks for them."""
    for i in range(max_pairs):
        if i in done:
            yield done[i]
            continue
        games = play_pair(p_cand, p_best, gcfg, ops[i], cfg.seed, i)
        rec = {**pair_record(i, *games), "seed": cfg.seed, "opening": list(ops[i]),
               **versions}
        _append_pair(jpath, rec)
        yield rec


def _take_pairs(records: Iterator[Dict[str, Any]], cfg: GateConfig,
                log: Optional[Callable[[Dict[str, Any]], None]]) -> Tuple[_Tally, Optional[str]]:
    """The pair loop: tally ``records`` in order (logging each) until the SPRT decides (when
    ``cfg.sprt``) or the records run out. Returns the tally and the SPRT's decision if it stopped
    the loop (else None)."""
    tally = _Tally(cfg)
    for rec in records:
        tally.add(rec)
        if log is not None:
            log({"pair": int(rec["pair"]), "penta": list(tally.penta),
                 "llr": None if tally.res is None else round(tally.res.llr, 4)})
        if cfg.sprt and tally.decision is not None:
            return tally, tally.decision
    return tally, None


def _gate_result(tally: _Tally, cfg: GateConfig, decision: Optional[str], *, reused: bool,
                 ops: List[Opening], visits: Optional[int], t0: float, names: Dict[str, str],
                 versions: Dict[str, Optional[str]], where: Dict[str, Any],
                 pool_info: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    """The verdict of :func:`run_gate` (its documented result) from the pairs taken.
    ``pool_info``: ``lost``/``discarded`` of a gate on a pool, None for an in-process one."""
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
        "black_wins": tally.black_wins, "white_wins": tally.white_wins,
        "ends": {t.value: k for t, k in tally.ends.items()},
        "openings_reused": reused and pairs > len(set(ops)),
        "visits": visits, "max_games": cfg.max_games,
        "elapsed_s": round(time.perf_counter() - t0, 2),
        "candidate": names["candidate"], "best": names["best"], **versions,
        "where": where,
    }
    if pool_info is not None:
        out["lost_pairs"] = sorted(pool_info.get("lost", []))
        out["discarded_pairs"] = int(pool_info.get("discarded", 0))
    if est.se == 0 and est.score in (0.0, 1.0):
        b = rating.perfect_score_bound(games)
        out["perfect_score_elo_bound"] = round(b if est.score == 1.0 else -b, 1)
    if tally.notes:
        out["notes"] = tally.notes
    return out


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

    ``candidate``/``best``: player specs of :mod:`gomoku_ai.players` (model paths,
    ``"heuristic"``, ``"uniform"``, ...) or :class:`~gomoku_ai.match.GamePlayer` objects (see
    :func:`default_player_factory`); ``player_factory(spec, role)`` replaces the default.
    ``overrides`` are :class:`GateConfig` fields. ``journal``: a JSONL file of finished pairs; a
    rerun with the same arguments continues from it instead of replaying them (pairs recorded
    with other network versions, or before the gate played the shipped Player, are not taken).

    Where the pairs are played: in this process, one after the other (the default), or as tasks
    of ``pool`` (kept open by the caller; :class:`GateWorker` or the training loop's
    :class:`~gomoku_ai.training.poolworker.TrainingWorker`) or of
    ``workers`` new workers on ``backend`` (``"local"``/``"ray"``, ``address`` as in
    :func:`~gomoku_ai.workers.make_pool`). On a pool ``candidate``/``best`` must be specs or
    model paths (no objects, no ``player_factory``); pairs run in parallel
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
    p_cand, p_best, names = _gate_players(candidate, best, cfg, board, pooled, player_factory)
    max_pairs = cfg.max_games // 2
    ops, reused = gate_openings(openings, board, max_pairs, cfg.seed, cfg.symmetries)
    jpath = Path(journal) if journal is not None else None
    done = _journal_pairs(jpath, cfg.seed, ops, max_pairs, versions)
    t0 = time.perf_counter()
    info: Dict[str, Any] = {}
    where: Dict[str, Any] = {"backend": "in-process", "workers": 0}
    own_pool = False
    todo = [i for i in range(max_pairs) if i not in done]
    if pooled and not todo:     # every pair is in the journal: nothing to start
        records: PairRecords = (done[i] for i in range(max_pairs))
        info["lost"], info["discarded"] = [], 0
    elif pooled:
        if pool is None:
            pool = make_pool(gate_spec(net_backend), max(1, min(workers, len(todo))),
                             backend=backend, address=address)
            own_pool = True
        where = pool.describe()
        records = _pool_records(pool, candidate, best, board, cfg, ops, todo, done, max_pairs,
                                jpath, info, log)
    else:
        records = _sequential_records(p_cand, p_best, gate_game_config(board, cfg.max_plies),
                                      cfg, ops, done, max_pairs, jpath, versions)
    try:
        tally, decision = _take_pairs(records, cfg, log)
    finally:
        records.close()
        if own_pool and pool is not None:
            pool.close()
    return _gate_result(tally, cfg, decision, reused=reused, ops=ops,
                        visits=cfg.visits if player_factory is None else None, t0=t0,
                        names=names, versions=versions, where=where,
                        pool_info=info if pooled else None)
