"""Session 28: would evaluating the 20x20 network on a crop of the board (the stones' bounding box
plus a margin) keep its outputs? 800 positions (a quarter of the plies, seed 1) of session 27's
20x20 games against Rapfi 100k; for margins 2-6: top-1 agreement of the policy over the legal
squares, KL(full || crop), |value difference|, the crop's area and ms per evaluation (int8, batch 1).
Run from the repository root: .venv/bin/python benchmarks/results/s28/crop_inputs.py (output:
crop-inputs.txt). Needs runs/s27/r100k-20-ft-*/games."""
import sys, glob, re, time
import numpy as np
from pathlib import Path; sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from gomoku_ai.board import Board
from gomoku_ai.rules import Rule
from gomoku_ai.net import load_model
from gomoku_ai.net.encoding import encode
net = load_model('models/freestyle20-5x48-ft.json', backend='onnx-int8')
rng = np.random.default_rng(1)
files = sorted(glob.glob('runs/s27/r100k-20-ft-*/games/*.sgf'))
pos = []
for f in files:
    mv = re.findall(r';[BW]\[([a-t])([a-t])\]', open(f).read())
    for k in range(3, len(mv)):
        if rng.random() < 0.25:
            pos.append(mv[:k])
print(len(pos), 'positions')
def board_of(mv):
    b = Board(20, rule=Rule.FREESTYLE)
    for x, y in mv: b.play(b.index(ord(x)-97, ord(y)-97))
    return b
def softmax(z):
    z = z - z.max(); e = np.exp(z); return e / e.sum()
areas = []
res = {m: [] for m in (2, 3, 4, 5, 6)}
tfull = 0; tcrop = {m: 0 for m in res}
for mv in pos[:800]:
    b = board_of(mv)
    if b.winner is not None: continue
    x = encode(b)[None]
    t = time.perf_counter(); lp, v = net.forward(x); tfull += time.perf_counter() - t
    p = softmax(lp[0]); legal = (b.cells.ravel() == 0)
    p = np.where(legal, p, 0); p /= p.sum()
    ys, xs = np.nonzero(b.cells)
    for m in res:
        y0, y1 = max(0, ys.min()-m), min(19, ys.max()+m)
        x0, x1 = max(0, xs.min()-m), min(19, xs.max()+m)
        xc = np.ascontiguousarray(x[:, :, y0:y1+1, x0:x1+1])
        t = time.perf_counter(); lc, vc = net.forward(xc); tcrop[m] += time.perf_counter() - t
        full = np.full(400, -1e9, np.float32).reshape(20, 20)
        full[y0:y1+1, x0:x1+1] = lc[0].reshape(y1-y0+1, x1-x0+1)
        q = softmax(full.ravel()); q = np.where(legal, q, 0); q /= q.sum()
        kl = float(np.sum(p * (np.log(p + 1e-12) - np.log(q + 1e-12))))
        res[m].append((int(p.argmax() == q.argmax()), kl, abs(float(np.ravel(v)[0]) - float(np.ravel(vc)[0])), (y1-y0+1)*(x1-x0+1), float(p[(q>0)].sum() if True else 0)))
n = len(res[2])
print('n', n, 'full ms/eval', 1000*tfull/n)
for m, r in res.items():
    a = np.array(r)
    print(f'margin {m}: top1 agree {a[:,0].mean():.3f} KL {a[:,1].mean():.4f} (p90 {np.percentile(a[:,1],90):.4f}) |dv| mean {a[:,2].mean():.3f} p90 {np.percentile(a[:,2],90):.3f} area {a[:,3].mean():.0f} ms/eval {1000*tcrop[m]/n:.3f}')
