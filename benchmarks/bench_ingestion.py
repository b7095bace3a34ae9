"""Out-of-core ingestion of real-size logs, CLI wall time and peak RSS included (issue targets
on this 2-core machine in brackets):

* 10 M-row Parquet log, 5,000 contexts, ``ig`` with its **default flags** (the position-bias estimate
  included): components (< 3 s) and merged into one (< 5 s), peak RSS < 1.5 GB; also with
  ``--document global`` (documents recur across queries) and ``--estimate none``;
* 100 M-row Parquet log: components (< 30 s), peak RSS < 4 GB;
* ~300 MB CSV (16.6 M rows): components (< 10 s);
* Yandex relevance-prediction text: lines per second (≥ 1 M/s), parse + aggregate + graph.

    python benchmarks/bench_ingestion.py [--skip-100m] [--yandex-only] [--yandex-sessions 4000000]

The logs are generated here in a temporary directory (never committed) from
ultr_core.simulation.synthetic_logs.make_contextual_log: 1 M sessions × 10 positions; the 100 M-row log
repeats them ten times with fresh clicks.
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
from bench_identifiability import run_cli

from ultr_core.simulation.synthetic_logs import make_contextual_log

ROOT = Path(__file__).resolve().parents[1]


COLS = ["query_id", "doc_id", "position", "click", "context"]


def yandex_text(path: Path, n_sessions: int, seed: int = 0) -> int:
    """A relevance-prediction log: one Q row of 10 URLs per session and its clicks (≈ 1.5 per
    session), clicks padded with empty fields as CLARA2 does.  Returns the number of lines."""
    rng = np.random.default_rng(seed)
    n_q = max(n_sessions // 20, 1)
    lists = rng.integers(0, 5 * n_q, size=(n_q, 10))
    q = rng.integers(0, n_q, n_sessions)
    urls = lists[q]
    clicked = rng.random((n_sessions, 10)) < 0.15
    with open(path, "w") as f:
        step = 200_000
        for s0 in range(0, n_sessions, step):
            s = np.arange(s0, min(s0 + step, n_sessions))
            qrows = [f"{i}\t0\tQ\t{q[i]}\t213\t" + "\t".join(map(str, urls[i])) for i in s]
            ci, cj = np.nonzero(clicked[s])
            crows = [f"{s[a]}\t{10 + b}\tC\t{urls[s[a], b]}\t\t\t" for a, b in zip(ci, cj)]
            order = np.argsort(np.r_[s, s[ci]], kind="stable")          # each session's Q row, then clicks
            rows = np.asarray(qrows + crows, dtype=object)[order]
            f.write("\n".join(rows) + "\n")
    return n_sessions + int(clicked.sum())


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--skip-100m", action="store_true", help="skip the 100 M-row log (≈ 2 minutes to write)")
    ap.add_argument("--yandex-sessions", type=int, default=4_000_000,
                    help="sessions of the Yandex text log (≈ 2.5 lines each)")
    ap.add_argument("--yandex-only", action="store_true", help="only the Yandex text log")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        if not a.yandex_only:
            columnar(tmp, a.skip_100m)
        yandex(tmp, a.yandex_sessions)


def columnar(tmp: Path, skip_100m: bool) -> None:
    """Parquet (10 M, 100 M rows) and CSV (16.6 M rows) logs through the ``ig`` CLI."""
    log = make_contextual_log(n_sessions=1_000_000, n_contexts=5_000, seed=0)
    frame = log.frame[COLS]
    p10 = tmp / "log10m.parquet"
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), p10)
    print(f"10 M rows: {p10.stat().st_size / 2**20:.0f} MB Parquet")
    # the command a user types (default flags: documents = (query, doc), all_pairs estimate with 100
    # bootstrap resamples), then documents keyed globally (25,619 components, 10 of them estimated)
    base = ["ig", "--bias", "context,position", "--json"]
    for label, extra in (("default", []), ("default --merge", ["--merge"]),
                         ("--document global", ["--document", "global"]),
                         ("--document global --merge", ["--document", "global", "--merge"]),
                         ("--document global --estimate none", ["--document", "global", "--estimate", "none"])):
        wall, rss, rep = run_cli([base[0], str(p10)] + base[1:] + extra)
        merged = (
            f", {rep['n_merges']:,} merges → {rep['n_components_after_merge']} component" if "merges" in rep else ""
        )
        print(f"  {label:34s} {wall:5.2f} s wall, peak RSS {rss:5.0f} MB — {rep['n_nodes']:,} factors, "
              f"{rep['n_components']:,} components{merged}")

    csv = tmp / "log.csv"
    rng = np.random.default_rng(1)
    extra = frame.iloc[: 6_600_000].assign(click=rng.permutation(frame["click"].to_numpy()[: 6_600_000]))
    with pcsv.CSVWriter(csv, pa.Table.from_pandas(frame.iloc[:1], preserve_index=False).schema) as w:
        for part in (frame, extra):
            w.write_table(pa.Table.from_pandas(part, preserve_index=False))
    n_csv = len(frame) + len(extra)
    wall, rss, rep = run_cli(["ig", str(csv)] + base[1:])
    print(f"CSV {csv.stat().st_size / 2**20:.0f} MB ({n_csv / 1e6:.1f} M rows): components {wall:5.2f} s wall, "
          f"peak RSS {rss:5.0f} MB — {rep['n_components']:,} components")

    if not skip_100m:
        p100 = tmp / "log100m.parquet"
        table = pa.Table.from_pandas(frame, preserve_index=False)
        with pq.ParquetWriter(p100, table.schema) as w:
            clicks = frame["click"].to_numpy()
            for i in range(10):
                c = pa.array(np.random.default_rng(10 + i).permutation(clicks))
                w.write_table(table.set_column(3, "click", c))
        print(f"100 M rows: {p100.stat().st_size / 2**20:.0f} MB Parquet")
        for label, extra in (("default", []), ("--document global", ["--document", "global"])):
            wall, rss, rep = run_cli([base[0], str(p100)] + base[1:] + extra)
            print(f"  {label:34s} {wall:5.2f} s wall, peak RSS {rss:5.0f} MB — {rep['n_rows']:,} rows, "
                  f"{rep['n_components']:,} components")


def yandex(tmp: Path, n_sessions: int) -> None:
    """The Yandex relevance-prediction text log: ``ig`` end to end, then parsing alone in process."""
    y = tmp / "yandex_log"
    n_lines = yandex_text(y, n_sessions)
    print(f"Yandex text: {n_lines / 1e6:.2f} M lines, {y.stat().st_size / 2**20:.0f} MB")
    wall, rss, rep = run_cli(["ig", str(y), "--json"])                     # default flags
    print(f"  ig (parse, aggregate, graph): {wall:5.2f} s wall, peak RSS {rss:5.0f} MB — "
          f"{n_lines / wall / 1e6:.2f} M lines/s")
    from ultr_core.logs.normalise import register_normalised
    from ultr_core.logs.sql import connect
    con = connect()
    t0 = time.perf_counter()
    register_normalised(con, y, "yandex")
    n = con.execute("SELECT count(*) FROM norm").fetchall()[0][0]
    t = time.perf_counter() - t0
    print(f"  parse only (in process, {n:,} impressions): {t:5.2f} s — {n_lines / t / 1e6:.2f} M lines/s")


if __name__ == "__main__":
    main()
