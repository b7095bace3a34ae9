"""How sure the log is about each bias factor (issue #46, item 1, PBM): the Fisher information of the position-based
model on the log's count table, and the standard error of log(o_k / o_ref) it implies inside each component.

For PBM on the (document d, factor k) cells with n impressions, c clicks and p = r_d·o_k, with θ = (log r, log o),
a cell's score is (c − n p)/(1 − p) on both of its parameters and its Fisher information n p/(1 − p) on each pair
of them.  Summed, the information is the *signless* Laplacian Q of the bipartite document–factor graph weighted by
w = n p/(1 − p); flipping the sign of the factor coordinates (S = diag(1, −1)) makes it the ordinary Laplacian
L = S Q S.  Its null space has one dimension per connected component (the scale r·a, o/a of each component —
Theorem 1 of *Identifiability Matters*, numerically), and the asymptotic variance of log(o_k/o_j) inside a
component is the effective resistance between k and j in that weighted graph: errors propagate along the graph,
and a factor linked to the rest by few, rarely clicked documents is far from its reference.

The fit is maximum likelihood run until the Newton decrement (sᵀ I⁺ s, the predicted gain of one more Fisher
scoring step) is below ``TOL`` — converged along every direction, weak ones included, which a fixed number of EM
steps is not (issue #46).  Standard errors come from sparse solves of the grounded Laplacian (one per factor, in
blocks) on the factors' information with the documents eliminated exactly (a Schur complement: documents touch
factors only); a component of at most :data:`DENSE_MAX` factors is factorised densely, a larger one by a sparse LU.

>>> import numpy as np
>>> doc, fac = np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1])
>>> n, c = np.full(4, 10_000.0), np.array([4_000.0, 2_000.0, 2_000.0, 1_000.0])
>>> u = factor_uncertainty(doc, fac, n, c, 2, 2, np.zeros(2, int))
>>> np.round(u.o / u.o[0], 3).tolist(), bool(u.converged), np.round(u.log_se, 4).tolist()
([1.0, 0.5], True, [0.0, 0.0197])
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.sparse.linalg import splu

__all__ = ["FactorUncertainty", "factor_uncertainty", "fisher_information", "identification", "rule_text", "TOL",
           "P_MAX", "WEAK_SPAN", "MAX_REPORT_FACTORS", "pair_log_se", "resolved_orders",
           "MAX_REPORT_PAIRS", "practical_report"]

#: the Newton decrement below which the fit counts as converged along every direction
TOL = 1e-12
#: click probabilities are kept below this (a cell with p → 1 carries unbounded information)
P_MAX = 1 - 1e-9
_MAX_NEWTON = 100
_BLOCK = 256
_PAIR_BLOCK = 4096
#: components with at most this many factors are solved densely (Cholesky), larger ones by a sparse LU
DENSE_MAX = 4_000


@dataclass(frozen=True)
class FactorUncertainty:
    """The converged PBM fit (``r`` per document, ``o`` per factor; each component scaled so that its reference
    factor has o = its fitted value), each factor's component reference (``reference``, the factor with the most
    impressions) and ``log_se``: the standard error of log(o_k / o_reference) (0 at the reference; inf where the
    component's information does not reach the factor: no clicks on its documents).  ``converged``: the Newton
    decrement fell below :data:`TOL`; ``decrement``: its last value."""

    r: np.ndarray
    o: np.ndarray
    reference: np.ndarray
    log_se: np.ndarray
    converged: bool
    decrement: float


def fisher_information(doc, fac, n, p, n_docs: int, n_factors: int) -> sparse.csr_matrix:
    """The Fisher information of θ = (log r, log o) (documents first, then factors): the signless Laplacian of the
    bipartite graph weighted by n p/(1 − p), sparse.

    >>> I = fisher_information(np.array([0]), np.array([0]), np.array([10.0]), np.array([0.5]), 1, 1).toarray()
    >>> I.tolist()
    [[10.0, 10.0], [10.0, 10.0]]
    """
    w = n * p / (1 - np.minimum(p, P_MAX))
    N = n_docs + n_factors
    rows, cols = np.concatenate([doc, fac + n_docs]), np.concatenate([fac + n_docs, doc])
    off = sparse.coo_matrix((np.concatenate([w, w]), (rows, cols)), shape=(N, N))
    deg = np.bincount(rows, np.concatenate([w, w]), N)
    return (off + sparse.diags(deg)).tocsr()


def _schur(doc, fac, n, p, n_docs: int, n_factors: int):
    """The information on the factors once the documents are eliminated exactly (each document touches factors
    only): S = D_f − Wᵀ D_d⁻¹ W, the Schur complement of the Laplacian L = S Q S — it keeps the effective
    resistances between factors.  Returns (S, W, D_d⁻¹) with W the (document × factor) weights."""
    w = n * p / (1 - np.minimum(p, P_MAX))
    W = sparse.csr_matrix((w, (doc, fac)), shape=(n_docs, n_factors))
    dd = np.asarray(W.sum(axis=1)).ravel()
    inv = np.divide(1.0, dd, out=np.zeros_like(dd), where=dd > 0)      # a document without clicks: no information
    df = np.asarray(W.sum(axis=0)).ravel()
    S = (sparse.diags(df) - W.T @ sparse.diags(inv) @ W).tocsc()
    return S, W, inv


class _Grounded:
    """The factors' information restricted to one component without its reference factor: dense Cholesky up to
    :data:`DENSE_MAX` factors, else a sparse LU.  ``solve(b)`` or raises ``np.linalg.LinAlgError`` when singular."""

    def __init__(self, S, keep: np.ndarray):
        sub = S[keep][:, keep]
        self.dense = len(keep) <= DENSE_MAX
        if self.dense:
            from scipy.linalg import cho_factor
            self.f = cho_factor(sub.toarray(), check_finite=True)
        else:
            try:
                self.f = splu(sub.tocsc())
            except RuntimeError as e:
                raise np.linalg.LinAlgError(str(e)) from None

    def solve(self, b):
        if self.dense:
            from scipy.linalg import cho_solve
            return cho_solve(self.f, b)
        return self.f.solve(b)


def _score(doc, fac, n, c, p, n_docs, n_factors):
    g = (c - n * p) / (1 - np.minimum(p, P_MAX))
    return np.concatenate([np.bincount(doc, g, n_docs), np.bincount(fac, g, n_factors)])


def _loglik(n, c, p) -> float:
    p = np.clip(p, 1e-300, P_MAX)
    return float(np.sum(c * np.log(p) + (n - c) * np.log1p(-p)))


def _parts(component, imp, references: dict):
    """Per component: its reference (given, else the factor with the most impressions) and its other factors."""
    out = {}
    for k in np.unique(component):
        facs = np.flatnonzero(component == k)
        ref = int(references.get(int(k), facs[np.argmax(imp[facs])]))
        out[int(k)] = (ref, facs[facs != ref])
    return out


def _newton(doc, fac, n, c, theta, n_docs, n_factors, parts):
    """One Fisher-scoring step (documents eliminated, each component grounded at its reference), with step halving
    so that the likelihood does not fall and no p reaches 1; returns (θ, Newton decrement)."""
    p = np.exp(theta[doc] + theta[n_docs + fac])
    S, W, inv = _schur(doc, fac, n, p, n_docs, n_factors)
    g = _score(doc, fac, n, c, p, n_docs, n_factors)
    gd, gf = g[:n_docs], -g[n_docs:]                     # the Laplacian's coordinates: factors' sign flipped
    rhs = gf + W.T @ (inv * gd)
    step_f = np.zeros(n_factors)
    for ref, keep in parts.values():
        if len(keep):
            try:
                step_f[keep] = _Grounded(S, keep).solve(rhs[keep])
            except np.linalg.LinAlgError:
                pass                                     # no information there: that part is not moved
    step_d = inv * (gd + W @ step_f)
    step = np.concatenate([step_d, -step_f])
    dec = float(g @ step)
    base = _loglik(n, c, p)
    for _ in range(40):
        new = theta + step
        q = np.exp(new[doc] + new[n_docs + fac])
        if q.max() < 1 and _loglik(n, c, q) >= base - 1e-12 * abs(base):
            return new, dec
        step = step / 2
    return theta, dec


def factor_uncertainty(doc, fac, n, c, n_docs: int, n_factors: int, component: np.ndarray,
                       tol: float = TOL, references: dict | None = None) -> FactorUncertainty:
    """Fit PBM to convergence on distinct (document, factor) cells and give every factor the standard error of
    log(o_k / o_ref) inside its IG component (``component``: the component of each factor; ``references``:
    component → its reference factor, default the factor with the most impressions)."""
    doc, fac = np.asarray(doc, np.int64), np.asarray(fac, np.int64)
    n, c = np.asarray(n, np.float64), np.asarray(c, np.float64)
    component = np.asarray(component)
    parts = _parts(component, np.bincount(fac, n, n_factors), references or {})
    ctr_d = (np.bincount(doc, c, n_docs) + 0.5) / (np.bincount(doc, n, n_docs) + 1.0)
    theta = np.concatenate([np.log(np.clip(ctr_d, 1e-6, 0.99)), np.zeros(n_factors)])
    dec = np.inf
    for _ in range(_MAX_NEWTON):
        theta, dec = _newton(doc, fac, n, c, theta, n_docs, n_factors, parts)
        if dec < tol:
            break
    p = np.exp(theta[doc] + theta[n_docs + fac])
    S, _, _ = _schur(doc, fac, n, p, n_docs, n_factors)
    se = np.zeros(n_factors)
    for ref, keep in parts.values():
        se[keep] = _factor_se(S, keep)
    reference = np.array([parts[int(k)][0] for k in component], dtype=np.int64)
    return FactorUncertainty(np.exp(theta[:n_docs]), np.exp(theta[n_docs:]), reference, se, bool(dec < tol),
                             float(dec))


def _factor_se(S, keep: np.ndarray) -> np.ndarray:
    """sqrt of the diagonal of the grounded inverse (effective resistances to the reference), by blocks of unit
    right-hand sides; inf where the component's information does not reach (no clicks)."""
    if not len(keep):
        return np.zeros(0)
    try:
        g = _Grounded(S, keep)
    except np.linalg.LinAlgError:
        return np.full(len(keep), np.inf)
    out = np.empty(len(keep))
    for lo in range(0, len(keep), _BLOCK):
        idx = np.arange(lo, min(lo + _BLOCK, len(keep)))
        E = np.zeros((len(keep), len(idx)))
        E[idx, np.arange(len(idx))] = 1.0
        var = g.solve(E)[idx, np.arange(len(idx))]
        out[idx] = np.where(np.isfinite(var) & (var > 0), np.sqrt(np.abs(var)), np.inf)
    return out


#: a factor is *identified* when the 90 % interval of o_k / o_ref spans at most this factor (else *weak*)
WEAK_SPAN = 2.0
#: most factors (over the curves' components) whose standard errors a report computes exactly (issue #46: to scale)
MAX_REPORT_FACTORS = 2_000
_Z90 = 1.6448536269514722


def identification(log_se: np.ndarray) -> np.ndarray:
    """``identified`` (the 90 % interval of o_k/o_ref spans at most ×:data:`WEAK_SPAN`), ``weak`` (wider) or
    ``unidentified`` (no information reaches the factor: an infinite standard error).

    >>> identification(np.array([0.0, 0.2, 0.5, np.inf])).tolist()
    ['identified', 'identified', 'weak', 'unidentified']
    """
    with np.errstate(over="ignore"):
        span = np.exp(2 * _Z90 * np.asarray(log_se, float))
    return np.where(~np.isfinite(span), "unidentified", np.where(span <= WEAK_SPAN, "identified", "weak"))


def rule_text() -> str:
    return (f"identified: the {90} % interval of o_k / o_ref (Fisher information of PBM at its maximum-likelihood fit, "
            f"ref = the component's first factor) spans at most ×{WEAK_SPAN:g}; weak: wider; unidentified: no "
            "information reaches the factor")


def pair_log_se(u: FactorUncertainty, doc, fac, n, n_docs: int, n_factors: int, component, pairs) -> np.ndarray:
    """The standard error of log(r_d / r_e) for each document pair (d, e) of ``pairs`` (P × 2) at the fit ``u``:
    the effective resistance between the two documents (the documents eliminated as for the factors; inf for a pair
    in two components or where no information reaches).  One batched solve per component."""
    doc, fac, n = np.asarray(doc, np.int64), np.asarray(fac, np.int64), np.asarray(n, np.float64)
    pairs = np.asarray(pairs, np.int64).reshape(-1, 2)
    S, W, inv = _schur(doc, fac, n, u.r[doc] * u.o[fac], n_docs, n_factors)
    comp_doc = np.full(n_docs, -1)
    comp_doc[doc] = np.asarray(component)[fac]
    out = np.full(len(pairs), np.inf)
    Wr = W.tocsr()
    for k in np.unique(np.asarray(component)):
        sel = np.flatnonzero((comp_doc[pairs[:, 0]] == k) & (comp_doc[pairs[:, 1]] == k))
        facs = np.flatnonzero(np.asarray(component) == k)
        keep = facs[facs != u.reference[facs[0]]]
        if not len(sel):
            continue
        try:
            grounded = _Grounded(S, keep) if len(keep) else None
        except np.linalg.LinAlgError:
            continue
        for lo in range(0, len(sel), _PAIR_BLOCK):          # memory: factors × block
            part = sel[lo:lo + _PAIR_BLOCK]
            out[part] = _pair_block(Wr, inv, grounded, keep, n_factors, pairs[part, 0], pairs[part, 1])
    return out


def _pair_block(Wr, inv, grounded, keep, n_factors: int, d, e) -> np.ndarray:
    """Effective resistances of the document pairs (d, e) of one component: the documents' unit current pushed
    through the factors' grounded system."""
    B = (Wr[d].multiply(inv[d][:, None]) - Wr[e].multiply(inv[e][:, None])).T.tocsr()    # factors × pairs
    xf = np.zeros((n_factors, len(d)))
    if grounded is not None:
        xf[keep] = grounded.solve(B[keep].toarray())
    wx_d = np.asarray(Wr[d].multiply(xf.T).sum(axis=1)).ravel()
    wx_e = np.asarray(Wr[e].multiply(xf.T).sum(axis=1)).ravel()
    var = inv[d] * (1 + wx_d) - inv[e] * (-1 + wx_e)
    ok = (inv[d] > 0) & (inv[e] > 0) & (var > 0)
    return np.where(ok, np.sqrt(np.where(ok, var, 1.0)), np.inf)


#: most within-query document pairs a report compares (each one solve column; issue #46: to scale)
MAX_REPORT_PAIRS = 200_000


def resolved_orders(u: FactorUncertainty, doc, fac, n, n_docs: int, n_factors: int, component, groups) -> dict:
    """Which document orders the log supports (issue #46, item 4): over the pairs of documents of one group (a
    query) in one component, the share whose 90 % interval of log(r_d / r_e) excludes 0 (a note instead above
    :data:`MAX_REPORT_PAIRS` pairs)."""
    groups = np.asarray(groups)
    order = np.argsort(groups, kind="stable")
    bounds = np.flatnonzero(np.r_[True, groups[order][1:] != groups[order][:-1], True])
    sizes = np.diff(bounds)
    if int((sizes * (sizes - 1) // 2).sum()) > MAX_REPORT_PAIRS:
        return {"pairs": None, "resolved": None, "share": None,
                "note": f"more than {MAX_REPORT_PAIRS:,} within-query pairs: not compared (issue #46)"}
    pairs = [(a, b) for lo, hi in zip(bounds[:-1], bounds[1:]) for i, a in enumerate(order[lo:hi])
             for b in order[lo + i + 1:hi]]
    if not pairs:
        return {"pairs": 0, "resolved": 0, "share": None}
    pairs = np.array(pairs)
    se = pair_log_se(u, doc, fac, n, n_docs, n_factors, component, pairs)
    diff = np.abs(np.log(u.r[pairs[:, 0]]) - np.log(u.r[pairs[:, 1]]))
    comparable = np.isfinite(se)
    resolved = comparable & (diff > _Z90 * se)
    return {"pairs": int(comparable.sum()), "resolved": int(resolved.sum()),
            "share": float(resolved.sum() / comparable.sum()) if comparable.any() else None}


def practical_report(g, curves: list) -> tuple[list, dict]:
    """Issue #46's first step: each curve factor's standard error of log(o_k / o_ref) (ref: its component's first
    factor, as the curve) from the Fisher information of PBM at a converged fit, its level, the counts and rule, and
    the within-query document orders the log resolves (the report of :mod:`~ultr_core.identifiability.reports`)."""
    import pandas as pd
    out = {"rule": rule_text(), "counts": {}, "weakest": []}
    if not curves or len(curves) > MAX_REPORT_FACTORS:
        if curves:
            out["note"] = (f"standard errors not computed: {len(curves):,} factors, above {MAX_REPORT_FACTORS:,} "
                           "(exact solves; issue #46)")
        return curves, out
    facs = np.array([r["factor"] for r in curves])
    comp = np.array([r["component"] for r in curves])
    refs = {int(k): int(facs[np.flatnonzero(comp == k)[0]]) for k in np.unique(comp)}
    local = np.full(g.n_factors, -1)
    local[facs] = np.arange(len(facs))
    rows = local[g.fac] >= 0
    doc, codes = pd.factorize(g.doc[rows])
    cells = (doc, local[g.fac[rows]], g.impressions[rows])
    u = factor_uncertainty(*cells, g.clicks[rows], int(doc.max()) + 1, len(facs), comp,
                           references={k: int(local[f]) for k, f in refs.items()})
    if g.document_keys is not None and "query_id" in g.document_keys:       # within-query document orders
        groups = g.document_keys["query_id"].astype(str).to_numpy()[np.asarray(codes)]
        out["document_orders"] = resolved_orders(u, *cells, len(codes), len(facs), comp, groups)
    levels = identification(u.log_se)
    for r, se, level in zip(curves, u.log_se, levels):
        r["log_se"], r["identification"] = (float(se) if np.isfinite(se) else None), str(level)
    out["counts"] = {k: int((levels == k).sum()) for k in ("identified", "weak", "unidentified")}
    order = np.argsort(-np.where(np.isfinite(u.log_se), u.log_se, np.inf), kind="stable")[:5]
    out["weakest"] = [curves[i]["label"] for i in order if levels[i] != "identified"]
    out["converged"] = u.converged
    return curves, out
