"""Typed values shared by the configs and kinds of :mod:`gomoku_ai` and :mod:`protocol`.

* :class:`StrKind` is the base of the str-valued kinds (``SearchInfo.source``, ``TaskResult.kind``, the
  worker and network backends, the trainer placement). A member *is* its string: it compares equal to it
  (``Source.MCTS == "mcts"``), and ``json``, ``str()``, f-strings and ``%s`` logging write the bare value,
  so files, JSON answers and logs read exactly as they did with plain strings.
* The field checks called by the ``__post_init__`` of the config dataclasses. Each raises
  :class:`ConfigError` (a ``ValueError``) naming the class, the field and the value:
  ``MCTSConfig.c_puct must be > 0, got -1``. A number check refuses what is not a real number (a string, a
  bool, None unless ``allow_none``) and NaN.
"""
from __future__ import annotations

import enum
import math
import numbers
import re
from typing import Any, Callable, Dict, Iterable, NoReturn, Type, TypeVar

from .board import MAX_SIZE, MIN_SIZE
from .rules import Rule

__all__ = ["ConfigError", "StrKind", "at_least", "board_fields", "check_mcts_config", "device", "fail", "finite",
           "field_values", "fraction", "in_open_range", "in_range", "non_negative", "one_of", "parse_kind",
           "positive", "require", "rule_name"]

K = TypeVar("K", bound="StrKind")


class ConfigError(ValueError):
    """A config field with a value it does not accept; the message names the class, the field and the value."""


class StrKind(str, enum.Enum):
    """A kind whose members are their own string values (see the module docstring)."""

    __hash__ = str.__hash__     # a member and its string are one dict key, on every Python version

    def __str__(self) -> str:
        return str.__str__(self)

    def __format__(self, spec: str) -> str:
        return str.__format__(str.__str__(self), spec)


def parse_kind(kind: Type[K], value: object, what: str) -> K:
    """``value`` (a member or its string) as a member of ``kind``; a :class:`ConfigError` naming ``what`` (e.g.
    ``"LoopConfig.backend"``) and the accepted values otherwise."""
    try:
        return kind(value)
    except ValueError:
        choices = ", ".join(repr(m.value) for m in kind)
        raise ConfigError(f"{what} must be one of {choices}, got {value!r}") from None


def field_values(text: str, kinds: Dict[str, type], switch: str) -> Dict[str, Any]:
    """Parse ``"a=1.2,b=3"`` (an A/B switch's text, ``switch`` its name) into values of the fields
    ``kinds`` (name -> type; bool takes 0/1, true/false). An unknown field, an item without ``=``, a
    field given twice or a value of the wrong type is a :class:`ConfigError` naming it; empty items
    are skipped. Ranges are the caller's to check."""
    out: Dict[str, Any] = {}
    for item in (t.strip() for t in text.split(",")):
        if not item:
            continue
        name, eq, raw = (s.strip() for s in item.partition("="))
        if not eq or name not in kinds:
            raise ConfigError(f"{switch}: {item!r}: expected FIELD=VALUE with FIELD one of {', '.join(sorted(kinds))}")
        if name in out:
            raise ConfigError(f"{switch}: {name} is given twice")
        kind = kinds[name]
        try:
            if kind is bool:
                if raw.lower() not in ("0", "1", "true", "false"):
                    raise ValueError(raw)
                out[name] = raw.lower() in ("1", "true")
            else:
                out[name] = kind(raw)
        except ValueError:
            raise ConfigError(f"{switch}: {name}={raw!r} is not of type {kind.__name__}") from None
    return out


def fail(obj: object, name: str, rule: str) -> NoReturn:
    """Raise the :class:`ConfigError` of field ``name`` of ``obj``, which is not ``rule``."""
    raise ConfigError(f"{type(obj).__name__}.{name} must be {rule}, got {getattr(obj, name)!r}")


def require(ok: bool, obj: object, name: str, rule: str) -> None:
    """:func:`fail` unless ``ok`` (field ``name`` of ``obj`` is ``rule``)."""
    if not ok:
        fail(obj, name, rule)


def _is_number(v: object) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool) and v == v   # v == v: not NaN


def _check(obj: object, rule: str, test: Callable[[Any], bool], names: Iterable[str], allow_none: bool) -> None:
    for name in names:
        v = getattr(obj, name)
        if v is None and allow_none:
            continue
        if not _is_number(v) or not test(v):
            fail(obj, name, rule + (" (or None)" if allow_none else ""))


def finite(obj: object, *names: str, allow_none: bool = False) -> None:
    """Each field ``names`` of ``obj`` is a finite number."""
    _check(obj, "a finite number", math.isfinite, names, allow_none)


def positive(obj: object, *names: str, allow_none: bool = False) -> None:
    """Each field ``names`` of ``obj`` is a number > 0."""
    _check(obj, "> 0", lambda v: v > 0, names, allow_none)


def non_negative(obj: object, *names: str, allow_none: bool = False) -> None:
    """Each field ``names`` of ``obj`` is a number >= 0."""
    _check(obj, ">= 0", lambda v: v >= 0, names, allow_none)


def at_least(obj: object, low: float, *names: str, allow_none: bool = False) -> None:
    """Each field ``names`` of ``obj`` is a number >= ``low``."""
    _check(obj, f">= {low}", lambda v: v >= low, names, allow_none)


def in_range(obj: object, low: float, high: float, *names: str, allow_none: bool = False) -> None:
    """Each field ``names`` of ``obj`` is a number in [``low``, ``high``]."""
    _check(obj, f"in [{low}, {high}]", lambda v: low <= v <= high, names, allow_none)


def in_open_range(obj: object, low: float, high: float, *names: str) -> None:
    """Each field ``names`` of ``obj`` is a number in (``low``, ``high``), the ends excluded."""
    _check(obj, f"in ({low}, {high})", lambda v: low < v < high, names, False)


def fraction(obj: object, *names: str, allow_none: bool = False) -> None:
    """Each field ``names`` of ``obj`` is a number in [0, 1]."""
    _check(obj, "in [0, 1]", lambda v: 0 <= v <= 1, names, allow_none)


_DEVICE = re.compile(r"(auto|cpu|cuda(:\d+)?)?")


def device(obj: object, name: str) -> None:
    """Field ``name`` of ``obj`` is a torch device spec: ``auto``, ``cpu``, ``cuda`` or ``cuda:N`` (any case,
    blanks around it allowed; empty means ``auto``)."""
    v = getattr(obj, name)
    require(isinstance(v, str) and _DEVICE.fullmatch(v.strip().lower()) is not None, obj, name,
            "auto, cpu, cuda or cuda:N")


def board_fields(obj: object) -> None:
    """The board fields of a config: ``width`` and ``height`` (None: square) in MIN_SIZE..MAX_SIZE of
    :mod:`gomoku_ai.board`, ``n`` (the winning length) in 3..the shorter side."""
    in_range(obj, MIN_SIZE, MAX_SIZE, "width")
    in_range(obj, MIN_SIZE, MAX_SIZE, "height", allow_none=True)
    width, height = getattr(obj, "width"), getattr(obj, "height")
    in_range(obj, 3, min(width, width if height is None else height), "n")


def rule_name(obj: object, name: str) -> None:
    """Field ``name`` of ``obj`` is a rule as :meth:`gomoku_ai.rules.Rule.parse` reads it (a name or a Gomocup
    rule number)."""
    try:
        Rule.parse(getattr(obj, name))
    except (ValueError, AttributeError):
        fail(obj, name, "a rule name (freestyle, standard, renju, caro) or a Gomocup rule number")


def one_of(obj: object, name: str, choices: Iterable[object]) -> None:
    """Field ``name`` of ``obj`` is one of ``choices``."""
    allowed = tuple(choices)
    if getattr(obj, name) not in allowed:
        fail(obj, name, "one of " + ", ".join(repr(c) for c in allowed))


def check_mcts_config(cfg: object) -> None:
    """The checks of :class:`gomoku_ai.mcts.MCTSConfig` (``c_puct`` > 0, ``radius`` >= 1, ...), run by its
    ``__post_init__``."""
    positive(cfg, "c_puct", "virtual_loss", "policy_temp")   # virtual_loss 0: selection would divide 0 by 0
    finite(cfg, "c_puct", "virtual_loss", "fpu_reduction", "fpu_reduction_root", "policy_temp")
    at_least(cfg, 1, "radius", "max_nodes", "check_every", "offload_batch")
    non_negative(cfg, "dirichlet_alpha")
    non_negative(cfg, "leaf_vcf_nodes", allow_none=True)    # None: leaf_vcf_budget's default
    non_negative(cfg, "tree_vct_visits", "eval_cache")
    at_least(cfg, 1, "tree_vct_nodes", "tree_vct_depth")
    fraction(cfg, "noise_fraction", "lcb_min_share")
    non_negative(cfg, "lcb_z")
    finite(cfg, "lcb_z")
