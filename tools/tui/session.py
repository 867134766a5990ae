"""The state of one game in the terminal UI, without any input or output.

A :class:`GameSession` holds the board, a redo stack (``future``: moves taken back with ``undo`` or
``prev`` that ``next`` replays, as when stepping through a loaded game), who is human, how the game
ended (a five, a full board, a resignation or the move limit), the move times and the latest engine
analysis. Moves typed by a person go through :meth:`GameSession.check_move`, which turns every kind
of bad input into a :class:`MoveError` with a message meant for that person.
"""
from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Dict, Iterable, List, Optional, Sequence, Set, Tuple

import numpy as np

from gomoku_ai import movegen
from gomoku_ai.board import Board, parse_move
from gomoku_ai.records import GameRecord, GameResult, read_record, save_record
from gomoku_ai.rules import BLACK, EMPTY, WHITE, Outcome, Rule, Termination, opponent

if TYPE_CHECKING:   # the search is imported only when a limit is built (`gomoku --help` parses with this module)
    from gomoku_ai.player import Limit

COLOR_NAME = {BLACK: "Black", WHITE: "White"}

_MOVE_LIKE = re.compile(r"^\s*(?:[a-zA-Z]\s*-?\d+|-?\d+\s*[,\s]\s*-?\d+)\s*$")


class MoveError(ValueError):
    """A typed move that cannot be played; ``str()`` is the message for the player."""


def looks_like_move(text: str) -> bool:
    """True for ``h8``, ``H 8``, ``7,7`` and ``7 7`` shaped input (range not checked)."""
    return bool(_MOVE_LIKE.match(text))


_SIZE = re.compile(r"^(\d+)(?:x(\d+))?$")


def parse_size(text: str) -> Tuple[int, int]:
    """``15`` -> (15, 15); ``20x15`` -> (20, 15) (width x height). ValueError, with a message for the
    player, when the text is not of that shape (whether the board can be that big is the board's to
    say: :class:`~gomoku_ai.board.BoardSizeError`)."""
    m = _SIZE.match(text.strip().lower().replace("×", "x").replace(" ", ""))
    if m is None:
        raise ValueError(f"'{text}' is not a board size: give N or WxH, e.g. 15 or 20x15")
    w = int(m.group(1))
    return w, int(m.group(2)) if m.group(2) else w


def parse_seconds(text: str) -> float:
    """A time per move in seconds: a positive, finite number (``2``, ``0.5``). ValueError with a
    message for the player otherwise."""
    try:
        sec = float(text)
    except ValueError:
        sec = math.nan
    if not (math.isfinite(sec) and sec > 0):
        raise ValueError(f"'{text}' is not a positive number of seconds (e.g. 2 or 0.5)")
    return sec


def parse_visits(text: str) -> int:
    """A number of visits per move: a whole number, 0 or more (0: the time per move applies instead).
    ValueError with a message for the player otherwise."""
    try:
        n = int(text)
    except ValueError:
        n = -1
    if n < 0:
        raise ValueError(f"'{text}' is not a number of visits: a whole number, 0 or more "
                         "(0: use the time per move)")
    return n


def parse_move_count(text: str) -> int:
    """A number of moves (``--max-moves``): a whole number, 1 or more. ValueError with a message for
    the player otherwise."""
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise ValueError(f"'{text}' is not a number of moves: a whole number, 1 or more")
    return n


def column_name(x: int) -> str:
    """The letter of column ``x`` (a-z); past z (boards wider than 26) the last digit of x, as
    such squares can only be typed as ``x,y``."""
    return chr(ord("a") + x) if x < 26 else str(x % 10)


@dataclass
class Analysis:
    """What one search (or the evaluator's policy) says about one position.

    ``key`` identifies the position (hash and ply); ``heat`` is a dense (W*H,) array of visit
    shares (or policy probabilities) in [0, 1]; ``pv`` the principal variation from the position;
    ``black_winrate`` Black's winning chance by the engine; ``top`` (move, share, winrate for the
    side to move) for the best few moves; ``source`` is "search", "policy" or a tactic's name.
    """

    key: Tuple[int, int]
    heat: Optional[np.ndarray] = None
    pv: List[int] = field(default_factory=list)
    black_winrate: Optional[float] = None
    top: List[Tuple[int, float, Optional[float]]] = field(default_factory=list)
    source: str = "search"
    visits: int = 0
    move: Optional[int] = None


@dataclass
class DroppedLine:
    """The moves a new move took off the redo stack: ``key`` is the position where the two lines
    split (as :meth:`GameSession.key`: hash and ply), ``moves`` and ``times`` are in redo-stack order
    (the next move last)."""

    key: Tuple[int, int]
    moves: List[int]
    times: List[Optional[int]]


class GameSession:
    """One game: the board, redo stack, the human colours and how it ended."""

    def __init__(self, width: int = 15, height: Optional[int] = None,
                 rule: Rule = Rule.FREESTYLE, humans: Iterable[int] = (BLACK,),
                 max_moves: Optional[int] = None) -> None:
        self.board = Board(width, height, rule)
        self.humans: Set[int] = set(humans)
        self.max_moves = max_moves
        self.future: List[int] = []          # redo stack: the next move to replay is future[-1]
        self.future_times: List[Optional[int]] = []
        self.dropped: Optional[DroppedLine] = None  # the line the last new move left (see rejoin)
        self.times_ms: List[Optional[int]] = []
        self.resigned: Optional[int] = None  # the colour that resigned
        self.review = False                  # stepping through a game: the engine never moves
        self.source: Optional[str] = None    # file the game was loaded from
        self.names: Dict[int, Optional[str]] = {BLACK: None, WHITE: None}
        self.analyses: Dict[Tuple[int, int], Analysis] = {}
        self.last_eval: Optional[Tuple[int, float]] = None  # (ply, Black's win rate)
        self.started = time.time()

    # ------------------------------------------------------------------ facts
    @property
    def rule(self) -> Rule:
        return self.board.rule

    @property
    def side(self) -> int:
        return self.board.side_to_move

    @property
    def ply(self) -> int:
        return len(self.board.moves)

    def key(self) -> Tuple[int, int]:
        """Identifies the current position (for the analysis cache)."""
        return self.board.hash, self.ply

    def outcome(self) -> Optional[Outcome]:
        """The result: the board's own (five, full board) or a resignation; None while playing."""
        if self.resigned is not None:
            return Outcome(opponent(self.resigned), Termination.RESIGNATION)
        return self.board.outcome()

    def move_limit_reached(self) -> bool:
        return self.max_moves is not None and self.ply >= self.max_moves

    def is_over(self) -> bool:
        return self.outcome() is not None or self.move_limit_reached()

    def engine_to_move(self) -> bool:
        """True when the engine should play now (not in review mode, not a human's turn)."""
        return (not self.review and not self.is_over() and self.side not in self.humans)

    def mode_name(self) -> str:
        if self.review:
            return "review"
        if self.humans == {BLACK, WHITE}:
            return "human vs human"
        if not self.humans:
            return "engine vs engine"
        return "you vs engine"

    def player_label(self, color: int) -> str:
        """``you``, ``engine``, ``human`` (both human); in review mode the recorded name (``?`` when a
        loaded game has none; a game played here keeps its labels)."""
        if self.review and (self.source is not None or self.names.get(color)):
            return self.names.get(color) or "?"
        if color in self.humans:
            return "you" if len(self.humans) == 1 else "human"
        return "engine"

    # ------------------------------------------------------------------ moves
    def check_move(self, text: str) -> int:
        """The flat index of a typed move for the side to move, or MoveError with a message."""
        b = self.board
        t = text.strip()
        m2 = re.match(r"^\s*(-?\d+)\s+(-?\d+)\s*$", t)
        if m2:
            t = f"{m2.group(1)},{m2.group(2)}"
        try:
            x, y = parse_move(t)
        except ValueError:
            raise MoveError(f"'{text.strip()}' is not a move or a command: type a move like h8 "
                            "(column letter, row from the top) or 7,7 (x,y from 0), or 'help'")
        if not (0 <= x < b.width and 0 <= y < b.height):
            raise MoveError(f"{text.strip()} is off the {b.width}x{b.height} board (columns "
                            f"a-{column_name(min(b.width, 26) - 1)}, rows 1-{b.height}; "
                            f"x 0-{b.width - 1}, y 0-{b.height - 1})")
        m = y * b.width + x
        if self.is_over():
            raise MoveError("the game is over: 'new' starts another, 'undo' takes moves back")
        if b[m] != EMPTY:
            who = COLOR_NAME.get(b[m], "a wall")
            raise MoveError(f"{b.move_name(m)} ({x},{y}) is occupied by {who}")
        kind = movegen.forbidden_kind(b, m)
        if kind is not None:
            raise MoveError(f"{b.move_name(m)} is forbidden for Black under renju "
                            f"({kind.label}); the points marked × are forbidden")
        return m

    def play(self, m: int, time_ms: Optional[int] = None) -> int:
        """Play a checked move. The move ``next`` would replay keeps the rest of the redo stack;
        another one starts a new line: the redo stack is kept aside as :attr:`dropped` (taking the
        new move back brings it back, see :meth:`rejoin`). Returns how many moves it dropped."""
        key = self.key()
        self.board.play(m)
        self.times_ms.append(time_ms)
        if self.future and self.future[-1] == m:
            self.future.pop()
            self.future_times.pop()
            return 0
        n = len(self.future)
        if n:
            self.dropped = DroppedLine(key, self.future, self.future_times)
            self.future, self.future_times = [], []
        return n

    def rejoin(self) -> int:
        """Back at the position where a new move left a line (:attr:`dropped`), make that line the
        redo stack again, in place of the new line's moves taken back (those are dropped: one line
        is kept aside at most, so stepping back and forth never switches lines). Returns how many
        moves the redo stack now holds (0: not at such a position, nothing changed)."""
        d = self.dropped
        if d is None or d.key != self.key():
            return 0
        self.dropped = None
        self.future, self.future_times = d.moves, d.times
        return len(self.future)

    def forget_future(self) -> None:
        """Drop the redo stack and the line kept aside (the game goes on from here only)."""
        self.future, self.future_times = [], []
        self.dropped = None

    def back(self) -> Optional[int]:
        """Take back one move onto the redo stack (also undoes a resignation first)."""
        if self.resigned is not None:
            self.resigned = None
            return None
        if not self.board.moves:
            return None
        m = self.board.pop()
        self.future.append(m)
        self.future_times.append(self.times_ms.pop() if self.times_ms else None)
        return m

    def forward(self) -> Optional[int]:
        """Replay one move from the redo stack (unchecked push: a record may go on after a five)."""
        if not self.future:
            return None
        m = self.future.pop()
        self.times_ms.append(self.future_times.pop())
        self.board.push(m)
        return m

    def undo(self) -> int:
        """Take back moves until a human is to move again (at least one); returns how many."""
        if self.resigned is not None:
            self.resigned = None
            return 0
        n = 0
        while self.board.moves:
            self.back()
            n += 1
            if self.review or self.side in self.humans or not self.humans:
                break
        return n

    def redo(self) -> int:
        """Replay moves from the redo stack until a human is to move again (at least one), as
        :meth:`undo` took them back: the engine's recorded replies come back too, without a new
        search (an empty redo stack then leaves the engine to move). Returns how many."""
        n = 0
        while self.forward() is not None:
            n += 1
            if self.review or self.side in self.humans or not self.humans or self.is_over():
                break
        return n

    def goto(self, ply: int) -> None:
        ply = max(0, min(ply, self.ply + len(self.future)))
        while self.ply > ply:
            self.back()
        while self.ply < ply and self.future:
            self.forward()

    def total_plies(self) -> int:
        return self.ply + len(self.future)

    def resign(self) -> int:
        """The side to move resigns (the human, or the side to move in human vs human)."""
        color = self.side if self.side in self.humans or not self.humans else opponent(self.side)
        self.resigned = color
        return color

    # ------------------------------------------------------------------ records
    def to_record(self, engine_name: str = "engine") -> GameRecord:
        """The game so far as a record (the moves on the board, not the redo stack)."""
        o = self.outcome()
        result = GameResult.from_outcome(o) if o is not None else None
        names = {}
        for c in (BLACK, WHITE):
            if self.source or (self.review and self.names.get(c)):
                names[c] = self.names.get(c)
            else:
                names[c] = "human" if c in self.humans else engine_name
        times = self.times_ms if any(t is not None for t in self.times_ms) else None
        return GameRecord.from_board(self.board, result=result, black=names[BLACK],
                                     white=names[WHITE], times_ms=times)

    def save(self, path: str, engine_name: str = "engine") -> None:
        """Write the game as PSQ or SGF (by the extension)."""
        save_record(self.to_record(engine_name), path)

    @classmethod
    def from_record(cls, rec: GameRecord, humans: Sequence[int] = (BLACK, WHITE),
                    at_end: bool = True) -> "GameSession":
        """A review session over ``rec`` (positioned after the last move, or at the start)."""
        s = cls(rec.width, rec.height, rec.rule, humans)
        s.review = True
        s.names = {BLACK: rec.black, WHITE: rec.white}
        moves = rec.flat_moves()
        times = list(rec.times_ms) if rec.times_ms is not None else [None] * len(moves)
        s.future = list(reversed(moves))
        s.future_times = list(reversed(times))
        if at_end:
            s.goto(len(moves))
        if (rec.result is not None and rec.result.termination is Termination.RESIGNATION
                and at_end and s.board.outcome() is None and rec.result.winner is not None):
            s.resigned = opponent(rec.result.winner)
        return s

    @staticmethod
    def load_record(path: str, rule: Rule, index: int = 0) -> GameRecord:
        """Game ``index`` of a PSQ or SGF file (PSQ does not carry the rule: ``rule`` is used)."""
        games = read_record(path, rule=rule)
        if not games:
            raise ValueError(f"{path}: no game in the file")
        if not 0 <= index < len(games):
            raise ValueError(f"{path} holds {len(games)} games (1-{len(games)})")
        return games[index]


def default_save_name(directory: str = ".") -> str:
    """``gomoku-YYYYmmdd-HHMMSS.sgf`` in ``directory``, not yet taken."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    p = Path(directory) / f"gomoku-{stamp}.sgf"
    k = 2
    while p.exists():
        p = Path(directory) / f"gomoku-{stamp}-{k}.sgf"
        k += 1
    return str(p)


DEFAULT_MOVE_SECONDS = 2.0   #: the engine's time per move when neither --time nor visits are given


def build_limit(time_s: Optional[float], visits: Optional[int]) -> Limit:
    """The engine's limit: ``visits`` per move when given (non-zero), else ``time_s`` seconds
    (default :data:`DEFAULT_MOVE_SECONDS`)."""
    from gomoku_ai.player import Limit
    if visits:
        return Limit(visits=int(visits))
    return Limit(soft_ms=float(time_s if time_s is not None else DEFAULT_MOVE_SECONDS) * 1000.0)
