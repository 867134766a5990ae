"""Player specs: the one vocabulary that names an in-process player, and the match player it makes.

The tournament (``tools/tournament/players.py``, which adds ``key=value`` options and external ``cmd=``
engines), gating (:mod:`gomoku_ai.training.gating`), the strength curve (:mod:`gomoku_ai.training.curve`) and
self-play (:mod:`gomoku_ai.training.selfplay`, which takes the evaluator only) all read specs here:

==================  ===============================================  ==========  ==============
spec                evaluator                                        VCF / VCT   default visits
==================  ===============================================  ==========  ==============
``pure[:N]``        RolloutEvaluator: random playouts, seeded per    no          400
                    game (pure MCTS)
``tactics[:N]``     UniformEvaluator: the search and its tactics     yes         1000
                    without any evaluation
``uniform[:N]``     the same as ``tactics`` (the training tools'     yes         1000
                    name, kept in their files and command lines)
``heuristic[:N]``   HeuristicEvaluator, the hand-written one         yes         800
``model:PATH[:N]``  NetworkEvaluator of the exported model PATH      yes         800
                    (a basename, a file, a folder or a shipped
                    model's name: :func:`gomoku_ai.shipped.resolve_model`)
``random``          none: :class:`RandomMover`, a uniformly random   --          --
                    legal move within distance 2 of a stone
``PATH``            ``model:PATH``, where a spec may be a bare model path: :func:`resolve_player` and
                    :func:`as_spec` (gating, the curve, self-play); an ``os.PathLike`` always is one
==================  ===============================================  ==========  ==============

``N`` is a number of visits (digits) or a time per move (``500ms``, ``2s``). Every player but ``random`` is the
engine's own :class:`~gomoku_ai.player.Player` (MCTS with the root VCF and VCT solver, as it ships), with one
network batch of 4 leaves. Without ``N`` a player follows the time control when there is one, else the visits
its caller gives (``--visits``, the gate's visits), else the default above.

A spec that cannot be read raises :class:`SpecError` (a ValueError) naming the spec; :func:`resolve_player` also
raises ValueError (:class:`~gomoku_ai.shipped.ModelNotFoundError`) for a model that is not there.
"""
from __future__ import annotations

import enum
import logging
import os
import random
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, Optional, Sequence, Union

from .board import Board
from .evaluator import Evaluator
from .match import GameConfig, GamePlayer, Move, MoveResult, PlayerCrashed, TimeControl
from . import checks, movegen
from .rules import Rule

if TYPE_CHECKING:   # the code imports them where it uses them
    from .player import Limit, Player

log = logging.getLogger("gomoku.players")

__all__ = ["SpecError", "PlayerKind", "InProcessSpec", "parse_duration_ms", "parse_player_spec", "as_spec",
           "spec_label", "make_evaluator", "network_version", "RandomMover", "EnginePlayer", "resolve_player"]


class SpecError(ValueError):
    """A player spec that cannot be read."""


class PlayerKind(enum.Enum):
    """The kinds of in-process players (the spec's head)."""

    PURE = "pure"
    TACTICS = "tactics"
    HEURISTIC = "heuristic"
    MODEL = "model"
    RANDOM = "random"


@dataclass(frozen=True)
class _KindInfo:
    default_visits: Optional[int]
    use_vcf: bool


KINDS: Dict[PlayerKind, _KindInfo] = {
    PlayerKind.PURE: _KindInfo(400, False),
    PlayerKind.TACTICS: _KindInfo(1000, True),
    PlayerKind.HEURISTIC: _KindInfo(800, True),
    PlayerKind.MODEL: _KindInfo(800, True),
    PlayerKind.RANDOM: _KindInfo(None, False),
}
#: head words -> kinds (``uniform`` is ``tactics``; ``model`` needs ``model:PATH``)
_HEADS = {"pure": PlayerKind.PURE, "tactics": PlayerKind.TACTICS, "uniform": PlayerKind.TACTICS,
          "heuristic": PlayerKind.HEURISTIC, "random": PlayerKind.RANDOM}


@dataclass(frozen=True)
class InProcessSpec:
    """A parsed spec: its ``kind``, the ``text`` it was read from (its default display name), and its ``N``
    (``visits``, or ``movetime_ms`` per move) and ``model`` path when it has them."""

    kind: PlayerKind
    text: str
    visits: Optional[int] = None
    movetime_ms: Optional[float] = None
    model: Optional[str] = None

    def __post_init__(self) -> None:
        checks.require(isinstance(self.kind, PlayerKind), self, "kind", "a PlayerKind")
        checks.at_least(self, 1, "visits", allow_none=True)
        checks.non_negative(self, "movetime_ms", allow_none=True)
        checks.require(self.model is None or self.kind is PlayerKind.MODEL, self, "model",
                       "None for a spec of another kind than model")

    @property
    def model_path(self) -> str:
        """The network path of a ``model`` spec; a :class:`SpecError` for a spec without one."""
        if self.model is None:
            raise SpecError(f"player {self.text!r} names no model")
        return self.model

    @property
    def default_visits(self) -> Optional[int]:
        """The visits of this kind when neither the spec, a time control nor the caller says."""
        return KINDS[self.kind].default_visits

    @property
    def use_vcf(self) -> bool:
        """Whether the player runs the root VCF / VCT solver."""
        return KINDS[self.kind].use_vcf


def parse_duration_ms(text: str) -> float:
    """``500ms``, ``2s``, ``1.5s`` -> milliseconds."""
    m = re.fullmatch(r"\s*([\d.]+)\s*(ms|s)\s*", text)
    if not m:
        raise SpecError(f"bad duration {text!r}: expected e.g. 500ms or 2s")
    try:
        v = float(m.group(1))
    except ValueError:
        raise SpecError(f"bad duration {text!r}: expected e.g. 500ms or 2s") from None
    return v if m.group(2) == "ms" else v * 1000.0


def _limit_of(text: str, arg: str) -> Dict[str, Any]:
    """``visits`` or ``movetime_ms`` of the ``N`` of spec ``text``."""
    if re.fullmatch(r"\d+", arg):
        if int(arg) <= 0:
            raise SpecError(f"player {text!r}: visits must be a positive integer, not {arg!r}")
        return {"visits": int(arg)}
    try:
        return {"movetime_ms": parse_duration_ms(arg)}
    except SpecError as e:
        raise SpecError(f"player {text!r}: {e} (or a number of visits)") from None


def parse_player_spec(text: str, allow_path: bool = False) -> InProcessSpec:
    """Read one spec of the table in the module docstring. ``allow_path``: a text that names no kind is a model
    path (``PATH`` = ``model:PATH``); otherwise it is a :class:`SpecError`, as is a bad ``N``."""
    text = str(text).strip()
    if text.startswith("model:"):
        rest = text[len("model:"):]
        m = re.fullmatch(r"(.+?):(\d+|[\d.]+m?s)", rest)
        if m:
            return InProcessSpec(PlayerKind.MODEL, text, model=m.group(1), **_limit_of(text, m.group(2)))
        if not rest:
            raise SpecError(f"player {text!r}: model: needs a path, e.g. model:models/m1.json:800")
        return InProcessSpec(PlayerKind.MODEL, text, model=rest)
    head, _, arg = text.partition(":")
    kind = _HEADS.get(head.lower())
    if kind is None:
        if allow_path and text:
            return InProcessSpec(PlayerKind.MODEL, text, model=text)
        raise SpecError(f"unknown player {text!r}: expected one of pure[:N], tactics[:N], heuristic[:N], "
                        "model:PATH[:N], random, or cmd=COMMAND")
    if kind is PlayerKind.RANDOM and arg:
        raise SpecError(f"player {text!r}: random takes no argument")
    return InProcessSpec(kind, text, **(_limit_of(text, arg) if arg else {}))


def as_spec(spec: Union[str, "os.PathLike[str]", InProcessSpec]) -> InProcessSpec:
    """``spec`` as an :class:`InProcessSpec`: a path object is a model, a string is read with
    :func:`parse_player_spec` allowing a bare model path."""
    if isinstance(spec, InProcessSpec):
        return spec
    if isinstance(spec, os.PathLike):
        path = os.fspath(spec)
        return InProcessSpec(PlayerKind.MODEL, path, model=path)
    if isinstance(spec, str):
        return parse_player_spec(spec, allow_path=True)
    raise SpecError(f"a player spec is a string or a path, not a {type(spec).__name__} ({spec!r})")


def spec_label(spec: Union[str, "os.PathLike[str]", InProcessSpec]) -> str:
    """A short label: the spec's text, or for a model the ``name`` in its config (its file name when that
    cannot be read)."""
    s = as_spec(spec)
    if s.kind is not PlayerKind.MODEL or s.model is None:
        return s.text
    try:
        from .net import read_config
        _, cfg = read_config(s.model)
        return str(cfg.get("name", os.path.basename(s.model)))
    except Exception:  # noqa: BLE001 - a label only: an unreadable model is reported when it is loaded
        return os.path.basename(s.model.rstrip("/\\"))


def make_evaluator(spec: InProcessSpec, rule: Rule = Rule.FREESTYLE, seed: int = 0, *, batch_size: int = 4,
                   backend: str = "auto", threads: int = 1) -> Evaluator:
    """The evaluator of ``spec`` (``pure`` seeded with ``seed``; a model loaded from disk every call, never
    cached, so that a rewritten file is read again; ``backend``/``threads`` as
    :func:`gomoku_ai.net.load_model`; ``batch_size`` leaves per network call). ValueError for ``random``, which
    has none, and for a model that is not there."""
    from . import evaluator as E
    if spec.kind is PlayerKind.PURE:
        return E.RolloutEvaluator(seed=seed)
    if spec.kind is PlayerKind.TACTICS:
        return E.UniformEvaluator()
    if spec.kind is PlayerKind.HEURISTIC:
        return E.HeuristicEvaluator()
    if spec.kind is PlayerKind.MODEL and spec.model is not None:
        from .shipped import HEURISTIC, model_choice
        choice = model_choice(spec.model, rule)
        if choice == HEURISTIC:
            return E.HeuristicEvaluator()
        from .net import load_model
        return E.NetworkEvaluator(load_model(choice, backend=backend, threads=threads), batch_size=batch_size)
    raise SpecError(f"player {spec.text!r} has no evaluator")


def network_version(ev: Evaluator, path: Optional[str]) -> str:
    """``name@sha12`` of the network an evaluator loaded (from the file it was read from;
    :func:`gomoku_ai.workers.model_version`), ``name@unknown`` when that file cannot be read."""
    from .workers import model_version
    loaded = getattr(getattr(ev, "network", None), "basename", None) or path
    try:
        return model_version(str(loaded))
    except (OSError, ValueError):
        return f"{os.path.splitext(os.path.basename(str(path or loaded)))[0]}@unknown"


class RandomMover:
    """Uniformly random legal move within distance 2 of a stone (the centre on an empty board); never a renju
    forbidden point for Black."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def choose(self, board: Board) -> int:
        empty = board.empty_squares()
        if board.moves:   # every stone is a move (set_position records them too): no board scan
            cands = movegen.near_empty(board, 2) or empty
        else:
            cands = [board.centre] if board.is_empty(board.centre) else empty
        if movegen.restricts(board):
            cands = movegen.without_forbidden(board, cands) or movegen.legal_moves(board) or cands
        return cands[self.rng.randrange(len(cands))]


class EnginePlayer(GamePlayer):
    """An in-process match player: the engine's :class:`~gomoku_ai.player.Player` over the evaluator of its spec
    (or a :class:`RandomMover`), searching synchronously in the caller's thread.

    Each game gets a new Player seeded with the game's seed plus ``seed`` (the spec's own offset); the evaluator
    is made once and kept (``pure`` gets a new one per game, seeded the same way). ``evaluator``: one to use
    instead of making it (a network a pool worker already loaded). ``default_visits``: the caller's visits for a
    spec without ``N`` (see the module docstring). ``version``: for a model, the network version it plays
    (``name@sha12``), else None. The tournament's ``InProcessPlayer`` is this player with each move in a helper
    thread that a deadline can abandon.
    """

    def __init__(self, spec: InProcessSpec, name: Optional[str] = None, default_visits: Optional[int] = None,
                 seed: int = 0, evaluator: Optional[Evaluator] = None, version: Optional[str] = None) -> None:
        self.player_spec = spec
        self.name = name or spec.text
        self.default_visits = default_visits
        self.seed = int(seed)
        self.version = version
        self._ev: Optional[Evaluator] = evaluator
        self._player: Union[None, Player, RandomMover] = None
        self._cfg: Optional[GameConfig] = None

    def visits(self, tc: TimeControl) -> Optional[int]:
        """The visits of a move under ``tc`` (None: the time decides)."""
        s = self.player_spec
        if s.visits is not None:
            return s.visits
        if s.movetime_ms is not None or tc.limited:
            return None
        if self.default_visits is not None:
            return self.default_visits
        return s.default_visits

    def search_limit(self, board: Board, time_left_ms: Optional[int], tc: TimeControl) -> Limit:
        """The :class:`~gomoku_ai.player.Limit` of the next move: the spec's time per move (capped by the turn
        limit and a quarter of the game clock, less their safety margins), else the time manager's deadlines
        under ``tc``, else visits (or 90 % of the default turn time when no visits apply)."""
        from . import timeman
        from .player import Limit
        visits = self.visits(tc)
        if self.player_spec.movetime_ms is not None:
            d = timeman.movetime_deadlines(self.player_spec.movetime_ms, tc.turn_ms, time_left_ms)
            return Limit(soft_ms=d.soft_ms, hard_ms=d.hard_ms, visits=visits)
        if not tc.limited:
            if visits:
                return Limit(visits=visits)
            d = timeman.untimed_deadlines()
            return Limit(soft_ms=d.soft_ms, hard_ms=d.hard_ms)
        d = timeman.move_deadlines(board, tc.turn_ms if tc.turn_ms > 0 else None, tc.match_ms,
                                   time_left_ms if tc.match_ms > 0 else timeman.UNLIMITED,
                                   increment_ms=tc.increment_ms, other_limit=visits is not None)
        return Limit(soft_ms=d.soft_ms, hard_ms=d.hard_ms, visits=visits)

    def new_game(self, cfg: GameConfig, tc: TimeControl, seed: int) -> None:
        """A new Player (or RandomMover) for a game; :class:`~gomoku_ai.match.PlayerCrashed` when it cannot be
        made (e.g. a model file that cannot be loaded)."""
        self._cfg = cfg
        seed = (seed + self.seed) & 0x7FFFFFFF
        spec = self.player_spec
        if spec.kind is PlayerKind.RANDOM:
            self._player = RandomMover(seed)
            return
        try:
            if self._ev is None or spec.kind is PlayerKind.PURE:
                self._ev = make_evaluator(spec, cfg.rule, seed)
                if spec.kind is PlayerKind.MODEL:
                    self.version = network_version(self._ev, spec.model)
            from .player import Player
            self._player = Player(self._ev, seed=seed, use_vcf=spec.use_vcf, name=self.name)
        except Exception as e:  # noqa: BLE001 - any failure to build the player is this player's crash
            raise PlayerCrashed(f"cannot create the player: {e.__class__.__name__}: {e}", self.name) from e

    def move(self, board: Board, moves: Sequence[Move], time_left_ms: Optional[int], budget_ms: Optional[float],
             tc: TimeControl) -> MoveResult:
        """Search the position (a copy of ``board``) in this thread; a search that raises is a
        :class:`~gomoku_ai.match.PlayerCrashed`. ``budget_ms`` is not watched: the limit comes from the spec
        and ``tc`` (:meth:`search_limit`), and the referee scores a late move."""
        player = self._player
        if player is None:
            raise PlayerCrashed("no game started", self.name)
        t0 = time.monotonic()
        if isinstance(player, RandomMover):
            x, y = board.xy(player.choose(board))
            return MoveResult(x, y, (time.monotonic() - t0) * 1000.0)
        limit = self.search_limit(board, time_left_ms, tc)
        try:
            info = player.think(board.copy(), limit)
        except Exception as e:  # noqa: BLE001 - typed as this player's crash, with the cause chained
            log.warning("%s: the search raised", self.name, exc_info=True)
            raise PlayerCrashed(f"search raised {e.__class__.__name__}: {e}", self.name) from e
        elapsed = (time.monotonic() - t0) * 1000.0
        x, y = board.xy(int(info.move))
        msg = (f"{info.source} v={info.value:+.3f} n={info.visits} d={info.depth} "
               f"t={info.elapsed_ms:.0f}ms")
        return MoveResult(x, y, elapsed, [msg])

    def abandon(self) -> None:
        self._player = None

    def end_game(self) -> None:
        self._player = None


def resolve_player(spec: Union[str, "os.PathLike[str]", InProcessSpec], *, visits: Optional[int] = None,
                   seed: int = 0, name: Optional[str] = None, rule: Rule = Rule.FREESTYLE,
                   evaluator: Optional[Evaluator] = None, version: Optional[str] = None,
                   backend: str = "auto") -> EnginePlayer:
    """The :class:`EnginePlayer` of ``spec`` (the table in the module docstring; a path is a model).

    ``visits``: the visits of a spec without ``N``. ``seed``: added to every game's seed. ``name``: the display
    name (default: the spec's text). ``rule``: the rule the evaluator is made for. ``evaluator`` (with
    ``version``): use this one instead of loading it (a pool worker's cached network). The evaluator is made
    here, so that a model that is not there raises now (ValueError), not as a forfeit in every game.
    """
    s = as_spec(spec)
    if evaluator is None and s.kind not in (PlayerKind.RANDOM, PlayerKind.PURE):
        evaluator = make_evaluator(s, rule, seed, backend=backend)
        if s.kind is PlayerKind.MODEL and version is None:
            version = network_version(evaluator, s.model)
    return EnginePlayer(s, name=name, default_visits=visits, seed=seed, evaluator=evaluator, version=version)
