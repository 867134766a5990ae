"""Session 48: does averaging views or networks make the value judge our moves better?

On the positions of ``held-out.jsonl`` (``benchmarks/results/s47/dagger_pack.py``) where our played move
was not Rapfi's, how often the value one move ahead prefers Rapfi's move (as ``held_out_view.py``), for
the first network's single view, its mean over the 8 symmetries (``dagger_study.values_after``), and the
mean of all the networks given, single view and symmetric. Prints one JSON line.

    .venv/bin/python benchmarks/results/s48/value_views.py runs/data/dagger15/held-out.jsonl \
        models/freestyle-5x48-mix.int8.onnx models/freestyle15-5x48-sl.int8.onnx
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "s46"))

from dagger_study import annotated_positions, values_after  # noqa: E402

from gomoku_ai.evaluator import NetworkEvaluator  # noqa: E402
from gomoku_ai.net import load_model  # noqa: E402


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("annotations")
    ap.add_argument("networks", nargs="+")
    args = ap.parse_args(argv)
    evs = [NetworkEvaluator(load_model(n)) for n in args.networks]
    prefers: Dict[str, List[bool]] = {"single": [], "symmetric": [], "ensemble_single": [],
                                      "ensemble_symmetric": []}
    for _, _, b, ours, rapfi in annotated_positions(args.annotations, "ours"):
        if ours == rapfi:
            continue
        single = np.array([values_after(ev, b, [ours, rapfi], symmetric=False) for ev in evs])   # networks x (ours, rapfi)
        sym = np.array([values_after(ev, b, [ours, rapfi]) for ev in evs])
        for key, vals in (("single", single[0]), ("symmetric", sym[0]),
                          ("ensemble_single", single.mean(0)), ("ensemble_symmetric", sym.mean(0))):
            prefers[key].append(bool(vals[1] > vals[0]))
    n = len(prefers["single"])
    print(json.dumps({"networks": args.networks, "moves_differ": n,
                      **{f"value_after_prefers_rapfi_{k}": round(sum(v) / max(1, n), 4)
                         for k, v in prefers.items()}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
