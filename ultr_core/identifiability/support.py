"""No estimate without data to support it (docs/safety.md, "Nothing lost or silently wrong").

Position bias is estimable only from clicks: a factor never clicked, or a component whose reference
factor (the one every curve is normalised by) was never clicked, has no ratio to report; and a bootstrap
interval that does not contain its own estimate is a degenerate one.  :func:`blank_unsupported` blanks
those cells of an estimate table and says why, so no page or CLI prints a curve from zero clicks.

>>> import pandas as pd
>>> t = pd.DataFrame({"estimate": [1.0, 3.0, 0.5], "lower": [1.0, 9.0, 0.4], "upper": [1.0, 12.0, 0.6]})
>>> notes, dead, _ = blank_unsupported(t, clicks=np.array([5.0, 2.0, 0.0]), start=np.zeros(3, int),
...                                 seg=np.zeros(3, int), chosen=np.array([0]))
>>> t["estimate"].tolist()[2], t["lower"].isna().tolist(), dead.tolist()
(nan, [False, True, True], [False, False, True])
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ultr_core.errors import counted

__all__ = ["blank_unsupported"]


def blank_unsupported(table: pd.DataFrame, clicks: np.ndarray, start: np.ndarray, *, seg: np.ndarray,
                      chosen: np.ndarray) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Blank (in place) what the data cannot support and return (notes, rows without support).  ``clicks``
    per row of ``table`` (a factor), ``start`` the row of each row's reference factor, ``seg`` its component
    rank among ``chosen`` (the graph's component ids).  Also returns the rows of components without any click
    (they get no curve at all)."""
    notes = []
    ref_dead = clicks[start] == 0
    dead = (clicks == 0) | ref_dead
    comp_clicks = np.bincount(seg, clicks, len(chosen))
    for k in np.flatnonzero(comp_clicks == 0):
        notes.append(f"component {int(chosen[k])} has no clicks: its position bias cannot be estimated (no curve)")
    live = comp_clicks[seg] > 0
    if (dead & live).any():
        notes.append(f"{counted(np.sum(dead & live), 'factor')} without clicks (or whose component's first factor has "
                     "none): not estimated — a click rate of 0 supports no ratio")
    table.loc[dead, ["estimate", "lower", "upper"]] = np.nan
    est, lo, hi = (table[c].to_numpy(float) for c in ("estimate", "lower", "upper"))
    tol = 1e-6 * np.maximum(1.0, np.abs(np.nan_to_num(est)))     # float noise of the refits is not "outside"
    outside = np.isfinite(est) & np.isfinite(lo) & np.isfinite(hi) & ((est < lo - tol) | (est > hi + tol))
    if outside.any():
        table.loc[outside, ["lower", "upper"]] = np.nan
        notes.append(f"{counted(outside.sum(), 'factor')} whose bootstrap interval does not contain the estimate "
                     "(too few clicks for a stable interval): interval not shown")
    return notes, dead, comp_clicks[seg] == 0
