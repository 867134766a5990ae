"""Session 40: our VCT on the missed wins of missed_wins.py (its JSON lines). For each position, the
VCT search (30,000 attacker nodes at 110 ms, the player's attack share of a 1 s move, else no node
limit) at depths 5, 8, 12, 20 and 1 s / 5 s, with ``quiet_moves`` from the command line (0: threats
only). Prints one line a position: W MOVE (depth reached, ms) where a win was found, - where not.

    taskset -c 1 .venv/bin/python benchmarks/results/s40/check_missed.py missed15.jsonl 40
"""
import json
import lzma
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
from gomoku_ai.board import Board  # noqa: E402
from gomoku_ai.vct import vct_search  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"


def game(name: str, g: int) -> dict:
    for folder in sorted(RESULTS.glob("s*")):
        path = folder / name
        if path.exists():
            for line in lzma.open(path, "rt"):
                x = json.loads(line)
                if x["game"] == g:
                    return x
    raise KeyError(f"{name} game {g}")


def main() -> None:
    quiet = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    for line in open(sys.argv[1]):
        d = json.loads(line)
        x = game(d["file"], d["game"])
        size = 20 if "-20-" in d["file"] else 15
        b = Board(size, size)
        for (mx, my) in x["moves"][:d["ply"]]:
            b.push(b.index(mx, my))
        out = []
        for depth, ms in ((5, 110), (8, 110), (12, 110), (20, 110), (20, 1000), (20, 5000)):
            t = time.perf_counter()
            r = vct_search(b, depth, 30000 if ms <= 110 else 10 ** 7, t + ms / 1000, quiet_moves=quiet)
            el = round(1000 * (time.perf_counter() - t))
            out.append(f"d{depth}/{ms}:{'W ' + b.move_name(r.line[0]) if r.line else '-'}({r.depth},{el})")
        print(d["file"][:12], d["game"], d["ply"], d["ev"], "rapfi", d["rapfi"], "played", d["played"],
              " ".join(out), flush=True)


if __name__ == "__main__":
    main()
