"""Click models fitted and scored on any log the app reads (issue #34): sessions compressed to distinct patterns
(:mod:`~ultr_core.clickmodels.sessions`), the models with PyClick's conventions
(:mod:`~ultr_core.clickmodels.models`), one table of them (:mod:`~ultr_core.clickmodels.registry`), held-out
log-likelihood and perplexity (:mod:`~ultr_core.clickmodels.evaluation`) and one call that does it all
(:func:`~ultr_core.clickmodels.compare.compare_click_models`)."""
from ultr_core.clickmodels.compare import compare_click_models
from ultr_core.clickmodels.registry import CLICK_MODELS, MODEL_BY_KEY, ClickModelSpec
from ultr_core.clickmodels.sessions import SessionArrays, SessionTable, split_sessions

__all__ = ["compare_click_models", "CLICK_MODELS", "MODEL_BY_KEY", "ClickModelSpec", "SessionArrays",
           "SessionTable", "split_sessions"]
