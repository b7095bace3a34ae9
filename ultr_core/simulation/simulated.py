"""A simulated click log from a dataset spec in one call (:func:`simulate_log`): the dataset, a
logging ranker and the click model.
"""
from __future__ import annotations

from ultr_core.data.sources import load_dataset

__all__ = ["simulate_log", "APP_MAX_LOG_ROWS", "APP_MAX_SWEEP_SESSIONS", "check_app_rows", "app_sessions",
           "longest_list"]

#: the app simulates at most this many log rows (≈ 0.5 GB) — from a page, a link or a preset alike; the CLI allows
#: :data:`ultr_core.simulation.clickmodel.MAX_LOG_ROWS` (issue #50: links were not bounded like the pages)
APP_MAX_LOG_ROWS = 10_000_000
#: most sessions per cell of a Compare sweep over sessions (the page's slider's top)
APP_MAX_SWEEP_SESSIONS = 100_000


def app_sessions(n_sessions: int, list_len: int, max_rows: int = APP_MAX_LOG_ROWS) -> int:
    """The most sessions, at most ``n_sessions``, whose log of ``list_len`` documents a list stays within
    ``max_rows``.

    >>> app_sessions(6_000_000, 10), app_sessions(5_000, 10)
    (1000000, 5000)
    """
    return int(min(int(n_sessions), max(1, max_rows // max(int(list_len), 1))))


def longest_list(split) -> int:
    """The longest candidate list of a data split (what one session's rows are at most); 0 for no query."""
    import numpy as np
    return int(np.diff(split.offsets).max()) if split.n_queries else 0


def check_app_rows(n_sessions: int, split, max_rows: int = APP_MAX_LOG_ROWS) -> None:
    """Refuse a log of ``n_sessions`` over the lists of ``split`` above the app's row limit, naming sessions, list
    length and the way out."""
    from ultr_core.errors import ConfigError
    list_len = longest_list(split)
    if int(n_sessions) * int(list_len) > max_rows:
        raise ConfigError("sessions", f"{int(n_sessions):,} sessions × {list_len} documents = "
                                      f"{int(n_sessions) * list_len:,} rows exceed the app's limit of {max_rows:,} "
                                      "(use fewer sessions, or the command line: python -m ultr_core simulate)")


def simulate_log(spec: str, config=None, *, n_sessions: int = 20_000, seed: int = 0, data_seed: int = 0):
    """Load ``spec`` and simulate a training-split click log: returns (dataset, simulator, log).
    Fully synthetic ``ig:K`` data keeps its given list order (it has no features to rank by)."""
    from dataclasses import replace

    from ultr_core.simulation.clickmodel import ClickModelConfig
    from ultr_core.simulation.simulator import ClickSimulator
    ds = load_dataset(spec, data_seed)
    cfg = config or ClickModelConfig()
    if str(spec).startswith("ig") and cfg.logging != "given":
        cfg = replace(cfg, logging="given")
    sim = ClickSimulator(cfg, seed=seed).fit(ds)
    return ds, sim, sim.simulate(ds.train, n_sessions, seed=seed)
