"""For each AIWine win of a results file: at AIWine's first announced win (ply k), does our VCT find
it (depth 5/30k, depth 8/300k)? At our move before it (ply k-1): what does the player play at 1 s, and
is that refuted by our depth-8 VCT?"""
import json, lzma, sys, time
sys.path.insert(0, '.')
from gomoku_ai.board import Board
from gomoku_ai.shipped import load_player
from gomoku_ai.player import Limit
from gomoku_ai.vct import vct_search
f = sys.argv[1]; N = int(sys.argv[2]) if len(sys.argv) > 2 else 15
rows = [json.loads(l) for l in (lzma.open(f, 'rt') if f.endswith('xz') else open(f))]
p = load_player(width=N)
def vct(b, d, n, t):
    r = vct_search(b, max_depth=d, node_limit=n, deadline=time.perf_counter() + t)
    return r.line is not None
out = []
for r in rows:
    aw = 'black' if r['black'] == 'aiwine' else 'white'
    if r['winner'] != aw: continue
    par = 0 if aw == 'black' else 1
    k = None
    for key in sorted(r['comments'], key=int):
        c = r['comments'][key]
        if int(key) % 2 == par and ('success' in c or 'val=100000' in c or 'eval:100000' in c):
            k = int(key); break
    if k is None: continue
    b = Board(N, N)
    for x, y in r['moves'][:k - 1]: b.play(y * N + x)
    gx, gy = r['moves'][k - 1]; game_mv = gy * N + gx
    b.play(game_mv)
    at_k = (vct(b, 5, 30000, 1.0), vct(b, 8, 300000, 3.0))
    b.pop()
    p.new_game()
    mv = p.think(b, Limit(soft_ms=920, hard_ms=1000)).move
    b.play(mv); ref = vct(b, 8, 300000, 3.0); b.pop()
    row = dict(game=r['game'], ply=k, plies=r['plies'], game_move=b.move_name(game_mv), found_d5=at_k[0],
               found_d8=at_k[1], replay_move=b.move_name(mv), replay_refuted_d8=ref)
    print(json.dumps(row), flush=True); out.append(row)
print(json.dumps(dict(n=len(out), found_d5=sum(o['found_d5'] for o in out), found_d8=sum(o['found_d8'] for o in out),
      same=sum(o['game_move'] == o['replay_move'] for o in out), replay_refuted=sum(o['replay_refuted_d8'] for o in out))))
