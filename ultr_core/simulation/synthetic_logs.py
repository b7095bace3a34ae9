"""Click tables drawn directly (no session loop): the identifiability paper's binomial CTR table
(App. C.1, 10⁶ impressions per row) and a large contextual log for the ingestion benchmarks.
"""
from __future__ import annotations

import numpy as np

from ultr_core.data.dataset import RankingData

__all__ = ["binomial_ctr_table", "make_contextual_log"]


def binomial_ctr_table(data: RankingData, *, impressions: int = 1_000_000, eta: float = 1.0, noise: float = 0.1,
                       denominator_label: int = 5, seed: int = 0):
    """Clicks as the paper simulates its fully synthetic data: every displayed (query, position)
    row gets ``impressions`` impressions and Binomial(impressions, r·o) clicks, with
    r = ε + (1 − ε)(2^y − 1)/(2^5 − 1) (denominator 31, App. C.1) and o the eye-tracking
    curve to the power η.  Returns a :class:`~ultr_core.logs.ingestion.CountTable`
    over (doc_id, position) and the true r per document code and o per position.
    """
    import pandas as pd

    from ultr_core.logs.ingestion import CountTable
    from ultr_core.simulation.clickmodel import EYE_TRACKING, relevance_probability
    rng = np.random.default_rng([seed, 5])
    pos = data.rank_in_list() + 1                                   # the row order is the display order
    r = relevance_probability(data.labels, denominator_label, noise)
    o = EYE_TRACKING[np.minimum(pos, 10) - 1] ** eta
    clicks = rng.binomial(impressions, r * o)
    frame = pd.DataFrame({"doc_id": np.asarray(data.doc_ids, np.int64), "position": pos.astype(np.int16),
                          "impressions": np.full(data.n_rows, impressions,
                                                 np.int64), "clicks": clicks.astype(np.int64)})
    truth = pd.Series(r, index=frame["doc_id"]).groupby(level=0).first()
    return CountTable(frame, ("doc_id",), ("position",), source="binomial CTRs"), truth, EYE_TRACKING ** eta


def make_contextual_log(*, n_sessions: int = 1_000_000, n_queries: int = 100_000, list_size: int = 10,
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

    from ultr_core.logs.clicklog import ClickLog
    from ultr_core.simulation.clickmodel import EYE_TRACKING
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
