"""Identifiability reports: one call from a click log to everything the CLI and the app show."""
from __future__ import annotations

import numpy as np

from .clicklog import ClickLog
from .embedding import fit_embedding
from .identifiability import (IdentifiabilityGraph, bias_feature_vectors, plan_interventions,
                              plan_merges)

__all__ = ["identifiability_report", "format_report"]


def identifiability_report(log: ClickLog, bias=None, merge: bool = False, intervene: bool = False,
                           context_vectors=None, seed: int = 0, max_listed: int = 200) -> dict:
    """A JSON-ready report: graph statistics, and with ``merge`` / ``intervene`` the proposed
    merges / swaps with their costs and the component count afterwards.

    Intervention costs need r̂ and ô; as in the paper (App. C.3) they come from embedding
    DLA fitted after node merging.
    """
    g = IdentifiabilityGraph.from_log(log, bias)
    out = g.statistics()
    if context_vectors is None and "context" in g.bias_columns and log.meta.get("context_vectors"):
        context_vectors = np.asarray(log.meta["context_vectors"])     # simulated logs carry them
    out["merge_features"] = ("context vectors + 10·position" if context_vectors is not None and
                             "context" in g.bias_columns else
                             "position" if list(g.bias_columns) == ["position"] else
                             "one-hot columns + 10·position")
    plan = None
    if merge or intervene:
        vectors = None if context_vectors is None or "context" not in g.bias_columns \
            else bias_feature_vectors(g, context_vectors)
        plan = plan_merges(g, vectors)
    if merge:
        out["merges"] = plan.pairs.head(max_listed)[["label_a", "label_b", "cost"]].to_dict("records")
        out["n_merges"] = len(plan.pairs)
        out["merge_total_cost"] = plan.total_cost
        out["n_components_after_merge"] = plan.merged_graph().n_components
    if intervene:
        groups = plan.factor_groups()
        fit = fit_embedding(log, "dla", bias=list(g.bias_columns), groups=groups, factors=g.factors,
                            n_iter=100, seed=seed)
        rel = np.zeros(g.n_documents)
        # fit.doc_ids are the log's doc_id values; the graph codes documents by sorted doc_id too
        rel[: len(fit.relevance)] = fit.relevance
        ip = plan_interventions(g, rel, fit.observation[groups], seed=seed)
        swaps = ip.swaps.copy()
        doc_values = g.documents[swaps["document"].to_numpy()]
        if "doc_key" in log.frame:       # user logs keep the file's own document ids
            key = log.frame.drop_duplicates("doc_id").set_index("doc_id")["doc_key"]
            doc_values = key.reindex(doc_values).to_numpy()
        swaps["document"] = [v.item() if hasattr(v, "item") else v for v in doc_values]
        out["interventions"] = swaps.head(max_listed)[["document", "from_label", "to_label", "cost"]] \
            .to_dict("records")
        out["n_interventions"] = len(ip.swaps)
        out["intervention_total_cost"] = ip.total_cost
        out["n_components_after_intervention"] = ip.intervened_graph().n_components
    return out


def format_report(rep: dict) -> str:
    """The human summary the CLI prints."""
    sizes = rep["component_sizes"]
    head = ", ".join(map(str, sizes[:10])) + (" …" if len(sizes) > 10 else "")
    lines = [
        f"Identifiability graph over bias factor ({', '.join(rep['bias_columns'])})",
        f"  rows {rep['n_rows']:,} · documents {rep['n_documents']:,} · bias factors (nodes) {rep['n_nodes']:,}",
        f"  connected components: {rep['n_components']:,} (sizes {head}); largest holds "
        f"{rep['largest_share']:.1%} of the factors",
        "  ✔ IDENTIFIABLE: the graph is connected, relevance can be recovered up to scale."
        if rep["identifiable"] else
        "  ✘ NOT IDENTIFIABLE: the graph is disconnected; relevance cannot be compared across components.",
    ]
    if "merges" in rep:
        lines.append(f"Node merging: {rep['n_merges']} merge(s), total cost {rep['merge_total_cost']:.4g} "
                     f"→ {rep['n_components_after_merge']} component(s)")
        lines += [f"    merge {m['label_a']} with {m['label_b']}  (distance {m['cost']:.4g})"
                  for m in rep["merges"][:20]]
    if "interventions" in rep:
        lines.append(f"Node intervention: {rep['n_interventions']} swap(s), total cost "
                     f"{rep['intervention_total_cost']:.4g} → {rep['n_components_after_intervention']} component(s)")
        lines += [f"    show document {s['document']} at {s['to_label']} (seen at {s['from_label']}; cost {s['cost']:.4g})"
                  for s in rep["interventions"][:20]]
    return "\n".join(lines)
