"""The identifiability graph (IG) and its connected components (SPEC §5, Theorem 1).

Components come from scipy's sparse connected components on the bipartite
document–factor graph of the distinct (document, factor) pairs: the edges between factors
are never materialised.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from itertools import combinations

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.sparse.csgraph import connected_components

from ultr_core.errors import ConfigError
from ultr_core.logs.clicklog import ClickLog
from ultr_core.logs.coding import factor_codes, group_codes, lookup_codes, tuple_labels

__all__ = ["IdentifiabilityGraph", "UnionFind", "documents_from_features", "components_by_edge_enumeration"]


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


def _tuples(keys: pd.DataFrame) -> np.ndarray:
    """A 1-D object array holding one tuple per row (np.asarray would make it 2-D)."""
    out = np.empty(len(keys), dtype=object)
    out[:] = list(keys.itertuples(index=False, name=None))
    return out


def _distinct_pairs(doc: np.ndarray, fac: np.ndarray, n_docs: int, n_factors: int):
    """Distinct (doc, fac) pairs (first-seen order) and each input pair's index among them.
    One int64 key per pair when n_docs·n_factors fits, else a two-column hash."""
    if n_docs * max(n_factors, 1) < 2 ** 62:
        key = doc * n_factors + fac
        if len(key) and (key[1:] >= key[:-1]).all():        # a count table in (document, factor) order: one pass
            new = np.empty(len(key), bool)
            new[0] = True
            np.not_equal(key[1:], key[:-1], out=new[1:])
            key, inv = key[new], np.cumsum(new, dtype=np.int64) - 1
        else:
            inv, key = pd.factorize(key)                     # hash-based: faster than np.unique
        key = np.asarray(key, np.int64)
        return key // n_factors, key % n_factors, np.asarray(inv, np.int64)
    frame = pd.DataFrame({"d": doc, "f": fac})
    inv = frame.groupby(["d", "f"], sort=False).ngroup().to_numpy(np.int64)
    first = pd.Series(inv).drop_duplicates().sort_values().index.to_numpy()
    return doc[first], fac[first], inv


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
    document_keys: pd.DataFrame | None = field(default=None, repr=False)  # document columns' values per code
    impressions: np.ndarray | None = field(default=None, repr=False)  # per (doc, fac) pair, from counts
    clicks: np.ndarray | None = field(default=None, repr=False)
    row_pair: np.ndarray | None = field(default=None, repr=False)     # pair of each count-table row

    # ---------------------------------------------------------------- build
    @classmethod
    def from_log(cls, log: ClickLog | pd.DataFrame, bias=None, document=("doc_id",), *,
                 shown_only: bool = True) -> "IdentifiabilityGraph":
        """IG of ``log`` with bias factor ``bias`` (column name or list; default: the log's
        bias columns — position, plus context when present) and documents identified by
        the ``document`` columns (e.g. ``("query_id", "doc_id")`` or feature columns): the
        log's (document, factor) counts (:class:`~.ingestion.CountTable`) → :meth:`from_counts`."""
        from ultr_core.logs.ingestion import CountTable
        return cls.from_counts(CountTable.from_log(log, bias, document, shown_only=shown_only))

    @classmethod
    def from_pairs(cls, doc, fac, *, factors: pd.DataFrame | None = None, n_rows: int | None = None,
                   bias_columns=("factor",), n_documents: int | None = None) -> "IdentifiabilityGraph":
        doc = np.asarray(doc, np.int64)
        fac = np.asarray(fac, np.int64)
        n_factors = len(factors) if factors is not None else int(fac.max()) + 1
        n_docs = n_documents if n_documents is not None else int(doc.max()) + 1
        d, f, _ = _distinct_pairs(doc, fac, n_docs, n_factors)
        comp, sizes = _relabel_by_size(_components(d, f, n_docs, n_factors))
        if factors is None:
            factors = pd.DataFrame({"factor": np.arange(n_factors)})
        return cls(tuple(bias_columns), factors.reset_index(drop=True), d, f,
                   int(n_rows if n_rows is not None else len(doc)), int(n_docs), comp, sizes)

    @classmethod
    def from_counts(cls, table) -> "IdentifiabilityGraph":
        """IG of a :class:`~ultr_core.logs.ingestion.CountTable` (distinct
        (document, factor) rows with impressions and clicks), keeping the counts per
        (document, factor) pair in ``impressions`` / ``clicks`` for estimation and fitting."""
        frame = table.frame
        if len(frame) == 0:
            raise ConfigError("log", "the log has no shown rows: nothing to build a graph from")
        fcode, fkeys = factor_codes(frame, list(table.bias))
        dcode, dkeys = factor_codes(frame, list(table.document))
        n_f, n_d = len(fkeys), len(dkeys)
        d, f, inv = _distinct_pairs(dcode, fcode, n_d, n_f)
        imp = np.bincount(inv, frame["impressions"].to_numpy(np.float64), len(d)).astype(np.int64)
        clk = np.bincount(inv, frame["clicks"].to_numpy(np.float64), len(d)).astype(np.int64)
        comp, sizes = _relabel_by_size(_components(d, f, n_d, n_f))
        return cls(tuple(table.bias), fkeys.reset_index(drop=True), d, f, int(imp.sum()), int(n_d), comp, sizes,
                   dkeys.reset_index(drop=True), imp, clk, inv)

    def components_under(self, frame: pd.DataFrame, document) -> tuple[int, int]:
        """(components, documents) of the IG of the count table ``frame`` this graph was built
        from (:meth:`from_counts`) with documents keyed by other columns — the factor codes are
        reused, only the document key is coded again."""
        if self.row_pair is None or len(frame) != len(self.row_pair):
            raise ConfigError("frame", "components_under needs the count table this graph was built from")
        dcode, n_docs = group_codes(frame, list(document))    # a count is asked: no order, no key table
        d, f, _ = _distinct_pairs(dcode, self.fac[self.row_pair], n_docs, self.n_factors)
        return len(np.unique(_components(d, f, n_docs, self.n_factors))), n_docs

    # ---------------------------------------------------------------- views
    @cached_property
    def documents(self) -> np.ndarray | None:
        """The document value of each code (a tuple when documents have several columns);
        built on first use — millions of tuples cost more than the graph."""
        k = self.document_keys
        if k is None:
            return None
        return k.iloc[:, 0].to_numpy() if k.shape[1] == 1 else _tuples(k)

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
        """``col=value`` per factor (``(missing)`` for a missing value); plain text — escape it
        before it reaches HTML or Markdown."""
        return tuple_labels(self.factors)

    def codes_of(self, frame: pd.DataFrame) -> np.ndarray:
        """Factor code of every row of ``frame`` (−1 where its value tuple is not a factor of
        this graph).  Missing values match the missing level, as in :func:`factor_codes`."""
        return lookup_codes(frame, self.factors[list(self.bias_columns)])

    def statistics(self) -> dict:
        return {
            "n_rows": self.n_rows, "n_documents": self.n_documents, "n_nodes": self.n_factors,
            "n_components": self.n_components, "identifiable": self.identifiable,
            "largest_share": float(self.sizes[0] / self.n_factors),
            "component_sizes": self.sizes.tolist(),
            "bias_columns": list(self.bias_columns),
        }

    def components_table(self, max_members: int = 12) -> pd.DataFrame:
        """One row per component: size, share and (up to ``max_members``) member factors, a column named once
        where they share it ("position=5, 6" for position=5 and position=6)."""
        labels = np.asarray(self.factor_labels(), dtype=object)
        order = np.argsort(self.component, kind="stable")
        bounds = np.concatenate([[0], np.cumsum(self.sizes)])
        members = [_members(labels[order[bounds[i]:bounds[i + 1]][:max_members]])
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
        return IdentifiabilityGraph.from_pairs(self.doc, new[self.fac], factors=factors, n_rows=self.n_rows,
                                               bias_columns=self.bias_columns, n_documents=self.n_documents)

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



def documents_from_features(log: ClickLog, features: np.ndarray, *, columns=None,
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


def _members(labels) -> str:
    """Factor labels joined, the column named once when every label is one column's ``name=value``.

    >>> _members(["position=5", "position=6"]), _members(["a=1, b=2", "a=1, b=3"]), _members(["x"])
    ('position=5, 6', 'a=1, b=2, a=1, b=3', 'x')
    """
    heads = {str(x).split("=", 1)[0] for x in labels}
    if len(heads) == 1 and all("=" in str(x) and ", " not in str(x) for x in labels):
        return f"{heads.pop()}=" + ", ".join(str(x).split("=", 1)[1] for x in labels)
    return ", ".join(str(x) for x in labels)
