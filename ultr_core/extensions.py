"""Extra records for the tables, from modules named in the ``ULTR_EXTENSIONS`` environment variable
(comma-separated importable module names) — how a click model, an algorithm or a page is added *without editing*
``ultr_core``: the module defines ``CLICK_MODELS``, ``ALGORITHM_SPECS`` and/or ``PAGES`` (tuples of records), and
each table appends them when it is built, so that every view derived from it (CLI choices, page options, colours,
URL parsing, checks) sees them.  ``tests/toy_records.py`` is the example the one-table test loads.

>>> extra("NOTHING_DEFINES_THIS")
()
"""
from __future__ import annotations

import importlib
import os

__all__ = ["extra", "ENV"]

#: the environment variable naming the extension modules
ENV = "ULTR_EXTENSIONS"


def extra(table: str) -> tuple:
    """The records every extension module adds to ``table`` (its attribute of that name), in the order named."""
    out = []
    for name in filter(None, (n.strip() for n in os.environ.get(ENV, "").split(","))):
        out.extend(getattr(importlib.import_module(name), table, ()))
    return tuple(out)
