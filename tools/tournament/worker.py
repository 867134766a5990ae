"""Playing scheduled games: one :class:`GameRunner` per worker, inline or in a pool worker.

A worker keeps its own player objects (networks are loaded once, external engine processes are reused between
the games it plays and restarted after a failure). With ``-j 1`` (local backend) the runner plays in the main
process; otherwise each worker of a :mod:`gomoku_ai.workers` pool (local processes or Ray actors) holds one
:class:`TournamentWorker`, which plays one game (a :class:`GameSpec` dict) per task and returns its result.
External engines started by a worker are killed with it (``die_with_parent``) and by its ``close()``, so a
killed worker leaves no engine behind.
"""
from __future__ import annotations

import itertools
import logging
import os
import shutil
import tempfile
from typing import Any, Callable, Dict, List, Optional

from gomoku_ai.match import GameConfig, TimeControl
from gomoku_ai.rules import Rule
from gomoku_ai.workers.base import THREAD_VARS

from .game import GameSpec, game_wall_limit_s, play_game
from .players import GamePlayer, PlayerSpec, make_player, parse_player

log = logging.getLogger("gomoku.tournament")

#: the pool worker class, resolved by name in each worker process or Ray actor (never stored on disk)
WORKER_TARGET = "tools.tournament.worker:TournamentWorker"


def game_config(config: Dict[str, Any]) -> GameConfig:
    """The referee's settings of a tournament configuration (``tournament.json``)."""
    return GameConfig(width=config["width"], height=config["height"], rule=Rule.parse(config["rule"]),
                      max_plies=config.get("draw_after"), tolerance_ms=float(config["tolerance_ms"]),
                      move_timeout_ms=float(config["move_timeout_ms"]))


def player_specs(config: Dict[str, Any]) -> List[PlayerSpec]:
    """The players of a configuration, parsed from their tokens, with the names the run gave them."""
    specs = [parse_player(t) for t in config["players"]]
    for s, name in zip(specs, config["names"]):
        s.name = name
    return specs


def player_tc(config: Dict[str, Any], spec: PlayerSpec) -> TimeControl:
    """The time control ``spec`` plays under: its own ``tc=``, else the tournament's."""
    return spec.tc if spec.tc is not None else TimeControl.parse(config.get("tc"))


def game_limit_s(config: Dict[str, Any], g: GameSpec) -> float:
    """The wall limit of game ``g`` on a pool worker in seconds (the attempt is lost past it):
    :func:`~tools.tournament.game.game_wall_limit_s` for its players' time controls, plus 30 s."""
    specs = player_specs(config)
    tcs = (player_tc(config, specs[g.black]), player_tc(config, specs[g.white]))
    return game_wall_limit_s(game_config(config), tcs, len(g.opening), config["startup_timeout_ms"] / 1000.0) + 30.0


def shipped_models(config: Dict[str, Any], warn: Callable[[str], None]) -> Dict[int, Any]:
    """Player index -> :class:`~gomoku_ai.workers.ModelRef` of every ``model:`` player whose files can be read
    here (shipped to Ray workers by value, so other machines need no copy); a model that cannot be read here is
    left to each worker's disk, with a ``warn``."""
    from gomoku_ai.shipped import resolve_model
    from gomoku_ai.workers import ModelRef
    out: Dict[int, Any] = {}
    for i, sp in enumerate(player_specs(config)):
        if sp.kind != "model" or not sp.model:
            continue
        try:
            out[i] = ModelRef.from_path(resolve_model(sp.model))
        except Exception as e:  # noqa: BLE001 - a folder or a missing model: the workers load the path
            warn(f"{sp.name}: the model is not shipped to the workers ({e}); each worker loads "
                 f"{sp.model} from its own disk")
    return out


class GameRunner:
    """Plays games for one worker; player objects are created on first use and kept.

    ``model_paths``: player index -> the model file to load instead of the one in its spec (a copy shipped to
    this machine). ``die_with_parent``: external engines die with the thread that starts them (workers).
    Each result gets ``black_net`` / ``white_net``: the network version (``name@sha12``) that played that side
    when it is a ``model:`` player, else None.
    """

    def __init__(self, config: Dict[str, Any], on_spawn: Optional[Callable[[int], None]] = None,
                 on_reap: Optional[Callable[[int], None]] = None,
                 model_paths: Optional[Dict[int, str]] = None, die_with_parent: bool = False) -> None:
        self.config = config
        self.cfg = game_config(config)
        self.specs = player_specs(config)
        for i, path in (model_paths or {}).items():
            self.specs[i].model = path
        self.on_spawn = on_spawn
        self.on_reap = on_reap
        self.die_with_parent = die_with_parent
        self.players: Dict[int, GamePlayer] = {}

    def player(self, i: int) -> GamePlayer:
        p = self.players.get(i)
        if p is None:
            c = self.config
            p = make_player(self.specs[i], c.get("visits"), c["tolerance_ms"], c["startup_timeout_ms"],
                            c["move_timeout_ms"], self.on_spawn, self.on_reap, self.die_with_parent)
            self.players[i] = p
        return p

    def play(self, spec: GameSpec) -> Dict[str, Any]:
        black, white = self.player(spec.black), self.player(spec.white)
        tcs = (player_tc(self.config, self.specs[spec.black]), player_tc(self.config, self.specs[spec.white]))
        res = play_game(spec, (black, white), self.cfg, tcs)
        res["black_net"] = getattr(black, "version", None)
        res["white_net"] = getattr(white, "version", None)
        return res

    def close(self) -> None:
        for p in self.players.values():
            try:
                p.close()
            except Exception:  # noqa: BLE001
                log.exception("closing %s failed", p.name)
        self.players.clear()


class TournamentWorker:
    """The pool worker of a tournament (:data:`WORKER_TARGET`): built once per worker
    process or Ray actor, it keeps one :class:`GameRunner` (players, networks, engines) across games.

    ``config``: the tournament configuration (``tournament.json``). ``log_dir``: where this worker writes its
    log (``worker-N.log``, N the first free number); skipped when the folder does not exist on this machine (a
    remote Ray node). ``models``: player index -> :class:`gomoku_ai.workers.ModelRef` (a network shipped by
    value, written to a private temporary folder once and loaded from there).
    """

    def __init__(self, config: Dict[str, Any], log_dir: Optional[str] = None,
                 models: Optional[Dict[int, Any]] = None) -> None:
        for var in THREAD_VARS:
            os.environ.setdefault(var, "1")
        self._log_handler: Optional[logging.Handler] = None
        if log_dir and os.path.isdir(log_dir):
            self._log_handler = _claim_log(log_dir)
        self._tmp: Optional[str] = None
        paths: Dict[int, str] = {}
        if models:
            from gomoku_ai.workers import resolve
            self._tmp = tempfile.mkdtemp(prefix="gomoku-tournament-models-")
            for i, ref in models.items():
                ref = resolve(ref)
                paths[int(i)] = str(ref.write(os.path.join(self._tmp, str(i)))) + ".json"
        self.runner = GameRunner(config, model_paths=paths, die_with_parent=True)
        self.games = 0

    def run(self, payload: Dict[str, Any]) -> Dict[str, Any]:
        """Play one game (a :meth:`GameSpec.to_dict`) and return its result record."""
        self.games += 1
        return self.runner.play(GameSpec.from_dict(payload))

    def close(self) -> None:
        """Close the players (external engines are stopped) and remove the shipped models."""
        self.runner.close()
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None
        if self._log_handler is not None:
            logging.getLogger().removeHandler(self._log_handler)
            self._log_handler.close()
            self._log_handler = None


def _claim_log(log_dir: str) -> Optional[logging.Handler]:
    """A file handler on ``log_dir/worker-N.log`` for the first N no other worker has claimed (created
    exclusively, so that concurrent workers never share a file), attached to the root logger."""
    for n in itertools.count():
        path = os.path.join(log_dir, f"worker-{n}.log")
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            continue
        except OSError:
            return None
        os.close(fd)
        h = logging.FileHandler(path, encoding="utf-8")
        h.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root = logging.getLogger()
        root.addHandler(h)
        root.setLevel(logging.INFO)
        return h
    return None  # pragma: no cover - unreachable
