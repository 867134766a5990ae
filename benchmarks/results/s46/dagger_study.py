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
import statistics
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # benchmarks/: results_io

from results_io import colour_points  # noqa: E402

from tools.train.annotate import SourceGame, answer_eval  # noqa: E402
from tools.train.annotate import annotated_games as read_annotated  # noqa: E402


#: an annotation's evaluation text as a number, read as ``gomoku train annotate`` packs it
teacher_eval = answer_eval


def annotated_games(path: str, player: str) -> Iterator[Tuple[Dict[str, Any], SourceGame, str, float]]:
    """Each annotated 15x15 game of ``path`` (:func:`tools.train.annotate.annotated_games`, the one reader)
    with ``player``'s colour and points, in the annotations' file order."""
    anns, games = read_annotated(Path(path), 15)
    by_key = {g.key: g for g in games}
    for key, row in anns.items():
        g = by_key[key]
        played = colour_points(g.black, g.white, g.winner, player)
        assert played is not None, f"{key}: {player} did not play this game"
        yield row, g, played[0], played[1]


def drops(row: Dict[str, Any], drop: float, below_zero: bool = True) -> List[int]:
    """The indices in ``row["plies"]`` of our positions after which the teacher's evaluation (our side)
    fell by more than ``drop`` by our next position (and, with ``below_zero``, to below zero)."""
    evs = [teacher_eval(e) for e in row["evals"]]
    return [i for i, (a, b) in enumerate(zip(evs, evs[1:]))
            if a is not None and b is not None and a - b > drop and (b < 0 or not below_zero)]


def first_drop(row: Dict[str, Any], drop: float) -> Optional[int]:
    """The first of :func:`drops` (to below zero); None when the evaluation never fell so."""
    found = drops(row, drop)
    return found[0] if found else None


def annotated_positions(path: str, player: str) -> Iterator[Tuple[Dict[str, Any], int, Any, List[int], List[int]]]:
    """Each annotated position of ``path`` as ``(row, i, board, ours, rapfi)``: the annotation row, the
    index in ``row["plies"]``, the 15x15 board before ``player``'s move there, the move played and
    Rapfi's (``[x, y]``). One board walks along each game (no replay from the start per position); the
    caller may push and pop on it but must leave it as it was."""
    from gomoku_ai.board import Board
    for row, g, _, _ in annotated_games(path, player):
        b, done = Board(15, 15), 0
        for i, (ply, rapfi) in enumerate(zip(row["plies"], row["moves"])):
            assert ply >= done, f"{row}: plies out of order"
            for x, y in g.moves[done:ply]:
                b.push(b.index(x, y))
            done = ply
            yield row, i, b, list(g.moves[ply]), list(rapfi)


def values_after(ev: Any, b: Any, moves: List[Any], symmetric: bool = True) -> List[float]:
    """The network's value (the mean over the 8 symmetries, or with ``symmetric=False`` one view) after each
    of ``moves`` (``[x, y]``) on board ``b`` (left as it was), from the side that played the move: the value
    one move ahead."""
    from gomoku_ai.evaluator import evaluate_symmetric
    out = []
    for x, y in moves:
        b.push(b.index(x, y))
        if symmetric:
            v = evaluate_symmetric(ev, b)[1]
        else:
            v = float(ev.evaluate([ev.prepare(b)], (b.height, b.width))[1][0])
        out.append(-v)     # the opponent to move: turned to the mover's side
        b.pop()
    return out


def network_view(model: str, drops: List[Any]) -> Dict[str, Any]:
    """Where the network's symmetric priors rank our move and Rapfi's at each first-drop position."""
    import numpy as np
    from gomoku_ai.board import Board
    from gomoku_ai.evaluator import NetworkEvaluator, evaluate_symmetric
    from gomoku_ai.net import load_model
    ev = NetworkEvaluator(load_model(model))
    ours_rank, rapfi_rank, values = [], [], []
    prefers_ours: List[bool] = []   # the value after our move above the value after Rapfi's
    ties = 0                        # the two values equal (both lost, or mirror-image moves)
    for before, ours, rapfi in drops:
        b = Board(15, 15)
        for x, y in before:
            b.push(b.index(x, y))
        logits, value = evaluate_symmetric(ev, b)
        order = list(np.argsort(-logits))
        ours_rank.append(order.index(b.index(*ours)) + 1)
        rapfi_rank.append(order.index(b.index(*rapfi)) + 1)
        values.append(value)
        if ours != rapfi:
            after_ours, after_rapfi = values_after(ev, b, [ours, rapfi])
            prefers_ours.append(after_ours > after_rapfi)
            ties += after_ours == after_rapfi
    n = max(1, len(drops))
    return {"positions": len(drops),
            "our_move_is_network_first": round(sum(r == 1 for r in ours_rank) / n, 3),
            "rapfi_move_is_network_first": round(sum(r == 1 for r in rapfi_rank) / n, 3),
            "rapfi_move_in_network_top3": round(sum(r <= 3 for r in rapfi_rank) / n, 3),
            "rapfi_move_rank_median": statistics.median(rapfi_rank) if rapfi_rank else None,
            "network_value_median": round(statistics.median(values), 3) if values else None,
            "moves_differ": len(prefers_ours),
            "value_after_prefers_our_move": round(sum(prefers_ours) / max(1, len(prefers_ours)), 3),
            "value_after_ties": ties}


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("annotations")
    ap.add_argument("--player", default="ours")
    ap.add_argument("--drop", type=float, default=300.0)
    ap.add_argument("--network", help="a model: for the first-drop positions, where its priors put our move "
                                      "and Rapfi's (the mean over the 8 symmetries)")
    args = ap.parse_args(argv)
    drops: List[Any] = []   # (moves before, our move, Rapfi's move) at the first drop of each lost game
    agree: Dict[str, List[int]] = collections.defaultdict(list)
    first_drop_ply: List[int] = []
    lost_without_drop = games = 0
    for row, g, colour, points in annotated_games(args.annotations, args.player):
        games += 1
        res = "win" if points == 1.0 else "loss" if points == 0.0 else "draw"
        tag = f"{res}-{colour}-{g.opening_plies}"
        src = Path(row["key"].rsplit("#", 1)[0])
        run = "run " + src.parent.name + "/" + src.name.replace("-results.jsonl.xz", "")
        for ply, mv in zip(row["plies"], row["moves"]):
            agree[tag].append(int(list(g.moves[ply]) == list(mv)))
            agree["all"].append(agree[tag][-1])
            agree[run].append(agree[tag][-1])
        if res == "loss":
            i = first_drop(row, args.drop)
            if i is None:
                lost_without_drop += 1
            else:
                found = row["plies"][i]
                drops.append((g.moves[:found], list(g.moves[found]), list(row["moves"][i])))
                first_drop_ply.append(found - g.opening_plies)
    out = {
        "positions": len(agree["all"]), "games": games,
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
