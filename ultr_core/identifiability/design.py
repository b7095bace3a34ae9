"""Repairs that buy certainty (issue #46, item 5): node interventions — show a logged document at another factor
(position) for ``m`` impressions — ranked by how much they cut the worst (or the mean) variance of log(o_k / o_ref),
an optimal design on the log's own information.

Showing document d (cell weights w_d, dd = Σ w_d, a_d = w_d / dd) at factor b adds a cell of information
ω = m·p/(1 − p), p = r_d·o_b predicted by the fit.  Eliminating the document again (a star–mesh transform), the
factors' information changes by the rank-one term c·v vᵀ with v = a_d − e_b and c = ω·dd/(dd + ω) (a leaf shown
at a: a new link a–b of conductance c, the two resistances in series).  By Sherman–Morrison the variance of factor
k falls by c (G⁻¹v)_k² / (1 + c vᵀG⁻¹v) — every candidate scored at once; the best is applied exactly and the next
one scored on the updated information (greedy), giving the predicted standard errors after 1…N swaps.

>>> import numpy as np
>>> from ultr_core.identifiability.uncertainty import factor_uncertainty
>>> doc, fac = np.array([0, 0, 1, 2]), np.array([0, 1, 1, 2])          # factor 2 hangs on …
>>> n, c = np.full(4, 1000.0), np.array([500.0, 250.0, 300.0, 100.0])
>>> doc, fac = np.r_[doc, 2], np.r_[fac, 1]                         # … 20 impressions of document 2 at 1
>>> n, c = np.r_[n, 20.0], np.r_[c, 1.0]
>>> u = factor_uncertainty(doc, fac, n, c=c, n_docs=3, n_factors=3, component=np.zeros(3, int), references={0: 0})
>>> plan = certainty_plan(u, steps=1, impressions=1000)
>>> plan.swaps[0]["document"], plan.swaps[0]["factor"], plan.worst_after[0] < plan.worst_before   # doc 0 at 2
(0, 2, True)
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ultr_core.errors import ConfigError
from ultr_core.identifiability.newton import P_MAX, schur
from ultr_core.identifiability.uncertainty import FactorUncertainty

__all__ = ["CertaintyPlan", "certainty_plan", "OBJECTIVES", "MAX_CANDIDATES"]

OBJECTIVES = ("worst", "mean")
#: most (document, factor) candidates scored per step: the documents carrying the most information come first
MAX_CANDIDATES = 50_000


@dataclass(frozen=True)
class CertaintyPlan:
    """The greedy plan inside the component of the weakest factor: ``swaps`` (document, factor, predicted worst and
    mean standard error after it), the standard errors before (``worst_before``, ``mean_before``) and after each
    swap, ``factors`` (the component's factors) and ``se_after`` (their standard errors after each swap)."""

    objective: str
    impressions: int
    factors: list
    worst_factor: int
    worst_before: float
    mean_before: float
    worst_after: list = field(default_factory=list)
    mean_after: list = field(default_factory=list)
    swaps: list = field(default_factory=list)
    se_before: list = field(default_factory=list)
    se_after: list = field(default_factory=list)


def _component(u: FactorUncertainty):
    """The weakest factor's information block: its factors (grounding first), the dense factor information S and
    the documents touching it with their weights."""
    finite = np.isfinite(u.log_se) & (u.log_se > 0)
    if not finite.any():
        raise ConfigError("--certainty", "no factor has a finite, non-zero standard error: nothing to make surer "
                                         "(every factor is its component's reference or unlinked; connect the "
                                         "components first: --intervene or --merge)")
    worst = int(np.flatnonzero(finite)[np.argmax(u.log_se[finite])])
    ground = int(u.reference[worst])
    facs = np.flatnonzero(u.block == u.block[worst])
    facs = np.r_[ground, facs[facs != ground]]
    doc, fac, w = u.cells
    S = schur(doc, fac, w, n_docs=len(u.r), n_factors=len(u.o))[0][facs][:, facs].toarray()
    local = np.full(len(u.o), -1)
    local[facs] = np.arange(len(facs))
    rows = (local[fac] >= 0) & (w > 0)
    return worst, facs, S, doc[rows], local[fac[rows]], w[rows]


def _candidates(u, facs, doc, lf, w):
    """(document, local factor, its current weights as a dense row) for documents with information, the most
    informative first, at most MAX_CANDIDATES pairs."""
    docs, inv = np.unique(doc, return_inverse=True)
    A = np.zeros((len(docs), len(facs)))
    np.add.at(A, (inv.reshape(-1), lf), w)
    # a document at its bound (r·o = 1 somewhere in its component) or clicked at every impression has no Fisher
    # information to predict from: never a candidate
    ok = np.ones(len(docs), bool) if u.capped is None else ~u.capped[docs]
    if u.saturated is not None:
        ok &= ~u.saturated[docs]
    order = np.flatnonzero(ok)[np.argsort(-A.sum(1)[ok], kind="stable")][:max(1, MAX_CANDIDATES // len(facs))]
    d, b = np.repeat(order, len(facs)), np.tile(np.arange(len(facs)), len(order))
    keep = A[d, b] == 0
    return docs, A, d[keep], b[keep]


#: numbers in one chunk of the candidates' factor vectors (≈ 16 MB each): memory stays bounded however many factors
#: the weakest factor's block holds
_CHUNK_NUMBERS = 2_000_000


def _best_swap(G, A, cd, cb, omega, k: int, objective: str):
    """The candidate whose swap most cuts the objective (Sherman–Morrison on the grounded inverse ``G``), scored in
    chunks of at most :data:`_CHUNK_NUMBERS` numbers: (its index, G·v, 1 + c·vᵀG v, c)."""
    size = max(1, _CHUNK_NUMBERS // max(G.shape[0], 1))
    best = (-np.inf, 0, None, 1.0, 0.0)
    for lo in range(0, len(cd), size):
        d, b, om = cd[lo:lo + size], cb[lo:lo + size], omega[lo:lo + size]
        dd = A[d].sum(1)
        V = (A[d] / dd[:, None]).T                         # a_d − e_b, factors × candidates
        V[b, np.arange(len(b))] -= 1.0
        V = V[1:]
        c = om * dd / (dd + om)
        X = G @ V
        denom = 1 + c * np.einsum("ij,ij->j", V, X)
        cut = c * (X[k] ** 2 if objective == "worst" else (X ** 2).mean(0)) / denom
        j = int(np.argmax(cut))
        if cut[j] > best[0]:
            best = (cut[j], lo + j, X[:, j].copy(), denom[j], c[j])
    return best[1], best[2], best[3], best[4]


def certainty_plan(u: FactorUncertainty, *, steps: int = 5, impressions: int = 100,
                   objective: str = "worst") -> CertaintyPlan:
    """Greedy optimal design of ``steps`` swaps of ``impressions`` each (module docstring) that most cut the
    ``objective`` ("worst": the weakest factor's variance; "mean": the mean over the component's factors)."""
    if objective not in OBJECTIVES:
        raise ConfigError("objective", f"{objective!r}: use one of {', '.join(OBJECTIVES)}")
    if not 1 <= steps <= 100 or not 1 <= impressions <= 10 ** 9:
        raise ConfigError("steps", "use 1–100 swaps of 1–10⁹ impressions each")
    worst, facs, S, doc, lf, w = _component(u)
    docs, A, cd, cb = _candidates(u, facs, doc, lf, w)
    G = np.linalg.inv(S[1:, 1:])                        # grounded at the reference (row 0)
    k = int(np.flatnonzero(facs == worst)[0]) - 1
    p = np.minimum(u.r[docs[cd]] * u.o[facs[cb]], P_MAX)
    omega = impressions * p / (1 - p)
    se0 = np.sqrt(np.r_[0.0, np.diag(G)])
    plan = CertaintyPlan(objective, impressions, [int(f) for f in facs], worst, float(se0[k + 1]),
                         float(se0[1:].mean()), se_before=se0.tolist())
    for _ in range(steps):
        if not len(cd):
            break
        i, x, denom_i, c_i = _best_swap(G, A, cd, cb, omega, k, objective)
        G -= c_i * np.outer(x, x) / denom_i
        A[cd[i], cb[i]] += omega[i]
        se = np.sqrt(np.r_[0.0, np.clip(np.diag(G), 0, None)])
        plan.swaps.append({"document": int(docs[cd[i]]), "factor": int(facs[cb[i]]),
                           "impressions": impressions, "information": float(omega[i])})
        plan.worst_after.append(float(se[k + 1]))
        plan.mean_after.append(float(se[1:].mean()))
        plan.se_after.append(se.tolist())
        keep = np.arange(len(cd)) != i
        cd, cb, omega = cd[keep], cb[keep], omega[keep]
    return plan
