"""Feature normalisation, as the papers do it.

* ``"query_minmax"`` — LETOR's *QueryLevelNorm*: each feature is min-max scaled to
  [0, 1] within each query (a constant feature becomes 0).  The MQ2008 files shipped in
  ``shared/data`` are already normalised this way; ULTRA's Yahoo!/Istella
  preprocessing leaves Yahoo!'s [0, 1] features as they are.
* ``"minmax"`` — global min-max fitted on the training split, applied to all splits
  and clipped to [0, 1].  The LBD simulation uses normalised features to fit the
  ExtraTrees model that picks the crux features; this is the normalisation we use there.
* ``"zscore"`` — mean/standard deviation fitted on the training split.
* ``"none"``.
"""
from __future__ import annotations

import numpy as np

from ultr_core.data.dataset import LTRDataset, RankingData

__all__ = ["normalize", "query_minmax", "NORMALIZATIONS"]

NORMALIZATIONS = ("none", "query_minmax", "minmax", "zscore")


def query_minmax(data: RankingData) -> np.ndarray:
    """Per-query min-max scaling of ``data.features`` (vectorised with ``reduceat``)."""
    X = data.features
    if data.n_rows == 0:
        return X.copy()
    starts = data.offsets[:-1]
    lo = np.minimum.reduceat(X, starts, axis=0)
    hi = np.maximum.reduceat(X, starts, axis=0)
    sizes = data.list_sizes
    lo, hi = np.repeat(lo, sizes, axis=0), np.repeat(hi, sizes, axis=0)
    span = hi - lo
    return np.where(span > 0, (X - lo) / np.where(span > 0, span, 1), 0).astype(np.float32)


def normalize(dataset: LTRDataset, method: str = "minmax") -> LTRDataset:
    """Return ``dataset`` with normalised features (statistics from the train split)."""
    if method not in NORMALIZATIONS:
        raise ValueError(f"unknown normalisation {method!r}; choose one of {NORMALIZATIONS}")
    if method == "none":
        return dataset
    if method == "query_minmax":
        return LTRDataset(dataset.name, *(s.with_features(query_minmax(s)) for s in dataset.splits()))
    X = dataset.train.features
    if method == "minmax":
        lo, hi = X.min(axis=0), X.max(axis=0)
        span = np.where(hi > lo, hi - lo, 1)
        return dataset.map_features(lambda F: np.clip((F - lo) / span, 0, 1))
    mu, sd = X.mean(axis=0), X.std(axis=0)
    sd = np.where(sd > 0, sd, 1)
    return dataset.map_features(lambda F: (F - mu) / sd)
