"""Session 39: for the mate lines of mate_lines.py (written in below), each attacker move: F / 3 / q as
there, /vcf when, the defender passing, the attacker then has a VCF, /vct when it has a VCT (depth 3).
Note that the defender (Rapfi in a lost position) gives up, so only the first attacker moves of a line
say what the mate starts with."""
import sys
from pathlib import Path
ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
from gomoku_ai import tactics, vct
from gomoku_ai.vct import read_positions
lines={
'blunder08':'j11 l17 l16 m16 n17 i8 l9 k10 o12 n12 n11 p13 o10 q8 o11 o14 o9',
'blunder09':'j10 l4 l5 m5 n4 l18 j20 j9 l12 k11 o9 n9 n10 p8 o11 q13 o10 o12 o7',
'blunder30':'i18 k18 l15 d15 d13 g13 f14 d17 d18 l11 b13 b14 c13',
'blunder35':'k11 p9 q9 h12 l11 l10 j11 i11 i12 h13 k12 p8 q7 c9 a11 k13 j13 i14 j12 m12 j10 j14 i9',
}
ps={p.name:p for p in read_positions(ROOT / 'benchmarks' / 'data' / 'blunder_positions_20.txt')}
for n,l in lines.items():
    p=ps[n]; b=p.board(); b.push(next(iter(p.loses)))
    att=b.side_to_move; out=[]
    for i,name in enumerate(l.split()):
        m=b.parse(name)
        if i%2==0:
            thr={t[0] for t in vct.threat_moves(b)}
            b.push(m)
            four=bool(tactics.five_points_through(b,m,att))
            # VCF threat: defender passes, attacker VCF?
            b.pass_turn(); v=tactics.find_vcf(b); b.pass_turn()
            # also: does the defender (to move) have an immediate VCT? skip
            # VCT for attacker with defender passing (depth 3)?
            b.pass_turn(); r=vct.vct_search(b, 3, 20000, proof_numbers=False); b.pass_turn()
            out.append(f"{name}:{'F' if four else ('3' if m in thr else 'q')}{'/vcf' if v else ''}{'/vct' if r.line else ''}")
        else:
            b.push(m)
    print(n,' '.join(out))
