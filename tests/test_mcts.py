"""MCTS: PUCT arithmetic, the solver, tree reuse, virtual loss bookkeeping and determinism."""
from __future__ import annotations

import dataclasses
import math
import time
from collections import Counter
from typing import Any, Sequence, Tuple

import numpy as np
import pytest

from gomoku_ai.board import Board
from gomoku_ai.evaluator import Evaluator, HeuristicEvaluator, RolloutEvaluator, UniformEvaluator
from gomoku_ai.mcts import (LOSS_Q, MCTS, EvalCache, MCTSConfig, Node, StopReason, eval_cache_bytes,
                            eval_key, select_child)
from gomoku_ai.player import Limit
from gomoku_ai.rules import Rule


class BatchedUniform(UniformEvaluator):
    """Uniform priors, value 0, gathered in batches of 8 (exercises virtual loss)."""
    batch_size = 8


class FixedValue(Evaluator):
    """Priors from a fixed logit table and a constant value: for hand-checkable arithmetic."""

    def __init__(self, logits: np.ndarray, value: float) -> None:
        self.logits, self.value = logits, value

    def prepare(self, board: Board) -> None:
        return None

    def evaluate(self, items: Sequence[Any], shape: Tuple[int, int]):
        n = len(items)
        return np.tile(self.logits, (n, 1)), np.full(n, self.value, np.float32)


def test_puct_matches_hand_computation() -> None:
    node = Node()
    node.moves = np.array([10, 11, 12], np.int32)
    node.P = np.array([0.5, 0.3, 0.2])
    node.N = np.array([10.0, 2.0, 0.0])
    node.W = np.array([3.0, 1.2, 0.0])
    node.Q = np.array([0.3, 0.6, -0.1])   # the third is the first-play-urgency value
    node.PU = node.P / (1 + node.N)
    node.n = 12
    c = 1.5
    scores = [node.Q[i] + c * node.P[i] * math.sqrt(13) / (1 + node.N[i]) for i in range(3)]
    # by hand: 0.3 + 1.5*0.5*3.6056/11 = 0.5458; 0.6 + 1.5*0.3*3.6056/3 = 1.1408; -0.1 + 1.0817
    assert scores == pytest.approx([0.54583, 1.14083, 0.98167], abs=1e-4)
    assert select_child(node, c) == 1
    node.N[1] = 6.0
    node.PU = node.P / (1 + node.N)
    assert select_child(node, c) == 2


def test_priors_are_softmax_over_candidates_and_fpu() -> None:
    b = Board.from_ascii("""
    .......
    .......
    .......
    ...X...
    .......
    .......
    .......""")
    logits = np.zeros(49, np.float32)
    logits[b.index(4, 4)] = math.log(3.0)
    mcts = MCTS(FixedValue(logits, 0.2), MCTSConfig(fpu_reduction_root=0.1))
    mcts.search(b, visits=1)
    root = mcts.root
    k = len(root.moves)
    assert k == 24   # the 5x5 square around the stone, less the stone
    i = int(np.flatnonzero(root.moves == b.index(4, 4))[0])
    assert root.P[i] == pytest.approx(3.0 / (k - 1 + 3.0))
    assert root.P.sum() == pytest.approx(1.0)
    assert root.value == pytest.approx(0.2)
    unvisited = root.N == 0
    assert np.allclose(root.Q[unvisited], 0.2 - 0.1)


@pytest.mark.parametrize("temp", [0.5, 2.0])
def test_policy_temperature_divides_the_logits(temp: float) -> None:
    """``policy_temp`` T: a prior 3x the others' (logit ln 3) becomes 3^(1/T) x them; T=1 is the plain softmax."""
    b = Board.from_ascii("""
    .......
    .......
    .......
    ...X...
    .......
    .......
    .......""")
    logits = np.zeros(49, np.float32)
    logits[b.index(4, 4)] = math.log(3.0)
    mcts = MCTS(FixedValue(logits, 0.0), MCTSConfig(policy_temp=temp))
    mcts.search(b, visits=1)
    root = mcts.root
    k = len(root.moves)
    i = int(np.flatnonzero(root.moves == b.index(4, 4))[0])
    big = 3.0 ** (1.0 / temp)
    assert root.P[i] == pytest.approx(big / (k - 1 + big))
    assert np.delete(root.P, i) == pytest.approx(np.full(k - 1, 1.0 / (k - 1 + big)))


def _check_tree(node: Node) -> int:
    """Every node's N is integral, sums to n, Q = W / N where not proven, and PU = P / (1 + N) but 0
    for a proven-lost child. Returns node count."""
    count = 1
    if node.expanded and len(node.moves):
        assert np.allclose(node.N, np.round(node.N)), "virtual loss left in N"
        assert node.N.sum() == node.n
        vis = (node.N > 0) & (node.Q > LOSS_Q) & (node.Q < 10.0)
        assert np.allclose(node.Q[vis], node.W[vis] / node.N[vis])
        lost = node.Q <= LOSS_Q
        assert np.allclose(node.PU[~lost], (node.P / (1 + node.N))[~lost])
        assert not node.PU[lost].any(), "a proven-lost child keeps an exploration term"
        for ch in node.children:
            if ch is not None:
                count += _check_tree(ch)
    return count


@pytest.mark.parametrize("evaluator", [BatchedUniform(), UniformEvaluator(), HeuristicEvaluator()])
def test_virtual_loss_fully_reverted(evaluator: Evaluator) -> None:
    b = Board(15)
    for tok in "h8 i9 g9 i7 i8".split():
        b.play(b.parse(tok))
    mcts = MCTS(evaluator)
    mcts.search(b, visits=600)
    assert mcts.root.n >= 600
    assert _check_tree(mcts.root) == mcts.n_nodes


def test_tree_reuse_keeps_the_chosen_subtree() -> None:
    b = Board(15)
    for tok in "h8 i9 g9".split():
        b.play(b.parse(tok))
    mcts = MCTS(HeuristicEvaluator())
    mcts.search(b, visits=1500)
    m1 = mcts.best_move()
    i1 = int(np.flatnonzero(mcts.root.moves == m1)[0])
    child = mcts.root.children[i1]
    reply_i = int(np.argmax(child.N))
    m2 = int(child.moves[reply_i])
    grandchild = child.children[reply_i]
    kept = grandchild.n
    assert kept > 0
    b.push(m1)
    b.push(m2)
    mcts.search(b, visits=kept)        # already satisfied by the reused visits
    assert mcts.root is grandchild
    assert mcts.root.n == kept
    b.pop()
    mcts.search(b, visits=10)          # a position not below the old root: a fresh tree
    assert mcts.root is not grandchild


def _kept_grandchild(cfg: MCTSConfig) -> Tuple[MCTS, Board, Node, Node]:
    """A search, then the two moves it expects played: (mcts, board, old root, kept grandchild)."""
    b = Board(15)
    for tok in "h8 i9 g9".split():
        b.play(b.parse(tok))
    mcts = MCTS(HeuristicEvaluator(), cfg)
    mcts.search(b, visits=1500)
    root = mcts.root
    m1 = mcts.best_move()
    child = root.children[int(np.flatnonzero(root.moves == m1)[0])]
    reply_i = int(np.argmax(child.N))
    grandchild = child.children[reply_i]
    b.push(m1)
    b.push(int(child.moves[reply_i]))
    return mcts, b, root, grandchild


@pytest.mark.parametrize("on", [True, False])
def test_a_kept_root_gets_the_root_first_play_urgency(on: bool) -> None:
    """A subtree kept as the new root was expanded below the root, with first-play urgency
    value - fpu_reduction; as the root its unvisited children get value - fpu_reduction_root
    (root_fpu_on_reuse), its visited ones keep their mean values."""
    cfg = MCTSConfig(fpu_reduction=0.25, fpu_reduction_root=0.0, root_fpu_on_reuse=on)
    mcts, b, _, node = _kept_grandchild(cfg)
    unvisited = node.N == 0
    assert unvisited.any() and (~unvisited).any()
    np.testing.assert_allclose(node.Q[unvisited], node.value - 0.25)
    visited_q = node.Q[~unvisited].copy()
    mcts.search(b, visits=node.n)          # already satisfied: no new simulation
    assert mcts.root is node
    np.testing.assert_allclose(node.Q[unvisited], node.value - (0.0 if on else 0.25))
    np.testing.assert_array_equal(node.Q[~unvisited], visited_q)


def test_solver_proves_win_in_two() -> None:
    # Black (to move) has an open three: playing either end makes an open four, a proven win.
    b = Board.from_ascii("""
    .........
    .........
    .........
    ...XXX...
    .........
    ..O......
    ...O.....
    .........
    .........""", to_move=1)
    mcts = MCTS(UniformEvaluator())
    st = mcts.search(b, visits=20000)
    assert st.stopped_by is StopReason.SOLVED
    assert mcts.root.proven == 1
    m = mcts.best_move()
    assert m in (b.index(2, 3), b.index(6, 3))  # either end makes an open four .XXXX.
    assert mcts.root_value() == 1.0


def test_solver_proves_loss_against_open_four() -> None:
    b = Board.from_ascii("""
    .........
    .........
    .........
    ..XXXX...
    .........
    ..O......
    ...O.....
    ....O....
    .........""", to_move=2)
    mcts = MCTS(UniformEvaluator())
    st = mcts.search(b, visits=100)
    assert st.stopped_by is StopReason.SOLVED and mcts.root.proven == -1


def test_must_block_restricts_children() -> None:
    b = Board.from_ascii("""
    .........
    .........
    ..OXXXX..
    .........
    ...O.....
    .........
    .....O...
    .........
    .........""", to_move=2)
    mcts = MCTS(UniformEvaluator())
    mcts.search(b, visits=50)
    assert list(mcts.root.moves) == [b.index(7, 2)]
    assert mcts.best_move() == b.index(7, 2)


def test_standard_rule_overline_is_no_threat() -> None:
    # Under STANDARD, X at e3 would make six: not a five, so O need not block there.
    b = Board.from_ascii("""
    ..........
    ..........
    XXXX.X....
    ..........
    ...O......
    ....O.....
    .......O..
    ..........""", rule=Rule.STANDARD, to_move=2)
    mcts = MCTS(UniformEvaluator())
    mcts.search(b, visits=20)
    assert mcts.root.opp_fives == []
    assert len(mcts.root.moves) > 1


def test_deterministic_with_seed() -> None:
    b = Board(15)
    for tok in "h8 i9".split():
        b.play(b.parse(tok))
    runs = []
    for _ in range(2):
        mcts = MCTS(RolloutEvaluator(seed=3), MCTSConfig(dirichlet_alpha=0.3), seed=7)
        mcts.search(b, visits=300)
        runs.append((mcts.root.N.copy(), mcts.root.P.copy()))
    assert np.array_equal(runs[0][0], runs[1][0]) and np.array_equal(runs[0][1], runs[1][1])
    other = MCTS(RolloutEvaluator(seed=3), MCTSConfig(dirichlet_alpha=0.3), seed=8)
    other.search(b, visits=300)
    assert not np.array_equal(other.root.P, runs[0][1])


def test_node_cap_stops_growth_not_search() -> None:
    b = Board(15)
    b.play(b.parse("h8"))
    mcts = MCTS(UniformEvaluator(), MCTSConfig(max_nodes=100))
    st = mcts.search(b, visits=2000)
    assert st.simulations >= 1999
    assert mcts.n_nodes <= 100
    assert _check_tree(mcts.root) == mcts.n_nodes


def test_renju_black_never_offered_forbidden_points() -> None:
    pytest.importorskip("gomoku_ai.renju")
    from gomoku_ai.renju import is_forbidden
    # X to move; f6 (5,5) would be a double three (.XX. on the row and the column)
    b = Board.from_ascii("""
    ...........
    ...........
    ...........
    ...........
    .....X.....
    .....X.....
    ...XX......
    ...........
    .......O...
    ........O..
    .........O.""", rule=Rule.RENJU, to_move=1)
    assert is_forbidden(b, b.index(5, 6))
    mcts = MCTS(UniformEvaluator())
    mcts.search(b, visits=200)
    assert b.index(5, 6) not in set(int(m) for m in mcts.root.moves)


# ------------------------------------------------------------------ pipelined evaluation

@pytest.mark.parametrize("evaluator", [BatchedUniform(), HeuristicEvaluator()])
def test_pipelined_search_keeps_the_tree_consistent(evaluator: Evaluator) -> None:
    """With the evaluation of one batch overlapped with gathering the next, every visit is still
    counted once, virtual loss is fully reverted, and no batch is left in flight."""
    if evaluator.batch_size == 1:
        evaluator.batch_size = 4          # the heuristic evaluator batches only when asked
    b = Board(15)
    for tok in "h8 i9 g9 i7 i8".split():
        b.play(b.parse(tok))
    mcts = MCTS(evaluator, MCTSConfig(pipeline=True))
    try:
        st = mcts.search(b, visits=600)
        assert mcts._inflight is None
        assert mcts.root.n >= 600 and st.evaluations > 0 and st.batches > 1
        assert _check_tree(mcts.root) == mcts.n_nodes
        mcts.search(b, visits=900)                # reuse: the same tree goes on
        assert mcts.root.n >= 900 and _check_tree(mcts.root) == mcts.n_nodes
    finally:
        mcts.close()
    assert mcts._pool is None


def test_pipelined_search_still_proves_a_win() -> None:
    b = Board.from_ascii("""
    .........
    .........
    .........
    ...XXX...
    .........
    ..O......
    ...O.....
    .........
    .........""", to_move=1)
    mcts = MCTS(BatchedUniform(), MCTSConfig(pipeline=True))
    try:
        st = mcts.search(b, visits=20000)
    finally:
        mcts.close()
    assert st.stopped_by is StopReason.SOLVED and mcts.root.proven == 1
    assert mcts.best_move() in (b.index(2, 3), b.index(6, 3))


def test_player_thread_num_without_network_files_stays_on_one_core() -> None:
    from gomoku_ai.player import Player
    p = Player(BatchedUniform())
    assert p.thread_num == 1
    p.thread_num = 2
    # no network files for a worker to load: recorded, and the search stays in this process
    assert p.thread_num == 2 and p.worker is None and not p.config.pipeline
    assert "no network files" in (p.worker_refusal() or "")
    p.thread_num = 0
    assert p.thread_num == 1


# ------------------------------------------------------------------------ clock management
def test_time_verdict_stops_early_only_when_the_runner_up_cannot_catch_up():
    from gomoku_ai.mcts import StopReason, time_verdict
    N = np.array([900.0, 100.0, 50.0])
    Q = np.array([0.2, 0.1, 0.0])
    # 800 ahead, 1,000 sims/s, 0.5 s of a 1 s budget left: 500 more cannot close the gap
    assert time_verdict(N, Q, 1000.0, 0.5, 1.0, 2.0) is StopReason.SETTLED
    # the same lead with 2 s left at that speed: go on
    assert time_verdict(N, Q, 1000.0, 0.5, 2.5, 5.0) is None
    # never before a quarter of the budget, however far ahead
    assert time_verdict(N, Q, 1.0, 0.2, 1.0, 2.0) is None
    assert time_verdict(np.array([5.0]), np.array([0.0]), 1.0, 0.3, 1.0, 2.0) is StopReason.SETTLED


def test_time_verdict_extends_an_unsettled_choice_up_to_its_limit():
    from gomoku_ai.mcts import StopReason, time_verdict
    close = np.array([500.0, 400.0, 10.0])          # under 1.5x the runner-up's visits
    assert time_verdict(close, np.array([0.1, 0.1, 0.0]), 1000.0, 1.0, 1.0, 2.0) is None
    assert time_verdict(close, np.array([0.1, 0.1, 0.0]), 1000.0, 2.0, 1.0, 2.0) is StopReason.TIME
    ahead = np.array([800.0, 200.0, 10.0])
    assert time_verdict(ahead, np.array([0.1, 0.0, 0.0]), 1000.0, 1.0, 1.0, 2.0) is StopReason.TIME
    # far ahead in visits, but the runner-up looks better: extend
    assert time_verdict(ahead, np.array([0.0, 0.2, 0.0]), 1000.0, 1.0, 1.0, 2.0) is None
    # an unvisited runner-up's Q says nothing
    lone = np.array([800.0, 0.0])
    assert time_verdict(lone, np.array([-0.5, 0.0]), 1000.0, 1.0, 1.0, 2.0) is StopReason.TIME


def test_a_managed_search_extends_while_unsettled_and_stops_early_when_settled():
    from gomoku_ai.evaluator import UniformEvaluator
    from gomoku_ai.mcts import StopReason
    b = Board(15)
    b.push(b.parse("h8"))
    m = MCTS(UniformEvaluator(), MCTSConfig(), seed=0)
    t = time.perf_counter()
    st = m.search(b, deadline=t + 0.15, extend_to=t + 0.3)
    # uniform priors and values: the visits stay spread, so the choice never settles
    assert st.stopped_by is StopReason.TIME and st.extended_s >= 0.15 - 0.01   # ran to extend_to
    m.reset()
    t = time.perf_counter()
    st = m.search(b, deadline=t + 5.0, extend_to=t + 10.0, restrict=[b.parse("h9")])
    assert st.stopped_by is StopReason.SETTLED and st.extended_s == 0   # one move: nothing to choose
    t = time.perf_counter()
    st = m.search(b, deadline=t + 0.1)                  # unmanaged: exactly to the deadline
    assert st.stopped_by is StopReason.TIME


def _reused_root_after_reply(visits: int = 600):
    """A search of h8-h9 (heuristic evaluator), then the reply it expected most: (mcts, board,
    the reply's subtree before the next search, its children sorted by visits)."""
    b = Board(15)
    for mv in ("h8", "h9"):
        b.push(b.parse(mv))
    m = MCTS(HeuristicEvaluator(), MCTSConfig(), seed=3)
    m.search(b, visits=visits)
    root = m.root
    i = int(np.argmax(root.N))
    sub = root.children[i]
    b.push(int(root.moves[i]))          # our move
    j = int(np.argmax(sub.N))
    reply = sub.children[j]
    assert reply is not None and reply.expanded and reply.n > 20
    b.push(int(sub.moves[j]))           # the opponent's reply we expected
    order = np.argsort(-reply.N, kind="stable")
    return m, b, reply, order


def test_restricted_search_keeps_the_allowed_children_of_a_reused_tree() -> None:
    m, b, reply, order = _reused_root_after_reply()
    allowed = [int(reply.moves[k]) for k in order[:3]]
    before = {int(reply.moves[k]): (float(reply.N[k]), float(reply.W[k]), reply.children[k])
              for k in order[:3]}
    m.search(b, visits=1, restrict=allowed)     # the kept root already has its visits: no new one
    root = m.root
    assert root is reply                         # the same node, kept
    assert sorted(root.moves.tolist()) == sorted(allowed)
    for k, mv in enumerate(root.moves.tolist()):
        n, w, child = before[mv]
        assert root.N[k] == n and root.W[k] == w and root.children[k] is child
    assert root.P.sum() == pytest.approx(1.0)
    assert root.n == 1 + int(root.N.sum())
    assert m.tree.n_nodes == m.tree.count(root)
    # searching on works, and only the allowed moves get visits
    m.search(b, visits=root.n + 200, restrict=allowed)
    assert set(m.root.moves.tolist()) == set(allowed) and m.best_move() in allowed


def test_restriction_outside_the_candidates_keeps_them_all_as_a_fresh_root_would() -> None:
    m, b, reply, _order = _reused_root_after_reply()
    far = [b.index(0, 0), b.index(14, 14)]      # not candidates (no stone near)
    k = len(reply.moves)
    m.search(b, visits=1, restrict=far)
    assert m.root is reply and len(m.root.moves) == k
    fresh = MCTS(HeuristicEvaluator(), MCTSConfig(), seed=3)
    fresh.search(b, visits=1, restrict=far)
    assert sorted(fresh.root.moves.tolist()) == sorted(reply.moves.tolist())


def test_a_restricted_root_searched_again_otherwise_starts_over() -> None:
    b = Board(15)
    b.push(b.parse("h8"))
    m = MCTS(HeuristicEvaluator(), MCTSConfig(), seed=1)
    a, c = b.parse("h9"), b.parse("j9")
    m.search(b, visits=50, restrict=[a, c])
    assert sorted(m.root.moves.tolist()) == sorted([a, c])
    m.search(b, visits=60, restrict=[a, c])            # the same restriction: kept
    assert m.root.n >= 60 and sorted(m.root.moves.tolist()) == sorted([a, c])
    m.search(b, visits=10, restrict=[a])               # another one: a fresh root
    assert m.root.moves.tolist() == [a] and m.root.n <= 11
    m.search(b, visits=10)                             # none: a fresh root with every candidate
    assert len(m.root.moves) > 2


def test_restricting_a_kept_root_recounts_its_lost_children() -> None:
    """A kept root with a child proven lost: restricted to that child and another, it keeps one lost
    child (n_lost 1, not proven); restricted to the lost child alone, it is proven lost at once."""
    m, b, reply, order = _reused_root_after_reply()
    a, c = int(order[0]), int(order[1])
    lost = reply.children[a]
    assert lost is not None and reply.n_lost == 0
    lost.proven = 1                       # the opponent wins after this move
    reply.Q[a] = LOSS_Q
    reply.n_lost = 1
    ma, mc = int(reply.moves[a]), int(reply.moves[c])
    m.search(b, visits=1, restrict=[ma, mc])
    assert m.root is reply and reply.n_lost == 1 and reply.proven == 0 and len(reply.moves) == 2
    assert m.best_move() == mc
    # the filter itself, on the lost move alone (the search would start over under another
    # restriction of the same root)
    from gomoku_ai.mcts import SearchTree
    assert SearchTree._restrict_kept(reply, {ma}) and reply.proven == -1 and reply.n_lost == 1


# ----------------------------------------------------------------------------- VCF at the leaves

# White to move. Black's four-three: X at the star makes a four on the row (White must block on its
# right) and an open three in the column, which then becomes a straight four. White's only good
# moves stop it (the star, or squares of the column); nearly every other move loses to that VCF.
FOUR_THREE = """
    ....X...
    ....X...
    OXXX*...
    ........
    """


def _four_three() -> Tuple[Board, int]:
    from tests.test_tactics import pos
    b, marks = pos(FOUR_THREE, to_move=2, at=(3, 3))
    return b, marks["*"][0]


def _proven_children(cfg: MCTSConfig, visits: int) -> Tuple[MCTS, Any, list]:
    b, _star = _four_three()
    mcts = MCTS(UniformEvaluator(), cfg)
    stats = mcts.search(b, visits=visits)
    root = mcts.root
    return mcts, stats, [int(root.moves[i]) for i, ch in enumerate(root.children)
                         if ch is not None and ch.proven == 1]


def test_leaf_vcf_proves_the_moves_that_allow_a_vcf() -> None:
    """With a VCF search at each new node, the root's children after which Black (to move there) has
    a VCF are proven lost for White; each one really leaves Black a VCF, the defence at the star is
    not among them, and without it the search proves far fewer in the same visits."""
    from gomoku_ai import tactics
    _m, stats, lost = _proven_children(MCTSConfig(leaf_vcf_nodes=40, leaf_vcf_after=0), 300)
    b, star = _four_three()
    assert len(lost) >= 10 and star not in lost
    assert stats.leaf_vcf_wins >= len(lost)
    for m in lost:
        b.push(m)
        assert tactics.find_vcf(b, node_limit=2000), b.move_name(m)
        b.pop()
    _m, stats0, lost_without = _proven_children(MCTSConfig(leaf_vcf_nodes=0), 300)
    assert stats0.leaf_vcf_wins == 0
    assert len(lost_without) < len(lost)


def test_leaf_vcf_at_the_first_pass_checks_every_node_searched_through() -> None:
    """``leaf_vcf_after=1``: a node's VCF is searched when the search first passes through it (not
    when it is created): after the search, every node below the root that has a visited child was
    checked, and the leaves visited once were not."""
    mcts, _s, lost = _proven_children(MCTSConfig(leaf_vcf_nodes=40, leaf_vcf_after=1), 300)
    assert lost
    checked = unchecked_leaves = 0
    stack = [ch for ch in mcts.root.children if ch is not None]
    while stack:
        node = stack.pop()
        kids = [ch for ch in node.children if ch is not None]
        if node.expanded and node.N.sum() > 0:
            assert node.vcf_checked or node.proven or node.terminal is not None
            checked += 1
        elif not kids and not node.proven:
            assert not node.vcf_checked
            unchecked_leaves += 1
        stack += kids
    assert checked and unchecked_leaves


def test_leaf_vcf_config_is_checked() -> None:
    with pytest.raises(ValueError, match="leaf_vcf_nodes"):
        MCTSConfig(leaf_vcf_nodes=-1)
    for field, bad in (("tree_vct_visits", -1), ("tree_vct_nodes", 0), ("tree_vct_depth", 0)):
        with pytest.raises(ValueError, match=field):
            MCTSConfig(**{field: bad})


def _threatened_root() -> Board:
    """``win03`` of the VCT set with its winner's turn passed: the defender to move at the root,
    against a VCT (found within 100 attacker nodes) and no VCF."""
    from pathlib import Path
    from gomoku_ai.vct import read_positions
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "vct_positions.txt"
    b = next(p for p in read_positions(path) if p.name == "win03").board()
    b.pass_turn()
    return b


@pytest.mark.skipif(not __import__("gomoku_ai.native").native.available(), reason="C core not built")
def test_tree_vct_proves_the_moves_that_allow_a_vct() -> None:
    """With a VCT search at each node below the root (the leaf VCF off), the root's children after
    which the attacker has a VCT are proven lost for the defender; each one really allows a VCT (a
    larger search finds it, and no VCF exists), and without the tree VCT none is proven."""
    from gomoku_ai import tactics, vct
    cfg = MCTSConfig(leaf_vcf_nodes=0, tree_vct_visits=1)
    m = MCTS(UniformEvaluator(), cfg)
    st = m.search(_threatened_root(), visits=400)
    lost = [int(mv) for mv, ch in zip(m.root.moves, m.root.children) if ch is not None and ch.proven == 1]
    assert len(lost) >= 5 and st.tree_vct_wins >= len(lost) and st.tree_vct_searches > st.tree_vct_wins
    b = _threatened_root()
    for mv in lost:
        b.push(mv)
        assert vct.vct_search(b, max_depth=5, node_limit=20000).line, b.move_name(mv)
        b.pop()
    assert not any(tactics.find_vcf(_push(b, mv), node_limit=5000) for mv in lost)
    m0 = MCTS(UniformEvaluator(), MCTSConfig(leaf_vcf_nodes=0))
    st0 = m0.search(_threatened_root(), visits=400)
    assert st0.tree_vct_searches == 0
    assert not any(ch is not None and ch.proven == 1 for ch in m0.root.children)


def _push(b: Board, mv: int) -> Board:
    c = b.copy()
    c.push(mv)
    return c


@pytest.mark.parametrize("rule", list(Rule))
def test_leaf_vcf_budget_follows_the_prover(rule: Rule, monkeypatch: pytest.MonkeyPatch) -> None:
    """By default the leaf VCF gets the larger budget exactly where the C prover serves the rule;
    a set value is kept whatever the prover, and a search attaches the budget to its tree."""
    import gomoku_ai.mcts as mcts_mod
    from gomoku_ai import native
    b = Board(15, rule=rule)
    b.push(7 * 15 + 7)
    for enabled in (True, False):
        monkeypatch.setattr(native, "ENABLED", enabled and native._c is not None)
        want = mcts_mod.LEAF_VCF_NODES_NATIVE if native.serves(b) else mcts_mod.LEAF_VCF_NODES_PYTHON
        if not native.ENABLED or rule not in native.RULES:
            assert want == mcts_mod.LEAF_VCF_NODES_PYTHON
        assert mcts_mod.leaf_vcf_budget(MCTSConfig(), b) == want
        assert mcts_mod.leaf_vcf_budget(MCTSConfig(leaf_vcf_nodes=7), b) == 7
        assert mcts_mod.leaf_vcf_budget(MCTSConfig(leaf_vcf_nodes=0), b) == 0
        m = MCTS(HeuristicEvaluator(), MCTSConfig())
        m.search(b, visits=20)
        assert m.tree.leaf_vcf_nodes == want
    assert mcts_mod.with_overrides(MCTSConfig(), "leaf_vcf_nodes=300").leaf_vcf_nodes == 300


def _game_positions(count: int) -> list:
    """The first ``count`` unfinished middle-game positions of benchmarks/data/vct_game_positions.txt
    (read by the benchmark's own reader)."""
    import sys
    from pathlib import Path
    bench = Path(__file__).resolve().parents[1] / "benchmarks"
    if str(bench) not in sys.path:
        sys.path.insert(0, str(bench))
    import bench_vct_games
    out = []
    for size, moves in bench_vct_games.read(bench_vct_games.POSITIONS):
        b = Board(size)
        for x, y in moves:
            b.play(y * size + x)
        if b.winner is None:
            out.append(b)
        if len(out) == count:
            break
    return out


def test_leaf_vcf_cut_only_cuts_moves_that_lose_to_a_vcf() -> None:
    """The sibling cut (``leaf_vcf_cut``, off by default) on real middle-game positions: it cuts many moves, and every
    move the tree holds as lost without a proven child of its own (the cut ones) really leaves the
    opponent a VCF, at the root and two levels below it."""
    from gomoku_ai import tactics
    cuts = checked = 0
    for b in _game_positions(12):
        m = MCTS(HeuristicEvaluator(), MCTSConfig(leaf_vcf_cut=True))
        st = m.search(b, visits=200)
        cuts += st.leaf_vcf_cuts
        stack = [(m.root, [])]
        while stack:
            node, path = stack.pop()
            if not node.expanded or node.proven:
                continue
            for i, mv in enumerate(node.moves.tolist()):
                ch = node.children[i]
                if node.Q[i] <= LOSS_Q and (ch is None or not ch.proven):
                    for p in path + [mv]:
                        b.push(p)
                    assert tactics.find_vcf(b, node_limit=20000), b.move_name(mv)
                    for _ in range(len(path) + 1):
                        b.pop()
                    checked += 1
                if ch is not None and ch.expanded and len(path) < 2:
                    stack.append((ch, path + [mv]))
    assert cuts >= 100 and checked >= 50


def test_leaf_vcf_cut_proves_the_same_with_fewer_vcf_searches() -> None:
    """On the four-three puzzle (White to move, nearly every move loses to Black's VCF), the cut
    proves as many root moves lost as the leaf VCF alone, with fewer VCF wins (the siblings of a
    refuted move that cannot touch its line are cut without a search); the defence is never cut."""
    def lost_after(cut: bool) -> Tuple[list, Any]:
        b, _star = _four_three()
        mcts = MCTS(UniformEvaluator(), MCTSConfig(leaf_vcf_cut=cut))
        stats = mcts.search(b, visits=150)
        r = mcts.root
        return [int(r.moves[i]) for i in range(len(r.moves)) if r.Q[i] <= LOSS_Q], stats

    _b, star = _four_three()
    lost, st = lost_after(True)
    lost0, st0 = lost_after(False)
    assert st.leaf_vcf_cuts > 0 and st0.leaf_vcf_cuts == 0
    assert star not in lost and len(lost) >= len(lost0) >= 10
    assert st.leaf_vcf_wins < st0.leaf_vcf_wins


def test_leaf_vcf_cut_is_off_under_renju() -> None:
    """Renju's forbidden points make "cannot touch the line" depend on more than distance: no cut."""
    from tests.test_tactics import pos
    r, _marks = pos(FOUR_THREE, rule=Rule.RENJU, to_move=2, at=(3, 3))
    st = MCTS(UniformEvaluator(), MCTSConfig(leaf_vcf_cut=True)).search(r, visits=150)
    assert st.leaf_vcf_wins > 0 and st.leaf_vcf_cuts == 0


def test_leaf_vcf_table_is_shared_and_changes_no_answer() -> None:
    """The leaf VCF searches of a tree share one transposition table (``leaf_vcf_tt``): it fills up,
    and on 12 game positions the searches prove the same nodes, cut the same moves and choose the
    same moves with and without it (an entry is a fact about its position). A new board size drops it."""
    results = {}
    for tt in (True, False):
        out = []
        for b in _game_positions(12):
            # (forced_pass off: the count below was set for that tree shape)
            m = MCTS(HeuristicEvaluator(), MCTSConfig(leaf_vcf_tt=tt, leaf_vcf_cut=True, forced_pass=False))
            st = m.search(b, visits=200)
            out.append((st.leaf_vcf_wins, st.leaf_vcf_cuts, m.best_move()))
            assert (len(m.tree.vcf_tt) > 0) == tt
        results[tt] = out
    assert results[True] == results[False]
    assert sum(w for w, _c, _m in results[True]) >= 50
    m = MCTS(HeuristicEvaluator(), MCTSConfig())
    m.search(_game_positions(1)[0], visits=100)
    assert m.tree.vcf_tt
    small = Board(9)
    for mv in (40, 41, 31, 49, 22):
        small.play(mv)
    before = m.tree.vcf_tt
    m.search(small, visits=20)
    assert m.tree.vcf_tt is not before


def test_leaf_vcf_table_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """The leaf VCF table is dropped once it holds over LEAF_VCF_TT_MAX entries, within a search.
    (The Python prover's dictionary; the C prover's table is a fixed array, gomoku_ai.native.)"""
    import gomoku_ai.mcts as mcts_mod
    from gomoku_ai import native
    monkeypatch.setattr(native, "ENABLED", False)
    b = _game_positions(3)[2]
    m = MCTS(HeuristicEvaluator(), MCTSConfig())
    m.search(b, visits=300)
    unbounded = len(m.tree.vcf_tt)
    monkeypatch.setattr(mcts_mod, "LEAF_VCF_TT_MAX", 50)
    m = MCTS(HeuristicEvaluator(), MCTSConfig())
    st = m.search(b, visits=300)
    assert st.leaf_vcf_wins > 0
    # one VCF search stores at most one entry per attacker node past the limit
    bound = 50 + mcts_mod.LEAF_VCF_NODES_PYTHON
    assert unbounded > bound and 0 < len(m.tree.vcf_tt) <= bound


# ------------------------------------------------------------------ the evaluation cache
class CountingHeuristic(HeuristicEvaluator):
    """The heuristic evaluator (deterministic), declared cacheable, counting the positions it is
    asked to evaluate by their cache key."""
    cacheable = True

    def __init__(self, batch_size: int = 1) -> None:
        super().__init__()
        self.batch_size = batch_size
        self.asked: Counter = Counter()

    def prepare(self, board: Board) -> Any:
        self.asked[eval_key(board)] += 1
        return super().prepare(board)


def _middle_game(size: int = 15) -> Board:
    b = Board(size)
    c = size // 2
    for dx, dy in ((0, 0), (1, 1), (-1, 1), (1, -1), (1, 0), (0, 2)):
        b.play((c + dy) * size + c + dx)
    return b


def test_eval_cache_keeps_the_most_recently_used_copies() -> None:
    cache = EvalCache(2)
    a, b, c = (1, 0), (2, 0), (3, 0)
    logits = np.arange(4, dtype=np.float32)
    cache.put(a, logits, 0.5)
    logits[0] = 99.0                       # the cache holds a copy
    cache.put(b, np.zeros(4, np.float32), -0.25)
    assert cache.get(a)[0][0] == 0.0 and cache.get(a)[1] == 0.5
    cache.put(c, np.ones(4, np.float32), 0.0)   # b, the least recently used, goes
    assert cache.get(b) is None and cache.get(a) is not None and cache.get(c) is not None
    assert len(cache) == 2
    off = EvalCache(0)
    off.put(a, logits, 0.0)
    assert len(off) == 0 and off.get(a) is None


def test_a_cached_search_builds_the_same_tree_with_fewer_evaluations() -> None:
    """One leaf at a time, a cache hit expands a leaf exactly as its evaluation would: the same
    visits everywhere, over two searches with the tree reused in between; no position is asked
    twice, and every simulation is an evaluation, a cache hit or a proven/terminal leaf."""
    trees = []
    for cache in (0, 4096):
        ev = CountingHeuristic()
        mcts = MCTS(ev, MCTSConfig(eval_cache=cache, leaf_vcf_nodes=0))
        b = _middle_game()
        st1 = mcts.search(b, visits=700)
        for mv in (mcts.best_move(), b.parse("e5")):
            b.play(mv)
        st2 = mcts.search(b, visits=1400)
        trees.append((mcts, ev, st1, st2))
    (plain, ev0, a1, a2), (cached, ev1, c1, c2) = trees
    assert a1.cache_hits == a2.cache_hits == 0
    assert c1.cache_hits + c2.cache_hits > 0
    assert c1.evaluations + c2.evaluations == sum(ev1.asked.values())
    assert max(ev1.asked.values()) == 1, "a cached position was evaluated again"
    assert max(ev0.asked.values()) > 1          # without the cache some are
    assert sum(ev1.asked.values()) < sum(ev0.asked.values())
    assert c1.evaluations + c1.cache_hits <= c1.simulations

    def visits(node: Node) -> list:
        out = [node.N.tolist() if node.expanded else None]
        for ch in (node.children if node.expanded else []):
            if ch is not None:
                out.extend(visits(ch))
        return out
    assert visits(plain.root) == visits(cached.root)
    assert _check_tree(cached.root) == cached.n_nodes


def test_cache_hits_within_batches_revert_their_virtual_loss() -> None:
    mcts = MCTS(CountingHeuristic(batch_size=8), MCTSConfig(eval_cache=4096))
    b = _middle_game()
    st = mcts.search(b, visits=1500)
    assert st.cache_hits > 0
    assert _check_tree(mcts.root) == mcts.n_nodes


def test_evaluators_not_declared_cacheable_are_always_asked() -> None:
    mcts = MCTS(HeuristicEvaluator(), MCTSConfig(eval_cache=4096))
    st = mcts.search(_middle_game(), visits=800)
    assert st.cache_hits == 0 and len(mcts.tree.eval_cache) == 0


def test_the_cache_starts_again_on_another_board_size() -> None:
    ev = CountingHeuristic()
    mcts = MCTS(ev, MCTSConfig(eval_cache=100_000))
    mcts.search(_middle_game(15), visits=300)
    assert len(mcts.tree.eval_cache) > 0
    ev.asked.clear()
    mcts.search(_middle_game(20), visits=300)
    # only the 20x20 positions are kept: the 15x15 ones were dropped with the board
    assert len(mcts.tree.eval_cache) == len(ev.asked)


def test_the_player_fits_the_cache_into_its_memory_limit() -> None:
    from gomoku_ai.player import BASELINE_BYTES, Player
    p = Player(CountingHeuristic(), config=MCTSConfig(eval_cache=4096))
    b = _middle_game(20)
    p.think(b, Limit(visits=50))
    assert p.mcts.cfg.eval_cache == 4096
    per_entry = eval_cache_bytes(1, b.size)
    p.memory_limit_bytes = BASELINE_BYTES + 40 * per_entry
    p.think(b, Limit(visits=50))
    assert p.mcts.cfg.eval_cache == 10            # a quarter of what is left
    assert len(p.mcts.tree.eval_cache) <= 10      # dropped at once, not at the next put
    p.memory_limit_bytes = None
    p.think(b, Limit(visits=50))
    assert p.mcts.cfg.eval_cache == 4096


# ------------------------------------------------------------------ forced replies gone through
def _single_child_keys(node: Node, board: Board, out: list) -> list:
    """The eval keys of the expanded nodes below ``node`` (``board`` at its position, restored)
    that have exactly one child."""
    for i, ch in enumerate(node.children if node.expanded else []):
        if ch is None:
            continue
        board.push(int(node.moves[i]))
        if ch.expanded and len(ch.moves) == 1:
            out.append(eval_key(board))
        _single_child_keys(ch, board, out)
        board.pop()
    return out


@pytest.mark.parametrize("batch", [1, 8])
def test_forced_pass_evaluates_no_single_child_node(batch: int) -> None:
    """With forced_pass, no node below the root that has a single child (here the blocks of fours)
    is sent to the evaluator and the tree stays consistent (virtual loss reverted, N summing to n);
    without it, such nodes are evaluated."""
    asked = {}
    for on in (False, True):
        ev = CountingHeuristic(batch_size=batch)
        mcts = MCTS(ev, MCTSConfig(forced_pass=on, eval_cache=0))
        b, _star = _four_three()
        st = mcts.search(b, visits=1500)
        keys = _single_child_keys(mcts.root, b, [])
        assert keys, "the position has forced replies in the tree"
        asked[on] = sum(1 for k in keys if ev.asked[k])
        assert _check_tree(mcts.root) == mcts.n_nodes
        assert (st.forced_passes > 0) == on
        assert st.evaluations == sum(ev.asked.values())
    assert asked[True] == 0 and asked[False] > 0


def test_forced_pass_proves_the_same_wins_and_losses() -> None:
    """The solver's answers do not change: a win in two is proven, a loss against an open four too,
    and the four-three's defence is not among the moves proven lost."""
    cfg = MCTSConfig(forced_pass=True)
    b = Board.from_ascii("""
    .........
    .........
    .........
    ...XXX...
    .........
    ..O......
    ...O.....
    .........
    .........""", to_move=1)
    mcts = MCTS(UniformEvaluator(), cfg)
    assert mcts.search(b, visits=20000).stopped_by is StopReason.SOLVED
    assert mcts.root.proven == 1 and mcts.best_move() in (b.index(2, 3), b.index(6, 3))
    _m, stats, lost = _proven_children(dataclasses.replace(cfg, leaf_vcf_nodes=40, leaf_vcf_after=0), 300)
    b, star = _four_three()
    assert stats.forced_passes > 0 and len(lost) >= 10 and star not in lost


def test_forced_pass_is_not_applied_at_the_root() -> None:
    """A root that must block a four keeps its evaluation and its one child as before."""
    b = Board.from_ascii("""
    .........
    .........
    .........
    .OXXXX...
    ..O......
    .........
    ...O.....
    .........
    .........""", to_move=2)
    ev = CountingHeuristic()
    mcts = MCTS(ev, MCTSConfig(forced_pass=True))
    mcts.search(b, visits=50)
    assert ev.asked[eval_key(b)] == 1
    assert mcts.root.expanded and mcts.root.moves.tolist() == [b.index(6, 3)]


def _root_with(cfg: MCTSConfig, N: Sequence[float], Q: Sequence[float]) -> MCTS:
    """A searched 9x9 root whose first len(N) children get the given visits and values (the others none)."""
    b = Board(9)
    b.play(b.parse("e5"))
    m = MCTS(UniformEvaluator(), cfg)
    m.search(b, visits=50)
    root = m.root
    k = len(root.moves)
    assert k > len(N)
    root.N = np.zeros(k, np.float32)
    root.Q = np.full(k, -0.5, np.float32)
    root.N[:len(N)] = N
    root.Q[:len(Q)] = Q
    return m


def test_best_move_is_the_most_visited_without_lcb() -> None:
    m = _root_with(MCTSConfig(), [100, 30, 5], [0.0, 0.2, 0.9])
    assert m.best_move() == int(m.root.moves[0])
    assert [t[0] for t in m.top_moves(3)] == [int(x) for x in m.root.moves[:3]]


@pytest.mark.parametrize("N,Q,first", [
    ([40, 40, 5], [0.1, 0.3, 0.0], 1),          # a tie in visits: the higher value
    ([100, 30, 5], [LOSS_Q, 0.2, 0.0], 1),      # the most visited is a proven loss: it goes last
])
def test_the_first_candidate_is_the_move_played_without_lcb(N: Sequence[float], Q: Sequence[float],
                                                            first: int) -> None:
    """``top_moves`` ranks as ``best_move`` chooses (the player's candidates[0] is the move it plays;
    ranking by visits alone broke ties by index and kept a proven loss first)."""
    m = _root_with(MCTSConfig(), N, Q)
    order = [t[0] for t in m.top_moves(len(m.root.moves))]
    assert m.best_move() == order[0] == int(m.root.moves[first])
    if Q[0] <= LOSS_Q:
        assert order[-1] == int(m.root.moves[0])


def test_lcb_selection_plays_a_better_valued_move_with_enough_visits() -> None:
    # lcb_z 0.5: child 0 scores 0.0 - 0.5/10 = -0.05, child 1 0.2 - 0.5/sqrt(30) = +0.109; child 2
    # (Q 0.9) has 5 visits, under lcb_min_share 0.1 of the 100 of the most visited: not eligible
    m = _root_with(MCTSConfig(lcb_z=0.5), [100, 30, 5], [0.0, 0.2, 0.9])
    moves = [int(x) for x in m.root.moves[:3]]
    assert m.best_move() == moves[1]
    assert [t[0] for t in m.top_moves(3)] == [moves[1], moves[0], moves[2]]
    # a wide spread keeps the most visited: 0.0 - 5/10 = -0.5 against 0.2 - 5/sqrt(30) = -0.713
    m = _root_with(MCTSConfig(lcb_z=5.0), [100, 30, 5], [0.0, 0.2, 0.9])
    assert m.best_move() == moves[0]


def test_lcb_selection_never_plays_a_proven_loss() -> None:
    m = _root_with(MCTSConfig(lcb_z=0.5), [100, 90, 30], [LOSS_Q, -0.9, 0.0])
    moves = [int(x) for x in m.root.moves[:3]]
    assert m.best_move() == moves[2]      # 0.0 - 0.091 against -0.9 - 0.053; the loss is out
    assert m.top_moves(len(m.root.moves))[-1][0] == moves[0]


@pytest.mark.parametrize("field,value", [("lcb_z", -0.1), ("lcb_z", float("nan")), ("lcb_min_share", 1.5)])
def test_lcb_fields_are_checked(field: str, value: float) -> None:
    with pytest.raises(ValueError, match=field):
        MCTSConfig(**{field: value})
