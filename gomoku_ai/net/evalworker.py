"""The network evaluated in a second process, so that the search uses two cores.

The search's tree work is pure Python and holds the GIL; a thread that evaluates the network has to
take the GIL back for every call, which made the threaded pipeline (:attr:`MCTSConfig.pipeline`)
no faster than one thread. Here the network runs in a child process instead: while it evaluates
one batch, the search gathers the next (:meth:`gomoku_ai.mcts.MCTS.search` with
:attr:`~gomoku_ai.mcts.MCTS.offload` set). The player starts it when the manager allows two
threads (``INFO thread_num 2``) and the memory limit leaves room for it (:data:`WORKER_BYTES`).

Parent side: :class:`EvalWorker` (start, wait for the hello, check the child's answers on a probe
batch against the parent's own network, then :meth:`EvalWorker.submit`). Child side: :func:`serve`,
run as ``python -m gomoku_ai.net.evalworker --model BASENAME --backend NAME`` (or, frozen,
``pbrain-x --eval-worker ...``, dispatched by ``engine.main``).

Wire format, on the child's stdin and stdout, little-endian, one message at a time:

* hello (child -> parent, once loaded): ``b"GEVH"``, u32 length, that many bytes of JSON
  (``{"name", "backend", "pid"}``);
* request (parent -> child): ``b"GEVQ"``, u32 n, u32 planes, u32 height, u32 width, then
  n * planes * height * width float32 planes;
* reply: ``b"GEVR"``, u32 n, u32 height * width, f64 seconds inside the network, then
  n * height * width float32 logits and n float32 values (for the side to move);
* error reply: ``b"GEVE"``, u32 length, then a UTF-8 message (the network raised; the child keeps
  serving, but the parent stops using it).

The child exits when its stdin closes (the parent ended, or was killed), ignores SIGINT (a Ctrl-C in
a terminal reaches the whole process group; the parent decides), and writes nothing else to stdout.
Any failure on the parent side (the child died, answered late or wrongly) raises
:class:`~gomoku_ai.evaluator.OffloadError`; the search then evaluates in-process and the worker is
not used again.
"""
from __future__ import annotations

import json
import logging
import os
import select
import signal
import struct
import subprocess
import sys
import time
import weakref
from pathlib import Path
from typing import IO, Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..checks import StrKind
from ..evaluator import OffloadError

log = logging.getLogger("pygomoku.evalworker")

#: VmSize of a worker with onnxruntime and the int8 4x32 graph: 173 MB after loading, 190 MB after
#: batches of 12 in a 1 s/move game (numpy alone reserves ~85 MB of address space). GomocupJudge adds
#: the virtual memory of the children to the brain's, so the player starts a worker only where
#: ``max_memory`` leaves this much room.
WORKER_BYTES = 200 * 1024 * 1024
#: The flag by which a frozen engine (no ``-m``) runs :func:`main` instead of the brain.
FROZEN_FLAG = "--eval-worker"

_HELLO, _REQUEST, _REPLY, _ERROR = b"GEVH", b"GEVQ", b"GEVR", b"GEVE"
_REQ_HEAD = struct.Struct("<4sIIII")
_REPLY_HEAD = struct.Struct("<4sIId")
_LEN_HEAD = struct.Struct("<4sI")
_MAX_FLOATS = 64 * 32 * 32 * 32     # a request larger than this is refused (64 boards of 32x32, 32 planes)


class WorkerState(StrKind):
    """Where an :class:`EvalWorker` is: starting (the child loads the network), ready, failed (not
    used again; :attr:`EvalWorker.reason` says why), closed."""

    STARTING = "starting"
    READY = "ready"
    FAILED = "failed"
    CLOSED = "closed"


def worker_command(model: Path, backend: str) -> List[str]:
    """The command line of a worker for the model ``model`` (its basename) on ``backend``."""
    args = ["--model", str(model), "--backend", str(backend)]
    if getattr(sys, "frozen", False):
        return [sys.executable, FROZEN_FLAG, *args]
    return [sys.executable, "-m", "gomoku_ai.net.evalworker", *args]


def _read_exact(stream: IO[bytes], n: int) -> bytes:
    """``n`` bytes from ``stream``; EOFError when it ends first."""
    data = stream.read(n)
    if data is None or len(data) != n:
        raise EOFError(f"stream ended after {0 if data is None else len(data)} of {n} bytes")
    return data


# ---------------------------------------------------------------------------------------- child side
def serve(model: str, backend: str, stdin: IO[bytes], stdout: IO[bytes]) -> int:
    """Load the model and answer requests until ``stdin`` ends (exit status 0), or a request is
    malformed beyond recovery (status 3). The child's ``main``."""
    from .model import load_model
    net = load_model(model, backend=backend, threads=1)
    hello = json.dumps({"name": net.name, "backend": str(net.backend), "pid": os.getpid()}).encode()
    stdout.write(_LEN_HEAD.pack(_HELLO, len(hello)) + hello)
    stdout.flush()
    while True:
        try:
            head = _read_exact(stdin, _REQ_HEAD.size)
        except EOFError:
            return 0
        magic, n, planes, h, w = _REQ_HEAD.unpack(head)
        count = n * planes * h * w
        if magic != _REQUEST or count > _MAX_FLOATS:
            return 3    # out of step with the parent: nothing more can be read safely
        try:
            x = np.frombuffer(_read_exact(stdin, 4 * count), dtype="<f4").reshape(n, planes, h, w)
        except EOFError:
            return 0
        try:
            t = time.perf_counter()
            logits, values = net.forward(x)
            el = time.perf_counter() - t
            out_l = np.ascontiguousarray(logits, dtype="<f4").reshape(n, h * w)
            out_v = np.ascontiguousarray(values, dtype="<f4").reshape(n)
        except Exception as e:  # noqa: BLE001 - reported to the parent, which evaluates in-process
            msg = f"{type(e).__name__}: {e}".encode("utf-8", "replace")
            stdout.write(_LEN_HEAD.pack(_ERROR, len(msg)) + msg)
            stdout.flush()
            continue
        stdout.write(_REPLY_HEAD.pack(_REPLY, n, h * w, el) + out_l.tobytes() + out_v.tobytes())
        stdout.flush()


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m gomoku_ai.net.evalworker --model BASENAME --backend NAME``."""
    import argparse
    ap = argparse.ArgumentParser(prog="evalworker", description="serve a network to a parent process "
                                 "on stdin/stdout (started by the player; not for direct use)")
    ap.add_argument("--model", required=True)
    ap.add_argument("--backend", default="auto")
    a = ap.parse_args(list(sys.argv[1:] if argv is None else argv))
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):   # one malloc arena, as in the brain (virtual memory is counted)
        try:
            import ctypes
            ctypes.CDLL(None).mallopt(-8, 1)
        except (OSError, AttributeError):
            pass
    return serve(a.model, a.backend, sys.stdin.buffer, sys.stdout.buffer)


# --------------------------------------------------------------------------------------- parent side
class PendingBatch:
    """One request in flight; :meth:`result` waits for its reply."""

    def __init__(self, worker: "EvalWorker", n: int, hw: int) -> None:
        self._worker = worker
        self.n = n
        self.hw = hw

    def result(self) -> Tuple[np.ndarray, np.ndarray, float]:
        """(logits (n, H*W) float32, values (n,) float32, seconds inside the child's network).
        Raises :class:`OffloadError` (and fails the worker) when no proper reply comes within
        :attr:`EvalWorker.reply_timeout_s`."""
        return self._worker._receive(self)


class EvalWorker:
    """A child process evaluating one network (see the module docstring).

    ``network`` is the parent's own :class:`~gomoku_ai.net.Network`: the child loads the same model
    files on the same backend, and :meth:`poll` checks its answers on a probe batch against
    ``network`` before the worker is used. ``start_timeout_s``: the child must say hello within this
    (s); ``reply_timeout_s``: each reply within this (s).
    """

    def __init__(self, network: Any, start_timeout_s: float = 20.0, reply_timeout_s: float = 0.5,
                 command: Optional[List[str]] = None) -> None:
        if getattr(network, "basename", None) is None:
            raise ValueError("the network has no model files for a worker to load")
        self.network = network
        self.start_timeout_s = start_timeout_s
        self.reply_timeout_s = reply_timeout_s
        self.command = command or worker_command(network.basename, str(network.backend))
        self.state = WorkerState.STARTING
        self.reason = ""
        self.pid: Optional[int] = None
        self.batches = 0
        self._proc: Optional[subprocess.Popen[bytes]] = None
        self._pending: Optional[PendingBatch] = None
        self._started = 0.0
        self._finalizer: Optional[weakref.finalize] = None

    # -------------------------------------------------------------------------------- lifetime
    def start(self) -> "EvalWorker":
        """Start the child (returns at once; :meth:`poll` says when it is ready)."""
        if self._proc is not None:
            return self
        env = dict(os.environ)
        root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env[var] = "1"
        self._started = time.monotonic()
        try:
            self._proc = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=subprocess.DEVNULL, env=env, bufsize=0)
        except OSError as e:
            self._fail(f"cannot start {self.command[0]}: {e}")
            return self
        self.pid = self._proc.pid
        self._finalizer = weakref.finalize(self, _shutdown, self._proc)
        return self

    def close(self) -> None:
        """Stop the child (closing its stdin ends it; killed if it lingers). Idempotent."""
        if self._finalizer is not None:
            self._finalizer()
        if self.state != WorkerState.FAILED:
            self.state = WorkerState.CLOSED

    @property
    def active(self) -> bool:
        """Starting or ready (not failed, not closed)."""
        return self.state in (WorkerState.STARTING, WorkerState.READY)

    @property
    def failed(self) -> bool:
        """Failed: never used again (:attr:`reason` says why)."""
        return self.state == WorkerState.FAILED

    @property
    def alive(self) -> bool:
        """True while the child process runs."""
        return self._proc is not None and self._proc.poll() is None

    def _fail(self, reason: str) -> None:
        if self.state == WorkerState.FAILED:
            return
        self.state = WorkerState.FAILED
        self.reason = reason
        log.warning("evaluation worker not used: %s", reason)
        if self._finalizer is not None:
            self._finalizer()

    # -------------------------------------------------------------------------------- readiness
    def poll(self) -> bool:
        """True once the worker is ready (and still runs). While it is starting, reads its hello if it has come
        (never blocks for it), then checks a probe batch against the parent's network (one round
        trip, about a millisecond); fails it after ``start_timeout_s`` without a hello."""
        if self.state == WorkerState.READY:
            if self._proc is not None and self._proc.poll() is not None:
                self._fail(f"the worker died (exit status {self._proc.returncode})")
                return False
            return True
        if self.state != WorkerState.STARTING:
            return False
        proc = self._proc
        if proc is None:
            self._fail("not started")
            return False
        assert proc.stdout is not None
        try:
            readable, _, _ = select.select([proc.stdout], [], [], 0)
        except (OSError, ValueError) as e:
            self._fail(f"cannot wait for the worker: {e}")
            return False
        if not readable:
            if proc.poll() is not None:
                self._fail(f"the worker exited with status {proc.returncode} before its hello")
            elif time.monotonic() - self._started > self.start_timeout_s:
                self._fail(f"no hello within {self.start_timeout_s:g} s")
            return False
        try:
            magic, length = _LEN_HEAD.unpack(_read_exact(proc.stdout, _LEN_HEAD.size))
            if magic != _HELLO or length > 4096:
                raise ValueError(f"bad hello {magic!r}")
            hello: Dict[str, Any] = json.loads(_read_exact(proc.stdout, length))
        except EOFError:
            try:
                rc: Optional[int] = proc.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                rc = None
            self._fail(f"the worker exited with status {rc} before its hello" if rc is not None
                       else "the worker closed its output before its hello")
            return False
        except (ValueError, OSError) as e:
            self._fail(f"the worker spoke out of turn while starting ({e})")
            return False
        if hello.get("name") != self.network.name or hello.get("backend") != str(self.network.backend):
            self._fail(f"the worker loaded {hello.get('name')!r} on {hello.get('backend')!r}, not "
                       f"{self.network.name!r} on {self.network.backend}")
            return False
        self.state = WorkerState.READY
        if not self._probe():
            return False
        log.info("evaluation worker ready (pid %s, %.0f ms after start)", self.pid,
                 1000.0 * (time.monotonic() - self._started))
        return True

    def wait_ready(self, timeout_s: float = 30.0) -> bool:
        """Block until :meth:`poll` says ready (True), the worker fails or ``timeout_s`` passes (False).
        For benchmarks and tools; the search itself never waits for a worker."""
        end = time.monotonic() + timeout_s
        while not self.poll():
            if self.failed or time.monotonic() >= end:
                return False
            time.sleep(0.01)
        return True

    def _probe(self) -> bool:
        """Compare the child's answers with the parent's own network on a few positions."""
        rng = np.random.default_rng(7)
        planes = int(self.network.arch.planes)
        x = (rng.random((3, planes, 15, 15)) < 0.2).astype(np.float32)
        x[:, 2] = 1.0
        try:
            logits, values, _ = self.submit(list(x), (15, 15)).result()
        except OffloadError:
            return False
        want_l, want_v = self.network.forward(x)
        err = max(float(np.max(np.abs(logits - np.asarray(want_l).reshape(3, -1)))),
                  float(np.max(np.abs(values - np.asarray(want_v).reshape(3)))))
        if not err <= 1e-4:
            self._fail(f"its answers differ from this process's network by {err:.3g}")
            return False
        return True

    # -------------------------------------------------------------------------------- requests
    def submit(self, items: Sequence[Any], shape: Tuple[int, int]) -> PendingBatch:
        """Send the planes of ``items`` (each (P, H, W) float32; ``shape`` = (H, W)) for evaluation.
        One request at a time: take the :meth:`PendingBatch.result` before the next submit."""
        if self.state != WorkerState.READY:
            raise OffloadError(f"the evaluation worker is {self.state}")
        if self._pending is not None:
            raise OffloadError("a batch is already in flight")
        proc = self._proc
        assert proc is not None and proc.stdin is not None
        x = np.ascontiguousarray(np.stack(list(items)), dtype="<f4")
        n, planes, h, w = x.shape
        if (h, w) != tuple(shape):
            raise ValueError(f"items are {h}x{w}, shape says {shape}")
        try:
            proc.stdin.write(_REQ_HEAD.pack(_REQUEST, n, planes, h, w))
            proc.stdin.write(x.tobytes())
            proc.stdin.flush()
        except (OSError, ValueError) as e:
            self._fail(f"cannot write to the worker: it died? ({e})")
            raise OffloadError(self.reason) from None
        self._pending = PendingBatch(self, n, h * w)
        return self._pending

    def _receive(self, pending: PendingBatch) -> Tuple[np.ndarray, np.ndarray, float]:
        if self._pending is not pending:
            raise OffloadError("not the batch in flight")
        self._pending = None
        proc = self._proc
        if self.state != WorkerState.READY or proc is None or proc.stdout is None:
            raise OffloadError(f"the evaluation worker is {self.state}: {self.reason}")
        try:
            readable, _, _ = select.select([proc.stdout], [], [], self.reply_timeout_s)
            if not readable:
                raise OffloadError(f"no reply within {self.reply_timeout_s:g} s")
            head = _read_exact(proc.stdout, _LEN_HEAD.size)
            if head[:4] == _ERROR:
                _m, length = _LEN_HEAD.unpack(head)
                msg = _read_exact(proc.stdout, min(length, 1 << 16)).decode("utf-8", "replace")
                raise OffloadError(f"the worker could not evaluate: {msg}")
            head += _read_exact(proc.stdout, _REPLY_HEAD.size - _LEN_HEAD.size)
            magic, n, hw, el = _REPLY_HEAD.unpack(head)
            if magic != _REPLY or n != pending.n or hw != pending.hw:
                raise OffloadError(f"reply out of step ({magic!r}, {n}x{hw} for {pending.n}x{pending.hw})")
            body = _read_exact(proc.stdout, 4 * n * (hw + 1))
        except OffloadError as e:
            self._fail(str(e))
            raise
        except (EOFError, OSError, ValueError) as e:
            self._fail(f"the worker died ({e})")
            raise OffloadError(self.reason) from None
        data = np.frombuffer(body, dtype="<f4")
        self.batches += 1
        return (data[:n * hw].reshape(n, hw).astype(np.float32, copy=False),
                data[n * hw:].astype(np.float32, copy=False), float(el))


def _shutdown(proc: "subprocess.Popen[bytes]") -> None:
    """Close the child's stdin (it then exits) and reap it; kill it if it lingers."""
    for stream in (proc.stdin, proc.stdout):
        try:
            if stream is not None:
                stream.close()
        except OSError:
            pass
    try:
        proc.wait(timeout=0.5)
    except subprocess.TimeoutExpired:
        proc.kill()
        try:
            proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            pass


if __name__ == "__main__":
    sys.exit(main())
