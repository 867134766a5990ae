"""``gomoku --version`` prints what ``engine.py --version`` prints."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_version_is_the_engines():
    """``gomoku --version`` and ``engine.py --version`` print the same line, built in one place."""
    from gomoku_ai import version_string
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    cli = subprocess.run([sys.executable, "-m", "tools.cli", "--version"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=60)
    brain = subprocess.run([sys.executable, str(ROOT / "engine.py"), "--version"], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=60)
    assert (cli.returncode, brain.returncode) == (0, 0), (cli.stderr, brain.stderr)
    assert cli.stdout == brain.stdout == version_string() + "\n"
    assert re.fullmatch(r"pygomoku \d+\.\d+\.\d+", version_string())
