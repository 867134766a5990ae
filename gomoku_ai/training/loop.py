"""The AlphaZero loop: self-play -> train -> export -> gate -> promote, resumable.

One iteration ``i``:

1. **self-play** with the current best model (``DIR/best.*``) into ``DIR/data/it<i>-*.npz`` (+ SGF,
   ``selfplay.jsonl``);
2. **train** the one continuing training run (``DIR/train/checkpoint.pt``) for ``steps_per_iter``
   more steps on the replay window (the newest ``window`` positions of ``DIR/data``); the learning
   rate is constant after the first warm-up;
3. **export** the checkpoint as the candidate ``DIR/candidates/it<i>.*``;
4. **gate** candidate vs best (:mod:`.gating`: colour-swapped pairs, SPRT) -- ``gate_games = 0``
   skips gating and always promotes (AlphaZero style);
5. **promote** on ``accept``: the candidate's files are copied over ``DIR/best.*`` (each file
   atomically, the ``.json`` with the checksums last);
6. **log** one JSON line to ``DIR/loop.jsonl`` (iteration, games, positions, losses, gate result,
   elapsed seconds per phase).

The ``log`` callback (``gomoku train loop`` prints each record as a JSON line, or feeds its live
display) gets ``{"iteration", "phase"}`` at the start of each phase, ``selfplay_batch`` per batch of
games, ``train_log`` per trainer log line, ``gate_pair`` per gate pair, the iteration's
``loop.jsonl`` record at its end, and ``note`` records. ``run(..., max_seconds=)`` starts no new
iteration after that much wall time (the run resumes later).

``DIR/state.json`` (written atomically after every phase) records the last completed iteration and
the phase reached in the current one; rerunning continues from there (self-play also resumes per
shard, training from its checkpoint, a gate from its journal of finished pairs). ``DIR/config.json``
keeps the settings; options given again on a rerun replace the stored ones from then on.

Self-play batches and gate pairs are tasks of one worker pool kept for the whole :meth:`Loop.run`
(``workers`` local processes, or Ray actors with ``backend = "ray"`` and ``address``; one thread
each): a worker loads a network once per version, and a promoted network reaches the workers as
the new version named by the next tasks. ``workers = 0`` plays everything in this process.

Training runs in this process, or (``trainer``; :mod:`.remote`) in one training worker kept for
the run: a Ray actor asking for ``trainer_gpus`` GPUs when the cluster has them (``"auto"`` picks
it when this machine has no CUDA and the cluster has a GPU). The worker returns checkpoints and log
lines and this process writes them to ``DIR/train/``, so the folder is the same either way.

Training starts from a random network, or from ``init_model``: a training checkpoint
(``checkpoint.pt`` of ``gomoku train supervised``; best) or an exported model (folded weights are
loaded with identity BatchNorm, which is exact in inference but changes train-mode statistics).
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Union

from .. import checks
from ..net.weights import check_arch
from ..workers import Backend, Pool
from .remote import TrainerPlacement

if TYPE_CHECKING:   # torch: imported only where training runs
    from .model import PolicyValueNet
    from .trainer import TrainConfig

STATE_VERSION = 1
MODEL_SUFFIXES = (".npz", ".onnx", ".json")   # .json last: it holds the others' checksums


class LoopSettingsError(checks.ConfigError):
    """Settings that name no setting or no known choice (the message says which)."""


@dataclass
class LoopConfig:
    """Settings of a run (stored in ``DIR/config.json``)."""

    width: int = 15
    height: Optional[int] = None
    n: int = 5
    rule: str = "freestyle"
    arch: Dict[str, int] = field(default_factory=lambda: {"blocks": 6, "channels": 64,
                                                          "head_channels": 32, "value_fc": 64})
    # self-play
    games_per_iter: int = 64
    workers: int = 2
    visits_full: int = 400
    visits_fast: int = 64
    p_full: float = 0.25
    selfplay: Dict[str, Any] = field(default_factory=dict)   # further SelfPlayConfig fields
    openings: Optional[str] = None
    # training
    window: int = 250_000
    min_positions: int = 2_048       # below this the iteration only plays (no train, no gate)
    steps_per_iter: int = 500
    batch_size: int = 256
    lr: float = 1e-3
    warmup_steps: int = 100
    weight_decay: float = 1e-4
    threads: int = 2
    device: str = "auto"             # trainer device: auto | cpu | cuda (self-play stays on CPU)
    # where training runs: "driver" (this process), "worker" (a pool worker: a Ray actor with
    # trainer_gpus GPUs when the cluster has them), "auto" (a GPU worker when the Ray cluster has
    # a GPU and this process has none, else the driver)
    trainer: TrainerPlacement = TrainerPlacement.AUTO
    trainer_gpus: float = 1.0
    train_chunk: int = 0             # steps per training task on a worker (0: the iteration's)
    # where self-play and gate games run (workers >= 1): local processes or Ray actors
    backend: Backend = Backend.LOCAL  # local | ray
    address: Optional[str] = None    # ray: None (a private instance), "auto", "HOST:PORT"
    # gating
    gate_games: int = 200            # max games; 0 = no gating, always promote
    gate_visits: int = 200
    gate_elo0: float = 0.0
    gate_elo1: float = 30.0
    gate_alpha: float = 0.05
    gate_beta: float = 0.05
    gate_model: str = "logistic"
    gate_openings: Optional[str] = None
    seed: int = 1

    def __post_init__(self) -> None:
        """Check every field; the kinds given as strings (``backend``, ``trainer``: as read from
        ``config.json``) become their members. A bad value is a :class:`LoopSettingsError`."""
        from .gating import SPRT_MODELS
        try:
            checks.board_fields(self)
            checks.rule_name(self, "rule")
            check_arch(self, "arch")
            checks.non_negative(self, "games_per_iter", "workers", "min_positions", "steps_per_iter",
                                "warmup_steps", "weight_decay", "trainer_gpus", "train_chunk", "gate_games")
            checks.at_least(self, 1, "visits_full", "visits_fast", "window", "batch_size", "threads",
                            "gate_visits")
            checks.fraction(self, "p_full")
            checks.positive(self, "lr")
            checks.device(self, "device")
            self.trainer = checks.parse_kind(TrainerPlacement, self.trainer, "LoopConfig.trainer")
            self.backend = checks.parse_kind(Backend, self.backend, "LoopConfig.backend")
            checks.finite(self, "gate_elo0", "gate_elo1")
            checks.in_open_range(self, 0, 1, "gate_alpha", "gate_beta")
            checks.one_of(self, "gate_model", SPRT_MODELS)
            for name in ("selfplay", "arch"):
                checks.require(isinstance(getattr(self, name), dict), self, name, "a dict")
        except checks.ConfigError as e:
            raise LoopSettingsError(str(e)) from None

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "LoopConfig":
        names = {f.name for f in fields(cls)}
        unknown = set(d) - names
        if unknown:
            raise LoopSettingsError(f"unknown loop settings: {', '.join(sorted(unknown))}")
        from ..workers import BACKENDS
        if d.get("backend", "local") not in BACKENDS:
            raise LoopSettingsError(f"unknown backend {d['backend']!r} (choose from "
                                    f"{', '.join(BACKENDS)})")
        from .remote import TRAINER_CHOICES
        if d.get("trainer", "auto") not in TRAINER_CHOICES:
            raise LoopSettingsError(f"unknown trainer {d['trainer']!r} (choose from "
                                    f"{', '.join(TRAINER_CHOICES)})")
        return cls(**d)


SELFPLAY_ROUNDS = 3     # passes over an iteration's self-play batches before giving up on lost ones


class LoopError(RuntimeError):
    """A run folder that cannot be continued (the message says why)."""


def _driver_has_cuda() -> bool:
    import torch
    return bool(torch.cuda.is_available())


# ============================================================================ files
def _write_json_atomic(path: Path, obj: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(obj, f, indent=1)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise LoopError(f"{path}: cannot read ({e})") from e


def copy_model(src_base: Path, dst_base: Path) -> None:
    """Copy the files of the model ``src_base`` to ``dst_base``, each atomically, json last."""
    dst_base.parent.mkdir(parents=True, exist_ok=True)
    for suf in MODEL_SUFFIXES:
        src = src_base.with_name(src_base.name + suf)
        if not src.exists():
            continue
        dst = dst_base.with_name(dst_base.name + suf)
        fd, tmp = tempfile.mkstemp(prefix="." + dst.name + ".", suffix=".tmp", dir=dst.parent)
        os.close(fd)
        try:
            shutil.copyfile(src, tmp)
            with open(tmp, "rb+") as f:
                os.fsync(f.fileno())
            os.replace(tmp, dst)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise


def _append_line(path: Path, rec: Dict[str, Any]) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(rec) + "\n")
        f.flush()
        os.fsync(f.fileno())


# ============================================================================ initial model
def _init_weights(model: PolicyValueNet, init_model: Path) -> Dict[str, Any]:
    """Load ``init_model`` (a checkpoint or an exported model) into the torch ``model``."""
    import numpy as np
    from ..net import load_weights
    from .trainer import load_checkpoint
    p = Path(init_model)
    if p.suffix == ".pt" or (p.is_dir() and (p / "checkpoint.pt").exists()):
        ck = p / "checkpoint.pt" if p.is_dir() else p
        state = load_checkpoint(ck)
        model.load_state_dict(state["model"])
        return {"init": str(ck), "init_kind": "checkpoint", "init_step": int(state["step"])}
    weights, _cfg = load_weights(p)
    unfolded: Dict[str, Any] = {}
    for k, v in weights.items():
        if k.endswith(".b") and not k.startswith(("policy.conv2", "value.fc")):
            name = k[:-2]
            c = v.shape[0]
            unfolded[f"{name}.bn.gamma"] = np.ones(c, np.float32)
            unfolded[f"{name}.bn.beta"] = v
            unfolded[f"{name}.bn.mean"] = np.zeros(c, np.float32)
            unfolded[f"{name}.bn.var"] = np.full(c, 1.0 - 1e-5, np.float32)
        else:
            unfolded[k] = v
    model.load_unfolded(unfolded)
    return {"init": str(p), "init_kind": "exported"}


def _arch_of_init(init_model: Path) -> Optional[Dict[str, int]]:
    p = Path(init_model)
    if p.suffix == ".pt" or (p.is_dir() and (p / "checkpoint.pt").exists()):
        from .trainer import load_checkpoint
        ck = p / "checkpoint.pt" if p.is_dir() else p
        a = dict(load_checkpoint(ck)["arch"])
    else:
        from ..net import read_config
        _, cfg = read_config(p)
        a = {k: int(cfg[k]) for k in ("blocks", "channels", "head_channels", "value_fc")}
    a.pop("planes", None)
    return a


# ============================================================================ the loop
class Loop:
    """A run folder and its state; :meth:`run` advances it."""

    def __init__(self, run_dir: Union[str, os.PathLike], config: Optional[Dict[str, Any]] = None,
                 init_model: Union[None, str, os.PathLike] = None,
                 log: Optional[Callable[[Dict[str, Any]], None]] = None) -> None:
        self.dir = Path(run_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.state_path = self.dir / "state.json"
        self.config_path = self.dir / "config.json"
        self.log_path = self.dir / "loop.jsonl"
        self.data_dir = self.dir / "data"
        self.train_dir = self.dir / "train"
        self.best = self.dir / "best"
        self._log_cb = log
        self._pool: Optional[Pool] = None
        self._train_pool: Optional[Pool] = None
        self._trainer: Optional[Dict[str, Any]] = None
        self._own_ray = False
        stored: Dict[str, Any] = _read_json(self.config_path) if self.config_path.exists() else {}
        merged = {**stored, **{k: v for k, v in (config or {}).items() if v is not None}}
        if init_model is not None and not self.state_path.exists():
            merged["arch"] = _arch_of_init(Path(init_model))
        self.cfg = LoopConfig.from_dict(merged)
        if stored and stored.get("arch") and self.cfg.arch != stored["arch"]:
            raise LoopError(f"{self.config_path}: the run's network is {stored['arch']}; it cannot "
                            f"change to {self.cfg.arch} (use a new run folder)")
        _write_json_atomic(self.config_path, asdict(self.cfg))
        if self.state_path.exists():
            self.state = _read_json(self.state_path)
            if self.state.get("version") != STATE_VERSION:
                raise LoopError(f"{self.state_path}: unknown state version")
            if init_model is not None:
                self._emit({"note": "init_model ignored: the run already exists"})
        else:
            self.state = self._initialise(init_model)

    # ---------------------------------------------------------------- helpers
    def _emit(self, rec: Dict[str, Any]) -> None:
        if self._log_cb is not None:
            self._log_cb(rec)

    def _save_state(self) -> None:
        _write_json_atomic(self.state_path, self.state)

    def pool(self) -> Optional[Pool]:
        """The run's one worker pool (self-play batches and gate pairs), started at first use and
        kept until :meth:`close` so that workers load each network once per version; None with
        ``workers = 0`` (everything in this process)."""
        c = self.cfg
        if self._pool is None and c.workers >= 1:
            from ..workers import make_pool
            from .poolworker import training_spec
            self._ensure_ray()
            if self.trainer()["on"] == "worker":
                # placed first, so that self-play workers filling a node cannot keep it from the
                # CPU it needs beside its GPU
                self.train_pool()
            self._pool = make_pool(training_spec(), c.workers, backend=c.backend,
                                   address=c.address)
            self._emit({"note": f"workers: {json.dumps(self._pool.describe())}"})
        return self._pool

    def _ensure_ray(self) -> None:
        """With ``backend = "ray"``: join the cluster, or start the private instance with a CPU
        for each worker and for a training worker, before any pool is made (the pools then share
        it and :meth:`close` shuts it down)."""
        c = self.cfg
        if c.backend is not Backend.RAY:
            return
        from ..workers import ensure_ray
        extra = {TrainerPlacement.DRIVER: 0, TrainerPlacement.AUTO: 1,
                 TrainerPlacement.WORKER: max(1, c.threads)}[c.trainer]
        if ensure_ray(c.address, num_cpus=max(1, c.workers) + extra if c.address is None else None):
            self._own_ray = True

    def trainer(self) -> Dict[str, Any]:
        """Where training runs (decided once per :meth:`run`): ``{"on": "driver"}`` or
        ``{"on": "worker", "num_gpus": G}`` (see :attr:`LoopConfig.trainer`)."""
        if self._trainer is None:
            c = self.cfg
            self._trainer = {"on": "driver"}
            if c.trainer is not TrainerPlacement.DRIVER:
                self._ensure_ray()
                from .remote import cluster_gpus   # (re-exported there; tests replace it)
                gpus = cluster_gpus()
                want = c.trainer_gpus if 0 < c.trainer_gpus <= gpus and c.device != "cpu" else 0.0
                if c.trainer is TrainerPlacement.WORKER:
                    self._trainer = {"on": "worker", "num_gpus": want}
                elif want > 0 and c.device != "cpu" and not _driver_has_cuda():
                    self._trainer = {"on": "worker", "num_gpus": want}
            self._emit({"note": f"trainer: {json.dumps(self._trainer)}"})
        return self._trainer

    def train_pool(self) -> Pool:
        """The one training worker (started at first use, kept until :meth:`close`)."""
        if self._train_pool is None:
            from ..workers import make_pool
            from .remote import trainer_spec
            c = self.cfg
            self._ensure_ray()
            self._train_pool = make_pool(trainer_spec(c.threads, self.trainer()["num_gpus"]), 1,
                                         backend=c.backend, address=c.address)
            self._emit({"note": f"training worker: {json.dumps(self._train_pool.describe())}"})
        return self._train_pool

    def close(self) -> None:
        """Stop the worker pools, and the private Ray instance this loop started (idempotent;
        :meth:`run` calls it when it returns)."""
        try:
            for name in ("_pool", "_train_pool"):
                pool = getattr(self, name)
                if pool is not None:
                    setattr(self, name, None)
                    try:
                        pool.close()
                    except Exception as e:  # noqa: BLE001 - the other pool and Ray still stop
                        self._emit({"note": f"closing the {name.strip('_')} failed: {e}"})
        finally:
            self._trainer = None
            if self._own_ray:
                self._own_ray = False
                from ..workers import shutdown_ray
                shutdown_ray()

    def _train_config(self, steps: int) -> TrainConfig:
        from .trainer import TrainConfig
        c = self.cfg
        return TrainConfig(steps=steps, batch_size=c.batch_size, lr=c.lr, lr_min=c.lr,
                           warmup_steps=c.warmup_steps, weight_decay=c.weight_decay,
                           val_fraction=0.03, val_every=0, log_every=max(1, min(100, c.steps_per_iter)),
                           checkpoint_every=max(1, c.steps_per_iter), seed=c.seed,
                           threads=c.threads, arch=dict(c.arch), device=c.device)

    def _export(self, out_base: Path, name: str, iteration: int) -> None:
        from .trainer import export_checkpoint
        h = self.cfg.height or self.cfg.width
        export_checkpoint(self.train_dir / "checkpoint.pt", out_base, name,
                          notes=f"alphazero loop {self.dir.name} iteration {iteration}",
                          extra={"board_sizes": [[self.cfg.width, h]], "version": str(iteration),
                                 "rule": self.cfg.rule, "win_length": self.cfg.n})

    def _initialise(self, init_model: Union[None, str, os.PathLike]) -> Dict[str, Any]:
        from .trainer import Trainer, save_checkpoint
        init_info: Dict[str, Any] = {}
        ck = self.train_dir / "checkpoint.pt"
        # only writes the step-0 checkpoint: on the CPU, since the GPU may be on a worker
        tr = Trainer(replace(self._train_config(0), device="cpu"), self.train_dir)
        if not ck.exists():
            if init_model is not None:
                init_info = _init_weights(tr.model, Path(init_model))
            save_checkpoint(ck, tr.model, tr.opt, 0, tr.cfg, {})
        self._export(self.best, f"{self.dir.name}-it0000", 0)
        state = {"version": STATE_VERSION, "completed": 0, "best_iteration": 0,
                 "train_step": tr.step, "current": None, **init_info}
        _write_json_atomic(self.state_path, state)
        return state

    # ---------------------------------------------------------------- phases
    def _selfplay(self, i: int, cur: Dict[str, Any]) -> None:
        from .selfplay import run_selfplay
        c = self.cfg
        t = time.perf_counter()
        # a batch lost with its worker (all attempts) is played again here, since the phase only
        # moves on with every batch on disk; run_selfplay skips the batches already written
        for round_ in range(SELFPLAY_ROUNDS):
            summary = run_selfplay(
                self.best, self.data_dir, games=c.games_per_iter, workers=c.workers,
                visits_full=c.visits_full, visits_fast=c.visits_fast, p_full=c.p_full,
                board_size=(c.width, c.height or c.width), rule=c.rule, n=c.n,
                seed=c.seed * 1_000_003 + i, openings=c.openings, prefix=f"it{i:04d}",
                pool=self.pool(),
                log=lambda rec: self._emit({"iteration": i, "note": rec["note"]} if rec.get("lost")
                                           else {"iteration": i, "selfplay_batch": rec}),
                **c.selfplay)
            if not summary.get("lost_batches"):
                break
        else:
            raise LoopError(f"iteration {i}: self-play batches {summary['lost_batches']} were lost "
                            f"with their workers {SELFPLAY_ROUNDS} times; rerun to play them")
        summary.pop("config", None)
        cur["selfplay"] = summary
        cur["elapsed"]["selfplay"] = round(cur["elapsed"].get("selfplay", 0.0)
                                           + time.perf_counter() - t, 2)

    def _train(self, i: int, cur: Dict[str, Any]) -> bool:
        """Returns False when the window is too small to train on."""
        from .dataset import load_window
        from .trainer import Trainer
        c = self.cfg
        t = time.perf_counter()
        pos = load_window(self.data_dir, c.window)
        cur["window"] = len(pos)
        if len(pos) < c.min_positions:
            cur["train"] = {"skipped": f"window of {len(pos)} positions < min_positions "
                                       f"{c.min_positions}"}
            return False
        if cur.get("train_target") is None:
            cur["train_target"] = int(self.state.get("train_step", 0)) + c.steps_per_iter
            self._save_state()
        metrics: List[Dict[str, Any]] = []

        def on_train(m: Dict[str, Any]) -> None:
            metrics.append(m)
            self._emit({"iteration": i, "train_log": m, "train_target": cur["train_target"]})

        tcfg = self._train_config(int(cur["train_target"]))
        where: Dict[str, Any]
        if self.trainer()["on"] == "driver":
            tr = Trainer(tcfg, self.train_dir, log=on_train)
            start = tr.step
            final = tr.fit(pos)
            step, where = tr.step, {"on": "driver", "device": str(tr.device)}
        else:
            from .remote import TrainerLost, train_on_pool, worker_train_config
            try:
                res = train_on_pool(self.train_pool(),
                                    worker_train_config(tcfg, self.trainer()["num_gpus"]),
                                    self.train_dir / "checkpoint.pt", pos, f"it{i:04d}",
                                    tcfg.steps, c.train_chunk, rounds=SELFPLAY_ROUNDS,
                                    on_log=on_train)
            except TrainerLost as e:
                raise LoopError(f"iteration {i}: {e}; rerun to continue") from e
            start, step, final = res["start"], res["step"], res["final"]
            where = {"on": "worker", "worker": res["worker"], "attempts": res.get("attempts"),
                     **(res["where"] or {})}
        last = next((m for m in reversed(metrics) if "policy_loss" in m), {})
        cur["train"] = {"steps": step - start, "step": step,
                        **{k: last[k] for k in ("policy_loss", "value_loss", "top1", "lr")
                           if k in last},
                        **{k: v for k, v in final.items() if k.startswith("val_")},
                        "trainer": where}
        self.state["train_step"] = step
        cur["elapsed"]["train"] = round(cur["elapsed"].get("train", 0.0)
                                        + time.perf_counter() - t, 2)
        return True

    def _gate(self, i: int, cur: Dict[str, Any]) -> None:
        from .gating import GateConfig, run_gate
        c = self.cfg
        t = time.perf_counter()
        if c.gate_games <= 0:
            cur["gate"] = {"decision": "accept", "reason": "gating off (gate_games = 0)"}
        else:
            gcfg = GateConfig(visits=c.gate_visits, max_games=c.gate_games, elo0=c.gate_elo0,
                              elo1=c.gate_elo1, alpha=c.gate_alpha, beta=c.gate_beta,
                              model=c.gate_model, seed=c.seed * 1_000_003 + i)
            cur["gate"] = run_gate(
                self.dir / "candidates" / f"it{i:04d}", self.best, width=c.width,
                height=c.height, n=c.n, rule=c.rule, openings=c.gate_openings, config=gcfg,
                journal=self.dir / "gates" / f"it{i:04d}.pairs.jsonl", pool=self.pool(),
                log=lambda rec: self._emit({"iteration": i, "note": rec["note"]} if "note" in rec
                                           else {"iteration": i, "gate_pair": rec,
                                                 "max_pairs": c.gate_games // 2}))
        cur["elapsed"]["gate"] = round(cur["elapsed"].get("gate", 0.0)
                                       + time.perf_counter() - t, 2)

    def _step(self, i: int) -> None:
        """Advance iteration ``i`` through its remaining phases."""
        cur = self.state.get("current")
        if cur is None or cur.get("iteration") != i:
            cur = {"iteration": i, "phase": "selfplay", "elapsed": {}, "started": time.time()}
            self.state["current"] = cur
            self._save_state()
        if cur["phase"] == "selfplay":
            self._emit({"iteration": i, "phase": "selfplay", "games": self.cfg.games_per_iter})
            self._selfplay(i, cur)
            cur["phase"] = "train"
            self._save_state()
        if cur["phase"] == "train":
            self._emit({"iteration": i, "phase": "train"})
            trained = self._train(i, cur)
            cur["phase"] = "export" if trained else "log"
            self._save_state()
        if cur["phase"] == "export":
            t = time.perf_counter()
            self._export(self.dir / "candidates" / f"it{i:04d}", f"{self.dir.name}-it{i:04d}", i)
            cur["elapsed"]["export"] = round(time.perf_counter() - t, 2)
            cur["phase"] = "gate"
            self._save_state()
        if cur["phase"] == "gate":
            self._emit({"iteration": i, "phase": "gate"})
            self._gate(i, cur)
            cur["phase"] = "promote"
            self._save_state()
        if cur["phase"] == "promote":
            cur["promoted"] = cur["gate"]["decision"] == "accept"
            if cur["promoted"]:
                copy_model(self.dir / "candidates" / f"it{i:04d}", self.best)
                self.state["best_iteration"] = i
            cur["phase"] = "log"
            self._save_state()
        if cur["phase"] == "log":
            sp = cur.get("selfplay", {})
            rec = {"iteration": i, "games": sp.get("games"), "positions": sp.get("positions"),
                   "selfplay": sp, "window": cur.get("window"), "train": cur.get("train"),
                   "gate": cur.get("gate"), "promoted": bool(cur.get("promoted", False)),
                   "best_iteration": self.state["best_iteration"],
                   "train_step": self.state.get("train_step"), "elapsed": cur["elapsed"],
                   "elapsed_s": round(sum(cur["elapsed"].values()), 2), "time": round(time.time(), 1)}
            from ..fileio import read_jsonl
            if not any(r.get("iteration") == i for r in read_jsonl(self.log_path)):
                _append_line(self.log_path, rec)
            self._emit(rec)
            self.state["completed"] = i
            self.state["current"] = None
            self._save_state()

    def run(self, iterations: int, stop_after_phase: Optional[str] = None,
            max_seconds: Optional[float] = None) -> Dict[str, Any]:
        """Run until ``iterations`` iterations are complete (a total, not a count of new ones).

        ``max_seconds``: start no new iteration once this much wall time has passed in this call
        (the iteration in progress is finished; a rerun continues). ``stop_after_phase`` (tests):
        return once the current iteration has left that phase.
        """
        t0 = time.perf_counter()
        try:
            while int(self.state["completed"]) < iterations:
                i = int(self.state["completed"]) + 1
                if max_seconds is not None and time.perf_counter() - t0 >= max_seconds \
                        and self.state.get("current") is None:
                    self._emit({"note": f"time budget of {max_seconds:.0f} s spent; stopping "
                                        f"before iteration {i}"})
                    break
                if stop_after_phase is not None:
                    self._step_until(i, stop_after_phase)
                    return self.state
                self._step(i)
        finally:
            self.close()
        return self.state

    def _step_until(self, i: int, phase: str) -> None:
        order = ["selfplay", "train", "export", "gate", "promote", "log"]
        if phase not in order:
            raise ValueError(f"unknown phase {phase!r}")
        saved = self._save_state

        class _Stop(Exception):
            pass

        def hook() -> None:
            saved()
            cur = self.state.get("current")
            if cur is not None and order.index(cur["phase"]) > order.index(phase):
                raise _Stop()

        self._save_state = hook  # type: ignore[method-assign]  # wrapped for this one step only
        try:
            self._step(i)
        except _Stop:
            pass
        finally:
            self._save_state = saved  # type: ignore[method-assign]  # the bound method back


def run_loop(run_dir: Union[str, os.PathLike], iterations: int,
             config: Optional[Dict[str, Any]] = None,
             init_model: Union[None, str, os.PathLike] = None,
             log: Optional[Callable[[Dict[str, Any]], None]] = None,
             max_seconds: Optional[float] = None) -> Dict[str, Any]:
    """Create or continue the run in ``run_dir`` until ``iterations`` iterations are complete (or
    ``max_seconds`` of wall time have passed: no new iteration starts after that);
    ``config``: :class:`LoopConfig` fields (None values are ignored). Returns the state."""
    return Loop(run_dir, config, init_model, log).run(iterations, max_seconds=max_seconds)
