"""Workers for self-play, gating and tournament games: local processes or Ray actors.

See :mod:`gomoku_ai.workers.base` for the model (specs, tasks, results, what "lost" means),
:mod:`.local` and :mod:`.ray_backend` for the two backends, :mod:`.models` for how network
versions reach workers.
"""
from .base import (BACKENDS, Pool, Shared, Task, TaskResult, WorkerError, WorkerSpec, make_pool,
                   resolve)
from .models import ModelCache, ModelRef, model_version

__all__ = ["BACKENDS", "ModelCache", "ModelRef", "Pool", "Shared", "Task", "TaskResult",
           "WorkerError", "WorkerSpec", "make_pool", "model_version", "resolve"]
