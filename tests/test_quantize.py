"""The int8 graph of a model (gomoku_ai.net.quantize, ``gomoku train quantize``) and how the engine
loads it (``load_model`` backends onnx-int8 and auto)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gomoku_ai.net import ModelError, encode_batch, export_model, load_model
from gomoku_ai.net.weights import fold_batchnorm, random_model
from gomoku_ai.training.dataset import positions_from_games, save_shard
from test_net import random_board

pytest.importorskip("onnx", reason="quantising needs the 'onnx' package; install the dev extra")
pytest.importorskip("onnxruntime.quantization")
from gomoku_ai.net.quantize import QuantizeError, quantize_model  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _planes(seed: int, n: int, size: int = 15) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return encode_batch([random_board(rng, size, size, int(rng.integers(4, 60))) for _ in range(n)])


@pytest.fixture
def model(tmp_path):
    """A small exported model (float .onnx graph) in a temporary folder."""
    uw = random_model(blocks=2, channels=16, head_channels=8, value_fc=16, seed=5)
    export_model(fold_batchnorm(uw), {"name": "q", "board_sizes": [[15, 15]]}, tmp_path / "q")
    return tmp_path / "q"


def test_int8_graph_is_written_recorded_and_preferred(model):
    block = quantize_model(model, _planes(1, 64), _planes(2, 128), min_agreement=0.8, source="boards")
    cfg = json.loads(model.with_suffix(".json").read_text())
    assert set(cfg["sha256"]) == {"npz", "onnx", "onnx_int8"}
    assert cfg["int8"] == block and block["calibration_positions"] == 64 and block["check_positions"] == 128
    assert block["positions_from"] == "boards" and block["policy_top1_agreement"] >= 0.8
    assert block["float_nodes"] == ["stem", "policy.conv1", "policy.conv2", "value.conv1", "value.fc1", "value.fc2"]
    import onnx
    ops = {n.op_type for n in onnx.load(str(model.parent / "q.int8.onnx")).graph.node}
    assert {"QuantizeLinear", "DequantizeLinear"} <= ops      # the tower is quantised
    assert (model.parent / "q.int8.onnx").is_file()
    assert load_model(model).backend == "onnx-int8"              # auto prefers the int8 graph
    assert load_model(str(model) + ".int8.onnx").backend == "onnx-int8"   # named by that file too
    fp32, int8 = load_model(model, backend="onnx"), load_model(model, backend="onnx-int8")
    assert fp32.backend == "onnx"
    for size in (15, 20):                                   # the graph keeps a free board size
        x = _planes(3, 48, size)
        (pa, va), (pb, vb) = fp32.forward(x), int8.forward(x)
        assert pb.shape == (48, size * size) and vb.shape == (48,)
        assert np.mean(pa.argmax(1) == pb.argmax(1)) >= 0.8
        assert np.abs(va - vb).mean() < 0.05
        assert np.abs(vb).max() <= 1.0


def test_two_board_sizes_calibrate_one_graph_and_each_is_checked(model):
    """A network that plays 15x15 and 20x20 is calibrated on both and its fit is given per size; the
    overall figures are the per-size ones weighted by positions."""
    block = quantize_model(model, [_planes(1, 32), _planes(2, 24, 20)],
                           [_planes(3, 40), _planes(4, 60, 20)], min_agreement=0.5)
    assert block["calibration_positions"] == 56 and block["check_positions"] == 100
    by = block["by_size"]
    assert set(by) == {"15x15", "20x20"} and by["15x15"]["check_positions"] == 40
    for key in ("policy_top1_agreement", "value_mae"):
        assert block[key] == pytest.approx((40 * by["15x15"][key] + 60 * by["20x20"][key]) / 100, abs=1e-4)
    assert load_model(model).backend == "onnx-int8"
    with pytest.raises(QuantizeError, match="agrees"):        # the worst size decides
        quantize_model(model, [_planes(1, 32), _planes(2, 24, 20)], [_planes(3, 40), _planes(4, 60, 20)],
                       min_agreement=min(by[s]["policy_top1_agreement"] for s in by) + 1e-6)
    with pytest.raises(QuantizeError, match="same board size"):
        quantize_model(model, [_planes(1, 8), _planes(2, 8)], _planes(3, 8))
    with pytest.raises(QuantizeError, match="no check positions"):
        quantize_model(model, _planes(1, 8), [])


def test_quantising_again_replaces_the_graph_and_its_record(model):
    first = quantize_model(model, _planes(1, 32), _planes(2, 32), min_agreement=0.5)
    sha1 = json.loads(model.with_suffix(".json").read_text())["sha256"]["onnx_int8"]
    second = quantize_model(model, _planes(7, 48), _planes(8, 32), min_agreement=0.5)
    cfg = json.loads(model.with_suffix(".json").read_text())
    assert second["calibration_positions"] == 48 and first["calibration_positions"] == 32
    assert cfg["int8"] == second and cfg["sha256"]["onnx_int8"] != sha1
    assert load_model(model).backend == "onnx-int8"            # the json and the graph agree


def test_too_loose_an_int8_graph_writes_nothing(model):
    before = model.with_suffix(".json").read_bytes()
    with pytest.raises(QuantizeError, match="agrees"):
        quantize_model(model, _planes(1, 32), _planes(2, 32), min_agreement=1.01)
    assert model.with_suffix(".json").read_bytes() == before
    assert not (model.parent / "q.int8.onnx").exists()
    assert load_model(model).backend == "onnx"
    with pytest.raises(QuantizeError, match=r"must be \(N > 0, 5, H, W\)"):
        quantize_model(model, np.zeros((4, 3, 15, 15), np.float32), _planes(2, 8))
    assert not (model.parent / "q.int8.onnx").exists()


def test_a_model_without_a_float_graph_is_refused(tmp_path):
    uw = random_model(blocks=1, channels=8, head_channels=4, value_fc=8, seed=1)
    export_model(fold_batchnorm(uw), {"name": "n"}, tmp_path / "n", with_onnx=False)
    with pytest.raises(QuantizeError, match="no .onnx graph"):
        quantize_model(tmp_path / "n", _planes(1, 8), _planes(2, 8))
    with pytest.raises(ModelError, match="int8.onnx graph is recorded"):
        load_model(tmp_path / "n", backend="onnx-int8")
    with pytest.raises(ValueError, match="onnx-int8"):
        load_model(tmp_path / "n", backend="int8")


def test_a_corrupt_float_graph_is_not_quantised(model):
    path = model.parent / "q.onnx"
    path.write_bytes(path.read_bytes()[:-9])
    with pytest.raises(ModelError) as ei:
        quantize_model(model, _planes(1, 16), _planes(2, 16), min_agreement=0.5)
    assert str(path) in str(ei.value)
    assert not (model.parent / "q.int8.onnx").exists()


def test_a_corrupt_int8_graph_is_refused_naming_it_even_under_auto(model):
    quantize_model(model, _planes(1, 32), _planes(2, 32), min_agreement=0.5)
    path = model.parent / "q.int8.onnx"
    path.write_bytes(path.read_bytes()[:-7])
    for backend in ("auto", "onnx-int8"):
        with pytest.raises(ModelError) as ei:
            load_model(model, backend=backend)
        assert str(path) in str(ei.value)
    assert load_model(model, backend="onnx").backend == "onnx"


def test_re_exporting_a_model_forgets_its_old_int8_graph(model, tmp_path):
    quantize_model(model, _planes(1, 32), _planes(2, 32), min_agreement=0.5)
    uw = random_model(blocks=2, channels=16, head_channels=8, value_fc=16, seed=6)
    export_model(fold_batchnorm(uw), {"name": "q"}, model)     # new weights, same basename
    assert (model.parent / "q.int8.onnx").exists()             # the stale file is left, unrecorded
    assert "onnx_int8" not in json.loads(model.with_suffix(".json").read_text())["sha256"]
    assert load_model(model).backend == "onnx"


def test_playing_the_int8_graph_imports_neither_onnx_nor_torch(model):
    quantize_model(model, _planes(1, 32), _planes(2, 32), min_agreement=0.5)
    code = ("import sys, numpy; from gomoku_ai.net import load_model; "
            f"n = load_model({str(model)!r}); n.forward(numpy.zeros((1, 5, 9, 9), 'float32')); "
            "print(n.backend, 'onnx' in sys.modules, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["onnx-int8", "False", "False"]


def _shard(path: Path, games: int = 12, size: int = 15) -> Path:
    rng = np.random.default_rng(4)
    rows = []
    for _ in range(games):
        b = random_board(rng, size, size, 30)
        rows.append((list(b.moves), (size, size), int(rng.integers(0, 3)) or None))
    save_shard(positions_from_games(rows), path)
    return path


def _cli(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tools.cli", "train", "quantize", *argv], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_train_quantize_command(model, tmp_path):
    shard = _shard(tmp_path / "s.npz")
    r = _cli(str(model), "--data", str(shard), "--positions", "40", "--check", "60", "--min-agreement", "0.5")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["model"] == str(model) and out["calibration_positions"] == 40 and out["check_positions"] == 60
    assert out["positions_from"] == "s.npz" and "pre-processing" not in r.stderr
    assert load_model(model).backend == "onnx-int8"
    r = _cli(str(model), "--data", str(shard), "--positions", "400", "--check", "400")
    assert r.returncode == 2 and "fewer than --positions + --check" in r.stderr
    r = _cli(str(model), "--data", str(tmp_path / "missing.npz"))
    assert r.returncode == 2 and "missing.npz" in r.stderr
    big = _shard(tmp_path / "b.npz", size=20)
    r = _cli(str(model), "--data", str(shard), str(big), "--positions", "40", "--check", "60",
             "--min-agreement", "0.5")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["calibration_positions"] == 80 and out["check_positions"] == 120
    assert set(out["by_size"]) == {"15x15", "20x20"} and out["positions_from"] == "s.npz, b.npz"
    r = _cli(str(model), "--data", str(shard), str(_shard(tmp_path / "t.npz")), "--positions", "40",
             "--check", "60")
    assert r.returncode == 2 and "t.npz: a second 15x15 shard" in r.stderr


def test_the_engine_plays_the_int8_graph_unless_told_otherwise(model, monkeypatch):
    """load_evaluator (the brain's and the tools' way to a network) takes the int8 graph when the model
    has one; PYGOMOKU_NET_BACKEND=onnx picks the float graph (A/B matches), an explicit backend wins."""
    from gomoku_ai.shipped import env_backend, load_evaluator
    quantize_model(model, _planes(1, 32), _planes(2, 32), min_agreement=0.5)
    monkeypatch.delenv("PYGOMOKU_NET_BACKEND", raising=False)
    assert load_evaluator(str(model)).network.backend == "onnx-int8"
    monkeypatch.setenv("PYGOMOKU_NET_BACKEND", "onnx")
    assert load_evaluator(str(model)).network.backend == "onnx"
    assert load_evaluator(str(model), backend="numpy").network.backend == "numpy"
    assert env_backend("auto") == "onnx" and env_backend("onnx-int8") == "onnx-int8"
    plain = model.parent / "plain"                 # a model without an int8 graph, asked for one by the env
    uw = random_model(blocks=1, channels=8, head_channels=4, value_fc=8, seed=2)
    export_model(fold_batchnorm(uw), {"name": "plain"}, plain)
    monkeypatch.setenv("PYGOMOKU_NET_BACKEND", "onnx-int8")
    assert load_evaluator(str(plain)).network.backend == "onnx"      # played as usual, not a failure
    assert load_evaluator(str(model)).network.backend == "onnx-int8"
    monkeypatch.setenv("PYGOMOKU_NET_BACKEND", "fp16")
    with pytest.raises(ValueError, match="PYGOMOKU_NET_BACKEND"):
        env_backend()
