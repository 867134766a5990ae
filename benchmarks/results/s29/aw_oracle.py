"""Rapfi (1M nodes) on the positions before and after our move that preceded AIWine's first announced win."""
import json, sys
sys.path.insert(0, '.'); sys.path.insert(0, 'benchmarks')
from build_vct_set import Oracle
from gomoku_ai.board import Board
import lzma
LOSSES, RESULTS, N = sys.argv[2], sys.argv[3], int(sys.argv[4])
rows = [json.loads(l) for l in open(LOSSES) if l.startswith('{"game"')]
games = {}
for l in (lzma.open(RESULTS, 'rt') if RESULTS.endswith('xz') else open(RESULTS)):
    g = json.loads(l); games[g['game']] = g
orc = Oracle([sys.argv[1]], 1000000, N)
for r in rows:
    g = games[r['game']]
    b = Board(N, N)
    for x, y in g['moves'][:r['ply'] - 1]: b.play(y * N + x)
    before = orc.ask(b)
    # also two moves earlier (our previous move)
    b2 = Board(N, N)
    for x, y in g['moves'][:r['ply'] - 3]: b2.play(y * N + x)
    before2 = orc.ask(b2)
    print(json.dumps(dict(game=r['game'], ply=r['ply'], found_d5=r['found_d5'], found_d8=r['found_d8'], ours=r['game_move'],
                          eval_before=before[0], oracle_move=before[1], eval_prev_move=before2[0], oracle_prev=before2[1])), flush=True)
