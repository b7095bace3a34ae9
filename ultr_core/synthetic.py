"""Datasets the library generates itself.

* :func:`make_synthetic_ltr` — a LETOR-like dataset (queries × candidates × dense
  features, graded labels 0–4 from a hidden non-linear function).  It is the app's
  built-in default.
* :func:`make_identifiability_data` — the fully synthetic one-hot datasets of the
  identifiability paper (App. C.1) with a requested number K of IG components.
"""
from __future__ import annotations

import numpy as np

from .dataset import LTRDataset, RankingData

__all__ = ["make_synthetic_ltr", "make_identifiability_data", "position_blocks"]

#: share of labels 0..4 in the synthetic default (skewed towards 0, as in LETOR data)
LABEL_SHARES = (0.45, 0.25, 0.15, 0.10, 0.05)


def make_synthetic_ltr(n_queries: int = 500, list_size: int = 10, n_features: int = 20,
                       seed: int = 0, split=(0.6, 0.2, 0.2), label_noise: float = 0.3) -> LTRDataset:
    """A LETOR-like synthetic dataset.

    Features are Gaussian around a per-query centre (queries differ, as in real data).
    A hidden score ``h(x) = a·tanh(W x) + 0.5·(x_0·x_1)`` (a random one-hidden-layer
    network plus one interaction) plus Gaussian noise of scale ``label_noise`` is cut at
    global quantiles into labels 0..4 with shares :data:`LABEL_SHARES`.  A linear
    ranker can therefore learn much but not all of the relevance.  Splits are by query.
    """
    if n_queries < 3 or list_size < 2 or n_features < 2:
        raise ValueError("need at least 3 queries, 2 documents per query and 2 features")
    if abs(sum(split) - 1) > 1e-9 or min(split) <= 0:
        raise ValueError(f"split fractions must be positive and add up to 1, got {split}")
    rng = np.random.default_rng(seed)
    n = n_queries * list_size
    centres = rng.normal(0, 0.5, size=(n_queries, n_features))
    X = np.repeat(centres, list_size, axis=0) + rng.normal(0, 1, size=(n, n_features))
    hidden = 16
    W = rng.normal(0, 1 / np.sqrt(n_features), size=(n_features, hidden))
    a = rng.normal(0, 1, size=hidden)
    h = np.tanh(X @ W) @ a + 0.5 * X[:, 0] * X[:, 1]
    h = (h - h.mean()) / h.std() + rng.normal(0, label_noise, size=n)
    cuts = np.quantile(h, np.cumsum(LABEL_SHARES)[:-1])
    y = np.searchsorted(cuts, h).astype(np.int64)
    qids = np.repeat(np.arange(n_queries, dtype=np.int64), list_size)
    doc_ids = np.arange(n, dtype=np.int64)
    full = RankingData(X.astype(np.float32), qids, y, doc_ids)
    order = rng.permutation(n_queries)
    n_tr = int(round(split[0] * n_queries))
    n_va = int(round(split[1] * n_queries))
    parts = (order[:n_tr], order[n_tr:n_tr + n_va], order[n_tr + n_va:])
    return LTRDataset(f"synthetic (seed {seed})", *(full.subset_queries(np.sort(p)) for p in parts))


def position_blocks(n_components: int, list_size: int = 10) -> list[np.ndarray]:
    """The 1-based positions of each IG component: ``list_size`` positions cut into
    ``n_components`` contiguous blocks (``numpy.array_split``; K=2 → {1..5}, {6..10})."""
    if not 1 <= n_components <= list_size:
        raise ValueError(f"number of components must be 1..{list_size}, got {n_components}")
    return [b + 1 for b in np.array_split(np.arange(list_size), n_components)]


def make_identifiability_data(n_components: int = 1, n_docs: int = 10_000, n_queries: int = 1_150,
                              list_size: int = 10, max_label: int = 4, seed: int = 0) -> RankingData:
    """Fully synthetic one-hot data whose identifiability graph has ``n_components`` components.

    As in App. C.1 of the identifiability paper: 10,000 one-hot documents, 1,150 queries
    of 10 documents, labels drawn uniformly from 0..4.  The positions are cut into K
    blocks (:func:`position_blocks`); every document belongs to one block and is only
    ever shown at positions of its block, so bias factors of different blocks never
    share a document and the IG has exactly K components (each block is internally
    connected because documents recur: every document is used once and the remaining
    slots reuse random documents of the block).  One-hot features are implied by
    ``doc_ids`` — the returned data has zero dense feature columns, and ``offsets``
    give the lists (the row order inside a list is the display position).
    """
    rng = np.random.default_rng(seed)
    blocks = position_blocks(n_components, list_size)
    labels_of_doc = rng.integers(0, max_label + 1, size=n_docs)
    grid = np.empty((n_queries, list_size), dtype=np.int64)
    # documents are split between blocks in proportion to the block's number of positions
    cut = np.round(np.cumsum([len(b) for b in blocks]) / list_size * n_docs).astype(int)
    pools = np.split(rng.permutation(n_docs), cut[:-1])
    for block, pool in zip(blocks, pools):
        slots = n_queries * len(block)
        if len(pool) > slots:
            raise ValueError("more documents than display slots: lower n_docs or raise n_queries")
        seq = np.concatenate([pool, rng.choice(pool, size=slots - len(pool))])
        grid[:, block - 1] = rng.permutation(seq).reshape(n_queries, len(block))
    docs = grid.ravel()
    qids = np.repeat(np.arange(n_queries, dtype=np.int64), list_size)
    return RankingData(np.zeros((docs.size, 0), np.float32), qids, labels_of_doc[docs], docs)


def make_contextual_log(n_sessions: int = 1_000_000, n_queries: int = 100_000, list_size: int = 10,
                        n_contexts: int = 5_000, n_docs: int = 20_000_000, seed: int = 0):
    """A large contextual-PBM click log without features, for identifiability benchmarks.

    Every query shows a fixed list of ``list_size`` documents drawn from a pool of
    ``n_docs`` (so a document occasionally recurs in another query at another position:
    the only source of IG edges); every (query, position) has a fixed context out of
    ``n_contexts`` (as in the paper's simulation); observation
    ``o = v_p^{max(wᵀz_ctx + 1, 0)}`` and relevance r ~ U[0.1, 1] per document.
    The context vectors travel in the log's metadata for node merging.
    """
    import pandas as pd

    from .clicklog import ClickLog
    from .simulation import EYE_TRACKING
    rng = np.random.default_rng(seed)
    lists = rng.integers(0, n_docs, size=(n_queries, list_size))
    ctx = rng.integers(0, n_contexts, size=(n_queries, list_size)).astype(np.int32)
    z = rng.normal(0, 0.35, size=(n_contexts, 10))
    w = rng.uniform(-1, 1, size=10)
    q = rng.integers(0, n_queries, size=n_sessions)
    docs = lists[q]
    c = ctx[q]
    pos = np.arange(1, list_size + 1)
    obs = EYE_TRACKING[np.minimum(pos, 10) - 1][None, :] ** np.maximum(z @ w + 1, 0)[c]
    # relevance of a document: a hash of its id → U[0.1, 1] without a 20M-entry table
    rel = 0.1 + 0.9 * ((docs * 2654435761) % 1000003) / 1000003
    click = rng.random(docs.shape, dtype=np.float32) < rel * obs
    frame = pd.DataFrame({
        "session_id": np.repeat(np.arange(n_sessions, dtype=np.int64), list_size),
        "query_id": np.repeat(q.astype(np.int64), list_size),
        "doc_id": docs.ravel().astype(np.int64),
        "position": np.tile(pos.astype(np.int16), n_sessions),
        "shown": np.ones(docs.size, bool),
        "click": click.ravel().astype(np.int8),
        "context": c.ravel(),
        "true_relevance": rel.ravel().astype(np.float32),
        "true_observation": obs.ravel().astype(np.float32),
    })
    return ClickLog._trusted(frame, {"generator": "make_contextual_log", "seed": seed,
                                     "n_contexts": n_contexts,
                                     "context_vectors": np.round(z, 6).tolist()})
