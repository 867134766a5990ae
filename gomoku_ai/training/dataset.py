"""Training positions: building them from game records and self-play, and storing them as shards.

A shard is a compressed ``.npz`` with, for N positions on one board size:

=========  ============  =================================================================
key        shape/dtype   meaning
=========  ============  =================================================================
cells      (N,H,W) int8  0 empty, 1 black, 2 white, 3 wall (the board before the move)
stm        (N,) int8     side to move (1 black, 2 white)
last       (N,) int16    flat index of the previous move, -1 if none
move       (N,) int16    the move played (supervised target), -1 when ``pi`` is the target
pi         (N,H*W) f16   search visit distribution (self-play target); absent in SL shards
z          (N,) f32      final result for the side to move: 1 win, -1 loss, 0 draw
zw         (N,) f32      weight of the value target (0 when the result is unknown)
game       (N,) int32    game id within the shard (validation splits by game, never by position)
=========  ============  =================================================================

Shards are written atomically and refused with a message naming the file when they are corrupt.

Value targets from a teacher's evaluation: a teacher engine that prints its evaluation with each
move (Rapfi: ``MESSAGE ... | Eval -60 | ...``, ``Eval +M5`` for a win in 5) has it kept in the
move's SGF comment by the tournament runner. :func:`positions_from_records` with ``eval_weight``
w > 0 mixes it in: ``z = (1 - w) * result + w * tanh(eval / eval_scale)``, from the mover's point of
view (the engine evaluates the position it is to move in); a mate is +-1. :func:`fit_eval_scale`
finds the scale from the games' results.
"""
from __future__ import annotations

import math
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from ..board import Board
from ..fileio import atomic_open

if TYPE_CHECKING:
    from ..records import GameRecord

SHARD_KEYS = ("cells", "stm", "last", "move", "z", "zw", "game")
#: a teacher's evaluation in a move comment: Rapfi's ``Eval 106``, ``Eval -M12``, ``Eval +M5``
EVAL_RE = re.compile(r"\bEval\s+([+-]?)(M?)(\d+)\b")
#: tanh scale of Rapfi's classical evaluation (its units): :func:`fit_eval_scale` gave 264 on the
#: first 1,167 games of checkpoints/teacher15c (Rapfi at 50k nodes against itself, 40,721
#: evaluations) and 379 on 77 games of Rapfi (10k and 100k nodes) against this engine
DEFAULT_EVAL_SCALE = 270.0


class ShardError(ValueError):
    """A shard file that cannot be used; the message names the file."""


@dataclass
class Positions:
    """A set of training positions (see the module docstring for the fields)."""

    cells: np.ndarray
    stm: np.ndarray
    last: np.ndarray
    move: np.ndarray
    z: np.ndarray
    zw: np.ndarray
    game: np.ndarray
    pi: Optional[np.ndarray] = None

    def __len__(self) -> int:
        return int(self.cells.shape[0])

    @property
    def shape(self) -> Tuple[int, int]:
        return int(self.cells.shape[1]), int(self.cells.shape[2])

    def subset(self, idx: np.ndarray) -> "Positions":
        return Positions(self.cells[idx], self.stm[idx], self.last[idx], self.move[idx],
                         self.z[idx], self.zw[idx], self.game[idx],
                         None if self.pi is None else self.pi[idx])

    def policy_targets(self, idx: np.ndarray) -> np.ndarray:
        """Dense (len(idx), H*W) float32 policy targets (one-hot for SL, visits for self-play)."""
        h, w = self.shape
        out = np.zeros((len(idx), h * w), np.float32)
        mv = self.move[idx]
        has = mv >= 0
        out[np.flatnonzero(has), mv[has]] = 1.0
        if self.pi is not None and (~has).any():
            rows = np.flatnonzero(~has)
            p = self.pi[idx[rows]].astype(np.float32)
            p /= np.maximum(p.sum(axis=1, keepdims=True), 1e-9)
            out[rows] = p
        return out

    @staticmethod
    def concat(parts: Sequence["Positions"]) -> "Positions":
        if not parts:
            raise ValueError("no positions")
        shapes = {p.shape for p in parts}
        if len(shapes) != 1:
            raise ValueError(f"positions of different board sizes: {sorted(shapes)}")
        offset = 0
        games = []
        for p in parts:
            games.append(p.game + offset)
            offset += int(p.game.max()) + 1 if len(p) else 0
        any_pi = any(p.pi is not None for p in parts)
        pis = None
        if any_pi:
            h, w = parts[0].shape
            pis = np.concatenate([p.pi if p.pi is not None else
                                  np.zeros((len(p), h * w), np.float16) for p in parts])
        cols = {k: np.concatenate([getattr(p, k) for p in parts])
                for k in ("cells", "stm", "last", "move", "z", "zw")}
        return Positions(**cols, game=np.concatenate(games), pi=pis)


def positions_from_games(games: Iterable[Tuple[Sequence[int], Tuple[int, int], Optional[int]]],
                         skip_prefix: int = 0, openings: Optional[List[Tuple[int, ...]]] = None
                         ) -> Positions:
    """Supervised positions from games given as (flat moves, (width, height), winner).

    ``winner`` is BLACK, WHITE, 0 for a draw or None when unknown (value weight 0). The first
    ``skip_prefix`` plies, and any prefix equal to one of ``openings`` (tuples of flat moves: stones
    placed by the tournament, not chosen by the players), give no positions.
    """
    cells, stm, last, move, z, zw, game = [], [], [], [], [], [], []
    gid = 0
    for moves, (w, h), winner in games:
        skip = skip_prefix
        if openings:
            for op in openings:
                if len(op) <= len(moves) and tuple(moves[:len(op)]) == tuple(op):
                    skip = max(skip, len(op))
        b = Board(w, h)
        for i, m in enumerate(moves):
            if i >= skip:
                cells.append(b.cells.copy())
                stm.append(b.side_to_move)
                last.append(b.moves[-1] if b.moves else -1)
                move.append(m)
                if winner is None:
                    z.append(0.0)
                    zw.append(0.0)
                else:
                    z.append(0.0 if winner == 0 else (1.0 if winner == b.side_to_move else -1.0))
                    zw.append(1.0)
                game.append(gid)
            if b.push(m):
                break
        gid += 1
    if not cells:
        raise ValueError("no positions in these games")
    return Positions(np.stack(cells).astype(np.int8), np.array(stm, np.int8),
                     np.array(last, np.int16), np.array(move, np.int16),
                     np.array(z, np.float32), np.array(zw, np.float32), np.array(game, np.int32))


def positions_from_records(records: Iterable["GameRecord"],
                           openings: Optional[Sequence[Sequence[Tuple[int, int]]]] = None,
                           skip_prefix: int = 0, eval_weight: float = 0.0,
                           eval_scale: float = DEFAULT_EVAL_SCALE,
                           evals: Optional[Sequence[Dict[int, float]]] = None) -> Positions:
    """Supervised positions from :class:`gomoku_ai.records.GameRecord` objects (one board size).

    ``eval_weight`` > 0: where a move comment holds the teacher's evaluation, the value target is
    ``(1 - w) * result + w * tanh(eval / eval_scale)`` (just the evaluation, weight 1, where the
    result is unknown); see the module docstring. ``evals``: :func:`record_evals` of each record,
    when the caller has them already."""
    if not 0.0 <= eval_weight <= 1.0 or not eval_scale > 0:
        raise ValueError(f"need 0 <= eval_weight <= 1 and eval_scale > 0, got {eval_weight}, "
                         f"{eval_scale}")
    records = list(records)
    items: List[Tuple[List[int], Tuple[int, int], Optional[int]]] = []
    for rec in records:
        w, h = rec.width, rec.height
        flat = [y * w + x for x, y in rec.moves]
        # the value target comes from the board (a five or a full board), never from a forfeit
        outcome = rec.board_outcome()
        winner: Optional[int] = None
        if outcome is not None:
            winner = 0 if outcome.winner is None else int(outcome.winner)
        items.append((flat, (w, h), winner))
    op = None
    if openings:
        op = [tuple(int(y) * items[0][1][0] + int(x) for x, y in o) for o in openings] if items else []
    pos = positions_from_games(items, skip_prefix=skip_prefix, openings=op)
    if eval_weight > 0:
        _mix_evals(pos, [record_evals(r) for r in records] if evals is None else evals,
                   eval_weight, eval_scale)
    return pos


def _mix_evals(pos: Positions, evals: Sequence[Dict[int, float]], weight: float,
               scale: float) -> None:
    """Mix the teacher's evaluations into ``pos.z`` in place (game ids index ``evals``; a
    position's ply is its number of stones)."""
    plies = ((pos.cells == 1) | (pos.cells == 2)).sum(axis=(1, 2))
    for i in range(len(pos)):
        pos.z[i], pos.zw[i] = mixed_value(float(pos.z[i]), float(pos.zw[i]),
                                          evals[int(pos.game[i])].get(int(plies[i])), weight, scale)


def mixed_value(z: float, zw: float, e: Optional[float], weight: float, scale: float) -> Tuple[float, float]:
    """The value target (z, weight) of a position whose result target is ``z`` (weight ``zw``, 0 when
    the result is unknown) and whose teacher evaluation is ``e`` (None: none): ``(1 - weight) * z +
    weight * tanh(e / scale)``, the evaluation alone without a result, the result alone without one."""
    if e is None:
        return z, zw
    v = eval_value(e, scale)
    return ((1.0 - weight) * z + weight * v, 1.0) if zw > 0 else (v, 1.0)


def parse_eval_mate(comment: str) -> Optional[Tuple[float, Optional[int]]]:
    """(evaluation, mate length in plies) in a move comment, for the side that moved, in the
    teacher's units; a mate is +inf / -inf with its length, else the length is None; None when the
    comment has no evaluation."""
    m = EVAL_RE.search(comment)
    if m is None:
        return None
    sign = -1.0 if m.group(1) == "-" else 1.0
    if m.group(2):
        return sign * math.inf, int(m.group(3))
    return sign * float(m.group(3)), None


def parse_eval(comment: str) -> Optional[float]:
    """The evaluation of :func:`parse_eval_mate` without the mate length."""
    e = parse_eval_mate(comment)
    return None if e is None else e[0]


def record_evals(rec: "GameRecord") -> Dict[int, float]:
    """Ply -> the mover's evaluation of the position before that move, from the record's move
    comments (see :func:`parse_eval`)."""
    out: Dict[int, float] = {}
    for ply, text in (rec.metadata.get("move_comments") or {}).items():
        e = parse_eval(str(text))
        if e is not None:
            out[int(ply)] = e
    return out


def eval_value(e: float, scale: float) -> float:
    """An evaluation as a value in [-1, 1]: ``tanh(e / scale)`` (a mate: +-1)."""
    if math.isinf(e):
        return 1.0 if e > 0 else -1.0
    return math.tanh(e / scale)


def fit_eval_scale(records: Iterable["GameRecord"], lo: float = 20.0, hi: float = 5000.0,
                   evals: Optional[Sequence[Dict[int, float]]] = None) -> Tuple[float, int]:
    """The tanh scale under which a teacher's evaluations best predict the games' results (from
    the board: a five or a full board), and how many evaluations it was fitted on.

    Least squares of ``tanh(e / s)`` against the mover's result (1, 0 for a draw, -1), over a
    log-spaced grid of s in [lo, hi]; mates are left out (they say nothing about the scale).
    Raises ValueError when no record has both evaluations and a result. ``evals``: the records'
    :func:`record_evals`, when the caller has them already."""
    es: List[float] = []
    zs: List[float] = []
    records = list(records)
    per_record = [record_evals(r) for r in records] if evals is None else evals
    for rec, rec_evals in zip(records, per_record):
        outcome = rec.board_outcome()
        if outcome is None:
            continue
        for ply, e in rec_evals.items():
            if math.isinf(e):
                continue
            mover = 1 if ply % 2 == 0 else 2
            es.append(e)
            zs.append(0.0 if outcome.winner is None else (1.0 if outcome.winner == mover else -1.0))
    if not es:
        raise ValueError("no evaluations with a known result in these records")
    e_arr, z_arr = np.array(es), np.array(zs)
    grid = np.exp(np.linspace(math.log(lo), math.log(hi), 200))
    loss = [float(np.mean((np.tanh(e_arr / s) - z_arr) ** 2)) for s in grid]
    return float(grid[int(np.argmin(loss))]), len(es)


def save_shard(pos: Positions, path: Union[str, Path]) -> None:
    """Write ``pos`` as a compressed npz, atomically (temp file + rename)."""
    arrays: Dict[str, np.ndarray] = {k: getattr(pos, k) for k in SHARD_KEYS}
    if pos.pi is not None:
        arrays["pi"] = pos.pi.astype(np.float16)
    with atomic_open(path, "wb") as f:
        np.savez_compressed(f, **arrays)  # type: ignore[arg-type]  # numpy's stub: allow_pickle: bool


def load_shard(path: Union[str, Path]) -> Positions:
    """Read a shard; raises ShardError naming the file when it is corrupt or incomplete."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as f:
            missing = [k for k in SHARD_KEYS if k not in f.files]
            if missing:
                raise ShardError(f"{path}: not a training shard (missing {', '.join(missing)})")
            arrays = {k: f[k] for k in SHARD_KEYS}
            pi = f["pi"] if "pi" in f.files else None
    except ShardError:
        raise
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as e:
        raise ShardError(f"{path}: cannot read training shard ({e})") from e
    n = arrays["cells"].shape[0]
    if arrays["cells"].ndim != 3 or any(arrays[k].shape[0] != n for k in SHARD_KEYS):
        raise ShardError(f"{path}: inconsistent array lengths in training shard")
    if pi is not None and pi.shape != (n, arrays["cells"].shape[1] * arrays["cells"].shape[2]):
        raise ShardError(f"{path}: policy array has the wrong shape {pi.shape}")
    return Positions(arrays["cells"], arrays["stm"], arrays["last"], arrays["move"],
                     arrays["z"], arrays["zw"], arrays["game"], pi)


def load_window(folder: Union[str, Path], window: int) -> Positions:
    """The newest ``window`` positions of the shards in ``folder`` (by file modification order)."""
    files = sorted(Path(folder).glob("*.npz"), key=lambda p: (p.stat().st_mtime, p.name))
    parts: List[Positions] = []
    total = 0
    for f in reversed(files):
        p = load_shard(f)
        parts.append(p)
        total += len(p)
        if total >= window:
            break
    if not parts:
        raise ShardError(f"{folder}: no training shards (*.npz)")
    pos = Positions.concat(list(reversed(parts)))
    if len(pos) > window:
        pos = pos.subset(np.arange(len(pos) - window, len(pos)))
    return pos


def encode_positions(pos: Positions, idx: np.ndarray) -> np.ndarray:
    """Network input planes (len(idx), P, H, W) for the selected positions."""
    from ..net.encoding import encode_arrays
    return encode_arrays(pos.cells[idx], pos.stm[idx], pos.last[idx])


def repeat(pos: Positions, times: int) -> Positions:
    """``pos`` with every position ``times`` times over (a shard's weight in the mix), each copy keeping
    its game id, so that :func:`split_by_game` sends all copies of a game to the same side."""
    if times < 1:
        raise ValueError(f"a shard is repeated at least once, not {times}")
    return pos if times == 1 else pos.subset(np.tile(np.arange(len(pos)), times))


def parse_repeats(specs: Sequence[str], data: Sequence[str]) -> Dict[str, int]:
    """``SHARD=K`` options (``--repeat`` of ``gomoku train supervised`` and of the GPU burst) as
    {shard: K}; ValueError for a malformed one, a K under 1, or a shard not among ``data``."""
    out: Dict[str, int] = {}
    for spec in specs:
        path, sep, k = spec.rpartition("=")
        try:
            if not sep or int(k) < 1:
                raise ValueError
            out[path] = int(k)
        except ValueError:
            raise ValueError(f"--repeat wants SHARD=K with K >= 1, not {spec!r}") from None
        if path not in data:
            raise ValueError(f"--repeat names {path!r}, which is not one of --data")
    return out


def load_shards(paths: Sequence[str], repeats: Optional[Dict[str, int]] = None) -> List[Positions]:
    """The shards of ``paths`` (:func:`load_shard`), each repeated its times in ``repeats``
    (:func:`repeat`; 1 when not named)."""
    times = repeats or {}
    return [repeat(load_shard(p), times.get(p, 1)) for p in paths]


def split_by_game(pos: Positions, fraction: float, seed: int) -> Tuple[np.ndarray, np.ndarray]:
    """Indices (train, val): whole games go to validation, never single positions. The trainer's
    split (``TrainConfig.val_fraction``, ``seed``), so a model can be scored later on exactly the
    games it never trained on."""
    games = np.unique(pos.game)
    rng = np.random.default_rng(seed)
    n_val = int(round(len(games) * fraction))
    val_games = set(rng.choice(games, size=n_val, replace=False).tolist()) if n_val else set()
    is_val = np.isin(pos.game, list(val_games))
    return np.flatnonzero(~is_val), np.flatnonzero(is_val)
