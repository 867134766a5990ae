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

from gomoku_ai.board import Board  # noqa: E402
from gomoku_ai.player import Limit  # noqa: E402
from gomoku_ai.rules import Rule  # noqa: E402
from gomoku_ai.shipped import load_player  # noqa: E402
from tools.bench import BENCH_POSITIONS  # noqa: E402


def rate(pipeline: bool, ms: float) -> float:
    p = load_player()
    p.config.pipeline = pipeline
    p.use_vcf = p.use_vct = False
    visits = elapsed = 0.0
    for rule, line in BENCH_POSITIONS:
        b = Board(15, rule=Rule.parse(rule))
        for tok in line.split():
            b.play(b.parse(tok))
        p.new_game()
        info = p.think(b, Limit(soft_ms=ms, hard_ms=ms + 100))
        visits += info.visits
        elapsed += info.elapsed_ms
    p.mcts.close()
    return visits / elapsed * 1000.0


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
