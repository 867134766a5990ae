"""Tests of gomoku_ai.timeman: deadlines from the Gomocup time controls."""
from __future__ import annotations

import subprocess
import sys
import time

import pytest

from gomoku_ai import timeman as T

_IMPORTED = time.monotonic()


def test_margin_grows_and_is_capped():
    assert T.margin_ms(0) == T.MARGIN_BASE_MS
    assert T.margin_ms(1000) < T.margin_ms(5000) < T.margin_ms(30000)
    assert T.margin_ms(10 ** 9) == T.MARGIN_MAX_MS
    assert T.margin_ms(-5) == T.MARGIN_BASE_MS


def test_timeout_turn_zero_answers_at_once():
    d = T.compute_deadlines(0, 0, T.UNLIMITED)
    assert d == T.INSTANT and d.instant
    assert T.compute_deadlines(0, 100000, 50000).instant


def test_turn_limit_only():
    d = T.compute_deadlines(2000, 0, T.UNLIMITED)
    assert d.soft_ms == d.hard_ms == pytest.approx(2000 - T.margin_ms(2000))
    assert d.hard_ms < 2000 - 50
    # timeout_match 0 means no game clock, even if a finite time_left comes along
    assert T.compute_deadlines(2000, 0, 300) == d


@pytest.mark.parametrize("turn, match, left", [
    (5000, 120000, 120000), (30000, 180000, 180000), (300000, 1000000, 1000000), (None, 60000, 60000),
    (1000, 20000, 5000), (2000, 10000, 300),
])
def test_deadlines_respect_every_limit(turn, match, left):
    for move_number in (0, 10, 50, 150, 220):
        d = T.compute_deadlines(turn, match, left, move_number=move_number, empty_squares=225 - move_number)
        assert d.soft_ms is not None and d.hard_ms is not None
        assert 0 <= d.soft_ms <= d.hard_ms
        if turn is not None:
            assert d.hard_ms <= turn - T.margin_ms(turn) + 1e-9
        assert d.hard_ms <= (left - T.margin_ms(left)) * T.HARD_SHARE_OF_LEFT + 1e-6 or \
            d.hard_ms == d.soft_ms
        assert d.soft_ms <= left - T.margin_ms(left)


def test_game_clock_is_spread_over_the_game():
    early = T.compute_deadlines(None, 180000, 180000, move_number=0, empty_squares=225)
    reserve = T.overhead_reserve_ms(180000, 225)
    assert reserve == pytest.approx(113 * T.MOVE_OVERHEAD_MS)
    assert early.soft_ms == pytest.approx((180000 - T.margin_ms(180000) - reserve)
                                          / (T.EXPECTED_GAME_PLIES / 2))
    late = T.compute_deadlines(None, 180000, 180000, move_number=180, empty_squares=45)
    assert late.soft_ms > early.soft_ms  # fewer moves left to plan for
    # the fastgame: 5 s per move, 120 s per game; the turn cap applies late in the game
    d = T.compute_deadlines(5000, 120000, 120000, move_number=200, empty_squares=25)
    assert d.soft_ms == pytest.approx(5000 - T.margin_ms(5000))


def test_small_time_left_is_respected():
    d = T.compute_deadlines(None, 10000, 300)  # check 21: well under 300 ms
    assert d.hard_ms < 100
    d = T.compute_deadlines(5000, 10000, 300)
    assert d.hard_ms < 100


@pytest.mark.parametrize("left", [-50, 0, 10, 60])
def test_negative_or_tiny_time_left_answers_at_once(left):
    assert T.compute_deadlines(5000, 10000, left).instant
    assert T.compute_deadlines(None, None, left).instant  # a finite time_left without timeout_match counts


def test_used_time_is_subtracted():
    base = T.compute_deadlines(1000, 0, T.UNLIMITED)
    d = T.compute_deadlines(1000, 0, T.UNLIMITED, used_ms=300)
    assert d.hard_ms == pytest.approx(base.hard_ms - 300)
    assert T.compute_deadlines(1000, 0, T.UNLIMITED, used_ms=5000).instant


def test_no_limits_at_all():
    d = T.compute_deadlines(None, None, None)
    assert d.hard_ms == pytest.approx(T.DEFAULT_TURN_MS - T.margin_ms(T.DEFAULT_TURN_MS))
    d = T.compute_deadlines(None, 0, T.UNLIMITED)  # c-gomoku-cli without tc
    assert d.hard_ms == pytest.approx(T.DEFAULT_TURN_MS - T.margin_ms(T.DEFAULT_TURN_MS))
    assert T.compute_deadlines(None, 0, T.UNLIMITED, other_limit=True) == T.Deadlines(None, None)
    assert not T.Deadlines(None, None).instant


def test_match_time_without_time_left():
    assert T.compute_deadlines(None, 60000, None) == T.compute_deadlines(None, 60000, 60000)


def test_huge_values_do_not_break():
    d = T.compute_deadlines(10 ** 18, 0, T.UNLIMITED)
    assert d.hard_ms == pytest.approx(10 ** 18 - T.MARGIN_MAX_MS)
    assert T.compute_deadlines(10 ** 18, 10 ** 18, 10 ** 18).hard_ms > 0


def test_increment_adds_to_the_budget():
    a = T.compute_deadlines(None, 60000, 30000)
    b = T.compute_deadlines(None, 60000, 30000, increment_ms=1000)
    assert b.soft_ms == pytest.approx(a.soft_ms + T.INCREMENT_USE * 1000)


def test_overhead_reserve_is_capped():
    assert T.overhead_reserve_ms(1000, 225) == pytest.approx(300)
    assert T.overhead_reserve_ms(100000, None) == pytest.approx(50 * T.MOVE_OVERHEAD_MS)
    assert T.overhead_reserve_ms(-5, 10) == 0


def test_expected_moves_left():
    assert T.expected_moves_left(0) == T.EXPECTED_GAME_PLIES / 2
    assert T.expected_moves_left(500) == T.MIN_MOVES_LEFT
    assert T.expected_moves_left(0, empty_squares=3) == 2
    assert T.expected_moves_left(0, empty_squares=1) == 1


def test_charge_and_clock_is_limited():
    assert T.charge(1000, 250.4) == 750
    assert T.charge(100, 250) == -150
    assert T.charge(T.UNLIMITED, 5000) == T.UNLIMITED
    assert T.charge(None, 5) is None
    assert T.clock_is_limited(10000, 5000)
    assert T.clock_is_limited(None, 5000)
    assert not T.clock_is_limited(0, 5000)
    assert not T.clock_is_limited(10000, T.UNLIMITED)
    assert not T.clock_is_limited(10000, None)


def test_whole_game_never_overspends():
    """Simulate a game in which every move uses its whole soft budget: the clock never runs out."""
    left, match = 20000, 20000
    for ply in range(0, 224, 2):
        d = T.compute_deadlines(1000, match, left, move_number=ply, empty_squares=225 - ply)
        assert d.hard_ms <= 1000
        left = T.charge(left, d.soft_ms + 5)  # 5 ms of overhead per move
        assert left > 0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_process_age():
    # this process has lived at least as long as this module has been imported (the clock's tick:
    # 10 ms), however long the suite has run so far
    age = T.process_age_ms()
    assert age is not None and age >= (time.monotonic() - _IMPORTED) * 1000 - 20
    a, b = T.process_age_ms(), (time.sleep(0.05), T.process_age_ms())[1]
    assert b is not None and a is not None and b >= a + 30
    # a process just started is young
    out = subprocess.run([sys.executable, "-c", "from gomoku_ai import timeman; print(timeman.process_age_ms())"],
                         capture_output=True, text=True, timeout=60, check=True).stdout
    assert 0 <= float(out) < 60_000


def test_monotonic_ms():
    a = T.monotonic_ms()
    b = T.monotonic_ms()
    assert b >= a
