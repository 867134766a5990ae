"""Checking the players before a tournament writes anything: :func:`check_players`.

Every player of the configuration is created once, in this process, the way a game creates it:

* an in-process player builds its search (a ``model:`` player loads its network, so a model that is not there
  or cannot be read is found here);
* an external engine is started, must answer ``ABOUT`` and then ``OK`` to ``START`` at the tournament's board
  size, each within the start-up timeout (``--startup-timeout``), and gets the game's ``INFO`` lines; it is then
  ended (``END``, and killed if it has not exited a second later), so the games start their own processes.

The first player that fails raises :class:`PlayerCheckError`, whose text is one line naming the player (its
name, and its spec token when the name differs) and why. :meth:`tools.tournament.runner.Runner.prepare` calls
this before it creates or writes the output folder, so a typo in a player costs neither a folder nor a run of
forfeited games. A player that fails later (a crash in a game) is still scored as that game's forfeit.
"""
from __future__ import annotations

import logging
from typing import Any, Dict

from gomoku_ai.match import PlayerError

from .config import TournamentError
from .players import PlayerSpec, make_player
from .worker import game_config, player_specs, player_tc

__all__ = ["PlayerCheckError", "check_player", "check_players"]

log = logging.getLogger("gomoku.tournament")


class PlayerCheckError(TournamentError):
    """A player that cannot be created or started (reported as one line, exit code 2). ``name``: the player's
    name; ``reason``: why."""

    def __init__(self, spec: PlayerSpec, reason: str) -> None:
        head = spec.tokens[0] if spec.tokens else spec.name
        label = repr(spec.name) + ("" if head == spec.name else f" ({head})")
        super().__init__(f"player {label}: {reason}")
        self.name = spec.name
        self.reason = reason


def _reason(spec: PlayerSpec, e: PlayerError) -> str:
    """Why ``spec`` could not be created: for a model, the loader's own error (not the referee's wrapping)."""
    cause = e.__cause__
    if spec.kind == "model" and cause is not None:
        what = str(cause) if isinstance(cause, FileNotFoundError) else f"{cause.__class__.__name__}: {cause}"
        return f"cannot load {spec.model}: {what}"
    return " ".join(e.reason.split())


def check_player(spec: PlayerSpec, config: Dict[str, Any]) -> None:
    """Create ``spec`` as a game of ``config`` (``tournament.json``) would, start its game, and close it again
    (see the module docstring); raises :class:`PlayerCheckError`."""
    c = config
    player = make_player(spec, c.get("visits"), c["tolerance_ms"], c["startup_timeout_ms"], c["move_timeout_ms"])
    try:
        player.new_game(game_config(c), player_tc(c, spec), 0)
    except PlayerError as e:
        raise PlayerCheckError(spec, _reason(spec, e)) from None
    finally:
        player.end_game()
        player.close()
    log.info("player %s: checked", spec.name)


def check_players(config: Dict[str, Any]) -> None:
    """:func:`check_player` for every player of ``config``, in order; the first failure raises
    :class:`PlayerCheckError`. With no logging handler configured (the command line, before its run log exists)
    the engine client's own warning about the failure is not printed: the error says it once."""
    quiet = logging.NullHandler()
    top = logging.getLogger("gomoku")
    if not top.hasHandlers():   # else Python's last-resort handler would print each warning to stderr
        top.addHandler(quiet)
    try:
        for spec in player_specs(config):
            check_player(spec, config)
    finally:
        top.removeHandler(quiet)
