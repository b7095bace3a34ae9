"""Datasets the library generates itself (ranking data only; the click tables drawn on them are in
:mod:`ultr_core.simulation.synthetic_logs`).

* :func:`make_synthetic_ltr` — a LETOR-like dataset (queries × candidates × dense
  features, graded labels 0–4 from a hidden non-linear function).  It is the app's
  built-in default.
* :func:`make_identifiability_data` — one-hot datasets with a requested number K of IG
  components (uniform labels, dense blocks: the app's teaching data).
* :func:`make_paper_identifiability_data` — the identifiability paper's own fully synthetic
  layout (App. C.1: its K layouts, sparse links, skewed labels, relevance over 31).
"""
from __future__ import annotations

import numpy as np

from ultr_core.data.dataset import LTRDataset, RankingData

__all__ = ["LABEL_SHARES", "LIST_SIZE", "make_synthetic_ltr", "position_blocks", "make_identifiability_data",
           "PAPER_BLOCKS", "PAPER_LABEL_SHARES", "paper_edges", "make_paper_identifiability_data"]

#: share of labels 0..4 in the synthetic default (skewed towards 0, as in LETOR data)
LABEL_SHARES = (0.45, 0.25, 0.15, 0.10, 0.05)


#: candidates per query of the built-in synthetic data set (a shown top-k at or above it cuts nothing)
LIST_SIZE = 10


def make_synthetic_ltr(*, n_queries: int = 500, list_size: int = LIST_SIZE, n_features: int = 20,
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


def make_identifiability_data(*, n_components: int = 1, n_docs: int = 10_000, n_queries: int = 1_150,
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


#: the fully synthetic data's K-component layouts in the identifiability paper (App. C.1, Fig. 5):
#: blocks of 1-based positions, as in the official datasets (dataset_fully_simulation/K=*)
PAPER_BLOCKS = {1: [tuple(range(1, 11))], 2: [(1, 2, 3, 4), (5, 6, 7, 8, 9, 10)],
                3: [(1, 2, 3, 4), (5, 6, 7), (8, 9, 10)], 4: [(1, 2, 3), (4, 5, 6), (7, 8), (9, 10)]}
#: label shares 0..4 of the official fully synthetic data (K = 2: 38.4 / 34.5 / 22.0 / 3.5 / 1.6 %)
PAPER_LABEL_SHARES = (0.384, 0.345, 0.220, 0.035, 0.016)


def paper_edges(block) -> list[tuple[int, int]]:
    """Edges between the positions of one block: a chain plus one chord (first, first + 2) when
    the block has three or more positions — the shape of the official data's graphs (each
    position linked to one or two neighbours by ≈ 100 shared documents)."""
    b = list(block)
    edges = list(zip(b[:-1], b[1:]))
    if len(b) >= 3:
        edges.append((b[0], b[2]))
    return edges


def make_paper_identifiability_data(*, n_components: int = 1, n_queries: int = 1_150, docs_per_position: int = 1_000,
                                    shared_per_edge: int = 100, list_size: int = 10, seed: int = 0) -> RankingData:
    """The identifiability paper's fully synthetic data (App. C.1) with K = ``n_components``.

    Every position has its own pool of ``docs_per_position`` one-hot documents (10 × 1,000 ≈
    10,000), each shown there once; along every edge of :func:`paper_edges` inside a block of
    :data:`PAPER_BLOCKS`, ``shared_per_edge`` documents of the lower position are also shown at
    the higher one — the only links between positions, so the IG has exactly the blocks as
    components and each block is sparsely connected, as in the official data.  Remaining slots
    repeat the position's own documents.  Labels 0–4 follow :data:`PAPER_LABEL_SHARES`
    (skewed, ≈ 39/34/23/4/1 %).  Pair it with :func:`binomial_ctr_table` (10⁶ impressions per row).
    """
    if n_components not in PAPER_BLOCKS or list_size != 10:
        raise ValueError(f"the paper's layouts are for 10 positions and K = 1–4, got K = {n_components}")
    rng = np.random.default_rng(seed)
    own = {p: np.arange(docs_per_position) + (p - 1) * docs_per_position for p in range(1, list_size + 1)}
    incoming = {p: [] for p in own}
    for block in PAPER_BLOCKS[n_components]:
        for a, b in paper_edges(block):
            incoming[b].append(rng.choice(own[a], size=shared_per_edge, replace=False))
    grid = np.empty((n_queries, list_size), np.int64)
    for p in own:
        extra = np.concatenate(incoming[p]) if incoming[p] else np.empty(0, np.int64)
        mine = own[p][:max(n_queries - len(extra), 0)]
        fill = rng.choice(mine, size=n_queries - len(mine) - len(extra)) if len(mine) + len(extra) < n_queries \
            else np.empty(0, np.int64)
        grid[:, p - 1] = rng.permutation(np.concatenate([mine, extra, fill]))[:n_queries]
    n_docs = list_size * docs_per_position
    labels_of_doc = rng.choice(len(PAPER_LABEL_SHARES), size=n_docs, p=PAPER_LABEL_SHARES)
    docs = grid.ravel()
    qids = np.repeat(np.arange(n_queries, dtype=np.int64), list_size)
    return RankingData(np.zeros((docs.size, 0), np.float32), qids, labels_of_doc[docs], docs)
