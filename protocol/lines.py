"""Parsing and formatting of Gomocup (Piskvork "pbrain") protocol lines, as pure functions.

Both sides use this module: the brain (:mod:`protocol.brain`) parses manager commands with
:func:`parse_command` and writes its replies with the ``format_*`` functions; a manager-side client parses
the engine's replies with :func:`classify_reply`, :func:`parse_move_reply` (tolerant, like GomocupJudge) or
:func:`parse_move_reply_strict` (like c-gomoku-cli) and writes commands with the manager-side formatters.

Conventions (see ``docs/PROTOCOL.md``):

* A line is one command or reply; ``\\r`` and ``\\n`` are stripped, so CR LF and bare LF both work.
* Command words are compared case-insensitively (Yixin-Board sends lower case); INFO keys are lower-cased.
* Coordinates are ``x,y`` with 0-based x (column) and y (row); range checks belong to the board, so a
  syntactically valid ``TURN -1,99`` parses and the brain rejects it.
* Output lines never contain CR/LF, never end with a space, and ``MESSAGE``/``DEBUG`` always carry text
  (Piskvork only recognises ``message `` with a space, pitfall P14).

Every command is a small frozen dataclass; :func:`parse_command` raises :class:`ProtocolError` when the command
word is known but its arguments are malformed (``TURN 7``, ``START abc``), and returns :class:`Unknown` for an
unknown word. Data lines inside ``BOARD``/``YXBOARD`` (``x,y,f``) and ``SWAP2BOARD`` (``x,y``) parse to
:class:`StoneLine` and :class:`PointLine`; grouping them into one position is the brain's job, because it
depends on context.
"""
from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from typing import ClassVar, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

Point = Tuple[int, int]

__all__ = [
    "ProtocolError", "Command", "Start", "RectStart", "Restart", "Begin", "Turn", "Board", "YxBoard",
    "Swap2Board", "StoneLine", "PointLine", "Done", "Info", "End", "About", "Takeback", "Play", "YxStop",
    "Stop", "YxShowForbid", "YxShowInfo", "YxHashClear", "YxNBest", "YxSearchDefend", "YxBlock",
    "YxBlockUndo", "YxBlockReset", "Unsupported", "UNSUPPORTED_WORDS", "Empty", "Unknown", "parse_command",
    "clean_text", "format_ok", "format_move", "format_moves", "format_swap", "format_about",
    "format_message", "format_debug", "format_error", "format_unknown", "format_forbid", "format_suggest",
    "ReplyKind", "Reply", "classify_reply", "parse_move_reply", "parse_move_reply_strict",
    "parse_moves_reply", "parse_about_reply", "parse_forbid_reply", "SWAP",
    "format_start", "format_rectstart", "format_turn", "format_takeback", "format_play", "format_info",
    "format_board", "format_swap2board", "strip_line", "COMMAND_WORDS", "Point",
]

DEFAULT_MAX_MEMORY = 350 * 1024 * 1024  #: ``INFO max_memory`` default in bytes (Gomocup, c-gomoku-cli; 0 means it)
MAX_COORD_DIGITS = 9  # longer numbers are rejected before int() (which would also refuse > 4300 digits)


class ProtocolError(ValueError):
    """A known command whose arguments cannot be read (``TURN 7``, ``START abc``, ``7,x,1``).

    ``command`` is the upper-cased command word (``"DATA"`` for a malformed data line); the brain stays
    silent for ``INFO`` (INFO is never answered) and answers ``ERROR <message>`` otherwise.
    """

    def __init__(self, message: str, command: str = "", line: str = "") -> None:
        super().__init__(message)
        self.command = command
        self.line = line


# ------------------------------------------------------------------------------------------ commands
@dataclass(frozen=True)
class Command:
    """Base class of every parsed manager line. ``word`` is the canonical command word."""

    word: ClassVar[str] = ""


@dataclass(frozen=True)
class Start(Command):
    """``START n`` (also Yixin-Board's ``START w h``): new empty board; reply OK or ERROR."""

    width: int
    height: int
    word: ClassVar[str] = "START"


@dataclass(frozen=True)
class RectStart(Command):
    """``RECTSTART w,h``: new empty rectangular board (w = range of x, h = range of y)."""

    width: int
    height: int
    word: ClassVar[str] = "RECTSTART"


@dataclass(frozen=True)
class Restart(Command):
    """``RESTART``: clear the board, same size; reply OK."""

    word: ClassVar[str] = "RESTART"


@dataclass(frozen=True)
class Begin(Command):
    """``BEGIN``: the board is empty and the brain moves first; reply a move."""

    word: ClassVar[str] = "BEGIN"


@dataclass(frozen=True)
class Turn(Command):
    """``TURN x,y``: the opponent played x,y; reply a move."""

    x: int
    y: int
    word: ClassVar[str] = "TURN"


@dataclass(frozen=True)
class Board(Command):
    """``BOARD``: a position follows as ``x,y,f`` lines up to ``DONE``; reply a move."""

    word: ClassVar[str] = "BOARD"


@dataclass(frozen=True)
class YxBoard(Command):
    """``YXBOARD``: like BOARD, but only set the position; no reply."""

    word: ClassVar[str] = "YXBOARD"


@dataclass(frozen=True)
class Swap2Board(Command):
    """``SWAP2BOARD``: 0, 3 or 5 ``x,y`` lines (no colour) up to ``DONE``; reply per the Swap2 step."""

    word: ClassVar[str] = "SWAP2BOARD"


class StoneField(enum.IntEnum):
    """The ``f`` of a ``x,y,f`` data line (``StoneLine.field``; a manager may send any number there)."""

    OWN = 1          # our stone
    OPPONENT = 2     # the opponent's stone
    WALL = 3         # a blocked square


@dataclass(frozen=True)
class StoneLine(Command):
    """A ``x,y,f`` data line: f = 1 own stone, 2 opponent's stone, 3 blocked square (:class:`StoneField`)."""

    x: int
    y: int
    field: int
    word: ClassVar[str] = "DATA"


@dataclass(frozen=True)
class PointLine(Command):
    """A ``x,y`` data line (SWAP2BOARD stones)."""

    x: int
    y: int
    word: ClassVar[str] = "DATA"


@dataclass(frozen=True)
class Done(Command):
    """``DONE``: the end of a BOARD / YXBOARD / SWAP2BOARD block."""

    word: ClassVar[str] = "DONE"


@dataclass(frozen=True)
class Info(Command):
    """``INFO key value``: ``key`` lower-cased, ``value`` the rest of the line (may contain spaces, e.g. a
    folder path). Never answered, not even when the value is malformed."""

    key: str
    value: str = ""
    word: ClassVar[str] = "INFO"

    def int_value(self) -> int:
        """The value as an int (``"1000"``, ``"-50"``, ``"350.0"``); raises ProtocolError."""
        v = self.value.strip()
        try:
            if re.fullmatch(r"[+-]?\d{1,19}", v):
                return int(v)
            f = float(v)
            if f != f or f in (float("inf"), float("-inf")):
                raise ValueError(v)
            return int(f)
        except (ValueError, OverflowError):
            raise ProtocolError(f"INFO {self.key}: {v!r} is not a number", "INFO") from None


@dataclass(frozen=True)
class End(Command):
    """``END``: exit as soon as possible, printing nothing more."""

    word: ClassVar[str] = "END"


@dataclass(frozen=True)
class About(Command):
    """``ABOUT``: reply one line of ``key="value"`` pairs."""

    word: ClassVar[str] = "ABOUT"


@dataclass(frozen=True)
class Takeback(Command):
    """``TAKEBACK x,y``: remove the stone at x,y (the last move); reply OK."""

    x: int
    y: int
    word: ClassVar[str] = "TAKEBACK"


@dataclass(frozen=True)
class Play(Command):
    """``PLAY x,y``: play x,y as our move (after SUGGEST) and echo it."""

    x: int
    y: int
    word: ClassVar[str] = "PLAY"


@dataclass(frozen=True)
class YxStop(Command):
    """``YXSTOP``: stop thinking and answer the best move so far; nothing when idle."""

    word: ClassVar[str] = "YXSTOP"


@dataclass(frozen=True)
class Stop(Command):
    """``STOP`` (Rapfi's alias of YXSTOP)."""

    word: ClassVar[str] = "STOP"


@dataclass(frozen=True)
class YxShowForbid(Command):
    """``YXSHOWFORBID``: reply ``FORBID`` + renju forbidden points + ``.``."""

    word: ClassVar[str] = "YXSHOWFORBID"


@dataclass(frozen=True)
class YxShowInfo(Command):
    """``YXSHOWINFO``: GUI mode; MESSAGE lines only, no reply proper."""

    word: ClassVar[str] = "YXSHOWINFO"


@dataclass(frozen=True)
class YxHashClear(Command):
    """``YXHASHCLEAR``: forget the search tree / hash; no reply."""

    word: ClassVar[str] = "YXHASHCLEAR"


@dataclass(frozen=True)
class YxNBest(Command):
    """``YXNBEST n``: search the position like a move request, tell the ``n`` best moves in ``MESSAGE``
    lines, then answer the best one (which is played)."""

    n: int
    word: ClassVar[str] = "YXNBEST"


@dataclass(frozen=True)
class YxSearchDefend(Command):
    """``YXSEARCHDEFEND``: ``YXNBEST`` over every move (how each defends)."""

    word: ClassVar[str] = "YXSEARCHDEFEND"


@dataclass(frozen=True)
class YxBlock(Command):
    """``YXBLOCK``: ``x,y`` lines up to ``DONE``: squares the brain must not answer; no reply."""

    word: ClassVar[str] = "YXBLOCK"


@dataclass(frozen=True)
class YxBlockUndo(Command):
    """``YXBLOCKUNDO``: ``x,y`` lines up to ``DONE``: squares no longer blocked; no reply."""

    word: ClassVar[str] = "YXBLOCKUNDO"


@dataclass(frozen=True)
class YxBlockReset(Command):
    """``YXBLOCKRESET``: no square is blocked any more; no reply."""

    word: ClassVar[str] = "YXBLOCKRESET"


@dataclass(frozen=True)
class Unsupported(Command):
    """A Yixin command this brain knows but cannot carry out (``YXBALANCEONE``, ``YXBALANCETWO``, the
    database commands): answered ``ERROR`` at once, so no client waits."""

    name: str
    word: ClassVar[str] = ""


#: Yixin commands answered ``ERROR ... not supported`` (their arguments are ignored)
UNSUPPORTED_WORDS = frozenset({"YXBALANCEONE", "YXBALANCETWO", "YXDBTOTXTALL", "YXDBCHECK",
                               "YXQUERYDATABASEALL", "YXQUERYDATABASEONE", "YXEDITDATABASE",
                               "YXSETDATABASE", "YXSAVEDATABASE", "YXDELETEDATABASEONE"})


@dataclass(frozen=True)
class Empty(Command):
    """An empty (or all-whitespace) line; ignored everywhere."""

    word: ClassVar[str] = ""


@dataclass(frozen=True)
class Unknown(Command):
    """A line whose first word is not a command we know; ``text`` is the whole (stripped) line."""

    text: str
    word: ClassVar[str] = ""


_NUM = r"[+-]?\d{1,%d}" % MAX_COORD_DIGITS
_XY_RE = re.compile(rf"^\s*({_NUM})\s*,\s*({_NUM})\s*$")
_XYF_RE = re.compile(rf"^\s*({_NUM})\s*,\s*({_NUM})\s*,\s*({_NUM})\s*$")
_DATA_START_RE = re.compile(r"^\s*[+-]?\d")


def _xy(args: str, word: str, line: str) -> Point:
    m = _XY_RE.match(args)
    if not m:
        raise ProtocolError(f"{word} needs coordinates 'x,y', got {args.strip()!r}", word, line)
    return int(m.group(1)), int(m.group(2))


def _int_token(tok: str) -> Optional[int]:
    return int(tok) if re.fullmatch(_NUM, tok) else None


def _parse_start(args: str, line: str) -> Start:
    toks = [t for t in re.split(r"[\s,]+", args.strip()) if t]
    if not toks:
        raise ProtocolError("START needs a board size", "START", line)
    w = _int_token(toks[0])
    if w is None:
        raise ProtocolError(f"START: {toks[0]!r} is not a board size", "START", line)
    h = _int_token(toks[1]) if len(toks) > 1 else None  # Yixin-Board: START w h; other trailing text ignored
    return Start(w, w if h is None else h)


def _parse_rectstart(args: str, line: str) -> RectStart:
    x, y = _xy(args, "RECTSTART", line)
    return RectStart(x, y)


def _parse_info(args: str, line: str) -> Info:
    parts = args.strip().split(None, 1)
    if not parts:
        raise ProtocolError("INFO needs a key", "INFO", line)
    return Info(parts[0].lower(), parts[1].strip() if len(parts) > 1 else "")


def _parse_data(text: str, line: str) -> Union[StoneLine, PointLine]:
    m = _XYF_RE.match(text)
    if m:
        return StoneLine(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    m = _XY_RE.match(text)
    if m:
        return PointLine(int(m.group(1)), int(m.group(2)))
    raise ProtocolError(f"cannot read a data line 'x,y,f' from {text!r}", "DATA", line)


_NOARG = {
    "RESTART": Restart(), "BEGIN": Begin(), "BOARD": Board(), "YXBOARD": YxBoard(),
    "SWAP2BOARD": Swap2Board(), "DONE": Done(), "END": End(), "ABOUT": About(), "YXSTOP": YxStop(),
    "STOP": Stop(), "YXSHOWFORBID": YxShowForbid(), "YXSHOWINFO": YxShowInfo(),
    "YXHASHCLEAR": YxHashClear(), "YXSEARCHDEFEND": YxSearchDefend(), "YXBLOCK": YxBlock(),
    "YXBLOCKUNDO": YxBlockUndo(), "YXBLOCKRESET": YxBlockReset(),
}

#: Every command word parse_command knows (upper case).
COMMAND_WORDS = frozenset(_NOARG) | {"START", "RECTSTART", "TURN", "INFO", "TAKEBACK", "PLAY",
                                     "YXNBEST"} | UNSUPPORTED_WORDS


def strip_line(line: Union[str, bytes]) -> str:
    """Decode (UTF-8, errors replaced) and strip CR, LF and surrounding whitespace."""
    if isinstance(line, (bytes, bytearray)):
        line = bytes(line).decode("utf-8", errors="replace")
    return line.replace("\r", " ").replace("\n", " ").strip()


def parse_command(line: Union[str, bytes]) -> Command:
    """Parse one manager line (see the module docstring). Raises :class:`ProtocolError`."""
    text = strip_line(line)
    if not text:
        return Empty()
    if _DATA_START_RE.match(text) and "," in text:
        return _parse_data(text, text)
    parts = text.split(None, 1)
    word = parts[0].upper()
    args = parts[1] if len(parts) > 1 else ""
    if word in _NOARG:
        return _NOARG[word]  # trailing arguments are ignored
    if word == "START":
        return _parse_start(args, text)
    if word == "RECTSTART":
        return _parse_rectstart(args, text)
    if word == "TURN":
        return Turn(*_xy(args, word, text))
    if word == "TAKEBACK":
        return Takeback(*_xy(args, word, text))
    if word == "PLAY":
        return Play(*_xy(args, word, text))
    if word == "INFO":
        return _parse_info(args, text)
    if word == "YXNBEST":
        n = _int_token(args.split()[0]) if args.split() else None
        if n is None or n < 1:
            raise ProtocolError(f"YXNBEST needs a number of moves >= 1, got {args.strip()!r}", word, text)
        return YxNBest(n)
    if word in UNSUPPORTED_WORDS:
        return Unsupported(word)
    return Unknown(text)


# ------------------------------------------------------------------------------------------ brain replies
def clean_text(text: object) -> str:
    """``text`` as one protocol-safe line: CR, LF, tabs and other control characters become spaces, runs of
    spaces collapse, no leading or trailing whitespace."""
    s = "".join(ch if ch.isprintable() else " " for ch in str(text))
    return " ".join(s.split())


def _keyword_line(keyword: str, text: object) -> str:
    t = clean_text(text)
    return f"{keyword} {t}" if t else keyword


def format_ok() -> str:
    """``OK``, exactly (c-gomoku-cli compares it literally)."""
    return "OK"


def format_move(x: int, y: int) -> str:
    """``x,y`` with no spaces."""
    return f"{int(x)},{int(y)}"


def format_moves(points: Iterable[Point]) -> str:
    """Several moves on one line, ``a,b c,d e,f`` (SWAP2BOARD replies)."""
    out = " ".join(format_move(x, y) for x, y in points)
    if not out:
        raise ValueError("format_moves needs at least one move")
    return out


SWAP = "SWAP"


def format_swap() -> str:
    """``SWAP`` (a SWAP2BOARD reply: take the other colour)."""
    return SWAP


def format_about(fields: Mapping[str, object]) -> str:
    """``name="pygomoku", version="0.1.0", ...`` on one line. Double quotes inside values become single
    quotes (there is no escape in the protocol); keys keep only ``[A-Za-z0-9_]``."""
    pairs = []
    for key, value in fields.items():
        k = re.sub(r"\W", "", str(key))
        if not k:
            raise ValueError(f"bad ABOUT key {key!r}")
        v = clean_text(value).replace('"', "'")
        pairs.append(f'{k}="{v}"')
    if not pairs:
        raise ValueError("format_about needs at least a name")
    return ", ".join(pairs)


def format_message(text: object) -> str:
    """``MESSAGE text`` (one line; never empty text, pitfall P14)."""
    t = clean_text(text)
    return f"MESSAGE {t if t else '-'}"


def format_debug(text: object) -> str:
    """``DEBUG text`` (one line; never empty text)."""
    t = clean_text(text)
    return f"DEBUG {t if t else '-'}"


def format_error(text: object) -> str:
    """``ERROR text``."""
    return _keyword_line("ERROR", text)


def format_unknown(text: object) -> str:
    """``UNKNOWN text``."""
    return _keyword_line("UNKNOWN", text)


def format_suggest(x: int, y: int) -> str:
    """``SUGGEST x,y`` (Piskvork only; c-gomoku-cli and GomocupJudge do not support it)."""
    return f"SUGGEST {format_move(x, y)}"


def format_forbid(points: Iterable[Point]) -> str:
    """``FORBID XXYYXXYY.`` (each coordinate two digits, x first, then a final dot): the reply to
    YXSHOWFORBID. ``FORBID .`` when there is none."""
    body = []
    for x, y in points:
        if not (0 <= x < 100 and 0 <= y < 100):
            raise ValueError(f"forbidden point {x},{y} does not fit two digits")
        body.append(f"{x:02d}{y:02d}")
    return "FORBID " + "".join(body) + "."


# ------------------------------------------------------------------------------------------ manager side
class ReplyKind(enum.Enum):
    """What an engine output line is, as a manager sees it."""

    OK = "ok"
    ERROR = "error"
    UNKNOWN = "unknown"
    MESSAGE = "message"
    DEBUG = "debug"
    SUGGEST = "suggest"
    FORBID = "forbid"
    SWAP = "swap"
    MOVE = "move"        # exactly one x,y
    MOVES = "moves"      # two or more x,y separated by spaces (SWAP2BOARD replies)
    ABOUT = "about"      # key="value" pairs
    OTHER = "other"


@dataclass(frozen=True)
class Reply:
    """A classified engine line: ``kind``, the text after the keyword (``text``) and any moves."""

    kind: ReplyKind
    text: str
    moves: Tuple[Point, ...] = field(default=())

    @property
    def move(self) -> Optional[Point]:
        return self.moves[0] if self.moves else None


def parse_move_reply(line: str) -> Optional[Point]:
    """Tolerant move parsing, as GomocupJudge does it (``line.split(",")`` then ``int()``): spaces around
    the numbers are accepted (``7, 7``, `` 7 ,7 ``). None when the line is not a move."""
    parts = strip_line(line).split(",")
    if len(parts) != 2:
        return None
    try:
        a, b = (p.strip() for p in parts)
        if not (re.fullmatch(_NUM, a) and re.fullmatch(_NUM, b)):
            return None
        return int(a), int(b)
    except ValueError:
        return None


_STRICT_RE = re.compile(rf"^[ \t\n\v\f\r]*({_NUM}),[ \t\n\v\f\r]*({_NUM})$")


def parse_move_reply_strict(line: str) -> Optional[Point]:
    """Strict move parsing, as c-gomoku-cli does it (``strtol`` + ``,`` + ``strtol`` + end of string):
    ``7, 7`` is accepted (strtol skips leading spaces) but ``7 ,7`` and ``7,7 `` (a trailing space) are not.
    Only the line terminator (``\\n`` / ``\\r\\n``) is removed first."""
    text = line[:-1] if line.endswith("\n") else line
    text = text[:-1] if text.endswith("\r") else text
    m = _STRICT_RE.match(text)
    return (int(m.group(1)), int(m.group(2))) if m else None


def parse_moves_reply(line: str) -> Union[str, List[Point], None]:
    """A SWAP2BOARD reply: ``"SWAP"`` (any line starting with "swap", as GomocupJudge), a list of one or
    more moves separated by spaces, or None."""
    text = strip_line(line)
    if text.lower().startswith("swap"):
        return SWAP
    toks = text.split()
    if not toks:
        return None
    moves = []
    for t in toks:
        mv = parse_move_reply(t)
        if mv is None:
            return None
        moves.append(mv)
    return moves


_ABOUT_PAIR_RE = re.compile(r'\s*(\w+)\s*=\s*"([^"]*)"\s*,?')


def parse_about_reply(line: str) -> Dict[str, str]:
    """``key="value"`` pairs of an ABOUT reply (keys lower-cased). A non-empty line without any pair is plain
    text, which managers must accept: it is returned as ``{"name": line}``; an empty line gives ``{}``."""
    text = strip_line(line)
    out: Dict[str, str] = {}
    pos = 0
    while pos < len(text):
        m = _ABOUT_PAIR_RE.match(text, pos)
        if not m:
            break
        out[m.group(1).lower()] = m.group(2)
        pos = m.end()
    if not out and text:
        out["name"] = text
    return out


def parse_forbid_reply(line: str) -> List[Point]:
    """Points of a ``FORBID XXYY....`` line; raises ValueError when it is not one."""
    text = strip_line(line)
    if not text.upper().startswith("FORBID"):
        raise ValueError(f"not a FORBID line: {text!r}")
    body = text[6:].strip()
    if body.endswith("."):
        body = body[:-1]
    if len(body) % 4 or not body.isdigit() and body:
        raise ValueError(f"malformed FORBID line: {text!r}")
    return [(int(body[i:i + 2]), int(body[i + 2:i + 4])) for i in range(0, len(body), 4)]


def classify_reply(line: str) -> Reply:
    """Classify one engine output line (case-insensitive keywords, like Piskvork and GomocupJudge)."""
    text = strip_line(line)
    head, _, rest = text.partition(" ")
    up = head.upper()
    rest = rest.strip()
    if up == "OK" and not rest:
        return Reply(ReplyKind.OK, "")
    if up in ("ERROR", "UNKNOWN", "MESSAGE", "DEBUG"):
        return Reply(ReplyKind[up], rest)
    if up == "SUGGEST":
        mv = parse_move_reply(rest)
        return Reply(ReplyKind.SUGGEST, rest, (mv,) if mv else ())
    if up.startswith("FORBID"):
        try:
            return Reply(ReplyKind.FORBID, text[6:].strip(), tuple(parse_forbid_reply(text)))
        except ValueError:
            return Reply(ReplyKind.OTHER, text)
    if up.startswith("SWAP"):
        return Reply(ReplyKind.SWAP, text)
    mv = parse_move_reply(text)
    if mv is not None:
        return Reply(ReplyKind.MOVE, text, (mv,))
    moves = parse_moves_reply(text)
    if isinstance(moves, list) and len(moves) > 1:
        return Reply(ReplyKind.MOVES, text, tuple(moves))
    if _ABOUT_PAIR_RE.match(text):
        return Reply(ReplyKind.ABOUT, text)
    return Reply(ReplyKind.OTHER, text)


def format_start(width: int, height: Optional[int] = None) -> str:
    """``START n``; a rectangle needs :func:`format_rectstart`."""
    if height is not None and height != width:
        raise ValueError("START is for square boards; use RECTSTART")
    return f"START {int(width)}"


def format_rectstart(width: int, height: int) -> str:
    """``RECTSTART w,h``."""
    return f"RECTSTART {int(width)},{int(height)}"


def format_turn(x: int, y: int) -> str:
    """``TURN x,y``."""
    return f"TURN {format_move(x, y)}"


def format_takeback(x: int, y: int) -> str:
    """``TAKEBACK x,y``."""
    return f"TAKEBACK {format_move(x, y)}"


def format_play(x: int, y: int) -> str:
    """``PLAY x,y``."""
    return f"PLAY {format_move(x, y)}"


def format_info(key: str, value: object) -> str:
    """``INFO key value`` (key lower-cased)."""
    k = clean_text(key).lower()
    if not k or " " in k:
        raise ValueError(f"bad INFO key {key!r}")
    return f"INFO {k} {clean_text(value)}".rstrip()


def format_board(stones: Sequence[Tuple[int, int, int]], command: str = "BOARD") -> List[str]:
    """The lines of a ``BOARD`` (or ``YXBOARD``) block: the command, ``x,y,f`` per stone, ``DONE``."""
    if command.upper() not in ("BOARD", "YXBOARD"):
        raise ValueError("format_board is for BOARD and YXBOARD")
    return [command.upper()] + [f"{int(x)},{int(y)},{int(f)}" for x, y, f in stones] + ["DONE"]


def format_swap2board(points: Sequence[Point]) -> List[str]:
    """The lines of a ``SWAP2BOARD`` block: the command, ``x,y`` per stone, ``DONE``."""
    return ["SWAP2BOARD"] + [format_move(x, y) for x, y in points] + ["DONE"]


class LineBuffer:
    """Splits a byte stream into protocol lines, for both the brain and the manager side.

    LF, CR LF and a bare CR all end a line (Piskvork splits on either); empty lines are dropped. A
    line longer than ``max_bytes`` comes out once, cut to its first ``max_bytes`` bytes (counted in
    :attr:`cut`), and the rest of it is discarded up to its line end: one input line is never more
    than one line out, and a peer that never sends a newline cannot grow memory without bound.
    """

    def __init__(self, max_bytes: int = 1 << 20) -> None:
        self.max_bytes = max_bytes
        self.cut = 0
        self._pending = b""
        self._discarding = False   # inside the rest of a line that was cut

    def feed(self, chunk: bytes) -> List[bytes]:
        """The complete lines that ``chunk`` finishes (without their line ends)."""
        data = chunk.replace(b"\r", b"\n")
        out: List[bytes] = []
        pos, n = 0, len(data)
        while pos < n:
            nl = data.find(b"\n", pos)
            end = n if nl < 0 else nl
            if self._discarding:
                self._discarding = nl < 0
            else:
                room = self.max_bytes - len(self._pending)
                piece = data[pos:min(end, pos + room + 1)]
                self._pending += piece
                if len(self._pending) > self.max_bytes:
                    out.append(self._pending[:self.max_bytes])
                    self._pending = b""
                    self.cut += 1
                    self._discarding = nl < 0
                elif nl >= 0 and self._pending:
                    out.append(self._pending)
                    self._pending = b""
            pos = n if nl < 0 else nl + 1
        return out

    def flush(self) -> List[bytes]:
        """The unfinished last line, if any (at end of stream)."""
        rest, self._pending = self._pending, b""
        self._discarding = False
        return [rest] if rest else []
