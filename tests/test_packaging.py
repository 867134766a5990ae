"""What a plain (non-editable) ``pip install`` carries: the board page's files and the shipped
networks (setup.cfg's package_data and data_files), and where the engine finds the networks then."""
from __future__ import annotations

import configparser
import fnmatch
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _cfg() -> configparser.ConfigParser:
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    return cfg


def test_every_shipped_model_file_is_installed_as_data():
    patterns = [p.strip() for p in _cfg()["options.data_files"]["share/pygomoku/models"].split()
                if p.strip()]
    index = json.loads((ROOT / "models" / "index.json").read_text())
    needed = {"models/index.json"}
    for base in set(index.values()):
        needed |= {f"models/{base}.{ext}" for ext in ("json", "npz", "onnx")}
    for path in sorted(needed):
        assert (ROOT / path).is_file(), path
        assert any(fnmatch.fnmatch(path, pat) for pat in patterns), f"{path} is not installed"


def test_the_board_page_is_package_data():
    patterns = _cfg()["options.package_data"]["tools.serve"].split()
    for name in ("index.html", "app.js", "style.css", "docs.html"):
        assert (ROOT / "tools" / "serve" / "static" / name).is_file()
        assert any(fnmatch.fnmatch(f"static/{name}", p) for p in patterns), name


def test_an_installed_copy_finds_the_networks_under_the_prefix(tmp_path, monkeypatch):
    from gomoku_ai import shipped
    share = tmp_path / "share" / "pygomoku" / "models"
    share.mkdir(parents=True)
    (share / "index.json").write_text('{"freestyle": "x"}')
    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    monkeypatch.delenv("PYGOMOKU_MODELS", raising=False)
    monkeypatch.delenv("PYGOMOKU_HOME", raising=False)
    # the source tree's models/ comes first; without it, the prefix's copy is found
    assert shipped.models_dir() == ROOT / "models"
    monkeypatch.setattr(shipped, "__file__", str(tmp_path / "site" / "gomoku_ai" / "shipped.py"))
    assert shipped.models_dir() == share
