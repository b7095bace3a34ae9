"""Node intervention (§4.1, App. B.2 of *Identifiability Matters*): connect the IG with
K − 1 swaps chosen by a minimum spanning tree over components."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.sparse.csgraph import minimum_spanning_tree

from ultr_core.errors import ConfigError
from ultr_core.identifiability.graph import IdentifiabilityGraph
from ultr_core.logs.clicklog import ClickLog

__all__ = ["InterventionPlan", "plan_interventions"]


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
        return IdentifiabilityGraph.from_pairs(doc, fac, factors=g.factors, n_rows=g.n_rows + len(self.swaps),
                                               bias_columns=g.bias_columns, n_documents=g.n_documents)


def _variance_cost(p):
    """(1 − p)/p: the delta-method variance term of a click-rate estimate with rate p."""
    p = np.clip(p, 1e-9, 1.0)
    return (1 - p) / p


def plan_interventions(graph: IdentifiabilityGraph, relevance: np.ndarray, observation: np.ndarray,
                       *, random_cost: bool = False, seed: int = 0,
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
    rng = np.random.default_rng(seed)
    best_t, best_o = _best_targets(graph.component, o, K)
    cost, choice = _pair_costs(graph, r, o, best_o, random_cost, rng)
    swaps = _spanning_swaps(graph, cost, choice, best_t, random_cost, rng)
    return InterventionPlan(graph, swaps.sort_values("cost", kind="stable").reset_index(drop=True))


def _best_targets(comp: np.ndarray, o: np.ndarray, K: int):
    """Per component, the first factor with the largest ô (the target of a swap into it) and that ô."""
    best_t = np.zeros(K, np.int64)
    best_o = np.full(K, -np.inf)
    np.maximum.at(best_o, comp, o)
    is_best = o == best_o[comp]
    best_t[comp[is_best][::-1]] = np.flatnonzero(is_best)[::-1]       # first factor with max ô
    return best_t, best_o


def _pair_costs(graph: IdentifiabilityGraph, r, o, best_o, random_cost: bool, rng):
    """(K, K) cost of the cheapest swap from component a into b (eq. 6) and the (document, factor) pair it moves."""
    K = graph.n_components
    pc = graph.component[graph.fac]                                  # component of each pair
    cost = np.full((K, K), np.inf)
    choice = np.zeros((K, K), np.int64)                              # pair index of the best swap
    # pairs by component, then document, then factor: among equal costs (a log without clicks) the smallest
    # document wins, so every path to the same log — the CLI's count table, a page's kept log — proposes one plan
    # (the random-cost ablation keeps the pairs' own order: its seeded draws, and so docs/identifiability_*, stay)
    order = np.argsort(pc, kind="stable") if random_cost else np.lexsort((graph.fac, graph.doc, pc))
    bounds = np.searchsorted(pc[order], np.arange(K + 1))
    for a in range(K):                   # one vectorised minimum per component (at most max_components)
        idx = order[bounds[a]:bounds[a + 1]]
        if random_cost:
            choice[a] = idx[rng.integers(0, len(idx), size=K)]
            cost[a] = rng.random(K)
            continue
        rx = r[graph.doc[idx]]
        here = _variance_cost(rx * o[graph.fac[idx]])                 # (n_a,)
        total = here[:, None] + _variance_cost(rx[:, None] * best_o[None, :])   # (n_a, K)
        j = np.argmin(total, axis=0)
        choice[a] = idx[j]
        cost[a] = total[j, np.arange(K)]
    np.fill_diagonal(cost, np.inf)
    return cost, choice


_SWAP_COLUMNS = {"document": np.int64, "from_factor": np.int64, "to_factor": np.int64, "component_from": np.int64,
                 "component_to": np.int64, "cost": float}


def _spanning_swaps(graph: IdentifiabilityGraph, cost, choice, best_t, random_cost: bool, rng) -> pd.DataFrame:
    """One swap per edge of the minimum spanning tree over components (scipy's MST, the paper's Prim), in the
    cheaper direction of each edge."""
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
                                      rng.choice(np.flatnonzero(graph.component == dst))),
                     "component_from": int(src), "component_to": int(dst), "cost": float(cost[src, dst])})
    swaps = pd.DataFrame(rows, columns=list(_SWAP_COLUMNS)).astype(_SWAP_COLUMNS)
    labels = np.asarray(graph.factor_labels(), dtype=object)
    swaps["from_label"] = labels[swaps["from_factor"].to_numpy(np.int64)]
    swaps["to_label"] = labels[swaps["to_factor"].to_numpy(np.int64)]
    return swaps
