"""Time and peak memory to simulate 1,000,000 sessions × 10 positions (target < 5 s).

    python benchmarks/bench_simulation.py [--sessions N] [--json]
"""
from __future__ import annotations

import argparse
import json

from _measure import measure

from ultr_core.data.synthetic import make_synthetic_ltr
from ultr_core.simulation.clickmodel import ClickModelConfig
from ultr_core.simulation.simulator import ClickSimulator


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sessions", type=int, default=1_000_000)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    results = {}
    ds = make_synthetic_ltr(n_queries=1000, list_size=10, seed=0)
    for name, cfg in [("PBM η=1", ClickModelConfig()),
                      ("PBM η=1, top-5", ClickModelConfig(topk=5)),
                      ("contextual PBM, 5,000 contexts", ClickModelConfig(n_contexts=5000)),
                      ("individual-level, η_c=0.3", ClickModelConfig(coupling=0.3))]:
        sim = ClickSimulator(cfg, seed=0).fit(ds)
        with measure(f"simulate {a.sessions:,} × 10: {name}", results):
            log = sim.simulate(ds.train, a.sessions)
        results[f"simulate {a.sessions:,} × 10: {name}"]["rows"] = len(log)
        del log
    if a.json:
        print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
