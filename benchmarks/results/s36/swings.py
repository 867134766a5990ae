"""One-off (session 36): Rapfi's evaluation, for the player, of every position after the opening of
the games it lost, to see which of its moves turned them (``--opening K``: only games from opening K
of the file). Prints one JSON row per game: its number, our colour, the opening, and per ply
[ply, mover ("us"/"them"), Rapfi's evaluation for us of the position before that ply's move].

    taskset -c 1 .venv/bin/python benchmarks/results/s36/swings.py runs/s36/aiwine-20-ft2-1336 \\
        --size 20 --opening 5 --nodes 300000 > benchmarks/results/s36/swings-op5.jsonl
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from build_vct_set import Oracle  # noqa: E402
from gomoku_ai.board import Board  # noqa: E402


def for_us(ev: str, ours_to_move: bool) -> float:
    """Rapfi's evaluation text (side to move) as a number for us: a mate in n is +-(30000 - n)."""
    v = (30000 - int(ev[2:])) * (1 if ev[0] == "+" else -1) if "M" in ev else float(ev)
    return v if ours_to_move else -v


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("folder")
    ap.add_argument("--player", default="ours")
    ap.add_argument("--size", type=int, default=20)
    ap.add_argument("--opening", type=int, default=None)
    ap.add_argument("--nodes", type=int, default=300000)
    ap.add_argument("--engine", default=str(Path.home() / "sparring/rapfi/build/pbrain-rapfi"))
    a = ap.parse_args()
    orc = Oracle([a.engine], a.nodes, a.size)
    try:
        for line in open(Path(a.folder) / "results.jsonl"):
            g = json.loads(line)
            if g["winner"] is None or g[g["winner"]] == a.player:
                continue
            if a.opening is not None and g["opening"] != a.opening:
                continue
            black = g["black"] == a.player
            moves = [y * a.size + x for x, y in g["moves"]]
            b = Board(a.size)
            for m in moves[:g["opening_plies"]]:
                b.push(m)
            trace = []
            for p in range(g["opening_plies"], len(moves)):
                ours = (p % 2 == 0) == black
                ev, best = orc.ask(b)
                trace.append([p, "us" if ours else "them", for_us(ev, ours),
                              b.move_name(moves[p]), best])
                b.push(moves[p])
            print(json.dumps({"game": g["game"], "colour": "black" if black else "white",
                              "opening": g["opening"], "transform": g["transform"],
                              "trace": trace}), flush=True)
    finally:
        orc.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
