"""``gomoku train ...``: supervised training from game records, export to model files.

    gomoku train pack --records ../shared/data/gomocup2024_freestyle15 --out runs/sl/data.npz
    gomoku train supervised --data runs/sl/data.npz --run runs/sl --blocks 4 --channels 32
    gomoku train export --run runs/sl --out models/freestyle15-4x32
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def add_parser(sub: Any) -> None:
    tr = sub.add_parser("train", help="training: pack records, supervised training, export")
    tsub = tr.add_subparsers(dest="train_command", required=True)

    pk = tsub.add_parser("pack", help="turn PSQ/SGF game records into a training shard")
    pk.add_argument("--records", nargs="+", required=True, help="record files or folders")
    pk.add_argument("--openings", default=None,
                    help="openings file: moves of these prefixes are not used as targets")
    pk.add_argument("--size", type=int, default=15)
    pk.add_argument("--out", required=True, help="output .npz shard")

    sl = tsub.add_parser("supervised", help="train on shards (resumes from --run if present)")
    sl.add_argument("--data", nargs="+", required=True, help="shard files (.npz)")
    sl.add_argument("--run", required=True, help="run folder: checkpoint.pt, log.jsonl")
    sl.add_argument("--blocks", type=int, default=6)
    sl.add_argument("--channels", type=int, default=64)
    sl.add_argument("--head-channels", type=int, default=None)
    sl.add_argument("--steps", type=int, default=20000)
    sl.add_argument("--batch", type=int, default=256)
    sl.add_argument("--lr", type=float, default=2e-3)
    sl.add_argument("--threads", type=int, default=2)
    sl.add_argument("--max-seconds", type=float, default=None, help="stop (and checkpoint) after")

    ex = tsub.add_parser("export", help="export a run's checkpoint to engine model files")
    ex.add_argument("--run", required=True)
    ex.add_argument("--out", required=True, help="output basename, e.g. models/freestyle15")
    ex.add_argument("--name", default=None)
    ex.add_argument("--notes", default="")


def run(args: Any) -> int:
    try:
        import torch  # noqa: F401
    except ImportError:
        sys.stderr.write("gomoku train needs torch: pip install -e '.[train]'\n")
        return 2
    from gomoku_ai.training import dataset, trainer
    if args.train_command == "pack":
        from gomoku_ai.records import load_games, read_openings
        loader = load_games(args.records, on_error="skip", size=args.size)
        recs = list(loader)
        ops = read_openings(args.openings, width=args.size) if args.openings else None
        pos = dataset.positions_from_records(recs, openings=ops)
        dataset.save_shard(pos, args.out)
        print(json.dumps({"games": len(recs), "positions": len(pos), "skipped_files":
                          [f"{s.path}: {s.reason}" for s in loader.skipped], "out": args.out}))
        return 0
    if args.train_command == "supervised":
        pos = dataset.Positions.concat([dataset.load_shard(p) for p in args.data])
        hc = args.head_channels or max(16, args.channels // 2)
        cfg = trainer.TrainConfig(steps=args.steps, batch_size=args.batch, lr=args.lr,
                                  threads=args.threads,
                                  arch={"blocks": args.blocks, "channels": args.channels,
                                        "head_channels": hc, "value_fc": max(32, hc * 2)})
        tr = trainer.Trainer(cfg, Path(args.run),
                             log=lambda rec: print(json.dumps(rec), flush=True))
        tr.fit(pos, stop_after_s=args.max_seconds)
        return 0
    if args.train_command == "export":
        base = trainer.export_checkpoint(Path(args.run) / "checkpoint.pt", Path(args.out),
                                         args.name or Path(args.out).name, args.notes)
        print(json.dumps({"exported": str(base)}))
        return 0
    return 2
