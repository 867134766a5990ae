"""Self-play throughput on the worker pools: local processes vs Ray actors (JSON lines).

    .venv/bin/python benchmarks/bench_workers.py [--model models/freestyle15-4x32] [--workers 2]
        [--games 32] [--visits 64] [--fast-visits 16] [--rounds 3]

For each backend: the pool's start-up (Ray builds its actors here, local workers start with the
first run), the first run (workers started, network loaded: not in the rates), then ``rounds``
self-play runs of ``games`` games on the same warm pool (each run into a fresh folder, same seed),
reported as games/hour. The two backends alternate round by round, so a machine whose load drifts
affects both alike. The outputs of the two backends are checked to be the same positions.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from gomoku_ai.training.dataset import load_shard  # noqa: E402
from gomoku_ai.training.selfplay import run_selfplay, selfplay_spec  # noqa: E402
from gomoku_ai.workers import make_pool  # noqa: E402


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="models/freestyle15-4x32")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--games", type=int, default=32)
    p.add_argument("--visits", type=int, default=64)
    p.add_argument("--fast-visits", type=int, default=16)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--backends", nargs="+", default=["local", "ray"])
    a = p.parse_args(argv)
    pools, start_s = {}, {}
    for b in a.backends:
        t = time.perf_counter()
        pools[b] = make_pool(selfplay_spec(), a.workers, backend=b)
        start_s[b] = time.perf_counter() - t
    rates: Dict[str, List[float]] = {b: [] for b in a.backends}
    first_s = {}
    cells = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for r in range(a.rounds + 1):            # round 0 loads the network: not timed
                for b in a.backends:
                    out = Path(tmp) / f"{b}-{r}"
                    t = time.perf_counter()
                    s = run_selfplay(a.model, out, games=a.games, pool=pools[b],
                                     visits_full=a.visits, visits_fast=a.fast_visits, seed=7)
                    dt = time.perf_counter() - t
                    if r > 0:
                        rates[b].append(a.games / dt * 3600.0)
                    else:
                        first_s[b] = dt
                    cells[b] = np.concatenate([load_shard(f).cells for f in sorted(out.glob("*.npz"))])
                    assert s["games"] == a.games
    finally:
        for pool in pools.values():
            pool.close()
    same = len({c.tobytes() for c in cells.values()}) == 1
    for b in a.backends:
        print(json.dumps({"bench": "selfplay_workers", "backend": b, "workers": a.workers,
                          "model": a.model, "games": a.games, "visits": [a.visits, a.fast_visits],
                          "pool_start_s": round(start_s[b], 2),
                          "first_run_s": round(first_s[b], 2),
                          "games_per_hour": [round(x) for x in rates[b]],
                          "median_games_per_hour": round(float(np.median(rates[b]))),
                          "same_positions_as_other_backends": same}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
