"""What training on a worker costs: the loop's training steps in the driver vs in a training worker
(a local process, a Ray actor), on the same window, from the same checkpoint (JSON lines).

    .venv/bin/python benchmarks/bench_trainer.py [--data runs/az15/data] [--window 250000]
        [--steps 50] [--batch 256] [--blocks 4] [--channels 32] [--threads 1] [--rounds 2]

``--data``: a folder of self-play shards (the newest ``--window`` positions are used); without
one, a synthetic window of random stones on 15x15. Each round trains ``--steps`` steps from the
same starting checkpoint on each way in turn and reports the wall seconds; the first round also
starts the worker (not in the per-round figures, reported as ``start_s``). The weights of every
way are checked equal to the driver's. ``window_mb``: the pickled size of the window, what travels
to the worker once per iteration (through Ray's object store, or the local worker's pipe).
"""
from __future__ import annotations

import argparse
import json
import pickle
import shutil
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Dict, List, Optional

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from gomoku_ai.training.dataset import Positions, load_window  # noqa: E402
from gomoku_ai.training.remote import train_on_pool, trainer_spec  # noqa: E402
from gomoku_ai.training.trainer import (TrainConfig, Trainer, load_checkpoint,  # noqa: E402
                                        save_checkpoint)
from gomoku_ai.workers import Pool, make_pool  # noqa: E402


def synthetic(n: int, size: int = 15, seed: int = 1) -> Positions:
    rng = np.random.default_rng(seed)
    cells = rng.choice(np.array([0, 1, 2], np.int8), size=(n, size, size), p=[0.8, 0.1, 0.1])
    return Positions(cells=cells, stm=rng.integers(1, 3, n).astype(np.int8),
                     last=rng.integers(-1, size * size, n).astype(np.int16),
                     move=rng.integers(0, size * size, n).astype(np.int16),
                     z=rng.choice(np.array([-1.0, 0.0, 1.0], np.float32), n),
                     zw=np.ones(n, np.float32), game=(np.arange(n) // 40).astype(np.int32))


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=None)
    p.add_argument("--window", type=int, default=250_000)
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--blocks", type=int, default=4)
    p.add_argument("--channels", type=int, default=32)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--ways", nargs="+", default=["driver", "local", "ray"])
    a = p.parse_args(argv)
    pos = load_window(a.data, a.window) if a.data else synthetic(a.window)
    arch = {"blocks": a.blocks, "channels": a.channels, "head_channels": max(16, a.channels // 2),
            "value_fc": max(32, a.channels)}
    cfg = TrainConfig(steps=a.steps, batch_size=a.batch, lr=1e-3, lr_min=1e-3, warmup_steps=10,
                      val_fraction=0.03, val_every=0, log_every=a.steps, checkpoint_every=a.steps,
                      threads=a.threads, arch=arch, device="cpu", seed=1)
    tmp = Path(tempfile.mkdtemp(prefix="bench-trainer-"))
    start = tmp / "start.pt"
    tr0 = Trainer(TrainConfig(**{**asdict(cfg), "steps": 0}), tmp / "init")
    save_checkpoint(start, tr0.model, tr0.opt, 0, tr0.cfg, {})
    print(json.dumps({"positions": len(pos), "window_mb": round(len(pickle.dumps(pos)) / 2**20, 1),
                      "steps": a.steps, "batch": a.batch, "arch": arch, "threads": a.threads}))
    pools: Dict[str, Pool] = {}
    start_s: Dict[str, float] = {}
    times: Dict[str, List[float]] = {w: [] for w in a.ways}
    weights: Dict[str, Dict[str, torch.Tensor]] = {}
    try:
        for r in range(a.rounds):
            for way in a.ways:
                d = tmp / f"{way}-{r}"
                d.mkdir()
                shutil.copy(start, d / "checkpoint.pt")
                if way != "driver" and way not in pools:
                    t = time.perf_counter()
                    pools[way] = make_pool(trainer_spec(a.threads, 0), 1, backend=way)
                    start_s[way] = round(time.perf_counter() - t, 2)
                t = time.perf_counter()
                if way == "driver":
                    Trainer(cfg, d).fit(pos)
                else:
                    train_on_pool(pools[way], asdict(cfg), d / "checkpoint.pt", pos, f"r{r}",
                                  a.steps, 0)
                times[way].append(time.perf_counter() - t)
                weights[way] = load_checkpoint(d / "checkpoint.pt")["model"]
    finally:
        for pool in pools.values():
            pool.close()
        shutil.rmtree(tmp, ignore_errors=True)
    ref = weights.get("driver")
    for way in a.ways:
        same = None if ref is None else all(torch.equal(ref[k], weights[way][k]) for k in ref)
        print(json.dumps({"way": way, "seconds": [round(t, 2) for t in times[way]],
                          "best_s": round(min(times[way]), 2), "start_s": start_s.get(way),
                          "weights_equal_driver": same}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
