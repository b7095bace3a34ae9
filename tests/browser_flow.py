"""Shared by the browser test and scripts/screenshots.py: serve the app, drive Debian's
chromium with Playwright through the main flow (Home → Simulate → Train & watch)."""
from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("ULTR_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-quic",
        "--no-first-run", "--disable-component-update", "--disable-sync"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerURL(str):
    """The app's URL, carrying the server's process id (``.pid``) for CPU and memory checks."""
    pid: int


@contextlib.contextmanager
def serve_app(timeout: float = 60, cache_dir=None, warm_run: bool = True, warm_stories: bool = False):
    port = free_port()
    inherited = {k: v for k, v in os.environ.items() if k != "ULTR_APP_WORKERS"}   # the app's own pool size
    env = {**inherited, "ULTR_CACHE_DIR": str(cache_dir or os.environ.get("ULTR_CACHE_DIR", ROOT / ".ultr_cache")),
           "ULTR_WARM_RUN": "1" if warm_run else "0", "ULTR_WARM_STORIES": "1" if warm_stories else "0"}
    proc = subprocess.Popen([sys.executable, "scripts/serve.py", "--server.port", str(port),
                             "--server.address", "127.0.0.1", "--server.headless", "true"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                if urllib.request.urlopen(url + "/_stcore/health", timeout=2).read() == b"ok":
                    break
            except OSError:
                time.sleep(0.3)
        else:
            raise RuntimeError("streamlit did not become healthy")
        served = ServerURL(url)
        served.pid = proc.pid
        yield served
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


@contextlib.contextmanager
def browser_page(width: int = 1400, height: int = 1000):
    """A page of a fresh headless Debian chromium (closed on exit)."""
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            yield browser.new_page(viewport={"width": width, "height": height})
        finally:
            browser.close()
    

def open_home(page, url: str) -> None:
    """Open the Home page (the root is the Playground, which would start a training run) and wait
    for it; a deep link works on a cold server too (run_cold_deep_link)."""
    page.goto(url + "/home")
    page.get_by_text("What is unbiased learning to rank?").wait_for(timeout=30_000)


def run_main_flow(url: str, screenshots: Path | None = None) -> dict:
    """Home → Simulate (CTR chart) → Train & watch (start DLA, live charts, metrics table).
    Returns timings and what was seen; raises on an error element or a missing chart."""
    seen = {}
    with browser_page() as page:
        t0 = time.time()
        open_home(page, url)
        seen["home_s"] = time.time() - t0
        if screenshots:
            page.screenshot(path=str(screenshots / "home.png"))
        t1 = time.time()
        page.get_by_role("link", name="Simulate").click()
        page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)
        page.get_by_text("A sample of the log").wait_for(timeout=60_000)
        seen["simulate_s"] = time.time() - t1
        _no_error(page)
        if screenshots:
            page.wait_for_timeout(800)
            page.screenshot(path=str(screenshots / "simulate.png"))
        page.get_by_role("link", name="Train & watch").click()
        page.get_by_role("button", name="▶ Start training").wait_for(timeout=30_000)
        t2 = time.time()
        page.get_by_role("button", name="▶ Start training").click()
        page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)     # the live chart appears
        seen["live_chart_s"] = time.time() - t2
        page.get_by_text("Test metrics").wait_for(timeout=120_000)
        seen["train_done_s"] = time.time() - t2
        seen["flow_s"] = time.time() - t1
        seen["charts"] = page.locator(".js-plotly-plot").count()
        _no_error(page)
        if screenshots:
            page.wait_for_timeout(800)
            page.screenshot(path=str(screenshots / "train.png"), full_page=True)
            for link, name in (("Identifiability", "identifiability.png"),):
                page.get_by_role("link", name=link).click()
                page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)
                page.locator("iframe").first.content_frame.locator("canvas").first.wait_for(timeout=30_000)
                page.locator("iframe").first.scroll_into_view_if_needed()
                page.wait_for_timeout(3000)                    # the interactive graph's layout settles
                _no_error(page)
                page.screenshot(path=str(screenshots / name))
    return seen


def _no_error(page):
    errors = page.locator('[data-testid="stException"], [data-testid="stAlertContentError"]')
    if errors.count():
        raise AssertionError(f"the page shows an error: {errors.first.inner_text()[:300]}")


def run_hostile_flow(url: str, upload_path: Path, shot: Path | None = None) -> dict:
    """A crafted Simulate link (out-of-range values) and an upload whose name and values carry
    HTML: the pages must show notices and messages, never a traceback or rendered markup."""
    seen = {}
    with browser_page() as page:
        open_home(page, url)                   # the app registers its navigation on the first visit
        page.goto(url + "/simulate?seed=-1&sessions=99999999999&contexts=-1&eta=5&dataset=/etc/passwd")
        page.get_by_text("A sample of the log").wait_for(timeout=60_000)
        seen["notices"] = page.get_by_text("Link setting corrected").count()
        seen["exceptions"] = page.locator('[data-testid="stException"]').count()
        page.get_by_role("link", name="Upload a log").click()
        page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(upload_path))
        page.get_by_text("Position bias per connected component").wait_for(timeout=60_000)
        _pick(page, page.locator('[data-testid="stMultiSelect"]').first, "vertical")   # the HTML-carrying column
        page.get_by_text("vertical=").first.wait_for(timeout=60_000)  # it reached the report
        page.get_by_test_id("stSidebarNavItems").get_by_role("link", name="Identifiability").click()
        page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)
        page.get_by_text("current log (Simulate / Upload page)").click()
        page.wait_for_timeout(1500)                                   # the page reruns on the new source
        _pick(page, page.locator('section[data-testid="stSidebar"] [data-testid="stMultiSelect"]').first,
              "vertical")
        frame_el = page.locator("iframe").first                       # the interactive IG view
        frame_el.wait_for(timeout=60_000)
        frame = frame_el.content_frame
        frame.locator("canvas").first.wait_for(timeout=30_000)
        page.wait_for_function(                                        # the hostile labels reached the graph
            "() => { const f = document.querySelector('iframe'); const n = f && f.contentWindow.network;"
            " return n && n.body.data.nodes.get().some(x => String(x.label).includes('vertical=<')); }",
            timeout=60_000)
        seen["injected_in_graph"] = frame.locator('a[href*="evil.example"], img[src="x"], b').count()
        page.wait_for_timeout(1000)
        if shot:
            page.screenshot(path=str(shot), full_page=True)
        seen["exceptions"] += page.locator('[data-testid="stException"]').count()
        seen["injected"] = page.locator('a[href*="evil.example"], img[src="x"], b:text("bold")').count()
        seen["alerts"] = []
        page.on("dialog", lambda d: (seen["alerts"].append(d.message), d.dismiss()))
        page.wait_for_timeout(500)
    return seen


def _pick(page, multiselect, option: str, tries: int = 6) -> None:
    """Add ``option`` to a Streamlit multiselect, retrying while the page is still rerunning
    (a rerun re-renders the widget and closes its menu)."""
    for _ in range(tries):
        multiselect.click()
        opt = page.get_by_role("option", name=option)
        try:
            opt.wait_for(timeout=5_000)
            opt.click()
            page.keyboard.press("Escape")
            return
        except Exception:            # noqa: BLE001 — playwright's TimeoutError: try again
            page.keyboard.press("Escape")
            page.wait_for_timeout(1_000)
    raise AssertionError(f"could not pick {option!r} in the multiselect")


def run_playground(url: str, shot: Path | None = None) -> dict:
    """The Playground at 1280×720 on a cold server: the first validation curve and the finished
    run's table appear by themselves, every tile lies inside the screen, and moving η with the
    keyboard restarts training on the new log (its results replace the old ones)."""
    seen = {}
    with browser_page(1280, 720) as page:
        t0 = time.time()
        page.goto(url)
        curves = page.locator(".js-plotly-plot").nth(1)
        curves.locator(".scatterlayer .trace").first.wait_for(timeout=120_000)     # waits are hang guards
        seen["first_curve_s"] = time.time() - t0
        table = page.locator('[data-testid="stDataFrame"]')
        table.first.wait_for(timeout=90_000)
        seen["run_s"] = time.time() - t0
        page.wait_for_timeout(1_000)
        boxes = [page.locator(".js-plotly-plot").nth(i).bounding_box() for i in range(3)] + [table.first.bounding_box()]
        seen["lowest_tile_px"] = max(b["y"] + b["height"] for b in boxes)
        seen["widest_tile_px"] = max(b["x"] + b["width"] for b in boxes)
        if shot:
            page.screenshot(path=str(shot))
        eta = page.get_by_role("slider").first                      # position bias η, step 0.25
        eta.focus()
        t1 = time.time()
        for _ in range(4):
            eta.press("ArrowRight")
            page.wait_for_timeout(300)
        page.get_by_text("training — step").first.wait_for(timeout=60_000)
        seen["restart_s"] = time.time() - t1
        table.first.wait_for(timeout=90_000)
        seen["rerun_s"] = time.time() - t1
        seen["url"] = page.url
        seen["exceptions"] = page.locator('[data-testid="stException"]').count()
    return seen


#: the lowest and rightmost edge of the main area's elements, and the elements that scroll
_FIT_JS = """() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const els = [...main.querySelectorAll('[data-testid="stElementContainer"]')]
      .filter(e => e.getBoundingClientRect().height > 0);
  const scrolls = [...document.querySelectorAll('*')].filter(e => e.scrollHeight > e.clientHeight + 2
      && ['auto', 'scroll'].includes(getComputedStyle(e).overflowY)).map(e => e.dataset.testid || e.tagName);
  // per chart: does its legend's box meet the x-axis title or tick labels (a legend drawn onto the axis)?
  const meet = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  const overlaps = [...document.querySelectorAll('.js-plotly-plot')].map(plot => {
    const legend = plot.querySelector('g.legend');
    if (!legend) return null;
    const l = legend.getBoundingClientRect();
    const axis = [...plot.querySelectorAll('.g-xtitle, .xtick text')].map(e => e.getBoundingClientRect())
        .filter(r => r.height > 0);
    return axis.some(r => meet(l, r)) ? (plot.querySelector('.gtitle') || {}).textContent || '?' : null;
  }).filter(x => x);
  return {bottom: Math.max(...els.map(e => e.getBoundingClientRect().bottom)),
          right: Math.max(...els.map(e => e.getBoundingClientRect().right)), scrolls: scrolls,
          charts: document.querySelectorAll('.js-plotly-plot').length, legend_on_axis: overlaps};
}"""


#: the Playground results tile's verdict line once a preset's five seeds are in (None before)
VERDICT_JS = ("() => [...document.querySelectorAll('[data-testid=\"stCaptionContainer\"]')]"
              ".map(e => e.textContent).find(t => /over 5 of 5 seeds\\. Claims/.test(t)) || null")
#: a story about the log itself: its verdict line above the tiles
STORY_VERDICT_JS = ("() => [...document.querySelectorAll('[data-testid=\"stAlert\"]')]"
                    ".map(e => e.textContent).find(t => /Verdict over 5 seeds:/.test(t)) || null")


def fit_seen(page) -> dict:
    """The finished Playground's layout as :func:`playground_fit` reads it (after its three charts have drawn)."""
    page.locator(".js-plotly-plot").nth(2).wait_for(timeout=60_000)
    page.wait_for_timeout(1_000)
    seen = page.evaluate(_FIT_JS)
    seen["exceptions"] = page.locator('[data-testid="stException"]').count()
    seen["verdict"] = page.evaluate(VERDICT_JS)
    seen["text"] = page.evaluate("() => document.body.innerText")[:20_000]
    return seen


def playground_fit(url: str, width: int, height: int, query: str = "", shot: Path | None = None) -> dict:
    """The Playground at ``width``×``height`` with URL ``query`` (a preset, presentation mode) once
    its run has finished: the lowest and rightmost edge of its elements, which elements scroll,
    the number of charts and of exceptions, and a preset's verdict line (``verdict``; None without)."""
    with browser_page(width, height) as page:
        page.goto(url + "/" + query)
        page.locator('[data-testid="stDataFrame"]').first.wait_for(timeout=300_000)      # hang guards
        page.wait_for_function("() => !document.body.innerText.includes('training — step')", timeout=300_000)
        seen = fit_seen(page)
        if shot:
            page.screenshot(path=str(shot))
    return seen


#: the sidebar with its run settings open: does it scroll, is the page list shown, which widget labels wrap
_SIDEBAR_JS = """() => {
  const side = document.querySelector('[data-testid="stSidebarContent"]');
  const nav = document.querySelector('[data-testid="stSidebarNav"]');
  const wrapped = [...side.querySelectorAll('[data-testid="stWidgetLabel"] p')].filter(p => {
    const line = parseFloat(getComputedStyle(p).lineHeight) || 16;
    return p.getBoundingClientRect().height > 1.5 * line;
  }).map(p => p.textContent);
  return {overflow_px: side.scrollHeight - side.clientHeight, nav_shown: !!(nav && nav.offsetParent), wrapped: wrapped};
}"""


def run_settings_fit(url: str, sizes, shot: Path | None = None) -> dict:
    """The Playground's "run settings" expander opened with a click, then read at each ``(width, height)``
    of ``sizes`` (the viewport resized, the same page): the sidebar's state open (``open``, one per size),
    whether it stays open after a setting inside it changes (``stays_open``) and after a second click
    closes it (``closed``, at the last size)."""
    with browser_page(*sizes[0]) as page:
        page.goto(url + "/")
        page.locator('[data-testid="stDataFrame"]').first.wait_for(timeout=300_000)
        toggle = page.locator('section[data-testid="stSidebar"]').get_by_text("run settings")
        toggle.click()
        page.locator('section[data-testid="stSidebar"]').get_by_text("learning rate").wait_for(timeout=30_000)
        seen = {"open": {}}
        for width, height in sizes:
            page.set_viewport_size({"width": width, "height": height})
            page.wait_for_timeout(800)
            seen["open"][(width, height)] = page.evaluate(_SIDEBAR_JS)
            if shot:
                page.screenshot(path=str(shot.with_name(f"{shot.stem}_{width}{shot.suffix}")))
        thumb = page.get_by_role("group", name="seeds").locator('input[type="range"]')     # "seeds": move it
        thumb.focus()
        thumb.press("ArrowRight")
        page.wait_for_timeout(2500)                                 # the page reruns with the new setting
        seen["stays_open"] = page.locator('section[data-testid="stSidebar"] details[open]').count() > 0
        toggle.click()
        page.wait_for_timeout(800)
        seen["closed"] = page.evaluate(_SIDEBAR_JS)
    return seen


#: formulas whose rendered width exceeds their column (KaTeX clips them: the end of the equation is lost)
CLIPPED_FORMULAS_JS = """() => [...document.querySelectorAll('.katex-display')].map(d => {
  const k = d.querySelector('.katex-html');
  if (!k) return null;
  const inner = Math.max(...[...k.children].map(c => c.getBoundingClientRect().right));
  const col = d.getBoundingClientRect().right;
  return inner > col + 1 && d.getBoundingClientRect().width > 0 ? (d.textContent || '').slice(0, 40) : null;
}).filter(x => x)"""


def clipped_formulas(url: str, sizes) -> dict:
    """Per page (every method's formula on Compare, "Methods and formulas" open) and per ``(width, height)``
    of ``sizes`` (the viewport resized, the page loaded once): the formulas cut off, under
    ``(size, path)``, and how many formulas the page printed, under ``(path, "formulas")``."""
    from urllib.parse import quote

    from ultr_core.algorithms import ALGORITHMS
    every = ",".join(ALGORITHMS.values())
    out = {}
    with browser_page(*sizes[0]) as page:
        for path in ["/home", "/heatmaps", "/identifiability", "/train", "/compare?methods=" + quote(every)]:
            page.set_viewport_size(dict(zip(("width", "height"), sizes[0])))
            page.goto(url + path)
            page.locator(".katex-display").first.wait_for(state="attached", timeout=60_000)
            for ex in page.get_by_text("Methods and formulas").all():
                ex.click()
            page.wait_for_timeout(1_500)
            name = path.split("?")[0]
            out[(name, "formulas")] = page.locator(".katex-display").count()
            for width, height in sizes:
                page.set_viewport_size({"width": width, "height": height})
                page.wait_for_timeout(600)
                out[((width, height), name)] = page.evaluate(CLIPPED_FORMULAS_JS)
    return out


def server_cpu(pid: int, interval: float = 1.0) -> float:
    """CPU of the server's process tree (its pooled workers included) over ``interval`` seconds;
    100 = one core busy."""
    import psutil
    procs = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
    for p in procs:
        p.cpu_percent(None)
    time.sleep(interval)
    total = 0.0
    for p in procs:
        try:
            total += p.cpu_percent(None)
        except psutil.NoSuchProcess:
            pass
    return total


def wait_idle(pid: int, limit: float) -> float:
    """Seconds until the server's tree uses under 10 % of a core over one second (inf after ``limit``)."""
    t0 = time.time()
    while time.time() - t0 < limit:
        if server_cpu(pid) < 10:
            return time.time() - t0
    return float("inf")
