"""Identifiability toolkit (Chen et al., *Identifiability Matters*, ICML 2024; SPEC §5).

**Identifiability graph (IG).**  One node per bias factor t (a position, or a tuple of
bias columns such as (context, position)); an edge t–t′ whenever one document appears
with both.  Relevance is identifiable up to scale iff the IG is connected (Theorem 1).

We never materialise the edges: the IG's components are the connected components of the
bipartite document–factor graph restricted to factors (scipy.sparse.csgraph on the
distinct (document, factor) pairs; O(rows)).  Edge counts are a statistic computed on demand
(:meth:`IdentifiabilityGraph.edge_count`), and :func:`components_by_edge_enumeration` keeps
the reference code's pair-enumerating construction for comparison.

Modules: :mod:`.graph` (the IG), :mod:`.merging`, :mod:`.intervention`, :mod:`.probability` and
:mod:`.estimation` (position bias per connected component).  Factor codes (missing values are
their own level) and the out-of-core reduction of a log to distinct (document, factor) counts live
in :mod:`ultr_core.logs` (:mod:`~ultr_core.logs.coding`, :mod:`~ultr_core.logs.ingestion`).

Only rows with ``shown`` are used: an unshown candidate was never examined and carries
no information about its factor.

**Node merging** (§4.2, App. B.3): :func:`plan_merges`.  **Node intervention** (§4.1,
App. B.2): :func:`plan_interventions`.  **Probability of identifiability** (Example 2):
:func:`identifiability_probability` and :func:`identifiability_probability_mc`.

Also here: :mod:`.estimation` (position-bias estimators on the count table), :mod:`.embedding`
(the paper's embedding models), :mod:`.repairs` and :mod:`.semisynthetic` (the repair studies) and
:mod:`.reports` (the verdict a user reads).  Input is a :class:`~ultr_core.logs.CountTable` or a
:class:`~ultr_core.logs.ClickLog`; files are read only through :mod:`ultr_core.logs`
(:func:`~.repairs.fit_source` reads an ULTRA folder with :func:`~ultr_core.logs.ultra.ultra_frame`).
"""
from ultr_core._lazy import lazy

__all__ = ["IdentifiabilityGraph", "MergePlan", "InterventionPlan", "plan_merges",
           "plan_interventions", "bias_feature_vectors", "identifiability_probability",
           "identifiability_probability_mc", "components_by_edge_enumeration", "UnionFind",
           "documents_from_features", "probability_table", "factor_codes", "format_value",
           "tuple_labels", "MISSING"]

# imported on first use (ultr_core._lazy): ``ig`` without --merge never loads scipy.spatial
__getattr__, __dir__ = lazy(__name__, {
    "IdentifiabilityGraph": "ultr_core.identifiability.graph",
    "UnionFind": "ultr_core.identifiability.graph",
    "components_by_edge_enumeration": "ultr_core.identifiability.graph",
    "documents_from_features": "ultr_core.identifiability.graph",
    "InterventionPlan": "ultr_core.identifiability.intervention",
    "plan_interventions": "ultr_core.identifiability.intervention",
    "MergePlan": "ultr_core.identifiability.merging",
    "bias_feature_vectors": "ultr_core.identifiability.merging",
    "plan_merges": "ultr_core.identifiability.merging",
    "identifiability_probability": "ultr_core.identifiability.probability",
    "identifiability_probability_mc": "ultr_core.identifiability.probability",
    "probability_table": "ultr_core.identifiability.probability",
    "MISSING": "ultr_core.logs.coding",
    "factor_codes": "ultr_core.logs.coding",
    "format_value": "ultr_core.logs.coding",
    "tuple_labels": "ultr_core.logs.coding",
})
