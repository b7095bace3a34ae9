"""The practical-identifiability block of the ``ig`` report (issue #46, item 2): every factor of the graph gets the
standard error of log(o_k / o_ref) (ref: its component's curve reference) and a level, the curves carry them, and
the report names the weakest factors and links and the document orders the log resolves."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ultr_core.errors import counted
from ultr_core.identifiability.records import (
    CertaintyPlanReport,
    ComponentLevels,
    DocumentCounts,
    DocumentOrders,
    PlannedSwap,
    PracticalIdentifiability,
)
from ultr_core.identifiability.resistance import document_table, resolved_orders, weakest_links
from ultr_core.identifiability.uncertainty import FactorUncertainty, factor_uncertainty, identification, rule_text
from ultr_core.logs.coding import tuple_labels

__all__ = ["graph_uncertainty", "document_label", "practical_report", "practical_lines", "documents_frame",
           "profile_report", "profile_lines", "certainty_report", "certainty_lines", "document_context",
           "factor_levels", "document_outputs", "LEVELS"]

LEVELS = ("identified", "weak", "unidentified")


def graph_uncertainty(g) -> FactorUncertainty:
    """The converged PBM fit and the standard errors of every factor of the graph ``g`` (built from counts)."""
    from ultr_core.identifiability.estimation import curve_references
    n_docs = int(max(g.n_documents, int(g.doc.max()) + 1 if len(g.doc) else 0))
    return factor_uncertainty(g.doc, g.fac, g.impressions.astype(np.float64), c=g.clicks.astype(np.float64),
                              n_docs=n_docs,
                              n_factors=g.n_factors, component=np.asarray(g.component), references=curve_references(g))


def _finite(x: float):
    return float(x) if np.isfinite(x) else None


def factor_levels(g, u: FactorUncertainty) -> tuple[list, list, np.ndarray]:
    """(each factor's label, its standard error of log(o_k/o_ref) or None where infinite, its level)."""
    se = np.asarray(u.log_se, np.float64)
    return list(tuple_labels(g.factors)), np.where(np.isfinite(se), se, None).tolist(), identification(se)


def _apart(r: dict) -> bool:
    """The curve's bootstrap band and the Fisher interval of one factor are disjoint (both present)."""
    lo, hi, flo, fhi = (r.get(k) for k in ("lower", "upper", "fisher_lower", "fisher_upper"))
    if any(v is None or not np.isfinite(v) for v in (lo, hi, flo, fhi)):
        return False
    return hi < flo or fhi < lo


#: how the band drawn with each curve is made (stated in the report)
BAND_RULE = ("band: the union of the document bootstrap's interval and the Fisher interval of log(o_k/o_ref) around "
             "the estimate — the bootstrap resamples documents whole, so where a few documents carry a link it cannot "
             "see their clicks' noise (100 logs bridged by one document: the bootstrap covered 12.7 %, the band "
             "87.3 %); none where no information reaches the factor (unidentified: only documents clicked at every "
             "impression, or none clicked, link it to its reference) — their resamples are as certain as they are, so "
             "the bootstrap gives a band of width ≈ 0 that covers nothing")


def _band(r: dict, se: float) -> dict:
    """The band drawn with a curve (:data:`BAND_RULE`): ``lower``/``upper`` widened to the Fisher interval around the
    estimate where that is wider; the bootstrap's own bounds kept as ``bootstrap_lower``/``bootstrap_upper`` and
    ``band`` saying which side came from which ("bootstrap", "fisher" or "bootstrap + fisher"); no band ("none",
    ``lower``/``upper`` None) where no information reaches the factor (an infinite standard error)."""
    from ultr_core.identifiability.uncertainty import Z90
    est, lo, hi = r.get("estimate"), r.get("lower"), r.get("upper")
    out = {"bootstrap_lower": lo, "bootstrap_upper": hi}
    if est is None or not np.isfinite(est):
        return {**out, "band": "bootstrap"}
    if not np.isfinite(se):
        return {**out, "lower": None, "upper": None, "band": "none"}
    f_lo, f_hi = est * float(np.exp(-Z90 * se)), est * float(np.exp(Z90 * se))
    if lo is None or hi is None or not (np.isfinite(lo) and np.isfinite(hi)):   # no bootstrap (a budget ended it)
        return {**out, "lower": min(f_lo, est), "upper": max(f_hi, est), "band": "fisher"}
    new_lo, new_hi = min(lo, f_lo, est), max(hi, f_hi, est)
    used = [name for name, took in (("bootstrap", new_lo == lo or new_hi == hi),
                                    ("fisher", new_lo == f_lo or new_hi == f_hi)) if took]
    return {**out, "lower": new_lo, "upper": new_hi, "band": " + ".join(used) or "estimate"}


def _fisher_columns(u: FactorUncertainty) -> dict:
    """Every factor's PBM maximum-likelihood ratio to its reference and 90 % Fisher interval (None where no
    information reaches) — all factors, not only the curves' (the curves cover the largest components)."""
    from ultr_core.identifiability.uncertainty import Z90
    o_ref = u.o[u.reference]
    ok = np.isfinite(u.log_se) & (o_ref > 0)
    est = np.divide(u.o, o_ref, out=np.zeros(len(u.o)), where=ok)
    half = np.exp(Z90 * np.where(ok, u.log_se, 0.0))
    col = lambda x: np.where(ok, np.asarray(x, np.float64), None).tolist()       # noqa: E731
    return {"pbm_ml": col(est), "fisher_lower": col(est / half), "fisher_upper": col(est * half)}


def practical_report(g, curves: list, log=None) -> tuple[list, PracticalIdentifiability]:
    """Each curve factor's ``log_se`` and ``identification`` with PBM's maximum-likelihood ratio and its Fisher
    interval (``pbm_ml``, ``fisher_lower``, ``fisher_upper``: the numbers the level is about); the block
    ``practical_identifiability``: the rule, counts over every factor, the weakest factors and links,
    convergence, the documents left out, every factor's figures (columns) and the within-query document orders
    resolved at 90 %.  ``log``: a kept click log whose ``doc_id`` codes its documents — they are named, and their
    queries found, by the file's own ids (:func:`document_context`), as the same file read out of core."""
    if g.impressions is None or not len(g.doc):
        return curves, PracticalIdentifiability(rule=rule_text())
    u = graph_uncertainty(g)
    labels, log_se, levels = factor_levels(g, u)
    fisher = _fisher_columns(u)          # every factor once; the curves take their own from it
    for r in curves:                   # the level, with PBM's maximum-likelihood ratio and Fisher interval beside it
        k = int(r["factor"])
        r["log_se"], r["identification"] = _finite(u.log_se[k]), str(levels[k])
        r.update({key: col[k] for key, col in fisher.items()})
        r.update(_band(r, u.log_se[k]))
    weak = np.flatnonzero(levels == "weak")
    worst = [int(k) for k in weak[np.argsort(-u.log_se[weak], kind="stable")][:5]]
    worst += [int(k) for k in np.flatnonzero(levels == "unidentified")[:5 - len(worst)]]
    factors = pd.DataFrame({"label": list(labels), "component": np.asarray(g.component).astype(int),
                            "reference": [labels[k] for k in u.reference],
                            "log_se": pd.Series(log_se, dtype=object), "identification": levels.tolist(),
                            **{k: pd.Series(v, dtype=object) for k, v in fisher.items()}})
    apart = [r["label"] for r in curves if _apart(r)]
    bare = [r["label"] for r in curves if r.get("band") == "none"]
    queries, _ = document_context(g, log)
    return curves, PracticalIdentifiability(
        rule=rule_text(), band=BAND_RULE, counts={k: int((levels == k).sum()) for k in LEVELS},
        reference_factors=int((u.reference == np.arange(len(u.reference))).sum()),
        separated_factors=int(u.separated_factors), weakest=tuple(labels[k] for k in worst),
        weakest_links=tuple(weakest_links(u, labels, document_label=document_labeller(g, log))),
        converged=bool(u.converged), decrement=float(u.decrement),
        documents=DocumentCounts(never_clicked=int(u.silent_documents), at_the_boundary=int(u.boundary_documents)),
        factors=factors, components=_component_levels(np.asarray(g.component), levels, u.log_se, labels),
        disagreement=(f"{counted(len(apart), 'factor')} ({', '.join(apart[:4])}{' …' if len(apart) > 4 else ''}): the "
                      "curve's band and PBM's maximum-likelihood interval do not overlap — the estimators disagree "
                      "(intervention harvesting weighs every document of an intervention set equally, maximum "
                      "likelihood by impressions); the level is about the latter") if apart else None,
        no_band=(f"{counted(len(bare), 'factor')} ({', '.join(bare[:4])}{' …' if len(bare) > 4 else ''}): a curve "
                 "value but no band: the only documents linking each to its reference are clicked at every "
                 "impression, which carry no information and whose resamples cannot see the noise (the bootstrap's "
                 "bounds are kept as bootstrap_lower/bootstrap_upper)") if bare else None,
        note=None if u.converged else (f"the fit stopped before the Newton decrement fell below the criterion (last "
                                       f"{u.decrement:.2g}): standard errors are from the last iterate"),
        document_orders=resolved_orders(u, queries) if queries is not None else None)


def documents_frame(g, u: FactorUncertainty | None = None, keys: pd.DataFrame | None = None) -> pd.DataFrame:
    """Relevance per document of the graph with its 90 % interval, component and status (the CSV of ``ig
    --documents`` and the Upload page); ``keys``: the documents' key columns (default the graph's)."""
    u = u or graph_uncertainty(g)
    return document_table(u, g.document_keys if keys is None else keys, np.asarray(g.component))


def _component_levels(component, levels, log_se, labels) -> ComponentLevels:
    """Per component of ≥ 2 factors (columns): its level — *identified* when every factor is, *unidentified* when
    one is, else *weak* — and its least certain factor; single-factor components are only counted."""
    sizes = np.bincount(component)
    comps = np.flatnonzero(sizes >= 2)
    rank = {"identified": 0, "weak": 1, "unidentified": 2}
    code = np.array([rank[x] for x in levels]) if len(levels) else np.zeros(0, int)
    worst_code = np.zeros(len(sizes), int)
    np.maximum.at(worst_code, component, code)
    se = np.where(np.isfinite(log_se), log_se, np.inf)
    order = np.lexsort((-se, component))
    first = order[np.r_[True, component[order][1:] != component[order][:-1]]] if len(order) else order
    weakest = np.zeros(len(sizes), int)
    weakest[component[first]] = first
    names = list(rank)
    return ComponentLevels(single_factor=int((sizes == 1).sum()), table=pd.DataFrame(
        {"component": comps.astype(int), "factors": sizes[comps].astype(int),
         "level": [names[worst_code[k]] for k in comps], "least_certain": [labels[weakest[k]] for k in comps]},
        columns=["component", "factors", "level", "least_certain"]))


def practical_lines(pi: PracticalIdentifiability | None) -> list[str]:
    """The text report's lines for the block of :func:`practical_report`."""
    if pi is None or not pi.counts:
        return [f"Practical identifiability: {pi.note}"] if pi is not None and pi.note else []
    lines = ["Practical identifiability (how sure, per factor): "
             + ", ".join(f"{v:,} {k}" for k, v in pi.counts.items())
             + f" — {pi.reference_factors:,} of them "
             + ("a component reference" if pi.reference_factors == 1 else "component references"),
             f"  rule: {pi.rule}"]
    if pi.weakest:
        lines.append(f"  weakest factors: {', '.join(pi.weakest)}")
    for link in pi.weakest_links[:3]:
        after = "would cut it off" if link.disconnects else f"would raise its standard error to {link.log_se_after:.3g}"
        what = "weakest document" if link.kind == "document" else "weakest link"
        lines.append(f"  {what}: {link.link} carries {link.share:.0%} of {link.factor}'s variance; "
                     f"losing it {after}")
    boundary = pi.documents.at_the_boundary if pi.documents is not None else 0
    if boundary or pi.separated_factors:
        lines.append(f"  left out of the information: {counted(boundary, 'document')} at the boundary p = 1, "
                     f"{counted(pi.separated_factors or 0, 'factor')} whose ratio runs to 0 or ∞")
    for text in (pi.note, pi.disagreement, pi.no_band):
        if text:
            lines.append(f"  note: {text}")
    orders = pi.document_orders
    if orders is not None and orders.share is not None:
        lines.append(f"Document orders resolved at 90 %: {orders.resolved:,} of {orders.pairs:,} "
                     f"within-query pairs ({orders.share:.0%})")
    elif orders is not None and orders.note:
        lines.append(f"Document orders: {orders.note}")
    return lines


def _factor_of(g, text: str) -> int:
    """A factor named as the report names it (``position=6``, ``(context=3, position=2)``) or by its number."""
    labels = tuple_labels(g.factors)
    t = str(text).strip()
    hits = [i for i, lab in enumerate(labels) if lab == t or lab.strip("()") == t.strip("()")]
    if not hits and t.isdigit() and "position" in g.factors and len(g.bias_columns) == 1:
        hits = [i for i, lab in enumerate(labels) if lab == f"position={t}"]
    if len(hits) != 1:
        from ultr_core.errors import ConfigError
        some = ", ".join(labels[:3]) + (" …" if len(labels) > 3 else "")
        raise ConfigError("--profile", f"no bias factor is named {t[:60]!r}; name one as the report does ({some})")
    return hits[0]


def profile_report(g, factor: str, u: FactorUncertainty | None = None, *, level: float = 0.9, budget=None):
    """``ig --profile FACTOR``: the profile-likelihood interval of o_k / o_ref beside the Fisher one, a
    :class:`~ultr_core.identifiability.profile.ProfileInterval` naming the factor and its reference by the log's
    labels; ``budget``: the app's analysis budget (:func:`~ultr_core.identifiability.profile.profile_interval`)."""
    from ultr_core.identifiability.profile import profile_interval
    u = u or graph_uncertainty(g)
    p = profile_interval(u, _factor_of(g, factor), level, budget=budget)
    labels = tuple_labels(g.factors)
    return p.with_(factor=labels[p.factor], reference=labels[p.reference])


def profile_lines(p) -> list[str]:
    def end(x):
        return "open (not bounded by the data)" if x is None else f"{x:.3f}"
    if p.note:
        return [f"Profile likelihood of o({p.factor}) / o({p.reference}): {p.note}"]
    return [f"Profile likelihood of o({p.factor}) / o({p.reference}): estimate {p.estimate:.3f}; "
            f"{p.level:.0%} likelihood-ratio interval [{end(p.lower)}, {end(p.upper)}] beside the Fisher "
            f"interval [{p.fisher_lower:.3f}, {p.fisher_upper:.3f}] ({len(p.curve)} points; {p.convergence})"]


def document_labeller(g, log=None):
    """d → the document's label in the file's own ids: the graph's document columns, or — for a kept click log whose
    ``doc_id`` codes its documents — ``query_id=…, doc_id=…`` (``doc_id=…`` where a document is the id alone) from
    the log's original keys, as the same file read out of core names them."""
    if log is None or "doc_key" not in log.frame:
        return lambda d: document_label(g, d)
    _, keys = document_context(g, log)
    return lambda d: ", ".join(f"{k}={v}" for k, v in keys.iloc[int(d)].items())


def document_label(g, d: int) -> str:
    keys = g.document_keys
    if keys is None:
        return f"document {d}"
    return ", ".join(f"{k}={v}" for k, v in keys.iloc[int(d)].items())


def certainty_report(g, *, steps: int = 5, impressions: int = 100, objective: str = "worst",
                     u: FactorUncertainty | None = None, log=None) -> CertaintyPlanReport:
    """Repairs that buy certainty (:mod:`~ultr_core.identifiability.design`), in the log's labels (a kept ``log``'s
    documents by the file's own ids, :func:`document_labeller`)."""
    from ultr_core.identifiability.design import certainty_plan
    u = u or graph_uncertainty(g)
    plan = certainty_plan(u, steps=steps, impressions=impressions, objective=objective)
    labels = tuple_labels(g.factors)
    name = document_labeller(g, log)
    swaps = tuple(PlannedSwap(document=name(s["document"]), show_at=labels[s["factor"]],
                              shown_at=tuple(labels[f] for f in np.unique(u.cells[1][u.cells[0] == s["document"]])),
                              impressions=s["impressions"], worst_se_after=wa, mean_se_after=ma)
                  for s, wa, ma in zip(plan.swaps, plan.worst_after, plan.mean_after))
    return CertaintyPlanReport(
        objective=objective, impressions_per_swap=impressions, weakest_factor=labels[plan.worst_factor],
        reference=labels[plan.factors[0]], worst_se_before=plan.worst_before, mean_se_before=plan.mean_before,
        swaps=swaps, factors=tuple(labels[f] for f in plan.factors), se_before=tuple(plan.se_before),
        se_after=tuple(plan.se_after),
        rule="greedy optimal design: each swap shows a logged document at another factor for the given impressions, "
             "chosen for the largest cut in the weakest factor's (or the mean) variance of log(o_k/o_ref) predicted "
             "by the fitted PBM (Sherman–Morrison on the Fisher information)",
        note=_plan_note(g, u, plan, steps, labels))


def _plan_note(g, u: FactorUncertainty, plan, steps: int, labels) -> str | None:
    """What a short plan, or one blind to part of the weakest factor's component, must say: no candidate left (every
    document with information already shown at every factor of the block), and the factors of that component no
    informative document reaches (their information is 0: no swap can be predicted there by the fitted PBM)."""
    parts = []
    if len(plan.swaps) < steps:
        found = "only " + counted(len(plan.swaps), "swap") if plan.swaps else "no swap"
        parts.append(f"{found} to propose: "
                     "every document with information is already shown at each factor of the weakest factor's block "
                     "(documents at their bound or clicked at every impression are never candidates)")
    comp = np.asarray(g.component)
    blind = np.flatnonzero((comp == comp[plan.worst_factor]) & ~np.isfinite(u.log_se))
    if len(blind):
        names = ", ".join(labels[k] for k in blind[:4]) + (" …" if len(blind) > 4 else "")
        parts.append(f"{counted(len(blind), 'factor')} of its component ({names}) no informative document reaches: "
                     "the plan cannot predict a swap there; show there a document that is clicked at some but not "
                     "all of its impressions elsewhere")
    return "; ".join(parts) or None


def certainty_lines(p: CertaintyPlanReport) -> list[str]:
    lines = [f"Repairs that buy certainty ({p.objective} factor, {p.impressions_per_swap:,} impressions per "
             f"swap): {p.weakest_factor} now has standard error {p.worst_se_before:.3g} of log(o_k/o_ref)"]
    for i, s in enumerate(p.swaps, 1):
        lines.append(f"  {i}. show {s.document} (shown at {', '.join(s.shown_at)}) at {s.show_at} → worst "
                     f"{s.worst_se_after:.3g}, mean {s.mean_se_after:.3g}")
    return lines + ([f"  note: {p.note}"] if p.note else [])


def document_outputs(g, u: FactorUncertainty, log=None) -> tuple[pd.DataFrame, DocumentOrders | None]:
    """The Upload page's documents: :func:`documents_frame` in the log's own keys and, where documents belong to
    queries, the within-query orders resolved at 90 % (None otherwise)."""
    queries, keys = document_context(g, log)
    return documents_frame(g, u, keys), (resolved_orders(u, queries) if queries is not None else None)


def document_context(g, log=None):
    """(query of each graph document or None, the documents' keys): the graph's document columns, or — for a kept
    click log whose ``doc_id`` codes its documents — ``query_id, doc_id`` from its original ``query_key`` /
    ``doc_key`` (``doc_id`` alone, and no query, where a document is the id alone), as the same file read out of core
    names them; a simulated log's codes are its ids."""
    keys = g.document_keys
    if keys is not None and "query_id" in keys:
        return keys["query_id"].astype(str).to_numpy(), keys
    if log is None or keys is None or "doc_id" not in keys or "query_id" not in log.frame:
        return None, keys
    cols = [c for c in ("query_id", "query_key", "doc_key") if c in log.frame]
    first = log.frame.drop_duplicates("doc_id").set_index("doc_id")[cols]
    info = first.reindex(keys["doc_id"].to_numpy()).reset_index()
    if "doc_key" not in info:
        return info["query_id"].astype(str).to_numpy(), info
    if log.meta.get("document") == "global":
        return None, pd.DataFrame({"doc_id": info["doc_key"].to_numpy()})
    query = info["query_key"] if "query_key" in info else info["query_id"]
    own = pd.DataFrame({"query_id": query.to_numpy(), "doc_id": info["doc_key"].to_numpy()})
    return info["query_id"].astype(str).to_numpy(), own
