"""Two tournament runs on the same seed, compared game by game: the score difference per game with a 95 %
interval, from the colour-swapped pairs. Prints one JSON object.

    .venv/bin/python benchmarks/paired.py runs/s16/aiwine-15:ours runs/s16/aiwine-15-nohints:nohints

Each argument is ``FOLDER:PLAYER`` (the player whose score is compared; the folders' other players are
its opponents); FOLDER may also be a results file itself (e.g. a ``results.jsonl`` kept in
``benchmarks/results/`` with only the fields read here: game, pair, black, white, winner), read
through xz when its name ends in ``.xz`` (as those kept since session 24 are). Two runs with the same seed, openings and schedule play the same opening with the same
colours at the same game index, so the games pair up by index (``game`` in ``results.jsonl``); only games
finished in both runs count. The difference is A's score less B's. Its interval comes from the
per-pair differences (a pair is the two colour-swapped games of one opening, which share the
opening's bias), normal approximation: mean +- 1.96 * sd / sqrt(pairs), given per game.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Dict, List, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))

from results_io import read_text, results_path  # noqa: E402


def scores(folder: Path, player: str) -> Dict[int, Tuple[int, float]]:
    """game index -> (pair index, the player's score in it: 1, 0.5 or 0). Refuses a folder without
    results or a player who is in none of its games, naming the folder."""
    path = results_path(folder)
    out: Dict[int, Tuple[int, float]] = {}
    for n, line in enumerate(read_text(path).splitlines(), 1):
        if not line.strip():
            continue
        try:
            r = json.loads(line)
            colour = "black" if r["black"] == player else "white" if r["white"] == player else None
            if colour is None:
                continue
            s = 0.5 if r["winner"] in (None, "draw") else 1.0 if r["winner"] == colour else 0.0
            out[int(r["game"])] = (int(r["pair"]), s)
        except (ValueError, KeyError, TypeError) as e:
            raise SystemExit(f"{path}, line {n}: not a game result ({e})")
    if not out:
        raise SystemExit(f"{path}: no game of {player!r}")
    return out


def compare(a: Dict[int, Tuple[int, float]], b: Dict[int, Tuple[int, float]]) -> dict:
    """The paired comparison of two runs' scores (see the module docstring)."""
    common = sorted(set(a) & set(b))
    pairs: Dict[int, List[float]] = {}
    same = 0
    for g in common:
        pairs.setdefault(a[g][0], []).append(a[g][1] - b[g][1])
        same += a[g][1] == b[g][1]
    diffs = [sum(d) / len(d) for d in pairs.values()]      # per game, one value per pair
    k = len(diffs)
    mean = sum(diffs) / k if k else 0.0
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (k - 1)) if k > 1 else float("nan")
    half = 1.96 * sd / math.sqrt(k) if k > 1 else float("nan")
    return {"games": len(common), "pairs": k, "same_result": same,
            "score_a": round(sum(a[g][1] for g in common) / max(1, len(common)), 4),
            "score_b": round(sum(b[g][1] for g in common) / max(1, len(common)), 4),
            "diff_per_game": round(mean, 4), "ci95": [round(mean - half, 4), round(mean + half, 4)]}


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", help="FOLDER:PLAYER")
    ap.add_argument("b", help="FOLDER:PLAYER")
    args = ap.parse_args(argv)
    runs = []
    for spec in (args.a, args.b):
        folder, sep, player = spec.rpartition(":")
        if not sep or not folder or not player:
            raise SystemExit(f"{spec}: expected FOLDER:PLAYER")
        runs.append(scores(Path(folder), player))
    out = {"a": args.a, "b": args.b, **compare(*runs)}
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
