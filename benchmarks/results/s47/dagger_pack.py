"""Session 47: a DAgger shard of our own 15x15 positions, with the positions after our moves, split by opening.

Session 46 found that on the decisive position of a lost game the network's value one move ahead
prefers the move we played over Rapfi's (69.5 %), and that retraining the value head alone does not
change it. The value that judges a candidate move is the value of the position *after* it, with the
opponent to move, and ``gomoku train annotate --player ours`` only labels the positions we were to
move in. This script adds, for each annotated position at ply p whose next annotated position (ply
p + 2, after the opponent's reply) has an evaluation, the position at ply p + 1: the opponent to move,
policy target the opponent's move in the game, value target from the next evaluation turned to the
opponent's side (``dataset.mixed_value`` with the game's result, as ``annotate`` packs).

Games are split by opening (``teacher.opening_shape``): the games of every ``--hold-every``-th opening
shape (sorted) are held out whole, written as an annotations file of their own, so that
``benchmarks/results/s46/dagger_study.py --network`` measures a network trained on the rest on
positions from openings it has not seen.

    .venv/bin/python benchmarks/results/s47/dagger_pack.py runs/s47/ann15.jsonl --out runs/s47/dagger
"""
from __future__ import annotations

import argparse
import json
import math
import random
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from gomoku_ai.board import Board  # noqa: E402
from gomoku_ai.training import dataset  # noqa: E402
from gomoku_ai.training.teacher import opening_shape  # noqa: E402
from tools.train.annotate import (SourceGame, annotated_games, answer_eval, game_positions,  # noqa: E402
                                  game_record_positions)


def successor_positions(g: SourceGame, ann: Dict[str, Any], eval_weight: float, eval_scale: float
                        ) -> Optional[dataset.Positions]:
    """The positions right after each of our annotated moves in the game (the opponent to move), whose
    next annotated position has an evaluation; None when none."""
    every = game_record_positions(g)     # row i: ply i
    at = {int(p): e for p, e in zip(ann["plies"], ann["evals"])}
    rows: List[int] = []
    evals: List[float] = []
    for p in ann["plies"]:
        q, e = int(p) + 1, at.get(int(p) + 2)
        v = answer_eval(e)
        if v is None or q >= len(every):
            continue
        rows.append(q)
        evals.append(-v)     # our side at p + 2, turned to the mover's at p + 1
    if not rows:
        return None
    pos = every.subset(np.array(rows))
    for k, e in enumerate(evals):
        pos.z[k], pos.zw[k] = dataset.mixed_value(float(pos.z[k]), float(pos.zw[k]), e, eval_weight, eval_scale)
    pos.game = np.zeros(len(rows), np.int32)
    return pos


def one_game(parts: List[dataset.Positions]) -> dataset.Positions:
    """The positions of one game's parts as one game (id 0), so the trainer's validation split keeps it whole."""
    pos = dataset.Positions.concat(parts)
    pos.game[:] = 0
    return pos


def rapfi_after_positions(g: SourceGame, ann: Dict[str, Any], eval_scale: float, evaluator: Any
                          ) -> Optional[dataset.Positions]:
    """The positions after Rapfi's move where it was not the move we played (the opponent to move): value
    target Rapfi's evaluation of the position before it turned to the opponent's side (its move keeps it,
    by its own search), no result (that line was not played); policy target the network's own priors there
    (``evaluator``, the mean over the 8 symmetries), so that these positions teach the value alone."""
    from gomoku_ai.evaluator import evaluate_symmetric
    cells, stm, last, z, pis = [], [], [], [], []
    b = Board(g.width, g.height)            # walked along the game once (the plies ascend)
    for p, (tx, ty), e in zip(ann["plies"], ann["moves"], ann["evals"]):
        p = int(p)
        v = answer_eval(e)
        if v is None or list(g.moves[p]) == [tx, ty]:
            continue
        while len(b.moves) < p:
            x, y = g.moves[len(b.moves)]
            b.push(b.index(x, y))
        m = b.index(tx, ty)
        if not b.is_empty(m):                   # an occupied point
            continue
        if b.push(m):                           # Rapfi's move wins at once
            b.pop()
            continue
        logits, _ = evaluate_symmetric(evaluator, b)
        cells.append(b.cells.copy())
        stm.append(b.side_to_move)
        b.pop()
        prior = np.exp(logits - logits.max())
        last.append(m)
        z.append(-math.tanh(v / eval_scale))
        pis.append((prior / prior.sum()).astype(np.float16))
    if not cells:
        return None
    n = len(cells)
    return dataset.Positions(cells=np.stack(cells).astype(np.int8), stm=np.array(stm, np.int8),
                             last=np.array(last, np.int16), move=np.full(n, -1, np.int16),
                             z=np.array(z, np.float32), zw=np.ones(n, np.float32), game=np.zeros(n, np.int32),
                             pi=np.stack(pis))


def shapes_of(games: List[SourceGame]) -> List[Any]:
    """The sorted opening shapes of ``games`` (``teacher.opening_shape``)."""
    return sorted({opening_shape(g.moves[:g.opening_plies]) for g in games})


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("annotations")
    ap.add_argument("--out", required=True, help="folder: train.npz, train-ours.npz, held-out.jsonl, "
                                                 "train-sample.jsonl, split.json")
    ap.add_argument("--size", type=int, default=15)
    ap.add_argument("--hold-every", type=int, default=5)
    ap.add_argument("--shapes-from", metavar="ANNOTATIONS",
                    help="choose the held-out opening shapes among this annotations file's games (default: the "
                         "annotations'), so that a shard of more games keeps an earlier shard's held-out openings "
                         "out (session 48: runs/data/dagger15x keeps dagger15's); a shape that file lacks is "
                         "trained on")
    ap.add_argument("--eval-weight", type=float, default=0.5)
    ap.add_argument("--eval-scale", type=float, default=320.0)
    ap.add_argument("--rapfi-after", metavar="MODEL",
                    help="also the positions after Rapfi's move where it was not ours (rapfi_after_positions), "
                         "their policy target MODEL's priors")
    ap.add_argument("--rapfi-after-backend", default="onnx", choices=("onnx", "onnx-int8", "numpy"),
                    help="the graph those priors come from (default: onnx, the float graph, so that the shard is "
                         "the same on every CPU; the int8 graph's arithmetic depends on the CPU's int8 features, "
                         "session 49, and was the graph of the shards built before session 50)")
    args = ap.parse_args(argv)
    evaluator = None
    if args.rapfi_after:
        from gomoku_ai.evaluator import NetworkEvaluator
        from gomoku_ai.net import load_model
        evaluator = NetworkEvaluator(load_model(args.rapfi_after, backend=args.rapfi_after_backend))
    anns, games = annotated_games(Path(args.annotations), args.size)
    games_by_key = {g.key: g for g in games}
    shapes = shapes_of(games)
    chosen_among = shapes if args.shapes_from is None else shapes_of(annotated_games(Path(args.shapes_from),
                                                                                     args.size)[1])
    held = {s for i, s in enumerate(chosen_among) if i % args.hold_every == 0}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    ours, both = [], []
    n_held = 0
    with open(out / "held-out.jsonl", "w", encoding="utf-8") as f:
        for gid, g in enumerate(games):
            if opening_shape(g.moves[:g.opening_plies]) in held:
                f.write(json.dumps(anns[g.key]) + "\n")
                n_held += 1
                continue
            p = game_positions(g, anns[g.key], args.eval_weight, args.eval_scale, gid)
            s = successor_positions(g, anns[g.key], args.eval_weight, args.eval_scale)
            r = None if evaluator is None else rapfi_after_positions(g, anns[g.key], args.eval_scale, evaluator)
            parts = [x for x in (p, s, r) if x is not None]
            if p is not None:
                ours.append(p)
            if parts:    # one game id for both kinds, so the trainer's validation split keeps the game whole
                both.append(one_game(parts))
    # as many trained-on games as held out, for held_out_view.py on positions the fine-tune has seen
    kept = [k for k in anns if opening_shape(games_by_key[k].moves[:games_by_key[k].opening_plies]) not in held]
    random.Random(1).shuffle(kept)
    with open(out / "train-sample.jsonl", "w", encoding="utf-8") as f:
        f.writelines(json.dumps(anns[k]) + "\n" for k in kept[:n_held])
    a, ab = dataset.Positions.concat(ours), dataset.Positions.concat(both)
    n_rapfi = 0 if ab.pi is None else int((ab.move < 0).sum())
    dataset.save_shard(a, out / "train-ours.npz")
    dataset.save_shard(ab, out / "train.npz")
    split = {"games": len(games), "opening_shapes": len(shapes), "held_out_shapes": len(held),
             "held_out_games": n_held, "train_positions_ours": len(a), "train_positions_after": len(ab) - len(a) - n_rapfi,
             "train_positions_after_rapfi": n_rapfi}
    (out / "split.json").write_text(json.dumps(split, indent=1) + "\n")
    print(json.dumps(split))
    return 0


if __name__ == "__main__":
    sys.exit(main())
