"""The C VCT (gomoku_ai._native.vct through gomoku_ai.native.vct) against the Python one
(gomoku_ai.vct._VCT with the same C VCF prover inside).

The C search is the same algorithm move for move, so without a deadline the two must return the
very same result: line, attacker nodes, VCF nodes, aborted and depth. They are compared on the VCT
and blunder position sets and on random games (freestyle and standard, 9x9 to 20x20, each side to
move), with the player's settings and with others, and along sequences of sibling searches that
share their move-ordering hints (vct.Hints).
"""
from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path
from typing import List, Tuple

import pytest

from gomoku_ai import native, vct
from gomoku_ai.board import Board
from gomoku_ai.rules import Rule
from gomoku_ai.vct import Hints, VCTResult, read_positions, vct_search
from tests.test_native import _random_positions

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(not native.available(), reason=f"C core not running: {native.status()}")


@pytest.fixture(autouse=True)
def iterative_deepening(monkeypatch: pytest.MonkeyPatch) -> None:
    """The C search held to the Python one move for move is the iterative deepening; the
    proof-number search of the same tree (``vct.PN_VCT``) has its own tests at the end."""
    monkeypatch.setattr(vct, "PN_VCT", False)


def _positions() -> List[Board]:
    boards = []
    for name in ("vct_positions.txt", "blunder_positions.txt"):
        boards += [p.board() for p in read_positions(ROOT / "benchmarks" / "data" / name)]
    rng = random.Random(11)
    for rule in (Rule.FREESTYLE, Rule.STANDARD):
        for size in (9, 15, 20):
            boards += _random_positions(rng, rule, size, 12, spread=4, plies=(8, 30))  # dense
    return [b for b in boards if b.rule in native.RULES]


def _key(r: VCTResult) -> Tuple:
    return r.line, r.nodes, r.vcf_nodes, r.aborted, r.depth


def _both(monkeypatch: pytest.MonkeyPatch, board: Board, **kw) -> Tuple[VCTResult, VCTResult]:
    """(C, Python) results of the same search; the board must come back unchanged from each."""
    before = bytes(board._buf), board.hash, list(board.moves)
    monkeypatch.setattr(vct, "NATIVE_VCT", True)
    c = vct_search(board, **kw)
    assert (bytes(board._buf), board.hash, list(board.moves)) == before
    monkeypatch.setattr(vct, "NATIVE_VCT", False)
    py = vct_search(board, **kw)
    monkeypatch.setattr(vct, "NATIVE_VCT", True)
    return c, py


def test_c_and_python_vct_give_the_same_results(monkeypatch: pytest.MonkeyPatch) -> None:
    found = aborted = searches = 0
    for b in _positions():
        for passed in (False, True):
            if passed:
                b.pass_turn()
            for kw in (dict(max_depth=3, node_limit=2000, vcf_nodes=500),
                       dict(max_depth=5, node_limit=6000, vcf_nodes=2000, max_threats=8)):
                c, py = _both(monkeypatch, b, **kw)
                assert _key(c) == _key(py), (b.moves, passed, kw)
                searches += 1
                found += c.line is not None
                aborted += c.aborted
            if passed:
                b.pass_turn()
    assert searches > 400 and found > 60 and aborted > 5     # wins, failures and cut searches


def test_with_quiet_first_moves_they_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    """The root's quiet candidates (vct._quiet_threats in Python, quiet_rows in C) are the same
    moves in the same order: the searches agree node for node, and some wins start with one."""
    found = quiet_first = 0
    for b in _positions()[::2]:
        for passed in (False, True):
            if passed:
                b.pass_turn()
            c, py = _both(monkeypatch, b, max_depth=3, node_limit=2000, vcf_nodes=500, quiet_moves=12)
            assert _key(c) == _key(py), (b.moves, passed)
            if c.line is not None:
                found += 1
                quiet_first += c.line[0] not in {m for m, _f, _t in vct.threat_moves(b)}
            if passed:
                b.pass_turn()
    assert found > 40 and quiet_first > 0, (found, quiet_first)


def test_without_the_threat_replay_they_agree_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vct, "REPLAY_THREAT", False)
    boards = [p.board() for p in read_positions(ROOT / "benchmarks" / "data" / "vct_positions.txt")]
    found = 0
    for b in boards[:40]:
        c, py = _both(monkeypatch, b, max_depth=4, node_limit=3000, vcf_nodes=1000)
        assert _key(c) == _key(py)
        found += c.line is not None
    assert found > 10


def test_sibling_searches_sharing_hints_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    """As in vct.safe_moves: after each of several candidate moves, the opponent's VCT, the searches
    of one position sharing one Hints object (each implementation its own: the keys differ). The
    results and the hints' depth agree search by search, and the hints are used."""
    positions = read_positions(ROOT / "benchmarks" / "data" / "vct_positions.txt")
    used = 0
    for p in positions[:30]:
        b = p.board()
        b.pass_turn()                     # the defender to move: its candidate replies
        moves = [m for m, _f, _t in vct.threat_moves(b)][:4] + [
            m for m in range(b.width * b.height) if b.is_empty(m)][:4]
        hc, hp = Hints(), Hints()
        for m in moves:
            b.push(m)
            if b.winner is None:
                monkeypatch.setattr(vct, "NATIVE_VCT", True)
                c = vct_search(b, max_depth=3, node_limit=3000, vcf_nodes=1000, hints=hc)
                monkeypatch.setattr(vct, "NATIVE_VCT", False)
                py = vct_search(b, max_depth=3, node_limit=3000, vcf_nodes=1000, hints=hp)
                assert _key(c) == _key(py), (p.name, b.move_name(m))
                assert hc.depth == hp.depth
                assert (len(hc.attack), len(hc.defence)) == (len(hp.attack), len(hp.defence))
            b.pop()
        used += bool(hc.attack or hc.defence)
    assert used > 10


def test_limits_abort_and_the_board_is_left_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    b = read_positions(ROOT / "benchmarks" / "data" / "vct_positions.txt")[0].board()
    b.pass_turn()
    c, py = _both(monkeypatch, b, max_depth=5, node_limit=1)
    assert c.aborted and c.nodes == 1 and c.line is None and _key(c) == _key(py)
    r = native.vct(b, 5, 10**9, 0.0, 2000, 24, True, None, None)    # a deadline in the past
    assert r.aborted and r.nodes == 1 and r.line is None


def test_deep_searches_and_verified_defences_stay_in_python(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    monkeypatch.setattr(native, "vct", lambda *a, **k: calls.append(a) or native.NativeVCT(None, 0, 0, False, 1))
    b = read_positions(ROOT / "benchmarks" / "data" / "vct_positions.txt")[0].board()
    assert vct_search(b, max_depth=native.VCT_MAX_DEPTH + 1, node_limit=50).nodes > 0
    assert vct_search(b, max_depth=3, node_limit=50, verify_defences=True).nodes > 0
    assert not calls
    vct_search(b, max_depth=3, node_limit=50)
    assert len(calls) == 1
    for rule in (Rule.RENJU, Rule.CARO):
        r = Board(15, rule=rule)
        r.push(112)
        vct_search(r, max_depth=3, node_limit=50)
    assert len(calls) == 1


def test_bad_arguments_are_refused() -> None:
    assert native._c is not None
    b = Board(15)
    args = [b._buf, 15, 15, 5, 0, 1, 3, 100, 100, 24, 0.0, 1, 1, True, None, None, 1, False, 0]
    native._c.vct(*args)
    native._c.vct(*args[:-2], True, 40)
    for i, bad in ((0, b"\x03" * 10), (6, native.VCT_MAX_DEPTH + 1), (14, []), (18, -1)):
        wrong = list(args)
        wrong[i] = bad
        with pytest.raises(ValueError, match="bad board geometry or arguments"):
            native._c.vct(*wrong)


def test_the_switch_keeps_the_vct_in_python() -> None:
    env = dict(os.environ, PYGOMOKU_VCT_NATIVE="0")
    code = "import gomoku_ai.vct as v; print(v.NATIVE_VCT)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout
    assert out.strip() == "False"


def test_the_line_table_matches_the_direct_line_reading():
    """Five-in-a-row lines are read through a table indexed by a window's ten other squares, where the
    other colour and the wall count alike: every window (each square empty, either colour or wall; both
    colours; exact five or not) gives the same five, five-points and straight-four points as the direct
    reading of that window (gomoku_ai._native.line_table_check returns the mismatches)."""
    from gomoku_ai import _native  # type: ignore[attr-defined]
    assert _native.line_table_check() == 0


def _pn_and_id(monkeypatch: pytest.MonkeyPatch, b: Board, **kw) -> Tuple[VCTResult, VCTResult]:
    monkeypatch.setattr(vct, "PN_VCT", True)
    pn = vct_search(b, **kw)
    monkeypatch.setattr(vct, "PN_VCT", False)
    return pn, vct_search(b, **kw)


def test_proof_number_wins_are_forced_and_never_contradict_a_finished_search(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The proof-number search (``PN_VCT``, ``PYGOMOKU_VCT_PN=1``) walks the iterative deepening's tree in
    another order. On the position sets and random games, each side to move: every line it finds
    is a forced sequence ending in five (``replay_forced``); where the iterative deepening finished
    without a win (all its depths searched, not cut by the limits) the proof-number search finds
    none either, and where the proof-number search finished without one the iterative deepening
    finds none; and both find wins. (With large inner VCF limits, so that no answer rests on a cut
    VCF search.)"""
    from tests.test_vct import replay_forced
    wins = {"pn": 0, "id": 0}
    finished_no = 0
    for b in _positions():
        for _side in range(2):
            pn, it = _pn_and_id(monkeypatch, b, max_depth=5, node_limit=1500, vcf_nodes=50000)
            for name, r in (("pn", pn), ("id", it)):
                if r.line is not None:
                    replay_forced(b, r.line)
                    wins[name] += 1
            if it.line is None and not it.aborted and it.depth < 5:
                finished_no += 1
                assert pn.line is None, b.to_ascii()
            if pn.line is None and not pn.aborted and it.line is not None:
                raise AssertionError(f"the proof-number search finished without {it.line}")
            b.pass_turn()
    assert wins["pn"] > 20 and wins["id"] > 20 and finished_no > 20, (wins, finished_no)


def test_proof_numbers_at_depth_0_search_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """``max_depth=0`` allows no attacker move: as the iterative deepening, the proof-number search
    returns no line, even where the side to move has a VCF."""
    boards = [p.board() for p in read_positions(ROOT / "benchmarks" / "data" / "vct_positions.txt")]
    with_vcf = [b for b in boards if vct_search(b, max_depth=1, node_limit=500).line]
    assert with_vcf
    for b in with_vcf[:10]:
        pn, it = _pn_and_id(monkeypatch, b, max_depth=0, node_limit=500)
        assert pn.line is None and it.line is None


def test_the_proof_number_search_is_off_unless_switched_on() -> None:
    code = "import gomoku_ai.vct as v; print(v.PN_VCT)"
    seen = []
    for value in (None, "0", "1"):
        env = {k: v for k, v in os.environ.items() if k != "PYGOMOKU_VCT_PN"}
        if value is not None:
            env["PYGOMOKU_VCT_PN"] = value
        seen.append(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                   text=True, check=True, cwd=ROOT).stdout.strip())
    assert seen == ["False", "False", "True"]
