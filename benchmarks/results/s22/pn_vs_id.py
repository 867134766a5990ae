"""Session 22: the df-pn prototype (pn_vct_prototype.py) against the C VCT on deep-vct.jsonl's positions.
Run from the repository root: .venv/bin/python benchmarks/results/s22/pn_vs_id.py"""
import json, time, sys
sys.path.insert(0,'.'); sys.path.insert(0,'benchmarks/results/s22')
from gomoku_ai.board import Board
from gomoku_ai.vct import vct_search
from pn_vct_prototype import pn_vct
rows=[json.loads(l) for l in open('benchmarks/results/s22/deep-vct.jsonl') if l.startswith('{"game"')]
games={}
for l in open('benchmarks/results/s21/r100k-15-results.jsonl'):
    g=json.loads(l); games[g['game']]=g
for r in rows:
    g=games[r['game']]; b=Board(15,15)
    for x,y in g['moves'][:r['ply']]: b.play(y*15+x)
    found=[k for k,v in r.items() if k.startswith('d') and v[0]]
    ref = r[found[0]] if found else None
    line,nodes,el,ab = pn_vct(b, node_limit=200000, deadline=time.perf_counter()+20)
    print(r['game'], 'id:', ref[1:] if ref else None, ' pn:', line is not None, nodes, round(el,2), 'aborted' if ab else '', flush=True)
