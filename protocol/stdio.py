"""Running the brain as a process: stdin/stdout wiring, logging, and keeping stderr and stray output away
from the protocol stream.

* The protocol stream is a duplicate of file descriptor 1, taken before anything else can write to it; then
  descriptors 1 and 2 are pointed at the log file (or the null device). So a stray ``print``, a Python warning,
  a traceback or a C library's message can never reach the manager (PROTOCOL.md P5: Piskvork and c-gomoku-cli
  read the brain's stderr as protocol lines).
* Logging is off unless asked for: ``--log FILE`` (engine.py) or ``PYGOMOKU_LOG=FILE``; ``PYGOMOKU_LOG=folder``
  logs under ``INFO folder`` in a sub-folder named after the brain, size-capped (PROTOCOL.md section 3).
  Python warnings go to the log, never to stderr; the logging module's last-resort stderr handler is disabled.
* After END (from the reader thread) or EOF the process ends with ``os._exit`` once the output is flushed, so
  no lingering search thread or library can delay the exit.
"""
from __future__ import annotations

import logging
import os
import sys
import threading
from typing import Any, Optional

from gomoku_ai import __version__
from gomoku_ai.shipped import DefaultPlayers

from .brain import Brain
from .dispatch import BRAIN_NAME

log = logging.getLogger("pygomoku.brain")

FOLDER_LOG_BYTES = 2 * 1024 * 1024  #: size cap of the log under INFO folder (two files of half this)


def _flush_logs() -> None:
    for h in list(logging.getLogger().handlers):
        try:
            h.flush()
        except Exception:  # noqa: BLE001
            pass


def configure_logging(path: Optional[str] = None) -> None:
    """Log to ``path`` (append) if given, else nowhere. Python warnings go to the log, never to stderr; the
    logging module's own errors and its last-resort stderr handler are silenced."""
    root = logging.getLogger()
    logging.raiseExceptions = False
    logging.lastResort = None
    root.addHandler(logging.NullHandler())
    if path:
        try:
            h = logging.FileHandler(path, encoding="utf-8")
            h.setFormatter(logging.Formatter("%(asctime)s.%(msecs)03d %(threadName)s %(levelname)s %(message)s",
                                             "%H:%M:%S"))
            root.addHandler(h)
            root.setLevel(logging.DEBUG)
        except OSError:
            pass
    logging.captureWarnings(True)


def folder_logger(folder: str) -> None:
    """Start a size-capped log in ``<folder>/pygomoku/pygomoku.log`` (PROTOCOL.md section 3: the folder is
    shared, so the brain uses a sub-folder named after itself)."""
    from logging.handlers import RotatingFileHandler
    root = logging.getLogger()
    if any(getattr(h, "_pygomoku_folder", False) for h in root.handlers):
        return
    d = os.path.join(folder, BRAIN_NAME)
    os.makedirs(d, exist_ok=True)
    h = RotatingFileHandler(os.path.join(d, f"{BRAIN_NAME}.log"), maxBytes=FOLDER_LOG_BYTES // 2,
                            backupCount=1, encoding="utf-8")
    h.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    h._pygomoku_folder = True  # type: ignore[attr-defined]
    root.addHandler(h)
    root.setLevel(logging.DEBUG)


def _protect_stdio(log_path: Optional[str]) -> Any:
    """Keep the real stdout for the protocol only: duplicate its file descriptor for our replies, then point
    file descriptors 1 and 2 (and so any stray ``print``, warning, traceback or C-library message) at the log
    file, or at the null device. Returns the binary stream for protocol output."""
    try:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:  # noqa: BLE001
            pass
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
        try:
            sink = os.open(log_path, flags, 0o644) if log_path else os.open(os.devnull, flags)
        except OSError:
            sink = os.open(os.devnull, flags)
        proto = os.fdopen(os.dup(1), "wb")
        os.dup2(sink, 1)
        os.dup2(sink, 2)
        os.close(sink)
        return proto
    except Exception:  # noqa: BLE001 - fall back to plain stdout
        return sys.stdout.buffer


def run_stdio(log_path: Optional[str] = None, player_name: Optional[str] = None,
              process_start_ms: Optional[float] = None, model: Optional[str] = None) -> int:
    """Run the brain on this process's stdin/stdout until END or EOF, then exit the process.

    Logging: ``log_path`` (``--log FILE``) or ``$PYGOMOKU_LOG``; ``PYGOMOKU_LOG=folder`` logs under
    ``INFO folder`` instead (size-capped). Without either, nothing is logged anywhere.
    ``model`` (``--model``): the network for every game instead of the shipped one for the rule and size.
    """
    env_log = os.environ.get("PYGOMOKU_LOG", "").strip()
    use_folder = env_log.lower() == "folder"
    if log_path is None and env_log and not use_folder:
        log_path = env_log
    out = _protect_stdio(log_path)
    configure_logging(log_path)
    sys.excepthook = lambda t, v, tb: log.critical("uncaught exception", exc_info=v)
    threading.excepthook = lambda a: log.critical("uncaught exception in %s", a.thread,
                                                  exc_info=a.exc_value)
    log.info("%s %s starting (python %s, pid %d)", BRAIN_NAME, __version__, sys.version.split()[0], os.getpid())
    brain = Brain(sys.stdin.buffer, out, player_factory=DefaultPlayers(player_name, model), hard_exit=True,
                  process_start_ms=process_start_ms, on_folder=folder_logger if use_folder else None)
    code = 0
    try:
        code = brain.run()
    except KeyboardInterrupt:
        code = 0
    except Exception:  # noqa: BLE001
        log.exception("brain crashed")
        code = 1
    brain.writer.close()
    _flush_logs()
    os._exit(code)
