"""The search's evaluation cache (``MCTSConfig.eval_cache``) on real games: our side of a finished
tournament's games is replayed move by move, as in the match (one tree per game, reused from move to
move), searching each of our positions for a fixed number of visits with the cache on and off.
Prints one JSON object: evaluations, cache hits and simulations per second of each arm.

    .venv/bin/python benchmarks/bench_eval_cache.py runs/s27/r100k-20-ft-t20f --player ours \\
        [--games 4] [--visits 1000] [--model models/freestyle20-5x48-ft.json] [--sizes 4096,0]

The whole player runs (root tactics included) with a visit limit, so the two arms search the same
positions; the root tactics' own time is in the rate but not in the evaluation counts. Run it on an
idle core: the rates mean nothing beside other work.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gomoku_ai.board import Board  # noqa: E402
from gomoku_ai.mcts import MCTSConfig, SearchStats  # noqa: E402
from gomoku_ai.player import Limit, Player  # noqa: E402
from gomoku_ai.records import GameRecord, load_games  # noqa: E402
from gomoku_ai.shipped import load_evaluator  # noqa: E402


def our_colour(rec: GameRecord, player: str) -> int:
    """0 when ``player`` had Black in ``rec``, 1 when White; ValueError when it played neither."""
    if rec.black == player:
        return 0
    if rec.white == player:
        return 1
    raise ValueError(f"{rec.source}: {player!r} played neither colour ({rec.black} / {rec.white})")


def replay(games: List[GameRecord], player: str, model: str, visits: int, cache: int,
           opening_plies: int) -> Dict[str, Any]:
    """Replay ``games``, searching every position ``player`` was to move in after the first
    ``opening_plies`` plies, with a cache of ``cache`` entries; the MCTS counters summed over
    the searches."""
    ev = load_evaluator(model, width=games[0].width, height=games[0].height)
    p = Player(ev, config=MCTSConfig(eval_cache=cache), seed=0)
    total = SearchStats()
    search = p.mcts.search

    def counted(*a: Any, **k: Any) -> SearchStats:
        st = search(*a, **k)
        for name in ("simulations", "evaluations", "cache_hits", "elapsed_s", "eval_s"):
            setattr(total, name, getattr(total, name) + getattr(st, name))
        return st
    p.mcts.search = counted       # type: ignore[method-assign]
    moves = 0
    t = time.perf_counter()
    for rec in games:
        side = our_colour(rec, player)
        b = Board(rec.width, rec.height, rule=rec.rule)
        p.new_game()
        for ply, (x, y) in enumerate(rec.moves):
            if ply >= opening_plies and ply % 2 == side and b.winner is None:
                p.think(b.copy(), Limit(visits=visits))
                moves += 1
            b.play(b.index(x, y))
    return {"cache": cache, "moves": moves, "seconds": round(time.perf_counter() - t, 2),
            "simulations": total.simulations, "evaluations": total.evaluations,
            "cache_hits": total.cache_hits,
            "hit_share": round(total.cache_hits / max(1, total.simulations), 4),
            "simulations_per_s_in_search": round(total.simulations / max(total.elapsed_s, 1e-9), 1),
            "seconds_in_evaluator": round(total.eval_s, 2)}


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folder", type=Path, help="a tournament folder (its games/ SGF files)")
    ap.add_argument("--player", required=True, help="whose positions to search (a player name)")
    ap.add_argument("--games", type=int, default=4, help="games to replay (default: %(default)s)")
    ap.add_argument("--visits", type=int, default=1000,
                    help="visits per search, reused ones included (default: %(default)s)")
    ap.add_argument("--model", default="models/freestyle20-5x48-ft.json",
                    help="the network (default: %(default)s)")
    ap.add_argument("--sizes", default="4096,0", help="cache sizes to compare (default: %(default)s)")
    ap.add_argument("--opening-plies", type=int, default=3,
                    help="plies of the opening not searched (default: %(default)s)")
    args = ap.parse_args(argv)
    games = list(load_games(args.folder / "games"))[:args.games]
    arms = [replay(games, args.player, args.model, args.visits, int(c), args.opening_plies)
            for c in args.sizes.split(",")]
    print(json.dumps({"folder": str(args.folder), "games": len(games), "visits": args.visits,
                      "model": args.model, "arms": arms}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
