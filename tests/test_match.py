"""The referee (gomoku_ai/match.py): a five, a draw by a full board, a draw by adjudication at the move
limit, illegal and renju-forbidden moves, time losses (turn limit, game clock, move timeout), a player that
cannot start or whose search raises (a crash forfeit), and the Termination that external-engine failures
carry. Players here are scripted: they report their own move times, so no assertion depends on a clock."""
from __future__ import annotations

import logging

import pytest

from gomoku_ai.evaluator import Evaluator
from gomoku_ai.match import (GameConfig, GamePlayer, MoveResult, PlayerCrashed, PlayerError, TimeControl,
                             adjudicate, play_game)
from gomoku_ai.players import resolve_player
from gomoku_ai.rules import BLACK, WHITE, Rule, Termination


class Scripted(GamePlayer):
    """Plays its moves in order, each reported as taking ``elapsed_ms`` (``elapsed_ms`` may be a list)."""

    def __init__(self, name, moves, elapsed_ms=1.0, fail_start=None):
        self.name, self.moves, self.elapsed, self.fail_start = name, list(moves), elapsed_ms, fail_start
        self.seeds, self.ended, self.abandoned, self.seen = [], 0, 0, []

    def new_game(self, cfg, tc, seed):
        if self.fail_start is not None:
            raise self.fail_start
        self.seeds.append(seed)
        self.i = 0

    def move(self, board, moves, time_left_ms, budget_ms, tc):
        self.seen.append((list(moves), time_left_ms, budget_ms))
        x, y = self.moves[self.i]
        el = self.elapsed[self.i] if isinstance(self.elapsed, list) else self.elapsed
        self.i += 1
        return MoveResult(x, y, el, [f"move {self.i}"])

    def end_game(self):
        self.ended += 1

    def abandon(self):
        self.abandoned += 1


CFG = GameConfig(width=9, height=9, tolerance_ms=100.0, move_timeout_ms=1000.0)


def test_a_five_wins():
    black = Scripted("b", [(0, 0), (1, 0), (2, 0), (3, 0), (4, 0)])
    white = Scripted("w", [(0, 1), (1, 1), (2, 1), (3, 1)])
    g = play_game((black, white), CFG, seed=40)
    assert (g.winner, g.termination, g.reason, g.offender) == (BLACK, Termination.FIVE, "five in a row", None)
    assert g.result == "1-0" and len(g.moves) == 9 and g.moves[-1] == (4, 0)
    assert g.times_ms == [1] * 9 and g.comments[0] == "move 1"
    assert black.seeds == [40] and white.seeds == [41]            # White gets seed + 1
    assert black.ended == white.ended == 1 and black.abandoned == white.abandoned == 0
    assert white.seen[0][0] == [(0, 0)]                           # the moves so far, as (x, y)


def test_a_full_board_is_a_draw():
    # a 5x5 board filled without five in a row anywhere (X = Black, O = White)
    rows = ["XXOOX", "OOXXO", "XXOOX", "OOXXO", "XOXOX"]
    xs = [(x, y) for y, r in enumerate(rows) for x, c in enumerate(r) if c == "X"]
    os_ = [(x, y) for y, r in enumerate(rows) for x, c in enumerate(r) if c == "O"]
    g = play_game((Scripted("b", xs), Scripted("w", os_)), GameConfig(5, 5))
    assert (g.winner, g.termination, g.reason) == (None, Termination.BOARD_FULL, "the board is full")
    assert g.result == "1/2-1/2" and len(g.moves) == 25


def test_the_move_limit_is_a_draw_by_adjudication_counting_the_opening():
    black = Scripted("b", [(0, 0), (2, 0), (4, 0)])
    white = Scripted("w", [(0, 8), (2, 8), (4, 8)])
    g = play_game((black, white), GameConfig(9, 9, max_plies=5), opening=[(4, 4), (5, 5)])
    assert (g.winner, g.termination, g.reason) == (None, Termination.ADJUDICATION, "draw after 5 plies")
    assert len(g.moves) == 5 and g.opening_plies == 2 and g.times_ms[:2] == [None, None]


def test_an_occupied_or_off_board_square_loses_and_is_not_played():
    for bad, why in (((0, 0), "is occupied"), ((9, 3), "off the 9x9 board")):
        black = Scripted("b", [(0, 0), (1, 1)])
        white = Scripted("w", [bad])
        g = play_game((black, white), CFG)
        assert (g.winner, g.termination, g.offender, g.rejected) == (BLACK, Termination.ILLEGAL, WHITE, bad)
        assert why in g.reason and g.moves == [(0, 0)] and white.abandoned == 1


def test_a_renju_forbidden_move_loses_for_black():
    opening = [(0, 7), (0, 0), (1, 7), (2, 0), (2, 7), (4, 0), (4, 7), (6, 0), (5, 7), (8, 0)]
    cfg = GameConfig(15, 15, Rule.RENJU)
    g = play_game((Scripted("b", [(3, 7)]), Scripted("w", [])), cfg, opening=opening)
    assert (g.winner, g.termination, g.offender, g.rejected) == (WHITE, Termination.FORBIDDEN, BLACK, (3, 7))
    assert "overline" in g.reason and len(g.moves) == len(opening)
    # the same six in a row under freestyle is a five
    g = play_game((Scripted("b", [(3, 7)]), Scripted("w", [])), GameConfig(15, 15), opening=opening)
    assert (g.winner, g.termination) == (BLACK, Termination.FIVE)


def test_time_losses():
    tc = TimeControl(turn_ms=500)
    # within the tolerance: played (a late move on a per-move limit is not charged anywhere)
    ok = play_game((Scripted("b", [(0, 0), (1, 0)], elapsed_ms=590.0), Scripted("w", [(0, 5)])),
                   GameConfig(9, 9, max_plies=3, tolerance_ms=100.0), (tc, tc))
    assert ok.termination is Termination.ADJUDICATION
    late = play_game((Scripted("b", [(0, 0)], elapsed_ms=601.0), Scripted("w", [])),
                     GameConfig(9, 9, tolerance_ms=100.0), (tc, tc))
    assert (late.winner, late.termination, late.offender) == (WHITE, Termination.TIME, BLACK)
    assert "turn limit 500 ms" in late.reason and late.moves == []
    # a game clock: 1000 ms + 100 ms increment; the second move drives it below -tolerance
    clock = TimeControl(match_ms=1000, increment_ms=100)
    black = Scripted("b", [(0, 0), (1, 0)], elapsed_ms=[700.0, 700.0])
    g = play_game((black, Scripted("w", [(0, 5)])), GameConfig(9, 9, tolerance_ms=150.0), (clock, clock))
    assert (g.termination, g.offender) == (Termination.TIME, BLACK) and "game clock exceeded by 200" in g.reason
    assert [s[1:] for s in black.seen] == [(1100, 1100.0), (500, 500.0)]   # time left, budget (ms)
    assert g.clock_ms[BLACK] == -200.0 and g.clock_ms[WHITE] == 1099.0
    # no time control: the move timeout, unless there is none (fixed-visit matches)
    slow = [(0, 0)]
    g = play_game((Scripted("b", slow, elapsed_ms=1200.0), Scripted("w", [])), CFG)
    assert g.termination is Termination.TIME and "move timeout" in g.reason
    g = play_game((Scripted("b", [(0, 0), (1, 0)], elapsed_ms=1e7), Scripted("w", [(0, 5)])),
                  GameConfig(9, 9, max_plies=3, move_timeout_ms=None))
    assert g.termination is Termination.ADJUDICATION


class Exploding(Evaluator):
    name = "exploding"

    def prepare(self, board):
        raise RuntimeError("boom")

    def evaluate(self, items, shape):
        raise RuntimeError("boom")


def test_a_search_that_raises_is_a_crash_forfeit():
    p = resolve_player("tactics:8", evaluator=Exploding(), name="exploding")
    g = play_game((Scripted("b", [(4, 4)]), p), CFG)
    assert (g.winner, g.termination, g.offender) == (BLACK, Termination.CRASH, WHITE)
    assert g.reason.startswith("search raised RuntimeError: boom")


def test_a_player_that_cannot_start_loses_and_the_other_is_not_started():
    white = Scripted("w", [])
    g = play_game((Scripted("b", [], fail_start=PlayerCrashed("no such engine", "b")), white), CFG)
    assert (g.winner, g.termination, g.offender, g.reason) == (WHITE, Termination.CRASH, BLACK, "no such engine")
    assert white.seeds == [] and white.ended == 1
    # a model that cannot be loaded when the game starts is the same forfeit
    from gomoku_ai.players import EnginePlayer, InProcessSpec, PlayerKind
    lazy = EnginePlayer(InProcessSpec(PlayerKind.MODEL, "model:/no/such/net", model="/no/such/net"))
    g = play_game((lazy, Scripted("w", [])), CFG)
    assert g.termination is Termination.CRASH and "cannot create the player" in g.reason


def test_a_bug_in_an_adapter_is_not_a_forfeit(caplog):
    class Buggy(Scripted):
        def move(self, *a):
            raise KeyError("bug")

        def end_game(self):
            raise RuntimeError("cleanup failed")

    with pytest.raises(KeyError):
        play_game((Buggy("b", []), Scripted("w", [])), CFG)
    # a failing end_game is logged, the result stands
    black = Buggy("b", [(0, 0), (1, 0), (2, 0), (3, 0), (4, 0)])
    black.move = Scripted.move.__get__(black)
    with caplog.at_level(logging.ERROR, logger="gomoku.match"):
        g = play_game((black, Scripted("w", [(0, 1), (1, 1), (2, 1), (3, 1)])), CFG)
    assert g.termination is Termination.FIVE and "end_game failed" in caplog.text


def test_bad_openings_are_refused():
    with pytest.raises(ValueError, match="occupied"):
        play_game((Scripted("b", []), Scripted("w", [])), CFG, opening=[(1, 1), (1, 1)])
    with pytest.raises(ValueError, match="already decides"):
        play_game((Scripted("b", []), Scripted("w", [])), GameConfig(9, 9, n=4),
                  opening=[(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1), (3, 0)])


def test_adjudicate_is_the_one_end_of_game_rule():
    cfg = GameConfig(9, 9)
    b = cfg.board()
    assert adjudicate(b) is None and adjudicate(b, max_plies=0) == (None, Termination.ADJUDICATION,
                                                                     "draw after 0 plies")
    for m in (0, 9, 1, 10, 2, 11, 3, 12, 4):
        b.push(m)
    assert adjudicate(b, max_plies=5) == (BLACK, Termination.FIVE, "five in a row")   # a five comes first


def test_engine_failures_carry_their_termination():
    from protocol.manager import EngineCrashed, EngineError, EngineProtocolError, EngineTimeout
    for cls, term in ((EngineTimeout, Termination.TIME), (EngineCrashed, Termination.CRASH),
                      (EngineProtocolError, Termination.PROTOCOL), (EngineError, Termination.CRASH)):
        e = cls("why", "eng")
        assert isinstance(e, PlayerError) and e.termination is term
        assert (e.reason, e.engine, e.player, str(e)) == ("why", "eng", "eng", "eng: why")


def test_an_engine_failure_is_scored_by_its_termination():
    from protocol.manager import EngineProtocolError

    class Garbage(Scripted):
        def move(self, *a):
            raise EngineProtocolError("sent 'hello'", self.name)

    g = play_game((Scripted("b", [(4, 4)]), Garbage("w", [])), CFG)
    assert (g.winner, g.termination, g.offender, g.reason) == (BLACK, Termination.PROTOCOL, WHITE, "sent 'hello'")
