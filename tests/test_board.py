"""Board: geometry, move stack, Zobrist hash and the win check around the last move, checked against
a brute-force full-board reference on thousands of seeded random positions."""
from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gomoku_ai.board import Board, BoardSizeError, IllegalMoveError, parse_move
from gomoku_ai.rules import BLACK, EMPTY, WHITE, Outcome, Rule, Termination, rule_from_gomocup

DIRS = ((1, 0), (0, 1), (1, 1), (1, -1))


def brute_force_wins(grid: np.ndarray, x: int, y: int, rule: Rule, n: int = 5) -> bool:
    """Reference: does the stone at (x, y) complete a winning line? Walks the whole line."""
    h, w = grid.shape
    c = int(grid[y, x])
    for dx, dy in DIRS:
        # walk back to the start of the run, then forward counting
        sx, sy = x, y
        while 0 <= sx - dx < w and 0 <= sy - dy < h and grid[sy - dy, sx - dx] == c:
            sx, sy = sx - dx, sy - dy
        length, ex, ey = 0, sx, sy
        while 0 <= ex < w and 0 <= ey < h and grid[ey, ex] == c:
            length += 1
            ex, ey = ex + dx, ey + dy
        before = grid[sy - dy, sx - dx] if (0 <= sx - dx < w and 0 <= sy - dy < h) else None
        after = grid[ey, ex] if (0 <= ex < w and 0 <= ey < h) else None
        if length < n:
            continue
        if rule is Rule.FREESTYLE:
            return True
        if rule is Rule.STANDARD or (rule is Rule.RENJU and c == BLACK):
            if length == n:
                return True
        elif rule is Rule.RENJU:
            return True
        else:
            o = 3 - c
            if not (before == o and after == o):
                return True
    return False


@pytest.mark.parametrize("rule", list(Rule))
@pytest.mark.parametrize("seed", range(8))
def test_win_check_matches_brute_force(rule: Rule, seed: int) -> None:
    rng = random.Random(seed * 31 + hash(rule.value) % 1000)
    for game in range(40):
        w, h = rng.choice([(15, 15), (20, 20), (7, 9), (12, 6), (5, 5)])
        b = Board(w, h, rule)
        order = list(range(w * h))
        rng.shuffle(order)
        for m in order[: rng.randint(5, w * h)]:
            won = b.push(m)
            x, y = b.xy(m)
            assert won == brute_force_wins(b.cells, x, y, rule), (rule, b.to_ascii(), x, y)
            if won:
                assert b.winner == 3 - b.side_to_move
                line = b.outcome().line
                assert m in line and len(line) >= 5
                break


@pytest.mark.parametrize("n", [4, 5])
def test_n_in_a_row_small_board(n: int) -> None:
    b = Board(6, 6, n=n)
    for m in [0, 6, 1, 7, 2, 8]:
        assert not b.push(m)
    assert b.push(3) == (n == 4)


@pytest.mark.parametrize("dx,dy", DIRS)
@pytest.mark.parametrize("corner", [(0, 0), (14, 0), (0, 14), (14, 14), (7, 7), (3, 11)])
def test_five_in_every_direction_and_corner(dx: int, dy: int, corner: tuple) -> None:
    # a line of five that starts (or ends) at the given square, if it fits on the board
    for sign in (1, -1):
        pts = [(corner[0] + sign * dx * i, corner[1] + sign * dy * i) for i in range(5)]
        if not all(0 <= x < 15 and 0 <= y < 15 for x, y in pts):
            continue
        b = Board(15)
        others = [m for m in range(225) if b.xy(m) not in pts and
                  all(abs(b.xy(m)[0] - x) + abs(b.xy(m)[1] - y) > 3 for x, y in pts)]
        random.Random(1).shuffle(others)
        # play the five's stones last-to-first, ending in the middle of the line
        order = pts[:2] + pts[3:] + [pts[2]]
        for i, (x, y) in enumerate(order):
            assert not b.winner
            won = b.push(b.index(x, y))
            if i < 4:
                assert not won
                wm = next(m for m in others if b.is_empty(m))
                others.remove(wm)
                assert not b.push(wm)
        assert won and b.winner == BLACK
        assert sorted(b.outcome().line) == sorted(b.index(x, y) for x, y in pts)


def _line_board(rule: Rule, row: str, **kw) -> Board:
    rows = ["." * len(row)] * 3 + [row] + ["." * len(row)] * 3
    return Board.from_ascii("\n".join(rows), rule=rule, **kw)


@pytest.mark.parametrize("rule,black_wins,white_wins", [
    (Rule.FREESTYLE, True, True),
    (Rule.STANDARD, False, False),
    (Rule.RENJU, False, True),
    (Rule.CARO, True, True),
])
def test_overline_under_each_rule(rule: Rule, black_wins: bool, white_wins: bool) -> None:
    for color, expected in ((BLACK, black_wins), (WHITE, white_wins)):
        s = "X" if color == BLACK else "O"
        b = _line_board(rule, f"..{s*3}.{s*2}....", to_move=color)
        m = b.index(5, 3)
        assert b.makes_five(m, color) == expected, (rule, color)
        # exactly five is a win under every rule
        b2 = _line_board(rule, f"...{s*2}.{s*2}....", to_move=color)
        assert b2.makes_five(b2.index(5, 3), color)


def test_caro_blocked_five() -> None:
    b = _line_board(Rule.CARO, "..OXXXX.O...", to_move=BLACK)
    assert not b.makes_five(b.index(7, 3), BLACK)           # O XXXXX O: blocked at both ends
    b = _line_board(Rule.CARO, "..OXXXX..O..", to_move=BLACK)
    assert b.makes_five(b.index(7, 3), BLACK)               # one end open
    b = _line_board(Rule.CARO, "XXXX.O......", to_move=BLACK)
    assert b.makes_five(b.index(4, 3), BLACK)               # the edge is not a block
    b = _line_board(Rule.FREESTYLE, "..OXXXX.O...", to_move=BLACK)
    assert b.makes_five(b.index(7, 3), BLACK)


def test_push_pop_restores_everything() -> None:
    rng = random.Random(7)
    b = Board(20)
    snapshots = []
    for _ in range(150):
        snapshots.append((b.hash, b.cells.copy(), b.side_to_move, len(b.moves)))
        m = rng.choice(b.empty_squares())
        b.push(m)
        if b.winner:
            break
    while snapshots:
        h, cells, side, n = snapshots.pop()
        b.pop()
        assert (b.hash, b.side_to_move, len(b.moves)) == (h, side, n)
        assert np.array_equal(b.cells, cells)
    assert b.hash == 0


def test_hash_is_order_independent_and_deterministic() -> None:
    a = Board.from_moves([0, 1, 2, 3], 15)
    b = Board.from_moves([2, 3, 0, 1], 15)
    c = Board.from_moves([0, 3, 2, 1], 15)
    assert a.hash == b.hash == c.hash
    assert Board.from_moves([0, 1, 2], 15).hash != a.hash
    # fixed seed: a fresh interpreter computes the same hash
    code = "from gomoku_ai.board import Board; print(Board.from_moves([112, 0], 15).hash)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1])
    assert int(out.stdout) == Board.from_moves([112, 0], 15).hash


def test_sizes_and_errors() -> None:
    for w, h in [(5, 5), (32, 32), (20, 15), (6, 30)]:
        b = Board(w, h)
        assert b.cells.shape == (h, w) and b.size == w * h
        assert b.legal_mask().sum() == w * h
    for bad in [(4, 15), (33, 15), (15, 0)]:
        with pytest.raises(BoardSizeError):
            Board(*bad)
    b = Board(15)
    b.play(b.index(7, 7))
    with pytest.raises(IllegalMoveError):
        b.play(b.index(7, 7))
    with pytest.raises(IllegalMoveError):
        b.index(15, 0)
    with pytest.raises(IllegalMoveError):
        b.play(225)


def test_cells_view_tracks_moves_and_walls() -> None:
    b = Board(9, 7)
    b.push(b.index(8, 6))
    b.put_wall(b.index(0, 0))
    assert b.cells[6, 8] == BLACK and b.cells[0, 0] == 3
    assert b.cells.sum() == 4
    assert not b.legal_mask()[b.index(0, 0)]
    assert b.legal_mask().sum() == 61
    b.pop()
    assert b.cells[6, 8] == EMPTY


@pytest.mark.parametrize("text,xy", [("7,7", (7, 7)), (" 0 , 14 ", (0, 14)), ("h8", (7, 7)),
                                     ("A1", (0, 0)), ("o15", (14, 14))])
def test_parse_move(text: str, xy: tuple) -> None:
    assert parse_move(text) == xy


@pytest.mark.parametrize("text", ["", "7", "7,7,1", "h", "hh", "7;7"])
def test_parse_move_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        parse_move(text)


def test_move_names_round_trip() -> None:
    b = Board(20, 15)
    for m in range(b.size):
        assert b.parse(b.move_name(m)) == m
        x, y = b.xy(m)
        assert b.parse(f"{x},{y}") == m


def test_move_names_past_column_z_use_xy() -> None:
    b = Board(32, 5)
    assert b.move_name(b.index(25, 0)) == "z1"
    assert b.move_name(b.index(26, 3)) == "26,3"
    assert b.parse(b.move_name(b.index(31, 4))) == b.index(31, 4)


def test_full_board_is_a_draw() -> None:
    # a 5x5 freestyle board filled without any five: columns in pairs
    b = Board(5, 5)
    pattern = ["XXOOX", "OOXXO", "XXOOX", "OOXXO", "XXOOX"]
    blacks = [y * 5 + x for y in range(5) for x in range(5) if pattern[y][x] == "X"]
    whites = [y * 5 + x for y in range(5) for x in range(5) if pattern[y][x] == "O"]
    b.set_position(blacks, whites)
    assert b.outcome() == Outcome(None, Termination.BOARD_FULL)


def test_from_ascii_side_to_move() -> None:
    b = Board.from_ascii(".....\n.XO..\n..X..\n.....\n.....")
    assert b.side_to_move == WHITE and len(b.moves) == 3
    b = Board.from_ascii(".....\n.XO..\n.....\n.....\n.....")
    assert b.side_to_move == BLACK


@pytest.mark.parametrize("value,yixin,rule", [
    (0, False, Rule.FREESTYLE), (1, False, Rule.STANDARD), (4, False, Rule.RENJU),
    (5, False, Rule.RENJU), (8, False, Rule.CARO), (9, False, Rule.CARO),
    (2, False, Rule.FREESTYLE), (2, True, Rule.RENJU), (3, False, Rule.STANDARD),
])
def test_gomocup_rule_codes(value: int, yixin: bool, rule: Rule) -> None:
    assert rule_from_gomocup(value, yixin) is rule


def test_rule_parse() -> None:
    assert Rule.parse("Renju") is Rule.RENJU
    assert Rule.parse("1") is Rule.STANDARD
    with pytest.raises(ValueError):
        Rule.parse("chess")


def test_push_quiet_is_push_without_the_win_check() -> None:
    """On random non-winning moves, push_quiet leaves the same cells, hash, side to move and move
    list as push, records the move as not winning, and pop undoes it exactly."""
    rng = random.Random(7)
    for size in (15, 20):
        a, b = Board(size), Board(size)
        for _ in range(60):
            m = rng.choice(a.empty_squares())
            if a.makes_five(m, a.side_to_move):
                continue
            before = (b.hash, b.side_to_move, list(b.moves), bytes(b._buf))
            b.push_quiet(m)
            assert a.push(m) is False
            assert (a.hash, a.side_to_move, a.moves, bytes(a._buf)) == \
                (b.hash, b.side_to_move, b.moves, bytes(b._buf))
            assert b.winner is None
            b.pop()
            assert (b.hash, b.side_to_move, list(b.moves), bytes(b._buf)) == before
            b.push_quiet(m)


@pytest.mark.parametrize("w,h,xy", [(15, 15, (7, 7)), (20, 20, (10, 10)), (8, 5, (4, 2)), (5, 6, (2, 3))])
def test_centre_is_width_and_height_halved_down(w: int, h: int, xy: tuple) -> None:
    b = Board(w, h)
    assert b.xy(b.centre) == xy and b.centre == b.index(*xy)
