"""Session 28: how often the player's move (whole player, fixed visits, the shipped 20x20 network)
is Rapfi's 200k-node move, on NPOS positions (seed 28) of checkpoints/ann20-s27 where Rapfi's
evaluation was within +/-400 (no mate), for each MCTSConfig override; a proxy tried for tuning
the search without matches (teacher-agreement.json: it does not move with the visits, so it is not one).
usage, from the repository root:
    .venv/bin/python benchmarks/results/s28/teacher_agreement.py OUT.jsonl NPOS VISITS "c_puct=1.2;;fpu_reduction=0.45"
(overrides separated by ';', '' is the default config)"""
import json, lzma, sys, time
import numpy as np
from pathlib import Path; sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from gomoku_ai.board import Board
from gomoku_ai.rules import Rule, BLACK, WHITE
from gomoku_ai.mcts import MCTSConfig, with_overrides
from gomoku_ai.player import Player, Limit
from gomoku_ai import shipped

out, npos, visits, cfgs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4].split(';')
rows = [json.loads(l) for l in lzma.open('checkpoints/ann20-s27/annotations.jsonl.xz', 'rt')]
evals = [e for r in rows for e in r['evals']]
d = np.load('checkpoints/ann20-s27/annotated.npz')
ok = [i for i, e in enumerate(evals) if e is not None and 'M' not in e and abs(int(e)) <= 400]
rng = np.random.default_rng(28)
idx = sorted(rng.choice(ok, size=npos, replace=False))
ev = shipped.load_evaluator('models/freestyle20-5x48-ft.json', width=20)

def board_at(i):
    cells = d['cells'][i].ravel(); last = int(d['last'][i]); stm = int(d['stm'][i])
    bl = [int(m) for m in np.nonzero(cells == BLACK)[0]]; wh = [int(m) for m in np.nonzero(cells == WHITE)[0]]
    for lst in (bl, wh):
        if last in lst: lst.remove(last); lst.append(last)
    b = Board(20, rule=Rule.FREESTYLE); b.set_position(bl, wh, to_move=stm)
    assert b.moves[-1] == last, (i, last)
    return b

with open(out, 'a') as f:
    for text in cfgs:
        p = Player(ev, config=with_overrides(MCTSConfig(), text), seed=0)
        hits = 0; t0 = time.perf_counter(); moves = []
        for i in idx:
            b = board_at(i); p.new_game()
            info = p.think(b, Limit(visits=visits))
            moves.append(int(info.move)); hits += int(info.move == int(d['move'][i]))
        rec = dict(cfg=text, visits=visits, n=npos, agree=hits / npos, s=time.perf_counter() - t0, moves=moves,
                   teacher=[int(d['move'][i]) for i in idx], idx=[int(i) for i in idx])
        f.write(json.dumps(rec) + '\n'); f.flush()
        print(text or 'default', visits, f'{hits/npos:.3f}', f'{rec["s"]:.0f}s', flush=True)
