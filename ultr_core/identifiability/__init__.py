"""Identifiability toolkit (Chen et al., *Identifiability Matters*, ICML 2024; SPEC §5).

**Identifiability graph (IG).**  One node per bias factor t (a position, or a tuple of
bias columns such as (context, position)); an edge t–t′ whenever one document appears
with both.  Relevance is identifiable up to scale iff the IG is connected (Theorem 1).

We never materialise the edges: the IG's components are the connected components of the
bipartite document–factor graph restricted to factors (scipy.sparse.csgraph on the
distinct (document, factor) pairs; O(rows)).  Edge counts are a statistic computed on demand
(:meth:`IdentifiabilityGraph.edge_count`), and :func:`components_by_edge_enumeration` keeps
the reference code's pair-enumerating construction for comparison.

Modules: :mod:`.coding` (factor and document codes; missing values are their own level),
:mod:`.graph` (the IG), :mod:`.merging`, :mod:`.intervention`, :mod:`.probability`,
:mod:`.estimation` (position bias per connected component) and :mod:`.ingestion`
(out-of-core reduction of a log to distinct (document, factor) counts with DuckDB or Dask).

Only rows with ``shown`` are used: an unshown candidate was never examined and carries
no information about its factor.

**Node merging** (§4.2, App. B.3): :func:`plan_merges`.  **Node intervention** (§4.1,
App. B.2): :func:`plan_interventions`.  **Probability of identifiability** (Example 2):
:func:`identifiability_probability` and :func:`identifiability_probability_mc`.
"""
from .coding import MISSING, factor_codes, format_value, tuple_labels
from .graph import IdentifiabilityGraph, UnionFind, components_by_edge_enumeration, documents_from_features
from .intervention import InterventionPlan, plan_interventions
from .merging import MergePlan, bias_feature_vectors, plan_merges
from .probability import identifiability_probability, identifiability_probability_mc, probability_table

__all__ = ["IdentifiabilityGraph", "MergePlan", "InterventionPlan", "plan_merges",
           "plan_interventions", "bias_feature_vectors", "identifiability_probability",
           "identifiability_probability_mc", "components_by_edge_enumeration", "UnionFind",
           "documents_from_features", "probability_table", "factor_codes", "format_value",
           "tuple_labels", "MISSING"]
