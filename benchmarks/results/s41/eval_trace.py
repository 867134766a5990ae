"""Session 41: our own evaluation along each lost game, from the MESSAGE lines our brain printed with
``option.show_detail=2`` (kept per ply under ``comments`` in the results).

For each game PLAYER lost: the opening, our colour, the plies, our win % at our first move, the
largest win % we still gave in our last 10 moves, and the ply of our first move under 50 % (None:
never). One JSON line a game, then a summary line.

    .venv/bin/python benchmarks/results/s41/eval_trace.py ours runs/s41/aiwine-20-base-4111 [more]
"""
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from results_io import player_points, read_results  # noqa: E402

EV = re.compile(r"\bev (-?[0-9.]+)")


def main() -> None:
    player, runs = sys.argv[1], sys.argv[2:]
    lost = misjudged = 0
    for run in runs:
        for r in read_results(Path(run)):
            played = player_points(r, player)
            if played is None or played[1] != 0.0:   # not ours, won or drawn
                continue
            colour = played[0]
            ours = []
            for ply, text in sorted((int(k), v) for k, v in (r.get("comments") or {}).items()):
                if (ply % 2 == 0) == (colour == "black"):
                    m = EV.search(text)
                    if m:
                        ours.append((ply, float(m.group(1))))
            if not ours:
                continue
            lost += 1
            last = max(e for _p, e in ours[-10:])
            under = next((p for p, e in ours if e < 50.0), None)
            misjudged += last >= 60.0
            print(json.dumps({"run": Path(run).name, "game": r["game"], "opening": r["opening"],
                              "colour": colour, "plies": r["plies"], "first_ev": ours[0][1],
                              "max_ev_last10": last, "first_under_50": under}))
    print(json.dumps({"lost_with_evals": lost, "over_60_in_last_10_moves": misjudged}))


if __name__ == "__main__":
    main()
