"""Training: the torch model agrees with the exported onnxruntime and numpy networks, data targets
are right, the loop learns, checkpoints resume and bad files are refused."""
from __future__ import annotations

import math

import json
import random
from pathlib import Path
from typing import Any, Dict, List

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="training tests need the train extra (torch)")

from gomoku_ai.board import Board  # noqa: E402
from gomoku_ai.net import encode, encode_batch, load_model, random_model  # noqa: E402
from gomoku_ai.net.encoding import encode_arrays  # noqa: E402
from gomoku_ai.net.weights import Arch  # noqa: E402
from gomoku_ai.rules import BLACK, WHITE  # noqa: E402
from gomoku_ai.training.dataset import (Positions, ShardError, load_shard, load_window,  # noqa: E402
                                        positions_from_games, save_shard)
from gomoku_ai.training.model import PolicyValueNet, dihedral  # noqa: E402
from gomoku_ai.training.trainer import (CheckpointError, TrainConfig, Trainer,  # noqa: E402
                                        export_checkpoint, load_checkpoint, lr_at)

SMALL = {"blocks": 2, "channels": 16, "head_channels": 8, "value_fc": 16}


def random_boards(n: int, w: int, h: int, seed: int):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        b = Board(w, h)
        for m in rng.sample(range(w * h), rng.randint(0, w * h // 3)):
            if b.push(m):
                b.pop()
        out.append(b)
    return out


@pytest.mark.parametrize("w,h", [(15, 15), (20, 20), (12, 9)])
def test_torch_onnx_numpy_agree(tmp_path: Path, w: int, h: int) -> None:
    torch.manual_seed(0)
    model = PolicyValueNet(Arch(**SMALL))
    model.load_unfolded(random_model(seed=3, **SMALL))
    model.eval()
    (tmp_path / "run").mkdir()
    opt = torch.optim.AdamW(model.parameters())
    from gomoku_ai.training.trainer import save_checkpoint
    save_checkpoint(tmp_path / "run" / "checkpoint.pt", model, opt, 0, TrainConfig(arch=SMALL), {})
    base = export_checkpoint(tmp_path / "run" / "checkpoint.pt", tmp_path / "m", "t")
    x = encode_batch(random_boards(6, w, h, seed=w * h))
    with torch.no_grad():
        tp, tv = model(torch.from_numpy(x))
    for backend in ("numpy", "onnx"):
        net = load_model(base, backend=backend)
        p, v = net.forward(x)
        assert np.abs(p - tp.numpy()).max() < 1e-4, backend
        assert np.abs(v.reshape(-1) - tv.numpy()).max() < 1e-4, backend


def test_encode_arrays_matches_encode() -> None:
    boards = random_boards(10, 15, 15, seed=2)
    cells = np.stack([b.cells for b in boards])
    stm = np.array([b.side_to_move for b in boards])
    last = np.array([b.moves[-1] if b.moves else -1 for b in boards])
    got = encode_arrays(cells, stm, last)
    for i, b in enumerate(boards):
        assert np.array_equal(got[i], encode(b))


def test_positions_from_games_targets() -> None:
    # Black wins with a five on the row: moves alternate; 0..4 black, 15..18 white
    moves = [0, 15, 1, 16, 2, 17, 3, 18, 4]
    pos = positions_from_games([(moves, (15, 15), BLACK)], openings=[(0, 15)])
    assert len(pos) == len(moves) - 2              # the opening prefix gives no targets
    assert list(pos.move) == moves[2:]
    assert all(pos.z[i] == (1.0 if pos.stm[i] == BLACK else -1.0) for i in range(len(pos)))
    assert pos.cells[0].sum() == BLACK + WHITE     # the board before move 3: two stones
    unknown = positions_from_games([(moves[:5], (15, 15), None)])
    assert (unknown.zw == 0).all()
    pt = pos.policy_targets(np.arange(len(pos)))
    assert pt.sum(axis=1).tolist() == [1.0] * len(pos) and pt[0, moves[2]] == 1.0


def test_dihedral_keeps_move_and_plane_aligned() -> None:
    x = torch.zeros(1, 1, 5, 5)
    x[0, 0, 0, 1] = 1.0   # off both diagonals: its orbit has 8 squares
    pi = torch.zeros(1, 25)
    pi[0, 0 * 5 + 1] = 1.0
    for k in range(8):
        a = dihedral(x, k)[0, 0]
        b = dihedral(pi.view(1, 5, 5), k)[0]
        assert torch.equal(a, b)
        assert len({tuple(dihedral(x, j)[0, 0].nonzero()[0].tolist()) for j in range(8)}) == 8


def test_dihedral_is_the_numbering_of_net_symmetries() -> None:
    """One definition of the 8 symmetries: the training tensors are transformed exactly as
    gomoku_ai.net.symmetries transforms numpy planes (square boards: all 8; 5x7: the 4 that keep it)."""
    from gomoku_ai.net.symmetries import HALF_TURN, symmetry_ids, transform_planes
    for h, w in ((5, 5), (5, 7)):
        x = np.arange(2 * 3 * h * w, dtype=np.float32).reshape(2, 3, h, w)
        for k in symmetry_ids(h, w):
            assert np.array_equal(dihedral(torch.from_numpy(x), k).numpy(), transform_planes(x, k)), (h, w, k)
    y = np.arange(35, dtype=np.float32).reshape(5, 7)
    assert np.array_equal(transform_planes(y, HALF_TURN), y[::-1, ::-1])   # the trainer's W x H turn


def _tiny_positions(n_games: int = 40, seed: int = 0, size: int = 9) -> Positions:
    rng = random.Random(seed)
    games = []
    c = size // 2
    for _ in range(n_games):
        b = Board(size, size)
        moves = []
        # Black always opens at the centre, then plays near it: a learnable policy
        while b.winner is None and len(moves) < 30:
            if not moves:
                m = c * size + c
            else:
                empties = [e for e in b.empty_squares()
                           if abs(e % size - c) <= 2 and abs(e // size - c) <= 2]
                m = rng.choice(empties or b.empty_squares())
            moves.append(m)
            b.push(m)
        w = b.winner
        games.append((moves, (size, size), 0 if w is None else w))
    return positions_from_games(games)


def _assert_start_row_first(log: List[Dict[str, Any]]) -> None:
    """The start's validation row comes first (step 0, not best.pt, no training losses), once; the
    trained network's held-out policy loss is below it."""
    start, final = log[0], log[-1]
    assert start["step"] == 0 and start.get("start") and "policy_loss" not in start and not start.get("best")
    assert final["final"] and final["val_policy_loss"] < start["val_policy_loss"]
    assert [r["step"] for r in log if r.get("start")] == [0]


def test_training_learns_and_resumes(tmp_path: Path) -> None:
    pos = _tiny_positions()
    cfg = TrainConfig(steps=60, batch_size=64, lr=3e-3, warmup_steps=5, log_every=20,
                      val_every=20, checkpoint_every=20, arch=SMALL, threads=1, val_fraction=0.1)
    tr = Trainer(cfg, tmp_path / "run")
    tr.fit(pos)
    log = [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    steps = [r for r in log if "policy_loss" in r]
    assert steps[-1]["policy_loss"] < steps[0]["policy_loss"]
    _assert_start_row_first(log)
    # resume: a new Trainer on the same folder continues from step 60
    cfg2 = TrainConfig(**{**cfg.__dict__, "steps": 80})
    tr2 = Trainer(cfg2, tmp_path / "run")
    assert tr2.step == 60
    for a, b in zip(tr.model.state_dict().values(), tr2.model.state_dict().values()):
        assert torch.equal(a, b)
    tr2.fit(pos)
    assert load_checkpoint(tmp_path / "run" / "checkpoint.pt")["step"] == 80
    # the resumed run logs no second start row
    log = [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in log if r.get("start")] == [0]


def test_train_only_value_moves_the_value_head_and_nothing_else(tmp_path: Path) -> None:
    """``train_only="value"``: a fine-tune from a trained network changes its value head while every
    other weight and batch-norm statistic, and so the policy's logits, stay exactly as they were; the
    value loss falls. A zero value weight, which would leave nothing to learn, is refused."""
    pos = _tiny_positions()
    base = dict(batch_size=64, lr=3e-3, warmup_steps=5, log_every=20, val_every=0, checkpoint_every=20,
                arch=SMALL, threads=1, val_fraction=0.1)
    Trainer(TrainConfig(steps=20, **base), tmp_path / "start").fit(pos)
    tr = Trainer(TrainConfig(steps=60, train_only="value", **base), tmp_path / "value",
                 init=tmp_path / "start" / "checkpoint.pt")
    before = {k: v.clone() for k, v in tr.model.state_dict().items()}
    x = torch.from_numpy(encode_batch([Board(9, 9)] + random_boards(3, 9, 9, 5)))
    tr.model.eval()
    with torch.no_grad():
        logits0, v0 = tr.model(x)
    tr.fit(pos)
    after = tr.model.state_dict()
    moved = {k for k in before if not torch.equal(before[k], after[k])}
    assert moved and all(k.startswith("value_") for k in moved), moved
    assert any(k.startswith("value_fc") for k in moved)
    tr.model.eval()
    with torch.no_grad():
        logits1, v1 = tr.model(x)
    assert torch.equal(logits0, logits1) and not torch.equal(v0, v1)
    log = [json.loads(line) for line in (tmp_path / "value" / "log.jsonl").read_text().splitlines()]
    steps = [r for r in log if "value_loss" in r and "step" in r and not r.get("final")]
    assert steps[-1]["value_loss"] < steps[0]["value_loss"]
    # a run of the whole network is not resumed as a value-head run: its optimizer has other parameters
    with pytest.raises(CheckpointError, match="train_only"):
        Trainer(TrainConfig(steps=80, train_only="value", **base), tmp_path / "start")
    with pytest.raises(ValueError, match="value_weight"):
        TrainConfig(train_only="value", value_weight=0.0)
    with pytest.raises(ValueError, match="train_only"):
        TrainConfig(train_only="policy")


def test_lr_schedule() -> None:
    cfg = TrainConfig(steps=1000, lr=1e-3, lr_min=1e-5, warmup_steps=100)
    assert lr_at(0, cfg) == pytest.approx(1e-5)
    assert lr_at(99, cfg) == pytest.approx(1e-3)
    assert lr_at(550, cfg) == pytest.approx((1e-3 + 1e-5) / 2)
    assert lr_at(1000, cfg) == pytest.approx(1e-5)


def test_corrupt_files_are_refused_with_their_name(tmp_path: Path) -> None:
    bad = tmp_path / "checkpoint.pt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError, match="checkpoint.pt"):
        load_checkpoint(bad)
    shard = tmp_path / "shard.npz"
    shard.write_bytes(b"PK\x03\x04 broken")
    with pytest.raises(ShardError, match="shard.npz"):
        load_shard(shard)
    np.savez(tmp_path / "other.npz", a=np.zeros(3))
    with pytest.raises(ShardError, match="other.npz"):
        load_shard(tmp_path / "other.npz")


def test_shard_round_trip_and_window(tmp_path: Path) -> None:
    pos = _tiny_positions(10)
    pos.pi = np.random.default_rng(0).random((len(pos), 81)).astype(np.float16)
    pos.move[:] = -1
    save_shard(pos, tmp_path / "a.npz")
    back = load_shard(tmp_path / "a.npz")
    for k in ("cells", "stm", "last", "move", "z", "zw", "game", "pi"):
        assert np.array_equal(getattr(back, k), getattr(pos, k)), k
    save_shard(pos, tmp_path / "b.npz")
    win = load_window(tmp_path, window=len(pos) + 5)
    assert len(win) == len(pos) + 5
    t = win.policy_targets(np.arange(3))
    assert np.allclose(t.sum(axis=1), 1.0)


# ---------------------------------------------------------------------------- devices
def test_device_resolution() -> None:
    from gomoku_ai.training.trainer import resolve_device
    assert resolve_device("cpu").type == "cpu"
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(ValueError, match="device"):
        resolve_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            resolve_device("cuda")


def test_device_data_encodes_like_numpy() -> None:
    """The on-device batch builder (used on CUDA) gives exactly the numpy planes and targets,
    one-hot and visit targets alike, under every symmetry."""
    from gomoku_ai.training.dataset import encode_positions
    from gomoku_ai.training.trainer import DeviceData
    pos = _tiny_positions(12)
    rng = np.random.default_rng(3)
    pos.pi = rng.random((len(pos), 81)).astype(np.float16)
    pos.move[::2] = -1                               # half visit targets, half one-hot
    d = DeviceData(pos, torch.device("cpu"))
    idx = rng.choice(len(pos), size=40, replace=False)
    for k in range(8):
        x, pi, z, zw = d.batch(idx, k)
        xr = dihedral(torch.from_numpy(encode_positions(pos, idx)), k)
        pr = dihedral(torch.from_numpy(pos.policy_targets(idx)).view(-1, 9, 9), k).reshape(40, -1)
        assert torch.equal(x, xr)
        assert torch.allclose(pi, pr, atol=1e-6)
        assert torch.equal(z, torch.from_numpy(pos.z[idx]))


def test_training_with_device_data_matches_host_batches(tmp_path: Path) -> None:
    """Same seed, same steps: host-encoded and device-encoded batches train the same weights."""
    pos = _tiny_positions(20)
    cfg = TrainConfig(steps=6, batch_size=32, warmup_steps=2, log_every=3, val_every=0,
                      checkpoint_every=6, arch=SMALL, threads=1, device="cpu")
    a = Trainer(cfg, tmp_path / "a", device_data=False)
    a.fit(pos)
    b = Trainer(cfg, tmp_path / "b", device_data=True)
    b.fit(pos)
    for (k, x), y in zip(a.model.state_dict().items(), b.model.state_dict().values()):
        assert torch.allclose(x, y, atol=1e-5), k


def test_checkpoints_hold_cpu_tensors(tmp_path: Path) -> None:
    from gomoku_ai.training.trainer import save_checkpoint
    model = PolicyValueNet(Arch(**SMALL))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model(torch.zeros(2, 5, 7, 7))[0].sum().backward()
    opt.step()
    save_checkpoint(tmp_path / "c.pt", model, opt, 1, TrainConfig(arch=SMALL), {})
    state = torch.load(tmp_path / "c.pt", map_location="cpu", weights_only=True)
    tensors = list(state["model"].values()) + [t for s in state["optimizer"]["state"].values()
                                               for t in s.values() if torch.is_tensor(t)]
    assert tensors and all(t.device.type == "cpu" for t in tensors)


def test_gpu_burst_runs_on_cpu(tmp_path: Path) -> None:
    """tools/train/gpu_burst.py (the prepared GPU script) end to end on the CPU with a tiny budget."""
    from tools.train import gpu_burst
    shard = tmp_path / "sl.npz"
    save_shard(_tiny_positions(30), shard)
    out = tmp_path / "out"
    rc = gpu_burst.main(["--data", str(shard), "--out", str(out), "--steps", "4", "--blocks",
                         "1", "--channels", "8", "--batch", "32", "--device", "cpu",
                         "--threads", "1", "--max-seconds", "30", "--name", "tiny"])
    assert rc == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["device"] == "cpu" and summary["step"] == 4 and summary["board"] == [9, 9]
    assert summary["export_check"]["numpy"]["policy_max_abs_diff"] < 1e-4
    torch.load(out / "run" / "checkpoint.pt", map_location="cpu", weights_only=True)
    net = load_model(out / "tiny")
    p, v = net.forward(encode_batch([Board(9, 9)]))
    assert p.shape == (1, 81)


def test_mixed_board_sizes_train_one_network_by_their_shares(tmp_path: Path) -> None:
    """Positions of two sizes: every batch is of one size, drawn by ``size_shares``; validation
    reports each size and their share-weighted mean, and both sizes learn."""
    small, big = _tiny_positions(30, seed=1), _tiny_positions(30, seed=2, size=11)
    cfg = TrainConfig(steps=120, batch_size=32, lr=3e-3, warmup_steps=5, log_every=40,
                      val_every=40, checkpoint_every=40, arch=SMALL, threads=1, val_fraction=0.1,
                      size_shares={"11x11": 0.75})
    tr = Trainer(cfg, tmp_path / "run")
    shapes = []
    real_batch = tr._batch

    def spy(pos, idx, k, data=None):
        if tr.model.training:                               # not a validation pass
            shapes.append(pos.shape)
        return real_batch(pos, idx, k, data)

    tr._batch = spy
    tr.fit([small, big])
    train_shapes = shapes
    assert len(train_shapes) == 120
    n_big = sum(1 for sh in train_shapes if sh == (11, 11))
    assert set(train_shapes) == {(9, 9), (11, 11)}
    assert 0.6 < n_big / len(train_shapes) < 0.9          # 0.75 of 120 draws
    log = [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    vals = [r for r in log if "val_policy_loss_11x11" in r]
    assert len(vals) >= 3                                   # passes at 40, 80, 120 and the final one
    for r in vals:
        mean = 0.25 * r["val_policy_loss_9x9"] + 0.75 * r["val_policy_loss_11x11"]
        assert r["val_policy_loss"] == pytest.approx(mean, abs=2e-4)
    # both sizes learned: well below a uniform policy over their squares
    assert vals[-1]["val_policy_loss_9x9"] < math.log(81) - 0.5
    assert vals[-1]["val_policy_loss_11x11"] < math.log(121) - 0.5


def test_size_shares_are_checked() -> None:
    from gomoku_ai.training.trainer import _Group, _shares
    with pytest.raises(ValueError):
        TrainConfig(size_shares={"20x20": 1.5})
    with pytest.raises(ValueError):
        TrainConfig(size_shares={"20": 0.5})
    with pytest.raises(ValueError):
        TrainConfig(size_shares={"20x20": 0.7, "15x15": 0.6})
    a, b = _tiny_positions(4, size=9), _tiny_positions(4, size=11)
    ga = _Group(a, None, np.arange(30), np.arange(0))
    gb = _Group(b, None, np.arange(10), np.arange(0))
    assert _shares([ga, gb], None) == pytest.approx([0.75, 0.25])     # by training positions
    assert _shares([ga, gb], {"11x11": 0.6}) == pytest.approx([0.4, 0.6])
    with pytest.raises(ValueError, match="no training positions"):
        _shares([ga, gb], {"15x15": 0.5})
    empty = _Group(b, None, np.arange(0), np.arange(10))   # all of its games held out
    with pytest.raises(ValueError, match="no training positions"):
        _shares([ga, empty], {"11x11": 0.5})
    assert _shares([ga, empty], None) == pytest.approx([1.0, 0.0])   # unnamed: never drawn


def test_gpu_burst_trains_and_exports_two_board_sizes(tmp_path: Path) -> None:
    from tools.train import gpu_burst
    save_shard(_tiny_positions(20), tmp_path / "a.npz")
    save_shard(_tiny_positions(20, size=11), tmp_path / "b.npz")
    out = tmp_path / "out"
    rc = gpu_burst.main(["--data", str(tmp_path / "a.npz"), str(tmp_path / "b.npz"), "--out", str(out),
                         "--steps", "6", "--blocks", "1", "--channels", "8", "--batch", "16",
                         "--device", "cpu", "--threads", "1", "--max-seconds", "30", "--name", "mix",
                         "--size-share", "11x11=0.5", "--val-every", "3"])
    assert rc == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["boards"] == [[9, 9], [11, 11]] and summary["step"] == 6
    assert set(summary["export_check"]) == {"numpy_9x9", "numpy_11x11"} | (
        {"onnx_9x9", "onnx_11x11"} if "onnx_9x9" in summary["export_check"] else set())
    assert all(d["policy_max_abs_diff"] < 1e-4 for d in summary["export_check"].values())
    assert "val_policy_loss_11x11" in summary["final"]
    net = load_model(out / "mix")
    for n in (9, 11, 15):                                   # one fully convolutional network
        p, v = net.forward(encode_batch([Board(n, n)]))
        assert p.shape == (1, n * n)
    for share in ("11x11", "13x13=0.2"):       # malformed; a size with no positions
        bad = gpu_burst.main(["--data", str(tmp_path / "a.npz"), "--out", str(tmp_path / "o2"),
                              "--steps", "2", "--device", "cpu", "--size-share", share])
        assert bad == 2


def test_train_supervised_cli_mixes_board_sizes(tmp_path: Path, capsys) -> None:
    from tools.cli import main as cli_main
    save_shard(_tiny_positions(20), tmp_path / "a.npz")
    save_shard(_tiny_positions(20, size=11), tmp_path / "b.npz")
    base = ["train", "supervised", "--data", str(tmp_path / "a.npz"), str(tmp_path / "b.npz"),
            "--blocks", "1", "--channels", "8", "--batch", "16", "--steps", "4", "--threads", "1",
            "--device", "cpu"]
    assert cli_main(base + ["--run", str(tmp_path / "run"), "--size-share", "11x11=0.5"]) == 0
    final = [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text().splitlines()][-1]
    assert final["final"] and "val_policy_loss_9x9" in final and "val_policy_loss_11x11" in final
    capsys.readouterr()
    assert cli_main(base + ["--run", str(tmp_path / "r2"), "--size-share", "20x20=0.5"]) == 2
    assert "20x20" in capsys.readouterr().err and not (tmp_path / "r2").exists()


def test_repeat_weighs_a_shard_and_keeps_its_games_whole() -> None:
    from gomoku_ai.training.dataset import repeat, split_by_game
    pos = _tiny_positions(12)
    r = repeat(pos, 3)
    assert len(r) == 3 * len(pos) and repeat(pos, 1) is pos
    assert np.array_equal(r.cells[len(pos):2 * len(pos)], pos.cells)
    assert sorted(set(r.game.tolist())) == sorted(set(pos.game.tolist()))
    train, val = split_by_game(r, 0.25, seed=3)
    assert len(val) and not set(r.game[train].tolist()) & set(r.game[val].tolist())
    with pytest.raises(ValueError):
        repeat(pos, 0)


def test_gpu_burst_repeat_weighs_a_shard(tmp_path: Path, capsys) -> None:
    """The burst takes ``--repeat SHARD=K`` as ``gomoku train supervised`` does (the burst recipe in
    checkpoints/README.md weighs the DAgger shards so): the shard counts K times among the positions;
    a malformed spec or a shard not in --data is refused before anything trains."""
    from tools.train import gpu_burst
    a, b = tmp_path / "a.npz", tmp_path / "b.npz"
    save_shard(_tiny_positions(12), a)
    save_shard(_tiny_positions(5), b)
    base = ["--data", str(a), str(b), "--steps", "2", "--blocks", "1", "--channels", "8", "--batch", "16",
            "--device", "cpu", "--threads", "1", "--max-seconds", "30", "--val-every", "0"]
    assert gpu_burst.main(base + ["--out", str(tmp_path / "o"), "--repeat", f"{b}=4"]) == 0
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["positions"] == len(load_shard(a)) + 4 * len(load_shard(b))
    capsys.readouterr()
    for bad, says in ((f"{tmp_path / 'c.npz'}=2", "not one of --data"), (f"{b}=0", "K >= 1"), (str(b), "SHARD=K")):
        assert gpu_burst.main(base + ["--out", str(tmp_path / "o2"), "--repeat", bad]) == 2
        err = capsys.readouterr().err
        assert says in err and not (tmp_path / "o2" / "run").exists(), err


def test_train_supervised_cli_repeat(tmp_path: Path, capsys) -> None:
    from tools.cli import main as cli_main
    save_shard(_tiny_positions(20), tmp_path / "a.npz")
    save_shard(_tiny_positions(6), tmp_path / "b.npz")
    base = ["train", "supervised", "--data", str(tmp_path / "a.npz"), str(tmp_path / "b.npz"),
            "--blocks", "1", "--channels", "8", "--batch", "16", "--steps", "2", "--threads", "1",
            "--device", "cpu"]
    assert cli_main(base + ["--run", str(tmp_path / "run"), "--repeat", f"{tmp_path / 'b.npz'}=3"]) == 0
    capsys.readouterr()
    for bad, says in ((f"{tmp_path / 'c.npz'}=2", "not one of --data"), (f"{tmp_path / 'b.npz'}=0", "K >= 1"),
                      (str(tmp_path / "b.npz"), "SHARD=K")):
        assert cli_main(base + ["--run", str(tmp_path / "r2"), "--repeat", bad]) == 2
        assert says in capsys.readouterr().err and not (tmp_path / "r2").exists()


# ---------------------------------------------------------------------------- plots
def test_plot_writes_a_png_from_a_synthetic_log(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="gomoku train plot needs matplotlib (train extra)")
    from tools.train.plot import plot_run
    run = tmp_path / "run"
    (run / "train").mkdir(parents=True)
    with open(run / "train" / "log.jsonl", "w") as f:
        for s in range(1, 11):
            f.write(json.dumps({"step": 100 * s, "policy_loss": 4.0 / s, "value_loss": 1.0 / s})
                    + "\n")
            if s % 5 == 0:
                f.write(json.dumps({"final": True, "step": 100 * s, "val_policy_loss": 4.2 / s,
                                    "val_value_loss": 1.1 / s}) + "\n")
        f.write('{"step": 1100, "policy_lo')          # a torn last line is ignored
    with open(run / "loop.jsonl", "w") as f:
        for i in range(1, 6):
            f.write(json.dumps({"iteration": i, "selfplay": {"games": 10, "positions": 100 + i,
                                                             "draws": i},
                                "train": {"step": 200 * i}, "promoted": i % 2 == 0,
                                "gate": {"decision": "accept", "elo": 10.0 * i,
                                         "ci95": [10.0 * i - 30, 10.0 * i + 30]}}) + "\n")
    with open(run / "curve.jsonl", "w") as f:
        for i in (2, 4):
            f.write(json.dumps({"iteration": i, "opponent": "uniform", "visits": 50,
                                "score": 0.6 + 0.1 * i / 2, "elo": 70.0 * i,
                                "ci95": [70.0 * i - 50, 70.0 * i + 50], "games": 20}) + "\n")
    out = tmp_path / "plots" / "run.png"
    res = plot_run(run, out)
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    import matplotlib.image
    img = matplotlib.image.imread(str(out))
    assert img.shape[0] > 300 and img.shape[1] > 300
    assert res["train_points"] == 10 and res["val_points"] == 2 and res["gate_points"] == 5
    assert res["curve_points"] == {"vs uniform (50 visits)": 2}
    assert res["selfplay_iterations"] == 5
    with pytest.raises(FileNotFoundError):
        plot_run(tmp_path / "empty", tmp_path / "x.png")



# --------------------------------------------------------------------- teacher evaluations
def test_parse_eval_reads_rapfi_messages() -> None:
    from gomoku_ai.training.dataset import parse_eval
    assert parse_eval("Speed 833K | Depth 10-16 | Eval -60 | Node 10K | Time 12ms") == -60.0
    assert parse_eval("Eval 106\nBestline J9") == 106.0
    assert parse_eval("Eval +M5 | Node 1") == math.inf
    assert parse_eval("Eval -M12") == -math.inf
    assert parse_eval("742ms") is None and parse_eval("Evaluation 5") is None


def test_fit_eval_scale_recovers_the_scale_of_the_results() -> None:
    from gomoku_ai.records import GameRecord
    from gomoku_ai.rules import Rule
    from gomoku_ai.training.dataset import fit_eval_scale
    rng = np.random.default_rng(3)
    five_black = [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1), (3, 0), (3, 1), (4, 0)]
    five_white = [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1), (3, 0), (3, 1), (9, 9), (4, 1)]
    recs = []
    for _ in range(400):
        e = float(rng.normal(0, 300))
        black_wins = rng.random() < (1 + math.tanh(e / 250)) / 2   # truth: scale 250
        moves = five_black if black_wins else five_white
        recs.append(GameRecord(15, 15, Rule.FREESTYLE, moves,
                               metadata={"move_comments": {0: f"Eval {e:.0f}", 1: f"Eval {-e:.0f}",
                                                           2: "Eval +M3"}}))
    scale, n = fit_eval_scale(recs)
    assert n == 800 and 170 < scale < 370
    with pytest.raises(ValueError):
        fit_eval_scale([GameRecord(15, 15, Rule.FREESTYLE, five_black)])


def test_lr_schedule_by_time() -> None:
    """With schedule_seconds the cosine follows the further of steps and time."""
    cfg = TrainConfig(steps=10**6, lr=1e-3, lr_min=1e-5, warmup_steps=10, schedule_seconds=100.0)
    assert lr_at(5, cfg, elapsed_s=90.0) == pytest.approx(6e-4)           # the warm-up goes by steps
    assert lr_at(50, cfg, elapsed_s=50.0) == pytest.approx((1e-3 + 1e-5) / 2)
    assert lr_at(50, cfg, elapsed_s=500.0) == pytest.approx(1e-5)
    assert lr_at(50, cfg) == pytest.approx(lr_at(50, TrainConfig(steps=10**6, lr=1e-3, lr_min=1e-5,
                                                                  warmup_steps=10)))
    with pytest.raises(ValueError, match="schedule_seconds"):
        TrainConfig(schedule_seconds=0.0)


def test_time_schedule_ends_on_time_with_a_low_rate(tmp_path: Path) -> None:
    pos = _tiny_positions(20)
    cfg = TrainConfig(steps=10**6, batch_size=16, lr=1e-3, lr_min=1e-5, warmup_steps=2, log_every=1,
                      val_every=0, checkpoint_every=10**6, arch=SMALL, threads=1, device="cpu",
                      schedule_seconds=2.0)
    tr = Trainer(cfg, tmp_path / "run")
    tr.fit(pos)
    assert 2 < tr.step < cfg.steps
    lrs = [r["lr"] for r in map(json.loads, (tmp_path / "run" / "log.jsonl").read_text().splitlines())
           if "lr" in r]
    assert lrs[-1] < 0.1 * cfg.lr
    assert lrs[2:] == sorted(lrs[2:], reverse=True)


def test_best_validation_pass_is_kept_and_exports(tmp_path: Path) -> None:
    from tools.cli import main as cli_main
    pos = _tiny_positions(30)
    cfg = TrainConfig(steps=40, batch_size=32, lr=3e-3, warmup_steps=2, log_every=5, val_every=5,
                      checkpoint_every=40, arch=SMALL, threads=1, val_fraction=0.2, device="cpu")
    Trainer(cfg, tmp_path / "run").fit(pos)
    log = [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    scored = [r for r in log if "val_policy_loss" in r]
    best = min(scored, key=lambda r: r["val_policy_loss"] + r["val_value_loss"])
    state = load_checkpoint(tmp_path / "run" / "best.pt")
    assert state["step"] == best["step"]
    assert state["metrics"]["val_policy_loss"] == best["val_policy_loss"]
    assert cli_main(["train", "export", "--checkpoint", str(tmp_path / "run" / "best.pt"), "--out",
                     str(tmp_path / "m"), "--size", "9x9"]) == 0
    net = load_model(tmp_path / "m")
    model = PolicyValueNet(Arch(**SMALL))
    model.load_state_dict(state["model"])
    model.eval()
    x = encode_batch([Board(9, 9)])
    p, _ = net.forward(x)
    with torch.no_grad():
        pt, _ = model(torch.from_numpy(x))
    assert np.allclose(p, pt.numpy(), atol=1e-4)
    assert json.loads((tmp_path / "m.json").read_text())["board_sizes"] == [[9, 9]]
    # a network trained on several sizes records them all
    assert cli_main(["train", "export", "--checkpoint", str(tmp_path / "run" / "best.pt"), "--out",
                     str(tmp_path / "m2"), "--size", "9", "11x11"]) == 0
    assert json.loads((tmp_path / "m2.json").read_text())["board_sizes"] == [[9, 9], [11, 11]]


def test_bf16_training_learns_and_keeps_float_weights_that_export(tmp_path: Path) -> None:
    """``precision="bf16"`` (autocast, channels-last tower) learns like fp32 and leaves a checkpoint of
    standard-layout float32 tensors that an fp32 run resumes and the exporter turns into the same net."""
    from tools.cli import main as cli_main
    pos = _tiny_positions()
    cfg = TrainConfig(steps=60, batch_size=64, lr=3e-3, warmup_steps=5, log_every=20, val_every=20,
                      checkpoint_every=60, arch=SMALL, threads=1, val_fraction=0.1, device="cpu",
                      precision="bf16")
    tr = Trainer(cfg, tmp_path / "run")
    assert tr.model.stem.conv.weight.is_contiguous(memory_format=torch.channels_last)
    tr.fit(pos)
    log = [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    steps = [r for r in log if "policy_loss" in r]
    assert steps[-1]["policy_loss"] < steps[0]["policy_loss"]
    _assert_start_row_first(log)
    state = load_checkpoint(tmp_path / "run" / "checkpoint.pt")
    assert state["config"]["precision"] == "bf16"
    tensors = list(state["model"].values())
    assert all(t.is_contiguous() for t in tensors)
    assert all(t.dtype == torch.float32 for t in tensors if t.is_floating_point())
    # an fp32 run resumes the bf16 one with its weights bit for bit
    tr2 = Trainer(TrainConfig(**{**cfg.__dict__, "precision": "fp32", "steps": 70}), tmp_path / "run")
    assert tr2.step == 60
    for a, b in zip(tr.model.state_dict().values(), tr2.model.state_dict().values()):
        assert torch.equal(a, b)
    assert cli_main(["train", "export", "--checkpoint", str(tmp_path / "run" / "checkpoint.pt"),
                     "--out", str(tmp_path / "m"), "--size", "9x9"]) == 0
    x = encode_batch(random_boards(4, 9, 9, seed=3))
    tr2.model.eval()
    with torch.no_grad():
        pt, vt = tr2.model(torch.from_numpy(x))
    p, v = load_model(tmp_path / "m").forward(x)
    assert np.allclose(p, pt.numpy(), atol=1e-4) and np.allclose(v, vt.numpy().reshape(v.shape), atol=1e-4)


def test_precision_is_checked(tmp_path: Path, capsys) -> None:
    from tools.cli import main as cli_main
    with pytest.raises(ValueError, match="precision"):
        TrainConfig(precision="fp16")
    save_shard(_tiny_positions(10), tmp_path / "a.npz")
    base = ["train", "supervised", "--data", str(tmp_path / "a.npz"), "--run", str(tmp_path / "r"),
            "--blocks", "1", "--channels", "8", "--batch", "16", "--steps", "2", "--device", "cpu"]
    with pytest.raises(SystemExit):
        cli_main(base + ["--precision", "fp16"])
    capsys.readouterr()
    assert cli_main(base + ["--time-schedule"]) == 2
    assert "--max-seconds" in capsys.readouterr().err and not (tmp_path / "r").exists()
    assert cli_main(base + ["--precision", "bf16", "--time-schedule", "--max-seconds", "60"]) == 0
    assert load_checkpoint(tmp_path / "r" / "checkpoint.pt")["config"]["precision"] == "bf16"
    assert load_checkpoint(tmp_path / "r" / "checkpoint.pt")["config"]["schedule_seconds"] == 60


def test_gpu_sweep_packs_weights_only_checkpoints(tmp_path: Path) -> None:
    """tools/train/gpu_sweep.sh on the CPU with a tiny budget: two networks at once, each returned as a
    best and a last weights-only checkpoint, and the logs in one archive."""
    import os
    import subprocess
    import sys
    import tarfile
    shard = tmp_path / "sl.npz"
    save_shard(_tiny_positions(30), shard)
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "OUT": str(tmp_path / "out"), "WORK": str(tmp_path / "work"),
           "SWEEP": "1x8 2x8", "BURST_SECONDS": "3", "THREADS": "1", "PYTHON": sys.executable}
    r = subprocess.run(["bash", str(root / "tools" / "train" / "gpu_sweep.sh"), "--data", str(shard),
                        "--batch", "16", "--val-every", "5", "--device", "cpu"],
                       cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == ["1x8-best.pt", "1x8-last.pt", "2x8-best.pt",
                                                     "2x8-last.pt", "logs.tar.gz"]
    for a in ("1x8", "2x8"):
        state = load_checkpoint(out / f"{a}-last.pt")
        assert "optimizer" not in state and state["arch"]["channels"] == 8
    with tarfile.open(out / "logs.tar.gz") as t:
        names = t.getnames()
    assert "./2x8/summary.json" in names and not any(n.endswith(".pt") for n in names)
    env["SWEEP"] = "1x8 1x8 1x8 1x8"
    r = subprocess.run(["bash", str(root / "tools" / "train" / "gpu_sweep.sh")], cwd=root, env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "at most 3" in r.stderr


def test_a_resumed_run_keeps_its_best_pass_unless_beaten(tmp_path: Path) -> None:
    pos = _tiny_positions(30)
    cfg = TrainConfig(steps=20, batch_size=32, lr=3e-3, warmup_steps=2, log_every=5, val_every=5,
                      checkpoint_every=20, arch=SMALL, threads=1, val_fraction=0.2, device="cpu")
    Trainer(cfg, tmp_path / "run").fit(pos)
    before = load_checkpoint(tmp_path / "run" / "best.pt")
    # resume with a learning rate that wrecks the network: its passes must not replace best.pt
    cfg2 = TrainConfig(**{**cfg.__dict__, "steps": 30, "lr": 5.0, "lr_min": 5.0, "warmup_steps": 0})
    tr = Trainer(cfg2, tmp_path / "run")
    assert tr.step == 20
    tr.fit(pos)
    after = load_checkpoint(tmp_path / "run" / "best.pt")
    assert after["step"] == before["step"] and after["metrics"] == before["metrics"]
