"""How fast the command line starts (#33): ``python -m ultr_core --help`` and ``ig`` on a four-line CSV, each
run as a fresh process, median of 5 (default flags; targets: < 0.3 s and < 1.0 s on the 2-core machine).

    python benchmarks/bench_cli.py [--runs 5]
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
FOUR = "query_id,doc_id,position,click\n1,a,1,1\n1,b,2,0\n2,a,2,0\n"


def wall(args: list[str], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "ultr_core", *args], cwd=ROOT, check=True, capture_output=True)
        out.append(time.perf_counter() - t0)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "four.csv"
        csv.write_text(FOUR)
        wall(["--help"], 1)                                  # warm the file cache once
        for label, args, target in (("--help", ["--help"], 0.3), ("ig four-line CSV", ["ig", str(csv)], 1.0)):
            t = wall(args, a.runs)
            print(f"{label:<20s} median {statistics.median(t):.2f} s  (min {min(t):.2f}, max {max(t):.2f}; "
                  f"target < {target} s)")


if __name__ == "__main__":
    main()
