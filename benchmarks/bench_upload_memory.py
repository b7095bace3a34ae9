"""One memory ceiling for the server (issue #49): three browsers upload a ~190 MB CSV each (three different logs)
at the same moment.

Reports the server's process tree (server and pool workers, RSS from /proc) before, at its peak, when the three
reports are on screen, and every 10 s for 60 s after the tabs close; and what each tab waited (the Upload page's
"Waiting for memory" line) and took.  The stated ceiling: the baseline plus ``ULTR_UPLOAD_MEMORY`` (3 GB: two
analyses at once, ``logs.bounds.UPLOAD_RSS_BUDGET`` each) plus the three files Streamlit holds.

    python benchmarks/bench_upload_memory.py [--browsers 3] [--mb 190]

Before issue #49 the tree went from 1.26 GB to 9.80 GB with three such uploads and still held 9.26 GB 30 s after
the tabs closed.
"""
from __future__ import annotations

import argparse
import asyncio
import os
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


def _children(pid: int) -> list[int]:
    """Every descendant (workers a thread other than the main one started too: /proc's per-task lists miss them)."""
    import psutil
    try:
        return [c.pid for c in psutil.Process(pid).children(recursive=True)]
    except psutil.Error:
        return []


def rss_mb(pid: int) -> float:
    """Resident memory of a process and all its descendants (MB)."""
    return sum(_own(p) for p in [pid] + _children(pid))


def _own(pid: int) -> float:
    try:
        line = next(x for x in Path(f"/proc/{pid}/status").read_text().splitlines() if x.startswith("VmRSS:"))
        return int(line.split()[1]) / 1024
    except (OSError, StopIteration):
        return 0.0


def make_csv(path: Path, mb: int, seed: int = 0) -> None:
    """A click log of about ``mb`` MB that the app keeps whole (under 2,000,000 impressions, so the click-model
    comparison runs too, in the pool's workers): sessions of 10 results, long string ids (hashed query and URL
    ids, as real logs ship them), 20,000 queries × 10 documents."""
    import numpy as np
    import pandas as pd
    rows = 1_950_000
    n = rows // 10
    rng = np.random.default_rng(seed)
    q = rng.integers(0, 20_000, n)
    pad = max(1, (mb * 2 ** 20 // rows - 44) // 2)                 # id length for about ``mb`` MB
    qid = np.char.add(f"q{seed}-", np.char.zfill(q.astype(str), pad))
    docs = np.repeat(q * 10, 10) + np.tile(np.arange(10), n)
    url = np.char.add("https://example.org/", np.char.zfill(docs.astype(str), pad + 8))
    frame = pd.DataFrame({"session_id": np.repeat(np.arange(n) + seed * n, 10), "query_id": np.repeat(qid, 10),
                          "doc_id": url, "position": np.tile(np.arange(1, 11), n),
                          "click": (rng.random(n * 10) < 0.1).astype(int)})
    frame.to_csv(path, index=False)


async def upload(browser, url: str, csv: Path, out: list) -> None:
    ctx = await browser.new_context(viewport={"width": 1280, "height": 900})
    page = await ctx.new_page()
    t0, waited = time.time(), False
    try:
        await page.goto(f"{url}/upload")
        await page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(csv), timeout=300_000)
        done = page.get_by_text("distinct (document, factor) pairs")
        while not await done.count():
            waited = waited or bool(await page.get_by_text("Waiting for memory").count())
            await page.wait_for_timeout(500)
            if time.time() - t0 > 900:
                raise TimeoutError("no report within 900 s")
        out.append({"seconds": time.time() - t0, "waited": waited,
                    "exception": bool(await page.locator('[data-testid="stException"]').count())})
    finally:
        await ctx.close()


async def drive(url: str, csvs: list) -> list:
    from playwright.async_api import async_playwright
    out: list = []
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        await asyncio.gather(*(upload(browser, url, csv, out) for csv in csvs))
        await browser.close()
    return out


def _serve(tmp: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {**os.environ, "ULTR_CACHE_DIR": str(Path(tmp) / "cache"), "ULTR_WARM_RUN": "0"}
    proc = subprocess.Popen([sys.executable, "scripts/serve.py", "--server.port", str(port), "--server.address",
                             "127.0.0.1", "--server.headless", "true"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(400):
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=2).read() == b"ok":
                break
        except OSError:
            time.sleep(0.3)
    return proc, url


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--browsers", type=int, default=3)
    ap.add_argument("--mb", type=int, default=190)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        csvs = [Path(tmp) / f"clicks{i}.csv" for i in range(a.browsers)]     # three logs: three analyses
        for i, csv in enumerate(csvs):
            make_csv(csv, a.mb, seed=i)
        size = csvs[0].stat().st_size / 2 ** 20
        proc, url = _serve(tmp)
        try:
            time.sleep(10)                                     # the warm-up's pool has started
            before = rss_mb(proc.pid)
            peak, stop = [before], threading.Event()

            def watch():
                while not stop.is_set():
                    peak[0] = max(peak[0], rss_mb(proc.pid))
                    time.sleep(0.25)
            threading.Thread(target=watch, daemon=True).start()
            t0 = time.time()
            tabs = asyncio.run(drive(url, csvs))
            wall, closed = time.time() - t0, rss_mb(proc.pid)
            after = []
            for _ in range(6):
                time.sleep(10)
                after.append(rss_mb(proc.pid))
            split = f"server {_own(proc.pid):,.0f} MB, workers " + ", ".join(
                f"{_own(p):,.0f}" for p in _children(proc.pid)) + " MB"
            stop.set()
        finally:
            proc.terminate()
            proc.wait(20)
    print(f"{a.browsers} uploads of {size:.0f} MB at once, "
          f"load average {os.getloadavg()[0]:.2f}: all reports after {wall:.0f} s")
    print(f"  process tree: before {before:,.0f} MB, peak {peak[0]:,.0f} MB, tabs closing {closed:,.0f} MB; after "
          + ", ".join(f"{10 * (i + 1)} s {m:,.0f} MB" for i, m in enumerate(after)))
    print(f"  60 s after: {split}")
    for i, t in enumerate(sorted(tabs, key=lambda t: t["seconds"])):
        print(f"  tab {i + 1}: report after {t['seconds']:.0f} s, waited for memory: {t['waited']}, "
              f"exception shown: {t['exception']}")


if __name__ == "__main__":
    main()
