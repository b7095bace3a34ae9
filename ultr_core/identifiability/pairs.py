"""Intervention sets and the budget of an estimation (:mod:`ultr_core.identifiability.estimation`).

:func:`intervention_sets` lists the ordered pairs of (document, factor) rows that share a document — the rows behind
Agarwal et al.'s intervention sets — refused past ``max_pairs``; :class:`Budget` says what one estimation may spend
in a shared server.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ultr_core.errors import ConfigError

__all__ = ["MAX_INTERVENTION_PAIRS", "Budget", "Stopped", "intervention_sets", "app_budget", "APP_MAX_PAIRS",
           "APP_BOOTSTRAP_SECONDS"]

MAX_INTERVENTION_PAIRS = 50_000_000
#: the app's budget for one estimation: intervention pairs (a full AllPairs fit over 380,000 pairs took ≈ 6 s here),
#: seconds of bootstrap refits, resamples between two checks of a closed tab
APP_MAX_PAIRS = 1_000_000
APP_BOOTSTRAP_SECONDS = 20.0
APP_CHUNK = 5


class Stopped(Exception):
    """The estimation was stopped (its tab closed): nothing is returned or cached."""


@dataclass(frozen=True)
class Budget:
    """What one estimation may spend in a shared server (issue #50): intervention pairs (the size of every fit),
    seconds of bootstrap refits (then the resamples done so far give the interval, said in a note) and ``stop()``
    (a closed tab): checked between chunks of at most ``chunk`` resamples.  The default spends as the CLI does."""

    max_pairs: int = MAX_INTERVENTION_PAIRS
    seconds: float | None = None
    stop: object = None
    chunk: int | None = None

    def spent(self, t0: float) -> bool:
        """True once the seconds are spent; raises :class:`Stopped` when ``stop()`` says so."""
        import time
        if self.stop is not None and self.stop():
            raise Stopped("the estimation was stopped")
        return self.seconds is not None and time.monotonic() - t0 > self.seconds


def app_budget(stop=None) -> Budget:
    """The shared server's budget (:data:`APP_MAX_PAIRS`, :data:`APP_BOOTSTRAP_SECONDS`), ``stop`` a closed-tab
    test."""
    return Budget(APP_MAX_PAIRS, APP_BOOTSTRAP_SECONDS, stop, APP_CHUNK)


def intervention_sets(doc: np.ndarray, fac: np.ndarray, max_pairs: int = MAX_INTERVENTION_PAIRS):
    """All ordered pairs (i, j), i ≠ j, of (document, factor) rows that share a document:
    the rows behind Agarwal et al.'s intervention sets.  Vectorised by document degree."""
    order = np.argsort(doc, kind="stable")
    d = doc[order]
    starts = np.flatnonzero(np.r_[True, d[1:] != d[:-1]]) if len(d) else np.zeros(0, np.int64)
    deg = np.diff(np.r_[starts, len(d)])
    total = int((deg * (deg - 1)).sum())
    if total > max_pairs:
        raise ConfigError("estimation", f"{total:,} intervention pairs exceed the cap {max_pairs:,}; "
                                        "estimate on a coarser bias factor (e.g. position alone)")
    a_out, b_out = [], []
    for m in np.unique(deg[deg > 1]):            # one block per document degree (a handful), not per document
        s = starts[deg == m]
        block = order[s[:, None] + np.arange(m)[None, :]]
        i, j = np.nonzero(~np.eye(m, dtype=bool))
        a_out.append(block[:, i].ravel())
        b_out.append(block[:, j].ravel())
    if not a_out:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(a_out), np.concatenate(b_out)
