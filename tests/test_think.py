"""protocol.think: the think job (stop requests, grace, hard deadline), the answer with its fallback, the
deadline derivations; the root candidates a search reports (SearchInfo); the player selection of
gomoku_ai.shipped. No assertion here depends on how fast the machine is: deadlines are either fixed clock
values given to the job, or already past when the job looks."""
from __future__ import annotations

import threading
from typing import List, Optional

import numpy as np
import pytest

from gomoku_ai import shipped, timeman
from gomoku_ai.board import Board
from gomoku_ai.evaluator import HeuristicEvaluator
from gomoku_ai.player import Candidate, Limit, Player, SearchInfo
from gomoku_ai.rules import Rule
from gomoku_ai.testplayers import SleepyPlayer, StuckPlayer
from protocol import think as T


class Gate:
    """A player that reports ``first``, then waits until ``release`` is set (it ignores ``stop``), then
    returns ``result``."""

    def __init__(self, first: Optional[SearchInfo], result: Optional[SearchInfo]) -> None:
        self.first = first
        self.result = result
        self.release = threading.Event()
        self.entered = threading.Event()
        self.memory_limit_bytes: Optional[int] = None
        self.thread_num = 1
        self.limits: List[Limit] = []

    def new_game(self) -> None:
        pass

    def think(self, board, limit, stop=None, on_info=None):
        self.limits.append(limit)
        if on_info is not None and self.first is not None:
            on_info(self.first)
        self.entered.set()
        assert self.release.wait(30)
        return self.result


# ------------------------------------------------------------------------------------------ the job
def test_job_returns_what_the_player_returned_and_keeps_the_best_so_far():
    p = Gate(SearchInfo(move=3), SearchInfo(move=4))
    p.release.set()
    seen: List[SearchInfo] = []
    done: List[T.ThinkJob] = []
    job = T.ThinkJob(seen.append, on_done=done.append)
    job.start(p, Board(15), Limit(visits=5))
    assert job.wait() is True
    assert job.done and job.info.move == 4 and job.best.move == 3 and job.error is None
    assert [i.move for i in seen] == [3] and done == [job]
    assert p.limits == [Limit(visits=5)]


def test_job_without_on_info_gives_the_player_none():
    class Probe(Gate):
        def think(self, board, limit, stop=None, on_info=None):
            self.got = on_info
            return SearchInfo(move=0)

    p = Probe(None, None)
    job = T.ThinkJob()
    job.start(p, Board(15), Limit())
    assert job.wait() and p.got is None and job.best is None
    p2 = Probe(None, None)
    job = T.ThinkJob(keep_best=True)
    job.start(p2, Board(15), Limit())
    assert job.wait() and p2.got is not None


def test_job_records_what_the_player_raised():
    class Raiser(Gate):
        def think(self, board, limit, stop=None, on_info=None):
            raise ValueError("broken")

    job = T.ThinkJob()
    job.start(Raiser(None, None), Board(15), Limit())
    assert job.wait()
    assert isinstance(job.error, ValueError) and "broken" in job.traceback and job.info is None


def test_stop_requests_keep_the_earliest_end_of_grace():
    job = T.ThinkJob()
    assert job.wake_at() is None and not job.overran(1e12)
    job.request_stop(100.0, 120.0, "first")
    assert job.stop.is_set() and (job.stop_at, job.grace) == (100.0, 120.0)
    job.request_stop(110.0, 40.0, "ends earlier")       # 150 < 220: taken
    assert (job.stop_at, job.grace) == (110.0, 40.0)
    job.request_stop(120.0, 120.0, "ends later")        # 240 > 150: ignored
    assert (job.stop_at, job.grace) == (110.0, 40.0)
    assert job.wake_at() == 150.0
    assert not job.overran(149.9) and job.overran(150.0)


def test_hard_deadline_fires_a_stop_with_its_own_grace():
    job = T.ThinkJob()
    job.set_hard_deadline(1000.0, 40.0)
    assert job.wake_at() == 1000.0
    assert not job.overran(999.0) and not job.stop.is_set()
    assert not job.overran(1000.0)                      # fired now: the player has 40 ms more
    assert job.stop.is_set() and job.hard_fired and job.wake_at() == 1040.0
    assert job.overran(1040.0)


def test_hard_deadline_is_only_brought_forward():
    job = T.ThinkJob()
    job.set_hard_deadline(None, timeman.WATCHDOG_GRACE_MS)
    assert job.bring_hard_deadline_forward(500.0) and job.hard_at == 500.0
    assert not job.bring_hard_deadline_forward(600.0) and job.hard_at == 500.0
    assert job.bring_hard_deadline_forward(400.0) and job.hard_at == 400.0
    job.overran(400.0)                                  # fires, with the grace given at the start
    assert job.grace == timeman.WATCHDOG_GRACE_MS
    assert not job.bring_hard_deadline_forward(100.0) and job.hard_at == 400.0


def test_a_player_that_does_not_return_overruns_and_is_left_running():
    p = Gate(SearchInfo(move=7), SearchInfo(move=8))
    finished = threading.Event()
    job = T.ThinkJob(keep_best=True, on_done=lambda j: finished.set())
    job.start(p, Board(15), Limit())
    assert p.entered.wait(30)
    job.request_stop(T.now_ms() - 1000.0, 0.0, "long ago")  # grace already over
    assert job.wait() is False
    assert job.stop.is_set() and not job.done and job.best.move == 7
    assert job.wait() is False                              # still overrun
    p.release.set()
    assert finished.wait(30) and job.done and job.info.move == 8  # the late result, for whoever wants it


def test_think_with_deadline_lets_a_stuck_player_lose_on_time():
    p = Gate(None, SearchInfo(move=1))
    job = T.think_with_deadline(p, Board(15), Limit(), deadline_ms=0.0)
    assert not job.done and job.stop.is_set() and job.hard_fired
    p.release.set()
    p2 = Gate(None, SearchInfo(move=2))
    p2.release.set()
    job = T.think_with_deadline(p2, Board(15), Limit(), deadline_ms=None)
    assert job.done and job.info.move == 2


def test_wait_polls_until_the_player_returns():
    p = Gate(None, SearchInfo(move=5))
    polls: List[int] = []

    def on_poll() -> None:
        polls.append(1)
        if len(polls) == 3:
            p.release.set()

    job = T.ThinkJob()
    job.start(p, Board(15), Limit())
    assert job.wait(poll_s=0.001, on_poll=on_poll) is True
    assert len(polls) >= 3 and job.info.move == 5


def test_the_board_given_to_think_with_deadline_is_a_copy():
    class Pusher(Gate):
        def think(self, board, limit, stop=None, on_info=None):
            board.push(0)
            return SearchInfo(move=1)

    b = Board(15)
    job = T.think_with_deadline(Pusher(None, None), b, Limit())
    assert job.done and not b.moves


# ------------------------------------------------------------------------------------------ the answer
def _board(moves: List[int], rule: Rule = Rule.FREESTYLE) -> Board:
    b = Board(15, 15, rule)
    for m in moves:
        b.push(m)
    return b


def test_the_players_legal_move_is_the_answer():
    b = _board([112])
    info = SearchInfo(move=113)
    ans = T.choose_answer(b, info, None)
    assert ans == T.Answer(113, info) and ans.source == "player"


@pytest.mark.parametrize("bad", [112, -1, 225, "x", None, True, 3.0])
def test_an_illegal_move_gets_the_best_move_so_far(bad):
    b = _board([112])
    ans = T.choose_answer(b, SearchInfo(move=bad), SearchInfo(move=0))
    assert ans == T.Answer(0, None) and ans.source == "fallback"
    ans = T.choose_answer(b, None, None)   # no best move either: the quick move
    assert ans is not None and ans.info is None and b.is_empty(ans.move)


def test_numpy_integer_moves_are_accepted():
    b = _board([112])
    assert T.choose_answer(b, SearchInfo(move=np.int64(5)), None).move == 5  # type: ignore[arg-type]


def test_a_win_or_a_forced_block_beats_the_best_move_so_far():
    # Black has four in a row on row 7 from the edge (105..108): 109 makes five
    b = _board([105, 120, 106, 121, 107, 122, 108, 200])   # Black to move: the win
    assert T.fallback_move(b, SearchInfo(move=0)) == 109
    b = _board([105, 120, 106, 121, 107, 200, 108])         # White to move: the block
    assert T.fallback_move(b, SearchInfo(move=0)) == 109
    assert T.fallback_move(b, None) == 109


def test_no_square_left_means_no_answer():
    b = Board(5, 5)
    for m in range(25):
        b.put_wall(m)
    assert T.choose_answer(b, None, None) is None


# ------------------------------------------------------------------------------------------ deadlines
def test_move_deadlines_count_the_empty_squares_without_walls():
    b = Board(5, 5)
    for m in range(20):
        b.put_wall(m)
    b.push(20)
    got = timeman.move_deadlines(b, None, 10_000, 10_000, used_ms=5.0, increment_ms=100)
    assert got == timeman.compute_deadlines(None, 10_000, 10_000, move_number=1, empty_squares=4, used_ms=5.0,
                                            increment_ms=100)
    assert got != timeman.compute_deadlines(None, 10_000, 10_000, move_number=1, empty_squares=24,
                                            used_ms=5.0, increment_ms=100)
    assert timeman.move_deadlines(b, 0, None, None) == timeman.INSTANT
    assert timeman.move_deadlines(b, None, 0, timeman.UNLIMITED, other_limit=True) == timeman.Deadlines(None, None)


def test_movetime_deadlines_stay_within_the_turn_and_the_clock():
    assert timeman.movetime_deadlines(500.0, 0, None) == timeman.Deadlines(500.0, 500.0)
    turn = 1000 - timeman.margin_ms(1000)
    assert timeman.movetime_deadlines(2000.0, 1000, None) == timeman.Deadlines(turn, turn)
    cap = (2000 - timeman.margin_ms(2000)) * timeman.HARD_SHARE_OF_LEFT
    assert timeman.movetime_deadlines(2000.0, 0, 2000) == timeman.Deadlines(cap, cap)
    assert timeman.movetime_deadlines(2000.0, 0, -50) == timeman.Deadlines(0.0, 0.0)
    assert timeman.untimed_deadlines() == timeman.Deadlines(4500.0, 4500.0)


# ------------------------------------------------------------------------------------------ SearchInfo candidates
def test_search_reports_the_root_candidates():
    b = _board([112, 113, 127])
    p = Player(HeuristicEvaluator(), seed=3, use_vcf=False)
    reports: List[SearchInfo] = []
    info = p.think(b, Limit(visits=300), None, reports.append)
    assert info.source == "mcts" and reports[-1] is info
    root = p.mcts.root
    assert info.candidates == [Candidate(*c) for c in p.mcts.top_moves(len(root.moves))]
    assert len(info.candidates) == len(root.moves) > 5
    assert info.root_visits == int(root.N.sum()) == sum(c.visits for c in info.candidates)
    assert [c.visits for c in info.candidates] == sorted((c.visits for c in info.candidates), reverse=True)
    assert np.array_equal(info.visit_map(b.size), p.mcts.root_visits(b.size))


def test_answers_without_a_tree_have_no_candidates():
    b = _board([112, 0, 113, 1, 114, 2, 115, 3])   # Black to move has four: the five needs no tree
    info = Player(HeuristicEvaluator()).think(b, Limit(visits=50))
    assert info.source == "win1" and info.candidates == [] and info.root_visits == 0
    won = SearchInfo(move=9, proven=1)
    assert won.visit_map(25)[9] == 1.0 and won.visit_map(25).sum() == 1.0


# ------------------------------------------------------------------------------------------ shipped: players
def test_make_player_selects_the_diagnostic_players(monkeypatch):
    monkeypatch.delenv("PYGOMOKU_PLAYER", raising=False)
    assert isinstance(shipped.make_player("sleepy"), SleepyPlayer)
    assert isinstance(shipped.make_player(" Stuck "), StuckPlayer)
    monkeypatch.setenv("PYGOMOKU_PLAYER", "sleepy")
    assert isinstance(shipped.make_player(), SleepyPlayer)
    assert shipped.DefaultPlayers().key(Rule.RENJU, 15, 15) == ("sleepy", Rule.RENJU)
    assert shipped.DefaultPlayers("", model="heuristic").key(Rule.RENJU, 15, 15) == (Rule.RENJU, "heuristic")
    p = shipped.make_player("default", model="heuristic")
    assert isinstance(p, Player) and shipped.player_source(p) == "heuristic"


def test_factory_key_and_make_with_call_both_factory_forms():
    calls = []

    def by_rule(rule):
        calls.append((rule,))
        return "r"

    def by_size(rule, width, height):
        calls.append((rule, width, height))
        return "s"

    assert not shipped.takes_size(by_rule) and shipped.takes_size(by_size)
    assert shipped.factory_key(by_rule, Rule.CARO, 8, 9, False) == Rule.CARO
    assert shipped.factory_key(by_size, Rule.CARO, 8, 9, True) == (Rule.CARO, 8, 9)
    assert shipped.make_with(by_rule, Rule.CARO, 8, 9, False) == "r"
    assert shipped.make_with(by_size, Rule.CARO, 8, 9, True) == "s"
    assert calls == [(Rule.CARO,), (Rule.CARO, 8, 9)]
    f = shipped.PlayerFactory("heuristic")
    assert shipped.factory_key(f, Rule.STANDARD, 15, 15, True) == f.key(Rule.STANDARD, 15, 15)
