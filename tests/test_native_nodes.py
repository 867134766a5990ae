"""The C core's node creation for the MCTS tree (:func:`gomoku_ai.native.node_ops`): the replies to
an open three and the fives of a new node are the lists the Python code of :mod:`gomoku_ai.mcts`
makes, in the same order, so a search builds the identical tree with or without them."""
from __future__ import annotations

from typing import Iterator, List, Optional, Tuple

import numpy as np
import pytest
from conftest import walk_nodes

from gomoku_ai import mcts as M
from gomoku_ai import native, tactics
from gomoku_ai.board import Board
from gomoku_ai.evaluator import HeuristicEvaluator
from gomoku_ai.mcts import MCTS, MCTSConfig, Node, SearchTree
from gomoku_ai.rules import EMPTY, Rule, opponent

OPS = native.node_ops()
pytestmark = pytest.mark.skipif(OPS is None, reason="the C core is not built (or PYGOMOKU_NATIVE=0)")

BOARDS = [(15, 15, Rule.FREESTYLE), (20, 20, Rule.FREESTYLE), (15, 15, Rule.STANDARD),
          (12, 7, Rule.FREESTYLE), (9, 9, Rule.STANDARD)]


def _games(width: int, height: int, rule: Rule, count: int, seed: int) -> Iterator[Board]:
    """Every position of ``count`` random games played close to the stones (so that lines, threes
    and fours are common), up to a five or a full board; the same Board object, moved on."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        b = Board(width, height, rule)
        b.play((height // 2) * width + width // 2)
        while b.winner is None and not b.is_full():
            yield b
            near = [m for m in range(b.size) if b.is_empty(m) and any(
                0 <= (m % width) + dx < width and 0 <= (m // width) + dy < height
                and b[m + dy * width + dx] != EMPTY for dx in (-1, 0, 1) for dy in (-1, 0, 1))]
            pool = near or [m for m in range(b.size) if b.is_empty(m)]
            b.play(int(rng.choice(pool)))


def _tree(board: Board, ops: Optional[native.NodeOps]) -> SearchTree:
    tree = SearchTree(MCTSConfig(), np.random.default_rng(0))
    saved = M._NODE_OPS
    M._NODE_OPS = ops
    try:
        tree.attach(board, None)
    finally:
        M._NODE_OPS = saved
    return tree


@pytest.mark.parametrize("width,height,rule", BOARDS)
def test_three_replies_are_the_python_replies(width: int, height: int, rule: Rule) -> None:
    found = 0
    for b in _games(width, height, rule, 12, seed=BOARDS.index((width, height, rule))):
        tree = _tree(b, OPS)
        assert tree.node_ops is OPS
        c = M._three_replies(b, None, tree)
        py = M._three_replies(b, None, None)
        assert c == py, b.to_ascii()
        found += c is not None
    assert found >= 20        # open threes were met, not only "no three"


@pytest.mark.parametrize("width,height,rule", BOARDS)
def test_child_fives_are_the_python_fives(width: int, height: int, rule: Rule) -> None:
    """For every move of random positions: the child's my_fives / opp_fives / proven / terminal
    from the C core and from the Python code, the parent's fives made as the root's are."""
    rng = np.random.default_rng(width + height)
    proven = opp = 0
    for b in _games(width, height, rule, 6, seed=width + 3 * height):
        if len(b.moves) % 3:
            continue
        tree_c, tree_py = _tree(b, OPS), _tree(b, None)
        parent = Node()
        tree_py.init_root_threats(parent, b)
        empties = [m for m in range(b.size) if b.is_empty(m)]
        if parent.my_fives:        # the mover wins at once: no child is made
            continue
        picks = [int(x) for x in rng.choice(empties, min(12, len(empties)), replace=False)]
        fours = [f.move for f in tactics.four_moves(b)]    # children that get opp_fives
        for m in list(parent.opp_fives) + fours + picks:
            if not b.is_empty(m):
                continue
            b.push_quiet(m)            # not a five: the mover has no five-point here
            try:
                a, p = Node(), Node()
                M._init_threats(tree_c, a, parent, m, b)
                M._init_threats(tree_py, p, parent, m, b)
                assert (a.my_fives, a.opp_fives, a.proven, a.win_move, a.terminal) == \
                    (p.my_fives, p.opp_fives, p.proven, p.win_move, p.terminal), b.to_ascii()
                proven += a.proven == 1
                opp += bool(a.opp_fives)
            finally:
                b.pop()
    assert proven >= 3 and opp >= 10       # both branches were met


def test_child_fives_keep_repeats_and_order() -> None:
    """The new five-points through the move (each line, + side first), then the parent's fives
    that still are, a repeat kept: the order and the list :func:`gomoku_ai.mcts._init_threats`
    makes."""
    b = Board(15)
    for x, y in [(8, 7), (0, 0), (9, 7), (0, 2), (10, 7), (0, 4), (7, 7)]:   # Black's four, last
        b.play(y * 15 + x)
    m = 7 * 15 + 7
    parent = Node()
    parent.my_fives = [7 * 15 + 11, 3 * 15 + 3]     # (11, 7) again, and a square that is no five
    tree_c, tree_py = _tree(b, OPS), _tree(b, None)
    a, p = Node(), Node()
    M._init_threats(tree_c, a, parent, m, b)
    M._init_threats(tree_py, p, parent, m, b)
    assert a.opp_fives == p.opp_fives == [7 * 15 + 11, 7 * 15 + 6, 7 * 15 + 11]
    assert a.my_fives == p.my_fives == [] and a.proven == p.proven == 0


def test_node_ops_refuse_bad_input() -> None:
    assert OPS is not None
    b = Board(15)
    b.play(112)
    w, h, n = 15, 15, 5
    with pytest.raises(ValueError):
        OPS.three_replies(b._buf, 4, h, n, 0, 112, 1)                 # geometry
    with pytest.raises(ValueError):
        OPS.three_replies(b._buf, w, h, n, 0, 225, 1)                 # off the board
    with pytest.raises(ValueError):
        OPS.three_replies(b._buf, w, h, n, 0, 113, 1)                 # not a stone of the colour
    with pytest.raises(ValueError):
        OPS.three_replies(b._buf, w, h, n, 0, 112, 3)                 # colour
    with pytest.raises(ValueError):
        OPS.child_fives(bytes(b._buf[:-1]), w, h, n, 0, 112, 2, [], [])   # buffer length
    with pytest.raises(ValueError):
        OPS.child_fives(b._buf, w, h, n, 0, 112, 1, [], [])           # the mover is White?
    with pytest.raises(TypeError):
        OPS.child_fives(b._buf, w, h, n, 0, 112, 2, (3,), [])         # a tuple
    with pytest.raises(ValueError):
        OPS.child_fives(b._buf, w, h, n, 0, 112, 2, [-4], [])         # a five-point off the board
    with pytest.raises(TypeError):
        OPS.child_fives(b._buf, w, h, n, 0, 112, 2, ["a"], [])
    assert OPS.child_fives(b._buf, w, h, n, 0, 112, 2, [], []) == ([], [])


def test_node_ops_serve_freestyle_and_standard_only(monkeypatch: pytest.MonkeyPatch) -> None:
    for rule, served in ((Rule.FREESTYLE, True), (Rule.STANDARD, True), (Rule.RENJU, False),
                         (Rule.CARO, False)):
        b = Board(15, rule=rule)
        b.play(112)
        assert (_tree(b, OPS).node_ops is not None) is served
    monkeypatch.setattr(native, "ENABLED", False)
    assert native.node_ops() is None
    monkeypatch.setattr(native, "ENABLED", True)
    assert native.node_ops() is not None


def _fingerprint(root: Node) -> List[Tuple]:
    return [(nd.n, nd.proven, nd.win_move, nd.terminal, nd.n_lost, tuple(nd.my_fives),
             tuple(nd.opp_fives), nd.moves.tobytes(), nd.N.tobytes(), nd.Q.tobytes(), nd.P.tobytes(),
             tuple(c is None for c in nd.children)) for nd in walk_nodes(root)]


@pytest.mark.parametrize("size,rule", [(15, Rule.FREESTYLE), (20, Rule.FREESTYLE), (15, Rule.STANDARD)])
def test_search_builds_the_identical_tree(monkeypatch: pytest.MonkeyPatch, size: int, rule: Rule) -> None:
    """Whole-game series of searches (the tree reused from ply to ply) with the C node creation and
    with the Python one: node for node the same, fives lists included."""
    moves: List[int] = []
    for b in _games(size, size, rule, 1, seed=size + 11):
        moves = list(b.moves)
    plies = [p for p in (10, 16, 22, 28) if p < len(moves)] or [len(moves) - 1]
    prints = []
    for ops in (OPS, None):
        monkeypatch.setattr(M, "_NODE_OPS", ops)
        m = MCTS(HeuristicEvaluator(), MCTSConfig(), seed=5)
        out = []
        for ply in plies:
            b = Board(size, rule=rule)
            for mv in moves[:ply]:
                b.play(mv)
            m.search(b, visits=300)
            assert m.root is not None
            out.append(_fingerprint(m.root))
        prints.append(out)
    assert prints[0] == prints[1]
    assert sum(len(t) for t in prints[0]) > 300
    assert any(row[6] for t in prints[0] for row in t)      # nodes with the opponent's fives
