"""Session 39: the search's first candidates on a blunder set (920 ms a position, the shipped player
as of 30c328c, the quiet preference of session 38) and, for each of its first 4, the opponent's VCT after
it: the deepening at 3,000 nodes without a deadline (id3k) and df-pn for 300 ms (pn300). One JSON
line a position (candidates.jsonl). Usage: quiet_candidates.py SET > OUT.jsonl"""
import sys, time, json
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
import gomoku_ai.player as P
from gomoku_ai import vct, shipped, tactics
from gomoku_ai.player import Limit
from gomoku_ai.vct import read_positions
ps=read_positions(sys.argv[1])
b0=ps[0].board()
player=shipped.load_player(None, b0.rule, width=b0.width, height=b0.height)
rec={}
orig=P._quiet_choice
def wrap(board, info, deadline, quiet=P.QUIET_SEARCH):
    rec['cands']=[(c.move,c.visits,round(c.q,3)) for c in info.candidates[:6]]
    rec['search_move']=info.move
    out=orig(board, info, deadline, quiet); rec['quiet_move']=out.move; return out
P._quiet_choice=wrap
res=[]
for p in ps:
    rec.clear()
    b=p.board(); player.new_game()
    info=player.think(b, Limit(soft_ms=920, hard_ms=920))
    row=dict(name=p.name, played=b.name(info.move) if hasattr(b,'name') else info.move, held=info.move in p.answer, repeated=info.move in p.loses, quiet_ran='cands' in rec)
    cands=[]
    for m,v,q in rec.get('cands',[])[:4]:
        b.push(m)
        r1=vct.vct_search(b, 20, 3000, proof_numbers=False)
        t=time.perf_counter(); r2=vct.vct_search(b, 20, 10**7, deadline=t+0.3, proof_numbers=True)
        b.pop()
        cands.append(dict(m=m, v=v, q=q, ans=m in p.answer, lose=m in p.loses, id3k='win' if r1.line else ('abort' if r1.aborted else 'none'), pn300='win' if r2.line else ('abort' if r2.aborted else 'none')))
    row['cands']=cands; row['chosen']=info.move; row['search_move']=rec.get('search_move'); row['source']=str(info.source)
    res.append(row); print(json.dumps(row), flush=True)
