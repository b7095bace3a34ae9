"""The work the round-four inputs of issue #61 cost, one step per run (time it from outside, e.g. /usr/bin/time -v):

    python benchmarks/bench_round_four.py qrels     # read_judgements on a 54 MB, 2.5 M-row qrels file
    python benchmarks/bench_round_four.py upload    # a 756 KB upload: 1 query, 500 positions, 2,000 documents —
                                                    # graph, fit, within-query orders, weakest links, plan, documents

The files are generated (seeded) into the system's temporary folder on the first run and reused.  Before the
changes (this 2-core machine, 2026-11-27): qrels 37 s and 1.8 GB peak; the upload's orders held the Upload page at
12 GB for 900+ s (issue #61), its plan 4.8 s and 957 MB.  docs/safety.md, round four, has the figures after.
"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

TMP = Path(tempfile.gettempdir())


def qrels_file() -> Path:
    path = TMP / "ultr_bench_round4.qrels"
    if not path.exists():
        rng = np.random.default_rng(0)
        n = 2_500_000
        q, d, g = rng.integers(0, 100_000, n), rng.integers(0, 10 ** 9, n), rng.integers(0, 5, n)
        path.write_text("\n".join(f"{a} 0 doc{b} {c}" for a, b, c in zip(q, d, g)) + "\n")
    return path


def upload_file() -> Path:
    path = TMP / "ultr_bench_round4_upload.csv"
    if not path.exists():
        rng = np.random.default_rng(0)
        n = 50_000
        docs, pos, clk = rng.integers(0, 2000, n), rng.integers(1, 501, n), (rng.random(n) < 0.3).astype(int)
        path.write_text("session_id,query_id,doc_id,position,click\n" + "\n".join(
            f"{s},q,d{d},{p},{c}" for s, d, p, c in zip(range(n), docs, pos, clk)) + "\n")
    return path


def qrels() -> None:
    from ultr_core.logs.judgements import read_judgements
    j = read_judgements(qrels_file().read_bytes(), name="qrels")
    print(f"{len(j.frame):,} judgements kept")


def upload() -> None:
    from ultr_core.identifiability.graph import IdentifiabilityGraph
    from ultr_core.identifiability.precision import certainty_report, document_outputs, factor_levels, graph_uncertainty
    from ultr_core.identifiability.resistance import resolved_orders, weakest_links
    from ultr_core.logs import ingest
    t = time.perf_counter()
    g = IdentifiabilityGraph.from_counts(ingest(str(upload_file()), "csv"))
    u = graph_uncertainty(g)
    labels, _, _ = factor_levels(g, u)
    steps = {"graph and fit": None,
             "orders": lambda: resolved_orders(u, g.document_keys["query_id"].astype(str).to_numpy()),
             "weakest links": lambda: weakest_links(u, labels),
             "plan": lambda: certainty_report(g, steps=5, impressions=100, objective="worst", u=u),
             "documents": lambda: document_outputs(g, u)}
    for name, step in steps.items():
        if step is not None:
            t = time.perf_counter()
            step()
        print(f"{name}: {time.perf_counter() - t:.2f} s")


if __name__ == "__main__":
    {"qrels": qrels, "upload": upload}[sys.argv[1] if len(sys.argv) > 1 else "upload"]()
