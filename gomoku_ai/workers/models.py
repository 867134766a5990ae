"""Network versions handed to workers.

A :class:`ModelRef` carries an exported model's files (json + npz + onnx, as bytes) and a version
label ``"<name>@<sha12>"`` taken from the weights' sha256, so that a worker on another machine
needs no shared disk and every game can record exactly which network played it. Workers keep a
:class:`ModelCache`: a model is written to a private temporary folder and loaded once per version;
a task that names a new version (training promoted a network) loads that one instead.
"""
from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Generic, Optional, Tuple, TypeVar, Union

from .base import resolve

SUFFIXES = (".json", ".npz", ".onnx")


def _base(path: Union[str, Path]) -> Path:
    p = Path(path)
    return p.with_suffix("") if p.suffix in SUFFIXES else p


def model_version(path: Union[str, Path]) -> str:
    """``"<name>@<first 12 hex of the weights' sha256>"`` of an exported model (``path`` with or
    without suffix). Raises ``OSError``/``ValueError`` naming the file when it is unreadable."""
    base = _base(path)
    meta_path = base.with_suffix(".json")
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ValueError(f"{meta_path}: not a readable model description ({e})") from None
    sha = (meta.get("sha256") or {}).get("npz") or (meta.get("sha256") or {}).get("onnx") or ""
    return f"{meta.get('name') or base.name}@{sha[:12] or 'nosha'}"


@dataclass(frozen=True)
class ModelRef:
    """An exported model's files by value; ``version`` identifies the weights."""

    version: str
    name: str
    files: Dict[str, bytes]            # suffix -> bytes

    @classmethod
    def from_path(cls, path: Union[str, Path]) -> "ModelRef":
        base = _base(path)
        files = {s: base.with_suffix(s).read_bytes() for s in SUFFIXES if base.with_suffix(s).is_file()}
        if ".json" not in files:
            raise ValueError(f"{base.with_suffix('.json')}: no such model")
        return cls(model_version(base), base.name, files)

    def write(self, folder: Union[str, Path]) -> Path:
        """Write the files under ``folder``; returns the model's base path."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        base = folder / self.name
        for suffix, data in self.files.items():
            base.with_suffix(suffix).write_bytes(data)
        return base


#: what a :class:`ModelCache` keeps (an evaluator, a network)
V = TypeVar("V")


class ModelCache(Generic[V]):
    """In a worker: the evaluator of the newest model version it was given, loaded once.

    ``make(base_path) -> evaluator`` builds the evaluator from a model's files on disk.
    """

    def __init__(self, make: Callable[[Path], V]) -> None:
        self.make = make
        self.version: Optional[str] = None
        self.value: Optional[V] = None
        self.loads = 0
        self._dir: Optional[str] = None

    def get(self, ref: Any) -> Tuple[str, V]:
        """``(version, evaluator)`` for a :class:`ModelRef` (or a :class:`~.base.Shared` one).
        A plain path string is loaded from that path (shared-disk use), keyed by its version."""
        ref = resolve(ref)
        if isinstance(ref, (str, Path)):
            version = model_version(ref)
            if version != self.version:
                self._cleanup()              # a copy of an earlier ModelRef is no longer needed
                self._set(version, self.make(_base(ref)))
            return self._current()
        if ref.version != self.version:
            self._cleanup()
            self._dir = tempfile.mkdtemp(prefix="gomoku-model-")
            self._set(ref.version, self.make(ref.write(self._dir)))
        return self._current()

    def _current(self) -> Tuple[str, V]:
        assert self.version is not None and self.value is not None   # get() has just set them
        return self.version, self.value

    def _set(self, version: str, value: V) -> None:
        self.version, self.value = version, value
        self.loads += 1

    def _cleanup(self) -> None:
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def close(self) -> None:
        self._cleanup()
        self.value = None
        self.version = None
