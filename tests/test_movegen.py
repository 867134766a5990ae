"""gomoku_ai.movegen: legality for the side to move (occupied, off-board and wall squares; renju
forbidden points for Black only), checked against brute-force filters on seeded random positions
of every rule; near-stone squares against a brute-force Chebyshev scan; and a detector that raises
must surface, never read as "legal"."""
from __future__ import annotations

import logging
import random
from typing import List, Tuple

import numpy as np
import pytest

from gomoku_ai import movegen, renju
from gomoku_ai.board import Board
from gomoku_ai.movegen import ForbiddenKind
from gomoku_ai.rules import BLACK, EMPTY, WHITE, Rule

SIZE = 15


def position(window: str, rule: Rule = Rule.RENJU, to_move: int = BLACK,
             at: Tuple[int, int] = (4, 4)) -> Tuple[Board, int]:
    """A 15x15 board holding the ASCII ``window`` (X, O, #, ., and ``?`` for the square asked
    about, left empty) with its top-left corner at ``at``; returns the board and the ``?`` square."""
    rows = [r.replace(" ", "") for r in window.strip("\n").splitlines() if r.strip()]
    grid = [["."] * SIZE for _ in range(SIZE)]
    query = None
    for y, r in enumerate(rows):
        for x, ch in enumerate(r):
            if ch == "?":
                query = (at[1] + y) * SIZE + at[0] + x
                ch = "."
            grid[at[1] + y][at[0] + x] = ch
    assert query is not None, "the window has no ?"
    board = Board.from_ascii("\n".join("".join(r) for r in grid), rule=rule, to_move=to_move)
    return board, query


DOUBLE_THREE = """
    .......
    ...X...
    ...X...
    .XX?...
    .......
    .......
"""  # XX? across and down: two open threes
DOUBLE_FOUR = """
    ........
    ....X...
    ....X...
    ....X...
    .XXX?...
    ........
"""  # XXX? across and down: two fours (no five)
OVERLINE = """
    ..........
    .XX?XXX...
    ..........
"""  # six in a row
FIVE_AND_DOUBLE_FOUR = """
    ........
    ....X...
    ....X...
    ....X...
    XXXX?...
    ........
"""  # exactly five across: a win, never forbidden, whatever the column makes

FORBIDDEN = [(DOUBLE_THREE, ForbiddenKind.DOUBLE_THREE), (DOUBLE_FOUR, ForbiddenKind.DOUBLE_FOUR),
             (OVERLINE, ForbiddenKind.OVERLINE)]


# ---------------------------------------------------------------------------------------------
# squares that are not on the board or not empty
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("rule", list(Rule))
def test_occupied_off_board_and_wall_squares_are_illegal(rule: Rule) -> None:
    b = Board(9, 7, rule)
    b.play(b.index(4, 3))                       # black stone
    b.play(b.index(5, 3))                       # white stone
    wall = b.index(0, 0)
    b.put_wall(wall)
    for m in (b.index(4, 3), b.index(5, 3), wall, -1, b.size, b.size + 10):
        assert not movegen.is_legal(b, m), m
    for m in (b.index(4, 3), wall, -1, b.size):
        with pytest.raises(ValueError):
            movegen.is_forbidden(b, m)
        with pytest.raises(ValueError):
            movegen.forbidden_kind(b, m)
    assert movegen.is_legal(b, b.index(8, 6)) and movegen.is_legal(b, b.index(1, 0))
    legal = movegen.legal_moves(b)
    assert len(legal) == b.size - 3
    assert not {b.index(4, 3), b.index(5, 3), wall} & set(legal)
    mask = movegen.legal_mask(b)
    assert mask.shape == (b.size,) and mask.dtype == bool
    assert np.flatnonzero(mask).tolist() == legal


# ---------------------------------------------------------------------------------------------
# renju forbidden points: only for Black to move, only under renju
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("window,kind", FORBIDDEN, ids=[k.value for _, k in FORBIDDEN])
def test_forbidden_point_illegal_for_black_to_move_in_renju(window: str, kind: ForbiddenKind) -> None:
    b, m = position(window)
    assert b[m] == EMPTY
    assert renju.classify(b, m) == kind.value      # the position is what the test says it is
    assert not movegen.is_legal(b, m)
    assert movegen.is_forbidden(b, m)
    assert movegen.forbidden_kind(b, m) is kind
    assert m in movegen.forbidden_points(b)
    assert m not in movegen.legal_moves(b)
    assert not movegen.legal_mask(b)[m]
    assert movegen.without_forbidden(b, [m]) == []
    assert movegen.is_forbidden(b, m, BLACK) and not movegen.is_forbidden(b, m, WHITE)


@pytest.mark.parametrize("window,kind", FORBIDDEN, ids=[k.value for _, k in FORBIDDEN])
def test_same_point_legal_for_white_and_in_freestyle(window: str, kind: ForbiddenKind) -> None:
    white, m = position(window, to_move=WHITE)
    assert white.side_to_move == WHITE
    assert movegen.is_legal(white, m) and not movegen.is_forbidden(white, m)
    assert movegen.forbidden_kind(white, m) is None
    assert movegen.forbidden_points(white) == []
    assert m in movegen.legal_moves(white) and movegen.legal_mask(white)[m]
    assert movegen.is_forbidden(white, m, BLACK)     # still Black's forbidden point
    for rule in (Rule.FREESTYLE, Rule.STANDARD, Rule.CARO):
        b, m2 = position(window, rule=rule)
        assert b.side_to_move == BLACK and m2 == m
        assert movegen.is_legal(b, m) and not movegen.is_forbidden(b, m)
        assert movegen.forbidden_kind(b, m) is None and movegen.forbidden_points(b) == []
        assert movegen.legal_moves(b) == b.empty_squares()


def test_a_renju_five_is_never_forbidden() -> None:
    b, m = position(FIVE_AND_DOUBLE_FOUR)
    assert renju.classify(b, m) == renju.FIVE
    assert movegen.is_legal(b, m) and movegen.forbidden_kind(b, m) is None


def test_forbidden_kind_labels() -> None:
    assert [k.label for k in ForbiddenKind] == ["overline", "double-four", "double-three"]
    assert ForbiddenKind.DOUBLE_THREE == "double_three"       # renju's own names


def test_without_forbidden_keeps_the_callers_order() -> None:
    b, m = position(DOUBLE_THREE)
    near = movegen.near_empty(b, 2)
    assert m in near
    moves = list(reversed(near))
    out = movegen.without_forbidden(b, moves)
    assert out == [q for q in moves if q != m]
    assert out is not moves
    free, _ = position(DOUBLE_THREE, rule=Rule.FREESTYLE)
    assert movegen.without_forbidden(free, moves) == moves


# ---------------------------------------------------------------------------------------------
# legal_moves / legal_mask / is_legal against a brute-force filter
# ---------------------------------------------------------------------------------------------
def random_position(rng: random.Random, rule: Rule, w: int, h: int) -> Board:
    """Stones of both colours packed near the centre (renju shapes appear often), a few walls, and
    a random side to move."""
    b = Board(w, h, rule)
    cx, cy = w // 2, h // 2
    box = [y * w + x for y in range(max(0, cy - 4), min(h, cy + 5))
           for x in range(max(0, cx - 4), min(w, cx + 5))]
    stones = rng.sample(box, rng.randrange(0, min(len(box), 34)))
    split = rng.randrange(len(stones) + 1)
    blacks, whites = stones[:split], stones[split:]
    free = [m for m in range(w * h) if m not in set(stones)]
    for m in rng.sample(free, rng.randrange(0, 4)):
        b.put_wall(m)
    b.set_position(blacks, whites, rng.choice((BLACK, WHITE)))
    return b


def brute_legal(b: Board) -> List[int]:
    restricted = b.rule is Rule.RENJU and b.side_to_move == BLACK
    return [m for m in range(b.size)
            if b[m] == EMPTY and not (restricted and renju.is_forbidden(b, m, BLACK))]


@pytest.mark.parametrize("rule", list(Rule))
def test_legal_moves_equal_a_brute_force_filter(rule: Rule) -> None:
    rng = random.Random(f"movegen-{rule.value}")
    restricted_with_forbidden = 0
    for i in range(120):
        w, h = rng.choice(((15, 15), (11, 9), (20, 20)))
        b = random_position(rng, rule, w, h)
        want = brute_legal(b)
        assert movegen.legal_moves(b) == want, b.to_ascii()
        assert np.flatnonzero(movegen.legal_mask(b)).tolist() == want
        assert [m for m in range(-2, b.size + 2) if movegen.is_legal(b, m)] == want
        empty = b.empty_squares()
        assert movegen.forbidden_points(b) == sorted(set(empty) - set(want))
        if len(want) < len(empty):
            restricted_with_forbidden += 1
    if rule is Rule.RENJU:
        assert restricted_with_forbidden >= 5     # the positions did exercise the detector
    else:
        assert restricted_with_forbidden == 0


# ---------------------------------------------------------------------------------------------
# squares near the stones
# ---------------------------------------------------------------------------------------------
def brute_near(b: Board, r: int) -> np.ndarray:
    out = np.zeros((b.height, b.width), bool)
    stones = [b.xy(m) for m in range(b.size) if b[m] in (BLACK, WHITE)]
    for y in range(b.height):
        for x in range(b.width):
            out[y, x] = any(max(abs(x - sx), abs(y - sy)) <= r for sx, sy in stones)
    return out


@pytest.mark.parametrize("radius", [1, 2, 3])
def test_near_empty_against_brute_force(radius: int) -> None:
    rng = random.Random(radius)
    for _ in range(40):
        b = random_position(rng, rng.choice(list(Rule)), *rng.choice(((15, 15), (9, 6), (6, 9))))
        near = brute_near(b, radius)
        got = movegen.near_mask(b, radius)
        assert got.shape == (b.height, b.width) and got.dtype == bool
        assert np.array_equal(got, near)
        want = [m for m in range(b.size) if b[m] == EMPTY and near[m // b.width, m % b.width]]
        assert movegen.near_empty(b, radius) == want


def test_near_empty_radius_semantics_on_a_single_stone() -> None:
    b = Board(9, 9)
    b.play(b.index(0, 4))                       # on the left edge
    b.put_wall(b.index(1, 4))                   # walls are neither stones nor empty squares
    assert movegen.near_empty(b, 1) == [b.index(x, y) for y in (3, 4, 5) for x in (0, 1)
                                        if (x, y) not in ((0, 4), (1, 4))]
    assert len(movegen.near_empty(b, 2)) == 3 * 5 - 2
    wall_only = Board(9, 9)
    wall_only.put_wall(40)
    assert movegen.near_empty(wall_only, 3) == [] and not movegen.near_mask(wall_only, 3).any()


@pytest.mark.parametrize("radius", [0, -1, -5])
def test_invalid_radius_raises(radius: int) -> None:
    b = Board(9)
    b.play(40)
    with pytest.raises(ValueError, match="radius"):
        movegen.near_empty(b, radius)
    with pytest.raises(ValueError, match="radius"):
        movegen.near_mask(b, radius)


def test_non_integer_radius_raises() -> None:
    with pytest.raises(TypeError):
        movegen.near_empty(Board(9), 1.5)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# a broken detector surfaces
# ---------------------------------------------------------------------------------------------
class DetectorBroke(RuntimeError):
    pass


@pytest.fixture
def broken_detector(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: object) -> int:
        raise DetectorBroke("renju detector failed")
    monkeypatch.setattr(renju, "_status", boom)


def test_a_raising_detector_propagates(broken_detector: None) -> None:
    b, m = position(DOUBLE_THREE)
    ok = b.index(0, 0)                          # far from every stone: the prefilter skips it
    for call in (lambda: movegen.is_legal(b, m), lambda: movegen.is_legal(b, ok),
                 lambda: movegen.is_forbidden(b, m), lambda: movegen.forbidden_kind(b, m),
                 lambda: movegen.legal_moves(b), lambda: movegen.legal_mask(b),
                 lambda: movegen.forbidden_points(b), lambda: movegen.without_forbidden(b, [m])):
        with pytest.raises(DetectorBroke):
            call()


def test_fast_paths_never_call_the_detector(broken_detector: None) -> None:
    white, m = position(DOUBLE_THREE, to_move=WHITE)
    free, _ = position(DOUBLE_THREE, rule=Rule.FREESTYLE)
    for b in (white, free):
        assert movegen.is_legal(b, m) and m in movegen.legal_moves(b)
        assert movegen.forbidden_points(b) == [] and movegen.forbidden_kind(b, m) is None


def test_brain_fallback_and_legality_never_read_a_broken_detector_as_legal(
        broken_detector: None, caplog: pytest.LogCaptureFixture) -> None:
    from protocol import fallback, think
    b, m = position(DOUBLE_THREE)
    with pytest.raises(DetectorBroke):
        fallback.quick_move(b)
    with caplog.at_level(logging.ERROR, logger=think.log.name):
        assert think.legal(b, m) is False
    assert any("legality check" in r.getMessage() for r in caplog.records)
