"""Session 22: what an oracle engine thinks of each opening of a finished tournament, at the position the
opening leaves (the side to move as the games had it): its printed evaluation (Rapfi: ``Eval N`` or
``Eval +Mn`` / ``Eval -Mn``, side to move's view) at ``--oracle-nodes``. One row per opening; with the
games' results, so that a reader sees how many openings are forced wins for the side to move.

    .venv/bin/python benchmarks/results/s22/opening_values.py benchmarks/results/s21/r100k-15-results.jsonl.xz \
        --oracle ~/sparring/rapfi/build/pbrain-rapfi --oracle-nodes 1000000 --out opening-values.json
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # benchmarks/: results_io
sys.path.insert(0, str(Path(__file__).resolve().parent))

from missed_wins import ask_oracle, report  # noqa: E402
from results_io import read_results  # noqa: E402
from protocol.manager import EngineClient  # noqa: E402

EVAL = re.compile(r"Eval ([+-]?M?-?\d+)")


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", type=Path, help="a tournament's results.jsonl (.xz: compressed)")
    ap.add_argument("--player", default="ours")
    ap.add_argument("--size", type=int, default=15)
    ap.add_argument("--oracle", required=True)
    ap.add_argument("--oracle-nodes", type=int, default=1_000_000)
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args(argv)
    games = read_results(a.results)
    by_open: Dict[Any, List[Dict[str, Any]]] = {}
    for g in games:
        by_open.setdefault((g["opening"], g.get("transform", 0)), []).append(g)
    eng = EngineClient([a.oracle], name="oracle", settle_ms=100.0)   # Rapfi drops a command sent too soon after its reply
    eng.start()
    rows = []
    for (op, tr), gs in sorted(by_open.items()):
        g = gs[0]
        plies = g["opening_plies"]
        moves = [tuple(m) for m in g["moves"][:plies]]
        rep = ask_oracle(eng, a.size, a.oracle_nodes, moves)
        evals = EVAL.findall(" ".join(rep.messages))
        to_move = "black" if plies % 2 == 0 else "white"
        ours = {("black" if x["black"] == a.player else "white"): x["result"] for x in gs}
        row = {"opening": op, "plies": plies, "to_move": to_move, "oracle_eval": evals[-1] if evals else None,
               "oracle_move": [rep.x, rep.y], "results_by_our_colour": ours}
        rows.append(row)
        print(json.dumps(row), flush=True)
    eng.quit()
    mates = [r for r in rows if r["oracle_eval"] and "M" in r["oracle_eval"]]
    summary = {"openings": len(rows), "mate_for_side_to_move": sum(1 for r in mates if not r["oracle_eval"].startswith("-")),
               "mate_against_side_to_move": sum(1 for r in mates if r["oracle_eval"].startswith("-"))}
    report(summary, rows, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
