"""Making a pool: the one place that knows both backends (so neither backend imports the other,
and :mod:`.base` imports neither)."""
from __future__ import annotations

from typing import Any, Optional

from .base import BACKENDS, Backend, Pool, WorkerError, WorkerSpec
from .local import LocalPool
from .ray_backend import RayPool   # imports Ray only when a pool is made


def make_pool(spec: WorkerSpec, workers: int, backend: str = Backend.LOCAL, address: Optional[str] = None,
              max_attempts: int = 2, **options: Any) -> Pool:
    """A pool on ``backend``: ``"local"`` (processes on this machine, no extra dependency) or
    ``"ray"`` (``address`` ``"HOST:PORT"`` of a running cluster, ``"auto"`` to join the one on this
    machine, None to start a private local instance; needs ``pip install .[distributed]``)."""
    if backend == Backend.LOCAL:
        return LocalPool(spec, workers, max_attempts=max_attempts, **options)
    if backend == Backend.RAY:
        return RayPool(spec, workers, address=address, max_attempts=max_attempts, **options)
    raise WorkerError(f"unknown backend {backend!r} (choose from {', '.join(BACKENDS)})")
