"""Request validation for ``gomoku serve``: JSON body -> (board, limits), or a RequestError.

Everything here is pure (no sockets, no search) so that it can be tested on its own. The body's
shape and types are checked by the models of :mod:`tools.serve.schema` (:func:`validated` maps
their errors to this service's codes); the rest is checked here. In short:

* **400**: the body is not what the API describes (wrong types, wrong shape, cell values other
  than 0/1/2, an unreadable move, an unknown key, a negative or non-numeric limit).
* **422**: the body is well formed but describes no position the engine may be asked about
  (impossible stone counts, a game that is already won or a full board, an occupied or
  off-board move in a move list, a renju-forbidden Black move in a move list, a ``side_to_move``
  that contradicts the move list, no legal move).

Limits above the server's maximum are *clamped* (the answer says which ones were).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple, Type, TypeVar, Union

from pydantic import BaseModel, ValidationError

from gomoku_ai import movegen
from gomoku_ai.board import MAX_SIZE, MIN_SIZE, Board, IllegalMoveError
from gomoku_ai.rules import BLACK, WHITE, Rule, rule_from_gomocup

from .schema import MAX_TOP, RULE_DOC, MoveItem, PositionRequest

MAX_SIDE = MAX_SIZE     # 32; columns past z are named "x,y" (Board.move_name)
DEFAULT_SIZE = 15
DEFAULT_VISITS = 800   # when a request gives neither visits nor time_ms (then clamped to the cap)

M = TypeVar("M", bound=BaseModel)


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


def color_name(c: int) -> str:
    return "black" if c == BLACK else "white"


# ------------------------------------------------------------------------------------ shape
#: a field's error code and what the field must be, in the order the checks are reported
_FIELDS: Dict[str, Tuple[str, str]] = {
    "rule": ("bad_rule", f"rule must be {RULE_DOC}"),
    "side_to_move": ("bad_side_to_move",
                     'side_to_move must be "black", "white", 1 (black) or 2 (white)'),
    "size": ("bad_size", f"size must be an integer ({MIN_SIZE}..{MAX_SIDE}) or [width, height]"),
    "board": ("bad_board", "board must be a list of 5 to 32 rows of 5 to 32 cells (board[y][x], "
                           "top row first)"),
    "moves": ("bad_moves", "moves must be a list of moves, Black first"),
    "move": ("bad_move", 'a move is a string like "h8" or "7,7" or a pair [x, y] of 0-based '
                         'integers'),
    "visits": ("bad_limit", "visits must be an integer >= 1"),
    "time_ms": ("bad_limit", "time_ms must be a number > 0 (milliseconds)"),
    "top": ("bad_top", f"top must be an integer from 0 to {MAX_TOP}"),
    "you": ("bad_color", 'you must be "black" or "white"'),
}
_ORDER = {name: i for i, name in enumerate(_FIELDS)}


def validated(model: Type[M], body: Any) -> M:
    """``body`` (parsed JSON) as ``model``, or a 400 naming the first problem: not an object
    (``bad_body``), an unknown key (``unknown_key``), else the field's own code (``bad_rule``,
    ``bad_board``, a cell: ``bad_cell``, one move of a list: ``bad_move``, ...)."""
    if not isinstance(body, dict):
        raise bad("bad_body", "the body must be a JSON object")
    try:
        return model.model_validate(body)
    except ValidationError as e:
        errors = e.errors(include_url=False)
    unknown = [str(err["loc"][0]) for err in errors if err["type"] == "extra_forbidden"]
    if unknown:
        allowed = ", ".join(sorted(model.model_fields))
        raise bad("unknown_key", f"unknown key(s) {', '.join(map(repr, unknown[:5]))}; allowed: "
                                 f"{allowed}") from None
    err = min(errors, key=lambda x: _ORDER.get(str(x["loc"][0]) if x["loc"] else "", -1))
    loc = err["loc"]
    name = str(loc[0]) if loc else ""
    code, must = _FIELDS.get(name, ("bad_body", "the body does not match the schema"))
    where = name
    if name == "board" and len(loc) >= 3 and isinstance(loc[2], int):
        code, where = "bad_cell", f"board[{loc[1]}][{loc[2]}]"
        must = "cells must be 0 (empty), 1 (black) or 2 (white)"
    elif name == "moves" and len(loc) >= 2 and isinstance(loc[1], int):
        code, where, must = "bad_move", f"moves[{loc[1]}]", _FIELDS["move"][1]
    raise bad(code, f"{where or 'body'} is {_described(err.get('input'))}: {err['msg']}; "
                    f"{must}") from None


def _described(v: Any) -> str:
    """A JSON value's type in words, for error messages (a negative number says so)."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return f"{v!r}, a negative number" if v < 0 else f"the number {v!r}"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, dict):
        return "an object"
    return f"a string of {len(v)} characters" if isinstance(v, str) and len(v) > 40 else repr(v)


def parse_rule(value: Union[str, int]) -> Rule:
    """A rule name or a Gomocup code (a string or an integer; the schema's default is
    freestyle). 400 ``bad_rule`` for anything else."""
    if isinstance(value, int):
        return rule_from_gomocup(value)
    try:
        return Rule.parse(value)
    except ValueError as e:
        raise bad("bad_rule", str(e)) from None


def parse_side(value: Union[str, int, None]) -> Optional[int]:
    if value is None:
        return None
    if isinstance(value, str) and value.strip().lower() in ("black", "white"):
        return BLACK if value.strip().lower() == "black" else WHITE
    if isinstance(value, int) and value in (BLACK, WHITE):
        return value
    raise bad("bad_side_to_move", _FIELDS["side_to_move"][1])


def parse_size(value: Union[int, Tuple[int, int], None]) -> Optional[Tuple[int, int]]:
    """(width, height) from ``size`` (an integer for a square board, or [width, height])."""
    if value is None:
        return None
    if isinstance(value, int):
        return value, value
    return value[0], value[1]


@dataclass
class Limits:
    """What the search will use, after clamping to the server's caps."""

    visits: int
    time_ms: float
    clamped: List[str] = field(default_factory=list)
    asked: Dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> Dict[str, Any]:
        return {"visits": self.visits, "time_ms": round(self.time_ms, 1), "clamped": self.clamped}


def parse_limits(visits: Optional[int], time_ms: Optional[float], max_visits: int,
                 max_time_ms: float) -> Limits:
    """The search limits from a request's (already validated) ``visits`` and ``time_ms``.

    Values above the server's caps are clamped. Neither given: ``min(DEFAULT_VISITS, cap)`` visits.
    The search always stops at the first limit reached, and never runs past ``max_time_ms`` or
    ``max_visits`` (a time-only request may use up to ``max_visits`` visits).
    """
    clamped: List[str] = []
    asked: Dict[str, Any] = {}
    if visits is not None:
        asked["visits"] = visits
        if visits > max_visits:
            visits = max_visits
            clamped.append("visits")
    t: Optional[float] = None
    if time_ms is not None:
        asked["time_ms"] = time_ms
        t = float(time_ms)
        if t > max_time_ms:
            t = float(max_time_ms)
            clamped.append("time_ms")
    if visits is None:
        visits = max_visits if t is not None else min(DEFAULT_VISITS, max_visits)
    if t is None:
        t = float(max_time_ms)
    return Limits(visits=visits, time_ms=t, clamped=clamped, asked=asked)


# ------------------------------------------------------------------------------------ position
@dataclass
class Position:
    board: Board
    form: str            # "board" or "moves"

    def summary(self) -> Dict[str, Any]:
        b = self.board
        return {"rule": b.rule.value, "size": f"{b.width}x{b.height}", "form": self.form,
                "stones": len(b.moves), "side_to_move": color_name(b.side_to_move)}


def parse_position(req: PositionRequest) -> Position:
    """The board a validated request describes (see :mod:`tools.serve.app`), checked; raises
    RequestError."""
    has_board = req.board is not None
    has_moves = req.moves is not None
    if has_board == has_moves:
        raise bad("bad_position", 'give exactly one of "board" (a 2-D list of 0/1/2) or "moves" '
                                  '(a move list such as ["h8", "i9"] or [[7, 7], [8, 8]])')
    rule = parse_rule(req.rule)
    side = parse_side(req.side_to_move)
    size = parse_size(req.size)
    if req.board is not None:
        board = _board_from_grid(req.board, rule, side, size)
        form = "board"
    else:
        board = _board_from_moves(req.moves or [], rule, side,
                                  size or (DEFAULT_SIZE, DEFAULT_SIZE))
        form = "moves"
    if board.is_full():
        raise illegal("board_full", "the board is full: there is no move to make")
    return Position(board, form)


def _board_from_grid(grid: List[List[int]], rule: Rule, side: Optional[int],
                     size: Optional[Tuple[int, int]]) -> Board:
    """The board of a ``board`` grid whose sides and cells the schema has checked."""
    h, w = len(grid), len(grid[0])
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


def move_of(board: Board, item: MoveItem, where: str = "move") -> int:
    """The flat index of a validated move item (a name or an [x, y] pair) on ``board``: 400
    ``bad_move`` when a name cannot be read, 422 ``illegal_move`` when it is off the board."""
    if isinstance(item, str):
        try:
            return board.parse(item)
        except IllegalMoveError as e:
            raise illegal("illegal_move", f"{where} {item!r}: {e}") from None
        except ValueError as e:
            raise bad("bad_move", f"{where}: {e}") from None
    x, y = item
    try:
        return board.index(x, y)
    except IllegalMoveError as e:
        raise illegal("illegal_move", f"{where} {list(item)!r}: {e}") from None


def _board_from_moves(moves: Sequence[MoveItem], rule: Rule, side: Optional[int],
                      size: Tuple[int, int]) -> Board:
    w, h = size
    if len(moves) > w * h:
        raise bad("bad_moves", f"{len(moves)} moves do not fit a {w}x{h} board")
    board = Board(w, h, rule)
    for i, item in enumerate(moves):
        m = move_of(board, item, f"moves[{i}]")
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
