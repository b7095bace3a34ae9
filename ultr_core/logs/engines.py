"""What reads a log out of core (``--engine`` of ``ig``, ``click-models`` and ``evaluate``): one record per engine.

Each engine names, as "module:function", what it computes for each command: ``counts`` — the count table of ``ig``
(impressions, clicks and bad click values per group, :func:`ultr_core.logs.ingestion.ingest`); ``sessions`` — the
DuckDB tables ``pairs`` and ``sess`` (one row per session) of the click models, from which splitting, the list
checks and the patterns are one code path (:mod:`ultr_core.clickmodels.patterns`); ``rows`` — the shown rows by
session and rank (``evaluate``, ``click-models --test``).  Every engine gives the same numbers.  This module imports
nothing heavy: the CLI reads it for its choices.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from ultr_core.extensions import extra

__all__ = ["LogEngine", "log_engines", "engines_by_key", "engine_function", "check_engine", "add_engine_options"]


@dataclass(frozen=True)
class LogEngine:
    key: str
    counts: str               #: "module:function" (source, fmt, *, name, columns, keys, memory_limit, threads,
    #:                           max_pairs, scheduler) → (count table, the readers' notes)
    sessions: str             #: "module:function" (con, source, fmt, *, name, folder, scheduler) → the readers' notes
    rows: str                 #: "module:function" (the same) → (rows by session and rank as arrays, the notes)
    help: str
    scheduler: bool = False   #: takes ``--scheduler``
    sorted_counts: bool = True  #: ``counts`` returns its groups in key order already


_BUILT_IN = (
    LogEngine("duckdb", "ultr_core.logs.ingestion:duckdb_counts", "ultr_core.clickmodels.patterns:duckdb_sessions",
              "ultr_core.clickmodels.outofcore:duckdb_rows",
              "DuckDB in this process, spilling to disk under --memory-limit (every log format)"),
    LogEngine("dask", "ultr_core.logs.daskcounts:dask_counts", "ultr_core.clickmodels.dasksessions:dask_sessions",
              "ultr_core.clickmodels.dasksessions:dask_rows",
              "Dask, on --scheduler or local threads (CSV/TSV/Parquet)", scheduler=True, sorted_counts=False),
)


@cache
def log_engines() -> tuple:
    """The engines: the built-in ones and those extension modules add (``LOG_ENGINES``; read at first use, so that
    an extension module may import :class:`LogEngine` from here)."""
    return _BUILT_IN + extra("LOG_ENGINES")


def engines_by_key() -> dict:
    return {e.key: e for e in log_engines()}


def engine_function(key: str, part: str):
    """The function an engine's record names for ``part`` (``counts``, ``sessions`` or ``rows``)."""
    import importlib
    module, fn = getattr(engines_by_key()[key], part).split(":")
    return getattr(importlib.import_module(module), fn)


def check_engine(engine: str, scheduler: str | None, *, names: tuple = ("--engine", "--scheduler")) -> None:
    """An engine of the table, and a scheduler only with one that takes it; errors name the option as ``names``
    spells it (the CLI's flags, or the library's arguments ``("engine", "scheduler")``)."""
    from ultr_core.errors import ConfigError
    engines = engines_by_key()
    if engine not in engines:
        raise ConfigError(names[0], f"use one of {', '.join(engines)}, got {engine!r}")
    if scheduler and not engines[engine].scheduler:
        takes = ", ".join(e.key for e in log_engines() if e.scheduler)
        raise ConfigError(names[1], f"applies to {names[0]} {takes}; add it or leave the scheduler out")


def add_engine_options(parser, what: str) -> None:
    """``--engine`` and ``--scheduler`` of a command that reads a log out of core (``what``: what the engine does)."""
    engines = log_engines()
    parser.add_argument("--engine", choices=[e.key for e in engines], default=engines[0].key,
                        help=f"what {what} (the same numbers either way): " + "; ".join(
                            f"{e.key} — {e.help}" for e in engines))
    takes = ", ".join(e.key for e in engines if e.scheduler)
    parser.add_argument("--scheduler", help=f"Dask scheduler address (tcp://host:port) for --engine {takes}")
