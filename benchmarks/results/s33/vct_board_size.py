"""The C VCT's time per attacker node on 15x15 and on 20x20, on the same positions: 127 positions of 20
games against AIWine (every 6th ply from ply 10) played on 15x15, then the same stones on 20x20, shifted
by 2 (walls two squares farther on every side) and unshifted (walls at the same place on two sides);
depth 3 and 5, 20,000 attacker nodes, 300-node VCFs.

    taskset -c 1 .venv/bin/python benchmarks/results/s33/vct_board_size.py
"""
import json
import lzma
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
from gomoku_ai import vct  # noqa: E402
from gomoku_ai.board import Board  # noqa: E402

RESULTS = ROOT / "benchmarks/results/s31/aiwine-15-sym-1310-results.jsonl.xz"
games = [json.loads(line) for line in lzma.open(RESULTS, "rt")]
pos = [g["moves"][:k] for g in games[:20] for k in range(10, len(g["moves"]) - 2, 6)]
for size, off in ((15, 0), (20, 2), (20, 0)):
    tn = tv = 0
    tt = 0.0
    for moves in pos:
        b = Board(size)
        for x, y in moves:
            b.play((y + off) * size + x + off)
        for depth in (3, 5):
            t = time.perf_counter()
            r = vct.vct_search(b, max_depth=depth, node_limit=20000, vcf_nodes=300)
            tt += time.perf_counter() - t
            tn += r.nodes
            tv += r.vcf_nodes
    print(f"{size}x{size} shift {off}: {len(pos)} positions, {tn} attacker nodes, {tv} VCF nodes, "
          f"{tt:.3f} s, {1e6 * tt / max(1, tn):.1f} us an attacker node", flush=True)
