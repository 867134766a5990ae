"""Session 21: in two short losses as White (games 61 and 17 of aiwine-15-cvct-results.jsonl), the
C VCT search for the side to move (and, "passed", for the opponent as if the side to move passed) at
the player's depth 3 and at depth 5: found or not, attacker nodes, depth reached, seconds.

    taskset -c 0 .venv/bin/python benchmarks/results/s21/probe_losses.py
"""
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from gomoku_ai.board import Board  # noqa: E402
from gomoku_ai.vct import vct_search  # noqa: E402

games = {}
for line in open(HERE / "aiwine-15-cvct-results.jsonl"):
    r = json.loads(line)
    games[r["game"]] = r
for game, ply, passed in ((61, 8, False), (61, 7, True), (17, 10, False), (17, 5, True)):
    b = Board(15)
    for x, y in games[game]["moves"][:ply]:
        b.push(y * 15 + x)
    if passed:
        b.pass_turn()
    for depth, nodes in ((3, 6000), (5, 20000)):
        t = time.perf_counter()
        res = vct_search(b, max_depth=depth, node_limit=nodes, vcf_nodes=2000)
        print(f"game {game} ply {ply}{' passed' if passed else ''}: depth {depth}, {nodes} nodes: "
              f"{'VCT' if res.line else 'none'} ({res.nodes} nodes, depth {res.depth}, "
              f"{time.perf_counter() - t:.3f} s)")
