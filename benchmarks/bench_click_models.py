"""Click models at scale (issue #34): the default ``click-models LOG`` command (all models, --split 0.75) on a
30,000-session log and on 1,000,000 sessions × 10 results (10 M rows), whole CLI process, peak RSS by GNU time.

    python benchmarks/bench_click_models.py [--sessions 30000,1000000] [--parts 10]

``--parts K`` (default 0: off) also writes K simulated logs of 1,000,000 sessions × 10 results (seeds 0 … K − 1,
session ids made distinct, only the five columns a click log needs) as Parquet parts of one glob — 100 M rows for
K = 10 — and runs ``click-models 'part*.parquet' --models pbm,ubm,dbn`` on them (DuckDB groups the sessions into
patterns out of core: ``clickmodels.patterns``).

The logs: ``python -m ultr_core simulate --sessions N`` (the synthetic default, PBM clicks with η = 1, ε = 0.1),
as Parquet; the command reads it out of core (DuckDB, ``clickmodels.outofcore``).
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(args: list[str]) -> tuple[float, float, str]:
    with tempfile.NamedTemporaryFile(suffix=".rss") as rss:
        t0 = time.perf_counter()
        proc = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss.name, sys.executable, "-m", "ultr_core", *args],
                              cwd=ROOT, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if proc.returncode:
            raise SystemExit(proc.stderr[-1000:])
        return wall, float(Path(rss.name).read_text().split()[-1]) / 1024, proc.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", default="30000,1000000")
    ap.add_argument("--parts", type=int, default=0)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(s) for s in a.sessions.split(",")):
            path = Path(tmp) / f"log_{n}.parquet"
            _run(["simulate", "--sessions", str(n), "--out", str(path)])
            wall, rss, out = _run(["click-models", str(path)])
            print(f"{n:,} sessions ({n * 10:,} rows): `click-models LOG` {wall:.2f} s wall, peak RSS {rss:,.0f} MB")
            print(out)
        if a.parts:
            _parts(Path(tmp), a.parts)


def _parts(tmp: Path, k: int) -> None:
    import duckdb
    for i in range(k):
        raw = tmp / f"raw{i}.parquet"
        _run(["simulate", "--sessions", "1000000", "--seed", str(i), "--out", str(raw)])
        duckdb.execute(f"COPY (SELECT session_id + {i} * 1000000 AS session_id, query_id, doc_id, position, click "
                       f"FROM '{raw}') TO '{tmp / f'part{i}.parquet'}' (FORMAT parquet)")
        raw.unlink()
    wall, rss, out = _run(["click-models", str(tmp / "part*.parquet"), "--models", "pbm,ubm,dbn"])
    print(f"{k} × 10,000,000 rows: `click-models 'part*.parquet' --models pbm,ubm,dbn` {wall:.2f} s wall, "
          f"peak RSS {rss:,.0f} MB")
    print(out)


if __name__ == "__main__":
    main()
