"""The PBM fit on (document, factor) counts to convergence — the one maximum-likelihood fit every identifiability
number comes from (:mod:`~ultr_core.identifiability.uncertainty` owns what it reports; the bootstrap refits, the
profile likelihood and the certainty plan call it too).

Newton's method on θ = (log r, log o) with the observed information — a signless Laplacian of the bipartite
document–factor graph like the expected one, with weights (n − c)·p/(1 − p)² ≥ 0 — the documents eliminated exactly
(a Schur complement) and each information block grounded; each block takes its own step, held short of p = 1 and
halved until its own likelihood does not fall.  An active set keeps the problem regular: documents whose maximum
lies on the boundary leave (:func:`_at_boundary`) and return once converged if the final factors put their maximum
inside (:func:`fit_newton`), documents left with no click on their fitted cells leave, and a
factor whose every fitted document is clicked there and nowhere else is *separated* (its ratio runs to ∞) at once; a
factor that drifts past :data:`SEPARATED` anyway is separated then.
"""
from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import connected_components

from ultr_core.identifiability.grounded import Grounded

__all__ = ["cell_weights", "schur", "fit_newton", "newton_step", "documents_given_factors",
           "log_likelihood", "active_rows", "component_top",
           "P_MAX", "SEPARATED", "MAX_NEWTON", "RELEASE_ROUNDS", "cap_slope",
           "RELEASE_MARGIN"]

#: click probabilities are kept below this (a cell with p → 1 carries unbounded information)
P_MAX = 1 - 1e-9
MAX_NEWTON = 100
#: the Schur complement is formed densely up to this many factors (:func:`schur`)
DENSE_FACTORS = 64
#: how many times a converged fit readmits the documents its final factors put inside the bound (:func:`fit_newton`)
RELEASE_ROUNDS = 5
#: … whose log-likelihood falls at the cap by more than this share of their impressions (per unit of log r)
RELEASE_MARGIN = 1e-3
#: a factor whose log o drifts this far from its block's grounding is *separated*: the likelihood keeps rising as its
#: ratio goes to 0 or ∞ (its linking documents clicked on one side only) — no finite estimate, it leaves the fit
SEPARATED = 15.0


def cell_weights(n, p) -> np.ndarray:
    """A cell's Fisher information n p/(1 − p) (p kept below :data:`P_MAX`)."""
    p = np.minimum(p, P_MAX)
    return n * p / (1 - p)


def schur(doc, fac, w, *, n_docs: int, n_factors: int):
    """The information on the factors once the documents are eliminated exactly (each document touches factors
    only): S = D_f − Wᵀ D_d⁻¹ W, the Schur complement of the Laplacian L = S Q S — it keeps the effective
    resistances between factors.  Returns (S, W, D_d⁻¹) with W the (document × factor) weights.  With at most
    :data:`DENSE_FACTORS` factors Wᵀ D_d⁻¹ W is a dense product (4× faster than the sparse one on 30,000 documents ×
    10 ranks; the Newton fit forms it at every step)."""
    w = np.asarray(w, np.float64)
    W = sparse.csr_matrix((w, (doc, fac)), shape=(n_docs, n_factors))
    dd = np.bincount(doc, w, n_docs).astype(np.float64)         # (an empty bincount is int64)
    inv = np.divide(1.0, dd, out=np.zeros_like(dd), where=dd > 0)
    df = np.bincount(fac, w, n_factors).astype(np.float64)
    if n_factors <= DENSE_FACTORS:
        Wd = np.bincount(doc * n_factors + fac, w, n_docs * n_factors).astype(np.float64).reshape(n_docs, n_factors)
        return sparse.csr_matrix(np.diag(df) - (Wd.T * inv) @ Wd), W, inv
    return (sparse.diags(df) - W.T @ sparse.diags(inv) @ W).tocsr(), W, inv


def _score(doc, fac, n, c, p, n_docs, n_factors):
    g = (c - n * p) / (1 - np.minimum(p, P_MAX))
    return np.concatenate([np.bincount(doc, g, n_docs), np.bincount(fac, g, n_factors)])


def log_likelihood(n, c, p) -> float:
    p = np.clip(p, 1e-300, P_MAX)
    return float(np.sum(c * np.log(p) + (n - c) * np.log1p(-p)))


def _blocks(doc, fac, n_docs: int, n_factors: int, reference: np.ndarray):
    """The information graph's component of each factor, its grounding factor (the reference where the component
    holds it, else its first factor) and whether each factor is linked to its reference."""
    N = n_docs + n_factors
    A = sparse.coo_matrix((np.ones(len(doc)), (doc, fac + n_docs)), shape=(N, N))
    block = connected_components(A, directed=False)[1][n_docs:]
    ground = np.full(block.max() + 1 if len(block) else 0, n_factors, np.int64)
    np.minimum.at(ground, block, np.arange(n_factors))
    ground[block[reference]] = reference
    return block, ground[block] == np.arange(n_factors), ground[block] == reference


def newton_step(doc, fac, n, *, c, theta, n_docs, n_factors, block, grounding):
    """One Newton step on the observed information (documents eliminated, each block grounded), each block's step
    held short of p = 1 and halved until its own likelihood does not fall; returns (θ, Newton decrement)."""
    p = np.exp(theta[doc] + theta[n_docs + fac])
    S, W, inv = schur(doc, fac, _newton_weights(n, c, p), n_docs=n_docs, n_factors=n_factors)
    g = _score(doc, fac, n, c, p, n_docs, n_factors)
    gd, gf = g[:n_docs], -g[n_docs:]                     # the Laplacian's coordinates: factors' sign flipped
    rhs = gf + W.T @ (inv * gd)
    G = Grounded(S, block, ~grounding)
    step_f = np.zeros(n_factors)
    step_f[G.keep] = G.solve(rhs[G.keep])
    step_d = inv * (gd + W @ step_f)
    step = np.concatenate([step_d, -step_f])
    dec = float(g @ step)
    # the likelihood is a sum over the information blocks (a document's cells lie in one block), so each block takes
    # its own step: halved only where its own likelihood would fall or a p reach 1 — one document near p = 1 no
    # longer shrinks the steps of every other block (issue #58: 5,000 linked contexts stopped unconverged)
    n_blocks = int(block.max()) + 1 if len(block) else 0
    cell_block = block[fac]
    doc_block = np.zeros(n_docs, np.int64)
    doc_block[doc] = cell_block
    base = np.bincount(cell_block, _celllog_likelihood(n, c, p), n_blocks)
    # fraction to the boundary: no block's step may take a cell past 0.9 of its distance to p = 1 (in log p)
    rise = step[doc] + step[n_docs + fac]
    with np.errstate(divide="ignore", invalid="ignore"):
        room = np.where(rise > 0, -np.log(np.minimum(p, P_MAX)) / rise, np.inf)
    scale = np.ones(n_blocks)
    np.minimum.at(scale, cell_block, 0.9 * room)
    for _ in range(40):
        new = theta + step * np.concatenate([scale[doc_block], scale[block]])
        ll = np.bincount(cell_block, _celllog_likelihood(n, c, np.exp(new[doc] + new[n_docs + fac])), n_blocks)
        bad = ~(ll >= base - 1e-12 * np.abs(base))                 # NaN (p ≥ 1) counts as a fall
        if not bad.any():
            break
        scale[bad] /= 2
    else:
        scale[bad] = 0.0                                         # blocks that found no rise keep their values
        new = theta + step * np.concatenate([scale[doc_block], scale[block]])
    return documents_given_factors(doc, fac, n, c=c, theta=new, n_docs=n_docs), dec


def _newton_weights(n, c, p) -> np.ndarray:
    """The observed information of a cell in θ = (log r, log o): (n − c)·p/(1 − p)² — a signless Laplacian like the
    expected one (always ≥ 0), so the step is Newton's own and converges quadratically, where Fisher scoring's
    n·p/(1 − p) converges linearly (30 steps to 1e-12 on 5,000 blocks, 6 with this); a cell clicked at every
    impression has no observed curvature and keeps the expected weight (the graph stays connected)."""
    q = np.minimum(p, P_MAX)
    return np.where(c < n, (n - c) * q / (1 - q) ** 2, n * q / (1 - q))


def _celllog_likelihood(n, c, p) -> np.ndarray:
    """Each cell's c log p + (n − c) log(1 − p); −inf where p ≥ 1 (outside the model)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.clip(p, 1e-300, None)
        return np.where(p < 1, c * np.log(q) + (n - c) * np.log1p(-np.minimum(q, P_MAX)), -np.inf)


def fit_newton(doc, fac, n, *, c, theta, n_docs, n_factors, reference, boundary, out, tol):
    """Newton to convergence; a document whose maximum lies on the boundary (:func:`_at_boundary`) leaves the fit (an
    active set: the rest is a regular problem again) and the blocks are recomputed; ``boundary`` / ``out``: the
    documents / factors left out from the start.  Once converged, every document left out whose maximum at the final
    factors is inside the bound returns (:func:`_released`) and Newton runs again — at most :data:`RELEASE_ROUNDS`
    times, each document once — so the active set is the one the final factors imply, not the path's.  A document
    that left on an early step's factors used to stay out: on six Poisson resamples of a 30,000-pair simulated log
    (``benchmarks/bench_evaluate_cost.py``'s), a cold start and a start from the full log's active set ended
    0.010–0.018 apart in θ̂, each "converged"; now they agree to 10⁻⁸ on three and within 0.001 on the others
    (documents whose own cells move the factors across their cap, readmitted once; issue #58).  Returns (θ,
    decrement, fit_doc, boundary, out, block, grounding, reached)."""
    readmitted = np.zeros(n_docs, bool)
    for _ in range(RELEASE_ROUNDS + 1):
        theta, dec, fit_doc, boundary, out, block, grounding, reached = _fit_active(
            doc, fac, n, c, theta, n_docs, n_factors, reference, boundary, out, tol)
        if not abs(dec) < tol:
            break
        # once only: a document whose own cells move the factors across its cap (in, it rises at the cap; out, it
        # falls) would otherwise leave and return on every round
        back = _released(doc, fac, n, c, theta, n_docs, boundary, out) & ~readmitted
        if not back.any():
            break
        boundary, readmitted = boundary & ~back, readmitted | back
        theta = _readmit(doc, fac, n, c, theta, n_docs, back, out)
    return theta, dec, fit_doc, boundary, out, block, grounding, reached


def _released(doc, fac, n, c, theta, n_docs: int, boundary, out) -> np.ndarray:
    """Documents left out at the boundary whose likelihood, at the final factors, falls at their cap on their cells
    at the fitted factors by more than :data:`RELEASE_MARGIN` of their impressions: their maximum is inside (the KKT
    condition fails).  The margin keeps a document whose slope at the cap is ≈ 0 from leaving and returning on every
    round as the factors move by 10⁻⁶ (a document clicked once at rank 6 of one impression and twice at rank 8 of
    five has slope 1 − 1 = 0 at the cap)."""
    rows = boundary[doc] & ~out[fac]
    shown = np.bincount(doc[rows], n[rows], n_docs)
    slope = cap_slope(doc[rows], fac[rows], n[rows], c=c[rows], o=np.exp(theta[n_docs:]), n_docs=n_docs)
    return boundary & (shown > 0) & (slope < -RELEASE_MARGIN * shown)


def _readmit(doc, fac, n, c, theta, n_docs: int, back, out) -> np.ndarray:
    """θ with the documents ``back`` at their own maximum given the factors: their r is the one they left with, and
    the factors have moved since (one left at r = 1/o₁ and came back with o₂ > o₁: p > 1 on its cell at rank 2, no
    step could rise and Newton stopped at its 100 steps)."""
    rows = back[doc] & ~out[fac]
    top = component_top(doc[rows], fac[rows], np.exp(theta[n_docs:]), n_docs=n_docs, block=None)
    theta = theta.copy()
    with np.errstate(divide="ignore"):
        theta[:n_docs] = np.where(back, np.minimum(theta[:n_docs], np.log(0.9 / top)), theta[:n_docs])
    return documents_given_factors(doc[rows], fac[rows], n[rows], c=c[rows], theta=theta, n_docs=n_docs)


def _fit_active(doc, fac, n, c, theta, n_docs, n_factors, reference, boundary, out, tol):
    """Newton on one active set, documents leaving it as they reach the boundary (:func:`fit_newton`)."""
    dec, changed, fit_doc = np.inf, True, ~boundary
    protect = np.zeros(n_factors, bool)
    protect[np.asarray(reference, np.int64)] = True          # a reference is never the separated side
    for _ in range(MAX_NEWTON):
        if changed:
            rows, fit_doc = active_rows(doc, fac, c, fit_doc=fit_doc, n_docs=n_docs, n_factors=n_factors, out=out,
                                        protect=protect)
            theta[n_docs:][out] = 0.0
            block, grounding, reached = _blocks(doc[rows], fac[rows], n_docs, n_factors, reference)
            sub, changed = (doc[rows], fac[rows], n[rows], c[rows]), False
        if not rows.any():
            return theta, 0.0, fit_doc, boundary, out, block, grounding, reached
        theta, dec = newton_step(*sub[:3], c=sub[3], theta=theta, n_docs=n_docs, n_factors=n_factors, block=block,
                                 grounding=grounding)
        hit = fit_doc & _at_boundary(*sub, np.exp(theta[n_docs:]), n_docs)
        far = ~grounding & (np.abs(theta[n_docs:]) > SEPARATED)
        if hit.any() or far.any():
            fit_doc, boundary, out, changed = fit_doc & ~hit, boundary | hit, out | far, True
            theta[n_docs:][far] = 0.0
        elif abs(dec) < tol:
            break
    return theta, dec, fit_doc, boundary, out, block, grounding, reached


def documents_given_factors(doc, fac, n, *, c, theta, n_docs: int, steps: int = 30) -> np.ndarray:
    """Each document's log r at its own maximum given the factors — a concave problem in one variable per document,
    on log r < −max log o: Newton with the document's own curvature, held short of p = 1 and halved until its own
    likelihood does not fall.  Run after every factor step: the joint step gives a document with a cell clicked at
    every impression the expected weight n·p/(1 − p) there although that cell has no curvature, so its own steps
    were ~200× too short and a 20,000-session log stopped at 100 steps (decrement 2.4e-05, issue #58); with the
    documents at their maximum it converges in a few steps, to a higher likelihood."""
    theta = theta.copy()
    f = theta[n_docs + fac]
    top = np.full(n_docs, -np.inf)
    np.maximum.at(top, doc, f)
    d = theta[:n_docs]                                   # a view: the steps land in θ
    cells = np.arange(len(doc))                          # the cells of the documents still moving
    for _ in range(steps):
        cd, cf, cn, cc = doc[cells], f[cells], n[cells], c[cells]
        p = np.minimum(np.exp(d[cd] + cf), P_MAX)
        g = np.bincount(cd, (cc - cn * p) / (1 - p), n_docs)
        h = np.bincount(cd, (cn - cc) * p / (1 - p) ** 2, n_docs)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.where(h > 0, g / h, np.where(g > 0, np.inf, 0.0))
        step = np.minimum(step, 0.9 * -(d + top))
        moving = np.zeros(n_docs, bool)
        moving[cd] = True
        moving &= np.abs(g * step) >= 1e-14
        if not moving.any():
            break
        keep = moving[cd]                                # the others have converged: their cells leave the loop
        cells, cd, cf, cn, cc, p = cells[keep], cd[keep], cf[keep], cn[keep], cc[keep], p[keep]
        base = np.bincount(cd, _celllog_likelihood(cn, cc, p), n_docs)
        t = np.where(moving, 1.0, 0.0)
        for _ in range(30):
            ll = np.bincount(cd, _celllog_likelihood(cn, cc, np.exp(d[cd] + t[cd] * step[cd] + cf)), n_docs)
            bad = moving & ~(ll >= base - 1e-12 * np.abs(base))
            if not bad.any():
                break
            t[bad] /= 2
        t[bad] = 0.0
        d[moving] += t[moving] * step[moving]
    return theta


def _separated(doc, fac, c, rows, n_docs: int, n_factors: int) -> np.ndarray:
    """Factors separated from the rest of their block: every fitted document shown there is clicked there and nowhere
    else, so the likelihood rises without end as o_k → ∞ and those documents' r → 0."""
    d, f, cc = doc[rows], fac[rows], c[rows]
    only_here = (cc > 0) & (np.bincount(d, cc, n_docs)[d] == cc)
    return (np.bincount(f, minlength=n_factors) > 0) & (np.bincount(f, ~only_here, n_factors) == 0)


def active_rows(doc, fac, c, *, fit_doc, n_docs: int, n_factors: int, out, protect=None):
    """The fitted cells: those of the fitted documents at factors that they click (a factor none of them clicks has
    its maximum at o = 0 and no information) and not separated (``out``), documents left with one such factor
    becoming leaves, and documents left with no click on them leaving (their r runs to 0 one unit of log r per
    step: 5,000 blocks took 31 steps instead of 8)."""
    rows = fit_doc[doc] & ~out[fac]
    while True:
        rows = rows & ~out[fac]
        rows_new = rows & (np.bincount(fac[rows], c[rows], n_factors)[fac] > 0)
        fit_doc = fit_doc & (np.bincount(doc[rows_new], minlength=n_docs) >= 2) & (
            np.bincount(doc[rows_new], c[rows_new], n_docs) > 0)    # no click left on its cells: r → 0, no step
        rows_new &= fit_doc[doc]
        if protect is not None:                 # separated now, not after steps of drift (module docstring)
            sep = _separated(doc, fac, c, rows_new, n_docs, n_factors) & ~protect
            if sep.any():
                out |= sep
                rows_new &= ~sep[fac]
        if (rows_new == rows).all():
            return rows, fit_doc
        rows = rows_new


def component_top(doc, fac, o, *, n_docs: int, block) -> np.ndarray:
    """Per document the largest o over the factors of its information components (its own factors' included): the
    constraint r·o ≤ 1 at every factor of its component caps r at 1 / this."""
    top = np.zeros(n_docs)
    np.maximum.at(top, doc, o[fac])
    if block is not None and len(block):
        comp = np.zeros(int(block.max()) + 1)
        np.maximum.at(comp, block, np.where(np.isfinite(o), o, 0.0))
        np.maximum.at(top, doc, comp[block[fac]])
    return top


def _at_boundary(doc, fac, n, c, o, n_docs: int, block=None) -> np.ndarray:
    """Documents whose likelihood still rises at the cap r = 1/(the largest o of their component) given o: their
    constrained maximum lies on the boundary r·o = 1 (p = 1 on a cell of their own only when every impression there
    was clicked; else on a more examined factor of their component)."""
    return cap_slope(doc, fac, n, c=c, o=o, n_docs=n_docs, block=block) > 0


def cap_slope(doc, fac, n, *, c, o, n_docs: int, block=None) -> np.ndarray:
    """Per document the derivative of its log-likelihood in log r at the cap (:func:`_at_boundary`), in clicks; −1e300
    where a cell at the cap has an unclicked impression (the likelihood falls to −∞ there)."""
    top = component_top(doc, fac, o, n_docs=n_docs, block=block)
    p = o[fac] / top[doc]
    at_top = p >= 1 - 1e-12
    with np.errstate(divide="ignore", invalid="ignore"):
        g = np.where(at_top, np.where(c < n, -np.inf, n), (c - n * p) / (1 - p))
    return np.bincount(doc, np.where(np.isneginf(g), -1e300, g), n_docs)
