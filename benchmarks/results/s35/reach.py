"""Session 35, one-off: for each game AIWine won, the first of its moves where it announced a win (its
comment says VCT/VCF success or eval 100000); our VCT on the position before it (depths 3-9) and, as if we
had passed, before our move.   python reach.py RESULTS.jsonl.xz SIZE"""
import json, lzma, sys, time, re
sys.path.insert(0, "/work/main")
from gomoku_ai.board import Board
from gomoku_ai.vct import vct_search
path, size = sys.argv[1], int(sys.argv[2])
for l in lzma.open(path, "rt"):
    g = json.loads(l)
    if not g["winner"] or g[g["winner"]] != "aiwine": continue
    ours_white = g["black"] == "aiwine"
    first = None
    for k, v in sorted(g["comments"].items(), key=lambda x: int(x[0])):
        if "success" in v or "eval:100000" in v:
            first = int(k); break
    if first is None:
        print(g["game"], "no announced win", g["plies"]); continue
    # position before AIWine's move index `first` = after our move first-1
    b = Board(size)
    for x, y in g["moves"][:first]: b.play(y*size+x)
    out = []
    for depth, nodes in ((3, 3000), (5, 30000), (7, 200000), (9, 1000000)):
        t = time.perf_counter(); res = vct_search(b, depth, nodes); el = time.perf_counter() - t
        out.append(f"d{depth}:{'Y' if res.line else '-'}{res.nodes}/{el*1000:.0f}ms")
    # before our move: AIWine as if we passed
    b2 = Board(size)
    for x, y in g["moves"][:first-1]: b2.play(y*size+x)
    b2.pass_turn()
    out2=[]
    for depth, nodes in ((3, 6000), (5, 30000), (7,200000)):
        res = vct_search(b2, depth, nodes); out2.append(f"p{depth}:{'Y' if res.line else '-'}")
    print(g["game"], "white" if ours_white else "black", "ply", first, "of", g["plies"], " ".join(out), "| pass:", " ".join(out2), flush=True)
