"""The Ray backend: one Ray actor per worker (``pip install .[distributed]``).

Each actor builds its worker once (``num_cpus``/``num_gpus`` of the :class:`WorkerSpec` are its
resource request) and runs one task at a time. The driver keeps one call in flight per actor and
waits on all of them with ``ray.wait``. A call that fails because the actor, its process or its
node died (any ``RayError`` but a ``RayTaskError``) loses the attempt: the actor is dropped, a new
one is made and the task starts again there, up to ``max_attempts`` in all. An exception raised by
the task itself comes back as a ``RayTaskError`` and is reported as ``kind == "error"``.

``address``: ``None`` starts a private Ray instance on this machine (listening on 127.0.0.1
only, no dashboard), ``"auto"`` joins the cluster already running on this machine, ``"HOST:PORT"`` joins
that head node. Ray's usage statistics are switched off: nothing is sent anywhere.
"""
from __future__ import annotations

import contextlib
import os
import sys
import time
from typing import Any, Callable, Dict, Generator, Iterable, Iterator, List, Optional, Tuple

from .base import K, Backend, Pool, ResultKind, Shared, Task, TaskQueue, TaskResult, WorkerError, WorkerSpec

MAX_START_FAILURES = 3     # replacement actors in a row that cannot start: give up
RESULT_FETCH_S = 300.0     # fetching a finished task's result from its node; past it, or when the
                           # node died holding it (ObjectLostError), the attempt is lost


def _import_ray() -> Any:
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    try:
        import ray
    except ImportError:
        raise WorkerError("the Ray backend needs Ray: pip install '.[distributed]'") from None
    return ray


@contextlib.contextmanager
def _loopback_only(enabled: bool) -> Iterator[None]:
    """A private instance on the loopback interface only: Ray's "no cluster" mode (its default on
    macOS and Windows) makes the node use the localhost address, so its GCS, raylet and workers
    listen on 127.0.0.1 instead of every interface. The mode is read from the environment by the
    processes Ray starts and from ``ray_constants`` in this one; both are restored afterwards."""
    if not enabled:
        yield
        return
    from ray._private import ray_constants
    var = ray_constants.ENABLE_RAY_CLUSTERS_ENV_VAR
    old_env, old_const = os.environ.get(var), ray_constants.ENABLE_RAY_CLUSTER
    os.environ[var] = "0"
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = old_const
        if old_env is None:
            os.environ.pop(var, None)
        else:
            os.environ[var] = old_env


def init_ray(address: Optional[str] = None, num_cpus: Optional[int] = None,
             num_gpus: Optional[float] = None) -> Any:
    """Start a private Ray instance on this machine (``address`` None: 127.0.0.1 only, no
    dashboard, ``num_cpus`` CPUs, ``num_gpus`` GPUs; None: what Ray detects) or join a cluster
    (``"auto"`` or ``"HOST:PORT"``); returns the ``ray`` module. Raises :class:`WorkerError`
    when Ray is missing or the cluster unreachable."""
    ray = _import_ray()
    kw: Dict[str, Any] = dict(include_dashboard=False, log_to_driver=False, configure_logging=False)
    if address is None:
        if num_cpus is not None:
            kw["num_cpus"] = int(num_cpus)
        if num_gpus is not None:
            kw["num_gpus"] = num_gpus
    else:
        kw["address"] = address
        if _is_loopback(address):
            # a cluster on this machine's loopback interface (``ray start --head
            # --node-ip-address 127.0.0.1``): join it as a loopback node too, not by this
            # machine's network address, where nothing listens
            kw["_node_ip_address"] = "127.0.0.1"
    try:
        with _loopback_only(address is None or _is_loopback(address)):
            ray.init(**kw)
    except Exception as e:  # noqa: BLE001 - ConnectionError, RuntimeError, ...
        raise WorkerError(f"could not start or join Ray (address={address!r}): {e}") from e
    return ray


def connected_ray() -> Any:
    """The ``ray`` module when this process is connected to Ray, else None (Ray is not imported
    just to find out)."""
    if "ray" not in sys.modules:
        return None
    import ray
    return ray if ray.is_initialized() else None


def ensure_ray(address: Optional[str] = None, num_cpus: Optional[int] = None) -> bool:
    """Join or start Ray as :func:`init_ray` does, unless this process is connected already;
    True when this call connected it (the caller then owns it and :func:`shutdown_ray` s it)."""
    if _import_ray().is_initialized():
        return False
    init_ray(address, num_cpus=num_cpus)
    return True


def shutdown_ray() -> None:
    """Disconnect this process from Ray (stops a private instance it started); no-op without Ray."""
    ray = connected_ray()
    if ray is not None:
        ray.shutdown()


def ray_location() -> Dict[str, Any]:
    """The GPUs Ray assigned to this process and its node id (``{"gpu_ids": []}`` outside Ray)."""
    ray = connected_ray()
    if ray is None:
        return {"gpu_ids": []}
    return {"gpu_ids": [str(g) for g in ray.get_gpu_ids()],
            "node_id": ray.get_runtime_context().get_node_id()}


def cluster_gpus() -> float:
    """GPUs of the Ray cluster this process is connected to (0 when Ray is not running here)."""
    ray = connected_ray()
    return 0.0 if ray is None else float(ray.cluster_resources().get("GPU", 0.0))


def _is_loopback(address: Optional[str]) -> bool:
    """True for ``"127.x.x.x:PORT"``, ``"localhost:PORT"`` and ``"[::1]:PORT"``."""
    if not address or address == "auto":
        return False
    host = address.rsplit(":", 1)[0].strip("[]")
    return host == "localhost" or host.startswith("127.") or host == "::1"


class _Host:
    """The actor class: holds one worker."""

    def __init__(self, spec: WorkerSpec) -> None:
        self.worker = spec.build()

    def info(self) -> Dict[str, Any]:
        import ray
        return {"node": ray.util.get_node_ip_address(), "pid": os.getpid(),
                "node_id": ray.get_runtime_context().get_node_id()}

    def run(self, payload: Any) -> Any:
        return self.worker.run(payload)

    def close(self) -> None:
        close = getattr(self.worker, "close", None)
        if callable(close):
            close()


class _Actor:
    def __init__(self, handle: Any, wid: int) -> None:
        self.handle = handle
        self.wid = wid
        self.created = time.monotonic()
        self.where = ""
        self.pid: Optional[int] = None
        self.node_id = ""                              # Ray's node id (several nodes may share an IP)
        self.ref: Any = None
        self.info_ref: Any = handle.info.remote()     # runs first: calls run in order on an actor
        self.job: Optional[Tuple[Task, int]] = None    # (task, attempt)
        self.deadline: Optional[float] = None

    @property
    def name(self) -> str:
        return f"ray-{self.wid}@{self.where}" if self.where else f"ray-{self.wid}"

    def set_info(self, info: Dict[str, Any]) -> None:
        self.where, self.pid = f"{info['node']}:{info['pid']}", int(info["pid"])
        self.node_id = str(info.get("node_id", ""))


class RayPool(Pool):
    """Workers as Ray actors (see the module docstring).

    ``start_timeout_s``: how long the first workers may take to be scheduled and built (a
    cluster without enough free CPUs fails here with a message, instead of waiting forever).
    ``runtime_env``: passed to Ray for the actors (e.g. ``{"working_dir": "."}`` when the package
    is not installed on every machine).
    """

    backend = Backend.RAY

    def __init__(self, spec: WorkerSpec, workers: int, address: Optional[str] = None,
                 max_attempts: int = 2, start_timeout_s: float = 120.0,
                 runtime_env: Optional[Dict[str, Any]] = None, num_cpus: Optional[int] = None) -> None:
        super().__init__(spec, workers, max_attempts)
        ray = self._ray = _import_ray()
        self._own_ray = False
        if not ray.is_initialized():
            init_ray(address, num_cpus if num_cpus is not None
                     else max(1, int(round(workers * spec.num_cpus))))
            self._own_ray = True
        self.address = address
        self._actor_cls = ray.remote(_Host).options(
            num_cpus=spec.num_cpus, num_gpus=spec.num_gpus, max_restarts=0, max_concurrency=1,
            **({"runtime_env": runtime_env} if runtime_env else {}))
        self._actors: Dict[int, _Actor] = {}
        self._next_wid = 0
        self._closed = False
        self._start_failures = 0
        self.start_timeout_s = start_timeout_s
        first = [self._new_actor() for _ in range(self.size)]
        self._await_info(first, start_timeout_s)

    # ------------------------------------------------------------------ actors
    def _new_actor(self) -> _Actor:
        a = _Actor(self._actor_cls.remote(self.spec), self._next_wid)
        self._next_wid += 1
        self._actors[a.wid] = a
        return a

    def _learn_where(self, a: _Actor, timeout_s: float = 0.0) -> None:
        """Fill in the actor's node and pid once its ``info`` call has answered."""
        if a.where or a.info_ref is None:
            return
        ray = self._ray
        ready, _ = ray.wait([a.info_ref], timeout=timeout_s, fetch_local=False)
        if ready:
            try:
                info = ray.get(a.info_ref, timeout=RESULT_FETCH_S)
            except ray.exceptions.RayError:
                a.info_ref = None       # the actor could not be built: ``starting`` drops it
                return
            a.set_info(info)

    def _await_info(self, actors: List[_Actor], timeout_s: float) -> None:
        ray = self._ray
        refs = {a.info_ref: a for a in actors}
        ready, pending = ray.wait(list(refs), num_returns=len(refs), timeout=timeout_s)
        for ref in ready:
            try:
                info = ray.get(ref)
            except ray.exceptions.RayError as e:
                self.close()
                raise WorkerError(f"worker {self.spec.target} could not start on Ray: {e}") from e
            refs[ref].set_info(info)
        if pending:
            res, free = ray.cluster_resources(), ray.available_resources()
            self.close()
            raise WorkerError(f"only {len(ready)} of {len(refs)} Ray workers started within "
                              f"{timeout_s:.0f} s (each asks for {self.spec.num_cpus} CPU, "
                              f"{self.spec.num_gpus} GPU; the cluster has {res.get('CPU', 0):g} CPU, "
                              f"{res.get('GPU', 0):g} GPU, of which {free.get('CPU', 0):g} CPU, "
                              f"{free.get('GPU', 0):g} GPU were free: other workers, of this run "
                              f"or another, hold the rest)")

    def worker_pids(self) -> Dict[str, int]:
        """pid of each started actor process (for tests and diagnostics; remote pids included)."""
        for a in self._actors.values():
            self._learn_where(a)
        return {a.name: a.pid for a in self._actors.values() if a.pid is not None}

    def worker_nodes(self) -> Dict[str, str]:
        """Ray node id of each started actor (for tests and diagnostics)."""
        for a in self._actors.values():
            self._learn_where(a)
        return {a.name: a.node_id for a in self._actors.values() if a.node_id}

    def running_workers(self) -> List[str]:
        """Names of the actors whose task is still running (handed out, its result not ready yet;
        for tests and diagnostics: a task that has ended but is not collected is not listed)."""
        refs = {a.ref: a.name for a in self._actors.values() if a.job is not None}
        if not refs:
            return []
        ready, _ = self._ray.wait(list(refs), num_returns=len(refs), timeout=0, fetch_local=False)
        done = set(ready)
        return sorted(name for ref, name in refs.items() if ref not in done)

    def share(self, obj: Any) -> Shared:
        return Shared(self._ray.put(obj), is_ref=True)

    def describe(self) -> Dict[str, Any]:
        d = super().describe()
        d.update(address=self.address, num_cpus=self.spec.num_cpus, num_gpus=self.spec.num_gpus)
        return d

    # ------------------------------------------------------------------ running
    def run(self, tasks: Iterable[Task[K]],
            stop: Optional[Callable[[], bool]] = None) -> Generator[TaskResult[K], None, None]:
        if self._closed:
            raise WorkerError("the pool is closed")
        queue = TaskQueue(tasks)
        a: Optional[_Actor]   # an actor; None where a ready reference belongs to no running task
        try:
            while True:
                if stop is not None and stop():
                    return
                self._hand_out(queue)
                busy = {a.ref: a for a in self._actors.values() if a.job is not None}
                if not busy and queue.empty():
                    return
                waiting = list(busy) + [a.info_ref for a in self._actors.values()
                                        if not a.where and a.info_ref is not None]
                if not waiting:          # not expected: every actor idle and up, tasks left
                    time.sleep(0.05)
                    continue
                for ref in self._finished(waiting):
                    a = busy.get(ref)
                    if a is None:           # an actor's start-up answer: read by ``_starting``
                        continue
                    yield from self._collect(a, ref, queue)
                    if stop is not None and stop():
                        return
                yield from self._overdue(queue)
        finally:
            for a in list(self._actors.values()):
                if a.job is not None:        # abandoned mid-task: kill it, a fresh one replaces it
                    self._kill(a)

    def _hand_out(self, queue: TaskQueue) -> None:
        """Top the pool up to its size and give the next task of ``queue`` to each idle actor."""
        while len(self._actors) < self.size:
            self._new_actor()
        for a in list(self._actors.values()):
            # tasks go only to actors that are up: a replacement may still be waiting for
            # a free CPU, and its start-up must not count against a task's time limit
            if a.job is None and not self._starting(a):
                nt = queue.next()
                if nt is None:
                    break
                task, attempts = nt
                a.job = (task, attempts + 1)
                a.ref = a.handle.run.remote(task.payload)
                a.deadline = (time.monotonic() + task.limit_s) if task.limit_s else None

    def _finished(self, waiting: List[Any]) -> List[Any]:
        """The references of ``waiting`` that are ready, after waiting up to 0.5 s for one.

        fetch_local=False: "ready" = the task ended, wherever its result is; a result left on a
        node that then died would otherwise never become ready here. Block for the first, then
        take every ready one: ``ray.wait`` does not return ready refs in list order, so one that
        is always ready (a start-up answer) must not hide a finished task.
        """
        ray = self._ray
        ready, _ = ray.wait(waiting, num_returns=1, timeout=0.5, fetch_local=False)
        if ready:
            ready, _ = ray.wait(waiting, num_returns=len(waiting), timeout=0, fetch_local=False)
        return list(ready)

    def _collect(self, a: _Actor, ref: Any, queue: TaskQueue) -> Iterator[TaskResult]:
        """The result of the task of actor ``a`` whose reference ``ref`` is ready: ``ok``, an
        ``error`` raised by the task, or (the actor died) its ``lost`` result once its attempts
        are used up, else nothing (the task went back to ``queue``)."""
        ray = self._ray
        self._learn_where(a, 5.0)    # answered before the task (actors run in order)
        task, attempts = a.job  # type: ignore[misc]
        try:
            value = ray.get(ref, timeout=RESULT_FETCH_S)
        except ray.exceptions.RayTaskError as e:
            a.job, a.ref = None, None
            yield TaskResult(task.key, ResultKind.ERROR, None, str(e), attempts, a.name)
        except ray.exceptions.RayError as e:
            r = self._lose(a, f"died ({type(e).__name__})", queue)
            if r is not None:
                yield r
        else:
            a.job, a.ref = None, None    # the result is not pinned in the store
            yield TaskResult(task.key, ResultKind.OK, value, None, attempts, a.name)

    def _overdue(self, queue: TaskQueue) -> Iterator[TaskResult]:
        """Kill the actors running past their task's ``limit_s``; the ``lost`` results of the
        tasks whose attempts are used up (the others go back to ``queue``)."""
        ray = self._ray
        now = time.monotonic()
        for a in list(self._actors.values()):
            if a.job is not None and a.deadline is not None and now > a.deadline:
                if ray.wait([a.ref], timeout=0, fetch_local=False)[0]:
                    continue        # it did finish: collected on the next pass
                r = self._lose(a, "ran past its task's time limit", queue)
                if r is not None:
                    yield r

    def _kill(self, a: _Actor) -> None:
        """Forget actor ``a`` and kill it (it may be gone already)."""
        self._actors.pop(a.wid, None)
        try:
            self._ray.kill(a.handle, no_restart=True)
        except Exception:  # noqa: BLE001 - already gone
            pass

    def _lose(self, a: _Actor, why: str, queue: TaskQueue) -> Optional[TaskResult]:
        """Kill actor ``a`` (dead or overdue). Its task goes back to ``queue`` while attempts
        remain; returns the task's ``lost`` result once they are used up (else None)."""
        self._kill(a)
        task, attempts = a.job  # type: ignore[misc]
        a.job, a.ref = None, None
        self.lost_attempts += 1
        return queue.lost(task, attempts, f"worker {a.name} {why}", self.max_attempts)

    def _starting(self, a: _Actor) -> bool:
        """True while a (replacement) actor is being placed and built; drops it, counting a
        failed start, when its build failed or it is not up within ``start_timeout_s``."""
        if a.where:
            return False
        self._learn_where(a)
        if a.where:
            self._start_failures = 0
            return False
        if a.info_ref is None or time.monotonic() - a.created > self.start_timeout_s:
            self._kill(a)
            self._start_failures += 1
            why = ("failed to build its worker" if a.info_ref is None
                   else f"was not up within {self.start_timeout_s:.0f} s")
            if self._start_failures >= MAX_START_FAILURES:
                raise WorkerError(f"{self._start_failures} Ray workers in a row could not "
                                  f"start ({self.spec.target}): the last {why}")
        return True

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        ray = self._ray
        refs = []
        for a in self._actors.values():
            try:
                refs.append(a.handle.close.remote())
            except Exception:  # noqa: BLE001
                pass
        if refs:
            try:
                ray.wait(refs, num_returns=len(refs), timeout=5.0)
            except Exception:  # noqa: BLE001
                pass
        for a in self._actors.values():
            try:
                ray.kill(a.handle, no_restart=True)
            except Exception:  # noqa: BLE001
                pass
        self._actors.clear()
        if self._own_ray:
            ray.shutdown()
