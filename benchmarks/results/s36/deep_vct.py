"""One-off (session 36): can our VCT see the sudden losses of ``turns.py``? For each turn with a mate
(Rapfi 300k), the position after our move (the opponent to move): our C VCT for the opponent at
growing depth (node limit ``--nodes``), and the same after Rapfi's move instead of ours (a check that
refuted that one too would be useless).

    taskset -c 1 .venv/bin/python benchmarks/results/s36/deep_vct.py runs/s36/aiwine-20-edge2-1336 \\
        benchmarks/results/s36/swings-edge2.jsonl
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from gomoku_ai import native  # noqa: E402
from gomoku_ai.board import Board  # noqa: E402
from gomoku_ai.vct import vct_search  # noqa: E402
from turns import turn  # noqa: E402


def probe(b: Board, depths, nodes: int) -> list:
    out = []
    for d in depths:
        r = vct_search(b, d, nodes)
        out.append({"depth": d, "found": r.line is not None, "nodes": r.nodes,
                    "aborted": r.aborted, "ms": round(r.elapsed_s * 1000, 1)})
        if r.line is not None:
            break
    return out


def main() -> int:
    folder, swings = sys.argv[1], sys.argv[2]
    nodes = int(sys.argv[3]) if len(sys.argv) > 3 else 400000
    depths = [3, 5, 7, 9, 11, native.VCT_MAX_DEPTH]
    games = {json.loads(ln)["game"]: json.loads(ln) for ln in open(Path(folder) / "results.jsonl")}
    for line in open(swings):
        g = json.loads(line)
        t = turn(g["trace"])
        if not t.get("mate_plies"):
            continue
        rec = games[g["game"]]
        size = 20
        b = Board(size)
        for x, y in rec["moves"][:t["ply"]]:
            b.push(y * size + x)
        row = {"game": g["game"], "ply": t["ply"], "mate_plies": t["mate_plies"]}
        for label, name in (("played", t["played"]), ("rapfi", t["rapfi"])):
            b.push(b.parse(name))
            row[label] = probe(b, depths, nodes)
            b.pop()
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
