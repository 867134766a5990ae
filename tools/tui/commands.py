"""The commands of the terminal UI: names, aliases, help lines, parsing and Tab completion."""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from .session import looks_like_move

if TYPE_CHECKING:
    from prompt_toolkit.completion import Completer  # imported lazily at run time


@dataclass(frozen=True)
class Command:
    name: str
    args: str
    help: str
    aliases: Tuple[str, ...] = ()


COMMANDS: Tuple[Command, ...] = (
    Command("h8 / 7,7", "", "play a move: column letter + row from the top, or x,y from 0"),
    Command("undo", "", "take back your last move (and the engine's reply)", ("u", "takeback")),
    Command("redo", "", "replay a move taken back"),
    Command("hint", "", "ask the engine for a move (Enter then plays it)"),
    Command("analyze", "", "toggle the overlay: heatmap, principal variation, win-rate bar",
            ("analyse", "analysis", "heat", "overlay")),
    Command("new", "[SIZE] [RULE]", "start a new game (e.g. 'new 20 renju')", ("restart",)),
    Command("swap", "", "swap sides with the engine"),
    Command("play", "black|white|both|none", "who you are: a colour, both (two humans) or none",
            ("side",)),
    Command("watch", "", "let the engine play both sides (Ctrl-C pauses)"),
    Command("go", "", "resume watching / let the engine move now", ("continue", "resume")),
    Command("next", "", "review: step forward (Enter on an empty line does too)", ("n",)),
    Command("prev", "", "review: step back", ("p", "previous", "back")),
    Command("first", "", "review: go to the start", ("start",)),
    Command("last", "", "review: go to the last move", ("end",)),
    Command("goto", "N", "review: go to move N"),
    Command("save", "FILE", "save the game (.sgf or .psq) or the board as an image (.svg)"),
    Command("load", "FILE [N]", "load game N of a .sgf/.psq file and review it", ("open",)),
    Command("time", "SECONDS", "engine time per move"),
    Command("visits", "N", "engine visits per move (0: use the time)"),
    Command("resign", "", "give up this game"),
    Command("help", "", "this help", ("?",)),
    Command("quit", "", "leave", ("exit", "q")),
)

_BY_NAME: Dict[str, str] = {}
for _c in COMMANDS:
    if " " in _c.name:
        continue
    _BY_NAME[_c.name] = _c.name
    for _a in _c.aliases:
        _BY_NAME[_a] = _c.name

COLORS = ("black", "white", "both", "none")


HELP: Tuple[Tuple[str, str], ...] = (
    ("h8 / 7,7", "play a move"),
    ("undo / redo", "take back / replay"),
    ("hint", "the engine's suggestion"),
    ("analyze", "heatmap + PV overlay"),
    ("new [SIZE RULE]", "new game: new 20 renju"),
    ("swap", "swap colours"),
    ("play COLOR", "black white both none"),
    ("watch / go", "engine plays / resume"),
    ("next / Enter", "review: step forward"),
    ("prev", "review: step back"),
    ("first / last", "review: start / end"),
    ("goto N", "review: after move N"),
    ("save FILE", ".sgf .psq or .svg image"),
    ("load FILE [N]", "review a saved game"),
    ("time SEC", "engine time per move"),
    ("visits N", "engine visits per move"),
    ("resign", "give up this game"),
    ("help / quit", "this help / leave"),
)


def help_rows() -> List[Tuple[str, str]]:
    return list(HELP)


@dataclass
class Parsed:
    """A line of input: a move (``move`` text), a command (``name``, ``args``) or an error."""

    kind: str                     # "move", "command", "empty", "unknown"
    name: str = ""
    args: Tuple[str, ...] = ()
    text: str = ""
    suggestion: Optional[str] = None


def parse_line(line: str) -> Parsed:
    text = line.strip()
    if not text:
        return Parsed("empty")
    if looks_like_move(text):
        return Parsed("move", text=text)
    words = text.split()
    head = words[0].lower()
    if head in _BY_NAME:
        return Parsed("command", _BY_NAME[head], tuple(words[1:]), text)
    close = difflib.get_close_matches(head, list(_BY_NAME), n=1, cutoff=0.6)
    return Parsed("unknown", text=text, suggestion=_BY_NAME[close[0]] if close else None)


def command_words() -> List[str]:
    return sorted(_BY_NAME)


def make_completer() -> Completer:
    """Tab completion: command names, colours after 'play', files after 'save'/'load'."""
    from prompt_toolkit.completion import (NestedCompleter, PathCompleter, WordCompleter)
    files = PathCompleter(expanduser=True)
    sizes_rules = WordCompleter(["15", "19", "20", "freestyle", "standard", "renju", "caro"])
    spec: Dict[str, object] = {}
    for c in COMMANDS:
        if " " in c.name:
            continue
        sub: object = None
        if c.name in ("save", "load"):
            sub = files
        elif c.name == "play":
            sub = WordCompleter(list(COLORS))
        elif c.name == "new":
            sub = sizes_rules
        spec[c.name] = sub
    return NestedCompleter.from_nested_dict(spec)
