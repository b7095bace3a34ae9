"""Uncertainty for comparisons across seeds: t-intervals and paired tests."""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

__all__ = ["mean_ci", "summarise", "paired_test"]


def mean_ci(values, level: float = 0.9) -> tuple[float, float, float]:
    """Mean and two-sided Student-t confidence interval (NaN half-width for one value)."""
    v = np.asarray(values, np.float64)
    v = v[np.isfinite(v)]
    if len(v) == 0:
        return float("nan"), float("nan"), float("nan")
    m = float(v.mean())
    if len(v) < 2:
        return m, float("nan"), float("nan")
    h = float(stats.t.ppf(0.5 + level / 2, len(v) - 1) * v.std(ddof=1) / np.sqrt(len(v)))
    return m, m - h, m + h


def summarise(df: pd.DataFrame, by, metrics, level: float = 0.9) -> pd.DataFrame:
    """One row per group: n, and mean / lo / hi of each metric (t-interval at ``level``)."""
    by = [by] if isinstance(by, str) else list(by)
    rows = []
    for key, g in df.groupby(by, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        rec = dict(zip(by, key))
        rec["n"] = len(g)
        for m in metrics:
            rec[m], rec[f"{m}_lo"], rec[f"{m}_hi"] = mean_ci(g[m], level)
        rows.append(rec)
    return pd.DataFrame(rows)


def paired_test(a, b) -> dict:
    """Paired t-test of a − b over matched seeds: mean difference, t, two-sided p."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    d = a - b
    if len(d) < 2 or np.all(d == d[0]):
        return {"mean_diff": float(d.mean()) if len(d) else float("nan"), "t": float("nan"), "p": float("nan")}
    t, p = stats.ttest_rel(a, b)
    return {"mean_diff": float(d.mean()), "t": float(t), "p": float(p)}
