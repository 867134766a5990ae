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

Several comparisons of the same two engines (e.g. two seeds) pool into one estimate:

    .venv/bin/python benchmarks/paired.py runs/s26/r100k-20-ft:ours runs/s24/r100k-20-mix:ours \
        runs/s26/r100k-20-ft-1206:ours runs/s26/r100k-20-mix-1206:ours

takes the arguments two by two (A1 B1 A2 B2 ...) and prints each comparison under ``comparisons`` and,
under ``pooled``, the same figures over the per-pair differences of all of them together.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Dict, List, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))

from results_io import player_points, read_results, results_path  # noqa: E402


def scores(folder: Path, player: str) -> Dict[int, Tuple[int, float]]:
    """game index -> (pair index, the player's score in it: 1, 0.5 or 0). Refuses a folder without
    results or a player who is in none of its games, naming the folder."""
    path = results_path(folder)
    out: Dict[int, Tuple[int, float]] = {}
    for n, r in enumerate(read_results(folder), 1):
        try:
            played = player_points(r, player)
            if played is not None:
                out[int(r["game"])] = (int(r["pair"]), played[1])
        except (ValueError, KeyError, TypeError) as e:
            raise SystemExit(f"{path}, game row {n}: not a game result ({e})")
    if not out:
        raise SystemExit(f"{path}: no game of {player!r}")
    return out


def pair_diffs(a: Dict[int, Tuple[int, float]], b: Dict[int, Tuple[int, float]]
               ) -> Tuple[List[float], List[Tuple[float, float]]]:
    """The per-pair score differences of A less B (per game: one value per pair, the mean of its
    games' differences) and the (A, B) scores of each game both runs finished."""
    common = sorted(set(a) & set(b))
    pairs: Dict[int, List[float]] = {}
    for g in common:
        pairs.setdefault(a[g][0], []).append(a[g][1] - b[g][1])
    return [sum(d) / len(d) for d in pairs.values()], [(a[g][1], b[g][1]) for g in common]


def summary(diffs: List[float], games: List[Tuple[float, float]]) -> dict:
    """Games, pairs, equal results, both scores and the mean difference with its 95 % interval."""
    k = len(diffs)
    mean = sum(diffs) / k if k else 0.0
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (k - 1)) if k > 1 else float("nan")
    half = 1.96 * sd / math.sqrt(k) if k > 1 else float("nan")
    n = max(1, len(games))
    return {"games": len(games), "pairs": k, "same_result": sum(x == y for x, y in games),
            "score_a": round(sum(x for x, _ in games) / n, 4),
            "score_b": round(sum(y for _, y in games) / n, 4),
            "diff_per_game": round(mean, 4), "ci95": [round(mean - half, 4), round(mean + half, 4)]}


def compare(a: Dict[int, Tuple[int, float]], b: Dict[int, Tuple[int, float]]) -> dict:
    """The paired comparison of two runs' scores (see the module docstring)."""
    return summary(*pair_diffs(a, b))


def _run(spec: str) -> Dict[int, Tuple[int, float]]:
    folder, sep, player = spec.rpartition(":")
    if not sep or not folder or not player:
        raise SystemExit(f"{spec}: expected FOLDER:PLAYER")
    return scores(Path(folder), player)


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", metavar="FOLDER:PLAYER",
                    help="A B, or A1 B1 A2 B2 ... (compared two by two, then pooled)")
    args = ap.parse_args(argv)
    if len(args.runs) % 2:
        raise SystemExit("expected runs two by two: A B [A2 B2 ...]")
    specs = list(zip(args.runs[::2], args.runs[1::2]))
    parts = [(a, b, pair_diffs(_run(a), _run(b))) for a, b in specs]
    if len(parts) == 1:
        a, b, (diffs, games) = parts[0]
        out = {"a": a, "b": b, **summary(diffs, games)}
    else:
        out = {"comparisons": [{"a": a, "b": b, **summary(d, g)} for a, b, (d, g) in parts],
               "pooled": summary([x for _, _, (d, _) in parts for x in d],
                                 [x for _, _, (_, g) in parts for x in g])}
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
