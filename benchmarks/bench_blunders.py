"""The player on the blunder set: positions from its own lost games where one move let a strong
engine announce a mate (``benchmarks/data/blunder_positions.txt``, built by ``build_blunder_set.py``).
Prints one JSON object.

    .venv/bin/python benchmarks/bench_blunders.py [--ms 920] [--model NAME] [--heuristic]
    .venv/bin/python benchmarks/bench_blunders.py --set benchmarks/data/blunder_positions_20.txt

``blunder_positions.txt`` is 15x15 (60 positions, sessions 9-16's games); ``blunder_positions_20.txt``
is 20x20 (60 positions from sessions 32-34's games against AIWine and Rapfi 100k, Rapfi at 300,000
nodes as the oracle; its answers are only as deep as that oracle: one checked with 3 million nodes
was lost whatever was played).

Each position is searched from scratch by the engine's player (the network ``engine.py`` plays on the
set's board, e.g. the 20x20 default for ``blunder_positions_20.txt``, unless ``--model`` or
``--heuristic``; before session 36 every set got the 15x15 default) with ``--ms`` as its soft and
hard limit (920 ms is what ``engine.py`` searches at ``timeout_turn 1000``). ``held``: the move is in the position's answer (the moves after which the
oracle found no mate); ``repeated``: it is the move that lost the game. The A/B switch of the root
defence is the environment's (``PYGOMOKU_VCT_FILTER=0`` for the older root), so that the same command
measures both. ``by_source`` counts which part of the player chose the moves that held.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gomoku_ai import shipped  # noqa: E402
from gomoku_ai.evaluator import HeuristicEvaluator  # noqa: E402
from gomoku_ai.player import Limit, Player  # noqa: E402
from gomoku_ai.vct import read_positions  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", default=str(ROOT / "benchmarks" / "data" / "blunder_positions.txt"))
    ap.add_argument("--ms", type=float, default=920.0, help="time per move (ms)")
    ap.add_argument("--model", default=None, help="a shipped model name or a file (default: shipped)")
    ap.add_argument("--heuristic", action="store_true", help="the heuristic evaluator, no network")
    ap.add_argument("--limit", type=int, default=0, help="only the first N positions")
    a = ap.parse_args()
    path = Path(a.set)
    positions = read_positions(path)
    if a.limit:
        positions = positions[:a.limit]
    if not positions:
        ap.error(f"{path}: no positions")
    boards = {(b.width, b.height, b.rule) for b in (p.board() for p in positions)}
    if len(boards) != 1:
        ap.error(f"{path}: positions of more than one board size or rule: {sorted(map(str, boards))}")
    width, height, rule = boards.pop()
    # the network the engine plays on this board (the 20x20 set gets the 20x20 default)
    player = (Player(HeuristicEvaluator()) if a.heuristic
              else shipped.load_player(a.model, rule, width=width, height=height))
    held = repeated = 0
    times = []
    sources: Counter = Counter()
    failed = []
    for p in positions:
        b = p.board()
        player.new_game()
        t0 = time.perf_counter()
        info = player.think(b, Limit(soft_ms=a.ms, hard_ms=a.ms))
        times.append((time.perf_counter() - t0) * 1000.0)
        if info.move in p.answer:
            held += 1
            sources[str(info.source)] += 1
        else:
            failed.append(p.name)
        repeated += info.move in p.loses
    n = len(positions)
    out = {"set": str(path), "positions": n, "board": f"{width}x{height}", "rule": rule.value, "ms": a.ms,
           "evaluator": "heuristic" if a.heuristic else Path(str(getattr(
               getattr(player.evaluator, "network", None), "basename", "?"))).name,
           "vct_filter": os.environ.get("PYGOMOKU_VCT_FILTER", "1") != "0",
           "held": held, "held_rate": round(held / n, 3) if n else None,
           "repeated": repeated, "by_source": dict(sources),
           "ms_mean": round(statistics.mean(times), 1) if times else None,
           "ms_max": round(max(times), 1) if times else None,
           "not_held": failed, "python": platform.python_version()}
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
