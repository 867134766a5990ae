"""Game records and opening files: Piskvork PSQ, Gomoku SGF and the c-gomoku-cli opening formats.

Everything here is pure text processing plus a replay onto :class:`~gomoku_ai.board.Board`; there is
no protocol code and no torch.

Coordinates are the board's: ``x`` is the column (0 at the left), ``y`` the row (0 at the top), both
0-based; a record's ``moves`` are ``(x, y)`` tuples, Black first, alternating.

Formats
-------
PSQ (Piskvork)
    ``Piskvorky 20x20, 11:11, 0`` header (width x height, the two players' levels, and which of the
    two players moved first), then one ``x,y,time_ms`` line per move with **1-based** coordinates,
    then a trailer: in tournament files the two brain names (player 1, player 2) and always a final
    integer line (Piskvork's error code; ``-1`` means "not available"). The cleaned Gomocup dataset
    form has no header and no trailer: ``x,y`` lines only, 1-based, on a 15x15 board unless told.
SGF (``GM[4]``)
    ``SZ[15]`` or ``SZ[20:15]`` (columns:rows), ``PB``/``PW``, ``RE[B+]``/``RE[W+]``/``RE[0]``,
    ``RU[freestyle]`` (names or Gomocup rule numbers), moves ``;B[hh];W[ih]`` with the column letter
    first and the row letter second, both from ``a`` = 0 at the top left (as c-gomoku-cli writes).
    Per-move ``C[123ms]`` comments carry move times. Variations are refused.
Openings (c-gomoku-cli)
    *offset*: ``0,0, 1,-1, 2,2`` -- ``dx,dy`` pairs relative to ``(width // 2, height // 2)``;
    *pos*: ``h8i9j10`` -- a column letter and a 1-based row counted from the top, no separators.

Every reader takes text or a path (``str`` or ``os.PathLike``); a ``str`` is a path when it names
an existing file (or has no newline and ends in a record extension). Errors are
:class:`RecordFormatError` with the file (when known), the 1-based line and the reason.
"""
from __future__ import annotations

import bisect
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import (Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union)

from .fileio import atomic_write_text  # noqa: F401 - re-exported for callers
from .board import MAX_SIZE, MIN_SIZE, Board, IllegalMoveError, square_name
from .rules import BLACK, WHITE, EMPTY, Outcome, Rule, Termination, rule_from_gomocup

__all__ = [
    "RecordFormatError", "GameResult", "BLACK_WINS", "WHITE_WINS", "DRAW", "GameRecord",
    "read_psq", "write_psq", "parse_gomocup_filename", "gomocup_filename_fields",
    "read_sgf", "read_sgf_games", "write_sgf",
    "read_openings", "write_openings", "parse_opening_line", "format_opening",
    "read_record", "load_games", "GameLoader", "SkippedFile", "save_record", "atomic_write_text",
]

PathOrText = Union[str, bytes, "os.PathLike[str]"]
#: a board size argument: None (15 x 15), N (N x N) or (width, height)
SizeArg = Union[None, int, Tuple[int, int]]
Move = Tuple[int, int]

RECORD_EXTENSIONS = (".psq", ".sgf")
_TEXT_EXTENSIONS = RECORD_EXTENSIONS + (".txt",)


# ============================================================================ errors & results
class RecordFormatError(ValueError):
    """A record or opening file that cannot be read.

    ``path`` is the file (None for text given directly), ``line`` the 1-based line (None when the
    problem is not on one line, e.g. a file name), ``reason`` what is wrong. ``str(err)`` reads
    ``"games/x.psq, line 3: bad coordinates '8,x'"``.
    """

    def __init__(self, reason: str, path: Optional[str] = None, line: Optional[int] = None):
        self.reason = reason
        self.path = None if path is None else str(path)
        self.line = line
        where = []
        if self.path is not None:
            where.append(self.path)
        if line is not None:
            where.append(f"line {line}")
        super().__init__(f"{', '.join(where)}: {reason}" if where else reason)

    # keep pickling (multiprocessing loaders) working with the extra args
    def __reduce__(self) -> Tuple[type, Tuple[str, Optional[str], Optional[int]]]:
        return (type(self), (self.reason, self.path, self.line))


@dataclass(frozen=True)
class GameResult:
    """How a game ended, as far as the record says.

    ``winner`` is BLACK, WHITE or None (a draw). ``termination`` is None when the record does not
    say why (e.g. a Gomocup file name only gives the winner; a forfeit looks the same as a five).
    A record whose result is not known at all has ``result = None``.
    """

    winner: Optional[int]
    termination: Optional[Termination] = None

    def __post_init__(self) -> None:
        if self.winner not in (BLACK, WHITE, None):
            raise ValueError(f"winner must be BLACK, WHITE or None, not {self.winner!r}")
        if self.termination is not None and not isinstance(self.termination, Termination):
            raise ValueError(f"termination must be a Termination, not {self.termination!r}")

    @property
    def is_draw(self) -> bool:
        return self.winner is None

    def score(self) -> str:
        """``"1-0"`` (Black won), ``"0-1"`` (White won) or ``"1/2-1/2"``."""
        return {BLACK: "1-0", WHITE: "0-1", None: "1/2-1/2"}[self.winner]

    @classmethod
    def from_outcome(cls, outcome: Outcome) -> "GameResult":
        return cls(outcome.winner, outcome.termination)


BLACK_WINS = GameResult(BLACK)
WHITE_WINS = GameResult(WHITE)
DRAW = GameResult(None)


# ============================================================================ the record
@dataclass
class GameRecord:
    """One game: board size, rule, moves (Black first), result, players, times and metadata.

    ``times_ms`` is None when the record has no move times, else one entry per move (an entry may
    be None where that move's time is unknown). ``metadata`` keeps what a format carries beyond the
    fields (``metadata["psq"]``: Piskvork header/trailer values; ``metadata["sgf"]``: other SGF
    root properties; ``metadata["move_comments"]``: SGF per-move comments by ply; ``metadata
    ["gomocup"]``: fields of a Gomocup dataset file name). ``source`` is the file it was read from
    (not compared).
    """

    width: int = 15
    height: int = 15
    rule: Rule = Rule.FREESTYLE
    moves: List[Move] = field(default_factory=list)
    result: Optional[GameResult] = None
    black: Optional[str] = None
    white: Optional[str] = None
    times_ms: Optional[List[Optional[int]]] = None
    metadata: Dict[str, Any] = field(default_factory=dict)
    source: Optional[str] = field(default=None, compare=False)

    def __post_init__(self) -> None:
        self.moves = [(int(x), int(y)) for x, y in self.moves]
        if self.times_ms is not None:
            self.times_ms = [None if t is None else int(t) for t in self.times_ms]
            if all(t is None for t in self.times_ms):
                self.times_ms = None  # "no times" has one spelling, as the readers produce it
        self.validate()

    def validate(self) -> None:
        """Raise ValueError unless sizes, moves (on the board, no square twice) and times agree."""
        for v in (self.width, self.height):
            if not MIN_SIZE <= v <= MAX_SIZE:
                raise ValueError(f"board size {self.width}x{self.height} is outside "
                                 f"{MIN_SIZE}..{MAX_SIZE} on a side")
        if not isinstance(self.rule, Rule):
            raise ValueError(f"rule must be a Rule, not {self.rule!r}")
        if self.result is not None and not isinstance(self.result, GameResult):
            raise ValueError(f"result must be a GameResult or None, not {self.result!r}")
        seen = set()
        for i, (x, y) in enumerate(self.moves):
            if not (0 <= x < self.width and 0 <= y < self.height):
                raise ValueError(f"move {i + 1} ({x},{y}) is off the {self.width}x{self.height} board")
            if (x, y) in seen:
                raise ValueError(f"move {i + 1} ({x},{y}) repeats an occupied square")
            seen.add((x, y))
        if self.times_ms is not None and len(self.times_ms) != len(self.moves):
            raise ValueError(f"{len(self.times_ms)} move times for {len(self.moves)} moves")

    @classmethod
    def from_board(cls, board: Board, result: Optional[GameResult] = None,
                   black: Optional[str] = None, white: Optional[str] = None,
                   times_ms: Optional[List[Optional[int]]] = None,
                   metadata: Optional[Dict[str, Any]] = None) -> "GameRecord":
        """A record of ``board``'s move stack (a board built by play/push, Black first).

        ``result`` defaults to the board's own outcome when the game is over, else None.
        """
        if result is None:
            outcome = board.outcome()
            result = GameResult.from_outcome(outcome) if outcome is not None else None
        return cls(board.width, board.height, board.rule, [board.xy(m) for m in board.moves],
                   result, black, white, times_ms, dict(metadata or {}))

    # ------------------------------------------------------------------ views
    def __len__(self) -> int:
        return len(self.moves)

    @property
    def size(self) -> Tuple[int, int]:
        return self.width, self.height

    def flat_moves(self) -> List[int]:
        """The moves as flat indices ``y * width + x``."""
        return [y * self.width + x for x, y in self.moves]

    def to_board(self, upto: Optional[int] = None, n: int = 5) -> Board:
        """Replay the first ``upto`` moves (all by default) onto a new Board under ``rule``.

        Checked: an off-board move or one onto an occupied square raises IllegalMoveError. Moves
        after a completed five are replayed too (a record may carry them, e.g. a standard-rule game
        read as freestyle); see :meth:`board_outcome` to find where the game really ended.
        """
        b = Board(self.width, self.height, self.rule, n)
        moves = self.moves if upto is None else self.moves[:upto]
        for i, (x, y) in enumerate(moves):
            m = b.index(x, y)
            if b[m] != EMPTY:
                raise IllegalMoveError(f"move {i + 1} {b.move_name(m)} ({x},{y}) is occupied")
            b.push(m)
        return b

    def first_five(self, n: int = 5) -> Optional[int]:
        """Index (0-based ply) of the first move that completed a winning line, or None."""
        b = Board(self.width, self.height, self.rule, n)
        for i, (x, y) in enumerate(self.moves):
            m = b.index(x, y)
            if b[m] != EMPTY:
                raise IllegalMoveError(f"move {i + 1} ({x},{y}) is occupied")
            if b.push(m):
                return i
        return None

    def board_outcome(self, n: int = 5) -> Optional[Outcome]:
        """The outcome the board itself shows after all moves (a five by the last move, a full
        board), or None when the game is unfinished on the board (e.g. a forfeit)."""
        return self.to_board(n=n).outcome()


# ============================================================================ input helpers
def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")  # old Windows Piskvork files (brain paths) are not UTF-8


def _looks_like_path(s: str) -> bool:
    if "\n" in s or "\r" in s or not s.strip():
        return False
    if os.path.isfile(s):
        return True
    return s.lower().endswith(_TEXT_EXTENSIONS)


def _read_source(source: PathOrText) -> Tuple[str, Optional[str]]:
    """(text, path-or-None) from text, bytes or a path. A missing path raises FileNotFoundError."""
    if isinstance(source, bytes):
        return _decode(source), None
    if isinstance(source, os.PathLike) or (isinstance(source, str) and _looks_like_path(source)):
        path = os.fspath(source)
        with open(path, "rb") as f:
            return _decode(f.read()), str(path)
    if isinstance(source, str):
        return source, None
    raise TypeError(f"expected text, bytes or a path, not {type(source).__name__}")


def _size_arg(size: Union[None, int, Tuple[int, int]], default: int = 15) -> Tuple[int, int]:
    if size is None:
        return default, default
    if isinstance(size, int):
        return size, size
    w, h = size
    return int(w), int(h)


def _check_size(w: int, h: int, path: Optional[str], line: Optional[int]) -> None:
    if not (MIN_SIZE <= w <= MAX_SIZE and MIN_SIZE <= h <= MAX_SIZE):
        raise RecordFormatError(f"board size {w}x{h} is outside {MIN_SIZE}..{MAX_SIZE} on a side",
                                path, line)


# ============================================================================ Gomocup file names
_GOMOCUP_NAME_RE = re.compile(r"^(\d+)_(\d+)_(\d+)_([012])\.psq$", re.IGNORECASE)


def gomocup_filename_fields(name: Union[str, "os.PathLike[str]"]) -> Dict[str, int]:
    """``{"round", "player1", "player2", "code"}`` from a cleaned Gomocup file name
    ``<round>_<player1>_<player2>_<result>.psq``; raises RecordFormatError on another name."""
    base = Path(os.fspath(name)).name
    m = _GOMOCUP_NAME_RE.match(base)
    if not m:
        raise RecordFormatError("not a Gomocup dataset file name "
                                "'<round>_<player1>_<player2>_<0|1|2>.psq'", os.fspath(name))
    r, p1, p2, code = (int(g) for g in m.groups())
    return {"round": r, "player1": p1, "player2": p2, "code": code}


def parse_gomocup_filename(name: Union[str, "os.PathLike[str]"]) -> GameResult:
    """The result encoded in a cleaned Gomocup file name: ``1`` Black won, ``2`` White won,
    ``0`` draw. The name does not say how (a five, or a forfeit), so ``termination`` is None."""
    code = gomocup_filename_fields(name)["code"]
    return {0: DRAW, 1: BLACK_WINS, 2: WHITE_WINS}[code]


# ============================================================================ PSQ
_PSQ_HEADER_RE = re.compile(
    r"^\s*Piskvork\w*\s+(\d+)\s*[xX]\s*(\d+)\s*"
    r"(?:,\s*(-?\d+)\s*:\s*(-?\d+)\s*(?:,\s*(-?\d+)\s*)?)?$")
_PSQ_MOVE_RE = re.compile(r"^\s*(-?\d+)\s*,\s*(-?\d+)\s*(?:,\s*(-?\d+)\s*)?$")
_MOVE_LIKE_RE = re.compile(r"^\s*-?\d+\s*,")
_INT_RE = re.compile(r"^\s*-?\d+\s*$")


def _psq_header(first: str, lineno: int, size: Union[None, int, Tuple[int, int]],
                path: Optional[str]) -> Tuple[int, int, Optional[Dict[str, Any]]]:
    """The board (width, height) from the PSQ file's first non-blank line ``first`` (at
    ``lineno``) and the header fields (``levels``, ``swap``, ``code`` None), or, for a file
    without a header (its first line is a move), ``size`` and None."""
    header = _PSQ_HEADER_RE.match(first)
    if header:
        w, h = int(header.group(1)), int(header.group(2))
        _check_size(w, h, path, lineno)
        if size is not None and _size_arg(size) != (w, h):
            sw, sh = _size_arg(size)
            raise RecordFormatError(f"header says {w}x{h} but size {sw}x{sh} was asked for",
                                    path, lineno)
        levels = None
        if header.group(3) is not None:
            levels = (int(header.group(3)), int(header.group(4)))
        swap = int(header.group(5)) if header.group(5) is not None else None
        if swap not in (None, 0, 1):
            raise RecordFormatError(f"bad header: first-player flag {swap} is not 0 or 1",
                                    path, lineno)
        return w, h, {"levels": levels, "swap": swap, "code": None}
    if first.strip().lower().startswith("piskvork") or not _MOVE_LIKE_RE.match(first):
        raise RecordFormatError(
            f"bad header {first.strip()[:60]!r}: expected 'Piskvorky WxH, a:b, c' or a move "
            "'x,y'", path, lineno)
    w, h = _size_arg(size)
    _check_size(w, h, path, None)
    return w, h, None


def _psq_moves(lines: List[str], start: int, w: int, h: int, has_header: bool,
               path: Optional[str]) -> Tuple[List[Move], List[Optional[int]], List[Tuple[int, str]]]:
    """The moves (0-based), their times (ms, None where not given) and the trailer lines
    ``(lineno, text)`` of a PSQ file from line index ``start``; a file without a header has no
    trailer."""
    moves: List[Move] = []
    times: List[Optional[int]] = []
    seen: Dict[Move, int] = {}
    trailer: List[Tuple[int, str]] = []
    for j in range(start, len(lines)):
        line = lines[j]
        lineno = j + 1
        if not line.strip():
            continue
        m = _PSQ_MOVE_RE.match(line)
        if m and not trailer:
            x, y = int(m.group(1)) - 1, int(m.group(2)) - 1
            if not (0 <= x < w and 0 <= y < h):
                raise RecordFormatError(
                    f"move {len(moves) + 1} {line.strip()!r} is off the {w}x{h} board "
                    f"(coordinates are 1-based, 1..{w} and 1..{h})", path, lineno)
            if (x, y) in seen:
                raise RecordFormatError(
                    f"duplicate move {len(moves) + 1} {line.strip()!r}: the square was already "
                    f"played at move {seen[(x, y)]}", path, lineno)
            seen[(x, y)] = len(moves) + 1
            moves.append((x, y))
            times.append(int(m.group(3)) if m.group(3) is not None else None)
            continue
        if _MOVE_LIKE_RE.match(line):
            what = "move after the trailer" if m else "bad coordinates"
            raise RecordFormatError(f"{what}: {line.strip()[:60]!r}", path, lineno)
        if not has_header:
            raise RecordFormatError(f"bad move line {line.strip()[:60]!r}: expected 'x,y'",
                                    path, lineno)
        trailer.append((lineno, line))
    return moves, times, trailer


def _psq_trailer(trailer: List[Tuple[int, str]], psq: Dict[str, Any], path: Optional[str]
                 ) -> Tuple[Optional[str], Optional[str]]:
    """Read the trailer (two player names, then an integer code; either part may be missing):
    sets ``psq["code"]`` and returns (black, white), the first player by ``psq["swap"]``."""
    code = None
    if trailer and _INT_RE.match(trailer[-1][1]):
        code = int(trailer.pop()[1])
    if len(trailer) not in (0, 2):
        lineno, line = trailer[0]
        raise RecordFormatError(
            f"unexpected trailer line {line.strip()[:60]!r}: expected two player names and "
            "an integer code", path, lineno)
    psq["code"] = code
    if not trailer:
        return None, None
    names = [t[1] for t in trailer]
    first_player = psq["swap"] or 0
    return names[first_player], names[1 - first_player]


def read_psq(source: PathOrText, size: Union[None, int, Tuple[int, int]] = None,
             rule: Rule = Rule.FREESTYLE) -> GameRecord:
    """Read a Piskvork game file, with or without its header.

    ``size`` (an int or ``(width, height)``) is the board for header-less files (15 by default);
    a header that disagrees with an explicit ``size`` is an error. PSQ does not name the rule, so
    ``rule`` is taken as given. When the file name is a Gomocup dataset name, the result and the
    name's fields (``metadata["gomocup"]``) come from it; otherwise ``result`` is None.
    """
    text, path = _read_source(source)
    lines = text.splitlines()
    i = 0
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i == len(lines):
        raise RecordFormatError("empty file: no header and no moves", path, 1 if lines else None)

    meta: Dict[str, Any] = {}
    w, h, psq = _psq_header(lines[i], i + 1, size, path)
    if psq is not None:
        meta["psq"] = psq
        i += 1
    moves, times, trailer = _psq_moves(lines, i, w, h, psq is not None, path)
    black = white = None
    if psq is not None:
        black, white = _psq_trailer(trailer, psq, path)

    result = None
    if path is not None and _GOMOCUP_NAME_RE.match(Path(path).name):
        fields = gomocup_filename_fields(path)
        meta["gomocup"] = {k: v for k, v in fields.items() if k != "code"}
        result = parse_gomocup_filename(path)

    times_ms = times if any(t is not None for t in times) else None
    return GameRecord(w, h, rule, moves, result, black, white, times_ms, meta, source=path)


def _check_psq_name(name: str) -> None:
    if not name.strip() or name.splitlines() != [name]:
        raise ValueError(f"PSQ player name {name!r} must be one non-blank line")
    if _INT_RE.match(name) or _MOVE_LIKE_RE.match(name) or _PSQ_MOVE_RE.match(name):
        raise ValueError(f"PSQ player name {name!r} would be read back as a move or a code")


def write_psq(record: GameRecord) -> str:
    """The Piskvork form: ``Piskvorky WxH, a:b, s`` header, ``x,y,t`` lines (1-based), trailer.

    Header levels, the first-player flag and the trailer code come from ``metadata["psq"]`` when
    present (defaults ``11:11``, ``0``, ``-1`` = "not available"). Move times are written where
    known; a move without a time is written ``x,y`` (Piskvork reads both). Names are written when
    either is known (a missing one as ``?``). PSQ does not carry the rule or the result.
    """
    record.validate()
    psq = record.metadata.get("psq") or {}
    levels = psq.get("levels", (11, 11))
    swap = psq.get("swap", 0)
    head = f"Piskvorky {record.width}x{record.height}"
    if levels is not None:
        head += f", {int(levels[0])}:{int(levels[1])}"
        if swap is not None:
            head += f", {int(swap)}"
    elif swap is not None:
        raise ValueError("a PSQ header cannot carry the first-player flag without the levels")
    out = [head]
    times = record.times_ms
    for k, (x, y) in enumerate(record.moves):
        t = None if times is None else times[k]
        out.append(f"{x + 1},{y + 1}" if t is None else f"{x + 1},{y + 1},{t}")
    if record.black is not None or record.white is not None:
        names = [record.black if record.black is not None else "?",
                 record.white if record.white is not None else "?"]
        for nm in names:
            _check_psq_name(nm)
        if swap == 1:
            names.reverse()
        out.extend(names)
    code = psq.get("code", -1)  # an explicit None means the file had no code line
    if code is not None:
        out.append(str(int(code)))
    return "\n".join(out) + "\n"


# ============================================================================ SGF
_SGF_COORDS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_RULE_NAMES = {
    "freestyle": Rule.FREESTYLE, "free": Rule.FREESTYLE, "gomoku": Rule.FREESTYLE,
    "free-style": Rule.FREESTYLE, "freestyle gomoku": Rule.FREESTYLE,
    "standard": Rule.STANDARD, "exact": Rule.STANDARD, "exact5": Rule.STANDARD,
    "exactfive": Rule.STANDARD, "standard gomoku": Rule.STANDARD, "gomoku pro": Rule.STANDARD,
    "renju": Rule.RENJU, "rif": Rule.RENJU, "yamaguchi": Rule.RENJU, "soosyrv": Rule.RENJU,
    "soosyrv-8": Rule.RENJU, "taraguchi": Rule.RENJU, "taraguchi-10": Rule.RENJU,
    "sakata": Rule.RENJU, "tarannikov": Rule.RENJU,
    "caro": Rule.CARO,
}
# SGF root properties that map onto GameRecord fields (everything else goes to metadata["sgf"]).
_SGF_KNOWN = {"GM", "FF", "CA", "SZ", "RU", "PB", "PW", "RE"}


#: SGF parse results: a property's (line, value) list by identifier; a node (line of ';', properties);
#: a game tree (line of '(', nodes)
_SgfProps = Dict[str, List[Tuple[int, str]]]
_SgfNode = Tuple[int, _SgfProps]
_SgfTree = Tuple[int, List[_SgfNode]]


class _SgfParser:
    """A small SGF tokenizer/parser that keeps 1-based line numbers for errors."""

    def __init__(self, text: str, path: Optional[str]):
        self.s = text
        self.n = len(text)
        self.i = 0
        self.path = path
        self._nl = [k for k, ch in enumerate(text) if ch == "\n"]

    def line(self, pos: Optional[int] = None) -> int:
        return bisect.bisect_left(self._nl, self.i if pos is None else pos) + 1

    def err(self, reason: str, pos: Optional[int] = None) -> RecordFormatError:
        return RecordFormatError(reason, self.path, self.line(pos))

    def skip_ws(self) -> None:
        s, n, i = self.s, self.n, self.i
        while i < n and s[i].isspace():
            i += 1
        self.i = i

    def collection(self) -> List[_SgfTree]:
        """[(line of '(', [(line of ';', {ident: [(line, value), ...]}), ...]), ...]"""
        trees = []
        self.skip_ws()
        if self.i >= self.n:
            raise RecordFormatError("empty file: no SGF game tree '(;...)'", self.path, 1)
        while True:
            self.skip_ws()
            if self.i >= self.n:
                break
            ch = self.s[self.i]
            if ch == ")":
                raise self.err("unbalanced ')': no game tree is open here")
            if ch != "(":
                raise self.err(f"expected '(' to start a game tree, found {ch!r}")
            trees.append(self.game_tree())
        return trees

    def game_tree(self) -> _SgfTree:
        start = self.i
        self.i += 1  # '('
        nodes: List[_SgfNode] = []
        while True:
            self.skip_ws()
            if self.i >= self.n:
                raise self.err("unbalanced '(': the game tree opened here is never closed", start)
            ch = self.s[self.i]
            if ch == ";":
                nodes.append(self.node())
            elif ch == ")":
                self.i += 1
                if not nodes:
                    raise self.err("empty game tree '()'", start)
                return self.line(start), nodes
            elif ch == "(":
                raise self.err("variations are not supported (a nested game tree starts here)")
            else:
                raise self.err(f"unexpected {ch!r}: expected ';', '(' or ')'")

    def node(self) -> _SgfNode:
        node_pos = self.i
        self.i += 1  # ';'
        props: Dict[str, List[Tuple[int, str]]] = {}
        while True:
            self.skip_ws()
            if self.i >= self.n:
                return self.line(node_pos), props
            ch = self.s[self.i]
            if not ch.isalpha():
                return self.line(node_pos), props
            j = self.i
            while j < self.n and self.s[j].isalpha():
                j += 1
            raw = self.s[self.i:j]
            ident_pos = self.i
            ident = "".join(c for c in raw if c.isupper()) or raw.upper()  # FF3 'AddBlack' -> AB
            self.i = j
            values = []
            while True:
                self.skip_ws()
                if self.i < self.n and self.s[self.i] == "[":
                    values.append(self.value())
                else:
                    break
            if not values:
                raise self.err(f"property {raw} has no value '[...]'", ident_pos)
            if ident in props:
                raise self.err(f"property {ident} appears twice in one node", ident_pos)
            props[ident] = values

    def value(self) -> Tuple[int, str]:
        start = self.i
        self.i += 1  # '['
        out = []
        s, n = self.s, self.n
        i = self.i
        while True:
            if i >= n:
                raise self.err("unbalanced '[': the property value opened here has no ']'", start)
            ch = s[i]
            if ch == "\\":
                if i + 1 >= n:
                    raise self.err("unbalanced '[': the property value opened here has no ']'",
                                   start)
                nxt = s[i + 1]
                if nxt == "\n":  # soft line break
                    i += 2
                    if i < n and s[i] == "\r":
                        i += 1
                    continue
                if nxt == "\r":
                    i += 2
                    if i < n and s[i] == "\n":
                        i += 1
                    continue
                out.append(nxt)
                i += 2
                continue
            if ch == "]":
                self.i = i + 1
                return self.line(start), "".join(out)
            out.append(ch)
            i += 1


def _sgf_escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("]", "\\]")


def _sgf_coord(x: int, y: int) -> str:
    return _SGF_COORDS[x] + _SGF_COORDS[y]


def _parse_sgf_result(value: str) -> Optional[GameResult]:
    v = value.strip()
    u = v.upper()
    if u.startswith("B+"):
        return BLACK_WINS
    if u.startswith("W+"):
        return WHITE_WINS
    if u in ("0", "DRAW", "JIGO", "D"):
        return DRAW
    if u in ("", "?", "VOID", "UNKNOWN", "*"):
        return None
    raise ValueError(f"unknown result RE[{value}]: expected B+, W+, 0/Draw or ?")


def _parse_termination(text: str) -> Optional[Termination]:
    t = text.strip().lower()
    for term in Termination:
        if t == term.value or t == term.value.replace("_", " "):
            return term
    # c-gomoku-cli's TE texts
    if "five" in t:
        return Termination.FIVE
    if "fullfilled" in t or "full" in t:
        return Termination.BOARD_FULL
    if "forbidden" in t:
        return Termination.FORBIDDEN
    if "illegal" in t:
        return Termination.ILLEGAL
    if "time" in t:
        return Termination.TIME
    if "adjudication" in t:  # c-gomoku-cli: "Draw by adjudication", "Black win by adjudication"
        return Termination.ADJUDICATION if "draw" in t else Termination.RESIGNATION
    if "resign" in t:
        return Termination.RESIGNATION
    if "crash" in t:
        return Termination.CRASH
    if "protocol" in t:
        return Termination.PROTOCOL
    return None


_MS_RE = re.compile(r"^\s*(-?\d+)\s*ms\s*$")


def _parse_rule(value: str) -> Rule:
    t = value.strip().lower()
    if t in _RULE_NAMES:
        return _RULE_NAMES[t]
    if t.lstrip("-").isdigit():
        return rule_from_gomocup(int(t))
    raise ValueError(f"unknown rule RU[{value}]: expected freestyle, standard, renju, caro or a "
                     "Gomocup rule number")


def _sgf_one(props: _SgfProps, ident: str, path: Optional[str]) -> Tuple[int, str]:
    """The single (line, value) of property ``ident`` of a node; more than one value is an error."""
    line, val = props[ident][0]
    if len(props[ident]) > 1:
        raise RecordFormatError(f"property {ident} has {len(props[ident])} values, expected 1",
                                path, line)
    return line, val


def _sgf_root(root: _SgfProps, path: Optional[str], default_rule: Rule
              ) -> Tuple[int, int, Rule, Optional[GameResult], Optional[str], Optional[str]]:
    """The game properties of an SGF root node: (width, height, rule, result, black, white);
    checks ``GM``/``FF`` and refuses setup stones."""
    if "GM" in root:
        line, gm = _sgf_one(root, "GM", path)
        if gm.strip() != "4":
            raise RecordFormatError(f"unknown game GM[{gm}]: only GM[4] (Gomoku/Renju) is "
                                    "supported", path, line)
    if "FF" in root:
        line, ff = _sgf_one(root, "FF", path)
        if ff.strip() not in ("1", "2", "3", "4"):
            raise RecordFormatError(f"unknown file format FF[{ff}]", path, line)
    width = height = 15
    if "SZ" in root:
        line, sz = _sgf_one(root, "SZ", path)
        m = re.match(r"^\s*(\d+)\s*(?::\s*(\d+)\s*)?$", sz)
        if not m:
            raise RecordFormatError(f"bad board size SZ[{sz}]: expected SZ[15] or SZ[20:15]",
                                    path, line)
        width = int(m.group(1))
        height = int(m.group(2)) if m.group(2) else width
        _check_size(width, height, path, line)
    rule = default_rule
    if "RU" in root:
        line, ru = _sgf_one(root, "RU", path)
        try:
            rule = _parse_rule(ru)
        except ValueError as e:
            raise RecordFormatError(str(e), path, line) from None
    result = None
    if "RE" in root:
        line, re_ = _sgf_one(root, "RE", path)
        try:
            result = _parse_sgf_result(re_)
        except ValueError as e:
            raise RecordFormatError(str(e), path, line) from None
    black = _sgf_one(root, "PB", path)[1] if "PB" in root else None
    white = _sgf_one(root, "PW", path)[1] if "PW" in root else None
    for setup in ("AB", "AW", "AE"):
        if setup in root:
            raise RecordFormatError(f"setup stones {setup}[...] are not supported: a record is a "
                                    "move sequence", path, root[setup][0][0])
    return width, height, rule, result, black, white


def _sgf_extras(root: _SgfProps, result: Optional[GameResult]
                ) -> Tuple[Dict[str, List[str]], Optional[GameResult]]:
    """The root properties kept as they are (``metadata["sgf"]``: unknown ones, a non-canonical
    ``TE``, a game comment ``C``) and the result with its termination from ``TE``."""
    extras: Dict[str, List[str]] = {}
    for ident, vals in root.items():
        if ident in _SGF_KNOWN or ident in ("B", "W", "C"):
            continue
        extras[ident] = [v for _, v in vals]
    if "TE" in root and result is not None:
        term = _parse_termination(root["TE"][0][1])
        if term is not None:
            result = GameResult(result.winner, term)
            if root["TE"][0][1] == term.value:
                del extras["TE"]  # canonical: written back from result.termination
    if "C" in root and "B" not in root and "W" not in root:
        extras["C"] = [v for _, v in root["C"]]  # a game comment (a move node's C is the move's)
    return extras, result


def _sgf_comment(props: _SgfProps) -> Tuple[str, Optional[int]]:
    """A move node's comment text and the move's time (ms) from its last line ``<n>ms``, if any."""
    if "C" not in props:
        return "", None
    text = props["C"][0][1]
    lines_ = text.split("\n")
    mt = _MS_RE.match(lines_[-1])
    if not mt:
        return text, None
    return "\n".join(lines_[:-1]), int(mt.group(1))


def _sgf_moves(nodes: List[Tuple[int, _SgfProps]], width: int, height: int, path: Optional[str]
               ) -> Tuple[List[Move], List[Optional[int]], Dict[int, str]]:
    """The moves of the main line (alternating, Black first, on the board, no square twice),
    their times (ms, None where unknown) and the move comments by move index."""
    moves: List[Move] = []
    times: List[Optional[int]] = []
    comments: Dict[int, str] = {}
    seen: Dict[Move, int] = {}
    for k, (node_line, props) in enumerate(nodes):
        for setup in ("AB", "AW", "AE"):
            if setup in props and k > 0:
                raise RecordFormatError(f"setup stones {setup}[...] are not supported",
                                        path, props[setup][0][0])
        colours = [c for c in ("B", "W") if c in props]
        if not colours:
            if k > 0 and props:
                raise RecordFormatError(
                    f"a node without a move ({', '.join(sorted(props))}) is not supported after "
                    "the root", path, node_line)
            continue
        if len(colours) == 2:
            raise RecordFormatError("a node has both B[] and W[] moves", path, node_line)
        colour = colours[0]
        line, val = _sgf_one(props, colour, path)
        expect = "B" if len(moves) % 2 == 0 else "W"
        if colour != expect:
            raise RecordFormatError(f"move {len(moves) + 1} is {colour}[{val}] but {expect} is to "
                                    "move (moves must alternate, Black first)", path, line)
        v = val.strip()
        if len(v) != 2 or v[0] not in _SGF_COORDS or v[1] not in _SGF_COORDS:
            raise RecordFormatError(f"bad coordinates {colour}[{val}]: expected two letters "
                                    "a..z/A..Z (column, row)", path, line)
        x, y = _SGF_COORDS.index(v[0]), _SGF_COORDS.index(v[1])
        if not (0 <= x < width and 0 <= y < height):
            raise RecordFormatError(f"move {len(moves) + 1} {colour}[{val}] = ({x},{y}) is off "
                                    f"the {width}x{height} board", path, line)
        if (x, y) in seen:
            raise RecordFormatError(f"duplicate move {len(moves) + 1} {colour}[{val}]: the square "
                                    f"was already played at move {seen[(x, y)]}", path, line)
        seen[(x, y)] = len(moves) + 1
        text, t = _sgf_comment(props)
        if text:
            comments[len(moves)] = text
        moves.append((x, y))
        times.append(t)
    return moves, times, comments


def _record_from_tree(tree: Tuple[int, List[Tuple[int, _SgfProps]]], parser: _SgfParser,
                      default_rule: Rule) -> GameRecord:
    """The game record of one SGF game tree (line, nodes) read by ``parser``."""
    _, nodes = tree
    path = parser.path
    root = nodes[0][1]
    width, height, rule, result, black, white = _sgf_root(root, path, default_rule)
    extras, result = _sgf_extras(root, result)
    moves, times, comments = _sgf_moves(nodes, width, height, path)
    meta: Dict[str, Any] = {}
    if extras:
        meta["sgf"] = extras
    if comments:
        meta["move_comments"] = comments
    times_ms = times if any(t is not None for t in times) else None
    return GameRecord(width, height, rule, moves, result, black, white, times_ms, meta,
                      source=path)


def read_sgf_games(source: PathOrText, rule: Rule = Rule.FREESTYLE) -> List[GameRecord]:
    """All games of an SGF collection (c-gomoku-cli writes every game of a match to one file).

    ``rule`` is used where a game has no ``RU``. Raises RecordFormatError on malformed input,
    variations, setup stones, non-alternating moves, ``GM`` other than 4, unknown ``RU``/``RE``.
    """
    text, path = _read_source(source)
    parser = _SgfParser(text, path)
    return [_record_from_tree(t, parser, rule) for t in parser.collection()]


def read_sgf(source: PathOrText, rule: Rule = Rule.FREESTYLE) -> GameRecord:
    """The one game of an SGF file (see :func:`read_sgf_games` for collections)."""
    text, path = _read_source(source)
    parser = _SgfParser(text, path)
    trees = parser.collection()
    if len(trees) != 1:
        raise RecordFormatError(f"the file holds {len(trees)} games; use read_sgf_games()",
                                path, trees[1][0])
    return _record_from_tree(trees[0], parser, rule)


def write_sgf(record: GameRecord) -> str:
    """``(;GM[4]FF[4]CA[UTF-8]SZ[..]RU[..]PB[..]PW[..]RE[..] ;B[hh]C[120ms];W[ih]...)``.

    Other root properties come back from ``metadata["sgf"]``; move times are written as
    ``C[<ms>ms]`` (after any per-move comment from ``metadata["move_comments"]``).
    """
    record.validate()
    if record.width > len(_SGF_COORDS) or record.height > len(_SGF_COORDS):
        raise ValueError("SGF coordinates cover at most 52 columns and rows")
    sz = str(record.width) if record.width == record.height else f"{record.width}:{record.height}"
    root = ["GM[4]", "FF[4]", "CA[UTF-8]", f"SZ[{sz}]", f"RU[{record.rule.value}]"]
    if record.black is not None:
        root.append(f"PB[{_sgf_escape(record.black)}]")
    if record.white is not None:
        root.append(f"PW[{_sgf_escape(record.white)}]")
    extras = dict(record.metadata.get("sgf") or {})
    if record.result is not None:
        root.append("RE[{}]".format({BLACK: "B+", WHITE: "W+", None: "0"}[record.result.winner]))
        if record.result.termination is not None and "TE" not in extras:
            root.append(f"TE[{record.result.termination.value}]")
    for ident, vals in extras.items():
        if not re.fullmatch(r"[A-Z]+", ident) or ident in _SGF_KNOWN or ident in ("B", "W"):
            raise ValueError(f"metadata['sgf'] holds an invalid or reserved property {ident!r}")
        if isinstance(vals, str):
            vals = [vals]
        root.append(ident + "".join(f"[{_sgf_escape(str(v))}]" for v in vals))
    out = ["(;" + "".join(root)]
    comments = record.metadata.get("move_comments") or {}
    body = []
    for k, (x, y) in enumerate(record.moves):
        node = f";{'B' if k % 2 == 0 else 'W'}[{_sgf_coord(x, y)}]"
        parts = []
        c = comments.get(k)
        if c:
            parts.append(c)
        t = None if record.times_ms is None else record.times_ms[k]
        if t is not None:
            parts.append(f"{t}ms")
        if parts:
            node += f"C[{_sgf_escape(chr(10).join(parts))}]"
        body.append(node)
    for start in range(0, len(body), 8):
        out.append("".join(body[start:start + 8]))
    return "\n".join(out) + ")\n"


# ============================================================================ openings
_OFFSET_LINE_RE = re.compile(r"^[\s,]*[+-]?\d")
_POS_TOKEN_RE = re.compile(r"([a-zA-Z])(\d+)")


def parse_opening_line(text: str, width: int = 15, height: Optional[int] = None) -> List[Move]:
    """One opening in either format (auto-detected); raises ValueError with the reason.

    Off-board and repeated squares are refused.
    """
    height = width if height is None else height
    s = text.strip()
    if not s:
        raise ValueError("empty opening")
    moves: List[Move] = []
    if _OFFSET_LINE_RE.match(s):
        tokens = [t for t in re.split(r"[\s,]+", s) if t]
        nums = []
        for t in tokens:
            if not re.fullmatch(r"[+-]?\d+", t):
                raise ValueError(f"bad offset {t!r}: expected integers 'dx,dy, dx,dy, ...'")
            nums.append(int(t))
        if len(nums) % 2:
            raise ValueError(f"odd number of offsets ({len(nums)}): every move is a 'dx,dy' pair")
        cx, cy = width // 2, height // 2
        pairs = [(nums[k] + cx, nums[k + 1] + cy, f"{nums[k]},{nums[k + 1]}")
                 for k in range(0, len(nums), 2)]
    else:
        compact = re.sub(r"[\s,]+", "", s)
        pairs = []
        pos = 0
        for mt in _POS_TOKEN_RE.finditer(compact):
            if mt.start() != pos:
                break
            x = ord(mt.group(1).lower()) - ord("a")
            pairs.append((x, int(mt.group(2)) - 1, mt.group(0)))
            pos = mt.end()
        if pos != len(compact) or not pairs:
            raise ValueError(f"bad move {compact[pos:pos + 10]!r}: expected offsets 'dx,dy, ...' or "
                             "positions like 'h8i9j10'")
    seen: Dict[Tuple[int, int], int] = {}
    for k, (x, y, name) in enumerate(pairs):
        if not (0 <= x < width and 0 <= y < height):
            raise ValueError(f"move {k + 1} {name!r} = ({x},{y}) is off the {width}x{height} board")
        if (x, y) in seen:
            raise ValueError(f"duplicate move {k + 1} {name!r}: the square is already move "
                             f"{seen[(x, y)]}")
        seen[(x, y)] = k + 1
        moves.append((x, y))
    return moves


def read_openings(source: PathOrText, width: int = 15, height: Optional[int] = None,
                  on_error: str = "raise",
                  errors: Optional[List[RecordFormatError]] = None) -> List[List[Move]]:
    """Openings, one per line, in offset or pos format (detected per line).

    Blank lines and ``#`` comments (whole-line or trailing) are skipped. A bad line raises
    RecordFormatError naming the line; with ``on_error="skip"`` it is left out and its error
    appended to ``errors`` (when given).
    """
    if on_error not in ("raise", "skip"):
        raise ValueError("on_error must be 'raise' or 'skip'")
    text, path = _read_source(source)
    _check_size(width, width if height is None else height, path, None)
    out = []
    for lineno, line in enumerate(text.splitlines(), 1):
        body = line.split("#", 1)[0]
        if not body.strip():
            continue
        try:
            out.append(parse_opening_line(body, width, height))
        except ValueError as e:
            err = RecordFormatError(str(e), path, lineno)
            if on_error == "raise":
                raise err from None
            if errors is not None:
                errors.append(err)
    return out


def format_opening(moves: Sequence[Move], fmt: str = "offset", width: int = 15,
                   height: Optional[int] = None) -> str:
    """One opening line: ``"0,0, 1,-1"`` (offset) or ``"h8i7"`` (pos)."""
    height = width if height is None else height
    for x, y in moves:
        if not (0 <= x < width and 0 <= y < height):
            raise ValueError(f"({x},{y}) is off the {width}x{height} board")
    if len(set(map(tuple, moves))) != len(moves):
        raise ValueError("an opening repeats a square")
    if fmt == "offset":
        cx, cy = width // 2, height // 2
        return ", ".join(f"{x - cx},{y - cy}" for x, y in moves)
    if fmt == "pos":
        if width > 26:
            raise ValueError("the pos format has column letters a..z only (width <= 26)")
        return "".join(square_name(x, y) for x, y in moves)
    raise ValueError(f"unknown opening format {fmt!r}: 'offset' or 'pos'")


def write_openings(openings: Iterable[Sequence[Move]], fmt: str = "offset", width: int = 15,
                   height: Optional[int] = None) -> str:
    """Openings text, one line each, newline-terminated."""
    lines = [format_opening(o, fmt, width, height) for o in openings]
    return "".join(line + "\n" for line in lines)


# ============================================================================ files
def read_record(path: Union[str, "os.PathLike[str]"], size: SizeArg = None,
                rule: Rule = Rule.FREESTYLE) -> List[GameRecord]:
    """The games of one record file, by extension (``.psq``: one game; ``.sgf``: all games)."""
    ext = Path(os.fspath(path)).suffix.lower()
    if ext == ".psq":
        return [read_psq(Path(path), size=size, rule=rule)]
    if ext == ".sgf":
        return read_sgf_games(Path(path), rule=rule)
    raise ValueError(f"{os.fspath(path)}: unknown record extension {ext!r} (.psq or .sgf)")


#: what :func:`load_games` reads: a file or folder, or several
Sources = Union[str, "os.PathLike[str]", Iterable[Union[str, "os.PathLike[str]"]]]


@dataclass(frozen=True)
class SkippedFile:
    """A file that :func:`load_games` left out with ``on_error="skip"``."""

    path: str
    reason: str


class GameLoader:
    """Iterable over the games of record files; ``skipped`` lists the files left out (with
    ``on_error="skip"``), filled as iteration proceeds and reset by each new iteration."""

    def __init__(self, sources: Sources, on_error: str = "raise", size: SizeArg = None,
                 rule: Rule = Rule.FREESTYLE, recursive: bool = True) -> None:
        if on_error not in ("raise", "skip"):
            raise ValueError("on_error must be 'raise' or 'skip'")
        self.on_error = on_error
        self.size = size
        self.rule = rule
        self.recursive = recursive
        if isinstance(sources, (str, os.PathLike)):
            sources = [sources]
        self.sources = [Path(os.fspath(s)) for s in sources]
        self.skipped: List[SkippedFile] = []

    def files(self) -> List[Path]:
        """The record files, in a stable order (folders walked, sorted)."""
        out: List[Path] = []
        for src in self.sources:
            if src.is_dir():
                pattern = "**/*" if self.recursive else "*"
                found = [p for p in src.glob(pattern)
                         if p.is_file() and p.suffix.lower() in RECORD_EXTENSIONS]
                out.extend(sorted(found))
            elif src.is_file():
                if src.suffix.lower() not in RECORD_EXTENSIONS:
                    raise ValueError(f"{src}: unknown record extension (.psq or .sgf)")
                out.append(src)
            else:
                raise FileNotFoundError(f"{src}: no such file or folder")
        return out

    def __iter__(self) -> Iterator[GameRecord]:
        self.skipped = []
        for path in self.files():
            try:
                games = read_record(path, size=self.size, rule=self.rule)
            except RecordFormatError as e:
                if self.on_error == "raise":
                    raise
                self.skipped.append(SkippedFile(str(path), str(e)))
                continue
            yield from games


def load_games(sources: Sources, on_error: str = "raise", size: SizeArg = None, rule: Rule = Rule.FREESTYLE,
               recursive: bool = True) -> GameLoader:
    """Games from PSQ/SGF files, folders (walked recursively, sorted) or a list of them.

    A malformed file raises RecordFormatError unless ``on_error="skip"``; then its path and
    reason are appended to the returned loader's ``skipped`` list. Files with other extensions in
    a folder (e.g. ``STATS.json``) are not records and are not listed.
    """
    return GameLoader(sources, on_error=on_error, size=size, rule=rule, recursive=recursive)


def save_record(record: GameRecord, path: Union[str, "os.PathLike[str]"]) -> None:
    """Write ``record`` as PSQ or SGF by the extension of ``path``, atomically."""
    ext = Path(os.fspath(path)).suffix.lower()
    if ext == ".psq":
        text = write_psq(record)
    elif ext == ".sgf":
        text = write_sgf(record)
    else:
        raise ValueError(f"{os.fspath(path)}: unknown record extension {ext!r} (.psq or .sgf)")
    atomic_write_text(path, text)
