"""Session 22: after each losing move of session 21's Rapfi-100k losses (announced-r100k-15.json),
the opponent to move: does our C VCT find the win Rapfi announced, at depth 6 (2 s), 8 (5 s), 12 (20 s)?
Run from the repository root: .venv/bin/python benchmarks/results/s22/deep_vct.py > deep-vct.jsonl"""
import json, time, sys
sys.path.insert(0,'.')
from gomoku_ai.board import Board
from gomoku_ai.vct import vct_search
ann=json.load(open('benchmarks/results/s22/announced-r100k-15.json'))['rows']
games={}
for l in open('benchmarks/results/s21/r100k-15-results.jsonl'):
    g=json.loads(l); games[g['game']]=g
out=[]
for r in ann:
    if r['found_s'] is not None and r['found_s']<=0.3: continue
    g=games[r['game']]; b=Board(15,15)
    for x,y in g['moves'][:r['ply']]: b.play(y*15+x)
    row={'game':r['game'],'ply':r['ply'],'found_s':r['found_s']}
    for depth,secs in ((6,2),(8,5),(12,20)):
        t=time.perf_counter()
        res=vct_search(b,max_depth=depth,node_limit=10**8,deadline=time.perf_counter()+secs)
        row[f'd{depth}']=[res.line is not None, round(time.perf_counter()-t,2), res.nodes, res.depth, len(res.line or [])]
        if res.line: break
    print(json.dumps(row),flush=True); out.append(row)
print(json.dumps({'n':len(out),'found':sum(any(v[0] for k,v in r.items() if k.startswith('d')) for r in out)}))
