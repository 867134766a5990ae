"""Session 43: how often a strong player's move against a threat lies outside the root's defence
candidates. Over the positions of Rapfi's games against itself (a teacher run's results) where the
opponent has a VCT as if the side to move passed (the player's threat check: depth 3, 6,000
attacker nodes), whether Rapfi's move is among :func:`gomoku_ai.vct.defence_candidates`, and, where
it is not, whether the opponent still has a VCT after it (depth 3, 6,000: if not, a defence the
root's restriction leaves out). Prints one JSON summary.

    .venv/bin/python benchmarks/results/s43/defence_cover.py runs/teach15e/match 300
"""
import json
import os
import sys
from pathlib import Path

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
from results_io import read_results       # noqa: E402
from gomoku_ai import vct                 # noqa: E402
from gomoku_ai.board import Board         # noqa: E402
from gomoku_ai.shipped import load_evaluator   # noqa: E402

DEPTH, NODES = 3, 6000


def main(run: str, limit: int) -> None:
    n = threatened = inside = outside_safe = outside_lost = outside_open = 0
    examples = []
    ranks = []           # the prior rank (1 = the network's first choice) of each outside, safe move
    ev = load_evaluator(width=15)
    for r in read_results(Path(run)):
        if n >= limit:
            break
        n += 1
        size = r.get("size") or 15
        b = Board(size)
        for ply, (x, y) in enumerate(r["moves"]):
            m = b.index(x, y)
            if ply >= 6 and b.winner is None:
                b.pass_turn()
                try:
                    threat = vct.vct_search(b, max_depth=DEPTH, node_limit=NODES)
                finally:
                    b.pass_turn()
                if threat.line:
                    threatened += 1
                    if m in vct.defence_candidates(b, threat.line):
                        inside += 1
                    else:
                        b.push(m)
                        after = vct.vct_search(b, max_depth=DEPTH, node_limit=NODES)
                        b.pop()
                        if after.line:
                            outside_lost += 1
                        elif after.aborted:
                            outside_open += 1
                        else:
                            outside_safe += 1
                            lg, _v = ev.evaluate([ev.prepare(b)], (b.height, b.width))
                            ranks.append(int((lg[0] > lg[0][m]).sum()) + 1)
                            if len(examples) < 10:
                                examples.append([r["game"], ply, b.move_name(m)])
            b.push(m)
    print(json.dumps({"games": n, "threatened_positions": threatened, "rapfi_move_in_candidates": inside,
                      "outside_and_safe": outside_safe, "outside_and_refuted": outside_lost,
                      "outside_check_cut_short": outside_open, "examples_outside_safe": examples,
                      "prior_rank_of_outside_safe": sorted(ranks)}))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 300)
