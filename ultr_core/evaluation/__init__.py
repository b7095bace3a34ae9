"""Evaluation: ranking metrics (nDCG, MAP, ARP, MCC, observation-curve error) and the statistics
results are compared with (means with t intervals, paired differences over seeds).

Pure functions of arrays and :class:`~ultr_core.data.RankingData`; every package above uses them.

>>> import numpy as np
>>> from ultr_core.evaluation import mean_ci
>>> m, lo, hi = mean_ci(np.array([0.5, 0.6, 0.7]))
>>> round(m, 3), lo < m < hi
(0.6, True)
"""
from ultr_core._lazy import lazy

__all__ = ["ndcg", "average_precision", "arp", "mcc", "click_mse", "observation_curve_error", "ranking_metrics",
           "mean_ci", "summarise", "paired_test", "paired_differences"]

# imported on first use (ultr_core._lazy): the CLI starts without pandas, scipy or torch
__getattr__, __dir__ = lazy(__name__, {
    "arp": "ultr_core.evaluation.metrics",
    "average_precision": "ultr_core.evaluation.metrics",
    "click_mse": "ultr_core.evaluation.metrics",
    "ranking_metrics": "ultr_core.evaluation.metrics",
    "mcc": "ultr_core.evaluation.metrics",
    "ndcg": "ultr_core.evaluation.metrics",
    "observation_curve_error": "ultr_core.evaluation.metrics",
    "mean_ci": "ultr_core.evaluation.stats",
    "paired_differences": "ultr_core.evaluation.stats",
    "paired_test": "ultr_core.evaluation.stats",
    "summarise": "ultr_core.evaluation.stats",
})
