"""Session 40: what the root's own VCT costs and finds on our positions of real games. A quarter of
our to-move positions after the opening (fixed seed) of the given results files; for each setting
(depth, quiet moves) the player's attack search with a clock at 1 s a move (30,000 attacker nodes,
2,000 VCF nodes, 110 ms): mean ms, how many hit the 110 ms, how many wins it finds.

    taskset -c 0 .venv/bin/python benchmarks/results/s40/attack_cost.py 15 \\
        benchmarks/results/s39/aiwine-15-rounds-1391-results.jsonl.xz ...
"""
import json
import lzma
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
from gomoku_ai.board import Board  # noqa: E402
from gomoku_ai.vct import vct_search  # noqa: E402


def main() -> None:
    size = int(sys.argv[1])
    rng = random.Random(40)
    positions = []
    for f in sys.argv[2:]:
        for line in lzma.open(f, "rt"):
            x = json.loads(line)
            ours_black = x["black"] == "ours"
            b = Board(size, size)
            for i, (mx, my) in enumerate(x["moves"]):
                mine = (b.side_to_move == 1) == ours_black
                if i >= x["opening_plies"] and mine and rng.random() < 0.25:
                    positions.append(list(b.moves))
                b.push(b.index(mx, my))
    print("positions", len(positions), flush=True)
    for depth, quiet in ((5, 0), (5, 40), (8, 0), (8, 40), (5, 12)):
        total, full, wins = 0.0, 0, 0
        for moves in positions:
            b = Board(size, size)
            for m in moves:
                b.push(m)
            t = time.perf_counter()
            r = vct_search(b, depth, 30000, t + 0.110, vcf_nodes=2000, quiet_moves=quiet)
            el = time.perf_counter() - t
            total += el
            full += el > 0.105
            wins += r.line is not None
        print(json.dumps({"depth": depth, "quiet": quiet, "ms_mean": round(1000 * total / len(positions), 1),
                          "deadline_hit": full, "wins": wins}), flush=True)


if __name__ == "__main__":
    main()
