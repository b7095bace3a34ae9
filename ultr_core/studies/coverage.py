"""Do the intervals hold? (issue #46, item 3.)  Monte Carlo over seeds on weakly connected PBM count tables with a
known truth, drawn here by a generator independent of the simulation package (numpy only): how often each method's
90 % interval of o_k / o_ref covers the true ratio, and how wide it is.

Generators (``GENERATORS``: one record per design):

* ``chain`` — each document lives at one of 6 positions and is swapped to the next one in 1 % of its impressions:
  the graph is a path, the deep positions hang on a few hundred swapped impressions;
* ``deep`` — 10 positions, traffic falling as 1/k², documents shown at two neighbouring positions: few clicks deep;
* ``contexts`` — 2 contexts × 4 positions, the contexts linked by 15 documents shown in both.

Methods: ``fisher`` (:mod:`~ultr_core.identifiability.uncertainty`), ``profile``
(:mod:`~ultr_core.identifiability.profile`) and ``bootstrap`` — the ``ig`` report's document-bootstrap band of
the chosen estimator (:mod:`~ultr_core.identifiability.estimation`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd

__all__ = ["Design", "GENERATORS", "coverage_table", "draw"]


@dataclass(frozen=True)
class Design:
    """One generator: ``make(rng)`` → (doc, fac, n, true r, true o, labels); ``label``: what it tests."""

    key: str
    label: str
    make: Callable


def _chain(rng):
    D, K = 240, 6
    home = np.arange(D) % K
    moved = home < K - 1
    doc = np.r_[np.arange(D), np.arange(D)[moved]]
    fac = np.r_[home, home[moved] + 1]
    n = np.r_[rng.poisson(400, D), rng.poisson(4, moved.sum())].astype(float)
    return doc, fac, n, rng.uniform(0.2, 0.9, D), 0.9 / np.arange(1, K + 1) ** 0.8, [f"position={k + 1}"
                                                                                    for k in range(K)]


def _deep(rng):
    D, K = 400, 10
    home = rng.integers(0, K - 1, D)
    doc = np.r_[np.arange(D), np.arange(D)]
    fac = np.r_[home, home + 1]
    n = rng.poisson(3000 / (fac + 1.0) ** 2).astype(float)
    return doc, fac, n, rng.uniform(0.2, 0.9, D), 1 / np.arange(1, K + 1), [f"position={k + 1}" for k in range(K)]


def _contexts(rng):
    D, K = 200, 4
    ctx, home = np.arange(D) % 2, (np.arange(D) // 2) % K
    doc, fac = [np.arange(D), np.arange(D)], [ctx * K + home, ctx * K + (home + 1) % K]
    shared = rng.choice(D, 15, replace=False)
    doc.append(shared)
    fac.append((1 - ctx[shared]) * K + home[shared])
    doc, fac = np.concatenate(doc), np.concatenate(fac)
    n = rng.poisson(150, len(doc)).astype(float)
    o = np.r_[1 / np.arange(1, K + 1), 0.6 / np.arange(1, K + 1)]
    return doc, fac, n, rng.uniform(0.2, 0.9, D), o, [f"(context={c}, position={k + 1})" for c in (0, 1)
                                                      for k in range(K)]


GENERATORS = {d.key: d for d in (
    Design("chain", "rare-swap chain, 6 positions (1 % swaps)", _chain),
    Design("deep", "deep positions, traffic ∝ 1/k², 10 positions", _deep),
    Design("contexts", "2 contexts × 4 positions linked by 15 documents", _contexts),
)}


def draw(key: str, seed: int):
    """One count table of a design: (doc, fac, n, c, n_docs, n_factors, true o, labels), empty cells dropped."""
    rng = np.random.default_rng(seed)
    doc, fac, n, r, o, labels = GENERATORS[key].make(rng)
    c = rng.binomial(n.astype(np.int64), r[doc] * o[fac]).astype(float)
    keep = n > 0
    return doc[keep], fac[keep], n[keep], c[keep], len(r), len(o), o, labels


def _fisher_and_profile(cells, truth, profile: bool):
    from ultr_core.identifiability.profile import profile_interval
    from ultr_core.identifiability.uncertainty import Z90, factor_uncertainty
    doc, fac, n, c, D, F = cells
    u = factor_uncertainty(doc, fac, n, c=c, n_docs=D, n_factors=F, component=np.zeros(F, np.int64), references={0: 0})
    rows = []
    for k in range(1, F):
        if not np.isfinite(u.log_se[k]):
            continue
        est = np.log(u.o[k] / u.o[0])
        lo, hi = est - Z90 * u.log_se[k], est + Z90 * u.log_se[k]
        rows.append(("fisher", k, lo, hi, truth[k]))
        if profile:
            p = profile_interval(u, k)
            lo = np.log(p.lower) if p.lower else -np.inf
            hi = np.log(p.upper) if p.upper else np.inf
            rows.append(("profile", k, lo, hi, truth[k]))
    return rows


def _bootstrap(cells, truth, estimator: str, n_boot: int, seed: int):
    from ultr_core.identifiability import IdentifiabilityGraph
    from ultr_core.identifiability.estimation import estimate_bias_full
    from ultr_core.logs.ingestion import CountTable
    doc, fac, n, c, D, F = cells
    frame = pd.DataFrame({"doc_id": doc, "factor": fac, "impressions": n.astype(np.int64),
                          "clicks": c.astype(np.int64)})
    g = IdentifiabilityGraph.from_counts(CountTable(frame, ("doc_id",), ("factor",)))
    est = estimate_bias_full(g, method=estimator, n_bootstrap=n_boot, seed=seed).table
    ref = int(g.factors["factor"].iloc[int(est["factor"].iloc[0])])
    rows = []
    for r in est.itertuples(index=False):
        k = int(g.factors["factor"].iloc[int(r.factor)])
        if k != ref and np.isfinite(r.lower) and r.lower > 0:
            rows.append((f"bootstrap ({estimator})", k, np.log(r.lower), np.log(r.upper), truth[k] - truth[ref]))
    return rows


def coverage_table(*, designs=tuple(GENERATORS), seeds=range(20), profile: bool = True,
                   bootstrap=("all_pairs", "em"), n_boot: int = 100) -> pd.DataFrame:
    """Per design and method: intervals, share covering the true log ratio, median width (×, of the ratio) and
    the coverage of the weakest factor (the last one) alone."""
    rows = []
    for key in designs:
        for seed in seeds:
            doc, fac, n, c, D, F, o, _ = draw(key, seed)
            truth = np.log(o / o[0])
            cells = (doc, fac, n, c, D, F)
            got = _fisher_and_profile(cells, truth, profile)
            for est in bootstrap:
                got += _bootstrap(cells, np.log(o), est, n_boot, seed)
            rows += [(key, seed, m, k, lo, hi, t, k == F - 1) for m, k, lo, hi, t in got]
    df = pd.DataFrame(rows, columns=["design", "seed", "method", "factor", "lower", "upper", "truth", "weakest"])
    df["covered"] = (df["lower"] <= df["truth"]) & (df["truth"] <= df["upper"])
    df["width"] = np.exp(df["upper"] - df["lower"])
    out = df.groupby(["design", "method"]).agg(intervals=("covered", "size"), coverage=("covered", "mean"),
                                               median_width=("width", "median"))
    weakest = df[df["weakest"]].groupby(["design", "method"])["covered"].mean().rename("weakest_coverage")
    return out.join(weakest).reset_index()
