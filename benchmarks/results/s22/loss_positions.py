"""Session 22: the player (1 s, as in a match) on the position before each losing move of session 21's
Rapfi-100k losses; is its move refuted by our depth-8 VCT (300,000 attacker nodes, 3 s)? The A/B
switches come from the environment (PYGOMOKU_CHECK=8,60000 PYGOMOKU_CHECK_TIME=0.4,400 ...).
Run from the repository root: .venv/bin/python benchmarks/results/s22/loss_positions.py"""
import json, time, sys, os
sys.path.insert(0,'.')
from gomoku_ai.board import Board
from gomoku_ai.shipped import load_player
from gomoku_ai.player import Limit
from gomoku_ai.vct import vct_search
ann=json.load(open('benchmarks/results/s22/announced-r100k-15.json'))['rows']
games={}
for l in open('benchmarks/results/s21/r100k-15-results.jsonl'):
    g=json.loads(l); games[g['game']]=g
p=load_player()
same=holds=0; n=0
for r in ann:
    g=games[r['game']]; b=Board(15,15)
    for x,y in g['moves'][:r['ply']-1]: b.play(y*15+x)
    p.new_game()
    info=p.think(b, Limit(soft_ms=920, hard_ms=1000))
    mv=info.move; b.play(mv)
    res=vct_search(b,max_depth=8,node_limit=300000,deadline=time.perf_counter()+3)
    b.pop()
    gx,gy=g['moves'][r['ply']-1]
    n+=1; same+= (mv==gy*15+gx); holds += res.line is None
    print(r['game'], b.move_name(mv), r['played'], 'holds_d8' if res.line is None else 'refuted', flush=True)
print(json.dumps({'n':n,'same_as_game':same,'holds_d8_300k':holds, 'env':{k:v for k,v in os.environ.items() if k.startswith('PYGOMOKU')}}))
