"""The brain's game: the board, our colour, the rule, everything ``INFO`` sets, and the clocks.

:class:`Game` carries out the commands that change the position (START, RESTART, RECTSTART, BEGIN, TURN,
PLAY, TAKEBACK, BOARD/YXBOARD, SWAP2BOARD) and ``INFO``, and derives the deadlines of a move request from the
time controls; it writes nothing. A command that cannot be carried out raises :class:`GameError` (the brain
answers ``ERROR <message>``) and leaves the state as it was.

Conventions
-----------
* Our colour after ``BOARD``: own == opponent stones -> we are Black (first player); opponent == own + 1 ->
  White; any other count -> the colour of the first listed non-wall stone is Black (Rapfi's rule). ``x,y,3`` is
  a blocked square.
* ``INFO rule`` is decoded with :func:`gomoku_ai.rules.rule_from_gomocup`; 2 means renju only once a ``YX...``
  command has been seen (Yixin-Board's meaning), otherwise it is the continuous-game bit, ignored. A new rule
  rebuilds the position under it.
* Clocks: ``time_left`` is charged with the time from reading a request (or from the last ``INFO time_left``,
  whichever is later) to the move; :class:`StartupCharge` is what the first move is charged for start-up.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable, List, Optional, Set, Tuple

from gomoku_ai import timeman
from gomoku_ai.board import MAX_SIZE, MIN_SIZE, Board
from gomoku_ai.rules import BLACK, EMPTY, WALL, WHITE, Rule, opponent, rule_from_gomocup
from gomoku_ai.timeman import Deadlines, move_deadlines

from . import fallback
from . import lines as L
from .framing import Block
from .lines import DEFAULT_MAX_MEMORY  # INFO max_memory 0 means this default (as Rapfi does)
from .think import now_ms

log = logging.getLogger("pygomoku.brain")

DEFAULT_SIZE = (15, 15)                  #: the board size assumed before the first START

_INT_KEYS = frozenset({
    "timeout_turn", "timeout_match", "time_left", "time_increment", "max_memory", "max_node", "max_depth",
    "thread_num", "rule", "game_type", "show_detail", "pondering", "hash_size",
})


class GameError(Exception):
    """A command that cannot be carried out; the message is the text of the ``ERROR`` reply."""


@dataclass
class Settings:
    """Everything INFO can set (PROTOCOL.md section 6). Times in ms, memory in bytes."""

    timeout_turn: Optional[int] = None
    timeout_match: Optional[int] = None
    time_left: Optional[int] = None
    time_left_stamp: float = 0.0    # now_ms() when time_left was last set
    time_increment: int = 0
    max_memory: int = 0             # 0 = the Gomocup default, 350 MB
    max_node: Optional[int] = None  # None = no visit limit
    max_depth: Optional[int] = None
    thread_num: int = 1
    rule_code: int = 0
    game_type: int = 1
    folder: Optional[str] = None
    show_detail: int = 0
    pondering: bool = False
    hash_size_kb: Optional[int] = None

    @property
    def memory_limit_bytes(self) -> int:
        return self.max_memory if self.max_memory > 0 else DEFAULT_MAX_MEMORY

    @property
    def other_limit(self) -> bool:
        """Whether a visit or depth limit also ends a search."""
        return self.max_node is not None or self.max_depth is not None


@dataclass
class StartupCharge:
    """Start-up time charged to the first move. ``process_start`` (ms, on the :func:`protocol.think.now_ms`
    clock) is when the process was created (None: unknown), ``busy_ms`` the time spent handling commands before
    the first move request."""

    process_start: Optional[float] = None
    busy_ms: float = 0.0
    first_move_done: bool = False

    def used_ms(self, t_recv: float, ready_at: Optional[float]) -> float:
        """Time to charge to the first move, read at ``t_recv``: GomocupJudge starts the clock before the
        process has finished starting (PROTOCOL.md section 7), so charge everything we did before this request
        (start-up until ``ready_at``, when reading began, and handling commands), but not the time we spent
        waiting for input (Piskvork may send the first request long after START)."""
        now = now_ms()
        since = now - t_recv
        if self.process_start is None:
            return since
        ready = (ready_at if ready_at is not None else now) - self.process_start
        age = now - self.process_start
        return max(since, min(age, ready + self.busy_ms + since))


class Game:
    """The position and settings of the brain. ``yixin_seen()`` says whether a ``YX...`` command has been
    read (it changes what ``INFO rule 2`` means)."""

    def __init__(self, yixin_seen: Callable[[], bool]) -> None:
        self.settings = Settings()
        self.board: Optional[Board] = None
        self.my_color: Optional[int] = None
        #: squares (flat indices) the brain must not answer (YXBLOCK); cleared with each new board
        self.blocked: Set[int] = set()
        self._yixin_seen = yixin_seen
        self._yixin_applied = False

    # ------------------------------------------------------------------ rule and size
    def rule(self) -> Rule:
        return rule_from_gomocup(self.settings.rule_code, yixin=self._yixin_seen())

    def size(self) -> Tuple[int, int]:
        """(width, height) of the board, or :data:`DEFAULT_SIZE` before START."""
        b = self.board
        return (b.width, b.height) if b is not None else DEFAULT_SIZE

    def sync_rule(self) -> bool:
        """Apply the Yixin meaning of the rule once a ``YX...`` command has been seen; True when it was
        applied now (the rule may have changed)."""
        if self._yixin_seen() and not self._yixin_applied:
            self._yixin_applied = True
            self.apply_rule()
            return True
        return False

    def apply_rule(self) -> None:
        """Rebuild the position under the current rule, if that changed it."""
        rule = self.rule()
        if self.board is not None and self.board.rule is not rule:
            self.board = rebuild(self.board, rule=rule)

    # ------------------------------------------------------------------ position commands
    def need_board(self, word: str) -> Board:
        if self.board is None:
            raise GameError(f"{word} before START: no game has been started")
        return self.board

    def new_board(self, w: int, h: int) -> Board:
        """START / RECTSTART / RESTART: a new empty ``w`` x ``h`` board under the current rule."""
        if not (MIN_SIZE <= w <= MAX_SIZE and MIN_SIZE <= h <= MAX_SIZE):
            raise GameError(f"unsupported board size {w}x{h}; this brain supports "
                            f"{MIN_SIZE}..{MAX_SIZE} on a side (e.g. 15 or 20)")
        self.board = Board(w, h, self.rule())
        self.my_color = None
        self.blocked.clear()
        return self.board

    def block(self, blk: Block, add: bool) -> None:
        """YXBLOCK (``add``) / YXBLOCKUNDO: squares the answer must avoid, or no longer. Raises GameError for
        a line that is not ``x,y`` on the board (nothing changes then)."""
        word = blk.cmd.word
        b = self.need_board(word)
        if blk.problems:
            raise GameError(f"{word}: {blk.problems[0]}")
        squares = []
        for d in blk.data:
            if not isinstance(d, L.PointLine):
                raise GameError(f"{word}: expected 'x,y', got a stone line {d.x},{d.y},{d.field}")
            if not (0 <= d.x < b.width and 0 <= d.y < b.height):
                raise GameError(f"{word}: {d.x},{d.y} is off the {b.width}x{b.height} board")
            squares.append(b.index(d.x, d.y))
        if add:
            self.blocked.update(squares)
        else:
            self.blocked.difference_update(squares)

    def begin(self) -> None:
        """BEGIN: we play first on the empty board."""
        b = self.need_board("BEGIN")
        if b.moves:
            raise GameError("BEGIN on a board that is not empty (send START or RESTART first)")
        self.my_color = b.side_to_move

    def turn(self, x: int, y: int) -> None:
        """TURN x,y: the opponent's move (the move request follows)."""
        b = self.need_board("TURN")
        m = self._empty_square(b, x, y, "TURN")
        if b.winner is not None:
            raise GameError("TURN after the game was won")
        if self.my_color is None:
            self.my_color = opponent(b.side_to_move)
        elif b.side_to_move == self.my_color:
            b.pass_turn()
        b.push(m)

    def play(self, x: int, y: int) -> None:
        """PLAY x,y: our own move, given by the manager."""
        b = self.need_board("PLAY")
        m = self._empty_square(b, x, y, "PLAY")
        if b.winner is not None:
            raise GameError("PLAY after the game was won")
        if self.my_color is None:
            self.my_color = b.side_to_move
        elif b.side_to_move != self.my_color:
            b.pass_turn()
        b.push(m)

    def takeback(self, x: int, y: int) -> None:
        """TAKEBACK x,y: remove that stone (the last move, or any stone: the position is rebuilt without it)."""
        b = self.need_board("TAKEBACK")
        if not (0 <= x < b.width and 0 <= y < b.height):
            raise GameError(f"TAKEBACK {x},{y} is off the {b.width}x{b.height} board")
        m = b.index(x, y)
        color = b[m]
        if color not in (BLACK, WHITE):
            raise GameError(f"TAKEBACK {x},{y}: there is no stone there")
        if b.last_move == m and color == opponent(b.side_to_move):
            b.pop()
        else:
            self.board = rebuild(b, remove=m, to_move=color)

    @staticmethod
    def _empty_square(b: Board, x: int, y: int, word: str) -> int:
        if not (0 <= x < b.width and 0 <= y < b.height):
            raise GameError(f"{word} {x},{y} is off the {b.width}x{b.height} board")
        m = b.index(x, y)
        if b[m] != EMPTY:
            raise GameError(f"{word} {x},{y} is not an empty square")
        return m

    def set_position(self, blk: Block, prefix: str) -> None:
        """BOARD / YXBOARD: the position of the block (``prefix`` starts every error message)."""
        word = blk.cmd.word
        if self.board is None:
            raise GameError(f"{prefix}{word} before START: no game has been started")
        w, h = self.board.width, self.board.height
        problems = list(blk.problems)
        own: List[int] = []
        opp: List[int] = []
        walls: List[int] = []
        order: List[Tuple[int, int]] = []   # (square, field) of stones in the order given
        seen: Set[int] = set()
        for d in blk.data:
            if not isinstance(d, L.StoneLine):
                problems.append(f"{d.x},{d.y} has no colour field")
                continue
            if not (0 <= d.x < w and 0 <= d.y < h):
                problems.append(f"{d.x},{d.y} is off the {w}x{h} board")
                continue
            if d.field not in tuple(L.StoneField):
                problems.append(f"{d.x},{d.y},{d.field}: the field must be 1, 2 or 3")
                continue
            m = d.y * w + d.x
            if m in seen:
                problems.append(f"{d.x},{d.y} is given twice")
                continue
            seen.add(m)
            if d.field == L.StoneField.WALL:
                walls.append(m)
            else:
                (own if d.field == L.StoneField.OWN else opp).append(m)
                order.append((m, d.field))
        if problems:
            raise GameError(f"{prefix}inconsistent {word}: {'; '.join(problems[:3])}")
        if len(own) == len(opp):
            me = BLACK
        elif len(opp) == len(own) + 1:
            me = WHITE
        else:
            me = BLACK if order[0][1] == L.StoneField.OWN else WHITE
            log.warning("%s with %d own and %d opponent stones; taking the first stone as Black",
                        word, len(own), len(opp))
        blacks = [m for m, f in order if (f == L.StoneField.OWN) == (me == BLACK)]
        whites = [m for m, f in order if (f == L.StoneField.OWN) != (me == BLACK)]
        nb = Board(w, h, self.board.rule)
        for m in walls:
            nb.put_wall(m)
        nb.set_position(blacks, whites, to_move=me)
        self.board = nb
        self.my_color = me

    def swap2(self, blk: Block) -> str:
        """SWAP2BOARD: the reply line (three opening stones, SWAP, or White's move)."""
        b = self.need_board("SWAP2BOARD")
        problems = list(blk.problems)
        pts: List[Tuple[int, int]] = []
        for d in blk.data:
            if not (0 <= d.x < b.width and 0 <= d.y < b.height):
                problems.append(f"{d.x},{d.y} is off the board")
            elif (d.x, d.y) in pts:
                problems.append(f"{d.x},{d.y} is given twice")
            else:
                pts.append((d.x, d.y))
        if not problems and len(pts) not in (0, 3, 5):
            problems.append(f"{len(pts)} stones; expected 0, 3 or 5")
        if problems:
            raise GameError(f"inconsistent SWAP2BOARD: {'; '.join(problems[:3])}")
        if not pts:
            return L.format_moves(fallback.swap2_opening(b.width, b.height))
        pos = fallback.board_from_sequence(b.width, b.height, pts, b.rule)
        m = fallback.swap2_decision(pos)
        return L.format_swap() if m is None else L.format_move(*pos.xy(m))

    # ------------------------------------------------------------------ INFO
    def apply_info(self, cmd: L.Info) -> bool:
        """An ``INFO`` with an integer value (``folder`` is the caller's); unknown keys and bad values are
        logged and ignored. True when it was ``INFO rule`` (the rule may have changed)."""
        s = self.settings
        key = cmd.key
        if key not in _INT_KEYS:
            log.debug("INFO %s ignored", key)
            return False
        try:
            v = cmd.int_value()
        except L.ProtocolError as e:
            log.warning("%s", e)
            return False
        if key == "timeout_turn":
            s.timeout_turn = max(0, v)
        elif key == "timeout_match":
            s.timeout_match = max(0, v)
        elif key == "time_left":
            s.time_left = v
            s.time_left_stamp = now_ms()
        elif key == "time_increment":
            s.time_increment = max(0, v)
        elif key == "max_memory":
            s.max_memory = max(0, v)
        elif key == "max_node":
            s.max_node = v if v > 0 else None
        elif key == "max_depth":
            s.max_depth = v if v > 0 else None
        elif key == "thread_num":
            s.thread_num = max(1, v)
        elif key == "rule":
            s.rule_code = v
            self.apply_rule()
            return True
        elif key == "game_type":
            s.game_type = v
        elif key == "show_detail":
            s.show_detail = v
        elif key == "pondering":
            s.pondering = v == 1
        elif key == "hash_size":
            s.hash_size_kb = v
        return False

    # ------------------------------------------------------------------ clocks
    def check_can_move(self) -> Board:
        """The board of a move request; raises GameError when the game is over or the board full."""
        b = self.board
        assert b is not None  # the command handlers checked
        if b.winner is not None:
            raise GameError("the game is already over")
        if b.is_full():
            raise GameError("the board is full; no move is possible")
        return b

    def deadlines(self, used_ms: float) -> Deadlines:
        """Soft and hard deadline (ms from now) of a move for the side to move, ``used_ms`` already spent."""
        b = self.board
        assert b is not None
        s = self.settings
        return move_deadlines(b, s.timeout_turn, s.timeout_match, s.time_left, used_ms=used_ms,
                              increment_ms=s.time_increment, other_limit=s.other_limit)

    def charge_clock(self, t_recv: float) -> None:
        """After our move to a request read at ``t_recv``: take the time it cost off ``time_left``."""
        st = self.settings
        if st.time_left is None and st.timeout_match:
            st.time_left, st.time_left_stamp = st.timeout_match, t_recv
        if timeman.clock_is_limited(st.timeout_match, st.time_left):
            st.time_left = timeman.charge(st.time_left, now_ms() - max(t_recv, st.time_left_stamp))


def rebuild(b: Board, rule: Optional[Rule] = None, remove: Optional[int] = None,
            to_move: Optional[int] = None) -> Board:
    """A copy of ``b`` (walls, stones in move order, side to move), optionally under another rule or without
    the stone at ``remove``."""
    nb = Board(b.width, b.height, rule if rule is not None else b.rule, b.n)
    for m in range(b.size):
        if b[m] == WALL:
            nb.put_wall(m)
    blacks = [m for m in b.moves if m != remove and b[m] == BLACK]
    whites = [m for m in b.moves if m != remove and b[m] == WHITE]
    nb.set_position(blacks, whites, to_move=b.side_to_move if to_move is None else to_move)
    return nb
