"""Player specs (gomoku_ai/players.py): every spec of the documented table resolves to the player it says
(evaluator, tactics, visits or time per move), plays a refereed game, and a bad spec raises a ValueError that
names it. The tournament's parser reads the same vocabulary."""
from __future__ import annotations

from pathlib import Path

import pytest

from gomoku_ai import evaluator as E
from gomoku_ai.match import GameConfig, TimeControl, play_game
from gomoku_ai.net import export_model, fold_batchnorm, random_model
from gomoku_ai.player import Limit, Player
from gomoku_ai.players import (EnginePlayer, PlayerKind, RandomMover, SpecError, as_spec, parse_player_spec,
                               resolve_player)
from gomoku_ai.rules import Termination

CFG = GameConfig(7, 7, n=4, max_plies=12, move_timeout_ms=None)


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("net") / "tiny"
    w = fold_batchnorm(random_model(blocks=1, channels=8, head_channels=8, value_fc=16, seed=3))
    export_model(w, {"name": "tiny", "board_sizes": [[7, 7]]}, base)
    return base


def _started(p: EnginePlayer) -> object:
    p.new_game(CFG, TimeControl(), 5)
    return p._player


@pytest.mark.parametrize("text, kind, evaluator, vcf, visits", [
    ("pure", PlayerKind.PURE, E.RolloutEvaluator, False, 400),
    ("pure:30", PlayerKind.PURE, E.RolloutEvaluator, False, 30),
    ("tactics", PlayerKind.TACTICS, E.UniformEvaluator, True, 1000),
    ("tactics:20", PlayerKind.TACTICS, E.UniformEvaluator, True, 20),
    ("uniform:20", PlayerKind.TACTICS, E.UniformEvaluator, True, 20),
    ("heuristic", PlayerKind.HEURISTIC, E.HeuristicEvaluator, True, 800),
    ("Heuristic:16", PlayerKind.HEURISTIC, E.HeuristicEvaluator, True, 16),
])
def test_each_kind_is_the_shipped_player_over_its_evaluator(text, kind, evaluator, vcf, visits):
    p = resolve_player(text)
    assert isinstance(p, EnginePlayer) and p.player_spec.kind is kind and p.name == text
    engine = _started(p)
    assert isinstance(engine, Player) and isinstance(engine.evaluator, evaluator) and engine.use_vcf is vcf
    assert p.visits(TimeControl()) == visits
    assert p.search_limit(CFG.board(), None, TimeControl()) == Limit(visits=visits)
    # the caller's visits apply only to a spec without N; a time control replaces both
    q = resolve_player(text, visits=7)
    assert q.visits(TimeControl()) == (7 if ":" not in text else visits)
    assert resolve_player(text.split(":")[0]).visits(TimeControl(turn_ms=1000)) is None


def test_a_time_per_move_and_random():
    p = resolve_player("heuristic:2s")
    assert p.player_spec.movetime_ms == 2000.0 and p.visits(TimeControl()) is None
    lim = p.search_limit(CFG.board(), None, TimeControl())
    assert lim.soft_ms == lim.hard_ms == 2000.0 and lim.visits is None
    assert parse_player_spec("pure:500ms").movetime_ms == 500.0
    r = resolve_player("random", seed=3)
    assert isinstance(_started(r), RandomMover) and r.player_spec.default_visits is None


def test_models_by_spec_and_by_path(model):
    from gomoku_ai.workers import model_version
    for spec in (f"model:{model}:12", f"model:{model}", str(model), model):
        p = resolve_player(spec)
        s = p.player_spec
        assert s.kind is PlayerKind.MODEL and Path(s.model) == model
        assert isinstance(p._ev, E.NetworkEvaluator) and p._ev.batch_size == 4
        assert p.version == model_version(model)
        assert p.visits(TimeControl()) == (12 if spec == f"model:{model}:12" else 800)
        assert isinstance(_started(p), Player) and _started(p).use_vcf


@pytest.mark.parametrize("spec", ["pure:12", "tactics:12", "uniform:12", "heuristic:12", "random", "MODEL"])
def test_every_spec_plays_a_refereed_game(spec, model):
    p = resolve_player(f"model:{model}:12" if spec == "MODEL" else spec)
    g = play_game((p, resolve_player("random", seed=1)), CFG, seed=9)
    assert g.termination in (Termination.FIVE, Termination.BOARD_FULL, Termination.ADJUDICATION), g.reason
    assert g.offender is None and len(g.moves) >= 7
    again = play_game((p, resolve_player("random", seed=1)), CFG, seed=9)
    assert again.moves == g.moves          # fixed visits and seeds: the same game


@pytest.mark.parametrize("bad", ["pure:abc", "heuristic:0", "tactics:-3", "random:5", "model:", "nope:5",
                                 "heuristic:2x", ""])
def test_a_bad_spec_raises_a_value_error_naming_it(bad):
    with pytest.raises(ValueError) as ei:
        parse_player_spec(bad)
    assert isinstance(ei.value, SpecError) and repr(bad) in str(ei.value)


def test_a_missing_model_raises_when_resolved():
    with pytest.raises(ValueError, match="no/such/model"):
        resolve_player("no/such/model")
    with pytest.raises(ValueError, match="no/such/model"):
        resolve_player("model:no/such/model:10")
    with pytest.raises(SpecError, match="not a int"):
        as_spec(5)  # type: ignore[arg-type]


def test_the_tournament_reads_the_same_vocabulary():
    from tools.tournament.players import InProcessPlayer, parse_player
    for text in ("pure:30", "tactics", "uniform:20", "heuristic:2s", "model:m.json:800", "random"):
        t = parse_player([text])
        assert t.in_process() == parse_player_spec(text)
        if t.kind != "model":
            p = InProcessPlayer(t)
            assert isinstance(p, EnginePlayer) and p.player_spec == parse_player_spec(text)
    with pytest.raises(SpecError):
        parse_player(["runs/x/best"])   # a bare path is not a tournament player: model:PATH
