"""A perfectly fitted click model can still rank wrong (Oosterhuis 2022, quoted in *Identifiability Matters* §1):
on a log whose identifiability graph is disconnected, fits from different starting points reach the same click
log-likelihood but different relevance estimates — each component keeps its own free scale; after a repair
(node merging) they agree.  On the paper's own K = 2 data with embedding DLA fitted to convergence.

>>> df = equal_fit_fits(inits=(1, 2))
>>> bool(df.groupby("repair", sort=False)["log_likelihood"].agg(lambda x: x.max() - x.min()).lt(1e-8).all())
True
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ultr_core.identifiability.embedding import fit_counts
from ultr_core.identifiability.graph import IdentifiabilityGraph
from ultr_core.identifiability.repairs import _fit_scores, _repair_groups, fit_source

__all__ = ["equal_fit_fits", "equal_fit_spread", "REPAIR_LABELS"]

#: the two rows of the lesson: the log as it is, and after the planned node merging
REPAIR_LABELS = {"none": "as logged", "merge": "after node merging"}


def _log_likelihood(g: IdentifiabilityGraph, fit, fac: np.ndarray) -> float:
    """Binomial log-likelihood of every (document, factor) row's clicks per impression."""
    p = np.clip(fit.relevance[g.doc] * fit.observation[fac], 1e-12, 1 - 1e-12)
    n, c = g.impressions, g.clicks
    return float((c * np.log(p) + (n - c) * np.log(1 - p)).sum() / n.sum())


def equal_fit_fits(*, k: int = 2, data_seed: int = 0, inits=(1, 2, 3, 4), report=None, stop=None) -> pd.DataFrame:
    """One row per (repair, initialisation): the components of the graph the fit sees, the click log-likelihood
    per impression, MCC and nDCG@10 against the true relevance — DLA (the paper's update) to convergence on
    ``paper:k`` (10⁶ impressions per row), from uniformly random starts seeded by ``inits``."""
    table, truth, _, data = fit_source(f"paper:{k}", seed=data_seed)
    g = IdentifiabilityGraph.from_counts(table)
    rows, total = [], 2 * len(inits)
    for repair, label in REPAIR_LABELS.items():
        groups = _repair_groups(g, repair, None, None, None)
        fac = g.fac if groups is None else groups[g.fac]
        n_obs = g.n_factors if groups is None else int(groups.max()) + 1
        comps = g.n_components if groups is None else g.with_factor_groups(groups).n_components
        for init in inits:
            if stop is not None and stop.is_set():
                return pd.DataFrame(rows)
            fit = fit_counts(g.doc, fac, g.impressions, c=g.clicks, D=g.n_documents, G=n_obs, method="dla", seed=init)
            scores = _fit_scores(g, fit, groups, truth, data, None, init)
            rows.append({"repair": label, "start": init, "components": comps,
                         "log_likelihood": _log_likelihood(g, fit, fac), "mcc": scores["mcc"],
                         "ndcg@10": scores["ndcg@10"], "iterations": fit.iterations})
            if report is not None:
                report({"done": len(rows), "total": total})
    return pd.DataFrame(rows)


def equal_fit_spread(fits: pd.DataFrame) -> pd.DataFrame:
    """Per repair (in the order of :func:`equal_fit_fits`): how far the fits' click log-likelihoods spread (``ll``,
    max − min per impression) and the range of their relevance's MCC with the truth (``lo``, ``hi``).

    >>> f = pd.DataFrame({"repair": ["a", "a", "b"], "log_likelihood": [-1.0, -1.5, -2.0], "mcc": [0.1, 0.9, 0.5]})
    >>> equal_fit_spread(f).round(2).to_dict("index")
    {'a': {'ll': 0.5, 'lo': 0.1, 'hi': 0.9}, 'b': {'ll': 0.0, 'lo': 0.5, 'hi': 0.5}}
    """
    return fits.groupby("repair", sort=False).agg(ll=("log_likelihood", lambda x: x.max() - x.min()),
                                                  lo=("mcc", "min"), hi=("mcc", "max"))
