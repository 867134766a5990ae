"""The root's defence checks with and without shared move-ordering hints (``vct.Hints``), at fixed node
limits: attacker nodes, CPU time and the answers. Prints one JSON object.

    .venv/bin/python benchmarks/bench_defence_checks.py [--set FILE] [--candidates 40] [--limit N]

For every position of the set (default: ``benchmarks/data/blunder_positions.txt``) where the opponent
has a VCT as if the side to move passed (depth 3, 6,000 attacker nodes): its defence candidates
(:func:`gomoku_ai.vct.defence_candidates`, the first ``--candidates``) are each checked as the player
checks them at its first level -- the opponent's VCT after the move, depth 3, 3,000 attacker nodes,
2,000 per inner VCF -- once with every search on its own and once sharing one ``Hints`` across the
position's candidates. ``answers``: each check's outcome, ``r`` refuted (a VCT found), ``v`` held
(none within the limits), ``a`` cut by the node limit; ``changed`` counts the checks whose outcome
differs, ``changed_finished`` those where both runs finished (a hint only reorders moves, so this
should be 0). ``cpu_s`` is process CPU time (``time.process_time``).
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gomoku_ai import movegen, vct  # noqa: E402
from gomoku_ai.vct import read_positions  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", default=str(ROOT / "benchmarks" / "data" / "blunder_positions.txt"))
    ap.add_argument("--candidates", type=int, default=40, help="candidates checked per position")
    ap.add_argument("--limit", type=int, default=0, help="only the first N positions")
    a = ap.parse_args()
    positions = read_positions(a.set)
    if a.limit:
        positions = positions[:a.limit]
    totals = {False: {"nodes": 0, "vcf_nodes": 0, "cpu_s": 0.0}, True: {"nodes": 0, "vcf_nodes": 0, "cpu_s": 0.0}}
    answers = {}
    changed = changed_finished = checks = 0
    for p in positions:
        b = p.board()
        b.pass_turn()
        threat = vct.vct_search(b, max_depth=3, node_limit=6000, vcf_nodes=2000)
        b.pass_turn()
        if threat.line is None:
            continue
        cands = movegen.without_forbidden(b, vct.defence_candidates(b, threat.line))[:a.candidates]
        out = {}
        for shared in (False, True):
            hints = vct.Hints() if shared else None
            marks = []
            t0 = time.process_time()
            for m in cands:
                b.push(m)
                try:
                    res = vct.vct_search(b, 3, 3000, None, 2000, hints=hints)
                finally:
                    b.pop()
                marks.append("r" if res.line else "a" if res.aborted else "v")
                totals[shared]["nodes"] += res.nodes
                totals[shared]["vcf_nodes"] += res.vcf_nodes
            totals[shared]["cpu_s"] += time.process_time() - t0
            out[shared] = "".join(marks)
        checks += len(cands)
        for x, y in zip(out[False], out[True]):
            changed += x != y
            changed_finished += x != y and "a" not in (x, y)
        answers[p.name] = {"without": out[False], "with": out[True]}
    for t in totals.values():
        t["cpu_s"] = round(t["cpu_s"], 2)
    w, s = totals[False], totals[True]
    print(json.dumps({
        "set": a.set, "positions_with_threat": len(answers), "checks": checks,
        "without_hints": w, "with_hints": s,
        "nodes_ratio": round(s["nodes"] / max(1, w["nodes"]), 3),
        "cpu_ratio": round(s["cpu_s"] / max(1e-9, w["cpu_s"]), 3),
        "changed": changed, "changed_finished": changed_finished,
        "answers": answers, "python": platform.python_version()}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
