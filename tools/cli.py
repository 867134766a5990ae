"""The ``gomoku`` command: one entry point with subcommands, each a thin layer over the library."""
from __future__ import annotations

import argparse
import os
import sys
from typing import List, Optional

from gomoku_ai import version_string


def _single_threaded_blas() -> None:
    # Two engines usually share a machine: one BLAS thread each unless the user says otherwise.
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gomoku", description="Gomoku / Renju engine tools")
    p.add_argument("--version", action="version", version=version_string(),
                   help="print the version (as engine.py --version does) and exit")
    sub = p.add_subparsers(dest="command", required=True)
    from tools.play import move_count_arg, seconds_arg, size_arg, threads_arg, visits_arg

    play = sub.add_parser(
        "play", help="play a game in the terminal against the engine",
        description="Play in the terminal. Squares are a column letter and a row counted from the "
                    "top (h8 = x 7, y 7 in the protocol's 0-based x,y; '7,7' is accepted too). "
                    "Type 'help' in the game for the commands.")
    play.add_argument("--rule", default="freestyle",
                      help="freestyle, standard, renju or caro (default: %(default)s)")
    play.add_argument("--size", default="15", type=size_arg,
                      help="board size, e.g. 15, 20 or 20x15 (default: %(default)s)")
    play.add_argument("--color", default="black", choices=["black", "white", "none", "both"],
                      help="your colour; 'none' watches engine vs engine, 'both' is human vs human "
                           "(default: %(default)s)")
    play.add_argument("--time", type=seconds_arg, default=2.0,
                      help="engine seconds per move (default: %(default)s)")
    play.add_argument("--visits", type=visits_arg, default=None,
                      help="engine visits per move, instead of --time (default: none, --time decides)")
    play.add_argument("--model", default=None,
                      help="a model path (.json or basename), a shipped model's name (see "
                           "--list-models) or 'heuristic' (default: the shipped model for the rule "
                           "and board size)")
    play.add_argument("--threads", type=threads_arg, default=1, metavar="N",
                      help="engine threads; 2 or more evaluates the network in a second process (about "
                           "1.3-1.9x the visits on two idle cores; default: %(default)s)")
    play.add_argument("--list-models", action="store_true", help="list the shipped models and exit")
    play.add_argument("--max-moves", type=move_count_arg, default=None,
                      help="stop after this many moves (default: play to the end)")
    play.add_argument("--load", metavar="FILE", default=None,
                      help="review a game from a .sgf or .psq file (step through, ask for hints)")
    play.add_argument("--no-color", action="store_true",
                      help="plain X/O board without colour (also when NO_COLOR is set)")
    play.add_argument("--export-svg", metavar="FILE", default=None,
                      help="on leaving, save the final board as an SVG image")

    bench = sub.add_parser("bench", help="print speed figures and a search signature as JSON")
    bench.add_argument("--visits", type=int, default=800,
                       help="visits per bench position (default: %(default)s)")
    bench.add_argument("--only", default="",
                       help="comma list of: board,search,network (default: all three)")
    bench.add_argument("--model", default=None,
                       help="the network model to bench in the search (default: the shipped "
                            "freestyle 15x15 one; none: skip)")
    from tools.train import cli as train
    train.add_parser(sub)
    from tools.tournament import cli as tournament
    tournament.add_parser(sub)
    from tools import build_pbrain
    build_pbrain.add_parser(sub)
    from tools.serve import app as serve
    serve.add_parser(sub)
    return p


def main(argv: Optional[List[str]] = None) -> int:
    _single_threaded_blas()
    args = build_parser().parse_args(argv)
    if args.command == "bench":
        from tools import bench
        return bench.run(args)
    if args.command == "train":
        from tools.train import cli as train
        return train.run(args)
    if args.command == "tournament":
        from tools.tournament import cli as tournament
        return tournament.run(args)
    if args.command == "build-pbrain":
        from tools import build_pbrain
        return build_pbrain.run(args)
    if args.command == "play":
        from tools import play
        return play.run(args)
    if args.command == "serve":
        from tools.serve import app as serve
        return serve.run(args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
