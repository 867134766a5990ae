"""Simulations a second of the whole player with the MCTS node creation in C (gomoku_ai.native.node_ops:
the open-three replies and the fives of a new node) and with the Python code, alternating, on positions of
a tournament's games (every 8th ply from ply 8 of its first 6 games), 0.9 s a move, a fresh player per arm.

    taskset -c 0 .venv/bin/python benchmarks/results/s33/node_ops_speed.py \
        benchmarks/results/s31/aiwine-15-sym-1310-results.jsonl.xz 15 2
"""
import json
import lzma
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

import gomoku_ai.mcts as M  # noqa: E402
from gomoku_ai.board import Board  # noqa: E402
from gomoku_ai.player import Limit  # noqa: E402
from gomoku_ai.rules import Rule  # noqa: E402
from gomoku_ai.shipped import load_player  # noqa: E402

ops = M._NODE_OPS
assert ops is not None, "the C core is not built (or is an older build)"
size = int(sys.argv[2])
games = [json.loads(line) for line in lzma.open(sys.argv[1], "rt")]
positions = [g["moves"][:k] for g in games[:6] for k in range(8, len(g["moves"]) - 2, 8)]
for on in (False, True) * int(sys.argv[3]):
    M._NODE_OPS = ops if on else None
    player = load_player(None, Rule.FREESTYLE, width=size, height=size)
    sims, secs = 0, 0.0
    search = player.mcts.search

    def counted(*a, **k):
        global sims, secs
        st = search(*a, **k)
        sims += st.simulations
        secs += st.elapsed_s
        return st

    player.mcts.search = counted
    for moves in positions:
        b = Board(size)
        for x, y in moves:
            b.play(y * size + x)
        player.new_game()
        player.think(b, Limit(soft_ms=900, hard_ms=900))
    print("C" if on else "python", f"{size}x{size}", len(positions), "positions",
          round(sims / secs), "simulations/s", flush=True)
