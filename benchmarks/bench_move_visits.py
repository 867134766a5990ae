"""Visits per move of the whole player (root tactics included) at a fixed time per move, on positions cut
from a finished tournament's games, with the search on one core and with the network in a worker process
(``INFO thread_num 2``). Prints one JSON object.

    .venv/bin/python benchmarks/bench_move_visits.py runs/t/threads-ab [--games 8] [--plies 10,20,30]
        [--ms 920] [--batches 12,6] [--rounds 2]

Each position is searched from a fresh tree for ``--ms`` (the soft budget of a 1 s move). A
position that the root tactics settle (a proven win or a forced reply) has 0 visits in every arm and is
counted as such. Needs two idle cores to mean anything.
"""
from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gomoku_ai.board import Board  # noqa: E402
from gomoku_ai.player import Limit  # noqa: E402
from gomoku_ai.shipped import load_player  # noqa: E402

_MOVE = re.compile(r";[BW]\[([a-z])([a-z])\]")


def positions(folder: Path, games: int, plies: list) -> list:
    out = []
    for sgf in sorted((folder / "games").glob("*.sgf"))[:games]:
        text = sgf.read_text()
        sz = re.search(r"SZ\[(\d+)\]", text)
        assert sz is not None, sgf
        size = int(sz.group(1))
        moves = [(ord(x) - 97, ord(y) - 97) for x, y in _MOVE.findall(text)]
        out += [(size, moves[:k]) for k in plies if len(moves) > k + 2]
    return out


def visits(pos: list, ms: float, thread_num: int, batch: int = 0) -> list:
    p = load_player()
    if batch:
        p.config.offload_batch = batch
    p.thread_num = thread_num
    if thread_num > 1:
        if p.worker is None or not p.worker.wait_ready(30.0):
            # no worker only with a refusal (the thread_num setter starts one otherwise)
            reason = p.worker.reason if p.worker is not None else None
            raise SystemExit(f"no evaluation worker: {p.worker_refusal() or reason}")
    out = []
    try:
        for size, moves in pos:
            b = Board(size)
            for x, y in moves:
                b.play(y * size + x)
            p.new_game()
            out.append(p.think(b, Limit(soft_ms=ms, hard_ms=ms + 80)).visits)
    finally:
        p.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tournament", type=Path, help="a finished tournament's folder (its games/*.sgf)")
    ap.add_argument("--games", type=int, default=8)
    ap.add_argument("--plies", default="10,20,30")
    ap.add_argument("--ms", type=float, default=920.0)
    ap.add_argument("--batches", default="12,6", help="worker batch sizes (MCTSConfig.offload_batch)")
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    pos = positions(a.tournament, a.games, [int(k) for k in a.plies.split(",")])
    arms = [("one_core", 1, 0)] + [(f"worker_batch{b}", 2, int(b)) for b in a.batches.split(",")]
    res: dict = {name: [] for name, _t, _b in arms}
    for _ in range(a.rounds):
        for name, tn, b in arms:
            res[name].append(statistics.mean(visits(pos, a.ms, tn, b)))
    print(json.dumps({"tournament": str(a.tournament), "positions": len(pos), "ms": a.ms,
                      "mean_visits_per_move": {k: [round(v) for v in vs] for k, vs in res.items()}},
                     indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
