"""The C VCF prover (gomoku_ai._native through gomoku_ai.native) against the pure-Python one.

Both are run on the VCT and blunder position sets of ``benchmarks/data`` and on positions of random
games (freestyle and standard, 9x9 to 20x20, each side to move). Where both finish, they must agree on
whether a VCF exists and on its length in fours (both deepen one four at a time), and every C line
must replay as a forced win (:func:`gomoku_ai.tactics.is_vcf_line`).
"""
from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List, Tuple

import pytest

from gomoku_ai import native
from gomoku_ai import tactics as T
from gomoku_ai.board import Board
from gomoku_ai.rules import Rule
from gomoku_ai.vct import read_positions

ROOT = Path(__file__).resolve().parents[1]

needs_c = pytest.mark.skipif(not native.available(), reason=f"C prover not running: {native.status()}")


def test_the_c_prover_is_built_where_a_compiler_exists() -> None:
    """``pip install -e .`` (make) builds it when it can; a missing build must not pass unnoticed."""
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler on this machine: the Python prover runs")
    assert native._c is not None, native.status()
    if os.environ.get("PYGOMOKU_NATIVE", "1") != "0":
        assert native.available() and native.status().startswith("c ")


def _random_positions(rng: random.Random, rule: Rule, size: int, count: int, spread: int = 5,
                      plies: Tuple[int, int] = (6, 40)) -> List[Board]:
    """Positions of random games played within ``spread`` squares of the centre, each of
    ``plies[0]`` to ``plies[1] - 1`` attempted moves (stopped before a five)."""
    out = []
    lo, hi = max(0, size // 2 - spread), min(size, size // 2 + spread + 1)
    for _ in range(count):
        b = Board(size, rule=rule)
        for _ in range(rng.randrange(*plies)):
            m = rng.randrange(lo, hi) * size + rng.randrange(lo, hi)
            if not b.is_empty(m):
                continue
            b.push(m)
            if b.winner is not None:
                b.pop()
                break
        out.append(b)
    return out


def _filled_board(rng: random.Random, rule: Rule, w: int, h: int, n: int) -> Board:
    """A w x h board with up to half its squares filled at random: stones (no win checks, so any
    pattern) and about 3 % walls."""
    b = Board(w, h, rule=rule, n=n)
    for _ in range(rng.randrange(0, w * h // 2)):
        m = rng.randrange(w * h)
        if b.is_empty(m):
            b.put_wall(m) if rng.random() < 0.03 else b.push_quiet(m)
    return b


def _positions() -> List[Board]:
    boards = []
    for name in ("vct_positions.txt", "blunder_positions.txt"):
        boards += [p.board() for p in read_positions(ROOT / "benchmarks" / "data" / name)]
    rng = random.Random(7)
    for rule in (Rule.FREESTYLE, Rule.STANDARD):
        for size in (9, 15, 20):
            boards += _random_positions(rng, rule, size, 40)
    return [b for b in boards if b.rule in native.RULES]


@needs_c
def test_c_and_python_provers_agree() -> None:
    found = compared = 0
    for b in _positions():
        for passed in (False, True):
            if passed:
                b.pass_turn()
            py = T._VCF(b, 100_000, None).run(40)
            c = native.vcf(b, 100_000)
            if not (py.aborted or c.aborted):
                compared += 1
                assert (py.line is None) == (c.line is None), (b.move_name, py.line, c.line)
                assert py.complete == c.complete
                if c.line is not None:
                    assert c.depth == py.depth
            if c.line is not None:
                found += 1
                assert T.is_vcf_line(b, c.line), c.line
            if passed:
                b.pass_turn()
    assert compared > 500 and found > 100     # the sets hold both kinds


@needs_c
def test_node_limit_deadline_and_board_left_unchanged() -> None:
    b = read_positions(ROOT / "benchmarks" / "data" / "vct_positions.txt")[0].board()
    b.pass_turn()              # searching for the side that does not hold the win: a long failure
    before = bytes(b._buf), b.hash
    r = native.vcf(b, 1)
    assert r.aborted and r.line is None and r.nodes == 1
    r = native.vcf(b, 10**9, deadline=0.0)        # a deadline in the past
    assert r.aborted and r.nodes == 0
    assert (bytes(b._buf), b.hash) == before


@needs_c
def test_a_search_does_not_depend_on_earlier_unrelated_searches() -> None:
    """Searches with their own table see only that table's entries (same nodes, same line); the
    searches of one shared table (a caller's dictionary) reuse each other's work."""
    boards = _positions()[:40]
    target = boards[3]
    first = native.vcf(target, 50_000)
    for b in boards:
        native.vcf(b, 50_000)
    assert native.vcf(target, 50_000) == first
    tt: dict = {}
    nodes = [native.vcf(b, 50_000, table=native.table_for(tt)).nodes for b in boards[:10]]
    again = [native.vcf(b, 50_000, table=native.table_for(tt)).nodes for b in boards[:10]]
    assert sum(again) < sum(nodes)
    assert list(tt) == [-1]      # the dictionary only carries the table's number


def test_renju_and_caro_stay_with_the_python_prover() -> None:
    for rule in (Rule.RENJU, Rule.CARO):
        assert not native.serves(Board(15, rule=rule))
    assert native.serves(Board(15, rule=Rule.FREESTYLE)) == native.available()


@needs_c
def test_bad_arguments_are_refused() -> None:
    assert native._c is not None
    with pytest.raises(ValueError, match="bad board geometry"):
        native._c.search(b"\x03" * 10, 15, 15, 5, 0, 1, 100, 40, 0.0, 0, 1)


def test_the_switch_turns_it_off() -> None:
    env = dict(os.environ, PYGOMOKU_NATIVE="0")
    out = subprocess.run([sys.executable, "-c", "import gomoku_ai.native as n; print(n.status())"],
                         env=env, capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert out.startswith("python (")


@needs_c
@pytest.mark.parametrize("rule", list(Rule))
def test_c_window_scans_are_the_python_lists(rule: Rule, monkeypatch: pytest.MonkeyPatch) -> None:
    """Same lists in the same order (the searches built on them are unchanged move for move), on
    random boards with stones of both colours and walls, for several sizes and winning lengths."""
    rng = random.Random(list(Rule).index(rule) + 11)
    scans = 0
    for w, h, n in ((15, 15, 5), (20, 20, 5), (7, 9, 5), (32, 32, 5), (10, 6, 4), (5, 5, 5), (12, 12, 6)):
        for _ in range(8):
            b = _filled_board(rng, rule, w, h, n)
            ctx = T._Ctx(b)
            for wants in (ctx._wants, ((1, 3),), ((2, 2), (1, 4), (2, n - 1))):
                monkeypatch.setattr(native, "ENABLED", False)
                py = T._window_scans(ctx, wants)
                monkeypatch.setattr(native, "ENABLED", True)
                assert T._window_scans(ctx, wants) == py
                scans += 1
    assert scans == 7 * 8 * 3


@needs_c
def test_c_threat_and_four_moves_are_the_python_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    """vct._threats and tactics._four_moves: the same lists from C, on the position sets and on
    random boards (walls included) of several sizes and winning lengths, for both colours."""
    from gomoku_ai import vct
    rng = random.Random(9)
    boards = _positions()
    for rule in native.RULES:
        for w, h, n in ((15, 15, 5), (32, 32, 5), (10, 6, 4), (12, 12, 6), (9, 9, 3), (16, 16, 8)):
            for _ in range(6):
                boards.append(_filled_board(rng, rule, w, h, n))
    threats = 0
    for b in boards:
        ctx = T._Ctx(b)
        for c in (1, 2):
            monkeypatch.setattr(native, "ENABLED", False)
            py = vct._threats(ctx, c), T._four_moves(ctx, c, False)
            monkeypatch.setattr(native, "ENABLED", True)
            assert (vct._threats(ctx, c), T._four_moves(ctx, c, False)) == py
            threats += len(py[0])
    assert threats > 1000
