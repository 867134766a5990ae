"""The search and the board's symmetries: leaves evaluated through a random symmetry
(``MCTSConfig.random_symmetry``) and the root through all of them (``MCTSConfig.root_symmetries``,
:func:`gomoku_ai.evaluator.evaluate_symmetric`)."""
from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path
from typing import Any, List, Sequence, Tuple

import numpy as np
import pytest

from gomoku_ai.board import Board
from gomoku_ai.evaluator import Evaluator, HeuristicEvaluator, NetworkEvaluator, evaluate_symmetric
from gomoku_ai.mcts import MCTS, MCTSConfig, Node
from gomoku_ai.net.model import load_model
from gomoku_ai.net.symmetries import symmetry_ids, transform_move, transform_planes, untransform_policy
from gomoku_ai.rules import opponent

MODELS = Path(__file__).resolve().parents[1] / "models"

# the same search with and without the switches under test; the leaf VCF and forced passes off so
# that only the evaluations shape the tree
BASE = MCTSConfig(leaf_vcf_nodes=0, random_symmetry=False, root_symmetries=False, eval_cache=0)


def _weights(r: int = 2) -> np.ndarray:
    """Integer weights of a (2r+1)^2 kernel that depend only on {|dx|, |dy|}: the same under every
    symmetry of the square, so that a filter with it commutes with them (exactly: small integers)."""
    k = np.zeros((2 * r + 1, 2 * r + 1), np.float32)
    for dy in range(-r, r + 1):
        for dx in range(-r, r + 1):
            a, b = sorted((abs(dx), abs(dy)))
            k[dy + r, dx + r] = 1 + 3 * a + 7 * b
    return k


class PlaneEvaluator(Evaluator):
    """A network stand-in on two planes (the mover's stones, the opponent's): logits are a filter
    of them, plus ``tilt`` times the column (``tilt`` != 0 makes it *not* commute with the
    symmetries); the value is a small function of the stone counts. Counts what it is asked."""

    name = "planes"
    cacheable = True

    def __init__(self, tilt: float = 0.0, batch_size: int = 1) -> None:
        self.tilt = tilt
        self.batch_size = batch_size
        self.kernel = _weights()
        self.used: Counter = Counter()

    def transforms(self, shape: Tuple[int, int]) -> Tuple[int, ...]:
        return symmetry_ids(*shape)

    def prepare(self, board: Board) -> np.ndarray:
        return self.prepare_transformed(board, 0)

    def prepare_transformed(self, board: Board, k: int) -> np.ndarray:
        self.used[k] += 1
        me = board.side_to_move
        x = np.stack([board.cells == me, board.cells == opponent(me)]).astype(np.float32)
        return transform_planes(x, k)

    def restore(self, logits: np.ndarray, k: int, shape: Tuple[int, int]) -> np.ndarray:
        return untransform_policy(logits, k, *shape)

    def evaluate(self, items: Sequence[Any], shape: Tuple[int, int]) -> Tuple[np.ndarray, np.ndarray]:
        r = self.kernel.shape[0] // 2
        logits, values = [], []
        for x in items:
            h, w = x.shape[1:]
            pad = np.pad(2 * x[0] + x[1], r)
            acc = np.zeros((h, w), np.float32)
            for dy in range(2 * r + 1):
                for dx in range(2 * r + 1):
                    acc += self.kernel[dy, dx] * pad[dy:dy + h, dx:dx + w]
            acc = acc / 16.0 + self.tilt * np.arange(w, dtype=np.float32)[None, :]
            logits.append(acc.reshape(-1))
            values.append(np.tanh(0.1 * (x[0].sum() - x[1].sum())))
        return np.asarray(logits, np.float32), np.asarray(values, np.float32)


def _position(size: int = 15) -> Board:
    b = Board(size)
    for name in ("h8", "i9", "g9", "i7", "i8", "g7", "j8"):
        b.play(b.parse(name))
    return b


def _transformed(b: Board, k: int) -> Board:
    t = Board(b.width, b.height, rule=b.rule)
    for m in b.moves:
        t.play(transform_move(m, k, b.height, b.width))
    return t


def _visits(node: Node) -> list:
    out = [node.N.tolist() if node.expanded else None]
    for ch in (node.children if node.expanded else []):
        if ch is not None:
            out.extend(_visits(ch))
    return out


@pytest.mark.parametrize("batch", [1, 8])
def test_random_symmetry_is_undone_exactly(batch: int) -> None:
    """With an evaluator that commutes with the symmetries, leaves seen through random ones give
    the very tree the untransformed search gives (every logit is mapped back to its square); and
    the search did use several symmetries."""
    trees = []
    for on in (False, True):
        ev = PlaneEvaluator(batch_size=batch)
        m = MCTS(ev, dataclasses.replace(BASE, random_symmetry=on), seed=3)
        m.search(_position(), visits=400)
        trees.append((m, ev))
    (off, ev_off), (on, ev_on) = trees
    assert set(ev_off.used) == {0}
    assert len(ev_on.used) == 8 and min(ev_on.used.values()) > 10
    assert _visits(off.root) == _visits(on.root)


def test_random_symmetry_changes_the_search_of_an_asymmetric_evaluator() -> None:
    """The switch is live: with an evaluator that does not commute with the symmetries, the
    random views give another tree (the test above would pass if they were never applied)."""
    trees = []
    for on in (False, True):
        m = MCTS(PlaneEvaluator(tilt=0.3), dataclasses.replace(BASE, random_symmetry=on), seed=3)
        m.search(_position(), visits=400)
        trees.append(_visits(m.root))
    assert trees[0] != trees[1]


def test_evaluators_without_transforms_search_as_before() -> None:
    """The heuristic evaluator has only the identity: the switches change nothing."""
    trees = []
    for on in (False, True):
        cfg = dataclasses.replace(BASE, random_symmetry=on, root_symmetries=on)
        m = MCTS(HeuristicEvaluator(), cfg, seed=1)
        m.search(_position(), visits=300)
        trees.append(_visits(m.root))
    assert trees[0] == trees[1]


def _root_priors(m: MCTS, b: Board) -> dict:
    root = m.root
    assert root is not None and root.expanded
    return {int(mv): float(p) for mv, p in zip(root.moves, root.P)}


@pytest.mark.parametrize("k", [1, 4, 5, 6])
def test_root_priors_are_the_same_for_every_symmetry_of_the_position(k: int) -> None:
    """With ``root_symmetries`` the root's priors (and value) do not depend on which of the
    board's symmetric copies is searched, even for an evaluator that is far from symmetric;
    without it they do."""
    b = _position()
    t = _transformed(b, k)
    for on in (True, False):
        cfg = dataclasses.replace(BASE, root_symmetries=on)
        mb, mt = MCTS(PlaneEvaluator(tilt=0.5), cfg), MCTS(PlaneEvaluator(tilt=0.5), cfg)
        mb.search(b, visits=1)
        mt.search(t, visits=1)
        pb, pt = _root_priors(mb, b), _root_priors(mt, t)
        assert set(pt) == {transform_move(mv, k, b.height, b.width) for mv in pb}
        diff = max(abs(p - pt[transform_move(mv, k, b.height, b.width)]) for mv, p in pb.items())
        same_value = abs(mb.root.value - mt.root.value) < 1e-6
        if on:
            assert diff < 1e-6 and same_value
        else:
            assert diff > 1e-3


def test_a_kept_root_gets_the_mean_priors() -> None:
    """When the tree is reused, the new root's priors (from the one view it was evaluated
    through as a leaf) are replaced by the mean over all symmetries, as a fresh root's are,
    and its visits are kept."""
    cfg = dataclasses.replace(BASE, root_symmetries=True, random_symmetry=True)
    m = MCTS(PlaneEvaluator(tilt=0.5), cfg, seed=5)
    b = _position()
    m.search(b, visits=600)
    reply = int(m.best_move())
    b.play(reply)
    child = m.root.children[int(np.flatnonzero(m.root.moves == reply)[0])]
    assert child is not None and child.expanded
    best2 = int(child.moves[int(np.argmax(child.N))])
    b.play(best2)
    kept = child.children[int(np.flatnonzero(child.moves == best2)[0])]
    assert kept is not None and kept.expanded and len(kept.moves) > 1
    n_before = kept.N.copy()
    m.search(b, visits=kept.n + 1)
    assert m.root is kept and (kept.N[: len(n_before)] >= n_before).all()
    fresh = MCTS(PlaneEvaluator(tilt=0.5), cfg)
    fresh.search(b, visits=1)
    want = _root_priors(fresh, b)
    got = _root_priors(m, b)
    assert set(got) == set(want)
    assert max(abs(got[mv] - want[mv]) for mv in want) < 1e-9


def test_evaluate_symmetric_with_the_network_is_invariant() -> None:
    """The shipped network through :func:`evaluate_symmetric`: the priors of a position and of
    each of its symmetric copies are the same square for square, and only empty squares get
    mass; one view alone is not invariant."""
    ev = NetworkEvaluator(load_model(MODELS / "freestyle15-4x32-sp", backend="numpy"))
    b = _position()
    size = b.width * b.height
    lg, v = evaluate_symmetric(ev, b)
    p = np.exp(lg - lg.max())
    p /= p.sum()
    assert p.shape == (size,) and abs(p.sum() - 1) < 1e-6
    assert p[np.flatnonzero(b.cells.reshape(-1) != 0)].max() < 1e-30
    one_view_diffs: List[float] = []
    for k in range(1, 8):
        t = _transformed(b, k)
        lt, vt = evaluate_symmetric(ev, t)
        pt = np.exp(lt - lt.max())
        pt /= pt.sum()
        perm = [transform_move(m, k, b.height, b.width) for m in range(size)]
        assert np.allclose(pt[perm], p, atol=1e-5) and abs(vt - v) < 1e-5
        l1, _ = ev.evaluate([ev.prepare(b)], (b.height, b.width))
        l2, _ = ev.evaluate([ev.prepare(t)], (b.height, b.width))
        one_view_diffs.append(float(np.abs(l2[0][perm] - l1[0]).max()))
    assert max(one_view_diffs) > 1e-3


def test_the_search_keeps_no_reference_to_an_old_root() -> None:
    """The note of which root already has the mean priors never outlives that root (it would keep
    the whole old tree in memory): after a search on another position, a reset, or a kept subtree
    whose root has a single move, it is the current root or nothing."""
    m = MCTS(PlaneEvaluator(tilt=0.5), dataclasses.replace(BASE, root_symmetries=True), seed=2)
    b = _position()
    m.search(b, visits=200)
    assert m._averaged is m.root
    other = Board(15)
    other.play(other.parse("a1"))
    m.search(other, visits=1)       # a fresh root, then expanded with the mean
    assert m._averaged is m.root
    m.reset()
    assert m._averaged is None
    m.search(b, visits=50)
    m.tree.attach(other, None)      # a new root not searched yet
    m.search(other, visits=1)
    assert m._averaged in (None, m.root)
