"""The logging side of a simulation: the logging ranker (a linear pairwise ranker on 1 % of the
training queries), the crux features of individual-level observation and the coupling direction
(LBD §6.1; conventions in :mod:`ultr_core.simulation`).
"""
from __future__ import annotations

import numpy as np

from ultr_core.data.dataset import LTRDataset, RankingData
from ultr_core.simulation.clickmodel import N_CRUX

__all__ = ["fit_logging_ranker", "crux_features", "coupling_direction", "expected_exposure"]


def fit_logging_ranker(train: RankingData, fraction: float = 0.01,
                       rng: np.random.Generator | None = None) -> np.ndarray:
    """Weights of a linear pairwise ranker fitted on ``fraction`` of the training queries.

    Ranking-SVM style: a linear SVM (scikit-learn ``LinearSVC``) on feature differences
    of document pairs with different labels.  Queries are added beyond the fraction
    until at least one informative pair exists.
    """
    from sklearn.svm import LinearSVC
    rng = rng if rng is not None else np.random.default_rng(0)
    order = rng.permutation(train.n_queries)
    want = max(1, int(round(fraction * train.n_queries)))
    diffs = []
    for i, qi in enumerate(order):
        s, e = train.offsets[qi], train.offsets[qi + 1]
        y, X = train.labels[s:e], train.features[s:e]
        a, b = np.nonzero(y[:, None] > y[None, :])
        if len(a):
            diffs.append(X[a] - X[b])
        if i + 1 >= want and diffs:
            break
    if not diffs:
        return np.zeros(train.n_features, dtype=np.float32)   # all labels equal: no signal
    D = np.concatenate(diffs)
    D = np.concatenate([D, -D])
    t = np.concatenate([np.ones(len(D) // 2), -np.ones(len(D) // 2)])
    svm = LinearSVC(C=1.0, fit_intercept=False, max_iter=5000, random_state=int(rng.integers(2**31)))
    svm.fit(D, t)
    return svm.coef_.ravel().astype(np.float32)


def crux_features(data: RankingData | LTRDataset, n: int = N_CRUX, seed: int = 0):
    """Indices of the ``n`` most important features of an ExtraTrees regressor fitted on
    min–max normalised features → labels, with the per-feature min and span used (LBD §6.1).

    Given an :class:`LTRDataset` the fit and the min/max use every split (the paper fits "in the
    total dataset", the official code scales over train + valid + test); given one split, that
    split only (the legacy ``train01`` scaling)."""
    from sklearn.ensemble import ExtraTreesRegressor
    if isinstance(data, LTRDataset):
        parts = list(data.splits())
        X = np.concatenate([p.features for p in parts])
        y = np.concatenate([p.labels for p in parts])
    else:
        X, y = data.features, data.labels
    lo, hi = X.min(axis=0), X.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1)
    model = ExtraTreesRegressor(n_estimators=50, min_samples_leaf=5, random_state=seed, n_jobs=1)
    model.fit((X - lo) / span, y)
    idx = np.argsort(-model.feature_importances_, kind="stable")[:min(n, X.shape[1])]
    return idx, lo[idx], span[idx]


def coupling_direction(n: int, seed: int | np.random.Generator) -> np.ndarray:
    """The coupling direction u: ``n`` draws from U[−1, 1] min–max rescaled so that its smallest
    entry is −1 and its largest +1 (the official click-model weights are ±η at their extremes).

    >>> u = coupling_direction(10, 0)
    >>> float(u.min()), float(u.max())
    (-1.0, 1.0)
    """
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng([int(seed), 7])
    u = rng.uniform(-1, 1, size=n)
    if n >= 2 and u.max() > u.min():
        u = 2 * (u - u.min()) / (u.max() - u.min()) - 1
    return u


def expected_exposure(curve: np.ndarray, n_candidates: np.ndarray, *, shuffle: float = 0.0, n_blocks: int = 1,
                      intervention: bool = False, topk: int | None = None) -> np.ndarray:
    """E_π[curve at the displayed position] for the document at each logged rank (Q, L): the logging policy π of
    the simulator (:meth:`ClickSimulator.draw_sessions`) — the ranker's order, then with ``intervention`` position 1
    swapped with a uniform rank among the shown ones, then a share ``shuffle`` of the sessions put in a uniform order
    within ``n_blocks`` blocks of the list.  With ``curve`` = θ this is policy-aware IPS's propensity (Oosterhuis &
    de Rijke, SIGIR 2020: ρ(d) = Σ_k π(k | d) θ_k), with ``curve`` = α the doubly robust estimator's expected
    α (Oosterhuis, TOIS 2023; ``utils/estimators.py: expected_alpha_beta``).  ``curve`` is 0 where a position is
    not shown (below the top-k cut) and is cut or padded with 0 to the list length.

    >>> expected_exposure(np.array([1.0, 0.5, 0.0]), np.array([3]), shuffle=0.5).round(4).tolist()   # top-2 of 3
    [[0.75, 0.5, 0.25]]
    >>> expected_exposure(np.array([1.0, 0.5]), np.array([2]), intervention=True).round(4).tolist()
    [[0.75, 0.75]]
    """
    n = np.asarray(n_candidates, np.int64)[:, None]
    L = int(n.max()) if n.size else 0
    theta = np.zeros(L)
    theta[:min(L, len(curve))] = np.asarray(curve, np.float64)[:L]
    pos = np.arange(L)[None, :]
    real = pos < n
    g = np.where(real, theta[None, :], 0.0)
    if shuffle > 0:
        block = np.where(real, (pos * int(n_blocks)) // np.maximum(n, 1), -1)
        same = (block[:, :, None] == block[:, None, :]) & real[:, None, :]
        mean = (same * g[:, None, :]).sum(2) / np.maximum(same.sum(2), 1)
        g = np.where(real, (1 - shuffle) * g + shuffle * mean, 0.0)
    if intervention and L:
        n_sh = np.maximum(np.minimum(n, topk) if topk is not None else n, 1)
        inside = pos < n_sh
        swapped = np.where(inside, g[:, :1] / n_sh + (1 - 1 / n_sh) * g, g)
        swapped[:, :1] = (np.where(inside, g, 0.0).sum(1) / n_sh[:, 0])[:, None]
        g = np.where(real, swapped, 0.0)
    return g
