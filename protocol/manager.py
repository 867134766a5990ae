"""The manager side of the Gomocup "pbrain" protocol: start an engine process, time it, kill it.

:class:`EngineClient` drives one external engine (any command line that speaks the protocol, our own
``engine.py`` included) the way c-gomoku-cli does (docs/PROTOCOL.md sections 4, 7, 8, 9):

* **Start-up.** The process is started in its own session / process group (so the whole tree can be killed),
  with pipes for stdin, stdout and stderr. ``ABOUT`` is the first command; its first reply line (MESSAGE and
  DEBUG lines skipped) is parsed with :func:`protocol.lines.parse_about_reply`.
* **A game.** ``START n`` (``RECTSTART w,h`` for rectangles) must be answered ``OK`` within the start-up
  timeout; then the ``INFO`` lines (``timeout_turn`` only when non-zero, ``timeout_match``, ``max_memory``,
  ``game_type``, ``rule``, options). The same process plays the next game after another ``START`` (no END or
  RESTART between games, as c-gomoku-cli); a process that failed is restarted for the next game.
* **A move.** ``INFO time_left`` then ``BEGIN`` (empty board), ``TURN x,y`` (the engine saw everything but the
  opponent's last move) or a ``BOARD`` block in move order (the side to move's stones ``1``, the other's ``2``).
  The reply must arrive within ``budget + tolerance`` on a monotonic clock, measured from just before the
  request is written; ``MESSAGE`` and ``DEBUG`` lines are collected, empty lines and a stray ``OK`` are ignored,
  an ``ERROR`` line is logged and kept (``MoveReply.errors``) while the move is still awaited, as c-gomoku-cli
  does (a brain answers a preceding INFO it cannot meet that way, and Rapfi answers a command it misread while
  its search winds down with one), and any other line (``UNKNOWN``, ``SUGGEST``, garbage) is a protocol error.
* **Failures** are typed: :class:`EngineTimeout` (no reply in time: the process tree is killed at once),
  :class:`EngineCrashed` (the process exited, closed stdout or its stdin broke), :class:`EngineProtocolError`
  (a reply that is not what was asked for). They are :class:`gomoku_ai.match.PlayerError` subclasses, so the
  referee (:func:`gomoku_ai.match.play_game`, which adds ``IllegalMove`` and ``ForbiddenMove``) scores them as
  any player's failure: each carries its :class:`~gomoku_ai.rules.Termination` (``TIME``, ``CRASH``,
  ``PROTOCOL``) and a human-readable reason, and the game is lost by the offender.
  After any of the first three the client is ``DEAD`` and :meth:`EngineClient.start` starts a fresh process.
* **Dying with the parent** (``die_with_parent=True``, Linux): the engine gets ``SIGKILL`` when the thread that
  started it ends (``prctl(PR_SET_PDEATHSIG)``), so that engines started by a worker process that is killed do
  not outlive it. Only for callers that start engines from a thread that lives as long as they are used (the
  main thread of a tournament worker).
* **Threads.** One reader thread per pipe (stdout and stderr separately). Lines end at LF or CR; bytes that are
  not UTF-8 are logged and replaced, never fatal; an overlong line is cut at ``MAX_LINE_BYTES``. stderr lines
  are logged (``gomoku.manager`` logger) and the last ``stderr_keep`` are kept for crash reports.
* **Never hang.** Every wait has a deadline: writes (non-blocking pipe + ``select``), replies, process exit.

State machine (:class:`EngineState`)::

    STOPPED --start()--> STARTING --ABOUT answered--> IDLE --new_game()--> READY --play()--> THINKING
       ^                                                ^                    ^  |               |
       |                                                |                    |  +--new_game()---+ (reply)
       +------------------ quit() from any state -------+---- any failure -> DEAD --start()--> STARTING
"""
from __future__ import annotations

import enum
import logging
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Deque, Dict, Iterable, List, Optional, Sequence, Tuple

from gomoku_ai.match import PlayerError
from gomoku_ai.rules import Termination
from gomoku_ai.timeman import UNLIMITED

from . import lines as L

log = logging.getLogger("gomoku.manager")

__all__ = [
    "EngineError", "EngineTimeout", "EngineCrashed", "EngineProtocolError", "EngineStateError", "EngineState",
    "MoveReply", "EngineClient", "kill_process_tree", "UNLIMITED",
]

MAX_LINE_BYTES = 1 << 20          #: a longer stdout line is cut there
_POLL_S = 0.05                    #: how often a wait re-checks that the process is alive


# ------------------------------------------------------------------------------------------ errors
class EngineError(PlayerError):
    """A failure that loses the game for the engine that caused it. ``termination`` (a
    :class:`~gomoku_ai.rules.Termination`) names the kind; ``reason`` is the message; ``engine`` the engine's
    name (when known)."""

    termination = Termination.CRASH

    def __init__(self, reason: str, engine: Optional[str] = None) -> None:
        super().__init__(reason, engine)
        self.engine = engine


class EngineTimeout(EngineError):
    """No reply within budget + tolerance (the process tree has been killed)."""

    termination = Termination.TIME


class EngineCrashed(EngineError):
    """The engine exited, closed its output, or could not be written to (or could not be started)."""

    termination = Termination.CRASH


class EngineProtocolError(EngineError):
    """A reply that is not the one asked for: ERROR/UNKNOWN instead of OK or a move, a line that is not a move."""

    termination = Termination.PROTOCOL


class EngineStateError(RuntimeError):
    """A method called in a state that does not allow it (a bug in the caller, not the engine's fault)."""


class EngineState(enum.Enum):
    STOPPED = "stopped"     # no process
    STARTING = "starting"   # process started, waiting for the ABOUT reply
    IDLE = "idle"           # alive, no game
    READY = "ready"         # in a game, waiting for a move request
    THINKING = "thinking"   # a move request is out
    DEAD = "dead"           # failed and killed; start() makes a new process


@dataclass
class MoveReply:
    """A move as the engine sent it: ``x, y`` (not yet checked against the board), the time from writing the
    request to reading the reply, the raw line, and the MESSAGE / DEBUG / ERROR lines that came with it."""

    x: int
    y: int
    elapsed_ms: float
    line: str
    messages: List[str] = field(default_factory=list)
    debug: List[str] = field(default_factory=list)
    errors: List[str] = field(default_factory=list)


# ------------------------------------------------------------------------------------------ processes
def _children_map() -> Dict[int, List[int]]:
    out: Dict[int, List[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for d in names:
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat", "rb") as f:
                data = f.read()
            ppid = int(data[data.rindex(b")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        out.setdefault(ppid, []).append(int(d))
    return out


def _descendants(pid: int) -> List[int]:
    """All descendants of ``pid`` (Linux ``/proc``; empty elsewhere)."""
    kids = _children_map()
    out: List[int] = []
    todo = [pid]
    while todo:
        p = todo.pop()
        for c in kids.get(p, ()):
            if c not in out:
                out.append(c)
                todo.append(c)
    return out


_PR_SET_PDEATHSIG = 1


def _die_with_parent_fn() -> Optional[Callable[[], None]]:
    """A ``preexec_fn`` that asks Linux to SIGKILL the child when the thread that started it ends (None off
    Linux or without a usable libc). Resolved in the parent, so the child only makes the system call."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # pragma: no cover - no libc prctl
        return None
    parent = os.getpid()
    sig = int(signal.SIGKILL)

    def set_pdeathsig() -> None:
        prctl(_PR_SET_PDEATHSIG, sig, 0, 0, 0)
        if os.getppid() != parent:     # the parent died before the request took effect
            os._exit(1)

    return set_pdeathsig


def _spawn(cmd: Sequence[str], cwd: Optional[str], env: Optional[Dict[str, str]],
           die_with_parent: bool) -> "subprocess.Popen[bytes]":
    """Start ``cmd`` with three pipes (unbuffered; stdin non-blocking on POSIX, see ``_send_all``) in its
    own process group (:func:`_popen_kwargs`). OSError / ValueError when it cannot be run."""
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=cwd, env=env, bufsize=0, **_popen_kwargs(die_with_parent))
    assert proc.stdin is not None  # a PIPE
    if os.name == "posix":
        os.set_blocking(proc.stdin.fileno(), False)
    return proc


def _popen_kwargs(die_with_parent: bool) -> Dict[str, Any]:
    """``Popen`` arguments that give the engine its own process group (session on POSIX), so that
    its whole tree can be killed; ``die_with_parent``: see :func:`_die_with_parent_fn`."""
    kwargs: Dict[str, Any] = {}
    if os.name == "posix":
        kwargs["start_new_session"] = True
        fn = _die_with_parent_fn() if die_with_parent else None
        if fn is not None:
            kwargs["preexec_fn"] = fn
    else:  # pragma: no cover
        kwargs["creationflags"] = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)
    return kwargs


def _send_all(fd: int, data: bytes, deadline: float) -> bool:
    """Write ``data`` to the non-blocking pipe ``fd`` (POSIX), waiting for room with ``select``;
    False when ``deadline`` (monotonic s) passes first. OSError (a closed pipe) propagates."""
    import select
    view = memoryview(data)
    while view:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        _, w, _ = select.select([], [fd], [], left)
        if not w:
            continue
        try:
            n = os.write(fd, view)
        except BlockingIOError:
            continue
        view = view[n:]
    return True


def kill_process_tree(proc: "subprocess.Popen[bytes]", wait_s: float = 2.0) -> Optional[int]:
    """SIGKILL the process, its process group and every descendant found; reap it. Returns the exit code
    (None if it could not be reaped within ``wait_s``)."""
    pid = proc.pid
    victims = _descendants(pid) if proc.poll() is None else []
    if os.name == "posix":
        try:
            os.killpg(pid, signal.SIGKILL)  # the group we created with start_new_session
        except (ProcessLookupError, PermissionError, OSError):
            pass
        for p in victims:
            try:
                os.kill(p, signal.SIGKILL)
            except (ProcessLookupError, PermissionError, OSError):
                pass
    try:
        proc.kill()
    except OSError:
        pass
    try:
        return proc.wait(timeout=wait_s)
    except subprocess.TimeoutExpired:
        log.error("process %d did not exit after SIGKILL", pid)
        return None


# ------------------------------------------------------------------------------------------ readers
_EOF = object()


class _Reader(threading.Thread):
    """Reads one pipe to EOF; splits lines at LF or CR; hands each decoded line to ``sink(t, text)``."""

    def __init__(self, fd: int, name: str, sink: Callable[[float, Any], None], engine: str) -> None:
        super().__init__(name=name, daemon=True)
        self.fd = fd
        self.sink = sink
        self.engine = engine
        self.bad_lines = 0

    def _emit(self, raw: bytes) -> None:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            self.bad_lines += 1
            log.warning("%s: %s: bytes that are not UTF-8 replaced: %r", self.engine, self.name, raw[:200])
            text = raw.decode("utf-8", errors="replace")
        self.sink(time.monotonic(), text)

    def run(self) -> None:
        lines = L.LineBuffer(MAX_LINE_BYTES)
        try:
            while True:
                try:
                    chunk = os.read(self.fd, 65536)
                except InterruptedError:
                    continue
                if not chunk:
                    break
                cut = lines.cut
                for raw in lines.feed(chunk):
                    self._emit(raw)
                if lines.cut != cut:
                    log.warning("%s: %s: a line longer than %d bytes was cut", self.engine, self.name,
                                MAX_LINE_BYTES)
            for raw in lines.flush():
                self._emit(raw)
        except OSError:
            pass
        finally:
            self.sink(time.monotonic(), _EOF)


# ------------------------------------------------------------------------------------------ client
class EngineClient:
    """One external engine process (see the module docstring).

    ``cmd`` is the argument list; ``cwd`` and ``env`` are passed to the process (``env`` None: this process's
    environment). ``tolerance_ms`` is added to every move budget; ``startup_timeout_ms`` bounds ABOUT and each
    START's OK; ``move_timeout_ms`` is the budget of a move when no time control limits it (a visit-limited
    engine must still answer some time). ``on_spawn(pid)`` / ``on_reap(pid)`` are called when a process is
    started / gone (a parent process uses them to clean up after a killed worker). ``die_with_parent``: the
    engine is killed by the kernel when the thread that started it ends (Linux; see the module docstring).
    """

    def __init__(self, cmd: Sequence[str], name: Optional[str] = None, cwd: Optional[str] = None,
                 env: Optional[Dict[str, str]] = None, tolerance_ms: float = 1000.0,
                 startup_timeout_ms: float = 10000.0, move_timeout_ms: float = 300000.0,
                 quit_timeout_ms: float = 1000.0, stderr_keep: int = 200,
                 on_spawn: Optional[Callable[[int], None]] = None,
                 on_reap: Optional[Callable[[int], None]] = None, die_with_parent: bool = False,
                 settle_ms: float = 10.0) -> None:
        if not cmd:
            raise ValueError("an engine needs a command")
        self.cmd = [str(c) for c in cmd]
        self.name = name or os.path.basename(self.cmd[-1])
        self.cwd = cwd
        self.env = env
        self.tolerance_ms = float(tolerance_ms)
        self.startup_timeout_ms = float(startup_timeout_ms)
        self.move_timeout_ms = float(move_timeout_ms)
        self.quit_timeout_ms = float(quit_timeout_ms)
        self.on_spawn = on_spawn
        self.on_reap = on_reap
        self.die_with_parent = bool(die_with_parent)
        if settle_ms < 0:
            raise ValueError(f"settle_ms must be >= 0, got {settle_ms}")
        # Some engines (Rapfi) drop or misread a command that arrives within microseconds of their
        # move reply, while their search thread is still winding down: nothing is written to the
        # engine until ``settle_ms`` after its last move reply.
        self.settle_ms = float(settle_ms)
        self._replied_at = 0.0              # time.monotonic() of the last move reply
        self.state = EngineState.STOPPED
        self.proc: Optional["subprocess.Popen[bytes]"] = None
        self.about: Dict[str, str] = {}
        self.starts = 0                     # processes started so far
        self.stderr_tail: Deque[str] = deque(maxlen=stderr_keep)
        self.messages: Deque[str] = deque(maxlen=1000)  # MESSAGE lines of the whole session
        self.last_error: Optional[EngineError] = None
        self.exit_code: Optional[int] = None
        self._q: "queue.Queue[Tuple[float, Any]]" = queue.Queue()
        self._readers: List[_Reader] = []
        self._seen = 0                      # plies of the current game the engine knows about
        self._board_size: Tuple[int, int] = (15, 15)
        self.board_always = False           # always send BOARD (c-gomoku-cli -sendbyboard)
        self._killed: Optional["subprocess.Popen[bytes]"] = None
        # kill() may come from another thread (an interrupted run): it waits while start() spawns the
        # process and its readers, so it never meets a process whose readers are not yet running
        self._life = threading.RLock()

    # ------------------------------------------------------------------ helpers
    def __repr__(self) -> str:
        pid = self.proc.pid if self.proc is not None else None
        return f"EngineClient({self.name!r}, {self.state.value}, pid={pid})"

    @property
    def pid(self) -> Optional[int]:
        return self.proc.pid if self.proc is not None else None

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def _require(self, op: str, *states: EngineState) -> None:
        if self.state not in states:
            raise EngineStateError(f"{self.name}: {op} is not allowed in state {self.state.value} "
                                   f"(allowed: {', '.join(s.value for s in states)})")

    def _stderr_sink(self, t: float, text: Any) -> None:
        if text is _EOF:
            return
        self.stderr_tail.append(text)
        log.info("[%s stderr] %s", self.name, text)

    def _stdout_sink(self, t: float, text: Any) -> None:
        self._q.put((t, text))

    def _settle_stderr(self, timeout_s: float = 0.5) -> None:
        """After an exit, let the stderr reader deliver the last lines (they explain crashes)."""
        for r in self._readers:
            if r.name == "stderr":
                r.join(timeout=timeout_s)

    def _tail(self) -> str:
        if not self.stderr_tail:
            return ""
        return " | stderr: " + " / ".join(list(self.stderr_tail)[-5:])[-500:]

    def _fail(self, exc: EngineError) -> EngineError:
        """Kill the process tree, go DEAD, remember and return ``exc`` (the caller raises it)."""
        self._kill()
        self.state = EngineState.DEAD
        self.last_error = exc
        log.warning("%s: %s (%s)", self.name, exc.termination.value, exc.reason)
        return exc

    def _kill(self) -> None:
        with self._life:
            proc = self.proc
            if proc is None or self._killed is proc:
                return  # never signal a process group twice: once reaped, its id may be reused
            self._killed = proc
            self.exit_code = kill_process_tree(proc)
            self._close_pipes()
        if self.on_reap is not None:
            try:
                self.on_reap(proc.pid)
            except Exception:  # noqa: BLE001 - a callback must not break the cleanup
                log.exception("on_reap failed")

    def _close_pipes(self) -> None:
        proc = self.proc
        if proc is None:
            return
        for f in (proc.stdin, proc.stdout, proc.stderr):
            try:
                if f is not None:
                    f.close()
            except OSError:
                pass
        for r in self._readers:
            r.join(timeout=1.0)
        self._readers = []

    def _write(self, lines: Iterable[str], deadline: float) -> None:
        """Write ``lines`` (each + LF) before ``deadline`` (monotonic s); EngineTimeout / EngineCrashed."""
        proc = self.proc
        data = "".join(line + "\n" for line in lines).encode("utf-8")
        for line in data.decode().splitlines():
            log.debug("%s >> %s", self.name, line)
        if proc is None or proc.stdin is None or proc.stdin.closed:  # closed: killed from another thread
            raise self._fail(EngineCrashed("no process", self.name))
        try:
            fd = proc.stdin.fileno()
            if os.name == "posix":
                if not _send_all(fd, data, deadline):
                    raise self._fail(EngineTimeout("does not read its input (pipe full)", self.name))
            else:  # pragma: no cover - Windows: blocking write
                proc.stdin.write(data)
                proc.stdin.flush()
        except (BrokenPipeError, ConnectionResetError, ValueError, OSError) as e:
            code = proc.poll()
            self._settle_stderr()
            raise self._fail(EngineCrashed(f"cannot write to the engine ({e.__class__.__name__}); "
                                           f"exit code {code}{self._tail()}", self.name)) from None

    def _next_line(self, deadline: float, what: str, limit: str = "") -> Tuple[float, str]:
        """The next stdout line before ``deadline``; EngineTimeout (process killed) or EngineCrashed.
        ``limit`` describes the deadline for the error message."""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise self._fail(EngineTimeout(f"no reply to {what} within {limit or 'the limit'}; killed"
                                               f"{self._tail()}", self.name))
            try:
                t, text = self._q.get(timeout=min(left, _POLL_S * 4))
            except queue.Empty:
                proc = self.proc
                if proc is not None and proc.poll() is not None:
                    # exited; give the reader a moment to deliver what was written before the exit
                    try:
                        t, text = self._q.get(timeout=0.2)
                    except queue.Empty:
                        self._settle_stderr()
                        raise self._fail(EngineCrashed(
                            f"exited with code {proc.returncode} while waiting for {what}{self._tail()}",
                            self.name)) from None
                else:
                    continue
            if text is _EOF:
                proc = self.proc
                code = None
                if proc is not None:
                    try:
                        code = proc.wait(timeout=0.5)
                    except subprocess.TimeoutExpired:
                        code = None
                how = f"exited with code {code}" if code is not None else "closed its output"
                self._settle_stderr()
                raise self._fail(EngineCrashed(f"{how} while waiting for {what}{self._tail()}", self.name))
            log.debug("%s << %s", self.name, text)
            return t, text

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> Dict[str, str]:
        """Start the process and ask ABOUT. Returns the ABOUT fields. EngineCrashed when the command cannot be
        run; EngineTimeout / EngineCrashed when ABOUT is not answered."""
        self._require("start", EngineState.STOPPED, EngineState.DEAD)
        self._q = queue.Queue()
        self._seen = 0
        self.exit_code = None
        with self._life:
            try:
                self.proc = _spawn(self.cmd, self.cwd, self.env, self.die_with_parent)
            except (OSError, ValueError) as e:
                self.proc = None
                self.state = EngineState.DEAD
                self.last_error = EngineCrashed(f"cannot start {self.cmd!r}: {e}", self.name)
                raise self.last_error from None
            self.starts += 1
            if self.on_spawn is not None:
                try:
                    self.on_spawn(self.proc.pid)
                except Exception:  # noqa: BLE001
                    log.exception("on_spawn failed")
            assert self.proc.stdout is not None and self.proc.stderr is not None  # PIPEs
            self._readers = [
                _Reader(self.proc.stdout.fileno(), "stdout", self._stdout_sink, self.name),
                _Reader(self.proc.stderr.fileno(), "stderr", self._stderr_sink, self.name),
            ]
            for r in self._readers:
                r.start()
        self.state = EngineState.STARTING
        log.info("%s: started pid %d: %s", self.name, self.proc.pid, " ".join(self.cmd))
        deadline = time.monotonic() + self.startup_timeout_ms / 1000.0
        self._write(["ABOUT"], deadline)
        while True:
            _, text = self._next_line(deadline, "ABOUT", f"{self.startup_timeout_ms:.0f} ms (start-up)")
            rep = L.classify_reply(text)
            if rep.kind in (L.ReplyKind.MESSAGE, L.ReplyKind.DEBUG) or not text.strip():
                continue
            break
        self.about = L.parse_about_reply(text)
        log.info("%s: ABOUT %s", self.name, L.clean_text(text)[:300])
        with self._life:
            if self._killed is self.proc:  # kill() from another thread after ABOUT was answered
                raise self._fail(EngineCrashed("killed while starting", self.name))
            self.state = EngineState.IDLE
        return self.about

    def ensure_started(self) -> None:
        """Start (or restart after a failure) when there is no live process."""
        if self.state in (EngineState.STOPPED, EngineState.DEAD):
            self.start()
        elif not self.alive:
            self.state = EngineState.DEAD
            self._kill()
            self.start()

    def _settle(self) -> None:
        """Sleep until ``settle_ms`` have passed since the engine's last move reply."""
        wait = self._replied_at + self.settle_ms / 1000.0 - time.monotonic()
        if wait > 0:
            time.sleep(wait)

    def new_game(self, width: int, height: int, infos: Sequence[Tuple[str, Any]] = ()) -> None:
        """``START`` (or ``RECTSTART``), wait for OK, then send the ``INFO`` lines ``infos`` in order."""
        self._require("new_game", EngineState.IDLE, EngineState.READY)
        self._settle()
        deadline = time.monotonic() + self.startup_timeout_ms / 1000.0
        cmd = L.format_start(width) if width == height else L.format_rectstart(width, height)
        self._write([cmd], deadline)
        while True:
            _, text = self._next_line(deadline, cmd, f"{self.startup_timeout_ms:.0f} ms (start-up)")
            rep = L.classify_reply(text)
            if rep.kind in (L.ReplyKind.MESSAGE, L.ReplyKind.DEBUG) or not text.strip():
                if rep.kind is L.ReplyKind.MESSAGE:
                    self.messages.append(rep.text)
                continue
            if rep.kind is L.ReplyKind.OK:
                break
            if rep.kind is L.ReplyKind.MOVE:  # a late move of the previous game: not an answer to START
                log.warning("%s: move %r while waiting for OK to %s (ignored)", self.name, text, cmd)
                continue
            raise self._fail(EngineProtocolError(f"answered {L.clean_text(text)[:120]!r} to {cmd} "
                                                 "instead of OK", self.name))
        self._board_size = (width, height)
        self._seen = 0
        self.state = EngineState.READY
        lines = [L.format_info(k, v) for k, v in infos]
        if lines:
            self._write(lines, time.monotonic() + self.startup_timeout_ms / 1000.0)

    def info(self, key: str, value: Any) -> None:
        """Send one ``INFO key value`` (never answered)."""
        self._require("info", EngineState.IDLE, EngineState.READY)
        self._settle()
        self._write([L.format_info(key, value)], time.monotonic() + self.startup_timeout_ms / 1000.0)

    def request_lines(self, moves: Sequence[Tuple[int, int]]) -> List[str]:
        """The request for the position after ``moves`` (Black first): BEGIN, TURN or a BOARD block."""
        if not moves:
            return ["BEGIN"]
        if not self.board_always and self._seen == len(moves) - 1:
            return [L.format_turn(*moves[-1])]
        n = len(moves)
        # the side to move owns the stones of its parity; the last stone is always the opponent's (F=2)
        stones = [(x, y, 1 if (n - i) % 2 == 0 else 2) for i, (x, y) in enumerate(moves)]
        return L.format_board(stones)

    def play(self, moves: Sequence[Tuple[int, int]], time_left_ms: Optional[int] = None,
             budget_ms: Optional[float] = None) -> MoveReply:
        """Ask for a move in the position after ``moves``.

        ``time_left_ms`` is sent as ``INFO time_left`` (None: UNLIMITED). The reply must arrive within
        ``budget_ms + tolerance_ms`` (``budget_ms`` None: ``move_timeout_ms``) of writing the request; after that
        the process tree is killed and EngineTimeout raised. The move is not checked against the board.
        """
        self._require("play", EngineState.READY)
        # a budget may be negative (a game clock already below zero, within the tolerance)
        budget = self.move_timeout_ms if budget_ms is None else float(budget_ms)
        tl = UNLIMITED if time_left_ms is None else int(time_left_ms)
        req = self.request_lines(moves)
        self._settle()
        self._write([L.format_info("time_left", tl)],
                    time.monotonic() + max(0.0, budget + self.tolerance_ms) / 1000.0)
        # drop anything left over from before this request (late lines of a previous move are not replies)
        while True:
            try:
                t, text = self._q.get_nowait()
            except queue.Empty:
                break
            if text is _EOF:
                self._q.put((t, text))
                break
            kind = L.classify_reply(text).kind
            level = logging.DEBUG if kind in (L.ReplyKind.MESSAGE, L.ReplyKind.DEBUG) else logging.WARNING
            log.log(level, "%s: unsolicited line before %s: %r", self.name, req[0], text[:200])
        self.state = EngineState.THINKING
        t0 = time.monotonic()
        deadline = t0 + max(0.0, budget + self.tolerance_ms) / 1000.0
        self._write(req, deadline)
        messages: List[str] = []
        debug: List[str] = []
        errors: List[str] = []
        while True:
            t, text = self._next_line(deadline, req[0], f"{budget + self.tolerance_ms:.0f} ms (budget "
                                      f"{budget:.0f} + tolerance {self.tolerance_ms:.0f})")
            rep = L.classify_reply(text)
            if not text.strip():
                continue
            if rep.kind is L.ReplyKind.MESSAGE:
                messages.append(rep.text)
                self.messages.append(rep.text)
                continue
            if rep.kind is L.ReplyKind.DEBUG:
                debug.append(rep.text)
                continue
            if rep.kind is L.ReplyKind.OK:
                log.warning("%s: stray OK while waiting for a move (ignored)", self.name)
                continue
            if rep.kind is L.ReplyKind.ERROR:
                # not the move: still awaited within the same deadline (an engine that never sends
                # it times out as any other)
                log.warning("%s: %r while waiting for a move to %s (kept, still waiting)", self.name,
                            L.clean_text(text)[:200], req[0])
                errors.append(L.clean_text(text))
                continue
            if rep.kind is L.ReplyKind.MOVE and rep.move is not None:
                x, y = rep.move
                if L.parse_move_reply_strict(text) is None:
                    log.warning("%s: move %r is not in the strict x,y form (accepted)", self.name, text)
                self._seen = len(moves) + 1
                self.state = EngineState.READY
                self._replied_at = time.monotonic()
                return MoveReply(x, y, (t - t0) * 1000.0, text, messages, debug, errors)
            raise self._fail(EngineProtocolError(
                f"answered {L.clean_text(text)[:120]!r} to {req[0]} instead of a move", self.name))

    def quit(self) -> Optional[int]:
        """``END``, wait up to ``quit_timeout_ms`` for the exit, then kill the tree. Returns the exit code."""
        proc = self.proc
        if proc is None:
            self.state = EngineState.STOPPED
            return None
        if proc.poll() is None and self.state not in (EngineState.DEAD,):
            self._settle()
            try:
                self._write(["END"], time.monotonic() + 0.2)
            except EngineError:
                pass
            try:
                proc.wait(timeout=self.quit_timeout_ms / 1000.0)
            except subprocess.TimeoutExpired:
                log.warning("%s: still running %d ms after END; killed", self.name, self.quit_timeout_ms)
        self._kill()
        self.state = EngineState.STOPPED
        return self.exit_code

    def kill(self, reason: str = "killed by the manager") -> None:
        """Kill the process tree now and go DEAD (without an error of the engine's own)."""
        if self.proc is not None:
            log.info("%s: %s", self.name, reason)
            self._kill()
        self.state = EngineState.DEAD if self.proc is not None else EngineState.STOPPED

    def __enter__(self) -> "EngineClient":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.quit()

