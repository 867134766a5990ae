"""The root's defence under threat (``Player._safe_defences``, ``Player._checked_choice``,
``vct.safe_moves``): positions from our own lost games against Rapfi (1 s per move, 15x15 freestyle),
each taken where we were still alive by Rapfi's search (300,000 nodes) and played the move after which
it announced a mate. In each, the opponent has a VCF as if we passed, so the root restricts the search
to the moves that stop that VCF; but only one of them also stops the opponent's VCT, which the VCF
defence alone cannot see. The expected move is Rapfi's own (it reports no mate against it)."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any, List

import numpy as np
import pytest

from gomoku_ai import tactics as T
from gomoku_ai import vct as V
from gomoku_ai.board import Board
from gomoku_ai.evaluator import Evaluator
from gomoku_ai.player import Candidate, Limit, Player, SearchInfo, Source
from gomoku_ai.rules import BLACK, WHITE

# (name, board, side to move, Rapfi's move, the move we played and lost with)
CASES = [
    ("r100k-44", """
...............
......O........
.....OX..O.....
.....OXXXXO....
......XXO..O...
......XOX......
.....XO.OX.X...
....O..XO.O....
.......OXOX....
........OXO....
.......X..OX...
...............
...............
...............
...............
""", BLACK, "i2", "m6"),
    ("r100k-54", """
...............
...............
...............
...............
......X........
.....O..O......
..O.X.OXX......
...X.XOX.......
....XOOOXO.....
...XOXXO.......
...X..X.O......
.......O.O.....
..........X....
...............
...............
""", WHITE, "h13", "h11"),
    ("r100k-77", """
...............
...............
...............
...............
...............
...............
...............
.............X.
........X.X.OO.
.......OOXO.XX.
........O..XO..
...........X...
...............
...............
...............
""", WHITE, "k11", "h8"),
]


def board_of(text: str, to_move: int) -> Board:
    return Board.from_ascii(text.strip("\n"), to_move=to_move)


def sq(b: Board, name: str) -> int:
    return next(m for m in range(b.size) if b.move_name(m) == name)


@pytest.mark.parametrize("name,text,to_move,good,bad", CASES, ids=[c[0] for c in CASES])
def test_the_vcf_defences_include_a_vct_loss(name: str, text: str, to_move: int, good: str,
                                             bad: str) -> None:
    """What makes the cases hard: both moves stop the VCF, and only the good one stops the VCT
    (found at depth 3, the depth of the root's first check)."""
    b = board_of(text, to_move)
    defences = T.find_vcf_defences(b)
    assert defences is not None and sq(b, good) in defences and sq(b, bad) in defences
    for move, loses in ((good, False), (bad, True)):
        b.push(sq(b, move))
        try:
            found = V.vct_search(b, max_depth=3, node_limit=3000).line
        finally:
            b.pop()
        assert (found is not None) == loses, move


@pytest.mark.parametrize("name,text,to_move,good,bad", CASES, ids=[c[0] for c in CASES])
def test_safe_moves_keeps_only_the_vct_defence(name: str, text: str, to_move: int, good: str,
                                               bad: str) -> None:
    b = board_of(text, to_move)
    before = (b.hash, list(b.moves))
    defences = T.find_vcf_defences(b) or []
    res = V.safe_moves(b, defences, max_depth=3, node_limit=3000)
    assert res.kept == [sq(b, good)] and res.verified == [sq(b, good)] and not res.aborted
    assert (b.hash, list(b.moves)) == before


def test_safe_moves_keeps_what_it_has_not_checked() -> None:
    name, text, to_move, good, bad = CASES[2]
    b = board_of(text, to_move)
    moves = [sq(b, bad), sq(b, good)]
    res = V.safe_moves(b, moves, deadline=time.perf_counter() - 1.0)
    assert res.kept == moves and res.verified == [] and res.aborted
    res = V.safe_moves(b, moves, node_limit=3000, total_nodes=1)   # spent after the first check
    assert res.kept == [sq(b, good)] and res.verified == [] and res.aborted


@pytest.mark.parametrize("name,text,to_move,good,bad", CASES, ids=[c[0] for c in CASES])
def test_player_plays_the_defence_that_also_stops_the_vct(name: str, text: str, to_move: int,
                                                         good: str, bad: str) -> None:
    b = board_of(text, to_move)
    # a generous budget, so that the depth-3 checks (0.1-0.3 s here) finish even on a loaded machine
    info = Player().think(b, Limit(soft_ms=3000, hard_ms=4000))
    assert b.move_name(info.move) == good and info.source == Source.MCTS


def test_the_old_root_is_kept_behind_the_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    """PYGOMOKU_VCT_FILTER=0 (A/B matches) restricts the root to the VCF defences alone (the search
    resumed after the quiet-move preference keeps that restriction)."""
    name, text, to_move, good, bad = CASES[2]
    monkeypatch.setenv("PYGOMOKU_VCT_FILTER", "0")
    p = Player()
    assert not p.vct_filter
    seen: List[List[int]] = []
    search = p.mcts.search

    def spy(board: Board, **kw):  # type: ignore[no-untyped-def]
        seen.append(sorted(kw["restrict"]))
        return search(board, **kw)

    p.mcts.search = spy  # type: ignore[method-assign]
    b = board_of(text, to_move)
    p.think(b, Limit(soft_ms=500, hard_ms=1000))
    assert seen and all(s == sorted(T.find_vcf_defences(b) or []) for s in seen) and len(seen[0]) == 3


def _info(b: Board, names: List[str]) -> SearchInfo:
    cands = [Candidate(sq(b, n), 100 - 10 * i, 0.1, 0.2) for i, n in enumerate(names)]
    return SearchInfo(move=cands[0].move, value=0.1, visits=300, pv=[cands[0].move],
                      source=Source.MCTS, candidates=cands, root_visits=sum(c.visits for c in cands))


def test_checked_choice_takes_the_next_move_when_the_first_is_refuted() -> None:
    name, text, to_move, good, bad = CASES[2]
    b = board_of(text, to_move)
    p = Player()
    info = p._checked_choice(b, _info(b, [bad, good]), time.perf_counter(), 1000.0)
    assert b.move_name(info.move) == good and info.pv == [sq(b, good)]
    kept = _info(b, [good, bad])
    assert p._checked_choice(b, kept, time.perf_counter(), 1000.0) is kept
    # every checked move loses: the search's own choice stands
    lost = _info(b, [bad, "m13"])
    assert p._checked_choice(b, lost, time.perf_counter(), 1000.0) is lost
    # no time left: nothing is checked
    late = _info(b, [bad, good])
    assert p._checked_choice(b, late, time.perf_counter() - 2.0, 1000.0) is late


def test_defence_candidates_hold_what_vct_defences_keeps() -> None:
    name, text, to_move, good, bad = CASES[1]
    b = board_of(text, to_move)
    b.pass_turn()
    threat = V.vct_search(b, max_depth=3, node_limit=3000).line
    b.pass_turn()
    assert threat is not None
    cands = V.defence_candidates(b, threat)
    assert len(cands) == len(set(cands)) and threat[0] == cands[0]
    defs, _aborted = V.vct_defences(b, threat_line=threat)
    assert defs and set(defs) <= set(cands)


BLUNDERS = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "blunder_positions.txt"


@pytest.mark.parametrize("path,size", [(BLUNDERS, 15), (BLUNDERS.with_name("blunder_positions_20.txt"), 20)])
def test_the_blunder_set_is_well_formed(path: Path, size: int) -> None:
    """``benchmarks/bench_blunders.py``'s positions (15x15, and ``--set`` 20x20): each has holding
    moves (the oracle's answer), a losing move that is not among them, and every named move is an
    empty square."""
    positions = V.read_positions(path)
    assert len(positions) >= 40 and all(p.board().width == size for p in positions)
    for p in positions:
        b = p.board()
        assert p.kind == "defend" and p.answer and len(p.loses) == 1, p.name
        assert not p.answer & p.loses, p.name
        assert all(b.is_empty(m) for m in p.answer | p.loses), p.name
        assert b.winner is None and len(T.must_block(b)) != 1, p.name   # not a forced block


def test_the_blunder_benchmark_plays_the_network_of_the_sets_board(tmp_path: Path) -> None:
    """``bench_blunders.py --set`` loads the network the engine plays on the set's board (the 20x20
    set got the 15x15 default before session 36), and refuses a set that mixes board sizes."""
    import json
    import subprocess
    import sys
    from gomoku_ai import shipped
    from gomoku_ai.rules import Rule

    script = BLUNDERS.parents[1] / "bench_blunders.py"
    twenty = BLUNDERS.with_name("blunder_positions_20.txt")
    run = subprocess.run([sys.executable, str(script), "--set", str(twenty), "--limit", "1",
                          "--ms", "30"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    want = shipped.model_choice(None, Rule.FREESTYLE, 20, 20)
    assert out["board"] == "20x20" and out["rule"] == "freestyle" and out["positions"] == 1
    assert out["evaluator"] == Path(str(want)).name != Path(str(shipped.model_choice(
        None, Rule.FREESTYLE, 15, 15))).name
    mixed = tmp_path / "mixed.txt"
    mixed.write_text(BLUNDERS.read_text() + "\n" + twenty.read_text())
    bad = subprocess.run([sys.executable, str(script), "--set", str(mixed), "--ms", "30"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "more than one board size" in bad.stderr


def test_a_restricted_root_keeps_the_reused_tree_unless_switched_off(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Under threat the root is restricted; the subtree kept from the last search survives it, and
    with PYGOMOKU_RESTRICT_REUSE=0 (A/B matches) the tree is reset as before."""
    name, text, to_move, good, bad = CASES[2]
    for switch, kept in (("1", True), ("0", False)):
        monkeypatch.setenv("PYGOMOKU_RESTRICT_REUSE", switch)
        p = Player()
        b = board_of(text, to_move)
        last = b.pop()                   # one ply back: the opponent's move, searched there
        p.mcts.search(b, visits=200, restrict=[last])
        sub = p.mcts.root.children[0]
        b.push(last)
        assert sub is not None and sub.expanded and sub.n > 50
        roots = []
        search = p.mcts.search

        def spy(board: Board, **kw):  # type: ignore[no-untyped-def]
            st = search(board, **kw)
            roots.append(p.mcts.root)
            return st

        p.mcts.search = spy  # type: ignore[method-assign]
        p.think(b, Limit(soft_ms=600, hard_ms=1000))
        assert roots and (roots[0] is sub) == kept


def test_root_tactics_reports_the_threat_and_the_win_it_finds() -> None:
    """The public entry to the root's tactics (benchmarks/announced_wins.py uses it): threatened, the
    search is limited to the defence that also stops the VCT; after the losing move the side to move
    gets its proven VCT win to play. The board is left as it was."""
    name, text, to_move, good, bad = CASES[0]
    b = board_of(text, to_move)
    before = (b.hash, list(b.moves))
    root = Player().root_tactics(b, None)
    assert root == ([sq(b, good)], True)
    assert (b.hash, list(b.moves)) == before
    b.play(sq(b, bad))
    won = Player().root_tactics(b, None)     # node limits alone: the same answer on any machine's load
    assert isinstance(won, SearchInfo) and won.source == Source.VCT and won.proven == 1
    assert won.move == V.vct_search(b, max_depth=6, node_limit=30000).line[0]


def test_the_threat_search_and_defence_levels_switches(monkeypatch: pytest.MonkeyPatch) -> None:
    """PYGOMOKU_THREAT, PYGOMOKU_DEFENCE_LEVELS, PYGOMOKU_CHECK, PYGOMOKU_ATTACK and PYGOMOKU_ATTACK_QUIET
    (A/B matches) replace the root's threat search, its defence-check levels, the check of the search's
    choice, the search for our own VCT and its quiet first moves; unset they are the defaults; a malformed value is a ConfigError naming
    the switch; with one depth-3 level the player still plays the defence that stops the VCT."""
    from gomoku_ai import player as P
    from gomoku_ai.checks import ConfigError
    p = Player()
    assert (p.threat_search, p.defence_levels, p.check_search, p.attack_search, p.attack_quiet, p.defence_prior) == \
        (P.THREAT_SEARCH, P.DEFENCE_LEVELS, P.CHECK_SEARCH, P.ATTACK_SEARCH, P.ATTACK_QUIET, P.DEFENCE_PRIOR_MOVES)
    monkeypatch.setenv("PYGOMOKU_CHECK", "5,12000")
    monkeypatch.setenv("PYGOMOKU_ATTACK", "9,50000")
    monkeypatch.setenv("PYGOMOKU_ATTACK_QUIET", " 0")
    monkeypatch.setenv("PYGOMOKU_CHECK_TIME", "0.3,300")
    assert (Player().check_search, Player().attack_search, Player().attack_quiet, Player().check_time) == \
        ((5, 12000), (9, 50000), 0, (0.3, 300.0))
    monkeypatch.setenv("PYGOMOKU_ATTACK_QUIET", "")
    assert p.check_time == (P.CHECK_SHARE, P.CHECK_MAX_MS)
    monkeypatch.setenv("PYGOMOKU_CHECK", "")
    monkeypatch.setenv("PYGOMOKU_CHECK_TIME", "")
    monkeypatch.setenv("PYGOMOKU_ATTACK", "")
    monkeypatch.setenv("PYGOMOKU_THREAT", " 5,20000")
    monkeypatch.setenv("PYGOMOKU_DEFENCE_LEVELS", "3,3000,0.45,900; 5,8000,0.5,950")
    p = Player()
    assert p.threat_search == (5, 20000)
    assert p.defence_levels == ((3, 3000, 0.45, 900.0), (5, 8000, 0.5, 950.0))
    for name, bad in (("PYGOMOKU_THREAT", "5"), ("PYGOMOKU_THREAT", "0,100"), ("PYGOMOKU_THREAT", "a,b"),
                      ("PYGOMOKU_CHECK", "5"), ("PYGOMOKU_CHECK", "3,0"), ("PYGOMOKU_ATTACK", "0,9"),
                      ("PYGOMOKU_ATTACK_QUIET", "-1"), ("PYGOMOKU_ATTACK_QUIET", "many"),
                      ("PYGOMOKU_DEFENCE_PRIOR", "-2"), ("PYGOMOKU_DEFENCE_PRIOR", "1.5"),
                      ("PYGOMOKU_CHECK_TIME", "1.0,300"), ("PYGOMOKU_CHECK_TIME", "0.3"),
                      ("PYGOMOKU_DEFENCE_LEVELS", "3,3000,0.3"), ("PYGOMOKU_DEFENCE_LEVELS", "3,3000,1.5,600"),
                      ("PYGOMOKU_DEFENCE_LEVELS", "3,3000,0.3,600;"), ("PYGOMOKU_DEFENCE_LEVELS", "3,0,0.3,600")):
        for other in ("PYGOMOKU_THREAT", "PYGOMOKU_DEFENCE_LEVELS", "PYGOMOKU_CHECK", "PYGOMOKU_ATTACK",
                      "PYGOMOKU_ATTACK_QUIET", "PYGOMOKU_CHECK_TIME", "PYGOMOKU_DEFENCE_PRIOR"):
            monkeypatch.setenv(other, "")
        monkeypatch.setenv(name, bad)
        with pytest.raises(ConfigError, match=name):
            Player()
    monkeypatch.setenv("PYGOMOKU_THREAT", "")
    monkeypatch.setenv("PYGOMOKU_DEFENCE_LEVELS", "3,3000,0.45,900")
    name, text, to_move, good, bad = CASES[2]
    b = board_of(text, to_move)
    info = Player().think(b, Limit(soft_ms=3000, hard_ms=4000))
    assert b.move_name(info.move) == good


def test_a_quick_check_of_the_choice_lets_the_search_go_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under threat the search stops early to leave the check of its choice its time; when the check
    accepts the search's own move at once, the search goes on (the same tree) to a later deadline
    and its choice is checked again. Not when the check picks another move, nor with
    PYGOMOKU_CHECK_RESUME=0 (A/B matches)."""
    import dataclasses

    from gomoku_ai import player as P
    # Black's open three: White must stop it at e8 or i8 (both hold), so the root keeps two moves
    text = "\n".join(["." * 15] * 6 + ["......O........", ".....XXX.......", "......O........"] +
                      ["." * 15] * 6)
    monkeypatch.setenv("PYGOMOKU_QUIET", "0")        # its time share would move the deadlines
    # a check reserve of 300 ms (not 80): on a loaded machine (CI, session 45) the first search
    # overran its stop by more than the 65 ms a resume needs, and the test saw one search
    monkeypatch.setenv("PYGOMOKU_CHECK_TIME", "0.3,300")
    for switch, change, calls in (("1", False, 2), ("1", True, 1), ("0", False, 1)):
        monkeypatch.setenv("PYGOMOKU_CHECK_RESUME", switch)
        p = Player()
        b = board_of(text, WHITE)
        deadlines: List[float] = []
        roots: list = []
        checked: List[int] = []
        search = p.mcts.search

        def spy(board: Board, **kw):  # type: ignore[no-untyped-def]
            st = search(board, **kw)
            deadlines.append(kw["deadline"])
            roots.append((p.mcts.root, p.mcts.root.n))
            return st

        def check(board: Board, info: SearchInfo, t0: float, soft: float) -> SearchInfo:
            checked.append(info.move)
            other = next(c.move for c in info.candidates if c.move != info.move)
            return dataclasses.replace(info, move=other, pv=[other]) if change else info

        p.mcts.search = spy  # type: ignore[method-assign]
        p._checked_choice = check  # type: ignore[method-assign]
        info = p.think(b, Limit(soft_ms=1000, hard_ms=1000))
        assert len(deadlines) == calls and len(checked) == calls, (switch, change)
        if calls == 2:
            (r0, n0), (r1, n1) = roots
            assert r1 is r0 and n1 > n0           # the same tree, searched further
            # the first stopped CHECK_SHARE of the budget early; the second keeps RESUME_KEEP_MS
            reserve_s = min(0.3 * 1000.0, 300.0) / 1000.0
            assert 0 < deadlines[1] - deadlines[0] <= reserve_s - P.RESUME_KEEP_MS / 1000.0 + 1e-9
            assert info.visits == n1 and info.move == checked[1]
        if change:
            assert info.move != checked[0]



def test_a_deeper_level_drops_what_it_refutes_even_when_it_verifies_nothing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A defence level that refutes some moves (a VCT found: proved to lose) but verifies none (its
    other checks cut short) still drops the refuted ones; with PYGOMOKU_DEFENCE_DROP=0 such a level is
    ignored, as before session 35. A level that refutes everything leaves the last kept set."""
    from gomoku_ai import player as P
    b = board_of(CASES[2][1], CASES[2][2])
    moves = [sq(b, n) for n in ("a1", "b1", "c1", "d1")]
    levels = ((3, 100, 0.5, 5000.0), (5, 100, 0.9, 5000.0))
    for switch, level1, expected in (("1", (moves[2:], []), moves[2:]),
                                     ("0", (moves[2:], []), moves),
                                     ("1", (moves[1:], moves[1:2]), moves[1:]),
                                     ("1", ([], []), moves)):
        monkeypatch.setenv("PYGOMOKU_DEFENCE_DROP", switch)
        p = Player()
        p.defence_levels = levels
        p._prior_logits = lambda board: np.zeros(board.size)  # type: ignore[method-assign]
        answers = iter([V.SafeMoves(list(moves), list(moves), False),
                        V.SafeMoves(level1[0], level1[1], True)])
        seen: List[int] = []

        def fake(board: Board, ms: List[int], max_depth: int, **kw: object) -> V.SafeMoves:
            seen.append(max_depth)
            return next(answers)

        monkeypatch.setattr(P.vct, "safe_moves", fake)
        kept = p._safe_defences(b, list(moves), time.perf_counter(), 10000.0)
        assert seen == [3, 5] and kept == expected, (switch, level1)


def _quiet_after(b: Board, m: int, nodes: int = 3000) -> bool:
    """The opponent's VCT search (depth 20) after ``m`` ends without a VCT within ``nodes`` (the
    iterative deepening, as ``_quiet_choice`` searches)."""
    b.push(m)
    try:
        r = V.vct_search(b, 20, nodes, proof_numbers=False)
    finally:
        b.pop()
    return r.line is None and not r.aborted


def test_the_quiet_preference_takes_a_strong_candidate_proven_quiet() -> None:
    """``_quiet_choice`` (PYGOMOKU_QUIET): in a 20x20 blunder position, when the search's choice (the
    move that lost the game) leaves the opponent a threat search that runs into its node limit and
    a candidate with enough visits lets it end without a VCT, that candidate is played; the search's
    choice stands when it is itself proven quiet, when the other has too few visits, or when the
    time is up. The board is left as it was."""
    from gomoku_ai import player as P
    pos = next(p for p in V.read_positions(BLUNDERS.with_name("blunder_positions_20.txt"))
               if p.name == "blunder01")
    b = pos.board()
    before = list(b.moves)
    lost = next(iter(pos.loses))
    assert not _quiet_after(b, lost)
    alt = next(m for m in sorted(pos.answer) if _quiet_after(b, m))
    soon = time.perf_counter() + 30.0

    def info(first: int, second: int, visits: int) -> SearchInfo:
        return SearchInfo(move=first, candidates=[Candidate(first, 100, 0.1, 0.2),
                                                  Candidate(second, visits, 0.05, 0.1)])

    got = P._quiet_choice(b, info(lost, alt, 60), soon)
    assert got.move == alt and got.pv == [alt] and got.value == 0.05
    assert b.moves == before
    assert P._quiet_choice(b, info(lost, alt, 20), soon).move == lost        # under Quiet.share
    assert P._quiet_choice(b, info(alt, lost, 90), soon).move == alt         # its own move is quiet
    assert P._quiet_choice(b, info(lost, alt, 60), time.perf_counter() - 1.0).move == lost
    assert b.moves == before


def _scripted_vct(monkeypatch: pytest.MonkeyPatch, script: Any, calls: List[Any]) -> None:
    """Replace ``vct.vct_search`` by ``script``: the opponent's search after our last move ``m``
    answers ``script[m]`` ("lost": a VCT; an int: no VCT when given that many nodes or more,
    cut short before; "pn": a VCT for the proof-number search only). ``calls`` gets (m, nodes,
    proof_numbers) per search."""
    def fake(board: Board, max_depth: int, node_limit: int, deadline: Any = None,
             proof_numbers: Any = None, **_k: Any) -> V.VCTResult:
        m = board.moves[-1]
        calls.append((m, node_limit, bool(proof_numbers)))
        want = script[m]
        if want == "lost" or (want == "pn" and proof_numbers):
            return V.VCTResult([0, 1, 2])
        if isinstance(want, int) and node_limit >= want:
            return V.VCTResult(None, nodes=want)
        return V.VCTResult(None, nodes=node_limit, aborted=True)
    monkeypatch.setattr(V, "vct_search", fake)


def test_the_quiet_rounds_reach_every_candidate_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """``_quiet_choice`` searches every candidate with ``first_nodes`` first, then gives ``nodes``
    only to the open ones ranked above the first proven quiet: a lower candidate proven quiet in a
    few nodes is not left unsearched behind one that runs into its limit; one ranked above it that
    is proven quiet with more nodes is still preferred, as without the rounds."""
    from gomoku_ai import player as P
    b = Board(15)
    for name in ("h8", "i9", "c3", "m13"):
        b.push(b.parse(name))
    a, c, d, e = (b.parse(x) for x in ("b12", "n2", "e6", "l10"))   # no fours
    info = SearchInfo(move=a, candidates=[Candidate(m, 100 - 10 * i, 0.1, 0.2)
                                          for i, m in enumerate((a, c, d, e))])
    soon = time.perf_counter() + 30.0
    q = P.Quiet(nodes=3000, first_nodes=300, pn_nodes=0)
    calls: List[Any] = []
    _scripted_vct(monkeypatch, {a: 10 ** 6, c: 10 ** 6, d: 50, e: 10}, calls)
    assert P._quiet_choice(b, info, soon, q).move == d
    assert [x[:2] for x in calls] == [(a, 300), (c, 300), (d, 300), (a, 3000), (c, 3000)]
    calls.clear()
    _scripted_vct(monkeypatch, {a: 10 ** 6, c: 2000, d: 50, e: 10}, calls)
    assert P._quiet_choice(b, info, soon, q).move == c     # c, ranked above d: quiet at 2,000
    assert [x[:2] for x in calls] == [(a, 300), (c, 300), (d, 300), (a, 3000), (c, 3000)]
    calls.clear()
    assert P._quiet_choice(b, info, soon, q._replace(first_nodes=0)).move == c   # no rounds: in turn
    assert [x[:2] for x in calls] == [(a, 3000), (c, 3000)]
    assert len(b.moves) == 4


def test_a_move_with_a_vct_found_after_it_is_given_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """When no candidate is proven quiet, the search's move stands unless the opponent's VCT after
    it was found (by the deepening, or by ``pn_nodes`` of the proof-number search where the
    deepening left it open): then the first candidate not proven lost, checked or not, fours
    included; when every one is lost, the search's move."""
    from gomoku_ai import player as P
    b = Board(15)
    for name in ("h8", "i9", "c3", "m13"):
        b.push(b.parse(name))
    a, c, d = (b.parse(x) for x in ("b12", "n2", "e6"))
    info = SearchInfo(move=a, candidates=[Candidate(m, 100 - 10 * i, 0.1, 0.2)
                                          for i, m in enumerate((a, c, d))])
    soon = time.perf_counter() + 30.0
    q = P.Quiet(nodes=3000, first_nodes=300, pn_nodes=3000)
    calls: List[Any] = []
    for script, want in (({a: "lost", c: "lost", d: 10 ** 6}, d),
                         ({a: "lost", c: 10 ** 6, d: 10 ** 6}, c),
                         ({a: "pn", c: 10 ** 6, d: 10 ** 6}, c),
                         ({a: 10 ** 6, c: "lost", d: 10 ** 6}, a),
                         ({a: "lost", c: "lost", d: "lost"}, a)):
        calls.clear()
        _scripted_vct(monkeypatch, script, calls)
        assert P._quiet_choice(b, info, soon, q).move == want, script
        # the proof-number search runs only on the search's own move, and only when it is open
        assert [m for m, _n, pn in calls if pn] == ([] if script[a] == "lost" else [a])
    calls.clear()
    _scripted_vct(monkeypatch, {a: "pn", c: 10 ** 6, d: 10 ** 6}, calls)
    assert P._quiet_choice(b, info, soon, q._replace(pn_nodes=0)).move == a
    assert not any(pn for _m, _n, pn in calls)
    assert len(b.moves) == 4


def test_the_quiet_switch_is_on_unless_0(monkeypatch: pytest.MonkeyPatch) -> None:
    from gomoku_ai import checks
    from gomoku_ai import player as P
    for text, want in (("", P.QUIET_SEARCH), ("0", None), ("1", P.QUIET_SEARCH), ("7,500", P.Quiet(7, 500)),
                       ("moves=6", P.Quiet(moves=6)), ("nodes=5000, depth=9", P.Quiet(9, 5000)),
                       ("share=0.1,time_share=0.2,cap_ms=150", P.Quiet(share=0.1, time_share=0.2, cap_ms=150.0)),
                       ("first_nodes=0,pn_nodes=0", P.Quiet(first_nodes=0, pn_nodes=0))):
        monkeypatch.setenv("PYGOMOKU_QUIET", text)
        assert Player().quiet == want, text
    for bad in ("deep", "7", "7,500,6", "0,500", "moves=0", "share=1.5", "time_share=1.0", "cap_ms=-1",
                "moves=6.5", "nodes=0", "width=3", "nodes=x", "first_nodes=-1", "pn_nodes=-5"):
        monkeypatch.setenv("PYGOMOKU_QUIET", bad)
        with pytest.raises(checks.ConfigError, match="PYGOMOKU_QUIET"):
            Player()


def test_a_four_is_never_taken_as_quiet() -> None:
    """A candidate that makes a four leaves the opponent a forced block, so its VCT search ends at
    once without a VCT: no proof that the threat is gone. Session 37's game (20x20, AIWine, opening 4
    as Black): after n18 (played; Rapfi then announced a mate in 19) the opponent's search runs into
    its limit; o20 makes a four (o16-o18 and o20) and its search ends in one node; r14 (Rapfi's
    move) ends without a VCT in a few nodes. o20 is passed over, r14 taken."""
    from gomoku_ai import player as P
    b = Board(20)
    for name in "n20 r18 q17 p17 p15 q16 o16 q14 o18 r16 o17 o15".split():
        b.push(b.parse(name))
    n18, o20, r14 = (b.parse(x) for x in ("n18", "o20", "r14"))
    assert not _quiet_after(b, n18, 3000) and _quiet_after(b, o20, 3000) and _quiet_after(b, r14, 3000)
    soon = time.perf_counter() + 30.0

    def info(*moves: int) -> SearchInfo:
        return SearchInfo(move=moves[0], candidates=[Candidate(m, 100 - 10 * i, 0.1, 0.2)
                                                     for i, m in enumerate(moves)])

    assert P._quiet_choice(b, info(n18, o20), soon).move == n18
    assert P._quiet_choice(b, info(n18, o20, r14), soon).move == r14
    assert len(b.moves) == 12
    # why the preference searches by iterative deepening: the proof-number search proves, within
    # the threat rules, that n18 leaves no VCT (Rapfi's mate is not one), in a few dozen nodes
    b.push(n18)
    pn = V.vct_search(b, 20, 3000, proof_numbers=True)
    b.pop()
    assert pn.line is None and not pn.aborted and pn.nodes < 300


def test_the_quiet_search_goes_on_when_it_keeps_the_move(monkeypatch: pytest.MonkeyPatch) -> None:
    """With PYGOMOKU_QUIET the search stops early to leave the preference its time; when the
    preference keeps the search's own move, the search goes on (a second call, to the end of the
    soft budget) and its choice then is played; when it changes the move, there is no second call
    and the changed move is played."""
    from gomoku_ai import player as P
    # the search stops 200 ms early (half the 400 ms budget); the resume is not skipped however late a
    # loaded machine's first search ends (that skip, RESUME_MIN_MS, is the next test's)
    monkeypatch.setenv("PYGOMOKU_QUIET", "time_share=0.5,cap_ms=300")
    monkeypatch.setattr(P, "RESUME_MIN_MS", float("-inf"))
    b = Board(15)
    for name in ("h8", "i9", "h9", "h10", "g10"):
        b.push(b.parse(name))
    for change in (False, True):
        p = Player()
        deadlines: List[float] = []
        real = p.mcts.search

        def spy(*a: Any, **k: Any) -> Any:
            deadlines.append(k["deadline"])
            return real(*a, **k)

        def choice(board: Board, info: SearchInfo, end: float, quiet: P.Quiet) -> SearchInfo:
            return P._play_candidate(info, info.candidates[1]) if change else info

        monkeypatch.setattr(p.mcts, "search", spy)
        monkeypatch.setattr(P, "_quiet_choice", choice)
        t0 = time.perf_counter()
        info = p.think(b, Limit(soft_ms=400, hard_ms=400))
        if change:
            assert len(deadlines) == 1 and info.move == info.candidates[1].move
        else:
            assert len(deadlines) == 2 and deadlines[1] - deadlines[0] == pytest.approx(0.2, abs=0.005)
            assert deadlines[1] - t0 == pytest.approx(0.4, abs=0.02) and info.move == info.candidates[0].move
        assert len(b.moves) == 5


def test_the_quiet_search_does_not_go_on_after_a_checked_move_or_when_told_not_to(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``_quiet_search`` resumes the search only when the move it keeps is the tree's most visited
    (not one the check under threat chose instead: a resumed search would give the refuted move
    back), ``resume`` is set (``think`` clears it under threat and with a visit limit) and
    :data:`~gomoku_ai.player.RESUME_MIN_MS` or more of the soft budget is left."""
    from gomoku_ai import player as P
    from gomoku_ai.mcts import SearchStats
    monkeypatch.setenv("PYGOMOKU_QUIET", "0")
    b = Board(15)
    for name in ("h8", "i9", "h9", "h10", "g10"):
        b.push(b.parse(name))
    p = Player()
    info = p.think(b, Limit(soft_ms=300, hard_ms=300))
    assert info.move == info.candidates[0].move and len(info.candidates) >= 2
    p.quiet = P.QUIET_SEARCH
    calls: List[Any] = []
    monkeypatch.setattr(p.mcts, "search", lambda *a, **k: calls.append(k) or SearchStats())
    monkeypatch.setattr(P, "_quiet_choice", lambda board, info, end, quiet: info)
    t0 = time.perf_counter()
    checked = P._play_candidate(info, info.candidates[1])
    assert P._quiet_search(p, b, checked, SearchStats(), t0, 400.0, None, None, None, True) is checked
    assert P._quiet_search(p, b, info, SearchStats(), t0, 400.0, None, None, None, False) is info
    # less than RESUME_MIN_MS (15 ms) left of the soft budget: no resume
    late = time.perf_counter() - (400.0 - P.RESUME_MIN_MS + 5.0) / 1000.0
    assert P._quiet_search(p, b, info, SearchStats(), late, 400.0, None, None, None, True) is info
    assert not calls
    t0 = time.perf_counter()
    P._quiet_search(p, b, info, SearchStats(), t0, 400.0, None, None, None, True)
    assert len(calls) == 1 and calls[0]["deadline"] == pytest.approx(t0 + 0.4)


# White to move after 23 plies of Rapfi's game 5 against itself at 100,000 nodes (checkpoints/teacher15e):
# Black has a VCT as if White passed, and Rapfi's k11 stops it from outside the squares the defence
# candidates take from the threat's line (a defence from afar)
K11_GAME = "h8 i7 h10 h7 g6 i6 j5 i5 i4 k6 k7 j8 h6 j10 j9 l10 k9 l9 f7 h5 k8 i9 i8"


class PeakAt(Evaluator):
    """Policy logits 8 at one square and 0 elsewhere, value 0: the network's favourite move, by hand."""

    def __init__(self, move: int) -> None:
        self.move = move

    def prepare(self, board: Board) -> None:
        return None

    def evaluate(self, items: Any, shape: Any):
        logits = np.zeros((len(items), shape[0] * shape[1]), np.float32)
        logits[:, self.move] = 8.0
        return logits, np.zeros(len(items), np.float32)


def test_the_evaluators_favourite_defence_joins_the_candidates(monkeypatch: pytest.MonkeyPatch) -> None:
    """PYGOMOKU_DEFENCE_PRIOR=N: against an opponent's VCT the evaluator's N favourite moves are defence
    candidates too, checked like the rest. k11 stops Black's VCT but is not a candidate by the threat's
    geometry: with 0 the root's restriction leaves it out, with 2 it is kept (as the evaluator's first)."""
    b = Board(15)
    for tok in K11_GAME.split():
        b.play(b.parse(tok))
    k11 = b.parse("k11")
    b.pass_turn()
    threat = V.vct_search(b, max_depth=3, node_limit=6000)
    b.pass_turn()
    assert threat.line and k11 not in V.defence_candidates(b, threat.line)
    b.push(k11)
    assert V.vct_search(b, max_depth=5, node_limit=20000).line is None
    b.pop()
    monkeypatch.setenv("PYGOMOKU_DEFENCE_PRIOR", "0")
    restrict, threatened = Player(PeakAt(k11)).root_tactics(b, 2000.0)
    assert threatened and restrict and k11 not in restrict
    monkeypatch.setenv("PYGOMOKU_DEFENCE_PRIOR", "2")
    restrict, threatened = Player(PeakAt(k11)).root_tactics(b, 2000.0)
    assert threatened and restrict and restrict[0] == k11


def test_prior_moves_follow_the_candidates_without_repeats() -> None:
    """_with_prior_moves: the candidates unchanged, then the k legal near moves with the highest logits
    that are not among them, best first; k = 0 adds nothing; an occupied square never comes in."""
    from gomoku_ai.player import _with_prior_moves
    b = Board(15)
    for tok in "h8 i9 g9".split():
        b.play(b.parse(tok))
    logits = np.zeros(225, np.float32)
    for tok, v in (("h8", 9.0), ("f10", 5.0), ("j7", 4.0), ("h9", 3.0), ("a1", 7.0)):
        logits[b.parse(tok)] = v
    cands = [b.parse("h9"), b.parse("g8")]
    assert _with_prior_moves(b, cands, logits, 0) == cands == _with_prior_moves(b, cands, None, 2)
    # h8 is taken, a1 is not near a stone, h9 is a candidate already
    assert _with_prior_moves(b, cands, logits, 2) == cands + [b.parse("f10"), b.parse("j7")]
