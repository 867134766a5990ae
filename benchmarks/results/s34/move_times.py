"""Where a move's time goes: one player (the shipped network for the board) at 0.9 s a move on the
positions of bench_player_speed.py (every 8th ply from ply 8 of a tournament's first 6 games); per
move the wall time and what chose the move, then the mean seconds a move in the root's tactics, the
tree search and the check of its choice. ``REPO`` runs another checkout's code.

    taskset -c 1 .venv/bin/python benchmarks/results/s34/move_times.py \\
        benchmarks/results/s31/aiwine-15-sym-1310-results.jsonl.xz 15 [REPO]
"""
import collections
import json
import lzma
import sys
import time
from pathlib import Path

sys.path.insert(0, sys.argv[3] if len(sys.argv) > 3 else str(Path(__file__).resolve().parents[3]))
from gomoku_ai.board import Board  # noqa: E402
from gomoku_ai.player import Limit  # noqa: E402
from gomoku_ai.rules import Rule  # noqa: E402
from gomoku_ai.shipped import load_player  # noqa: E402

size = int(sys.argv[2])
games = [json.loads(line) for line in lzma.open(sys.argv[1], "rt")]
positions = [g["moves"][:k] for g in games[:6] for k in range(8, len(g["moves"]) - 2, 8)]
player = load_player(None, Rule.FREESTYLE, width=size, height=size)
spent: collections.Counter = collections.Counter()


def timed(obj, name):  # type: ignore[no-untyped-def]
    f = getattr(obj, name)

    def wrapper(*a, **k):  # type: ignore[no-untyped-def]
        t = time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            spent[name] += time.perf_counter() - t
    setattr(obj, name, wrapper)


for name in ("_root_tactics", "_checked_choice"):
    timed(player, name)
timed(player.mcts, "search")
moves = []
for ply in positions:
    b = Board(size)
    for x, y in ply:
        b.play(y * size + x)
    player.new_game()
    t = time.perf_counter()
    info = player.think(b, Limit(soft_ms=900, hard_ms=900))
    moves.append((round(time.perf_counter() - t, 3), info.source.value))
print(json.dumps({"moves": moves, "wall_s_per_move": round(sum(w for w, _ in moves) / len(moves), 4),
                  **{k + "_s_per_move": round(v / len(moves), 4) for k, v in spent.items()}}))
