"""LBD and DLA training speed at the default and the paper scale, on a fixed log and with
online clicks (fresh clicks every step), on the Yahoo! sample at η_c = 0.6, top-10 shown.

    python benchmarks/bench_lbd_scale.py [--steps 100] [--threads 2]

Prints steps per second and lists per second per configuration, and the time that 10,000 steps
(the paper's run) would take at that speed.  Each configuration runs 2 × steps; the
rate is taken between the callbacks at step `steps` and `2 × steps` (one validation pass
included), so set-up — model build, the online sampler's simulator fit — is outside it; that
fit is timed separately.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from ultr_core.algorithms import TrainConfig, fit
from ultr_core.algorithms.config import PAPER_SCALE
from ultr_core.algorithms.training import log_simulator
from ultr_core.simulation.clickmodel import ClickModelConfig
from ultr_core.simulation.simulated import simulate_log

ROOT = Path(__file__).resolve().parents[1]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    ds, _, log = simulate_log(f"yahoo:{ROOT.parent / 'shared/data/yahoo_sample'}",
                              ClickModelConfig(coupling=0.6, topk=10),
                              n_sessions=20_000, seed=0)
    t0 = time.perf_counter()
    log_simulator(log, ds)
    print(f"Yahoo! sample ({ds.n_features} features), η_c = 0.6, top-10; rebuilding the click model for online "
          f"clicks: {time.perf_counter() - t0:.1f} s (once per fit)\n")
    print("| algorithm | scale | clicks | steps / s | lists / s | 10,000 steps |")
    print("|---|---|---|---:|---:|---:|")
    default = dict(model="dnn")
    paper = {k: v for k, v in PAPER_SCALE.items() if k not in ("steps", "eval_every", "clicks")}
    for alg in ("dla", "lbd"):
        for scale, extra in (("default (64-32, Adam)", default), ("paper (512-256-128 + LN, Adagrad, clip 5)", paper)):
            for clicks in ("log", "online"):
                cfg = TrainConfig(algorithm=alg, steps=2 * a.steps, eval_every=a.steps, keep_best=False,
                                  threads=a.threads, clicks=clicks, **extra)
                stamps = []
                fit(log, ds, cfg, on_step=lambda rec, stamps=stamps: stamps.append(time.perf_counter()))
                sps = a.steps / (stamps[1] - stamps[0])     # steady state: between the two callbacks
                print(f"| {alg.upper()} | {scale} | {clicks} | {sps:,.1f} | {sps * cfg.batch_size:,.0f} | "
                      f"{10_000 / sps / 60:,.1f} min |", flush=True)


if __name__ == "__main__":
    main()
