"""DCG@k of a candidate ranking where editorial judgements exist (issue #47, item 4): a direct computation on the
judged documents — no click model, no propensity — weighted by the log's query mix, with its interval from the same
bootstrap over sessions.  Unjudged documents count as gain 0; the share of the top-k slots that are judged is said
beside it.  DCG@k = Σ_{r≤k} (2^g − 1) / log₂(r + 1) (Järvelin & Kekäläinen 2002, the exponential gain of Burges et
al. 2005)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ultr_core.counterfactual.candidate import candidate_lists
from ultr_core.counterfactual.estimators import interval

__all__ = ["judged_value", "pair_grades"]


def pair_grades(judgements, pair_keys: pd.DataFrame) -> np.ndarray:
    """Each log pair's grade (NaN where unjudged), joined as text."""
    keys = pd.MultiIndex.from_frame(pair_keys[["query_id", "doc_id"]].astype(str))
    j = judgements.frame
    idx = keys.get_indexer(pd.MultiIndex.from_frame(j[["query_id", "doc_id"]].astype(str)))
    g = np.full(len(pair_keys), np.nan)
    g[idx[idx >= 0]] = j["grade"].to_numpy(np.float64)[idx >= 0]
    return g


def _dcg(lists: np.ndarray, grade: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    top = lists[:, :k]
    g = np.where(top >= 0, grade[np.maximum(top, 0)], np.nan)
    gain = np.nan_to_num(2.0 ** np.maximum(g, 0.0) - 1.0) / np.log2(np.arange(2, k + 2))[None, :]   # −2 counts 0
    return gain.sum(1), np.isfinite(g)


def judged_value(judgements, arrays, s, *, production: np.ndarray, nq: np.ndarray, n_boot: int, seed: int) -> dict:
    """DCG@k of the candidate and of the production order, with intervals over the same session resamples."""
    grade = pair_grades(judgements, arrays.pair_keys)
    if not np.isfinite(grade).any():
        return {"note": "no judgement matches a (query, document) pair of the log", "matched_pairs": 0}
    cand, judged = _dcg(s.cand, grade, s.k)
    lists = candidate_lists(production, arrays.pair_query, s.n_queries, depth=s.t.depth)
    prod, _ = _dcg(np.where(s.cand >= 0, lists, -1), grade, s.k)     # each query's own list length
    rng = np.random.default_rng(seed)
    per_q = np.stack([np.bincount(s.pq, rng.poisson(s.t.weight), s.n_queries) for _ in range(n_boot)])
    mean = lambda v, w: (w * v).sum(-1) / w.sum(-1)                  # noqa: E731
    n = int(s.t.weight.sum())
    return {"matched_pairs": int(np.isfinite(grade).sum()),
            "judged_share": float((nq[:, None] * judged).sum() / (nq * s.kq).sum()),
            f"dcg@{s.k}": interval(float(mean(cand, nq)), mean(cand[None, :], per_q), sessions=n),
            f"logged_dcg@{s.k}": interval(float(mean(prod, nq)), mean(prod[None, :], per_q), sessions=n)}
