"""Our move times in tournament folders (the runner's clock, the last line of each move's SGF
comment): moves, median, 99th percentile and slowest, in ms, per folder.

    .venv/bin/python benchmarks/results/s34/our_move_times.py runs/s34/aiwine-20-ft2 ... [--player ours]
"""
import json
import re
import statistics
import sys
from pathlib import Path

args = [a for a in sys.argv[1:] if not a.startswith("--")]
player = sys.argv[sys.argv.index("--player") + 1] if "--player" in sys.argv else "ours"
args = [a for a in args if a != player]
for folder in args:
    times = []
    for sgf in sorted(Path(folder, "games").glob("*.sgf")):
        text = sgf.read_text()
        colour = "B" if re.search(r"PB\[" + re.escape(player) + r"\]", text) else "W"
        for m in re.finditer(r";([BW])\[[a-z]*\](?:C\[((?:[^\]\\]|\\.)*)\])?", text):
            if m.group(1) == colour and m.group(2):
                t = re.search(r"(\d+)ms\s*$", m.group(2))
                if t:
                    times.append(int(t.group(1)))
    times.sort()
    print(json.dumps({"folder": folder, "moves": len(times), "median_ms": statistics.median(times),
                      "p99_ms": times[int(0.99 * (len(times) - 1))], "max_ms": times[-1],
                      "over_1000": sum(t > 1000 for t in times)}))
