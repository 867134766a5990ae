"""Training speed of the supervised trainer by precision and board size, on this machine's CPU (or
``--device cuda``). Prints one JSON object.

    .venv/bin/python benchmarks/bench_train.py [--blocks 5] [--channels 48] [--sizes 15 20]
        [--batch 256] [--steps 20] [--threads 2] [--precisions fp32 bf16]

For each precision and size it runs :class:`Trainer.fit` (batches drawn and encoded from a synthetic
window, symmetry augmentation, AdamW, gradient clipping: the whole step a real run takes) for
``--steps`` steps after 3 warm-up steps, with no held-out games, and reports ``positions_per_s``.
``speedup`` is each precision's rate over the first one's, by size. ``bf16`` is bfloat16 autocast
with the tower in channels-last layout (``TrainConfig.precision``); it pays on CPUs with AVX512-BF16
(``cpu_flags`` says whether this one has it). Run it on idle cores.
"""
from __future__ import annotations

import argparse
import json
import platform
import shutil
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import torch  # noqa: E402

from bench_trainer import synthetic  # noqa: E402
from gomoku_ai.training.trainer import PRECISIONS, TrainConfig, Trainer  # noqa: E402
from tools.bench import cpu_info  # noqa: E402

WARMUP_STEPS = 3


def cpu_flags() -> List[str]:
    """The CPU's bfloat16/VNNI/AMX flags from /proc/cpuinfo (empty where it cannot be read)."""
    flags = (cpu_info() or {}).get("flags", "").split()
    return sorted(f for f in flags if "bf16" in f or "vnni" in f or f.startswith("amx"))


def rate(cfg: TrainConfig, size: int, steps: int) -> float:
    """Positions per second of ``steps`` training steps of ``cfg`` on a synthetic ``size`` board."""
    tmp = Path(tempfile.mkdtemp(prefix="bench-train-"))
    try:
        pos = synthetic(max(4000, 4 * cfg.batch_size), size=size)
        tr = Trainer(TrainConfig(**{**asdict(cfg), "steps": WARMUP_STEPS}), tmp)
        tr.fit(pos)
        tr.cfg = TrainConfig(**{**asdict(cfg), "steps": WARMUP_STEPS + steps})
        t = time.perf_counter()
        tr.fit(pos)
        return steps * cfg.batch_size / (time.perf_counter() - t)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: Any = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--blocks", type=int, default=5, help="(default: %(default)s)")
    p.add_argument("--channels", type=int, default=48, help="(default: %(default)s)")
    p.add_argument("--sizes", type=int, nargs="+", default=[15, 20], help="board sizes (default: 15 20)")
    p.add_argument("--batch", type=int, default=256, help="(default: %(default)s)")
    p.add_argument("--steps", type=int, default=20, help="timed steps per case (default: %(default)s)")
    p.add_argument("--threads", type=int, default=2, help="torch threads (default: %(default)s)")
    p.add_argument("--device", default="cpu", help="(default: %(default)s)")
    p.add_argument("--precisions", nargs="+", choices=PRECISIONS, default=list(PRECISIONS),
                   help="(default: fp32 bf16)")
    a = p.parse_args(argv)
    hc = max(16, a.channels // 2)
    arch = {"blocks": a.blocks, "channels": a.channels, "head_channels": hc, "value_fc": max(32, hc * 2)}
    rates: Dict[str, Dict[str, float]] = {}
    for prec in a.precisions:
        cfg = TrainConfig(batch_size=a.batch, lr=1e-4, warmup_steps=1, val_every=0, val_fraction=0.0,
                          log_every=10**6, checkpoint_every=10**6, threads=a.threads, arch=arch,
                          device=a.device, precision=prec, seed=1)
        rates[prec] = {f"{n}x{n}": round(rate(cfg, n, a.steps), 1) for n in a.sizes}
    first = rates[a.precisions[0]]
    print(json.dumps({
        "arch": arch, "batch": a.batch, "steps": a.steps, "threads": a.threads, "device": a.device,
        "torch": torch.__version__, "cpu": platform.processor() or platform.machine(),
        "cpu_flags": cpu_flags(), "positions_per_s": rates,
        "speedup": {prec: {k: round(v / first[k], 2) for k, v in r.items()} for prec, r in rates.items()},
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
