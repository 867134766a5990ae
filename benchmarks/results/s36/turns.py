"""One-off (session 36): where each lost game of a ``swings.py`` file turned. For each game, the
first move of ours after which Rapfi's evaluation for us fell below -300 (or to a mate against us):
the evaluation before that move, after it, and whether it came at once (before >= -150: ``sudden``)
or after a slide (``drift``).

    .venv/bin/python benchmarks/results/s36/turns.py benchmarks/results/s36/swings-edge2.jsonl
"""
from __future__ import annotations

import json
import sys
from collections import Counter


def turn(trace: list) -> dict:
    for i, (ply, who, ev, played, best) in enumerate(trace[:-1]):
        after = trace[i + 1][2]
        if who == "us" and ev > -300 and after <= -300:
            mate = 30000 - abs(after) if abs(after) > 20000 else None
            return {"ply": ply, "before": ev, "after": after, "mate_plies": mate, "played": played,
                    "rapfi": best, "kind": "sudden" if ev >= -150 else "drift"}
    return {"ply": None, "kind": "lost at the start" if trace and trace[0][2] <= -300 else "other"}


def main() -> int:
    rows = []
    for line in open(sys.argv[1]):
        g = json.loads(line)
        rows.append({"game": g["game"], "colour": g["colour"], "opening": g["opening"],
                     "transform": g["transform"], **turn(g["trace"])})
    for r in rows:
        print(json.dumps(r))
    print(json.dumps({"games": len(rows), "kinds": Counter(r["kind"] for r in rows),
                      "with_mate": sum(1 for r in rows if r.get("mate_plies"))}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
