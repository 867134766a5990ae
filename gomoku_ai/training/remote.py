"""Training on a worker: the loop's trainer as a pool task, on a GPU node when the cluster has one.

The AlphaZero loop (:mod:`.loop`) trains in its own process by default. With a Ray cluster whose
GPU is not on the driver's machine, the training steps run instead in one :class:`TrainWorker`
(a Ray actor asking for a GPU; ``num_gpus`` of its :class:`~gomoku_ai.workers.WorkerSpec`):

* the driver puts the replay window (a :class:`~.dataset.Positions`) once in the object store
  (:meth:`Pool.share`) and sends the training checkpoint's bytes with each task;
* the worker trains ``chunk`` steps with the ordinary :class:`~.trainer.Trainer` (``device`` auto:
  CUDA when Ray gave it a GPU) in a private folder and returns the new checkpoint's bytes, the
  trainer's log lines and where it ran (host, pid, device, Ray's GPU ids);
* the driver writes the checkpoint atomically to ``RUN/train/checkpoint.pt`` and appends the log
  lines to ``RUN/train/log.jsonl``, exactly what training in the driver writes.

So the run folder is the only state: a trainer (or its node) that dies loses the chunk in progress,
which the pool starts again on a fresh worker (or a rerun of the loop continues from the last
checkpoint the driver wrote). One chunk of a whole iteration's steps gives the same weights as
training in the driver, bit for bit on the CPU (a test checks it).

The same class runs on the local backend (a training subprocess), which is how it is tested
without Ray or a GPU.
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import tempfile
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

from ..checks import StrKind
from ..workers import Task, WorkerSpec, cluster_gpus, ray_location, resolve  # noqa: F401 (cluster_gpus: the loop reads it here, tests replace it)

class TrainerPlacement(StrKind):
    """Where the training loop trains (``LoopConfig.trainer``): in the driver process, on a pool worker (a Ray
    actor with ``trainer_gpus`` GPUs when the cluster has them), or ``auto`` (a GPU worker when the Ray cluster
    has a GPU and the driver has none, else the driver)."""

    AUTO = "auto"
    DRIVER = "driver"
    WORKER = "worker"


TRAINER_CHOICES = tuple(t.value for t in TrainerPlacement)


class TrainerLost(RuntimeError):
    """The training worker was lost on every attempt of a chunk (the run resumes from the last
    checkpoint written)."""


class TrainerFailed(RuntimeError):
    """Training raised on the worker (the message holds its traceback)."""


class TrainWorker:
    """A pool worker that trains a checkpoint on a window of positions (see the module docstring).

    Payload: ``{"config": TrainConfig fields, "checkpoint": bytes, "window": Shared Positions,
    "window_key": str}``. On Ray the window is fetched from the object store once per
    ``window_key`` and kept for the next chunks of the same iteration (the local backend has no
    store: each chunk's payload carries the window)."""

    def __init__(self) -> None:
        from . import trainer  # noqa: F401 - torch: a node without it fails here, at start-up
        self._dir = Path(tempfile.mkdtemp(prefix="gomoku-train-"))
        self._window_key: Optional[str] = None
        self._window: Any = None

    def run(self, payload: Dict[str, Any]) -> Dict[str, Any]:
        from .trainer import TrainConfig, Trainer
        if payload["window_key"] != self._window_key:
            self._window, self._window_key = None, None
            self._window = resolve(payload["window"])
            self._window_key = payload["window_key"]
        ck = self._dir / "checkpoint.pt"
        ck.write_bytes(payload["checkpoint"])
        (self._dir / "log.jsonl").unlink(missing_ok=True)
        logs: List[Dict[str, Any]] = []
        tr = Trainer(TrainConfig(**payload["config"]), self._dir, log=logs.append)
        final = tr.fit(self._window)
        return {"checkpoint": ck.read_bytes(), "logs": logs, "final": final, "step": tr.step,
                "where": {"host": socket.gethostname(), "pid": os.getpid(),
                          "device": str(tr.device), **ray_location()}}

    def close(self) -> None:
        shutil.rmtree(self._dir, ignore_errors=True)


def trainer_spec(threads: int, num_gpus: float) -> WorkerSpec:
    """The :class:`WorkerSpec` of the training worker: with a GPU (``num_gpus`` > 0) one CPU and
    one thread to drive it (batches are encoded on the GPU); without, ``threads`` CPUs and as many
    threads to train on."""
    if num_gpus > 0:
        return WorkerSpec(f"{__name__}:TrainWorker", {}, threads=1, num_cpus=1.0,
                          num_gpus=float(num_gpus))
    return WorkerSpec(f"{__name__}:TrainWorker", {}, threads=max(1, threads),
                      num_cpus=float(max(1, threads)))


def worker_train_config(cfg: Any, num_gpus: float) -> Dict[str, Any]:
    """The :class:`~.trainer.TrainConfig` fields a training worker gets: on a GPU worker one torch
    thread (see :func:`trainer_spec`) and ``cuda[:N]`` as ``cuda`` (Ray shows the worker only its
    own GPU, as device 0)."""
    from dataclasses import asdict
    d = asdict(cfg)
    if num_gpus > 0:
        d["threads"] = 1
        if str(d["device"]).startswith("cuda"):
            d["device"] = "cuda"
    return d


def train_on_pool(pool: Any, config: Dict[str, Any], ckpt_path: Path, window: Any,
                  window_key: str, target: int, chunk: int, rounds: int = 3,
                  on_log: Optional[Callable[[Dict[str, Any]], None]] = None) -> Dict[str, Any]:
    """Train the checkpoint at ``ckpt_path`` to step ``target`` on ``pool`` (one worker), ``chunk``
    steps per task (0: all at once). After each chunk the new checkpoint replaces ``ckpt_path``
    atomically and its log lines are appended to ``log.jsonl`` beside it, then ``on_log`` gets
    each line. A chunk lost on every attempt of the pool is sent again, ``rounds`` times in all,
    then :class:`TrainerLost`; an exception in the worker is :class:`TrainerFailed`.

    Returns the last chunk's result: ``start`` and ``step`` (the checkpoint's steps before and
    after), ``final`` (the trainer's last metrics), ``where`` (host, pid, device, gpu_ids and,
    on Ray, node_id), ``worker`` and ``attempts`` (the pool's attempts at that chunk)."""
    from .trainer import load_checkpoint
    log_path = ckpt_path.parent / "log.jsonl"
    step = int(load_checkpoint(ckpt_path)["step"])
    start = step
    # a rerun after the last chunk was installed: nothing to train, nothing to report
    last: Dict[str, Any] = {"final": {"step": step}, "logs": [], "where": None, "worker": None}
    lost = 0
    shared = None
    while step < target:
        if shared is None:
            shared = pool.share(window)
        upto = target if chunk <= 0 else min(target, step + chunk)
        payload = {"config": dict(config, steps=upto), "checkpoint": ckpt_path.read_bytes(),
                   "window": shared, "window_key": window_key}
        (res,) = list(pool.run([Task(("train", window_key, upto), payload)]))
        if res.kind == "error":
            raise TrainerFailed(f"training on worker {res.worker} failed:\n{res.error}")
        if res.kind == "lost":
            lost += 1
            if lost >= rounds:
                raise TrainerLost(f"the training worker was lost {lost} times training to step "
                                  f"{upto} ({res.error}); the run resumes from step {step}")
            continue
        out = dict(res.value)
        _install_checkpoint(ckpt_path, out.pop("checkpoint"), int(out["step"]), res.worker)
        with open(log_path, "a", encoding="utf-8") as f:
            for rec in out["logs"]:
                f.write(json.dumps(rec) + "\n")
        step, lost = int(out["step"]), 0
        out["worker"], out["attempts"] = res.worker, res.attempts
        for rec in out["logs"]:
            if on_log is not None:
                on_log(rec)
        last = out
    return {**last, "start": start, "step": step}


def _install_checkpoint(path: Path, data: bytes, step: int, worker: str) -> None:
    """Replace ``path`` by the checkpoint ``data`` a worker returned, once it loads (weights only)
    and is at ``step``; otherwise :class:`~.trainer.CheckpointError` and ``path`` is unchanged."""
    from ..fileio import atomic_write_bytes
    from .trainer import CheckpointError, load_checkpoint
    incoming = path.with_name(path.name + ".incoming")
    atomic_write_bytes(incoming, data)
    try:
        got = int(load_checkpoint(incoming)["step"])
        if got != step:
            raise CheckpointError(f"{incoming}: worker {worker} returned a checkpoint at step "
                                  f"{got}, not {step}")
    except Exception:
        incoming.unlink(missing_ok=True)
        raise
    os.replace(incoming, path)
