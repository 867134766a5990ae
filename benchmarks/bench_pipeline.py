"""Visits/s of the shipped player with and without the evaluation pipeline (MCTSConfig.pipeline:
one batch evaluated in a second thread while the next is gathered). Prints one JSON object.

    .venv/bin/python benchmarks/bench_pipeline.py [--ms 600] [--rounds 2]

Each round searches the six ``gomoku bench`` positions for ``--ms`` each from a fresh tree, root
tactics off (so only the search is timed), first without, then with the pipeline. Needs two idle
cores to mean anything.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gomoku_ai.shipped import load_player  # noqa: E402
from tools.bench import player_visits_per_s  # noqa: E402


def rate(pipeline: bool, ms: float) -> float:
    p = load_player()
    p.config.pipeline = pipeline
    rate = player_visits_per_s(p, ms)
    p.mcts.close()
    return rate


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ms", type=float, default=600.0)
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    out = {"ms": a.ms, "rounds": []}
    for _ in range(a.rounds):
        out["rounds"].append({"single_thread_visits_per_s": round(rate(False, a.ms)),
                              "pipelined_visits_per_s": round(rate(True, a.ms))})
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
