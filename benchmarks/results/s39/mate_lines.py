"""Session 39: Rapfi (300k nodes) plays out its mate after the losing move of blunder positions, both
sides; each attacker move is marked F (makes a four), 3 (a four or open three by vct.threat_moves) or
q (neither), with Rapfi's evaluation. Usage: mate_lines.py SET NAME,NAME,... RAPFI_BINARY"""
import sys, json
from pathlib import Path
ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT)); sys.path.insert(0, str(ROOT / 'benchmarks'))
from build_vct_set import Oracle
from gomoku_ai import vct, tactics
from gomoku_ai.vct import read_positions
names=sys.argv[2].split(',')
ps={p.name:p for p in read_positions(sys.argv[1])}
orc=None
for n in names:
    p=ps[n]; b=p.board()
    if orc is None: orc=Oracle([sys.argv[3]], 300000, b.width)
    lose=next(iter(p.loses)); b.push(lose)
    attacker=b.side_to_move
    seq=[]
    for ply in range(60):
        if b.winner is not None: break
        ev, mv = orc.ask(b)
        m=b.parse(mv) if isinstance(mv,str) else mv
        kind=''
        if b.side_to_move==attacker:
            thr={t[0]:t for t in vct.threat_moves(b)}
            b.push(m)
            fives=tactics.five_points_through(b, m, attacker)
            b.pop()
            kind = 'F' if fives else ('3' if m in thr else 'q')
        else: kind='d'
        seq.append(f"{mv}{kind}({ev})")
        b.push(m)
    print(n, ' '.join(seq), flush=True)
