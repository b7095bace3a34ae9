"""Evaluation: ranking metrics (nDCG, MAP, ARP, MCC, observation-curve error) and the statistics
results are compared with (means with t intervals, paired differences over seeds).

Pure functions of arrays and :class:`~ultr_core.data.RankingData`; every package above uses them.

>>> import numpy as np
>>> from ultr_core.evaluation import mean_ci
>>> m, lo, hi = mean_ci(np.array([0.5, 0.6, 0.7]))
>>> round(m, 3), lo < m < hi
(0.6, True)
"""
from ultr_core.evaluation.metrics import (
                                          arp,
                                          average_precision,
                                          click_mse,
                                          evaluate_ranking,
                                          mcc,
                                          ndcg,
                                          observation_curve_error,
)
from ultr_core.evaluation.stats import mean_ci, paired_differences, paired_test, summarise

__all__ = ["ndcg", "average_precision", "arp", "mcc", "click_mse", "observation_curve_error", "evaluate_ranking",
           "mean_ci", "summarise", "paired_test", "paired_differences"]
