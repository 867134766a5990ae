"""Tactics: fives, fours, threes, VCF, VCF defence and the root threat summary.

Positions are small ASCII fragments placed on an empty 15x15 board (:func:`pos`). In a fragment
``X`` is Black, ``O`` White, ``.`` empty; any other character marks an *empty* square that the test
refers to (``*`` usually: the expected answer). Every VCF line returned is replayed by
:func:`check_forced_win`, which uses only :meth:`Board.makes_five`, push/pop and
:func:`gomoku_ai.renju.is_forbidden` -- not the tactics module -- and :func:`ref_vcf` is a
brute-force reference solver for short VCFs.
"""
from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import pytest

from gomoku_ai import native
from gomoku_ai import tactics as T
from gomoku_ai.board import Board
from gomoku_ai.rules import BLACK, EMPTY, WHITE, Rule
from gomoku_ai.vct import read_positions

F, S, R, C = Rule.FREESTYLE, Rule.STANDARD, Rule.RENJU, Rule.CARO


@pytest.fixture(autouse=True, params=["c", "python"])
def prover(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test here runs with each VCF prover for freestyle and standard boards: the C one
    (:mod:`gomoku_ai.native`; ``tests/test_native.py`` fails where a compiler exists but it is not
    built) and the pure-Python one. Renju and caro boards use the Python prover in both runs."""
    if request.param == "c" and not native.available():
        pytest.skip(f"the C prover is not running: {native.status()}")
    if request.param == "python":
        monkeypatch.setattr(native, "ENABLED", False)
    return str(request.param)


# ------------------------------------------------------------------------------------ helpers

def pos(text: str, rule: Rule = F, to_move: Optional[int] = BLACK, at: Tuple[int, int] = (5, 5),
        size: int = 15) -> Tuple[Board, Dict[str, List[int]]]:
    """Board with the fragment's top-left cell at ``at`` = (x, y); returns (board, marks) where
    marks maps each marker character to its squares (flat indices, sorted)."""
    rows = [r.replace(" ", "") for r in text.strip("\n").splitlines()]
    rows = [r for r in rows if r]
    grid = [["."] * size for _ in range(size)]
    marks: Dict[str, List[int]] = {}
    x0, y0 = at
    for dy, row in enumerate(rows):
        for dx, ch in enumerate(row):
            x, y = x0 + dx, y0 + dy
            assert 0 <= x < size and 0 <= y < size, "fragment does not fit"
            if ch in "XO.":
                grid[y][x] = ch
            else:
                marks.setdefault(ch, []).append(y * size + x)
    b = Board.from_ascii("\n".join("".join(r) for r in grid), rule=rule, to_move=to_move)
    return b, {k: sorted(v) for k, v in marks.items()}


def state(b: Board):
    return (b.hash, list(b.moves), b.side_to_move, bytes(b._buf))


def is_forbidden(b: Board, m: int) -> bool:
    from gomoku_ai.renju import is_forbidden as f
    return f(b, m)


def empties(b: Board) -> List[int]:
    return [m for m in range(b.size) if b[m] == EMPTY]


def ref_fives(b: Board, c: int, among: Optional[Sequence[int]] = None) -> List[int]:
    """Brute force: empty squares where ``c`` would complete a winning row."""
    sq = empties(b) if among is None else [m for m in among if b[m] == EMPTY]
    return [m for m in sq if b.makes_five(m, c)]


def check_forced_win(b: Board, line: Sequence[int]) -> int:
    """Replay ``line`` (a find_vcf line) and assert that it is a genuine forced win for the side
    to move: each attacker move but the last makes a four (the defender has no five), the defender
    has exactly one legal block (any block under CARO) and plays it, and the last attacker move
    makes five -- or, renju, is a White four whose only blocks are forbidden to Black. Returns the
    number of attacker fours. The board is restored."""
    att = b.side_to_move
    dfn = 3 - att
    renju = b.rule is Rule.RENJU
    before = state(b)
    fours = 0
    pushed = 0
    try:
        assert line and len(line) % 2 == 1, line
        for i, m in enumerate(line):
            assert b[m] == EMPTY, (i, m)
            last = i == len(line) - 1
            if i % 2 == 0:
                if renju and att == BLACK and not b.makes_five(m, BLACK):
                    assert not is_forbidden(b, m), f"black used forbidden {b.move_name(m)}"
                win = b.push(m)
                pushed += 1
                if last:
                    if win:
                        return fours
                    assert renju and att == WHITE, "the last move does not make five"
                    assert not ref_fives(b, BLACK)
                    fives = ref_fives(b, WHITE)
                    assert fives and all(is_forbidden(b, f) for f in fives)
                    return fours + 1
                assert not win
                fours += 1
                assert not ref_fives(b, dfn), "the defender could win first"
                fives = ref_fives(b, att)
                assert fives, f"{b.move_name(m)} is not a four"
                blocks = []
                for s in empties(b):
                    if renju and dfn == BLACK and is_forbidden(b, s):
                        continue
                    b.push(s)
                    if not any(b[f] == EMPTY and b.makes_five(f, att) for f in fives):
                        blocks.append(s)
                    b.pop()
                if b.rule is not Rule.CARO:
                    assert len(blocks) <= 1, blocks
                if blocks:
                    assert line[i + 1] in blocks
                else:
                    assert i + 2 == len(line) - 1, "unstoppable threat must end the line"
            else:
                assert not b.push(m)
                pushed += 1
        raise AssertionError("unreachable")
    finally:
        for _ in range(pushed):
            b.pop()
        assert state(b) == before


def line_near(b: Board, m: int, k: int) -> List[int]:
    x, y = b.xy(m)
    out = []
    for dx, dy in ((1, 0), (0, 1), (1, 1), (1, -1)):
        for t in range(-k, k + 1):
            xx, yy = x + t * dx, y + t * dy
            if 0 <= xx < b.width and 0 <= yy < b.height:
                out.append(yy * b.width + xx)
    return out


def ref_vcf(b: Board, depth: int, memo: Optional[dict] = None) -> bool:
    """Brute-force reference: does the side to move win with at most ``depth`` fours?"""
    memo = {} if memo is None else memo
    key = (b.hash, depth)
    if key in memo:
        return memo[key]
    att = b.side_to_move
    dfn = 3 - att
    renju = b.rule is Rule.RENJU
    res = False
    if ref_fives(b, att):
        res = True
    elif depth > 0:
        D = ref_fives(b, dfn)
        cand = sorted({q for s in range(b.size) if b[s] == att
                       for q in line_near(b, s, 4) if b[q] == EMPTY})
        for m in cand:
            if D and b.rule is not Rule.CARO and m not in D:
                continue
            if renju and att == BLACK and is_forbidden(b, m):
                continue
            b.push(m)
            try:
                if ref_fives(b, dfn):
                    continue
                fives = ref_fives(b, att, line_near(b, m, 4))
                if not fives:
                    continue
                if b.rule is Rule.CARO:
                    replies = []
                    for s in empties(b):
                        b.push(s)
                        if not any(b[f] == EMPTY and b.makes_five(f, att) for f in fives):
                            replies.append(s)
                        b.pop()
                else:
                    replies = fives if len(fives) == 1 else []
                if renju and dfn == BLACK:
                    replies = [r for r in replies if not is_forbidden(b, r)]
                ok = True
                for r in replies:
                    b.push(r)
                    try:
                        ok = ref_vcf(b, depth - 1, memo)
                    finally:
                        b.pop()
                    if not ok:
                        break
                if ok:
                    res = True
                    break
            finally:
                b.pop()
    memo[key] = res
    return res


def names(b: Board, ms) -> List[str]:
    return [b.move_name(m) for m in ms]


# ------------------------------------------------------------------------------------ fives

FIVE_CASES = [
    # (fragment, rule, to_move, expected marker)
    ("OXXXX*", F, BLACK, "*"),                    # closed four, open end
    ("*XXXX*", F, BLACK, "*"),                    # straight four: both ends
    ("XX*XX", F, BLACK, "*"),                     # broken four
    ("XXX*X", F, BLACK, "*"),
    ("X*XXX", F, BLACK, "*"),
    ("OO*OO", F, WHITE, "*"),                     # white to move
    ("""
     *.....
     .X....
     ..X...
     ...X..
     ....X.
     .....O
     """, F, BLACK, "*"),                         # diagonal, closed at one end
    ("""
     .....*
     ....X.
     ...X..
     ..X...
     .X....
     O.....
     """, F, BLACK, "*"),                         # anti-diagonal, closed at one end
    ("OXXXX*X", F, BLACK, "*"),                   # freestyle: six wins
    ("OXXXX*X", S, BLACK, None),                  # standard: six is not five
    ("aXXXX*X", S, BLACK, "a"),                   # standard: only the exact end
    ("aXXXX*X", F, BLACK, "a*"),
    ("XXX*XX", S, BLACK, None),                   # overline completion
    ("XXX*XX", R, BLACK, None),                   # renju black overline is no win
    ("OOO*OO", R, WHITE, "*"),                    # renju white overline wins
    ("OXXXX*", R, BLACK, "*"),                    # renju black exact five
    ("OXXXX*O", C, BLACK, None),                  # caro: blocked at both ends
    ("OXXXX*O", F, BLACK, "*"),
    ("OXXXX*.", C, BLACK, "*"),
    ("OXXX*XXO", C, BLACK, None),                 # caro overline blocked both ends
    ("XXX..X", F, BLACK, None),                   # a three, no five
    ("OXXXXO", F, BLACK, None),                   # dead four
]


@pytest.mark.parametrize("text,rule,to_move,marker", FIVE_CASES)
def test_winning_moves(text: str, rule: Rule, to_move: int, marker: Optional[str]) -> None:
    b, mk = pos(text, rule, to_move)
    before = state(b)
    expected = sorted(m for ch in (marker or "") for m in mk.get(ch, []))
    got = T.winning_moves(b)
    assert got == expected, names(b, got)
    assert got == ref_fives(b, to_move)
    assert state(b) == before


def test_board_edge_fives() -> None:
    b, mk = pos("X\nX\nX\nX\n*", at=(0, 0))          # column at the left edge, top end off-board
    assert T.winning_moves(b) == mk["*"]
    b, mk = pos("XXXX*O", C, at=(0, 7))               # caro: the board edge does not block
    assert T.winning_moves(b) == mk["*"]
    b, mk = pos("*XXXX", at=(10, 14))                 # bottom row, right edge
    assert T.winning_moves(b) == mk["*"]


def test_must_block_and_both_colours() -> None:
    b, mk = pos("""
        OXXX*X
        ......
        XOOaOO
        """, F, BLACK)
    assert T.winning_moves(b) == mk["*"]
    assert T.must_block(b) == mk["a"]
    info = T.analyse(b)
    assert info.kind == "win" and info.moves == mk["*"]


@pytest.mark.parametrize("text,rule", [
    ("XOOOO*", F), ("OO*OO", F), ("OOO*O", F), ("O*OOO", F), ("XOOOO*", S), ("OO*OO", C),
])
def test_block_single_four(text: str, rule: Rule) -> None:
    b, mk = pos(text, rule, BLACK)
    assert T.must_block(b) == mk["*"]
    info = T.analyse(b)
    assert info.kind == "block" and info.moves == mk["*"], info


def test_standard_six_is_no_threat() -> None:
    b, mk = pos("XOOOO*O", S, BLACK)            # white would make six: no threat
    assert T.must_block(b) == []
    assert T.analyse(b).kind != "block"
    b, mk = pos("XOOOO*O", F, BLACK)
    assert T.must_block(b) == mk["*"]


def test_straight_four_is_lost() -> None:
    b, mk = pos("*OOOO*", F, BLACK)
    assert T.must_block(b) == mk["*"]
    info = T.analyse(b)
    assert info.kind == "lost" and set(info.moves) <= set(mk["*"])


def test_caro_block_at_far_end() -> None:
    b, mk = pos("XOOOO*a", C, BLACK)
    assert T.must_block(b) == mk["*"]
    assert T.blocking_moves(b) == sorted(mk["*"] + mk["a"])
    info = T.analyse(b)
    assert info.kind == "block" and info.moves == sorted(mk["*"] + mk["a"])
    b, mk = pos("XOOOO*a", F, BLACK)
    assert T.blocking_moves(b) == mk["*"]


def test_five_points_through() -> None:
    b, mk = pos("OaXX*X.")
    a = mk["a"][0]
    assert T.five_points_through(b, a, BLACK) == mk["*"]      # a taken as black: OXXX.X -> four
    assert T.five_points_through(b, a + 1, BLACK) == []       # the stone next to it: no four yet
    b.push(a)
    assert T.five_points_through(b, a, BLACK) == mk["*"]      # a played
    assert T.five_points_through(b, mk["*"][0], WHITE) == []


# ------------------------------------------------------------------------------------ fours

def four_map(b: Board, color: Optional[int] = None):
    return {f.move: (tuple(sorted(f.fives)), f.straight, f.double) for f in T.four_moves(b, color)}


def test_four_moves_open_three() -> None:
    b, mk = pos("abXXXcd", F, BLACK)
    a, bb, c, d = mk["a"][0], mk["b"][0], mk["c"][0], mk["d"][0]
    fm = four_map(b)
    assert set(fm) == {a, bb, c, d}
    assert fm[bb] == ((a, c), True, False)       # .XXXX. straight
    assert fm[c] == ((bb, d), True, False)
    assert fm[a] == ((bb,), False, False)        # X.XXX: simple four
    assert fm[d] == ((c,), False, False)


def test_four_moves_closed_three() -> None:
    b, mk = pos("OXXXab", F, BLACK)
    a, bb = mk["a"][0], mk["b"][0]
    fm = four_map(b)
    assert fm == {a: ((bb,), False, False), bb: ((a,), False, False)}


def test_four_moves_standard_six_is_not_a_four() -> None:
    b, mk = pos("OXXXabX", S, BLACK)
    assert four_map(b) == {}                     # both would only complete a six
    b, mk = pos("OXXXabX", F, BLACK)
    assert set(four_map(b)) == set(mk["a"] + mk["b"])


def test_four_moves_white_and_broken() -> None:
    b, mk = pos("OaObO", F, WHITE)
    a, bb = mk["a"][0], mk["b"][0]
    assert four_map(b) == {a: ((bb,), False, False), bb: ((a,), False, False)}
    b, mk = pos("XOO*Oa", F, WHITE)
    fm = four_map(b)
    assert fm[mk["*"][0]] == ((mk["a"][0],), False, False)
    assert fm[mk["a"][0]] == ((mk["*"][0],), False, False)


DOUBLE_FOUR = """
    O......
    .X.....
    ..X....
    ...X...
    OXXX*..
    .......
    """


def test_double_four_and_renju_forbidden() -> None:
    b, mk = pos(DOUBLE_FOUR, F, BLACK)
    p = mk["*"][0]
    fm = four_map(b)
    assert fm[p][2] is True and len(fm[p][0]) == 2
    line = T.find_vcf(b)
    assert line is not None and line[0] == p and check_forced_win(b, line) == 1
    r, _ = pos(DOUBLE_FOUR, R, BLACK)
    assert is_forbidden(r, p)
    assert p not in four_map(r)
    line = T.find_vcf(r)
    if line is not None:
        check_forced_win(r, line)
        assert p not in line[0::2]
    res = T.vcf_search(r)
    assert res.line is None and res.complete


# ------------------------------------------------------------------------------------ threes

def test_three_moves_open_two() -> None:
    b, mk = pos("abXXcd", F, BLACK, at=(5, 7))
    got = T.three_moves(b)
    assert sorted(mk["a"] + mk["b"] + mk["c"] + mk["d"]) == got, names(b, got)


def test_three_moves_blocked_two() -> None:
    b, _ = pos("OXX....", F, BLACK, at=(3, 7))
    assert T.three_moves(b) == []


def test_three_moves_renju_double_three() -> None:
    text = """
        .....
        ..X..
        ..X..
        XX*..
        .....
        """
    b, mk = pos(text, F, BLACK)
    assert mk["*"][0] in T.three_moves(b)
    r, mk = pos(text, R, BLACK)
    assert is_forbidden(r, mk["*"][0])
    assert mk["*"][0] not in T.three_moves(r)


# ------------------------------------------------------------------------------------ VCF puzzles

# (name, rule, side to move, fragment, top-left, fours needed)
PUZZLES = [
    ("free3", F, BLACK, """
        ....X..
        ...X...
        ....X.X
        .......
        X..X...
        """, (3, 7), 3),
    ("free5", F, BLACK, """
        X......X
        ........
        ....X.X.
        ...X.X..
        ....X...
        ...O.O..
        """, (4, 3), 5),
    ("free7", F, BLACK, """
        X.X..
        X....
        ...X.
        .O...
        X.X.X
        """, (3, 7), 7),
    ("free9", F, BLACK, """
        ....O..O
        ....X.X.
        ....X.OO
        X...X.X.
        ...X...O
        ......X.
        """, (3, 5), 9),
    ("std3", S, BLACK, """
        .X....
        ..X...
        X.....
        ......
        ..X..X
        ..X...
        """, (3, 5), 3),
    ("std5", S, BLACK, """
        X.....
        ...X..
        X...X.
        ......
        X....X
        .....X
        """, (3, 3), 5),
    ("std7", S, BLACK, """
        O..X.
        .....
        ..O..
        X....
        X..XO
        ..X..
        X....
        ....X
        X....
        """, (3, 3), 7),
    ("renju_b3", R, BLACK, """
        X......
        .X.....
        ..X.X.X
        X......
        ....X..
        .....X.
        """, (3, 5), 3),
    ("renju_b5", R, BLACK, """
        .....X..
        ........
        X.......
        ..X.....
        X..X.XXO
        """, (4, 6), 5),
    ("renju_b7", R, BLACK, """
        ....X...
        ........
        .O...OOO
        .OX.X...
        OX..X...
        .XX...X.
        .....X.O
        .....O..
        """, (3, 4), 7),
    ("renju_w3", R, WHITE, """
        ..X..
        ..O..
        .....
        O.O..
        O.O.O
        """, (4, 6), 3),
    ("renju_w5", R, WHITE, """
        .....O
        .O....
        ....X.
        .....O
        ....OO
        .O....
        O.....
        """, (6, 3), 5),
    ("caro3", C, BLACK, """
        ....O
        .....
        X...X
        .X..X
        ....X
        .....
        ..X..
        """, (6, 5), 3),
    ("caro5", C, BLACK, """
        ......X..
        .........
        X........
        .X.X.....
        ........O
        X........
        ....X....
        .X.......
        ...X.....
        """, (3, 3), 5),
    # the defender's forced block makes a four: the attacker must block it with a four
    ("counter_a", F, BLACK, """
        ..XX.O.
        XOO..O.
        XO.O..O
        ....OX.
        ...X..X
        X.O..O.
        """, (4, 4), 3),
    ("counter_c", F, BLACK, """
        XO...X.
        .O.OXOO
        XOO....
        X..O..O
        OX...XO
        X..OX..
        .XX.OXX
        """, (4, 4), 4),
    ("counter_b", F, BLACK, """
        OX.O...
        .OO....
        ...XXO.
        OXXO...
        O.O..OX
        .X..X..
        .....XO
        """, (4, 4), 1),
    ("one_move_straight", F, BLACK, """
        X...
        .X..
        ..X.
        ....
        XX..
        """, (3, 3), 1),
]


def _puzzle(name: str):
    for p in PUZZLES:
        if p[0] == name:
            return p
    raise KeyError(name)


# The most nodes any puzzle's shortest VCF may cost (std7 takes 612 today): a search that starts
# to wander fails here deterministically, where a timed assertion would only be flaky.
MAX_PUZZLE_NODES = 2000


@pytest.mark.parametrize("name", [p[0] for p in PUZZLES])
def test_vcf_puzzles(name: str) -> None:
    _, rule, side, text, at, fours = _puzzle(name)
    b, _ = pos(text, rule, side, at=at)
    before = state(b)
    res = T.vcf_search(b)
    assert state(b) == before
    assert res.line is not None, name
    assert check_forced_win(b, res.line) == fours       # the shortest line, in fours
    assert T.is_vcf_line(b, res.line)
    assert res.nodes <= MAX_PUZZLE_NODES, f"{name}: {res.nodes} nodes"
    # "needing": no line with fewer fours (iterative deepening, checked by brute force when short)
    if fours > 1:
        assert T.find_vcf(b, max_depth=fours - 1) is None
    if fours <= 3:
        assert not ref_vcf(b, fours - 1)
        assert ref_vcf(b, fours)


@pytest.mark.parametrize("name", ["counter_a", "counter_c"])
def test_counter_four_must_be_answered(name: str) -> None:
    """These lines contain a defender four (made by a forced block) that the attacker must answer
    by blocking it -- with a four of its own."""
    _, rule, side, text, at, _ = _puzzle(name)
    b, _ = pos(text, rule, side, at=at)
    line = T.find_vcf(b)
    answered = False
    for i, m in enumerate(line[:-1]):
        b.push(m)
        if i % 2 == 1 and ref_fives(b, WHITE):
            nxt = line[i + 1]
            if b.makes_five(nxt, BLACK):
                assert i + 1 == len(line) - 1          # a five beats the defender's four
            else:
                assert nxt in ref_fives(b, WHITE)      # otherwise the four must be blocked
                answered = True
    for _ in line[:-1]:
        b.pop()
    assert answered


# positions where ignoring the defender's counter-fours would "find" a VCF that does not exist
NO_VCF = [
    ("""
        O.X....
        ....X..
        XX..O.X
        XX..XX.
        O.OX..O
        XOOOOXO
        ...OO.O
        """, F),
    ("""
        ......X
        .O.XX.O
        ..XOXXO
        XOO.O..
        .OX.X..
        ....X..
        .OOOXO.
        """, F),
]


@pytest.mark.parametrize("idx", range(len(NO_VCF)))
def test_no_vcf_when_counter_threats(idx: int) -> None:
    text, rule = NO_VCF[idx]
    b, _ = pos(text, rule, BLACK, at=(4, 4))
    res = T.vcf_search(b, node_limit=200000)
    assert res.line is None and res.complete and not res.aborted


def test_must_answer_existing_four() -> None:
    # white has a four (five-point p); black's only VCF starts by blocking p with a straight four
    b, mk = pos("""
        .......
        .......
        ...X...
        ...X...
        OOO*O..
        ...X...
        .......
        """, F, BLACK)
    p = mk["*"][0]
    assert T.must_block(b) == [p]
    line = T.find_vcf(b)
    assert line is not None and line[0] == p
    assert check_forced_win(b, line) == 1
    # without the vertical support, black's open three elsewhere does not help: no VCF
    b, mk = pos("""
        OOO*O..
        .......
        ..XXX..
        """, F, BLACK)
    assert T.find_vcf(b) is None
    assert T.analyse(b).kind == "block"


def test_renju_white_wins_on_forbidden_block() -> None:
    # black's only block a (the gap of XX.XXX) is an overline point: forbidden for black
    b, mk = pos("""
        ..X...
        ..O...
        ..O...
        ..w...
        ..O...
        XXaXXX
        """, R, WHITE)
    a, w = mk["a"][0], mk["w"][0]
    assert is_forbidden(b, a)                        # overline for black
    line = T.find_vcf(b)
    assert line == [w]                               # the four itself: black cannot block
    assert check_forced_win(b, line) == 1
    assert T.is_vcf_line(b, line)
    b.push(w)
    assert T.analyse(b).kind == "lost"               # black to move: its only block is forbidden


def test_renju_black_overline_not_a_win_but_white_is() -> None:
    b, mk = pos("XXX*XX", R, BLACK)
    assert T.winning_moves(b) == []
    assert T.find_vcf(b) is None      # the overline is not a five, and nothing else is on the board
    b, mk = pos("OOO*OO", R, WHITE)
    assert T.winning_moves(b) == mk["*"]
    assert T.find_vcf(b) == mk["*"]


def test_quiet_positions_have_no_vcf() -> None:
    b = Board(15)
    res = T.vcf_search(b)
    assert res.line is None and res.complete
    b, _ = pos("""
        X...O
        .O.X.
        ..X..
        .O...
        """)
    res = T.vcf_search(b)
    assert res.line is None and res.complete
    info = T.analyse(b)
    assert info.kind == "none" and info.moves == []


def test_finished_game() -> None:
    b, _ = pos("XXXX.", F, BLACK)
    b.push(b.index(9, 5))
    assert b.winner == BLACK
    assert T.find_vcf(b) is None
    assert T.analyse(b).kind == "over"


# ------------------------------------------------------------------------------------ defences

def brute_defences(b: Board) -> List[int]:
    """Every move after which the opponent has no VCF (same solver limits)."""
    me = b.side_to_move
    out = []
    for s in empties(b):
        if b.rule is Rule.RENJU and me == BLACK and is_forbidden(b, s):
            continue
        if b.push(s):
            out.append(s)
        elif T.find_vcf(b, node_limit=5000) is None:
            out.append(s)
        b.pop()
    return out


DEFENCE_CASES = [
    ("..OOO..", F, BLACK, (3, 6)),          # open three
    (".O.OO.", F, BLACK, (3, 6)),           # split three
    ("""
        .......
        .OXXX..
        .......
        ..OOO..
        """, F, BLACK, (3, 6)),             # open three, and our own fours gain tempo
    ("..OOO..", S, BLACK, (3, 6)),
    ("X..OOO..X", F, BLACK, (3, 6)),        # bounded: the far squares defend too
    ("..OOO..", R, BLACK, (3, 6)),
    ("..OOO..", C, BLACK, (3, 6)),
    ("..XXX..", R, WHITE, (3, 6)),
    # renju: White's four g11 can only be blocked on g9, a double-three for Black; Black's
    # defences include stones that turn g9 into a four-three (allowed) from afar
    ("""
        .X..
        .XX.
        .OO.
        OXO.
        .O.X
        .OX.
        X.X.
        .O.O
        """, R, BLACK, (5, 2)),
]


@pytest.mark.parametrize("idx", range(len(DEFENCE_CASES)))
def test_vcf_defences_exact(idx: int) -> None:
    text, rule, side, at = DEFENCE_CASES[idx]
    b, _ = pos(text, rule, side, at=at)
    before = state(b)
    got = T.find_vcf_defences(b)
    assert state(b) == before
    assert got is not None
    assert got == brute_defences(b), names(b, got)


def test_vcf_defences_of_puzzle() -> None:
    # the defender to move against free3 / std3 (the attacker threatens a 3-four VCF)
    for name in ("free3", "std3"):
        _, rule, side, text, at, _ = _puzzle(name)
        b, _ = pos(text, rule, 3 - side, at=at)
        got = T.find_vcf_defences(b)
        assert got, name
        assert got == brute_defences(b), (name, names(b, got))


def test_open_three_defence_set() -> None:
    b, mk = pos("..aOOOb..", F, BLACK, at=(3, 7))
    info = T.analyse(b)
    assert info.kind == "defend"
    assert info.moves == sorted(mk["a"] + mk["b"])
    # with our own closed three, its four moves join the defensive set
    b, mk = pos("""
        OXXXcd...
        .........
        ..aOOOb..
        """, F, BLACK, at=(3, 5))
    info = T.analyse(b)
    assert info.kind == "defend"
    assert set(mk["a"] + mk["b"] + mk["c"] + mk["d"]) <= set(info.moves)
    far = b.index(14, 14)
    assert far not in info.moves


def test_no_threat_no_defences() -> None:
    b, _ = pos("X...O", F, BLACK)
    assert T.find_vcf_defences(b) is None


def test_analyse_vcf_and_lost() -> None:
    _, rule, side, text, at, _ = _puzzle("free5")
    b, _ = pos(text, rule, side, at=at)
    info = T.analyse(b)
    assert info.kind == "vcf" and info.moves == info.line[:1]
    check_forced_win(b, info.line)
    # the other side to move: black's VCF is a threat, with a defence or none
    b2, _ = pos(text, rule, 3 - side, at=at)
    info2 = T.analyse(b2)
    assert info2.kind in ("defend", "lost", "vcf")
    if info2.kind == "defend":
        assert info2.moves and info2.threat


# ------------------------------------------------------------------------------------ random

def random_position(rng: random.Random, rule: Rule) -> Board:
    b = Board(15, rule=rule)
    while True:
        nb = rng.randint(6, 16)
        nw = nb - rng.randint(0, 2)
        sq = [y * 15 + x for y in range(4, 11) for x in range(4, 11)]
        rng.shuffle(sq)
        b.set_position(sq[:nb], sq[nb:nb + nw], to_move=rng.choice([BLACK, WHITE]))
        # no finished rows on the board
        if not any(b.winning_line(m) for m in b.moves):
            return b


@pytest.mark.parametrize("rule", [F, S, R, C])
def test_random_vcf_lines_are_forced_wins(rule: Rule) -> None:
    rng = random.Random(1234 + list(Rule).index(rule))
    found = 0
    for _ in range(60):
        b = random_position(rng, rule)
        before = state(b)
        res = T.vcf_search(b, node_limit=20000)
        assert state(b) == before
        if res.line is not None:
            found += 1
            check_forced_win(b, res.line)
            assert T.is_vcf_line(b, res.line)
    assert found >= 10


@pytest.mark.parametrize("rule", [F, S, R, C])
def test_random_matches_reference(rule: Rule) -> None:
    rng = random.Random(99 + list(Rule).index(rule))
    for _ in range(25):
        b = random_position(rng, rule)
        mine = T.vcf_search(b, max_depth=2, node_limit=10 ** 6)
        assert not mine.aborted
        assert (mine.line is not None) == ref_vcf(b, 2), b.to_ascii()


@pytest.mark.parametrize("rule", [F, S, R, C])
def test_random_four_moves_match_brute_force(rule: Rule) -> None:
    rng = random.Random(7 + list(Rule).index(rule))
    for _ in range(40):
        b = random_position(rng, rule)
        c = b.side_to_move
        if ref_fives(b, c) or ref_fives(b, 3 - c):
            continue
        got = {f.move: set(f.fives) for f in T.four_moves(b, c)}
        ref = {}
        for m in empties(b):
            if b.makes_five(m, c):
                continue
            if rule is Rule.RENJU and c == BLACK and is_forbidden(b, m):
                continue
            b.push(m)
            fv = set(ref_fives(b, c, line_near(b, m, 4)))
            b.pop()
            if fv:
                ref[m] = fv
        assert got == ref, b.to_ascii()
        assert T.five_points(b, c) == ref_fives(b, c)
        assert T.five_points(b, 3 - c) == ref_fives(b, 3 - c)


def test_two_open_threes_are_lost() -> None:
    b, _ = pos("""
        ..OOO..
        .......
        .......
        .......
        .......
        ..OOO..
        """, F, BLACK, at=(4, 3))
    before = state(b)
    assert T.find_vcf_defences(b) == []
    info = T.analyse(b)
    assert info.kind == "lost" and info.threat
    assert state(b) == before


def test_analyse_defend_superset_without_verification() -> None:
    b, mk = pos("""
        OXXXcd...
        .........
        ..aOOOb..
        """, F, BLACK, at=(3, 5))
    before = state(b)
    full = T.analyse(b)
    quick = T.analyse(b, defend=False)
    assert state(b) == before
    assert full.kind == quick.kind == "defend"
    assert set(full.moves) <= set(quick.moves)
    assert full.nodes > 0 and full.elapsed_s >= 0.0


def test_analyse_respects_deadline() -> None:
    """A deadline that has passed stops every search at its next check: the answer says it was
    aborted and cost a small part of the full analysis (counted in nodes, not timed)."""
    _, rule, side, text, at, _ = _puzzle("std7")
    b, _ = pos(text, rule, 3 - side, at=at)      # the defender: the full analysis takes thousands of nodes
    before = state(b)
    full = T.analyse(b)
    assert not full.aborted and full.kind == "defend" and full.nodes > 1000
    late = T.analyse(b, deadline=time.perf_counter() - 1.0)
    assert late.aborted and late.nodes < full.nodes // 10
    assert state(b) == before
    b, _ = pos(text, rule, side, at=at)          # the attacker: 3 nodes are too few for its 7 fours
    res = T.vcf_search(b, node_limit=3)
    assert res.aborted and res.line is None and not res.complete
    assert T.vcf_search(b).line is not None


def game_position(rng: random.Random, rule: Rule) -> Optional[Board]:
    """A position from a random game that takes wins and blocks fives (so it is full of threats
    but not decided); None when the game ended."""
    b = Board(15, rule=rule)
    b.push(112)
    for _ in range(rng.randint(8, 40)):
        if T.winning_moves(b):
            return None
        blocks = T.must_block(b)
        if blocks:
            m = blocks[0]
        else:
            near = sorted({q for s in b.moves for q in line_near(b, s, 1) if b[q] == EMPTY})
            if rule is Rule.RENJU and b.side_to_move == BLACK:
                near = [q for q in near if not is_forbidden(b, q)]
            m = rng.choice(near)
        if b.push(m):
            return None
    return b


@pytest.mark.parametrize("rule", [F, S, R, C])
def test_random_game_vcf_lines_are_forced_wins(rule: Rule) -> None:
    rng = random.Random(4321 + list(Rule).index(rule))
    found = longest = 0
    for _ in range(40):
        b = game_position(rng, rule)
        if b is None:
            continue
        res = T.vcf_search(b)
        if res.line is not None:
            found += 1
            longest = max(longest, check_forced_win(b, res.line))
    assert found >= 5


@pytest.mark.parametrize("w,h,n", [(9, 9, 5), (20, 20, 5), (8, 6, 4), (7, 7, 3)])
def test_other_board_shapes(w: int, h: int, n: int) -> None:
    rng = random.Random(w * 100 + n)
    found = 0
    for _ in range(30 if w * h > 200 else 60):
        b = Board(w, h, n=n)
        bw, bh = min(w, 8), min(h, 8)           # stones in a corner box (edge effects included)
        sq = [y * w + x for y in range(bh) for x in range(bw)]
        rng.shuffle(sq)
        k = rng.randint(3, min(12, bw * bh // 4))
        b.set_position(sq[:k], sq[k:2 * k - rng.randint(0, 1)], to_move=rng.choice([BLACK, WHITE]))
        if any(b.winning_line(m) for m in b.moves):
            continue
        res = T.vcf_search(b)
        if res.line is not None:
            found += 1
            check_forced_win(b, res.line)
        assert (T.find_vcf(b, max_depth=2) is not None) == ref_vcf(b, 2)
    assert found >= 1


def test_forbidden_prefilter_matches_renju_module() -> None:
    """The cheap "cannot be forbidden" shortcut never hides a forbidden point."""
    rng = random.Random(55)
    checked = forbidden = 0
    for _ in range(40):
        b = game_position(rng, R) or random_position(rng, R)
        ctx = T._Ctx(b)
        for m in empties(b):
            want = is_forbidden(b, m)
            assert ctx.forbidden(m) == want, (b.to_ascii(), b.move_name(m))
            checked += 1
            forbidden += want
    assert forbidden >= 5 and checked > 1000


def test_caro_straight_four_stopped_at_the_end() -> None:
    """Caro: after O plays f the straight four .OOOO. (f = the right end of OOO) is stopped by one
    stone at its right end, because the left five would then be closed by X at both ends."""
    b, mk = pos("X.OOOf.", C, WHITE)
    f = mk["f"][0]
    b.push(f)
    assert len(T.must_block(b)) == 2                 # two five-points ...
    assert T.blocking_moves(b) == [f + 1]            # ... and one stone stops both
    b.pop()
    assert T.find_vcf(b) is None                     # so O's three is no VCF threat in caro
    fb, _ = pos("X.OOOf.", F, WHITE)
    assert T.find_vcf(fb) is not None                # but it is in freestyle


# ------------------------------------------------------------------------ window scans (hot path)

def _ref_window_squares(board: Board, c: int, need: int) -> List[Tuple[int, int]]:
    """Brute force over every n-window of every line, straight from ``board[x]``: the
    (square, direction) pairs of the empty squares of windows with ``need`` stones of ``c`` and
    empty squares otherwise, in board-line order, first occurrence kept."""
    w, h, n = board.width, board.height, board.n
    out: List[Tuple[int, int]] = []
    for d, (dx, dy) in enumerate(((1, 0), (0, 1), (1, 1), (-1, 1))):
        for y in range(h):
            for x in range(w):
                if 0 <= x - dx < w and 0 <= y - dy < h:
                    continue                      # not the first square of its line
                line = []
                xx, yy = x, y
                while 0 <= xx < w and 0 <= yy < h:
                    line.append(yy * w + xx)
                    xx, yy = xx + dx, yy + dy
                for s in range(len(line) - n + 1):
                    win = line[s:s + n]
                    vals = [board[q] for q in win]
                    if vals.count(c) == need and vals.count(EMPTY) == n - need:
                        for q in win:
                            if board[q] == EMPTY and (q, d) not in out:
                                out.append((q, d))
    return out


@pytest.mark.parametrize("size,n", [((15, 15), 5), ((20, 20), 5), ((12, 9), 5), ((10, 10), 4)])
def test_window_scans_match_a_brute_force_reference(size: Tuple[int, int], n: int) -> None:
    """The line-table scans (one pass, several wants, memoised per position) give exactly the
    brute-force answer, order included, on random boards -- also after pushes, pops and passes,
    which must invalidate the memo of the _Ctx kept across them."""
    rng = random.Random(17 + size[0] * 31 + n)
    w, h = size
    for trial in range(12):
        board = Board(w, h, n=n)
        cells = list(range(w * h))
        rng.shuffle(cells)
        for m in cells[:rng.randrange(4, w * h // 3)]:
            board.push(m)
            if board.winner is not None:
                board.pop()
        ctx = T._Ctx(board)
        for step in range(6):
            for c in (BLACK, WHITE):
                for need in (n - 1, n - 2, n - 3):
                    assert T._window_squares(ctx, c, need) == \
                        _ref_window_squares(board, c, need), (trial, step, c, need)
                fives, fours = ctx.windows(c)
                assert fives == _ref_window_squares(board, c, n - 1)
                assert fours == _ref_window_squares(board, c, n - 2)
                assert ctx.five_points(c) == T.five_points(board, c) == sorted(
                    m for m in board.empty_squares() if board.makes_five(m, c))
            # change the position under the same _Ctx: a pass, a pop, or a push
            if step % 3 == 0:
                board.pass_turn()
            elif step % 3 == 1 and board.moves:
                board.pop()
            else:
                free = [m for m in board.empty_squares()]
                board.push(rng.choice(free))


def test_stones_key_ignores_the_turn_and_follows_the_stones() -> None:
    b = Board(15)
    k0 = b.stones_key
    b.pass_turn()
    assert b.stones_key == k0 and b.hash != 0
    b.pass_turn()
    b.push(112)
    k1 = b.stones_key
    assert k1 != k0
    b.pass_turn()
    assert b.stones_key == k1
    b.pass_turn()
    b.pop()
    assert b.stones_key == k0
    # the same stones reached in another order, with a pass on the way, give the same key
    a = Board(15)
    for m in (112, 113, 127):
        a.push(m)
    c = Board(15)
    c.pass_turn()
    c.push(113)           # White
    c.push(127)           # Black
    c.pass_turn()
    c.push(112)           # Black
    assert [a[m] for m in range(225)] == [c[m] for m in range(225)]
    assert a.stones_key == c.stones_key
    assert a.side_to_move == c.side_to_move == WHITE and a.hash == c.hash


def _threat_lines():
    """(board with the defender to move, the attacker's VCF as if the defender passed) from the
    VCT set and both blunder sets: the positions where that VCF exists."""
    data = Path(__file__).resolve().parents[1] / "benchmarks" / "data"
    for name in ("vct_positions.txt", "blunder_positions.txt", "blunder_positions_20.txt"):
        for p in read_positions(data / name):
            b = p.board()
            for m in sorted(p.loses) or [None]:
                if m is not None:
                    b.push(m)       # the move that lost: the opponent now threatens
                b.pass_turn()
                line = T.find_vcf(b, node_limit=20000)
                b.pass_turn()
                if line is not None and len(line) >= 3:
                    yield b.copy(), line
                if m is not None:
                    b.pop()


def test_a_reply_outside_the_zone_leaves_the_threat_winning() -> None:
    """``_reply_zone`` (the defender replies a VCT search tries against a threatened VCF) is sound:
    a defender stone outside it that makes no four leaves the same line a forced win (replayed
    by the brute-force ``check_forced_win``), tried on the squares near the line (``_relevant``'s,
    where a stone could matter at all). And the squares it adds beside the line's own (those that
    turn a block into a counter-four) are needed: on some position one of them breaks the line."""
    outside_checked = counters_breaking = lines = 0
    for b, line in _threat_lines():
        lines += 1
        ctx = T._Ctx(b)
        dfn = b.side_to_move
        zone = T._reply_zone(ctx, line, dfn)
        near = T._relevant(ctx, line)
        assert zone <= near
        fours = {f.move for f in T._four_moves(ctx, dfn, False)}
        for q in sorted(near - zone - fours)[::2]:
            b.push(q)                   # the defender's stone; the attacker to move, as the line
            check_forced_win(b, line)   # was found
            b.pop()
            outside_checked += 1
        for q in sorted(zone - set(line) - fours):
            b.push(q)
            try:
                check_forced_win(b, line)
            except AssertionError:
                counters_breaking += 1
            b.pop()
    assert lines >= 30 and outside_checked >= 800, (lines, outside_checked)
    assert counters_breaking > 0
