"""Issue #58: is Affine-IPS's bootstrap interval too narrow, or is its coverage over seeds noise?

For one seed's trust-bias design (its α and production order fixed), ``--logs`` fresh logs of the same queries
(``simulate_log(..., sessions_seed=200 + j)``), each valued as the coverage study values it (20,000 sessions, top 5,
100 bootstrap resamples): the spread of the estimates over the logs against the intervals' half-width ÷ 1.645, and
how often an interval covers the estimates' mean.  The log's own mean (a plain average, whose bootstrap is right)
is the yardstick for the noise of 20 logs.  Prints one line per (candidate, estimator)::

    python experiments/affine_bootstrap_check.py --seed 0 --logs 20      # about 4 minutes a seed on one core
"""
import argparse

import numpy as np
import pandas as pd

from ultr_core.clickmodels.sessions import SessionArrays
from ultr_core.counterfactual import candidate as cand
from ultr_core.counterfactual.evaluate import value_candidate
from ultr_core.studies import counterfactual as study

NAMES = ("ideal (true α)", "production")


def one_log(seed: int, j: int) -> list[dict]:
    """Affine-IPS, IPS and the log's own value of the two candidates on fresh log ``j`` of ``seed``'s design."""
    frame, alpha = study.simulate_log("trust", 20_000, epsilon=0.3, seed=seed, sessions_seed=200 + j)
    arrays = SessionArrays.from_frame(frame, "log")
    t = arrays.compress()
    production = cand.production_rank(t, arrays.pair_query)
    rows = []
    for name in NAMES:
        values = study.CANDIDATES[name]
        c = (cand.Candidate(name, production, {}) if values is None else
             cand.from_values(values(study._alpha_by_pair(arrays, alpha), None, None), name, arrays.pair_query,
                              production=production))
        out = value_candidate(arrays, c, model="pbm", k=5, n_boot=100, seed=j, t=t, production=production,
                              estimators=["affine_ips", "ips"])
        for key, r in [*out.estimators.items(), ("logged", out.logged)]:
            rows.append({"log": j, "candidate": name, "estimator": key, "estimate": r.estimate, "lower": r.lower,
                         "upper": r.upper})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--logs", type=int, default=20)
    a = ap.parse_args()
    f = pd.DataFrame([r for j in range(a.logs) for r in one_log(a.seed, j)])
    for (name, key), g in f.groupby(["candidate", "estimator"], sort=False):
        sd, boot = g["estimate"].std(ddof=1), ((g["upper"] - g["lower"]) / 2).mean() / 1.645
        mean = g["estimate"].mean()
        cover = np.mean((g["lower"] <= mean) & (mean <= g["upper"]))
        print(f"seed {a.seed}  {name:16s} {key:10s} sd over logs {sd:.4f}  bootstrap sd {boot:.4f}  "
              f"ratio {boot / sd:.2f}  intervals covering the mean {cover:.0%}")


if __name__ == "__main__":
    main()
