"""Rules of five-in-a-row games: the rule set, game outcomes and the Gomocup rule codes.

Colours are plain ints so that they can live in the board's int8 array: ``BLACK`` (1) moves first,
``WHITE`` (2) second; ``EMPTY`` (0) is a free square and ``WALL`` (3) a blocked square (a protocol
``x,y,3`` stone, or the padding around the board).

Renju forbidden-move detection (double-three, double-four, overline for Black) lives in
:mod:`gomoku_ai.renju`; this module only names the rules and their results.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Optional, Tuple

EMPTY = 0
BLACK = 1
WHITE = 2
WALL = 3


def opponent(color: int) -> int:
    """The other colour: BLACK <-> WHITE."""
    return 3 - color


class Rule(enum.Enum):
    """Which lines win.

    FREESTYLE: five or more in a row wins.
    STANDARD: exactly five wins; an overline (six or more) does not win, and is not forbidden.
    RENJU: Black wins with exactly five only; Black's double-three, double-four and overline are
    forbidden (a Black move there loses). White wins with five or more.
    CARO: five or more wins, unless the line is blocked by opponent stones at both ends (the board
    edge does not count as a block).
    """

    FREESTYLE = "freestyle"
    STANDARD = "standard"
    RENJU = "renju"
    CARO = "caro"

    @classmethod
    def parse(cls, text: str) -> "Rule":
        """Parse a rule by name (``freestyle``, ``standard``, ``renju``, ``caro``) or Gomocup code."""
        t = text.strip().lower()
        aliases = {"exact": cls.STANDARD, "exact5": cls.STANDARD, "exactfive": cls.STANDARD,
                   "free": cls.FREESTYLE, "gomoku": cls.FREESTYLE}
        if t in aliases:
            return aliases[t]
        for r in cls:
            if r.value == t:
                return r
        if t.isascii() and t.isdigit():   # a Gomocup code: ASCII digits, never negative
            return rule_from_gomocup(int(t))
        raise ValueError(f"unknown rule {text!r}; expected one of "
                         f"{', '.join(r.value for r in cls)} or a Gomocup INFO rule number")


def rule_from_gomocup(value: int, yixin: bool = False) -> Rule:
    """Decode the value of ``INFO rule`` (PROTOCOL.md section 6).

    The spec's bitmask: 1 = exactly five, 2 = continuous game (ignored), 4 = renju, 8 = caro.
    Yixin-Board sends 2 for renju; pass ``yixin=True`` when talking to it (the brain does so once it
    has seen a ``YX...`` command).
    """
    if value & 4 or (yixin and value == 2):
        return Rule.RENJU
    if value & 8:
        return Rule.CARO
    if value & 1:
        return Rule.STANDARD
    return Rule.FREESTYLE


def rule_to_gomocup(rule: Rule) -> int:
    """The ``INFO rule`` value a manager sends for ``rule`` (caro as Piskvork's 8)."""
    return {Rule.FREESTYLE: 0, Rule.STANDARD: 1, Rule.RENJU: 4, Rule.CARO: 8}[rule]


class Termination(enum.Enum):
    """Why a game ended."""

    FIVE = "five"                 # a winning line was made
    FORBIDDEN = "forbidden"       # renju: Black played a forbidden point and lost
    BOARD_FULL = "board_full"     # draw: no empty square left
    RESIGNATION = "resignation"
    TIME = "time"
    ILLEGAL = "illegal"           # a move on an occupied or off-board square
    CRASH = "crash"
    PROTOCOL = "protocol"         # an engine broke the protocol (garbage, a reply out of turn)
    ADJUDICATION = "adjudication"  # e.g. a move-count limit (draw)


@dataclass(frozen=True)
class Outcome:
    """The result of a finished game.

    ``winner`` is BLACK, WHITE or None for a draw. ``line`` is the flat indices of the winning
    stones (for FIVE) in order along the line, otherwise empty.
    """

    winner: Optional[int]
    termination: Termination
    line: Tuple[int, ...] = ()

    def result(self) -> str:
        """``"1-0"`` (Black won), ``"0-1"`` (White won) or ``"1/2-1/2"``."""
        if self.winner == BLACK:
            return "1-0"
        if self.winner == WHITE:
            return "0-1"
        return "1/2-1/2"
