"""Shared test helpers: an engine subprocess driven like a manager (with timeouts, never blocking forever)."""
from __future__ import annotations

import importlib.util
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Iterator, List, Optional, Tuple

import pytest

#: Ray is installed (the ``distributed`` extra); checked without importing it (an import costs seconds)
HAVE_RAY = importlib.util.find_spec("ray") is not None
RAY_REASON = "needs Ray: pip install -e '.[distributed]'"
needs_ray = pytest.mark.skipif(not HAVE_RAY, reason=RAY_REASON)

#: The modules whose tests start or join a local Ray instance. Under pytest-xdist (``make test`` runs two
#: workers) they all go to one worker (``--dist loadgroup``): a second Ray started beside the first is
#: found by ``ray.init`` as "an existing cluster" and refused (so a module missing from this list fails
#: loudly, with that message, rather than passing by chance).
RAY_MODULES = frozenset({"test_distributed_selfplay", "test_distributed_tournament", "test_distributed_training",
                         "test_ray_cluster", "test_workers"})


def pytest_collection_modifyitems(config: pytest.Config, items: List[pytest.Item]) -> None:
    """Put every test of :data:`RAY_MODULES` in the xdist group ``ray`` (one worker runs them in turn)."""
    for item in items:
        if item.path.stem in RAY_MODULES:
            item.add_marker(pytest.mark.xdist_group("ray"))


ROOT = Path(__file__).resolve().parents[1]
ENGINE = ROOT / "engine.py"


class EngineProcess:
    """``python engine.py`` as a subprocess, with PYTHONUNBUFFERED *unset* (the dev machines set it, which
    hides missing flushes: PROTOCOL.md P1). Output lines are collected by a reader thread with their arrival
    time; every line is checked to end with ``\\n`` and to have no ``\\r`` and no trailing space (check 38)."""

    def __init__(self, cwd: Path, env: Optional[dict] = None, args: Tuple[str, ...] = ()) -> None:
        e = dict(os.environ)
        for k in ("PYTHONUNBUFFERED", "PYGOMOKU_PLAYER", "PYGOMOKU_LOG", "PYGOMOKU_STUCK_S"):
            e.pop(k, None)
        e.update(env or {})
        self.t_start = time.perf_counter()
        self.proc = subprocess.Popen([sys.executable, str(ENGINE), *args], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(cwd), env=e,
                                     bufsize=0)
        self.lines: "queue.Queue[Tuple[float, bytes]]" = queue.Queue()
        self.raw = bytearray()
        self.err = bytearray()
        self.bad_lines: List[bytes] = []
        self._t_out = threading.Thread(target=self._pump_out, daemon=True)
        self._t_err = threading.Thread(target=self._pump_err, daemon=True)
        self._t_out.start()
        self._t_err.start()

    def _pump_out(self) -> None:
        buf = b""
        fd = self.proc.stdout.fileno()
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            t = time.perf_counter()
            self.raw += chunk
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                if b"\r" in line or line.endswith(b" ") or not line:
                    self.bad_lines.append(line)
                self.lines.put((t, line))
        if buf:
            self.bad_lines.append(buf)  # a final line without "\n"
            self.lines.put((time.perf_counter(), buf))

    def _pump_err(self) -> None:
        fd = self.proc.stderr.fileno()
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            self.err += chunk

    # -------------------------------------------------------------- talking
    def send(self, *lines: str, eol: str = "\n") -> float:
        """Write the lines at once; returns the time just before writing."""
        data = "".join(line + eol for line in lines).encode()
        t = time.perf_counter()
        self.proc.stdin.write(data)
        self.proc.stdin.flush()
        return t

    def read_timed(self, timeout: float = 5.0) -> Tuple[float, str]:
        try:
            t, line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no output within {timeout} s (stderr: {bytes(self.err)[:500]!r})") from None
        return t, line.decode("utf-8", errors="replace")

    def read(self, timeout: float = 5.0) -> str:
        return self.read_timed(timeout)[1]

    def reply(self, timeout: float = 5.0) -> str:
        """The next line that is not MESSAGE/DEBUG."""
        return self.reply_timed(timeout)[1]

    def reply_timed(self, timeout: float = 5.0) -> Tuple[float, str]:
        end = time.perf_counter() + timeout
        while True:
            t, line = self.read_timed(max(0.01, end - time.perf_counter()))
            if not line.upper().startswith(("MESSAGE ", "DEBUG ")):
                return t, line

    def move(self, timeout: float = 5.0) -> Tuple[int, int]:
        line = self.reply(timeout)
        assert_move_line(line)
        x, y = line.split(",")
        return int(x), int(y)

    def no_output(self, wait: float = 0.3) -> None:
        try:
            t, line = self.lines.get(timeout=wait)
        except queue.Empty:
            return
        raise AssertionError(f"unexpected output {line!r}")

    def sync(self, eol: str = "\n", timeout: float = 5.0) -> None:
        """Send ABOUT and check that the very next line is the ABOUT answer (so nothing was printed before)."""
        self.send("ABOUT", eol=eol)
        line = self.read(timeout)
        assert line.startswith('name="'), f"expected the ABOUT reply, got {line!r}"

    def wait_exit(self, timeout: float) -> Optional[int]:
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=5)
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                f.close()
            except OSError:
                pass
        self._t_out.join(timeout=2)
        self._t_err.join(timeout=2)


def walk_nodes(root) -> Iterator:
    """Every node of an MCTS tree below ``root`` (itself first), depth first, children in order of
    their index reversed: the one order two trees of the same shape are compared in."""
    stack = [root]
    while stack:
        nd = stack.pop()
        yield nd
        stack.extend(c for c in nd.children if c is not None)


def assert_move_line(line: str) -> None:
    import re
    assert re.fullmatch(r"\d+,\d+", line), f"not a move line: {line!r}"


@pytest.fixture
def engine(tmp_path):
    """Factory: ``engine(env={...})`` starts an engine in a scratch working directory; all are killed at
    teardown, which also checks that stdout had only well-formed lines and stderr stayed empty."""
    procs: List[EngineProcess] = []

    def start(env: Optional[dict] = None, args: Tuple[str, ...] = ()) -> EngineProcess:
        p = EngineProcess(tmp_path, env, args)
        procs.append(p)
        return p

    yield start
    for p in procs:
        p.close()
    for p in procs:
        assert not p.bad_lines, f"malformed output lines: {p.bad_lines[:5]!r}"
        assert not p.err, f"stderr was not empty: {bytes(p.err)[:500]!r}"


@pytest.fixture
def time_bound(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail a test (instead of hanging the suite) once it runs past its module's ``ALARM_S`` seconds
    (SIGALRM; the module opts in with ``pytest.mark.usefixtures("time_bound")``)."""
    limit = int(getattr(request.module, "ALARM_S"))

    def expire(signum, frame):
        raise TimeoutError(f"test ran past {limit} s")
    old = signal.signal(signal.SIGALRM, expire)
    signal.alarm(limit)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
