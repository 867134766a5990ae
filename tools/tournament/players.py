"""Tournament players: the spec syntax, and the in-process and external-engine adapters the referee drives.

Player specs
------------
A player is a spec token followed by any number of ``key=value`` tokens (each one shell word). The spec token is
an in-process player of :mod:`gomoku_ai.players` (the table of ``pure[:N]``, ``tactics[:N]``,
``heuristic[:N]``, ``model:PATH[:N]``, ``random``; a bare model path is not taken here, write ``model:PATH``),
or ``cmd=COMMAND``: an external pbrain engine, e.g. ``cmd="python engine.py"`` (split like a shell would).

Options (``key=value``):

* any player: ``name=`` (display name; default: the spec, or the engine's file name), ``tc=`` (its own time
  control, as ``--tc``), ``visits=N`` (in-process: visits; external: sent as ``INFO max_node``);
* in-process: ``movetime=`` (``500ms``/``2s``), ``seed=`` (added to the per-game seed);
* external: ``dir=`` (working directory), ``nodes=`` (``INFO max_node``), ``depth=`` (``INFO max_depth``),
  ``threads=`` (``INFO thread_num``, default 1: CPU-fair), ``memory=`` (``INFO max_memory`` bytes, default
  350 MB), ``option.KEY=VALUE`` (``INFO KEY VALUE``), ``env.KEY=VALUE`` (environment variable),
  ``restart=error|game`` (a new process only after a failure -- the default, as c-gomoku-cli -- or for every
  game, as Gomocup), ``board=auto|always`` (``always``: every request is a BOARD block).

Examples: ``heuristic:200``, ``pure:400 name=pure400``, ``model:models/m1.json:800``,
``cmd="python engine.py" name=ours nodes=400``, ``cmd=./pbrain-rapfi dir=/opt/rapfi threads=1``.
"""
from __future__ import annotations

import os
import re
import shlex
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from gomoku_ai.board import Board
from gomoku_ai.match import GameConfig, GamePlayer, MoveResult, TimeControl
from gomoku_ai.players import (EnginePlayer, InProcessSpec, PlayerKind, RandomMover, SpecError,
                               parse_duration_ms, parse_player_spec)
from gomoku_ai.rules import rule_to_gomocup
from protocol.lines import DEFAULT_MAX_MEMORY
from protocol.manager import EngineClient, EngineCrashed, EngineState, EngineTimeout
from protocol.think import think_with_deadline

Move = Tuple[int, int]

__all__ = ["SpecError", "PlayerSpec", "parse_player", "parse_players", "split_player_tokens", "GamePlayer",
           "RandomMover", "InProcessPlayer", "ExternalPlayer", "make_player", "parse_duration_ms"]

COMMON_KEYS = {"name", "tc", "visits"}
INPROC_KEYS = COMMON_KEYS | {"movetime", "seed"}
EXTERNAL_KEYS = COMMON_KEYS | {"cmd", "dir", "nodes", "depth", "threads", "memory", "restart", "board"}


def _positive_int(text: str, what: str) -> int:
    if not re.fullmatch(r"\d+", text.strip()) or int(text) <= 0:
        raise SpecError(f"{what} must be a positive integer, not {text!r}")
    return int(text)


@dataclass
class PlayerSpec:
    """A parsed player: ``kind`` is a :class:`gomoku_ai.players.PlayerKind` value or ``"external"``."""

    kind: str
    name: str
    tokens: List[str]                       # as given (the canonical form for the resume check)
    visits: Optional[int] = None
    movetime_ms: Optional[float] = None
    model: Optional[str] = None
    cmd: Optional[List[str]] = None
    cwd: Optional[str] = None
    infos: List[Tuple[str, str]] = field(default_factory=list)  # extra INFO lines (external)
    env: Dict[str, str] = field(default_factory=dict)
    tc: Optional[TimeControl] = None
    seed: int = 0
    restart: str = "error"
    board_always: bool = False
    nodes: Optional[int] = None
    depth: Optional[int] = None
    threads: int = 1
    memory: int = DEFAULT_MAX_MEMORY

    @property
    def external(self) -> bool:
        return self.kind == "external"

    def in_process(self) -> InProcessSpec:
        """The :mod:`gomoku_ai.players` spec of an in-process player (its visits, time and model as the options
        left them)."""
        if self.external:
            raise ValueError(f"{self.name} is an external engine")
        return InProcessSpec(PlayerKind(self.kind), self.tokens[0], self.visits, self.movetime_ms, self.model)


def _default_engine_name(cmd: Sequence[str]) -> str:
    """The program's file name without extension; for an interpreter (``python engine.py``), the script's."""
    prog = cmd[0]
    if re.match(r"(python|pypy)[\d.]*(\.exe)?$", os.path.basename(prog), re.IGNORECASE):
        for tok in cmd[1:]:
            if not tok.startswith("-"):
                prog = tok
                break
    base = os.path.basename(prog.rstrip("/\\")) or prog
    return os.path.splitext(base)[0] or base


def parse_player(tokens: Sequence[str]) -> PlayerSpec:
    """One player from its spec token and option tokens (see the module docstring)."""
    if not tokens:
        raise SpecError("empty player spec")
    head = tokens[0]
    opts: Dict[str, str] = {}
    rest = list(tokens[1:])
    if head.startswith("cmd="):
        rest.insert(0, head)
    for tok in rest:
        if "=" not in tok:
            raise SpecError(f"{tok!r} is not key=value (options follow their player spec)")
        k, v = tok.split("=", 1)
        if k in opts:
            raise SpecError(f"option {k!r} given twice for {head!r}")
        opts[k] = v
    if head.startswith("cmd="):
        spec = PlayerSpec("external", "", list(tokens))
        allowed = EXTERNAL_KEYS
        try:
            spec.cmd = shlex.split(opts["cmd"])
        except ValueError as e:
            raise SpecError(f"cannot split the command {opts['cmd']!r}: {e}") from None
        if not spec.cmd:
            raise SpecError("cmd= is empty")
        spec.name = _default_engine_name(spec.cmd)
    else:
        head_spec = parse_player_spec(head)
        spec = PlayerSpec(head_spec.kind.value, head, list(tokens), visits=head_spec.visits,
                          movetime_ms=head_spec.movetime_ms, model=head_spec.model)
        allowed = INPROC_KEYS
    for k, v in opts.items():
        if k.startswith("option.") and spec.external:
            key = k[len("option."):].strip().lower()
            if not key or " " in key:
                raise SpecError(f"bad option name {k!r}")
            spec.infos.append((key, v))
            continue
        if k.startswith("env.") and spec.external:
            spec.env[k[len("env."):]] = v
            continue
        if k not in allowed:
            raise SpecError(f"unknown option {k!r} for {head!r} (allowed: {', '.join(sorted(allowed))}"
                            + (", option.KEY, env.KEY" if spec.external else "") + ")")
        _set_option(spec, k, v)
    if spec.kind == "random" and (spec.visits or spec.movetime_ms):
        raise SpecError("random takes no visits or time")
    return spec


def _set_option(spec: PlayerSpec, k: str, v: str) -> None:
    """Apply the option ``k=v`` (a key allowed for this kind of player) to ``spec``; raises SpecError."""
    if k == "name":
        if not v.strip():
            raise SpecError("name= is empty")
        spec.name = v.strip()
    elif k == "tc":
        try:
            spec.tc = TimeControl.parse(v)
        except ValueError as e:
            raise SpecError(str(e)) from None
    elif k == "visits":
        if spec.external:
            spec.nodes = _positive_int(v, "visits")
        else:
            spec.visits = _positive_int(v, "visits")
    elif k == "movetime":
        spec.movetime_ms = parse_duration_ms(v)
    elif k == "seed":
        if not re.fullmatch(r"-?\d+", v):
            raise SpecError(f"seed must be an integer, not {v!r}")
        spec.seed = int(v)
    elif k == "dir":
        spec.cwd = v
    elif k == "nodes":
        spec.nodes = _positive_int(v, "nodes")
    elif k == "depth":
        spec.depth = _positive_int(v, "depth")
    elif k == "threads":
        spec.threads = _positive_int(v, "threads")
    elif k == "memory":
        spec.memory = _positive_int(v, "memory")
    elif k == "restart":
        if v not in ("error", "game"):
            raise SpecError("restart must be 'error' or 'game'")
        spec.restart = v
    elif k == "board":
        if v not in ("auto", "always"):
            raise SpecError("board must be 'auto' or 'always'")
        spec.board_always = v == "always"


def split_player_tokens(tokens: Sequence[str]) -> List[List[str]]:
    """Group a flat token list into players: a token without ``=`` (or starting ``cmd=``) starts a player;
    ``key=value`` tokens belong to the player before them."""
    groups: List[List[str]] = []
    for tok in tokens:
        if "=" not in tok or tok.startswith("cmd=") or tok.startswith("model:"):
            groups.append([tok])
        else:
            if not groups:
                raise SpecError(f"option {tok!r} comes before any player spec")
            groups[-1].append(tok)
    return groups


def parse_players(tokens: Sequence[str]) -> List[PlayerSpec]:
    """All players from the command line tokens; names made unique (``name#2``)."""
    specs = [parse_player(g) for g in split_player_tokens(tokens)]
    seen: Dict[str, int] = {}
    for s in specs:
        base = s.name
        k = seen.get(base, 0) + 1
        seen[base] = k
        if k > 1:
            s.name = f"{base}#{k}"
    if len({s.name for s in specs}) != len(specs):
        raise SpecError("player names are not unique; give name= options")
    return specs


# ------------------------------------------------------------------------------------------ adapters
def _move_timeout_ms(cfg: GameConfig) -> float:
    """``cfg.move_timeout_ms`` (ms); a tournament game always has one (:func:`~tools.tournament.worker.game_config`),
    so None (no limit) is refused with a clear error."""
    if cfg.move_timeout_ms is None:
        raise ValueError("a tournament game needs a move timeout (GameConfig.move_timeout_ms is None)")
    return cfg.move_timeout_ms


class InProcessPlayer(EnginePlayer):
    """A :class:`gomoku_ai.players.EnginePlayer` (the engine's Player, or a :class:`RandomMover`) whose moves run
    in a helper thread that the referee waits for with a deadline (budget + tolerance), so a stuck search loses
    on time instead of hanging the run; the search object is then thrown away. ``version``: for a ``model:``
    player, the network version it loaded (``name@sha12``, :func:`gomoku_ai.workers.model_version`), else
    None."""

    def __init__(self, spec: PlayerSpec, default_visits: Optional[int] = None) -> None:
        super().__init__(spec.in_process(), name=spec.name, default_visits=default_visits, seed=spec.seed)
        self.spec = spec
        self.stuck = 0

    def _limit(self, board: Board, time_left_ms: Optional[int], tc: TimeControl) -> Any:
        """The search limit of a move (:meth:`~gomoku_ai.players.EnginePlayer.search_limit`)."""
        return self.search_limit(board, time_left_ms, tc)

    def move(self, board: Board, moves: Sequence[Move], time_left_ms: Optional[int], budget_ms: Optional[float],
             tc: TimeControl) -> MoveResult:
        cfg = self._cfg or GameConfig()
        player = self._player
        if player is None:
            raise EngineCrashed("no game started", self.name)
        wait_ms = max(0.0, (_move_timeout_ms(cfg) if budget_ms is None else budget_ms) + cfg.tolerance_ms)
        t0 = time.monotonic()
        if isinstance(player, RandomMover):
            m = player.choose(board)
            x, y = board.xy(m)
            return MoveResult(x, y, (time.monotonic() - t0) * 1000.0)
        limit = self._limit(board, time_left_ms, tc)
        # the whole wait is the deadline, with no grace: past it the stop event is set and the move is lost
        job = think_with_deadline(player, board, limit, deadline_ms=wait_ms, name=f"think-{self.name}")
        elapsed = (time.monotonic() - t0) * 1000.0
        if not job.done:
            self.stuck += 1
            self._player = None
            self._ev = None  # the stuck thread may still use it
            raise EngineTimeout(f"no move within {wait_ms:.0f} ms (search did not return)", self.name)
        if job.error is not None:
            e = job.error
            raise EngineCrashed(f"search raised {e.__class__.__name__}: {e} | {job.traceback[-400:]}", self.name)
        info = job.info
        assert info is not None  # Player.think returns a SearchInfo or raises
        x, y = board.xy(int(info.move))
        msg = (f"{info.source} v={info.value:+.3f} n={info.visits} d={info.depth} "
               f"t={info.elapsed_ms:.0f}ms")
        return MoveResult(x, y, elapsed, [msg])


class ExternalPlayer(GamePlayer):
    """An external pbrain engine through :class:`protocol.manager.EngineClient`. The process is reused between
    games (``START`` again) and restarted after a failure (or for every game with ``restart=game``)."""

    def __init__(self, spec: PlayerSpec, default_visits: Optional[int] = None,
                 tolerance_ms: float = 1000.0, startup_timeout_ms: float = 10000.0,
                 move_timeout_ms: float = 300000.0,
                 on_spawn: Optional[Callable[[int], None]] = None,
                 on_reap: Optional[Callable[[int], None]] = None, die_with_parent: bool = False) -> None:
        self.spec = spec
        self.name = spec.name
        self.default_visits = default_visits
        env = dict(os.environ)
        env.update(spec.env)
        self.client = EngineClient(spec.cmd or [], name=spec.name, cwd=spec.cwd, env=env,
                                   tolerance_ms=tolerance_ms, startup_timeout_ms=startup_timeout_ms,
                                   move_timeout_ms=move_timeout_ms, on_spawn=on_spawn, on_reap=on_reap,
                                   die_with_parent=die_with_parent)
        self.client.board_always = spec.board_always

    def infos(self, cfg: GameConfig, tc: TimeControl) -> List[Tuple[str, Any]]:
        out: List[Tuple[str, Any]] = []
        if tc.turn_ms > 0:
            out.append(("timeout_turn", tc.turn_ms))
        out.append(("timeout_match", tc.match_ms))
        out.append(("max_memory", self.spec.memory))
        out.append(("game_type", 1))
        out.append(("rule", rule_to_gomocup(cfg.rule)))
        nodes = self.spec.nodes if self.spec.nodes is not None else self.default_visits
        if nodes is not None and not (tc.limited and self.spec.nodes is None):
            out.append(("max_node", nodes))
        if self.spec.depth is not None:
            out.append(("max_depth", self.spec.depth))
        out.append(("thread_num", self.spec.threads))
        if tc.increment_ms:
            out.append(("time_increment", tc.increment_ms))
        out.extend(self.spec.infos)
        return out

    def new_game(self, cfg: GameConfig, tc: TimeControl, seed: int) -> None:
        c = self.client
        c.tolerance_ms = cfg.tolerance_ms
        c.move_timeout_ms = _move_timeout_ms(cfg)
        if self.spec.restart == "game" and c.state not in (EngineState.STOPPED, EngineState.DEAD):
            c.quit()
        c.ensure_started()
        c.new_game(cfg.width, cfg.height, self.infos(cfg, tc))

    def move(self, board: Board, moves: Sequence[Move], time_left_ms: Optional[int], budget_ms: Optional[float],
             tc: TimeControl) -> MoveResult:
        rep = self.client.play(list(moves), time_left_ms, budget_ms)
        return MoveResult(rep.x, rep.y, rep.elapsed_ms, rep.messages)

    def abandon(self) -> None:
        # an engine that lost by an illegal move is alive but out of step; START resets it next game
        pass

    def close(self) -> None:
        self.client.quit()


def make_player(spec: PlayerSpec, default_visits: Optional[int] = None, tolerance_ms: float = 1000.0,
                startup_timeout_ms: float = 10000.0, move_timeout_ms: float = 300000.0,
                on_spawn: Optional[Callable[[int], None]] = None,
                on_reap: Optional[Callable[[int], None]] = None, die_with_parent: bool = False) -> GamePlayer:
    """The adapter for ``spec``. ``die_with_parent``: external engines are killed with the thread that starts
    them (a worker process; see :class:`protocol.manager.EngineClient`)."""
    if spec.external:
        return ExternalPlayer(spec, default_visits, tolerance_ms, startup_timeout_ms, move_timeout_ms,
                              on_spawn, on_reap, die_with_parent)
    return InProcessPlayer(spec, default_visits)
