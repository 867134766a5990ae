"""Workers for self-play, gating and tournament games: local processes or Ray actors.

See :mod:`gomoku_ai.workers.base` for the model (specs, tasks, results, what "lost" means),
:mod:`.local` and :mod:`.ray_backend` for the two backends (:func:`make_pool` in :mod:`.pools`
picks one), :mod:`.models` for how network versions reach workers. Ray is reached only through this
package: the rest of the project starts, inspects and stops it with :func:`ensure_ray`,
:func:`ray_location`, :func:`cluster_gpus` and :func:`shutdown_ray`.
"""
from .base import BACKENDS, Backend, Pool, ResultKind, Shared, Task, TaskResult, WorkerError, WorkerSpec, resolve
from .models import ModelCache, ModelRef, model_version
from .pools import make_pool
from .ray_backend import cluster_gpus, ensure_ray, ray_location, shutdown_ray

__all__ = ["BACKENDS", "Backend", "ModelCache", "ModelRef", "Pool", "ResultKind", "Shared", "Task", "TaskResult",
           "WorkerError", "WorkerSpec", "cluster_gpus", "ensure_ray", "make_pool", "model_version",
           "ray_location", "resolve", "shutdown_ray"]
