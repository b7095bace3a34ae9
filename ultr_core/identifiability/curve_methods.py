"""The position-bias curve estimators by name — the keys ``ig --estimate`` and the pages offer, and one label each
(issue #49) — apart from :mod:`~ultr_core.identifiability.estimation`, which fits them, so that the CLI's parser
and ``--help`` need no numerical library (issue #59)."""

__all__ = ["ESTIMATORS", "ESTIMATOR_LABELS"]

#: one name per estimator on every page, the CLI's report and its help
ESTIMATOR_LABELS = {"pivot_one": "intervention harvesting: pivot one", "adjacent_chain":
                    "intervention harvesting: adjacent chain", "all_pairs": "intervention harvesting: all pairs (ML)",
                    "em": "position-based model fitted by EM"}
ESTIMATORS = tuple(ESTIMATOR_LABELS)
