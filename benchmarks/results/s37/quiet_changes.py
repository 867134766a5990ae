"""One-off (session 37): how often the quiet-move preference (``PYGOMOKU_QUIET``) changes the search's
move in ordinary game positions, and whether the change is for the better by an oracle's judgement.
Positions: a sample of the positions with ours to move (after the opening) of a finished tournament.
For each, the player searches ``--ms`` with the preference off; then :func:`_quiet_choice` is applied
to that search's result (the default settings, 100 ms). Where the move changes, Rapfi (``--nodes``) is
asked about the position after each of the two moves (its evaluation for the opponent, to move,
turned into ours: a mate in n is +-(30000 - n)). Prints one JSON row per position, then a summary.

    taskset -c 0 .venv/bin/python benchmarks/results/s37/quiet_changes.py runs/s37/aiwine-20-plain-1338 \\
        --sample 100 --part 0/2 > q0.jsonl
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from build_vct_set import Oracle  # noqa: E402
from gomoku_ai import player as P  # noqa: E402
from gomoku_ai import shipped  # noqa: E402
from gomoku_ai.board import Board  # noqa: E402


def for_us(ev: str) -> float:
    """Rapfi's evaluation text for the side to move (the opponent) as a number for us."""
    v = (30000 - int(ev[2:])) * (1 if ev[0] == "+" else -1) if "M" in ev else float(ev)
    return -v


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder")
    ap.add_argument("--player", default="ours")
    ap.add_argument("--size", type=int, default=20)
    ap.add_argument("--sample", type=int, default=200)
    ap.add_argument("--part", default="0/1", help="K/N: the K-th of N interleaved parts of the sample")
    ap.add_argument("--ms", type=float, default=920.0)
    ap.add_argument("--nodes", type=int, default=300000)
    ap.add_argument("--seed", type=int, default=37)
    a = ap.parse_args()
    k, n = (int(x) for x in a.part.split("/"))
    positions = []
    for line in open(Path(a.folder) / "results.jsonl"):
        g = json.loads(line)
        ours = 0 if g["black"] == a.player else 1
        for ply in range(g["opening_plies"], g["plies"]):
            if ply % 2 == ours:
                positions.append((g["game"], g["moves"][:ply]))
    rng = random.Random(a.seed)
    sample = rng.sample(positions, min(a.sample, len(positions)))[k::n]
    pl = shipped.load_player(None, width=a.size, height=a.size)
    orc = Oracle([str(Path.home() / "sparring/rapfi/build/pbrain-rapfi")], a.nodes, a.size)
    changed = better = worse = 0
    try:
        for game, moves in sample:
            b = Board(a.size)
            for x, y in moves:
                b.push(y * a.size + x)
            pl.mcts.reset()
            info = pl.think(b, P.Limit(soft_ms=a.ms, hard_ms=a.ms))
            q = P._quiet_choice(b, info, time.perf_counter() + 0.1)
            row = {"game": game, "ply": len(moves), "search": b.move_name(info.move), "quiet": b.move_name(q.move)}
            if q.move != info.move:
                changed += 1
                evs = []
                for m in (info.move, q.move):
                    b.push(m)
                    evs.append(for_us(orc.ask(b)[0]))
                    b.pop()
                row["eval_search"], row["eval_quiet"] = evs
                better += evs[1] > evs[0] + 50
                worse += evs[1] < evs[0] - 50
            print(json.dumps(row), flush=True)
    finally:
        orc.close()
    print(json.dumps({"positions": len(sample), "changed": changed, "better_by_50": better, "worse_by_50": worse}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
