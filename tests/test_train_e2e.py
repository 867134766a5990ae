"""End to end on a small board (6x6, four in a row): self-play -> train -> export -> gate with the
AlphaZero loop, then every stage's output is checked to be real and loadable (shards load,
the checkpoint loads with ``weights_only=True``, the exported model loads with both inference
backends, agrees with torch, and plays a legal move through :class:`~gomoku_ai.player.Player`);
then the learning-curve and plot commands run on that run folder, and the progress display
renders the loop's records. A few seconds on 2 cores.
"""
from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the loop trains with torch")

from gomoku_ai.board import Board  # noqa: E402
from gomoku_ai.evaluator import NetworkEvaluator  # noqa: E402
from gomoku_ai.net import load_model  # noqa: E402
from gomoku_ai.net.encoding import encode_batch  # noqa: E402
from gomoku_ai.player import Limit, Player  # noqa: E402
from gomoku_ai.rules import Rule  # noqa: E402
from gomoku_ai.training.dataset import load_shard, load_window  # noqa: E402
from gomoku_ai.training.loop import run_loop  # noqa: E402
from gomoku_ai.training.selfplay import read_jsonl  # noqa: E402
from gomoku_ai.training.trainer import model_from_checkpoint  # noqa: E402

CFG = dict(width=6, height=6, n=4,
           arch={"blocks": 1, "channels": 8, "head_channels": 8, "value_fc": 16},
           games_per_iter=6, workers=0, visits_full=16, visits_fast=4, p_full=0.5,
           selfplay={"games_per_shard": 3}, min_positions=1, steps_per_iter=6, batch_size=16,
           warmup_steps=1, gate_games=4, gate_visits=8, gate_elo1=200, threads=1, device="cpu",
           seed=5)


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("e2e") / "az6"
    records = []
    state = run_loop(d, 2, CFG, log=records.append)
    assert state["completed"] == 2 and state["current"] is None
    (d / "records.json").write_text(json.dumps(records))
    return d


def test_selfplay_shards_are_real_training_data(run: Path) -> None:
    shards = sorted((run / "data").glob("it*.npz"))
    assert len(shards) == 4                       # 2 iterations x 6 games / 3 per shard
    total = 0
    for s in shards:
        pos = load_shard(s)
        assert pos.shape == (6, 6)
        total += len(pos)
        if len(pos):
            assert pos.pi is not None and np.allclose(pos.pi.astype(np.float32).sum(axis=1), 1,
                                                      atol=1e-2)
            assert set(np.unique(pos.z)) <= {-1.0, 0.0, 1.0}
            # the policy target lies on empty squares only
            assert not (pos.pi.astype(np.float32).reshape(-1, 6, 6)[pos.cells != 0] > 0).any()
    assert total > 0 and len(load_window(run / "data", 10_000)) == total
    sp = read_jsonl(run / "data" / "selfplay.jsonl")
    assert sum(r["games"] for r in sp) == 12


def test_checkpoint_loads_with_weights_only(run: Path) -> None:
    state = torch.load(run / "train" / "checkpoint.pt", map_location="cpu", weights_only=True)
    assert state["step"] == 12 and state["config"]["device"] == "cpu"
    assert all(t.device.type == "cpu" for t in state["model"].values())
    m = model_from_checkpoint(run / "train" / "checkpoint.pt")
    assert m.arch.blocks == 1 and m.arch.channels == 8


def test_exported_model_loads_with_both_backends_and_plays(run: Path) -> None:
    base = run / "candidates" / "it0002"
    cfg = json.loads(base.with_suffix(".json").read_text())
    assert cfg["board_sizes"] == [[6, 6]] and cfg["win_length"] == 4
    boards = []
    for k in range(3):
        b = Board(6, 6, Rule.FREESTYLE, 4)
        for m in (14, 15, 20, 21, 9)[:k + 2]:
            b.push(m)
        boards.append(b)
    x = encode_batch(boards)
    m = model_from_checkpoint(run / "train" / "checkpoint.pt").eval()
    with torch.no_grad():
        p_t, v_t = (t.numpy() for t in m(torch.from_numpy(x)))
    for backend in ("onnx", "numpy"):
        net = load_model(base, backend=backend, threads=1)
        p, v = net.forward(x)
        assert np.allclose(p, p_t, atol=1e-4) and np.allclose(np.reshape(v, -1), v_t, atol=1e-4)
        player = Player(NetworkEvaluator(net, batch_size=4), seed=1)
        b = boards[1].copy()
        info = player.think(b, Limit(visits=24))
        assert b.is_empty(info.move) and 0 <= info.move < 36
    load_model(run / "best")       # the promoted (or initial) best loads too


def test_loop_log_gate_and_records(run: Path) -> None:
    lines = read_jsonl(run / "loop.jsonl")
    assert [r["iteration"] for r in lines] == [1, 2]
    for r in lines:
        assert r["train"]["steps"] == 6 and "policy_loss" in r["train"]
        g = r["gate"]
        assert g["decision"] in ("accept", "reject", "inconclusive") and g["games"] >= 2
    recs = json.loads((run / "records.json").read_text())
    phases = [r["phase"] for r in recs if "phase" in r]
    assert phases == ["selfplay", "train", "gate"] * 2
    assert any("train_log" in r for r in recs) and any("gate_pair" in r for r in recs)


def test_curve_and_plot(run: Path, tmp_path: Path) -> None:
    from gomoku_ai.training.curve import strength_curve
    recs = strength_curve(run, opponent="uniform", visits=8, games=2, every=2)
    assert [r["iteration"] for r in recs] == [2]
    r = recs[0]
    assert r["games"] == 2 and r["wins"] + r["draws"] + r["losses"] == 2
    assert strength_curve(run, opponent="uniform", visits=8, games=2, every=2) == []  # resumed
    pytest.importorskip("matplotlib")
    from tools.train.plot import plot_run
    out = tmp_path / "run.png"
    res = plot_run(run, out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert res["train_points"] >= 2 and res["selfplay_iterations"] == 2
    assert sum(res["curve_points"].values()) == 1 and res["gate_points"] == 2


def test_live_display_renders_loop_records(run: Path) -> None:
    from rich.console import Console
    from tools.train.live import LiveDisplay
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=140)
    recs = json.loads((run / "records.json").read_text())
    with LiveDisplay(iterations=2, games=6, steps=6, console=console) as d:
        for r in recs:
            d(r)
    text = buf.getvalue()
    assert "finished iterations" in text and "training" in text and "self-play" in text
