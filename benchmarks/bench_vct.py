"""VCT attack and defence on the labelled position set. Prints one JSON object.

    .venv/bin/python benchmarks/bench_vct.py [--set benchmarks/data/vct_positions.txt] [--ms 400]

For every ``win`` position: :func:`gomoku_ai.vct.vct_search` with a deadline of ``--ms``
milliseconds (the player's root budget at 1 s per move is about 120 ms of attack); solved when it
returns a line whose first move is in the position's answer. For every ``defend`` position:
:func:`gomoku_ai.vct.vct_defences` with ``--ms``; solved when every defence of the answer is among
the moves it keeps (the search is then restricted to a set that holds the real defences);
``recall`` is the share of the answers' moves kept over the set, ``extra_kept`` the kept moves
after which the oracle still mates (our VCT does not see those mates).
Also the player itself (``Player.think`` at ``--player-ms``, heuristic evaluator so that no
network is needed): how many positions its move is in the answer (``player_right``), and the names of
the others (``player_wrong``). ``vcf_prover`` says whether the C core ran (``PYGOMOKU_NATIVE=0``: Python), ``vct_search`` whether the
VCT search itself ran in C (``PYGOMOKU_VCT_NATIVE=0``: Python, with the C VCF inside).
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gomoku_ai import native  # noqa: E402
from gomoku_ai import vct as V  # noqa: E402
from gomoku_ai.vct import read_positions, vct_defences, vct_search  # noqa: E402
from gomoku_ai.player import Limit, Player  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", default=str(ROOT / "benchmarks" / "data" / "vct_positions.txt"))
    ap.add_argument("--ms", type=float, default=400.0, help="deadline per solver call (ms)")
    ap.add_argument("--player-ms", type=float, default=1000.0, help="player time per move (ms)")
    ap.add_argument("--no-player", action="store_true")
    a = ap.parse_args()
    positions = read_positions(a.set)
    out = {"set": a.set, "positions": len(positions), "ms": a.ms,
           "python": platform.python_version(), "vcf_prover": native.status(),
           "vct_search": "c" if V.NATIVE_VCT and native.available() else "python", "win": {}, "defend": {}}
    for kind in ("win", "defend"):
        items = [p for p in positions if p.kind == kind]
        times, solved, covered, player_ok = [], 0, 0, 0
        extra = oracle = 0
        failed, player_wrong = [], []
        for p in items:
            b = p.board()
            t0 = time.perf_counter()
            if kind == "win":
                res = vct_search(b, max_depth=6, node_limit=100000,
                                 deadline=t0 + a.ms / 1000.0)
                ok = bool(res.line and res.line[0] in p.answer)
            else:
                defs, _ = vct_defences(b, node_limit=2000, deadline=t0 + a.ms / 1000.0)
                kept = p.answer & set(defs or [])
                ok = bool(defs) and kept == p.answer        # every real defence kept
                covered += len(kept)
                extra += len(set(defs or []) - p.answer)
                oracle += len(p.answer)
            times.append((time.perf_counter() - t0) * 1000.0)
            solved += ok
            if not ok:
                failed.append(p.name)
            if not a.no_player:
                from gomoku_ai.evaluator import HeuristicEvaluator
                info = Player(HeuristicEvaluator()).think(p.board(), Limit(soft_ms=a.player_ms,
                                                                          hard_ms=2 * a.player_ms))
                player_ok += info.move in p.answer
                if info.move not in p.answer:
                    player_wrong.append(p.name)
        rec = {"count": len(items), "solved": solved,
               "solve_rate": round(solved / len(items), 3) if items else None,
               "ms_mean": round(statistics.mean(times), 1) if times else None,
               "ms_median": round(statistics.median(times), 1) if times else None,
               "ms_max": round(max(times), 1) if times else None, "unsolved": failed}
        if kind == "defend":
            rec["oracle_defences"] = oracle
            rec["oracle_defences_kept"] = covered      # the search may restrict to the kept set
            rec["recall"] = round(covered / oracle, 3) if oracle else None
            rec["extra_kept"] = extra                  # kept, but the oracle finds a mate after
        if not a.no_player:
            rec["player_right"] = player_ok
            rec["player_wrong"] = player_wrong
        out[kind] = rec
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
