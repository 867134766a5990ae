"""Playing scheduled games: one :class:`GameRunner` per worker, inline or in a worker process.

A worker keeps its own player objects (external engine processes are reused between the games it plays and
restarted after a failure). With ``-j 1`` the runner plays in the main process; with ``-j N`` each of N worker
processes (``spawn``) runs :func:`worker_main`: it receives one job (the two games of an opening pair) at a time
over a pipe and sends back each game's result as soon as it is finished, plus the pids of the engine processes
it starts, so that the main process can kill them if it ever has to kill the worker.
"""
from __future__ import annotations

import logging
import os
import signal
import sys
import traceback
from typing import Any, Callable, Dict, List, Optional

from gomoku_ai.rules import Rule

from .tournament_game import GameConfig, GameSpec, TimeControl, play_game
from .tournament_players import GamePlayer, PlayerSpec, make_player, parse_player

log = logging.getLogger("gomoku.tournament")


def game_config(config: Dict[str, Any]) -> GameConfig:
    return GameConfig(width=config["width"], height=config["height"], rule=Rule.parse(config["rule"]),
                      draw_after=config.get("draw_after"), tolerance_ms=float(config["tolerance_ms"]),
                      move_timeout_ms=float(config["move_timeout_ms"]))


def player_specs(config: Dict[str, Any]) -> List[PlayerSpec]:
    specs = [parse_player(t) for t in config["players"]]
    for s, name in zip(specs, config["names"]):
        s.name = name
    return specs


def player_tc(config: Dict[str, Any], spec: PlayerSpec) -> TimeControl:
    return spec.tc if spec.tc is not None else TimeControl.parse(config.get("tc"))


class GameRunner:
    """Plays games for one worker; player objects are created on first use and kept."""

    def __init__(self, config: Dict[str, Any], on_spawn: Optional[Callable[[int], None]] = None,
                 on_reap: Optional[Callable[[int], None]] = None) -> None:
        self.config = config
        self.cfg = game_config(config)
        self.specs = player_specs(config)
        self.on_spawn = on_spawn
        self.on_reap = on_reap
        self.players: Dict[int, GamePlayer] = {}

    def player(self, i: int) -> GamePlayer:
        p = self.players.get(i)
        if p is None:
            c = self.config
            p = make_player(self.specs[i], c.get("visits"), c["tolerance_ms"], c["startup_timeout_ms"],
                            c["move_timeout_ms"], self.on_spawn, self.on_reap)
            self.players[i] = p
        return p

    def play(self, spec: GameSpec) -> Dict[str, Any]:
        black, white = self.player(spec.black), self.player(spec.white)
        tcs = (player_tc(self.config, self.specs[spec.black]), player_tc(self.config, self.specs[spec.white]))
        return play_game(spec, (black, white), self.cfg, tcs)

    def close(self) -> None:
        for p in self.players.values():
            try:
                p.close()
            except Exception:  # noqa: BLE001
                log.exception("closing %s failed", p.name)
        self.players.clear()


def worker_main(conn: Any, config: Dict[str, Any], worker_id: int, log_path: Optional[str]) -> None:
    """Entry point of a worker process (see the module docstring). Messages sent: ``("spawn", pid)``,
    ``("reap", pid)``, ``("game", result)``, ``("done", job_id)``, ``("error", job_id, traceback)``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the main process decides what Ctrl-C does
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    if log_path:
        h = logging.FileHandler(log_path, encoding="utf-8")
        h.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root = logging.getLogger()
        root.addHandler(h)
        root.setLevel(logging.INFO)

    def send(*msg: Any) -> None:
        try:
            conn.send(msg)
        except (OSError, EOFError, BrokenPipeError):
            os._exit(3)  # the main process is gone: stop at once

    runner = GameRunner(config, on_spawn=lambda pid: send("spawn", pid), on_reap=lambda pid: send("reap", pid))
    try:
        while True:
            try:
                msg = conn.recv()
            except (EOFError, OSError):
                break
            if msg is None:
                break
            job_id, games = msg
            try:
                for g in games:
                    res = runner.play(GameSpec.from_dict(g))
                    send("game", res)
                send("done", job_id)
            except Exception:  # noqa: BLE001 - a bug in the runner: report it, the main process stops
                send("error", job_id, traceback.format_exc())
    finally:
        runner.close()
        try:
            conn.close()
        except OSError:
            pass
    sys.exit(0)
