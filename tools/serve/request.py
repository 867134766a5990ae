"""Request validation for ``gomoku serve``: JSON body -> (board, limits), or a RequestError.

Everything here is pure (no sockets, no search) so that it can be tested on its own. The rules are
documented in :mod:`tools.serve.app`; in short:

* **400**: the body is not what the API describes (wrong types, wrong shape, cell values other
  than 0/1/2, an unreadable move, an unknown key, a negative or non-numeric limit).
* **422**: the body is well formed but describes no position the engine may be asked about
  (impossible stone counts, a game that is already won or a full board, an occupied or
  off-board move in a move list, a renju-forbidden Black move in a move list, a ``side_to_move``
  that contradicts the move list, no legal move).

Limits above the server's maximum are *clamped* (the answer says which ones were).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from gomoku_ai import movegen
from gomoku_ai.board import MAX_SIZE, MIN_SIZE, Board, IllegalMoveError
from gomoku_ai.rules import BLACK, EMPTY, WHITE, Rule, rule_from_gomocup

MAX_SIDE = MAX_SIZE     # 32; columns past z are named "x,y" (Board.move_name)
DEFAULT_SIZE = 15
DEFAULT_VISITS = 800   # when a request gives neither visits nor time_ms (then clamped to the cap)
MAX_TOP = 25

POSITION_KEYS = frozenset(("board", "moves", "size", "side_to_move", "rule", "top"))
MOVE_KEYS = POSITION_KEYS | {"visits", "time_ms"}
ANALYZE_KEYS = POSITION_KEYS


class RequestError(Exception):
    """A client error: HTTP ``status``, a short machine-readable ``code`` and a message."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message

    def payload(self) -> Dict[str, Any]:
        return {"error": self.code, "message": self.message, "status": self.status}


def bad(code: str, message: str) -> RequestError:
    return RequestError(400, code, message)


def illegal(code: str, message: str) -> RequestError:
    return RequestError(422, code, message)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def color_name(c: int) -> str:
    return "black" if c == BLACK else "white"


# ------------------------------------------------------------------------------------ pieces
RULE_FORMS = ('a rule name ("freestyle", "standard", "renju", "caro") or a Gomocup INFO rule code '
              '(an integer >= 0 such as 4, or the same as a string, "4")')


def _json_type(v: Any) -> str:
    """The JSON name of a value's type, for error messages."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, dict):
        return "an object"
    return "a string"


def parse_rule(body: Dict[str, Any]) -> Rule:
    """``rule``: a name or a Gomocup code, as a string or (the code) as an integer; default
    freestyle. A boolean, a float, a negative integer or any other type is a 400 ``bad_rule``."""
    v = body.get("rule", "freestyle")
    if _is_int(v):
        if v < 0:
            raise bad("bad_rule", f"rule {v} is negative; rule must be {RULE_FORMS}")
        return rule_from_gomocup(v)
    if not isinstance(v, str):
        raise bad("bad_rule", f"rule is {_json_type(v)}; it must be {RULE_FORMS}")
    if len(v) > 32:
        raise bad("bad_rule", f"rule is a string of {len(v)} characters; it must be {RULE_FORMS}")
    try:
        return Rule.parse(v)
    except ValueError as e:
        raise bad("bad_rule", str(e)) from None


def parse_side(body: Dict[str, Any]) -> Optional[int]:
    if "side_to_move" not in body or body["side_to_move"] is None:
        return None
    v = body["side_to_move"]
    if isinstance(v, str) and v.strip().lower() in ("black", "white"):
        return BLACK if v.strip().lower() == "black" else WHITE
    if _is_int(v) and v in (BLACK, WHITE):
        return v
    raise bad("bad_side_to_move", 'side_to_move must be "black", "white", 1 (black) or 2 (white)')


def _check_side(name: str, v: Any) -> int:
    if not _is_int(v) or not MIN_SIZE <= v <= MAX_SIDE:
        raise bad("bad_size", f"{name} must be an integer from {MIN_SIZE} to {MAX_SIDE}")
    return v


def parse_size(body: Dict[str, Any]) -> Optional[Tuple[int, int]]:
    """(width, height) from ``size`` (an integer for a square board, or [width, height])."""
    if "size" not in body or body["size"] is None:
        return None
    v = body["size"]
    if _is_int(v):
        s = _check_side("size", v)
        return s, s
    if isinstance(v, list) and len(v) == 2:
        return _check_side("size[0] (width)", v[0]), _check_side("size[1] (height)", v[1])
    raise bad("bad_size", f"size must be an integer ({MIN_SIZE}..{MAX_SIDE}) or [width, height]")


def parse_top(body: Dict[str, Any], default: int = 5) -> int:
    v = body.get("top", default)
    if not _is_int(v) or not 0 <= v <= MAX_TOP:
        raise bad("bad_top", f"top must be an integer from 0 to {MAX_TOP}")
    return v


@dataclass
class Limits:
    """What the search will use, after clamping to the server's caps."""

    visits: int
    time_ms: float
    clamped: List[str] = field(default_factory=list)
    asked: Dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> Dict[str, Any]:
        return {"visits": self.visits, "time_ms": round(self.time_ms, 1), "clamped": self.clamped}


def parse_limits(body: Dict[str, Any], max_visits: int, max_time_ms: float) -> Limits:
    """``visits`` (integer >= 1) and ``time_ms`` (number > 0), both optional.

    Values above the server's caps are clamped. Neither given: ``min(DEFAULT_VISITS, cap)`` visits.
    The search always stops at the first limit reached, and never runs past ``max_time_ms`` or
    ``max_visits`` (a time-only request may use up to ``max_visits`` visits).
    """
    clamped: List[str] = []
    asked: Dict[str, Any] = {}
    visits: Optional[int] = None
    time_ms: Optional[float] = None
    if body.get("visits") is not None:
        v = body["visits"]
        if not _is_int(v) or v < 1:
            raise bad("bad_limit", "visits must be an integer >= 1")
        asked["visits"] = v
        visits = v
        if v > max_visits:
            visits = max_visits
            clamped.append("visits")
    if body.get("time_ms") is not None:
        t = body["time_ms"]
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t) or t <= 0:
            raise bad("bad_limit", "time_ms must be a number > 0 (milliseconds)")
        asked["time_ms"] = t
        time_ms = float(t)
        if t > max_time_ms:
            time_ms = float(max_time_ms)
            clamped.append("time_ms")
    if visits is None:
        visits = max_visits if time_ms is not None else min(DEFAULT_VISITS, max_visits)
    if time_ms is None:
        time_ms = float(max_time_ms)
    return Limits(visits=visits, time_ms=time_ms, clamped=clamped, asked=asked)


# ------------------------------------------------------------------------------------ position
@dataclass
class Position:
    board: Board
    form: str            # "board" or "moves"

    def summary(self) -> Dict[str, Any]:
        b = self.board
        return {"rule": b.rule.value, "size": f"{b.width}x{b.height}", "form": self.form,
                "stones": len(b.moves), "side_to_move": color_name(b.side_to_move)}


def parse_position(body: Dict[str, Any], allowed_keys: frozenset) -> Position:
    """The board described by ``body`` (see :mod:`tools.serve.app`), checked; raises RequestError."""
    if not isinstance(body, dict):
        raise bad("bad_body", "the body must be a JSON object")
    unknown = sorted(k for k in body if k not in allowed_keys)
    if unknown:
        raise bad("unknown_key", f"unknown key(s) {', '.join(map(repr, unknown[:5]))}; allowed: "
                                 f"{', '.join(sorted(allowed_keys))}")
    has_board = body.get("board") is not None
    has_moves = body.get("moves") is not None
    if has_board == has_moves:
        raise bad("bad_position", 'give exactly one of "board" (a 2-D list of 0/1/2) or "moves" '
                                  '(a move list such as ["h8", "i9"] or [[7, 7], [8, 8]])')
    rule = parse_rule(body)
    side = parse_side(body)
    size = parse_size(body)
    if has_board:
        board = _board_from_grid(body["board"], rule, side, size)
        form = "board"
    else:
        board = _board_from_moves(body["moves"], rule, side, size or (DEFAULT_SIZE, DEFAULT_SIZE))
        form = "moves"
    if board.is_full():
        raise illegal("board_full", "the board is full: there is no move to make")
    return Position(board, form)


def _board_from_grid(grid: Any, rule: Rule, side: Optional[int],
                     size: Optional[Tuple[int, int]]) -> Board:
    if not isinstance(grid, list) or not grid:
        raise bad("bad_board", "board must be a non-empty list of rows (board[y][x], top row "
                               "first)")
    h = len(grid)
    if not MIN_SIZE <= h <= MAX_SIDE:
        raise bad("bad_board", f"board has {h} rows; a side must be {MIN_SIZE} to {MAX_SIDE}")
    if not all(isinstance(r, list) for r in grid):
        raise bad("bad_board", "every row of board must be a list of cells")
    w = len(grid[0])
    if not MIN_SIZE <= w <= MAX_SIDE:
        raise bad("bad_board", f"board rows have {w} cells; a side must be {MIN_SIZE} to "
                               f"{MAX_SIDE}")
    for y, row in enumerate(grid):
        if len(row) != w:
            raise bad("bad_board", f"board row {y} has {len(row)} cells, row 0 has {w}: the board "
                                   "must be rectangular")
    if size is not None and size != (w, h):
        raise bad("bad_size", f"size {size[0]}x{size[1]} does not match the {w}x{h} board")
    blacks: List[int] = []
    whites: List[int] = []
    for y, row in enumerate(grid):
        for x, c in enumerate(row):
            if not _is_int(c) or c not in (EMPTY, BLACK, WHITE):
                raise bad("bad_cell", f"board[{y}][{x}] is {c!r}; cells must be 0 (empty), "
                                      "1 (black) or 2 (white)")
            if c == BLACK:
                blacks.append(y * w + x)
            elif c == WHITE:
                whites.append(y * w + x)
    nb, nw = len(blacks), len(whites)
    if side is None:
        if nb == nw:
            side = BLACK
        elif nb == nw + 1:
            side = WHITE
        else:
            raise illegal("stone_count", f"{nb} black and {nw} white stones: Black moves first, so "
                                         "Black must have as many stones as White (Black to move) "
                                         "or one more (White to move)")
    elif side == BLACK and nb != nw:
        raise illegal("stone_count", f"Black to move needs as many black stones as white ones; "
                                     f"the board has {nb} black and {nw} white")
    elif side == WHITE and nb != nw + 1:
        raise illegal("stone_count", f"White to move needs exactly one black stone more than "
                                     f"white; the board has {nb} black and {nw} white")
    board = Board(w, h, rule)
    board.set_position(blacks, whites, side)
    _check_not_won(board, blacks + whites)
    return board


def _check_not_won(board: Board, stones: Sequence[int]) -> None:
    for m in stones:
        line = board.winning_line(m)
        if line:
            who = color_name(board[m])
            raise illegal("game_over", f"the game is already won: {who} has a winning line "
                                       f"through {board.move_name(m)}")
    if board.rule is Rule.RENJU:
        for m in stones:
            if board[m] == BLACK and any(board.run(m, BLACK, d)[0] > 5 for d in range(4)):
                raise illegal("game_over", f"the game is over: Black has an overline through "
                                           f"{board.move_name(m)}, a forbidden move under renju")


def _move_of(board: Board, i: int, item: Any) -> int:
    if isinstance(item, str):
        if len(item) > 16:
            raise bad("bad_move", f"moves[{i}] is not a move")
        try:
            return board.parse(item)
        except IllegalMoveError as e:
            raise illegal("illegal_move", f"moves[{i}] {item!r}: {e}") from None
        except ValueError as e:
            raise bad("bad_move", f"moves[{i}]: {e}") from None
    if isinstance(item, list) and len(item) == 2 and all(_is_int(v) for v in item):
        x, y = item
        try:
            return board.index(x, y)
        except IllegalMoveError as e:
            raise illegal("illegal_move", f"moves[{i}] {item!r}: {e}") from None
    raise bad("bad_move", f"moves[{i}] is {item!r}; a move is a string like \"h8\" or \"7,7\" "
                          "or a pair [x, y] of 0-based integers")


def _board_from_moves(moves: Any, rule: Rule, side: Optional[int],
                      size: Tuple[int, int]) -> Board:
    if not isinstance(moves, list):
        raise bad("bad_moves", "moves must be a list of moves, Black first")
    w, h = size
    if len(moves) > w * h:
        raise bad("bad_moves", f"{len(moves)} moves do not fit a {w}x{h} board")
    board = Board(w, h, rule)
    for i, item in enumerate(moves):
        m = _move_of(board, i, item)
        if not board.is_empty(m):
            raise illegal("illegal_move", f"moves[{i}] {board.move_name(m)} is already occupied")
        if board.winner is not None:
            raise illegal("game_over", f"moves[{i}] comes after the game was already won")
        if movegen.is_forbidden(board, m):
            raise illegal("forbidden_move", f"moves[{i}] {board.move_name(m)} is a forbidden "
                                            "move for Black under renju (Black has lost)")
        board.push(m)
    if board.winner is not None:
        raise illegal("game_over", f"the game is already won by {color_name(board.winner)}")
    if side is not None and side != board.side_to_move:
        raise illegal("side_to_move_mismatch",
                      f"after {len(moves)} moves {color_name(board.side_to_move)} is to move, "
                      f"not {color_name(side)}")
    return board
