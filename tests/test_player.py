"""Tactics through the real player (MCTS + root tactics) with a uniform evaluator: the engine must
win when it can, block what must be blocked, find and refute VCFs, respect renju and exact-five.

Positions come from the tactics suite (``FIVE_CASES``, ``PUZZLES``, ``DEFENCE_CASES``) plus the
ones below; each runs through :meth:`Player.think`, the same call the brain makes.
"""
from __future__ import annotations

import random
import threading
import time

import pytest

from gomoku_ai import tactics as T
from gomoku_ai.board import Board
from gomoku_ai.evaluator import UniformEvaluator
from gomoku_ai.player import Limit, NoMoveError, Player
from gomoku_ai.rules import BLACK, WHITE, Rule
from test_tactics import (DEFENCE_CASES, FIVE_CASES, PUZZLES, brute_defences,  # noqa: F401
                          check_forced_win, pos)

F, S, R, C = Rule.FREESTYLE, Rule.STANDARD, Rule.RENJU, Rule.CARO
LIMIT = Limit(visits=400)


def uniform_player() -> Player:
    return Player(UniformEvaluator(), seed=1)


@pytest.mark.parametrize("case", FIVE_CASES, ids=[f"five{i}" for i in range(len(FIVE_CASES))])
def test_completes_five(case) -> None:
    text, rule, side, marker = case
    b, marks = pos(text, rule, side)
    info = uniform_player().think(b, LIMIT)
    assert b.is_empty(info.move)
    if marker is None:
        assert not b.makes_five(info.move, side) or info.source != "win1"
        return
    wins = sorted(m for ch in marker for m in marks[ch])
    assert info.move in wins and info.source == "win1"


BLOCKS = [
    # (fragment, rule, side to move, the square that must be blocked)
    ("OXXXX*", F, WHITE),
    ("XX*XX", F, WHITE),
    ("XXX*X", F, WHITE),
    ("X*XXX", F, WHITE),
    ("XOOOO*", F, BLACK),
    ("O*OOO", S, BLACK),
    ("OXXXX*", R, WHITE),
    ("OOO*O", R, BLACK),
    ("OXXXX*", C, WHITE),
    ("""
     *....
     .X...
     ..X..
     ...X.
     ....X
     """, F, WHITE),
]


@pytest.mark.parametrize("text,rule,side", BLOCKS)
def test_blocks_a_four(text: str, rule: Rule, side: int) -> None:
    b, marks = pos(text, rule, side)
    info = uniform_player().think(b, LIMIT)
    assert info.move == marks["*"][0]


@pytest.mark.parametrize("name", [p[0] for p in PUZZLES])
def test_wins_by_vcf(name: str) -> None:
    _, rule, side, text, at, fours = next(p for p in PUZZLES if p[0] == name)
    b, _ = pos(text, rule, side, at=at)
    info = uniform_player().think(b, Limit(soft_ms=3000, visits=2000))
    assert info.proven == 1
    if info.source == "vcf":
        assert check_forced_win(b, info.pv) == fours
    else:   # a five-in-one beat the VCF search to it
        assert b.makes_five(info.move, side)


@pytest.mark.parametrize("idx", range(len(DEFENCE_CASES)))
def test_defends_against_vcf(idx: int) -> None:
    text, rule, side, at = DEFENCE_CASES[idx]
    b, _ = pos(text, rule, side, at=at)
    good = set(brute_defences(b))
    info = uniform_player().think(b, LIMIT)
    assert info.move in good, (b.move_name(info.move), sorted(b.move_name(m) for m in good))


@pytest.mark.parametrize("name", [p[0] for p in PUZZLES])
def test_defender_stops_the_puzzle_vcf(name: str) -> None:
    _, rule, side, text, at, _ = next(p for p in PUZZLES if p[0] == name)
    b, _ = pos(text, rule, 3 - side, at=at)
    defences = T.find_vcf_defences(b)
    info = uniform_player().think(b, LIMIT)
    if defences:
        assert info.move in set(defences) | set(T.winning_moves(b))
        b.push(info.move)
        assert T.find_vcf(b) is None or b.winner is not None
        b.pop()


def test_blocks_open_three_when_nothing_better() -> None:
    b, marks = pos("""
        .......
        .*OOO*.
        .......
        ...X...
        """, F, BLACK)
    info = uniform_player().think(b, LIMIT)
    assert info.move in set(T.find_vcf_defences(b))
    assert info.move in marks["*"] or abs(info.move % 15 - 8) <= 3


def test_prefers_own_five_over_blocking() -> None:
    b, marks = pos("""
        OOOO..
        ......
        OXXXX*
        """, F, BLACK)
    info = uniform_player().think(b, LIMIT)
    assert info.move == marks["*"][0]


def test_double_threat_is_recognised_as_lost() -> None:
    b, _ = pos(".OOOO.", F, BLACK)
    info = uniform_player().think(b, LIMIT)
    assert info.value == -1.0 or info.proven == -1
    assert b.is_empty(info.move)


def test_standard_exact_five_is_played_and_six_is_not_feared() -> None:
    b, marks = pos("aXXXX*X", S, BLACK)
    info = uniform_player().think(b, LIMIT)
    assert info.move == marks["a"][0]
    # White need not block a square where Black would only make six
    b, marks = pos("XXX*XX.", S, WHITE)
    assert T.must_block(b) == []


def test_renju_black_never_plays_forbidden() -> None:
    from gomoku_ai.renju import is_forbidden
    rng = random.Random(4)
    player = uniform_player()
    checked = 0
    for game in range(6):
        b = Board(15, rule=R)
        b.play(b.parse("h8"))
        while b.outcome() is None and len(b.moves) < 60:
            if rng.random() < 0.5 or b.side_to_move == WHITE:
                # random moves near the centre build dense shapes full of forbidden points
                cands = [m for m in b.empty_squares() if abs(m % 15 - 7) <= 3 and abs(m // 15 - 7) <= 3]
                if b.side_to_move == BLACK:
                    cands = [m for m in cands if not is_forbidden(b, m)]
                if not cands:
                    break
                b.play(rng.choice(cands))
                continue
            info = player.think(b, Limit(visits=60))
            assert not is_forbidden(b, info.move), b.to_ascii()
            checked += 1
            b.play(info.move)
    assert checked > 20


def test_renju_forbidden_only_block_means_lost() -> None:
    # the test_tactics renju case where Black's only block is forbidden: Black must not play it
    from gomoku_ai.renju import is_forbidden
    for text, rule, side, at in DEFENCE_CASES:
        if rule is R and side == BLACK:
            b, _ = pos(text, rule, side, at=at)
            info = uniform_player().think(b, LIMIT)
            assert not is_forbidden(b, info.move)


def test_answer_at_once_is_still_tactical() -> None:
    b, marks = pos("XX*XX", F, WHITE)
    info = uniform_player().think(b, Limit(soft_ms=0, hard_ms=0))
    assert info.move == marks["*"][0]
    b, marks = pos("OXXXX*", F, BLACK)
    assert uniform_player().think(b, Limit(soft_ms=0)).move == marks["*"][0]


@pytest.mark.parametrize("size,rule", [(15, F), (20, F), (15, R), (19, C), (8, S)])
def test_first_stone_is_the_centre_without_a_search(size: int, rule: Rule) -> None:
    """An empty board gets its centre, (size // 2, size // 2), with no simulation run even with a
    30 s budget."""
    info = uniform_player().think(Board(size, rule=rule), Limit(soft_ms=30_000, hard_ms=30_000))
    assert (info.move, info.source, info.visits) == (Board(size).index(size // 2, size // 2), "centre", 0)


def test_first_stone_avoids_a_walled_centre_and_later_moves_are_searched() -> None:
    b = Board(15)
    b.put_wall(b.index(7, 7))
    info = uniform_player().think(b, Limit(visits=50))
    assert info.source == "mcts" and b.is_empty(info.move)
    b = Board(15)
    b.play(b.index(0, 0))
    info = uniform_player().think(b, Limit(visits=50))
    assert info.source == "mcts" and info.visits > 0


def test_stop_event_returns_promptly() -> None:
    b = Board(15)
    b.play(b.parse("h8"))
    stop = threading.Event()
    player = uniform_player()
    threading.Timer(0.2, stop.set).start()
    t = time.perf_counter()
    info = player.think(b, Limit(soft_ms=30_000), stop=stop)
    assert time.perf_counter() - t < 2.0
    assert b.is_empty(info.move)


def test_no_move_on_finished_or_full_board() -> None:
    b = Board(15)
    for m in [0, 15, 1, 16, 2, 17, 3, 18, 4]:
        b.play(m)
    with pytest.raises(NoMoveError):
        uniform_player().think(b, LIMIT)
    full = Board(5, 5)
    pattern = ["XXOOX", "OOXXO", "XXOOX", "OOXXO", "XXOOX"]
    full.set_position([y * 5 + x for y in range(5) for x in range(5) if pattern[y][x] == "X"],
                      [y * 5 + x for y in range(5) for x in range(5) if pattern[y][x] == "O"])
    with pytest.raises(NoMoveError):
        uniform_player().think(full, LIMIT)


def test_board_is_left_unchanged() -> None:
    b, _ = pos(".OOO..\n..X...\n.XX...", F, BLACK)
    before = (b.hash, list(b.moves), b.side_to_move, bytes(b._buf))
    uniform_player().think(b, Limit(visits=300))
    assert (b.hash, list(b.moves), b.side_to_move, bytes(b._buf)) == before


def test_stop_already_set_still_returns_a_move() -> None:
    b = Board(15)
    b.play(b.parse("h8"))
    stop = threading.Event()
    stop.set()
    info = uniform_player().think(b, Limit(visits=100), stop=stop)
    assert b.is_empty(info.move)


def test_search_overrides_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """PYGOMOKU_MCTS sets MCTSConfig fields of the player's search (A/B matches), each converted to
    its field's type; the other fields keep their values; a bad item is a ConfigError naming it."""
    from gomoku_ai.checks import ConfigError
    from gomoku_ai.mcts import MCTSConfig
    base = MCTSConfig()
    monkeypatch.setenv("PYGOMOKU_MCTS", " c_puct=1.2, three_replies=0,radius=3 ")
    cfg = Player(UniformEvaluator()).mcts.cfg
    assert (cfg.c_puct, cfg.three_replies, cfg.radius) == (1.2, False, 3)
    assert cfg.fpu_reduction == base.fpu_reduction and cfg.max_nodes == base.max_nodes
    for bad, named in (("radius=2.5", "radius='2.5' is not of type int"), ("c_puct", "'c_puct': expected"),
                       ("pipeline=yes", "pipeline='yes'"), ("nodes=3", "'nodes=3': expected"),
                       ("c_puct=1,c_puct=2", "c_puct is given twice"), ("virtual_loss=0", "virtual_loss")):
        monkeypatch.setenv("PYGOMOKU_MCTS", bad)
        with pytest.raises(ConfigError, match=named):
            Player(UniformEvaluator())
