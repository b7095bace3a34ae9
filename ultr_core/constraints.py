"""Declared parameter constraints (scikit-learn's ``_parameter_constraints``): a configuration class states, per
field, which values it accepts — an :class:`Interval`, :class:`Options`, a :class:`Rule` or ``None`` — and one
validator, :func:`validate`, checks them all; its message names the field, the value and what is allowed.

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Demo:
...     lr: float = 0.1
...     model: str = "dnn"
...     clip: float | None = None
...     CONSTRAINTS = {"lr": [Interval(float, 0, 10, closed="right")], "model": [Options("linear", "dnn")],
...                    "clip": [None, Interval(float, 0, None, closed="neither")]}
...     def __post_init__(self):
...         validate(self)
>>> Demo(lr=0)
Traceback (most recent call last):
ultr_core.errors.ConfigError: lr: must be a number in (0, 10], got 0
>>> Demo(model="gbdt")
Traceback (most recent call last):
ultr_core.errors.ConfigError: model: must be one of 'linear' or 'dnn', got 'gbdt'
>>> Demo(clip=-1.0)
Traceback (most recent call last):
ultr_core.errors.ConfigError: clip: must be None or a number in (0, ∞), got -1.0
>>> Demo(clip=float("nan"))
Traceback (most recent call last):
ultr_core.errors.ConfigError: clip: must be None or a number in (0, ∞), got nan
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, fields

from ultr_core.errors import ConfigError, show

__all__ = ["Interval", "Options", "Rule", "validate", "undeclared", "TRAIN_SHARE"]


@dataclass(frozen=True)
class Interval:
    """Numbers of ``kind`` (``int``: whole numbers, ``float``: any finite real) between ``left`` and ``right``
    (``None``: unbounded); ``closed`` is "both", "left", "right" or "neither".

    >>> str(Interval(int, 1, 65_536)), str(Interval(int, 0, None)), str(Interval(float, 0, 1, closed="left"))
    ('a whole number from 1 to 65,536', 'a whole number ≥ 0', 'a number in [0, 1)')
    >>> Interval(int, 1, 5).accepts(3.0), Interval(int, 1, 5).accepts(2.5), Interval(int, 1, 5).accepts(True)
    (True, False, False)
    """

    kind: type
    left: float | None
    right: float | None
    closed: str = "both"

    def accepts(self, value) -> bool:
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
            return False
        if self.kind is int and int(value) != value:
            return False
        lo_ok = self.left is None or (value >= self.left if self.closed in ("both", "left") else value > self.left)
        hi_ok = self.right is None or (value <= self.right if self.closed in ("both", "right") else value < self.right)
        return lo_ok and hi_ok

    def __str__(self) -> str:
        if self.kind is int and self.closed == "both":
            if self.right is None:
                return f"a whole number ≥ {self.left:,}"
            return f"a whole number from {self.left:,} to {self.right:,}"
        lo = "−∞" if self.left is None else f"{self.left:g}"
        hi = "∞" if self.right is None else f"{self.right:g}"
        brackets = {"both": "[]", "left": "[)", "right": "(]", "neither": "()"}[self.closed]
        what = "a whole number" if self.kind is int else "a number"
        return f"{what} in {brackets[0]}{lo}, {hi}{brackets[1]}"

    def check(self, value, name: str):
        """``value`` when this interval accepts it, else a :class:`ConfigError` naming ``name`` (a CLI option).

        >>> Interval(float, 0, 1, closed="neither").check(float("nan"), "--split")
        Traceback (most recent call last):
        ultr_core.errors.ConfigError: --split: must be a number in (0, 1), got nan
        """
        if not self.accepts(value):
            raise ConfigError(name, f"must be {self}, got {show(value, 20)}")
        return value


class Options:
    """One of a fixed set of values.

    >>> str(Options("adam", "adagrad", "sgd")), Options("a").accepts("a")
    ("one of 'adam', 'adagrad' or 'sgd'", True)
    """

    def __init__(self, *values):
        self.values = tuple(values)

    def accepts(self, value) -> bool:
        try:
            return value in self.values
        except TypeError:                       # unhashable values compare unequal
            return False

    def __str__(self) -> str:
        shown = [repr(v) for v in self.values]
        return "one of " + (shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1])


@dataclass(frozen=True)
class Rule:
    """A condition no interval states (``check(value) → bool``), with the words that say it."""

    check: object
    text: str

    def accepts(self, value) -> bool:
        try:
            return bool(self.check(value))
        except (TypeError, ValueError, OverflowError):
            return False

    def __str__(self) -> str:
        return self.text


def _accepts(constraint, value) -> bool:
    return value is None if constraint is None else constraint.accepts(value)


def validate(obj, constraints: dict | None = None, where: str = "") -> None:
    """Check every declared field of ``obj`` (``constraints`` or ``type(obj).CONSTRAINTS``); the first value that
    no constraint of its field accepts raises :class:`ConfigError` naming the field, the value and what is allowed
    (``where``: the record it belongs to, e.g. ``algorithm 'dla'``, put before the field's name)."""
    table = type(obj).CONSTRAINTS if constraints is None else constraints
    for name, allowed in table.items():
        value = getattr(obj, name)
        if not any(_accepts(c, value) for c in allowed):
            words = " or ".join("None" if c is None else str(c) for c in allowed)
            raise ConfigError(f"{where}.{name}" if where else name, f"must be {words}, got {show(value)}")


def undeclared(cls) -> list[str]:
    """The dataclass fields of ``cls`` its ``CONSTRAINTS`` table leaves out (a test keeps this empty).

    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class D:
    ...     a: int = 0
    ...     b: int = 0
    ...     CONSTRAINTS = {"a": [Interval(int, 0, None)]}
    >>> undeclared(D)
    ['b']
    """
    return [f.name for f in fields(cls) if f.name not in cls.CONSTRAINTS]


#: the share of a log's sessions that train (the rest score): ``--split`` of ``click-models`` and ``rankers``
TRAIN_SHARE = Interval(float, 0, 1, closed="neither")
