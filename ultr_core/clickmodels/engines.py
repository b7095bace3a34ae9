"""What builds a log's session table for the click models (``click-models --engine``): one record per engine.

Each engine creates the DuckDB tables ``pairs`` and ``sess`` (one row per session) from a log; splitting, the list
checks and the patterns are then one code path (:mod:`ultr_core.clickmodels.patterns`), so every engine gives the
same patterns and therefore the same fits.  This module imports nothing heavy: the CLI reads it for its choices.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SessionEngine", "SESSION_ENGINES", "ENGINES_BY_KEY", "check_engine", "add_engine_options"]


@dataclass(frozen=True)
class SessionEngine:
    key: str
    builder: str              #: "module:function" (con, source, fmt, name, *, folder, scheduler) → the readers' notes
    rows: str                 #: "module:function" (the same) → (rows by session and rank as arrays, the notes)
    help: str
    scheduler: bool = False   #: takes ``--scheduler``


SESSION_ENGINES = (
    SessionEngine("duckdb", "ultr_core.clickmodels.patterns:duckdb_sessions", "ultr_core.clickmodels.outofcore:"
                  "duckdb_rows", "DuckDB in this process, spilling to disk under --memory-limit (every log format)"),
    SessionEngine("dask", "ultr_core.clickmodels.dasksessions:dask_sessions",
                  "ultr_core.clickmodels.dasksessions:dask_rows",
                  "Dask, on --scheduler or local threads (CSV/TSV/Parquet)", scheduler=True),
)
ENGINES_BY_KEY = {e.key: e for e in SESSION_ENGINES}


def session_builder(key: str, part: str = "builder"):
    """The function an engine's record names for ``part`` (``builder``: the session table; ``rows``: the rows)."""
    import importlib
    module, fn = getattr(ENGINES_BY_KEY[key], part).split(":")
    return getattr(importlib.import_module(module), fn)


def check_engine(engine: str, scheduler: str | None) -> None:
    """An engine of the table, and ``--scheduler`` only with one that takes it (errors name the flag)."""
    from ultr_core.errors import ConfigError
    if engine not in ENGINES_BY_KEY:
        raise ConfigError("--engine", f"use one of {', '.join(ENGINES_BY_KEY)}, got {engine!r}")
    if scheduler and not ENGINES_BY_KEY[engine].scheduler:
        takes = ", ".join(e.key for e in SESSION_ENGINES if e.scheduler)
        raise ConfigError("--scheduler", f"applies to --engine {takes}; add it or leave the scheduler out")


def add_engine_options(parser, what: str) -> None:
    """``--engine`` and ``--scheduler`` of a command that reads sessions (``what``: what the engine builds)."""
    parser.add_argument("--engine", choices=[e.key for e in SESSION_ENGINES], default=SESSION_ENGINES[0].key,
                        help=f"what {what} (the same numbers either way): " + "; ".join(
                            f"{e.key} — {e.help}" for e in SESSION_ENGINES))
    parser.add_argument("--scheduler", help="Dask scheduler address (tcp://host:port) for --engine dask")
