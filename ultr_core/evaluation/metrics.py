"""Ranking and identifiability metrics (SPEC §4), vectorised over queries.

Conventions:

* Scores are ranked in descending order; ties keep the stored row order (stable sort).
  scikit-learn's ``ndcg_score`` instead averages over tied orders, so the two agree
  whenever scores have no ties.
* nDCG@k: gain ``2^y − 1``, discount ``1/log2(rank + 1)``.  Queries whose ideal DCG@k is 0
  (no relevant document) are **excluded from the mean**, as ULTRA does (allRank counts
  them as 1).  The per-query array holds NaN for them.
* MAP: binary relevance ``y ≥ threshold`` (default 1); AP = mean over relevant documents of
  precision at their rank; queries without a relevant document are excluded.
* ARP (average relevant position): per query, the mean 1-based rank of the relevant
  (``y ≥ threshold``) documents; averaged over queries with one.  Lower is better.
* MCC (identifiability paper): Pearson correlation between predicted and true relevance
  probabilities over documents — relevance recovered up to scale gives 1.
* observation-curve error: both curves normalised by position 1, mean absolute relative
  error ``mean_p |ô_p/ô_1 − o_p/o_1| / (o_p/o_1)`` over positions with ``o_p > 0``.
"""
from __future__ import annotations

import numpy as np

from ultr_core.data.dataset import RankingData

__all__ = ["ndcg", "average_precision", "arp", "mcc", "click_mse", "observation_curve_error",
           "ranking_metrics", "ranked_labels"]


def _pad(values, offsets, fill):
    sizes = np.diff(offsets)
    width = int(sizes.max()) if len(sizes) else 0
    out = np.full((len(sizes), width), fill, dtype=np.result_type(np.asarray(values).dtype, type(fill)))
    row = np.repeat(np.arange(len(sizes)), sizes)
    col = np.arange(offsets[-1]) - np.repeat(offsets[:-1], sizes)
    out[row, col] = values
    return out, sizes


def ranked_labels(scores, labels, offsets) -> tuple[np.ndarray, np.ndarray]:
    """Labels per query in ranked order, as a (Q, L) matrix padded with −1, and list sizes."""
    scores = np.asarray(scores, dtype=np.float64)
    labels = np.asarray(labels)
    offsets = np.asarray(offsets, dtype=np.int64)
    if scores.shape != labels.shape or scores.ndim != 1:
        raise ValueError(f"scores {scores.shape} and labels {labels.shape} must be 1-D and equal length")
    if not np.all(np.isfinite(scores)):
        raise ValueError("scores contain NaN or infinity")
    S, sizes = _pad(scores, offsets, -np.inf)
    Y, _ = _pad(labels.astype(np.float64), offsets, -1.0)
    order = np.argsort(-S, axis=1, kind="stable")
    return np.take_along_axis(Y, order, axis=1), sizes


def _discounts(width):
    return 1.0 / np.log2(np.arange(2, width + 2))


def _per_query(num, den, per_query: bool):
    """num/den per query, NaN where den is 0 (no relevant document); their mean over the rest."""
    with np.errstate(invalid="ignore", divide="ignore"):
        q = np.where(den > 0, num / den, np.nan)
    if per_query:
        return q
    return float(np.nanmean(q)) if np.any(den > 0) else float("nan")


def _binary_ranked(scores, labels, offsets, threshold):
    """0/1 relevance (y ≥ threshold) per query in ranked order, and the 1-based ranks."""
    Y, _ = ranked_labels(scores, labels, offsets)
    return (Y >= threshold).astype(np.float64), np.arange(1, Y.shape[1] + 1)


def ndcg(scores, labels, offsets, *, k: int = 10, per_query: bool = False):
    """Mean nDCG@k over queries with a relevant document (see module conventions)."""
    Y, _ = ranked_labels(scores, labels, offsets)
    kk = min(k, Y.shape[1])
    gains = np.where(Y >= 0, 2.0 ** np.maximum(Y, 0) - 1, 0.0)
    disc = _discounts(Y.shape[1])
    dcg = (gains[:, :kk] * disc[:kk]).sum(axis=1)
    ideal = -np.sort(-gains, axis=1)
    idcg = (ideal[:, :kk] * disc[:kk]).sum(axis=1)
    return _per_query(dcg, idcg, per_query)


def average_precision(scores, labels, offsets, *, threshold: int = 1, per_query: bool = False):
    """Mean average precision with binary relevance ``y ≥ threshold``."""
    rel, ranks = _binary_ranked(scores, labels, offsets, threshold)
    prec = np.cumsum(rel, axis=1) / ranks
    return _per_query((prec * rel).sum(axis=1), rel.sum(axis=1), per_query)


def arp(scores, labels, offsets, *, threshold: int = 1, per_query: bool = False):
    """Average relevant position (1-based; lower is better)."""
    rel, ranks = _binary_ranked(scores, labels, offsets, threshold)
    return _per_query((rel * ranks).sum(axis=1), rel.sum(axis=1), per_query)


def mcc(predicted, true) -> float:
    """Pearson correlation between predicted and true relevance (NaN if either is constant)."""
    a, b = np.asarray(predicted, np.float64), np.asarray(true, np.float64)
    if a.shape != b.shape or a.size < 2:
        raise ValueError("mcc needs two equal-length arrays with at least two entries")
    a, b = a - a.mean(), b - b.mean()
    den = np.sqrt((a * a).sum() * (b * b).sum())
    return float((a * b).sum() / den) if den > 0 else float("nan")


def spearman_within_query(predicted, true, offsets) -> float:
    """Spearman's rank correlation of predicted scores and true relevance **within queries**:
    both are ranked inside each query (ties averaged), centred per query, and correlated over all
    rows (a pooled within-query Spearman).  Ranking scores from listwise losses are fixed only up to
    a shift per query and live on a log scale, so a Pearson correlation of raw scores (:func:`mcc`)
    is not defined for them (an Oracle ranker could score the lowest); this one depends only on the
    order inside each query — what a ranker is for.

    >>> round(spearman_within_query([1.0, 2.0, 11.0, 30.0], [0.1, 0.5, 0.1, 0.5], [0, 2, 4]), 6)
    1.0
    """
    import pandas as pd
    a, b = np.asarray(predicted, np.float64), np.asarray(true, np.float64)
    offsets = np.asarray(offsets)
    if a.shape != b.shape or a.size < 2 or offsets[-1] != a.size:
        raise ValueError("spearman_within_query needs two equal-length arrays and offsets that end at their length")
    sizes = np.diff(offsets)
    q = np.repeat(np.arange(len(sizes)), sizes)
    frame = pd.DataFrame({"q": q, "a": a, "b": b})
    ranks = frame.groupby("q")[["a", "b"]].rank(method="average")
    centred = ranks - ranks.groupby(frame["q"]).transform("mean")
    x, y = centred["a"].to_numpy(), centred["b"].to_numpy()
    den = np.sqrt((x * x).sum() * (y * y).sum())
    return float((x * y).sum() / den) if den > 0 else float("nan")


def click_mse(predicted, true) -> float:
    """Mean squared error between predicted and true click probabilities."""
    a, b = np.asarray(predicted, np.float64), np.asarray(true, np.float64)
    if a.shape != b.shape:
        raise ValueError(f"shapes differ: {a.shape} vs {b.shape}")
    return float(np.mean((a - b) ** 2))


def observation_curve_error(estimated, true, relative: bool = True) -> float:
    """Mean absolute relative error of the position-1-normalised observation curves; with ``relative=False`` the mean
    absolute difference (what a chart of the two curves shows: a flat curve against a steep truth is far off).

    >>> observation_curve_error([1.0, 1.0], [1.0, 0.5]), observation_curve_error([2.0, 1.0], [1.0, 0.25], False)
    (0.5, 0.125)
    """
    e, t = np.asarray(estimated, np.float64), np.asarray(true, np.float64)
    if e.shape != t.shape or e.ndim != 1 or e.size < 1:
        raise ValueError("curves must be 1-D and equally long")
    if e[0] <= 0 or t[0] <= 0:
        raise ValueError("observation at position 1 must be positive to normalise")
    e, t = e / e[0], t / t[0]
    if not relative:
        return float(np.mean(np.abs(e - t)))
    ok = t > 0
    return float(np.mean(np.abs(e[ok] - t[ok]) / t[ok]))


def ranking_metrics(scores, data: RankingData, *, ks=(1, 3, 5, 10), threshold: int = 1) -> dict:
    """nDCG@k for each k, MAP and ARP of ``scores`` on ``data`` (one score per row)."""
    out = {f"ndcg@{k}": ndcg(scores, data.labels, data.offsets, k=k) for k in ks}
    out["map"] = average_precision(scores, data.labels, data.offsets, threshold=threshold)
    out["arp"] = arp(scores, data.labels, data.offsets, threshold=threshold)
    return out
