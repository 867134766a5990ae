"""Visits/s of the shipped player on one core and on two: the network evaluated in a second thread
(MCTSConfig.pipeline) or in a second process (the evaluation worker that ``INFO thread_num 2`` starts,
gomoku_ai.net.evalworker) while the next batch is gathered. Prints one JSON object.

    .venv/bin/python benchmarks/bench_pipeline.py [--ms 600] [--rounds 2] [--batches 4,8,12,16]

Each round searches the six ``gomoku bench`` positions for ``--ms`` each from a fresh tree, root
tactics off (so only the search is timed): on one thread (the evaluator's batch size), with the
thread pipeline, then with the worker at each of ``--batches`` leaves a batch
(``MCTSConfig.offload_batch``). Needs two idle cores to mean anything.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gomoku_ai.shipped import load_player  # noqa: E402
from tools.bench import player_visits_per_s  # noqa: E402


def rate(ms: float, pipeline: bool = False, worker_batch: int = 0) -> float:
    p = load_player()
    p.config.pipeline = pipeline
    if worker_batch:
        p.config.offload_batch = worker_batch
        p.thread_num = 2
        if p.worker is None or not p.worker.wait_ready(30.0):
            # no worker only with a refusal (the thread_num setter starts one otherwise)
            reason = p.worker.reason if p.worker is not None else None
            raise SystemExit(f"no evaluation worker: {p.worker_refusal() or reason}")
    try:
        return player_visits_per_s(p, ms)
    finally:
        p.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ms", type=float, default=600.0)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--batches", default="4,8,12,16", help="worker batch sizes to measure")
    a = ap.parse_args()
    batches = [int(b) for b in a.batches.split(",") if b.strip()]
    out = {"ms": a.ms, "rounds": []}
    for _ in range(a.rounds):
        r = {"single_thread_visits_per_s": round(rate(a.ms)),
             "thread_pipeline_visits_per_s": round(rate(a.ms, pipeline=True))}
        for b in batches:
            r[f"worker_batch{b}_visits_per_s"] = round(rate(a.ms, worker_batch=b))
        out["rounds"].append(r)
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
