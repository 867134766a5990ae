"""``gomoku play`` in a real pseudo-terminal: the prompt-toolkit path, typed keys, the screen read back.

Uses the standard library's ``pty`` (no tmux or pexpect needed). The engine is the heuristic
evaluator with a handful of visits so the test is quick.
"""
from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pty = pytest.importorskip("pty", reason="pseudo-terminals are POSIX only")

ROOT = Path(__file__).resolve().parents[1]
ANSI = re.compile(rb"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][A-Za-z0-9]|\x1b[=>]|\r")


class Terminal:
    """A child process on an 80x24 pseudo-terminal; ``screen`` is everything it printed, plain."""

    def __init__(self, args: list) -> None:
        master, slave = pty.openpty()
        import fcntl
        import struct
        import termios
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONUNBUFFERED", "NO_COLOR")}
        env.update(TERM="xterm-256color", COLUMNS="80", LINES="24")
        self.proc = subprocess.Popen(args, stdin=slave, stdout=slave, stderr=slave, cwd=ROOT,
                                     env=env, start_new_session=True, close_fds=True)
        os.close(slave)
        self.fd = master
        self.raw = b""

    def read_until(self, pattern: str, timeout: float = 30.0, since: int = 0) -> str:
        """Read until ``pattern`` appears in the output after byte offset ``since``."""
        deadline = time.monotonic() + timeout
        rx = re.compile(pattern)
        while time.monotonic() < deadline:
            text = ANSI.sub(b"", self.raw[since:]).decode("utf-8", "replace")
            if rx.search(text):
                return text
            r, _, _ = select.select([self.fd], [], [], 0.2)
            if r:
                try:
                    chunk = os.read(self.fd, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                self.raw += chunk
        raise AssertionError(f"{pattern!r} did not appear; screen tail:\n{self.screen[-2000:]}")

    @property
    def screen(self) -> str:
        return ANSI.sub(b"", self.raw).decode("utf-8", "replace")

    def resize(self, rows: int, cols: int) -> None:
        """Set the window size and tell the child, as a terminal emulator does (the child has no
        controlling terminal here, so the kernel does not send SIGWINCH itself)."""
        import fcntl
        import struct
        import termios
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        os.killpg(self.proc.pid, signal.SIGWINCH)

    def last_screen(self, since: int = 0) -> list:
        """The lines drawn since the last clear-screen after byte offset ``since`` (plain text)."""
        raw = self.raw[since:]
        start = raw.rfind(b"\x1b[2J")
        return ANSI.sub(b"", raw[start:]).decode("utf-8", "replace").split("\n")

    def type(self, text: str) -> None:
        os.write(self.fd, text.encode())

    def close(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)
        os.close(self.fd)


def test_play_in_a_real_terminal() -> None:
    t = Terminal([sys.executable, "-m", "tools.cli", "play", "--model", "heuristic",
                  "--visits", "30", "--size", "15"])
    try:
        screen = t.read_until(r"Black to move", 60)
        assert " a b c d e f g h i j k l m n o" in screen        # the board with its coordinates
        mark = len(t.raw)
        t.type("h8\r")
        # the engine answers, and it is our turn again at move 3
        screen = t.read_until(r"Move 3 .*Black to move", 60, since=mark)
        assert "●" in screen or "X" in screen
        mark = len(t.raw)
        t.type("zz99\r")                      # a typo: a message, and the game goes on
        t.read_until(r"(?i)not a move|cannot|unknown|did you mean", 20, since=mark)
        t.type("quit\r")
        t.proc.wait(timeout=20)
        assert t.proc.returncode == 0
    finally:
        t.close()


def test_a_resize_redraws_the_frame_in_a_compact_layout() -> None:
    t = Terminal([sys.executable, "-m", "tools.cli", "play", "--model", "heuristic",
                  "--visits", "30", "--size", "15"])
    try:
        t.read_until(r"Black to move(.|\n)*› ", 60)        # the prompt is up
        mark = len(t.raw)
        t.resize(20, 60)
        # the whole frame comes again (not just the prompt line), drawn for 60 columns
        t.read_until(r" a b c d e f g h i j k l m n o.*\n(.*\n)+.*Black to move", 30, since=mark)
        t.read_until(r"› ", 30, since=mark)
        lines = t.last_screen(mark)
        assert lines[0].lstrip().startswith("a b c d e f g h i j k l m n o")
        assert max(len(line.rstrip()) for line in lines) <= 60
        mark = len(t.raw)
        t.type("time -3\r")                   # an answer at 60x20: still on the screen
        t.read_until(r"time SECONDS.*\n(.*\n)*.*› ", 30, since=mark)
        lines = t.last_screen(mark)
        assert lines[0].lstrip().startswith("a b c d e f g h i j k l m n o")
        assert len(lines) <= 20                # frame and prompt fit: nothing scrolled off
        t.type("quit\r")
        t.proc.wait(timeout=20)
        assert t.proc.returncode == 0
    finally:
        t.close()
