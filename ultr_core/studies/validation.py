"""Model selection on validation for grids of runs: the best cell per panel (Fig. 4's ★), the
paper's Table 3 cell beside it, and per-seed tuning of a hyper-parameter — test metrics are only
read for what validation selected.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ultr_core.errors import ConfigError

__all__ = ["best_cells", "table3_agreement", "tuned_per_seed"]



#: LBD Figure 4's grid (the paper's §6.4 heat-maps): coupling levels η_c, penalties λ and Bernoulli t — the one
#: definition the Heat-maps page and ``experiments/lbd_study.py`` use
FIG4_COUPLING = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6)
FIG4_LAMBDAS = (1.0, 100.0, 10000.0)
FIG4_TS = (0.1, 0.2, 0.3, 0.4)
#: the coupling levels of the quick grid (the Heat-maps page's default)
FIG4_QUICK_COUPLING = (0.0, 0.3, 0.6)


def fig4_grid(couplings=FIG4_COUPLING) -> dict:
    """The grid of LBD Figure 4 over ``couplings`` (ExperimentSpec dotted keys → values).

    >>> {k: len(v) for k, v in fig4_grid(FIG4_QUICK_COUPLING).items()}
    {'click.coupling': 3, 'train.lbd_lambda': 3, 'train.lbd_t': 4}
    """
    return {"click.coupling": list(couplings), "train.lbd_lambda": list(FIG4_LAMBDAS), "train.lbd_t": list(FIG4_TS)}


def _cell_means(df: pd.DataFrame, keys, select: str, metric: str) -> pd.DataFrame:
    """Mean ``select`` and ``metric`` over seeds for every grid cell (``keys``)."""
    return df.groupby(list(keys))[[select, metric]].mean().reset_index()


def best_cells(df: pd.DataFrame, *, panel: str = "click.coupling", cell=("train.lbd_lambda", "train.lbd_t"),
               select: str = "valid_ndcg@10", metric: str = "ndcg@10") -> pd.DataFrame:
    """Per ``panel`` value, the grid cell with the best mean ``select`` (validation nDCG@10: model
    selection as in the paper) over seeds, with its mean ``select`` and ``metric`` (test) beside it.

    >>> import pandas as pd
    >>> df = pd.DataFrame({"click.coupling": [0, 0, 0, 0], "train.lbd_lambda": [1, 1, 100, 100],
    ...                    "train.lbd_t": [0.1, 0.1, 0.1, 0.1], "valid_ndcg@10": [0.8, 0.9, 0.7, 0.7],
    ...                    "ndcg@10": [0.5, 0.6, 0.9, 0.9], "seed": [0, 1, 0, 1]})
    >>> best_cells(df).round(3)[["click.coupling", "train.lbd_lambda", "valid_ndcg@10", "ndcg@10"]].to_dict("records")
    [{'click.coupling': 0, 'train.lbd_lambda': 1, 'valid_ndcg@10': 0.85, 'ndcg@10': 0.55}]
    """
    means = _cell_means(df, [panel, *cell], select, metric)
    best = means.loc[means.groupby(panel)[select].idxmax()]
    return best.sort_values(panel).reset_index(drop=True)


def table3_agreement(df: pd.DataFrame, model: str = "dnn") -> pd.DataFrame:
    """Per coupling level of an LBD (λ, t) grid: the cell selected on validation (:func:`best_cells`)
    beside the paper's Table 3 cell for that level (:func:`~ultr_core.algorithms.config.lbd_table3`),
    whether they are the same cell, and the paper cell's own validation and test means with its
    rank among the level's cells (1 = what validation selects) — how far the run is from the paper.

    >>> import pandas as pd
    >>> df = pd.DataFrame({"click.coupling": [0.6] * 3, "train.lbd_lambda": [1.0, 100.0, 1.0],
    ...                    "train.lbd_t": [0.4, 0.1, 0.1], "valid_ndcg@10": [0.80, 0.82, 0.70],
    ...                    "ndcg@10": [0.79, 0.81, 0.69], "seed": [0, 0, 0]})
    >>> r = table3_agreement(df).iloc[0]
    >>> (r["selected"], r["paper"], bool(r["same"]), int(r["paper_rank"]), round(float(r["valid_gap"]), 3))
    ('λ = 100, t = 0.1', 'λ = 1, t = 0.4', False, 2, 0.02)
    """
    from ultr_core.algorithms.config import lbd_table3
    means = _cell_means(df, ["click.coupling", "train.lbd_lambda", "train.lbd_t"], "valid_ndcg@10", "ndcg@10")
    rows = []
    for level, g in means.groupby("click.coupling"):
        g = g.sort_values("valid_ndcg@10", ascending=False).reset_index(drop=True)
        lam, t = lbd_table3(level, model)
        here = g[np.isclose(g["train.lbd_lambda"], lam) & np.isclose(g["train.lbd_t"], t)]
        top = g.iloc[0]
        row = {"click.coupling": level, "selected": f"λ = {top['train.lbd_lambda']:g}, t = {top['train.lbd_t']:g}",
               "paper": f"λ = {lam:g}, t = {t:g}", "same": False, "paper_rank": np.nan, "cells": len(g),
               "valid_gap": np.nan, "test_gap": np.nan}
        if len(here):
            i = int(here.index[0])
            row.update(same=i == 0, paper_rank=i + 1,
                       valid_gap=float(top["valid_ndcg@10"] - here["valid_ndcg@10"].iloc[0]),
                       test_gap=float(top["ndcg@10"] - here["ndcg@10"].iloc[0]))
        rows.append(row)
    return pd.DataFrame(rows)


def tuned_per_seed(df: pd.DataFrame, group, tuned, *, select: str = "valid_ndcg@10") -> pd.DataFrame:
    """Hyper-parameter tuning on validation, per seed: of the rows of one ``group`` and seed that
    differ in the ``tuned`` columns, keep the one with the best ``select`` (validation nDCG@10).
    Test metrics of the kept rows are then an honest estimate of "tuned on validation".

    >>> import pandas as pd
    >>> df = pd.DataFrame({"algorithm": ["CLD"] * 4, "seed": [0, 0, 1, 1], "train.cld_gamma": [0.1, 0.3, 0.1, 0.3],
    ...                    "valid_ndcg@10": [0.7, 0.8, 0.9, 0.6], "ndcg@1": [0.5, 0.6, 0.7, 0.8]})
    >>> tuned_per_seed(df, ["algorithm"], ["train.cld_gamma"])[["seed", "train.cld_gamma", "ndcg@1"]].values.tolist()
    [[0.0, 0.3, 0.6], [1.0, 0.1, 0.7]]
    """
    group = [group] if isinstance(group, str) else list(group)
    tuned = [tuned] if isinstance(tuned, str) else list(tuned)
    missing = [c for c in group + tuned + ["seed", select] if c not in df]
    if missing:
        raise ConfigError("columns", f"tuning needs column(s) {', '.join(missing)}")
    best = df.loc[df.groupby(group + ["seed"], sort=False)[select].idxmax()]
    return best.reset_index(drop=True)
