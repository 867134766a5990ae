"""The networks that ship in ``models/`` and the factory that builds the engine's player.

``models/index.json`` maps keys to model basenames in the same folder. A key is a rule name (``freestyle``,
``standard``, ``renju``, ``caro``) or a rule and a board size, ``RULE@WxH`` (``"freestyle@8x8":
"gomoku8-4x32"``). The model for (rule, width, height) is the first of ``rule@WxH``, ``rule``,
``freestyle@WxH``, ``freestyle`` that the index names and whose ``.json`` is in the folder
(:func:`default_model`); an index with rule keys only works as before. A malformed index (not JSON, not an
object, a value that is not a plain basename) is not an error for the engine: the bad entries (or the whole
index) are ignored with a logged warning, and with no usable entry the engine plays with the hand-written
evaluator.

An explicit model (``--model``) is a path to a model (its basename, one of its files, or its folder) or the
bare name of a shipped model (``gomoku8-4x32``, looked up in :func:`models_dir`); one that names nothing
raises :class:`ModelNotFoundError`, which says where it looked.

The folder is found next to the code (a source checkout or an editable install), next to a PyInstaller
executable, or where ``PYGOMOKU_MODELS`` points; never on the network.

Players: :class:`PlayerFactory` makes the engine's player for (rule, width, height) and says, with its
``key``, when a new one is needed; :class:`DefaultPlayers` is the brain's factory (the same, plus the
diagnostic players of :mod:`gomoku_ai.testplayers` selected by ``PYGOMOKU_PLAYER``, :func:`make_player`).
:func:`takes_size`, :func:`factory_key` and :func:`make_with` are how front ends (the brain, the terminal UI)
call any player factory, ``factory(rule, width, height)`` or the older ``factory(rule)``.
"""
from __future__ import annotations

import functools
import json
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, Hashable, List, Optional, TypeVar, Union

from .evaluator import Evaluator, HeuristicEvaluator
from .player import Player, Thinker
from .rules import Rule

if TYPE_CHECKING:
    from .net import Network

log = logging.getLogger("pygomoku.shipped")

MODEL_SUFFIXES = (".json", ".npz", ".int8.onnx", ".onnx")   # the int8 graph before .onnx
HEURISTIC = "heuristic"
TEST_PLAYERS = ("sleepy", "stuck")   #: the diagnostic players :func:`make_player` knows by name

#: ``factory(rule, width, height)`` or ``factory(rule)`` -> a player; may have ``key(rule, width, height)``
ThinkerFactory = Callable[..., Thinker]
_P = TypeVar("_P")


class ModelNotFoundError(FileNotFoundError, ValueError):
    """An explicit model that names no model file (neither a path nor a shipped model)."""


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
    # a plain (non-editable) pip install: setup.cfg's data_files
    candidates.append(Path(sys.prefix) / "share" / "pygomoku" / "models")
    for c in candidates:
        if (c / "index.json").is_file():
            return c
    return None


def _json_of(base: Path) -> Path:
    return base.with_name(base.name + ".json")


def _is_basename(name: str) -> bool:
    return bool(name) and "/" not in name and "\\" not in name and name not in (".", "..")


def read_index(d: Optional[Path] = None) -> Dict[str, str]:
    """``index.json`` of the models folder ``d`` (default :func:`models_dir`) as {key: basename}, keys
    lower-cased; {} when there is none or it is malformed (logged), entries that are not a string basename
    left out (logged)."""
    d = models_dir() if d is None else d
    if d is None:
        return {}
    path = d / "index.json"
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        log.warning("%s: not readable JSON (%s); no shipped model is used", path, e)
        return {}
    if not isinstance(raw, dict):
        log.warning("%s: expected an object mapping rule names to model basenames; ignored", path)
        return {}
    index: Dict[str, str] = {}
    for k, v in raw.items():
        if isinstance(v, str) and _is_basename(v.strip()):
            index[str(k).strip().lower().replace(" ", "")] = v.strip()
        else:
            log.warning("%s: entry %r: %r is not a model basename; ignored", path, k, v)
    return index


def index_keys(rule: Rule = Rule.FREESTYLE, width: int = 15, height: Optional[int] = None) -> List[str]:
    """The index keys tried for (rule, width, height), in order."""
    height = width if height is None else height
    keys = [f"{rule.value}@{width}x{height}", rule.value,
            f"{Rule.FREESTYLE.value}@{width}x{height}", Rule.FREESTYLE.value]
    return list(dict.fromkeys(keys))


def default_model(rule: Rule = Rule.FREESTYLE, width: int = 15, height: Optional[int] = None) -> Optional[Path]:
    """Basename of the shipped model for ``rule`` on a ``width`` x ``height`` board (``height`` defaults to
    ``width``): the first of ``rule@WxH``, ``rule``, ``freestyle@WxH``, ``freestyle`` in ``index.json``
    whose ``.json`` exists (a named model that is missing is skipped, with a warning); None when there is
    none."""
    d = models_dir()
    if d is None:
        return None
    index = read_index(d)
    for key in index_keys(rule, width, height):
        name = index.get(key)
        if not name:
            continue
        base = d / name
        if _json_of(base).is_file():
            return base
        log.warning("%s: %r names %s, which is not there; trying the next key", d / "index.json", key,
                    _json_of(base))
    return None


def _strip_suffix(p: Path) -> Path:
    for s in MODEL_SUFFIXES:
        if p.name.endswith(s) and len(p.name) > len(s):
            return p.with_name(p.name[: -len(s)])
    return p


def resolve_model(model: Union[str, Path]) -> Path:
    """The model named by ``model``: a path (a basename with or without ``.json``/``.npz``/``.onnx``/``.int8.onnx``,
    or a model folder) or the bare name of a shipped model. Returns the path to load (a basename or a folder).
    Raises :class:`ModelNotFoundError`, naming what was looked for, when there is no such model."""
    text = str(model).strip()
    if not text:
        raise ModelNotFoundError("empty model name")
    p = Path(os.path.expanduser(text))
    if p.is_dir():
        return p
    base = _strip_suffix(p)
    looked = [_json_of(base)]
    if _json_of(base).is_file():
        return base
    d = models_dir()
    if _is_basename(text) and not p.is_absolute():
        if d is not None:
            shipped = d / base.name
            looked.append(_json_of(shipped))
            if _json_of(shipped).is_file():
                return shipped
    names = ", ".join(m["name"] for m in list_models(d)) if d is not None else ""
    where = f"shipped models in {d}: {names or 'none'}" if d is not None else "no models folder found"
    raise ModelNotFoundError(f"model {text!r} not found: looked for " + ", ".join(str(x) for x in looked)
                             + f" ({where}; or 'heuristic')")


def list_models(d: Optional[Path] = None) -> List[Dict[str, Any]]:
    """The models in the models folder ``d`` (default :func:`models_dir`), by name: ``name``, ``path``
    (basename), ``board_sizes`` ([[w, h], ...]), ``notes`` and ``index_keys`` (the index keys naming it).
    Unreadable model files are left out."""
    d = models_dir() if d is None else d
    if d is None:
        return []
    index = read_index(d)
    out = []
    for j in sorted(d.glob("*.json")):
        if j.name == "index.json":
            continue
        try:
            cfg = json.loads(j.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(cfg, dict):
            continue
        name = j.name[: -len(".json")]
        out.append({"name": name, "path": j.with_name(name),
                    "board_sizes": [list(s) for s in cfg.get("board_sizes") or []],
                    "notes": str(cfg.get("notes", "")),
                    "index_keys": sorted(k for k, v in index.items() if v == name)})
    return out


def format_models(models: Optional[List[Dict[str, Any]]] = None) -> str:
    """:func:`list_models` as text, one model a line (for ``--list-models``)."""
    models = list_models() if models is None else models
    if not models:
        return "no shipped models (the engine plays with the hand-written evaluator)"
    lines = []
    for m in models:
        sizes = " ".join(f"{w}x{h}" for w, h in m["board_sizes"]) or "?"
        used = f"  [index: {', '.join(m['index_keys'])}]" if m["index_keys"] else ""
        lines.append(f"{m['name']}  ({sizes}){used}  {m['notes']}".rstrip())
    return "\n".join(lines)


def model_choice(model: Union[None, str, Path] = None, rule: Rule = Rule.FREESTYLE, width: int = 15,
                 height: Optional[int] = None) -> str:
    """What :func:`load_evaluator` would load, as a string: ``"heuristic"`` or the model's path. Equal
    choices mean the same network (callers recreate a player only when it changes). Raises
    :class:`ModelNotFoundError` for an explicit model that does not exist."""
    if model is not None and str(model).strip().lower() == HEURISTIC:
        return HEURISTIC
    path = resolve_model(model) if model is not None else default_model(rule, width, height)
    return HEURISTIC if path is None else str(path)


def load_evaluator(model: Union[None, str, Path] = None, rule: Rule = Rule.FREESTYLE,
                   backend: str = "auto", threads: int = 1, batch_size: int = 4,
                   width: int = 15, height: Optional[int] = None) -> Evaluator:
    """The evaluator for ``model``: "heuristic" for the hand-written one; a path or a shipped model's name
    (:func:`resolve_model`); None for the shipped default for ``rule`` on a ``width`` x ``height`` board
    (:func:`default_model`), or the heuristic one when no model ships."""
    choice = model_choice(model, rule, width, height)
    if choice == HEURISTIC:
        return HeuristicEvaluator()
    from .evaluator import NetworkEvaluator
    from .net import ModelError
    forced = env_backend(backend)
    try:
        net = _network(choice, forced, threads)
    except ModelError as e:
        if forced == backend:
            raise
        # PYGOMOKU_NET_BACKEND names a graph this model lacks (onnx-int8 for gomoku8-4x32): play it as usual
        log.warning("PYGOMOKU_NET_BACKEND=%s: %s; using the %s backend", forced, e, backend)
        net = _network(choice, backend, threads)
    return NetworkEvaluator(net, batch_size=batch_size)


def env_backend(backend: str = "auto") -> str:
    """``backend``; where it is ``auto``, ``$PYGOMOKU_NET_BACKEND`` when that is set (``onnx``: the float
    graph, e.g. for an A/B match against the int8 one; ``onnx-int8``; ``numpy``). An unknown value is a
    ValueError naming the variable (the brain checks it before reading any command). :func:`load_evaluator`
    falls back to ``backend`` (with a warning) for a model that lacks the graph asked for."""
    from .net import NetBackend
    text = os.environ.get("PYGOMOKU_NET_BACKEND", "").strip().lower()
    if not text:
        return backend
    if text not in tuple(NetBackend):
        raise ValueError(f"PYGOMOKU_NET_BACKEND={text!r}: expected one of {', '.join(NetBackend)}")
    return text if backend == "auto" else backend


@functools.lru_cache(maxsize=4)
def _network(path: str, backend: str, threads: int) -> Network:
    """Networks are loaded once per process (read-only; a new game or rule reuses them)."""
    from .net import load_model
    return load_model(path, backend=backend, threads=threads)


def load_player(model: Union[None, str, Path] = None, rule: Rule = Rule.FREESTYLE,
                backend: str = "auto", threads: int = 1, seed: int = 0,
                width: int = 15, height: Optional[int] = None) -> Player:
    """The engine's player: MCTS + tactics over the chosen evaluator (see :func:`load_evaluator`).
    ``player.evaluator.network.basename`` is the model it loaded (no ``network`` for the heuristic)."""
    ev = load_evaluator(model, rule, backend, threads, width=width, height=height)
    return Player(ev, seed=seed)


class PlayerFactory:
    """Makes the engine's player for (rule, width, height) with :func:`load_player`; :meth:`key` says which
    player that would be, so that a caller makes a new one only when the rule or the network changes
    (``START 15`` then ``START 20`` keep the player when both sizes use one network)."""

    def __init__(self, model: Union[None, str, Path] = None, backend: str = "auto", threads: int = 1,
                 seed: int = 0, thread_num: int = 1) -> None:
        self.model = model
        self.backend = backend
        self.threads = threads      # onnxruntime's intra-op threads
        self.seed = seed
        self.thread_num = thread_num    # the player's (INFO thread_num): 2 puts the network in a worker process

    def key(self, rule: Rule, width: int = 15, height: Optional[int] = None) -> Hashable:
        try:
            return (rule, model_choice(self.model, rule, width, height))
        except ModelNotFoundError:
            return (rule, "missing", str(self.model))  # the call raises, once per rule

    def __call__(self, rule: Rule = Rule.FREESTYLE, width: int = 15, height: Optional[int] = None) -> Player:
        p = load_player(self.model, rule, self.backend, self.threads, self.seed, width=width, height=height)
        if self.thread_num > 1:
            p.thread_num = self.thread_num
        return p


def takes_size(factory: Callable[..., object]) -> bool:
    """Whether ``factory`` can be called as ``factory(rule, width, height)`` (else ``factory(rule)``)."""
    import inspect
    try:
        inspect.signature(factory).bind(Rule.FREESTYLE, 15, 15)
    except (TypeError, ValueError):   # ValueError: no signature (a builtin): the one-argument form
        return False
    return True


def factory_key(factory: Callable[..., object], rule: Rule, width: int, height: int, sized: bool) -> Hashable:
    """What ``factory`` would make for (rule, width, height): its ``key(rule, width, height)`` when it has one
    (e.g. the network's path), else the rule, and the size too for a factory that takes it (``sized``, from
    :func:`takes_size`). Equal keys mean the same player: a caller makes a new one only when the key changes.
    Whatever ``key`` raises propagates."""
    key_of = getattr(factory, "key", None)
    if callable(key_of):
        key: Hashable = key_of(rule, width, height)
        return key
    return (rule, width, height) if sized else rule


def make_with(factory: Callable[..., _P], rule: Rule, width: int, height: int, sized: bool) -> _P:
    """``factory(rule, width, height)``, or ``factory(rule)`` for a factory that does not take the size."""
    return factory(rule, width, height) if sized else factory(rule)


def player_kind(name: Optional[str] = None) -> str:
    """``name`` (else ``$PYGOMOKU_PLAYER``, else "") stripped and lower-cased: which player
    :func:`make_player` makes (one of :data:`TEST_PLAYERS`; anything else is the engine's player)."""
    return (name if name is not None else os.environ.get("PYGOMOKU_PLAYER", "")).strip().lower()


def make_player(name: Optional[str] = None, rule: Rule = Rule.FREESTYLE, width: int = 15,
                height: Optional[int] = None, model: Optional[str] = None) -> Thinker:
    """The player to use: ``name`` or ``$PYGOMOKU_PLAYER``: ``sleepy`` / ``stuck`` are the diagnostic players
    of :mod:`gomoku_ai.testplayers`; anything else (or nothing) is the engine's player for ``rule`` on a
    ``width`` x ``height`` board (:func:`load_player`: ``model`` when given, else the shipped network for
    that rule and size when there is one). An unknown name is logged and gets the engine's player."""
    kind = player_kind(name)
    if kind == "sleepy":
        from .testplayers import SleepyPlayer
        return SleepyPlayer()
    if kind == "stuck":
        from .testplayers import StuckPlayer
        return StuckPlayer()
    if kind not in ("", "default"):
        log.warning("unknown PYGOMOKU_PLAYER %r; using the default player", kind)
    return load_player(model, rule=rule, width=width, height=height)


class DefaultPlayers:
    """The brain's default player factory: :func:`make_player` for (rule, width, height), with ``name`` (a
    diagnostic player; default ``$PYGOMOKU_PLAYER``) and ``model`` (``engine.py --model``: a path, a shipped
    model's name or "heuristic") overriding the shipped choice. :meth:`key` is the network that would be
    used, so a new game on another size that uses the same network (15x15 and 20x20) keeps the player, and
    ``START 8`` after ``START 15`` gets the 8x8 network."""

    def __init__(self, name: Optional[str] = None, model: Optional[str] = None) -> None:
        self.name = name
        self.model = model

    def key(self, rule: Rule, width: int, height: int) -> Hashable:
        kind = player_kind(self.name)
        if kind in TEST_PLAYERS:
            return (kind, rule)
        return PlayerFactory(self.model).key(rule, width, height)

    def __call__(self, rule: Rule = Rule.FREESTYLE, width: int = 15, height: Optional[int] = None) -> Thinker:
        return make_player(self.name, rule, width, height, model=self.model)


def player_source(player: object) -> str:
    """What a player evaluates with: the network's file basename and backend (``models/x, onnx-int8``), or the
    evaluator's name (else the player's class name)."""
    ev = getattr(player, "evaluator", None)
    net = getattr(ev, "network", None)
    base = getattr(net, "basename", None)
    if base is not None:
        return f"{base}, {getattr(net, 'backend', '?')}"
    return str(getattr(ev, "name", None) or type(player).__name__)
