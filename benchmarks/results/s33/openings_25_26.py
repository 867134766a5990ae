"""What the player thinks at White's first move of Piskvork openings 25 and 26 (identity symmetry),
where it lost every game as White against AIWine while Rapfi at 1 s held them: its move, root value and
top children (move, visits, Q, prior) at 0.9 s, 5 s and 20 s, a fresh player each.

    taskset -c 0 .venv/bin/python benchmarks/results/s33/openings_25_26.py
"""
import json
import lzma
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from gomoku_ai.board import Board  # noqa: E402
from gomoku_ai.player import Limit  # noqa: E402
from gomoku_ai.rules import Rule  # noqa: E402
from gomoku_ai.shipped import load_player  # noqa: E402

for opening in (25, 26):
    games = [json.loads(line) for line in lzma.open(HERE / f"rapfi1s-aiwine-op{opening}-results.jsonl.xz", "rt")]
    game = next(g for g in games if g["transform"] == 0)
    board = Board(15)
    for x, y in game["moves"][:5]:
        board.play(y * 15 + x)
    for ms in (900, 5000, 20000):
        player = load_player(None, Rule.FREESTYLE, width=15, height=15)
        player.new_game()
        player.think(board, Limit(soft_ms=ms, hard_ms=ms))
        top = [{"move": [m % 15, m // 15], "visits": int(n), "q": round(float(q), 3), "prior": round(float(p), 3)}
               for m, n, q, p in player.mcts.top_moves(4)]
        print(json.dumps({"opening": opening, "ms": ms, "root_value": round(player.mcts.root_value(), 3),
                          "top": top}), flush=True)
