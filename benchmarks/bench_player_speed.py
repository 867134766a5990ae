"""Simulations a second of the whole player (the shipped network for the board, as the engine plays
it) on positions of a tournament's games: every 8th ply from ply 8 of its first 6 games, a fixed time
a move (0.9 s by default, what the engine spends at ``timeout_turn`` 1000), one fresh player per arm.
Prints one JSON line per arm and round: simulations/s inside the tree searches, simulations a move
and the tree search's seconds a move (the rest of the move's time went to the root's tactics).

    taskset -c 0 .venv/bin/python benchmarks/bench_player_speed.py \\
        benchmarks/results/s31/aiwine-15-sym-1310-results.jsonl.xz 15 --rounds 3

``--repo DIR`` runs the code of another checkout (the script may come from this one): run two
checkouts alternately on one core to compare them. ``--toggle NAME`` alternates the module global
``gomoku_ai.mcts.NAME`` between its value and None in one process (``_TREE_OPS``, ``_NODE_OPS``: the
C core's part of the search against the Python code it stands for; the trees are the same, only the
time differs). The machine's speed drifts over minutes, so compare arms of one run, not runs.
"""
from __future__ import annotations

import argparse
import json
import lzma
import sys
from pathlib import Path
from typing import Any, List


def main(argv: List[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", help="a tournament's results.jsonl (or .jsonl.xz)")
    ap.add_argument("size", type=int, help="the board size of its games")
    ap.add_argument("--repo", default=str(Path(__file__).resolve().parents[1]),
                    help="the checkout whose code runs (default: %(default)s)")
    ap.add_argument("--toggle", default=None,
                    help="a gomoku_ai.mcts global to alternate with None, e.g. _NODE_OPS (default: none)")
    ap.add_argument("--rounds", type=int, default=1, help="rounds of the arms (default: %(default)s)")
    ap.add_argument("--ms", type=float, default=900.0, help="time a move in ms (default: %(default)s)")
    args = ap.parse_args(argv)
    sys.path.insert(0, args.repo)
    import gomoku_ai.mcts as M
    from gomoku_ai.board import Board
    from gomoku_ai.player import Limit
    from gomoku_ai.rules import Rule
    from gomoku_ai.shipped import load_player

    opener: Any = lzma.open if args.results.endswith(".xz") else open
    with opener(args.results, "rt") as f:
        games = [json.loads(line) for line in f]
    positions = [g["moves"][:k] for g in games[:6] for k in range(8, len(g["moves"]) - 2, 8)]
    value = getattr(M, args.toggle) if args.toggle else None
    if args.toggle and value is None:
        sys.exit(f"gomoku_ai.mcts.{args.toggle} is None here (the C core not built, or off)")
    arms = (False, True) if args.toggle else (True,)
    for _ in range(args.rounds):
        for on in arms:
            if args.toggle:
                setattr(M, args.toggle, value if on else None)
            player = load_player(None, Rule.FREESTYLE, width=args.size, height=args.size)
            totals = [0, 0.0]                 # simulations, seconds in the searches
            search = player.mcts.search

            def counted(*a: Any, _search: Any = search, _totals: List[Any] = totals, **k: Any) -> Any:
                st = _search(*a, **k)
                _totals[0] += st.simulations
                _totals[1] += st.elapsed_s
                return st

            player.mcts.search = counted      # type: ignore[method-assign]
            for moves in positions:
                b = Board(args.size)
                for x, y in moves:
                    b.play(y * args.size + x)
                player.new_game()
                player.think(b, Limit(soft_ms=args.ms, hard_ms=args.ms))
            sims, secs = totals
            print(json.dumps({"repo": args.repo, "toggle": args.toggle, "on": on, "board": args.size,
                              "positions": len(positions), "simulations_per_s": round(sims / secs)
                              if secs else None,
                              "simulations_per_move": round(sims / len(positions)),
                              "search_s_per_move": round(secs / len(positions), 4)}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
