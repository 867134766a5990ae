"""The networks that ship in ``models/`` and the factory that builds the engine's player.

``models/index.json`` maps a rule name (``freestyle``, ``standard``, ``renju``, ``caro``) to a model
basename in the same folder. The folder is found next to the code (a source checkout or an editable
install), next to a PyInstaller executable, or where ``PYGOMOKU_MODELS`` points; never on the network.
"""
from __future__ import annotations

import functools
import json
import os
import sys
from pathlib import Path
from typing import Optional, Union

from .evaluator import Evaluator, HeuristicEvaluator
from .player import Player
from .rules import Rule


def models_dir() -> Optional[Path]:
    """The folder of shipped models, or None when there is none."""
    candidates = []
    env = os.environ.get("PYGOMOKU_MODELS")
    if env:
        candidates.append(Path(env))
    home = os.environ.get("PYGOMOKU_HOME")   # set by engine.py to its own folder
    if home:
        candidates.append(Path(home) / "models")
    meipass = getattr(sys, "_MEIPASS", None)
    if meipass:
        candidates.append(Path(meipass) / "models")
    if getattr(sys, "frozen", False):
        candidates.append(Path(sys.executable).resolve().parent / "models")
    candidates.append(Path(__file__).resolve().parents[1] / "models")
    for c in candidates:
        if (c / "index.json").is_file():
            return c
    return None


def default_model(rule: Rule = Rule.FREESTYLE) -> Optional[Path]:
    """Basename of the shipped model for ``rule`` (falling back to the freestyle one), or None."""
    d = models_dir()
    if d is None:
        return None
    try:
        index = json.loads((d / "index.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    name = index.get(rule.value) or index.get(Rule.FREESTYLE.value)
    if not name:
        return None
    base = d / name
    return base if base.with_suffix(".json").is_file() else None


def load_evaluator(model: Union[None, str, Path] = None, rule: Rule = Rule.FREESTYLE,
                   backend: str = "auto", threads: int = 1, batch_size: int = 4) -> Evaluator:
    """The network evaluator for ``model`` ("heuristic" for the hand-written one; None for the
    shipped default, or the heuristic one when no model ships)."""
    if model == "heuristic":
        return HeuristicEvaluator()
    path = Path(model) if model is not None else default_model(rule)
    if path is None:
        return HeuristicEvaluator()
    from .evaluator import NetworkEvaluator
    return NetworkEvaluator(_network(str(path), backend, threads), batch_size=batch_size)


@functools.lru_cache(maxsize=4)
def _network(path: str, backend: str, threads: int):
    """Networks are loaded once per process (read-only; a new game or rule reuses them)."""
    from .net import load_model
    return load_model(path, backend=backend, threads=threads)


def load_player(model: Union[None, str, Path] = None, rule: Rule = Rule.FREESTYLE,
                backend: str = "auto", threads: int = 1, seed: int = 0) -> Player:
    """The engine's player: MCTS + tactics over the chosen evaluator."""
    ev = load_evaluator(model, rule, backend, threads)
    return Player(ev, seed=seed)
