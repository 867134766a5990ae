"""``gomoku train ...``: supervised training from game records, export to model files.

    gomoku train pack --records ../shared/data/gomocup2024_freestyle15 --out runs/sl/data.npz
    gomoku train supervised --data runs/sl/data.npz --run runs/sl --blocks 4 --channels 32
    gomoku train export --run runs/sl --out models/freestyle15-4x32
    gomoku train teacher --engine /opt/rapfi/pbrain-rapfi --nodes 50000 \
        --records ../shared/data/gomocup2024_freestyle15 --games 2000 --out runs/teach
    gomoku train annotate --engine /opt/rapfi/pbrain-rapfi --nodes 200000 --games runs/t/r100k \
        --player ours --out runs/ann
    gomoku train selfplay --model models/freestyle15-4x32 --out runs/sp --games 64 -j 2
    gomoku train selfplay --model models/freestyle15-4x32 --out runs/sp -j 16 --backend ray
    gomoku train gate --candidate runs/az/candidates/it0003 --best runs/az/best --max-games 400
    gomoku train loop --run runs/az --iterations 20 --init-model runs/sl/checkpoint.pt
    gomoku train curve --run runs/az8 --opponent uniform --visits 200 --games 20 --every 4
    gomoku train plot --run runs/az8 --out runs/az8/train.png

``selfplay`` and ``loop`` show a live progress display (rich) when stdout is a terminal, and
print one JSON line per event otherwise (or with ``--json``).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Callable, ContextManager, Dict, Optional, Tuple

from .live import LiveDisplay


def add_parser(sub: Any) -> None:
    """Register ``train`` and its subcommands on a subparsers object."""
    tr = sub.add_parser("train", help="training: pack records, supervised training, export",
                        description="Training: pack game records into shards, train a network on them "
                                    "(supervised or in an AlphaZero loop), export it for the engine, "
                                    "and measure it.")
    tsub = tr.add_subparsers(dest="train_command", required=True)
    for add in (_add_pack, _add_supervised, _add_teacher, _add_annotate, _add_export, _add_selfplay,
                _add_gate, _add_loop, _add_curve, _add_accuracy, _add_quantize, _add_plot):
        add(tsub)


#: for the loop's options, whose default is the run's stored setting (RUN/config.json)
_STORED = "(default: the run's stored setting, else {})"


def _add_pack(tsub: Any) -> None:
    pk = tsub.add_parser("pack", help="turn PSQ/SGF game records into a training shard")
    pk.add_argument("--records", nargs="+", required=True, help="record files or folders")
    pk.add_argument("--openings", default=None,
                    help="openings file: moves of these prefixes are not used as targets")
    pk.add_argument("--size", type=int, default=15,
                    help="board size of the records (a .psq whose header disagrees is skipped) and of "
                         "the openings file (default: %(default)s)")
    pk.add_argument("--eval-weight", type=float, default=0.0,
                    help="share of the value target taken from the teacher's evaluation in the "
                         "move comments (SGF from gomoku train teacher; Rapfi's 'Eval N'), the "
                         "rest from the game result; 0: the result only (default: %(default)s)")
    pk.add_argument("--eval-scale", default="auto",
                    help="tanh scale of the evaluation, in the teacher's units, or 'auto': fitted "
                         "to these games' results (default: %(default)s)")
    pk.add_argument("--out", required=True, help="output .npz shard")


def _add_supervised(tsub: Any) -> None:
    sl = tsub.add_parser("supervised", help="train on shards (resumes from --run if present)")
    sl.add_argument("--data", nargs="+", required=True, help="shard files (.npz)")
    sl.add_argument("--run", required=True, help="run folder: checkpoint.pt, log.jsonl")
    sl.add_argument("--blocks", type=int, default=6,
                    help="residual blocks of the network (default: %(default)s)")
    sl.add_argument("--channels", type=int, default=64,
                    help="channels of the residual tower (default: %(default)s)")
    sl.add_argument("--head-channels", type=int, default=None,
                    help="channels of the policy and value heads (default: half of --channels, at "
                         "least 16)")
    sl.add_argument("--steps", type=int, default=20000,
                    help="total training steps; a resumed run continues up to them (default: "
                         "%(default)s)")
    sl.add_argument("--batch", type=int, default=256,
                    help="positions per training step (default: %(default)s)")
    sl.add_argument("--lr", type=float, default=2e-3,
                    help="learning rate reached after the warm-up, then decayed (cosine; default: "
                         "%(default)s)")
    sl.add_argument("--threads", type=int, default=2,
                    help="torch CPU threads (default: %(default)s)")
    sl.add_argument("--max-seconds", type=float, default=None,
                    help="stop (and checkpoint) after this many seconds (default: no limit)")
    sl.add_argument("--time-schedule", action="store_true",
                    help="run the warm-up + cosine schedule over --max-seconds instead of --steps "
                         "(whichever ends first), so a run of fixed wall time ends at a low rate")
    sl.add_argument("--precision", choices=("fp32", "bf16"), default="fp32",
                    help="fp32, or bf16: bfloat16 autocast, weights kept in float32; about 2x "
                         "faster on a CPU with AVX512-BF16 (default: %(default)s)")
    sl.add_argument("--device", default="auto",
                    help="auto (CUDA when present), cpu, cuda[:N] (default: %(default)s)")
    sl.add_argument("--init", default=None,
                    help="start a new run from this checkpoint's weights (fine-tune; same arch)")
    sl.add_argument("--warmup", type=int, default=None, help="warm-up steps (default 300)")
    sl.add_argument("--value-weight", type=float, default=None,
                    help="weight of the value loss (default 1; lower keeps an --init network's "
                         "value head while its policy learns)")
    sl.add_argument("--train-only", choices=("all", "value"), default="all",
                    help="value: only the value head learns; the tower and the policy head stay exactly "
                         "as --init has them (default: %(default)s)")
    sl.add_argument("--repeat", action="append", default=None, metavar="SHARD=K",
                    help="weigh one --data shard K times in the mix, e.g. runs/ann20/annotated.npz=4 "
                         "(repeatable; its games stay whole in the validation split)")
    sl.add_argument("--size-share", action="append", default=None, metavar="WxH=F",
                    help="with shards of several board sizes (one network for all): the share of "
                         "the batches from one size, e.g. 20x20=0.3 (repeatable; sizes not named "
                         "share the rest by positions)")


def _add_teacher_engine(p: Any, nodes_default: str) -> None:
    """The teacher engine's options, shared by ``teacher`` and ``annotate``."""
    p.add_argument("--engine", required=True,
                   help="the teacher's command line, e.g. /opt/rapfi/pbrain-rapfi")
    p.add_argument("--nodes", type=int, default=None,
                   help=f"INFO max_node for the teacher (its strength; {nodes_default})")
    p.add_argument("--tc", default=None, help="time control instead of nodes, e.g. 0/0.2")


def _add_teacher(tsub: Any) -> None:
    te = tsub.add_parser("teacher", help="games of an external pbrain engine against itself from "
                         "openings cut out of records, or random ones by an edge or the centre "
                         "(resumable), as training data")
    _add_teacher_engine(te, "default: its own")
    src = te.add_mutually_exclusive_group(required=True)
    src.add_argument("--records", nargs="+",
                     help="record files or folders the openings are cut from")
    src.add_argument("--edge-openings", action="store_true",
                     help="random openings of --min-plies..--max-plies stones within three lines of "
                          "an edge, the kind Gomocup plays 20x20 from (GomocupJudge's openings), "
                          "instead of openings cut from records")
    src.add_argument("--centre-openings", action="store_true",
                     help="random openings of --min-plies..--max-plies stones around the centre, "
                          "each within three squares of an earlier one, the kind the Piskvork 15x15 "
                          "openings are (e.g. --min-plies 3 --max-plies 5)")
    te.add_argument("--nodes-b", type=int, default=None, metavar="N",
                    help="INFO max_node of the second teacher (default: --nodes). An engine that "
                         "plays a position the same way every time plays both games of a colour-"
                         "swapped pair alike; a slightly different count (say 110000 against "
                         "100000) makes them two games")
    te.add_argument("--exclude-openings", default=None, metavar="FILE",
                    help="with --centre-openings: no opening sets up the position of one in FILE "
                         "(up to symmetry and shift), e.g. the openings a match measures on")
    te.add_argument("--games", type=int, default=1000,
                    help="games to reach (rounded up to pairs; default: %(default)s)")
    te.add_argument("--min-plies", type=int, default=4,
                    help="shortest opening in plies (default: %(default)s)")
    te.add_argument("--max-plies", type=int, default=12,
                    help="longest opening in plies (default: %(default)s)")
    te.add_argument("--size", type=int, default=15,
                    help="board size of the games (default: %(default)s)")
    te.add_argument("--records-size", type=int, default=None,
                    help="board size of the records (--records only), when smaller than --size: "
                         "their openings are placed at a seeded random offset, e.g. 15x15 Gomocup "
                         "games for 20x20 (default: --size)")
    te.add_argument("--rule", default="freestyle",
                    help="freestyle, standard, renju or caro (default: %(default)s)")
    te.add_argument("--seed", type=int, default=1,
                    help="seed of the openings' choice and the match schedule (default: %(default)s)")
    te.add_argument("-j", "--workers", type=int, default=1,
                    help="games at a time (default: %(default)s)")
    te.add_argument("--record-format", choices=("sgf", "psq"), default="sgf",
                    help="game files: sgf keeps the teacher's messages (its evaluation) in the "
                         "move comments, for pack --eval-weight; psq, the format of "
                         "checkpoints/teacher15 and teacher15b, does not (default: %(default)s)")
    te.add_argument("--out", required=True,
                    help="folder: openings.txt, command.sh, match/ (the tournament; its games/ "
                         "are the records to pack); an existing one is resumed")


def _add_annotate(tsub: Any) -> None:
    an = tsub.add_parser("annotate", help="a teacher engine's move and evaluation for the positions of "
                         "finished tournaments (resumable), as training data")
    _add_teacher_engine(an, "this or --tc is needed")
    an.add_argument("--games", nargs="+", required=True,
                    help="tournament folders, or results files (.jsonl, .jsonl.xz)")
    an.add_argument("--player", default=None,
                    help="annotate only the positions this player was to move in (default: all "
                         "after the opening)")
    an.add_argument("--size", type=int, default=None,
                    help="board size of results files without their tournament.json")
    an.add_argument("--rule", default="freestyle",
                    help="freestyle, standard, renju or caro (default: %(default)s)")
    an.add_argument("--eval-weight", type=float, default=0.5,
                    help="share of the value target taken from the teacher's evaluation, the rest "
                         "from the game's result (default: %(default)s)")
    an.add_argument("--eval-scale", type=float, default=270.0,
                    help="tanh scale of the evaluation, in the teacher's units (default: %(default)s)")
    an.add_argument("--max-eval", type=float, default=None,
                    help="leave out of the shard the positions the teacher evaluates beyond this, "
                         "either way, and its mates (decided games); the answers are all kept, so a "
                         "rerun with another value only repacks (default: keep all)")
    an.add_argument("-j", "--workers", type=int, default=1,
                    help="teacher processes at a time (default: %(default)s)")
    an.add_argument("--out", required=True,
                    help="folder: annotations.jsonl, command.sh, annotated.npz; an existing one is "
                         "resumed")


def _add_export(tsub: Any) -> None:
    ex = tsub.add_parser("export", help="export a run's checkpoint to engine model files")
    src = ex.add_mutually_exclusive_group(required=True)
    src.add_argument("--run", help="run folder holding checkpoint.pt")
    src.add_argument("--checkpoint", help="a checkpoint file (e.g. a run's best.pt, or the weights-only "
                                          "files of tools/train/gpu_sweep.sh)")
    ex.add_argument("--out", required=True, help="output basename, e.g. models/freestyle15")
    ex.add_argument("--name", default=None,
                    help="the model's name in its .json (default: the basename of --out)")
    ex.add_argument("--notes", default="",
                    help="free text recorded in the model's .json (default: none)")
    ex.add_argument("--size", nargs="+", default=None,
                    help="board(s) the network was trained on: 15, 8x8, or several, e.g. 15 20 "
                         "(default: 15)")
    ex.add_argument("--n", type=int, default=None, help="winning length (recorded when given)")
    ex.add_argument("--rule", default=None, help="rule (recorded when given)")


def _add_selfplay(tsub: Any) -> None:
    sp = tsub.add_parser("selfplay", help="self-play games -> training shards + SGF (no torch)")
    sp.add_argument("--model", required=True,
                    help="exported model basename/file, or 'heuristic' / 'uniform'")
    sp.add_argument("--out", required=True, help="output folder (shards, sgf/, selfplay.jsonl)")
    sp.add_argument("--games", type=int, default=64, help="games to play (default: %(default)s)")
    sp.add_argument("-j", "--workers", type=int, default=1,
                    help="workers (0: in this process; default: %(default)s)")
    _add_backend_args(sp)
    sp.add_argument("--visits", type=int, default=400,
                    help="visits of a full search (default: %(default)s)")
    sp.add_argument("--fast-visits", type=int, default=64,
                    help="visits of a fast search (default: %(default)s)")
    sp.add_argument("--p-full", type=float, default=0.25,
                    help="fraction of full searches (default: %(default)s)")
    sp.add_argument("--size", default="15", help="15 or 20x15 (default: %(default)s)")
    sp.add_argument("--n", type=int, default=5, help="winning length (default: %(default)s)")
    sp.add_argument("--rule", default="freestyle",
                    help="freestyle, standard, renju or caro (default: %(default)s)")
    sp.add_argument("--seed", type=int, default=1,
                    help="seed of the games: game G draws its randomness from (seed, G) "
                         "(default: %(default)s)")
    sp.add_argument("--openings", default=None, help="openings file (default: random stones)")
    sp.add_argument("--prefix", default="sp", help="shard name prefix (default: %(default)s)")
    sp.add_argument("--games-per-shard", type=int, default=8,
                    help="games written to each shard (default: %(default)s)")
    sp.add_argument("--temp-moves", type=int, default=8,
                    help="plies after the opening whose move is sampled by visits, not the most "
                         "visited (default: %(default)s)")
    sp.add_argument("--resign-threshold", type=float, default=-0.9,
                    help="root value below which a side resigns (-2 disables resignation; "
                         "default: %(default)s)")
    sp.add_argument("--resign-plies", type=int, default=4,
                    help="consecutive plies (both sides) that must agree before a resignation "
                         "(default: %(default)s)")
    sp.add_argument("--resign-disabled", type=float, default=0.1,
                    help="fraction of games played out to measure false resignations "
                         "(default: %(default)s)")
    sp.add_argument("--json", action="store_true",
                    help="JSON lines even on a terminal (the default when stdout is not one)")


def _add_gate(tsub: Any) -> None:
    gt = tsub.add_parser("gate", help="candidate vs best in colour-swapped pairs, SPRT decision")
    gt.add_argument("--candidate", required=True,
                    help="the candidate: an exported model basename/file, heuristic or uniform")
    gt.add_argument("--best", required=True, help="the best so far, given the same way")
    gt.add_argument("--visits", type=int, default=200,
                    help="visits per move of both players (default: %(default)s)")
    gt.add_argument("--max-games", type=int, default=400,
                    help="games at most when the SPRT has not decided (default: %(default)s)")
    gt.add_argument("--elo0", type=float, default=0.0,
                    help="SPRT H0: the candidate is this many Elo stronger (default: %(default)s)")
    gt.add_argument("--elo1", type=float, default=30.0,
                    help="SPRT H1: the candidate is this many Elo stronger (default: %(default)s)")
    gt.add_argument("--alpha", type=float, default=0.05,
                    help="SPRT false-positive rate (default: %(default)s)")
    gt.add_argument("--beta", type=float, default=0.05,
                    help="SPRT false-negative rate (default: %(default)s)")
    gt.add_argument("--sprt-model", default="logistic", choices=["logistic", "normalized"],
                    help="Elo of the hypotheses: logistic or normalized (default: %(default)s)")
    gt.add_argument("--openings", default=None, help="openings file (default: random stones)")
    gt.add_argument("--size", default="15", help="15 or 20x15 (default: %(default)s)")
    gt.add_argument("--n", type=int, default=5, help="winning length (default: %(default)s)")
    gt.add_argument("--rule", default="freestyle",
                    help="freestyle, standard, renju or caro (default: %(default)s)")
    gt.add_argument("--seed", type=int, default=1,
                    help="seed of the openings and the players (default: %(default)s)")
    gt.add_argument("--journal", default=None, help="JSONL of finished pairs (resume)")
    gt.add_argument("-j", "--workers", type=int, default=0,
                    help="workers playing pairs in parallel (0: in this process; default: "
                         "%(default)s)")
    _add_backend_args(gt)
    gt.add_argument("--out", default=None, help="write the result JSON here too")


def _add_loop(tsub: Any) -> None:
    lp = tsub.add_parser("loop", help="AlphaZero loop: self-play, train, gate, promote (resumable)")
    lp.add_argument("--run", required=True, help="run folder (state.json, best.*, data/, ...)")
    lp.add_argument("--iterations", type=int, required=True, help="total iterations to reach")
    lp.add_argument("--max-minutes", type=float, default=None,
                    help="start no new iteration after this many minutes (the run resumes later)")
    lp.add_argument("--init-model", default=None,
                    help="start from a training checkpoint.pt (best) or an exported model")
    # settings: stored in RUN/config.json; given again, they replace the stored ones
    lp.add_argument("--size", default=None, help="board: 15 or 20x15 " + _STORED.format(15))
    lp.add_argument("--n", type=int, default=None, help="winning length " + _STORED.format(5))
    lp.add_argument("--rule", default=None,
                    help="freestyle, standard, renju or caro " + _STORED.format("freestyle"))
    lp.add_argument("--blocks", type=int, default=None,
                    help="residual blocks of the network " + _STORED.format(6))
    lp.add_argument("--channels", type=int, default=None,
                    help="channels of the residual tower; the heads get half " + _STORED.format(64))
    lp.add_argument("--games", type=int, default=None,
                    help="self-play games per iteration " + _STORED.format(64))
    lp.add_argument("-j", "--workers", type=int, default=None,
                    help="self-play and gate workers (0: in this process) " + _STORED.format(2))
    _add_backend_args(lp, default=None)
    lp.add_argument("--visits", type=int, default=None,
                    help="visits of a full self-play search " + _STORED.format(400))
    lp.add_argument("--fast-visits", type=int, default=None,
                    help="visits of a fast self-play search " + _STORED.format(64))
    lp.add_argument("--p-full", type=float, default=None,
                    help="fraction of full searches " + _STORED.format(0.25))
    lp.add_argument("--openings", default=None,
                    help="self-play openings file " + _STORED.format("random stones"))
    lp.add_argument("--window", type=int, default=None,
                    help="replay window in positions " + _STORED.format(250000))
    lp.add_argument("--min-positions", type=int, default=None,
                    help="positions needed before the first training; until then an iteration only "
                         "plays " + _STORED.format(2048))
    lp.add_argument("--steps", type=int, default=None,
                    help="training steps per iteration " + _STORED.format(500))
    lp.add_argument("--batch", type=int, default=None,
                    help="positions per training step " + _STORED.format(256))
    lp.add_argument("--lr", type=float, default=None,
                    help="learning rate per step " + _STORED.format(0.001))
    lp.add_argument("--threads", type=int, default=None,
                    help="torch CPU threads of the trainer " + _STORED.format(2))
    lp.add_argument("--device", default=None,
                    help="trainer device: auto (CUDA when present), cpu, cuda[:N]; self-play "
                         "always runs onnxruntime on the CPU " + _STORED.format("auto"))
    lp.add_argument("--trainer", choices=["auto", "driver", "worker"], default=None,
                    help="where training runs: driver (this process), worker (a pool worker; "
                         "on Ray an actor with --trainer-gpus GPUs when the cluster has them), "
                         "auto (default: a GPU worker when the Ray cluster has a GPU and this "
                         "machine has none, else the driver)")
    lp.add_argument("--trainer-gpus", type=float, default=None,
                    help="GPUs the training worker asks Ray for (default 1)")
    lp.add_argument("--train-chunk", type=int, default=None,
                    help="training steps per task on a worker: a lost worker loses at most this "
                         "many (default 0: the iteration's steps in one task)")
    lp.add_argument("--gate-games", type=int, default=None,
                    help="games at most per gate; 0: no gating, always promote "
                         + _STORED.format(200))
    lp.add_argument("--gate-visits", type=int, default=None,
                    help="visits per move in the gate " + _STORED.format(200))
    lp.add_argument("--gate-elo1", type=float, default=None,
                    help="the gate's SPRT H1 in Elo (H0 is 0) " + _STORED.format(30))
    lp.add_argument("--gate-openings", default=None,
                    help="the gate's openings file " + _STORED.format("random stones"))
    lp.add_argument("--seed", type=int, default=None, help="run seed " + _STORED.format(1))
    lp.add_argument("--json", action="store_true",
                    help="JSON lines even on a terminal (the default when stdout is not one)")


def _add_curve(tsub: Any) -> None:
    cv = tsub.add_parser("curve", help="learning curve: a loop run's candidates vs a fixed "
                                       "opponent (appends RUN/curve.jsonl)")
    cv.add_argument("--run", required=True, help="loop run folder (candidates/it*.json)")
    cv.add_argument("--opponent", default="uniform",
                    help="the opponent: uniform (= tactics), pure (rollouts), heuristic, or a model "
                         "path (default: %(default)s)")
    cv.add_argument("--visits", type=int, default=200,
                    help="the candidates' visits (default: %(default)s)")
    cv.add_argument("--opponent-visits", type=int, default=None, help="default: --visits")
    cv.add_argument("--games", type=int, default=20,
                    help="games per iteration, pairs x 2 (default: %(default)s)")
    cv.add_argument("--every", type=int, default=1,
                    help="every N-th iteration, and the last (default: %(default)s)")
    cv.add_argument("--iterations", type=int, nargs="*", default=None,
                    help="exactly these iterations")
    cv.add_argument("--seed", type=int, default=1,
                    help="seed of the openings and the players (default: %(default)s)")
    cv.add_argument("--out", default=None, help="default: RUN/curve.jsonl")


def _add_accuracy(tsub: Any) -> None:
    ac = tsub.add_parser("accuracy", help="policy-only top-1/top-3 of exported models on the "
                                          "held-out games of a packed shard (no torch)")
    ac.add_argument("models", nargs="+", help="exported model basenames or files")
    ac.add_argument("--data", required=True, help="a packed shard (train pack)")
    ac.add_argument("--val-fraction", type=float, default=0.03,
                    help="the supervised run's validation fraction (default: %(default)s)")
    ac.add_argument("--seed", type=int, default=1,
                    help="the supervised run's seed (default: %(default)s)")
    ac.add_argument("--backend", default="auto", choices=("auto", "onnx", "onnx-int8", "numpy"),
                    help="what runs the network: auto takes the int8 graph when the model has one, "
                         "else the float graph (default: %(default)s)")


def _add_quantize(tsub: Any) -> None:
    qu = tsub.add_parser("quantize", help="write the int8 graph of exported models (<base>.int8.onnx, "
                                          "recorded in the .json; the engine prefers it; no torch, "
                                          "needs onnx)")
    qu.add_argument("models", nargs="+", help="exported model basenames or files (with a .onnx graph)")
    qu.add_argument("--data", required=True, nargs="+",
                    help="packed shards (train pack) whose positions calibrate and check the graph; "
                         "one per board size for a network that plays several (e.g. a 15x15 and a "
                         "20x20 shard)")
    qu.add_argument("--positions", type=int, default=256,
                    help="calibration positions per board size (default: %(default)s)")
    qu.add_argument("--check", type=int, default=768,
                    help="other positions per board size on which int8 and float graphs are "
                         "compared (default: %(default)s)")
    qu.add_argument("--min-agreement", type=float, default=0.9,
                    help="refuse (write nothing) when fewer best moves agree, on any board size "
                         "(default: %(default)s)")
    qu.add_argument("--seed", type=int, default=0, help="seed of the position sample (default: %(default)s)")


def _add_plot(tsub: Any) -> None:
    pl = tsub.add_parser("plot", help="PNG of losses and strength of a run (matplotlib)")
    pl.add_argument("--run", required=True,
                    help="run folder: a loop run (loop.jsonl, train/log.jsonl, curve.jsonl) or a "
                         "supervised run (log.jsonl)")
    pl.add_argument("--out", required=True, help="output .png")
    pl.add_argument("--title", default=None,
                    help="the figure's title (default: training run FOLDER-NAME)")
    pl.add_argument("--dpi", type=int, default=100,
                    help="resolution of the PNG in dots per inch (default: %(default)s)")


def _size(text: str) -> Tuple[int, int]:
    """``15`` or ``20x15`` -> (width, height)."""
    w, _, h = str(text).lower().partition("x")
    return int(w), int(h or w)


def _add_backend_args(p: Any, default: Optional[str] = "local") -> None:
    p.add_argument("--backend", choices=["local", "ray"], default=default,
                   help="where workers run: local processes or Ray actors ("
                        + ("default: %(default)s)" if default is not None
                           else "default: the run's stored setting, else local)"))
    p.add_argument("--address", default=None,
                   help="Ray cluster: HOST:PORT, or auto (default: a private local instance)")


def _print_json(rec: Any) -> None:
    print(json.dumps(rec), flush=True)


def _emitter(use_json: bool, **display: Any) -> Tuple[Callable[[Dict[str, Any]], None], ContextManager[Any]]:
    """(callback, context manager): JSON lines, or a :class:`LiveDisplay` on a terminal."""
    import contextlib
    if use_json or not sys.stdout.isatty():
        return _print_json, contextlib.nullcontext()
    d = LiveDisplay(**display)
    return d, d


def _run_selfplay(args: Any) -> int:
    """``gomoku train selfplay`` (no torch needed)."""
    from gomoku_ai.training.selfplay import run_selfplay
    emit, ctx = _emitter(args.json, games=args.games)
    with ctx:
        summary = run_selfplay(args.model, args.out, games=args.games, workers=args.workers,
                               visits_full=args.visits, visits_fast=args.fast_visits,
                               p_full=args.p_full, board_size=_size(args.size), rule=args.rule,
                               n=args.n, seed=args.seed, openings=args.openings,
                               prefix=args.prefix, log=emit, backend=args.backend,
                               address=args.address,
                               games_per_shard=args.games_per_shard, temp_moves=args.temp_moves,
                               resign_threshold=args.resign_threshold,
                               resign_plies=args.resign_plies,
                               resign_disabled_fraction=args.resign_disabled)
        summary.pop("config", None)
        emit({"summary": summary})
    return 0


def _run_gate(args: Any) -> int:
    """``gomoku train gate`` (no torch needed)."""
    from gomoku_ai.training.gating import GateConfig, run_gate
    w, h = _size(args.size)
    cfg = GateConfig(visits=args.visits, max_games=args.max_games, elo0=args.elo0,
                     elo1=args.elo1, alpha=args.alpha, beta=args.beta, model=args.sprt_model,
                     seed=args.seed)
    res = run_gate(args.candidate, args.best, width=w, height=h, n=args.n, rule=args.rule,
                   openings=args.openings, config=cfg, journal=args.journal,
                   workers=args.workers, backend=args.backend, address=args.address)
    if args.out:
        from gomoku_ai.records import atomic_write_text
        atomic_write_text(args.out, json.dumps(res, indent=1) + "\n")
    _print_json(res)
    return 0


def _loop_settings(args: Any) -> Dict[str, Any]:
    """The ``loop`` options as :func:`gomoku_ai.training.loop.run_loop` settings (None: keep the stored or
    default value); ``--blocks`` / ``--channels`` change the architecture stored in ``RUN/config.json``."""
    cfg = {"rule": args.rule, "n": args.n, "games_per_iter": args.games,
           "workers": args.workers, "visits_full": args.visits,
           "visits_fast": args.fast_visits, "p_full": args.p_full, "openings": args.openings,
           "window": args.window, "min_positions": args.min_positions,
           "steps_per_iter": args.steps, "batch_size": args.batch, "lr": args.lr,
           "threads": args.threads, "device": args.device, "gate_games": args.gate_games,
           "gate_visits": args.gate_visits, "gate_elo1": args.gate_elo1,
           "gate_openings": args.gate_openings, "seed": args.seed,
           "backend": args.backend, "address": args.address, "trainer": args.trainer,
           "trainer_gpus": args.trainer_gpus, "train_chunk": args.train_chunk}
    if args.size is not None:
        cfg["width"], cfg["height"] = _size(args.size)
    if args.blocks is not None or args.channels is not None:
        from gomoku_ai.training.loop import LoopConfig
        arch = dict(LoopConfig().arch)
        stored = Path(args.run) / "config.json"
        if stored.exists():
            arch = dict(json.loads(stored.read_text(encoding="utf-8"))["arch"])
        if args.blocks is not None:
            arch["blocks"] = args.blocks
        if args.channels is not None:
            arch["channels"] = args.channels
            arch["head_channels"] = max(16, args.channels // 2)
            arch["value_fc"] = max(32, arch["head_channels"] * 2)
        cfg["arch"] = arch
    return cfg


def _loop_steps(args: Any) -> int:
    """Training steps per iteration, for the progress display: ``--steps``, else the stored, else the
    default."""
    stored_cfg = Path(args.run) / "config.json"
    steps = args.steps
    if steps is None and stored_cfg.exists():
        steps = json.loads(stored_cfg.read_text(encoding="utf-8")).get("steps_per_iter")
    if steps is None:
        from gomoku_ai.training.loop import LoopConfig
        steps = LoopConfig().steps_per_iter
    return steps


def _run_loop(args: Any) -> int:
    """``gomoku train loop`` (torch)."""
    from gomoku_ai.training.dataset import ShardError
    from gomoku_ai.training.loop import LoopError, LoopSettingsError, run_loop
    from gomoku_ai.training.remote import TrainerFailed, TrainerLost
    from gomoku_ai.training.trainer import CheckpointError
    from gomoku_ai.workers import WorkerError
    cfg = _loop_settings(args)
    emit, ctx = _emitter(args.json, iterations=args.iterations, games=args.games, steps=_loop_steps(args))
    try:
        with ctx:
            state = run_loop(args.run, args.iterations, cfg, init_model=args.init_model,
                             log=emit, max_seconds=None if args.max_minutes is None
                             else 60.0 * args.max_minutes)
    except (LoopError, LoopSettingsError, WorkerError, TrainerLost, TrainerFailed, CheckpointError,
            ShardError) as e:
        sys.stderr.write(f"gomoku train loop: {e}\n")
        return 1
    if isinstance(emit, LiveDisplay):
        print(json.dumps({"state": state}))
    else:
        emit({"state": state})
    return 0


def _run_curve(args: Any) -> int:
    """``gomoku train curve`` (no torch needed)."""
    from gomoku_ai.training.curve import strength_curve
    recs = strength_curve(args.run, opponent=args.opponent, visits=args.visits,
                          games=args.games, every=args.every, iterations=args.iterations,
                          opponent_visits=args.opponent_visits, seed=args.seed,
                          out=args.out, log=_print_json)
    _print_json({"curve": len(recs)})
    return 0


def _run_plot(args: Any) -> int:
    """``gomoku train plot`` (matplotlib)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        sys.stderr.write("gomoku train plot needs matplotlib: pip install -e '.[train]'\n")
        return 2
    from .plot import plot_run
    try:
        _print_json(plot_run(args.run, args.out, title=args.title, dpi=args.dpi))
    except FileNotFoundError as e:
        sys.stderr.write(f"gomoku train plot: {e}\n")
        return 2
    return 0


def _run_accuracy(args: Any) -> int:
    """``gomoku train accuracy`` (no torch needed)."""
    from gomoku_ai.training.accuracy import policy_accuracy
    try:
        for m in args.models:
            print(json.dumps(policy_accuracy(m, args.data, args.val_fraction, args.seed,
                                             backend=args.backend)),
                  flush=True)
    except (OSError, ValueError) as e:
        sys.stderr.write(f"gomoku train accuracy: {e}\n")
        return 2
    return 0


def _run_quantize(args: Any) -> int:
    """``gomoku train quantize`` (no torch; needs onnx)."""
    import numpy as np
    from gomoku_ai.net.weights import ModelError
    from gomoku_ai.net.quantize import quantize_model
    from gomoku_ai.training.dataset import ShardError, encode_positions, load_shard
    if args.positions <= 0 or args.check <= 0:
        sys.stderr.write("gomoku train quantize: --positions and --check must be positive\n")
        return 2
    try:
        cal, chk, sizes = [], [], set()
        for path in args.data:
            pos = load_shard(Path(path))
            n, size = len(pos.move), pos.shape
            if size in sizes:
                raise ValueError(f"{path}: a second {size[1]}x{size[0]} shard; give one per board size")
            sizes.add(size)
            if n < args.positions + args.check:
                raise ValueError(f"{path}: {n} positions, fewer than --positions + --check "
                                 f"({args.positions + args.check})")
            idx = np.random.default_rng(args.seed).choice(n, args.positions + args.check, replace=False)
            cal.append(encode_positions(pos, np.sort(idx[:args.positions])))
            chk.append(encode_positions(pos, np.sort(idx[args.positions:])))
        for m in args.models:
            block = quantize_model(m, cal, chk, min_agreement=args.min_agreement,
                                   source=", ".join(Path(p).name for p in args.data))
            print(json.dumps({"model": str(m), **block}), flush=True)
    except (OSError, ValueError, ShardError, ModelError) as e:
        sys.stderr.write(f"gomoku train quantize: {e}\n")
        return 2
    return 0


def _run_pack(args: Any) -> int:
    """``gomoku train pack`` (torch)."""
    from gomoku_ai.records import load_games, read_openings
    from gomoku_ai.training import dataset
    loader = load_games(args.records, on_error="skip", size=args.size)
    recs = list(loader)
    ops = read_openings(args.openings, width=args.size) if args.openings else None
    extra: Dict[str, Any] = {}
    scale = dataset.DEFAULT_EVAL_SCALE
    evals = None
    try:
        if args.eval_weight > 0:
            evals = [dataset.record_evals(r) for r in recs]   # the comments, parsed once
            if args.eval_scale == "auto":
                scale, n = dataset.fit_eval_scale(recs, evals=evals)
                extra["eval_fit_on"] = n
            else:
                scale = float(args.eval_scale)
            extra.update(eval_weight=args.eval_weight, eval_scale=round(scale, 1),
                         evals=sum(len(e) for e in evals))
        pos = dataset.positions_from_records(recs, openings=ops, eval_weight=args.eval_weight,
                                             eval_scale=scale, evals=evals)
    except ValueError as e:
        sys.stderr.write(f"gomoku train pack: {e}\n")
        return 2
    dataset.save_shard(pos, args.out)
    print(json.dumps({"games": len(recs), "positions": len(pos), **extra, "skipped_files":
                      [f"{s.path}: {s.reason}" for s in loader.skipped], "out": args.out}))
    return 0


def _run_supervised(args: Any) -> int:
    """``gomoku train supervised`` (torch)."""
    from gomoku_ai.training import dataset, trainer
    try:
        times = dataset.parse_repeats(args.repeat or [], args.data)
    except ValueError as e:
        sys.stderr.write(f"gomoku train supervised: {e}\n")
        return 2
    sets = trainer.group_by_size(dataset.load_shards(args.data, times))
    hc = args.head_channels or max(16, args.channels // 2)
    if args.time_schedule and args.max_seconds is None:
        sys.stderr.write("gomoku train supervised: --time-schedule needs --max-seconds\n")
        return 2
    try:
        cfg = trainer.TrainConfig(steps=args.steps, batch_size=args.batch, lr=args.lr,
                                  threads=args.threads, device=args.device,
                                  precision=args.precision, train_only=args.train_only,
                                  schedule_seconds=(args.max_seconds if args.time_schedule
                                                    else None),
                                  size_shares=trainer.parse_size_shares(args.size_share or []),
                                  arch={"blocks": args.blocks, "channels": args.channels,
                                        "head_channels": hc, "value_fc": max(32, hc * 2)})
        trainer.check_size_shares(cfg.size_shares, sets)
    except ValueError as e:
        sys.stderr.write(f"gomoku train supervised: {e}\n")
        return 2
    if args.warmup is not None:
        cfg.warmup_steps = args.warmup
    if args.value_weight is not None:
        if args.value_weight < 0:
            sys.stderr.write("gomoku train supervised: --value-weight must be >= 0\n")
            return 2
        cfg.value_weight = args.value_weight
        if cfg.train_only == "value" and not cfg.value_weight > 0:
            sys.stderr.write("gomoku train supervised: --train-only value needs --value-weight > 0\n")
            return 2
    try:
        tr = trainer.Trainer(cfg, Path(args.run), log=_print_json,
                             init=Path(args.init) if args.init else None)
    except trainer.CheckpointError as e:
        sys.stderr.write(f"gomoku train supervised: {e}\n")
        return 2
    tr.fit(sets, stop_after_s=args.max_seconds)
    return 0


def _run_export(args: Any) -> int:
    """``gomoku train export`` (torch)."""
    from gomoku_ai.training import trainer
    extra: Dict[str, Any] = {"board_sizes": [list(_size(s)) for s in args.size or ["15"]]}
    if args.n is not None:
        extra["win_length"] = args.n
    if args.rule is not None:
        extra["rule"] = args.rule
    ck = Path(args.checkpoint) if args.checkpoint else Path(args.run) / "checkpoint.pt"
    base = trainer.export_checkpoint(ck, Path(args.out),
                                     args.name or Path(args.out).name, args.notes,
                                     extra=extra)
    print(json.dumps({"exported": str(base)}))
    return 0


def _run_teacher(args: Any) -> int:
    """``gomoku train teacher``: write the openings once, then run (or resume) the tournament."""
    import shlex
    from gomoku_ai.records import load_games, read_openings, write_openings
    from gomoku_ai.rules import Rule
    from gomoku_ai.fileio import atomic_write_text
    from gomoku_ai.training.teacher import centre_openings, edge_openings, openings_from_records
    from ..tournament.cli import main as tournament_main

    out = Path(args.out)
    ops_path = out / "openings.txt"
    match = out / "match"
    if args.games <= 0 or args.workers <= 0 or (args.nodes_b is not None and args.nodes_b <= 0):
        sys.stderr.write("gomoku train teacher: --games, -j and --nodes-b must be positive\n")
        return 2
    try:
        rule = Rule.parse(args.rule)
        if args.records_size is not None and not args.records:
            raise ValueError("--records-size is for --records (random openings are drawn on the "
                             "--size board itself)")
        if args.exclude_openings is not None and not args.centre_openings:
            raise ValueError("--exclude-openings is for --centre-openings")
        rsize = args.size if args.records_size is None else args.records_size
        if not 5 <= rsize <= args.size:
            raise ValueError(f"--records-size must be 5..--size ({args.size}), got {rsize}")
        if not ops_path.exists():
            if args.edge_openings:
                ops = edge_openings((args.games + 1) // 2, args.min_plies, args.max_plies,
                                    args.size, args.size, rule, args.seed)
            elif args.centre_openings:
                exclude = [] if args.exclude_openings is None else \
                    read_openings(Path(args.exclude_openings), width=args.size, on_error="skip")
                ops = centre_openings((args.games + 1) // 2, args.min_plies, args.max_plies,
                                      args.size, args.size, rule, args.seed, exclude=exclude)
            else:
                loader = load_games(args.records, on_error="skip", size=rsize, rule=rule)
                ops = openings_from_records(loader, (args.games + 1) // 2, args.min_plies,
                                            args.max_plies, args.size, args.size, rule, args.seed,
                                            embed_smaller=rsize < args.size)
                if not ops:   # (the random openings raise themselves when they find too few)
                    raise ValueError(f"no usable opening in {' '.join(args.records)}")
            out.mkdir(parents=True, exist_ok=True)
            atomic_write_text(ops_path, write_openings(ops, width=args.size))
            source = ["--edge-openings"] if args.edge_openings else \
                ["--centre-openings"] if args.centre_openings else ["--records", *args.records]
            if args.exclude_openings is not None:
                source += ["--exclude-openings", args.exclude_openings]
            cmd = ["gomoku", "train", "teacher", "--engine", args.engine, *source,
                   "--games", str(args.games), "--min-plies", str(args.min_plies),
                   "--max-plies", str(args.max_plies), "--size", str(args.size), "--rule",
                   args.rule, "--seed", str(args.seed), "-j", str(args.workers),
                   "--record-format", args.record_format, "--out", args.out]
            cmd += ["--records-size", str(rsize)] if rsize != args.size else []
            cmd += ["--nodes", str(args.nodes)] if args.nodes else []
            cmd += ["--nodes-b", str(args.nodes_b)] if args.nodes_b else []
            cmd += ["--tc", args.tc] if args.tc else []
            atomic_write_text(out / "command.sh", " ".join(shlex.quote(a) for a in cmd) + "\n")
            print(json.dumps({"openings": len(ops), "file": str(ops_path)}), flush=True)
    except (OSError, ValueError) as e:
        sys.stderr.write(f"gomoku train teacher: {e}\n")
        return 2
    nodes_b = args.nodes_b or args.nodes
    targv = ["cmd=" + args.engine, "name=teacher-a", *([f"nodes={args.nodes}"] if args.nodes else []),
             "cmd=" + args.engine, "name=teacher-b", *([f"nodes={nodes_b}"] if nodes_b else []),
             "--games", str(args.games), "-j", str(args.workers), "--openings", str(ops_path),
             "--seed", str(args.seed), "--records", args.record_format, "--size", str(args.size),
             "--rule", args.rule, "--no-live", "--report-every", "100", "--out", str(match)]
    if args.tc:
        targv += ["--tc", args.tc]
    if (match / "tournament.json").exists():
        targv.append("--resume")
    return tournament_main(targv)


def _run_annotate(args: Any) -> int:
    """``gomoku train annotate`` (no torch)."""
    from .annotate import run as run_annotate
    return run_annotate(args)


#: the subcommands that need no torch, and those that do (checked before they run)
_TORCH_FREE: Dict[str, Callable[[Any], int]] = {
    "teacher": _run_teacher, "annotate": _run_annotate, "selfplay": _run_selfplay, "gate": _run_gate,
    "curve": _run_curve, "plot": _run_plot, "accuracy": _run_accuracy, "quantize": _run_quantize}
_WITH_TORCH: Dict[str, Callable[[Any], int]] = {
    "pack": _run_pack, "supervised": _run_supervised, "export": _run_export, "loop": _run_loop}


def run(args: Any) -> int:
    """Run the parsed ``gomoku train`` subcommand; returns the exit code."""
    cmd = _TORCH_FREE.get(args.train_command)
    if cmd is not None:
        return cmd(args)
    try:
        import torch  # noqa: F401
    except ImportError:
        sys.stderr.write("gomoku train needs torch: pip install -e '.[train]'\n")
        return 2
    cmd = _WITH_TORCH.get(args.train_command)
    return cmd(args) if cmd is not None else 2
