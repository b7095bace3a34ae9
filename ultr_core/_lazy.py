"""Package faces that import on first use (PEP 562), so ``python -m ultr_core --help`` and ``ig`` on a small
file do not pay for pandas, scipy.stats or torch before they need them.

>>> import sys
>>> getattr_, dir_ = lazy("demo", {"sqrt": "math"})
>>> getattr_("sqrt")(9.0), "sqrt" in dir_()
(3.0, True)
"""
from __future__ import annotations

import importlib

__all__ = ["lazy"]


def lazy(package: str, names: dict[str, str]):
    """``(__getattr__, __dir__)`` for a package whose public ``names`` live in the given modules."""
    def __getattr__(name):
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    def __dir__():
        return sorted(names)
    return __getattr__, __dir__
