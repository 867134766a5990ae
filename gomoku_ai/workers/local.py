"""The local backend: worker processes on this machine (``multiprocessing``, *spawn*).

Each worker process builds its worker once, then loops: receive ``(task_id, payload)`` on its pipe,
run it, send ``("ok"|"error", task_id, value)``. The driver waits on every pipe and every process
sentinel at once, so a worker that dies (or that runs past its task's ``limit_s`` and is killed) is
noticed at once and its task started again on a fresh worker.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import signal
import threading
import time
import traceback
from multiprocessing.connection import wait as mp_wait
from typing import Any, Callable, Dict, Generator, Iterable, List, Optional, Tuple

from .base import K, Backend, Pool, ResultKind, Task, TaskQueue, TaskResult, WorkerError, WorkerSpec


MAX_START_FAILURES = 3     # workers in a row that die or hang before they are ready: give up


def _watch_driver(driver_pid: int, period_s: float = 1.0) -> None:
    """End this worker when the driver is gone (killed with SIGKILL, out of memory): a task left
    running would compete with the resumed run. A daemon thread polling the parent pid."""
    def watch() -> None:
        while True:
            time.sleep(period_s)
            if os.getppid() != driver_pid:
                os._exit(3)
    threading.Thread(target=watch, name="driver-watch", daemon=True).start()


def _worker_main(conn: Any, spec: WorkerSpec, driver_pid: Optional[int] = None) -> None:
    """Entry point of a worker process."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # the driver decides what Ctrl-C does
    if driver_pid is not None:
        _watch_driver(driver_pid)
    try:
        worker = spec.build()
    except BaseException:  # noqa: BLE001 - reported, then the process ends
        try:
            conn.send(("init_error", None, traceback.format_exc()))
        finally:
            return
    try:
        conn.send(("ready", None, None))
        while True:
            try:
                msg = conn.recv()
            except (EOFError, OSError):
                break
            if msg is None:
                break
            task_id, payload = msg
            try:
                value = worker.run(payload)
                reply = ("ok", task_id, value)
            except Exception:  # noqa: BLE001 - the task failed, the worker goes on
                reply = ("error", task_id, traceback.format_exc())
            try:
                conn.send(reply)
            except (OSError, EOFError, BrokenPipeError):
                break
            except Exception:  # noqa: BLE001 - e.g. a result that cannot be pickled
                try:
                    conn.send(("error", task_id, traceback.format_exc()))
                except (OSError, EOFError, BrokenPipeError):
                    break
    finally:
        close = getattr(worker, "close", None)
        if callable(close):
            try:
                close()
            except Exception:  # noqa: BLE001
                pass


class _Proc:
    def __init__(self, ctx: Any, spec: WorkerSpec, wid: int) -> None:
        self.wid = wid
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child, spec, os.getpid()), daemon=True,
                                name=f"gomoku-worker-{wid}")
        self.proc.start()
        child.close()
        self.ready = False
        self.job: Optional[Tuple[int, Task, int]] = None      # (task id, task, attempt)
        self.deadline: Optional[float] = None

    @property
    def name(self) -> str:
        return f"local-{self.wid}"

    def kill(self) -> None:
        try:
            self.proc.kill()
        except Exception:  # noqa: BLE001
            pass
        self.proc.join(timeout=5)
        try:
            self.conn.close()
        except OSError:
            pass


class LocalPool(Pool):
    """Worker processes on this machine. ``start_timeout_s``: how long a worker may take to build."""

    backend = Backend.LOCAL

    def __init__(self, spec: WorkerSpec, workers: int, max_attempts: int = 2,
                 start_timeout_s: float = 120.0) -> None:
        super().__init__(spec, workers, max_attempts)
        self._ctx = mp.get_context("spawn")
        self._procs: Dict[int, _Proc] = {}
        self._next_wid = 0
        self._next_task = 0
        self.start_timeout_s = start_timeout_s
        self._closed = False
        self._start_failures = 0

    # ------------------------------------------------------------------ processes
    def _start(self) -> _Proc:
        p = _Proc(self._ctx, self.spec, self._next_wid)
        self._next_wid += 1
        p.deadline = time.monotonic() + self.start_timeout_s
        self._procs[p.wid] = p
        return p

    def worker_pids(self) -> Dict[str, int]:
        """pid of each live worker process (for tests and diagnostics)."""
        return {p.name: p.proc.pid for p in list(self._procs.values()) if p.proc.pid is not None}

    # ------------------------------------------------------------------ running
    def run(self, tasks: Iterable[Task[K]],
            stop: Optional[Callable[[], bool]] = None) -> Generator[TaskResult[K], None, None]:
        if self._closed:
            raise WorkerError("the pool is closed")
        queue = TaskQueue(tasks)
        p: Optional[_Proc]   # a worker; None where a ready handle belongs to no worker

        def stopping() -> bool:
            return stop is not None and bool(stop())

        try:
            while True:
                if stopping():
                    return
                lost = self._hand_out(queue)
                busy = [p for p in self._procs.values() if p.job is not None or not p.ready]
                if not busy:
                    nt = queue.next()
                    if nt is None:
                        yield from (r for r in lost if r is not None)
                        return
                    queue.put_back(*nt, first=True)
                # keep the pool at full size while there is work
                while len(self._procs) < self.size and not queue.empty():
                    self._start()
                busy = [p for p in self._procs.values() if p.job is not None or not p.ready]
                conns = {p.conn: p for p in busy}
                sentinels = {p.proc.sentinel: p for p in busy}
                ready = mp_wait(list(conns) + list(sentinels), timeout=0.5)
                for obj in ready:
                    p = conns.get(obj)
                    if p is None or p.wid not in self._procs:
                        continue
                    if (yield from self._receive(p, queue, lost, stopping)):
                        return
                self._reap(ready, sentinels, queue, lost)
                yield from (r for r in lost if r is not None)
        finally:
            # tasks still running are abandoned: their workers are killed (they may be mid-game)
            for p in list(self._procs.values()):
                if p.job is not None:
                    self._drop(p)

    def _hand_out(self, queue: TaskQueue) -> List[Optional[TaskResult]]:
        """Give the next task of ``queue`` to every idle, ready worker; the results of the tasks
        lost because their worker could not be given them (see :meth:`_lose`)."""
        lost: List[Optional[TaskResult]] = []
        for p in list(self._procs.values()):
            if p.ready and p.job is None:
                nt = queue.next()
                if nt is None:
                    break
                task, attempts = nt
                tid = self._next_task
                self._next_task += 1
                p.job = (tid, task, attempts + 1)
                p.deadline = (time.monotonic() + task.limit_s) if task.limit_s else None
                try:
                    p.conn.send((tid, task.payload))
                except (OSError, BrokenPipeError):
                    lost.append(self._lose(p, "could not be given a task", queue))
        return lost

    def _receive(self, p: _Proc, queue: TaskQueue, lost: List[Optional[TaskResult]],
                 stopping: Callable[[], bool]) -> Generator[TaskResult, None, bool]:
        """Read every message waiting on ``p``'s pipe: its start-up answer, or its task's result
        (yielded). Returns True when ``stopping()`` says so after a result. A closed pipe loses
        the worker (into ``lost``); a worker that could not build raises :class:`WorkerError`."""
        try:
            while p.conn.poll():
                kind, tid, value = p.conn.recv()
                if kind == "ready":
                    p.ready = True
                    p.deadline = None
                    self._start_failures = 0
                elif kind == "init_error":
                    self._drop(p)
                    raise WorkerError(f"worker {self.spec.target} could not start:\n{value}")
                elif p.job is not None and tid == p.job[0]:
                    _, task, attempts = p.job
                    p.job = None
                    p.deadline = None
                    yield TaskResult(task.key, ResultKind.OK if kind == "ok" else ResultKind.ERROR,
                                     value if kind == "ok" else None,
                                     None if kind == "ok" else value, attempts, p.name)
                    if stopping():
                        return True
        except (EOFError, OSError):
            lost.append(self._lose(p, "died (its pipe closed)", queue))
        return False

    def _reap(self, ready: List[Any], sentinels: Dict[Any, _Proc], queue: TaskQueue,
              lost: List[Optional[TaskResult]]) -> None:
        """Lose (into ``lost``) the workers whose process ended (their sentinel is in ``ready``)
        and those past their deadline (a task's ``limit_s``, or ``start_timeout_s`` to start)."""
        for obj in ready:
            p = sentinels.get(obj)
            if p is not None and p.wid in self._procs:
                lost.append(self._lose(p, f"died (exit code {p.proc.exitcode})", queue))
        now = time.monotonic()
        for p in list(self._procs.values()):
            if p.deadline is not None and now > p.deadline:
                why = ("ran past its task's time limit" if p.ready
                       else f"did not start within {self.start_timeout_s:.0f} s")
                lost.append(self._lose(p, why, queue))

    def _drop(self, p: _Proc) -> None:
        self._procs.pop(p.wid, None)
        p.kill()

    def _lose(self, p: _Proc, why: str, queue: TaskQueue) -> Optional[TaskResult]:
        """Remove a dead or overdue worker. Its task goes back to ``queue`` while attempts remain;
        returns the task's ``lost`` result once they are used up (else None). Raises
        :class:`WorkerError` when workers keep dying before they are ready."""
        self._drop(p)
        if not p.ready:
            self._start_failures += 1
            if self._start_failures >= MAX_START_FAILURES:
                raise WorkerError(f"{self._start_failures} workers in a row failed to start "
                                  f"({self.spec.target}): the last {why}")
        if p.job is None:
            return None
        self.lost_attempts += 1
        _, task, attempts = p.job
        return queue.lost(task, attempts, f"worker {p.name} {why}", self.max_attempts)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for p in self._procs.values():
            try:
                p.conn.send(None)
            except (OSError, BrokenPipeError):
                pass
        end = time.monotonic() + 5.0
        for p in self._procs.values():
            p.proc.join(timeout=max(0.1, end - time.monotonic()))
            if p.proc.is_alive():
                p.kill()
            try:
                p.conn.close()
            except OSError:
                pass
        self._procs.clear()
