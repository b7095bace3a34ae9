"""Click models on a busy machine (issue #49): the default ``click-models LOG`` (all ten models) on a 30,000-session
log with DBN clicks, idle and with ``--busy`` other processes spinning on the cores, whole CLI process, medians.

    python benchmarks/bench_click_models_load.py [--runs 3] [--busy 2] [--sessions 30000]

Prints the machine's load average beside every figure, each model's own seconds (the CLI's table) and the ratio
loaded / idle (target ≤ 2.5; all ten models' own seconds < 5 s idle).  Before issue #49 the cascade fits (DBN, CCM)
ran on torch's default threads, which spin against other processes: DBN 2.6 s idle, 11.7 s beside two busy
processes on this 2-core machine; with one thread (``clickmodels.gradient.FIT_THREADS``) 4.1 s.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ultr_core", *args], cwd=ROOT, capture_output=True, text=True,
                          check=True)


def _once(log: str) -> tuple[float, dict]:
    t0 = time.perf_counter()
    out = _cli("click-models", log).stdout
    wall = time.perf_counter() - t0
    seconds = {line.split()[0]: float(line.split()[-1]) for line in out.splitlines()[2:] if line.strip()}
    return wall, seconds


def _series(log: str, runs: int) -> tuple[float, dict, float]:
    walls, models = [], []
    for _ in range(runs):
        w, s = _once(log)
        walls.append(w)
        models.append(s)
    med = {k: statistics.median(m[k] for m in models) for k in models[0]}
    return statistics.median(walls), med, os.getloadavg()[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--busy", type=int, default=2, help="spinning processes beside the loaded runs")
    ap.add_argument("--sessions", type=int, default=30_000)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        log = str(Path(tmp) / "dbn.csv")
        _cli("simulate", "--click-model", "dbn", "--sessions", str(a.sessions), "--out", log)
        _once(log)                                                   # warm-up: imports and the page cache
        idle = _series(log, a.runs)
        spin = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(a.busy)]
        try:
            time.sleep(1.0)
            loaded = _series(log, a.runs)
        finally:
            for p in spin:
                p.kill()
    for name, (wall, models, load) in (("idle", idle), (f"{a.busy} busy", loaded)):
        print(f"{name:>8}: {wall:6.2f} s whole command (median of {a.runs}), models {sum(models.values()):5.2f} s "
              f"(DBN {models['DBN']:.2f}, CCM {models['CCM']:.2f}), load average {load:.2f}")
    print(f"   ratio: {loaded[0] / idle[0]:.2f} whole command, {sum(loaded[1].values()) / sum(idle[1].values()):.2f} "
          "models (target ≤ 2.5)")


if __name__ == "__main__":
    main()
