"""``gomoku train ...``: supervised training from game records, export to model files.

    gomoku train pack --records ../shared/data/gomocup2024_freestyle15 --out runs/sl/data.npz
    gomoku train supervised --data runs/sl/data.npz --run runs/sl --blocks 4 --channels 32
    gomoku train export --run runs/sl --out models/freestyle15-4x32
    gomoku train selfplay --model models/freestyle15-4x32 --out runs/sp --games 64 -j 2
    gomoku train gate --candidate runs/az/candidates/it0003 --best runs/az/best --max-games 400
    gomoku train loop --run runs/az --iterations 20 --init-model runs/sl/checkpoint.pt
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
    _add_rl_parsers(tsub)


def _size(text: str):
    """``15`` or ``20x15`` -> (width, height)."""
    w, _, h = str(text).lower().partition("x")
    return int(w), int(h or w)


def _add_rl_parsers(tsub: Any) -> None:
    sp = tsub.add_parser("selfplay", help="self-play games -> training shards + SGF (no torch)")
    sp.add_argument("--model", required=True,
                    help="exported model basename/file, or 'heuristic' / 'uniform'")
    sp.add_argument("--out", required=True, help="output folder (shards, sgf/, selfplay.jsonl)")
    sp.add_argument("--games", type=int, default=64)
    sp.add_argument("-j", "--workers", type=int, default=1, help="processes (0: in this one)")
    sp.add_argument("--visits", type=int, default=400, help="visits of a full search")
    sp.add_argument("--fast-visits", type=int, default=64, help="visits of a fast search")
    sp.add_argument("--p-full", type=float, default=0.25, help="fraction of full searches")
    sp.add_argument("--size", default="15", help="15 or 20x15")
    sp.add_argument("--n", type=int, default=5, help="winning length")
    sp.add_argument("--rule", default="freestyle")
    sp.add_argument("--seed", type=int, default=1)
    sp.add_argument("--openings", default=None, help="openings file (default: random stones)")
    sp.add_argument("--prefix", default="sp", help="shard name prefix")
    sp.add_argument("--games-per-shard", type=int, default=8)
    sp.add_argument("--temp-moves", type=int, default=8)
    sp.add_argument("--resign-threshold", type=float, default=-0.9,
                    help="root value below which a side resigns (-2 disables resignation)")
    sp.add_argument("--resign-plies", type=int, default=4)
    sp.add_argument("--resign-disabled", type=float, default=0.1,
                    help="fraction of games played out to measure false resignations")

    gt = tsub.add_parser("gate", help="candidate vs best in colour-swapped pairs, SPRT decision")
    gt.add_argument("--candidate", required=True)
    gt.add_argument("--best", required=True)
    gt.add_argument("--visits", type=int, default=200)
    gt.add_argument("--max-games", type=int, default=400)
    gt.add_argument("--elo0", type=float, default=0.0)
    gt.add_argument("--elo1", type=float, default=30.0)
    gt.add_argument("--alpha", type=float, default=0.05)
    gt.add_argument("--beta", type=float, default=0.05)
    gt.add_argument("--sprt-model", default="logistic", choices=["logistic", "normalized"])
    gt.add_argument("--openings", default=None, help="openings file (default: random stones)")
    gt.add_argument("--size", default="15")
    gt.add_argument("--n", type=int, default=5)
    gt.add_argument("--rule", default="freestyle")
    gt.add_argument("--seed", type=int, default=1)
    gt.add_argument("--journal", default=None, help="JSONL of finished pairs (resume)")
    gt.add_argument("--out", default=None, help="write the result JSON here too")

    lp = tsub.add_parser("loop", help="AlphaZero loop: self-play, train, gate, promote (resumable)")
    lp.add_argument("--run", required=True, help="run folder (state.json, best.*, data/, ...)")
    lp.add_argument("--iterations", type=int, required=True, help="total iterations to reach")
    lp.add_argument("--init-model", default=None,
                    help="start from a training checkpoint.pt (best) or an exported model")
    # settings: stored in RUN/config.json; given again, they replace the stored ones
    lp.add_argument("--size", default=None)
    lp.add_argument("--n", type=int, default=None)
    lp.add_argument("--rule", default=None)
    lp.add_argument("--blocks", type=int, default=None)
    lp.add_argument("--channels", type=int, default=None)
    lp.add_argument("--games", type=int, default=None, help="self-play games per iteration")
    lp.add_argument("-j", "--workers", type=int, default=None)
    lp.add_argument("--visits", type=int, default=None)
    lp.add_argument("--fast-visits", type=int, default=None)
    lp.add_argument("--p-full", type=float, default=None)
    lp.add_argument("--openings", default=None)
    lp.add_argument("--window", type=int, default=None, help="replay window (positions)")
    lp.add_argument("--min-positions", type=int, default=None)
    lp.add_argument("--steps", type=int, default=None, help="training steps per iteration")
    lp.add_argument("--batch", type=int, default=None)
    lp.add_argument("--lr", type=float, default=None)
    lp.add_argument("--threads", type=int, default=None)
    lp.add_argument("--gate-games", type=int, default=None, help="0: no gating")
    lp.add_argument("--gate-visits", type=int, default=None)
    lp.add_argument("--gate-elo1", type=float, default=None)
    lp.add_argument("--gate-openings", default=None)
    lp.add_argument("--seed", type=int, default=None)


def _run_rl(args: Any) -> int:
    """``selfplay`` and ``gate`` (no torch needed), ``loop``."""
    def emit(rec: Any) -> None:
        print(json.dumps(rec), flush=True)

    if args.train_command == "selfplay":
        from gomoku_ai.training.selfplay import run_selfplay
        summary = run_selfplay(args.model, args.out, games=args.games, workers=args.workers,
                               visits_full=args.visits, visits_fast=args.fast_visits,
                               p_full=args.p_full, board_size=_size(args.size), rule=args.rule,
                               n=args.n, seed=args.seed, openings=args.openings,
                               prefix=args.prefix, log=emit,
                               games_per_shard=args.games_per_shard, temp_moves=args.temp_moves,
                               resign_threshold=args.resign_threshold,
                               resign_plies=args.resign_plies,
                               resign_disabled_fraction=args.resign_disabled)
        summary.pop("config", None)
        emit({"summary": summary})
        return 0
    if args.train_command == "gate":
        from gomoku_ai.training.gating import GateConfig, run_gate
        w, h = _size(args.size)
        cfg = GateConfig(visits=args.visits, max_games=args.max_games, elo0=args.elo0,
                         elo1=args.elo1, alpha=args.alpha, beta=args.beta, model=args.sprt_model,
                         seed=args.seed)
        res = run_gate(args.candidate, args.best, width=w, height=h, n=args.n, rule=args.rule,
                       openings=args.openings, config=cfg, journal=args.journal)
        if args.out:
            from gomoku_ai.records import atomic_write_text
            atomic_write_text(args.out, json.dumps(res, indent=1) + "\n")
        emit(res)
        return 0
    if args.train_command == "loop":
        from gomoku_ai.training.loop import run_loop
        cfg = {"rule": args.rule, "n": args.n, "games_per_iter": args.games,
               "workers": args.workers, "visits_full": args.visits,
               "visits_fast": args.fast_visits, "p_full": args.p_full, "openings": args.openings,
               "window": args.window, "min_positions": args.min_positions,
               "steps_per_iter": args.steps, "batch_size": args.batch, "lr": args.lr,
               "threads": args.threads, "gate_games": args.gate_games,
               "gate_visits": args.gate_visits, "gate_elo1": args.gate_elo1,
               "gate_openings": args.gate_openings, "seed": args.seed}
        if args.size is not None:
            cfg["width"], cfg["height"] = _size(args.size)
        if args.blocks is not None or args.channels is not None:
            from gomoku_ai.training.loop import LoopConfig
            arch = dict(LoopConfig().arch)
            stored = Path(args.run) / "config.json"
            if stored.exists():
                arch = dict(json.loads(stored.read_text(encoding="utf-8"))["arch"])
            if args.blocks is not None:
                arch["blocks"] = args.blocks
            if args.channels is not None:
                arch["channels"] = args.channels
                arch["head_channels"] = max(16, args.channels // 2)
                arch["value_fc"] = max(32, arch["head_channels"] * 2)
            cfg["arch"] = arch
        state = run_loop(args.run, args.iterations, cfg, init_model=args.init_model, log=emit)
        emit({"state": state})
        return 0
    return 2


def run(args: Any) -> int:
    if args.train_command in ("selfplay", "gate"):
        return _run_rl(args)   # torch-free
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
    if args.train_command == "loop":
        return _run_rl(args)
    return 2
