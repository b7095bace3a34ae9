"""Claims as checks over seeds: "method A beats method B" (a preset's sentence, a paper's figure)
tested on paired runs, with the interval it is read with.

A :class:`Claim` says ``better − worse > margin`` on a test ``metric``, optionally only at some
grid values (``at``: e.g. the highest coupling level of a sweep).  :func:`check_claims` pairs the
two methods' runs by seed, takes the mean difference and its 90 % t-interval, and gives a verdict:

* **reproduced** — the whole interval above the claimed margin (above 0 when the claim has none; ``holds``);
* **opposite** — the interval below 0: the run contradicts the claim;
* **not resolved** — anything else (too few seeds, a difference inside seed noise);
* **not checked** — a method or grid value the claim needs is not in the runs.

>>> import pandas as pd
>>> runs = pd.DataFrame({"seed": [0, 1, 2] * 2, "method": ["A"] * 3 + ["B"] * 3,
...                      "ndcg@3": [0.80, 0.82, 0.81, 0.70, 0.71, 0.73]})
>>> r = check_claims(runs, [Claim("A", "B", margin=0.05)]).iloc[0]
>>> round(float(r["mean_diff"]), 3), bool(r["holds"]), r["verdict"]
(0.097, True, 'reproduced')
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ultr_core.evaluation.stats import mean_ci

__all__ = ["Claim", "check_claims", "FLAT", "METRIC_NAMES", "VERDICTS", "VERDICT_RULE", "VERDICT_RULE_SHORT"]

VERDICTS = ("reproduced", "not resolved", "opposite", "not checked")
#: the rule of :func:`check_claims` in words — every page that shows a verdict states it with this text
VERDICT_RULE = ("*reproduced* when the whole 90 % t-interval of the difference over paired seeds is above the "
                "claimed margin (above 0 when the claim names none); *opposite* when the interval is below 0; *not "
                "resolved* otherwise; *not checked* when the run lacks a method or the sweep value the claim is about")
#: the same rule in a few words, for a verdict on a projector tile
VERDICT_RULE_SHORT = "a claim holds when its whole 90 % interval clears the claimed margin"


#: how a claim names a metric that is not nDCG@k; ``curve_fit``: minus the mean absolute difference between a
#: method's observation curve and the truth, both ÷ position 1 (``ultr_core.studies.experiment.with_curve_fit``)
METRIC_NAMES = {"map": "MAP", "curve_fit": "curve fit", "log_se": "the standard error of log(o_k/o_1)"}
#: the method name of the reference a curve claim compares with: the flat curve Naive implicitly assumes
FLAT = "flat curve"


@dataclass(frozen=True)
class Claim:
    """``better`` − ``worse`` on the test ``metric``, paired by seed, has its whole 90 % t-interval above ``margin``
    — at the grid values ``at`` (pairs of column and value) when given.
    ``source`` says where the claim comes from (a paper's figure, a preset's sentence).

    >>> Claim("DLA", "Naive", margin=0.02).text
    'DLA − Naive > 0.02 on nDCG@3'
    >>> Claim("Naive", "DLA", "ndcg@10", at=(("click.coupling", 0.6),)).text
    'Naive − DLA > 0 on nDCG@10 at click.coupling = 0.6'
    >>> Claim("DLA", "flat curve", "curve_fit").text
    'DLA − flat curve > 0 on curve fit'
    >>> Claim("PA", "PA", at=(("click.shuffle", 0.3),), worse_at=(("click.shuffle", 0.0),)).text
    'PA at click.shuffle = 0.3 − PA at click.shuffle = 0 > 0 on nDCG@3'
    """

    better: str
    worse: str
    metric: str = "ndcg@3"
    margin: float = 0.0
    at: tuple = ()
    source: str = ""
    #: the grid values of the ``worse`` side when they differ from ``at`` (one method at two settings, paired by seed)
    worse_at: tuple | None = None

    @property
    def text(self) -> str:
        name = METRIC_NAMES.get(self.metric, f"nDCG@{self.metric.split('@')[-1]}")
        if self.worse_at is not None:
            return (f"{self.better}{_where(self.at)} − {self.worse}{_where(self.worse_at)} > {self.margin:g} on "
                    f"{name}")
        return f"{self.better} − {self.worse} > {self.margin:g} on {name}{_where(self.at)}"

    @property
    def sentence(self) -> str:
        """The claim as a reader says it (the Playground's verdict line; issue #60); :attr:`text` where it sets grid
        values.

        >>> Claim("DLA", "Naive").sentence, Claim("Oracle", "CLD", margin=0.02).sentence
        ('DLA beats Naive', 'Oracle beats CLD by more than 0.02')
        >>> Claim("DLA", "flat curve", "curve_fit").sentence
        "DLA's observation curve fits the truth better than a flat curve"
        """
        if self.at or self.worse_at is not None or self.metric == "log_se":
            return self.text
        if self.metric == "curve_fit":
            return f"{self.better}'s observation curve fits the truth better than " + (
                "a flat curve" if self.worse == FLAT else f"{self.worse}'s")
        name = METRIC_NAMES.get(self.metric, f"nDCG@{self.metric.split('@')[-1]}")
        return (f"{self.better} beats {self.worse}" + (f" by more than {self.margin:g}" if self.margin else "")
                + ("" if self.metric == "ndcg@3" else f" on {name}"))


def _where(at) -> str:
    return "".join(f" at {k} = {v:g}" if isinstance(v, (int, float)) else f" at {k} = {v}" for k, v in at)


def _column(runs: pd.DataFrame, col: str) -> str | None:
    """``col``, or a swept column that sets it with others (``"train.ips_eta,train.cld_rho_eta"``)."""
    if col in runs:
        return col
    return next((c for c in runs.columns if isinstance(c, str) and col in [p.strip() for p in c.split(",")]), None)


def _rows_at(runs: pd.DataFrame, at) -> pd.DataFrame | None:
    for col, value in at:
        col = _column(runs, col)
        if col is None:
            return None
        vals = runs[col]
        keep = (np.isclose(vals.astype(float), float(value)) if isinstance(value, (int, float))
                and pd.api.types.is_numeric_dtype(vals) else vals == value)
        runs = runs[keep]
    return runs


def check_claims(runs: pd.DataFrame, claims, *, method_col: str = "method", seed_col: str = "seed") -> pd.DataFrame:
    """Each claim against ``runs`` (one row per method × seed × grid value, test metrics as
    columns): the paired mean difference over seeds, its 90 % t-interval, ``holds`` and the
    ``verdict`` (see the module docstring).  One row per claim, in order."""
    rows = []
    for c in claims:
        out = {"claim": c.text, "source": c.source, "mean_diff": np.nan, "lo": np.nan, "hi": np.nan, "n": 0,
               "holds": False, "verdict": "not checked"}
        part, other = _rows_at(runs, c.at), _rows_at(runs, c.at if c.worse_at is None else c.worse_at)
        if (part is not None and other is not None and c.metric in part and c.better in set(part[method_col])
                and c.worse in set(other[method_col])):
            def side(rows, method, c=c):
                rows = rows[rows[method_col] == method]
                return rows.groupby(seed_col)[c.metric].mean()
            d = (side(part, c.better) - side(other, c.worse)).dropna().to_numpy()
            if len(d):
                m, lo, hi = mean_ci(d)
                holds = bool(lo > c.margin)
                verdict = "reproduced" if holds else "opposite" if hi < 0 else "not resolved"
                out.update(mean_diff=m, lo=lo, hi=hi, n=len(d), holds=holds, verdict=verdict)
        rows.append(out)
    return pd.DataFrame(rows, columns=["claim", "source", "mean_diff", "lo", "hi", "n", "holds", "verdict"])
