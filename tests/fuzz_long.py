"""A long fuzz run of the brain, for a release check (the test suite runs shorter ones).

    .venv/bin/python tests/fuzz_long.py --lines 100000 --seeds 1 2 3 4

Each seed feeds ``--lines`` random and mutated protocol lines (the generator and the oracle of
tests/test_brain_fuzz.py: commands, BOARD/YXBOARD/SWAP2BOARD/YXBLOCK blocks, INFO with odd values,
garbage bytes, commands the brain does not know) plus ``--long`` over-long lines (2 MiB each) to an
in-process brain (seed 2: a player that sometimes raises or returns nonsense) and checks that the brain
returns, that every owed reply came in order and nothing else (stray output), that its board is
consistent and that it still answers START + BEGIN with a legal move. Prints one JSON line per seed and
exits 1 on the first failure.
"""
from __future__ import annotations

import argparse
import io
import json
import logging
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from protocol.brain import Brain  # noqa: E402
from test_brain_fuzz import (FINAL, ChaosPlayer, FastPlayer, _final_ok, check_board_consistent,  # noqa: E402
                             check_replies, gen_lines, oracle, to_bytes)

LONG_LINE = 2 << 20


def run(seed: int, n_lines: int, n_long: int) -> dict:
    rng = random.Random(seed)
    lines = gen_lines(rng, n_lines)
    for _ in range(n_long):
        lines.insert(rng.randrange(len(lines)), rng.choice(["Z", "7,", "INFO x "]) * (LONG_LINE // 2))
    data = to_bytes(rng, lines) + FINAL
    player = ChaosPlayer(seed) if seed == 2 else FastPlayer()
    out = io.BytesIO()
    t0 = time.perf_counter()
    brain = Brain(io.BytesIO(data), out, player)
    rc = brain.run()
    text = out.getvalue().decode()
    assert rc == 0
    assert text.endswith("\n") and "\r" not in text and " \n" not in text
    replies = text.splitlines()
    owed = oracle(data)
    check_replies(owed, replies)
    _final_ok(replies)
    check_board_consistent(brain.board)
    return {"seed": seed, "lines": len(lines), "long_lines": n_long, "bytes": len(data), "replies": len(replies),
            "owed": len(owed), "moves_sent": brain.moves_sent, "seconds": round(time.perf_counter() - t0, 1)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=100_000, help="fuzzed lines per seed (default %(default)s)")
    ap.add_argument("--long", type=int, default=5, help="2 MiB lines added per seed (default %(default)s)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4], help="default %(default)s")
    args = ap.parse_args()
    logging.basicConfig(level=logging.CRITICAL)   # the brain logs every bad line it is fed
    for seed in args.seeds:
        try:
            print(json.dumps(run(seed, args.lines, args.long)), flush=True)
        except AssertionError as e:
            print(json.dumps({"seed": seed, "failed": str(e)[:500]}), flush=True)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
