"""VCT (threes and fours) attack and defence: hand-built positions whose answer is known by
construction, the rules' effect (renju forbids Black's three-three), the defender's counter-threats,
and the board left unchanged. Fragments are placed on an empty 15x15 board as in test_tactics."""
from __future__ import annotations

from pathlib import Path
from typing import List, Tuple

import pytest

from gomoku_ai import native
from gomoku_ai import vct as V
from gomoku_ai.vct import read_positions
from gomoku_ai import tactics as T
from gomoku_ai.board import Board
from gomoku_ai.player import Limit, Player
from gomoku_ai.rules import WHITE, Rule
from tests.test_tactics import pos, state

F, R = Rule.FREESTYLE, Rule.RENJU
MIN_WINS_SOLVED = 31       # of 35, measured when the set was built (node limits: deterministic)
MIN_DEFENCE_RECALL = 0.75  # 75 of the oracle's 99 defending moves kept (18 of 20 threats seen)


@pytest.fixture(autouse=True, params=["c", "python"])
def vct_impl(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test here runs with each VCT search for freestyle and standard boards: the C one
    (:func:`gomoku_ai.native.vct`; ``tests/test_native_vct.py`` holds it to the Python answers) and
    the Python one (:class:`gomoku_ai.vct._VCT`). Renju and caro use Python in both runs."""
    if request.param == "c" and not native.available():
        pytest.skip(f"the C core is not running: {native.status()}")
    monkeypatch.setattr(V, "NATIVE_VCT", request.param == "c")
    return str(request.param)


def replay_forced(b: Board, line: List[int]) -> None:
    """Check a VCT main line move by move with the board's own rules: every attacker move before
    the last VCF is a four or an open three (a threat the defender must answer), the defender
    never makes five, and the line ends in a five."""
    att = b.side_to_move
    pushed = 0
    try:
        for k, m in enumerate(line):
            assert b.is_empty(m), f"ply {k}: {b.move_name(m)} is occupied"
            won = b.push(m)
            pushed += 1
            if won:
                assert b[m] == att, "the defender made five"
                return
        raise AssertionError("the line does not end in a five")
    finally:
        for _ in range(pushed):
            b.pop()


DEFEND_THREE_THREE = """
    ...O..
    ..X...
    ..X.O.
    XX*...
    .O....
    ......
    """

THREE_THREE = """
    ......
    ..X...
    ..X...
    XX*...
    ......
    ......
    """


def test_three_three_is_a_vct_not_a_vcf() -> None:
    b, marks = pos(THREE_THREE)
    assert T.find_vcf(b) is None
    before = state(b)
    res = V.vct_search(b, max_depth=2)
    assert state(b) == before
    assert res.line is not None and res.line[0] == marks["*"][0]
    assert res.depth == 1 and not res.aborted
    replay_forced(b, res.line)


def test_four_three_found_and_replayed() -> None:
    b, marks = pos("""
        O.....
        .X....
        ..X...
        ...X..
        ......
        .XX*..
        """)
    # the star makes a four (diagonal, blocked at the top) and an open three (row): a four-three
    res = V.vct_search(b, max_depth=2)
    assert res.line is not None
    replay_forced(b, res.line)


def test_renju_black_three_three_is_forbidden_white_allowed() -> None:
    b, marks = pos(THREE_THREE, rule=R)
    star = marks["*"][0]
    res = V.vct_search(b, max_depth=2)
    assert res.line is None or res.line[0] != star      # forbidden for Black
    assert all(m != star for m, _f, _t in V.threat_moves(b))
    w, wm = pos(THREE_THREE.replace("X", "O"), rule=R, to_move=WHITE)
    res_w = V.vct_search(w, max_depth=2)
    assert res_w.line is not None and res_w.line[0] == wm["*"][0]


def test_defender_counter_four_refutes_the_three_three() -> None:
    # White can make four after Black's three-three and then win first: a straight-four threat of
    # its own (an open three on the right) gives White a VCF once it gets a free move
    b, marks = pos("""
        ......O...
        ..X...O...
        ..X...O...
        XX*.......
        ..........
        """)
    assert V.vct_search(b, max_depth=2).line is None


def test_defence_against_a_three_three_point() -> None:
    # White to move; Black threatens the three-three at the star (White's three stones keep Black
    # from other threats): White must take the star or close the column at its open end
    b, marks = pos(DEFEND_THREE_THREE, to_move=WHITE)
    star = marks["*"][0]
    before = state(b)
    defs, aborted = V.vct_defences(b)
    assert state(b) == before
    assert defs is not None and not aborted
    assert sorted(defs) == sorted([star, b.index(7, 5)])
    for d in defs:                       # each kept move really leaves Black without its VCT
        b.push(d)
        assert V.vct_search(b, max_depth=3).line is None, b.move_name(d)
        b.pop()


def test_no_threat_no_defence() -> None:
    b, _ = pos("""
        X....
        .....
        ..O..
        """, to_move=WHITE)
    assert V.vct_defences(b) == (None, False)


def test_threat_moves_order_and_counts() -> None:
    b, marks = pos(THREE_THREE)
    ts = V.threat_moves(b)
    assert ts[0][0] == marks["*"][0] and ts[0][2] == 2      # two threes at once, first
    assert all(f + t >= 1 for _m, f, t in ts)


def test_player_plays_the_vct_win() -> None:
    b, marks = pos(THREE_THREE)
    info = Player().think(b, Limit(soft_ms=1500, hard_ms=3000))
    assert info.move == marks["*"][0]
    assert info.source == "vct" and info.proven == 1


def test_player_defends_the_three_three_point() -> None:
    b, marks = pos(DEFEND_THREE_THREE, to_move=WHITE)
    defs, _ = V.vct_defences(b)
    info = Player().think(b, Limit(soft_ms=1500, hard_ms=3000))
    assert info.move in defs


def test_limits_are_respected() -> None:
    b, _ = pos(THREE_THREE)
    res = V.vct_search(b, max_depth=4, node_limit=1)
    assert res.aborted and res.line is None


# ------------------------------------------------------------------ the labelled position set

SET = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "vct_positions.txt"


def _set():
    return read_positions(SET)


def test_position_set_is_large_and_well_formed() -> None:
    ps = _set()
    wins = [p for p in ps if p.kind == "win"]
    defs = [p for p in ps if p.kind == "defend"]
    assert len(ps) >= 50 and wins and defs
    assert len({p.name for p in ps}) == len(ps)
    for p in ps:
        b = p.board()
        assert all(b.is_empty(m) for m in p.answer), p.name
        assert b.winner is None and not T.winning_moves(b), p.name


def test_position_set_rejects_a_malformed_block(tmp_path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("# name: x\n# kind: win\n# to_move: X\n# answer: \n.....\n")
    with pytest.raises(ValueError, match="bad.txt: block 1"):
        read_positions(bad)


def test_vct_wins_agree_with_the_oracle() -> None:
    """Every win the solver claims starts with a move the oracle also proved winning (a claimed
    win outside the answer would be a wrong proof) -- or with a four whose forced exchange is
    followed by one (a delaying four the oracle's list leaves out) -- and it solves at least the
    share it solved when the set was made (node limits, not time, so the count does not depend on
    the machine)."""
    wins = [p for p in _set() if p.kind == "win"]
    solved = 0
    for p in wins:
        b = p.board()
        res = V.vct_search(b, max_depth=6, node_limit=4000)
        if res.line:
            first = res.line[0]
            if first not in p.answer:
                b.push(first)
                four = T.must_block(b) == [res.line[1]]
                b.pop()
                assert four and res.line[2] in p.answer, (p.name, b.move_name(first))
            solved += 1
    assert solved >= MIN_WINS_SOLVED, f"{solved} of {len(wins)}"


def test_vct_defences_keep_the_oracles_defences() -> None:
    """The player restricts its search to the moves :func:`vct_defences` keeps, so what matters
    is that the real defences are among them: the share of the oracle's defending moves that are
    kept, over the whole set, stays at least what it was when the set was made. (The kept set is
    larger than the oracle's: after some moves our VCT finds nothing where the oracle finds a long
    mate; and a threat our VCT does not see at all keeps nothing, which is counted as a miss.)"""
    defs = [p for p in _set() if p.kind == "defend"]
    kept = total = 0
    for p in defs:
        b = p.board()
        moves, _aborted = V.vct_defences(b, max_depth=3, node_limit=1500)
        kept += len(p.answer & set(moves or []))  # a threat we do not see keeps nothing
        total += len(p.answer)
    assert kept / total >= MIN_DEFENCE_RECALL, f"{kept} of {total}"


def test_the_vcf_memo_changes_no_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    """The search keeps its VCF answers by position. With the memo emptied before every VCF
    search (so that it never answers), the line and the attacker node count are the same on the
    set's win positions; with it, some calls were answered from it."""
    monkeypatch.setattr(V, "NATIVE_VCT", False)     # (the memo of the Python search)
    wins = [p for p in _set() if p.kind == "win"][:12]
    orig = V._VCT._vcf
    calls = [0]

    def counted(self: V._VCT):  # type: ignore[no-untyped-def]
        calls[0] += 1
        return orig(self)

    def forgetful(self: V._VCT):  # type: ignore[no-untyped-def]
        self.vcf_seen.clear()
        return orig(self)

    def run_all() -> List[tuple]:
        out = []
        for p in wins:
            res = V.vct_search(p.board(), max_depth=4, node_limit=1500)
            out.append((res.line, res.nodes))
        return out

    monkeypatch.setattr(V._VCT, "_vcf", counted)
    init = V._VCT.__init__

    def tracked(self: V._VCT, *a, **kw):  # type: ignore[no-untyped-def]
        init(self, *a, **kw)
        seen.append(self)

    seen: List[V._VCT] = []
    monkeypatch.setattr(V._VCT, "__init__", tracked)
    with_memo = run_all()
    stored = sum(len(v.vcf_seen) for v in seen)
    assert calls[0] > stored > 0            # some calls were answered by the memo
    monkeypatch.setattr(V._VCT, "_vcf", forgetful)
    assert run_all() == with_memo
    assert any(line for line, _n in with_memo)


def test_the_shared_vcf_table_changes_no_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    """The VCT's VCF searches share one transposition table (``SHARED_VCF_TT``): an entry is a fact
    about its position whatever search stored it. With a table of their own per VCF search, the
    lines and the attacker node counts are the same on 12 of the set's positions (attack, and the
    opponent's threat as if passed), and the shared table spends fewer VCF nodes. (The iterative
    deepening: the proof-number search revisits nodes, and a VCF cut by its node limit in one table
    and not in the other changes how often.)"""
    monkeypatch.setattr(V, "PN_VCT", False)
    ps = _set()[:12]

    def run_all() -> tuple:
        out, vcf_nodes = [], 0
        for p in ps:
            b = p.board()
            res = V.vct_search(b, max_depth=4, node_limit=600)
            b.pass_turn()
            thr = V.vct_search(b, max_depth=3, node_limit=300)
            out.append((res.line, res.nodes, thr.line, thr.nodes))
            vcf_nodes += res.vcf_nodes + thr.vcf_nodes
        return out, vcf_nodes

    monkeypatch.setattr(V, "SHARED_VCF_TT", True)
    shared, shared_nodes = run_all()
    monkeypatch.setattr(V, "SHARED_VCF_TT", False)
    own, own_nodes = run_all()
    assert shared == own
    assert any(line for line, *_ in shared)
    assert shared_nodes < own_nodes, (shared_nodes, own_nodes)


def _replays_checked(monkeypatch: pytest.MonkeyPatch) -> List[int]:
    """Wrap ``_VCT._replay``: every line it gives must pass :func:`gomoku_ai.tactics.is_vcf_line`
    (an independent replay of the fours and their only blocks); returns [answers, calls]. The
    search runs in Python here (the C replay is held to it by tests/test_native_vct.py)."""
    monkeypatch.setattr(V, "NATIVE_VCT", False)
    orig = V._VCT._replay
    seen = [0, 0]

    def checked(self: V._VCT, threat: List[int], r: int):  # type: ignore[no-untyped-def]
        out = orig(self, threat, r)
        seen[1] += 1
        if out is not None:
            seen[0] += 1
            assert T.is_vcf_line(self.board, out), (threat, r, out)
        return out

    monkeypatch.setattr(V._VCT, "_replay", checked)
    return seen


def test_replaying_the_threat_is_sound_and_saves_vcf_nodes(monkeypatch: pytest.MonkeyPatch) -> None:
    """A defender's reply to a three is first met by replaying the VCF the three threatened
    (``REPLAY_THREAT``). Every line the replay gives is a VCF after the reply (checked by
    ``is_vcf_line``); on 30 of the set's positions (wins, and the opponent's threat as if passed
    in the defence ones) it answers some replies and finds the same wins at the same
    attacker-node limit (a replay counts as the attacker node it saves), with fewer VCF nodes.
    (Since the replies are only the squares that may break the line, ``_reply_zone``, few of them
    leave it whole: the counter-four squares that do not, and the defender's fours.)"""
    seen = _replays_checked(monkeypatch)
    ps = _set()[:30]

    def run_all() -> Tuple[List[bool], int]:
        out, vcf_nodes = [], 0
        for p in ps:
            b = p.board()
            if p.kind != "win":
                b.pass_turn()
            res = V.vct_search(b, max_depth=5, node_limit=300)
            out.append(res.line is not None)
            vcf_nodes += res.vcf_nodes
        return out, vcf_nodes

    monkeypatch.setattr(V, "REPLAY_THREAT", False)
    without, without_nodes = run_all()
    assert seen == [0, 0]
    monkeypatch.setattr(V, "REPLAY_THREAT", True)
    with_replay, with_nodes = run_all()
    assert seen[1] > seen[0] > 0, seen
    assert with_replay == without and any(without)
    assert with_nodes < without_nodes, (with_nodes, without_nodes)


def test_replaying_the_threat_is_freestyle_and_exact_five_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Renju (forbidden points) and caro (blocked fives) replay nothing: the attack nodes search."""
    seen = _replays_checked(monkeypatch)
    for rule in (Rule.RENJU, Rule.CARO):
        for p in _set()[:4]:
            b = Board(15, rule=rule)
            for m in p.board().moves:
                b.play(m)
            V.vct_search(b, max_depth=3, node_limit=60)
    assert seen[0] == 0 and seen[1] > 0, seen


def test_first_moves_a_hint_to_the_front_only_when_it_is_a_candidate() -> None:
    assert V._first([3, 1, 2], 2) == [2, 3, 1]
    assert V._first([3, 1, 2], 3) == [3, 1, 2]
    assert V._first([3, 1, 2], 9) == [3, 1, 2]      # not a candidate here: no move is added
    assert V._first([3, 1, 2], None) == [3, 1, 2]
    assert V._first([], 4) == []


def _defence_checks(hints: bool, monkeypatch: pytest.MonkeyPatch
                    ) -> Tuple[List[Tuple[str, int, str]], int]:
    """Every defence candidate of the set's defence positions, each checked alone (its opponent's
    VCT at depth 3, 600 attacker nodes; the first 20 of 4 positions), in one :func:`safe_moves`-like pass sharing one Hints or
    none: [(position, move, 'refuted' / 'held' / 'cut')], attacker nodes in all."""
    monkeypatch.setattr(V, "SHARE_HINTS", hints)
    out, nodes = [], 0
    for p in [p for p in _set() if p.kind == "defend"][:4]:
        b = p.board()
        b.pass_turn()
        threat = V.vct_search(b, max_depth=3, node_limit=3000)
        b.pass_turn()
        assert threat.line is not None, p.name
        h = V.Hints() if hints else None
        for m in V.defence_candidates(b, threat.line)[:20]:
            b.push(m)
            res = V.vct_search(b, max_depth=3, node_limit=600, hints=h)
            if res.line is not None:
                replay_forced(b, res.line)
            b.pop()
            nodes += res.nodes
            out.append((p.name, m, "refuted" if res.line else "cut" if res.aborted else "held"))
    return out, nodes


def test_shared_hints_change_no_finished_answer_and_save_nodes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The defence checks of one move share their move-ordering memory (``Hints``): the same moves
    are refuted or held wherever both searches finished (a hint only reorders; every line found is
    still a forced win, checked move by move), and fewer attacker nodes are searched."""
    without, n_without = _defence_checks(False, monkeypatch)
    with_hints, n_with = _defence_checks(True, monkeypatch)
    assert [k[:2] for k in without] == [k[:2] for k in with_hints]
    finished = [(a[2], b[2]) for a, b in zip(without, with_hints) if "cut" not in (a[2], b[2])]
    assert len(finished) > 60 and all(a == b for a, b in finished)
    assert {a for a, _ in finished} == {"refuted", "held"}
    assert n_with < 0.9 * n_without, (n_with, n_without)


def test_safe_moves_share_hints_unless_switched_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """``safe_moves`` hands one Hints to all its searches (the caller's when given), and none when
    ``PYGOMOKU_VCT_HINTS=0`` turned ``SHARE_HINTS`` off."""
    seen: List[object] = []
    orig = V.vct_search

    def spy(*a, **k):  # type: ignore[no-untyped-def]
        seen.append(k.get("hints"))
        return orig(*a, **k)

    monkeypatch.setattr(V, "vct_search", spy)
    p = [p for p in _set() if p.kind == "defend"][0]
    b = p.board()
    moves = sorted(p.answer)[:1] + [m for m in range(b.width * b.height) if b.is_empty(m)][:2]
    V.safe_moves(b, moves, node_limit=50)
    assert len(seen) == 3 and isinstance(seen[0], V.Hints) and all(s is seen[0] for s in seen)
    mine = V.Hints()
    seen.clear()
    V.safe_moves(b, moves, node_limit=50, hints=mine)
    assert seen and all(s is mine for s in seen)
    monkeypatch.setattr(V, "SHARE_HINTS", False)
    seen.clear()
    V.safe_moves(b, moves, node_limit=50, hints=mine)
    assert seen and all(s is None for s in seen)


#: session 38, AIWine 15x15 game 21 after 33 plies (White to move): White wins with e5, a move that
#: makes no four or three but leaves a VCF threat; our player, searching threats only, missed it for
#: four moves in a row and lost (Rapfi: mate in 17)
QUIET_WIN = ("h8 g7 i6 g9 f10 e7 g10 e10 e9 d8 h7 g8 g6 f6 c9 d6 h10 h9 d9 f9 i10 j10 i8 f5 j9 k10 "
             "f7 e8 i7 i9 a9 b9 f8")


def _quiet_win_board() -> Board:
    b = Board(15)
    for name in QUIET_WIN.split():
        b.push(b.parse(name))
    return b


def test_a_quiet_first_move_finds_the_win_the_threats_miss(vct_impl: str) -> None:
    """With threats alone the search finishes (every depth, no limit cut it) without a win; with
    quiet first moves it finds e5, which is not a threat, and the line is forced. That e5 wins
    whatever the reply is checked square by square (with the C search): after every reply White
    still has a VCT."""
    b = _quiet_win_board()
    plain = V.vct_search(b, max_depth=8, node_limit=200000, vcf_nodes=20000, quiet_moves=0)
    assert plain.line is None and not plain.aborted
    r = V.vct_search(b, max_depth=8, node_limit=200000, vcf_nodes=20000, quiet_moves=40)
    assert r.line is not None and b.move_name(r.line[0]) == "e5"
    assert r.line[0] not in {m for m, _f, _t in V.threat_moves(b)}
    replay_forced(b, r.line)
    if vct_impl != "c":
        return
    b.push(r.line[0])
    try:
        for reply in [m for m in range(b.width * b.height) if b.is_empty(m)]:
            b.push(reply)
            assert V.vct_search(b, max_depth=8, node_limit=200000, vcf_nodes=20000,
                                quiet_moves=40).line is not None, b.move_name(reply)
            b.pop()
    finally:
        b.pop()


def test_quiet_threats_make_no_threat_and_come_most_lines_first() -> None:
    """vct._quiet_threats: moves that make no five, four or open three (none is a threat move), each
    in at least one n-window holding n - 3 of the side's stones and nothing else, ordered by that
    number of lines; renju Black's forbidden points are left out; a negative count is refused."""
    b = _quiet_win_board()
    ctx = T._Ctx(b)
    q = V._quiet_threats(ctx, b.side_to_move)
    threats = {m for m, _f, _t in V.threat_moves(b)}
    assert q and not threats & {m for m, _k in q}
    assert [k for _m, k in q] == sorted((k for _m, k in q), reverse=True) and q[-1][1] >= 1
    assert len(q) == len({m for m, _k in q}) and all(b.is_empty(m) for m, _k in q)
    # the gap * of XXX*XX: for Black a six, no five under exact five or renju, and in a vertical
    # window with two Black stones (no three): quiet under exact five, forbidden (overline) in renju
    overline = """
        XXX*XX.
        ...X...
        .......
        .......
        ...X...
        """
    for rule, listed in ((Rule.STANDARD, True), (Rule.RENJU, False)):
        rb, marks = pos(overline, rule=rule)
        gap = marks["*"][0]
        assert rb.side_to_move == 1
        assert (gap in {m for m, _k in V._quiet_threats(T._Ctx(rb), 1)}) == listed, rule
    with pytest.raises(ValueError, match="quiet_moves"):
        V.vct_search(b, quiet_moves=-1)


def test_the_player_wins_with_a_quiet_first_move_unless_switched_off(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With a clock (3 s, so that the attack's share, 12 %, serves the Python search too) the root's
    own VCT takes quiet first moves (player.ATTACK_QUIET) and plays e5 as a proven win; with PYGOMOKU_ATTACK_QUIET=0 the root finds no VCT there (the search decides)."""
    b = _quiet_win_board()
    info = Player().root_tactics(b, 3000.0)
    assert info is not None and getattr(info, "source", None) == "vct" and info.proven == 1
    assert b.move_name(info.move) == "e5"
    monkeypatch.setenv("PYGOMOKU_ATTACK_QUIET", "0")
    off = Player().root_tactics(b, 3000.0)
    assert getattr(off, "source", None) != "vct"
