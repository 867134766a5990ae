"""How far the network is from symmetric, and what averaging its 8 views buys (session 31, one-off).

    .venv/bin/python benchmarks/results/s31/symmetry_check.py checkpoints/teacher20f/teach20f2-mix.npz \
        models/freestyle20-5x48-ft 1500

For N random positions of a packed shard (Rapfi's move and the game's result as labels): the top-1
agreement with Rapfi, the policy's negative log-likelihood of Rapfi's move and the value's squared
error against the result, for each single view (symmetry k) and for the mean of the 8 (and of 2).
"""
import sys, numpy as np
sys.path.insert(0, "/work/main")
from gomoku_ai.net.model import load_model, masked_softmax
from gomoku_ai.net.encoding import encode_arrays
from gomoku_ai.net.symmetries import transform_planes, untransform_policy
shard, model, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
z = np.load(shard)
rng = np.random.default_rng(0)
idx = np.sort(rng.choice(len(z["move"]), n, replace=False))
cells, stm, last, move, res = z["cells"][idx], z["stm"][idx], z["last"][idx], z["move"][idx], z["z"][idx]
net = load_model(model)
N, H, W = cells.shape
x = encode_arrays(cells, stm, last)
legal = (cells == 0).reshape(N, -1)
P = np.zeros((8, N, H * W)); V = np.zeros((8, N))
for k in range(8):
    for s in range(0, N, 64):
        lg, v = net.forward(transform_planes(x[s:s+64], k))
        lg = untransform_policy(lg, k, H, W)
        P[k, s:s+64] = masked_softmax(lg, legal[s:s+64]); V[k, s:s+64] = v
def report(name, p, v):
    top1 = (p.argmax(1) == move).mean()
    ll = -np.log(np.maximum(p[np.arange(N), move], 1e-9)).mean()
    mse = ((v - res) ** 2).mean()
    print(f"{name:10s} top1 {top1:.4f} nll {ll:.4f} value-mse {mse:.4f}")
for k in range(8):
    report(f"k={k}", P[k], V[k])
report("avg8", P.mean(0), V.mean(0))
report("avg2", P[[0, 5]].mean(0), V[[0, 5]].mean(0))
print("value std across symmetries: mean", V.std(0).mean(), "top1 agreement k vs 0:", [(P[k].argmax(1) == P[0].argmax(1)).mean().round(3) for k in range(8)])
