"""Session 46: how our played moves compare with Rapfi's on the positions of our own 15x15 match games.

Reads ``gomoku train annotate`` output (Rapfi's move and evaluation for each position our engine was to
move in) beside the match results it was made from, and prints JSON: how often our engine's move (the
whole player at 1 s a move, not the network alone) was Rapfi's, by game result and colour; and for the
lost games, the first of our moves after which Rapfi's evaluation (side to move: us) fell by more than
``--drop`` centipawn-like units between two of our consecutive positions, by ply.

    .venv/bin/python benchmarks/results/s46/dagger_study.py runs/s46/ann15/annotations.jsonl
"""
from __future__ import annotations

import argparse
import collections
import json
import lzma
import re
import statistics
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

MATE = 30000.0


def ev_value(text: Optional[str]) -> Optional[float]:
    """Rapfi's evaluation text (``"93"``, ``"+M3"``, ``"-M4"``) as a number, mates as +/- MATE."""
    if text is None:
        return None
    m = re.fullmatch(r"([+-]?)M(\d+)", text)
    if m:
        return -MATE if m.group(1) == "-" else MATE
    try:
        return float(text)
    except ValueError:
        return None


def load_games(path: str) -> List[Dict[str, Any]]:
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


def network_view(model: str, drops: List[Any]) -> Dict[str, Any]:
    """Where the network's symmetric priors rank our move and Rapfi's at each first-drop position."""
    import numpy as np
    from gomoku_ai.board import Board
    from gomoku_ai.evaluator import NetworkEvaluator, evaluate_symmetric
    from gomoku_ai.net import load_model
    ev = NetworkEvaluator(load_model(model))
    ours_rank, rapfi_rank, values = [], [], []
    prefers_ours: List[bool] = []   # the value after our move above the value after Rapfi's
    for before, ours, rapfi in drops:
        b = Board(15, 15)
        for x, y in before:
            b.push(b.index(x, y))
        logits, value = evaluate_symmetric(ev, b)
        order = list(np.argsort(-logits))
        ours_rank.append(order.index(b.index(*ours)) + 1)
        rapfi_rank.append(order.index(b.index(*rapfi)) + 1)
        values.append(value)
        after = {}
        for name, mv in (("ours", ours), ("rapfi", rapfi)):
            b.push(b.index(*mv))
            after[name] = -evaluate_symmetric(ev, b)[1]     # the opponent to move: turned to our side
            b.pop()
        if ours != rapfi:
            prefers_ours.append(after["ours"] > after["rapfi"])
    n = max(1, len(drops))
    return {"positions": len(drops),
            "our_move_is_network_first": round(sum(r == 1 for r in ours_rank) / n, 3),
            "rapfi_move_is_network_first": round(sum(r == 1 for r in rapfi_rank) / n, 3),
            "rapfi_move_in_network_top3": round(sum(r <= 3 for r in rapfi_rank) / n, 3),
            "rapfi_move_rank_median": statistics.median(rapfi_rank) if rapfi_rank else None,
            "network_value_median": round(statistics.median(values), 3) if values else None,
            "moves_differ": len(prefers_ours),
            "value_after_prefers_our_move": round(sum(prefers_ours) / max(1, len(prefers_ours)), 3)}


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("annotations")
    ap.add_argument("--player", default="ours")
    ap.add_argument("--drop", type=float, default=300.0)
    ap.add_argument("--network", help="a model: for the first-drop positions, where its priors put our move "
                                      "and Rapfi's (the mean over the 8 symmetries)")
    args = ap.parse_args(argv)
    drops: List[Any] = []   # (moves before, our move, Rapfi's move) at the first drop of each lost game
    cache: Dict[str, List[Dict[str, Any]]] = {}
    agree: Dict[str, List[int]] = collections.defaultdict(list)
    first_drop_ply: List[int] = []
    lost_without_drop = 0
    with open(args.annotations) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    for row in rows:
        src, num = row["key"].rsplit("#", 1)
        if src not in cache:
            cache[src] = [g for g in load_games(src) if "moves" in g]
        g = next(x for x in cache[src] if x["game"] == int(num))
        colour = "black" if g["black"] == args.player else "white"
        res = "win" if g["winner"] == colour else ("loss" if g["winner"] in ("black", "white") else "draw")
        tag = f"{res}-{colour}-{g['opening_plies']}"
        run = "run " + Path(src).parent.name + "/" + Path(src).name.replace("-results.jsonl.xz", "")
        for ply, mv in zip(row["plies"], row["moves"]):
            agree[tag].append(int(list(g["moves"][ply]) == list(mv)))
            agree["all"].append(agree[tag][-1])
            agree[run].append(agree[tag][-1])
        if res == "loss":
            evs = [ev_value(e) for e in row["evals"]]
            found = None
            for i in range(len(evs) - 1):
                a, b = evs[i], evs[i + 1]
                if a is not None and b is not None and a - b > args.drop and b < 0:
                    found = row["plies"][i]
                    drops.append((g["moves"][:found], list(g["moves"][found]), list(row["moves"][i])))
                    break
            if found is None:
                lost_without_drop += 1
            else:
                first_drop_ply.append(found - g["opening_plies"])
    out = {
        "positions": len(agree["all"]), "games": len(rows),
        "agreement": {k: {"positions": len(v), "same_move": round(sum(v) / len(v), 3)}
                      for k, v in sorted(agree.items())},
        "lost_games": len(first_drop_ply) + lost_without_drop,
        "lost_with_a_drop": len(first_drop_ply),
        "first_drop_plies_after_opening": {
            "median": statistics.median(first_drop_ply) if first_drop_ply else None,
            "histogram": dict(sorted(collections.Counter(min(p // 4 * 4, 40) for p in first_drop_ply).items())),
        },
    }
    if args.network:
        out["first_drop_network"] = network_view(args.network, drops)
    json.dump(out, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
