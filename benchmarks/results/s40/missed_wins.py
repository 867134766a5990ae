"""Session 40: the wins we missed. For every game 'ours' lost in the given results files, Rapfi
(300,000 nodes) is asked at each of our moves after the opening; a position where it announces a mate
for us (``+M``) is printed as one JSON line (file, game, ply, Rapfi's eval and move, the move played).

    taskset -c 0 .venv/bin/python benchmarks/results/s40/missed_wins.py 20 \\
        benchmarks/results/s39/aiwine-20-rounds-1390-results.jsonl.xz ... > missed20.jsonl
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


def main() -> None:
    size = int(sys.argv[1])
    orc = Oracle([RAPFI], 300000, size)
    for f in sys.argv[2:]:
        for line in lzma.open(f, "rt"):
            x = json.loads(line)
            if not x["winner"] or x[x["winner"]] == "ours":
                continue
            ours_black = x["black"] == "ours"
            b = Board(size, size)
            for i, (mx, my) in enumerate(x["moves"]):
                mine = (b.side_to_move == 1) == ours_black
                if i >= x["opening_plies"] and mine:
                    ev, best = orc.ask(b)
                    if "M" in ev and not ev.startswith("-"):
                        print(json.dumps({"file": Path(f).name, "game": x["game"], "ply": i, "ev": ev,
                                          "rapfi": best, "played": b.move_name(b.index(mx, my))}),
                              flush=True)
                b.push(b.index(mx, my))
    orc.close()


if __name__ == "__main__":
    main()
