"""The one in-memory learning-to-rank dataset type.

A :class:`RankingData` holds one split: a float32 feature matrix with one row per
(query, candidate document), the query id of every row, the query boundaries
(rows of query ``i`` are ``offsets[i]:offsets[i+1]``), graded labels and optional
document ids.  Rows of one query are always contiguous.  :class:`LTRDataset`
bundles the ``train`` / ``valid`` / ``test`` splits with a name.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

import numpy as np

__all__ = ["RankingData", "LTRDataset", "concat_ranges"]


def concat_ranges(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """``concatenate([arange(s, e) for s, e in zip(starts, ends)])`` without a Python loop."""
    starts = np.asarray(starts, dtype=np.int64)
    lengths = np.asarray(ends, dtype=np.int64) - starts
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    shift = np.repeat(starts - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    return np.arange(total, dtype=np.int64) + shift


@dataclass(frozen=True)
class RankingData:
    """One split of a learning-to-rank dataset.

    Parameters
    ----------
    features : (n_rows, n_features) float32
    qids : (n_rows,) int64 query id of each row (rows of a query contiguous)
    labels : (n_rows,) int64 graded relevance labels ``0..max_label``
    doc_ids : optional (n_rows,) array of document identifiers (any dtype)
    """

    features: np.ndarray
    qids: np.ndarray
    labels: np.ndarray
    doc_ids: np.ndarray | None = None
    offsets: np.ndarray = field(init=False)

    def __post_init__(self):
        X = np.ascontiguousarray(self.features, dtype=np.float32)
        q = np.asarray(self.qids).astype(np.int64, copy=False)
        y = np.asarray(self.labels)
        if X.ndim != 2:
            raise ValueError(f"features must be 2-D (rows × features), got shape {X.shape}")
        n = X.shape[0]
        if q.shape != (n,) or y.shape != (n,):
            raise ValueError(
                f"qids {q.shape} and labels {y.shape} must both have one entry per feature row ({n})")
        if not np.all(np.isfinite(X)):
            bad = int(np.argwhere(~np.isfinite(X))[0, 0])
            raise ValueError(f"features contain NaN or infinity (first at row {bad})")
        if y.size and (np.any(y < 0) or np.any(y != np.round(y))):
            raise ValueError("labels must be non-negative integers")
        y = y.astype(np.int64)
        if self.doc_ids is not None and len(self.doc_ids) != n:
            raise ValueError(f"doc_ids has {len(self.doc_ids)} entries, expected {n}")
        change = np.flatnonzero(np.diff(q)) + 1 if n else np.array([], dtype=np.int64)
        offsets = np.concatenate([[0], change, [n]]).astype(np.int64) if n else np.zeros(1, np.int64)
        starts = q[offsets[:-1]]
        if len(np.unique(starts)) != len(starts):
            raise ValueError("rows of each query must be contiguous (a qid re-appears after another qid)")
        object.__setattr__(self, "features", X)
        object.__setattr__(self, "qids", q)
        object.__setattr__(self, "labels", y)
        object.__setattr__(self, "offsets", offsets)

    # ------------------------------------------------------------------ sizes
    @property
    def n_rows(self) -> int:
        return int(self.features.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.features.shape[1])

    @property
    def n_queries(self) -> int:
        return len(self.offsets) - 1

    @property
    def query_ids(self) -> np.ndarray:
        """The distinct query ids, in storage order."""
        return self.qids[self.offsets[:-1]]

    @property
    def list_sizes(self) -> np.ndarray:
        return np.diff(self.offsets)

    @property
    def max_label(self) -> int:
        return int(self.labels.max()) if self.n_rows else 0

    def query_index(self) -> np.ndarray:
        """Position (0..n_queries-1) of each row's query."""
        return np.repeat(np.arange(self.n_queries), self.list_sizes)

    def rank_in_list(self) -> np.ndarray:
        """0-based place of each row inside its query's list (the row order)."""
        return np.arange(self.n_rows) - np.repeat(self.offsets[:-1], self.list_sizes)

    def padded(self, values: np.ndarray, fill=0) -> tuple[np.ndarray, np.ndarray]:
        """Scatter a per-row array into a (n_queries, max_list) matrix; returns (matrix, mask)."""
        sizes = self.list_sizes
        width = int(sizes.max()) if len(sizes) else 0
        out = np.full((self.n_queries, width), fill, dtype=np.asarray(values).dtype)
        col = self.rank_in_list()
        row = self.query_index()
        out[row, col] = values
        mask = np.zeros((self.n_queries, width), dtype=bool)
        mask[row, col] = True
        return out, mask

    def subset_queries(self, query_positions: np.ndarray) -> "RankingData":
        """A new split made of the given queries (positions into ``query_ids``)."""
        query_positions = np.asarray(query_positions, dtype=np.int64)
        starts, ends = self.offsets[query_positions], self.offsets[query_positions + 1]
        rows = concat_ranges(starts, ends)
        return RankingData(self.features[rows], self.qids[rows], self.labels[rows],
                           None if self.doc_ids is None else self.doc_ids[rows])

    def with_features(self, features: np.ndarray) -> "RankingData":
        return RankingData(features, self.qids, self.labels, self.doc_ids)

    def __repr__(self) -> str:
        return (f"RankingData(queries={self.n_queries}, rows={self.n_rows}, "
                f"features={self.n_features}, max_label={self.max_label})")


@dataclass(frozen=True)
class LTRDataset:
    """Train / valid / test splits of one learning-to-rank dataset."""

    name: str
    train: RankingData
    valid: RankingData
    test: RankingData

    def __post_init__(self):
        from ultr_core.errors import DataFormatError
        for split_name, part in zip(("train", "valid", "test"), self.splits()):
            if part.n_rows == 0:
                raise DataFormatError(self.name, f"the {split_name} split is empty: every split needs at least "
                                                 "one query")
        widths = {s.n_features for s in self.splits() if s.n_rows}
        if len(widths) > 1:
            raise ValueError(f"splits of {self.name!r} have different feature counts: {sorted(widths)}")

    def splits(self) -> Iterator[RankingData]:
        yield from (self.train, self.valid, self.test)

    def split(self, name: str) -> RankingData:
        if name not in ("train", "valid", "test"):
            raise ValueError(f"unknown split {name!r}; expected train, valid or test")
        return getattr(self, name)

    @property
    def n_features(self) -> int:
        return self.train.n_features

    @property
    def max_label(self) -> int:
        return max(s.max_label for s in self.splits())

    def map_features(self, fn) -> "LTRDataset":
        return LTRDataset(self.name, *(s.with_features(fn(s.features)) for s in self.splits()))

    def summary(self) -> dict:
        return {
            "name": self.name,
            "features": self.n_features,
            "max_label": self.max_label,
            **{f"{s}_queries": self.split(s).n_queries for s in ("train", "valid", "test")},
            **{f"{s}_rows": self.split(s).n_rows for s in ("train", "valid", "test")},
        }
