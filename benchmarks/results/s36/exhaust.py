"""One-off (session 36): on a blunder set, the opponent's VCT (our C search, depth 20, ``--nodes``)
after each holding move of a position and after the move that lost. ``exhausted``: the search ended
without a VCT before its node limit (a proof, within our threat rules, that the opponent has none),
``aborted``: the limit cut it, ``found``: it refutes the move. Prints per position the counts and a
JSON summary: how often the losing move is not exhausted while some holding move is; with ``--all``,
also the other squares within two of a stone (the oracle's losing moves) and how many of them the
search exhausts.

    taskset -c 1 .venv/bin/python benchmarks/results/s36/exhaust.py benchmarks/data/blunder_positions_20.txt
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "benchmarks"))

from build_vct_set import near  # noqa: E402
from gomoku_ai.vct import read_positions, vct_search  # noqa: E402


ALL = "--all" in sys.argv


def status(b, m: int, nodes: int) -> str:
    b.push(m)
    try:
        r = vct_search(b, 20, nodes)
    finally:
        b.pop()
    return "found" if r.line is not None else ("aborted" if r.aborted else "exhausted")


def main() -> int:
    args = [a for a in sys.argv[1:] if a != "--all"]
    path = args[0]
    nodes = int(args[1]) if len(args) > 1 else 5000
    rows = []
    for p in read_positions(path):
        b = p.board()
        ans = {m: status(b, m, nodes) for m in sorted(p.answer)}
        lost = {m: status(b, m, nodes) for m in p.loses}
        # the other squares within two of a stone: the oracle's losing moves
        others = [m for m in near(b) if m not in p.answer and m not in p.loses] if ALL else []
        oth = [status(b, m, nodes) for m in others]
        row = {"name": p.name, "answers": len(ans), "others": len(oth),
               "others_exhausted": sum(v == "exhausted" for v in oth),
               "answers_exhausted": sum(v == "exhausted" for v in ans.values()),
               "answers_found": sum(v == "found" for v in ans.values()),
               "lost": next(iter(lost.values()))}
        rows.append(row)
        print(json.dumps(row), flush=True)
    sep = [r for r in rows if r["lost"] != "exhausted" and r["answers_exhausted"]]
    print(json.dumps({"set": path, "nodes": nodes, "positions": len(rows),
                      "lost_move": {k: sum(r["lost"] == k for r in rows)
                                    for k in ("found", "aborted", "exhausted")},
                      "some_answer_exhausted": sum(1 for r in rows if r["answers_exhausted"]),
                      "answers": sum(r["answers"] for r in rows),
                      "answers_exhausted": sum(r["answers_exhausted"] for r in rows),
                      "others": sum(r["others"] for r in rows),
                      "others_exhausted": sum(r["others_exhausted"] for r in rows),
                      "lost_not_exhausted_and_an_answer_exhausted": len(sep)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
