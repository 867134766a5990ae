"""The int8 graph of a model: post-training static quantisation with onnxruntime.

:func:`quantize_model` reads a model's ``.onnx`` graph, calibrates the activation ranges on real
positions (MinMax, per-channel int8 weights, uint8 activations, QDQ format), writes
``<base>.int8.onnx`` (the residual tower in int8; the stem and the heads stay float) and records it in ``<base>.json``: ``sha256["onnx_int8"]`` and an ``int8``
block with how it was made and how closely it follows the float graph on held-out positions
(``policy_top1_agreement``: share of positions where both graphs' most likely move is the same;
``value_mae``: mean absolute difference of the values, side to move's view, in [-1, 1] units).

Quantising is an export-time step: it needs the ``onnx`` package (``onnxruntime.quantization``
builds the graph with it; the train and dev extras have it). Playing the int8 graph needs only
onnxruntime (:func:`gomoku_ai.net.load_model` with ``backend="onnx-int8"``, or ``"auto"``, which
prefers it), never onnx or torch. On this machine kind (AVX-512 VNNI) the 4x32 network runs 2.8x
as many positions per second at batch 4, the player 1.7x as many visits (``benchmarks/bench_int8.py``).
"""
from __future__ import annotations

import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union

import numpy as np

from ..fileio import atomic_write_bytes
from .encoding import NUM_PLANES
from .onnx_backend import OnnxBackend
from .model import INT8_SUFFIX, ModelError, _file, _read_verified, read_config, sha256_bytes

PathLike = Union[str, "os.PathLike[str]"]
#: encoded positions (N, P, H, W float32), or several such arrays of different board sizes
Planes = Union[np.ndarray, Sequence[np.ndarray]]

CALIBRATION_BATCH = 16
TOWER_PREFIX = "block"    # node names of the residual blocks in the exported graph (net.export)


class QuantizeError(ModelError):
    """The int8 graph could not be made, or it follows the float graph too loosely."""


class _DropPreprocessAdvice(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "pre-processing" not in record.getMessage()


def agreement(float_graph: bytes, int8_graph: bytes, planes: np.ndarray) -> Dict[str, float]:
    """How closely ``int8_graph`` follows ``float_graph`` on ``planes`` (N, P, H, W float32):
    ``policy_top1_agreement`` (share of equal best moves among the empty squares) and ``value_mae``
    ([-1, 1] units)."""
    x = np.ascontiguousarray(planes, np.float32)
    pa, va = OnnxBackend(float_graph).forward(x)      # the engine's sessions (one thread)
    pb, vb = OnnxBackend(int8_graph).forward(x)
    occupied = (x[:, 0] + x[:, 1]).reshape(len(x), -1) > 0    # own and opponent planes: never a move
    pa, pb = np.where(occupied, -np.inf, pa), np.where(occupied, -np.inf, pb)
    return {"policy_top1_agreement": round(float(np.mean(pa.argmax(1) == pb.argmax(1))), 4),
            "value_mae": round(float(np.mean(np.abs(va - vb))), 4)}


def _arrays(x: Planes, name: str, planes: int) -> List[np.ndarray]:
    """``x`` as a list of float32 (N > 0, ``planes``, H, W) arrays of distinct board sizes; a
    :class:`QuantizeError` naming ``name`` otherwise."""
    arrs = [x] if isinstance(x, np.ndarray) else list(x)
    if not arrs:
        raise QuantizeError(f"no {name} positions")
    for a in arrs:
        if a.ndim != 4 or a.shape[1] != planes or len(a) == 0:
            raise QuantizeError(f"{name} positions must be (N > 0, {planes}, H, W), not {a.shape}")
    if len({a.shape[2:] for a in arrs}) != len(arrs):
        raise QuantizeError(f"{name} positions: two arrays of the same board size; concatenate them")
    return [np.ascontiguousarray(a, np.float32) for a in arrs]


def _fit(float_graph: bytes, int8_graph: bytes, checks: List[np.ndarray]) -> Dict[str, Any]:
    """:func:`agreement` over ``checks`` (one array per board size): ``check_positions`` and the
    figures weighted by positions, with each size's own under ``by_size`` when there are several."""
    fits = {f"{a.shape[3]}x{a.shape[2]}": (len(a), agreement(float_graph, int8_graph, a)) for a in checks}
    n = sum(k for k, _ in fits.values())
    out: Dict[str, Any] = {"check_positions": n}
    out.update({key: round(sum(k * f[key] for k, f in fits.values()) / n, 4)
                for key in ("policy_top1_agreement", "value_mae")})
    if len(fits) > 1:
        out["by_size"] = {size: {"check_positions": k, **f} for size, (k, f) in fits.items()}
    return out


def quantize_model(path: PathLike, calibration: Planes, check: Planes,
                   min_agreement: float = 0.9, source: str = "") -> Dict[str, Any]:
    """Write the int8 graph of the model at ``path`` (folder, basename or one of its files) and
    record it in its json; return the json's ``int8`` block.

    ``calibration``: encoded positions (N, P, H, W float32) whose activations set the int8 ranges;
    ``check``: other positions on which the int8 graph is compared with the float one. Either may be
    a list of such arrays, one per board size (a network that plays several): the ranges are then
    set over all of them, and the block gives the fit of each size under ``by_size`` ("15x15": ...)
    with the overall figures weighted by positions. Below ``min_agreement`` of equal best moves (on
    any one size) nothing is written (:class:`QuantizeError`). ``source``
    names the positions in the json (e.g. the shard file). Files are written atomically: the graph
    first, then the json that records its sha256 (a model quantised before first loses its old record,
    so that a reader never sees a json naming the wrong graph: it plays the float one meanwhile).
    """
    try:
        from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat,
                                              QuantType, quantize_static)
    except ImportError as e:   # onnxruntime.quantization imports onnx
        raise QuantizeError(f"quantising needs the 'onnx' package (the train or dev extra): {e}") from None
    base, cfg = read_config(path)
    jpath, opath = _file(base, ".json"), _file(base, ".onnx")
    if not cfg["sha256"].get("onnx") or not opath.is_file():
        raise QuantizeError(f"{jpath}: no .onnx graph to quantise (export the model with onnx first)")
    planes = int(cfg.get("planes") or NUM_PLANES)
    cals, checks = _arrays(calibration, "calibration", planes), _arrays(check, "check", planes)
    batches = [a[i:i + CALIBRATION_BATCH] for a in cals for i in range(0, len(a), CALIBRATION_BATCH)]

    class _Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.i = 0

        def get_next(self) -> Optional[Dict[str, np.ndarray]]:
            if self.i >= len(batches):
                return None
            self.i += 1
            return {"input": batches[self.i - 1]}

    float_graph = _read_verified(opath, cfg["sha256"]["onnx"], jpath)   # refuses a corrupt graph
    import onnx
    # the residual tower's convolutions in int8; the stem and the heads (cheap, and where the policy
    # logits and the value are made) stay float: 97.5 % equal best moves instead of 95.2 % at the same speed
    keep_float = [n.name for n in onnx.load_from_string(float_graph).graph.node
                  if n.op_type in ("Conv", "Gemm") and not n.name.startswith(TOWER_PREFIX)]
    with tempfile.TemporaryDirectory(prefix="gomoku-int8-") as tmp:
        src, out = Path(tmp) / "model.onnx", Path(tmp) / "model.int8.onnx"
        src.write_bytes(float_graph)
        quiet = _DropPreprocessAdvice()
        logging.getLogger().addFilter(quiet)   # onnxruntime advises shape pre-processing on the root
        try:                                   # logger; these graphs have static ranks and need none
            quantize_static(str(src), str(out), _Reader(), quant_format=QuantFormat.QDQ,
                            per_channel=True, activation_type=QuantType.QUInt8,
                            weight_type=QuantType.QInt8, calibrate_method=CalibrationMethod.MinMax,
                            nodes_to_exclude=keep_float)
        except Exception as e:   # onnxruntime's and onnx's own exception types
            raise QuantizeError(f"{opath}: quantisation failed ({e})") from None
        finally:
            logging.getLogger().removeFilter(quiet)
        data = out.read_bytes()
    fit = _fit(float_graph, data, checks)
    worst = min(f["policy_top1_agreement"] for f in fit.get("by_size", {"": fit}).values())
    if worst < min_agreement:
        raise QuantizeError(f"{opath}: the int8 graph agrees with the float one on only "
                            f"{worst:.1%} of best moves (< {min_agreement:.0%}); nothing written")
    block: Dict[str, Any] = {"method": "onnxruntime static QDQ, MinMax, per-channel int8 weights, "
                                       "uint8 activations; the residual blocks' convolutions only",
                             "float_nodes": keep_float,
                             "calibration_positions": sum(len(a) for a in cals), **fit}
    if source:
        block["positions_from"] = source
    ipath = _file(base, INT8_SUFFIX)
    if cfg["sha256"].pop("onnx_int8", None) is not None:   # a quantised model again: forget the old graph
        cfg.pop("int8", None)                              # first, so that no moment pairs a json with
        atomic_write_bytes(jpath, (json.dumps(cfg, indent=2) + "\n").encode("utf-8"))   # the wrong graph
    atomic_write_bytes(ipath, data)
    cfg["sha256"]["onnx_int8"] = sha256_bytes(data)
    cfg["int8"] = block
    atomic_write_bytes(jpath, (json.dumps(cfg, indent=2) + "\n").encode("utf-8"))
    return block
