"""Gating: colour-swapped pairs on shared openings, pentanomial counts, SPRT decisions (accept a
clearly stronger candidate, reject a clearly weaker one), the max-games cap, opening books with
symmetries, journal resume, network players from model files, and the shipped Player on both sides."""
from __future__ import annotations

import json
from pathlib import Path

from gomoku_ai.board import Board
from gomoku_ai.match import GameConfig, GamePlayer, TimeControl
from gomoku_ai.net import export_model, fold_batchnorm, random_model
from gomoku_ai.players import EnginePlayer, resolve_player
from gomoku_ai.rules import BLACK, WHITE, Termination
from gomoku_ai.training.gating import (default_player_factory, gate_game_config, gate_openings,
                                       play_pair, run_gate)

SMALL = dict(width=7, n=4)


class Recorder(GamePlayer):
    """Wraps a player and records, per game, the colour it played and the opening it started from."""

    def __init__(self, inner: GamePlayer, name: str) -> None:
        self.inner, self.name = inner, name
        self.games = []
        self.calls = 0

    def new_game(self, cfg, tc, seed) -> None:
        self.inner.new_game(cfg, tc, seed)
        self.games.append(None)

    def move(self, board, moves, time_left_ms, budget_ms, tc):
        self.calls += 1
        if self.games[-1] is None:
            self.games[-1] = board.side_to_move
        return self.inner.move(board, moves, time_left_ms, budget_ms, tc)

    def end_game(self) -> None:
        self.inner.end_game()


def strong() -> EnginePlayer:
    return resolve_player("heuristic", visits=16, name="heuristic")


def random_player(seed: int) -> EnginePlayer:
    return resolve_player("random", seed=seed)


def test_strong_candidate_is_accepted_in_colour_swapped_pairs() -> None:
    cand, best = Recorder(strong(), "strong"), Recorder(random_player(1), "random")
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
    r = run_gate(random_player(2), strong(), max_games=40, elo1=200, seed=3, **SMALL)
    assert r["decision"] == "reject" and r["llr"] <= r["bounds"][0]
    assert r["pentanomial"][0] > 0 and r["elo"] < 0


def test_cap_gives_inconclusive_not_a_win_rate() -> None:
    r = run_gate(strong(), strong(), max_games=4, seed=1, **SMALL)
    assert r["decision"] == "inconclusive" and r["games"] == 4 and r["pairs"] == 2
    assert set(r) >= {"pentanomial", "elo", "ci95", "llr", "bounds", "wins", "draws", "losses"}


def test_fixed_length_match_without_sprt_plays_every_game() -> None:
    """sprt=False (the learning curve's fixed matches): all max_games are played even where the
    SPRT would have stopped; the decision then reports the final LLR."""
    r = run_gate(strong(), random_player(1), max_games=24, elo1=200, seed=3, sprt=False,
                 **SMALL)
    assert r["games"] == 24 and r["pairs"] == 12
    assert r["decision"] == "accept" and r["score"] > 0.8


def test_engine_players_for_the_curve() -> None:
    """The curve's opponents are the engine's Player (tactics:N / pure:N in the tournament)."""
    from gomoku_ai.training.curve import select_iterations
    assert select_iterations([1, 2, 3, 4, 5, 6, 7], every=3) == [3, 6, 7]
    assert select_iterations([1, 2, 3], only=[2, 9]) == [2]
    r = run_gate(resolve_player("heuristic", visits=16), resolve_player("pure", visits=16, seed=2),
                 max_games=4, sprt=False, player_factory=lambda spec, role: spec, **SMALL)
    assert r["games"] == 4 and r["wins"] + r["draws"] + r["losses"] == 4


def test_pairs_share_the_opening_and_swap_colours() -> None:
    board = Board(7, 7, n=4)
    ops, reused = gate_openings(None, board, 5, seed=1)
    assert len(set(ops)) == 5 and not reused
    a, b = Recorder(random_player(5), "a"), Recorder(random_player(6), "b")
    first, second = play_pair(a, b, gate_game_config(board, None), ops[0], seed=1, pair=0)
    for g in (first, second):
        assert tuple(g.flat_moves(7)[:len(ops[0])]) == ops[0] and g.opening_plies == len(ops[0])
        assert g.termination in (Termination.FIVE, Termination.BOARD_FULL)
    assert a.games == [BLACK, WHITE] and b.games == [WHITE, BLACK]
    # the same pair again (any worker): the same games
    again = play_pair(a, b, gate_game_config(board, None), ops[0], seed=1, pair=0)
    assert [g.moves for g in again] == [first.moves, second.moves]


def test_max_plies_is_a_draw_by_adjudication() -> None:
    """The gate's move-count limit is the referee's adjudication (one name for one termination)."""
    r = run_gate(strong(), strong(), max_games=2, max_plies=8, sprt=False, **SMALL)
    assert r["draws"] == 2 and r["ends"] == {"adjudication": 2}


def test_the_gate_plays_the_shipped_player() -> None:
    """Specs become the engine's Player with the VCF/VCT solver (not a bare MCTS)."""
    from gomoku_ai.player import Player
    p = default_player_factory(16)("heuristic", "candidate")
    assert isinstance(p, EnginePlayer) and p.name == "candidate:heuristic"
    p.new_game(GameConfig(7, 7, n=4), TimeControl(), 0)
    assert isinstance(p._player, Player) and p._player.use_vcf
    assert p.visits(TimeControl()) == 16


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
    r1 = run_gate(strong(), random_player(1), max_games=40, elo1=200, seed=4, journal=j,
                  **SMALL)
    cand = Recorder(strong(), "strong")
    r2 = run_gate(cand, random_player(1), max_games=40, elo1=200, seed=4, journal=j, **SMALL)
    assert cand.calls == 0
    for k in ("decision", "games", "pentanomial", "llr"):
        assert r1[k] == r2[k]
    assert len(j.read_text().splitlines()) == r1["pairs"]
    # lines written before the gate played the shipped Player (no "engine") are not taken
    old = tmp_path / "old.jsonl"
    old.write_text("".join(json.dumps({k: v for k, v in json.loads(ln).items() if k != "engine"})
                           + "\n" for ln in j.read_text().splitlines()))
    cand = Recorder(strong(), "strong")
    r3 = run_gate(cand, random_player(1), max_games=40, elo1=200, seed=4, journal=old, **SMALL)
    assert cand.calls > 0 and r3["pentanomial"] == r1["pentanomial"]


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
    seq = run_gate("heuristic", "pure", **kw)
    assert seq["decision"] == "accept" and seq["pairs"] < 20
    net1, net2 = _nets(tmp_path)
    kw_nets = dict(max_games=12, visits=8, seed=2, **SMALL)
    seq_nets = run_gate(net1, net2, **kw_nets)
    with make_pool(gate_spec(), 2) as pool:
        par = run_gate("heuristic", "pure", pool=pool, **kw)
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
