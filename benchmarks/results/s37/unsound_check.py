"""One-off (session 37): the moves of the 20x20 blunder set that its oracle (Rapfi, 300,000 nodes)
called holding but after which our C VCT (depth 20, 3,000 or 30,000 attacker nodes) found a win for
the opponent: is our line a real win? Rapfi is asked again with ``--nodes`` (default 3 million)
after each; prints one JSON row per move: our line and Rapfi's evaluation (for the opponent, to move).

    taskset -c 1 .venv/bin/python benchmarks/results/s37/unsound_check.py blunder07:156 blunder09:389 ...
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from build_vct_set import Oracle  # noqa: E402
from gomoku_ai import vct  # noqa: E402


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    nodes = next((int(a.split("=")[1]) for a in sys.argv[1:] if a.startswith("--nodes=")), 3_000_000)
    positions = {p.name: p for p in vct.read_positions(ROOT / "benchmarks/data/blunder_positions_20.txt")}
    orc = Oracle([str(Path.home() / "sparring/rapfi/build/pbrain-rapfi")], nodes, 20)
    try:
        for item in args:
            name, move = item.split(":")
            b = positions[name].board()
            b.push(int(move))
            r = vct.vct_search(b, 20, 30000)
            ev, best = orc.ask(b)
            print(json.dumps({"position": name, "move": b.move_name(int(move)), "our_line":
                              None if r.line is None else [b.move_name(m) for m in r.line],
                              "rapfi_eval": ev, "rapfi_move": best}), flush=True)
    finally:
        orc.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
