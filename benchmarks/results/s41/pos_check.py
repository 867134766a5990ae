"""Session 41: positions of one game of a tournament run: the move played, Rapfi's (1M nodes) move and
eval, Rapfi's eval after the move played (the opponent's view), and our player's move, win % and
visits at each given time (ms) from a fresh tree. RUN: a tournament folder or a results file.

    .venv/bin/python benchmarks/results/s41/pos_check.py benchmarks/results/s41/aiwine-20-base-4111-results.jsonl.xz 17 55 920,1840,3900
"""
import os
import sys
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, ROOT); sys.path.insert(0, os.path.join(ROOT, 'benchmarks'))
from pathlib import Path
from build_vct_set import Oracle
from results_io import read_results
from gomoku_ai.board import Board
from gomoku_ai.player import Limit
from gomoku_ai.shipped import load_player
run, game, plies = sys.argv[1], int(sys.argv[2]), [int(p) for p in sys.argv[3].split(',')]
mss = [float(m) for m in sys.argv[4].split(',')] if len(sys.argv) > 4 else []
x = next(r for r in read_results(Path(run)) if r['game'] == game)
orc = Oracle([os.path.expanduser('~/sparring/rapfi/build/pbrain-rapfi')], 1000000, 20)
pl = load_player(width=20) if mss else None
for ply in plies:
    b = Board(20)
    for mx, my in x['moves'][:ply]:
        b.push(b.index(mx, my))
    played = b.move_name(b.index(*x['moves'][ply]))
    ev, best = orc.ask(b)
    b.push(b.index(*x['moves'][ply])); ev_after, reply = orc.ask(b); b.pop()
    row = [ply, 'played', played, 'rapfi', best, ev, 'after played (opp view)', ev_after]
    for ms in mss:
        pl.new_game(); info = pl.think(b, Limit(soft_ms=ms, hard_ms=ms + 80))
        row += [int(ms), b.move_name(info.move), round(info.winrate * 100, 1), info.visits]
    print(*row, flush=True)
orc.close()
