"""How often an exported network's policy alone picks the move a human (or engine) played, and how
far its value is from the positions' value targets.

:func:`policy_accuracy` scores a model on the validation games of a packed supervised shard: the
same split by game the trainer uses (``split_by_game`` with its ``val_fraction`` and ``seed``), so a
supervised model is scored only on games it never trained on, and a self-play successor of it on
the same games. Runs on onnxruntime or numpy; never imports torch.

    gomoku train accuracy models/freestyle15-4x32 --data runs/sl/gomocup2024.npz
"""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Dict, Union

import numpy as np

from .dataset import encode_positions, load_shard, split_by_game


def policy_accuracy(model: Union[str, os.PathLike], data: Union[str, os.PathLike],
                    val_fraction: float = 0.03, seed: int = 1, batch: int = 256,
                    backend: str = "auto", threads: int = 1) -> Dict[str, Any]:
    """Top-1 / top-3 agreement and mean log-likelihood of the played move, over the validation
    positions of ``data`` that have a played move (``move >= 0``), from the side to move; and
    ``value_mse``, the value head's squared error against the shard's value target (the result, or
    the result mixed with a teacher's evaluation: ``pack --eval-weight``) over those positions,
    weighted as the trainer weighs it (``zw``; None when no position has a value target). Both are
    from the side to move; the value is in [-1, 1].

    Occupied squares are masked out of the policy before the argmax (the engine never plays
    them either).
    """
    from ..net import load_model
    pos = load_shard(Path(data))
    _, val = split_by_game(pos, val_fraction, seed)
    val = val[pos.move[val] >= 0]
    if len(val) == 0:
        raise ValueError(f"{data}: no validation positions with a played move")
    net = load_model(model, backend=backend, threads=threads)
    t0 = time.perf_counter()
    top1 = top3 = 0
    loglik = sq_err = weight = 0.0
    for i in range(0, len(val), batch):
        idx = val[i:i + batch]
        logits, value = net.forward(encode_positions(pos, idx))
        zw = pos.zw[idx].astype(np.float64)
        sq_err += float(np.sum(zw * (value.reshape(-1).astype(np.float64) - pos.z[idx]) ** 2))
        weight += float(zw.sum())
        logits = logits.reshape(len(idx), -1).astype(np.float64)
        logits[pos.cells[idx].reshape(len(idx), -1) != 0] = -np.inf
        move = pos.move[idx].astype(np.int64)
        order = np.argsort(-logits, axis=1)[:, :3]
        top1 += int(np.sum(order[:, 0] == move))
        top3 += int(np.sum(np.any(order == move[:, None], axis=1)))
        m = logits.max(axis=1, keepdims=True)
        lse = m[:, 0] + np.log(np.exp(logits - m).sum(axis=1))
        loglik += float(np.sum(logits[np.arange(len(idx)), move] - lse))
    n = len(val)
    return {"model": str(model), "data": str(data), "val_fraction": val_fraction, "seed": seed,
            "games": int(len(np.unique(pos.game[val]))), "positions": int(n),
            "top1": round(top1 / n, 4), "top3": round(top3 / n, 4),
            "policy_loss": round(-loglik / n, 4),
            "value_mse": round(sq_err / weight, 4) if weight > 0 else None,
            "backend": net.backend if hasattr(net, "backend") else backend,
            "seconds": round(time.perf_counter() - t0, 2)}
