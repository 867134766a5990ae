"""Typed, checked configs and kinds (gomoku_ai/checks.py and the config dataclasses that use it).

Every config constructs with its defaults (and with the values the callers pass); a bad field raises a
ValueError whose message names the class, the field and the value. The str-valued kinds compare equal to their
strings and write exactly those strings to JSON, ``str()``, f-strings and logs.
"""
from __future__ import annotations

import json
import logging
import math
import pickle
from dataclasses import asdict, replace
from typing import Any, Callable, Dict

import pytest

from gomoku_ai import checks
from gomoku_ai.checks import ConfigError, StrKind
from gomoku_ai.match import GameConfig, TimeControl
from gomoku_ai.mcts import MCTSConfig
from gomoku_ai.net import NetBackend
from gomoku_ai.net.weights import Arch
from gomoku_ai.player import Limit, Player, SearchInfo, Source
from gomoku_ai.players import InProcessSpec, PlayerKind, parse_player_spec
from gomoku_ai.rules import Rule
from gomoku_ai.training.gating import GateConfig
from gomoku_ai.training.loop import LoopConfig, LoopSettingsError
from gomoku_ai.training.remote import TRAINER_CHOICES, TrainerPlacement
from gomoku_ai.training.selfplay import SelfPlayConfig
from gomoku_ai.workers import BACKENDS, Backend, ResultKind, TaskResult, WorkerSpec

NAN = float("nan")


def _expect_error(make: Callable[..., Any], cls: str, name: str, value: Any, **kw: Any) -> str:
    """``make(name=value)`` raises a ValueError naming ``cls.name`` and the value; its message."""
    with pytest.raises(ValueError) as e:
        make(**{name: value}, **kw)
    msg = str(e.value)
    assert msg.startswith(f"{cls}.{name} must be "), msg
    assert msg.endswith(f"got {value!r}"), msg
    return msg


# ------------------------------------------------------------------------------------------ defaults
@pytest.mark.parametrize("make", [MCTSConfig, Limit, TimeControl, GameConfig, Arch, SelfPlayConfig, GateConfig,
                                  LoopConfig, lambda: WorkerSpec("m:C"),
                                  lambda: InProcessSpec(PlayerKind.PURE, "pure")])
def test_defaults_construct(make: Callable[[], Any]) -> None:
    cfg = make()
    assert replace(cfg) == cfg     # and again through __post_init__


def test_values_the_callers_pass_are_accepted() -> None:
    """What the CLI, the tournament, serve, gating, self-play and the loop construct (grep of the callers)."""
    Limit(soft_ms=0.0, hard_ms=0.0)
    Limit(visits=1, depth=3)
    Limit(soft_ms=2000.0, hard_ms=2100.0, visits=800)
    TimeControl(60000, 5000, 500)
    GameConfig(5, 5)
    GameConfig(9, 9, n=4, max_plies=3, move_timeout_ms=None)
    GameConfig(width=20, height=20, rule=Rule.RENJU, max_plies=20, tolerance_ms=500, move_timeout_ms=2000)
    Arch(0, 8, 8, 16)                       # infer_arch counts blocks from 0
    SelfPlayConfig(width=7, height=9, n=4, rule="renju", opening_stones=(0, 0), mcts={"c_puct": 2.5})
    SelfPlayConfig.from_dict({"opening_stones": [2, 4], "temp_final": 0.0})
    GateConfig(visits=8, max_games=2, max_plies=8, sprt=False, model="normalized")
    LoopConfig.from_dict({"backend": "ray", "trainer": "worker", "device": "cuda:1", "workers": 0,
                          "gate_games": 0, "train_chunk": 0, "height": 20})
    WorkerSpec("gomoku_ai.workers.testing:Echo", {"x": 1}, threads=4, num_cpus=1.0, num_gpus=0.5)
    InProcessSpec(PlayerKind.MODEL, "model:x")      # a network passed as an object (gating's workers)
    assert parse_player_spec("model:a/b.json:800").model_path == "a/b.json"
    Player(config=MCTSConfig(max_nodes=2000, three_replies=False))


# ------------------------------------------------------------------------------------------ bad values
MCTS_BAD = [("c_puct", -1), ("c_puct", 0), ("c_puct", NAN), ("radius", 0), ("max_nodes", 0), ("check_every", 0),
            ("virtual_loss", -1.0), ("dirichlet_alpha", -0.1), ("noise_fraction", 1.5), ("fpu_reduction", math.inf),
            ("c_puct", "1.8"), ("c_puct", math.inf), ("virtual_loss", 0.0), ("policy_temp", 0.0),
            ("policy_temp", math.inf)]


@pytest.mark.parametrize("name, value", MCTS_BAD)
def test_mcts_config_bad_values(name: str, value: Any) -> None:
    _expect_error(MCTSConfig, "MCTSConfig", name, value)     # refused where it is made


def test_mcts_example_message() -> None:
    with pytest.raises(ValueError) as e:
        MCTSConfig(c_puct=-1)
    assert str(e.value) == "MCTSConfig.c_puct must be > 0, got -1"


@pytest.mark.parametrize("name, value", [("soft_ms", -1.0), ("hard_ms", NAN), ("visits", -5), ("depth", -1),
                                         ("soft_ms", "100")])
def test_limit_bad_values(name: str, value: Any) -> None:
    _expect_error(Limit, "Limit", name, value)


@pytest.mark.parametrize("name, value", [("match_ms", -1), ("turn_ms", -1000), ("increment_ms", NAN)])
def test_time_control_bad_values(name: str, value: Any) -> None:
    _expect_error(TimeControl, "TimeControl", name, value)


@pytest.mark.parametrize("name, value", [("width", 4), ("width", 33), ("height", 0), ("rule", "freestyle"),
                                         ("max_plies", 0), ("tolerance_ms", -1.0), ("move_timeout_ms", -5.0),
                                         ("n", 2), ("n", 16)])
def test_game_config_bad_values(name: str, value: Any) -> None:
    _expect_error(GameConfig, "GameConfig", name, value)


@pytest.mark.parametrize("name, value", [("blocks", -1), ("channels", 0), ("head_channels", 0), ("value_fc", -2),
                                         ("planes", 0)])
def test_arch_bad_values(name: str, value: Any) -> None:
    _expect_error(Arch, "Arch", name, value)


@pytest.mark.parametrize("name, value", [
    ("width", 4), ("height", 40), ("n", 6), ("rule", "chess"), ("visits_full", 0), ("visits_fast", -1),
    ("p_full", 1.01), ("temperature", -0.5), ("temp_moves", -1), ("noise_total", 0.0), ("noise_fraction", -0.1),
    ("resign_threshold", NAN), ("resign_disabled_fraction", 2.0), ("opening_stones", (3, 1)),
    ("opening_stones", (1,)), ("opening_radius", -1), ("max_plies", 0), ("batch_size", 0),
    ("mcts", {"c_puct": -1}), ("mcts", {"no_such_field": 1}),
])
def test_selfplay_config_bad_values(name: str, value: Any) -> None:
    _expect_error(SelfPlayConfig, "SelfPlayConfig", name, value, **({"width": 5} if name == "n" else {}))


@pytest.mark.parametrize("name, value", [("visits", 0), ("max_games", 1), ("elo0", NAN), ("elo1", math.inf),
                                         ("alpha", 0.0), ("beta", 1.0), ("model", "bayeselo"), ("max_plies", 0)])
def test_gate_config_bad_values(name: str, value: Any) -> None:
    _expect_error(GateConfig, "GateConfig", name, value)


@pytest.mark.parametrize("name, value", [
    ("width", 3), ("rule", "go"), ("games_per_iter", -1), ("workers", -1), ("visits_full", 0), ("p_full", -0.5),
    ("window", 0), ("steps_per_iter", -1), ("batch_size", 0), ("lr", 0.0), ("threads", 0), ("device", "gpu"),
    ("trainer", "gpu"), ("trainer_gpus", -1.0), ("backend", "slurm"), ("gate_games", -2), ("gate_visits", 0),
    ("gate_alpha", 1.5), ("gate_model", "elo"), ("arch", {"blocks": -1}), ("arch", {"depth": 3}),
    ("selfplay", [1]),
])
def test_loop_config_bad_values(name: str, value: Any) -> None:
    with pytest.raises(LoopSettingsError) as e:      # the CLI reports LoopSettingsError without a traceback
        LoopConfig(**{name: value})
    assert str(e.value).startswith(f"LoopConfig.{name} must be ") and str(e.value).endswith(repr(value))


@pytest.mark.parametrize("name, value", [("threads", 0), ("num_cpus", -1.0), ("num_gpus", NAN), ("target", None)])
def test_worker_spec_bad_values(name: str, value: Any) -> None:
    _expect_error(WorkerSpec, "WorkerSpec", name, value, **({} if name == "target" else {"target": "m:C"}))


@pytest.mark.parametrize("name, value", [("visits", 0), ("movetime_ms", -1.0), ("model", "m.json"),
                                         ("kind", "pure")])
def test_in_process_spec_bad_values(name: str, value: Any) -> None:
    kw: Dict[str, Any] = {"kind": PlayerKind.PURE, "text": "pure"}
    kw.pop(name, None)
    _expect_error(InProcessSpec, "InProcessSpec", name, value, **kw)


def test_train_config() -> None:
    pytest.importorskip("torch")
    from gomoku_ai.training.trainer import TrainConfig
    TrainConfig()
    TrainConfig(threads=4, device="cuda:3")
    TrainConfig(steps=0, lr=1e-3, lr_min=1e-3, warmup_steps=0, val_every=0, device=" CPU ")
    for name, value in [("steps", -1), ("batch_size", 0), ("lr", -1e-3), ("lr_min", -1.0), ("warmup_steps", -1),
                        ("weight_decay", -0.1), ("grad_clip", 0.0), ("val_fraction", 1.5), ("log_every", 0),
                        ("checkpoint_every", 0), ("threads", 0), ("device", "tpu"), ("device", "cuda:x"),
                        ("arch", {"channels": 0}), ("arch", {"width": 3}), ("arch", "6x64")]:
        _expect_error(TrainConfig, "TrainConfig", name, value)


# ------------------------------------------------------------------------------------------ kinds
KIND_VALUES = [
    (Source, ["", "win1", "block5", "lost", "vcf", "vct", "static", "centre", "mcts", "policy", "sleepy", "stuck"]),
    (ResultKind, ["ok", "error", "lost"]),
    (Backend, ["local", "ray"]),
    (TrainerPlacement, ["auto", "driver", "worker"]),
    (NetBackend, ["auto", "onnx", "onnx-int8", "numpy"]),
]


@pytest.mark.parametrize("kind, values", KIND_VALUES)
def test_kinds_write_their_strings(kind: type, values: list, caplog: pytest.LogCaptureFixture) -> None:
    assert [m.value for m in kind] == values
    for member, text in zip(kind, values):
        assert member == text and kind(text) is member and hash(member) == hash(text)
        assert str(member) == f"{member}" == "%s" % member == text and f"{member:>8}" == f"{text:>8}"
        assert json.dumps({"k": member, member: 1}) == json.dumps({"k": text, text: 1})
        assert pickle.loads(pickle.dumps(member)) is member
        with caplog.at_level(logging.INFO):
            logging.getLogger("test_configs").info("kind %s", member)
        assert caplog.records[-1].getMessage() == f"kind {text}"


def test_choice_tuples_are_the_kinds_values() -> None:
    assert BACKENDS == ("local", "ray") and TRAINER_CHOICES == ("auto", "driver", "worker")


def test_search_info_source_default_and_json() -> None:
    info = SearchInfo(move=3)
    assert info.source is Source.NONE and not info.source
    assert json.dumps(asdict(SearchInfo(move=1, source=Source.MCTS))["source"]) == '"mcts"'


def test_task_result_kind_from_a_string() -> None:
    r = TaskResult(("k", 1), "ok", 5)
    assert r.kind is ResultKind.OK and r.ok
    assert TaskResult("k", ResultKind.LOST).ok is False
    with pytest.raises(ConfigError, match="^TaskResult.kind must be one of 'ok', 'error', 'lost', got 'done'$"):
        TaskResult("k", "done")


def test_loop_config_kinds_from_strings_round_trip() -> None:
    cfg = LoopConfig.from_dict({"backend": "ray", "trainer": "driver"})
    assert cfg.backend is Backend.RAY and cfg.trainer is TrainerPlacement.DRIVER
    stored = json.loads(json.dumps(asdict(cfg)))
    assert stored["backend"] == "ray" and stored["trainer"] == "driver"
    assert LoopConfig.from_dict(stored) == cfg


def test_str_kind_subclass_behaves_as_its_string() -> None:
    class Colour(StrKind):
        RED = "red"

    assert {"red": 1}[Colour.RED] == 1 and Colour.RED.upper() == "RED" and Colour.RED + "!" == "red!"
    with pytest.raises(ConfigError, match=r"^X\.y must be one of 'red', got 'blue'$"):
        checks.parse_kind(Colour, "blue", "X.y")
