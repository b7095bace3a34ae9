"""The identifiability paper's sweeps on its own fully synthetic data (App. C.1, 10⁶ impressions per row): DLA over
the number of IG components K (Fig. 3a / Table 1) and the repairs on K = 2 (Table 1's row, Figs. 4a and 4b) — the
Identifiability page's "run the K sweep" and "run the repairs" buttons."""
from __future__ import annotations

import pandas as pd

from ultr_core.errors import ConfigError

__all__ = ["components_sweep", "repairs_sweep", "PAPER_REPAIRS"]


def _paper_fits(runs, keep, report=None, stop=None) -> pd.DataFrame:
    """Fit ``runs`` — (K, seed, row labels, :func:`fit_repaired` arguments) — on the paper's fully
    synthetic data (App. C.1, 10⁶ impressions per row; generated once per K and seed) and return one
    row per run: its labels, ``keep`` of the fit's outputs, MCC and nDCG@10.  ``report`` receives
    {"done", "total"} after each fit; ``stop`` ends early with the rows so far."""
    from ultr_core.data.synthetic import make_paper_identifiability_data
    from ultr_core.identifiability.repairs import fit_repaired
    from ultr_core.simulation.synthetic_logs import binomial_ctr_table
    rows, data_of = [], {}
    for k, seed, labels, kwargs in runs:
        if stop is not None and stop.is_set():
            break
        if (k, seed) not in data_of:
            data = make_paper_identifiability_data(n_components=k, seed=seed)
            data_of = {(k, seed): (data, *binomial_ctr_table(data, seed=seed))}     # one data set at a time
        data, table, r, o = data_of[(k, seed)]
        out = fit_repaired(table, r, o, data=data, seed=seed, **kwargs)
        rows.append({**labels, **{c: out[c] for c in keep}, "mcc": out["mcc"], "ndcg@10": out["ndcg@10"]})
        if report is not None:
            report({"done": len(rows), "total": len(runs)})
    return pd.DataFrame(rows)


def components_sweep(*, ks=(1, 2, 3, 4), seeds=(0, 1, 2), methods=("dla",), report=None, stop=None) -> pd.DataFrame:
    """The identifiability paper's Fig. 3a / Table 1 setting on its own fully synthetic data
    (App. C.1: :func:`~ultr_core.data.synthetic.make_paper_identifiability_data`, 10⁶ impressions per
    row) with embedding models fitted to convergence; MCC and nDCG@10 per K and seed.
    ``report`` receives {"done", "total"} after each run; ``stop`` ends the sweep early."""
    runs = [(k, seed, {"K": k, "seed": seed, "method": m},
             {"method": m}) for k in ks for seed in seeds for m in methods]
    df = _paper_fits(runs, ("components", "iterations"), report, stop)
    return df[["K", "seed", "method", "components", "mcc", "ndcg@10", "iterations"]] if len(df) else df


#: the repair strategies compared on the paper's K = 2 data (Table 1 row, Figs. 4a and 4b; positions 1-based)
PAPER_REPAIRS = {
    "DLA (disconnected)": dict(repair="none"),
    "merge 4 & 5 (planned)": dict(repair="merge"),
    "merge 3 & 5": dict(repair="merge", merge_positions=[(3, 5)]),
    "merge 2 & 5": dict(repair="merge", merge_positions=[(2, 5)]),
    "intervention, min cost": dict(repair="intervene"),
    "intervention, random cost": dict(repair="intervene", random_intervention=True),
}


def repairs_sweep(*, seeds=(0, 1, 2), strategies=tuple(PAPER_REPAIRS), report=None, stop=None) -> pd.DataFrame:
    """The identifiability paper's repairs on its K = 2 data (blocks {1–4}, {5–10}, 10⁶ impressions
    per row), DLA fitted to convergence: plain, node merging (the planned 4 & 5, and the farther
    3 & 5 and 2 & 5 of Fig. 4b — the paper numbers positions from 0) and node intervention with
    minimum or random cost (Fig. 4a).  MCC and nDCG@10 per strategy and seed."""
    unknown = [s for s in strategies if s not in PAPER_REPAIRS]
    if unknown:
        raise ConfigError("strategies", f"unknown strategy {unknown[0]!r}; use {', '.join(PAPER_REPAIRS)}")
    runs = [(2, seed, {"strategy": name, "seed": seed}, PAPER_REPAIRS[name]) for seed in seeds for name in strategies]
    df = _paper_fits(runs, ("components_after", "iterations"), report, stop)
    return df[["strategy", "seed", "mcc", "ndcg@10", "components_after", "iterations"]] if len(df) else df
