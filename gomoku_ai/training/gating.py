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

Everything runs in this process. The Elo estimate after an SPRT stop is biased (RATING.md 2); it
is reported with its 95 % interval for information only.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Protocol, Sequence, Tuple, Union

import numpy as np

from .. import rating
from ..board import Board
from ..evaluator import Evaluator
from ..mcts import MCTS, MCTSConfig
from ..rules import BLACK, WHITE, Rule
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
        cells = board.cells
        stones = cells != 0
        near = np.zeros_like(stones)
        h, w = cells.shape
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                near[max(0, dy):h + min(0, dy), max(0, dx):w + min(0, dx)] |= \
                    stones[max(0, -dy):h + min(0, -dy), max(0, -dx):w + min(0, -dx)]
        cand = np.flatnonzero((near & (cells == 0)).reshape(-1))
        if len(cand) == 0:
            cand = np.flatnonzero((cells == 0).reshape(-1))
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
        if b.rule is Rule.RENJU and b.side_to_move == BLACK:
            from ..renju import is_forbidden
            if is_forbidden(b, m):
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


def run_gate(candidate: Any, best: Any, *, board: Optional[Board] = None,
             width: int = 15, height: Optional[int] = None, n: int = 5,
             rule: str = "freestyle", openings: Union[None, str, os.PathLike, Sequence] = None,
             config: Optional[GateConfig] = None,
             player_factory: Optional[Callable[[Any, str], Any]] = None,
             journal: Union[None, str, os.PathLike] = None,
             log: Optional[Callable[[Dict[str, Any]], None]] = None,
             **overrides: Any) -> Dict[str, Any]:
    """Candidate vs best in colour-swapped pairs until the SPRT decides or ``max_games``.

    ``candidate``/``best``: model paths, ``"heuristic"``/``"uniform"``, evaluators or player
    objects (see :func:`default_player_factory`); ``player_factory(spec, role)`` replaces the
    default. ``overrides`` are :class:`GateConfig` fields. ``journal``: a JSONL file of finished
    pairs; a rerun with the same arguments continues from it instead of replaying them.

    Returns ``decision`` (``accept``/``reject``/``inconclusive``), game and pair counts, W/D/L
    and the pentanomial counts from the candidate's side, Elo with its 95 % interval, LLR and
    bounds, and colour statistics.
    """
    cfg = config or GateConfig()
    if overrides:
        cfg = GateConfig(**{**cfg.__dict__, **overrides})
    if board is None:
        board = Board(width, height, Rule.parse(rule), n)
    if cfg.max_games < 2:
        raise ValueError("max_games must be at least 2 (one pair)")
    factory = player_factory or default_player_factory(cfg.visits)
    p_cand = factory(candidate, "candidate")
    p_best = factory(best, "best")
    max_pairs = cfg.max_games // 2
    ops, reused = gate_openings(openings, board, max_pairs, cfg.seed, cfg.symmetries)
    done: Dict[int, Dict[str, Any]] = {}
    jpath = Path(journal) if journal is not None else None
    if jpath is not None and jpath.exists():
        from ..fileio import read_jsonl
        for rec in read_jsonl(jpath):
            if rec.get("seed") == cfg.seed and 0 <= int(rec.get("pair", -1)) < max_pairs \
                    and tuple(rec.get("opening", ())) == ops[int(rec["pair"])]:
                done[int(rec["pair"])] = rec
    t0 = time.perf_counter()
    penta = [0, 0, 0, 0, 0]
    wins = draws = losses = 0
    cand_black = [0.0, 0]   # score, games
    cand_white = [0.0, 0]
    black_wins = white_wins = 0
    ends: Dict[str, int] = {}
    decision: Optional[str] = None
    res: Optional[rating.SprtResult] = None
    notes: List[str] = []
    pairs = 0
    for i in range(max_pairs):
        if i in done:
            rec = done[i]
        else:
            w1, e1, _ = play_match_game(p_cand, p_best, board, ops[i], cfg.max_plies)
            w2, e2, _ = play_match_game(p_best, p_cand, board, ops[i], cfg.max_plies)
            rec = {"pair": i, "seed": cfg.seed, "opening": list(ops[i]),
                   "winners": [w1, w2], "ends": [e1, e2]}
            if jpath is not None:
                jpath.parent.mkdir(parents=True, exist_ok=True)
                with open(jpath, "a", encoding="utf-8") as f:
                    f.write(json.dumps(rec) + "\n")
        w1, w2 = rec["winners"]
        s1, s2 = _score(w1, BLACK), _score(w2, WHITE)   # the candidate's scores
        penta[rating.pair_bucket(s1, s2)] += 1
        for s in (s1, s2):
            wins += s == 1.0
            draws += s == 0.5
            losses += s == 0.0
        cand_black[0] += s1
        cand_black[1] += 1
        cand_white[0] += s2
        cand_white[1] += 1
        for wnr in (w1, w2):
            black_wins += wnr == BLACK
            white_wins += wnr == WHITE
        for e in rec["ends"]:
            ends[e] = ends.get(e, 0) + 1
        pairs += 1
        try:
            res = rating.sprt(penta, cfg.elo0, cfg.elo1, cfg.alpha, cfg.beta, model=cfg.model)
        except rating.RatingError as e:   # e.g. a normalised hypothesis outside the data range
            res = None
            if str(e) not in notes:
                notes.append(f"sprt: {e}")
        if log is not None:
            log({"pair": i, "penta": list(penta), "llr": None if res is None else round(res.llr, 4)})
        if cfg.sprt and res is not None and res.decision is not None:
            decision = "accept" if res.decision == "H1" else "reject"
            break
    if not cfg.sprt and res is not None and res.decision is not None:
        decision = "accept" if res.decision == "H1" else "reject"   # the LLR after all games
    games = 2 * pairs
    est = rating.pentanomial(penta)
    lower, upper = rating.sprt_bounds(cfg.alpha, cfg.beta)
    out: Dict[str, Any] = {
        "decision": decision or "inconclusive",
        "games": games, "pairs": pairs,
        "wins": wins, "draws": draws, "losses": losses,
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
        "candidate_black_score": round(cand_black[0] / max(1, cand_black[1]), 4),
        "candidate_white_score": round(cand_white[0] / max(1, cand_white[1]), 4),
        "black_wins": black_wins, "white_wins": white_wins, "ends": ends,
        "openings_reused": reused and pairs > len(set(ops)),
        "visits": cfg.visits if player_factory is None else None, "max_games": cfg.max_games,
        "elapsed_s": round(time.perf_counter() - t0, 2),
        "candidate": getattr(p_cand, "name", str(candidate)),
        "best": getattr(p_best, "name", str(best)),
    }
    if est.se == 0 and est.score in (0.0, 1.0):
        b = rating.perfect_score_bound(games)
        out["perfect_score_elo_bound"] = round(b if est.score == 1.0 else -b, 1)
    if notes:
        out["notes"] = notes
    return out
