"""How deep the VCT search sees: the opponent's VCT after each losing move of a blunder set.

    taskset -c 1 .venv/bin/python benchmarks/bench_vct_blunders.py \\
        [--set benchmarks/data/blunder_positions_20.txt] [--nodes 3000 30000 100000]

Each position of the set (``benchmarks/data/blunder_positions*.txt``) holds the move that lost the
game (``loses``: after it a strong engine announced a mate) and the moves that held (``answer``). For
every node limit (and every ``--ms`` time limit), the C/Python VCT search (:func:`gomoku_ai.vct.vct_search`, depth up to
``native.VCT_MAX_DEPTH``) runs for the opponent after the losing move (``found``: how many of those
mates it sees, which bounds what the player's checks can refute) and after the first held move
(``false_alarms``: wins it claims where the oracle saw none -- a sound search claims them only
beyond the oracle's horizon). Prints one JSON object: per limit the counts, the mean and largest
milliseconds and attacker nodes of the searches after the losing moves.
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gomoku_ai import native  # noqa: E402
from gomoku_ai.vct import read_positions, vct_search  # noqa: E402


def _deadline(ms: Optional[float]) -> Optional[float]:
    return None if ms is None else time.perf_counter() + ms / 1000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", default=str(ROOT / "benchmarks" / "data" / "blunder_positions_20.txt"))
    ap.add_argument("--nodes", type=int, nargs="*", default=[3000, 30000, 100000],
                    help="attacker-node limits of the searches (default: %(default)s)")
    ap.add_argument("--ms", type=float, nargs="+", default=[],
                    help="time limits (ms) to run as well, each with no node limit")
    ap.add_argument("--limit", type=int, default=0, help="only the first N positions")
    args = ap.parse_args()
    positions = [p for p in read_positions(args.set) if p.loses]
    if args.limit:
        positions = positions[:args.limit]
    depth = native.VCT_MAX_DEPTH
    out: Dict[str, object] = {"set": args.set, "positions": len(positions), "max_depth": depth,
                              "python": platform.python_version(),
                              "native": native.available()}
    budgets = [(str(n), n, None) for n in args.nodes] + [(f"{t:g}ms", 10 ** 9, t) for t in args.ms]
    for key, nodes, limit_ms in budgets:
        ms: List[float] = []
        counts: List[int] = []
        found, alarms, names = 0, 0, []
        for p in positions:
            b = p.board()
            b.push(min(p.loses))
            r = vct_search(b, depth, nodes, _deadline(limit_ms))
            b.pop()
            ms.append(r.elapsed_s * 1000)
            counts.append(r.nodes)
            if r.line is not None:
                found += 1
                names.append(p.name)
            b.push(min(p.answer))
            alarms += vct_search(b, depth, nodes, _deadline(limit_ms)).line is not None
            b.pop()
        out[key] = {"found": found, "false_alarms": alarms,
                           "ms_mean": round(statistics.mean(ms), 1), "ms_max": round(max(ms), 1),
                           "nodes_mean": round(statistics.mean(counts)), "found_in": names}
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
