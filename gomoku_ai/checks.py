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
from typing import Any, Callable, Iterable, Type, TypeVar

__all__ = ["ConfigError", "StrKind", "at_least", "check_mcts_config", "fail", "finite", "fraction", "non_negative",
           "one_of", "parse_kind", "positive"]

K = TypeVar("K", bound="StrKind")


class ConfigError(ValueError):
    """A config field with a value it does not accept; the message names the class, the field and the value."""


class StrKind(str, enum.Enum):
    """A kind whose members are their own string values (see the module docstring)."""

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


def fail(obj: object, name: str, rule: str) -> None:
    """Raise the :class:`ConfigError` of field ``name`` of ``obj``, which is not ``rule``."""
    raise ConfigError(f"{type(obj).__name__}.{name} must be {rule}, got {getattr(obj, name)!r}")


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


def fraction(obj: object, *names: str, allow_none: bool = False) -> None:
    """Each field ``names`` of ``obj`` is a number in [0, 1]."""
    _check(obj, "in [0, 1]", lambda v: 0 <= v <= 1, names, allow_none)


def one_of(obj: object, name: str, choices: Iterable[object]) -> None:
    """Field ``name`` of ``obj`` is one of ``choices``."""
    allowed = tuple(choices)
    if getattr(obj, name) not in allowed:
        fail(obj, name, "one of " + ", ".join(repr(c) for c in allowed))


def check_mcts_config(cfg: object) -> None:
    """The checks of :class:`gomoku_ai.mcts.MCTSConfig` (``c_puct`` > 0, ``radius`` >= 1, ...).

    They live here, not in ``MCTSConfig.__post_init__``, only for this round of the redesign (mcts.py has
    another owner): :class:`gomoku_ai.player.Player` and :class:`gomoku_ai.training.selfplay.SelfPlayConfig`
    call them; once ``MCTSConfig.__post_init__`` calls this, every config is checked where it is made."""
    positive(cfg, "c_puct")
    finite(cfg, "fpu_reduction", "fpu_reduction_root")
    at_least(cfg, 1, "radius", "max_nodes", "check_every")
    non_negative(cfg, "virtual_loss", "dirichlet_alpha")
    fraction(cfg, "noise_fraction")
