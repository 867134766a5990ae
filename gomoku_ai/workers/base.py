"""The worker abstraction shared by self-play, gating and tournaments.

A *worker* is an object built once per worker process (local backend) or Ray actor (Ray backend)
from a :class:`WorkerSpec` (``"package.module:Class"`` plus keyword arguments) and then given
:class:`Task` payloads one at a time through ``run(payload) -> value``. Whatever it loads once
(a network, engine processes) it keeps across tasks; that is the point of a worker.

A :class:`Pool` runs an iterable of tasks on N workers and yields one :class:`TaskResult` per task
as tasks finish (not in task order):

``kind`` is a :class:`ResultKind` (equal to its string):

* ``kind == "ok"``: ``value`` is what ``run`` returned.
* ``kind == "error"``: ``run`` raised; ``error`` is the traceback. Not retried: a deterministic
  bug would only fail again. Callers usually treat it as fatal.
* ``kind == "lost"``: the worker died (killed, crashed, out of memory, its node went away) or ran
  past the task's ``limit_s``. The task was started again on a fresh worker up to
  ``max_attempts`` times in all; ``lost`` means every attempt was lost. A lost task never carries
  a value: callers record it as *not played*, never as a result.

Exactly one result is yielded per task key. Stopping early (``break`` out of :meth:`Pool.run`, or
``stop()`` returning True) discards the tasks not yet finished; their work is not reported.

Large read-only objects (a network's bytes) go through :meth:`Pool.share`: the local backend
passes them by value, the Ray backend puts them once in the object store; the worker calls
:func:`resolve` on what it received either way.
"""
from __future__ import annotations

import importlib
import os
from abc import ABC, abstractmethod
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Deque, Dict, Generator, Generic, Hashable, Iterable, Optional, Tuple, TypeVar

from .. import checks
from ..checks import StrKind, parse_kind


class Backend(StrKind):
    """Where a pool's workers run: processes on this machine, or Ray actors."""

    LOCAL = "local"
    RAY = "ray"


#: the backend names, for command-line choices and messages
BACKENDS = tuple(b.value for b in Backend)


class ResultKind(StrKind):
    """How a task ended (see the module docstring)."""

    OK = "ok"
    ERROR = "error"
    LOST = "lost"


#: the type of a task's key (any hashable, picklable value: ``("selfplay", prefix, batch)``, ...)
K = TypeVar("K", bound=Hashable)

THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


class WorkerError(RuntimeError):
    """A pool could not be started or used (bad spec, Ray missing or unreachable)."""


@dataclass(frozen=True)
class WorkerSpec:
    """How to build one worker.

    ``target``: ``"package.module:Class"`` (importable on every machine of a cluster), built as
    ``Class(**kwargs)`` once per worker; it must have ``run(payload)`` and may have ``close()``.
    ``threads``: BLAS/OpenMP/onnxruntime threads per worker (1 by default: one core per worker).
    ``num_cpus`` / ``num_gpus``: the Ray resource request of each worker (ignored locally).
    """

    target: str
    kwargs: Dict[str, Any] = field(default_factory=dict)
    threads: int = 1
    num_cpus: float = 1.0
    num_gpus: float = 0.0

    def __post_init__(self) -> None:
        checks.require(isinstance(self.target, str), self, "target", "a 'package.module:Class' string")
        checks.at_least(self, 1, "threads")
        checks.non_negative(self, "num_cpus", "num_gpus")

    def build(self) -> Any:
        """Set the thread limits of this process and construct the worker (called in the worker)."""
        for var in THREAD_VARS:
            os.environ[var] = str(self.threads)
        module, _, name = self.target.partition(":")
        if not module or not name:
            raise WorkerError(f"worker target {self.target!r} is not 'package.module:Class'")
        cls = getattr(importlib.import_module(module), name)
        return cls(**self.kwargs)


@dataclass(frozen=True)
class Task(Generic[K]):
    """One unit of work: ``key`` (unique within a run, hashable, picklable) and ``payload``.

    ``limit_s``: wall-clock seconds one attempt may take before its worker is killed and the
    attempt counted as lost (None: no limit).
    """

    key: K
    payload: Any
    limit_s: Optional[float] = None


@dataclass
class TaskResult(Generic[K]):
    """The outcome of one task (see the module docstring for ``kind``)."""

    key: K
    kind: ResultKind
    value: Any = None
    error: Optional[str] = None
    attempts: int = 1
    worker: str = ""                # which worker finished it: "local-3", "ray-2@10.0.0.5:4242"

    def __post_init__(self) -> None:
        self.kind = parse_kind(ResultKind, self.kind, "TaskResult.kind")   # a kind given as its string

    @property
    def ok(self) -> bool:
        return self.kind is ResultKind.OK


@dataclass(frozen=True)
class Shared:
    """A read-only object handed to workers: the object itself (local) or a Ray object ref."""

    value: Any
    is_ref: bool = False


def resolve(obj: Any) -> Any:
    """The object behind a :class:`Shared` (fetched from Ray's object store once per call), or
    ``obj`` itself when it is not one."""
    if isinstance(obj, Shared):
        if obj.is_ref:
            import ray   # only ever reached inside a Ray worker
            return ray.get(obj.value)
        return obj.value
    return obj


class TaskQueue:
    """The tasks of one :meth:`Pool.run`: new ones drawn lazily from the caller's iterable, lost
    ones put back first (with the attempts they used); duplicate keys refused."""

    def __init__(self, tasks: Iterable[Task]) -> None:
        self._source = iter(tasks)
        self._retry: Deque[Tuple[Task, int]] = deque()
        self._seen: set = set()
        self.exhausted = False             # the caller's iterable has no task left

    def next(self) -> Optional[Tuple[Task, int]]:
        """``(task, attempts so far)``, or None when nothing is left to hand out now."""
        if self._retry:
            return self._retry.popleft()
        if self.exhausted:
            return None
        try:
            t = next(self._source)
        except StopIteration:
            self.exhausted = True
            return None
        if t.key in self._seen:
            raise WorkerError(f"task key {t.key!r} given twice")
        self._seen.add(t.key)
        return t, 0

    def put_back(self, task: Task, attempts: int, first: bool = False) -> None:
        (self._retry.appendleft if first else self._retry.append)((task, attempts))

    def empty(self) -> bool:
        """Nothing to retry and the caller's iterable is used up."""
        return self.exhausted and not self._retry

    def lost(self, task: Task, attempts: int, why: str, max_attempts: int) -> Optional[TaskResult]:
        """A lost attempt: put the task back while attempts remain (None), else its ``lost``
        result."""
        if attempts < max_attempts:
            self.put_back(task, attempts)
            return None
        return TaskResult(task.key, ResultKind.LOST, None, f"{why} (attempt {attempts} of {max_attempts})",
                          attempts, "")


class Pool(ABC):
    """N workers built from one :class:`WorkerSpec`; see the module docstring."""

    backend: Backend

    def __init__(self, spec: WorkerSpec, workers: int, max_attempts: int = 2) -> None:
        if workers < 1:
            raise WorkerError("a pool needs at least one worker")
        if max_attempts < 1:
            raise WorkerError("max_attempts must be at least 1")
        self.spec = spec
        self.size = int(workers)
        self.max_attempts = int(max_attempts)
        self.lost_attempts = 0          # attempts lost to dead or overdue workers, over the pool's life

    @abstractmethod
    def run(self, tasks: Iterable[Task[K]],
            stop: Optional[Callable[[], bool]] = None) -> Generator[TaskResult[K], None, None]:
        """Run ``tasks`` (consumed lazily), yielding one result per task as each finishes.

        ``stop()`` is polled between results; once it returns True no new task is started and
        the generator returns after discarding the unfinished ones. The pool's workers survive
        for the next call.
        """

    def share(self, obj: Any) -> Shared:
        """Wrap a read-only object for tasks (see :func:`resolve`)."""
        return Shared(obj)

    def describe(self) -> Dict[str, Any]:
        """Backend, worker count and resources, for logs and results."""
        return {"backend": self.backend, "workers": self.size, "threads": self.spec.threads}

    @abstractmethod
    def close(self) -> None:
        """Stop every worker (idempotent)."""

    def __enter__(self) -> "Pool":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
