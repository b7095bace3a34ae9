"""What builds a log's session table for the click models (``click-models --engine``): one record per engine.

Each engine creates the DuckDB tables ``pairs`` and ``sess`` (one row per session) from a log; splitting, the list
checks and the patterns are then one code path (:mod:`ultr_core.clickmodels.patterns`), so every engine gives the
same patterns and therefore the same fits.  This module imports nothing heavy: the CLI reads it for its choices.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SessionEngine", "SESSION_ENGINES", "ENGINES_BY_KEY"]


@dataclass(frozen=True)
class SessionEngine:
    key: str
    builder: str              #: "module:function" (con, source, fmt, name, *, folder, scheduler) → the readers' notes
    help: str
    scheduler: bool = False   #: takes ``--scheduler``


SESSION_ENGINES = (
    SessionEngine("duckdb", "ultr_core.clickmodels.patterns:duckdb_sessions",
                  "DuckDB in this process, spilling to disk under --memory-limit (every log format)"),
    SessionEngine("dask", "ultr_core.clickmodels.dasksessions:dask_sessions",
                  "Dask, on --scheduler or local threads (CSV/TSV/Parquet)", scheduler=True),
)
ENGINES_BY_KEY = {e.key: e for e in SESSION_ENGINES}


def session_builder(key: str):
    """The function an engine's record names."""
    import importlib
    module, fn = ENGINES_BY_KEY[key].builder.split(":")
    return getattr(importlib.import_module(module), fn)
