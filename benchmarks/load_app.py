"""Load test: N concurrent browser sessions against one app server on loopback.

Each browser context opens Simulate with its own seed (one Streamlit session), then Train &
watch by link with ``steps`` and its seed (a second session on the default log), trains DLA
until the test metrics appear, and uploads a CSV click log on Upload until its report appears.  Reports the server's RSS
before, at the peak
and after the sessions end (the page caches are bounded by ULTR_APP_CACHE_BYTES, 1.5 GB by
default), and each session's latency per step.  Bounded: one pass per session, a time limit.

    python benchmarks/load_app.py [--sessions 8] [--timeout 600]
"""
from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))   # the browser helpers, tests/browser_flow.py
from browser_flow import ARGS, CHROMIUM, free_port  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def rss_mb(pid: int) -> float:
    """Resident memory of a process and its children (MB), from /proc."""
    total = 0
    for p in [pid] + _children(pid):
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


def _children(pid: int) -> list[int]:
    try:
        kids = [int(x) for x in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []
    return kids + [g for k in kids for g in _children(k)]


def make_csv(path: Path, rows: int = 200_000) -> None:
    import numpy as np
    import pandas as pd
    rng = np.random.default_rng(0)
    n = rows // 10
    q = rng.integers(0, 2_000, n)
    pd.DataFrame({"query_id": np.repeat(q, 10), "doc_id": rng.integers(0, 500, rows),
                  "position": np.tile(np.arange(1, 11), n), "click": (rng.random(rows) < 0.1).astype(int),
                  "device": np.repeat(rng.choice(["mobile", "desktop"], n), 10)}).to_csv(path, index=False)


async def session(browser, url: str, i: int, csv: Path, timings: list, errors: list, steps: int):
    ctx = await browser.new_context(viewport={"width": 1280, "height": 900})
    page = await ctx.new_page()
    try:
        t0 = time.time()
        await page.goto(url)
        await page.get_by_text("What is unbiased learning to rank?").wait_for(timeout=120_000)
        await page.goto(f"{url}/simulate?seed={i}&sessions=20000")
        await page.get_by_text("A sample of the log").wait_for(timeout=180_000)
        t1 = time.time()
        await page.goto(f"{url}/train?steps={steps}&seed={i}")
        await page.get_by_role("button", name="▶ Start training").click(timeout=120_000)
        await page.get_by_text("Test metrics").wait_for(timeout=400_000)
        t2 = time.time()
        await page.get_by_role("link", name="Upload a log").click()
        await page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(csv), timeout=180_000)
        await page.get_by_text("Position bias per connected component").wait_for(timeout=300_000)
        t3 = time.time()
        if await page.locator('[data-testid="stException"]').count():
            errors.append(f"session {i}: an exception is shown")
        timings.append({"session": i, "simulate_s": t1 - t0, "train_s": t2 - t1, "upload_s": t3 - t2,
                        "total_s": t3 - t0})
    except Exception as e:      # noqa: BLE001 — a load test reports failures, it does not stop at one
        errors.append(f"session {i}: {type(e).__name__}: {str(e).splitlines()[0][:200]}")
    finally:
        await ctx.close()


async def drive(url: str, n: int, csv: Path, timeout: float, steps: int):
    from playwright.async_api import async_playwright
    timings, errors = [], []
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        await asyncio.wait_for(asyncio.gather(*(session(browser, url, i, csv, timings, errors,
                                                        steps) for i in range(n))),
                               timeout)
        await browser.close()
    return timings, errors


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sessions", type=int, default=8)
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--steps", type=int, default=100, help="DLA training steps per session")
    a = ap.parse_args()
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "clicks.csv"
        make_csv(csv)
        env = {**os.environ, "ULTR_CACHE_DIR": str(Path(tmp) / "cache")}
        proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
                                 "--server.address", "127.0.0.1", "--server.headless", "true"],
                                cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        url = f"http://127.0.0.1:{port}"
        try:
            for _ in range(200):
                try:
                    if urllib.request.urlopen(url + "/_stcore/health", timeout=2).read() == b"ok":
                        break
                except OSError:
                    time.sleep(0.3)
            before = rss_mb(proc.pid)
            peak = [before]
            done = threading.Event()

            def watch():
                while not done.is_set():
                    peak[0] = max(peak[0], rss_mb(proc.pid))
                    time.sleep(0.5)
            threading.Thread(target=watch, daemon=True).start()
            t0 = time.time()
            timings, errors = asyncio.run(drive(url, a.sessions, csv, a.timeout, a.steps))
            wall = time.time() - t0
            done.set()
            time.sleep(5)                   # sessions disconnected; background jobs finished
            after = rss_mb(proc.pid)
        finally:
            proc.terminate()
            proc.wait(10)
    print(f"{a.sessions} concurrent sessions, {wall:.0f} s wall; server RSS before {before:.0f} MB, "
          f"peak {peak[0]:.0f} MB, after {after:.0f} MB")
    for key in ("simulate_s", "train_s", "upload_s", "total_s"):
        vals = [t[key] for t in timings]
        if vals:
            print(f"  {key:11s} median {statistics.median(vals):6.1f} s   max {max(vals):6.1f} s")
    print(f"  completed {len(timings)} of {a.sessions}; errors: {errors or 'none'}")


if __name__ == "__main__":
    main()
