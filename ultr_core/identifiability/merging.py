"""Node merging (§4.2, App. B.3 of *Identifiability Matters*): connect the IG by letting
close bias factors share one observation parameter."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.spatial import cKDTree

from ultr_core.errors import ConfigError
from ultr_core.identifiability.graph import (
    IdentifiabilityGraph,
    UnionFind,
    _relabel_by_size,
)
from ultr_core.logs.clicklog import ClickLog

__all__ = ["MergePlan", "plan_merges", "bias_feature_vectors"]


def bias_feature_vectors(graph: IdentifiabilityGraph, context_vectors: np.ndarray | None = None,
                         position_weight: float = 10.0) -> np.ndarray:
    """Bias-feature vector of every factor (App. C.3 of the paper).

    Position alone → ``[p]``.  With a ``context`` column → the context vector (row
    ``context`` of ``context_vectors``, or a one-hot code when none is given) with
    ``position_weight · p`` appended, so that merges prefer other contexts at the same
    position over other positions.  Other bias columns are one-hot coded.
    """
    f = graph.factors
    if "position" not in f:
        raise ConfigError("bias", "merging needs 'position' among the bias columns")
    p = f["position"].to_numpy(np.float64)[:, None]
    parts = []
    for col in f.columns:
        if col == "position":
            continue
        if col == "context" and context_vectors is not None:
            cv = np.asarray(context_vectors, np.float64)
            ids = f[col].to_numpy(np.int64)
            if ids.max() >= len(cv):
                raise ConfigError("context_vectors", f"context id {ids.max()} has no vector "
                                                     f"(only {len(cv)} given)")
            parts.append(cv[ids])
        else:
            codes = pd.factorize(f[col])[0]
            parts.append(np.eye(codes.max() + 1)[codes])
    if not parts:
        return p
    return np.hstack(parts + [position_weight * p])


@dataclass(frozen=True)
class MergePlan:
    """Merges that connect the IG: ``pairs`` (factor_a, factor_b, component_a, component_b,
    cost) — one per edge of the minimum spanning tree over components."""

    graph: IdentifiabilityGraph
    pairs: pd.DataFrame

    def factor_groups(self) -> np.ndarray:
        """Observation-parameter group of every factor: merged factors share a group."""
        uf = UnionFind(self.graph.n_factors)
        for a, b in zip(self.pairs["factor_a"], self.pairs["factor_b"]):
            uf.union(int(a), int(b))
        return _relabel_by_size(uf.roots())[0] if self.graph.n_factors else np.zeros(0, np.int64)

    def merged_graph(self) -> IdentifiabilityGraph:
        return self.graph.with_factor_groups(self.factor_groups())

    @property
    def total_cost(self) -> float:
        return float(self.pairs["cost"].sum())

    def apply(self, log: ClickLog, bias=None) -> ClickLog:
        """``log`` with a ``bias_group`` column: the merged observation parameter of each row."""
        frame = log.frame
        if bias is not None and list(bias) != list(self.graph.bias_columns):
            raise ConfigError("bias", f"the plan was made for {', '.join(self.graph.bias_columns)}")
        codes = self.graph.codes_of(frame)
        groups = np.where(codes >= 0, self.factor_groups()[np.maximum(codes, 0)], -1)
        return ClickLog._trusted(frame.assign(bias_group=groups), {**log.meta, "merged": True})


def _kruskal(uf: UnionFind, a, b, w, need: int, picked: list) -> None:
    """Add candidate edges (a, b, w) in increasing weight while they join different groups."""
    for i in np.lexsort((b, a, w)):
        if len(picked) >= need:
            return
        if uf.union(int(a[i]), int(b[i])):
            picked.append((int(a[i]), int(b[i]), float(w[i])))


def _onehot_candidates(graph: IdentifiabilityGraph, position_weight: float):
    """Candidate merges when non-position bias columns are one-hot coded.

    With one-hot coding the distance is sqrt(2·#differing columns + (w·Δp)²), so the
    nearest cross-component factors are (a) other values at the same position, (b) the
    same values at the nearest other position, (c) anything at the adjacent position.
    We chain (a) per position and (b) per value tuple across components, and join
    adjacent positions (c); Kruskal on these is exact for one categorical column.
    """
    f = graph.factors
    cats = [c for c in f.columns if c != "position"]
    p = f["position"].to_numpy(np.int64)
    comp = graph.component
    key = f.groupby(cats, sort=True).ngroup().to_numpy() if cats else np.zeros(len(f), np.int64)
    cand_a, cand_b = [], []
    for major, minor in ((p, key), (key, p)):
        order = np.lexsort((comp, minor, major))
        a, b = order[:-1], order[1:]
        m = (major[a] == major[b]) & (comp[a] != comp[b])
        cand_a.append(a[m])
        cand_b.append(b[m])
    pos = np.unique(p)
    for lo, hi in zip(pos[:-1], pos[1:]):
        ia, ib = np.flatnonzero(p == lo), np.flatnonzero(p == hi)
        other = ib[comp[ib] != comp[ia[0]]]
        if len(other):
            cand_a.append(ia[:1])
            cand_b.append(other[:1])
    a, b = np.concatenate(cand_a), np.concatenate(cand_b)
    diff = sum((f[c].to_numpy()[a] != f[c].to_numpy()[b]).astype(float) for c in cats) if cats else 0
    w = np.sqrt(2 * diff + (position_weight * (p[a] - p[b])) ** 2)
    return a, b, w


def plan_merges(graph: IdentifiabilityGraph, *, vectors: np.ndarray | None = None, k: int = 16,
                position_weight: float = 10.0) -> MergePlan:
    """Node merging: the minimum spanning tree over components whose edge weight is the
    closest pair of factors (Euclidean distance of bias-feature vectors) between them.

    Algorithm (O(n log n) instead of the reference's KD-tree per merge): the inter-component
    edges of that MST can be taken from the Euclidean MST of the factors (cycle property,
    with intra-component edges weighing 0).  With ``vectors`` (or position alone) we take
    the k-nearest-neighbour graph of the factors (cKDTree) as candidates, run Kruskal on them
    starting from the IG's components, and finish any groups the candidates do not join with
    exact Borůvka rounds (nearest factor outside each remaining group) — exact whenever the
    k-NN graph holds the needed Euclidean-MST edges (always for 1-D position vectors).
    Without vectors, other bias columns are one-hot coded and :func:`_onehot_candidates`
    supplies the candidates.
    """
    n = graph.n_factors
    uf = UnionFind(n, graph.component)
    picked: list = []
    need = graph.n_components - 1
    onehot = vectors is None and list(graph.factors.columns) != ["position"]
    if onehot and "position" not in graph.factors:
        raise ConfigError("bias", "merging needs 'position' among the bias columns")
    if need > 0 and onehot:
        _kruskal(uf, *_onehot_candidates(graph, position_weight), need, picked)
    elif need > 0:
        X = bias_feature_vectors(graph) if vectors is None else np.asarray(vectors, np.float64)
        X = X[:, None] if X.ndim == 1 else X
        if len(X) != n:
            raise ConfigError("vectors", f"{len(X)} bias-feature vectors for {n} factors")
        kk = min(k + 1, n)
        dist, nb = cKDTree(X).query(X, k=kk)
        dist, nb = np.atleast_2d(dist), np.atleast_2d(nb)
        a, b, w = np.repeat(np.arange(n), kk), nb.ravel(), dist.ravel()
        cross = graph.component[a] != graph.component[b]
        _kruskal(uf, a[cross], b[cross], w[cross], need, picked)
        while len(picked) < need:                      # exact Borůvka rounds
            roots = uf.roots()
            best = []
            for r in np.unique(roots):
                inside = roots == r
                d, j = cKDTree(X[~inside]).query(X[inside], k=1)
                i = int(np.argmin(d))
                best.append((float(d[i]), int(np.flatnonzero(inside)[i]), int(np.flatnonzero(~inside)[j[i]])))
            for d, a_, b_ in sorted(best):
                if uf.union(a_, b_):
                    picked.append((a_, b_, d))
    if len(picked) < need:
        raise RuntimeError("merging candidates did not connect the graph (please report this)")
    pairs = pd.DataFrame(picked, columns=["factor_a", "factor_b", "cost"]).astype(
        {"factor_a": np.int64, "factor_b": np.int64, "cost": float})
    labels = np.asarray(graph.factor_labels(), dtype=object)
    fa, fb = pairs["factor_a"].to_numpy(np.int64), pairs["factor_b"].to_numpy(np.int64)
    pairs.insert(2, "component_a", graph.component[fa])
    pairs.insert(3, "component_b", graph.component[fb])
    pairs["label_a"], pairs["label_b"] = labels[fa], labels[fb]
    return MergePlan(graph, pairs)
