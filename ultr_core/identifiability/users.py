"""What identifiability means under trust bias (issue #48, item 4; *Identifiability Matters*, limitation (1)).

Trust bias (Agarwal et al., WWW 2019; Vardasbi et al., CIKM 2020): a result at factor k is examined with θ_k and then
clicked with ε⁺_k when relevant and ε⁻_k when not, so a document of relevance probability r_d is clicked with

    P(d, k) = θ_k (ε⁻_k + (ε⁺_k − ε⁻_k) r_d) = b_k + s_k r_d,     s_k = θ_k (ε⁺_k − ε⁻_k),  b_k = θ_k ε⁻_k

— affine in relevance (PBM is b_k = 0).  Only (s_k, b_k) are seen, never θ_k apart from ε±_k.  Two maps leave every
P unchanged: r → a·r, s → s/a (PBM's scale) and r → r + t, b → b − t·s (a shift).  So at best relevance is
recovered **up to an affine map** per connected component, and it is when, besides the graph being connected, every
factor shows at least two documents of different relevance: with one, its two parameters (s_k, b_k) face one
equation and a third direction opens.

:func:`trust_information` is the Fisher information of (r, s, b) on a count table (cell (d, k): n impressions, click
probability P): n/(P(1 − P)) g gᵀ with g = (s_k on r_d, r_d on s_k, 1 on b_k) — :func:`null_dimension` counts its
zero eigenvalues, the numerical check of the statement above (tested; docs/identifiability_trust_bias.md).

>>> import numpy as np
>>> doc, fac = np.array([0, 0, 1, 1, 2, 2]), np.array([0, 1, 0, 1, 0, 1])
>>> r, s, b = np.array([0.2, 0.5, 0.9]), np.array([0.8, 0.4]), np.array([0.1, 0.05])
>>> null_dimension(trust_information(doc, fac, np.full(6, 100.0), r=r, s=s, b=b, n_docs=3, n_factors=2))
2
"""
from __future__ import annotations

import numpy as np

from ultr_core.errors import counted
from ultr_core.identifiability.records import UsersReading

__all__ = ["trust_information", "null_dimension", "predicted_null_dimension", "click_probability", "users_report"]


def click_probability(doc, fac, r, *, s, b) -> np.ndarray:
    """P(d, k) = b_k + s_k r_d."""
    return b[fac] + s[fac] * r[doc]


def trust_information(doc, fac, n, *, r, s, b, n_docs: int, n_factors: int) -> np.ndarray:
    """The (dense) Fisher information of θ = (r_1…r_D, s_1…s_K, b_1…b_K) on the cells (doc, fac) with n
    impressions each, at the given parameters."""
    doc, fac = np.asarray(doc, np.int64), np.asarray(fac, np.int64)
    p = np.clip(click_probability(doc, fac, r, s=s, b=b), 1e-12, 1 - 1e-12)
    w = np.asarray(n, float) / (p * (1 - p))
    P = n_docs + 2 * n_factors
    G = np.zeros((len(doc), P))
    rows = np.arange(len(doc))
    G[rows, doc] = s[fac]
    G[rows, n_docs + fac] = r[doc]
    G[rows, n_docs + n_factors + fac] = 1.0
    return (G * w[:, None]).T @ G


def null_dimension(info: np.ndarray, tol: float = 1e-9) -> int:
    """Eigenvalues of the information below ``tol`` × the largest."""
    lam = np.linalg.eigvalsh(info)
    return int((lam <= tol * max(float(lam[-1]), 1e-300)).sum())


def predicted_null_dimension(doc, fac, r, *, n_docs: int, n_factors: int) -> int:
    """The statement of the module: per connected component of the (document, factor) graph 2 directions (an affine
    map of relevance), plus one for every factor that shows fewer than two distinct relevance values (its (s, b)
    under-determined), plus one per factor without any document."""
    from scipy import sparse
    from scipy.sparse.csgraph import connected_components
    doc, fac = np.asarray(doc, np.int64), np.asarray(fac, np.int64)
    N = n_docs + n_factors
    A = sparse.coo_matrix((np.ones(len(doc)), (doc, n_docs + fac)), shape=(N, N))
    k, lab = connected_components(A, directed=False)
    used = np.zeros(N, bool)
    used[doc], used[n_docs + fac] = True, True
    comps = len(np.unique(lab[used]))
    distinct = np.array([len(np.unique(np.round(r[doc[fac == f]], 12))) for f in range(n_factors)])
    return 2 * comps + int(((distinct == 1)).sum()) + 2 * int((distinct == 0).sum())


def users_report(g, users: str) -> UsersReading:
    """What the graph's verdict means for users who click as ``users`` (a key of the click-model table): PBM users
    get Theorem 1 (relevance up to one scale per component); a model whose record names an ``ig_condition`` (trust
    bias: relevance up to an affine map, when every factor also shows two documents of different relevance) gets that
    condition checked as far as the log can — factors that show fewer than two documents are counted and named."""
    from ultr_core.clickmodels.registry import MODEL_BY_KEY
    from ultr_core.logs.coding import tuple_labels
    spec = MODEL_BY_KEY[users]
    k = int(g.n_components)
    out = UsersReading(model=users, label=spec.label, meaning=spec.cls.IG_MEANING, condition=spec.ig_condition)
    if spec.position_only:
        return out.with_(verdict="relevance recoverable up to one scale (Theorem 1)" if k == 1 else
                         f"relevance comparable only within each of the {k} components")
    if not spec.ig_condition:
        return out.with_(verdict=f"the graph's verdict is about PBM users; {spec.label} users {spec.cls.IG_MEANING}")
    per_factor = np.bincount(np.asarray(g.fac, np.int64), minlength=g.n_factors)
    labels = tuple_labels(g.factors)
    thin = [labels[i] for i in np.flatnonzero(per_factor < 2)]
    out = out.with_(factors_with_fewer_than_two_documents=len(thin), thin_factors=tuple(thin[:20]))
    scope = "over the whole log" if k == 1 else f"only within each of the {k} components"
    text = f"relevance recoverable up to an affine map (the order, not the ratios) {scope}"
    if thin:
        text += (f"; {counted(len(thin), 'factor')} show fewer than two documents, so their signal and noise are not "
                 f"identified ({', '.join(thin[:4])}{' …' if len(thin) > 4 else ''})")
    else:
        text += "; every factor shows at least two documents (that their relevance differs, only the clicks can tell)"
    return out.with_(verdict=text)
