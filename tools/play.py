"""``gomoku play``: a game in the terminal; the UI itself lives in :mod:`tools.tui`.

Moves are typed as ``h8`` (column letter, row counted from the top) or ``7,7`` (0-based x,y as in
the Gomocup protocol); ``help`` lists the commands. With a terminal on both ends the rich /
prompt-toolkit UI runs; with a pipe or file as input, lines are read plainly (scripts, tests).
"""
from __future__ import annotations

from typing import Any, Optional, TextIO

from tools.tui.session import parse_size  # noqa: F401  (kept importable from here)


def run(args: Any, inp: Optional[TextIO] = None, out: Optional[TextIO] = None) -> int:
    from tools.tui.app import run as tui_run
    return tui_run(args, inp=inp, out=out)
