"""``gomoku tournament``: matches, round robins and gauntlets between in-process players and external engines.

Usage (players first, then options; ``python -m tools.tournament`` works the same)::

    gomoku tournament heuristic:200 pure:400 --games 20 --out runs/t/hp
    gomoku tournament tactics:1000 pure:400 heuristic:800 --format roundrobin --games 10 -j 2 --out runs/t/rr
    gomoku tournament heuristic:200 random --sprt --elo0 0 --elo1 200 --games 200 --out runs/t/sprt
    gomoku tournament cmd="python engine.py" name=ours heuristic:800 --tc 60/5+0.5 \\
        --openings /work/shared/data/openings/piskvork_openings.txt --transform --out runs/t/ext
    gomoku tournament heuristic:200 pure:400 --games 40 --out runs/t/hp --resume    # continue / extend a run
    gomoku tournament model:models/m1.json:800 heuristic:800 --games 200 -j 64 --backend ray --address auto \
        --out runs/t/cluster                                    # games as Ray tasks on a running cluster

Player specs are documented in :mod:`gomoku_ai.players` (in-process) and :mod:`tools.tournament.players`
(options, external engines); the options become the run's configuration in :mod:`tools.tournament.config`; the
run itself (output folder, resume, workers, display) is described in :mod:`tools.tournament.runner`.
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from typing import Any, List, Optional

from gomoku_ai.workers import BACKENDS
from gomoku_ai.workers.base import THREAD_VARS

from .config import TournamentError, build_config
from .players import SpecError
from .runner import Runner
from .schedule import FORMATS

# the command, and the configuration and runner it builds (tests build them the same way)
__all__ = ["add_parser", "configure_parser", "run", "main", "build_config", "Runner"]


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``tournament`` on a subparsers object."""
    p = sub.add_parser("tournament", help="play a match / round robin / gauntlet with Elo, SPRT and resume",
                       description="Matches, round robins and gauntlets between in-process players and "
                                   "external engines, with Elo ratings, SPRT and resume.",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog="Players: pure[:N] tactics[:N] heuristic[:N] model:PATH[:N] random "
                              "cmd=COMMAND, each followed by key=value options (name=, tc=, visits=, "
                              "nodes=, threads=, option.KEY=, dir=, restart=, board=). N is visits, or a "
                              "time such as 500ms / 2s. Examples: heuristic:800 model:models/m1.json:400 "
                              "cmd=\"python engine.py\" name=ours tc=0/1.")
    configure_parser(p)
    return p


def configure_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("players", nargs="+", metavar="PLAYER",
                   help="player specs, each followed by its key=value options")
    p.add_argument("--out", required=True, help="output folder (new or empty, or an earlier run's with --resume)")
    p.add_argument("--resume", action="store_true",
                   help="continue the tournament in --out (same arguments; finished games are kept)")
    p.add_argument("--format", default="auto", choices=("auto",) + FORMATS,
                   help="auto: match for two players, roundrobin for more (default: %(default)s)")
    p.add_argument("--games", type=int, default=None,
                   help="games per pairing, rounded up to pairs (default 10; with --sprt the cap, default 1000)")
    p.add_argument("--openings", default="random:3",
                   help="opening file (offset or pos lines), random:N (N random stones per pair) or none "
                        "(default: %(default)s)")
    p.add_argument("--openings-order", default="sequential", choices=("sequential", "random"),
                   help="the opening file's lines in file order or shuffled by --seed (default: %(default)s)")
    p.add_argument("--transform", action="store_true",
                   help="use the 8 board symmetries, one per pass through the opening file")
    p.add_argument("--rule", default="freestyle",
                   help="freestyle, standard, renju or caro (default: %(default)s)")
    p.add_argument("--size", type=int, default=15,
                   help="board size, 15 or 20 in Gomocup (default: %(default)s)")
    p.add_argument("--tc", default=None,
                   help="time control MATCH/TURN+INC in seconds, e.g. 60/5+0.5, 0/1 (1 s per move), 120+1")
    p.add_argument("--visits", type=int, default=None,
                   help="visits for in-process players without their own (and INFO max_node for engines "
                        "without nodes=) when there is no time control")
    p.add_argument("--draw-after", type=int, default=None, help="adjudicate a draw after this many plies")
    p.add_argument("--tolerance", type=float, default=1000.0,
                   help="ms added to every move budget before an engine is killed (default: %(default)s)")
    p.add_argument("--move-timeout", type=float, default=300.0,
                   help="seconds a move may take when no time control limits it (default: %(default)s)")
    p.add_argument("--startup-timeout", type=float, default=10.0,
                   help="seconds for an engine to answer ABOUT and each START (default: %(default)s)")
    p.add_argument("-j", "--concurrency", type=int, default=None,
                   help="games at a time, i.e. workers (default: CPUs / 2, one core per engine)")
    p.add_argument("--backend", default="local", choices=BACKENDS,
                   help="where workers run: local processes or Ray actors (pip install '.[distributed]'; "
                        "default: %(default)s)")
    p.add_argument("--address", default=None,
                   help="with --backend ray: HOST:PORT of the cluster's head, or auto for the cluster running "
                        "here (default: a private Ray instance on this machine)")
    p.add_argument("--seed", type=int, default=None, help="schedule seed (default: random, recorded)")
    p.add_argument("--sprt", action="store_true", help="two-player SPRT: stop when decided")
    p.add_argument("--elo0", type=float, default=0.0,
                   help="SPRT H0: the first player is this many Elo stronger (default: %(default)s)")
    p.add_argument("--elo1", type=float, default=10.0,
                   help="SPRT H1: the first player is this many Elo stronger (default: %(default)s)")
    p.add_argument("--alpha", type=float, default=0.05,
                   help="SPRT false-positive rate (default: %(default)s)")
    p.add_argument("--beta", type=float, default=0.05,
                   help="SPRT false-negative rate (default: %(default)s)")
    p.add_argument("--sprt-model", default="logistic", choices=("logistic", "normalized"),
                   help="hypotheses in logistic or normalized Elo; pentanomial GSPRT (default: %(default)s)")
    p.add_argument("--records", default="sgf",
                   help="game records: sgf, psq, sgf,psq or none (default: %(default)s)")
    p.add_argument("--prior", type=float, default=2.0,
                   help="virtual draws per player in the rating fit (0: pure maximum likelihood; "
                        "default: %(default)s)")
    p.add_argument("--anchor", default=None, help="NAME or NAME=ELO: anchor the ratings (default: pool mean 0)")
    p.add_argument("--report-every", type=int, default=0,
                   help="print the standings every N games (default: %(default)s, every pair for a match, "
                        "else 20)")
    p.add_argument("--quiet", action="store_true", help="no per-game lines")
    p.add_argument("--no-live", action="store_true",
                   help="plain lines even on a terminal (no live table / progress bar)")


def _stdout_is_tty() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def run(args: argparse.Namespace) -> int:
    """Run the tournament described by parsed arguments (``gomoku tournament``)."""
    try:
        config = build_config(args)
        live = True if (not getattr(args, "no_live", False) and _stdout_is_tty()) else None
        runner = Runner(config, args.out, resume=getattr(args, "resume", False), live=live)
        runner.prepare()
    except (TournamentError, SpecError, ValueError) as e:
        sys.stderr.write(f"gomoku tournament: {e}\n")
        return 2
    old = None
    if threading.current_thread() is threading.main_thread():
        def _term(signum: int, frame: Any) -> None:
            raise KeyboardInterrupt
        old = signal.signal(signal.SIGTERM, _term)
    try:
        return runner.run()
    finally:
        if old is not None:
            signal.signal(signal.SIGTERM, old)


def main(argv: Optional[List[str]] = None) -> int:
    """``python -m tools.tournament ARGS``: the same as ``gomoku tournament ARGS`` (one BLAS thread per process
    unless the environment says otherwise)."""
    for var in THREAD_VARS:
        os.environ.setdefault(var, "1")
    p = argparse.ArgumentParser(prog="gomoku tournament",
                                description="Matches, round robins and gauntlets between in-process players "
                                            "and external engines, with Elo ratings, SPRT and resume.")
    configure_parser(p)
    return run(p.parse_args(argv))

