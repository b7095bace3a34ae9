"""Issue #47, item 5: do the counterfactual estimators' 90 % intervals cover the simulator's true value?

20 seeds × 2 user models (PBM, DCM) × 5 candidates × 4 estimators, 20,000 sessions of 50 queries × 10 documents,
30 % of the sessions randomised, value = expected clicks in the top 5; the direct method uses the user model's own
class (PBM, DCM).  Writes experiments/counterfactual_coverage.csv and prints the table of docs/counterfactual.md.

    python experiments/counterfactual_coverage.py [--seeds 20] [--workers 2] [--users pbm,dcm] [--out CSV]

``--seeds 60 --users pbm --out experiments/counterfactual_coverage_pbm60.csv`` is the longer PBM run of
docs/counterfactual.md (its cases share a log per seed, so seeds, not cases, are the independent units); the
trust-bias run adds the affine estimators:
``--users trust --estimators dm,ips,snips,dr,affine_ips,affine_dr --candidates "production;ideal (true α);reversed;
PBM, another log" --out experiments/counterfactual_coverage_trust.csv``.
"""
import argparse
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pandas as pd

from ultr_core.studies.counterfactual import STUDY_USERS, coverage_rows


def _one(args):
    import torch
    torch.set_num_threads(1)
    user, seed, candidates, estimators, queries = args
    return coverage_rows(user, seed, candidates=candidates, estimators=estimators, n_queries=queries)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--users", default=",".join(STUDY_USERS), help="comma-separated of " + ", ".join(STUDY_USERS))
    ap.add_argument("--out", default=str(Path(__file__).with_suffix(".csv")))
    ap.add_argument("--candidates", default=None, help="semicolon-separated names (default: all five)")
    ap.add_argument("--estimators", default=None, help="comma-separated keys (default: the default set)")
    ap.add_argument("--queries", type=int, default=50, help="queries of 10 documents each (the sparser log of "
                    "docs/counterfactual.md: 1000)")
    a = ap.parse_args()
    t0 = time.perf_counter()
    cands = a.candidates.split(";") if a.candidates else None
    ests = a.estimators.split(",") if a.estimators else None
    jobs = [(u, s, cands, ests, a.queries) for u in a.users.split(",") for s in range(a.seeds)]
    with ProcessPoolExecutor(a.workers) as pool:
        rows = [r for part in pool.map(_one, jobs) for r in part]
    f = pd.DataFrame(rows)
    f.to_csv(a.out, index=False)
    f["error"] = f["estimate"] - f["truth"]
    f["width"] = f["upper"] - f["lower"]
    table = f.groupby(["user", "candidate", "estimator"], sort=False).agg(
        truth=("truth", "mean"), bias=("error", "mean"), width=("width", "mean"), coverage=("covered", "mean"),
        refused=("refused", "mean"))
    pd.set_option("display.width", 200)
    print(table.round(3).to_string())
    print(f"\n{len(jobs)} logs in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
