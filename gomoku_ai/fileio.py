"""Atomic file writes: every file the project writes (records, shards, models, logs of state) goes
through here, so that an interruption at any moment leaves either the old file or the new one.

The data goes to a temporary file in the same folder, is flushed and fsynced, then ``os.replace``
moves it over the target. The temporary file gets the permissions a plain ``open`` would give
(0666 less the umask), not ``mkstemp``'s 0600.
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from typing import IO, Any, Iterator, Union

PathLike = Union[str, "os.PathLike[str]"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_open(path: PathLike, mode: str = "wb", **kwargs: Any) -> Iterator[IO[Any]]:
    """A file object for ``path`` that replaces it atomically when the block ends without error
    (``mode`` is ``"wb"`` or ``"w"``; text mode defaults to UTF-8 with ``\\n`` line ends)."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=folder)
    try:
        os.fchmod(fd, 0o666 & ~_umask()) if hasattr(os, "fchmod") else None
        if "b" not in mode:
            kwargs.setdefault("encoding", "utf-8")
            kwargs.setdefault("newline", "\n")
        with os.fdopen(fd, mode, **kwargs) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def atomic_write_bytes(path: PathLike, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically."""
    with atomic_open(path, "wb") as f:
        f.write(data)


def atomic_write_text(path: PathLike, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8) atomically."""
    with atomic_open(path, "w") as f:
        f.write(text)


def read_jsonl(path: PathLike) -> "list[dict]":
    """The JSON objects of a JSON-lines file, one per line; a torn last line (from a crash while
    appending) and non-object lines are skipped. A missing file gives an empty list."""
    import json
    out: "list[dict]" = []
    if not os.path.isfile(path):
        return out
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if isinstance(rec, dict):
                out.append(rec)
    return out
