"""The referee: one game between two match players, for the tournament, gating and the strength curve.

:func:`play_game` plays one game between two :class:`GamePlayer` objects (Black first) and returns a
:class:`PlayedGame`: the moves (opening included), the winner, the :class:`~gomoku_ai.rules.Termination` and a
reason. In-process players are :class:`gomoku_ai.players.EnginePlayer` (named by the spec vocabulary of
:mod:`gomoku_ai.players`); external pbrain engines (``tools.tournament.players.ExternalPlayer`` over
``protocol.manager``) implement the same interface, and their failures are :class:`PlayerError` subclasses, so
the referee never looks at what kind of player it drives.

Scoring (docs/RATING.md 1.4 and the checklist in section 5):

* a five wins (:attr:`Termination.FIVE`); a full board is a draw (:attr:`Termination.BOARD_FULL`); reaching
  ``GameConfig.max_plies`` plies (opening stones included) is a draw by :attr:`Termination.ADJUDICATION`;
* a player that fails loses, with the termination its :class:`PlayerError` carries: a move past the time limit
  (:attr:`Termination.TIME`), a crash or a player that cannot start (:attr:`Termination.CRASH`), a protocol
  error (:attr:`Termination.PROTOCOL`, external engines), a move off the board or onto an occupied square
  (:attr:`Termination.ILLEGAL`, the move is not played but kept in ``rejected``), a renju forbidden move by
  Black (:attr:`Termination.FORBIDDEN`). Only typed failures are forfeits: any other exception from a player is
  a bug in its adapter and propagates.

Time controls (:class:`TimeControl`, c-gomoku-cli's ``match/turn+increment``): the game clock starts at
``match_ms`` and the increment is added before each move, so the first move sees ``match + increment``. A move
gets ``budget = min(turn, time_left)`` (whichever are limited; neither: the move timeout, or no limit at all when
``GameConfig.move_timeout_ms`` is None) and must arrive within ``budget + tolerance``. The game clock may go
below zero by at most the tolerance; below that the game is lost on time. All times are milliseconds, measured
by the player (an external engine's client times its reply on a monotonic clock).
"""
from __future__ import annotations

import logging
import math
import re
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import checks, movegen
from .board import MAX_SIZE, MIN_SIZE, Board
from .rules import BLACK, EMPTY, WHITE, Rule, Termination, opponent

log = logging.getLogger("gomoku.match")

Move = Tuple[int, int]

__all__ = ["Move", "TimeControl", "GameConfig", "MoveResult", "PlayerError", "PlayerTimeout", "PlayerCrashed",
           "IllegalMove", "ForbiddenMove", "GamePlayer", "PlayedGame", "budget_for", "adjudicate",
           "check_move", "game_seed", "play_game"]


# ------------------------------------------------------------------------------------------ settings
@dataclass(frozen=True)
class TimeControl:
    """``match_ms`` per game (0: no game clock), ``turn_ms`` per move (0: no per-move limit), ``increment_ms``
    added to the game clock before every move. All zero: no time limit (visits or the move timeout end a move)."""

    match_ms: int = 0
    turn_ms: int = 0
    increment_ms: int = 0

    def __post_init__(self) -> None:
        checks.non_negative(self, "match_ms", "turn_ms", "increment_ms")

    _RE = re.compile(r"^\s*(?:(?P<match>[\d.]+)\s*)?(?:/\s*(?P<turn>[\d.]+)\s*)?(?:\+\s*(?P<inc>[\d.]+)\s*)?$")

    @classmethod
    def parse(cls, text: Optional[str]) -> "TimeControl":
        """``MATCH/TURN+INC`` in seconds: ``60/5+0.5``, ``0/1`` (1 s per move), ``60`` (60 s per game),
        ``120+1`` (game clock with increment); ``none``, ``inf`` or empty: no limit."""
        if text is None or str(text).strip().lower() in ("", "none", "inf", "infinite", "0"):
            return cls()
        m = cls._RE.match(str(text))
        if not m or not any(m.group(g) for g in ("match", "turn", "inc")):
            raise ValueError(f"bad time control {text!r}: expected MATCH/TURN+INC in seconds, e.g. 60/5+0.5")

        def ms(g: str) -> int:
            v = m.group(g)
            if v is None:
                return 0
            try:
                f = float(v)
            except ValueError:
                raise ValueError(f"bad time control {text!r}") from None
            if not math.isfinite(f) or f < 0:
                raise ValueError(f"bad time control {text!r}")
            return int(round(f * 1000))

        return cls(ms("match"), ms("turn"), ms("inc"))

    @property
    def limited(self) -> bool:
        """Whether a game clock or a per-move limit applies."""
        return self.match_ms > 0 or self.turn_ms > 0

    def __str__(self) -> str:
        if not self.limited and not self.increment_ms:
            return "none"

        def sec(v: int) -> str:
            return f"{v / 1000:g}"

        out = f"{sec(self.match_ms)}/{sec(self.turn_ms)}"
        if self.increment_ms:
            out += f"+{sec(self.increment_ms)}"
        return out


@dataclass
class GameConfig:
    """The board and the referee's limits, shared by every game of a match.

    ``n``: the winning length. ``max_plies``: the game is a draw by adjudication after this many plies (opening
    stones included); None plays to a full board. ``tolerance_ms``: added to every move budget before the move
    is late. ``move_timeout_ms``: the budget of a move that no time control limits; None for no limit (fixed-visit
    matches, whose result must not depend on the machine's speed).
    """

    width: int = 15
    height: int = 15
    rule: Rule = Rule.FREESTYLE
    max_plies: Optional[int] = None
    tolerance_ms: float = 1000.0
    move_timeout_ms: Optional[float] = 300000.0
    n: int = 5

    def __post_init__(self) -> None:
        checks.in_range(self, MIN_SIZE, MAX_SIZE, "width", "height")
        checks.require(isinstance(self.rule, Rule), self, "rule", "a Rule")
        checks.at_least(self, 1, "max_plies", allow_none=True)
        checks.non_negative(self, "tolerance_ms")
        checks.non_negative(self, "move_timeout_ms", allow_none=True)
        checks.in_range(self, 3, min(self.width, self.height), "n")

    def board(self) -> Board:
        """An empty board of this configuration."""
        return Board(self.width, self.height, self.rule, self.n)


@dataclass
class MoveResult:
    """What a player answered: the move (not yet checked against the board), the time it took in ms, and any
    MESSAGE lines or search summary (kept as the move's comment)."""

    x: int
    y: int
    elapsed_ms: float
    messages: List[str] = field(default_factory=list)


# ------------------------------------------------------------------------------------------ failures
class PlayerError(Exception):
    """A failure that loses the game for the player that caused it. ``termination`` (a class attribute of each
    subclass) says how it is scored; ``reason`` is the message; ``player`` the player's name when known. The
    base class is scored as a crash."""

    termination: Termination = Termination.CRASH

    def __init__(self, reason: str, player: Optional[str] = None) -> None:
        super().__init__(f"{player}: {reason}" if player else reason)
        self.reason = reason
        self.player = player


class PlayerTimeout(PlayerError):
    """A move later than its budget plus the tolerance, or a game clock below minus the tolerance."""

    termination = Termination.TIME


class PlayerCrashed(PlayerError):
    """A player that could not be created, or whose search raised."""

    termination = Termination.CRASH


class IllegalMove(PlayerError):
    """A move onto an occupied or off-board square (``move``: the (x, y) it sent)."""

    termination = Termination.ILLEGAL

    def __init__(self, reason: str, player: Optional[str] = None, move: Optional[Move] = None) -> None:
        super().__init__(reason, player)
        self.move = move


class ForbiddenMove(IllegalMove):
    """A renju forbidden move by Black (double-three, double-four, overline)."""

    termination = Termination.FORBIDDEN


# ------------------------------------------------------------------------------------------ players
class GamePlayer:
    """What the referee drives.

    ``new_game`` before a game (``seed``: this game's seed for this player), ``move`` for each of its moves,
    ``end_game`` after every game, ``abandon`` after this player lost by a failure the referee found (a late or
    illegal move), ``close`` at the end of the run. ``move`` gets the referee's board (not to be changed), the
    moves so far as (x, y) (opening included), the game clock left in ms (None: no game clock), the move's budget
    in ms before the tolerance (None: unlimited; negative when the clock is already below zero) and the time
    control. Failures are raised as :class:`PlayerError` subclasses.
    """

    name = "player"

    def new_game(self, cfg: GameConfig, tc: TimeControl, seed: int) -> None:
        raise NotImplementedError

    def move(self, board: Board, moves: Sequence[Move], time_left_ms: Optional[int], budget_ms: Optional[float],
             tc: TimeControl) -> MoveResult:
        raise NotImplementedError

    def end_game(self) -> None:
        pass

    def abandon(self) -> None:
        pass

    def close(self) -> None:
        pass


# ------------------------------------------------------------------------------------------ the result
@dataclass
class PlayedGame:
    """A game the referee played.

    ``winner``: BLACK, WHITE or None (a draw). ``termination``: why it ended; ``reason``: the same in words.
    ``offender``: the colour that lost by a failure (None after a five, a full board or an adjudication).
    ``rejected``: the illegal or forbidden move that lost (not on the board). ``moves``: every move as (x, y),
    the ``opening_plies`` opening stones first. ``times_ms``: each move's time (None for opening stones).
    ``comments``: a player's messages by ply. ``clock_ms``: each colour's game clock at the end (None: none).
    ``started_at``: wall-clock start (Unix seconds); ``duration_s``: monotonic duration.
    """

    winner: Optional[int]
    termination: Termination
    reason: str
    moves: List[Move]
    opening_plies: int
    offender: Optional[int] = None
    rejected: Optional[Move] = None
    times_ms: List[Optional[int]] = field(default_factory=list)
    comments: Dict[int, str] = field(default_factory=dict)
    clock_ms: Dict[int, Optional[float]] = field(default_factory=dict)
    started_at: float = 0.0
    duration_s: float = 0.0

    @property
    def result(self) -> str:
        """``"1-0"`` (Black won), ``"0-1"`` (White won) or ``"1/2-1/2"``."""
        return {None: "1/2-1/2", BLACK: "1-0", WHITE: "0-1"}[self.winner]

    def flat_moves(self, width: int) -> List[int]:
        """The moves as flat indices (``y * width + x``)."""
        return [y * width + x for x, y in self.moves]


# ------------------------------------------------------------------------------------------ the referee
def budget_for(tc: TimeControl, time_left: Optional[float]) -> Optional[float]:
    """The time a move may take before the tolerance, in ms (None: unlimited). Negative when the game clock is
    already below zero: the move must then come within the rest of the tolerance."""
    caps = []
    if tc.turn_ms > 0:
        caps.append(float(tc.turn_ms))
    if tc.match_ms > 0 and time_left is not None:
        caps.append(float(time_left))
    return min(caps) if caps else None


def adjudicate(board: Board, max_plies: Optional[int] = None) -> Optional[Tuple[Optional[int], Termination, str]]:
    """Whether the game on ``board`` is over: ``(winner, termination, reason)`` for a five by the last move, a
    full board or ``max_plies`` plies (a draw by adjudication), else None. The one end-of-game rule of the
    referee and of self-play."""
    out = board.outcome()
    if out is not None:
        return out.winner, out.termination, ("five in a row" if out.winner is not None else "the board is full")
    if max_plies is not None and len(board.moves) >= max_plies:
        return None, Termination.ADJUDICATION, f"draw after {max_plies} plies"
    return None


def game_seed(seed: int, game_id: int) -> int:
    """The seed of game ``game_id`` of a match seeded with ``seed`` (31 bits, independent of the other games)."""
    return int(np.random.SeedSequence([seed & 0xFFFFFFFF, game_id]).generate_state(1)[0] & 0x7FFFFFFF)


def check_move(board: Board, x: int, y: int, player: str) -> int:
    """The flat index of the side to move's (x, y), or :class:`IllegalMove` (off the board, occupied) /
    :class:`ForbiddenMove` (renju, Black)."""
    if not (0 <= x < board.width and 0 <= y < board.height):
        raise IllegalMove(f"move {x},{y} is off the {board.width}x{board.height} board", player, (x, y))
    m = board.index(x, y)
    if board[m] != EMPTY:
        raise IllegalMove(f"move {x},{y} is occupied", player, (x, y))
    kind = movegen.forbidden_kind(board, m)
    if kind is not None:
        raise ForbiddenMove(f"move {x},{y} is a forbidden {kind.label}", player, (x, y))
    return m


def _late(elapsed: float, budget: Optional[float], clock: Optional[float], tc: TimeControl,
          cfg: GameConfig, player: str) -> Optional[PlayerTimeout]:
    """The time loss of a move that took ``elapsed`` ms (``clock``: the game clock after it), or None."""
    if clock is not None and clock < -cfg.tolerance_ms:
        return PlayerTimeout(f"game clock exceeded by {-clock:.0f} ms", player)
    if tc.turn_ms > 0 and elapsed > tc.turn_ms + cfg.tolerance_ms:
        return PlayerTimeout(f"move took {elapsed:.0f} ms (turn limit {tc.turn_ms} ms + tolerance "
                             f"{cfg.tolerance_ms:.0f} ms)", player)
    if budget is None and cfg.move_timeout_ms is not None and elapsed > cfg.move_timeout_ms + cfg.tolerance_ms:
        return PlayerTimeout(f"move took {elapsed:.0f} ms (move timeout)", player)
    return None


class _Referee:
    """The state of one game while :func:`play_game` plays it."""

    def __init__(self, players: Sequence[GamePlayer], cfg: GameConfig, tcs: Sequence[TimeControl],
                 opening: Sequence[Move]) -> None:
        self.cfg = cfg
        self.board = cfg.board()
        for i, (x, y) in enumerate(opening):
            m = self.board.index(x, y)
            if self.board[m] != EMPTY:
                raise ValueError(f"opening move {i + 1} ({x},{y}) is occupied")
            self.board.push(m)
        if self.board.outcome() is not None:
            raise ValueError("the opening already decides the game")
        self.by_color = {BLACK: players[0], WHITE: players[1]}
        self.tc = {BLACK: tcs[0], WHITE: tcs[1]}
        self.clock: Dict[int, Optional[float]] = {
            c: float(self.tc[c].match_ms) if self.tc[c].match_ms > 0 else None for c in (BLACK, WHITE)}
        self.game = PlayedGame(None, Termination.FIVE, "", [(int(x), int(y)) for x, y in opening], len(opening),
                               times_ms=[None] * len(opening), clock_ms=self.clock)

    def lose(self, color: int, err: PlayerError) -> None:
        """Score the game as lost by ``color`` for ``err``."""
        g = self.game
        g.winner, g.termination, g.reason, g.offender = opponent(color), err.termination, err.reason, color

    def start(self, seed: int) -> bool:
        """Start both players (Black first); a player that cannot start loses. False when one could not."""
        for color in (BLACK, WHITE):
            try:
                self.by_color[color].new_game(self.cfg, self.tc[color], seed + (0 if color == BLACK else 1))
            except PlayerError as e:
                self.lose(color, e)
                return False
        return True

    def step(self) -> bool:
        """Play one move of the side to move; False when the game is over."""
        board, g = self.board, self.game
        end = adjudicate(board, self.cfg.max_plies)
        if end is not None:
            g.winner, g.termination, g.reason = end
            return False
        color = board.side_to_move
        player, tc = self.by_color[color], self.tc[color]
        clock = self.clock[color]
        if clock is not None:
            clock += tc.increment_ms
            self.clock[color] = clock
        budget = budget_for(tc, clock)
        time_left = None if clock is None else int(math.floor(clock))
        try:
            res = player.move(board, g.moves, time_left, budget, tc)
        except PlayerError as e:
            self.lose(color, e)
            return False
        elapsed = res.elapsed_ms
        if clock is not None:
            clock -= elapsed
            self.clock[color] = clock
        try:
            late = _late(elapsed, budget, clock, tc, self.cfg, player.name)
            if late is not None:
                raise late
            m = check_move(board, res.x, res.y, player.name)
        except PlayerError as e:
            if isinstance(e, IllegalMove):
                g.rejected = e.move
            self.lose(color, e)
            _quietly(player.abandon, f"{player.name}: abandon")
            return False
        board.push(m)
        g.moves.append((res.x, res.y))
        g.times_ms.append(int(round(elapsed)))
        if res.messages:
            g.comments[len(g.moves) - 1] = "\n".join(res.messages[-3:])[:600]
        return True


def _quietly(fn: Callable[[], None], what: str) -> None:
    """Call ``fn``; an exception is logged (with its traceback), not raised: a finished result must not be lost
    because a player failed to clean up after it."""
    try:
        fn()
    except Exception:  # noqa: BLE001 - logged; the game's result stands
        log.exception("%s failed", what)


def play_game(players: Sequence[GamePlayer], cfg: GameConfig,
              tcs: Sequence[TimeControl] = (TimeControl(), TimeControl()),
              opening: Sequence[Move] = (), seed: int = 0) -> PlayedGame:
    """Play one game between ``players[0]`` (Black) and ``players[1]`` (White) from ``opening`` (moves as (x, y),
    Black first) under the per-colour time controls ``tcs``; Black's ``new_game`` gets ``seed``, White's
    ``seed + 1``. ``end_game`` is called on both players at the end. Raises ValueError for an opening that has an
    occupied square or already decides the game (see the module docstring for the scoring)."""
    t_start = time.time()
    mono0 = time.monotonic()
    ref = _Referee(players, cfg, tcs, opening)
    if ref.start(seed):
        while ref.step():
            pass
    for p in players:
        _quietly(p.end_game, f"{p.name}: end_game")
    g = ref.game
    g.started_at = t_start
    g.duration_s = time.monotonic() - mono0
    return g
