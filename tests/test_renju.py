"""Renju forbidden moves (gomoku_ai.renju): a table of hand-checked positions, White's freedom,
forbidden_points / forbidden_mask, and a seeded comparison with a slow brute-force reference.

Positions are small ASCII windows (X black, O white, . empty, ``?`` the point asked about, which is
empty) pasted into an empty 15x15 renju board at ``at`` = (column, row) of the window's top-left
corner; ``at=(0, 0)`` puts the window against the top and left edges of the board.
"""
from __future__ import annotations

import contextlib
import random
from typing import Iterator, List, Optional, Tuple

import numpy as np
import pytest

from gomoku_ai import renju
from gomoku_ai.board import Board
from gomoku_ai.rules import BLACK, EMPTY, WALL, WHITE, Rule

SIZE = 15


def position(window: str, at: Tuple[int, int] = (3, 3),
             rule: Rule = Rule.RENJU) -> Tuple[Board, Optional[int]]:
    """A 15x15 board holding ``window`` at ``at``; returns it and the ``?`` square (or None)."""
    rows = [r.replace(" ", "") for r in window.strip("\n").splitlines()]
    rows = [r for r in rows if r]
    ox, oy = at
    grid = [["."] * SIZE for _ in range(SIZE)]
    query = None
    for y, r in enumerate(rows):
        for x, ch in enumerate(r):
            assert 0 <= ox + x < SIZE and 0 <= oy + y < SIZE, "window does not fit"
            if ch == "?":
                query = (oy + y) * SIZE + ox + x
                ch = "."
            grid[oy + y][ox + x] = ch
    board = Board.from_ascii("\n".join("".join(r) for r in grid), rule=rule, to_move=BLACK)
    return board, query


# ---------------------------------------------------------------------------------------------
# The table: (id, window, expected classification, top-left corner of the window).
# Each comment says why; "three" always means an open (real) three, one that can become a straight
# four (.XXXX.) by a move that is itself allowed.
# ---------------------------------------------------------------------------------------------
CASES: List[Tuple[str, str, str, Tuple[int, int]]] = [
    # --- plain double-threes ----------------------------------------------------------------
    ("dt_vertical_horizontal", """
        .......
        ...X...
        ...X...
        .XX?...
        .......
        .......
     """, "double_three", (3, 3)),   # XX? across and down, both open; diagonals empty
    ("dt_diagonal_horizontal", """
        .......
        .X.....
        ..X....
        ...?XX.
        .......
        .......
     """, "double_three", (3, 3)),
    ("dt_split_and_solid", """
        .......
        ...X...
        ...X...
        .X.?X..
        .......
        .......
     """, "double_three", (3, 3)),   # .X.XX. split three across (gap makes .XXXX.) + solid three
    ("dt_two_split_threes", """
        X......
        ...X...
        ..X....
        ...?...
        ...X...
        .......
     """, "double_three", (3, 3)),   # X.X? on the diagonal and X.?X down the column
    ("dt_split_lone_stone", """
        .......
        .......
        .?.XX..
        .X.....
        .X.....
        .......
     """, "double_three", (3, 3)),   # ?.XX: the new stone is the lone one of a split three
    ("dt_white_two_away", """
        .......
        ...X...
        ...X...
        .XX?.O.
        .......
     """, "double_three", (3, 3)),   # ..XXX.O is still open: the left point makes .XXXX.
    # --- threes that are not threes ----------------------------------------------------------
    ("no_three_white_adjacent", """
        .......
        ...O...
        ...X...
        ...X...
        .XX?...
        .......
        .......
     """, "ok", (3, 3)),             # OXXX.. can only become a blocked four
    ("no_three_white_both_sides", """
        .......
        ....X..
        ....X..
        O.XX?.O
        .......
        .......
     """, "ok", (3, 3)),             # O.XXX.O: either four touches a white stone
    ("no_three_gap_of_two", """
        .......
        ....X..
        ....X..
        .X..?X.
        .......
     """, "ok", (3, 3)),             # X..XX: no single move makes four in a row
    ("no_three_x_x_x", """
        .......
        ...X...
        ...X...
        .X.?.X.
        .......
     """, "ok", (3, 3)),             # X.X.X makes only broken fours
    ("no_three_overline_bound", """
        .........
        ....X....
        ....X....
        X..X?X..X
        .........
        .........
     """, "ok", (3, 3)),             # X..XXX..X: each four it can make is bounded by overlines
    # --- the board edge ----------------------------------------------------------------------
    ("edge_second_row_double_three", """
        .......
        .XX?...
        ...X...
        ...X...
        .......
        .......
     """, "double_three", (0, 0)),   # |.XX?.. and the column both still open towards the board
    ("edge_top_row_not_three", """
        .XX?...
        ...X...
        ...X...
        .......
        .......
     """, "ok", (0, 0)),             # the column ?XX.. starts at the edge: blocked, not a three
    ("edge_corner", """
        ?XX....
        X......
        X......
        .......
     """, "ok", (0, 0)),             # both threes run into the corner
    ("edge_five", """
        ?XXXX..
        .......
     """, "five", (0, 0)),
    ("edge_overline", """
        ?XXXXX.
        .......
     """, "overline", (0, 0)),
    # --- three whose completion point is itself forbidden (recursive check) -------------------
    ("rec_completion_double_four", """
        ........
        ........
        ..X.....
        ..X.....
        ..X.....
        .X.?X...
        ...X....
        ...X....
        ........
        ........
     """, "ok", (3, 2)),             # the gap of .X.?X. would be a double-four, so only the
                                     # column is a three
    ("rec_completion_four_three", """
        ........
        ........
        ........
        ..X.....
        ..X.....
        .X.?X...
        ...X....
        ...X....
        ........
        ........
     """, "double_three", (3, 2)),   # same without the top stone: the gap is a four-three
    ("rec_completion_overline", """
        ........
        ........
        ...X....
        ...XX...
        ...XX...
        ..X.?X..
        ...X....
        ...X....
        ........
        ........
     """, "ok", (3, 2)),             # the gap of .X.?X. would make six in the column
    ("rec_completion_five", """
        ........
        ........
        ...X....
        ...XX...
        ...XX...
        ..X.?X..
        ...X....
        ........
        ........
        ........
     """, "double_three", (3, 2)),   # now the gap makes five there: allowed, so a real three
    ("rec_completion_double_three", """
        ........
        ........
        ........
        ..X..X..
        ..X.X...
        .X.?X...
        ...X....
        ....X...
        ........
        ........
     """, "ok", (3, 2)),             # the gap would be four-three-three (column + diagonal)
    ("rec_completion_double_three_removed", """
        ........
        ........
        ........
        ..X..X..
        ..X.X...
        .X.?X...
        ...X....
        ........
        ........
        ........
     """, "double_three", (3, 2)),   # without the diagonal stone the gap is a four-three
    ("rec_square_corner", """
        ..OO..
        .?XX..
        OXXXXO
        OXXXXO
        ..XX..
        ..OO..
     """, "double_three", (4, 4)),   # needs two levels: see test_square_corner_reasoning
    ("rec_square_opposite_corner", """
        ..OO..
        ..XX..
        OXXXXO
        OXXXXO
        ..XX?.
        ..OO..
     """, "double_three", (4, 4)),
    ("rec_square_side_point", """
        ..OO..
        ?.XX..
        OXXXXO
        OXXXXO
        ..XX..
        ..OO..
     """, "ok", (4, 4)),             # a diagonal four and at most one three
    # --- four-three and double-fours across lines ---------------------------------------------
    ("four_three", """
        .......
        ...X...
        ...X...
        ...X...
        .XX?...
        .......
        .......
     """, "ok", (3, 3)),
    ("four_three_closed_four", """
        ...O...
        ...X...
        ...X...
        ...X...
        .XX?...
        .......
     """, "ok", (3, 3)),
    ("four_three_three", """
        .......
        ...X...
        ...X...
        ...X...
        .XX?...
        ....X..
        .....X.
        .......
     """, "double_three", (3, 3)),   # a four does not excuse two threes
    ("double_four_cross", """
        ...X...
        ...X...
        ...X...
        XXX?...
        .......
     """, "double_four", (3, 3)),
    ("double_four_with_three", """
        .......
        ...X...
        ...X...
        ...X...
        XXX?...
        ....X..
        .....X.
        .......
     """, "double_four", (3, 3)),
    # --- double-fours in one line -------------------------------------------------------------
    ("double_four_line_x_xxx_x", "X.X?X.X", "double_four", (3, 7)),
    ("double_four_line_end_of_xxx", "X.?XX.X", "double_four", (3, 7)),
    ("double_four_line_xx_xx_xx", "XX.?X.XX", "double_four", (3, 7)),
    ("double_four_line_xxx_xxx", "XXX.?.XXX", "double_four", (3, 7)),
    ("double_four_line_x_xx_x", "X.XX?.X", "double_four", (3, 7)),
    ("gap_of_x_xxx_x_is_five", "X?XXX.X", "five", (3, 7)),
    ("one_four_other_side_overline", ".XXX.?X.XX.", "ok", (2, 7)),  # 4th point gives six
    ("four_stones_between_overlines", "X.X?XX.X", "ok", (3, 7)),    # both ends give six
    # --- overlines ----------------------------------------------------------------------------
    ("overline_six", "XX?XXX", "overline", (4, 7)),
    ("overline_seven", "XXX?XXX", "overline", (4, 7)),
    ("overline_next_to_five", ".?XXXXX.", "overline", (3, 7)),
    ("overline_gap_next_to_four", ".XXXX?X.", "overline", (3, 7)),
    ("five_other_end_of_that_four", ".?XXXX.X.", "five", (3, 7)),
    ("overline_between_whites", "OXXX?XXO", "overline", (3, 7)),
    ("overline_beats_double_four", """
        X..X...
        .X.X...
        ..XX...
        .XX?XXX
        .......
     """, "overline", (3, 3)),
    # --- five wins whatever else the move makes -----------------------------------------------
    ("five_next_to_white", "OXXXX?O", "five", (3, 7)),
    ("five_with_overline", """
        .....X..
        .....X..
        .....X..
        .XXXX?..
        .....X..
        .....X..
        ........
     """, "five", (3, 3)),
    ("five_with_double_four", """
        ........
        ........
        ..X..X..
        ...X.X..
        ....XX..
        .XXXX?..
        ........
        ........
     """, "five", (3, 3)),
    ("five_with_double_three", """
        .......
        .X.X...
        ..XX...
        .XX?...
        ...X...
        ...X...
        .......
     """, "five", (3, 3)),
    # --- nothing at all ------------------------------------------------------------------------
    ("lone_stones", """
        .X.
        .?.
        X.X
     """, "ok", (6, 6)),
]


@pytest.mark.parametrize("name,window,expected,at", CASES, ids=[c[0] for c in CASES])
def test_table(name: str, window: str, expected: str, at: Tuple[int, int]) -> None:
    board, m = position(window, at)
    assert m is not None
    before = bytes(board._buf), board.hash
    assert renju.classify(board, m) == expected
    assert renju.is_forbidden(board, m) == (expected in renju.FORBIDDEN_KINDS)
    assert (m in renju.forbidden_points(board)) == (expected in renju.FORBIDDEN_KINDS)
    assert renju.forbidden_mask(board)[m] == (expected in renju.FORBIDDEN_KINDS)
    assert (bytes(board._buf), board.hash) == before     # trial stones were all removed
    assert brute_classify(grid_of(board), *board.xy(m)) == expected


def test_table_is_large_and_varied() -> None:
    assert len(CASES) >= 40
    assert len({c[0] for c in CASES}) == len(CASES)
    kinds = {c[2] for c in CASES}
    assert kinds == {"ok", "five", "overline", "double_four", "double_three"}


def test_square_corner_reasoning() -> None:
    """The two-level recursion behind ``rec_square_corner``, checked step by step.

    The corner A makes three threes: across (completion points L and B), down (T and C) and on the
    diagonal (completion points Q and D). Q (diagonally outside A) makes one straight four only, so
    the diagonal is a three. L makes two straight fours (across and on the diagonal through the
    square), so it is forbidden; whether the row is a three then hinges on B. With A down, B makes a
    four across and could make threes down and on its anti-diagonal; its column's completion points
    are both double-fours, so B has at most one three, is allowed, and the row is a three too.
    """
    board, a = position(WINDOW_SQUARE_A, (4, 4))
    before = bytes(board._buf), board.hash, board.side_to_move
    w = SIZE
    ox, oy = 4, 4

    def sq(x: int, y: int) -> int:
        return (oy + y) * w + ox + x

    assert a == sq(1, 1)
    # before A is played, the outside point L is an allowed four-three
    assert renju.classify(board, sq(0, 1)) == "ok"
    with black_stone(board, a):
        assert renju.classify(board, sq(0, 0)) == "ok"             # Q: one four
        assert renju.classify(board, sq(0, 1)) == "double_four"    # L
        assert renju.classify(board, sq(1, 0)) == "double_four"    # T
        assert renju.classify(board, sq(4, 1)) == "ok"             # B
        with black_stone(board, sq(4, 1)):
            assert renju.classify(board, sq(4, 0)) == "double_four"
            assert renju.classify(board, sq(4, 4)) == "double_four"
    assert (bytes(board._buf), board.hash, board.side_to_move) == before
    assert renju.classify(board, a) == "double_three"


@contextlib.contextmanager
def black_stone(board: Board, m: int) -> Iterator[None]:
    """Put a black stone on ``m`` for the duration (through push/pop, whoever is to move)."""
    passed = board.side_to_move != BLACK
    if passed:
        board.pass_turn()
    board.push(m)
    try:
        yield
    finally:
        board.pop()
        if passed:
            board.pass_turn()


WINDOW_SQUARE_A = CASES[[c[0] for c in CASES].index("rec_square_corner")][1]


def test_recursion_matters_in_table() -> None:
    """The recursive cases come in pairs that differ by one stone far from the tested point."""
    by_name = {c[0]: c for c in CASES}
    for blocked, free in (("rec_completion_double_four", "rec_completion_four_three"),
                          ("rec_completion_overline", "rec_completion_five"),
                          ("rec_completion_double_three", "rec_completion_double_three_removed")):
        assert by_name[blocked][2] == "ok" and by_name[free][2] == "double_three"
        assert brute_classify_naive_window(by_name[blocked]) == "double_three"


def brute_classify_naive_window(case: Tuple[str, str, str, Tuple[int, int]]) -> str:
    board, m = position(case[1], case[3])
    return brute_classify(grid_of(board), *board.xy(m), recursive=False)


# ---------------------------------------------------------------------------------------------
# White, other rules, API details
# ---------------------------------------------------------------------------------------------
def test_white_is_never_restricted() -> None:
    board, m = position(CASES[0][1])
    assert renju.is_forbidden(board, m)
    assert not renju.is_forbidden(board, m, color=WHITE)
    board.pass_turn()                                   # White to move
    assert board.side_to_move == WHITE
    assert renju.forbidden_points(board) == []
    assert not renju.forbidden_mask(board).any()
    assert m in renju.forbidden_points(board, color=BLACK)   # still Black's forbidden point


@pytest.mark.parametrize("window,expected", [
    ("""
        .......
        ...O...
        ...O...
        .OO?...
        .......
     """, "ok"),                     # White's double-three shape: nothing for Black
    ("OO?OOO", "ok"),                # White's overline shape
    ("""
        ...O...
        ...O...
        ...O...
        OOO?...
        .......
     """, "ok"),                     # White's double-four shape
])
def test_white_shapes(window: str, expected: str) -> None:
    board, m = position(window)
    assert renju.classify(board, m) == expected
    assert not renju.is_forbidden(board, m, color=WHITE)
    assert not renju.is_forbidden(board, m)
    board.pass_turn()
    assert renju.forbidden_points(board) == []


def test_only_renju_boards_have_forbidden_points() -> None:
    window = CASES[0][1]
    renju_board, m = position(window)
    for rule in (Rule.FREESTYLE, Rule.STANDARD, Rule.CARO):
        board, m2 = position(window, rule=rule)
        assert m2 == m
        assert renju.forbidden_points(board) == []
        assert not renju.forbidden_mask(board).any()
        assert renju.classify(board, m) == "double_three"    # the shape itself is still there
    assert renju.forbidden_points(renju_board) == [m]


def test_occupied_and_off_board_squares_raise() -> None:
    board, m = position(CASES[0][1])
    stone = board.moves[0]
    with pytest.raises(ValueError):
        renju.classify(board, stone)
    with pytest.raises(ValueError):
        renju.is_forbidden(board, stone)
    with pytest.raises(ValueError):
        renju.classify(board, board.size)
    with pytest.raises(ValueError):
        renju.is_forbidden(board, -1)


def test_walls_block_like_the_edge() -> None:
    board, m = position("""
        .......
        ...X...
        ...X...
        .XX?...
        .......
     """)
    assert renju.classify(board, m) == "double_three"
    x, y = board.xy(m)
    board.put_wall((y + 1) * SIZE + x)      # right under the column: .XXX# is no three
    assert renju.classify(board, m) == "ok"


def test_empty_board_and_mask_shape() -> None:
    board = Board(15, 15, Rule.RENJU)
    assert renju.forbidden_points(board) == []
    mask = renju.forbidden_mask(board)
    assert mask.shape == (225,) and mask.dtype == np.bool_ and not mask.any()
    board = Board(9, 7, Rule.RENJU)
    assert renju.forbidden_mask(board).shape == (63,)


def test_forbidden_points_agree_with_is_forbidden_on_the_table() -> None:
    for name, window, _, at in CASES:
        board, _ = position(window, at)
        pts = renju.forbidden_points(board, color=BLACK)
        assert pts == sorted(pts)
        want = [m for m in range(board.size)
                if board[m] == EMPTY and renju.is_forbidden(board, m)]
        assert pts == want, name
        mask = renju.forbidden_mask(board, color=BLACK)
        assert np.flatnonzero(mask).tolist() == want, name


def test_full_board_example() -> None:
    """A whole board with several forbidden points of each kind, compared square by square."""
    board = Board.from_ascii("""
        ...............
        ...............
        ..........X....
        ..........X.X..
        ..........X..X.
        ..........O...X
        ...............
        ......XXX.XX...
        ...............
        ...............
        ...............
        ..XX.........X.
        ..X.X......X.X.
        ...........X...
        ...............
    """, rule=Rule.RENJU, to_move=BLACK)
    got = {board.move_name(m): renju.classify(board, m) for m in renju.forbidden_points(board)}
    # k2: the column k3-k5 (white below) and the diagonal o6-n5-m4 (l3 empty) both become fours;
    # j8 joins g8-i8 and k8-l8 into six; c11 makes two threes, down the column (c12, c13) and on
    # the diagonal (d12, e13). Nothing else: e.g. l3 makes only the one diagonal four.
    assert got == {"k2": "double_four", "j8": "overline", "c11": "double_three"}


# ---------------------------------------------------------------------------------------------
# Slow, simple reference implementation on a list-of-lists grid (independent of renju.py)
# ---------------------------------------------------------------------------------------------
DIRECTIONS = ((1, 0), (0, 1), (1, 1), (1, -1))


def grid_of(board: Board) -> List[List[int]]:
    return [[int(v) for v in row] for row in board.cells]


def _at(g: List[List[int]], x: int, y: int) -> int:
    if 0 <= y < len(g) and 0 <= x < len(g[0]):
        return g[y][x]
    return WALL


def _whole_line(g: List[List[int]], x: int, y: int, d: Tuple[int, int]) -> List[Tuple[int, int]]:
    dx, dy = d
    while _at(g, x - dx, y - dy) != WALL:
        x, y = x - dx, y - dy
    pts = []
    while _at(g, x, y) != WALL:
        pts.append((x, y))
        x, y = x + dx, y + dy
    return pts


def _black_run(g: List[List[int]], x: int, y: int, d: Tuple[int, int]) -> set:
    dx, dy = d
    run = {(x, y)}
    for s in (1, -1):
        a, b = x + s * dx, y + s * dy
        while _at(g, a, b) == BLACK:
            run.add((a, b))
            a, b = a + s * dx, b + s * dy
    return run


def _fours(g: List[List[int]], x: int, y: int, d: Tuple[int, int]) -> dict:
    """{four stones (frozenset) containing (x, y): [empty points that make them exactly five]}."""
    out: dict = {}
    for a, b in _whole_line(g, x, y, d):
        if g[b][a] != EMPTY:
            continue
        g[b][a] = BLACK
        run = _black_run(g, a, b, d)
        g[b][a] = EMPTY
        if len(run) == 5 and (x, y) in run:
            out.setdefault(frozenset(run - {(a, b)}), []).append((a, b))
    return out


def brute_classify(g: List[List[int]], x: int, y: int, recursive: bool = True) -> str:
    """Renju classification of a black stone on the empty (x, y), straight from the definitions:
    five / overline from the runs; fours = distinct four-stone sets that one more stone makes
    exactly five; a three = the line can get a straight four (a four-stone set with two completion
    points) containing (x, y) by one more stone, on a point that is itself not forbidden."""
    assert g[y][x] == EMPTY
    g[y][x] = BLACK
    try:
        runs = [len(_black_run(g, x, y, d)) for d in DIRECTIONS]
        if 5 in runs:
            return "five"
        if max(runs) >= 6:
            return "overline"
        if sum(len(_fours(g, x, y, d)) for d in DIRECTIONS) >= 2:
            return "double_four"
        threes = 0
        for d in DIRECTIONS:
            for a, b in _whole_line(g, x, y, d):
                if g[b][a] != EMPTY:
                    continue
                g[b][a] = BLACK
                straight = any(len(pts) >= 2 and (a, b) in stones
                               for stones, pts in _fours(g, x, y, d).items())
                g[b][a] = EMPTY
                if straight and (not recursive
                                 or brute_classify(g, a, b) in ("ok", "five")):
                    threes += 1
                    break
        return "double_three" if threes >= 2 else "ok"
    finally:
        g[y][x] = EMPTY


def _random_position(rng: random.Random, size: int) -> Board:
    """Clustered random stones (about two black for one white), Black to move."""
    c = size // 2
    taken = {(c, c)}
    blacks = {(c, c)}
    n = rng.randint(12, 40)
    while len(taken) < n:
        x0, y0 = rng.choice(sorted(taken))
        x, y = x0 + rng.randint(-2, 2), y0 + rng.randint(-2, 2)
        if 0 <= x < size and 0 <= y < size and (x, y) not in taken:
            taken.add((x, y))
            if rng.random() < 0.65:
                blacks.add((x, y))
    board = Board(size, size, Rule.RENJU)
    board.set_position([y * size + x for x, y in blacks],
                       [y * size + x for x, y in taken - blacks], to_move=BLACK)
    return board


def test_brute_force_agreement_on_random_positions() -> None:
    rng = random.Random(20240611)
    seen = {k: 0 for k in ("ok", "five", "overline", "double_four", "double_three")}
    recursion_mattered = 0
    for _ in range(40):
        board = _random_position(rng, 11)
        g = grid_of(board)
        forbidden = set(renju.forbidden_points(board))
        for m in range(board.size):
            if board[m] != EMPTY:
                continue
            x, y = board.xy(m)
            want = brute_classify(g, x, y)
            assert renju.classify(board, m) == want, (board.to_ascii(), board.move_name(m))
            assert (m in forbidden) == (want in renju.FORBIDDEN_KINDS)
            seen[want] += 1
            if want != "double_three" and brute_classify(g, x, y, False) == "double_three":
                recursion_mattered += 1
    assert all(seen.values()), seen
    assert recursion_mattered > 0
