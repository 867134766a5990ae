"""Workers with controlled behaviour, for the pool tests (and for trying a cluster out).

:class:`ProbeWorker` answers ``{"x": ..., "sleep": s, "die_once": path, "raise": msg}``:
it sleeps ``s`` seconds, raises ``RuntimeError(msg)`` when asked, and ``die_once`` makes the
first worker that sees a task with that marker file absent create the file and kill its own
process (``os._exit``), as a crash mid-task would; the retry then finds the file and completes.
"""
from __future__ import annotations

import os
import time
from typing import Any, Dict

from .base import resolve


class ProbeWorker:
    """Echoes ``x`` squared with the worker's pid, counting the tasks it ran and its builds."""

    builds = 0

    def __init__(self, tag: str = "") -> None:
        self.tag = tag
        self.ran = 0
        ProbeWorker.builds += 1

    def run(self, payload: Dict[str, Any]) -> Dict[str, Any]:
        self.ran += 1
        marker = payload.get("die_once")
        if marker:
            try:
                fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                pass
            else:
                os.write(fd, str(os.getpid()).encode())
                os.close(fd)
                os._exit(9)
        if payload.get("sleep"):
            time.sleep(float(payload["sleep"]))
        if payload.get("raise"):
            raise RuntimeError(str(payload["raise"]))
        data = resolve(payload.get("data"))
        return {"x": payload.get("x"), "y": (payload.get("x") or 0) ** 2, "pid": os.getpid(),
                "ran": self.ran, "tag": self.tag, "threads": os.environ.get("OMP_NUM_THREADS"),
                "data_len": None if data is None else len(data)}


class DiesAtStart:
    """A worker whose process dies while it is being built (as a crash on import would)."""

    def __init__(self) -> None:
        os._exit(7)

    def run(self, payload: Any) -> Any:  # pragma: no cover - never built
        return payload


class Unpicklable:
    """Returns a value that cannot be sent back (a lambda)."""

    def run(self, payload: Any) -> Any:
        return lambda: payload
