"""The identifiability paper's semi-synthetic study (§5.2, Table 2 / Table 6, App. C.1–C.3): real
LETOR lists with a contextual position-based click model whose bias factor is (context, position).

Every training query shows the top ``list_size`` candidates of a logging ranker (the linear
pairwise ranker fitted on 1 % of the labelled queries, as the paper's Ranking SVM); every
(query, position) slot gets a random context type out of ``n_contexts``; context vectors
z ~ N(0, 0.35²)¹⁰, weights w ~ U[−1, 1]¹⁰ and o(ctx, p) = v_p^{η·max(wᵀz + 1, 0)} (Fang et al.
2019, App. C.2); r = ε + (1 − ε)(2^y − 1)/(2^{y_max} − 1); every displayed row gets
``impressions`` impressions and Binomial(impressions, r·o) clicks (the official script: 10⁶).
Documents are identified by their feature vector ("a unique identifier based on ranking
features", App. C.3), so a document links two bias factors only when the same feature vector
is shown under both.

:func:`contextual_study_data` builds this; :func:`score_on_test` turns an embedding fit into a
test-set ranker as the paper does (a gradient-boosted regressor on the features with target
ctr / ô — the paper uses LightGBM, we use scikit-learn's histogram gradient boosting with the
same trees, learning rate and leaf size).

>>> from ultr_core.data.synthetic import make_synthetic_ltr
>>> data = contextual_study_data(make_synthetic_ltr(n_queries=60, seed=0), n_contexts=5, seed=0)
>>> sorted(data.table.bias), len(data.context_vectors), bool(data.table.frame["clicks"].gt(0).all())
(['context', 'position'], 5, True)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ultr_core.data.dataset import LTRDataset, RankingData
from ultr_core.errors import ConfigError
from ultr_core.evaluation.metrics import ndcg
from ultr_core.logs.ingestion import CountTable

__all__ = ["ContextualStudyData", "contextual_study_data", "score_on_test", "MAX_STUDY_CONTEXTS"]

#: most context types the study accepts (the paper uses 5,000)
MAX_STUDY_CONTEXTS = 1_000_000


@dataclass(frozen=True)
class ContextualStudyData:
    """Click-through table and truth of the semi-synthetic study (see the module docstring)."""

    table: CountTable                #: (doc_id) × (context, position): impressions, clicks per displayed row
    true_relevance: pd.Series        #: r per document code (mean over rows sharing a feature vector)
    context_vectors: np.ndarray      #: z per context id (n_contexts × 10), for node merging
    lists: RankingData               #: the displayed training lists (doc_ids = document codes), for nDCG
    doc_features: np.ndarray         #: feature vector of every document code (mean over its rows)
    test: RankingData                #: the test split, every candidate (scored by the regressor)
    true_observation: np.ndarray     #: o of every displayed row (aligned with ``table.frame``)


def contextual_study_data(dataset: LTRDataset, *, n_contexts: int = 5_000, impressions: int = 1_000_000,
                          list_size: int = 10, eta: float = 1.0, noise: float = 0.1,
                          logging_fraction: float = 0.01, identity_features: int | None = None,
                          seed: int = 0) -> ContextualStudyData:
    """Displayed lists, contexts and binomial clicks of the semi-synthetic study (module docstring).

    ``identity_features`` = f identifies documents by their first f features only (as Fig. 7c/d
    removes features), so that more rows share a document; None: the whole feature vector."""
    from ultr_core.simulation.clickmodel import (
        EYE_TRACKING,
        ClickModelConfig,
        relevance_probability,
    )
    from ultr_core.simulation.simulator import ClickSimulator
    if int(n_contexts) != n_contexts or not 1 <= n_contexts <= MAX_STUDY_CONTEXTS:
        raise ConfigError("n_contexts", f"must be a whole number from 1 to {MAX_STUDY_CONTEXTS:,}, got {n_contexts}")
    if not 1 <= list_size <= len(EYE_TRACKING):
        raise ConfigError("list_size", f"must be 1 to {len(EYE_TRACKING)} (the eye-tracking curve), got {list_size}")
    if identity_features is not None and not 1 <= identity_features <= dataset.n_features:
        raise ConfigError("identity_features", f"must be 1 to {dataset.n_features} (the data's features), got "
                                               f"{identity_features}")
    if dataset.n_features == 0:
        raise ConfigError("dataset", "the semi-synthetic study identifies documents by their features: the data "
                                     "has none")
    train = dataset.train
    sim = ClickSimulator(ClickModelConfig(logging="svm", logging_fraction=logging_fraction), seed=seed).fit(dataset)
    rows, mask = sim.logged_order(train)
    rows, mask = rows[:, :list_size], mask[:, :list_size]
    q_of, p_of = np.nonzero(mask)                          # displayed slots, query-major in display order
    shown = rows[q_of, p_of]
    rng = np.random.default_rng([seed, 7])
    ctx = rng.integers(0, n_contexts, size=mask.shape)[q_of, p_of]
    z = rng.normal(0, 0.35, size=(int(n_contexts), 10))
    w = rng.uniform(-1, 1, size=10)
    o = EYE_TRACKING[p_of] ** (eta * np.maximum(z @ w + 1, 0)[ctx])
    r = relevance_probability(train.labels[shown], max(dataset.max_label, 1), noise)
    clicks = rng.binomial(int(impressions), r * o)
    X = train.features[shown][:, :identity_features]
    _, doc = np.unique(X, axis=0, return_inverse=True)
    doc = doc.ravel().astype(np.int64)
    frame = pd.DataFrame({"doc_id": doc, "context": ctx.astype(np.int64), "position": (p_of + 1).astype(np.int16),
                          "impressions": np.full(len(doc), int(impressions), np.int64),
                          "clicks": clicks.astype(np.int64)})
    truth = pd.Series(r).groupby(doc).mean()
    lists = RankingData(np.zeros((len(doc), 0), np.float32), train.qids[shown], train.labels[shown], doc)
    table = CountTable(frame, ("doc_id",), ("context", "position"),
                       source=f"semi-synthetic, {n_contexts:,} contexts, binomial CTRs")
    feats = pd.DataFrame(train.features[shown]).groupby(doc).mean().to_numpy(np.float32)
    return ContextualStudyData(table, truth, z, lists, feats, dataset.test, o)


def score_on_test(doc_features: np.ndarray, documents: np.ndarray, ctr: np.ndarray, *, observation: np.ndarray,
                  test: RankingData, seed: int = 0, ks=(5, 10)) -> dict:
    """Test-set nDCG of a ranker trained as the paper does (App. C.3): a gradient-boosted regressor
    (500 trees, learning rate 0.1, at most 255 leaves, ≥ 100 rows per leaf — LightGBM's
    ``min_sum_hessian_in_leaf=100`` for squared error; half the rows when there are fewer than 200)
    on the features of every displayed
    (document, factor) row with target ctr / (ô + 10⁻⁵)."""
    from sklearn.ensemble import HistGradientBoostingRegressor
    target = np.asarray(ctr, np.float64) / (np.asarray(observation, np.float64) + 1e-5)
    model = HistGradientBoostingRegressor(max_iter=500, learning_rate=0.1, max_leaf_nodes=255,
                                          min_samples_leaf=min(100, max(len(target) // 2, 1)),
                                          early_stopping=False, random_state=seed)
    model.fit(doc_features[np.asarray(documents, np.int64)], target)
    scores = model.predict(test.features)
    return {f"test_ndcg@{k}": ndcg(scores, test.labels, test.offsets, k=k) for k in ks}
