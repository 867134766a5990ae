"""Evaluators: what the search asks at a leaf.

An evaluator works in two phases so that the search can batch leaves:

1. :meth:`Evaluator.prepare` is called while the board is *at* the leaf (the search then undoes the
   moves); it returns whatever the evaluator needs later (the encoded input planes for a network, a
   finished rollout result for the rollout evaluator, nothing for the uniform one).
2. :meth:`Evaluator.evaluate` takes a list of prepared items and returns, for each, the policy
   *logits* over all ``width * height`` squares (the search masks them to its candidate moves and
   applies a softmax) and the value in [-1, 1] **for the side to move at that leaf**.

An :class:`AsyncEvaluator` (a network in a second process) takes the same items and answers later.
"""
from __future__ import annotations

import random
from typing import Any, Optional, Protocol, Sequence, Tuple

import numpy as np

from .board import Board
from .rules import BLACK, EMPTY, WALL, WHITE, opponent


class OffloadError(RuntimeError):
    """An evaluation handed to another process (:mod:`gomoku_ai.net.evalworker`) failed: the process
    died, answered late or out of step. The search evaluates in-process instead."""


class PendingEvaluation(Protocol):
    """A batch in flight: :meth:`result` waits for (logits, values, seconds spent evaluating)."""

    def result(self) -> Tuple[np.ndarray, np.ndarray, float]: ...


class AsyncEvaluator(Protocol):
    """Evaluates prepared items elsewhere while the caller goes on (the search's ``offload``)."""

    def submit(self, items: Sequence[Any], shape: Tuple[int, int]) -> PendingEvaluation: ...


class Evaluator:
    """Interface. ``batch_size`` is the number of leaves the search should gather per call."""

    name = "evaluator"
    batch_size = 1
    #: True when :meth:`evaluate` gives a position the same output every time and costs far more
    #: than a dictionary look-up, so that the search may keep its outputs (MCTSConfig.eval_cache)
    cacheable = False

    def prepare(self, board: Board) -> Any:
        """Capture what :meth:`evaluate` needs from ``board`` (at the leaf). Must not keep ``board``."""
        raise NotImplementedError

    def evaluate(self, items: Sequence[Any], shape: Tuple[int, int]) -> Tuple[np.ndarray, np.ndarray]:
        """Return (logits of shape (len(items), H*W) float32, values of shape (len(items),) float32).

        ``shape`` is (height, width) of the board the items came from.
        """
        raise NotImplementedError

    def transforms(self, shape: Tuple[int, int]) -> Tuple[int, ...]:
        """The board symmetries (ids of :mod:`gomoku_ai.net.symmetries`) that
        :meth:`prepare_transformed` takes for boards of ``shape`` (height, width): ``(0,)``, the
        identity alone, unless the evaluator can see a transformed board (the network)."""
        return (0,)

    def prepare_transformed(self, board: Board, k: int) -> Any:
        """:meth:`prepare` of ``board`` seen through symmetry ``k`` (one of :meth:`transforms`);
        :meth:`restore` maps the logits evaluated from it back to ``board``'s squares."""
        if k != 0:
            raise ValueError(f"{self.name}: symmetry {k} is not one of its transforms")
        return self.prepare(board)

    def restore(self, logits: np.ndarray, k: int, shape: Tuple[int, int]) -> np.ndarray:
        """The ``(H*W,)`` logits of an item prepared with symmetry ``k``, on the squares of the
        board it came from (``shape``: that board's (height, width))."""
        return logits


class UniformEvaluator(Evaluator):
    """Equal priors and a value of 0: MCTS then relies on its tactics and proven results only."""

    name = "uniform"

    def prepare(self, board: Board) -> None:
        return None

    def evaluate(self, items: Sequence[Any], shape: Tuple[int, int]) -> Tuple[np.ndarray, np.ndarray]:
        n = len(items)
        return np.zeros((n, shape[0] * shape[1]), np.float32), np.zeros(n, np.float32)


class RolloutEvaluator(Evaluator):
    """Classic pure MCTS: equal priors, and the value of one random playout from the leaf.

    Playouts pick uniformly among the empty squares (as the pure-MCTS baselines of the Python peers
    do), up to ``max_moves`` plies; an unfinished playout counts as a draw.
    """

    name = "rollout"

    def __init__(self, seed: int = 0, max_moves: Optional[int] = None) -> None:
        self.rng = random.Random(seed)
        self.max_moves = max_moves

    def prepare(self, board: Board) -> float:
        me = board.side_to_move
        empties = board.empty_squares()
        self.rng.shuffle(empties)
        limit = len(empties) if self.max_moves is None else min(self.max_moves, len(empties))
        played = 0
        winner = board.winner
        while winner is None and played < limit:
            if board.push(empties[played]):
                winner = opponent(board.side_to_move)
            played += 1
        for _ in range(played):
            board.pop()
        if winner is None:
            return 0.0
        return 1.0 if winner == me else -1.0

    def evaluate(self, items: Sequence[Any], shape: Tuple[int, int]) -> Tuple[np.ndarray, np.ndarray]:
        n = len(items)
        return (np.zeros((n, shape[0] * shape[1]), np.float32),
                np.asarray(items, dtype=np.float32).reshape(n))


def _window_tables() -> np.ndarray:
    """(216, 2) table: code of a 5-cell window (n_black + 6 n_white + 36 n_off) -> value of the
    window for (black, white). A window counts for a colour only if it holds no opponent stone and
    no off-board/blocked cell."""
    own = np.array([0.0, 1.0, 6.0, 40.0, 400.0, 4000.0])
    t = np.zeros((216, 2))
    for nb in range(6):
        for nw in range(6 - nb):
            for no in range(6 - nb - nw):
                code = nb + 6 * nw + 36 * no
                if no:
                    continue
                if nw == 0:
                    t[code, 0] = own[nb]
                if nb == 0:
                    t[code, 1] = own[nw]
    return t


class HeuristicEvaluator(Evaluator):
    """A hand-written pattern evaluator: a fast stand-in for a network, used before one is trained
    and as the ``tactics`` baseline.

    Every 5-square window on the board that is free of the opponent's stones and of walls scores for
    a colour by how many stones it holds (1, 6, 40, 400). A square's prior logit grows with the
    scores of the windows through it, for attack (own windows) and defence (the opponent's); the
    value is a squashed difference of the two sides' window totals, from the side to move's view.
    """

    name = "heuristic"

    def __init__(self, defence: float = 0.85, sharpness: float = 1.6, value_scale: float = 120.0) -> None:
        self.defence = defence
        self.sharpness = sharpness
        self.value_scale = value_scale
        self._table = _window_tables()

    def prepare(self, board: Board) -> Tuple[np.ndarray, int]:
        h, w = board.height, board.width
        code = np.full((h + 8, w + 8), 36, np.int16)
        cells = board.cells
        inner = code[4:4 + h, 4:4 + w]
        inner[:] = 0
        inner[cells == BLACK] = 1
        inner[cells == WHITE] = 6
        inner[cells == WALL] = 36
        return code, board.side_to_move

    def _scores(self, code: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """Per-square (2, Hp, Wp) window sums for black/white, and per-colour window totals (2,)."""
        hp, wp = code.shape
        t = self._table
        acc = np.zeros((hp, wp, 2))
        totals = np.zeros(2)
        for grid, flip in ((code, None), (code.T, "T"), (code, "diag"), (code[::-1], "anti")):
            g = grid
            if flip in (None, "T"):
                gh, gw = g.shape
                win = g[:, 0:gw - 4] + g[:, 1:gw - 3] + g[:, 2:gw - 2] + g[:, 3:gw - 1] + g[:, 4:gw]
                val = t[win]
                totals += val.sum(axis=(0, 1))
                a = acc if flip is None else acc.transpose(1, 0, 2)
                for k in range(5):
                    a[:, k:k + gw - 4] += val
            else:
                gh, gw = g.shape
                win = (g[0:gh - 4, 0:gw - 4] + g[1:gh - 3, 1:gw - 3] + g[2:gh - 2, 2:gw - 2]
                       + g[3:gh - 1, 3:gw - 1] + g[4:gh, 4:gw])
                val = t[win]
                totals += val.sum(axis=(0, 1))
                a = acc if flip == "diag" else acc[::-1]
                for k in range(5):
                    a[k:k + gh - 4, k:k + gw - 4] += val
        return acc, totals

    def evaluate(self, items: Sequence[Any], shape: Tuple[int, int]) -> Tuple[np.ndarray, np.ndarray]:
        h, w = shape
        logits = np.zeros((len(items), h * w), np.float32)
        values = np.zeros(len(items), np.float32)
        for i, (code, me) in enumerate(items):
            acc, totals = self._scores(code)
            board_acc = acc[4:4 + h, 4:4 + w]
            mine = board_acc[:, :, me - 1]
            theirs = board_acc[:, :, 2 - me]
            logits[i] = (self.sharpness * np.log1p(mine + self.defence * theirs)).reshape(-1)
            diff = totals[me - 1] * 1.15 - totals[2 - me]
            values[i] = np.tanh(diff / self.value_scale)
        return logits, values


class PolicyValueNetwork(Protocol):
    """What :class:`NetworkEvaluator` runs (a :class:`gomoku_ai.net.Network`, or a test double):
    ``forward`` from (N, P, H, W) float32 planes to (policy logits (N, H*W), values (N,) in [-1, 1] for the
    side to move)."""

    def forward(self, x: np.ndarray) -> Tuple[np.ndarray, np.ndarray]: ...


class NetworkEvaluator(Evaluator):
    """A policy/value network loaded by :func:`gomoku_ai.net.load_model` (onnxruntime or numpy)."""

    name = "network"
    cacheable = True

    def __init__(self, network: PolicyValueNetwork, batch_size: int = 8) -> None:
        # local: the uniform/rollout players never need them
        from .net.encoding import encode_transformed
        from .net.symmetries import untransform_index
        self.network = network
        self.batch_size = batch_size
        self._encode = encode_transformed
        self._untransform_index = untransform_index

    def prepare(self, board: Board) -> np.ndarray:
        return self._encode(board, 0)

    def evaluate(self, items: Sequence[Any], shape: Tuple[int, int]) -> Tuple[np.ndarray, np.ndarray]:
        x = np.ascontiguousarray(np.stack(list(items)), dtype=np.float32)
        logits, values = self.network.forward(x)
        return (np.asarray(logits, np.float32).reshape(len(items), -1),
                np.asarray(values, np.float32).reshape(len(items)))

    def transforms(self, shape: Tuple[int, int]) -> Tuple[int, ...]:
        """All 8 symmetries of a square board, the 4 that keep the shape of another (the
        network is fully convolutional, so it sees a turned board as well as the board)."""
        from .net.symmetries import symmetry_ids
        return symmetry_ids(*shape)

    def prepare_transformed(self, board: Board, k: int) -> np.ndarray:
        return self._encode(board, k)

    def restore(self, logits: np.ndarray, k: int, shape: Tuple[int, int]) -> np.ndarray:
        return logits[self._untransform_index(k, *shape)] if k else logits


def evaluate_symmetric(evaluator: Evaluator, board: Board) -> Tuple[np.ndarray, float]:
    """``board`` evaluated through every symmetry of :meth:`Evaluator.transforms` at once:
    (logits over its ``H*W`` squares, the log of the mean of the priors over its empty squares;
    the mean value for the side to move). A network is not exactly symmetric (the shipped 20x20
    network's best move differs between two symmetries of a position about one time in five),
    so the mean is a better estimate than any one view; one batch of up to 8 positions."""
    shape = (board.height, board.width)
    ks = evaluator.transforms(shape)
    logits, values = evaluator.evaluate([evaluator.prepare_transformed(board, k) for k in ks], shape)
    if len(ks) == 1:
        return logits[0], float(values[0])
    empty = (board.cells == EMPTY).reshape(-1)
    mean = np.zeros(empty.shape, np.float64)
    for i, k in enumerate(ks):
        lg = np.where(empty, evaluator.restore(logits[i], k, shape), -np.inf).astype(np.float64)
        p = np.exp(lg - lg.max())
        mean += p / p.sum()
    mean /= len(ks)
    with np.errstate(divide="ignore"):
        out = np.maximum(np.log(mean), -1e4).astype(np.float32)
    return out, float(np.mean(values))
