"""Uncertainty for comparisons across seeds: t-intervals and paired tests.

``scipy.stats`` is imported inside the functions that use it: it takes 0.4 s to import, and every pool
worker, server and CLI run imports this module through the studies (#33)."""
from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["mean_ci", "summarise", "paired_test", "paired_differences"]


def mean_ci(values, level: float = 0.9) -> tuple[float, float, float]:
    """Mean and two-sided Student-t confidence interval (NaN half-width for one value)."""
    v = np.asarray(values, np.float64)
    v = v[np.isfinite(v)]
    if len(v) == 0:
        return float("nan"), float("nan"), float("nan")
    m = float(v.mean())
    if len(v) < 2:
        return m, float("nan"), float("nan")
    from scipy import stats  # here, not at import (see the module docstring)
    h = float(stats.t.ppf(0.5 + level / 2, len(v) - 1) * v.std(ddof=1) / np.sqrt(len(v)))
    return m, m - h, m + h


def summarise(df: pd.DataFrame, by, metrics, *, level: float = 0.9) -> pd.DataFrame:
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
    from scipy import stats
    t, p = stats.ttest_rel(a, b)
    return {"mean_diff": float(d.mean()), "t": float(t), "p": float(p)}


def paired_differences(df: pd.DataFrame, ref: str, others, *, by=(), metric: str = "ndcg@1",
                       method_col: str = "method", seed_col: str = "seed",
                       ref_label: str | None = None) -> pd.DataFrame:
    """Paired t-tests ``ref − other`` for each of ``others`` within every group of ``by``.

    Rows of two methods are paired on ``seed_col`` (seeds present for both only), so a missing
    or reordered seed never pairs unlike runs.  One row per (group, other): the ``by`` values,
    ``comparison`` ("ref − other", ``ref_label`` in place of ``ref`` when given), ``mean_diff``,
    ``p`` (two-sided, NaN when the differences are constant or fewer than two) and ``n`` (pairs).
    Groups without ``ref`` are skipped; an ``other`` missing from a group raises ``KeyError``
    naming it, two rows of one method and seed in a group ``ValueError``.

    >>> df = pd.DataFrame({"method": ["A", "A", "A", "B", "B"], "seed": [0, 1, 2, 1, 0],
    ...                    "ndcg@1": [0.5, 0.6, 0.7, 0.5, 0.2]})
    >>> r = paired_differences(df, "A", ["B"])       # seeds 0 and 1: differences 0.3 and 0.1
    >>> r[["comparison", "n"]].values.tolist(), round(float(r["mean_diff"][0]), 4)
    ([['A − B', 2]], 0.2)
    """
    by = [by] if isinstance(by, str) else list(by)
    rows = []
    for key, g in (df.groupby(by, sort=False) if by else [((), df)]):
        key = key if isinstance(key, tuple) else (key,)
        if g.duplicated([seed_col, method_col]).any():
            raise ValueError(f"two rows of one {method_col} and {seed_col} in group {dict(zip(by, key))}")
        wide = g.pivot_table(index=seed_col, columns=method_col, values=metric, aggfunc="first")
        if ref not in wide:
            continue
        for other in others:
            if other not in wide:
                raise KeyError(f"method {other!r} has no rows in group {dict(zip(by, key))}")
            pair = wide[[ref, other]].dropna()
            t = paired_test(pair[ref], pair[other])
            rows.append({**dict(zip(by, key)), "comparison": f"{ref_label or ref} − {other}",
                         "mean_diff": t["mean_diff"], "p": t["p"], "n": len(pair)})
    return pd.DataFrame(rows)
