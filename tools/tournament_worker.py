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

from .tournament_game import GameSpec, play_game
from .tournament_players import GamePlayer, PlayerSpec, make_player, parse_player

log = logging.getLogger("gomoku.tournament")


def game_config(config: Dict[str, Any]) -> GameConfig:
    """The referee's settings of a tournament configuration (``tournament.json``)."""
    return GameConfig(width=config["width"], height=config["height"], rule=Rule.parse(config["rule"]),
                      max_plies=config.get("draw_after"), tolerance_ms=float(config["tolerance_ms"]),
                      move_timeout_ms=float(config["move_timeout_ms"]))


def player_specs(config: Dict[str, Any]) -> List[PlayerSpec]:
    specs = [parse_player(t) for t in config["players"]]
    for s, name in zip(specs, config["names"]):
        s.name = name
    return specs


def player_tc(config: Dict[str, Any], spec: PlayerSpec) -> TimeControl:
    return spec.tc if spec.tc is not None else TimeControl.parse(config.get("tc"))


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
    """The pool worker of a tournament (``tools.tournament_worker:TournamentWorker``): built once per worker
    process or Ray actor, it keeps one :class:`GameRunner` (players, networks, engines) across games.

    ``config``: the tournament configuration (``tournament.json``). ``log_dir``: where this worker writes its
    log (``worker-N.log``, N the first free number); skipped when the folder does not exist on this machine (a
    remote Ray node). ``models``: player index -> :class:`gomoku_ai.workers.ModelRef` (a network shipped by
    value, written to a private temporary folder once and loaded from there).
    """

    def __init__(self, config: Dict[str, Any], log_dir: Optional[str] = None,
                 models: Optional[Dict[int, Any]] = None) -> None:
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
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
