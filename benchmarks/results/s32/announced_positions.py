"""The positions where our move let AIWine announce a win (its first comment with "success": a VCT
or VCF it found), from tournament results files, and what the player does there now.

For each game we lost with AIWine announcing, the position before our last move before the
announcement is searched by the whole player (0.9 s, a fresh player, the switches of each
configuration in the environment); the move it chooses is then checked with our C VCT for the
opponent (depth 7, 200,000 attacker nodes): "held" when that finds no win. Progress on stderr, one
JSON object on stdout (lost_before.py reads it, xz-compressed or not).

    taskset -c 0 .venv/bin/python benchmarks/results/s32/announced_positions.py 20 \
        "default=" "threat5=PYGOMOKU_THREAT=5,20000" -- runs/s32/aiwine-20-cops-1311/results.jsonl ...
"""
import json
import lzma
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from gomoku_ai import vct  # noqa: E402
from gomoku_ai.board import Board  # noqa: E402
from gomoku_ai.player import Limit  # noqa: E402
from gomoku_ai.rules import Rule  # noqa: E402
from gomoku_ai.shipped import load_player  # noqa: E402

size = int(sys.argv[1])
sep = sys.argv.index("--")
configs = [a.split("=", 1) for a in sys.argv[2:sep]]
positions = []
for path in sys.argv[sep + 1:]:
    opener = lzma.open if path.endswith(".xz") else open
    for line in opener(path, "rt"):
        g = json.loads(line)
        ours_black = g["black"] == "ours"
        if g["winner"] == ("black" if ours_black else "white"):
            continue
        ann = [int(k) for k, c in g["comments"].items() if "success" in c]
        if not ann:
            continue
        ply = min(ann) - 1          # our move before the announcement
        positions.append((path, g["game"], ply, g["moves"][:ply]))


def allows_win(board: Board, move: int) -> bool:
    board.play(move)
    try:
        return vct.vct_search(board, max_depth=7, node_limit=200_000).line is not None
    finally:
        board.pop()


out = {"size": size, "positions": len(positions), "configs": {}}
for name, env in configs:
    for k in ("PYGOMOKU_THREAT", "PYGOMOKU_CHECK", "PYGOMOKU_DEFENCE_LEVELS"):
        os.environ.pop(k, None)
    for item in filter(None, env.split(";")):
        k, v = item.split("=", 1)
        os.environ[k] = v
    held, rows = 0, []
    for path, game, ply, moves in positions:
        player = load_player(None, Rule.FREESTYLE, width=size, height=size)
        b = Board(size)
        for x, y in moves:
            b.play(y * size + x)
        info = player.think(b, Limit(soft_ms=900, hard_ms=900))
        lost = allows_win(b, info.move)
        held += not lost
        rows.append({"file": path, "game": game, "ply": ply, "move": info.move, "held": not lost,
                     "ms": round(info.elapsed_ms)})
    out["configs"][name] = {"env": env, "held": held, "rows": rows}
    print(name, env, f"held {held}/{len(positions)}", file=sys.stderr, flush=True)
print(json.dumps(out))
