"""Position-bias (observation) curves from a click log, one per connected IG component.

Observation probabilities o(t) are identifiable only up to one scale **per connected
component** of the IG (Theorem 1 of *Identifiability Matters*): inside a component a chain of
documents shown at two factors links every pair of factors; between components nothing does.
So every curve here is normalised within its component (its reference factor = 1: the lowest
position, else the most-shown factor), and ratios across components are refused.

Estimators (all on the (document, factor) impression/click counts of the graph, vectorised):

* **Intervention harvesting** (Agarwal, Zaitsev, Wang, Li, Najork & Joachims, *Estimating
  Position Bias without Intrusive Interventions*, WSDM 2019).  For factors t ≠ t′ the
  intervention set S(t, t′) holds the documents shown at both; with per-document click rates
  ĉ_{d,t} = clicks/impressions and equal weight per document,
  Ĉ_t^{t,t′} = Σ_{d∈S} ĉ_{d,t}  estimates o(t)·Σ_d r(d), so o(t′)/o(t) = Ĉ_{t′}^{t,t′}/Ĉ_t^{t,t′}.

  - ``pivot_one``: o(t)/o(ref) from the pairs with the reference factor (eq. 9 with k = 1);
  - ``adjacent_chain``: products of ratios between neighbouring factors (positions k, k+1);
  - ``all_pairs``: maximum likelihood over every pair, Ĉ_t^{t,t′} ≈ o(t)·ρ(t,t′) with a
    symmetric pair relevance ρ, weighted cross-entropy with the non-click rates Ĉ¬ (the
    paper's AllPairs estimator), fitted with L-BFGS.
* **PBM by EM** (``em``): r(d)·o(t) fitted by expectation–maximisation (the position-based
  click model's standard EM; Regression-EM's E-step without the regression) until the largest
  change falls below ``tol``.

Uncertainty: a **document bootstrap** — documents are resampled with replacement (Poisson(1)
weights, the standard streaming approximation), the estimator is re-run, and the
``alpha/2`` and ``1 − alpha/2`` percentiles are reported per factor.

>>> import pandas as pd
>>> from ultr_core.identifiability import IdentifiabilityGraph
>>> from ultr_core.identifiability.ingestion import CountTable
>>> t = CountTable(pd.DataFrame({"doc_id": [0, 0, 1, 1], "position": [1, 2, 1, 2],
...                              "impressions": [100, 100, 100, 100], "clicks": [40, 20, 60, 30]}),
...                ("doc_id",), ("position",))
>>> curves = estimate_bias(IdentifiabilityGraph.from_counts(t), "pivot_one", n_bootstrap=0)
>>> curves["estimate"].round(3).tolist()
[1.0, 0.5]
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.optimize import minimize
from scipy.special import expit

from ..errors import ConfigError
from .graph import IdentifiabilityGraph

__all__ = ["ESTIMATORS", "estimate_bias", "BiasEstimate", "intervention_sets"]

ESTIMATORS = ("pivot_one", "adjacent_chain", "all_pairs", "em")
MAX_INTERVENTION_PAIRS = 50_000_000


@dataclass
class BiasEstimate:
    """Curves (tidy ``table``: component, factor, label, position, estimate, lower, upper,
    impressions) and what could not be estimated (``notes``)."""

    table: pd.DataFrame
    method: str
    n_bootstrap: int
    alpha: float
    notes: list = field(default_factory=list)

    def to_records(self) -> list[dict]:
        return [{k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in r.items()}
                for r in self.table.to_dict("records")]


# --------------------------------------------------------------------------- intervention sets
def intervention_sets(doc: np.ndarray, fac: np.ndarray, max_pairs: int = MAX_INTERVENTION_PAIRS):
    """All ordered pairs (i, j), i ≠ j, of (document, factor) rows that share a document:
    the rows behind Agarwal et al.'s intervention sets.  Vectorised by document degree."""
    order = np.argsort(doc, kind="stable")
    d = doc[order]
    starts = np.flatnonzero(np.r_[True, d[1:] != d[:-1]])
    deg = np.diff(np.r_[starts, len(d)])
    total = int((deg * (deg - 1)).sum())
    if total > max_pairs:
        raise ConfigError("estimation", f"{total:,} intervention pairs exceed the cap {max_pairs:,}; "
                                        "estimate on a coarser bias factor (e.g. position alone)")
    a_out, b_out = [], []
    for m in np.unique(deg[deg > 1]):
        s = starts[deg == m]
        block = order[s[:, None] + np.arange(m)[None, :]]
        i, j = np.nonzero(~np.eye(m, dtype=bool))
        a_out.append(block[:, i].ravel())
        b_out.append(block[:, j].ravel())
    if not a_out:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(a_out), np.concatenate(b_out)


# --------------------------------------------------------------------------- estimators
class _PairStats:
    """Intervention-set sums of one component as sparse ordered pairs of local factor indices
    (i, j): ``C[k]`` = Σ_d w_d ĉ_{d,i} over documents shown at both i and j, ``N[k]`` = Σ_d w_d.
    Only pairs that occur are stored (never an m × m matrix)."""

    def __init__(self, li, lj, ctr_i, docs, m):
        self.m = m
        key = li * m + lj
        self.keys, self.inv = np.unique(key, return_inverse=True)
        self.ctr, self.docs = ctr_i, docs

    def sums(self, w_doc):
        w = w_doc[self.docs]
        return (np.bincount(self.inv, w * self.ctr, len(self.keys)),
                np.bincount(self.inv, w, len(self.keys)))

    def lookup(self, i, j, values):
        """values[(i, j)] for arrays i, j (NaN where the pair does not occur)."""
        k = np.asarray(i) * self.m + np.asarray(j)
        if len(self.keys) == 0:
            return np.full(np.shape(k), np.nan)
        pos = np.minimum(np.searchsorted(self.keys, k), len(self.keys) - 1)
        return np.where(self.keys[pos] == k, values[pos], np.nan)


def _pivot(P: _PairStats, C):
    """o(t)/o(ref) with the reference at local index 0."""
    t = np.arange(1, P.m)
    with np.errstate(all="ignore"):
        ratio = P.lookup(t, 0, C) / P.lookup(0, t, C)
    ratio[~np.isfinite(ratio)] = np.nan
    return np.r_[1.0, ratio]


def _chain(P: _PairStats, C):
    """Products of ratios between neighbours (local order = curve order)."""
    a, b = np.arange(P.m - 1), np.arange(1, P.m)
    with np.errstate(all="ignore"):
        step = P.lookup(b, a, C) / P.lookup(a, b, C)
    step[~np.isfinite(step)] = np.nan
    return np.r_[1.0, np.cumprod(step)]


def _all_pairs(P: _PairStats, C, N, init=None):
    """Weighted cross-entropy over all ordered pairs (t, t′) that occur:
    −Σ Ĉ_t log(o_t ρ_tt′) + Ĉ¬_t log(1 − o_t ρ_tt′), o = σ(a), ρ = σ(b) symmetric."""
    m = P.m
    i, j = P.keys // m, P.keys % m
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    pair_key, pair = np.unique(lo * m + hi, return_inverse=True)
    n_pairs = len(pair_key)
    if n_pairs == 0:
        return np.r_[1.0, np.full(m - 1, np.nan)]
    c = C
    nc = np.maximum(N - C, 0)

    def f(theta):
        a, b = theta[:m], theta[m:]
        sa, sb = expit(a), expit(b)
        q = np.clip(sa[i] * sb[pair], 1e-12, 1 - 1e-12)
        loss = -(c * np.log(q) + nc * np.log1p(-q)).sum()
        dq = -(c / q - nc / (1 - q))
        ga = np.bincount(i, dq * sb[pair] * sa[i] * (1 - sa[i]), m)
        gb = np.bincount(pair, dq * sa[i] * sb[pair] * (1 - sb[pair]), n_pairs)
        return loss, np.r_[ga, gb]

    x0 = np.r_[np.zeros(m) if init is None else init, np.zeros(n_pairs)]
    res = minimize(f, x0, jac=True, method="L-BFGS-B", bounds=[(-30, 30)] * len(x0), options={"maxiter": 2000})
    o = expit(res.x[:m])
    reached = np.zeros(m, bool)
    reached[i] = True
    reached[0] = True
    if not o[0] > 1e-9:              # no clicks at the reference factor: nothing to normalise by
        return np.full(m, np.nan)
    out = o / o[0]
    out[~reached] = np.nan
    return out


def _em(doc, fac, n, c, n_d, n_f, tol=1e-6, max_iter=5000, init=None):
    """PBM r(d)·o(t) by EM on (doc, factor) counts; returns (o per factor, r per doc, iterations)."""
    from ..embedding import fit_counts
    res = fit_counts(doc, fac, n, c, n_d, n_f, "em", n_iter=max_iter, tol=tol, seed=0,
                     init=init)
    return res.observation, res.relevance, res.iterations


# --------------------------------------------------------------------------- per component
def _order(graph: IdentifiabilityGraph, members: np.ndarray) -> np.ndarray:
    """Members in curve order: by position (then the other columns) when there is one, else by
    decreasing impressions."""
    f = graph.factors.iloc[members]
    if "position" in f:
        others = [c for c in f.columns if c != "position"]
        return members[np.lexsort([f[c].astype(str).to_numpy() for c in reversed(others)]
                                  + [f["position"].to_numpy()])] if others else \
            members[np.argsort(f["position"].to_numpy(), kind="stable")]
    imp = np.bincount(graph.fac, graph.impressions, graph.n_factors)[members]
    return members[np.argsort(-imp, kind="stable")]


def estimate_bias(graph: IdentifiabilityGraph, method: str = "all_pairs", n_bootstrap: int = 100,
                  alpha: float = 0.1, seed: int = 0, max_components: int = 10, tol: float = 1e-6) -> pd.DataFrame:
    """Observation curve of every component with ≥ 2 factors (the ``max_components`` largest),
    normalised within the component, with document-bootstrap intervals: the tidy table of
    :func:`estimate_bias_full` (which also returns the notes)."""
    return estimate_bias_full(graph, method, n_bootstrap, alpha, seed, max_components, tol).table


def estimate_bias_full(graph: IdentifiabilityGraph, method: str = "all_pairs", n_bootstrap: int = 100,
                       alpha: float = 0.1, seed: int = 0, max_components: int = 10,
                       tol: float = 1e-6) -> BiasEstimate:
    """As :func:`estimate_bias`, returning the :class:`BiasEstimate` with its notes."""
    if method not in ESTIMATORS:
        raise ConfigError("method", f"unknown estimator {method!r}; use one of {', '.join(ESTIMATORS)}")
    if graph.impressions is None:
        raise ConfigError("graph", "estimation needs click counts: build the graph with "
                                   "IdentifiabilityGraph.from_counts or from a click log")
    if not 0 < alpha < 1:
        raise ConfigError("alpha", f"{alpha} is not in (0, 1)")
    if n_bootstrap < 0 or n_bootstrap > 10_000:
        raise ConfigError("n_bootstrap", f"{n_bootstrap} is not in 0…10000")
    n_f, n_d = graph.n_factors, graph.n_documents
    doc, fac = graph.doc, graph.fac
    n = graph.impressions.astype(np.float64)
    c = graph.clicks.astype(np.float64)
    ctr = np.divide(c, n, out=np.zeros_like(c), where=n > 0)
    notes = []
    multi = [k for k in range(graph.n_components) if graph.sizes[k] >= 2]
    if graph.n_components > 1:
        notes.append(f"the graph has {graph.n_components:,} components: each curve is normalised within its "
                     "component; ratios between components are not identifiable and are not estimated")
    if len(multi) > max_components:
        notes.append(f"curves for the {max_components} largest of {len(multi):,} components with ≥ 2 factors")
        multi = multi[:max_components]
    single = graph.n_components - len([k for k in range(graph.n_components) if graph.sizes[k] >= 2])
    if single:
        notes.append(f"{single:,} component(s) hold a single factor: nothing to compare it with")
    if method in ("pivot_one", "adjacent_chain", "all_pairs"):
        ia, ib = intervention_sets(doc, fac)
    rng = np.random.default_rng(seed)
    rows = []
    local = np.full(n_f, -1, np.int64)
    for k in multi:
        members = _order(graph, np.flatnonzero(graph.component == k))
        local[:] = -1
        local[members] = np.arange(len(members))
        if method != "em":
            inside = local[fac[ia]] >= 0           # both ends share a document: same component
            P = _PairStats(local[fac[ia[inside]]], local[fac[ib[inside]]], ctr[ia[inside]], doc[ia[inside]],
                           len(members))

        def run(w_doc, init=None):
            if method == "em":
                inside = local[fac] >= 0
                o, r, _ = _em(doc[inside], fac[inside], n[inside] * w_doc[doc[inside]],
                              c[inside] * w_doc[doc[inside]], n_d, n_f, tol, init=init)
                em_state["init"] = (r, o)
                ref = o[members[0]]
                return o[members] / ref if ref > 0 else np.full(len(members), np.nan)
            C, N = P.sums(w_doc)
            if method == "pivot_one":
                return _pivot(P, C)
            if method == "adjacent_chain":
                return _chain(P, C)
            return _all_pairs(P, C, N, init)

        em_state: dict = {}
        est = run(np.ones(n_d))
        boots = []
        if method == "all_pairs":             # bootstrap fits start from the full-data curve, scaled into
            q = np.clip(0.5 * est / np.nanmax(est), 1e-3, 1 - 1e-3) if np.isfinite(est).any() else None
            init = None if q is None else np.log(q / (1 - q))    # (0, 1): a saturated start has no gradient
            if init is not None:
                init[~np.isfinite(init)] = 0.0
        else:
            init = em_state.get("init")       # EM bootstrap fits start from the full-data fit
        for _ in range(n_bootstrap):
            boots.append(run(rng.poisson(1.0, n_d).astype(np.float64), init))
        if boots:
            B = np.vstack(boots)
            with np.errstate(all="ignore"):
                lo = np.nanpercentile(B, 100 * alpha / 2, axis=0) if np.isfinite(B).any() else np.full(len(est), np.nan)
                hi = np.nanpercentile(B, 100 * (1 - alpha / 2), axis=0) if np.isfinite(B).any() else \
                    np.full(len(est), np.nan)
        else:
            lo = hi = np.full(len(est), np.nan)
        imp = np.bincount(fac, n, n_f)[members]
        labels = np.asarray(graph.factor_labels(), dtype=object)[members]
        for i, t in enumerate(members):
            rows.append({"component": int(k), "factor": int(t), "label": labels[i],
                         "position": (int(graph.factors["position"].iloc[t]) if "position" in graph.factors
                                      and pd.notna(graph.factors["position"].iloc[t]) else None),
                         "estimate": float(est[i]), "lower": float(lo[i]), "upper": float(hi[i]),
                         "impressions": int(imp[i])})
        if np.isnan(est).any():
            notes.append(f"component {k}: {int(np.isnan(est).sum())} factor(s) share no document with the "
                         f"{'reference' if method == 'pivot_one' else 'neighbouring'} factor: not estimated "
                         f"by {method}")
    table = pd.DataFrame(rows, columns=["component", "factor", "label", "position", "estimate", "lower", "upper",
                                        "impressions"])
    return BiasEstimate(table, method, n_bootstrap, alpha, notes)
