"""Tournament players: the spec syntax, and the in-process and external-engine adapters the referee drives.

Player specs
------------
A player is a spec token followed by any number of ``key=value`` tokens (each one shell word)::

    pure[:N]              pure MCTS: RolloutEvaluator (random playouts), no VCF; N visits (default 400)
    tactics[:N]           MCTS with UniformEvaluator + tactics (VCF); N visits (default 1000)
    heuristic[:N]         MCTS with HeuristicEvaluator + tactics; N visits (default 800)
    model:PATH[:N]        MCTS + tactics over a network model file (models/*.json); N visits (default 800)
    random                a uniformly random legal move near the stones (a floor for tests and SPRT checks)
    cmd=COMMAND           an external pbrain engine, e.g. cmd="python engine.py" (split like a shell would)

``N`` may also be a time (``500ms``, ``2s``): a fixed time per move instead of visits. Without ``N`` an
in-process player follows the time control when there is one (``--tc``), else ``--visits``, else its default.

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
import random
import re
import shlex
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from gomoku_ai.board import Board
from gomoku_ai.player import Limit
from gomoku_ai.rules import BLACK, Rule, rule_to_gomocup
from gomoku_ai.timeman import UNLIMITED
from protocol.manager import DEFAULT_MAX_MEMORY, EngineClient, EngineCrashed, EngineState, EngineTimeout
from protocol.think import move_deadlines, movetime_deadlines, think_with_deadline, untimed_deadlines

from .tournament_game import GameConfig, MoveResult, TimeControl

Move = Tuple[int, int]

#: in-process kinds: (default visits, evaluator name, use VCF)
KINDS: Dict[str, Tuple[Optional[int], str, bool]] = {
    "pure": (400, "rollout", False),
    "tactics": (1000, "uniform", True),
    "heuristic": (800, "heuristic", True),
    "model": (800, "model", True),
    "random": (None, "random", False),
}
COMMON_KEYS = {"name", "tc", "visits"}
INPROC_KEYS = COMMON_KEYS | {"movetime", "seed"}
EXTERNAL_KEYS = COMMON_KEYS | {"cmd", "dir", "nodes", "depth", "threads", "memory", "restart", "board"}


class SpecError(ValueError):
    """A player spec that cannot be read."""


def parse_duration_ms(text: str) -> float:
    """``500ms``, ``2s``, ``1.5s`` -> milliseconds."""
    m = re.fullmatch(r"\s*([\d.]+)\s*(ms|s)\s*", text)
    if not m:
        raise SpecError(f"bad duration {text!r}: expected e.g. 500ms or 2s")
    v = float(m.group(1))
    return v if m.group(2) == "ms" else v * 1000.0


def _positive_int(text: str, what: str) -> int:
    if not re.fullmatch(r"\d+", text.strip()) or int(text) <= 0:
        raise SpecError(f"{what} must be a positive integer, not {text!r}")
    return int(text)


@dataclass
class PlayerSpec:
    """A parsed player: ``kind`` is one of :data:`KINDS` or ``"external"``."""

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


def _parse_head(token: str) -> Tuple[str, Optional[str], Optional[str]]:
    """(kind, model path, N) of an in-process head token."""
    if token.startswith("model:"):
        rest = token[len("model:"):]
        m = re.fullmatch(r"(.+?):(\d+|[\d.]+m?s)", rest)
        if m:
            return "model", m.group(1), m.group(2)
        if not rest:
            raise SpecError("model: needs a path, e.g. model:models/m1.json:800")
        return "model", rest, None
    kind, _, arg = token.partition(":")
    kind = kind.lower()
    if kind not in KINDS or kind == "model":
        raise SpecError(f"unknown player {token!r}: expected one of pure[:N], tactics[:N], heuristic[:N], "
                        "model:PATH[:N], random, or cmd=COMMAND")
    if kind == "random" and arg:
        raise SpecError("random takes no argument")
    return kind, None, arg or None


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
        kind, model, arg = _parse_head(head)
        spec = PlayerSpec(kind, head, list(tokens), model=model)
        allowed = INPROC_KEYS
        if arg is not None:
            if arg.isdigit():
                spec.visits = _positive_int(arg, f"{head}: visits")
            else:
                spec.movetime_ms = parse_duration_ms(arg)
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
    if spec.kind == "random" and (spec.visits or spec.movetime_ms):
        raise SpecError("random takes no visits or time")
    return spec


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
class GamePlayer:
    """What the referee drives: ``new_game`` before a game, ``move`` for each move, ``end_game`` after it,
    ``abandon`` after this player lost by a failure, ``close`` at the end of the run. Failures are raised as
    :class:`protocol.manager.EngineError` subclasses."""

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


class RandomMover:
    """Uniformly random legal move within distance 2 of a stone (the centre on an empty board); never a renju
    forbidden point for Black."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def choose(self, board: Board) -> int:
        empty = board.empty_squares()
        stones = [m for m in range(board.size) if board[m] in (1, 2)]
        if stones:
            near = set()
            for m in stones:
                x0, y0 = board.xy(m)
                for dy in range(-2, 3):
                    for dx in range(-2, 3):
                        x, y = x0 + dx, y0 + dy
                        if 0 <= x < board.width and 0 <= y < board.height:
                            near.add(y * board.width + x)
            cands = [m for m in empty if m in near] or empty
        else:
            centre = board.index(board.width // 2, board.height // 2)
            cands = [centre] if board.is_empty(centre) else empty
        if board.rule is Rule.RENJU and board.side_to_move == BLACK:
            from gomoku_ai.renju import is_forbidden
            legal = [m for m in cands if not is_forbidden(board, m)]
            if not legal:
                legal = [m for m in empty if not is_forbidden(board, m)]
            cands = legal or cands
        return cands[self.rng.randrange(len(cands))]


def _evaluator(spec: PlayerSpec, rule: Rule, seed: int) -> Any:
    from gomoku_ai import evaluator as E
    if spec.kind == "pure":
        return E.RolloutEvaluator(seed=seed)
    if spec.kind == "tactics":
        return E.UniformEvaluator()
    if spec.kind == "heuristic":
        return E.HeuristicEvaluator()
    if spec.kind == "model":
        from gomoku_ai.shipped import load_evaluator
        return load_evaluator(spec.model, rule, threads=1)
    raise ValueError(spec.kind)


def _network_version(ev: Any, path: Optional[str]) -> str:
    """``name@sha12`` of the network an evaluator loaded (from the file it was read from)."""
    from gomoku_ai.workers import model_version
    loaded = getattr(getattr(ev, "network", None), "basename", None) or path
    try:
        return model_version(str(loaded))
    except (OSError, ValueError):
        return f"{os.path.splitext(os.path.basename(str(path or loaded)))[0]}@unknown"


class InProcessPlayer(GamePlayer):
    """A :class:`gomoku_ai.player.Player` (or :class:`RandomMover`) in this process. Each move runs in a helper
    thread that the referee waits for with a deadline (budget + tolerance), so a stuck search loses on time
    instead of hanging the run; the search object is then thrown away. ``version``: for a ``model:`` player,
    the network version it loaded (``name@sha12``, :func:`gomoku_ai.workers.model_version`), else None."""

    def __init__(self, spec: PlayerSpec, default_visits: Optional[int] = None) -> None:
        self.spec = spec
        self.name = spec.name
        self.default_visits = default_visits
        self.version: Optional[str] = None
        self._ev: Any = None
        self._player: Any = None
        self._cfg: Optional[GameConfig] = None
        self.stuck = 0

    def _visits(self, tc: TimeControl) -> Optional[int]:
        if self.spec.visits is not None:
            return self.spec.visits
        if self.spec.movetime_ms is not None or tc.limited:
            return None
        if self.default_visits is not None:
            return self.default_visits
        return KINDS[self.spec.kind][0]

    def new_game(self, cfg: GameConfig, tc: TimeControl, seed: int) -> None:
        self._cfg = cfg
        seed = (seed + self.spec.seed) & 0x7FFFFFFF
        if self.spec.kind == "random":
            self._player = RandomMover(seed)
            return
        try:
            if self._ev is None or self.spec.kind == "pure":
                self._ev = _evaluator(self.spec, cfg.rule, seed)
                if self.spec.kind == "model":
                    self.version = _network_version(self._ev, self.spec.model)
            from gomoku_ai.player import Player
            self._player = Player(self._ev, seed=seed, use_vcf=KINDS[self.spec.kind][2], name=self.name)
        except Exception as e:  # noqa: BLE001 - e.g. a model file that cannot be loaded
            raise EngineCrashed(f"cannot create the player: {e.__class__.__name__}: {e}", self.name) from None

    def _limit(self, board: Board, time_left_ms: Optional[int], tc: TimeControl) -> Limit:
        """The search limit of one move; the deadlines come from :mod:`protocol.think`."""
        visits = self._visits(tc)
        if self.spec.movetime_ms is not None:
            d = movetime_deadlines(self.spec.movetime_ms, tc.turn_ms, time_left_ms)
            return Limit(soft_ms=d.soft_ms, hard_ms=d.hard_ms, visits=visits)
        if not tc.limited:
            if visits:
                return Limit(visits=visits)
            d = untimed_deadlines()
            return Limit(soft_ms=d.soft_ms, hard_ms=d.hard_ms)
        d = move_deadlines(board, tc.turn_ms if tc.turn_ms > 0 else None, tc.match_ms,
                           time_left_ms if tc.match_ms > 0 else UNLIMITED, increment_ms=tc.increment_ms,
                           other_limit=visits is not None)
        return Limit(soft_ms=d.soft_ms, hard_ms=d.hard_ms, visits=visits)

    def move(self, board: Board, moves: Sequence[Move], time_left_ms: Optional[int], budget_ms: Optional[float],
             tc: TimeControl) -> MoveResult:
        cfg = self._cfg or GameConfig()
        player = self._player
        if player is None:
            raise EngineCrashed("no game started", self.name)
        wait_ms = max(0.0, (cfg.move_timeout_ms if budget_ms is None else budget_ms) + cfg.tolerance_ms)
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

    def abandon(self) -> None:
        self._player = None

    def end_game(self) -> None:
        self._player = None


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
        c.move_timeout_ms = cfg.move_timeout_ms
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
