"""Session 35, one-off: in each game AIWine won, how many of our moves within distance 2 hold against a
VCT of depth D with N attacker nodes, at our move before its announced win and two and four plies
earlier.   python safe.py RESULTS.jsonl.xz SIZE D N"""
import json, lzma, sys, time
sys.path.insert(0, "/work/main")
from gomoku_ai.board import Board
from gomoku_ai import movegen
from gomoku_ai.vct import vct_search, safe_moves
path, size = sys.argv[1], int(sys.argv[2])
D, N = int(sys.argv[3]), int(sys.argv[4])
def pos(g, k):
    b = Board(size)
    for x, y in g["moves"][:k]: b.play(y*size+x)
    return b
for l in lzma.open(path, "rt"):
    g = json.loads(l)
    if not g["winner"] or g[g["winner"]] != "aiwine": continue
    first = None
    for k, v in sorted(g["comments"].items(), key=lambda x: int(x[0])):
        if "success" in v or "eval:100000" in v:
            first = int(k); break
    if first is None: continue
    line = []
    for back in (1, 3, 5):
        k = first - back
        if k < g["opening_plies"]: break
        b = pos(g, k)
        cands = movegen.without_forbidden(b, movegen.near_empty(b, 2))
        t = time.perf_counter()
        r = safe_moves(b, cands, max_depth=D, node_limit=N, vcf_nodes=2000)
        x, y = g["moves"][k]
        played = y*size+x
        line.append(f"ply{k}: {len(r.verified)}/{len(cands)} safe, played {'safe' if played in r.verified else ('kept' if played in r.kept else 'LOSES')} ({time.perf_counter()-t:.1f}s)")
        if played in r.verified: break
    print(g["game"], " | ".join(line), flush=True)
