"""Gating: colour-swapped pairs on shared openings, pentanomial counts, SPRT decisions (accept a
clearly stronger candidate, reject a clearly weaker one), the max-games cap, opening books with
symmetries, journal resume, and network players from model files."""
from __future__ import annotations

import json
from pathlib import Path

from gomoku_ai.board import Board
from gomoku_ai.evaluator import HeuristicEvaluator
from gomoku_ai.net import export_model, fold_batchnorm, random_model
from gomoku_ai.rules import BLACK, WHITE
from gomoku_ai.training.gating import (RandomPlayer, SearchPlayer, gate_openings, play_match_game,
                                       run_gate)

SMALL = dict(width=7, n=4)


class Recorder:
    """Wraps a player and records, per game, the colour it played and the opening it started from."""

    def __init__(self, inner, name: str) -> None:
        self.inner, self.name = inner, name
        self.games = []
        self.calls = 0

    def new_game(self) -> None:
        self.inner.new_game()
        self.games.append(None)

    def choose(self, board: Board) -> int:
        self.calls += 1
        if self.games[-1] is None:
            self.games[-1] = board.side_to_move
        return self.inner.choose(board)


def strong() -> SearchPlayer:
    return SearchPlayer(HeuristicEvaluator(), visits=16, name="heuristic")


def test_strong_candidate_is_accepted_in_colour_swapped_pairs() -> None:
    cand, best = Recorder(strong(), "strong"), Recorder(RandomPlayer(seed=1), "random")
    r = run_gate(cand, best, max_games=40, elo1=200, seed=3, **SMALL)
    assert r["decision"] == "accept"
    assert r["llr"] >= r["bounds"][1] and r["bounds"] == [-2.9444, 2.9444]
    assert r["games"] == 2 * r["pairs"] and r["games"] < 40
    assert sum(r["pentanomial"]) == r["pairs"]
    assert r["wins"] + r["draws"] + r["losses"] == r["games"]
    assert r["ci95"][0] <= r["elo"] <= r["ci95"][1]
    # each pair: the candidate is Black in the first game and White in the second
    assert cand.games == [BLACK, WHITE] * r["pairs"]
    assert best.games == [WHITE, BLACK] * r["pairs"]
    assert r["candidate_black_score"] >= 0 and r["candidate_white_score"] >= 0


def test_weak_candidate_is_rejected() -> None:
    r = run_gate(RandomPlayer(seed=2), strong(), max_games=40, elo1=200, seed=3, **SMALL)
    assert r["decision"] == "reject" and r["llr"] <= r["bounds"][0]
    assert r["pentanomial"][0] > 0 and r["elo"] < 0


def test_cap_gives_inconclusive_not_a_win_rate() -> None:
    r = run_gate(strong(), strong(), max_games=4, seed=1, **SMALL)
    assert r["decision"] == "inconclusive" and r["games"] == 4 and r["pairs"] == 2
    assert set(r) >= {"pentanomial", "elo", "ci95", "llr", "bounds", "wins", "draws", "losses"}


def test_fixed_length_match_without_sprt_plays_every_game() -> None:
    """sprt=False (the learning curve's fixed matches): all max_games are played even where the
    SPRT would have stopped; the decision then reports the final LLR."""
    r = run_gate(strong(), RandomPlayer(seed=1), max_games=24, elo1=200, seed=3, sprt=False,
                 **SMALL)
    assert r["games"] == 24 and r["pairs"] == 12
    assert r["decision"] == "accept" and r["score"] > 0.8


def test_engine_players_for_the_curve() -> None:
    """The curve's opponents are the engine's Player (tactics:N / pure:N in the tournament)."""
    from gomoku_ai.training.curve import make_engine_player, select_iterations
    assert select_iterations([1, 2, 3, 4, 5, 6, 7], every=3) == [3, 6, 7]
    assert select_iterations([1, 2, 3], only=[2, 9]) == [2]
    r = run_gate(make_engine_player("heuristic", 16), make_engine_player("pure", 16, seed=2),
                 max_games=4, sprt=False, player_factory=lambda spec, role: spec, **SMALL)
    assert r["games"] == 4 and r["wins"] + r["draws"] + r["losses"] == 4


def test_pairs_share_the_opening_and_swap_colours() -> None:
    board = Board(7, 7, n=4)
    ops, reused = gate_openings(None, board, 5, seed=1)
    assert len(set(ops)) == 5 and not reused
    a, b = RandomPlayer(seed=5), RandomPlayer(seed=6)
    w, end, moves = play_match_game(a, b, board, ops[0])
    assert tuple(moves[:len(ops[0])]) == ops[0] and end in ("five", "board_full")


def test_opening_file_with_symmetries(tmp_path: Path) -> None:
    f = tmp_path / "ops.txt"
    f.write_text("0,0, 1,0, 1,2\n0,0, 1,1\n")
    board = Board(7, 7, n=4)
    ops, reused = gate_openings(f, board, 10, seed=2)
    assert not reused and len(set(ops)) == 10
    ops, reused = gate_openings(f, board, 40, seed=2)    # 8 + 4 distinct images exist
    assert reused and len(set(ops)) == 12
    ops1, _ = gate_openings(f, board, 4, seed=2, symmetries=False)
    assert len(set(ops1)) == 2


def test_journal_resume_replays_nothing(tmp_path: Path) -> None:
    j = tmp_path / "pairs.jsonl"
    r1 = run_gate(strong(), RandomPlayer(seed=1), max_games=40, elo1=200, seed=4, journal=j,
                  **SMALL)
    cand = Recorder(strong(), "strong")
    r2 = run_gate(cand, RandomPlayer(seed=1), max_games=40, elo1=200, seed=4, journal=j, **SMALL)
    assert cand.calls == 0
    for k in ("decision", "games", "pentanomial", "llr"):
        assert r1[k] == r2[k]
    assert len(j.read_text().splitlines()) == r1["pairs"]


def test_network_models_from_files(tmp_path: Path) -> None:
    bases = []
    for s in (1, 2):
        w = fold_batchnorm(random_model(blocks=2, channels=8, head_channels=8, value_fc=16, seed=s))
        export_model(w, {"name": f"net{s}", "board_sizes": [[7, 7]]}, tmp_path / f"net{s}")
        bases.append(tmp_path / f"net{s}")
    r = run_gate(bases[0], bases[1], max_games=4, visits=8, **SMALL)
    assert r["games"] == 4 and r["decision"] in ("accept", "reject", "inconclusive")
    assert r["candidate"].endswith("net1") and r["best"].endswith("net2")
    json.dumps(r)   # serialisable


def _nets(tmp_path: Path):
    bases = []
    for s in (1, 2):
        w = fold_batchnorm(random_model(blocks=2, channels=8, head_channels=8, value_fc=16, seed=s))
        export_model(w, {"name": f"net{s}", "board_sizes": [[7, 7]]}, tmp_path / f"net{s}")
        bases.append(tmp_path / f"net{s}")
    return bases


SAME = ("decision", "games", "pairs", "wins", "draws", "losses", "pentanomial", "llr", "elo",
        "ends", "black_wins", "white_wins", "candidate", "best", "candidate_version",
        "best_version")


def test_gate_on_a_pool_decides_as_the_sequential_gate(tmp_path: Path) -> None:
    """Pairs in parallel on two workers; the SPRT takes them in pair order, so decision, counts
    and LLR equal the sequential gate's, and pairs finished beyond the decision are discarded."""
    from gomoku_ai.training.gating import gate_spec
    from gomoku_ai.workers import make_pool, model_version
    kw = dict(max_games=40, elo1=200, seed=3, visits=16, **SMALL)
    seq = run_gate("heuristic", "uniform", **kw)
    assert seq["decision"] == "accept" and seq["pairs"] < 20
    net1, net2 = _nets(tmp_path)
    kw_nets = dict(max_games=12, visits=8, seed=2, **SMALL)
    seq_nets = run_gate(net1, net2, **kw_nets)
    with make_pool(gate_spec(), 2) as pool:
        par = run_gate("heuristic", "uniform", pool=pool, **kw)
        j = tmp_path / "pairs.jsonl"
        par_nets = run_gate(net1, net2, pool=pool, journal=j, **kw_nets)
        again = run_gate(net1, net2, pool=pool, journal=j, **kw_nets)   # resume: all journaled
    for k in SAME:
        assert par[k] == seq[k], k
        assert par_nets[k] == seq_nets[k], k
        assert again[k] == seq_nets[k], k
    assert par["where"]["backend"] == "local" and par["lost_pairs"] == []
    assert 0 <= par["discarded_pairs"] <= 20 - par["pairs"]   # finished beyond the decision
    assert seq_nets["candidate_version"] == model_version(net1) != seq_nets["best_version"]
    lines = [json.loads(x) for x in j.read_text().splitlines()]
    assert sorted(x["pair"] for x in lines) == list(range(6))
    assert all(x["candidate_version"] == model_version(net1) and
               x["best_version"] == model_version(net2) and x["worker"].startswith("local-")
               for x in lines)
    # a journal of other networks is not taken: the swapped gate replays every pair
    swapped = run_gate(net2, net1, journal=j, **kw_nets)
    assert swapped["candidate_version"] == model_version(net2)
    assert len(j.read_text().splitlines()) == 6 + swapped["pairs"]


def test_gate_on_a_pool_refuses_player_objects() -> None:
    import pytest
    with pytest.raises(ValueError, match="model path"):
        run_gate(strong(), "uniform", workers=2, max_games=4, **SMALL)
    with pytest.raises(ValueError, match="at least one worker"):
        run_gate("heuristic", "uniform", backend="ray", max_games=4, **SMALL)
