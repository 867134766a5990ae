"""The int8 graph of a model against its float graph: network speed, agreement, and the player's visits/s.
Prints one JSON object.

    .venv/bin/python benchmarks/bench_int8.py [--model freestyle15-4x32-sp] [--data SHARD.npz] [--ms 600]

- ``forward``: positions/s of one onnxruntime thread at batches of 1, 4 (the search's batch), 8 and 16, for
  each graph, on real positions of ``--data`` (a packed shard; without it, the six bench positions);
- ``agreement`` (with ``--data``): on up to 4,000 of its positions, the share where both graphs' best move is
  the same, where each one's best move is the move played (top-1), and the mean absolute value difference
  (side to move's view, [-1, 1] units);
- ``player``: visits/s of the shipped player on the six ``gomoku bench`` positions, ``--ms`` each from a fresh
  tree, root tactics off (only the search is timed), with each graph.

The model must have both graphs (``gomoku train quantize``). Run it on an idle core.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Dict, Optional

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gomoku_ai.board import Board  # noqa: E402
from gomoku_ai.evaluator import NetworkEvaluator  # noqa: E402
from gomoku_ai.net import Network, load_model  # noqa: E402
from gomoku_ai.player import Player  # noqa: E402
from gomoku_ai.rules import Rule  # noqa: E402
from gomoku_ai.shipped import resolve_model  # noqa: E402
from tools.bench import BENCH_POSITIONS, player_visits_per_s  # noqa: E402

BACKENDS = ("onnx", "onnx-int8")


def forward_rate(net: Network, x: np.ndarray, batch: int, seconds: float = 1.0) -> float:
    """Positions per second of ``net.forward`` on batches of ``batch`` taken from ``x``."""
    xb = np.ascontiguousarray(x[:batch])
    for _ in range(20):
        net.forward(xb)
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        net.forward(xb)
        n += 1
    return batch * n / (time.perf_counter() - t0)


def agreement(nets: Dict[str, Network], data: str, limit: int = 4000) -> Dict[str, Any]:
    from gomoku_ai.training.dataset import encode_positions, load_shard
    pos = load_shard(Path(data))
    idx = np.flatnonzero(pos.move >= 0)
    idx = np.sort(np.random.default_rng(0).choice(idx, min(limit, len(idx)), replace=False))
    best: Dict[str, np.ndarray] = {}
    values: Dict[str, np.ndarray] = {}
    for name, net in nets.items():
        bs, vs = [], []
        for i in range(0, len(idx), 256):
            part = idx[i:i + 256]
            logits, v = net.forward(encode_positions(pos, part))
            logits = logits.astype(np.float64)
            logits[pos.cells[part].reshape(len(part), -1) != 0] = -np.inf
            bs.append(logits.argmax(1))
            vs.append(v)
        best[name], values[name] = np.concatenate(bs), np.concatenate(vs)
    a, b = BACKENDS
    played = pos.move[idx]
    return {"positions": int(len(idx)), "best_move_agreement": round(float(np.mean(best[a] == best[b])), 4),
            "top1": {k: round(float(np.mean(best[k] == played)), 4) for k in BACKENDS},
            "value_mae": round(float(np.mean(np.abs(values[a] - values[b]))), 4)}


def player_rate(net: Network, ms: float) -> float:
    return player_visits_per_s(Player(NetworkEvaluator(net, batch_size=4)), ms)


def main(argv: Optional[list] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="freestyle15-4x32-sp", help="a model with both graphs (default: %(default)s)")
    ap.add_argument("--data", default=None, help="a packed shard: real positions, and the agreement")
    ap.add_argument("--ms", type=float, default=600.0, help="search time per bench position (default: %(default)s)")
    args = ap.parse_args(argv)
    path = resolve_model(args.model)
    nets = {b: load_model(path, backend=b) for b in BACKENDS}
    if args.data:
        from gomoku_ai.training.dataset import encode_positions, load_shard
        pos = load_shard(Path(args.data))
        x = encode_positions(pos, np.arange(min(64, len(pos))))
    else:
        from gomoku_ai.net import encode_batch
        boards = []
        for rule, line in BENCH_POSITIONS:
            b = Board(15, rule=Rule.parse(rule))
            for tok in line.split():
                b.play(b.parse(tok))
            boards.append(b)
        x = encode_batch(boards * 11)
    out: Dict[str, Any] = {"model": str(path), "forward_positions_per_s": {
        b: {str(bs): round(forward_rate(nets[b], x, bs)) for bs in (1, 4, 8, 16)} for b in BACKENDS}}
    if args.data:
        out["agreement"] = agreement(nets, args.data)
    out["player_visits_per_s"] = {b: round(player_rate(nets[b], args.ms)) for b in BACKENDS}
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
