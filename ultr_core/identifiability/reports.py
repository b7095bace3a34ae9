"""Identifiability reports: one call from a click log to everything the CLI and the app show."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ultr_core.errors import ConfigError, counted
from ultr_core.evaluation.metrics import mcc, ndcg
from ultr_core.identifiability.estimation import ESTIMATOR_LABELS
from ultr_core.identifiability.graph import IdentifiabilityGraph
from ultr_core.identifiability.intervention import InterventionPlan, plan_interventions
from ultr_core.identifiability.records import (
    AlternativeDocument,
    BiasCurves,
    IdentifiabilityReport,
    InterventionSummary,
    Merge,
    MergeSummary,
    Swap,
)

if TYPE_CHECKING:
    from ultr_core.identifiability.merging import MergePlan
from ultr_core.logs.clicklog import ClickLog
from ultr_core.logs.ingestion import CountTable

__all__ = ["IdentifiabilityAnalysis", "analyse_identifiability", "plan_table", "alternative_verdict",
           "identifiability_report", "ig_text",
           "format_report", "compare_repairs", "verdict_caveat"]


@dataclass
class IdentifiabilityAnalysis:
    graph: IdentifiabilityGraph
    report: IdentifiabilityReport
    merge_plan: MergePlan | None = None
    intervention_plan: InterventionPlan | None = None
    #: the swaps as every page and the CLI show them: the file's own document ids (one plan per log)
    interventions: pd.DataFrame | None = None


def analyse_identifiability(log, bias=None, *, merge: bool = False, intervene: bool = False,
                            context_vectors=None, seed: int = 0, max_listed: int = 200,
                            document=("doc_id",), max_intervention_components: int = 2000,
                            estimate: str | None = None, n_bootstrap: int = 100,
                            alpha: float = 0.1, budget=None) -> IdentifiabilityAnalysis:
    """Graph statistics, and with ``merge`` / ``intervene`` the proposed merges / swaps with
    their costs and the component count afterwards, and with ``estimate`` (an estimator of
    :mod:`ultr_core.identifiability.estimation`) the observation curve of every component
    (a JSON-ready ``report``).

    ``log`` is a :class:`ClickLog` (its ``document`` columns identify documents) or a
    :class:`~ultr_core.logs.ingestion.CountTable` from :func:`ingest` (out of core).
    Merging uses the context vectors a simulated log carries (else one-hot contexts), with
    10·position appended.  Intervention costs need r̂ and ô; as in the paper (App. C.3) they
    come from embedding DLA fitted after node merging, on the graph's click counts.  ``budget``
    (:class:`~ultr_core.identifiability.pairs.Budget`) bounds the estimation in a shared server.
    """
    is_log = isinstance(log, ClickLog)
    table = CountTable.from_log(log, bias, document) if is_log else log
    g = IdentifiabilityGraph.from_counts(table)
    meta = log.meta if is_log else {}
    if context_vectors is None and "context" in g.bias_columns and meta.get("context_vectors"):
        context_vectors = np.asarray(meta["context_vectors"])     # simulated logs carry them
    use_vectors = context_vectors is not None and "context" in g.bias_columns
    stats = {k: tuple(v) if isinstance(v, list) else v for k, v in g.statistics().items()}
    rep = IdentifiabilityReport(
        **stats, n_clicks=int(g.clicks.sum()), document_columns=table.file_document_columns,
        document_key=table.document_key, alternative_document=alternative_verdict(table, g) if table.alternative
        else None,
        merge_features=("context vectors + 10·position" if use_vectors else "position"
                        if list(g.bias_columns) == ["position"] else "one-hot columns + 10·position"))
    plan = ip = shown_swaps = None
    if merge or intervene:
        from ultr_core.identifiability.merging import bias_feature_vectors, plan_merges  # scipy.spatial: on demand
        plan = plan_merges(g, vectors=bias_feature_vectors(g, context_vectors) if use_vectors else None)
    if merge:
        listed = plan.pairs.head(max_listed)
        rep = rep.with_(merge=MergeSummary(
            merges=tuple(Merge(label_a=a, label_b=b, cost=float(c))
                         for a, b, c in zip(listed["label_a"], listed["label_b"], listed["cost"])),
            n_merges=len(plan.pairs), total_cost=float(plan.total_cost),
            n_components_after=int(plan.merged_graph().n_components)))
    if intervene and g.n_components > max_intervention_components:
        rep = rep.with_(intervention_skipped=f"{g.n_components:,} components: node intervention is planned for at "
                                             f"most {max_intervention_components:,}; node merging applies at any size")
        intervene = False
    if intervene:
        ip, shown_swaps, summary = _intervention_section(g, plan, log if is_log else None, seed,
                                                         max_intervention_components, max_listed)
        rep = rep.with_(intervention=summary)
    if estimate:
        rep = rep.with_(position_bias=_position_bias(g, estimate, n_bootstrap, alpha, seed, budget,
                                                     log if is_log else None))
    return IdentifiabilityAnalysis(g, rep, plan, ip, shown_swaps)


def _position_bias(g, estimate: str, n_bootstrap: int, alpha: float, seed: int, budget, log=None) -> BiasCurves:
    """The observation curves within ``budget`` (default: the CLI's); a fit over the budget's intervention pairs is
    not started, and the report says so instead of a curve.  ``log``: a kept click log, whose own ids name the
    documents (:func:`~ultr_core.identifiability.precision.practical_report`)."""
    from ultr_core.identifiability.estimation import estimate_bias_full
    from ultr_core.identifiability.pairs import Budget
    budget = budget or Budget()
    try:
        est = estimate_bias_full(g, method=estimate, n_bootstrap=n_bootstrap, alpha=alpha, seed=seed, budget=budget)
    except ConfigError as e:
        if "intervention pairs" not in str(e):
            raise
        return BiasCurves(method=estimate, n_bootstrap=0, alpha=alpha, curves=pd.DataFrame(),
                          notes=(f"no curve: {e.problem.split(';')[0]} (the budget of one estimation in this shared "
                                 "server) — python -m ultr_core ig FILE estimates it",))
    from ultr_core.identifiability.precision import practical_report
    curves, practical = practical_report(g, est.to_records(), log)
    return BiasCurves(method=est.method, n_bootstrap=int(est.n_bootstrap), alpha=float(est.alpha),
                      notes=tuple(est.notes), curves=pd.DataFrame(curves), practical=practical)


def _intervention_section(g: IdentifiabilityGraph, plan, log, seed: int, max_components: int, max_listed: int):
    """Node intervention after the merge plan's estimate (App. C.3): the plan, its swaps in the file's own document
    ids (``log``: a user's ClickLog, else None) and the report's :class:`InterventionSummary`."""
    groups = plan.factor_groups()
    warning = None
    if g.clicks.sum() == 0:
        warning = ("the log has no clicks, so r̂ and ô cannot be estimated: every swap costs the same and the swaps "
                   "shown are one valid choice, not the cheapest (fallback: r̂ = ô = 0.5)")
        rel, obs = np.full(g.n_documents, 0.5), np.full(g.n_factors, 0.5)
    else:
        from ultr_core.identifiability.embedding import fit_counts
        fit = fit_counts(g.doc, groups[g.fac], g.impressions, c=g.clicks, D=g.n_documents, G=int(groups.max()) + 1,
                         method="dla", seed=seed)            # to convergence, as the repair comparison
        rel, obs = fit.relevance, fit.observation[groups]
    ip = plan_interventions(g, rel, obs, seed=seed, max_components=max_components)
    swaps = ip.swaps.copy()
    doc_values = g.documents[swaps["document"].to_numpy()]
    if log is not None:                                  # user logs keep the file's own document ids
        doc_values = log.file_doc_ids(doc_values)
    swaps["document"] = [_plain(v) for v in doc_values]
    shown = swaps[["document", "from_label", "to_label", "cost"]].reset_index(drop=True)
    summary = InterventionSummary(
        swaps=tuple(Swap(document=r.document, from_label=r.from_label, to_label=r.to_label, cost=float(r.cost))
                    for r in shown.head(max_listed).itertuples(index=False)),
        n_swaps=len(swaps), total_cost=float(ip.total_cost), n_components_after=int(ip.intervened_graph().n_components),
        warning=warning)
    return ip, shown, summary


def plan_table(analysis: IdentifiabilityAnalysis) -> pd.DataFrame:
    """The repair plan as one table to download (both pages and the CLI report show the same rows): one row per
    proposed merge (``factor_a`` with ``factor_b``) and per intervention (show ``document`` at ``factor_b``,
    seen at ``factor_a``), each with its cost (§4.1 eq. 3 / §4.2 eq. 7–8).

    >>> from ultr_core.logs.ingestion import CountTable
    >>> t = CountTable.from_log(pd.DataFrame({"doc_id": [1, 1, 2, 2], "position": [1, 2, 3, 4],
    ...                                       "click": [1, 0, 1, 0]}), ["position"], ["doc_id"])
    >>> plan_table(analyse_identifiability(t, ["position"], merge=True, intervene=True)).values.tolist()
    [['merge', None, 'position=2', 'position=3', 1.0], ['intervention', 2, 'position=3', 'position=1', 1.0]]
    """
    rows = []
    if analysis.merge_plan is not None:
        for r in analysis.merge_plan.pairs.itertuples(index=False):
            rows.append({"repair": "merge", "document": None, "factor_a": r.label_a, "factor_b": r.label_b,
                         "cost": float(r.cost)})
    if analysis.interventions is not None:
        for r in analysis.interventions.itertuples(index=False):
            rows.append({"repair": "intervention", "document": r.document, "factor_a": r.from_label,
                         "factor_b": r.to_label, "cost": float(r.cost)})
    out = pd.DataFrame(rows, columns=["repair", "document", "factor_a", "factor_b", "cost"])
    out["document"] = pd.Series([r["document"] for r in rows], dtype=object)     # the file's ids, as they are
    return out


_KEY_TEXT = {"query": "the (query, document) pair", "global": "the document id alone (across queries)"}


def alternative_verdict(table: CountTable, graph: IdentifiabilityGraph | None = None) -> AlternativeDocument:
    """Components under the table's other document key (same reduced table, one more sparse components pass)."""
    g = graph if graph is not None else IdentifiabilityGraph.from_counts(table)
    n_alt, docs_alt = g.components_under(table.frame, table.alternative)
    key = table.with_document(table.alternative).document_key
    changes = (n_alt == 1) != g.identifiable
    msg = (f"with a document = {_KEY_TEXT.get(table.document_key, 'the given columns')} the graph has "
           f"{counted(g.n_components, 'component')}; with {_KEY_TEXT.get(key, key)} it has {n_alt:,} "
           f"({'identifiable' if n_alt == 1 else 'not identifiable'}) — use --document {key} if that is "
           "what a document is in this log")
    return AlternativeDocument(document=key, flag=f"--document {key}", n_components=int(n_alt),
                               n_documents=int(docs_alt), identifiable=n_alt == 1, changes_verdict=bool(changes),
                               message=msg)


def _plain(v):
    """A JSON-friendly scalar or tuple (numpy scalars unwrapped)."""
    if isinstance(v, tuple):
        return tuple(_plain(x) for x in v)
    return v.item() if hasattr(v, "item") else v


def identifiability_report(log, bias=None, *, merge: bool = False, intervene: bool = False,
                           context_vectors=None, seed: int = 0, max_listed: int = 200, **kw) -> IdentifiabilityReport:
    """The report of :func:`analyse_identifiability` (same arguments)."""
    return analyse_identifiability(log, bias, merge=merge, intervene=intervene, context_vectors=context_vectors,
                                   seed=seed, max_listed=max_listed, **kw).report


def compare_repairs(log: ClickLog, analysis: IdentifiabilityAnalysis, *, labels=None, offsets=None,
                    doc_of_row=None, seeds=(0, 1, 2), impressions: int = 2000) -> tuple[pd.DataFrame, dict]:
    """Embedding DLA without repair, after node merging and after node intervention, once per
    seed on a **bootstrap replicate** of the log (:meth:`ClickLog.resample_sessions`; the
    intervention's fresh clicks and the initialisation use the same seed) — DLA fitted to
    convergence is deterministic, so seeds that only changed its initialisation would repeat one
    number.  Returns a tidy table (strategy, seed, mcc, ndcg@10 when ``labels``/``offsets``/
    ``doc_of_row`` describe the ranked lists) and the normalised observation curve per strategy
    (per factor, first seed)."""
    if not log.has_truth:
        raise ValueError("comparing repairs needs a simulated log (true relevance)")
    g = analysis.graph
    truth = log.frame.groupby("doc_id")["true_relevance"].first()
    rows, curves = [], {}
    bias = list(g.bias_columns)
    for seed in seeds:
        replicate = log.resample_sessions(seed)
        strategies = [("none", replicate, None)]
        if analysis.merge_plan is not None:
            strategies.append(("node merging", replicate, analysis.merge_plan.factor_groups()))
        if analysis.intervention_plan is not None:
            strategies.append(("node intervention", analysis.intervention_plan.apply(replicate, impressions, seed=seed),
                               None))
        for name, lg, groups in strategies:
            from ultr_core.identifiability.embedding import fit_embedding
            fit = fit_embedding(lg, method="dla", bias=bias, groups=groups,
                                factors=g.factors if groups is not None else None, seed=seed)
            rec = {"strategy": name, "seed": seed,
                   "mcc": mcc(fit.relevance, truth.reindex(fit.doc_ids).to_numpy())}
            if labels is not None:
                r = pd.Series(fit.relevance, index=fit.doc_ids).reindex(doc_of_row).fillna(0).to_numpy()
                rec["ndcg@10"] = ndcg(r, labels, offsets, k=10)
            rows.append(rec)
            if seed == seeds[0]:
                o = fit.observation[groups] if groups is not None else fit.observation
                curves[name] = o
    order = {"none": 0, "node merging": 1, "node intervention": 2}
    table = pd.DataFrame(rows).sort_values(["strategy", "seed"], key=lambda c: c.map(order) if c.name == "strategy"
                                           else c, kind="stable").reset_index(drop=True)
    return table, curves


def _num(x: float) -> str:
    """A cost for reading: 4 significant digits, float noise below 1e-9 shown as 0."""
    return "0" if abs(x) < 1e-9 else f"{x:.4g}"


def format_report(rep: IdentifiabilityReport) -> str:
    """The human summary the CLI prints."""
    sizes = rep.component_sizes
    head = ", ".join(map(str, sizes[:10])) + (" …" if len(sizes) > 10 else "")
    lines = [
        f"Identifiability graph over bias factor ({', '.join(rep.bias_columns)})",
        f"  rows {rep.n_rows:,} · documents {rep.n_documents:,} · bias factors (nodes) {rep.n_nodes:,}",
        f"  connected components: {rep.n_components:,} (sizes {head}); largest holds "
        f"{rep.largest_share:.1%} of the factors",
        "  ✔ IDENTIFIABLE: the graph is connected, relevance can be recovered up to scale."
        if rep.identifiable else
        "  ✘ NOT IDENTIFIABLE: the graph is disconnected; relevance cannot be compared across components.",
    ]
    caveat = verdict_caveat(rep)
    lines += [f"  {caveat}"] if caveat else []
    alt = rep.alternative_document
    if alt is not None and alt.changes_verdict:
        lines.append(f"  note: the verdict depends on what a document is: {alt.message}")
    if rep.merge is not None:
        m = rep.merge
        lines.append(f"Node merging ({rep.merge_features}): {counted(m.n_merges, 'merge')}, total cost "
                     f"{_num(m.total_cost)} → {counted(m.n_components_after, 'component')}")
        lines += [f"    merge {x.label_a} with {x.label_b}  (distance {_num(x.cost)})" for x in m.merges[:20]]
    iv = rep.intervention
    if iv is not None and iv.warning:
        lines.append(f"  warning: {iv.warning}")
    if rep.intervention_skipped:
        lines.append(f"Node intervention: skipped — {rep.intervention_skipped}")
    if iv is not None:
        lines.append(f"Node intervention: {counted(iv.n_swaps, 'swap')}, total cost {_num(iv.total_cost)} → "
                     f"{counted(iv.n_components_after, 'component')}")
        lines += [f"    show document {s.document} at {s.to_label} (seen at {s.from_label}; cost {_num(s.cost)})"
                  for s in iv.swaps[:20]]
    if rep.position_bias is not None:
        lines += _curve_lines(rep.position_bias)
    return "\n".join(lines)


def verdict_caveat(rep: IdentifiabilityReport, *, see: str = "practical identifiability below") -> str | None:
    """The sentence that qualifies a connected graph's verdict where the clicks leave factors unidentified (a connected
    graph is necessary, not enough: every document linking them clicked at every impression or at none); else None.
    The CLI's text and the Identifiability page say it, each pointing to its own section (``see``)."""
    pi = rep.position_bias.practical if rep.position_bias is not None else None
    missing = pi.counts.get("unidentified", 0) if pi is not None and pi.counts else 0
    if not rep.identifiable or not missing:
        return None
    them = "it" if missing == 1 else "them"
    return (f"but the clicks leave {missing:,} of {sum(pi.counts.values()):,} factors unidentified: no document that "
            f"carries information (clicked at some impressions, not all) links {them} to the reference — see {see}")


#: the text report lists this many factors of each component's curve (the JSON every one)
CURVE_LINES = 30


def _curve_lines(pb: BiasCurves) -> list[str]:
    """The text report's lines for the curves and their practical identifiability."""
    level = round(100 * (1 - pb.alpha))
    lines = [f"Observation (position bias) per component — {ESTIMATOR_LABELS[pb.method]}, {level} % bands (document "
             f"bootstrap, {pb.n_bootstrap} resamples, widened to the Fisher interval where that is wider), normalised "
             "to 1 at each component's first factor:"]
    for note in pb.notes:
        lines.append(f"  note: {note}")
    curves = pb.curves
    for comp, grp in (curves.groupby("component", sort=True) if len(curves) else []):
        lines.append(f"  component {comp}:")
        for r in grp.head(CURVE_LINES).itertuples(index=False):
            band = (f"[{r.lower:.3f}, {r.upper:.3f}]" if r.lower is not None and np.isfinite(r.lower)
                    else "[—]")
            val = f"{r.estimate:.3f}" if r.estimate is not None and np.isfinite(r.estimate) else "—"
            level = f"   {getattr(r, 'identification', '')}" if hasattr(r, "identification") else ""
            if getattr(r, "fisher_lower", None) is not None and np.isfinite(r.fisher_lower):
                level = f"   PBM ML {r.pbm_ml:.3f} [{r.fisher_lower:.3f}, {r.fisher_upper:.3f}]" + level
            lines.append(f"    {r.label:<28s} {val:>7s}  {band}   ({r.impressions:,} impressions){level}")
        if len(grp) > CURVE_LINES:              # said, not cut silently: the weakest factors may lie below the cut
            lines.append(f"    … {counted(len(grp) - CURVE_LINES, 'more factor')} of this component "
                         f"({grp['label'].iloc[CURVE_LINES]} to {grp['label'].iloc[-1]}): the JSON report lists "
                         "every one")
    from ultr_core.identifiability.precision import practical_lines
    lines += practical_lines(pb.practical)
    return lines


def document_components(analysis: IdentifiabilityAnalysis, log: ClickLog) -> pd.DataFrame:
    """The IG component of every document of a kept log, in the file's own ids (``query_id``, ``doc_id``): a
    document's relevance is comparable only with documents of the same component (Theorem 1)."""
    g = analysis.graph
    comp = np.full(g.n_documents, -1, np.int64)
    comp[g.doc] = g.component[g.fac]
    codes = pd.DataFrame({"doc_code": np.asarray(g.documents), "component": comp})
    f = log.frame
    ids = f.drop_duplicates("doc_id").assign(query=f.get("query_key", f["query_id"]).astype(str),
                                             doc=f.get("doc_key", f["doc_id"]).astype(str))
    out = ids[["doc_id", "query", "doc"]].merge(codes, left_on="doc_id", right_on="doc_code")
    return out.rename(columns={"query": "query_id", "doc": "doc_id_file"})[["query_id", "doc_id_file", "component"]] \
        .rename(columns={"doc_id_file": "doc_id"}).reset_index(drop=True)


def ig_text(rep: IdentifiabilityReport) -> str:
    """``ig``'s whole text report: :func:`format_report`, what the verdict means for the users, and the profile,
    certainty plan and judges' blocks where the report has them."""
    from ultr_core.identifiability.precision import certainty_lines, profile_lines
    lines = [format_report(rep), f"for {rep.users.label} users: {rep.users.verdict}"]
    if rep.profile is not None:
        lines += profile_lines(rep.profile)
    if rep.certainty_plan is not None:
        lines += certainty_lines(rep.certainty_plan)
    if rep.judgements is not None:
        from ultr_core.identifiability.judgement_agreement import judgement_lines
        lines += judgement_lines(rep.judgements)
    return "\n".join(lines)
