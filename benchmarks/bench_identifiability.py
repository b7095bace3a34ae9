"""Identifiability at scale (issue: components < 10 s, merging < 60 s, each < 4 GB peak,
CLI wall time included), and the pair-enumerating construction on a 100,000-session slice.

    python benchmarks/bench_identifiability.py [--sessions 1000000] [--contexts 5000]

The log: 1,000,000 sessions × 10 positions, 5,000 context types fixed per (query, position),
documents recurring across queries (see ultr_core.simulation.synthetic_logs.make_contextual_log).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ultr_core.identifiability import IdentifiabilityGraph, components_by_edge_enumeration
from ultr_core.logs.clicklog import ClickLog
from ultr_core.simulation.synthetic_logs import make_contextual_log

ROOT = Path(__file__).resolve().parents[1]


def run_cli(args: list[str]) -> tuple[float, float, dict]:
    """Wall seconds, peak RSS (MB) of the CLI process and its JSON output.  Peak RSS comes from
    GNU time when installed: ru_maxrss of a child forked from this (large) benchmark process
    would count the parent's pages copied at fork time."""
    gnu_time = Path("/usr/bin/time")
    with tempfile.NamedTemporaryFile(suffix=".rss") as rss_file:
        prefix = [str(gnu_time), "-f", "%M", "-o", rss_file.name] if gnu_time.exists() else []
        t0 = time.perf_counter()
        proc = subprocess.Popen(prefix + [sys.executable, "-m", "ultr_core", *args], cwd=ROOT,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = proc.communicate()
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            raise SystemExit(f"CLI failed: {err.decode()}")
        rss = float(Path(rss_file.name).read_text().split()[-1]) / 1024 if prefix else float("nan")
    return wall, rss, json.loads(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sessions", type=int, default=1_000_000)
    ap.add_argument("--contexts", type=int, default=5_000)
    ap.add_argument("--slice", type=int, default=100_000)
    a = ap.parse_args()
    log = make_contextual_log(n_sessions=a.sessions, n_contexts=a.contexts, seed=0)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "log.parquet"
        log.to_parquet(path)
        print(f"log: {len(log):,} rows, {a.sessions:,} sessions, {a.contexts:,} contexts "
              f"({path.stat().st_size / 2**20:.0f} MB Parquet)")
        wall, rss, rep = run_cli(["ig", str(path), "--bias", "context,position", "--json"])
        print(f"CLI components:  {wall:6.2f} s wall, peak RSS {rss:7.0f} MB — {rep['n_nodes']:,} factors, "
              f"{rep['n_components']:,} components, largest {rep['component_sizes'][0]:,}")
        wall, rss, rep = run_cli(["ig", str(path), "--bias", "context,position", "--merge", "--json"])
        print(f"CLI merge:       {wall:6.2f} s wall, peak RSS {rss:7.0f} MB — {rep['n_merges']:,} merges "
              f"({rep['merge_features']}), {rep['n_components_after_merge']} component after merging")
    sl = ClickLog._trusted(log.frame[log.frame["session_id"] < a.slice], log.meta)
    t0 = time.perf_counter()
    fast = IdentifiabilityGraph.from_log(sl).n_components
    t_fast = time.perf_counter() - t0
    t0 = time.perf_counter()
    slow = components_by_edge_enumeration(sl)
    t_slow = time.perf_counter() - t0
    print(f"slice of {a.slice:,} sessions: sparse components {t_fast:.2f} s, pair enumeration "
          f"{t_slow:.2f} s ({t_slow / t_fast:.0f}× slower); components {fast:,} vs {slow:,} "
          f"({'agree' if fast == slow else 'DISAGREE'})")


if __name__ == "__main__":
    main()
