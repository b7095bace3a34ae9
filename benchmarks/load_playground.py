"""The classroom in a real browser: a freshly started server (``scripts/serve.py``, the README's
command) visited by headless chromium contexts, one Streamlit session each.

Scenarios (all by default, or ``--only cold,crowd,mixed``):

* **cold** — one visitor opens the default Playground URL as soon as the server answers its health
  check: seconds to the first chart and to the result table; then a second visitor (warm server);
  then that visitor moves the η slider (keyboard) and we time the first new training point.
* **crowd** — ``--crowd`` visitors (30) open the default URL at the same moment.
* **mixed** — ``--mixed`` visitors (8) open the Playground with 8 different settings at once (``MIXED``:
  each changes one knob — η, ε, coupling, top-k, exploration, contexts or the seed): when each sees
  its queue position or progress, its first chart and its table; compared with the same 8 runs
  (fresh seeds) trained one after another in one process.
* **presets-warmed** — the same on a server started as README's command starts it, which queues every story's
  runs when it starts (pages/_warm.py), once it is idle again;
* **presets** — on a server with an empty result cache, one visitor after another opens each
  Playground story preset (``?preset=…``: 5 seeds) and waits until the results tile reads the
  preset's claims over all five seeds: seconds to the first chart and to the verdict, and the verdict.
* after each scenario the contexts close and we time how long the server's process tree takes to
  return to idle (CPU < 10 % of one core over 1 s).  RSS = server plus worker processes.

    python benchmarks/load_playground.py [--crowd 30] [--mixed 8] [--only cold,crowd,mixed,presets,presets-warmed]
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))   # the browser helpers, tests/browser_flow.py
from browser_flow import ARGS, CHROMIUM, STORY_VERDICT_JS, VERDICT_JS, serve_app, wait_idle  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

CHART = '[data-testid="stPlotlyChart"]'
TABLE = '[data-testid="stDataFrame"]'


def tree(pid: int) -> list:
    p = psutil.Process(pid)
    return [p, *p.children(recursive=True)]


def rss_mb(pid: int) -> float:
    return sum(p.memory_info().rss for p in tree(pid)) / 2 ** 20


def cpu_seconds(pid: int) -> float:
    """CPU seconds used so far by the server's process tree (its workers included).  The
    simulated visitors' chromium runs on the same two cores and takes the rest."""
    total = 0.0
    for p in tree(pid):
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.NoSuchProcess:
            pass
    return total


async def _visitor(browser, url: str, out: dict, size, steps, timeout: float = 600.0) -> None:
    """One visitor in a fresh browser context: open ``url``, run ``steps(page, t0)`` (which records its
    times in ``out``), then note a shown exception; an error goes into ``out["error"]``, never raised, so
    one visitor does not stop the others.  ``timeout``: seconds for the page and for each step's wait."""
    ctx = await browser.new_context(viewport={"width": size[0], "height": size[1]})
    ctx.set_default_timeout(timeout * 1000)
    page = await ctx.new_page()
    t0 = time.time()
    try:
        await page.goto(url)
        await steps(page, t0)
        if await page.locator('[data-testid="stException"]').count():
            out["error"] = "an exception is shown"
    except Exception as e:          # noqa: BLE001 — report, do not stop the other visitors
        out["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"
    finally:
        await ctx.close()


async def visit(browser, url: str, out: dict, size=(1280, 720), move_knob: bool = False, timeout: float = 600.0):
    async def steps(page, t0):
        q = page.get_by_text("Queued — position").or_(page.get_by_text("training — step")).or_(page.locator(TABLE))
        await q.first.wait_for()
        out["status_s"] = time.time() - t0
        await page.locator(CHART).first.wait_for()
        out["chart_s"] = time.time() - t0
        await page.locator(TABLE).first.wait_for()
        out["table_s"] = time.time() - t0
        if move_knob:
            slider = page.get_by_role("slider").first               # position bias η
            await slider.focus()
            t1 = time.time()
            await page.keyboard.press("ArrowRight")
            await page.get_by_text("training — step").first.wait_for(timeout=60_000)
            out["knob_restart_s"] = time.time() - t1
            # first new point: the progress text shows a step > 0
            await page.wait_for_function(
                "() => [...document.querySelectorAll('*')].some(e => /training — step [1-9]/.test(e.textContent))",
                timeout=60_000)
            out["knob_point_s"] = time.time() - t1
    await _visitor(browser, url, out, size, steps, timeout)


async def preset_visit(browser, url: str, out: dict, size=(1280, 720), about_log: bool = False):
    """One visitor opens a preset's URL and waits for the claims' verdict over its five seeds (``about_log``: a
    story about the log itself, whose verdict line sits above the tiles)."""
    async def steps(page, t0):
        await page.locator(CHART).first.wait_for(timeout=600_000)
        out["chart_s"] = time.time() - t0
        if about_log:
            handle = await page.wait_for_function(STORY_VERDICT_JS, timeout=600_000, polling=250)
            out["verdict_s"] = time.time() - t0
            out["verdict"] = (await handle.json_value()).split("seeds:", 1)[1].strip()
            return
        await page.locator(TABLE).first.wait_for(timeout=600_000)
        out["table_s"] = time.time() - t0                           # the first seed's results
        handle = await page.wait_for_function(VERDICT_JS, timeout=600_000, polling=250)
        out["verdict_s"] = time.time() - t0
        out["verdict"] = (await handle.json_value()).split("Claims", 1)[1].strip(" —")
    await _visitor(browser, url, out, size, steps)


async def presets_one_by_one(url: str) -> list[dict]:
    from urllib.parse import quote_plus

    from playwright.async_api import async_playwright

    from ultr_core.app.playground import PRESETS
    outs = []
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        for preset in PRESETS:
            out = {"preset": preset.name}
            await preset_visit(browser, f"{url}/?preset={quote_plus(preset.name)}", out,
                               about_log=bool(preset.log_claims))
            outs.append(out)
            print(f"  {preset.name}: first chart {out.get('chart_s', float('nan')):.1f} s, first seed's table "
                  f"{out.get('table_s', float('nan')):.1f} s, verdict over 5 seeds "
                  f"{out.get('verdict_s', float('nan')):.1f} s — {out.get('verdict') or out.get('error')}", flush=True)
        await browser.close()
    return outs


async def crowd(url: str, paths: list[str], **kw) -> list[dict]:
    from playwright.async_api import async_playwright
    outs = [{} for _ in paths]
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        await asyncio.gather(*(visit(browser, url + path, o, **kw) for path, o in zip(paths, outs)))
        await browser.close()
    return outs


def run_crowd(pid: int, url: str, paths: list[str], **kw) -> list[dict]:
    """:func:`crowd` and the CPU seconds the server and the browsers used meanwhile."""
    before, t0 = cpu_seconds(pid), time.time()
    outs = asyncio.run(crowd(url, paths, **kw))
    after, wall = cpu_seconds(pid), time.time() - t0
    print(f"  CPU over {wall:.0f} s: server and workers {after - before:.0f} s of the {2 * wall:.0f} s two cores "
          "offer (the browsers take the rest)")
    return outs


def summary(name: str, outs: list[dict],
            keys=("status_s", "chart_s", "table_s", "knob_restart_s", "knob_point_s")) -> None:
    """Visitors that finished, the first errors, and median / max seconds per measured ``keys``."""
    errors = [o["error"] for o in outs if "error" in o]
    print(f"{name}: {len(outs) - len(errors)} of {len(outs)} visitors finished; errors: {errors[:3] or 'none'}")
    for key in keys:
        vals = [o[key] for o in outs if key in o]
        if vals:
            print(f"  {key:15s} median {statistics.median(vals):6.1f} s   max {max(vals):6.1f} s")


# The mixed scenario's 8 settings: what 8 students exploring the knobs would open — each differs from
# the default in one knob (the page's query keys; every other knob at its default).  More visitors than
# settings take the same settings with a different seed.
MIXED = ({"eta": 0.5}, {"eta": 2.0}, {"noise": 0.3}, {"coupling": 0.3}, {"topk": 5}, {"shuffle": 0.5},
         {"contexts": 5}, {"seed": 1})


def mixed_settings(n: int, seed_offset: int = 0) -> list[dict]:
    """``n`` different settings (``MIXED``, cycled with the seed raised by 10 per cycle), each with
    ``seed_offset`` added to its seed — fresh seeds make the same work with nothing cached."""
    out = []
    for i in range(n):
        kw = dict(MIXED[i % len(MIXED)])
        kw["seed"] = kw.get("seed", 0) + 10 * (i // len(MIXED)) + seed_offset
        out.append(kw)
    return out


def mixed_query(kw: dict) -> str:
    """The Playground URL query of one setting (``seed`` kept, so a visitor opens exactly that run)."""
    return "&".join(f"{k}={v}" for k, v in kw.items())


def sequential_seconds(settings: list[dict]) -> float:
    """The same runs as the mixed scenario, one after another in this process (one torch thread,
    like a pool worker): simulation included."""
    import torch

    from ultr_core.app.playground import PlaygroundSettings
    from ultr_core.studies.experiment import train_spec
    torch.set_num_threads(1)
    t0 = time.time()
    for kw in settings:
        for _, _, args, kws in PlaygroundSettings(**kw).jobs():
            train_spec(*args, **kws)
    return time.time() - t0


def cli(doc: str, only: str, browsers: int | None = None):
    """The load scripts' common flags: ``--crowd``, ``--mixed`` and ``--only`` (default ``only``),
    and ``--browsers`` where a default is given; returns the parsed flags and the set of scenarios to run."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--crowd", type=int, default=30)
    ap.add_argument("--mixed", type=int, default=8)
    if browsers is not None:
        ap.add_argument("--browsers", type=int, default=browsers)
    ap.add_argument("--only", default=only)
    a = ap.parse_args()
    return a, set(a.only.split(","))


def main():
    a, only = cli(__doc__, "cold,crowd,mixed")
    t0 = time.time()
    if only & {"cold", "crowd", "mixed"}:
        classroom(a, only, t0)
    if "presets" in only:
        import tempfile
        with tempfile.TemporaryDirectory() as cache, serve_app(cache_dir=cache) as url:    # nothing cached
            print("presets (one visitor after another, a fresh server with an empty result cache):")
            asyncio.run(presets_one_by_one(url))
    if "presets-warmed" in only:                  # the README's serve.py: it queues the stories when it starts
        import tempfile
        with tempfile.TemporaryDirectory() as cache, serve_app(cache_dir=cache, warm_stories=True) as url:
            t1 = time.time()
            while time.time() - t1 < 900:                   # idle twice, 5 s apart: not a pause between two runs
                wait_idle(url.pid, 900)
                time.sleep(5)
                if wait_idle(url.pid, 2) < 2:
                    break
            print(f"presets on a server that warmed them (idle {time.time() - t1:.0f} s after it was healthy), one "
                  "visitor after another:")
            asyncio.run(presets_one_by_one(url))


def classroom(a, only: set, t0: float) -> None:
    with serve_app() as url:                      # python scripts/serve.py, the README's command
        print(f"server healthy after {time.time() - t0:.1f} s; RSS {rss_mb(url.pid):.0f} MB")
        if "cold" in only:
            summary("cold (first visitor on a fresh server)", run_crowd(url.pid, url, ["/"]))
            summary("warm (second visitor)", run_crowd(url.pid, url, ["/"], move_knob=True))
            print(f"  idle again {wait_idle(url.pid, 60):.1f} s after the visitor left; RSS {rss_mb(url.pid):.0f} MB")
        if "crowd" in only:
            peak = rss_mb(url.pid)
            outs = run_crowd(url.pid, url, ["/"] * a.crowd)
            summary(f"crowd ({a.crowd} visitors, default URL)", outs)
            print(f"  idle again {wait_idle(url.pid, 60):.1f} s after they left; RSS {max(peak, rss_mb(url.pid)):.0f} "
                  f"MB")
        if "mixed" in only:
            t1 = time.time()
            outs = run_crowd(url.pid, url, [f"/?{mixed_query(kw)}" for kw in mixed_settings(a.mixed)])
            wall = max(o.get("table_s", float("inf")) for o in outs)
            summary(f"mixed ({a.mixed} visitors, {a.mixed} different settings)", outs)
            print(
                f"  RSS after {rss_mb(url.pid):.0f} MB; all tables after {wall:.1f} s ({time.time() - t1:.1f} s wall)"
            )
            print(f"  idle again {wait_idle(url.pid, 60):.1f} s after they left")
            seq = sequential_seconds(mixed_settings(a.mixed, seed_offset=100))      # fresh seeds: nothing cached
            print(f"  the same work one after another: {seq:.1f} s → ratio {wall / seq:.2f} (target ≤ 1.5)")


if __name__ == "__main__":
    main()
