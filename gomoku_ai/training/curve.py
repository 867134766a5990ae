"""The learning curve of a loop run: the strength of its candidates against a fixed reference.

Gating compares a candidate with the previous best, which says little about progress over a whole
run (and nothing when gating is off). :func:`strength_curve` plays each selected candidate
``DIR/candidates/it<i>`` against one fixed opponent, in colour-swapped pairs from random openings
(the gate's match, :func:`~gomoku_ai.training.gating.run_gate`, with the SPRT off: every game is
played), and appends one JSON line per iteration to ``DIR/curve.jsonl``::

    {"iteration": 8, "opponent": "uniform", "visits": 200, "games": 20, "score": 0.8,
     "elo": 240.8, "ci95": [..], "wins": .., "draws": .., "losses": .., "pentanomial": [..], ...}

Both sides are the engine's :class:`~gomoku_ai.player.Player` (MCTS + root VCF/VCT tactics) made by
:func:`~gomoku_ai.players.resolve_player`, as in gating and the tournament runner; the opponent is a
player spec of :mod:`gomoku_ai.players` (``uniform``, the default, which is ``tactics``: the same
search without the network; ``pure``: rollouts without VCF; ``heuristic``; or a model path, e.g. an
earlier candidate).

``visits`` is the candidates' visits; ``opponent_visits`` (default: the same) the opponent's.
Iterations already in ``curve.jsonl`` with the same opponent, visits and games are skipped, so an
interrupted curve resumes. ``gomoku train curve`` is the command line; ``gomoku train plot`` draws
the result.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from ..board import Board
from ..fileio import read_jsonl
from ..match import GamePlayer
from ..players import resolve_player
from ..rules import Rule
from .gating import GateConfig, run_gate

CURVE_NAME = "curve.jsonl"


def candidate_iterations(run_dir: Union[str, os.PathLike]) -> List[int]:
    """The iterations that have an exported candidate, ascending."""
    out = []
    for p in (Path(run_dir) / "candidates").glob("it*.json"):
        m = re.fullmatch(r"it(\d+)\.json", p.name)
        if m:
            out.append(int(m.group(1)))
    return sorted(out)


def select_iterations(available: Sequence[int], every: int = 1,
                      only: Optional[Sequence[int]] = None) -> List[int]:
    """``only`` (those available), else every ``every``-th iteration plus the last one."""
    av = sorted(available)
    if only:
        return [i for i in av if i in set(only)]
    every = max(1, int(every))
    sel = [i for i in av if i % every == 0]
    if av and av[-1] not in sel:
        sel.append(av[-1])
    return sel


def strength_curve(run_dir: Union[str, os.PathLike], opponent: str = "uniform",
                   visits: int = 200, games: int = 20, every: int = 1,
                   iterations: Optional[Sequence[int]] = None,
                   opponent_visits: Optional[int] = None, seed: int = 1,
                   out: Union[None, str, os.PathLike] = None,
                   log: Optional[Callable[[Dict[str, Any]], None]] = None) -> List[Dict[str, Any]]:
    """Play the selected candidates of ``run_dir`` against ``opponent``; returns (and appends to
    ``out``, default ``DIR/curve.jsonl``) one record per iteration. See the module docstring."""
    run = Path(run_dir)
    cfg = json.loads((run / "config.json").read_text(encoding="utf-8"))
    w, h = int(cfg["width"]), int(cfg.get("height") or cfg["width"])
    board = Board(w, h, Rule.parse(cfg.get("rule", "freestyle")), int(cfg.get("n", 5)))
    ovisits = int(opponent_visits or visits)
    path = Path(out) if out is not None else run / CURVE_NAME
    done = {int(r["iteration"]) for r in read_jsonl(path)
            if r.get("opponent") == opponent and r.get("visits") == visits
            and r.get("opponent_visits", r.get("visits")) == ovisits and r.get("games") == games}
    results: List[Dict[str, Any]] = []
    todo = [i for i in select_iterations(candidate_iterations(run), every, iterations)
            if i not in done]
    for i in todo:
        cand = run / "candidates" / f"it{i:04d}"
        gcfg = GateConfig(visits=visits, max_games=games, seed=seed, sprt=False)

        def factory(spec: Any, role: str, _i: int = i) -> GamePlayer:
            if role == "candidate":
                return resolve_player(spec, visits=visits, seed=seed + _i, rule=board.rule)
            return resolve_player(spec, visits=ovisits, seed=seed + 7919 * _i, rule=board.rule)

        res = run_gate(cand, opponent, board=board, config=gcfg, player_factory=factory)
        rec = {"iteration": i, "opponent": opponent, "visits": visits,
               "opponent_visits": ovisits,
               **{k: res[k] for k in ("games", "pairs", "wins", "draws", "losses", "pentanomial",
                                       "score", "elo", "ci95", "elo_err", "los",
                                       "candidate_black_score", "candidate_white_score",
                                       "ends", "elapsed_s")}}
        if "perfect_score_elo_bound" in res:
            rec["perfect_score_elo_bound"] = res["perfect_score_elo_bound"]
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(rec) + "\n")
            f.flush()
            os.fsync(f.fileno())
        results.append(rec)
        if log is not None:
            log(rec)
    return results
