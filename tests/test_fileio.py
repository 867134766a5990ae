"""Atomic writes keep the old file when writing fails, and give normal permissions."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from gomoku_ai.fileio import atomic_open, atomic_write_bytes, atomic_write_text


def test_replaces_and_leaves_no_temp_file(tmp_path: Path) -> None:
    p = tmp_path / "a.txt"
    atomic_write_text(p, "one\n")
    atomic_write_bytes(p, b"two\n")
    assert p.read_bytes() == b"two\n"
    assert sorted(os.listdir(tmp_path)) == ["a.txt"]


def test_failure_keeps_the_old_file(tmp_path: Path) -> None:
    p = tmp_path / "a.txt"
    atomic_write_text(p, "old\n")
    with pytest.raises(RuntimeError):
        with atomic_open(p, "w") as f:
            f.write("half")
            raise RuntimeError("interrupted")
    assert p.read_text() == "old\n"
    assert sorted(os.listdir(tmp_path)) == ["a.txt"]


def test_permissions_follow_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        atomic_write_text(tmp_path / "b.txt", "x")
    finally:
        os.umask(old)
    assert (tmp_path / "b.txt").stat().st_mode & 0o777 == 0o644
