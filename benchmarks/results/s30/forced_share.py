import json, lzma, sys, time, collections
sys.path.insert(0, "/work/main")
from gomoku_ai.board import Board
from gomoku_ai.player import Limit
from gomoku_ai.shipped import load_player
from gomoku_ai.rules import Rule
import gomoku_ai.mcts as M
f, size = sys.argv[1], int(sys.argv[2])
games = [json.loads(l) for l in lzma.open(f, "rt")]
pos = []
for g in games[:10]:
    ours_black = g["black"] == "ours"
    for k in range(8, len(g["moves"]) - 2, 6):
        kk = k if (k % 2 == 0) == ours_black else k + 1
        pos.append(g["moves"][:kk])
pl = load_player(None, Rule.FREESTYLE, width=size, height=size)
hist = collections.Counter()
orig = M.SearchTree.expand
def ex(self, node, logits, value, is_root):
    k = len(node.moves); hist[min(k, 6)] += 1
    if node.opp_fives: hist["opp5"] += 1
    return orig(self, node, logits, value, is_root)
M.SearchTree.expand = ex
for mv in pos:
    b = Board(size)
    for x, y in mv: b.play(y * size + x)
    pl.new_game(); pl.think(b, Limit(soft_ms=900, hard_ms=900))
tot = sum(v for k, v in hist.items() if k != "opp5")
print(tot, {k: round(v / tot, 3) for k, v in sorted(hist.items(), key=str)})
