"""Where the games a player lost turned, read from the evaluations the winner printed with its moves
(Rapfi's ``Eval 106`` / ``Eval +M23`` when asked for its messages, kept by the runner as the move's
comment; the evaluation is the mover's, before its move). No engine runs: this only reads a finished
tournament, so it takes a second.

For each game ``--player`` lost in which the opponent printed evaluations after the opening:

* ``decided_ply``: the opponent's first move (0-based ply) at which its evaluation reached ``--won``
  (its units; Rapfi's classical evaluation: 300 is a clear advantage) or a mate for it;
  ``after_opening``: how many plies after the opening that was;
* ``before``: its evaluation at its previous move (None: the first it printed), and ``kind``:
  ``sudden`` (``before`` under ``--even``: one move of ours took a level game to a decided one; the
  move at ``decided_ply - 1`` is the one to look at), ``drift`` (``before`` already between ``--even``
  and ``--won``: the advantage grew over several moves) or ``first`` (decided at its first printed
  evaluation: the opening, or what came before any evaluation);
* ``mate_ply``, ``mate_in``: its first announced mate for itself and its length in plies (None:
  none announced).

Prints a JSON summary (counts by kind, medians); ``--out`` also keeps every row.

    .venv/bin/python benchmarks/eval_swings.py runs/s24/r100k-20-mix --player ours
    .venv/bin/python benchmarks/eval_swings.py benchmarks/results/s24/r100k-20-mix-results.jsonl.xz

A results file kept in ``benchmarks/results/`` (plain or ``.xz``) will do as well as a folder.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from gomoku_ai.fileio import atomic_write_text  # noqa: E402
from gomoku_ai.training.dataset import parse_eval_mate  # noqa: E402  (the packer's reading of Rapfi's Eval)
from results_io import lost_by, read_results  # noqa: E402


def opponent_evals(game: Dict[str, Any], player: str) -> List[Tuple[int, float, Optional[int]]]:
    """(ply, evaluation, mate length) of each of the opponent's moves that printed one, in ply order;
    a mate is +inf or -inf with its length in plies, else the length is None."""
    opp_black = game["black"] != player
    out = []
    for ply_s, text in sorted((game.get("comments") or {}).items(), key=lambda kv: int(kv[0])):
        ply = int(ply_s)
        e = parse_eval_mate(text or "")
        if e is not None and (ply % 2 == 0) == opp_black:
            out.append((ply, *e))
    return out


def swing(game: Dict[str, Any], player: str, won: float, even: float) -> Optional[Dict[str, Any]]:
    """The row of one lost ``game`` (see the module docstring); None when the opponent printed no
    evaluation or never reached ``won``."""
    evals = opponent_evals(game, player)
    row: Dict[str, Any] = {"game": game.get("game"), "ours": "white" if game["black"] != player else "black"}
    before: Optional[float] = None
    for ply, e, _n in evals:
        if e >= won:
            opening = int(game.get("opening_plies") or 0)
            kind = "first" if before is None else "sudden" if before < even else "drift"
            row.update(decided_ply=ply, after_opening=ply - opening, kind=kind,
                       before=None if before is None else _finite(before))
            break
        before = e
    else:
        return None
    mate = next(((ply, n) for ply, e, n in evals if n is not None and e > 0), None)
    row["mate_ply"], row["mate_in"] = mate if mate else (None, None)
    return row


def _finite(e: float) -> Any:
    """An evaluation for JSON: a mate as the string "mate" / "-mate"."""
    return e if abs(e) != float("inf") else ("mate" if e > 0 else "-mate")


def summary(rows: List[Dict[str, Any]], lost: int) -> Dict[str, Any]:
    """Counts by kind and the medians of ``after_opening`` and ``mate_in``, overall and by kind."""
    def med(vals: List[Any]) -> Optional[float]:
        vals = [v for v in vals if v is not None]
        return statistics.median(vals) if vals else None
    out: Dict[str, Any] = {"lost": lost, "decided": len(rows),
                           "by_kind": dict(Counter(r["kind"] for r in rows)),
                           "after_opening_median": med([r["after_opening"] for r in rows]),
                           "mate_in_median": med([r["mate_in"] for r in rows])}
    for kind in ("sudden", "drift", "first"):
        sub = [r for r in rows if r["kind"] == kind]
        if sub:
            mates = [r["mate_in"] for r in sub if r["mate_in"] is not None]
            out[kind] = {"games": len(sub), "after_opening_median": med([r["after_opening"] for r in sub]),
                         "decided_by_a_mate": sum(1 for r in sub if r["decided_ply"] == r["mate_ply"]),
                         "mate_in_median": med(mates), "mate_in_min": min(mates) if mates else None}
    return out


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", type=Path, help="a tournament folder or a results file (.jsonl, .jsonl.xz)")
    ap.add_argument("--player", default="ours", help="whose losses (default: %(default)s)")
    ap.add_argument("--won", type=float, default=300.0,
                    help="the opponent's evaluation that counts as decided (default: %(default)s)")
    ap.add_argument("--even", type=float, default=100.0,
                    help="below this, the game counts as still level (default: %(default)s)")
    ap.add_argument("--out", type=Path, default=None, help="also write the summary and every row here (JSON)")
    a = ap.parse_args(argv)
    if a.even >= a.won:
        ap.error("--even must be below --won")
    games = read_results(a.results)
    lost = lost_by(games, a.player)
    rows = [r for r in (swing(g, a.player, a.won, a.even) for g in lost) if r is not None]
    report = {"results": str(a.results), "player": a.player, "won": a.won, "even": a.even,
              **summary(rows, len(lost))}
    print(json.dumps(report, indent=1))
    if a.out:
        atomic_write_text(a.out, json.dumps({"summary": report, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
