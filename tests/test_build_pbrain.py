"""``gomoku build-pbrain`` (tools/build_pbrain.py): the PyInstaller command it builds, the model data it picks,
and (only with ``PYGOMOKU_TEST_BUILD=1`` and PyInstaller installed, since a build takes a while) a real
one-folder build that is started and played like GomocupJudge does."""
from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

from tools import build_pbrain as bp
from tools.cli import build_parser
from tools.cli import main as cli_main


def _model(folder: Path, name: str, onnx: bool = True) -> Path:
    """Fake model files (content is not read by the builder)."""
    folder.mkdir(parents=True, exist_ok=True)
    for suffix in (".json", ".npz") + ((".onnx",) if onnx else ()):
        (folder / (name + suffix)).write_bytes(b"{}" if suffix == ".json" else b"x")
    return folder / name


def _models_folder(tmp_path: Path, index: dict) -> Path:
    d = tmp_path / "models"
    for name in set(index.values()):
        _model(d, name)
    (d / "index.json").write_text(json.dumps(index), encoding="utf-8")
    return d


def _pairs(args, flag):
    return [args[i + 1] for i, a in enumerate(args) if a == flag]


def _spec(tmp_path, **kw):
    kw.setdefault("models_root", tmp_path / "no-models")
    return bp.make_spec(out=str(tmp_path / "dist"), work=str(tmp_path / "work"), **kw)


# ------------------------------------------------------------------------------------------ names, paths
@pytest.mark.parametrize("given,name", [("pygomoku", "pygomoku"), ("pbrain-Foo", "Foo"), ("Foo64.exe", "Foo64"),
                                        ("PBRAIN-a_b.c-1.exe", "a_b.c-1")])
def test_name_is_normalized(given, name):
    assert bp.check_name(given) == name


@pytest.mark.parametrize("bad", ["", "pbrain-", "two words", "a/b", "é", "x;y"])
def test_bad_names_are_refused(bad):
    with pytest.raises(bp.BuildError):
        bp.check_name(bad)


def test_exe_paths_per_layout_and_platform(tmp_path):
    s = _spec(tmp_path, platform="linux")
    assert s.exe_path == tmp_path / "dist" / "pbrain-pygomoku" / "pbrain-pygomoku"
    s = _spec(tmp_path, name="Foo", onefile=True, platform="win32")
    assert s.exe_path == s.bundle_path == tmp_path / "dist" / "pbrain-Foo.exe"
    s = _spec(tmp_path, platform="win32")
    assert s.exe_path == tmp_path / "dist" / "pbrain-pygomoku" / "pbrain-pygomoku.exe"


# ------------------------------------------------------------------------------------------ modules
def test_hidden_imports_cover_lazy_runtime_modules():
    mods = bp.runtime_modules()
    for m in ("protocol", "protocol.brain", "protocol.stdio", "protocol.lines", "protocol.fallback",
              "protocol.testplayers", "gomoku_ai", "gomoku_ai.shipped", "gomoku_ai.renju", "gomoku_ai.tactics",
              "gomoku_ai.player", "gomoku_ai.timeman", "gomoku_ai.net", "gomoku_ai.net.onnx_backend",
              "gomoku_ai.net.numpy_backend", "gomoku_ai.net.model", "gomoku_ai.net.encoding"):
        assert m in mods, m
    assert not [m for m in mods if m.startswith(("gomoku_ai.training", "tools"))]
    from gomoku_ai import native
    assert ("gomoku_ai._native" in mods) == (native._c is not None)   # the C core, where built


def test_pyinstaller_args_default(tmp_path):
    s = _spec(tmp_path)
    args = bp.pyinstaller_args(s)
    assert args[0] == str(bp.ROOT / "engine.py")
    assert _pairs(args, "--name") == ["pbrain-pygomoku"]
    assert "--onedir" in args and "--onefile" not in args
    assert _pairs(args, "--distpath") == [str(tmp_path / "dist")]
    assert _pairs(args, "--workpath") == _pairs(args, "--specpath") == [str(tmp_path / "work")]
    hidden, excluded = set(_pairs(args, "--hidden-import")), set(_pairs(args, "--exclude-module"))
    assert {"onnxruntime", "numpy", "protocol.stdio", "gomoku_ai.renju", "gomoku_ai.net.onnx_backend"} <= hidden
    assert {"torch", "onnx", "tkinter", "matplotlib", "gomoku_ai.training", "tools"} <= excluded
    assert not hidden & excluded
    assert not {"onnxruntime", "numpy"} & excluded
    assert _pairs(args, "--add-data") == []  # no models/index.json here: no model
    assert "no model" in s.model_note


def test_onefile_and_no_onnxruntime(tmp_path):
    d = _models_folder(tmp_path, {"freestyle": "gm"})
    s = _spec(tmp_path, onefile=True, onnxruntime=False, models_root=d)
    args = bp.pyinstaller_args(s)
    assert "--onefile" in args and "--onedir" not in args
    assert "onnxruntime" in _pairs(args, "--exclude-module")
    assert "onnxruntime" not in _pairs(args, "--hidden-import")
    data = _pairs(args, "--add-data")
    assert not [a for a in data if ".onnx" in a]
    assert any(a.startswith(str(d / "gm.npz")) for a in data)


# ------------------------------------------------------------------------------------------ models
def test_models_folder_is_shipped_as_data(tmp_path):
    d = _models_folder(tmp_path, {"freestyle": "gm15", "renju": "rj15", "standard": "gm15"})
    _model(d, "stale")  # not named by the index: left out
    s = _spec(tmp_path, models_root=d)
    data = _pairs(bp.pyinstaller_args(s), "--add-data")
    expected = {str(d / f) for f in ("index.json", "gm15.json", "gm15.npz", "gm15.onnx",
                                     "rj15.json", "rj15.npz", "rj15.onnx")}
    assert {a.rsplit(os.pathsep, 1)[0] for a in data} == expected
    assert all(a.endswith(os.pathsep + "models") for a in data)
    assert s.models == ["gm15", "rj15"]


@pytest.mark.parametrize("how", ["basename", "json", "folder"])
def test_one_model_gets_a_generated_index(tmp_path, how):
    base = _model(tmp_path / "run" / "best", "best")
    arg = {"basename": base, "json": base.with_suffix(".json"), "folder": base.parent}[how]
    s = _spec(tmp_path, model=str(arg))
    data = [a.rsplit(os.pathsep, 1)[0] for a in _pairs(bp.pyinstaller_args(s), "--add-data")]
    index = Path(data[0])
    assert index.name == "index.json" and index.parent == tmp_path / "work" / "models"
    assert json.loads(index.read_text(encoding="utf-8")) == {"freestyle": "best"}
    assert data[1:] == [str(base) + s for s in (".json", ".npz", ".onnx")]
    assert s.models == ["best"]


def test_an_int8_graph_ships_with_its_model(tmp_path):
    """A quantised model's .int8.onnx is shipped beside its other files when its json records it (not
    without onnxruntime), and a model may be named by that file."""
    base = _model(tmp_path / "run" / "best", "best")
    (base.parent / "best.int8.onnx").write_bytes(b"x")
    s = _spec(tmp_path, model=str(base))                # not recorded in the json: stale, left out
    data = [a.rsplit(os.pathsep, 1)[0] for a in _pairs(bp.pyinstaller_args(s), "--add-data")]
    assert data[1:] == [str(base) + s for s in (".json", ".npz", ".onnx")]
    (base.parent / "best.json").write_text(json.dumps({"sha256": {"npz": "a", "onnx": "b", "onnx_int8": "c"}}))
    for arg in (base, base.parent / "best.int8.onnx"):
        s = _spec(tmp_path, model=str(arg))
        data = [a.rsplit(os.pathsep, 1)[0] for a in _pairs(bp.pyinstaller_args(s), "--add-data")]
        assert data[1:] == [str(base) + s for s in (".json", ".npz", ".onnx", ".int8.onnx")]
        assert s.models == ["best"]
    s = _spec(tmp_path, model=str(base), onnxruntime=False)
    data = [a.rsplit(os.pathsep, 1)[0] for a in _pairs(bp.pyinstaller_args(s), "--add-data")]
    assert data[1:] == [str(base) + ".json", str(base) + ".npz"]


def test_model_as_models_folder_and_no_model(tmp_path):
    d = _models_folder(tmp_path, {"freestyle": "gm"})
    s = _spec(tmp_path, model=str(d))
    assert s.models == ["gm"]
    s = _spec(tmp_path, models_root=d, no_model=True)
    assert s.datas == [] and "--no-model" in s.model_note


@pytest.mark.parametrize("case", ["missing-model", "no-weights", "bad-index", "subfolder"])
def test_bad_models_are_refused(tmp_path, case):
    d = tmp_path / "models"
    d.mkdir()
    if case == "missing-model":
        (d / "index.json").write_text('{"freestyle": "nope"}')
    elif case == "no-weights":
        (d / "gm.json").write_text("{}")
        (d / "index.json").write_text('{"freestyle": "gm"}')
    elif case == "bad-index":
        (d / "index.json").write_text("[1, 2")
    else:
        _model(d / "sub", "gm")
        (d / "index.json").write_text('{"freestyle": "sub/gm"}')
    with pytest.raises(bp.BuildError):
        _spec(tmp_path, models_root=d)


# ------------------------------------------------------------------------------------------ command line
def test_cli_parses_build_pbrain():
    a = build_parser().parse_args(["build-pbrain", "--name", "x", "--onefile", "--out", "o", "--no-model", "--zip"])
    assert (a.command, a.name, a.onefile, a.out, a.no_model, a.model, a.zip) == ("build-pbrain", "x", True, "o",
                                                                                 True, None, True)
    with pytest.raises(SystemExit):
        build_parser().parse_args(["build-pbrain", "--model", "m", "--no-model"])


def test_cli_dry_run_prints_the_command(tmp_path, capsys):
    assert cli_main(["build-pbrain", "--dry-run", "--no-model", "--out", str(tmp_path / "d"),
                     "--work", str(tmp_path / "w")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["exe"].endswith("pbrain-pygomoku")
    assert out["command"][1:3] == ["-m", "PyInstaller"] and "--exclude-module" in out["command"]
    assert not (tmp_path / "d").exists()


def test_cli_reports_errors(tmp_path, capsys):
    assert cli_main(["build-pbrain", "--dry-run", "--name", "bad name"]) == 1
    assert "bad brain name" in capsys.readouterr().err


def test_build_without_pyinstaller_says_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.setattr(bp, "pyinstaller_available", lambda: False)
    with pytest.raises(bp.BuildError, match="pip install"):
        bp.build(_spec(tmp_path))


def test_bundle_bytes(tmp_path):
    (tmp_path / "a").write_bytes(b"12345")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b").write_bytes(b"123")
    assert bp.bundle_bytes(tmp_path) == 8
    assert bp.bundle_bytes(tmp_path / "a") == 5


# ------------------------------------------------------------------------------------------ a real build
@pytest.mark.slow
@pytest.mark.skipif(not bp.pyinstaller_available(), reason="PyInstaller is not installed (pip install -e .[build])")
@pytest.mark.skipif(os.environ.get("PYGOMOKU_TEST_BUILD") != "1",
                    reason="a real PyInstaller build takes 10-60 s: set PYGOMOKU_TEST_BUILD=1 to run it")
def test_build_and_play(tmp_path):
    """Build a one-folder brain with a small random model, start it as GomocupJudge does (START and INFO at
    once, BEGIN) and play a few moves: it answers OK and legal moves, leaves stderr empty, runs as one process,
    loads the bundled model (onnxruntime when .onnx is shipped) and plays exactly as ``python engine.py`` with
    the same model."""
    from gomoku_ai.net import export_model, fold_batchnorm, random_model
    try:
        import onnx  # noqa: F401
        with_onnx = True
    except ImportError:
        with_onnx = False
    models = tmp_path / "models"
    export_model(fold_batchnorm(random_model(blocks=1, channels=8, head_channels=4, value_fc=8, seed=3)),
                 {"name": "tiny", "board_sizes": [[15, 15]]}, models / "tiny", with_onnx=with_onnx)
    (models / "index.json").write_text('{"freestyle": "tiny"}', encoding="utf-8")
    spec = bp.make_spec(out=str(tmp_path / "dist"), work=str(tmp_path / "work"), model=str(models))
    summary = bp.build(spec)
    print("\n" + json.dumps(summary))
    exe = Path(summary["exe"])
    assert exe.is_file() and os.access(exe, os.X_OK)
    internal = exe.parent / "_internal"
    assert (internal / "models" / "index.json").is_file() and (internal / "models" / "tiny.json").is_file()
    assert not (internal / "torch").exists() and not (internal / "onnx").exists()
    assert (internal / "onnxruntime").is_dir()

    frozen = bp.smoke([str(exe)], turn_ms=5000, max_node=40, moves=4)
    print(json.dumps(frozen))
    assert frozen["ok"] == "OK" and frozen["exit"] == 0 and frozen["stderr"] == ""
    assert re.fullmatch(r"\d+,\d+", frozen["moves"][0]), frozen["moves"]
    if sys.platform.startswith("linux"):
        assert frozen["processes"] == 1
        assert frozen["onnxruntime_loaded"] is with_onnx
    source = bp.smoke([sys.executable, str(bp.ROOT / "engine.py")], turn_ms=5000, max_node=40, moves=4,
                      env={"PYGOMOKU_MODELS": str(models)})
    assert frozen["moves"] == source["moves"]
