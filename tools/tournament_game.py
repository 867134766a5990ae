"""The referee of one tournament game: time controls, clocks, move validation and scoring.

:func:`play_game` plays one scheduled game between two :class:`~tools.tournament_players.GamePlayer` objects
and returns its result as a JSON-able dict (one line of ``results.jsonl``). Scoring (docs/RATING.md 1.4 and
the checklist in section 5): a five wins; a full board is a draw; ``--draw-after`` plies is a draw by
adjudication; a timeout, crash, protocol error, illegal move (occupied or off-board) or renju forbidden move
(Black) loses for the offender, with the termination and the reason recorded.

Time controls (``TimeControl``, c-gomoku-cli's ``match/turn+increment`` in seconds): the game clock starts at
``match`` and the increment is added before each move, so the first move sees ``match + increment``. A move
gets ``budget = min(turn, time_left)`` (whichever are limited; no limit at all: the move timeout) and must arrive
within ``budget + tolerance``. A slow external engine is killed at that point; the game clock may go below zero
by at most the tolerance, below that the game is lost on time.
"""
from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from gomoku_ai import movegen
from gomoku_ai.board import Board
from gomoku_ai.rules import BLACK, WHITE, EMPTY, Rule
from protocol.manager import EngineError, EngineTimeout, ForbiddenMove, IllegalMove

Move = Tuple[int, int]


@dataclass(frozen=True)
class TimeControl:
    """``match_ms`` per game (0: no game clock), ``turn_ms`` per move (0: no per-move limit), ``increment_ms``
    added to the game clock before every move. All zero: no time limit (visits or the move timeout end a move)."""

    match_ms: int = 0
    turn_ms: int = 0
    increment_ms: int = 0

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
    """Board, rule and referee limits shared by every game of a tournament."""

    width: int = 15
    height: int = 15
    rule: Rule = Rule.FREESTYLE
    draw_after: Optional[int] = None       # plies (opening stones included); None: play to a full board
    tolerance_ms: float = 1000.0
    move_timeout_ms: float = 300000.0      # the budget of a move no time control limits


@dataclass
class GameSpec:
    """One scheduled game (fully determined by the tournament seed and its id)."""

    game: int
    pair: int
    round: int
    pairing: int
    black: int
    white: int
    opening_index: Optional[int]
    transform: int
    opening: List[Move]
    seed: int

    def to_dict(self) -> Dict[str, Any]:
        d = dict(self.__dict__)
        d["opening"] = [list(m) for m in self.opening]
        return d

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "GameSpec":
        d = dict(d)
        d["opening"] = [tuple(m) for m in d["opening"]]
        return cls(**d)


@dataclass
class MoveResult:
    """What a player answered: the move, its time, and any MESSAGE lines / search summary."""

    x: int
    y: int
    elapsed_ms: float
    messages: List[str] = field(default_factory=list)


def _color_name(c: int) -> str:
    return "black" if c == BLACK else "white"


def budget_for(tc: TimeControl, time_left: Optional[float]) -> Optional[float]:
    """The time a move may take before the tolerance (None: unlimited). Negative when the game clock is
    already below zero: the move must then come within the rest of the tolerance."""
    caps = []
    if tc.turn_ms > 0:
        caps.append(float(tc.turn_ms))
    if tc.match_ms > 0 and time_left is not None:
        caps.append(float(time_left))
    return min(caps) if caps else None


def game_wall_limit_s(cfg: GameConfig, tcs: Sequence[TimeControl], opening_plies: int = 0,
                      startup_s: float = 10.0) -> float:
    """A generous upper bound on a game's wall time (the last-resort watchdog of a worker process)."""
    plies = (cfg.draw_after or cfg.width * cfg.height) - opening_plies
    per_side = max(1, (plies + 1) // 2)
    tol = cfg.tolerance_ms / 1000.0
    total = 0.0
    for tc in tcs:
        if tc.match_ms > 0:
            side = tc.match_ms / 1000.0 + per_side * (tc.increment_ms / 1000.0) + tol
            if tc.turn_ms > 0:
                side = min(side, per_side * (tc.turn_ms / 1000.0 + tol))
        elif tc.turn_ms > 0:
            side = per_side * (tc.turn_ms / 1000.0 + tol)
        else:
            side = per_side * (cfg.move_timeout_ms / 1000.0 + tol)
        total += side + per_side * 0.05  # per-move overhead
    return total + 2 * startup_s + 30.0


def play_game(spec: GameSpec, players: Sequence[Any], cfg: GameConfig, tcs: Sequence[TimeControl]) -> Dict[str, Any]:
    """Play ``spec`` between ``players[0]`` (Black) and ``players[1]`` (White) under the per-colour time
    controls ``tcs``; return the result record (see the module docstring)."""
    t_start = time.time()
    mono0 = time.monotonic()
    board = Board(cfg.width, cfg.height, cfg.rule)
    for i, (x, y) in enumerate(spec.opening):
        m = board.index(x, y)
        if board[m] != EMPTY:
            raise ValueError(f"opening {spec.opening_index}: move {i + 1} ({x},{y}) is occupied")
        board.push(m)
    if board.outcome() is not None:
        raise ValueError(f"opening {spec.opening_index} is already decided")
    moves: List[Move] = [tuple(m) for m in spec.opening]  # type: ignore[misc]
    times: List[Optional[int]] = [None] * len(moves)
    comments: Dict[int, str] = {}
    clock: Dict[int, Optional[float]] = {
        BLACK: float(tcs[0].match_ms) if tcs[0].match_ms > 0 else None,
        WHITE: float(tcs[1].match_ms) if tcs[1].match_ms > 0 else None,
    }
    by_color = {BLACK: players[0], WHITE: players[1]}
    tc_of = {BLACK: tcs[0], WHITE: tcs[1]}
    winner: Optional[int] = None
    termination = "five"
    reason = ""
    offender: Optional[int] = None
    rejected: Optional[Move] = None

    def lose(color: int, err: EngineError) -> None:
        nonlocal winner, termination, reason, offender
        winner = 3 - color
        termination = err.termination
        reason = err.reason
        offender = color

    # start both (Black first): a player that cannot start loses
    started = True
    for color in (BLACK, WHITE):
        try:
            by_color[color].new_game(cfg, tc_of[color], spec.seed + (0 if color == BLACK else 1))
        except EngineError as e:
            lose(color, e)
            started = False
            break

    while started:
        out = board.outcome()
        if out is not None:
            winner = out.winner
            termination = out.termination.value
            reason = "five in a row" if out.winner is not None else "the board is full"
            break
        if cfg.draw_after is not None and len(board.moves) >= cfg.draw_after:
            winner, termination, reason = None, "adjudication", f"draw after {cfg.draw_after} plies"
            break
        color = board.side_to_move
        player = by_color[color]
        tc = tc_of[color]
        if clock[color] is not None:
            clock[color] += tc.increment_ms
        budget = budget_for(tc, clock[color])
        time_left = None if clock[color] is None else int(math.floor(clock[color]))
        try:
            res = player.move(board, moves, time_left, budget, tc)
        except EngineError as e:
            lose(color, e)
            break
        elapsed = res.elapsed_ms
        try:
            if clock[color] is not None:
                clock[color] -= elapsed
                if clock[color] < -cfg.tolerance_ms:
                    raise EngineTimeout(f"game clock exceeded by {-clock[color]:.0f} ms", player.name)
            if tc.turn_ms > 0 and elapsed > tc.turn_ms + cfg.tolerance_ms:
                raise EngineTimeout(f"move took {elapsed:.0f} ms (turn limit {tc.turn_ms} ms + tolerance "
                                    f"{cfg.tolerance_ms:.0f} ms)", player.name)
            if budget is None and elapsed > cfg.move_timeout_ms + cfg.tolerance_ms:
                raise EngineTimeout(f"move took {elapsed:.0f} ms (move timeout)", player.name)
            x, y = res.x, res.y
            if not (0 <= x < board.width and 0 <= y < board.height):
                rejected = (x, y)
                raise IllegalMove(f"move {x},{y} is off the {board.width}x{board.height} board", player.name,
                                  (x, y))
            m = board.index(x, y)
            if board[m] != EMPTY:
                rejected = (x, y)
                raise IllegalMove(f"move {x},{y} is occupied", player.name, (x, y))
            kind = movegen.forbidden_kind(board, m)
            if kind is not None:
                rejected = (x, y)
                raise ForbiddenMove(f"move {x},{y} is a forbidden {kind.label}", player.name, (x, y))
        except EngineError as e:
            lose(color, e)
            try:
                player.abandon()
            except Exception:  # noqa: BLE001
                pass
            break
        board.push(m)
        moves.append((x, y))
        times.append(int(round(elapsed)))
        if res.messages:
            comments[len(moves) - 1] = "\n".join(res.messages[-3:])[:600]

    for p in players:
        try:
            p.end_game()
        except Exception:  # noqa: BLE001 - ending must not lose a finished result
            pass
    result = {None: "1/2-1/2", BLACK: "1-0", WHITE: "0-1"}[winner]
    return {
        "game": spec.game, "pair": spec.pair, "round": spec.round, "pairing": spec.pairing,
        "black": players[0].name, "white": players[1].name,
        "black_index": spec.black, "white_index": spec.white,
        "result": result, "winner": None if winner is None else _color_name(winner),
        "termination": termination, "reason": reason,
        "offender": None if offender is None else _color_name(offender),
        "rejected_move": None if rejected is None else list(rejected),
        "opening": spec.opening_index, "transform": spec.transform, "opening_plies": len(spec.opening),
        "moves": [list(mv) for mv in moves], "times_ms": times, "plies": len(moves),
        "clock_ms": {"black": None if clock[BLACK] is None else int(clock[BLACK]),
                     "white": None if clock[WHITE] is None else int(clock[WHITE])},
        "comments": {str(k): v for k, v in comments.items()},
        "seed": spec.seed, "started_at": round(t_start, 3),
        "duration_s": round(time.monotonic() - mono0, 3),
    }
