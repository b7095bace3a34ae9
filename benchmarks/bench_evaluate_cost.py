"""What `expected_seconds` (ultr_core/counterfactual/evaluate.py) is fitted on: seconds of the counterfactual
evaluation per bootstrap resample, with and without the trust-bias (affine) estimators, on simulated logs of 30,000
sessions over 500, 4,000 and 30,000 (query, document) pairs.

    python benchmarks/bench_evaluate_cost.py [QUERIES ...]      # default 50 400 3000 (10 documents each)
"""
import sys
import time

from ultr_core.counterfactual.estimators import DEFAULT_ESTIMATORS, ESTIMATORS
from ultr_core.counterfactual.evaluate import evaluate_ranking, expected_seconds
from ultr_core.studies.counterfactual import simulate_log

N_BOOT = 20
AFFINE = DEFAULT_ESTIMATORS + tuple(e.key for e in ESTIMATORS if e.fit == "affine")

for nq in [int(a) for a in sys.argv[1:]] or [50, 400, 3000]:
    frame, _ = simulate_log("pbm", 30_000, n_queries=nq)
    for name, est in (("default", DEFAULT_ESTIMATORS), ("affine", AFFINE)):
        first = []
        t0 = time.perf_counter()
        evaluate_ranking(frame, "bench", ranking="model:pbm", n_boot=N_BOOT, estimators=est,
                         report=lambda d, n, first=first: first or first.append(time.perf_counter()))
        total = time.perf_counter() - t0
        per = (total - (first[0] - t0)) / N_BOOT
        print(f"{nq * 10:>7,} pairs  {name:<8} {total:6.2f} s for {N_BOOT} resamples: {per:.3f} s per resample "
              f"({per / (nq * 10):.1e} s per pair); expected_seconds says "
              f"{expected_seconds(nq * 10, affine=name == 'affine', n_boot=N_BOOT):.1f} s", flush=True)
