"""``gomoku train annotate``: a teacher engine's move and evaluation for the positions of finished games.

The teacher games of ``gomoku train teacher`` show the network the positions a strong engine reaches
against itself. The positions where our engine goes wrong are others: its own, against its opponents.
This command takes finished tournaments (say ours against Rapfi), asks a pbrain engine (Rapfi at a
fixed node count) about every position in which ``--player`` was to move after the opening, and packs
each as a training position with the teacher's move as the policy target -- imitation learning on
the states the learner itself visits (DAgger).

    gomoku train annotate --engine ~/sparring/rapfi/build/pbrain-rapfi --nodes 200000 \\
        --games runs/s26/r100k-20-ft runs/s26/aiwine-20-ft --player ours --out runs/ann20 -j 2

Value target, from the side to move: ``(1 - w) * result + w * tanh(eval / scale)`` as ``pack
--eval-weight`` mixes it (the result from the board: a five or a full board, never a forfeit; a mate
is +-1), the evaluation alone where the game has no result on the board, the result alone where the
teacher printed no evaluation.

``--out`` is a folder: ``annotations.jsonl`` (one line per finished game: its key, the annotated
plies, the teacher's moves and evaluations, appended and flushed as each game ends), ``command.sh``
and the shard ``annotated.npz`` (rewritten at the end of every run from all the lines). A rerun with
the same folder resumes: games already in ``annotations.jsonl`` are not asked again. Sources are
tournament folders (``results.jsonl``, board size from ``tournament.json``) or results files, plain or
``.xz`` (board size from ``--size``). Torch-free.
"""
from __future__ import annotations

import json
import os
import queue
import shlex
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from gomoku_ai.board import Board
from gomoku_ai.fileio import atomic_write_text
from gomoku_ai.match import TimeControl
from gomoku_ai.rules import Rule, rule_to_gomocup
from gomoku_ai.training import dataset
from protocol.manager import EngineClient, EngineError, EngineState
from tools.tournament.config import TournamentError, read_config
from tools.tournament.results import ResultsFormatError, read_rows

ANNOTATIONS = "annotations.jsonl"
SHARD = "annotated.npz"


class AnnotateError(ValueError):
    """A source or an annotations file that cannot be used; the message names the file."""


@dataclass
class SourceGame:
    """One finished game to annotate: ``key`` is unique across the sources (the source path and the game's
    number in it), ``moves`` are (x, y) Black first, ``opening_plies`` the stones the tournament placed,
    ``winner`` the results row's ("black", "white", "draw" or None)."""

    key: str
    width: int
    height: int
    moves: List[Tuple[int, int]]
    opening_plies: int
    black: str
    white: str
    winner: Optional[str] = None

    def plies(self, player: Optional[str]) -> List[int]:
        """The plies (the number of stones before the move) to annotate: after the opening, up to the
        game's last move, where ``player`` was to move (None: every one); none once the board is won."""
        b = Board(self.width, self.height)
        out = []
        for i, (x, y) in enumerate(self.moves):
            mover = self.black if i % 2 == 0 else self.white
            if i >= self.opening_plies and (player is None or mover == player):
                out.append(i)
            if b.push(b.index(x, y)):
                break
        return out


def _source_rows(src: Path) -> Tuple[List[Dict[str, Any]], Optional[Tuple[int, int]]]:
    """The game rows of a tournament folder or results file, and the board size when the folder says it."""
    size = None
    path = src
    if src.is_dir():
        path = src / "results.jsonl"
        if (src / "tournament.json").is_file():
            try:
                c = read_config(src)
                size = (int(c["width"]), int(c["height"]))
            except TournamentError as e:
                raise AnnotateError(str(e)) from None
            except (KeyError, TypeError, ValueError) as e:
                raise AnnotateError(f"{src / 'tournament.json'}: not a tournament configuration ({e})") from None
    try:
        rows = read_rows(path)
    except ResultsFormatError as e:
        raise AnnotateError(str(e)) from None
    for n, row in enumerate(rows, 1):
        if not isinstance(row.get("moves"), list):
            raise AnnotateError(f"{path}, game row {n}: not a game result (no moves list)")
    return rows, size


def read_games(sources: Sequence[str], size: Optional[int] = None) -> List[SourceGame]:
    """Every game of ``sources`` (see the module docstring); ``size`` is the board of results files
    that do not say theirs. Raises AnnotateError naming the file for a source that cannot be read."""
    games = []
    for s in sources:
        src = Path(s)
        rows, wh = _source_rows(src)
        if wh is None:
            if size is None:
                raise AnnotateError(f"{src}: a results file without tournament.json; give --size")
            wh = (size, size)
        for n, row in enumerate(rows):
            try:
                moves = [(int(x), int(y)) for x, y in row["moves"]]
                g = SourceGame(f"{src}#{row.get('game', n)}", wh[0], wh[1], moves,
                               int(row.get("opening_plies", 0)), str(row["black"]), str(row["white"]),
                               row.get("winner"))
            except (KeyError, TypeError, ValueError) as e:
                raise AnnotateError(f"{src}: game {n} has no usable moves or players ({e})") from None
            if any(not (0 <= x < g.width and 0 <= y < g.height) for x, y in moves):
                raise AnnotateError(f"{src}: game {n} has a move off the {g.width}x{g.height} board")
            games.append(g)
    keys = [g.key for g in games]
    if len(set(keys)) != len(keys):
        raise AnnotateError("a source is given twice (the same game keys)")
    return games


def read_annotations(path: Path) -> Dict[str, Dict[str, Any]]:
    """The finished games of an ``annotations.jsonl`` by key. A last line cut short (a run killed while
    writing it) is dropped and the file rewritten without it; any other bad line is refused."""
    if not path.exists():
        return {}
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    out: Dict[str, Dict[str, Any]] = {}
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if not isinstance(row, dict) or not {"key", "plies", "moves", "evals"} <= set(row):
                raise ValueError("missing fields")
        except ValueError as e:
            if n == len(lines) and not text.endswith("\n"):     # the unfinished last line
                atomic_write_text(path, "\n".join(lines[:-1]) + "\n" if n > 1 else "")
                break
            raise AnnotateError(f"{path}, line {n}: not an annotation ({e})") from None
        out[row["key"]] = row
    return out


def annotated_games(path: Path, size: Optional[int] = None) -> Tuple[Dict[str, Dict[str, Any]], List[SourceGame]]:
    """An annotations file's answers by game key (:func:`read_annotations`, in file order) and the games they
    annotate, read from the results files their keys name (:func:`read_games`, sources in sorted order;
    ``size`` for results files without a tournament.json). Raises AnnotateError for an answer whose game
    is not in its results file."""
    anns = read_annotations(path)
    games = [g for g in read_games(sorted({k.rsplit("#", 1)[0] for k in anns}), size) if g.key in anns]
    missing = set(anns) - {g.key for g in games}
    if missing:
        raise AnnotateError(f"{path}: {len(missing)} answered games are not in their results files "
                            f"(first: {sorted(missing)[0]})")
    return anns, games


def answer_eval(text: Optional[str]) -> Optional[float]:
    """An annotation's evaluation text (``"93"``, ``"+M3"``; None when the teacher printed none) as a
    number from the side to move, a mate +-inf (:func:`gomoku_ai.training.dataset.parse_eval`)."""
    return None if text is None else dataset.parse_eval(f"Eval {text}")


def game_record_positions(g: SourceGame) -> dataset.Positions:
    """Every position of the game, row i the position before ply i, each valued by the game's result
    as the board gives it (a five or a full board, never a forfeit), from the side to move."""
    b = Board(g.width, g.height)
    for x, y in g.moves:
        if b.push(b.index(x, y)):
            break
    outcome = b.outcome()
    winner = None if outcome is None else (0 if outcome.winner is None else int(outcome.winner))
    flat = [y * g.width + x for x, y in g.moves]
    return dataset.positions_from_games([(flat, (g.width, g.height), winner)])


def game_positions(g: SourceGame, ann: Dict[str, Any], eval_weight: float, eval_scale: float,
                   gid: int, max_eval: Optional[float] = None) -> Optional[dataset.Positions]:
    """The annotated positions of one game (None: none usable); a teacher move that is not an empty
    point of the board is left out, and so is, with ``max_eval``, a position the teacher evaluates
    beyond it either way (a mate always: a decided game)."""
    every = game_record_positions(g)
    rows, moves, evals = [], [], []
    for p, (tx, ty), ev in zip(ann["plies"], ann["moves"], ann["evals"]):
        e = answer_eval(ev)
        on_board = 0 <= tx < g.width and 0 <= ty < g.height and int(p) < len(every)
        if on_board and every.cells[int(p), ty, tx] == 0 and not (
                max_eval is not None and e is not None and abs(e) > max_eval):
            rows.append(int(p))
            moves.append(ty * g.width + tx)
            evals.append(e)
    if not rows:
        return None
    pos = every.subset(np.array(rows))
    pos.move = np.array(moves, np.int16)
    for k, e in enumerate(evals):
        pos.z[k], pos.zw[k] = dataset.mixed_value(float(pos.z[k]), float(pos.zw[k]), e, eval_weight, eval_scale)
    pos.game = np.full(len(rows), gid, np.int32)
    return pos


def build_shard(games: Sequence[SourceGame], anns: Dict[str, Dict[str, Any]], eval_weight: float,
                eval_scale: float, max_eval: Optional[float] = None) -> Optional[dataset.Positions]:
    """All annotated positions of ``games`` (one board size), one game id per game, without those
    evaluated beyond ``max_eval`` (see :func:`game_positions`); None when none."""
    parts = []
    for g in games:
        a = anns.get(g.key)
        if a is not None:
            p = game_positions(g, a, eval_weight, eval_scale, 0, max_eval)   # concat numbers the games
            if p is not None:
                parts.append(p)
    return dataset.Positions.concat(parts) if parts else None


class Teacher:
    """One teacher engine process, asked for its move and evaluation (Rapfi's ``Eval`` on a MESSAGE
    line; None when it prints none) of a position given as a BOARD block."""

    def __init__(self, cmd: Sequence[str], nodes: Optional[int], tc: TimeControl, rule: Rule) -> None:
        self.client = EngineClient(cmd, move_timeout_ms=(tc.turn_ms or 300_000.0) + 5000.0)
        self.client.board_always = True     # a BOARD block every time: the games are not its own
        self.infos: List[Tuple[str, Any]] = []
        if tc.turn_ms:
            self.infos.append(("timeout_turn", tc.turn_ms))
        self.infos += [("timeout_match", tc.match_ms), ("game_type", 1), ("rule", rule_to_gomocup(rule))]
        if nodes:
            self.infos.append(("max_node", nodes))
        self.size: Optional[Tuple[int, int]] = None

    def ask(self, width: int, height: int, moves: Sequence[Tuple[int, int]]) -> Tuple[Tuple[int, int],
                                                                                       Optional[str]]:
        """((x, y), evaluation text such as ``-35`` or ``+M7``) for the side to move after ``moves``."""
        c = self.client
        if c.state in (EngineState.STOPPED, EngineState.DEAD) or not c.alive or self.size != (width, height):
            c.ensure_started()
            c.new_game(width, height, self.infos)
            self.size = (width, height)
        rep = c.play(moves)
        ev = None
        for m in rep.messages:
            hit = dataset.EVAL_RE.search(m)
            if hit is not None:
                ev = "".join(hit.groups())
        return (rep.x, rep.y), ev

    def close(self) -> None:
        self.client.quit()


def _annotate_game(t: Teacher, g: SourceGame, plies: Sequence[int],
                   stop: Optional[threading.Event] = None) -> Dict[str, Any]:
    """Ask ``t`` about each of ``plies`` of ``g``; one retry with a fresh process after an engine failure
    (a second one propagates, and so does the first once ``stop`` is set: an interrupted run's killed
    teacher is not restarted)."""
    moves, evals = [], []
    for p in plies:
        for attempt in (0, 1):
            try:
                mv, ev = t.ask(g.width, g.height, g.moves[:p])
                break
            except EngineError:
                if attempt or (stop is not None and stop.is_set()):
                    raise
        moves.append(list(mv))
        evals.append(ev)
    return {"key": g.key, "plies": list(plies), "moves": moves, "evals": evals}


def annotate(games: Sequence[SourceGame], cmd: Sequence[str], out: Path, player: Optional[str],
             nodes: Optional[int], tc: TimeControl, rule: Rule, workers: int = 1,
             progress_every_s: float = 30.0) -> Dict[str, Any]:
    """Annotate the games of ``games`` not yet in ``out/annotations.jsonl`` with ``workers`` teacher
    processes, appending each finished game to it (flushed and synced); prints a JSON progress line every
    ``progress_every_s`` seconds. Returns a summary (games and positions done this run, failures)."""
    path = out / ANNOTATIONS
    done = read_annotations(path)
    todo: "queue.Queue[Tuple[SourceGame, List[int]]]" = queue.Queue()
    for g in games:
        plies = g.plies(player) if g.key not in done else []
        if plies:
            todo.put((g, plies))
    stats: Dict[str, int] = {"games": 0, "positions": 0, "to_do": todo.qsize()}
    failed: List[str] = []
    lock = threading.Lock()
    stop = threading.Event()
    teachers: List[Teacher] = []
    t0 = time.monotonic()

    def work() -> None:
        t = Teacher(cmd, nodes, tc, rule)
        with lock:
            teachers.append(t)
        try:
            while not stop.is_set():
                try:
                    g, plies = todo.get_nowait()
                except queue.Empty:
                    return
                try:
                    row = _annotate_game(t, g, plies, stop)
                except EngineError as e:
                    with lock:
                        failed.append(f"{g.key}: {e}")
                    continue
                with lock, open(path, "a", encoding="utf-8") as f:
                    f.write(json.dumps(row) + "\n")
                    f.flush()
                    os.fsync(f.fileno())
                    stats["games"] += 1
                    stats["positions"] += len(row["plies"])
        finally:
            t.close()

    threads = [threading.Thread(target=work, daemon=True) for _ in range(max(1, workers))]
    for th in threads:
        th.start()
    try:
        while any(th.is_alive() for th in threads):
            for th in threads:
                th.join(timeout=progress_every_s / len(threads))
            with lock:
                el = time.monotonic() - t0
                print(json.dumps({"games": stats["games"], "of": stats["to_do"], "positions": stats["positions"],
                                  "positions_per_s": round(stats["positions"] / max(el, 1e-9), 2),
                                  "elapsed_s": round(el)}), flush=True)
    except BaseException:
        # interrupted (Ctrl-C, SIGTERM): no engine may outlive the run; finished games are on disk
        stop.set()
        for _ in range(2):  # again after the workers end: none may have started one since
            with lock:
                for t in teachers:
                    t.client.kill("annotate interrupted")
            for th in threads:
                th.join(timeout=2.0)
        raise
    return {**stats, "failed": failed}


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def run(args: Any) -> int:
    """``gomoku train annotate``: see the module docstring."""
    try:
        rule = Rule.parse(args.rule)
        tc = TimeControl.parse(args.tc) if args.tc else TimeControl()
        if not args.nodes and not args.tc:
            raise AnnotateError("give the teacher's strength: --nodes N or --tc")
        if args.max_eval is not None and not args.max_eval > 0:
            raise AnnotateError("--max-eval must be > 0")
        if not 0.0 <= args.eval_weight <= 1.0 or not args.eval_scale > 0:
            raise AnnotateError("need 0 <= --eval-weight <= 1 and --eval-scale > 0")
        games = read_games(args.games, args.size)
        sizes = {(g.width, g.height) for g in games}
        if len(sizes) > 1:
            raise AnnotateError(f"games on more than one board size {sorted(sizes)}: one size a run")
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        read_annotations(out / ANNOTATIONS)          # refuse a damaged file before any engine starts
    except (AnnotateError, ValueError, OSError) as e:
        sys.stderr.write(f"gomoku train annotate: {e}\n")
        return 2
    cmd = ["gomoku", "train", "annotate", "--engine", args.engine, "--games", *args.games, "--rule", args.rule,
           "--eval-weight", str(args.eval_weight), "--eval-scale", str(args.eval_scale), "-j", str(args.workers),
           "--out", args.out]
    cmd += (["--player", args.player] if args.player else []) + (["--nodes", str(args.nodes)] if args.nodes else [])
    cmd += (["--tc", args.tc] if args.tc else []) + (["--size", str(args.size)] if args.size else [])
    cmd += ["--max-eval", str(args.max_eval)] if args.max_eval is not None else []
    atomic_write_text(out / "command.sh", " ".join(shlex.quote(a) for a in cmd) + "\n")
    main = threading.current_thread() is threading.main_thread()
    before = signal.signal(signal.SIGTERM, _interrupt) if main else None   # kill -TERM stops it as Ctrl-C
    try:
        stats = annotate(games, shlex.split(args.engine), out, args.player, args.nodes, tc, rule, args.workers)
    except KeyboardInterrupt:
        sys.stderr.write(f"gomoku train annotate: interrupted; the finished games are in {out / ANNOTATIONS} "
                         "(rerun the same command to resume)\n")
        return 130
    finally:
        if main:
            signal.signal(signal.SIGTERM, before)
    pos = build_shard(games, read_annotations(out / ANNOTATIONS), args.eval_weight, args.eval_scale,
                      args.max_eval)
    if pos is not None:
        dataset.save_shard(pos, out / SHARD)
    with_eval = 0 if pos is None else int(np.count_nonzero(pos.zw))
    print(json.dumps({"done": {k: v for k, v in stats.items() if k != "failed"}, "failed": len(stats["failed"]),
                      "shard": str(out / SHARD) if pos is not None else None,
                      "positions": 0 if pos is None else len(pos), "with_value": with_eval}), flush=True)
    for f in stats["failed"]:
        sys.stderr.write(f"gomoku train annotate: not annotated (a rerun retries it): {f}\n")
    return 1 if stats["failed"] else 0
