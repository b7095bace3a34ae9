"""Click logs with the edges real logs have, and a known truth (issue #58's edge-case corpus): the tests, the
coverage studies and the benchmarks draw from here, so each edge is made one way.

* :func:`sparse_log` — a Yandex-like log: many queries with few sessions (Zipf), lists mostly fixed, adjacent
  swaps in a share of the sessions, PBM clicks, and a share of documents nearly always clicked (rarely shown, they
  are clicked at every impression);
* :func:`bridge_log` — two blocks of positions (1–3 and 4–6) with swaps inside each, joined by one document shown at
  position 3 or 4 in a small share of the sessions: everything known about positions 4–6 relative to position 1
  passes through it;
* :func:`shuffled_log` — lists that vary as a real log's do: each session shows ``depth`` of its query's 20
  documents in a fresh random order, few sessions per query, so most documents have a few impressions and some are
  clicked at each of them (the log on which the Newton fit used to stop unconverged).

Each returns (a click table with session_id, query_id, doc_id, position, click; the true examination θ per
position).

>>> frame, theta = bridge_log(0, n_sessions=2000)
>>> sorted(frame.columns), len(frame), theta.tolist()[:2]
(['click', 'doc_id', 'position', 'query_id', 'session_id'], 12000, [1.0, 0.8])
>>> int(((frame["query_id"] == 0) & (frame["doc_id"] == 7)).sum()) > 0
True
"""
from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["sparse_log", "bridge_log", "shuffled_log", "SPARSE_THETA", "BRIDGE_THETA"]

SPARSE_THETA = np.array([1, .85, .7, .55, .45, .37, .3, .25, .22, .2])
BRIDGE_THETA = np.array([1.0, 0.8, 0.6, 0.45, 0.35, 0.3])


def _frame(q, docs, clicks) -> pd.DataFrame:
    n, depth = docs.shape
    return pd.DataFrame({"session_id": np.repeat(np.arange(n), depth), "query_id": np.repeat(q, depth),
                         "doc_id": docs.ravel(), "position": np.tile(np.arange(1, depth + 1), n),
                         "click": clicks.ravel().astype(int)})


def _swap(rng, docs, lo: int, hi: int, share: float) -> None:
    """Swap one adjacent pair inside positions lo … hi − 1 (0-based) in a ``share`` of the sessions, in place."""
    rows = np.flatnonzero(rng.random(len(docs)) < share)
    i = rng.integers(lo, hi - 1, len(rows))
    a = docs[rows, i].copy()
    docs[rows, i] = docs[rows, i + 1]
    docs[rows, i + 1] = a


def sparse_log(seed: int, *, n_sessions: int = 6000, n_queries: int = 600, depth: int = 10, swap: float = 0.08,
               always: float = 0.05):
    """A Yandex-like log (module docstring): query popularity Zipf(1.6), 20 candidates per query, attractiveness
    Beta(0.5, 1.2) with a share ``always`` set to 0.995."""
    rng = np.random.default_rng(seed)
    q = rng.zipf(1.6, n_sessions) % n_queries
    alpha = rng.beta(0.5, 1.2, (n_queries, 20))
    alpha[rng.random((n_queries, 20)) < always] = 0.995
    theta = SPARSE_THETA[:depth]
    docs = np.argsort(rng.random((n_queries, 20)), axis=1)[:, :depth][q]
    _swap(rng, docs, 0, depth, swap)
    clicks = rng.random(docs.shape) < alpha[q[:, None], docs] * theta[None, :]
    return _frame(q, docs, clicks), theta


def bridge_log(seed: int, *, n_sessions: int = 20_000, n_queries: int = 200, bridge: float = 0.008, swap: float = 0.3):
    """Two blocks of positions joined by one document (module docstring): each query has 8 documents, 0–5 shown in
    order with adjacent swaps inside each block in a share ``swap`` of the sessions; in a share ``bridge`` of the
    sessions query 0's document 7 takes position 3 or 4."""
    rng = np.random.default_rng(seed)
    depth = len(BRIDGE_THETA)
    alpha = rng.uniform(0.1, 0.8, (n_queries, 8))
    q = rng.integers(0, n_queries, n_sessions)
    docs = np.tile(np.arange(depth), (n_sessions, 1))
    _swap(rng, docs, 0, 3, swap)
    _swap(rng, docs, 3, 6, swap)
    rows = np.flatnonzero(rng.random(n_sessions) < bridge)
    q[rows] = 0
    docs[rows, rng.integers(2, 4, len(rows))] = 7
    clicks = rng.random(docs.shape) < alpha[q[:, None], docs] * BRIDGE_THETA[None, :]
    return _frame(q, docs, clicks), BRIDGE_THETA.copy()


def shuffled_log(seed: int, *, n_sessions: int = 4000, n_queries: int = 400, depth: int = 10):
    """Varied lists (module docstring): attractiveness uniform in [0, 0.5], examination 1/rank (the generator of
    ``benchmarks/varied_lists.py``, small)."""
    rng = np.random.default_rng(seed)
    alpha = rng.uniform(0.0, 0.5, (n_queries, 20))
    theta = 1.0 / np.arange(1, depth + 1)
    q = rng.integers(0, n_queries, n_sessions)
    docs = np.argsort(rng.random((n_sessions, 20)), axis=1)[:, :depth]
    clicks = rng.random(docs.shape) < alpha[q[:, None], docs] * theta[None, :]
    return _frame(q, docs, clicks), theta
