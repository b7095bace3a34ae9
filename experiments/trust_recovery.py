"""Are trust bias's curves recovered from swap interventions, and do the bootstrap intervals cover the truth?
(issue #48, item 3).  On generated logs with known users — the synthetic default, trust-bias users with γ = 0.65
(Vardasbi et al.'s trust_1), position 1 swapped with a uniform rank in every session (Agarwal et al., WWW 2019) —
the affine model is fitted on the swap log's counts (``ultr_core.algorithms.affine.swap_recovery``) and the
quantities clicks identify (the signal ratios α_k/α_1 and the noise-to-signal steps) are compared with the truth,
with percentile bootstrap intervals over sessions.  Writes docs/results/trust_recovery.md.

    python experiments/trust_recovery.py [--seeds 10] [--sessions 50000] [--boot 20]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed

from ultr_core.algorithms.affine import invariants, swap_recovery, true_affine
from ultr_core.data.sources import load_dataset
from ultr_core.simulation.clickmodel import ClickModelConfig
from ultr_core.simulation.simulator import ClickSimulator

ROOT = Path(__file__).resolve().parents[1]
DEPTH = 10


def one_seed(seed: int, sessions: int, boot: int) -> dict:
    data = load_dataset("synthetic")
    log = ClickSimulator(ClickModelConfig(user_model="trust", intervention=True), seed=seed).fit(data).simulate(
        data.train, sessions)
    r = swap_recovery(log, DEPTH, n_boot=boot, seed=seed)
    truth = invariants(*true_affine(log.meta["click_model"], log.true_observation_curve()[:DEPTH], DEPTH))
    return {"seed": seed, "truth": truth, "signal": (r.signal_ratio, r.signal_lower, r.signal_upper),
            "noise": (r.noise_step, r.noise_lower, r.noise_upper)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--sessions", type=int, default=50_000)
    ap.add_argument("--boot", type=int, default=20)
    ap.add_argument("--out", default=str(ROOT / "docs" / "results" / "trust_recovery.md"))
    a = ap.parse_args()
    t0 = time.time()
    res = Parallel(n_jobs=2)(delayed(one_seed)(s, a.sessions, a.boot) for s in range(a.seeds))
    lines = ["# Trust-bias curves from swap interventions", "",
             f"`python experiments/trust_recovery.py --seeds {a.seeds} --sessions {a.sessions} --boot {a.boot}` "
             f"({time.time() - t0:.0f} s on 2 cores). Synthetic default (300 queries × 10 documents), trust-bias "
             "users (θ: eye tracking, η = 1; ε⁺_p = 0.98 − (p − 1)/100, ε⁻_p = 0.65/p), position 1 swapped with a "
             f"uniform rank in every session, {a.sessions:,} sessions per seed. Clicks fix the affine model only up "
             "to r → a·r + t (docs/identifiability_trust_bias.md), so the table compares what that map leaves "
             "alone: the signal ratio α_k/α_1 = θ_k(ε⁺_k − ε⁻_k)/θ_1(ε⁺_1 − ε⁻_1) and the noise-to-signal step "
             "(β_k/α_k − β_1/α_1)/(β_2/α_2 − β_1/α_1). Fit: maximum likelihood on the swap log's (document, "
             f"position) counts (`fit_affine_counts`); interval: 90 % percentile bootstrap over "
             f"sessions ({a.boot} resamples). Coverage: the share of seeds whose interval holds the truth (nominal "
             "90 %).", "",
             "| position | true α_k/α_1 | mean estimate | coverage | true noise step | mean estimate | coverage |",
             "|---|---|---|---|---|---|---|"]
    cover_s, cover_n = [], []
    for k in range(1, DEPTH):
        ts, tn = res[0]["truth"][0][k], res[0]["truth"][1][k]
        est_s = np.mean([r["signal"][0][k] for r in res])
        est_n = np.mean([r["noise"][0][k] for r in res])
        cs = np.mean([r["signal"][1][k] <= r["truth"][0][k] <= r["signal"][2][k] for r in res])
        cn = np.mean([r["noise"][1][k] <= r["truth"][1][k] <= r["noise"][2][k] for r in res])
        cover_s.append(cs)
        if k >= 2:
            cover_n.append(cn)
        noise = "1 (by definition) | — | —" if k == 1 else f"{tn:.3f} | {est_n:.3f} | {cn:.0%}"
        lines.append(f"| {k + 1} | {ts:.3f} | {est_s:.3f} | {cs:.0%} | {noise} |")
    lines += ["", f"Coverage over all positions and seeds: signal ratios {np.mean(cover_s):.0%}, noise steps "
              f"{np.mean(cover_n):.0%} (nominal 90 %). The estimates are close to the truth on average; a percentile "
              f"interval from {a.boot} resamples is coarse (its 5 % and 95 % points are near the extremes) and runs "
              "narrow — read these intervals as somewhat optimistic. "
              "`tests/algorithms/test_trust_and_policy_learners.py` checks 2 seeds (15 resamples) in CI.", ""]
    Path(a.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
