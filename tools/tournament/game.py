"""One scheduled tournament game: the referee of :mod:`gomoku_ai.match` and the results line it becomes.

:func:`play_game` plays one :class:`GameSpec` between two :class:`~gomoku_ai.match.GamePlayer` objects with
:func:`gomoku_ai.match.play_game` (which owns the scoring and the time controls, see there) and returns its
result as a JSON-able dict (one line of ``results.jsonl``); the termination is written as its
:class:`~gomoku_ai.rules.Termination` value. :func:`game_wall_limit_s` bounds a game's wall time for the worker
watchdog.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

from gomoku_ai.match import GameConfig, GamePlayer, PlayedGame, TimeControl, play_game as referee_game
from gomoku_ai.rules import BLACK, WHITE

__all__ = ["GameSpec", "game_wall_limit_s", "play_game", "result_record"]

Move = Tuple[int, int]


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


def game_wall_limit_s(cfg: GameConfig, tcs: Sequence[TimeControl], opening_plies: int = 0,
                      startup_s: float = 10.0) -> float:
    """A generous upper bound on a game's wall time in seconds (the last-resort watchdog of a worker process);
    ``cfg`` must have a move timeout."""
    if cfg.move_timeout_ms is None:
        raise ValueError("a tournament game needs a move timeout")
    plies = (cfg.max_plies or cfg.width * cfg.height) - opening_plies
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




def _color_name(c: Optional[int]) -> Optional[str]:
    return None if c is None else "black" if c == BLACK else "white"


def result_record(spec: GameSpec, names: Sequence[str], g: PlayedGame) -> Dict[str, Any]:
    """The ``results.jsonl`` line of game ``spec`` played as ``g`` by ``names`` (Black, White)."""
    clock = {c: None if (ms := g.clock_ms.get(c)) is None else int(ms) for c in (BLACK, WHITE)}
    return {
        "game": spec.game, "pair": spec.pair, "round": spec.round, "pairing": spec.pairing,
        "black": names[0], "white": names[1],
        "black_index": spec.black, "white_index": spec.white,
        "result": g.result, "winner": _color_name(g.winner),
        "termination": g.termination.value, "reason": g.reason,
        "offender": _color_name(g.offender),
        "rejected_move": None if g.rejected is None else list(g.rejected),
        "opening": spec.opening_index, "transform": spec.transform, "opening_plies": g.opening_plies,
        "moves": [list(mv) for mv in g.moves], "times_ms": list(g.times_ms), "plies": len(g.moves),
        "clock_ms": {"black": clock[BLACK], "white": clock[WHITE]},
        "comments": {str(k): v for k, v in g.comments.items()},
        "seed": spec.seed, "started_at": round(g.started_at, 3),
        "duration_s": round(g.duration_s, 3),
    }


def play_game(spec: GameSpec, players: Sequence[GamePlayer], cfg: GameConfig,
              tcs: Sequence[TimeControl]) -> Dict[str, Any]:
    """Play ``spec`` between ``players[0]`` (Black) and ``players[1]`` (White) under the per-colour time
    controls ``tcs``; return its results line (:func:`result_record`). Raises ValueError for an opening that
    cannot start a game."""
    g = referee_game(players, cfg, tcs, spec.opening, spec.seed)
    return result_record(spec, [players[0].name, players[1].name], g)
