"""Training throughput: lists (sessions) per second and peak memory for DLA and LBD
(DNN, batch 256) on MQ2008 fold 1 with simulated clicks, torch capped at 2 threads.

    python benchmarks/bench_training.py [--steps 300]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from _measure import measure

from ultr_core.algorithms import TrainConfig, fit
from ultr_core.simulation.simulated import simulate_log

ROOT = Path(__file__).resolve().parents[1]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    ds, _, log = simulate_log(f"mq2008:{ROOT.parent / 'shared/data/mq2008'}", None, n_sessions=50_000, seed=0)
    print(f"MQ2008 fold 1: {log.n_sessions:,} sessions, lists up to {int(log.frame.position.max())} documents")
    results = {}
    for alg in ("dla", "lbd"):
        cfg = TrainConfig(algorithm=alg, model="dnn", batch_size=256, steps=a.steps, eval_every=a.steps,
                          threads=a.threads, keep_best=False)
        t0 = time.perf_counter()
        with measure(f"{alg.upper()} (DNN 64-32, batch 256, {a.steps} steps)", results):
            fit(log, ds, cfg)
        secs = time.perf_counter() - t0
        print(f"    {a.steps * 256 / secs:,.0f} lists/s")


if __name__ == "__main__":
    main()
