"""What the Fisher information of :mod:`~ultr_core.identifiability.uncertainty` says about documents, document
orders and the graph's links (issue #46, items 1, 2 and 4).

With the documents eliminated, the information on the free factors is G (block diagonal).  For a document d with
cell weights w_dk (summing to dd_d) and a_d = w_d / dd_d on the free factors:

* Var log r_d (its reference factor held at its value) = 1/dd_d + a_dᵀ G⁻¹ a_d — the effective resistance between
  the document and the reference;
* Var log(r_d / r_e) = 1/dd_d + 1/dd_e + (a_d − a_e)ᵀ G⁻¹ (a_d − a_e) inside one information component;
* a link (k, j) of the IG carries conductance c = −S_kj; with φ the potentials of a unit current from the weakest
  factor to its reference, its share of that factor's variance is c (φ_k − φ_j)² and, by Sherman–Morrison,
  removing it raises the variance to R + c (φ_k − φ_j)² / (1 − c R_kj) (a bridge, c R_kj = 1, disconnects).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ultr_core.identifiability.records import DocumentOrders, WeakLink
from ultr_core.identifiability.uncertainty import Z90, FactorUncertainty

__all__ = ["document_log_se", "pair_log_se", "resolved_orders", "weakest_links", "information_graph",
           "MAX_REPORT_PAIRS", "MAX_REPORT_CELL_PRODUCTS"]

#: most within-query document pairs a report compares
MAX_REPORT_PAIRS = 2_000_000
#: most products of two documents' cells (the work and memory of a pair's standard error: a document shown at c
#: factors costs c·c' with each partner) a report spends on comparing orders; above it the orders are not compared
MAX_REPORT_CELL_PRODUCTS = 100_000_000
#: cell products computed at once (≈ 8 arrays of this many 8-byte numbers)
_CHUNK_PRODUCTS = 2_000_000


def _cells(u: FactorUncertainty):
    """Per document: dd, and its free cells (CSR: ptr into (pos, a))."""
    doc, fac, w = u.cells
    n_docs = len(u.r)
    dd = np.bincount(doc, w, n_docs)
    a = np.divide(w, dd[doc], out=np.zeros_like(w), where=dd[doc] > 0)
    pos = u.grounded.pos[fac]
    free = (pos >= 0) & (a > 0)
    order = np.flatnonzero(free)[np.argsort(doc[free], kind="stable")]
    ptr = np.r_[0, np.cumsum(np.bincount(doc[order], minlength=n_docs))]
    return dd, ptr, pos[order], a[order]


def _expand(ptr, owners):
    """For each owner (a document), its cells: (row into owners, cell index)."""
    cnt = ptr[owners + 1] - ptr[owners]
    rows = np.repeat(np.arange(len(owners)), cnt)
    first = np.repeat(np.cumsum(cnt) - cnt, cnt)
    return rows, ptr[owners][rows] + np.arange(len(rows)) - first


def _cross(u: FactorUncertainty, parts, d, e) -> np.ndarray:
    """a_dᵀ G⁻¹ a_e for document pairs (d, e) (0 across blocks)."""
    _, ptr, pos, a = parts
    row, x = _expand(ptr, d)
    sub, y = _expand(ptr, e[row])
    row, x = row[sub], x[sub]
    G = u.grounded
    same = G.bid[pos[x]] == G.bid[pos[y]]
    vals = np.zeros(len(x))
    vals[same] = a[x[same]] * a[y[same]] * G.inverse(pos[x[same]], pos[y[same]])
    return np.bincount(row, vals, len(d))


def _reached_doc(u: FactorUncertainty) -> np.ndarray:
    doc, fac, w = u.cells
    out = np.zeros(len(u.r), bool)
    out[doc[w > 0]] = u.reached[fac[w > 0]]
    return out


def document_log_se(u: FactorUncertainty) -> np.ndarray:
    """The standard error of log r_d for every document, its component's reference factor held at its value
    (inf: never clicked, clicked at every impression, or not linked to the reference)."""
    parts = _cells(u)
    dd = parts[0]
    d = np.arange(len(u.r))
    var = np.divide(1.0, dd, out=np.full(len(dd), np.inf), where=dd > 0) + _cross(u, parts, d, d)
    ok = (dd > 0) & _reached_doc(u) & (var > 0) & ~u.saturated
    return np.where(ok, np.sqrt(np.where(ok, var, 1.0)), np.inf)


def pair_log_se(u: FactorUncertainty, pairs) -> np.ndarray:
    """The standard error of log(r_d / r_e) for each document pair (d, e) of ``pairs`` (P × 2): the effective
    resistance between the two documents (inf for a pair in two information components or without information)."""
    pairs = np.asarray(pairs, np.int64).reshape(-1, 2)
    parts = _cells(u)
    dd = parts[0]
    doc, fac, w = u.cells
    blk = np.full(len(u.r), -1)
    blk[doc[w > 0]] = u.block[fac[w > 0]]
    out = np.full(len(pairs), np.inf)
    cells = np.diff(parts[1])
    cost = np.cumsum(cells[pairs[:, 0]] ** 2 + cells[pairs[:, 1]] ** 2 + cells[pairs[:, 0]] * cells[pairs[:, 1]])
    cuts = np.unique(np.r_[0, np.searchsorted(cost, np.arange(_CHUNK_PRODUCTS, cost[-1] if len(cost) else 0,
                                                              _CHUNK_PRODUCTS)), len(pairs)])
    for lo, hi in zip(cuts[:-1], cuts[1:]):          # chunks of bounded work and memory, never one pair split
        d, e = pairs[lo:hi, 0], pairs[lo:hi, 1]
        var = (np.divide(1.0, dd[d], out=np.full(len(d), np.inf), where=dd[d] > 0)
               + np.divide(1.0, dd[e], out=np.full(len(e), np.inf), where=dd[e] > 0)
               + _cross(u, parts, d, d) + _cross(u, parts, e, e) - 2 * _cross(u, parts, d, e))
        ok = (blk[d] >= 0) & (blk[d] == blk[e]) & np.isfinite(var) & (var > 0) & ~u.saturated[d] & ~u.saturated[e]
        out[lo:hi] = np.where(ok, np.sqrt(np.where(ok, var, 1.0)), np.inf)
    return out


def resolved_orders(u: FactorUncertainty, groups, *, max_pairs: int = MAX_REPORT_PAIRS,
                    max_products: float = MAX_REPORT_CELL_PRODUCTS) -> DocumentOrders:
    """Which document orders the log supports (issue #46, item 4): over the pairs of documents of one group (a
    query) whose order the information can compare, the share whose 90 % interval of log(r_d / r_e) excludes 0 (a
    note instead above ``max_pairs`` pairs or ``max_products`` cell products — the work, counted before it starts)."""
    groups = np.asarray(groups)
    order = np.argsort(groups, kind="stable")
    bounds = np.flatnonzero(np.r_[True, groups[order][1:] != groups[order][:-1], True])
    sizes = np.diff(bounds)
    total = int((sizes * (sizes - 1) // 2).sum())
    if total > max_pairs:
        return DocumentOrders(pairs=None, resolved=None, share=None,
                              note=f"{total:,} within-query pairs, more than {max_pairs:,}: not compared")
    if not total:
        return DocumentOrders(pairs=0, resolved=0, share=None)
    cells = np.diff(_cells(u)[1]).astype(np.float64)[order]        # the work of each group's pairs, before any
    c1 = np.add.reduceat(cells, bounds[:-1])                          # pair is built: Σ_{d<e} c_d² + c_e² + c_d c_e
    c2 = np.add.reduceat(cells ** 2, bounds[:-1])
    products = float(((sizes - 1) * c2 + (c1 ** 2 - c2) / 2).sum())
    if products > max_products:
        return DocumentOrders(pairs=None, resolved=None, share=None,
                              note=f"{total:,} within-query pairs whose documents are shown at many factors "
                                   f"({products:.3g} cell products, more than {max_products:.3g}): not compared")
    owner = np.repeat(np.arange(len(sizes)), sizes)
    i, j = _within(np.repeat(sizes, sizes), bounds[owner])
    keep = i < j
    pairs = np.c_[order[i[keep]], order[j[keep]]]
    se = pair_log_se(u, pairs)
    with np.errstate(divide="ignore", invalid="ignore"):
        diff = np.abs(np.log(u.r[pairs[:, 0]]) - np.log(u.r[pairs[:, 1]]))
    comparable = np.isfinite(se)
    resolved = comparable & (diff > Z90 * se)
    return DocumentOrders(pairs=int(comparable.sum()), resolved=int(resolved.sum()),
                          share=float(resolved.sum() / comparable.sum()) if comparable.any() else None)


def _within(size_of, start_of):
    """All ordered index pairs (i, j) inside the groups of a sorted array (each element's group size and start)."""
    idx = np.arange(len(size_of))
    i = np.repeat(idx, size_of)
    first = np.repeat(np.cumsum(size_of) - size_of, size_of)
    return i, start_of[i] + np.arange(len(i)) - first


def weakest_links(u: FactorUncertainty, labels, *, top: int = 5, document_label=None) -> list[WeakLink]:
    """The IG links (factor pairs) and the documents whose removal would most raise the worst factor's variance
    (module docstring), the most harmful first: ``kind`` ("link" or "document"), ``link`` (its name: the factor pair,
    or the document with the factors it is shown at), ``share`` of that variance carried (in [0, 1]),
    ``log_se_after`` (None: removing it disconnects the factor) and ``disconnects``.  ``document_label(d)`` names
    document d (default "document d")."""
    rows = _factor_links(u, labels) + _document_links(u, labels, document_label or (lambda d: f"document {d}"))
    # cutting the factor off first, then the largest error after; among equals a single document before the link it
    # makes (it is what to act on)
    rows.sort(key=lambda x: (not x["disconnects"], -(x["log_se_after"] or 0.0), x["kind"] != "document", -x["share"]))
    worst = _weakest_factor(u)
    return [WeakLink(**x, factor=labels[worst]) for x in rows[:top]]


def _weakest_factor(u: FactorUncertainty) -> int | None:
    """The factor with the largest finite, non-zero standard error (None where there is none): the one the weakest
    links are about — an unidentified factor has no variance to carry."""
    finite = np.isfinite(u.log_se) & (u.log_se > 0)
    return int(np.flatnonzero(finite)[np.argmax(u.log_se[finite])]) if finite.any() else None


def _document_links(u: FactorUncertainty, labels, document_label) -> list[dict]:
    """Per document with cells at two or more factors of the weakest factor's block: the share of that factor's
    variance its star carries (Σ_k w_k (φ_k − φ_d)², φ_d the weighted mean potential: the power a unit current
    dissipates in it) and the variance without it — the star's Laplacian L_d = diag(w) − w wᵀ/Σw removed from the
    grounded information by Woodbury, (S − U Uᵀ)⁻¹ with U Uᵀ = L_d — None where that cuts the factor off."""
    current = _unit_current(u)
    if current is None:
        return []
    worst, _, pot = current
    G, R = u.grounded, float(u.log_se[worst] ** 2)
    doc, fac, w = u.cells
    inblock = (w > 0) & (u.block[fac] == u.block[worst])
    d, f, ww = doc[inblock], fac[inblock], w[inblock]
    if not len(d):
        return []
    n_docs = len(u.r)
    dd = np.bincount(d, ww, n_docs)
    centre = np.divide(np.bincount(d, ww * pot[f], n_docs), dd, out=np.zeros(n_docs), where=dd > 0)
    power = np.bincount(d, ww * (pot[f] - centre[d]) ** 2, n_docs)
    degree = np.bincount(d, minlength=n_docs)
    cand = np.flatnonzero((degree >= 2) & (power > 1e-12 * R))
    out = []
    for x in cand[np.argsort(-power[cand], kind="stable")][:5]:
        cells = d == x
        after = _without_star(G, f[cells], ww[cells], pot, R)
        shown = ", ".join(labels[k] for k in np.unique(f[cells]))
        out.append({"kind": "document", "link": f"{document_label(int(x))} (shown at {shown})",
                    "share": float(min(power[x] / R, 1.0)),
                    "log_se_after": float(np.sqrt(after)) if np.isfinite(after) else None,
                    "disconnects": bool(not np.isfinite(after))})
    return out


def _without_star(G, facs, w, pot, R: float) -> float:
    """The weakest factor's variance once one document's star (cells at ``facs`` with weights ``w``) is removed:
    R + (Uᵀφ)ᵀ (I − Uᵀ M U)⁻¹ (Uᵀφ), M = G⁻¹ on the star's free factors; inf where I − UᵀMU is singular along the
    current (the document was the factor's only way to its reference)."""
    L = np.diag(w) - np.outer(w, w) / w.sum()
    free = G.pos[facs] >= 0                            # the grounding factor is not a coordinate
    rows = G.pos[facs][free]
    L = L[np.ix_(free, free)]
    lam, V = np.linalg.eigh(L)
    keep = lam > 1e-12 * max(lam.max(initial=0.0), 1e-300)
    if not keep.any():
        return R
    U = V[:, keep] * np.sqrt(lam[keep])
    M = G.inverse(np.repeat(rows, len(rows)), np.tile(rows, len(rows))).reshape(len(rows), len(rows))
    K = np.eye(U.shape[1]) - U.T @ M @ U
    y = U.T @ pot[facs][free]
    mu, Q = np.linalg.eigh((K + K.T) / 2)
    z = Q.T @ y
    if np.any((mu <= 1e-9) & (np.abs(z) > 1e-9 * max(np.abs(z).max(), 1e-300))):
        return np.inf
    ok = mu > 1e-9
    return R + float((z[ok] ** 2 / mu[ok]).sum())


def _unit_current(u: FactorUncertainty):
    """(the weakest factor, its block's rows of the grounded information, the potentials φ = G⁻¹ e_worst of a unit
    current from it to its reference, per factor), or None where no factor has a finite, non-zero error."""
    worst = _weakest_factor(u)
    if worst is None:
        return None
    G = u.grounded
    rows = np.flatnonzero(G.bid == G.bid[G.pos[worst]])
    pot = np.zeros(len(u.o))
    pot[G.keep[rows]] = G.inverse(rows, np.full(len(rows), G.pos[worst]))
    return worst, rows, pot


def _factor_links(u: FactorUncertainty, labels) -> list[dict]:
    """The factor-pair links of :func:`weakest_links` (documents eliminated: conductance c = −S_kj)."""
    current = _unit_current(u)
    if current is None:
        return []
    worst, rows, pot = current
    G = u.grounded
    S = _factor_graph(u)
    ref = int(u.reference[worst])
    free_of = {int(G.keep[r]): k for k, r in enumerate(rows)}
    members = np.r_[G.keep[rows], ref]
    sub = S[members][:, members].tocoo()
    up = sub.row < sub.col
    a, b = members[sub.row[up]], members[sub.col[up]]
    k, j = np.minimum(a, b), np.maximum(a, b)
    cond = -sub.data[up]
    ok = cond > 0
    k, j, cond = k[ok], j[ok], cond[ok]
    R = u.log_se[worst] ** 2
    flow = cond * (pot[k] - pot[j]) ** 2
    rk = np.array([free_of.get(int(x), -1) for x in k])
    rj = np.array([free_of.get(int(x), -1) for x in j])
    R_kj = _pair_resistance(G, rows, rk, rj)
    bridge = 1 - cond * R_kj <= 1e-9
    carries = flow > 1e-9 * R                            # a bridge no current crosses does not cut this factor off
    after = np.where(bridge, np.where(carries, np.inf, R), R + flow / np.where(bridge, 1.0, 1 - cond * R_kj))
    pick = np.lexsort((-flow, -after))[:5]
    labels = list(labels)
    return [{"kind": "link", "link": f"{labels[k[i]]} — {labels[j[i]]}", "share": float(min(flow[i] / R, 1.0)),
             "log_se_after": float(np.sqrt(after[i])) if np.isfinite(after[i]) else None,
             "disconnects": bool(not np.isfinite(after[i]))} for i in pick]


def _pair_resistance(G, rows, rk, rj) -> np.ndarray:
    """Effective resistance between factors (block rows, −1 = the grounding) from G⁻¹."""
    rk_, rj_ = rows[np.maximum(rk, 0)], rows[np.maximum(rj, 0)]
    kk = np.where(rk >= 0, G.inverse(rk_, rk_), 0.0)
    jj = np.where(rj >= 0, G.inverse(rj_, rj_), 0.0)
    kj = np.where((rk >= 0) & (rj >= 0), G.inverse(rk_, rj_), 0.0)
    return kk + jj - 2 * kj


def _factor_graph(u: FactorUncertainty):
    from ultr_core.identifiability.newton import schur
    doc, fac, w = u.cells
    return schur(doc, fac, w, n_docs=len(u.r), n_factors=len(u.o))[0].tocsr()


def document_table(u: FactorUncertainty, keys: pd.DataFrame | None, component: np.ndarray) -> pd.DataFrame:
    """Relevance per document with its 90 % interval (r is the click probability at its component's reference
    factor: o_ref = 1; the estimate and the upper end held where a click probability would pass 1), its IG component
    and a status (``ok``, ``at the bound …``, ``no clicks``, ``clicked at every impression``, ``not linked``)."""
    doc, fac, w = u.cells
    se = document_log_se(u)
    comp = np.full(len(u.r), -1, np.int64)
    comp[doc] = np.asarray(component)[fac]
    status = np.where(np.isfinite(se), "ok", np.where(u.r == 0, "no clicks", np.where(
        u.saturated | (np.bincount(doc, (w > 0).astype(float), len(u.r)) == 0), "clicked at every impression",
        "not linked")))
    capped = u.capped if u.capped is not None else np.zeros(len(u.r), bool)
    free = u.r_free if u.r_free is not None else u.r
    status = np.where((status == "ok") & capped, "at the bound (r·o = 1 at its component's most examined factor)",
                      status)
    lo = np.where(np.isfinite(se), np.minimum(free * np.exp(-Z90 * np.where(np.isfinite(se), se, 0)), u.r), np.nan)
    block_top = np.zeros(int(u.block.max()) + 1 if len(u.block) else 0)
    np.maximum.at(block_top, u.block, np.where(np.isfinite(u.o), u.o, 0))
    top = np.zeros(len(u.r))                 # r·o ≤ 1 at every factor of its component: r ≤ 1 / the largest o there
    np.maximum.at(top, doc, block_top[u.block[fac]])
    cap = np.divide(1.0, top, out=np.full(len(top), np.inf), where=top > 0)
    hi = np.where(np.isfinite(se), np.minimum(u.r * np.exp(Z90 * np.where(np.isfinite(se), se, 0)),
                                              np.maximum(cap, u.r)), np.nan)      # never below the estimate
    out = pd.DataFrame({"component": comp, "relevance": u.r, "lower": lo, "upper": hi,
                        "log_se": np.where(np.isfinite(se), se, np.nan), "status": status})
    return pd.concat([keys.reset_index(drop=True), out], axis=1) if keys is not None else out


def information_graph(u: FactorUncertainty, labels, max_nodes: int = 60) -> dict:
    """The weakest factor's component as a graph for drawing: nodes (factor, label, log_se, reference) and edges
    (a, b, conductance: the information a link carries, documents eliminated); the ``max_nodes`` least certain
    factors and their reference when the component is larger."""
    finite = np.isfinite(u.log_se) & (u.log_se > 0)
    if not finite.any():
        return {"nodes": [], "edges": []}
    worst = int(np.flatnonzero(finite)[np.argmax(u.log_se[finite])])
    facs = np.flatnonzero(u.block == u.block[worst])
    ref = int(u.reference[worst])
    facs = facs[np.argsort(-np.where(np.isfinite(u.log_se[facs]), u.log_se[facs], 0), kind="stable")]
    facs = np.unique(np.r_[ref, facs[facs != ref][:max_nodes - 1]])
    S = _factor_graph(u)[facs][:, facs].tocoo()
    up = (S.row < S.col) & (S.data < 0)
    labels = list(labels)
    return {"nodes": [{"factor": int(f), "label": labels[f], "reference": bool(f == ref),
                       "log_se": float(u.log_se[f]) if np.isfinite(u.log_se[f]) else None} for f in facs],
            "edges": [{"a": int(facs[i]), "b": int(facs[j]), "conductance": float(-v)}
                      for i, j, v in zip(S.row[up], S.col[up], S.data[up])]}
