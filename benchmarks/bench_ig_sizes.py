"""``ig`` with its default flags against the pair-enumerating reference construction, at every size from
10,000 to 1,000,000 rows (issue #33: the default command must be faster at every size).

    python benchmarks/bench_ig_sizes.py [--sizes 10000,30000,100000,300000,1000000] [--repeats 3]

Both sides run as whole processes on the same Parquet file (interpreter start, imports and reading included),
median of ``--repeats`` runs:

* **ig** — ``python -m ultr_core ig LOG --bias context,position``: no other flag, so documents are
  (query, doc) pairs, the all-pairs position-bias estimate with 100 bootstrap resamples and the other key's
  verdict are included;
* **reference** — the paper's way (``identifiability.graph.components_by_edge_enumeration``): read the file
  with pandas, enumerate every pair of factors per document in Python, count components with networkx, on the
  same (query, doc) documents; it computes the component count only.

The log is ``make_contextual_log`` (5,000 context types fixed per (query, position), lists of 10).
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

REFERENCE = """
import sys
import pandas as pd
from ultr_core.identifiability.graph import components_by_edge_enumeration
from ultr_core.logs.clicklog import ClickLog
frame = pd.read_parquet(sys.argv[1])
log = ClickLog._trusted(frame, {})
print(components_by_edge_enumeration(log, ["context", "position"], ("query_id", "doc_id")))
"""


def _wall(cmd: list[str], repeats: int) -> tuple[float, str]:
    """Median wall seconds of ``cmd`` (a fresh process each time) and its last output."""
    times, out = [], ""
    for _ in range(repeats):
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        times.append(time.perf_counter() - t0)
        if proc.returncode != 0:
            raise SystemExit(f"{cmd[:4]} failed: {proc.stderr[-500:]}")
        out = proc.stdout
    return statistics.median(times), out


def main():
    from ultr_core.simulation.synthetic_logs import make_contextual_log
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,30000,100000,300000,1000000", help="log rows (10 per session)")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    print("| rows | `ig LOG --bias context,position` (default) | pair-enumerating reference | ratio | components "
          "(ig / reference) |\n|---:|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for rows in (int(s) for s in a.sizes.split(",")):
            log = make_contextual_log(n_sessions=rows // 10, n_queries=max(rows // 100, 100), seed=0)
            path = Path(tmp) / f"log_{rows}.parquet"
            log.frame.to_parquet(path)
            t_ig, out = _wall([sys.executable, "-m", "ultr_core", "ig", str(path), "--bias", "context,position"],
                              a.repeats)
            comps = next((ln.split(":")[1].split("(")[0].strip() for ln in out.splitlines()
                          if "connected components:" in ln), "?")
            t_ref, ref = _wall([sys.executable, "-c", REFERENCE, str(path)], a.repeats)
            print(f"| {rows:,} | {t_ig:.2f} s | {t_ref:.2f} s | {t_ref / t_ig:.1f}× | {comps} / {ref.strip()} |",
                  flush=True)


if __name__ == "__main__":
    main()
