"""The optional C core (``gomoku_ai/_native.c``): the VCF prover of :mod:`gomoku_ai.tactics`, its
whole-board window scans and the VCT search of :mod:`gomoku_ai.vct`, compiled.

``pip install -e .`` (``make``) builds it where a C compiler exists; without one the package installs
all the same and :func:`gomoku_ai.tactics.vcf_search` runs its pure-Python prover. The two find the
same lines for the same depths (``tests/test_native.py`` checks them against each other); the C one
runs about 5 to 25 times as fast (``benchmarks/results/s20/``: 6 times the attacker nodes a second on
game positions, where the searches are short, 23 times on a seven-four puzzle). It serves FREESTYLE and
STANDARD boards; renju's forbidden points and caro's blocked fives stay with the Python prover.

The window scans (:func:`window_scans`, which every VCF, VCT and tree node's threat check starts
from) give exactly the Python lists, in the same order, for every rule, and so do the VCT's threat
moves (:func:`threats`) and the four moves (:func:`four_moves`) for freestyle and standard, so the
searches that use them are unchanged move for move.

:func:`vct` is the whole VCT search of :mod:`gomoku_ai.vct` (session 21), with the C prover for
its VCF searches: the same search, so the same line, node counts and depth as the Python search
(``tests/test_native_vct.py``). Its memos are C hash maps freed at its end; the move-ordering hints
stay the caller's dictionaries.

``PYGOMOKU_NATIVE=0`` in the environment turns it off (A/B matches, or to rule it out); read once,
at import. ``PYGOMOKU_VCT_NATIVE=0`` turns off only the VCT search (:data:`gomoku_ai.vct.NATIVE_VCT`).
:func:`status` says which prover runs and why.

:func:`tree_ops` is the MCTS tree's arithmetic (the selection with its virtual loss, one edge's
backup, the candidate squares near the stones), for every rule: the same float64 operations in the
same order as :mod:`gomoku_ai.mcts`'s Python code, so a search gives the identical tree with or
without it (``tests/test_native_tree.py``); it only saves the interpreter's per-element work on numpy
scalars (session 32: 14 % more simulations a second on 15x15, 6 % on 20x20).

:func:`node_ops` is the creation of a tree node (session 33): the replies to an open three
(:func:`gomoku_ai.mcts._three_replies`) and a new node's five-points (:func:`gomoku_ai.mcts._init_threats`),
for freestyle and standard boards; :func:`encoder` writes the network's input planes of a board seen
through a symmetry (:func:`gomoku_ai.net.encoding.encode_transformed`), for every rule. Both return
exactly what the Python code returns (``tests/test_native_nodes.py``, ``tests/test_net.py``), so the
trees are unchanged; with the evaluator's one-gather restore of the logits, 10 % more simulations a
second on both boards (``benchmarks/results/s33/``).

The C prover keeps its transposition tables in one array for the process (8 MB, allocated at the
first search, entries overwritten on collision). Each entry carries a table number: a search without
a caller's table gets a number of its own, and the searches that share a caller's ``tt`` dictionary
(:func:`gomoku_ai.tactics._vcf_in`: a VCT's VCF searches, a tree's leaf searches) share its number
(:func:`table_for`), as the Python prover shares the dictionary itself.
"""
from __future__ import annotations

import itertools
import os
import time
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

import numpy as np

from .board import Board
from .rules import Rule

try:
    from . import _native as _c  # type: ignore[attr-defined]
    _IMPORT_ERROR: Optional[str] = None
except ImportError as exc:    # not built: no C compiler when the package was installed
    _c = None
    _IMPORT_ERROR = str(exc)

#: the rules the C prover knows (renju and caro: Python)
RULES = (Rule.FREESTYLE, Rule.STANDARD)

ENABLED = _c is not None and os.environ.get("PYGOMOKU_NATIVE", "1") != "0"

_SALT = {Rule.FREESTYLE: 1, Rule.STANDARD: 2}


class NativeVCF(NamedTuple):
    """What the C prover returned: ``line`` (flat moves, the format of
    :func:`gomoku_ai.tactics.find_vcf`) or None, attacker ``nodes``, the last ``depth`` searched,
    ``complete`` (no VCF of any length), ``aborted`` (node limit or deadline)."""

    line: Optional[List[int]]
    nodes: int
    depth: int
    complete: bool
    aborted: bool


def geometry(board: Board) -> Tuple[int, int, int, int]:
    """The board arguments every C function takes after the cells: (width, height, n, exact), exact
    1 when only a row of exactly n wins (STANDARD; the C core serves no other exact-five rule)."""
    return board.width, board.height, board.n, int(board.rule is Rule.STANDARD)


def available() -> bool:
    """True when the C prover is built and not turned off by ``PYGOMOKU_NATIVE=0``."""
    return ENABLED


def serves(board: Board) -> bool:
    """True when :func:`vcf` can search ``board`` (C prover on, a rule it knows, n <= 8)."""
    return ENABLED and board.rule in RULES and 3 <= board.n <= 8


def status() -> str:
    """One line for people: which VCF prover runs, and why."""
    if _c is None:
        return f"python (the C core is not built: {_IMPORT_ERROR})"
    if not ENABLED:
        return "python (PYGOMOKU_NATIVE=0)"
    return ("c (gomoku_ai._native: the VCF prover, the VCT search and the threat lists for freestyle "
            "and standard, the window scans for every rule)")


_TABLES = itertools.count(1)
_TABLE_KEY = -1     # Board.hash is never negative, so this key of a caller's dictionary is free


def table_for(tt: Optional[Dict[int, int]]) -> int:
    """The C table number of a caller's transposition dictionary (kept in it, under key -1), or a
    new number when ``tt`` is None."""
    if tt is None:
        return next(_TABLES) & 0xFFFFFFFF
    t = tt.get(_TABLE_KEY)
    if t is None:
        t = tt[_TABLE_KEY] = next(_TABLES) & 0xFFFFFFFF
    return t


def vcf(board: Board, node_limit: int, max_depth: int = 40,
        deadline: Optional[float] = None, table: Optional[int] = None) -> NativeVCF:
    """VCF search for the side to move of ``board`` (which :func:`serves`); ``deadline`` is an
    absolute :func:`time.perf_counter` time, ``node_limit`` counts attacker nodes as the Python
    prover does; ``table``: a number from :func:`table_for` to share a transposition table with
    earlier searches (None: a fresh one). The board is not changed."""
    assert _c is not None
    budget = 0.0
    if deadline is not None:
        budget = deadline - time.perf_counter()
        if budget <= 0:
            return NativeVCF(None, 0, 0, False, True)
    salt = (_SALT[board.rule] << 16) | (board.n << 12) | (board.width << 6) | board.height
    line, nodes, depth, complete, aborted = _c.search(
        board._buf, *geometry(board), board.side_to_move, max(1, node_limit), max_depth, budget, salt,
        table_for(None) if table is None else table)
    return NativeVCF(line, nodes, depth, bool(complete), bool(aborted))


#: the deepest VCT (attacker threats) the C search takes: each level holds about 40 KB of C stack
VCT_MAX_DEPTH = 20


class NativeVCT(NamedTuple):
    """What the C VCT returned: ``line`` (flat moves, the format of :attr:`gomoku_ai.vct.VCTResult.line`)
    or None, attacker ``nodes``, ``vcf_nodes`` (inside its VCF searches), ``aborted``, and the last
    ``depth`` searched."""

    line: Optional[List[int]]
    nodes: int
    vcf_nodes: int
    aborted: bool
    depth: int


def vct(board: Board, max_depth: int, node_limit: int, deadline: Optional[float], vcf_nodes: int,
        max_threats: int, replay: bool, hints_attack: Optional[Dict[int, int]],
        hints_defence: Optional[Dict[int, int]], start_depth: int = 1,
        proof_numbers: bool = False, quiet_moves: int = 0) -> NativeVCT:
    """:class:`gomoku_ai.vct._VCT` (without ``verify_defences``) in C for the side to move of ``board``
    (which :func:`serves`; ``max_depth`` <= :data:`VCT_MAX_DEPTH`): the same search, answers and
    node counts. ``deadline``: an absolute :func:`time.perf_counter` time. ``hints_*``: the
    dictionaries of a :class:`gomoku_ai.vct.Hints`, read and updated (keyed by the C prover's
    position keys, so a Hints object should serve C searches only); ``start_depth``: the first
    depth of the iterative deepening. ``proof_numbers``: search the same tree by depth-first
    proof-number search instead (the depth capped at 1, 2, 3, 5, 8, 12 then ``max_depth``, those
    below ``start_depth`` skipped; ``replay`` unused). ``quiet_moves``: the root's quiet candidates
    (:func:`gomoku_ai.vct._quiet_threats`, computed in C). Its VCF searches share
    one new transposition table. The board is not changed."""
    assert _c is not None
    budget = 0.0
    if deadline is not None:
        budget = max(deadline - time.perf_counter(), 1e-9)   # past: aborted at the first node
    salt = (_SALT[board.rule] << 16) | (board.n << 12) | (board.width << 6) | board.height
    line, nodes, vcf_total, aborted, depth = _c.vct(
        board._buf, *geometry(board), board.side_to_move, max_depth, node_limit, vcf_nodes, max_threats, budget, salt,
        table_for(None), replay, hints_attack, hints_defence, start_depth, proof_numbers, quiet_moves)
    return NativeVCT(line, nodes, vcf_total, bool(aborted), depth)


def clear() -> None:
    """Empty the C prover's transposition table (tests and benchmarks that need a cold start)."""
    if _c is not None:
        _c.clear()


def window_scans(board: Board, wants: Tuple[Tuple[int, int], ...]) -> List[List[Tuple[int, int]]]:
    """:func:`gomoku_ai.tactics._window_scans` of ``board`` in C (same lists, same order): for each
    (colour, need) of ``wants`` (at most 8), the (square, direction) of the empty squares of every
    n-window holding exactly ``need`` stones of the colour and empty squares otherwise."""
    assert _c is not None
    return _c.window_scans(board._buf, board.width, board.height, board.n, wants)


def threats(board: Board, color: int) -> List[Tuple[int, int, int]]:
    """:func:`gomoku_ai.vct._threats` in C (the same list) for a board that :func:`serves`."""
    assert _c is not None
    return _c.threats(board._buf, *geometry(board), color)


def four_moves(board: Board, color: int) -> List[Tuple[int, Tuple[int, ...], bool, bool]]:
    """:func:`gomoku_ai.tactics._four_moves` in C, as plain tuples (move, five-points, straight,
    double), for a board that :func:`serves`."""
    assert _c is not None
    return _c.four_moves(board._buf, *geometry(board), color)


#: (Q, PU, P, N, W, n, c_puct, virtual_loss, loss_q, win_q) -> the index of the child selected
SelectVL = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, float, float,
                     float, float], int]
#: (Q, PU, P, N, W, i, virtual_loss, value or None, fpu_q, loss_q, win_q) -> None
BackupEdge = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, float,
                       Optional[float], float, float, float], None]
#: (near_root, the board's padded cells, width, height, board.moves, root ply, radius) -> squares
NearCandidates = Callable[[np.ndarray, bytearray, int, int, List[int], int, int], List[int]]


class TreeOps(NamedTuple):
    """The C core's MCTS arithmetic (:func:`tree_ops`); each computes what the Python code it
    stands for computes, exactly."""

    select_vl: SelectVL             #: the selection and virtual loss of :func:`gomoku_ai.mcts._descend`
    backup_edge: BackupEdge         #: one edge of :func:`gomoku_ai.mcts._backup` (child not proven)
    near_candidates: NearCandidates  #: :meth:`gomoku_ai.mcts.SearchTree.candidates_all`


#: (the board's padded cells, width, height, n, exact, move, colour) -> squares or None
ThreeReplies = Callable[[bytearray, int, int, int, int, int, int], Optional[List[int]]]
#: (cells, width, height, n, exact, move, colour to move, parent's opp_fives, parent's my_fives)
#: -> (my_fives, opp_fives or None)
ChildFives = Callable[[bytearray, int, int, int, int, int, int, List[int], List[int]],
                      Tuple[List[int], Optional[List[int]]]]


class NodeOps(NamedTuple):
    """The C core's node creation for the MCTS tree (:func:`node_ops`), FREESTYLE and STANDARD
    boards only (:func:`serves`); each returns what the Python code it stands for returns, in the
    same order."""

    three_replies: ThreeReplies     #: :func:`gomoku_ai.mcts._three_replies` past its rule checks
    child_fives: ChildFives         #: the lists of :func:`gomoku_ai.mcts._init_threats`


def _functions(names: Tuple[str, ...]) -> Optional[List[Any]]:
    """The C core's functions of these names when it is built and on and has them all, else None
    (off, not built, or an older build without some of them)."""
    if not ENABLED:
        return None
    fns: List[Any] = [getattr(_c, name, None) for name in names]
    return None if any(f is None for f in fns) else fns


def node_ops() -> Optional[NodeOps]:
    """The C core's node creation when it is built (with it) and on, else None (the Python code,
    the same lists). The caller checks :func:`serves` for each board."""
    fns = _functions(NodeOps._fields)
    return None if fns is None else NodeOps(*fns)


#: (the board's padded cells, width, height, side to move, last move or -1, symmetry id, out) -> None
EncodePlanes = Callable[[bytearray, int, int, int, int, int, np.ndarray], None]


def encoder() -> Optional[EncodePlanes]:
    """The C core's input encoding (:func:`gomoku_ai.net.encoding.encode_transformed`: the planes of
    a board seen through a symmetry, written into a float32 array) when it is built (with it) and
    on, else None. Every rule (the planes do not depend on it)."""
    fns = _functions(("encode",))
    return None if fns is None else fns[0]


def tree_ops() -> Optional[TreeOps]:
    """The C core's MCTS arithmetic when it is built (with it) and on, else None (the search then
    runs its Python code; the trees are identical). The arrays are a node's float64 child
    statistics, changed in place."""
    fns = _functions(TreeOps._fields)
    return None if fns is None else TreeOps(*fns)
