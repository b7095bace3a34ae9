"""Identifiability toolkit (Chen et al., *Identifiability Matters*, ICML 2024; SPEC §5).

**Identifiability graph (IG).**  One node per bias factor t (a position, or a tuple of
bias columns such as (context, position)); an edge t–t′ whenever one document appears
with both.  Relevance is identifiable up to scale iff the IG is connected (Theorem 1).

We never materialise the edges: the IG's components are the connected components of the
bipartite document–factor graph restricted to factors (scipy.sparse.csgraph on the
distinct (document, factor) pairs; O(rows)).  Edge counts are a statistic computed on demand
(:meth:`IdentifiabilityGraph.edge_count`), and :func:`components_by_edge_enumeration` keeps
the reference code's pair-enumerating construction for comparison.

Only rows with ``shown`` are used: an unshown candidate was never examined and carries
no information about its factor.

**Node merging** (§4.2, App. B.3): :func:`plan_merges`.  **Node intervention** (§4.1,
App. B.2): :func:`plan_interventions`.  **Probability of identifiability** (Example 2):
:func:`identifiability_probability` and :func:`identifiability_probability_mc`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.sparse.csgraph import connected_components, minimum_spanning_tree
from scipy.spatial import cKDTree

from .clicklog import ClickLog
from .errors import ConfigError

__all__ = ["IdentifiabilityGraph", "MergePlan", "InterventionPlan", "plan_merges",
           "plan_interventions", "bias_feature_vectors", "identifiability_probability",
           "identifiability_probability_mc", "components_by_edge_enumeration", "UnionFind",
           "documents_from_features", "probability_table"]


# --------------------------------------------------------------------------- union-find
class UnionFind:
    """Array-based union–find with path halving and union by size."""

    def __init__(self, n: int, labels: np.ndarray | None = None):
        self.parent = np.arange(n) if labels is None else np.asarray(labels, dtype=np.int64).copy()
        if labels is not None and n:   # start from given groups: each member points at its group's first
            uniq, first = np.unique(self.parent, return_index=True)
            self.parent = first[np.searchsorted(uniq, self.parent)].astype(np.int64)
        self.size = np.bincount(self.parent, minlength=n)

    def find(self, a: int) -> int:
        p = self.parent
        while p[a] != a:
            p[a] = p[p[a]]
            a = p[a]
        return a

    def union(self, a: int, b: int) -> bool:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        if self.size[ra] < self.size[rb]:
            ra, rb = rb, ra
        self.parent[rb] = ra
        self.size[ra] += self.size[rb]
        return True

    def roots(self) -> np.ndarray:
        return np.array([self.find(i) for i in range(len(self.parent))], dtype=np.int64)


def _relabel_by_size(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Renumber component labels so that 0 is the largest (ties: smallest original label)."""
    uniq, inv, counts = np.unique(labels, return_inverse=True, return_counts=True)
    order = np.lexsort((uniq, -counts))
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return rank[inv], counts[order]


def _components(doc: np.ndarray, fac: np.ndarray, n_docs: int, n_factors: int) -> np.ndarray:
    """Component label of each factor from distinct (doc, factor) pairs (bipartite graph)."""
    n = n_docs + n_factors
    m = sparse.coo_matrix((np.ones(len(doc), np.int8), (doc, fac + n_docs)), shape=(n, n)).tocsr()
    _, lab = connected_components(m, directed=False)
    return lab[n_docs:]


# --------------------------------------------------------------------------- the graph
@dataclass(frozen=True)
class IdentifiabilityGraph:
    """The IG of a click log for one bias-factor definition.

    Build it with :meth:`from_log` (or :meth:`from_pairs`).  Factors are numbered
    0..n_factors-1 (``factors`` holds their bias-column values); ``component[t]`` is the
    component of factor t, components numbered by decreasing size (0 = largest).
    """

    bias_columns: tuple
    factors: pd.DataFrame
    doc: np.ndarray            # distinct (document, factor) pairs: document codes …
    fac: np.ndarray            # … and factor codes
    n_rows: int
    n_documents: int
    component: np.ndarray = field(repr=False)
    sizes: np.ndarray = field(repr=False)
    documents: np.ndarray | None = field(default=None, repr=False)   # document value of each code

    # ---------------------------------------------------------------- build
    @classmethod
    def from_log(cls, log: ClickLog | pd.DataFrame, bias=None, document=("doc_id",),
                 shown_only: bool = True) -> "IdentifiabilityGraph":
        """IG of ``log`` with bias factor ``bias`` (column name or list; default: the log's
        bias columns — position, plus context when present) and documents identified by
        the ``document`` columns (e.g. ``("query_id", "doc_id")`` or feature columns)."""
        frame = log.frame if isinstance(log, ClickLog) else log
        if bias is None:
            bias = log.bias_columns if isinstance(log, ClickLog) else ["position"]
        bias = [bias] if isinstance(bias, str) else list(bias)
        document = [document] if isinstance(document, str) else list(document)
        missing = [c for c in bias + document if c not in frame.columns]
        if missing:
            raise ConfigError("bias", f"column(s) {', '.join(missing)} not in the log "
                                      f"(it has {', '.join(map(str, frame.columns))})")
        if shown_only and "shown" in frame:
            frame = frame[frame["shown"].to_numpy(bool)]
        if len(frame) == 0:
            raise ConfigError("log", "the log has no shown rows: nothing to build a graph from")
        fcode, fkeys = _codes(frame, bias)
        dcode, dkeys = _codes(frame, document)
        g = cls.from_pairs(dcode, fcode, fkeys, n_rows=len(frame), bias_columns=tuple(bias),
                           n_documents=len(dkeys))
        docs = dkeys[document[0]].to_numpy() if len(document) == 1 else \
            np.asarray(list(map(tuple, dkeys.to_numpy())), dtype=object)
        object.__setattr__(g, "documents", docs)
        return g

    @classmethod
    def from_pairs(cls, doc, fac, factors: pd.DataFrame | None = None, n_rows: int | None = None,
                   bias_columns=("factor",), n_documents: int | None = None) -> "IdentifiabilityGraph":
        doc = np.asarray(doc, np.int64)
        fac = np.asarray(fac, np.int64)
        n_factors = len(factors) if factors is not None else int(fac.max()) + 1
        n_docs = n_documents if n_documents is not None else int(doc.max()) + 1
        key = pd.unique(doc * n_factors + fac)          # hash-based: much faster than np.unique here
        d, f = key // n_factors, key % n_factors
        comp, sizes = _relabel_by_size(_components(d, f, n_docs, n_factors))
        if factors is None:
            factors = pd.DataFrame({"factor": np.arange(n_factors)})
        return cls(tuple(bias_columns), factors.reset_index(drop=True), d, f,
                   int(n_rows if n_rows is not None else len(doc)), int(n_docs), comp, sizes)

    # ---------------------------------------------------------------- views
    @property
    def n_factors(self) -> int:
        return len(self.factors)

    @property
    def n_components(self) -> int:
        return len(self.sizes)

    @property
    def identifiable(self) -> bool:
        return self.n_components == 1

    def factor_labels(self) -> list[str]:
        cols = list(self.factors.columns)
        if len(cols) == 1:
            return [f"{cols[0]}={v}" for v in self.factors[cols[0]]]
        return ["(" + ", ".join(f"{c}={v}" for c, v in zip(cols, row)) + ")"
                for row in self.factors.itertuples(index=False)]

    def statistics(self) -> dict:
        return {
            "n_rows": self.n_rows, "n_documents": self.n_documents, "n_nodes": self.n_factors,
            "n_components": self.n_components, "identifiable": self.identifiable,
            "largest_share": float(self.sizes[0] / self.n_factors),
            "component_sizes": self.sizes.tolist(),
            "bias_columns": list(self.bias_columns),
        }

    def components_table(self, max_members: int = 12) -> pd.DataFrame:
        """One row per component: size, share and (up to ``max_members``) member factors."""
        labels = np.asarray(self.factor_labels(), dtype=object)
        order = np.argsort(self.component, kind="stable")
        bounds = np.concatenate([[0], np.cumsum(self.sizes)])
        members = [", ".join(labels[order[bounds[i]:bounds[i + 1]][:max_members]])
                   + (" …" if self.sizes[i] > max_members else "") for i in range(self.n_components)]
        return pd.DataFrame({"component": np.arange(self.n_components), "factors": self.sizes,
                             "share": self.sizes / self.n_factors, "members": members})

    def edges(self, max_edges: int | None = None) -> np.ndarray:
        """Distinct IG edges (t, t′) with t < t′, enumerated per document (vectorised by
        document degree).  Raises if more than ``max_edges`` pairs would be enumerated."""
        order = np.argsort(self.doc, kind="stable")
        d, f = self.doc[order], self.fac[order]
        starts = np.flatnonzero(np.r_[True, d[1:] != d[:-1]])
        deg = np.diff(np.r_[starts, len(d)])
        total = int((deg * (deg - 1) // 2).sum())
        if max_edges is not None and total > max_edges:
            raise ConfigError("max_edges", f"{total:,} document pairs to enumerate exceed the cap "
                                           f"{max_edges:,}")
        out = []
        for m in np.unique(deg[deg > 1]):
            s = starts[deg == m]
            block = f[s[:, None] + np.arange(m)[None, :]]
            i, j = np.triu_indices(m, 1)
            a, b = block[:, i].ravel(), block[:, j].ravel()
            out.append(np.stack([np.minimum(a, b), np.maximum(a, b)], 1))
        if not out:
            return np.zeros((0, 2), np.int64)
        e = np.concatenate(out)
        key = np.unique(e[:, 0] * self.n_factors + e[:, 1])
        return np.stack([key // self.n_factors, key % self.n_factors], axis=1)

    def edge_count(self, max_edges: int | None = 50_000_000) -> int:
        return len(self.edges(max_edges))

    def with_factor_groups(self, groups: np.ndarray) -> "IdentifiabilityGraph":
        """The IG after merging: factors with the same group id become one node."""
        groups = np.asarray(groups, np.int64)
        uniq, new = np.unique(groups, return_inverse=True)
        first = np.unique(new, return_index=True)[1]
        factors = self.factors.iloc[first].reset_index(drop=True)
        return IdentifiabilityGraph.from_pairs(self.doc, new[self.fac], factors, self.n_rows,
                                               self.bias_columns, self.n_documents)

    def display_graph(self, max_nodes: int = 150, max_edges: int = 600, seed: int = 0):
        """A networkx graph small enough to draw.

        Rule: if the IG has at most ``max_nodes`` factors, nodes are factors and edges are
        IG edges (a seeded uniform sample of ``max_edges`` if there are more).  Otherwise
        each component is contracted to one node (attribute ``size`` = its factors); the
        ``max_nodes − 1`` largest components are kept and the rest pooled into one node
        ``"other"``.  Contracted components have no edges between them, by definition.
        """
        import networkx as nx
        g = nx.Graph(contracted=self.n_factors > max_nodes)
        if self.n_factors <= max_nodes:
            labels = self.factor_labels()
            for t in range(self.n_factors):
                g.add_node(t, label=labels[t], component=int(self.component[t]), size=1)
            e = self.edges(max_edges=5_000_000)
            if len(e) > max_edges:
                e = e[np.sort(np.random.default_rng(seed).choice(len(e), max_edges, replace=False))]
            g.add_edges_from(map(tuple, e.tolist()))
            g.graph["edges_total"] = int(len(self.edges(max_edges=5_000_000)))
            return g
        keep = min(self.n_components, max_nodes - 1)
        for c in range(keep):
            g.add_node(f"C{c}", label=f"component {c} ({self.sizes[c]} factors)", component=c,
                       size=int(self.sizes[c]))
        if self.n_components > keep:
            rest = self.n_components - keep
            g.add_node("other", label=f"{rest} smaller components ({int(self.sizes[keep:].sum())} factors)",
                       component=-1, size=int(self.sizes[keep:].sum()))
        return g


def _codes(frame: pd.DataFrame, cols: list[str]) -> tuple[np.ndarray, pd.DataFrame]:
    """Integer code of each row's value tuple in ``cols`` and the distinct tuples, sorted
    (codes follow that order).  Each column is factorised, then the codes are combined in
    mixed radix and factorised once more — no MultiIndex over millions of rows."""
    per = [pd.factorize(frame[c], sort=True) for c in cols]
    key = np.zeros(len(frame), np.int64)
    for codes, uniq in per:
        key = key * len(uniq) + codes
    codes, ukey = pd.factorize(key, sort=True)
    parts, rest = [], ukey
    for _, uniq in reversed(per):
        parts.append(np.asarray(uniq)[rest % len(uniq)])
        rest = rest // len(uniq)
    keys = pd.DataFrame(dict(zip(cols, reversed(parts))))
    return codes.astype(np.int64), keys


def documents_from_features(log: ClickLog, features: np.ndarray, columns=None,
                            decimals: int | None = None) -> ClickLog:
    """``log`` with a ``feature_doc`` column: documents identified by their feature vector
    (as the paper does: "a unique identifier based on ranking features"), optionally only
    the given feature ``columns`` and rounded to ``decimals``.  ``features`` is the split the
    log was simulated on (rows via the log's ``row`` column)."""
    if "row" not in log.frame:
        raise ConfigError("log", "documents from features need a simulated log with a 'row' column")
    X = np.asarray(features)[:, list(columns) if columns is not None else slice(None)]
    if decimals is not None:
        X = np.round(X, decimals)
    _, inv = np.unique(X, axis=0, return_inverse=True)
    ids = inv.ravel()[log.frame["row"].to_numpy()]
    return ClickLog._trusted(log.frame.assign(feature_doc=ids.astype(np.int64)), log.meta)


def components_by_edge_enumeration(log: ClickLog, bias=None, document=("doc_id",)) -> int:
    """Reference construction, as the paper's code does it: enumerate every pair of factors
    per document in Python, build the edge list and count components with networkx.
    Slow by design; kept to check and benchmark :class:`IdentifiabilityGraph`."""
    import networkx as nx
    frame = log.frame[log.frame["shown"]]
    bias = log.bias_columns if bias is None else ([bias] if isinstance(bias, str) else list(bias))
    document = [document] if isinstance(document, str) else list(document)
    g = nx.Graph()
    for _, grp in frame.groupby(document, sort=False):
        facs = set(map(tuple, grp[bias].to_numpy().tolist()))
        g.add_nodes_from(facs)
        g.add_edges_from(combinations(sorted(facs), 2))
    return nx.number_connected_components(g)


# --------------------------------------------------------------------------- merging
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
        bias = list(self.graph.bias_columns) if bias is None else bias
        idx = pd.MultiIndex.from_frame(self.graph.factors[bias])
        codes = idx.get_indexer(pd.MultiIndex.from_frame(frame[bias]))
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
        cand_a.append(a[m]); cand_b.append(b[m])
    pos = np.unique(p)
    for lo, hi in zip(pos[:-1], pos[1:]):
        ia, ib = np.flatnonzero(p == lo), np.flatnonzero(p == hi)
        other = ib[comp[ib] != comp[ia[0]]]
        if len(other):
            cand_a.append(ia[:1]); cand_b.append(other[:1])
    a, b = np.concatenate(cand_a), np.concatenate(cand_b)
    diff = sum((f[c].to_numpy()[a] != f[c].to_numpy()[b]).astype(float) for c in cats) if cats else 0
    w = np.sqrt(2 * diff + (position_weight * (p[a] - p[b])) ** 2)
    return a, b, w


def plan_merges(graph: IdentifiabilityGraph, vectors: np.ndarray | None = None, k: int = 16,
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


# --------------------------------------------------------------------------- intervention
@dataclass(frozen=True)
class InterventionPlan:
    """Swaps that connect the IG: ``swaps`` (document, from_factor, to_factor, components, cost),
    K − 1 of them for K components."""

    graph: IdentifiabilityGraph
    swaps: pd.DataFrame

    @property
    def total_cost(self) -> float:
        return float(self.swaps["cost"].sum())

    def apply(self, log: ClickLog, impressions: int = 1000, seed: int = 0) -> ClickLog:
        """Append the intervened rows to ``log``: each swap shows its document at the target
        factor for ``impressions`` one-document sessions, with clicks collected from the
        log's ground truth — r(x) from ``true_relevance`` of the document and o(t′) the mean
        ``true_observation`` of the target factor (exact for position/contextual PBM)."""
        frame = log.frame
        if not log.has_truth:
            raise ConfigError("log", "collecting clicks for interventions needs the true relevance and "
                                     "observation columns (a simulated log)")
        g = self.graph
        bias = list(g.bias_columns)
        shown = frame[frame["shown"]]
        first_row = shown.drop_duplicates("doc_id").set_index("doc_id")   # document-level columns
        o_of = shown.groupby(bias)["true_observation"].mean()
        rng = np.random.default_rng(seed)
        next_session = int(frame["session_id"].max()) + 1
        parts = []
        for i, s in enumerate(self.swaps.itertuples(index=False)):
            doc = g.documents[s.document] if g.documents is not None else s.document
            target = g.factors.iloc[s.to_factor]
            template = first_row.loc[doc]
            r = float(template["true_relevance"])
            o = float(o_of.loc[tuple(target[bias])] if len(bias) > 1 else o_of.loc[target[bias[0]]])
            rows = pd.DataFrame({c: np.repeat(template[c], impressions) for c in first_row.columns})
            rows["doc_id"] = doc
            rows["session_id"] = next_session + i * impressions + np.arange(impressions)
            rows["query_id"] = -1 - i
            rows["click"] = (rng.random(impressions) < r * o).astype(np.int8)
            rows["true_observation"] = o
            for c in bias:
                rows[c] = target[c]
            parts.append(rows[frame.columns])
        extra = pd.concat(parts, ignore_index=True)
        merged = pd.concat([frame, extra], ignore_index=True)
        return ClickLog(merged, {**log.meta, "interventions": len(self.swaps), "impressions": impressions})

    def intervened_graph(self) -> IdentifiabilityGraph:
        g = self.graph
        doc = np.concatenate([g.doc, self.swaps["document"].to_numpy(np.int64)])
        fac = np.concatenate([g.fac, self.swaps["to_factor"].to_numpy(np.int64)])
        return IdentifiabilityGraph.from_pairs(doc, fac, g.factors, g.n_rows + len(self.swaps),
                                               g.bias_columns, g.n_documents)


def _variance_cost(p):
    """(1 − p)/p: the delta-method variance term of a click-rate estimate with rate p."""
    p = np.clip(p, 1e-9, 1.0)
    return (1 - p) / p


def plan_interventions(graph: IdentifiabilityGraph, relevance: np.ndarray, observation: np.ndarray,
                       random_cost: bool = False, seed: int = 0,
                       max_components: int = 2000) -> InterventionPlan:
    """Node intervention (§4.1, eq. 3–6; App. B.2): for every pair of components the cheapest
    swap of a document x seen with factor t in one component to a factor t′ of the other,

        cost(x, t, t′) = (1 − r̂(x)ô(t))/(r̂(x)ô(t)) + (1 − r̂(x)ô(t′))/(r̂(x)ô(t′)),

    then a minimum spanning tree over components (scipy's MST, equivalent to the paper's
    Prim) and one swap per tree edge.  ``relevance`` is indexed by document code and
    ``observation`` by factor (estimates, e.g. from a model fitted after node merging).
    For a fixed x the best target t′ is the factor of the other component with the largest
    ô, so each component pair costs one vectorised minimum.  ``random_cost`` is the
    paper's ablation: uniform random costs and a uniformly random swap per component pair.
    """
    K = graph.n_components
    r = np.asarray(relevance, np.float64)
    o = np.asarray(observation, np.float64)
    if len(r) < graph.n_documents or len(o) != graph.n_factors:
        raise ConfigError("estimates", f"need one relevance per document ({graph.n_documents}) and one "
                                       f"observation per factor ({graph.n_factors})")
    if K > max_components:
        raise ConfigError("n_components", f"{K:,} components: node intervention is planned for at most "
                                          f"{max_components:,} (use node merging)")
    comp = graph.component
    best_t = np.zeros(K, np.int64)
    best_o = np.full(K, -np.inf)
    np.maximum.at(best_o, comp, o)
    is_best = o == best_o[comp]
    best_t[comp[is_best][::-1]] = np.flatnonzero(is_best)[::-1]       # first factor with max ô
    pc = comp[graph.fac]                                             # component of each pair
    rng = np.random.default_rng(seed)
    cost = np.full((K, K), np.inf)
    choice = np.zeros((K, K), np.int64)                              # pair index of the best swap
    order = np.argsort(pc, kind="stable")
    bounds = np.searchsorted(pc[order], np.arange(K + 1))
    for a in range(K):
        idx = order[bounds[a]:bounds[a + 1]]
        if random_cost:
            pick = rng.integers(0, len(idx), size=K)
            choice[a] = idx[pick]
            cost[a] = rng.random(K)
            continue
        rx = r[graph.doc[idx]]
        here = _variance_cost(rx * o[graph.fac[idx]])                 # (n_a,)
        there = _variance_cost(rx[:, None] * best_o[None, :])        # (n_a, K)
        total = here[:, None] + there
        j = np.argmin(total, axis=0)
        choice[a] = idx[j]
        cost[a] = total[j, np.arange(K)]
    np.fill_diagonal(cost, np.inf)
    sym = np.minimum(cost, cost.T)
    from_a = cost <= cost.T                                          # which direction is cheaper
    dense = np.where(np.isfinite(sym), sym + 1e-12, 0)               # 0 = no edge for scipy
    mst = minimum_spanning_tree(sparse.csr_matrix(dense)).tocoo()
    rows = []
    for a, b in zip(mst.row, mst.col):
        src, dst = (a, b) if from_a[a, b] else (b, a)
        pair = choice[src, dst]
        rows.append({"document": int(graph.doc[pair]), "from_factor": int(graph.fac[pair]),
                     "to_factor": int(best_t[dst] if not random_cost else
                                      rng.choice(np.flatnonzero(comp == dst))),
                     "component_from": int(src), "component_to": int(dst),
                     "cost": float(cost[src, dst])})
    swaps = pd.DataFrame(rows, columns=["document", "from_factor", "to_factor", "component_from",
                                        "component_to", "cost"]).astype(
        {"document": np.int64, "from_factor": np.int64, "to_factor": np.int64, "component_from": np.int64,
         "component_to": np.int64, "cost": float})
    labels = np.asarray(graph.factor_labels(), dtype=object)
    swaps["from_label"] = labels[swaps["from_factor"].to_numpy(np.int64)]
    swaps["to_label"] = labels[swaps["to_factor"].to_numpy(np.int64)]
    return InterventionPlan(graph, swaps.sort_values("cost", kind="stable").reset_index(drop=True))


# --------------------------------------------------------------------------- probability
def identifiability_probability(n_pairs, n_features, n_factors):
    """P(IG connected) under uniform sampling (Example 2, Lemma A.1 + Gilbert's bound):
    ``1 − |T|·exp(−N²(|T|−1)/(|X|·|T|²))``, clipped to [0, 1]."""
    N = np.asarray(n_pairs, np.float64)
    X, T = float(n_features), np.asarray(n_factors, np.float64)
    p = 1 - T * np.exp(-N ** 2 * (T - 1) / (X * T ** 2))
    return np.clip(p, 0.0, 1.0)


def identifiability_probability_mc(n_pairs: int, n_features: int, n_factors: int,
                                   n_trials: int = 200, seed: int = 0) -> float:
    """Monte Carlo estimate of the same probability: draw ``n_pairs`` (x, t) uniformly from
    X × T, build the IG over all T factors, count how often it is connected."""
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(n_trials):
        x = rng.integers(0, n_features, n_pairs)
        t = rng.integers(0, n_factors, n_pairs)
        if len(np.unique(t)) < n_factors:
            continue                      # an unseen factor is an isolated node
        lab = _components(x, t, n_features, n_factors)
        hits += bool(lab.min() == lab.max())
    return hits / n_trials


def probability_table(n_pairs: int, n_features: int, contexts, n_positions: int = 10, n_trials: int = 200,
                      seed: int = 0) -> pd.DataFrame:
    """Formula and Monte Carlo identifiability probability against the number of context
    types: the bias factors are (context, position) pairs, |T| = contexts × positions."""
    rows = []
    for c in contexts:
        T = int(c) * n_positions
        rows.append({"contexts": int(c), "n_factors": T,
                     "formula": float(identifiability_probability(n_pairs, n_features, T)),
                     "monte_carlo": identifiability_probability_mc(n_pairs, n_features, T, n_trials, seed)})
    return pd.DataFrame(rows)
