"""Session 46: do the decisive mistakes of our lost 15x15 games go away with more time?

For each lost game in ``gomoku train annotate`` output, the first of our positions after which Rapfi's
evaluation (our side) fell by more than ``--drop`` (as ``dagger_study.py``): the player (shipped
15x15 network, one thread) thinks ``--times`` ms on it, and Rapfi at ``--nodes`` rates each answer (its
evaluation of the position after it, turned to our side). A move loses more than ``--drop`` against
Rapfi's own evaluation of the position: still a mistake. Prints JSON per time.

    taskset -c 1 .venv/bin/python benchmarks/results/s46/time_cure.py runs/s46/ann15/annotations.jsonl \
        --times 1000 4000 16000
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Dict, List, Optional, Tuple

sys.path.insert(0, os.path.dirname(__file__))
from dagger_study import annotated_games, first_drop, teacher_eval  # noqa: E402

from gomoku_ai.board import Board  # noqa: E402
from gomoku_ai.player import Limit  # noqa: E402
from gomoku_ai.rules import Rule  # noqa: E402
from gomoku_ai.shipped import make_player  # noqa: E402
from gomoku_ai.match import TimeControl  # noqa: E402
from tools.train.annotate import Teacher  # noqa: E402


def first_drops(path: str, player: str, drop: float) -> List[Tuple[List[List[int]], List[int], float]]:
    """(moves before, Rapfi's move, Rapfi's evaluation there) at each lost game's first drop."""
    out = []
    for row, g, _, points in annotated_games(path, player):
        i = first_drop(row, drop) if points == 0.0 else None
        if i is not None:
            ev = teacher_eval(row["evals"][i])
            assert ev is not None   # a drop needs an evaluation on both sides
            out.append(([list(m) for m in g.moves[:row["plies"][i]]], row["moves"][i], ev))
    return out


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("annotations")
    ap.add_argument("--times", type=int, nargs="+", default=[1000, 4000])
    ap.add_argument("--drop", type=float, default=300.0)
    ap.add_argument("--nodes", type=int, default=200000)
    ap.add_argument("--limit", type=int, default=None, help="only the first N positions")
    ap.add_argument("--rapfi", default=os.path.expanduser("~/sparring/rapfi/build/pbrain-rapfi"))
    args = ap.parse_args(argv)
    pos = first_drops(args.annotations, "ours", args.drop)[:args.limit]
    rapfi = Teacher([args.rapfi], args.nodes, TimeControl(), Rule.FREESTYLE)
    res: Dict[str, Any] = {"positions": len(pos)}
    for ms in args.times:
        p = make_player(rule=Rule.FREESTYLE, width=15)
        same = still = 0
        detail = []   # per position: our move was Rapfi's, our move still a mistake
        for before, best, best_ev in pos:
            b = Board(15, 15)
            for x, y in before:
                b.push(b.index(x, y))
            p.new_game()
            info = p.think(b, Limit(soft_ms=ms * 0.92, hard_ms=ms * 0.92))
            mv = list(b.xy(info.move))
            same += mv == list(best)
            after = teacher_eval(rapfi.ask(15, 15, [(int(m[0]), int(m[1])) for m in list(before) + [mv]])[1])
            bad = after is not None and best_ev - (-after) > args.drop
            still += bad
            detail.append([int(mv == list(best)), int(bad)])
        res[str(ms)] = {"rapfi_move": same, "still_a_mistake": still, "per_position": detail}
        print(json.dumps({ms: {"rapfi_move": same, "still_a_mistake": still}}), flush=True)
    rapfi.close()
    json.dump(res, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
