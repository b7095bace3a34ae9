"""Table factories: result frames turned into what a page shows (pure functions, no Streamlit).

>>> import pandas as pd
>>> res = pd.DataFrame({"claim": ["A − B > 0 on nDCG@3"], "source": ["Fig. 1"], "mean_diff": [0.0123],
...                     "lo": [0.004], "hi": [0.0206], "n": [5], "holds": [True], "verdict": ["reproduced"]})
>>> claims_table(res).iloc[0].to_dict()
{'verdict': 'reproduced', 'paper says': 'Fig. 1', 'difference [90 % interval]': '+0.012 [+0.004, +0.021]', 'seeds': 5,
'check': 'A − B > 0 on nDCG@3'}
"""
from __future__ import annotations

import math

import pandas as pd

__all__ = ["claims_table", "table3_table", "blank_missing"]


def blank_missing(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` as a page shows it: a column with missing values becomes text — the value blank, never Python's
    "None" (Streamlit's grid writes that for every null) — and its numbers keep thousands separators; columns
    without missing values are left as they are (numeric, sortable).

    >>> blank_missing(pd.DataFrame({"a": [1.5, None], "n": [21603.0, None], "s": ["x", None], "k": [1, 2]}))
         a       n  s  k
    0  1.5  21,603  x  1
    1                  2
    """
    out = frame.copy()
    for c in out.columns:
        col = out[c]
        if not col.isna().any():
            continue
        out[c] = [("" if _missing(x) else f"{x:,}" if isinstance(x, int) and not isinstance(x, bool)
                   else f"{x:,.10g}" if isinstance(x, float) else str(x)) for x in col.astype(object)]
    return out


def _missing(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x)) or x is pd.NA or x is pd.NaT


def _interval(m, lo, hi) -> str:
    if m is None or (isinstance(m, float) and math.isnan(m)):
        return "—"
    if lo is None or (isinstance(lo, float) and math.isnan(lo)):
        return f"{m:+.3f} (one seed: no interval)"
    return f"{m:+.3f} [{lo:+.3f}, {hi:+.3f}]"


def claims_table(res: pd.DataFrame) -> pd.DataFrame:
    """The rows of :func:`ultr_core.evaluation.claims.check_claims` as the Compare page shows them."""
    return pd.DataFrame({                  # the verdict first: it must not be the column a narrow screen cuts off
        "verdict": res["verdict"],
        "paper says": res["source"].where(res["source"] != "", res["claim"]),
        "difference [90 % interval]": [_interval(m, lo, hi) for m, lo,
                                       hi in zip(res["mean_diff"], res["lo"], res["hi"])],
        "seeds": res["n"].astype(int),
        "check": res["claim"],
    })


def table3_table(agree: pd.DataFrame) -> pd.DataFrame:
    """The rows of :func:`ultr_core.studies.validation.table3_agreement` as the Heat-maps page shows them.

    >>> agree = pd.DataFrame({"click.coupling": [0.6], "selected": ["λ = 100, t = 0.1"], "paper": ["λ = 1, t = 0.4"],
    ...                       "same": [False], "paper_rank": [2.0], "cells": [12], "valid_gap": [0.02],
    ...                       "test_gap": [0.018]})
    >>> table3_table(agree).iloc[0].to_dict()["paper's cell"]
    'rank 2 of 12: validation −0.020, test −0.018'
    """
    def where(r):
        if r["same"]:
            return "selected"
        if pd.isna(r["paper_rank"]):
            return "not in the grid"
        return (f"rank {int(r['paper_rank'])} of {int(r['cells'])}: validation {-r['valid_gap']:+.3f}, "
                f"test {-r['test_gap']:+.3f}").replace("-", "−")
    return pd.DataFrame({"η_c": agree["click.coupling"], "selected on validation": agree["selected"],
                         "Table 3": agree["paper"], "same cell": agree["same"].map({True: "yes", False: "no"}),
                         "paper's cell": [where(r) for _, r in agree.iterrows()]})
