"""The C core's MCTS edge arithmetic (:func:`gomoku_ai.native.tree_ops`): selection with virtual
loss and one edge's backup compute exactly what the Python loops of :mod:`gomoku_ai.mcts` compute, so
a search builds the identical tree with or without them."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional, Tuple

import numpy as np
import pytest
from conftest import walk_nodes

from gomoku_ai import mcts as M
from gomoku_ai import native
from gomoku_ai.board import Board
from gomoku_ai.evaluator import HeuristicEvaluator, NetworkEvaluator
from gomoku_ai.mcts import LOSS_Q, MCTS, WIN_Q, MCTSConfig, Node, select_child
from gomoku_ai.net.model import load_model
from gomoku_ai.rules import WALL

OPS = native.tree_ops()
pytestmark = pytest.mark.skipif(OPS is None, reason="the C core is not built (or PYGOMOKU_NATIVE=0)")
MODELS = Path(__file__).resolve().parents[1] / "models"

# two middle games of a match (flat squares on 15x15), searched at a few of their plies
GAMES = [
    [112, 111, 99, 126, 140, 96, 141, 142, 127, 113, 110, 81, 66, 97, 65, 95, 94, 83, 69, 68, 98, 114,
     100, 82, 80, 52, 67, 20, 36, 101],
    [112, 111, 99, 126, 140, 127, 96, 143, 95, 159, 175, 128, 125, 110, 158, 129, 130, 171, 115, 145,
     144, 172, 97, 98, 94, 93, 102, 116, 67, 157],
]


def _stats(rng: np.random.Generator, k: int) -> Tuple[np.ndarray, ...]:
    """Random child statistics of ``k`` children as a search leaves them: some unvisited (Q at a
    first-play value), some proven (Q at LOSS_Q or WIN_Q), PU = P / (1 + N) (0 where lost)."""
    P = rng.random(k)
    P /= P.sum()
    N = np.floor(rng.random(k) * 4)
    W = -rng.random(k) * N
    Q = np.where(N > 0, W / np.maximum(N, 1.0), -0.3)
    Q[rng.random(k) < 0.1] = LOSS_Q
    Q[rng.random(k) < 0.05] = WIN_Q
    PU = P / (1.0 + N)
    PU[Q <= LOSS_Q] = 0.0
    return Q, PU, P, N, W


def _py_select_vl(Q, PU, P, N, W, n: int, c: float, vl: float) -> int:
    """The Python selection and virtual loss of :func:`gomoku_ai.mcts._descend`."""
    node = Node()
    node.Q, node.PU, node.P, node.N, node.W, node.n = Q, PU, P, N, W, n
    i = select_child(node, c)
    N[i] += vl
    W[i] -= vl
    if Q[i] > LOSS_Q and Q[i] < WIN_Q:
        Q[i] = W[i] / N[i]
    PU[i] = P[i] / (1.0 + N[i])
    return i


def _py_backup_edge(Q, PU, P, N, W, i: int, vl: float, v: Optional[float], fpu_q: float) -> None:
    """The Python backup of one edge whose child is not proven (:func:`gomoku_ai.mcts._backup`)."""
    if vl:
        N[i] -= vl
        W[i] += vl
    if v is not None:
        N[i] += 1.0
        W[i] += v
    if Q[i] > LOSS_Q and Q[i] < WIN_Q:
        Q[i] = W[i] / N[i] if N[i] > 0 else fpu_q
    PU[i] = 0.0 if Q[i] <= LOSS_Q else P[i] / (1.0 + N[i])


@pytest.mark.parametrize("k", [1, 2, 7, 40, 225])
def test_select_vl_is_the_python_selection(k: int) -> None:
    assert OPS is not None
    rng = np.random.default_rng(k)
    a = _stats(rng, k)
    b = tuple(x.copy() for x in a)
    n = int(a[3].sum()) + 1
    for step in range(300):
        c, vl = (1.8, 1.0) if step % 3 else (0.7, 2.5)
        i_py = _py_select_vl(*a, n, c, vl)
        i_c = OPS.select_vl(*b, n, c, vl, LOSS_Q, WIN_Q)
        assert i_c == i_py, f"step {step}"
        for x, y in zip(a, b):
            assert np.array_equal(x, y)      # bit for bit: the same float64 operations
        n += 1


def test_select_vl_takes_the_first_of_equal_scores() -> None:
    assert OPS is not None
    Q = np.array([0.1, 0.3, 0.3, 0.2])
    PU = np.zeros(4)
    P, N, W = np.full(4, 0.25), np.ones(4), Q.copy()
    assert OPS.select_vl(Q, PU, P, N, W, 4, 1.8, 1.0, LOSS_Q, WIN_Q) == 1
    assert N[1] == 2.0 and W[1] == pytest.approx(-0.7) and Q[1] == pytest.approx(-0.35)
    assert PU[1] == pytest.approx(0.25 / 3.0)


def test_select_vl_keeps_a_proven_q() -> None:
    assert OPS is not None
    Q = np.array([WIN_Q, 0.0])
    PU, P, N, W = np.zeros(2), np.array([0.5, 0.5]), np.array([3.0, 3.0]), np.array([3.0, 0.0])
    assert OPS.select_vl(Q, PU, P, N, W, 7, 1.8, 1.0, LOSS_Q, WIN_Q) == 0
    assert Q[0] == WIN_Q and N[0] == 4.0 and W[0] == 2.0


@pytest.mark.parametrize("k", [1, 5, 60])
def test_backup_edge_is_the_python_backup(k: int) -> None:
    assert OPS is not None
    rng = np.random.default_rng(100 + k)
    a = _stats(rng, k)
    b = tuple(x.copy() for x in a)
    for step in range(400):
        i = int(rng.integers(k))
        vl = (0.0, 1.0, 3.0)[step % 3]
        v = None if step % 5 == 0 else float(rng.uniform(-1.0, 1.0))
        if vl:   # a path carries the virtual loss it reverts
            for arrs in (a, b):
                arrs[3][i] += vl
                arrs[4][i] -= vl
        fpu_q = float(rng.uniform(-1.0, 0.5))
        _py_backup_edge(*a, i, vl, v, fpu_q)
        OPS.backup_edge(*b, i, vl, v, fpu_q, LOSS_Q, WIN_Q)
        for x, y in zip(a, b):
            assert np.array_equal(x, y), f"step {step}"


def test_backup_edge_without_visits_gets_the_first_play_value() -> None:
    assert OPS is not None
    Q, PU, P, N, W = np.array([-0.5]), np.zeros(1), np.ones(1), np.array([1.0]), np.array([-1.0])
    OPS.backup_edge(Q, PU, P, N, W, 0, 1.0, None, 0.125, LOSS_Q, WIN_Q)     # a collision: only reverts
    assert N[0] == 0.0 and W[0] == 0.0 and Q[0] == 0.125 and PU[0] == 1.0
    Q[0] = LOSS_Q
    OPS.backup_edge(Q, PU, P, N, W, 0, 0.0, 0.5, 0.125, LOSS_Q, WIN_Q)      # a proven loss stays one
    assert Q[0] == LOSS_Q and PU[0] == 0.0 and N[0] == 1.0


def test_bad_arrays_are_refused() -> None:
    assert OPS is not None
    sel, edge = OPS.select_vl, OPS.backup_edge
    ok = [np.zeros(3) for _ in range(5)]
    with pytest.raises(TypeError):
        sel(*ok[:4], np.zeros(3, np.float32), 1, 1.8, 1.0, LOSS_Q, WIN_Q)
    with pytest.raises(TypeError):
        sel(*ok[:4], np.zeros(4), 1, 1.8, 1.0, LOSS_Q, WIN_Q)
    with pytest.raises(TypeError):
        sel(*ok[:4], [0.0, 0.0, 0.0], 1, 1.8, 1.0, LOSS_Q, WIN_Q)
    with pytest.raises(ValueError):
        sel(*[np.zeros(0) for _ in range(5)], 1, 1.8, 1.0, LOSS_Q, WIN_Q)
    with pytest.raises(IndexError):
        edge(*ok, 3, 1.0, None, 0.0, LOSS_Q, WIN_Q)
    with pytest.raises(TypeError):
        edge(*ok, 0, 1.0, None, 0.0, LOSS_Q)
    frozen = np.zeros(3)
    frozen.flags.writeable = False
    with pytest.raises((TypeError, ValueError, BufferError)):
        sel(*ok[:4], frozen, 1, 1.8, 1.0, LOSS_Q, WIN_Q)
    assert all(not x.any() for x in ok)       # nothing written by a refused call


@pytest.mark.parametrize("width,height,radius", [(15, 15, 2), (20, 20, 2), (12, 7, 1), (9, 9, 3)])
def test_near_candidates_are_the_python_candidates(monkeypatch: pytest.MonkeyPatch, width: int,
                                                   height: int, radius: int) -> None:
    """Random games (walls on some squares): at each ply of a line below a root, the C candidates
    are the Python ones, in the same (ascending) order."""
    assert OPS is not None
    rng = np.random.default_rng(width * 100 + height + radius)
    for game in range(6):
        b = Board(width, height)
        squares = rng.permutation(width * height).tolist()
        if game % 2:    # walls (a board cut to shape): never candidates
            for sq in squares[-5:]:
                b._buf[b._pad[sq]] = WALL
            squares = squares[:-5]
        root_ply = int(rng.integers(0, 12))
        for mv in squares[:root_ply]:
            b.push(mv)
        tree = M.SearchTree(MCTSConfig(radius=radius), np.random.default_rng(0))
        tree.attach(b, None)
        for mv in squares[root_ply:root_ply + 10]:
            monkeypatch.setattr(M, "_TREE_OPS", OPS)
            got = tree.candidates_all(b)
            monkeypatch.setattr(M, "_TREE_OPS", None)
            want = tree.candidates_all(b)
            assert got == want and want == sorted(want)
            assert all(isinstance(m, int) for m in got)
            b.push_quiet(mv)


def test_near_candidates_refuse_bad_input() -> None:
    assert OPS is not None
    b = Board(15)
    near = np.zeros((15, 15), bool)
    near_c = OPS.near_candidates
    assert near_c(near, b._buf, 15, 15, [], 0, 2) == []
    b.push(112)
    assert near_c(near, b._buf, 15, 15, b.moves, 0, 1) == [96, 97, 98, 111, 113, 126, 127, 128]
    assert near_c(near, b._buf, 15, 15, b.moves, 1, 1) == []      # no move since the root
    with pytest.raises(TypeError):
        near_c(near.astype(np.uint8), b._buf, 15, 15, [], 0, 2)
    with pytest.raises(TypeError):
        near_c(np.zeros((15, 14), bool), b._buf, 15, 15, [], 0, 2)
    with pytest.raises(ValueError):
        near_c(near, bytearray(10), 15, 15, [], 0, 2)
    with pytest.raises(ValueError):
        near_c(near, b._buf, 15, 15, [225], 0, 2)
    with pytest.raises(TypeError):
        near_c(near, b._buf, 15, 15, (112,), 0, 2)


def test_tree_ops_follow_the_native_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(native, "ENABLED", False)
    assert native.tree_ops() is None
    monkeypatch.setattr(native, "ENABLED", True)
    assert native.tree_ops() is not None


def _same_tree(a: Node, b: Node) -> None:
    na, nb = list(walk_nodes(a)), list(walk_nodes(b))
    assert len(na) == len(nb)
    for x, y in zip(na, nb):
        assert (x.n, x.proven, x.expanded, x.terminal, x.n_lost) == (y.n, y.proven, y.expanded, y.terminal, y.n_lost)
        assert np.array_equal(x.moves, y.moves)
        for f in ("P", "N", "W", "Q", "PU"):
            assert np.array_equal(getattr(x, f), getattr(y, f)), f
        assert [c is None for c in x.children] == [c is None for c in y.children]


def _searches(monkeypatch: pytest.MonkeyPatch, make_evaluator, ops, visits: int) -> Tuple[List[Node], int]:
    """The trees of a whole-game series of searches (the tree reused from ply to ply) with the
    edge arithmetic ``ops`` (None: Python), and how many nodes the leaf VCF proved."""
    monkeypatch.setattr(M, "_TREE_OPS", ops)
    trees, proofs = [], 0
    for game in GAMES:
        m = MCTS(make_evaluator(), MCTSConfig(), seed=3)
        for ply in (14, 20, 26, 30):
            b = Board(15)
            for mv in game[:ply]:
                b.play(mv)
            st = m.search(b, visits=visits)
            proofs += st.leaf_vcf_wins
            assert m.root is not None
            trees.append(m.root)
    return trees, proofs


@pytest.mark.parametrize("which", ["heuristic", "network"])
def test_search_builds_the_identical_tree(monkeypatch: pytest.MonkeyPatch, which: str) -> None:
    if which == "network":
        net = load_model(MODELS / "freestyle-5x48-mix", backend="numpy")

        def make():
            return NetworkEvaluator(net, batch_size=4)   # virtual loss on, collisions
    else:
        make = HeuristicEvaluator
    with_c, proofs = _searches(monkeypatch, make, OPS, 300)
    python, proofs_py = _searches(monkeypatch, make, None, 300)
    assert proofs == proofs_py and proofs > 0       # the proven-child backups were exercised too
    for a, b in zip(with_c, python):
        _same_tree(a, b)
    assert sum(len(list(walk_nodes(r))) for r in with_c) > 1000      # real trees, not solved roots
