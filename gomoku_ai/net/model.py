"""Model files, loading and export.

A model is three or four files sharing a basename (``models/gm-6x64`` -> ``gm-6x64.json``, ``.npz``,
``.onnx``, and ``.int8.onnx`` once quantised); a model may also be named by its folder
(``models/gm-6x64/`` holding ``gm-6x64.json`` or a single ``*.json``), or by any of its file names.

``<name>.json`` (format_version 1)::

    {
      "format_version": 1,
      "name": "gm-6x64",            # free text
      "version": "1",               # free text (training generation, date, ...)
      "board_sizes": [[15, 15], [20, 20]],   # [width, height] pairs it was trained on
      "encoding_version": 1,
      "input_planes": ["own", "opponent", "on_board", "black_to_move", "last_move"],
      "blocks": 6, "channels": 64, "head_channels": 32, "value_fc": 64, "planes": 5,
      "sha256": {"npz": "<hex>", "onnx": "<hex>"},   # "onnx" absent when no graph was written;
                                    # "onnx_int8" (with an "int8" block) once quantised
      "notes": "...",
      ...                           # any further keys given to export_model are kept
    }

``<name>.npz``: the *folded* weights (BatchNorm already in the convs), float32, key names as
documented in :mod:`gomoku_ai.net.weights` (``stem.w``, ``stem.b``, ``block0.conv1.w``, ...).

``<name>.onnx``: the same network as an ONNX graph (see :mod:`gomoku_ai.net.export`).

``<name>.int8.onnx`` (optional): its int8 graph (:mod:`gomoku_ai.net.quantize`), preferred by the
``auto`` backend. Exporting again writes a json without it, so a stale int8 graph is never used.

Loading reads each file once, checks its sha256 against the json and refuses a mismatch, an
unreadable file or wrong shapes with a :class:`ModelError` that names the file.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import io
import json
import os
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Protocol, Sequence, Tuple, Union

import numpy as np

from .encoding import ENCODING_VERSION, NUM_PLANES, PLANE_NAMES, encode, encode_batch
from .numpy_backend import NumpyBackend
from .onnx_backend import OnnxBackend, onnxruntime_available
from ..checks import StrKind
from ..fileio import atomic_write_bytes
from .weights import Arch, ModelError, Weights, check_weights, infer_arch

if TYPE_CHECKING:
    from ..board import Board

FORMAT_VERSION = 1
INT8_SUFFIX = ".int8.onnx"    # the int8 graph (gomoku_ai.net.quantize)
_SUFFIXES = (".json", ".npz", INT8_SUFFIX, ".onnx")   # the int8 graph before .onnx
PathLike = Union[str, os.PathLike]


# ---------------------------------------------------------------------------------------- paths
def model_basename(path: PathLike) -> Path:
    """The basename (no suffix) of the model named by ``path``: a basename, one of its files, or a
    folder holding ``<folder name>.json`` or exactly one ``.json``."""
    p = Path(path)
    if p.is_dir():
        own = p / (p.name + ".json")
        if own.is_file():
            return p / p.name
        found = sorted(p.glob("*.json"))
        if len(found) == 1:
            return _strip(found[0])
        raise ModelError(f"{p}: a model folder must hold {p.name}.json or exactly one .json file "
                         f"(found {len(found)})")
    return _strip(p)


def _strip(p: Path) -> Path:
    for s in _SUFFIXES:
        if p.name.endswith(s):
            return p.with_name(p.name[: -len(s)])
    return p


def _file(base: Path, suffix: str) -> Path:
    return base.with_name(base.name + suffix)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --------------------------------------------------------------------------------------- config
def read_config(path: PathLike) -> Tuple[Path, Dict[str, Any]]:
    """(basename, config dict) of the model named by ``path``, validated."""
    base = model_basename(path)
    jpath = _file(base, ".json")
    try:
        cfg = json.loads(jpath.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ModelError(f"{jpath}: model config not found") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ModelError(f"{jpath}: cannot read the model config ({e})") from None
    if not isinstance(cfg, dict):
        raise ModelError(f"{jpath}: the model config is not a JSON object")
    fv = cfg.get("format_version")
    if fv != FORMAT_VERSION:
        raise ModelError(f"{jpath}: format_version {fv!r} is not supported (expected "
                         f"{FORMAT_VERSION})")
    for k in ("blocks", "channels", "head_channels", "value_fc"):
        if not isinstance(cfg.get(k), int) or cfg[k] < 0:
            raise ModelError(f"{jpath}: missing or invalid {k!r}")
    planes = cfg.get("input_planes")
    if cfg.get("encoding_version") != ENCODING_VERSION or list(planes or []) != list(PLANE_NAMES):
        raise ModelError(f"{jpath}: the model expects input encoding version "
                         f"{cfg.get('encoding_version')!r} with planes {planes}; this program "
                         f"encodes version {ENCODING_VERSION} {list(PLANE_NAMES)}")
    if not isinstance(cfg.get("sha256"), dict) or not cfg["sha256"].get("npz"):
        raise ModelError(f"{jpath}: no sha256 recorded for the weights")
    return base, cfg


def arch_from_config(cfg: Mapping[str, Any]) -> Arch:
    return Arch(blocks=cfg["blocks"], channels=cfg["channels"],
                head_channels=cfg["head_channels"], value_fc=cfg["value_fc"],
                planes=cfg.get("planes", NUM_PLANES))


def _read_verified(path: Path, expected: str, jpath: Path) -> bytes:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ModelError(f"{path}: file not found (listed in {jpath.name})") from None
    except OSError as e:
        raise ModelError(f"{path}: cannot read ({e})") from None
    got = sha256_bytes(data)
    if got != expected:
        raise ModelError(f"{path}: sha256 {got[:16]}... does not match {expected[:16]}... "
                         f"recorded in {jpath.name}; the file is corrupt or belongs to another "
                         f"model")
    return data


def load_weights(path: PathLike) -> Tuple[Weights, Dict[str, Any]]:
    """The folded weights (verified) and the config of a model."""
    base, cfg = read_config(path)
    jpath, npath = _file(base, ".json"), _file(base, ".npz")
    data = _read_verified(npath, cfg["sha256"]["npz"], jpath)
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            weights = {k: np.asarray(z[k], dtype=np.float32) for k in z.files}
    except (ValueError, OSError, zipfile.BadZipFile, KeyError, EOFError) as e:
        raise ModelError(f"{npath}: not a readable .npz weight file ({e})") from None
    check_weights(weights, arch_from_config(cfg), folded=True, source=str(npath))
    return weights, cfg


# -------------------------------------------------------------------------------------- network
class NetBackend(StrKind):
    """What runs a network (``load_model``'s ``backend``, ``Network.backend``): onnxruntime on the
    float graph (``onnx``) or on the int8 graph (``onnx-int8``, :mod:`gomoku_ai.net.quantize`),
    numpy, or ``auto`` (the int8 graph when it can, else the float graph, else numpy)."""

    AUTO = "auto"
    ONNX = "onnx"
    ONNX_INT8 = "onnx-int8"
    NUMPY = "numpy"


class InferenceBackend(Protocol):
    """What runs a network's forward pass (:class:`~gomoku_ai.net.numpy_backend.NumpyBackend`,
    :class:`~gomoku_ai.net.onnx_backend.OnnxBackend`): ``name`` (``"numpy"``, ``"onnx"``, ``"onnx-int8"``) and
    ``forward`` from (N, P, H, W) float32 planes to (policy logits (N, H*W), values (N,))."""

    name: str

    def forward(self, x: np.ndarray) -> Tuple[np.ndarray, np.ndarray]: ...


class Network:
    """A loaded model: ``forward`` on encoded planes, ``evaluate`` on boards.

    Safe to call from several threads (onnxruntime sessions are thread-safe; the numpy backend
    serializes calls with a lock), but calls on one numpy network do not run in parallel.
    """

    def __init__(self, impl: InferenceBackend, config: Dict[str, Any], basename: Optional[Path] = None) -> None:
        self.impl = impl
        self.config = config
        self.basename = basename
        self.arch = arch_from_config(config)
        self.backend = NetBackend(impl.name)
        self.name: str = str(config.get("name", basename.name if basename else "?"))

    def __repr__(self) -> str:
        return (f"Network({self.name!r}, {self.arch.blocks}x{self.arch.channels}, "
                f"backend={self.backend})")

    def forward(self, x: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """(N, P, H, W) float32 planes -> (policy logits (N, H*W) row-major, value (N,) in [-1, 1]
        for the side to move)."""
        x = np.asarray(x)
        if x.ndim != 4 or x.shape[1] != self.arch.planes:
            raise ValueError(f"forward expects (N, {self.arch.planes}, H, W), got {x.shape}")
        if x.dtype != np.float32:
            x = x.astype(np.float32)
        return self.impl.forward(x)

    def evaluate(self, boards: Sequence[Board], masks: Optional[Sequence[Optional[np.ndarray]]] = None,
                 sparse: bool = False) -> Tuple[List, np.ndarray]:
        """Evaluate boards (of any sizes; each size is one batch).

        Returns ``(priors, values)``: ``values`` is a float32 (N,) array for the side to move;
        ``priors[i]`` is a float32 (H*W,) array, the softmax of the logits over the legal squares
        (``masks[i]``, a boolean (H*W,) array, or the board's empty squares), zero elsewhere; with
        ``sparse=True`` it is a pair ``(moves, probs)`` of the legal flat indices and their
        probabilities. A board without a legal square gets all-zero (or empty) priors.
        """
        boards = list(boards)
        n = len(boards)
        values = np.empty(n, dtype=np.float32)
        priors: List = [None] * n
        groups: Dict[Tuple[int, int], List[int]] = {}
        for i, b in enumerate(boards):
            groups.setdefault(b.cells.shape, []).append(i)
        for (h, w), idx in groups.items():
            logits, v = self.forward(encode_batch([boards[i] for i in idx]))
            values[idx] = v
            legal = np.stack([
                (np.asarray(masks[i], dtype=bool).reshape(-1)
                 if masks is not None and masks[i] is not None else boards[i].legal_mask())
                for i in idx])
            if legal.shape[1] != h * w:
                raise ValueError(f"a legal-move mask has {legal.shape[1]} squares, the board "
                                 f"{h * w}")
            probs = masked_softmax(logits, legal)
            for j, i in enumerate(idx):
                if sparse:
                    moves = np.flatnonzero(legal[j])
                    priors[i] = (moves, probs[j, moves])
                else:
                    priors[i] = probs[j]
        return priors, values

    def evaluate_one(self, board: Board, mask: Optional[np.ndarray] = None) -> Tuple[np.ndarray, float]:
        """(priors (H*W,), value) of one board (see :meth:`evaluate`)."""
        x = encode(board)[None]
        logits, v = self.forward(x)
        legal = board.legal_mask() if mask is None else np.asarray(mask, bool).reshape(1, -1)
        return masked_softmax(logits, legal.reshape(1, -1))[0], float(v[0])


def masked_softmax(logits: np.ndarray, legal: np.ndarray, dtype: Any = np.float32) -> np.ndarray:
    """Row-wise softmax of ``logits`` (N, H*W) over the squares where ``legal`` (N, H*W, bool) is set, in
    ``dtype``; illegal squares get 0, and a row with no legal square is all zeros."""
    z = np.where(legal, logits, -np.inf).astype(dtype, copy=False)
    top = z.max(axis=1, keepdims=True)
    top[~np.isfinite(top)] = 0.0
    e = np.exp(z - top)
    s = e.sum(axis=1, keepdims=True)
    s[s == 0] = 1.0
    return (e / s).astype(dtype, copy=False)


def load_model(path: PathLike, backend: str = NetBackend.AUTO, threads: int = 1) -> Network:
    """Load a model (folder, basename or one of its files).

    ``backend``: ``"onnx"`` (onnxruntime on the ``.onnx`` graph, ``threads`` intra-op threads),
    ``"onnx-int8"`` (onnxruntime on the ``.int8.onnx`` graph), ``"numpy"`` (BLAS threading as
    configured for the process), or ``"auto"``: the first of onnx-int8, onnx and numpy whose graph
    is recorded in the json and present and whose runtime imports. A recorded graph whose bytes
    do not match its sha256 is refused (:class:`ModelError` naming the file), also under auto.
    """
    if backend not in tuple(NetBackend):
        raise ValueError(f"backend must be one of {', '.join(NetBackend)}, not {backend!r}")
    base, cfg = read_config(path)
    jpath = _file(base, ".json")
    graphs = {NetBackend.ONNX_INT8: ("onnx_int8", _file(base, INT8_SUFFIX)),
              NetBackend.ONNX: ("onnx", _file(base, ".onnx"))}
    if backend == NetBackend.AUTO:
        backend = NetBackend.NUMPY
        if onnxruntime_available():
            for kind, (key, gpath) in graphs.items():
                if cfg["sha256"].get(key) and gpath.is_file():
                    backend = kind
                    break
    if backend in graphs:
        key, gpath = graphs[NetBackend(backend)]
        sha = cfg["sha256"].get(key)
        if not sha:
            raise ModelError(f"{jpath}: no {gpath.name[len(base.name):]} graph is recorded for this model")
        if not onnxruntime_available():
            raise ModelError(f"the {backend} backend needs onnxruntime, which cannot be imported")
        data = _read_verified(gpath, sha, jpath)
        try:
            impl = OnnxBackend(data, threads=threads, source=str(gpath),
                               name=NetBackend.ONNX_INT8 if key == "onnx_int8" else NetBackend.ONNX)
        except Exception as e:  # onnxruntime raises its own exception types
            raise ModelError(f"{gpath}: onnxruntime cannot load the graph ({e})") from None
        return Network(impl, cfg, base)
    weights, cfg = load_weights(base)
    return Network(NumpyBackend(weights, arch_from_config(cfg)), cfg, base)


def network_from_weights(weights: Mapping[str, np.ndarray], name: str = "in-memory") -> Network:
    """A numpy-backend :class:`Network` straight from folded weights (no files; for tests and
    self-play workers that receive weights in memory)."""
    arch = infer_arch(weights)
    check_weights(weights, arch, folded=True)
    cfg = {"format_version": FORMAT_VERSION, "name": name, "encoding_version": ENCODING_VERSION,
           "input_planes": list(PLANE_NAMES), **arch.as_config()}
    return Network(NumpyBackend(weights, arch), cfg)


# --------------------------------------------------------------------------------------- export
_ARCH_KEYS = ("blocks", "channels", "head_channels", "value_fc", "planes")


def export_model(weights_folded: Mapping[str, np.ndarray], config: Optional[Mapping[str, Any]],
                 out_basename: PathLike, with_onnx: bool = True) -> Path:
    """Write ``<out>.npz`` (folded weights), ``<out>.onnx`` (unless ``with_onnx=False``) and then
    ``<out>.json``, each atomically (temporary file + ``os.replace``); return the json path.

    ``config`` supplies ``name``, ``version``, ``board_sizes`` ([width, height] pairs), ``notes``
    and any extra keys to keep; architecture keys, if given, must agree with the weights.
    ``out_basename`` may be an existing folder (files ``<folder>/<folder name>.*``).
    """
    config = dict(config or {})
    out = Path(out_basename)
    base = out / out.name if out.is_dir() else _strip(out)
    arch = infer_arch(weights_folded, "export_model")
    check_weights(weights_folded, arch, folded=True, source="export_model")
    for k, v in arch.as_config().items():
        if k in config and config[k] != v:
            raise ModelError(f"export_model: config says {k}={config[k]!r} but the weights have "
                             f"{v}")
    if arch.planes != NUM_PLANES:
        raise ModelError(f"export_model: the weights take {arch.planes} planes, the encoding "
                         f"has {NUM_PLANES}")
    weights = {k: np.ascontiguousarray(np.asarray(weights_folded[k], np.float32))
               for k in sorted(arch.folded_shapes())}

    buf = io.BytesIO()
    np.savez(buf, **weights)  # type: ignore[arg-type]  # numpy's stub: allow_pickle: bool
    npz = buf.getvalue()
    onnx_bytes = None
    if with_onnx:
        from .export import build_onnx
        onnx_bytes = build_onnx(weights, arch, graph_name=str(config.get("name", base.name)))

    sizes = config.pop("board_sizes", [])
    cfg: Dict[str, Any] = {
        "format_version": FORMAT_VERSION,
        "name": str(config.pop("name", base.name)),
        "version": config.pop("version", "0"),
        "board_sizes": [list(map(int, s)) for s in sizes],
        "encoding_version": ENCODING_VERSION,
        "input_planes": list(PLANE_NAMES),
        **arch.as_config(),
        "sha256": {"npz": sha256_bytes(npz)},
        "notes": config.pop("notes", ""),
        "created_utc": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    if onnx_bytes is not None:
        cfg["sha256"]["onnx"] = sha256_bytes(onnx_bytes)
    for k in _ARCH_KEYS + ("format_version", "encoding_version", "input_planes", "sha256"):
        config.pop(k, None)
    cfg.update(config)  # extra keys (training metadata) are kept as given

    base.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(_file(base, ".npz"), npz)
    if onnx_bytes is not None:
        atomic_write_bytes(_file(base, ".onnx"), onnx_bytes)
    jpath = _file(base, ".json")
    atomic_write_bytes(jpath, (json.dumps(cfg, indent=2) + "\n").encode("utf-8"))
    return jpath
