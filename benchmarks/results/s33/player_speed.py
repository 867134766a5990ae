"""Simulations a second of the whole player of the code at REPO (a checkout; the script may come from
another), on positions of a tournament's games (every 8th ply from ply 8 of its first 6 games), 0.9 s a
move, one fresh player. Run two checkouts alternately on one core to compare them:

    for i in 1 2 3; do for r in /tmp/wt33 /work/main; do
        taskset -c 0 .venv/bin/python benchmarks/results/s33/player_speed.py $r \\
            benchmarks/results/s31/aiwine-15-sym-1310-results.jsonl.xz 15; done; done
"""
import json
import lzma
import sys

sys.path.insert(0, sys.argv[1])

from gomoku_ai.board import Board  # noqa: E402
from gomoku_ai.player import Limit  # noqa: E402
from gomoku_ai.rules import Rule  # noqa: E402
from gomoku_ai.shipped import load_player  # noqa: E402

size = int(sys.argv[3])
games = [json.loads(line) for line in lzma.open(sys.argv[2], "rt")]
positions = [g["moves"][:k] for g in games[:6] for k in range(8, len(g["moves"]) - 2, 8)]
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
print(sys.argv[1], f"{size}x{size}", len(positions), "positions", round(sims / secs), "simulations/s", flush=True)
