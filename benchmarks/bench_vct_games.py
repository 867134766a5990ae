"""The threat solver's speed on middle-game positions from real games, at fixed node limits (so every run
searches the same trees and the answers can be compared between two versions of the code). Prints one JSON
object.

    .venv/bin/python benchmarks/bench_vct_games.py [--root DIR] [--rounds 1]

For each position of ``benchmarks/data/vct_game_positions.txt``: our VCT (depth 5, 150 attacker nodes),
then as if we passed the opponent's VCT (depth 3, 150 attacker nodes, as the player's threat check) and
its VCF (5,000 nodes). ``cpu_s`` is the process CPU time of all of them (``time.process_time``, less
disturbed by other work than wall time; still, compare runs made side by side); ``answers`` is a digest of
every line and node count, equal between two versions that search the same trees.

``--root DIR`` imports ``gomoku_ai`` from another checkout (e.g. a ``git worktree`` of an older commit), to
time the code before and after a change with the same script and positions.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import List

ROOT = Path(__file__).resolve().parents[1]
POSITIONS = ROOT / "benchmarks" / "data" / "vct_game_positions.txt"


def read(path: Path) -> list:
    """(size, [(x, y), ...]) for each line of ``path`` that is not a comment."""
    out = []
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            size, *moves = line.split()
            out.append((int(size), [tuple(int(v) for v in mv.split(",")) for mv in moves]))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=ROOT, help="the checkout whose gomoku_ai is timed")
    ap.add_argument("--rounds", type=int, default=1)
    a = ap.parse_args()
    sys.path.insert(0, str(a.root.resolve()))
    from gomoku_ai.board import Board
    from gomoku_ai import tactics, vct

    boards = []
    for size, moves in read(POSITIONS):
        b = Board(size)
        for x, y in moves:
            b.play(y * size + x)
        boards.append(b)
    times: List[float] = []
    answers: List[List[object]] = []
    for _ in range(a.rounds):
        answers = []
        t0 = time.process_time()
        for b in boards:
            att = vct.vct_search(b, max_depth=5, node_limit=150, vcf_nodes=2000)
            b.pass_turn()
            try:
                thr = vct.vct_search(b, max_depth=3, node_limit=150, vcf_nodes=2000)
                vcf = tactics.vcf_search(b, node_limit=5000)
            finally:
                b.pass_turn()
            answers.append([att.line, att.nodes, thr.line, thr.nodes, vcf.line, vcf.nodes])
        times.append(time.process_time() - t0)
    digest = hashlib.sha256(json.dumps(answers).encode()).hexdigest()[:16]
    print(json.dumps({"root": str(a.root), "positions": len(boards), "cpu_s": [round(t, 2) for t in times],
                      "vct_wins": sum(1 for r in answers if r[0]),
                      "threats_found": sum(1 for r in answers if r[2]),
                      "answers": digest}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
