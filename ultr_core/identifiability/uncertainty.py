"""How sure the log is about each bias factor (issue #46, PBM): the Fisher information of the position-based model on
the log's count table, and the standard error of log(o_k / o_ref) it implies inside each component.

For PBM on the (document d, factor k) cells with n impressions, c clicks and p = r_d·o_k, with θ = (log r, log o),
a cell's score is (c − n p)/(1 − p) on both of its parameters and its Fisher information n p/(1 − p) on each pair
of them.  Summed, the information is the *signless* Laplacian Q of the bipartite document–factor graph weighted by
w = n p/(1 − p); flipping the sign of the factor coordinates (S = diag(1, −1)) makes it the ordinary Laplacian
L = S Q S.  Its null space has one dimension per connected component (the scale r·a, o/a of each component —
Theorem 1 of *Identifiability Matters*, numerically), and the asymptotic variance of log(o_k/o_j) inside a
component is the effective resistance between k and j in that weighted graph: errors propagate along the graph,
and a factor linked to the rest by few, rarely clicked documents is far from its reference.

Which documents carry information (stated, tested):

* a document never clicked has r = 0 at the maximum and no information (w = 0); a factor reached only through such
  documents, or not clicked at all, gets no standard error (*unidentified*: nothing links it to its reference);
* a document shown at one factor only (a leaf) adds nothing between factors; its r = c/(n·o_k) in closed form;
* a document shown at several factors and clicked at every impression has its maximum on the boundary p = 1, where
  the Fisher information does not describe the error: it is left out of the fit and the information (counted in
  ``boundary_documents``; its intervals then come only from the other documents — wider, never narrower);
* r is reported as a click probability at the component's reference factor, so it is held to r·o_k ≤ 1 at *every*
  factor k of its component: r ≤ 1/max_k o_k.  The fit itself keeps p = r·o ≤ 1 on each document's own cells (the
  likelihood's domain); where a document's r passes the component's bound (a deep leaf clicked more often than its
  factor's ô allows, a weakly placed factor's ô too large) the reported r is held at the bound and marked
  ``capped``, its interval running from the Fisher lower end (at most the bound) to the bound; ``r_free`` keeps
  the value before the bound.  A joint fit under every cross-factor constraint is not attempted: a leaf carries
  no information between factors, and the bound only binds where the factors' own intervals are wide.
* every cell's information is n·p/(1 − p) at the fitted p (none from documents clicked at every impression), so
  every standard error the report derives — factors, links, documents, pairs, the certainty plan — comes from one
  set of weights: one report, one standard error per factor.

The fit is maximum likelihood run until the Newton decrement (sᵀ I⁺ s, the predicted gain of one more Fisher
scoring step) is below ``TOL`` — converged along every direction, weak ones included, which a fixed number of EM
steps is not (issue #46).  The documents are eliminated exactly (a Schur complement: documents touch factors only);
the factors' grounded information is block diagonal, one block per component of the information graph, and its
inverse is taken block by block: blocks of up to :data:`SMALL_MAX` factors as one batched dense inverse per size,
larger ones by a dense Cholesky up to :data:`DENSE_MAX` factors, beyond that by a sparse LU — every factor, no cap.

>>> import numpy as np
>>> doc, fac = np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1])
>>> n, c = np.full(4, 10_000.0), np.array([4_000.0, 2_000.0, 2_000.0, 1_000.0])
>>> u = factor_uncertainty(doc, fac, n, c=c, n_docs=2, n_factors=2, component=np.zeros(2, int))
>>> np.round(u.o / u.o[0], 3).tolist(), bool(u.converged), np.round(u.log_se, 4).tolist()
([1.0, 0.5], True, [0.0, 0.0197])
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import sparse

from ultr_core.identifiability.grounded import Grounded
from ultr_core.identifiability.newton import P_MAX, active_rows, cell_weights, component_top, fit_newton, schur

__all__ = ["FactorUncertainty", "converged_curves", "factor_uncertainty", "fisher_information", "identification",
           "rule_text", "TOL", "STALLED", "P_MAX", "WEAK_SPAN", "Z90", "cell_weights"]

#: the Newton decrement below which the fit counts as converged along every direction
TOL = 1e-12
#: a fit whose last Newton decrement is still above this when its steps run out has *stalled*: what it reports may
#: still move (below it a curve moves by about 10⁻⁶ at most on the logs tested).  Resamples of sparse logs stall now
#: and then — a block creeping towards p = 1 at a linear rate — and are counted in the output (issue #58)
STALLED = 1e-8
#: the bootstrap looks for a resample drawn twice (and fits it once) on logs of at most this many cells: only a log of a
#: few documents draws the same resample twice, and keeping a large one's counts as a key costs more than it saves
REPEAT_CELLS = 10_000
#: a factor is *identified* when the 90 % interval of o_k / o_ref spans at most this factor (else *weak*)
WEAK_SPAN = 2.0
Z90 = 1.6448536269514722


def fisher_information(doc, fac, n, *, p, n_docs: int, n_factors: int) -> sparse.csr_matrix:
    """The Fisher information of θ = (log r, log o) (documents first, then factors): the signless Laplacian of the
    bipartite graph weighted by n p/(1 − p), sparse.

    >>> I = fisher_information(np.array([0]), np.array([0]), np.array([10.0]), p=np.array([0.5]), n_docs=1,
    ...                        n_factors=1).toarray()
    >>> I.tolist()
    [[10.0, 10.0], [10.0, 10.0]]
    """
    w = cell_weights(n, p)
    N = n_docs + n_factors
    rows, cols = np.concatenate([doc, fac + n_docs]), np.concatenate([fac + n_docs, doc])
    off = sparse.coo_matrix((np.concatenate([w, w]), (rows, cols)), shape=(N, N))
    deg = np.bincount(rows, np.concatenate([w, w]), N)
    return (off + sparse.diags(deg)).tocsr()


@dataclass(frozen=True)
class FactorUncertainty:
    """The converged PBM fit (``r`` per document, ``o`` per factor, each information component scaled so that its
    grounding factor has o = 1), each factor's ``reference`` and ``log_se``: the standard error of
    log(o_k / o_reference) (0 at the reference; inf where no information links the factor to it).  ``converged``:
    the Newton decrement fell below :data:`TOL`; ``decrement``: its last value.  ``cells`` (doc, fac, w at the
    fit), ``grounded``, ``reached`` and ``block`` (each factor's information component) carry the information for
    documents, pairs and links
    (:mod:`~ultr_core.identifiability.resistance`); ``silent_documents`` / ``boundary_documents`` count the documents
    never clicked / at the boundary p = 1; ``separated_factors`` the factors whose ratio runs to 0 or ∞ (the module
    docstring); ``saturated`` marks the documents clicked at every impression; ``counts`` = (n, c, fitted) per cell
    (``fitted``: the cell is in the Newton fit); ``excluded`` = (boundary documents, separated factors) masks."""

    r: np.ndarray
    o: np.ndarray
    reference: np.ndarray
    log_se: np.ndarray
    converged: bool
    decrement: float
    cells: tuple = field(repr=False, default=())
    grounded: Grounded | None = field(repr=False, default=None)
    reached: np.ndarray | None = field(repr=False, default=None)
    block: np.ndarray | None = field(repr=False, default=None)
    silent_documents: int = 0
    boundary_documents: int = 0
    separated_factors: int = 0
    saturated: np.ndarray | None = field(repr=False, default=None)
    counts: tuple = field(repr=False, default=())
    excluded: tuple = field(repr=False, default=())
    #: documents whose relevance sits at its bound r = 1/(the largest o of its component) (module docstring)
    capped: np.ndarray | None = field(repr=False, default=None)
    #: r before that bound (the maximum on the documents' own cells; equal to ``r`` where ``capped`` is False)
    r_free: np.ndarray | None = field(repr=False, default=None)


def _default_references(fac, n, n_factors: int, component: np.ndarray) -> np.ndarray:
    """Per factor its component's reference: the factor with the most impressions."""
    imp = np.bincount(fac, n, n_factors)
    order = np.lexsort((-imp, component))
    first = order[np.r_[True, component[order][1:] != component[order][:-1]]]
    ref = np.empty(int(component.max()) + 1 if len(component) else 0, np.int64)
    ref[component[first]] = first
    return ref[component]


def factor_uncertainty(doc, fac, n, *, c, n_docs: int, n_factors: int, component: np.ndarray,
                       tol: float = TOL, references=None, with_se: bool = True, exclude=None) -> FactorUncertainty:
    """Fit PBM to convergence on distinct (document, factor) cells and give every factor the standard error of
    log(o_k / o_ref) inside its IG component (``component``: per factor; ``references``: per factor its reference,
    or a dict component → reference; default the component's factor with the most impressions; ``with_se=False``:
    the fit alone, standard errors left at 0; ``exclude``: another fit's ``excluded``, left out from the start —
    the bootstrap's refits start from the full-data fit's active set)."""
    doc, fac = np.asarray(doc, np.int64), np.asarray(fac, np.int64)
    n, c, component = np.asarray(n, np.float64), np.asarray(c, np.float64), np.asarray(component, np.int64)
    reference = _default_references(fac, n, n_factors, component)
    if isinstance(references, dict):
        for k, ref in references.items():
            reference[component == k] = ref
    elif references is not None:
        reference = np.asarray(references, np.int64)
    live = np.bincount(fac, c, n_factors)[fac] > 0            # a factor never clicked: o = 0, no information
    r, o, w_live, G, dec, reached, block, boundary, separated, rows, (capped, r_free) = _solve(
        doc[live], fac[live], n[live], c[live], n_docs, n_factors, reference, tol, exclude)
    w, fitted = np.zeros(len(doc)), np.zeros(len(doc), bool)
    w[live], fitted[live] = w_live, rows
    se = np.full(n_factors, np.inf)
    se[G.keep] = np.sqrt(np.abs(G.inverse(np.arange(len(G.keep)), np.arange(len(G.keep))))) if with_se else 0.0
    se[reference == np.arange(n_factors)] = 0.0
    se[~reached] = np.inf
    silent = int(((np.bincount(doc, c, n_docs) == 0) & (np.bincount(doc, n, n_docs) > 0)).sum())
    return FactorUncertainty(r, o, reference, se, bool(abs(dec) < tol), float(dec), (doc, fac, w), G, reached, block,
                             silent, int(boundary.sum()), int(separated.sum()), _saturated(doc, n, c, n_docs),
                             (n, c, fitted), (boundary, separated), capped, r_free)


def converged_curves(doc, slot, n_docs: int, *, F: int, N: np.ndarray, C: np.ndarray, start: np.ndarray,
                     exclude=None):
    """PBM fitted by Fisher scoring to convergence on each row of the count matrices ``N``, ``C`` (resamples ×
    cells), o / o_ref per slot (``start``: each slot's reference slot; NaN where no information reaches) — the
    bootstrap refits of issue #46, converged along weak directions instead of capped warm starts (cold starts; the
    documents and factors ``exclude`` leaves out — the full-data fit's — start outside).  Returns (curves, the
    first row's ``excluded``, how many rows' fits stalled (:data:`STALLED`))."""
    component = np.asarray(start, np.int64)
    out, first, stalled = np.full((len(N), F), np.nan), None, 0
    done: dict = {}                 # a resample's counts (their bytes) → the first row that drew them, its fit stalled
    for b in range(len(N)):
        key = N[b].tobytes() + C[b].tobytes() if N.shape[1] <= REPEAT_CELLS else b
        if key in done:             # the same counts, the same deterministic fit: a small log's resamples repeat
            j, stall = done[key]    # (a 4-row log: 100 fits → 22)
            out[b], stalled = out[j], stalled + stall
            continue
        keep = N[b] > 0
        u = factor_uncertainty(doc[keep], slot[keep], N[b, keep], c=C[b, keep], n_docs=n_docs, n_factors=F,
                               component=component,
                               references=start, with_se=False, exclude=exclude)
        with np.errstate(divide="ignore", invalid="ignore"):
            out[b] = np.where(u.reached & (u.o[start] > 0), u.o / u.o[start], np.nan)
        first = first or u.excluded
        stall = int(abs(u.decrement) >= STALLED)
        stalled += stall
        done.setdefault(key, (b, stall))
    return out, first, stalled



def _saturated(doc, n, c, n_docs: int) -> np.ndarray:
    """Documents clicked at every impression (p = 1 at the maximum: no Fisher interval for their relevance)."""
    nd = np.bincount(doc, n, n_docs)
    return (nd > 0) & (np.bincount(doc, c, n_docs) >= nd)


def _solve(doc, fac, n, c, n_docs: int, n_factors: int, reference, tol, exclude=None):
    """The fit and the grounded information on cells at clicked factors (module docstring: which documents count);
    the Newton fit runs on the candidate documents only, renumbered."""
    cd, nd, deg = np.bincount(doc, c, n_docs), np.bincount(doc, n, n_docs), np.bincount(doc, minlength=n_docs)
    cand = (cd > 0) & (cd < nd) & (deg >= 2)
    sel = cand[doc]
    ids, local = np.unique(doc[sel], return_inverse=True)
    sub = (local.reshape(-1), fac[sel], n[sel], c[sel])
    theta = np.concatenate([np.log(np.clip((cd[ids] + 0.5) / (nd[ids] + 1.0), 1e-6, 0.99)), np.zeros(n_factors)])
    b0, out0 = exclude if exclude is not None else (np.zeros(n_docs, bool), np.zeros(n_factors, bool))
    theta, dec, fit_l, bound_l, out, block, grounding, reached = fit_newton(
        *sub[:3], c=sub[3], theta=theta, n_docs=len(ids), n_factors=n_factors, reference=reference, boundary=b0[ids],
        out=out0.copy(), tol=tol)
    fit_doc, boundary, r_fit = np.zeros(n_docs, bool), np.zeros(n_docs, bool), np.zeros(n_docs)
    fit_doc[ids], boundary[ids], r_fit[ids] = fit_l, bound_l, np.exp(theta[:len(ids)])
    rows = np.zeros(len(doc), bool)
    rows[sel] = active_rows(*sub[:2], sub[3], fit_doc=fit_l, n_docs=len(ids), n_factors=n_factors, out=out)[0]
    o = np.exp(theta[len(ids):])
    r_free, r, capped = _document_relevance(doc, fac, n, c, o, r_fit, fit_doc, boundary, block)
    boundary |= (cd >= nd) & (nd > 0)                                  # clicked at every impression
    # the information at the fit: p = r·o on every cell (the unconstrained r: a leaf's own cell keeps p = c/n); none
    # from documents whose maximum lies on the boundary p = 1 nor from unclicked factors' cells
    w = cell_weights(n, np.minimum(r_free[doc] * o[fac], 1.0))
    w = np.where(boundary[doc] | (fit_doc[doc] & ~rows), 0.0, w)
    S = schur(local.reshape(-1)[rows[sel]], fac[rows], w[rows], n_docs=len(ids), n_factors=n_factors)[0]
    return r, o, w, Grounded(S, block, ~grounding), dec, reached, block, boundary, out, rows, (capped, r_free)


def _document_relevance(doc, fac, n, c, o, r_fit, fit_doc, boundary, block=None) -> tuple:
    """(r before the bound, r per document, capped): the fit's for the documents it used; 0 for a document never
    clicked; else Σc / Σ n·o over its clicked cells (c/(n·o_k) for a leaf, exactly) — each at most 1/(the largest o
    of its component) (r·o ≤ 1: r is a click probability at every factor), ``capped`` where that bound binds."""
    n_docs = len(fit_doc)
    clicked = c > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.bincount(doc[clicked], c[clicked], n_docs) / np.bincount(doc[clicked], (n * o[fac])[clicked], n_docs)
    r = np.where(fit_doc, r_fit, np.nan_to_num(r, nan=0.0, posinf=0.0))
    top = component_top(doc, fac, o, n_docs=n_docs, block=block)
    cap = np.divide(1.0, top, out=np.full(n_docs, np.inf), where=top > 0)
    capped = r > cap * (1 + 1e-9)
    return r, np.minimum(r, cap), capped


def identification(log_se: np.ndarray) -> np.ndarray:
    """``identified`` (the 90 % interval of o_k/o_ref spans at most ×:data:`WEAK_SPAN`), ``weak`` (wider) or
    ``unidentified`` (no information reaches the factor: an infinite standard error).

    >>> identification(np.array([0.0, 0.2, 0.5, np.inf])).tolist()
    ['identified', 'identified', 'weak', 'unidentified']
    """
    with np.errstate(over="ignore"):
        span = np.exp(2 * Z90 * np.asarray(log_se, float))
    return np.where(~np.isfinite(span), "unidentified", np.where(span <= WEAK_SPAN, "identified", "weak"))


def rule_text() -> str:
    return (f"identified: the 90 % interval of o_k / o_ref (Fisher information of PBM at its maximum-likelihood fit, "
            f"ref = the component's first factor) spans at most ×{WEAK_SPAN:g}; weak: wider; unidentified: no "
            "clicked document links the factor to its reference (another component, or no clicks)")
