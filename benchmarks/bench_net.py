"""Network inference speed, single-threaded, against the machine's single-thread matmul speed.

Prints one JSON object: ``matmul_gflops`` (best of a 1024x1024x1024 float32 ``a @ b``), and for
each tower (blocks x channels), board, batch and backend: evaluations/s, GFLOP/s (convs and FCs
counted analytically, 2 FLOPs per multiply-add) and ``efficiency`` = GFLOP/s / matmul GFLOP/s.

    .venv/bin/python benchmarks/bench_net.py [--quick] [--towers 6x64,4x32] [--batches 1,8,16]
                                             [--board 15x15] [--seconds 0.3] [--rounds 3]

BLAS and onnxruntime are limited to one thread (the environment variables are set before numpy is
imported). Models are random (``random_model``), exported to a temporary folder. To resist other
load on the machine, every measurement (the matmul reference included) is repeated in ``--rounds``
interleaved passes and the best time is kept.
"""
from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
           "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Callable, Dict, List, Optional, TypedDict  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gomoku_ai.net import (Arch, export_model, fold_batchnorm, load_model,  # noqa: E402
                           random_model)
from gomoku_ai.net.onnx_backend import onnxruntime_available  # noqa: E402


class BenchResult(TypedDict):
    """The JSON object that ``main`` prints."""
    machine: Dict[str, Any]
    matmul_gflops: Optional[float]
    board: str
    backends: List[str]
    notes: List[str]
    runs: List[Dict[str, Any]]


def best_time(fn: Callable[[], object], seconds: float, min_reps: int = 3) -> float:
    """Best per-call time over several timed rounds of about ``seconds / 5`` each."""
    fn()
    t0 = time.perf_counter()
    fn()
    once = max(time.perf_counter() - t0, 1e-7)
    reps = max(min_reps, int(seconds / 5 / once))
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        best = min(best, (time.perf_counter() - t0) / reps)
    return best


def matmul_gflops(n: int, seconds: float) -> float:
    rng = np.random.default_rng(0)
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)
    c = np.empty((n, n), dtype=np.float32)
    t = best_time(lambda: np.matmul(a, b, out=c), seconds)
    return 2.0 * n ** 3 / t / 1e9


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--towers", default="6x64,4x32", help="blocks x channels, comma separated")
    ap.add_argument("--batches", default="1,8,16")
    ap.add_argument("--board", default="15x15", help="WxH")
    ap.add_argument("--seconds", type=float, default=0.3, help="timing budget per measurement")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved passes, best kept")
    ap.add_argument("--quick", action="store_true", help="short timings (smoke test)")
    args = ap.parse_args(argv)
    seconds = 0.05 if args.quick else args.seconds
    rounds = 1 if args.quick else args.rounds
    bw, bh = (int(v) for v in args.board.lower().split("x"))
    batches = [int(v) for v in args.batches.split(",")]

    have_ort = onnxruntime_available()
    try:
        import onnx  # noqa: F401
        have_onnx = True
    except ImportError:
        have_onnx = False
    backends = ["numpy"] + (["onnx"] if have_ort and have_onnx else [])

    result: BenchResult = {
        "machine": {"python": platform.python_version(), "numpy": np.__version__,
                    "processor": platform.processor() or platform.machine(),
                    "cpus": os.cpu_count(), "threads": 1},
        "matmul_gflops": None,
        "board": f"{bw}x{bh}",
        "backends": backends,
        "notes": ([] if "onnx" in backends else
                  ["onnx backend skipped: needs onnxruntime and onnx (to export the graph)"]),
        "runs": [],
    }
    if have_ort:
        import onnxruntime
        result["machine"]["onnxruntime"] = onnxruntime.__version__

    rng = np.random.default_rng(0)
    cases = []  # (key, fn, flops per call, batch)
    with tempfile.TemporaryDirectory() as tmp:
        for tower in args.towers.split(","):
            blocks, channels = (int(v) for v in tower.lower().split("x"))
            arch = Arch(blocks=blocks, channels=channels)
            w = fold_batchnorm(random_model(blocks=blocks, channels=channels, seed=1))
            base = Path(tmp) / f"bench-{blocks}x{channels}"
            export_model(w, {"name": base.name}, base, with_onnx="onnx" in backends)
            nets = {be: load_model(base, backend=be, threads=1) for be in backends}
            flops = arch.flops(bh, bw)
            for n in batches:
                x = (rng.random((n, arch.planes, bh, bw)) < 0.3).astype(np.float32)
                for be, net in nets.items():
                    cases.append(((f"{blocks}x{channels}", n, be),
                                  (lambda net=net, x=x: net.forward(x)), flops, n))
        best = {c[0]: float("inf") for c in cases}
        mm = 0.0
        for _ in range(max(1, rounds)):
            mm = max(mm, matmul_gflops(1024, max(seconds, 0.2)))
            for key, fn, _f, _n in cases:
                best[key] = min(best[key], best_time(fn, seconds))
        mm = max(mm, matmul_gflops(1024, max(seconds, 0.2)))
    result["matmul_gflops"] = round(mm, 2)
    for (tower, n, be), _fn, flops, _n in cases:
        t = best[(tower, n, be)]
        gf = flops * n / t / 1e9
        result["runs"].append({
            "tower": tower, "batch": n, "backend": be,
            "ms_per_batch": round(t * 1e3, 3), "evals_per_s": round(n / t, 1),
            "gflops": round(gf, 2), "efficiency": round(gf / mm, 3),
            "mflop_per_eval": round(flops / 1e6, 2)})
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
