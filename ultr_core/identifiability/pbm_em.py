"""A position-based model fitted by EM on many count matrices at once (the estimators of
:mod:`~ultr_core.identifiability.estimation`: ``em`` on (document, factor) counts, ``all_pairs`` on intervention
pairs), SQUAREM-accelerated."""
from __future__ import annotations

import numpy as np
from scipy import sparse

__all__ = ["pbm_em"]


def pbm_em(doc, slot, n_docs: int, F: int, n, c, tol: float, max_iter: int, init=None, seed: int = 0):
    """A position-based model r(d)·o(t) fitted by EM to binomial counts, for every row of the
    matrices ``n``, ``c`` (resamples × (doc, slot) rows) at once: the standard update
    (Regression-EM's E-step without the regression), until the largest change is below ``tol``.
    Returns (o, r) as matrices."""
    R, m = n.shape[0], len(doc)
    Sd = sparse.csr_matrix((np.ones(m), (np.arange(m), doc)), shape=(m, n_docs))
    Sf = sparse.csr_matrix((np.ones(m), (np.arange(m), slot)), shape=(m, F))

    def agg(M, X):
        return np.asarray((M.T @ X.T).T)
    nd, nf = agg(Sd, n), agg(Sf, n)
    if init is None:
        rng = np.random.default_rng(seed)
        r, o = np.tile(rng.uniform(0, 1, n_docs), (R, 1)), np.tile(rng.uniform(0, 1, F), (R, 1))
    else:
        r, o = np.tile(init[0], (R, 1)), np.tile(init[1], (R, 1))
    def step(r, o):
        og, rd = o[:, slot], r[:, doc]
        miss = (n - c) / (1 - np.clip(og * rd, 0, 1 - 1e-9))
        return (np.clip(np.divide(agg(Sd, c + miss * (1 - og) * rd), nd, out=np.zeros_like(nd), where=nd > 0), 0, 1),
                np.clip(np.divide(agg(Sf, c + miss * og * (1 - rd)), nf, out=np.zeros_like(nf), where=nf > 0), 0, 1))

    # SQUAREM (Varadhan & Roland 2008, scheme S3) per row: two EM steps give r = Δ1 and v = Δ2 − Δ1,
    # the extrapolation x − 2αr + α²v with α = −‖r‖/‖v‖ ≤ −1 is projected onto [0, 1] and followed by
    # one EM step (the same fixed point as plain EM, typically far fewer updates)
    for _ in range(max(max_iter // 3, 1)):
        r1, o1 = step(r, o)
        r2, o2 = step(r1, o1)
        dr, do = r1 - r, o1 - o
        vr, vo = r2 - 2 * r1 + r, o2 - 2 * o1 + o
        nr = np.sqrt((dr ** 2).sum(1) + (do ** 2).sum(1))
        nv = np.sqrt((vr ** 2).sum(1) + (vo ** 2).sum(1))
        alpha = np.minimum(-np.divide(nr, nv, out=np.ones_like(nr), where=nv > 0), -1.0)[:, None]
        r_new, o_new = step(np.clip(r - 2 * alpha * dr + alpha ** 2 * vr, 0, 1),
                            np.clip(o - 2 * alpha * do + alpha ** 2 * vo, 0, 1))
        change = np.abs(o_new - o).max(initial=0)      # the curve is what is reported
        r, o = r_new, o_new
        if change < tol:
            break
    return o, r
