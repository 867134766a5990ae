"""Session 47: how a network judges the held-out positions of our own games against Rapfi's answers.

For every annotated position of ``held-out.jsonl`` (``dagger_pack.py``: the games of openings a DAgger
fine-tune has not seen) it prints JSON: how often the network's first choice (priors averaged over the
8 symmetries) is Rapfi's move, and, where our played move was not Rapfi's, how often the network's value
one move ahead prefers Rapfi's move to ours (``dagger_study.values_after``, as ``network_view`` does on
the first drop of each lost game only); equal values are counted apart (``value_after_ties``). ``--min-drop`` keeps only the positions where Rapfi's evaluation fell by
more than that from this position to our next (our move was a mistake by Rapfi's measure).

    .venv/bin/python benchmarks/results/s47/held_out_view.py runs/s47/dagger/held-out.jsonl \
        --network models/freestyle-5x48-mix.int8.onnx
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import List, Optional, Set

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "s46"))

from dagger_study import annotated_positions, drops, values_after  # noqa: E402

from gomoku_ai.evaluator import NetworkEvaluator, evaluate_symmetric  # noqa: E402
from gomoku_ai.net import load_model  # noqa: E402


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("annotations")
    ap.add_argument("--network", required=True)
    ap.add_argument("--player", default="ours")
    ap.add_argument("--min-drop", type=float, default=None)
    args = ap.parse_args(argv)
    ev = NetworkEvaluator(load_model(args.network))
    first_is_rapfi: List[bool] = []
    prefers_rapfi: List[bool] = []
    ties = 0    # the two values equal (both moves lose at -1, or mirror images): counted as neither
    dropped: Set[int] = set()
    for row, i, b, ours, rapfi in annotated_positions(args.annotations, args.player):
        if args.min_drop is not None:
            if i == 0:              # a game's first position: its drops, found once
                dropped = set(drops(row, args.min_drop, below_zero=False))
            if i not in dropped:
                continue
        logits, _ = evaluate_symmetric(ev, b)
        first_is_rapfi.append(int(np.argmax(logits)) == b.index(*rapfi))
        if ours == rapfi or not b.is_empty(b.index(*rapfi)):
            continue
        after_ours, after_rapfi = values_after(ev, b, [ours, rapfi])
        prefers_rapfi.append(after_rapfi > after_ours)
        ties += after_ours == after_rapfi
    n = max(1, len(first_is_rapfi))
    out = {"network": args.network, "positions": len(first_is_rapfi),
           "network_first_is_rapfi": round(sum(first_is_rapfi) / n, 4),
           "moves_differ": len(prefers_rapfi),
           "value_after_prefers_rapfi": round(sum(prefers_rapfi) / max(1, len(prefers_rapfi)), 4),
           "value_after_ties": ties}
    json.dump(out, sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
