"""``gomoku play``: a game in the terminal; the UI itself lives in :mod:`tools.tui`.

Moves are typed as ``h8`` (column letter, row counted from the top) or ``7,7`` (0-based x,y as in
the Gomocup protocol); ``help`` lists the commands. With a terminal on both ends the rich /
prompt-toolkit UI runs; with a pipe or file as input, lines are read plainly (scripts, tests).

The ``type=`` functions of the options (:func:`seconds_arg`, :func:`visits_arg`, :func:`size_arg`,
:func:`move_count_arg`) refuse bad values with :class:`argparse.ArgumentTypeError`, so argparse
names the option, prints the reason and exits with status 2 before any game starts; they check
what the in-game commands ``time``, ``visits`` and ``new`` check.
"""
from __future__ import annotations

import argparse
from typing import Any, Callable, Optional, TextIO, TypeVar

from tools.tui.session import parse_move_count, parse_seconds, parse_size, parse_visits

T = TypeVar("T")


def _argument(parse: Callable[[str], T], text: str) -> T:
    try:
        return parse(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def seconds_arg(text: str) -> float:
    """``--time``: engine seconds per move, a positive finite number."""
    return _argument(parse_seconds, text)


def visits_arg(text: str) -> int:
    """``--visits``: engine visits per move, a whole number >= 0 (0: use ``--time``)."""
    return _argument(parse_visits, text)


def size_arg(text: str) -> str:
    """``--size``: ``N`` or ``WxH`` (the text is kept; the board checks the range when the game is
    set up)."""
    _argument(parse_size, text)
    return text


def threads_arg(text: str) -> int:
    """``--threads``: engine threads, a whole number from 1 to 64."""
    def parse(t: str) -> int:
        if not t.strip().isdigit() or not 1 <= int(t) <= 64:
            raise ValueError(f"threads must be a whole number from 1 to 64, not {t!r}")
        return int(t)
    return _argument(parse, text)


def move_count_arg(text: str) -> int:
    """``--max-moves``: a whole number of moves, 1 or more."""
    return _argument(parse_move_count, text)


def run(args: Any, inp: Optional[TextIO] = None, out: Optional[TextIO] = None) -> int:
    from tools.tui.app import run as tui_run
    return tui_run(args, inp=inp, out=out)
