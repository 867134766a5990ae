"""The search's evaluation cache (``MCTSConfig.eval_cache``) on real games: our side of a finished
tournament's games is replayed move by move, as in the match (one tree per game, reused from move to
move), searching each of our positions for a fixed number of visits with the cache on and off.
Prints one JSON object: evaluations, cache hits and simulations per second of each arm.

    .venv/bin/python benchmarks/bench_eval_cache.py runs/s27/r100k-20-ft-t20f --player ours \\
        [--games 4] [--visits 1000] [--model models/freestyle20-5x48-ft.json] [--sizes 4096,0]

The whole player runs (root tactics included) with a visit limit, so the two arms search the same
positions; the root tactics' own time is in the rate but not in the evaluation counts. Run it on an
idle core: the rates mean nothing beside other work. The games are the folder's first ``--games``
rows of ``results.jsonl`` that ``--player`` played, searched after their opening.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gomoku_ai.board import Board  # noqa: E402
from gomoku_ai.mcts import MCTSConfig, SearchStats  # noqa: E402
from gomoku_ai.player import Limit, Player  # noqa: E402
from gomoku_ai.rules import Rule  # noqa: E402
from gomoku_ai.shipped import load_evaluator  # noqa: E402
from tools.tournament.config import read_config  # noqa: E402
from tools.tournament.results import read_rows  # noqa: E402


def replay(games: List[Dict[str, Any]], size: Tuple[int, int], rule: Rule, player: str, model: str,
           visits: int, cache: int) -> Dict[str, Any]:
    """Replay ``games`` (results.jsonl rows of a ``size`` = (width, height) board), searching every
    position ``player`` was to move in after the opening, with a cache of ``cache`` entries; the
    MCTS counters summed over the searches."""
    ev = load_evaluator(model, rule, width=size[0], height=size[1])
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
    for row in games:
        side = 0 if row["black"] == player else 1
        b = Board(size[0], size[1], rule=rule)
        p.new_game()
        for ply, (x, y) in enumerate(row["moves"]):
            if ply >= row["opening_plies"] and ply % 2 == side and b.winner is None:
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
    ap.add_argument("folder", type=Path, help="a tournament folder (tournament.json, results.jsonl)")
    ap.add_argument("--player", required=True, help="whose positions to search (a player name)")
    ap.add_argument("--games", type=int, default=4, help="games to replay (default: %(default)s)")
    ap.add_argument("--visits", type=int, default=1000,
                    help="visits per search, reused ones included (default: %(default)s)")
    ap.add_argument("--model", default="models/freestyle20-5x48-ft.json",
                    help="the network (default: %(default)s)")
    ap.add_argument("--sizes", default="4096,0", help="cache sizes to compare (default: %(default)s)")
    args = ap.parse_args(argv)
    conf = read_config(args.folder)
    size, rule = (int(conf["width"]), int(conf["height"])), Rule.parse(str(conf.get("rule", "freestyle")))
    games = [r for r in read_rows(args.folder / "results.jsonl")
             if args.player in (r["black"], r["white"])][:args.games]
    if not games:
        raise SystemExit(f"{args.folder}: no game of {args.player!r}")
    arms = [replay(games, size, rule, args.player, args.model, args.visits, int(c))
            for c in args.sizes.split(",")]
    print(json.dumps({"folder": str(args.folder), "games": len(games), "visits": args.visits,
                      "model": args.model, "arms": arms}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
