"""Session 39: the cost of the quiet check for each candidate of quiet_candidates.py's output: the
opponent's VCT search (deepening, depth 20, 3,000 nodes) after it, its status (win/abort/none),
nodes and ms, and whether the move makes a four. Usage: quiet_cost.py CANDIDATES.jsonl SET > OUT.jsonl"""
import sys, time, json
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from gomoku_ai import vct, tactics
from gomoku_ai.vct import read_positions
rows=[json.loads(l) for l in open(sys.argv[1])]
ps={p.name:p for p in read_positions(sys.argv[2])}
out=[]
for r in rows:
    b=ps[r['name']].board(); me=b.side_to_move
    for x in r['cands']:
        b.push(x['m'])
        four=bool(tactics.five_points_through(b, x['m'], me))
        t=time.perf_counter(); res=vct.vct_search(b, 20, 3000, proof_numbers=False); dt=time.perf_counter()-t
        b.pop()
        st='win' if res.line else ('abort' if res.aborted else 'none')
        out.append(dict(name=r['name'], m=x['m'], four=four, st=st, nodes=res.nodes, ms=round(dt*1000,1), ans=x['ans']))
        print(json.dumps(out[-1]), flush=True)
