"""Click models fitted, scored and sampled on any log the app reads: twelve models in one table, fitted on the log's
distinct (result list, click) patterns in memory or on disk, scored on held-out sessions.

Sessions compressed to distinct patterns (:mod:`~ultr_core.clickmodels.sessions`), what a model is
(:mod:`~ultr_core.clickmodels.base`), the models with PyClick's conventions (:mod:`~ultr_core.clickmodels.models`),
users who click as a model says (:mod:`~ultr_core.clickmodels.samplers`), one table of them
(:mod:`~ultr_core.clickmodels.registry`), held-out log-likelihood and perplexity
(:mod:`~ultr_core.clickmodels.evaluation`) and one call that does it all
(:func:`~ultr_core.clickmodels.compare.compare_click_models`).  Names import on first use (the CLI's ``--help``
and the simulator need the table, not pandas)."""
from ultr_core._lazy import lazy

__all__ = ["compare_click_models", "CLICK_MODELS", "MODEL_BY_KEY", "USER_MODELS", "ClickModelSpec", "SessionArrays",
           "SessionTable", "split_sessions"]
__getattr__, __dir__ = lazy(__name__, {
    "compare_click_models": "ultr_core.clickmodels.compare",
    "CLICK_MODELS": "ultr_core.clickmodels.registry", "MODEL_BY_KEY": "ultr_core.clickmodels.registry",
    "USER_MODELS": "ultr_core.clickmodels.registry", "ClickModelSpec": "ultr_core.clickmodels.registry",
    "SessionArrays": "ultr_core.clickmodels.sessions", "SessionTable": "ultr_core.clickmodels.sessions",
    "split_sessions": "ultr_core.clickmodels.sessions",
})
