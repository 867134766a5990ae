"""Policy-only accuracy of exported models on the held-out games of a packed shard (JSON lines).

    .venv/bin/python benchmarks/policy_accuracy.py models/freestyle15-4x32 [MORE MODELS] \
        --data runs/sl/gomocup2024.npz [--val-fraction 0.03 --seed 1]

The split is the supervised trainer's (same fraction and seed), so the supervised model is scored
on games it never saw. See :mod:`gomoku_ai.training.accuracy`.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gomoku_ai.training.accuracy import policy_accuracy  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("models", nargs="+")
    p.add_argument("--data", required=True, help="a packed shard (gomoku train pack)")
    p.add_argument("--val-fraction", type=float, default=0.03)
    p.add_argument("--seed", type=int, default=1, help="the trainer's seed (TrainConfig.seed)")
    p.add_argument("--backend", default="auto")
    a = p.parse_args(argv)
    for m in a.models:
        print(json.dumps(policy_accuracy(m, a.data, a.val_fraction, a.seed, backend=a.backend)),
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
