import json, lzma, sys, dataclasses
sys.path.insert(0, "/work/main")
from gomoku_ai.board import Board
from gomoku_ai.player import Limit
from gomoku_ai.shipped import load_player
from gomoku_ai.rules import Rule
games = [json.loads(l) for l in lzma.open(sys.argv[1], "rt")]
pos = []
for g in games[:6]:
    for k in range(8, len(g["moves"]) - 2, 8):
        pos.append(g["moves"][:k])
for on in (False, True, False, True):
    pl = load_player(None, Rule.FREESTYLE, width=15, height=15)
    pl.mcts.cfg = dataclasses.replace(pl.mcts.cfg, random_symmetry=on, root_symmetries=on)
    sims = 0; t = 0.0; orig = pl.mcts.search
    def wrap(*a, **k):
        global sims, t
        st = orig(*a, **k); sims += st.simulations; t += st.elapsed_s; return st
    pl.mcts.search = wrap
    for mv in pos:
        b = Board(15)
        for x, y in mv: b.play(y * 15 + x)
        pl.new_game(); pl.think(b, Limit(soft_ms=900, hard_ms=900))
    print("symmetric" if on else "off", len(pos), "positions", round(sims / t), "simulations/s")
