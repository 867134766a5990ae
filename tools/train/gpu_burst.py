"""A short, bounded supervised training burst, for a GPU machine (runs on the CPU too).

Trains a network on packed training shards (``gomoku train pack`` output, e.g.
``runs/sl/gomocup2024.npz``, 231k positions of Gomocup 2024 freestyle 15x15) for at most
``--steps`` steps or ``--max-seconds`` seconds, whichever comes first, then exports it and checks
the export. Everything goes under ``--out`` (default ``$OUT``, else ``runs/gpu-burst``)::

    OUT/run/checkpoint.pt   the training checkpoint (CPU tensors; resumable with --out again,
                            loadable with torch.load(..., map_location="cpu", weights_only=True))
    OUT/run/best.pt         the checkpoint of the best validation pass (policy + value loss)
    OUT/run/log.jsonl       the trainer's log (losses, samples/s, validation)
    OUT/<name>.json/.npz/.onnx   the exported engine model (.onnx only when onnx imports)
    OUT/summary.json        device, steps, wall time, samples/s, final losses, export check

Usage (on the device machine, from the repository root; the shard is not in git, so carry it)::

    python -m tools.train.gpu_burst --data runs/sl/gomocup2024.npz --out "$OUT" --max-seconds 300
    bash tools/train/gpu_burst.sh                       # the same with defaults (OUT, timeout)

CPU smoke test (a few steps, a tiny network)::

    python -m tools.train.gpu_burst --data runs/sl/gomocup2024.npz --out /tmp/burst --steps 5 \\
        --blocks 1 --channels 8 --batch 64 --device cpu --limit 5000

Device: ``--device auto`` (default) trains on CUDA when ``torch.cuda.is_available()``, else on the
CPU. On CUDA the positions are copied to the GPU once and batches are encoded there
(:class:`gomoku_ai.training.trainer.DeviceData`). The learning-rate schedule is warm-up + cosine
over ``--steps``; ``--max-seconds`` only cuts it short (the checkpoint then resumes the same
schedule). Needs torch (the ``train`` extra); the export check loads the model with the numpy
backend and, when available, onnxruntime, and compares both with torch on validation positions.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tools.train.gpu_burst",
                                description="A short, bounded supervised training burst on packed shards "
                                            "(for a GPU machine; runs on the CPU too): train for at most "
                                            "--steps steps or --max-seconds seconds, export the network "
                                            "and check the export.")
    p.add_argument("--data", nargs="+", default=["runs/sl/gomocup2024.npz"],
                   help="training shards (.npz from gomoku train pack; default: %(default)s)")
    p.add_argument("--out", default=os.environ.get("OUT") or "runs/gpu-burst",
                   help="output folder (default: $OUT, else runs/gpu-burst; here %(default)s)")
    p.add_argument("--name", default=None, help="model name (default: burst-<B>x<C>)")
    p.add_argument("--blocks", type=int, default=6,
                   help="residual blocks of the network (default: %(default)s)")
    p.add_argument("--channels", type=int, default=64,
                   help="channels of the residual tower (default: %(default)s)")
    p.add_argument("--steps", type=int, default=6000,
                   help="schedule length in steps (default: %(default)s)")
    p.add_argument("--batch", type=int, default=1024,
                   help="positions per training step (default: %(default)s)")
    p.add_argument("--lr", type=float, default=2e-3,
                   help="learning rate reached after the warm-up, then decayed (cosine; default: "
                        "%(default)s)")
    p.add_argument("--warmup", type=int, default=200, help="warm-up steps (default: %(default)s)")
    p.add_argument("--max-seconds", type=float, default=300.0,
                   help="stop training after this many seconds, the burst's bound (default: %(default)s)")
    p.add_argument("--time-schedule", action="store_true",
                   help="run the warm-up + cosine schedule over --max-seconds instead of --steps (whichever "
                        "ends first): on a machine of unknown speed the learning rate still ends low")
    p.add_argument("--init", default=None,
                   help="a checkpoint whose weights start the run (fresh optimizer and schedule; its "
                        "architecture must be --blocks x --channels); ignored when --out already has one")
    p.add_argument("--device", default="auto", help="auto | cpu | cuda[:N] (default: %(default)s)")
    p.add_argument("--precision", choices=("fp32", "bf16"), default="fp32",
                   help="fp32, or bf16 (bfloat16 autocast, weights kept in float32) "
                        "(default: %(default)s)")
    p.add_argument("--threads", type=int, default=max(1, min(8, os.cpu_count() or 1)),
                   help="torch CPU threads (default: the CPUs, at most 8; here %(default)s)")
    p.add_argument("--limit", type=int, default=None,
                   help="use only the first N positions of each board size (smoke tests)")
    p.add_argument("--repeat", action="append", default=None, metavar="SHARD=K",
                   help="weigh one --data shard K times in the mix, e.g. runs/data/dagger15/train.npz=10 "
                        "(repeatable; its games stay whole in the validation split)")
    p.add_argument("--size-share", action="append", default=None, metavar="WxH=F",
                   help="with shards of several board sizes: the share of the batches from one size, "
                        "e.g. 20x20=0.3 (repeatable; sizes not named share the rest by positions)")
    p.add_argument("--val-every", type=int, default=1000,
                   help="steps between validation passes (default: %(default)s)")
    p.add_argument("--seed", type=int, default=1,
                   help="seed of the validation split and the batches (default: %(default)s)")
    p.add_argument("--device-data", choices=("auto", "on", "off"), default="auto",
                   help="keep the positions on the device and encode there (auto: on CUDA; default: "
                        "%(default)s)")
    return p


def _export_check(model_base: Path, ck: Path, pos: Any, n: int = 64) -> Dict[str, Any]:
    """Max |difference| of policy logits and values between torch and each inference backend."""
    import numpy as np
    import torch
    from gomoku_ai.net import load_model
    from gomoku_ai.net.onnx_backend import onnxruntime_available
    from gomoku_ai.training.dataset import encode_positions
    from gomoku_ai.training.trainer import model_from_checkpoint
    idx = np.arange(min(n, len(pos)))
    x = encode_positions(pos, idx)
    m = model_from_checkpoint(ck).eval()
    with torch.no_grad():
        p_t, v_t = m(torch.from_numpy(x))
    p_t, v_t = p_t.numpy(), v_t.numpy()
    out: Dict[str, Any] = {}
    backends = ["numpy"] + (["onnx"] if model_base.with_suffix(".onnx").exists()
                            and onnxruntime_available() else [])
    for be in backends:
        net = load_model(model_base, backend=be, threads=1)
        p, v = net.forward(x)
        out[be] = {"policy_max_abs_diff": float(np.abs(np.asarray(p) - p_t).max()),
                   "value_max_abs_diff": float(np.abs(np.asarray(v).reshape(-1) - v_t).max())}
    return out


def _device_info(device: Any) -> Dict[str, Any]:
    """What trains: device, torch and Python versions, host CPUs (and the GPU's name, with TF32 and the cuDNN
    autotuner switched on, on CUDA)."""
    import torch
    info: Dict[str, Any] = {"device": str(device), "torch": torch.__version__,
                            "python": platform.python_version(), "host_cpus": os.cpu_count()}
    if device.type == "cuda":
        info["cuda_device"] = torch.cuda.get_device_name(device)
        torch.backends.cudnn.benchmark = True
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    return info


def _train_config(args: argparse.Namespace) -> Any:
    """The :class:`~gomoku_ai.training.trainer.TrainConfig` of the burst (warm-up at most a tenth of the
    schedule, logs and checkpoints at least once)."""
    from gomoku_ai.training import trainer
    hc = max(16, args.channels // 2)
    return trainer.TrainConfig(steps=args.steps, batch_size=args.batch, lr=args.lr,
                               warmup_steps=min(args.warmup, max(1, args.steps // 10)),
                               val_every=args.val_every, log_every=max(1, min(100, args.steps)),
                               checkpoint_every=max(1, min(1000, args.steps)), seed=args.seed,
                               threads=args.threads, device=args.device,
                               precision=args.precision,
                               schedule_seconds=args.max_seconds if args.time_schedule else None,
                               size_shares=trainer.parse_size_shares(args.size_share or []),
                               arch={"blocks": args.blocks, "channels": args.channels,
                                     "head_channels": hc, "value_fc": max(32, hc * 2)})


def _export(args: argparse.Namespace, out: Path, step: int, boards: List[List[int]],
            device: Any) -> Tuple[Path, bool]:
    """Export ``out/run/checkpoint.pt`` (trained ``step`` steps on ``device``, on ``boards`` [[w, h], ...]) as the
    engine model ``out/<name>`` (with .onnx when onnx imports); (its base path, whether .onnx was written)."""
    from gomoku_ai.net import export_model, fold_batchnorm
    from gomoku_ai.training import trainer
    try:
        import onnx  # noqa: F401
        with_onnx = True
    except ImportError:
        with_onnx = False
    name = args.name or f"burst-{args.blocks}x{args.channels}"
    model = trainer.model_from_checkpoint(out / "run" / "checkpoint.pt").eval()
    cfg_json = {"name": name, "board_sizes": boards, "version": str(step),
                "notes": f"supervised burst on {', '.join(Path(p).name for p in args.data)}: "
                         f"{step} steps x {args.batch} on {device}"}
    base = export_model(fold_batchnorm(model.unfolded_weights()), cfg_json, out / name, with_onnx=with_onnx)
    return base, with_onnx


def main(argv: Optional[List[str]] = None) -> int:
    """Train, export and check (see the module docstring); prints JSON lines, writes ``OUT/summary.json``.
    Returns 1 when the export differs from torch by more than 1e-3, else 0."""
    args = build_parser().parse_args(argv)
    t_start = time.perf_counter()
    from gomoku_ai.training import dataset
    try:        # before torch loads, so that a bad option costs the device nothing
        times = dataset.parse_repeats(args.repeat or [], args.data)
    except ValueError as e:
        sys.stderr.write(f"gpu_burst: {e}\n")
        return 2
    import numpy as np
    import torch
    from gomoku_ai.training import trainer
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    device = trainer.resolve_device(args.device)
    info = _device_info(device)
    print(json.dumps({"burst": info}), flush=True)

    t = time.perf_counter()
    sets = trainer.group_by_size(dataset.load_shards(args.data, times))
    if args.limit is not None:
        sets = [p.subset(np.arange(args.limit)) if args.limit < len(p) else p for p in sets]
    load_s = time.perf_counter() - t
    boards = [[p.shape[1], p.shape[0]] for p in sets]
    try:
        cfg = _train_config(args)
        trainer.check_size_shares(cfg.size_shares, sets)
    except ValueError as e:
        sys.stderr.write(f"gpu_burst: {e}\n")
        return 2
    logs: List[Dict[str, Any]] = []

    def log(rec: Dict[str, Any]) -> None:
        logs.append(rec)
        print(json.dumps(rec), flush=True)

    tr = trainer.Trainer(cfg, out / "run", log=log,
                         device_data={"auto": None, "on": True, "off": False}[args.device_data],
                         init=Path(args.init) if args.init else None)
    step0 = tr.step
    t = time.perf_counter()
    final = tr.fit(sets, stop_after_s=max(0.0, args.max_seconds))
    if device.type == "cuda":
        torch.cuda.synchronize()
    train_s = time.perf_counter() - t
    steps = tr.step - step0
    t = time.perf_counter()
    base, with_onnx = _export(args, out, tr.step, boards, device)
    export_s = time.perf_counter() - t
    check = {}
    for p in sets:
        for be, diffs in _export_check(base.with_suffix(""), out / "run" / "checkpoint.pt", p).items():
            check[be if len(sets) == 1 else f"{be}_{trainer.size_name(p)}"] = diffs
    last = next((r for r in reversed(logs) if "policy_loss" in r), {})
    best = next((r for r in reversed(logs) if r.get("best")), None)
    summary = {**info, "data": [str(p) for p in args.data], "positions": sum(len(p) for p in sets),
               "board": boards[0], "boards": boards, "arch": cfg.arch, "batch": args.batch, "schedule_steps": args.steps,
               "steps_this_run": steps, "step": tr.step, "load_s": round(load_s, 2),
               "train_s": round(train_s, 2),
               "samples_per_s": round(steps * args.batch / max(train_s, 1e-9), 1),
               "last_log": last, "best_val": best, "final": final, "export": str(base),
               "export_s": round(export_s, 2), "onnx": with_onnx, "export_check": check,
               "wall_s": round(time.perf_counter() - t_start, 2)}
    tmp = out / ".summary.json.tmp"
    tmp.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    tmp.replace(out / "summary.json")
    print(json.dumps({"summary": summary}), flush=True)
    worst = max((v for c in check.values() for v in c.values()), default=0.0)
    if worst > 1e-3:
        sys.stderr.write(f"gpu_burst: exported model differs from torch by {worst:g}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
