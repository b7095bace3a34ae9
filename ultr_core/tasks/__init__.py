"""Tasks: one function per thing a user asks of a log, each taking a typed options record and returning a typed
result that owns its JSON.

The CLI parses flags into the options and prints the result; a page wires widgets to the options and draws the
result.

>>> from ultr_core.tasks import CheckOptions
>>> CheckOptions(bias=("position",), estimate=None).estimate is None
True
"""
from ultr_core.tasks.check_log import CheckOptions, LogCheck, check_log
from ultr_core.tasks.compare_methods import CompareOptions, MethodComparison, compare_methods
from ultr_core.tasks.fit_click_models import ClickModelFit, ClickModelOptions, fit_click_models
from ultr_core.tasks.train_ranker import MethodsOptions, TrainedRanker, TrainOptions, train_methods_jobs, train_ranker
from ultr_core.tasks.value_ranking import RankingOptions, RankingValue, value_ranking

__all__ = ["CheckOptions", "LogCheck", "check_log", "ClickModelOptions", "ClickModelFit", "fit_click_models",
           "RankingOptions", "RankingValue", "value_ranking", "TrainOptions", "TrainedRanker", "train_ranker",
           "CompareOptions", "MethodComparison", "compare_methods", "MethodsOptions", "train_methods_jobs"]
