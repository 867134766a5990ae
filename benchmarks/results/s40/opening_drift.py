"""Session 40: Rapfi's evaluation along our lost games from one opening (where the game slipped).
For every game 'ours' lost from opening OPENING in the given results files, Rapfi (300,000 nodes)
at every ply after the opening; one JSON line a game: rows (ply, 'us'/'op' to move, eval from our
side, Rapfi's move, the move played).

    taskset -c 0 .venv/bin/python benchmarks/results/s40/opening_drift.py 5 20 \\
        benchmarks/results/s39/aiwine-20-rounds-1390-results.jsonl.xz > drift5.jsonl
"""
import json
import lzma
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
from build_vct_set import Oracle  # noqa: E402
from gomoku_ai.board import Board  # noqa: E402

RAPFI = os.environ.get("RAPFI", str(Path.home() / "sparring/rapfi/build/pbrain-rapfi"))


def value(ev: str) -> int:
    if "M" in ev:
        return -30000 if ev.startswith("-") else 30000
    try:
        return int(float(ev))
    except ValueError:
        return 0


def main() -> None:
    opening, size = int(sys.argv[1]), int(sys.argv[2])
    orc = Oracle([RAPFI], 300000, size)
    for f in sys.argv[3:]:
        for line in lzma.open(f, "rt"):
            x = json.loads(line)
            if x["opening"] != opening or not x["winner"] or x[x["winner"]] == "ours":
                continue
            ours_black = x["black"] == "ours"
            b = Board(size, size)
            rows = []
            for i, (mx, my) in enumerate(x["moves"]):
                if i >= x["opening_plies"]:
                    ev, best = orc.ask(b)
                    mine = (b.side_to_move == 1) == ours_black
                    rows.append((i, "us" if mine else "op", value(ev) if mine else -value(ev), best,
                                 b.move_name(b.index(mx, my))))
                b.push(b.index(mx, my))
            print(json.dumps({"file": Path(f).name, "game": x["game"], "ours": "B" if ours_black else "W",
                              "plies": x["plies"], "rows": rows}), flush=True)
    orc.close()


if __name__ == "__main__":
    main()
