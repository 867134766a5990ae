"""The training loop: policy cross-entropy + value MSE, AdamW with weight decay, warm-up + cosine
learning rate, gradient clipping, 8-fold symmetry augmentation, atomic resumable checkpoints, a JSONL
log, and export to the engine's model files.

Checkpoints are dicts of tensors and plain values saved with ``torch.save`` and loaded with
``weights_only=True`` (never unpickling arbitrary objects).

Device: ``TrainConfig.device`` is ``"auto"`` (CUDA when ``torch.cuda.is_available()``, else the
CPU), ``"cpu"`` or ``"cuda"`` (``"cuda:1"`` ...). The model and every batch live on that device;
checkpoints are always written with CPU tensors and loaded with ``map_location="cpu"``, so a
checkpoint trained on a GPU resumes, exports and plays on a machine without one (and vice versa).
"""
from __future__ import annotations

import json
import math
import os
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import torch
import torch.nn.functional as F

from .. import checks
from ..net.weights import Arch, check_arch, fold_batchnorm
from .dataset import Positions, encode_positions, split_by_game  # noqa: F401 (re-exported)
from ..net.symmetries import HALF_TURN
from .model import PolicyValueNet, dihedral

CHECKPOINT_VERSION = 1
#: the values of :attr:`TrainConfig.precision`
PRECISIONS = ("fp32", "bf16")
#: what a run trains: the whole network, or its value head alone (the tower and the policy head frozen,
#: their batch-norm statistics included, so the policy's outputs cannot move)
TRAIN_PARTS = ("all", "value")

#: one training batch on the device: (input planes, policy targets, value targets z, value weights zw)
Batch = Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]


class CheckpointError(ValueError):
    """A checkpoint that cannot be used; the message names the file."""


@dataclass
class TrainConfig:
    """Hyper-parameters; steps and batch sizes are counts, learning rates per step."""

    steps: int = 20_000
    batch_size: int = 256
    lr: float = 2e-3
    lr_min: float = 5e-5
    warmup_steps: int = 300
    weight_decay: float = 1e-4
    grad_clip: float = 2.0
    value_weight: float = 1.0
    augment: bool = True
    val_fraction: float = 0.03
    val_every: int = 500
    log_every: int = 100
    checkpoint_every: int = 500
    seed: int = 1
    threads: int = 2
    arch: Dict[str, int] = field(default_factory=lambda: {"blocks": 6, "channels": 64,
                                                          "head_channels": 32, "value_fc": 64})
    device: str = "auto"             # auto | cpu | cuda | cuda:N
    #: when set, the warm-up + cosine schedule runs over this many seconds of training (or ``steps``,
    #: whichever ends first) and training stops there: a burst on a machine of unknown speed ends its
    #: schedule on time. Counted from the start of each :meth:`Trainer.fit` (a resume starts it again)
    schedule_seconds: Optional[float] = None
    #: mixed board sizes: the share of the batches (0..1) drawn from each named size, e.g.
    #: ``{"20x20": 0.3}`` (width x height); sizes not named share the rest in proportion to their
    #: training positions (all of them so when None). Every batch holds one size
    size_shares: Optional[Dict[str, float]] = None
    #: arithmetic of the forward pass: ``fp32``, or ``bf16`` (autocast to bfloat16 with the weights
    #: and the optimizer kept in float32, and the tower in channels-last layout): on a CPU with
    #: AVX512-BF16 about twice the positions/s of fp32 (``benchmarks/bench_train.py``)
    precision: str = "fp32"
    #: ``all``, or ``value``: only the value head learns (:data:`TRAIN_PARTS`); a fine-tune of the value
    #: head on teacher evaluations that leaves the policy exactly as it was
    train_only: str = "all"

    def __post_init__(self) -> None:
        checks.non_negative(self, "steps", "warmup_steps", "weight_decay", "value_weight", "val_every")
        checks.at_least(self, 1, "batch_size", "log_every", "checkpoint_every", "threads")
        checks.positive(self, "lr", "grad_clip")
        checks.non_negative(self, "lr_min")
        checks.fraction(self, "val_fraction")
        checks.device(self, "device")
        if self.schedule_seconds is not None and not self.schedule_seconds > 0:
            raise ValueError(f"schedule_seconds must be positive or None, not {self.schedule_seconds!r}")
        if self.size_shares is not None:
            bad = {k: v for k, v in self.size_shares.items()
                   if not re.fullmatch(r"[1-9][0-9]*x[1-9][0-9]*", k) or not 0.0 <= v <= 1.0}
            if bad or sum(self.size_shares.values()) > 1.0 + 1e-9:
                raise ValueError("size_shares must map WxH to shares in 0..1 summing to at most 1, "
                                 f"not {self.size_shares!r}")
        if self.train_only not in TRAIN_PARTS:
            raise ValueError(f"train_only must be one of {TRAIN_PARTS}, not {self.train_only!r}")
        if self.train_only == "value" and not self.value_weight > 0:
            raise ValueError("train_only='value' needs value_weight > 0")
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, not {self.precision!r}")
        check_arch(self, "arch")


def resolve_device(spec: str = "auto") -> torch.device:
    """``"auto"`` -> CUDA when available, else the CPU; ``"cpu"``; ``"cuda"``/``"cuda:N"`` (a
    ValueError when CUDA is not available)."""
    spec = (spec or "auto").strip().lower()
    if spec == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if spec == "cpu":
        return torch.device("cpu")
    if spec.startswith("cuda"):
        if not torch.cuda.is_available():
            raise ValueError(f"device {spec!r} requested but CUDA is not available "
                             "(torch.cuda.is_available() is False)")
        return torch.device(spec)
    raise ValueError(f"device must be auto, cpu or cuda[:N], not {spec!r}")


def _to_cpu(obj: Any) -> Any:
    """``obj`` with every tensor inside (dicts, lists, tuples) moved to the CPU, in the standard
    (contiguous) layout, whatever layout it trained in."""
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu().contiguous()
    if isinstance(obj, dict):
        return {k: _to_cpu(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_cpu(v) for v in obj)
    return obj


class DeviceData:
    """A :class:`Positions` set held as tensors on the training device, encoded there.

    On a GPU the numpy encoding of every batch (:func:`encode_positions`) and the host-to-device
    copies dominate a small network's step; this keeps the raw arrays (int8 cells, ...) on the
    device once and builds the input planes and policy targets with tensor operations, giving
    exactly what :func:`~gomoku_ai.net.encoding.encode_arrays` and
    :meth:`Positions.policy_targets` give (tested).
    """

    def __init__(self, pos: Positions, device: torch.device) -> None:
        self.device = device
        self.h, self.w = pos.shape
        self.cells = torch.from_numpy(np.ascontiguousarray(pos.cells)).to(device)
        self.stm = torch.from_numpy(np.ascontiguousarray(pos.stm)).to(device)
        self.last = torch.from_numpy(pos.last.astype(np.int64)).to(device)
        self.move = torch.from_numpy(pos.move.astype(np.int64)).to(device)
        self.z = torch.from_numpy(np.ascontiguousarray(pos.z)).to(device)
        self.zw = torch.from_numpy(np.ascontiguousarray(pos.zw)).to(device)
        self.pi = None if pos.pi is None else torch.from_numpy(pos.pi).to(device)

    def planes(self, idx: torch.Tensor) -> torch.Tensor:
        from ..net.encoding import NUM_PLANES
        from ..rules import BLACK, WALL
        cells = self.cells[idx]
        stm = self.stm[idx].view(-1, 1, 1)
        n = cells.shape[0]
        x = torch.zeros((n, NUM_PLANES, self.h, self.w), dtype=torch.float32, device=self.device)
        x[:, 0] = (cells == stm).float()
        x[:, 1] = (cells == (3 - stm)).float()     # rules.opponent of each, as a tensor
        x[:, 2] = (cells != WALL).float()
        x[:, 3] = (stm == BLACK).float().expand(n, self.h, self.w)
        last = self.last[idx]
        # scatter without a data-dependent shape (no host sync): a row with no last move writes 0.0
        # into its own square 0, which is 0 already
        x[:, 4].view(n, -1).scatter_(1, last.clamp(min=0).unsqueeze(1),
                                    (last >= 0).float().unsqueeze(1))
        return x

    def policy_targets(self, idx: torch.Tensor) -> torch.Tensor:
        n = idx.shape[0]
        out = torch.zeros((n, self.h * self.w), dtype=torch.float32, device=self.device)
        mv = self.move[idx]
        has = mv >= 0
        out.scatter_(1, mv.clamp(min=0).unsqueeze(1), has.float().unsqueeze(1))
        if self.pi is not None:
            rest = torch.nonzero(~has).squeeze(1)
            if rest.numel():
                p = self.pi[idx[rest]].float()
                out[rest] = p / p.sum(dim=1, keepdim=True).clamp(min=1e-9)
        return out

    def batch(self, idx: np.ndarray, k: int) -> Batch:
        t = torch.from_numpy(np.asarray(idx, np.int64)).to(self.device)
        x, pi = self.planes(t), self.policy_targets(t)
        if k:
            x = dihedral(x, k)
            pi = dihedral(pi.view(-1, self.h, self.w), k).reshape(len(idx), -1)
        return x.contiguous(), pi.contiguous(), self.z[t], self.zw[t]


def lr_at(step: int, cfg: TrainConfig, elapsed_s: Optional[float] = None) -> float:
    """Linear warm-up to ``lr`` then cosine decay to ``lr_min`` at ``steps``; with
    ``cfg.schedule_seconds`` and ``elapsed_s`` (seconds of training so far) the cosine goes by
    whichever is further on, the steps or the time."""
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    t = min(1.0, (step - cfg.warmup_steps) / max(1, cfg.steps - cfg.warmup_steps))
    if cfg.schedule_seconds is not None and elapsed_s is not None:
        t = max(t, min(1.0, elapsed_s / cfg.schedule_seconds))
    return cfg.lr_min + 0.5 * (cfg.lr - cfg.lr_min) * (1 + math.cos(math.pi * t))


def save_checkpoint(path: Path, model: PolicyValueNet, opt: torch.optim.Optimizer, step: int,
                    cfg: TrainConfig, metrics: Dict[str, Any]) -> None:
    """Atomic: write ``path.tmp`` then rename. Tensors are stored on the CPU."""
    state = {
        "version": CHECKPOINT_VERSION, "step": step, "config": asdict(cfg),
        "arch": asdict(model.arch), "model": _to_cpu(model.state_dict()),
        "optimizer": _to_cpu(opt.state_dict()), "metrics": metrics,
    }
    tmp = path.with_suffix(path.suffix + ".tmp")
    torch.save(state, tmp)
    os.replace(tmp, path)


def save_weights_only(src: Path, dst: Path) -> None:
    """Copy the checkpoint ``src`` to ``dst`` without its optimizer state (about a third of the size):
    enough to export it, or to start a run with ``init``; not to resume one. Atomic, like
    :func:`save_checkpoint`; a bad ``src`` is a :class:`CheckpointError` naming it."""
    state = load_checkpoint(src)
    state.pop("optimizer", None)
    tmp = dst.with_suffix(dst.suffix + ".tmp")
    torch.save(state, tmp)
    os.replace(tmp, dst)


def load_checkpoint(path: Path) -> Dict[str, Any]:
    """Load with ``weights_only=True``; raises CheckpointError naming the file."""
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many types for a corrupt file
        raise CheckpointError(f"{path}: cannot load checkpoint ({type(e).__name__}: {e})") from e
    if not isinstance(state, dict) or state.get("version") != CHECKPOINT_VERSION:
        raise CheckpointError(f"{path}: not a version-{CHECKPOINT_VERSION} training checkpoint")
    for key in ("model", "arch", "step", "config"):
        if key not in state:
            raise CheckpointError(f"{path}: checkpoint lacks '{key}'")
    return state


def model_from_checkpoint(path: Path) -> PolicyValueNet:
    state = load_checkpoint(path)
    model = PolicyValueNet(Arch(**state["arch"]))
    try:
        model.load_state_dict(state["model"])
    except RuntimeError as e:
        raise CheckpointError(f"{path}: weights do not match the architecture ({e})") from e
    return model


def export_checkpoint(path: Path, out_base: Path, name: str, notes: str = "",
                      extra: Optional[Dict[str, Any]] = None) -> Path:
    """Fold BatchNorm and write ``out_base``.{json,npz,onnx} for the engine."""
    from ..net import export_model
    model = model_from_checkpoint(path)
    model.eval()
    folded = fold_batchnorm(model.unfolded_weights())
    cfg = {"name": name, "notes": notes, "board_sizes": [[15, 15]]}
    if extra:
        cfg.update(extra)
    return export_model(folded, cfg, out_base)


@dataclass
class _Group:
    """The positions of one board size in a :meth:`Trainer.fit`: its train/validation split, its
    device copy and its share of the batches."""

    pos: Positions
    data: Optional[DeviceData]
    train_idx: np.ndarray
    val_idx: np.ndarray
    share: float = 1.0

    @property
    def name(self) -> str:
        return size_name(self.pos)


def size_name(pos: Positions) -> str:
    """The board size of ``pos`` as ``size_shares`` and the per-size metrics name it: ``WxH``."""
    h, w = pos.shape
    return f"{w}x{h}"


def group_by_size(pos: Union[Positions, Sequence[Positions]]) -> List[Positions]:
    """``pos`` as one :class:`Positions` per board size (parts of one size concatenated), in the
    order the sizes first appear."""
    parts = [pos] if isinstance(pos, Positions) else list(pos)
    if not parts:
        raise ValueError("no positions")
    shapes: Dict[Tuple[int, int], List[Positions]] = {}
    for p in parts:
        shapes.setdefault(p.shape, []).append(p)
    return [ps[0] if len(ps) == 1 else Positions.concat(ps) for ps in shapes.values()]


def parse_size_shares(specs: Sequence[str]) -> Optional[Dict[str, float]]:
    """Command-line ``["20x20=0.3", ...]`` as :attr:`TrainConfig.size_shares` ``{"20x20": 0.3}``
    (None when empty); ValueError naming a malformed one."""
    out: Dict[str, float] = {}
    for spec in specs:
        name, sep, val = spec.partition("=")
        try:
            if not sep:
                raise ValueError
            out[name.strip()] = float(val)
        except ValueError:
            raise ValueError(f"--size-share wants WxH=F, e.g. 20x20=0.3, not {spec!r}") from None
    return out or None


def check_size_shares(shares: Optional[Dict[str, float]], sets: Sequence[Positions]) -> None:
    """ValueError naming the sizes of ``shares`` that none of ``sets`` has (checked before training)."""
    missing = set(shares or {}) - {size_name(p) for p in sets}
    if missing:
        raise ValueError(f"--size-share names sizes not in --data: {sorted(missing)}")


def _shares(groups: Sequence[_Group], named: Optional[Dict[str, float]]) -> List[float]:
    """Each group's share of the batches: ``named`` ones as given, the rest of the unit in proportion
    to training positions. Raises ValueError for a named size with no training positions."""
    named = dict(named or {})
    unknown = set(named) - {g.name for g in groups if len(g.train_idx)}
    if unknown:
        raise ValueError(f"size_shares names sizes with no training positions: {sorted(unknown)}")
    rest = [g for g in groups if g.name not in named]
    left = max(0.0, 1.0 - sum(named.values()))
    n_rest = sum(len(g.train_idx) for g in rest)
    out = [named[g.name] if g.name in named
           else (left * len(g.train_idx) / n_rest if n_rest else 0.0) for g in groups]
    total = sum(out)
    if not total > 0:
        raise ValueError("no batches to draw: every board size has a zero share")
    return [v / total for v in out]


class Trainer:
    """Trains a :class:`PolicyValueNet` on a :class:`Positions` set; resumable from ``run_dir``."""

    def __init__(self, cfg: TrainConfig, run_dir: Path,
                 log: Optional[Callable[[Dict[str, Any]], None]] = None,
                 device_data: Optional[bool] = None, init: Optional[Path] = None) -> None:
        """``device_data``: hold the positions on the device and encode batches there
        (:class:`DeviceData`); None = on CUDA only. ``init``: a checkpoint whose weights start a
        new run (fine-tuning: fresh optimizer and schedule, step 0); ignored when ``run_dir``
        already has a checkpoint (that one is resumed). Its architecture must be ``cfg.arch``."""
        self.cfg = cfg
        self._device_data_opt = device_data
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.ckpt_path = self.run_dir / "checkpoint.pt"
        self.best_path = self.run_dir / "best.pt"
        self.log_path = self.run_dir / "log.jsonl"
        self._log_cb = log
        torch.set_num_threads(cfg.threads)
        torch.manual_seed(cfg.seed)
        self.device = resolve_device(cfg.device)
        self.model = PolicyValueNet(Arch(**cfg.arch)).to(self.device)
        self._bf16 = cfg.precision == "bf16"
        if self._bf16:
            # in place; torch's stubs lack Module.to's memory_format keyword
            self.model.to(memory_format=torch.channels_last)  # type: ignore[call-overload]
        self._frozen = self.model.freeze_all_but_value_head() if cfg.train_only == "value" else []
        self.opt = torch.optim.AdamW([p for p in self.model.parameters() if p.requires_grad], lr=cfg.lr,
                                     weight_decay=cfg.weight_decay)
        self.step = 0
        if self.ckpt_path.exists():
            state = load_checkpoint(self.ckpt_path)
            if state["arch"] != asdict(self.model.arch):
                raise CheckpointError(f"{self.ckpt_path}: architecture {state['arch']} differs "
                                      f"from the requested {asdict(self.model.arch)}; use a new "
                                      "run folder")
            self.model.load_state_dict(state["model"])      # copies onto self.device
            try:
                self.opt.load_state_dict(state["optimizer"])    # moves its state to the params' device
            except ValueError as e:   # its parameter groups: a run of another train_only
                raise CheckpointError(f"{self.ckpt_path}: its optimizer does not fit train_only="
                                      f"{cfg.train_only!r} ({e}); use a new run folder") from None
            self.step = int(state["step"])
        elif init is not None:
            state = load_checkpoint(Path(init))
            if state["arch"] != asdict(self.model.arch):
                raise CheckpointError(f"{init}: architecture {state['arch']} differs from the "
                                      f"requested {asdict(self.model.arch)}")
            self.model.load_state_dict(state["model"])
            self._log({"event": "init", "from": str(init), "from_step": int(state["step"])})

    def _log(self, rec: Dict[str, Any]) -> None:
        rec = {"time": round(time.time(), 1), **rec}
        with open(self.log_path, "a", encoding="utf-8") as f:
            f.write(json.dumps(rec) + "\n")
        if self._log_cb is not None:
            self._log_cb(rec)

    def _batch(self, pos: Positions, idx: np.ndarray, k: int,
               data: Optional[DeviceData] = None) -> Batch:
        """(planes, policy targets, z, zw) of positions ``idx`` under symmetry ``k``, on the
        training device (the symmetry is applied there); from ``data`` (``pos`` held on the
        device) when given."""
        if data is not None:
            x, pi, z, zw = data.batch(idx, k)
            return self._layout(x), pi, z, zw
        d = self.device
        x = torch.from_numpy(encode_positions(pos, idx)).to(d)
        pi = torch.from_numpy(pos.policy_targets(idx)).to(d)
        h, w = pos.shape
        if k:
            x = dihedral(x, k)
            pi = dihedral(pi.view(-1, h, w), k).reshape(len(idx), -1)
        z = torch.from_numpy(pos.z[idx]).to(d)
        zw = torch.from_numpy(pos.zw[idx]).to(d)
        return self._layout(x), pi.contiguous(), z, zw

    def _layout(self, x: torch.Tensor) -> torch.Tensor:
        """Input planes in the tower's memory layout: channels-last under bf16, else contiguous."""
        return x.contiguous(memory_format=torch.channels_last) if self._bf16 else x.contiguous()

    def _losses(self, x: torch.Tensor, pi: torch.Tensor, z: torch.Tensor, zw: torch.Tensor
                ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(policy cross-entropy, weighted value MSE, top-1 accuracy) of one batch, as 0-d tensors."""
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self._bf16):
            logits, v = self.model(x)
        logits, v = logits.float(), v.float()     # the losses in float32 under any precision
        logp = F.log_softmax(logits, dim=1)
        lp = -(pi * logp).sum(dim=1).mean()
        lv = (zw * (v - z) ** 2).sum() / zw.sum().clamp(min=1.0)
        acc = (logits.argmax(dim=1) == pi.argmax(dim=1)).float().mean()
        return lp, lv, acc

    def _train_mode(self) -> None:
        """Training mode for what learns; the frozen modules (``cfg.train_only``) stay in eval mode, so that
        their batch norms keep their statistics."""
        self.model.train()
        for m in self._frozen:
            m.eval()

    def evaluate(self, pos: Positions, idx: np.ndarray, batch: int = 1024,
                 data: Optional[DeviceData] = None) -> Dict[str, float]:
        """Mean policy loss, value loss and top-1 of positions ``idx`` (no augmentation)."""
        self.model.eval()
        tot = {"val_policy_loss": 0.0, "val_value_loss": 0.0, "val_top1": 0.0}
        n = 0
        with torch.no_grad():
            for s in range(0, len(idx), batch):
                b = idx[s:s + batch]
                lp, lv, acc = self._losses(*self._batch(pos, b, 0, data))
                tot["val_policy_loss"] += float(lp) * len(b)
                tot["val_value_loss"] += float(lv) * len(b)
                tot["val_top1"] += float(acc) * len(b)
                n += len(b)
        self._train_mode()
        return {k: round(v / max(n, 1), 4) for k, v in tot.items()}

    def _score(self, metrics: Dict[str, Any]) -> float:
        """A validation pass's score (lower is better): policy loss + ``value_weight`` x value loss."""
        return float(metrics["val_policy_loss"]) + self.cfg.value_weight * float(metrics["val_value_loss"])

    def _keep_if_best(self, metrics: Dict[str, Any], best: float) -> float:
        """Write ``best.pt`` (and mark ``metrics["best"]``) when this validation pass beats ``best``;
        the best score after it."""
        score = self._score(metrics)
        if score >= best:
            return best
        save_checkpoint(self.best_path, self.model, self.opt, self.step, self.cfg, metrics)
        metrics["best"] = True
        return score

    def _best_score(self) -> float:
        """The validation score of this run's ``best.pt`` (a resumed run must beat it), else infinity."""
        if not self.best_path.exists() or self.step == 0:
            return math.inf
        m = load_checkpoint(self.best_path).get("metrics") or {}
        if "val_policy_loss" not in m or "val_value_loss" not in m:
            return math.inf
        return self._score(m)

    def _validate(self, groups: Sequence[_Group]) -> Dict[str, float]:
        """Validation metrics over the groups' held-out games: one size's as they are; several
        sizes' averaged by their batch shares (the objective trained), with each size's own under
        ``val_<metric>_<W>x<H>``. Empty when no group holds validation games."""
        parts = [(g, self.evaluate(g.pos, g.val_idx, data=g.data)) for g in groups if len(g.val_idx)]
        if not parts:
            return {}
        if len(groups) == 1:
            return parts[0][1]
        wsum = sum(g.share for g, _ in parts) or 1.0
        out = {k: round(sum(g.share * m[k] for g, m in parts) / wsum, 4) for k in parts[0][1]}
        for g, m in parts:
            out.update({f"{k}_{g.name}": v for k, v in m.items()})
        return out

    def _groups(self, pos: Union[Positions, Sequence[Positions]]) -> List[_Group]:
        """``pos`` as one :class:`_Group` per board size: split by game, held on the device when
        the trainer is (``device_data``), with its share of the batches (``cfg.size_shares``)."""
        use_dev = self._device_data_opt
        if use_dev is None:
            use_dev = self.device.type == "cuda"
        groups: List[_Group] = []
        for p in group_by_size(pos):
            train_idx, val_idx = split_by_game(p, self.cfg.val_fraction, self.cfg.seed)
            groups.append(_Group(p, DeviceData(p, self.device) if use_dev else None,
                                 train_idx, val_idx))
        for g, share in zip(groups, _shares(groups, self.cfg.size_shares)):
            g.share = share
        return groups

    def _log_start(self, groups: Sequence[_Group]) -> None:
        """At step 0 with ``cfg.val_every``: log the validation of the start (``"start"``; a fine-tune's
        first figures are its network's before it), not kept as best.pt."""
        if self.step == 0 and self.cfg.val_every:
            start = self._validate(groups)
            if start:
                self._log({"step": 0, "start": True, **start})

    def fit(self, pos: Union[Positions, Sequence[Positions]],
            stop_after_s: Optional[float] = None) -> Dict[str, Any]:
        """Train until ``cfg.steps`` (or ``stop_after_s`` seconds, or ``cfg.schedule_seconds``);
        checkpoints along the way. Each validation pass that beats the best so far (policy loss +
        ``value_weight`` x value loss, on the held-out games) also writes ``best.pt`` beside the
        checkpoint: a long run on little data keeps the network from before its value head overfits.
        A run from step 0 with ``cfg.val_every`` logs the validation of its start first (``"start"``).

        ``pos`` may be several sets of different board sizes (the network is fully convolutional):
        each batch is drawn from one size, chosen by ``cfg.size_shares``."""
        cfg = self.cfg
        groups = self._groups(pos)
        shares = np.array([g.share for g in groups])
        rng = np.random.default_rng(cfg.seed + self.step)
        self._log_start(groups)
        self._train_mode()
        t0 = time.perf_counter()
        t_log = t0
        seen = 0
        acc = torch.zeros(3, device=self.device)   # policy loss, value loss, top1 (summed)
        nacc = 0
        metrics: Dict[str, Any] = {}
        best = self._best_score()
        if cfg.schedule_seconds is not None:
            stop_after_s = (cfg.schedule_seconds if stop_after_s is None
                            else min(stop_after_s, cfg.schedule_seconds))
        while self.step < cfg.steps:
            lr = lr_at(self.step, cfg, time.perf_counter() - t0)
            for pg in self.opt.param_groups:
                pg["lr"] = lr
            # one size: no draw for it, so a single-size run's batches are what they always were
            g = groups[int(rng.choice(len(groups), p=shares))] if len(groups) > 1 else groups[0]
            h, w = g.pos.shape
            syms = 8 if (cfg.augment and h == w) else (2 if cfg.augment else 1)
            idx = rng.choice(g.train_idx, size=min(cfg.batch_size, len(g.train_idx)), replace=False)
            if syms == 8:
                k = int(rng.integers(8))
            elif syms == 2:
                k = HALF_TURN * int(rng.integers(2))   # identity or a half turn: keeps W x H
            else:
                k = 0
            lp, lv, top1 = self._losses(*self._batch(g.pos, idx, k, g.data))
            loss = lp + cfg.value_weight * lv
            self.opt.zero_grad(set_to_none=True)
            loss.backward()
            gn = torch.nn.utils.clip_grad_norm_(self.model.parameters(), cfg.grad_clip)
            self.opt.step()
            self.step += 1
            seen += len(idx)
            acc += torch.stack([lp.detach(), lv.detach(), top1.detach()])
            nacc += 1
            if self.step % cfg.log_every == 0:
                a_lp, a_lv, a_acc = (float(v) for v in acc.cpu())
                now = time.perf_counter()
                metrics = {"step": self.step, "lr": round(lr, 6),
                           "policy_loss": round(a_lp / nacc, 4),
                           "value_loss": round(a_lv / nacc, 4), "top1": round(a_acc / nacc, 4),
                           "grad_norm": round(float(gn), 3),
                           "positions_per_s": round(seen / (now - t_log), 1)}
                acc.zero_()
                nacc = seen = 0
                t_log = now
                if cfg.val_every and self.step % cfg.val_every == 0:
                    val = self._validate(groups)
                    if val:
                        metrics.update(val)
                        best = self._keep_if_best(metrics, best)
                self._log(metrics)
            if self.step % cfg.checkpoint_every == 0 or self.step == cfg.steps:
                save_checkpoint(self.ckpt_path, self.model, self.opt, self.step, cfg, metrics)
            if stop_after_s is not None and time.perf_counter() - t0 > stop_after_s:
                break
        save_checkpoint(self.ckpt_path, self.model, self.opt, self.step, cfg, metrics)
        final: Dict[str, Any] = {"step": self.step}
        val = self._validate(groups)
        if val:
            final.update(val)
            self._keep_if_best(final, best)
        self._log({"final": True, **final})
        return final
