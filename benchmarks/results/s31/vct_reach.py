"""Could our VCT search have seen the mates our moves allowed? (session 31, one-off)

    .venv/bin/python benchmarks/results/s31/vct_reach.py runs/s31/fp1290-white.json runs/s31/fp1290/results.jsonl

For every game of an ``early_losses.py`` answer whose verdict is "move lets a mate", the position
after our move (the winner to move) is searched by ``vct_search`` at depths 3, 5, 7 and 9 with
6,000, 30,000, 200,000 and 1,000,000 attacker nodes: found (Y) or not (-), nodes, milliseconds.
"""
import json, sys, time
sys.path.insert(0, "/work/main")
from gomoku_ai.board import Board
from gomoku_ai.vct import vct_search
d = json.load(open(sys.argv[1]))
games = {json.loads(l)["game"]: json.loads(l) for l in open(sys.argv[2])}
for r in d["games"]:
    if not r["verdict"].startswith("move lets"): continue
    g = games[r["game"]]; st = r["steps"][-1]; p = st["ply"]
    b = Board(15)
    for m in g["moves"][:p+1]: b.push(m[1]*15+m[0]) if isinstance(m, list) else b.push(m)
    out = []
    for depth, nodes in ((3, 6000), (5, 30000), (7, 200000), (9, 1000000)):
        t = time.perf_counter(); res = vct_search(b, depth, nodes); el = time.perf_counter() - t
        out.append(f"d{depth}:{'Y' if res.line else '-'}{res.nodes}/{el*1000:.0f}ms")
    # also: before our move, opponent threat as if we passed? skip
    print(r["game"], r["result"], st["played"], st["oracle"], st["eval_before"], st["eval_after"], " ".join(out), flush=True)
