"""The board: a W x H grid of int8 cells, a move stack, an incremental Zobrist hash and a win check
around the last move only.

Coordinates follow Gomocup: ``x`` is the column (0 at the left), ``y`` the row (0 at the top). A move
is the flat index ``m = y * width + x``; :meth:`Board.xy` and :meth:`Board.index` convert, and
:func:`parse_move` / :meth:`Board.move_name` read and write ``"x,y"`` and ``"h8"`` forms (a letter
for the column, ``a`` = x 0, and the 1-based row counted from the top, as c-gomoku-cli writes it).

Internally the cells are a padded ``bytearray`` (one WALL column and a WALL row above and below), so
that the hot loop reads Python ints without numpy's per-element overhead and a line scan stops at the
edge without bounds checks. ``Board.cells`` is a numpy (H, W) int8 *view* of the same memory.
"""
from __future__ import annotations

import re
from typing import Iterable, List, Optional, Sequence, Tuple

import numpy as np

from .rules import BLACK, EMPTY, WALL, WHITE, Outcome, Rule, Termination, opponent

MIN_SIZE = 5
MAX_SIZE = 32

_ZOBRIST_SEED = 0x5EED_60_3C0  # fixed: hashes are reproducible across runs and machines
_zobrist_cache: dict = {}


class IllegalMoveError(ValueError):
    """A move onto an occupied or off-board square (renju forbidden points are the business of
    :mod:`gomoku_ai.movegen`, not of the board)."""


class BoardSizeError(ValueError):
    """A board size outside MIN_SIZE..MAX_SIZE."""


def _zobrist(n_cells: int) -> Tuple[List[int], List[int]]:
    """Zobrist keys for BLACK and WHITE stones on ``n_cells`` flat squares (64-bit Python ints)."""
    keys = _zobrist_cache.get(n_cells)
    if keys is None:
        rng = np.random.default_rng(_ZOBRIST_SEED + n_cells)
        arr = rng.integers(0, 2**63 - 1, size=(2, n_cells), dtype=np.int64)
        keys = ([int(v) for v in arr[0]], [int(v) for v in arr[1]])
        _zobrist_cache[n_cells] = keys
    return keys


_TURN_KEY = 0x1F2E3D4C5B6A7988  # xored in when White is to move


class Board:
    """A position: stones, side to move and move history.

    ``push`` does not check legality (check with :func:`gomoku_ai.movegen.is_legal` first, which also
    knows the renju forbidden points; :meth:`play` checks only that the square is free); it records
    whether the move completed a winning line under ``rule`` so that :attr:`winner` is O(1).
    """

    __slots__ = ("width", "height", "rule", "n", "_p", "_buf", "_pad", "_dirs", "cells",
                 "moves", "_wins", "hash", "side_to_move", "_zb", "_zw", "_walls")

    def __init__(self, width: int = 15, height: Optional[int] = None, rule: Rule = Rule.FREESTYLE,
                 n: int = 5) -> None:
        """Create an empty board; ``height`` defaults to ``width``; ``n`` is the winning length."""
        height = width if height is None else height
        for v in (width, height):
            if not (MIN_SIZE <= v <= MAX_SIZE):
                raise BoardSizeError(f"board size {width}x{height} is outside "
                                     f"{MIN_SIZE}..{MAX_SIZE} on a side")
        if not 3 <= n <= min(width, height):
            raise ValueError(f"winning length {n} does not fit a {width}x{height} board")
        self.width = width
        self.height = height
        self.rule = rule
        self.n = n
        p = width + 1
        self._p = p
        self._buf = bytearray([WALL]) * ((height + 2) * p + 1)
        self._pad = [(i // width + 1) * p + i % width for i in range(width * height)]
        for pi in self._pad:
            self._buf[pi] = EMPTY
        self._dirs = (1, p, p + 1, p - 1)
        grid = np.frombuffer(self._buf, dtype=np.int8)
        self.cells = grid[p:p + height * p].reshape(height, p)[:, :width]
        self.moves: List[int] = []
        self._wins: List[bool] = []
        self.hash = 0
        self.side_to_move = BLACK
        self._zb, self._zw = _zobrist(width * height)
        self._walls: List[int] = []

    # ------------------------------------------------------------------ geometry
    @property
    def size(self) -> int:
        """Number of squares (width * height)."""
        return self.width * self.height

    def index(self, x: int, y: int) -> int:
        """Flat index of (x, y); raises IllegalMoveError when off the board."""
        if not (0 <= x < self.width and 0 <= y < self.height):
            raise IllegalMoveError(f"{x},{y} is off the {self.width}x{self.height} board")
        return y * self.width + x

    @property
    def centre(self) -> int:
        """Flat index of the centre, ``(width // 2, height // 2)``: on an even side the higher of the two
        middle lines (Gomocup's opening offsets count from it)."""
        return (self.height // 2) * self.width + self.width // 2

    def xy(self, m: int) -> Tuple[int, int]:
        """(x, y) of the flat index ``m``."""
        return m % self.width, m // self.width

    def move_name(self, m: int) -> str:
        """``h8`` style name of ``m`` (column letter, 1-based row from the top); columns past ``z``
        (boards wider than 26) have no letter and are named ``x,y`` instead."""
        return square_name(*self.xy(m))

    def parse(self, text: str) -> int:
        """Flat index from ``"x,y"`` (0-based) or ``"h8"``; raises IllegalMoveError."""
        x, y = parse_move(text)
        return self.index(x, y)

    # ------------------------------------------------------------------ state
    def __getitem__(self, m: int) -> int:
        """Colour at flat index ``m`` (EMPTY, BLACK, WHITE or WALL)."""
        return self._buf[self._pad[m]]

    def is_empty(self, m: int) -> bool:
        """True when ``m`` is on the board and free."""
        return 0 <= m < self.size and self._buf[self._pad[m]] == EMPTY

    @property
    def last_move(self) -> Optional[int]:
        """The most recent move, or None on an empty move stack."""
        return self.moves[-1] if self.moves else None

    @property
    def winner(self) -> Optional[int]:
        """The colour whose last move completed a winning line, else None. O(1)."""
        if self._wins and self._wins[-1]:
            return self._buf[self._pad[self.moves[-1]]]
        return None

    def is_full(self) -> bool:
        """True when no empty square is left."""
        return len(self.moves) + len(self._walls) >= self.size

    def outcome(self) -> Optional[Outcome]:
        """Outcome if the game is over (a five by the last move, or a full board), else None."""
        w = self.winner
        if w is not None:
            return Outcome(w, Termination.FIVE, tuple(self.winning_line(self.moves[-1]) or ()))
        if self.is_full():
            return Outcome(None, Termination.BOARD_FULL)
        return None

    def legal_mask(self) -> np.ndarray:
        """Boolean (H*W,) array of empty squares. Not a legality test under renju (the forbidden
        points are *not* removed); the rule-aware mask is :func:`gomoku_ai.movegen.legal_mask`."""
        return (self.cells == EMPTY).reshape(-1)

    def empty_squares(self) -> List[int]:
        """Flat indices of the empty squares, in index order."""
        return [int(i) for i in np.flatnonzero(self.cells.reshape(-1) == EMPTY)]

    # ------------------------------------------------------------------ moves
    def push(self, m: int) -> bool:
        """Play ``m`` for the side to move; return True if it completes a winning line.

        Does not check that ``m`` is empty (see :meth:`play` for the checked version).
        """
        pi = self._pad[m]
        c = self.side_to_move
        buf = self._buf
        buf[pi] = c
        self.hash ^= (self._zb[m] if c == BLACK else self._zw[m]) ^ _TURN_KEY
        self.moves.append(m)
        win = self._five_at(pi, c)
        self._wins.append(win)
        self.side_to_move = 3 - c   # rules.opponent(c), inlined: push/pop are 4% slower with the call
        return win

    def push_quiet(self, m: int) -> None:
        """:meth:`push` without the win check, for a search that knows ``m`` completes no winning
        line (a VCF's fours and blocks: a five-point is always dealt with first). The move is
        recorded as not winning, so :attr:`winner` would be wrong if it did win; undo it with
        :meth:`pop` before anything else reads the board."""
        c = self.side_to_move
        self._buf[self._pad[m]] = c
        self.hash ^= (self._zb[m] if c == BLACK else self._zw[m]) ^ _TURN_KEY
        self.moves.append(m)
        self._wins.append(False)
        self.side_to_move = 3 - c

    def pop(self) -> int:
        """Undo the last move and return it."""
        m = self.moves.pop()
        self._wins.pop()
        c = 3 - self.side_to_move   # rules.opponent, inlined (see push)
        self._buf[self._pad[m]] = EMPTY
        self.hash ^= (self._zb[m] if c == BLACK else self._zw[m]) ^ _TURN_KEY
        self.side_to_move = c
        return m

    def play(self, m: int) -> bool:
        """Checked push: raises IllegalMoveError on an occupied or off-board square, or when the
        game is already over."""
        if not (0 <= m < self.size):
            raise IllegalMoveError(f"move {m} is off the {self.width}x{self.height} board")
        if self._buf[self._pad[m]] != EMPTY:
            raise IllegalMoveError(f"{self.move_name(m)} ({m % self.width},{m // self.width}) "
                                   "is occupied")
        if self.winner is not None:
            raise IllegalMoveError("the game is already won")
        return self.push(m)

    def put_wall(self, m: int) -> None:
        """Block square ``m`` permanently (a protocol ``x,y,3`` stone); not part of the move stack."""
        if self._buf[self._pad[m]] != EMPTY:
            raise IllegalMoveError(f"{self.move_name(m)} is occupied")
        self._buf[self._pad[m]] = WALL
        self._walls.append(m)

    @property
    def stones_key(self) -> int:
        """The Zobrist hash of the stones alone: the same whoever is to move (``hash`` also
        toggles with the turn, on every move and pass). Walls (:meth:`put_wall`) are not in it."""
        return self.hash ^ _TURN_KEY if self.side_to_move == WHITE else self.hash

    def pass_turn(self) -> None:
        """Give the move to the other side without a stone (used to set up positions)."""
        self.side_to_move = opponent(self.side_to_move)
        self.hash ^= _TURN_KEY

    def clear(self) -> None:
        """Empty the board (same size and rule)."""
        for pi in self._pad:
            self._buf[pi] = EMPTY
        self.moves.clear()
        self._wins.clear()
        self._walls.clear()
        self.hash = 0
        self.side_to_move = BLACK

    def copy(self) -> "Board":
        """An independent copy with the same history."""
        b = Board(self.width, self.height, self.rule, self.n)
        b._buf[:] = self._buf
        b.moves = list(self.moves)
        b._wins = list(self._wins)
        b._walls = list(self._walls)
        b.hash = self.hash
        b.side_to_move = self.side_to_move
        return b

    # ------------------------------------------------------------------ lines
    def run(self, m: int, color: int, d: int) -> Tuple[int, int, int]:
        """Length of the run of ``color`` through ``m`` along direction index ``d`` (0: -, 1: |,
        2: \\, 3: /), counting ``m`` itself as ``color``; and the two cells just past its ends."""
        step = self._dirs[d]
        a, b = self._run_ends(self._pad[m], color, step)
        return (b - a) // step - 1, self._buf[a], self._buf[b]

    def _run_ends(self, pi: int, c: int, step: int) -> Tuple[int, int]:
        """Padded indices of the first cells that are not ``c`` on both sides of ``pi`` along
        ``step``. (``_five_at`` repeats this loop inline: it is the hot path of every push.)"""
        buf = self._buf
        a = pi - step
        while buf[a] == c:
            a -= step
        b = pi + step
        while buf[b] == c:
            b += step
        return a, b

    def _five_at(self, pi: int, c: int) -> bool:
        """Does the stone of colour ``c`` at padded index ``pi`` complete a winning line?"""
        buf = self._buf
        n = self.n
        for step in self._dirs:
            a = pi - step
            while buf[a] == c:
                a -= step
            b = pi + step
            while buf[b] == c:
                b += step
            length = (b - a) // step - 1
            if length >= n and self._run_wins(length, buf[a], buf[b], c):
                return True
        return False

    def _run_wins(self, length: int, end_a: int, end_b: int, c: int) -> bool:
        """Rule decision for a run of ``length >= n`` stones of ``c`` between cells ``end_a`` and
        ``end_b``: FREESTYLE any; STANDARD exactly n; RENJU exactly n for Black, any for White;
        CARO any unless both ends are the opponent's stones."""
        rule = self.rule
        if rule is Rule.FREESTYLE or (rule is Rule.RENJU and c == WHITE):
            return True
        if rule is Rule.CARO:
            o = opponent(c)
            return not (end_a == o and end_b == o)
        return length == self.n

    def makes_five(self, m: int, color: int) -> bool:
        """Would ``color`` playing on empty ``m`` complete a winning line? The board is unchanged."""
        pi = self._pad[m]
        self._buf[pi] = color
        try:
            return self._five_at(pi, color)
        finally:
            self._buf[pi] = EMPTY

    def winning_line(self, m: int) -> Optional[List[int]]:
        """The winning line through the stone at ``m``, as flat indices in order, or None."""
        pi = self._pad[m]
        c = self._buf[pi]
        if c not in (BLACK, WHITE) or not self._five_at(pi, c):
            return None
        buf, p, w = self._buf, self._p, self.width
        for step in self._dirs:
            a, b = self._run_ends(pi, c, step)
            length = (b - a) // step - 1
            if length >= self.n and self._run_wins(length, buf[a], buf[b], c):
                return [(q // p - 1) * w + q % p for q in range(a + step, b, step)]
        return None

    # ------------------------------------------------------------------ text
    def to_ascii(self, coords: bool = False) -> str:
        """Rows of ``.`` (empty), ``X`` (black), ``O`` (white), ``#`` (wall), top row first."""
        sym = {EMPTY: ".", BLACK: "X", WHITE: "O", WALL: "#"}
        rows = ["".join(sym[int(v)] for v in row) for row in self.cells]
        if coords:
            head = "   " + "".join(chr(ord("a") + x) for x in range(self.width))
            rows = [head] + [f"{y + 1:>2} {r}" for y, r in enumerate(rows)]
        return "\n".join(rows)

    @classmethod
    def from_ascii(cls, text: str, rule: Rule = Rule.FREESTYLE, to_move: Optional[int] = None,
                   n: int = 5) -> "Board":
        """Build a board from rows of ``.``/``X``/``O``/``#`` (spaces ignored, blank lines skipped).

        Stones are pushed alternately (Black first) in reading order so that the move stack and the
        hash are consistent; the side to move is then the colour with fewer stones (Black on a tie)
        unless ``to_move`` is given. The last pushed stone is *not* meaningful as a last move, and no
        win is recorded for set-up stones.
        """
        rows = [r.replace(" ", "") for r in text.strip("\n").splitlines()]
        rows = [r for r in rows if r]
        h = len(rows)
        w = len(rows[0]) if rows else 0
        if any(len(r) != w for r in rows):
            raise ValueError("ASCII board rows have different lengths")
        b = cls(w, h, rule, n)
        blacks, whites = [], []
        for y, r in enumerate(rows):
            for x, ch in enumerate(r):
                m = y * w + x
                if ch in "xXbB●":
                    blacks.append(m)
                elif ch in "oOwW○":
                    whites.append(m)
                elif ch == "#":
                    b.put_wall(m)
                elif ch not in ".+-_":
                    raise ValueError(f"unexpected character {ch!r} in ASCII board")
        b.set_position(blacks, whites, to_move)
        return b

    def set_position(self, blacks: Sequence[int], whites: Sequence[int],
                     to_move: Optional[int] = None) -> None:
        """Replace the stones with the given ones (any order), interleaving them on the move stack.

        The side to move defaults to the colour with fewer stones (Black on a tie). Wins are not
        recorded for these set-up stones.
        """
        walls = list(self._walls)
        self.clear()
        for m in walls:
            self.put_wall(m)
        bl, wh = list(blacks), list(whites)
        seq: List[Tuple[int, int]] = []
        i = j = 0
        color = BLACK if len(bl) >= len(wh) else WHITE
        while i < len(bl) or j < len(wh):
            if (color == BLACK and i < len(bl)) or j >= len(wh):
                seq.append((BLACK, bl[i])); i += 1
            else:
                seq.append((WHITE, wh[j])); j += 1
            color = opponent(seq[-1][0])
        for c, m in seq:
            if self._buf[self._pad[m]] != EMPTY:
                raise IllegalMoveError(f"{self.move_name(m)} is given twice")
            if self.side_to_move != c:
                self.pass_turn()
            self._buf[self._pad[m]] = c
            self.hash ^= (self._zb[m] if c == BLACK else self._zw[m]) ^ _TURN_KEY
            self.side_to_move = opponent(c)
            self.moves.append(m)
            self._wins.append(False)
        if to_move is None:
            to_move = BLACK if len(bl) <= len(wh) else WHITE
        if self.side_to_move != to_move:
            self.pass_turn()

    def __repr__(self) -> str:
        return (f"Board({self.width}x{self.height}, {self.rule.value}, {len(self.moves)} moves, "
                f"{'black' if self.side_to_move == BLACK else 'white'} to move)")

    @classmethod
    def from_moves(cls, moves: Iterable[int], width: int = 15, height: Optional[int] = None,
                   rule: Rule = Rule.FREESTYLE) -> "Board":
        """A board after playing ``moves`` (flat indices) alternately from Black, checked."""
        b = cls(width, height, rule)
        for m in moves:
            b.play(m)
        return b


_XY_RE = re.compile(r"^\s*(-?\d+)\s*,\s*(-?\d+)\s*$")
_POS_RE = re.compile(r"^\s*([a-zA-Z])\s*(\d+)\s*$")


def square_name(x: int, y: int) -> str:
    """``h8`` for (7, 7): the column letter of ``x`` and the 1-based row ``y + 1`` counted from the top (the
    inverse of :func:`parse_move`); a square with no column letter (``x`` outside a..z) is named ``x,y``."""
    if not 0 <= x < 26:
        return f"{x},{y}"
    return f"{chr(ord('a') + x)}{y + 1}"


def parse_move(text: str) -> Tuple[int, int]:
    """(x, y) from ``"x,y"`` (0-based, Gomocup) or ``"h8"`` (letter column, 1-based row from the
    top). Raises ValueError on anything else; range checks belong to the board."""
    m = _XY_RE.match(text)
    if m:
        return int(m.group(1)), int(m.group(2))
    m = _POS_RE.match(text)
    if m:
        return ord(m.group(1).lower()) - ord("a"), int(m.group(2)) - 1
    raise ValueError(f"cannot read a move from {text!r}; use 'x,y' (0-based) or 'h8'")
