"""Network inference without torch: encoding, symmetries, BN folding, the numpy backend against an
independent direct-convolution reference with explicit BatchNorm, onnxruntime against numpy on
several board shapes, and the model file format (sha256 checks, corrupt files)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gomoku_ai.board import Board
from gomoku_ai.net import (PLANE_NAMES, Arch, ModelError, encode, encode_batch, export_model,
                           fold_batchnorm, load_model, network_from_weights, random_model)
from gomoku_ai.net.numpy_backend import NumpyBackend
from gomoku_ai.net.symmetries import (augment, inverse, move_permutation, symmetry_ids,
                                      transform_move, transform_planes, transform_policy,
                                      transformed_shape, untransform_policy)
from gomoku_ai.rules import BLACK, WHITE

try:
    import onnx  # noqa: F401
    import onnxruntime  # noqa: F401
    HAVE_ONNX = True
except ImportError:
    HAVE_ONNX = False
needs_onnx = pytest.mark.skipif(
    not HAVE_ONNX, reason="needs the 'onnx' package (to export the graph) and onnxruntime; "
                          "install the dev extra")

ROOT = Path(__file__).resolve().parents[1]
SHAPES = [(15, 15), (20, 20), (9, 12)]  # (H, W): 15x15, 20x20 and a 12-wide, 9-high board


# ------------------------------------------------------------------------------------ helpers
def random_board(rng: np.random.Generator, w: int, h: int, n_moves: int, walls: int = 0) -> Board:
    """A board after ``n_moves`` random moves (no win check needed for encoding tests)."""
    b = Board(w, h)
    free = list(rng.permutation(w * h))
    for _ in range(walls):
        b.put_wall(int(free.pop()))
    for _ in range(n_moves):
        b.push(int(free.pop()))
    return b


def ref_conv(x: np.ndarray, w: np.ndarray, b=None) -> np.ndarray:
    """Direct 'same' convolution (cross-correlation, as torch/ONNX), NCHW, float64: one einsum
    per kernel tap over a zero-padded input."""
    k = w.shape[2]
    p = k // 2
    n, _, h, wd = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    out = np.zeros((n, w.shape[0], h, wd))
    for dy in range(k):
        for dx in range(k):
            out += np.einsum("nchw,oc->nohw", xp[:, :, dy:dy + h, dx:dx + wd], w[:, :, dy, dx])
    if b is not None:
        out += b[None, :, None, None]
    return out


def ref_bn(y: np.ndarray, uw: dict, name: str, eps: float = 1e-5) -> np.ndarray:
    g, beta, mean, var = (np.asarray(uw[f"{name}.bn.{p}"], np.float64)
                          for p in ("gamma", "beta", "mean", "var"))
    sh = (1, -1, 1, 1)
    return (y - mean.reshape(sh)) / np.sqrt(var.reshape(sh) + eps) * g.reshape(sh) \
        + beta.reshape(sh)


def ref_forward(uw: dict, x: np.ndarray):
    """The architecture spelled out layer by layer on *unfolded* weights, in float64."""
    uw = {k: np.asarray(v, np.float64) for k, v in uw.items()}
    relu = lambda a: np.maximum(a, 0.0)  # noqa: E731
    cbr = lambda a, name: ref_bn(ref_conv(a, uw[f"{name}.w"]), uw, name)  # noqa: E731
    a = relu(cbr(np.asarray(x, np.float64), "stem"))
    i = 0
    while f"block{i}.conv1.w" in uw:
        h = relu(cbr(a, f"block{i}.conv1"))
        a = relu(cbr(h, f"block{i}.conv2") + a)
        i += 1
    p = relu(cbr(a, "policy.conv1"))
    p = ref_conv(p, uw["policy.conv2.w"], uw["policy.conv2.b"])
    n, _, h, w = p.shape
    logits = p.reshape(n, h * w)
    v = relu(cbr(a, "value.conv1"))
    feats = np.concatenate([v.mean(axis=(2, 3)), v.max(axis=(2, 3))], axis=1)
    f1 = relu(feats @ uw["value.fc1.w"].T + uw["value.fc1.b"])
    value = np.tanh(f1 @ uw["value.fc2.w"].T + uw["value.fc2.b"])[:, 0]
    return logits, value


@pytest.fixture(scope="module")
def small_unfolded():
    return random_model(blocks=2, channels=16, head_channels=8, value_fc=16, seed=3)


@pytest.fixture(scope="module")
def exported(tmp_path_factory, small_unfolded):
    """A small model exported with its .onnx graph (skipped without onnx)."""
    if not HAVE_ONNX:
        pytest.skip("needs the 'onnx' package to export the graph; install the dev extra")
    d = tmp_path_factory.mktemp("model")
    export_model(fold_batchnorm(small_unfolded),
                 {"name": "small", "version": "t1", "board_sizes": [[15, 15]], "notes": "test",
                  "run": {"games": 0}}, d / "small")
    return d / "small"


def _export_numpy_only(tmp_path, uw, name="m"):
    export_model(fold_batchnorm(uw), {"name": name}, tmp_path / name, with_onnx=False)
    return tmp_path / name


# ----------------------------------------------------------------------------------- encoding
def test_encode_known_position():
    b = Board(15)
    for x, y in [(7, 7), (8, 7), (7, 8)]:  # black h8, white i8, black h9
        b.play(b.index(x, y))
    b.put_wall(b.index(0, 0))
    e = encode(b)
    assert e.shape == (5, 15, 15) and e.dtype == np.float32
    assert len(PLANE_NAMES) == 5
    # white to move: own = white stones, opponent = black stones
    assert b.side_to_move == WHITE
    assert np.argwhere(e[0]).tolist() == [[7, 8]]
    assert np.argwhere(e[1]).tolist() == [[7, 7], [8, 7]]
    on = np.ones((15, 15), np.float32)
    on[0, 0] = 0.0
    assert np.array_equal(e[2], on)
    assert not e[3].any()
    assert np.argwhere(e[4]).tolist() == [[8, 7]] and e[4].sum() == 1
    b.play(b.index(3, 2))  # white; now black to move
    e = encode(b)
    assert b.side_to_move == BLACK and (e[3] == 1).all()
    assert np.argwhere(e[0]).tolist() == [[7, 7], [8, 7]]
    assert np.argwhere(e[1]).tolist() == [[2, 3], [7, 8]]
    assert np.argwhere(e[4]).tolist() == [[2, 3]]
    empty = encode(Board(9, 7))
    assert empty.shape == (5, 7, 9) and not empty[[0, 1, 4]].any() and (empty[2:4] == 1).all()


def test_encode_batch_matches_encode_and_out():
    rng = np.random.default_rng(0)
    boards = [random_board(rng, 12, 9, k, walls=k % 3) for k in range(6)]
    batch = encode_batch(boards)
    assert batch.shape == (6, 5, 9, 12)
    for i, b in enumerate(boards):
        assert np.array_equal(batch[i], encode(b))
    out = np.full((5, 9, 12), 7.0, np.float32)
    assert encode(boards[3], out=out) is out and np.array_equal(out, batch[3])
    with pytest.raises(ValueError):
        encode_batch([Board(15), Board(20)])


@pytest.mark.parametrize("native_on", [True, False])
def test_encode_transformed_is_transform_of_encode(monkeypatch, native_on):
    """The leaf encoding of a search (the C core's one pass where built, else numpy) gives exactly
    ``transform_planes(encode(board), k)`` for every symmetry, walls, both sides to move, no stone."""
    from gomoku_ai import native
    from gomoku_ai.net import encoding
    if native_on and native.encoder() is None:
        pytest.skip("the C core is not built (or PYGOMOKU_NATIVE=0)")
    monkeypatch.setattr(encoding, "_NATIVE_ENCODE", native.encoder() if native_on else None)
    rng = np.random.default_rng(5)
    for h, w in SHAPES + [(7, 5)]:
        for n_moves in (0, 1, 8, 23):
            b = random_board(rng, w, h, min(n_moves, h * w - 4), walls=n_moves % 3)
            x = encode(b)
            for k in range(8):       # the transposing ones too: any shape can be turned
                xk = encoding.encode_transformed(b, k)
                assert xk.dtype == np.float32 and xk.flags.c_contiguous
                assert np.array_equal(xk, transform_planes(x, k)), (h, w, n_moves, k)
    with pytest.raises(ValueError):
        encoding.encode_transformed(Board(9), 8)


def test_native_encode_refuses_bad_input():
    from gomoku_ai import native
    fn = native.encoder()
    if fn is None:
        pytest.skip("the C core is not built (or PYGOMOKU_NATIVE=0)")
    b = Board(9, 7)
    good = np.zeros((5, 7, 9), np.float32)
    fn(b._buf, 9, 7, BLACK, -1, 0, good)
    assert good[2].all() and good[3].all() and not good[[0, 1, 4]].any()
    for bad in (np.zeros((5, 7, 9), np.float64), np.zeros((5, 7, 8), np.float32),
                np.zeros((5, 9, 7), np.float32)[:, ::2]):
        with pytest.raises((TypeError, ValueError, BufferError)):
            fn(b._buf, 9, 7, BLACK, -1, 0, bad)
    ro = np.zeros((5, 7, 9), np.float32)
    ro.setflags(write=False)
    with pytest.raises((TypeError, ValueError, BufferError)):
        fn(b._buf, 9, 7, BLACK, -1, 0, ro)
    for args in ((b._buf, 9, 7, 3, -1, 0), (b._buf, 9, 7, BLACK, 63, 0), (b._buf, 9, 7, BLACK, -2, 0),
                 (b._buf, 9, 7, BLACK, -1, 8), (b._buf, 8, 7, BLACK, -1, 0)):
        with pytest.raises(ValueError):
            fn(*args, good)


@pytest.mark.parametrize("h,w", [(15, 15), (9, 12)])
def test_untransform_index_is_untransform_policy(h, w):
    from gomoku_ai.net.symmetries import untransform_index
    rng = np.random.default_rng(h + w)
    for k in range(8):
        h2, w2 = transformed_shape(k, h, w)
        p = rng.random(h2 * w2).astype(np.float32)
        idx = untransform_index(k, h, w)
        assert np.array_equal(p[idx], untransform_policy(p, k, h, w))
        assert not idx.flags.writeable and untransform_index(k, h, w) is idx


# --------------------------------------------------------------------------------- symmetries
def transformed_board(b: Board, k: int) -> Board:
    h2, w2 = transformed_shape(k, b.height, b.width)
    t = Board(w2, h2)
    for m in b._walls:
        t.put_wall(transform_move(m, k, b.height, b.width))
    for m in b.moves:
        t.push(transform_move(m, k, b.height, b.width))
    return t


@pytest.mark.parametrize("h,w", [(15, 15), (9, 12)])
def test_symmetry_of_encoding_and_policy(h, w):
    rng = np.random.default_rng(h * w)
    ids = symmetry_ids(h, w)
    assert len(ids) == (8 if h == w else 4)
    b = random_board(rng, w, h, 17, walls=2)
    x = encode(b)
    p = rng.random(h * w).astype(np.float32)
    for k in ids:
        h2, w2 = transformed_shape(k, h, w)
        xk = transform_planes(x, k)
        # transforming the input = encoding the transformed position
        assert np.array_equal(xk, encode(transformed_board(b, k)))
        perm = move_permutation(k, h, w)
        assert sorted(perm.tolist()) == list(range(h * w))
        assert perm.tolist() == [transform_move(m, k, h, w) for m in range(h * w)]
        pk = transform_policy(p, k, h, w)
        for m in range(h * w):  # the policy moves with the squares it belongs to
            j = int(perm[m])
            assert pk[j] == p[m]
            assert np.array_equal(xk[:, j // w2, j % w2], x[:, m // w, m % w])
        # inverse-consistent: back to the original
        assert inverse(inverse(k)) == k
        assert np.array_equal(untransform_policy(pk, k, h, w), p)
        assert np.array_equal(transform_planes(xk, inverse(k)), x)
        inv_perm = move_permutation(inverse(k), h2, w2)
        assert np.array_equal(inv_perm[perm], np.arange(h * w))
        # one-hot policy target on a played move follows the stone
        m = b.moves[-1]
        onehot = np.zeros(h * w, np.float32)
        onehot[m] = 1
        assert np.argmax(transform_policy(onehot, k, h, w)) == transformed_board(b, k).moves[-1]
    # batched policies and augment()
    pb = rng.random((3, h * w))
    pairs = list(augment(np.stack([x] * 3), pb))
    assert [k for k, _, _ in pairs] == list(ids)
    for k, xk, pk in pairs:
        assert np.array_equal(pk[1], transform_policy(pb[1], k, h, w))
        assert np.array_equal(xk[2], transform_planes(x, k))
    if h != w:
        with pytest.raises(ValueError):
            list(augment(x, p, ids=[4]))


def test_symmetric_evaluation_keeps_legality(small_unfolded):
    net = network_from_weights(fold_batchnorm(small_unfolded))
    b = random_board(np.random.default_rng(5), 12, 9, 20, walls=3)
    legal = b.legal_mask()
    for k in symmetry_ids(9, 12):
        pk, _ = net.evaluate_one(transformed_board(b, k))
        back = untransform_policy(pk, k, 9, 12)
        assert np.allclose(back.sum(), 1.0, atol=1e-5)
        assert not back[~legal].any() and (back[legal] > 0).all()


# ------------------------------------------------------------------------ numerical agreement
@pytest.mark.parametrize("arch", [(2, 16, 8, 16), (6, 64, 32, 64), (0, 8, 4, 8)])
def test_numpy_backend_matches_reference(arch):
    blocks, c, hc, vf = arch
    uw = random_model(blocks=blocks, channels=c, head_channels=hc, value_fc=vf, seed=blocks + 1)
    nb = NumpyBackend(fold_batchnorm(uw), Arch(blocks, c, hc, vf))
    rng = np.random.default_rng(1)
    for h, w in SHAPES if blocks != 6 else [(15, 15)]:
        boards = [random_board(rng, w, h, int(rng.integers(0, 40)), walls=i % 2)
                  for i in range(3)]
        x = encode_batch(boards)
        x[2] = rng.normal(size=x[2].shape)  # arbitrary real inputs too
        lg, v = nb.forward(x)
        rlg, rv = ref_forward(uw, x)
        assert lg.shape == (3, h * w) and v.shape == (3,)
        assert np.abs(lg - rlg).max() < 1e-4, (h, w)
        assert np.abs(v - rv).max() < 1e-4, (h, w)
        assert np.abs(rv).max() < 0.999  # the test would be weak if tanh saturated
        # buffers are reused: a second call with another batch size and back again agrees
        lg1, v1 = nb.forward(x[:1])
        assert np.allclose(lg1, lg[:1], atol=1e-5) and np.allclose(v1, v[:1], atol=1e-6)
        lg2, _ = nb.forward(x)
        assert np.array_equal(lg2, lg)


def test_numpy_backend_from_several_threads(small_unfolded):
    import threading
    net = network_from_weights(fold_batchnorm(small_unfolded))
    rng = np.random.default_rng(8)
    xs = [rng.normal(size=(k + 1, 5, 9, 12)).astype(np.float32) for k in range(4)]
    want = [net.forward(x) for x in xs]
    bad = []

    def work(i):
        for _ in range(15):
            lg, v = net.forward(xs[i])
            if not (np.array_equal(lg, want[i][0]) and np.array_equal(v, want[i][1])):
                bad.append(i)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not bad


def test_fold_batchnorm_with_conv_bias():
    uw = random_model(blocks=1, channels=8, head_channels=4, value_fc=8, seed=9)
    rng = np.random.default_rng(0)
    uw["stem.b"] = rng.normal(size=8).astype(np.float32)  # a conv bias before the BN
    fw = fold_batchnorm(uw)
    x = rng.normal(size=(2, 5, 7, 6)).astype(np.float32)
    y = ref_bn(ref_conv(x.astype(np.float64), uw["stem.w"].astype(np.float64),
                        uw["stem.b"].astype(np.float64)), uw, "stem")
    yf = ref_conv(x.astype(np.float64), fw["stem.w"].astype(np.float64),
                  fw["stem.b"].astype(np.float64))
    assert np.abs(y - yf).max() < 1e-4


@needs_onnx
def test_onnx_matches_numpy(tmp_path):
    uw = random_model(blocks=6, channels=64, seed=11)
    export_model(fold_batchnorm(uw), {"name": "big"}, tmp_path / "big")
    on = load_model(tmp_path / "big", backend="onnx")
    nu = load_model(tmp_path / "big", backend="numpy")
    assert (on.backend, nu.backend) == ("onnx", "numpy")
    rng = np.random.default_rng(2)
    for h, w in SHAPES:
        boards = [random_board(rng, w, h, int(rng.integers(0, 60)), walls=i % 2)
                  for i in range(4)]
        x = encode_batch(boards)
        lo, vo = on.forward(x)
        ln, vn = nu.forward(x)
        assert lo.shape == ln.shape == (4, h * w) and vo.shape == vn.shape == (4,)
        assert np.abs(lo - ln).max() < 1e-4, (h, w)
        assert np.abs(vo - vn).max() < 1e-4, (h, w)
        po, _ = on.evaluate(boards)
        pn, _ = nu.evaluate(boards)
        assert max(np.abs(a - b).max() for a, b in zip(po, pn)) < 1e-4


# ------------------------------------------------------------------------------ evaluate API
def test_evaluate_priors_and_values(small_unfolded):
    net = network_from_weights(fold_batchnorm(small_unfolded))
    rng = np.random.default_rng(4)
    boards = [random_board(rng, 15, 15, 10), random_board(rng, 12, 9, 5, walls=2),
              random_board(rng, 15, 15, 0)]
    priors, values = net.evaluate(boards)
    assert values.shape == (3,) and np.all(np.abs(values) <= 1)
    for b, p in zip(boards, priors):
        legal = b.legal_mask()
        assert p.shape == (b.width * b.height,)
        assert abs(p.sum() - 1) < 1e-5 and not p[~legal].any() and (p[legal] > 0).all()
    # same numbers one at a time, and from forward()
    for b, p, v in zip(boards, priors, values):
        p1, v1 = net.evaluate_one(b)
        assert np.allclose(p1, p, atol=1e-6) and abs(v1 - v) < 1e-6
    lg, _ = net.forward(encode(boards[0])[None])
    z = np.where(boards[0].legal_mask(), lg[0], -np.inf)
    assert np.allclose(np.exp(z - z.max()) / np.exp(z - z.max()).sum(), priors[0], atol=1e-6)
    # sparse form and explicit masks
    sp, _ = net.evaluate(boards[:1], sparse=True)
    moves, probs = sp[0]
    assert np.array_equal(moves, np.flatnonzero(boards[0].legal_mask()))
    assert np.allclose(probs, priors[0][moves])
    mask = np.zeros(225, bool)
    mask[[3, 50]] = True
    pm, _ = net.evaluate(boards[:1], masks=[mask])
    assert np.flatnonzero(pm[0]).tolist() == [3, 50] and abs(pm[0].sum() - 1) < 1e-6
    pz, _ = net.evaluate(boards[:1], masks=[np.zeros(225, bool)])
    assert not pz[0].any()


# ------------------------------------------------------------------------------- file format
@needs_onnx
def test_export_and_load(exported):
    cfg = json.loads(exported.with_suffix(".json").read_text())
    assert cfg["format_version"] == 1 and cfg["name"] == "small" and cfg["version"] == "t1"
    assert cfg["input_planes"] == list(PLANE_NAMES) and cfg["board_sizes"] == [[15, 15]]
    assert (cfg["blocks"], cfg["channels"], cfg["head_channels"], cfg["value_fc"]) == (2, 16, 8,
                                                                                        16)
    assert set(cfg["sha256"]) == {"npz", "onnx"} and cfg["run"] == {"games": 0}
    assert sorted(p.name for p in exported.parent.iterdir()) == ["small.json", "small.npz",
                                                                  "small.onnx"]
    import onnx as onnx_pkg
    m = onnx_pkg.load(str(exported) + ".onnx")
    assert [i.name for i in m.graph.input] == ["input"]
    assert [o.name for o in m.graph.output] == ["policy", "value"]
    dims = [d.dim_param or d.dim_value for d in m.graph.input[0].type.tensor_type.shape.dim]
    assert dims == ["N", 5, "H", "W"]
    for name in (exported, str(exported) + ".json", str(exported) + ".npz"):
        assert load_model(name, backend="auto").backend == "onnx"
    with np.load(str(exported) + ".npz") as z:
        assert "stem.w" in z.files and "block1.conv2.b" in z.files and "value.fc2.w" in z.files
        assert not any(".bn." in k for k in z.files)


def test_model_folder_and_numpy_only(tmp_path, small_unfolded):
    d = tmp_path / "mymodel"
    d.mkdir()
    export_model(fold_batchnorm(small_unfolded), {"name": "folder"}, d, with_onnx=False)
    assert (d / "mymodel.json").is_file() and not (d / "mymodel.onnx").exists()
    net = load_model(d)  # auto: no .onnx recorded -> numpy
    assert net.backend == "numpy" and net.name == "folder"
    with pytest.raises(ModelError, match="no .onnx"):
        load_model(d, backend="onnx")


def test_sha256_mismatch_refused(tmp_path, small_unfolded):
    base = _export_numpy_only(tmp_path, small_unfolded, "a")
    other = _export_numpy_only(tmp_path, random_model(2, 16, 8, 16, seed=99), "b")
    # swap in another model's (valid) weights
    Path(str(other) + ".npz").replace(str(base) + ".npz")
    with pytest.raises(ModelError, match=r"a\.npz: sha256 .* does not match"):
        load_model(base)


def test_corrupt_npz_refused_with_file_named(tmp_path, small_unfolded):
    base = _export_numpy_only(tmp_path, small_unfolded)
    npz = Path(str(base) + ".npz")
    data = bytearray(npz.read_bytes())
    data[len(data) // 2: len(data) // 2 + 64] = b"\x00" * 64
    npz.write_bytes(bytes(data))
    with pytest.raises(ModelError) as ei:
        load_model(base)
    assert str(npz) in str(ei.value) and "sha256" in str(ei.value)
    # corrupt *and* re-hashed (the sha matches): still refused, naming the file
    jpath = Path(str(base) + ".json")
    cfg = json.loads(jpath.read_text())
    import hashlib
    npz.write_bytes(b"PK\x03\x04 this is not a zip archive")
    cfg["sha256"]["npz"] = hashlib.sha256(npz.read_bytes()).hexdigest()
    jpath.write_text(json.dumps(cfg))
    with pytest.raises(ModelError) as ei:
        load_model(base)
    assert str(npz) in str(ei.value) and "not a readable .npz" in str(ei.value)
    npz.unlink()
    with pytest.raises(ModelError, match="not found"):
        load_model(base)


def test_wrong_weights_and_config_refused(tmp_path, small_unfolded):
    fw = fold_batchnorm(small_unfolded)
    with pytest.raises(ModelError, match="channels"):
        export_model(fw, {"channels": 32}, tmp_path / "x", with_onnx=False)
    bad = dict(fw)
    del bad["value.fc1.b"]
    with pytest.raises(ModelError, match="value.fc1.b"):
        export_model(bad, {}, tmp_path / "x", with_onnx=False)
    bad = dict(fw)
    bad["stem.b"] = np.zeros(3, np.float32)
    with pytest.raises(ModelError, match="stem.b"):
        export_model(bad, {}, tmp_path / "x", with_onnx=False)
    base = _export_numpy_only(tmp_path, small_unfolded, "enc")
    jpath = Path(str(base) + ".json")
    cfg = json.loads(jpath.read_text())
    cfg["input_planes"] = cfg["input_planes"][:4]
    jpath.write_text(json.dumps(cfg))
    with pytest.raises(ModelError, match="encoding"):
        load_model(base)
    with pytest.raises(ModelError, match="not found"):
        load_model(tmp_path / "nothing")
    assert not [p for p in tmp_path.iterdir() if ".tmp" in p.name]


@needs_onnx
def test_corrupt_onnx_refused(tmp_path, small_unfolded):
    export_model(fold_batchnorm(small_unfolded), {}, tmp_path / "o")
    onnx_path = tmp_path / "o.onnx"
    onnx_path.write_bytes(onnx_path.read_bytes()[:-10])
    with pytest.raises(ModelError) as ei:
        load_model(tmp_path / "o", backend="onnx")
    assert str(onnx_path) in str(ei.value)
    assert load_model(tmp_path / "o", backend="numpy").backend == "numpy"


@needs_onnx
def test_loading_imports_neither_torch_nor_onnx(exported):
    code = ("import sys; from gomoku_ai.net import load_model; "
            f"n = load_model({str(exported)!r}); n.forward(__import__('numpy').zeros((1,5,9,9),"
            "'float32')); print(n.backend, 'onnx' in sys.modules, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["onnx", "False", "False"]


# ------------------------------------------------------------------------- shipped models (index)
def _models_folder(tmp_path, uw, index, models=None):
    """A models folder (``PYGOMOKU_MODELS`` points at it) with small numpy-only models and ``index``
    (a dict, or raw text for a malformed one). ``models``: {name: board_sizes}."""
    from gomoku_ai.net import fold_batchnorm as fold
    d = tmp_path / "models"
    d.mkdir()
    folded = fold(uw)
    for name, sizes in (models or {}).items():
        export_model(folded, {"name": name, "board_sizes": sizes, "notes": f"notes of {name}"},
                     d / name, with_onnx=False)
    (d / "index.json").write_text(index if isinstance(index, str) else json.dumps(index),
                                  encoding="utf-8")
    return d


@pytest.fixture
def models_env(monkeypatch, tmp_path, small_unfolded):
    """``make(index, models)`` -> a models folder that :func:`gomoku_ai.shipped.models_dir` finds."""
    def make(index, models=None):
        d = _models_folder(tmp_path, small_unfolded, index, models)
        monkeypatch.setenv("PYGOMOKU_MODELS", str(d))
        return d
    return make


FIVE = {"m15": [[15, 15]], "m8": [[8, 8]], "renju": [[15, 15]], "renju20": [[20, 20]],
        "std97": [[9, 7]]}


def test_shipped_lookup_order_rule_at_size_then_rule_then_freestyle(models_env):
    from gomoku_ai.rules import Rule
    from gomoku_ai.shipped import default_model, index_keys, models_dir
    d = models_env({"freestyle": "m15", "Freestyle@8x8": "m8", "renju": "renju", "renju@20x20": "renju20",
                    "standard@9x7": "std97", "caro@8x8": "missing"}, FIVE)
    assert models_dir() == d
    assert index_keys(Rule.RENJU, 8) == ["renju@8x8", "renju", "freestyle@8x8", "freestyle"]

    def pick(rule, w, h=None):
        p = default_model(rule, w, h)
        return None if p is None else p.relative_to(d).as_posix()
    assert pick(Rule.FREESTYLE, 15) == "m15"
    assert pick(Rule.FREESTYLE, 20) == "m15"          # no freestyle@20x20: the freestyle one
    assert pick(Rule.FREESTYLE, 8) == "m8"            # keys are case-insensitive
    assert pick(Rule.FREESTYLE, 8, 9) == "m15"        # 8x9 is not 8x8
    assert pick(Rule.RENJU, 20) == "renju20"          # rule@WxH first
    assert pick(Rule.RENJU, 15) == "renju"            # then the rule
    assert pick(Rule.RENJU, 8) == "renju"             # the rule before freestyle@WxH
    assert pick(Rule.STANDARD, 8) == "m8"             # no standard key: freestyle@WxH
    assert pick(Rule.STANDARD, 9, 7) == "std97"
    assert pick(Rule.STANDARD, 7, 9) == "m15"
    assert pick(Rule.STANDARD, 15) == "m15"           # then freestyle
    assert pick(Rule.CARO, 8) == "m8"                 # caro@8x8 names a missing model: skipped
    assert default_model() == d / "m15"               # old call: freestyle, 15x15


def test_shipped_old_style_index_with_rule_keys_only(models_env):
    from gomoku_ai.rules import Rule
    from gomoku_ai.shipped import default_model, load_player
    d = models_env({"freestyle": "m15", "renju": "renju"}, FIVE)
    assert default_model(Rule.FREESTYLE) == d / "m15"
    assert default_model(Rule.FREESTYLE, 8) == d / "m15"
    assert default_model(Rule.RENJU, 8) == d / "renju"
    assert default_model(Rule.CARO, 20) == d / "m15"
    p = load_player(None, Rule.RENJU)                 # the old positional call
    assert p.evaluator.network.basename == d / "renju"


@pytest.mark.parametrize("index", ["[1, 2", '["m15"]', '{"freestyle": 3, "freestyle@8x8": "../m8"}', "{}"])
def test_shipped_malformed_index_falls_back_to_the_heuristic(models_env, index):
    from gomoku_ai.evaluator import HeuristicEvaluator
    from gomoku_ai.rules import Rule
    from gomoku_ai.shipped import default_model, list_models, load_evaluator, load_player
    models_env(index, FIVE)
    assert default_model(Rule.FREESTYLE, 8) is None
    assert isinstance(load_evaluator(None, Rule.FREESTYLE, width=8), HeuristicEvaluator)
    assert load_player(None, Rule.RENJU, width=20).evaluator.name == "heuristic"
    assert [m["name"] for m in list_models()] == sorted(FIVE)   # still listed, named by no key
    assert all(m["index_keys"] == [] for m in list_models())


def test_shipped_bad_entries_are_skipped_the_rest_is_used(models_env):
    from gomoku_ai.rules import Rule
    from gomoku_ai.shipped import default_model
    d = models_env({"freestyle": ["m15"], "freestyle@8x8": "../m8", "renju": "renju"}, FIVE)
    assert default_model(Rule.RENJU, 8) == d / "renju"
    assert default_model(Rule.FREESTYLE, 8) is None


def test_shipped_bare_names_paths_and_heuristic(models_env, tmp_path, monkeypatch):
    from gomoku_ai.rules import Rule
    from gomoku_ai.shipped import load_player, model_choice, resolve_model
    d = models_env({"freestyle": "m15"}, FIVE)
    monkeypatch.chdir(tmp_path)                       # "m8" is not a path from here
    assert resolve_model("m8") == d / "m8"
    assert resolve_model("m8.json") == d / "m8"
    assert resolve_model(str(d / "m8.json")) == d / "m8"
    assert resolve_model(d / "m8") == d / "m8"
    assert resolve_model("models/m8") == Path("models/m8")   # a relative path (tmp_path/models)
    assert model_choice("HEURISTIC") == "heuristic"
    # an explicit model wins over the index, whatever the rule and size
    p = load_player("m8", Rule.RENJU, width=15)
    assert p.evaluator.network.basename == d / "m8"
    p = load_player(str(d / "renju.json"), Rule.FREESTYLE, width=8)
    assert p.evaluator.network.basename == d / "renju"
    assert load_player("heuristic", Rule.FREESTYLE, width=8).evaluator.name == "heuristic"


def test_shipped_missing_model_is_a_clear_error(models_env, tmp_path, monkeypatch):
    from gomoku_ai.rules import Rule
    from gomoku_ai.shipped import ModelNotFoundError, load_evaluator, load_player, resolve_model
    d = models_env({"freestyle": "m15"}, FIVE)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ModelNotFoundError) as ei:
        load_player("nope", Rule.FREESTYLE, width=8)
    msg = str(ei.value)
    assert "'nope'" in msg and "nope.json" in msg and str(d / "nope.json") in msg
    assert "m15" in msg and "m8" in msg               # what there is instead
    assert isinstance(ei.value, FileNotFoundError) and isinstance(ei.value, ValueError)
    with pytest.raises(ModelNotFoundError, match="elsewhere"):
        load_evaluator(str(tmp_path / "elsewhere" / "m8.json"))   # a path is not looked up by name
    with pytest.raises(ModelNotFoundError):
        resolve_model("")


def test_shipped_list_models_and_factory_keys(models_env):
    from gomoku_ai.rules import Rule
    from gomoku_ai.shipped import PlayerFactory, format_models, list_models
    d = models_env({"freestyle": "m15", "standard": "m15", "freestyle@8x8": "m8"}, FIVE)
    ms = {m["name"]: m for m in list_models()}
    assert sorted(ms) == sorted(FIVE)
    assert ms["m8"]["board_sizes"] == [[8, 8]] and ms["m8"]["notes"] == "notes of m8"
    assert ms["m15"]["index_keys"] == ["freestyle", "standard"] and ms["m8"]["index_keys"] == ["freestyle@8x8"]
    assert ms["m8"]["path"] == d / "m8"
    text = format_models()
    assert "m8  (8x8)  [index: freestyle@8x8]  notes of m8" in text.splitlines()
    f = PlayerFactory()
    assert f.key(Rule.FREESTYLE, 15, 15) == f.key(Rule.FREESTYLE, 20, 20)   # one network: kept
    assert f.key(Rule.FREESTYLE, 8, 8) != f.key(Rule.FREESTYLE, 15, 15)
    assert f.key(Rule.STANDARD, 15, 15) != f.key(Rule.FREESTYLE, 15, 15)     # a new rule: a new player
    assert f(Rule.FREESTYLE, 8, 8).evaluator.network.basename == d / "m8"
    assert PlayerFactory("m8").key(Rule.FREESTYLE, 15, 15) == (Rule.FREESTYLE, str(d / "m8"))


def test_shipped_repository_index_picks_by_rule_and_size(monkeypatch):
    from gomoku_ai.rules import Rule
    from gomoku_ai.shipped import default_model, list_models, models_dir
    for var in ("PYGOMOKU_MODELS", "PYGOMOKU_HOME"):
        monkeypatch.delenv(var, raising=False)
    assert models_dir() == ROOT / "models"
    assert default_model(Rule.FREESTYLE, 8).name == "gomoku8-4x32"
    assert default_model(Rule.FREESTYLE, 15).name == "freestyle15-5x48-ft"    # its 15x15 fine-tune
    assert default_model(Rule.FREESTYLE, 16).name == "freestyle-5x48-mix"     # other sizes: "freestyle"
    assert default_model(Rule.FREESTYLE, 20).name == "freestyle20-5x48-ft2"   # its 20x20 fine-tune
    assert default_model(Rule.FREESTYLE, 20, 15).name == "freestyle-5x48-mix"
    assert default_model(Rule.STANDARD, 20).name == "freestyle15-4x32"        # "standard" first
    assert default_model(Rule.FREESTYLE, 10).name == "freestyle-5x48-mix"     # gomoku10 not indexed
    assert default_model(Rule.RENJU, 15).name == "freestyle15-4x32"           # measured under renju
    assert default_model(Rule.STANDARD, 8).name == "freestyle15-4x32"
    sizes = {m["name"]: m["board_sizes"] for m in list_models()}
    assert sizes["gomoku8-4x32"] == [[8, 8]] and sizes["freestyle15-4x32"] == [[15, 15]]
    assert sizes["gomoku10-4x32"] == [[10, 10]] and sizes["freestyle15-4x32-sp"] == [[15, 15]]
    assert sizes["freestyle15-5x48-sl"] == [[15, 15]]
    assert sizes["freestyle-5x48-mix"] == [[15, 15], [20, 20]]
    assert sizes["freestyle15-5x48-ft"] == [[15, 15]]
    assert sizes["freestyle20-5x48-ft"] == [[20, 20], [15, 15]]
    assert sizes["freestyle20-5x48-ft2"] == [[20, 20], [15, 15]]
    assert sizes["freestyle20-4x32-sp"] == [[20, 20]]


def test_one_numbering_for_openings_schedule_and_gate():
    """The tournament schedule's opening transforms and the gate's opening images are the
    transforms of gomoku_ai.net.symmetries (recorded as ``transform`` in results.jsonl)."""
    from gomoku_ai.board import Board
    from gomoku_ai.training.gating import gate_openings
    from tools.tournament.schedule import transform_point
    for k in range(8):
        for x, y in ((0, 0), (3, 1), (14, 2)):
            m = transform_move(y * 15 + x, k, 15, 15)
            assert transform_point(x, y, 15, 15, k) == (m % 15, m // 15)
    with pytest.raises(ValueError):
        transform_point(1, 1, 15, 9, 4)          # a transpose does not keep 15x9
    assert transform_point(1, 2, 15, 9, 3) == (13, 6)
    ops, _ = gate_openings([[(0, 0), (1, 0)]], Board(7, 7, n=4), 8, seed=1)
    images = {tuple(transform_move(m, k, 7, 7) for m in (0, 1)) for k in range(8)}
    assert set(ops) == images
