"""Real-browser flows of single pages (headless chromium, clicks only): closing a tab, cold deep links, the
interactive graph, a heat-map cell, Compare and Upload, Upload → Identifiability, a presentation link. The server and
browser helpers are in browser_flow.py."""

from __future__ import annotations

import re
import time
from pathlib import Path

from browser_flow import _no_error, browser_page, open_home, server_cpu, wait_idle


def run_closed_tab(url) -> dict:
    """Start a long training on Train & watch (DLA, 5,000 steps, no references), see it run, close
    the tab: the job must stop and the server's CPU return to idle."""
    seen = {"idle_before_s": wait_idle(url.pid, 120)}             # the warm-up (if any) is done
    with browser_page(1280, 720) as page:
        page.goto(url + "/train?algorithms=DLA&steps=5000&refs=0")
        page.get_by_role("button", name="▶ Start training").click(timeout=60_000)
        page.get_by_text("running — step").first.wait_for(timeout=60_000)
        page.wait_for_timeout(2_000)
        seen["busy_cpu"] = max(server_cpu(url.pid) for _ in range(3))      # a training shares the cores with the other
                                                                            # test worker: its best second of three
        page.close()
        t0 = time.time()
        wait_idle(url.pid, 60)
        seen["idle_after_close_s"] = time.time() - t0
    return seen


def run_cold_deep_link(url: str) -> dict:
    """The first visit after a server start is a page URL with settings: the app's own
    navigation (not the pages/ folder's file names) and the URL's settings must appear."""
    with browser_page(1280, 720) as page:
        page.goto(url + "/simulate?eta=0.5&sessions=2000&seed=3")
        page.get_by_text("A sample of the log").wait_for(timeout=60_000)
        nav_el = page.locator('[data-testid="stSidebarNav"]')
        try:                                # the navigation renders beside the page: wait for its links
            nav_el.get_by_text("Train & watch").wait_for(timeout=20_000)
        except Exception:                   # noqa: BLE001 - the assertion reports what the nav shows
            pass
        nav = nav_el.inner_text()
        metric = page.locator('[data-testid="stMetricValue"]').first
        for _ in range(40):                 # a loaded server may still be drawing the run the URL asked for
            if metric.inner_text() == "2,000":
                break
            page.wait_for_timeout(500)
        sessions = metric.inner_text()
    return {"nav": nav, "sessions": sessions}


def run_interactive_graph(url: str, shot: Path | None = None) -> dict:
    """The Identifiability page's interactive IG view: vis-network draws on a canvas inside the
    page's iframe (inlined, no network).  A plain mouse wheel over it scrolls the page (the graph
    keeps its scale); ctrl + wheel zooms the graph."""
    seen = {}
    with browser_page() as page:
        open_home(page, url)
        page.get_by_test_id("stSidebarNavItems").get_by_role("link", name="Identifiability").click()
        frame_el = page.locator("iframe").first
        frame_el.wait_for(timeout=60_000)
        frame = frame_el.content_frame
        frame.locator("canvas").first.wait_for(timeout=30_000)
        page.wait_for_timeout(2_000)                                   # physics settles
        seen["nodes"] = frame.locator("body").evaluate("() => network.body.data.nodes.length")
        scale = "() => network.getScale()"
        scrolled = ("() => Math.max(window.scrollY, ...[...document.querySelectorAll('*')]"
                    ".filter(e => e.scrollHeight > e.clientHeight).map(e => e.scrollTop))")
        before, top = frame.locator("body").evaluate(scale), page.evaluate(scrolled)
        box = frame_el.bounding_box()
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.mouse.wheel(0, 300)                                       # a reader scrolling down the page
        page.wait_for_timeout(800)
        seen["wheel_scale_kept"] = frame.locator("body").evaluate(scale) == before
        seen["wheel_scrolled_px"] = page.evaluate(scrolled) - top
        box = frame_el.bounding_box()                                  # the graph has moved up with the page
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.keyboard.down("Control")
        page.mouse.wheel(0, -400)
        page.keyboard.up("Control")
        page.wait_for_timeout(800)
        seen["zoomed"] = frame.locator("body").evaluate(scale) > before
        if shot:
            page.screenshot(path=str(shot))
    return seen


def run_heatmap_click(url: str) -> dict:
    """Heat-maps: a one-panel quick grid (η_c = 0, 5,000 sessions, 100 steps, linear ranker), then a real mouse
    click on a cell, which must open that cell's training curves."""
    seen = {}
    with browser_page() as page:
        open_home(page, url)
        page.get_by_role("link", name="Heat-maps").click()
        page.get_by_role("button", name="▶ Run grid").wait_for(timeout=30_000)
        sidebar = page.locator('section[data-testid="stSidebar"]')
        levels = sidebar.locator('[data-testid="stMultiSelect"] input').first
        levels.click()
        for _ in range(2):                                   # drop η_c = 0.6 and 0.3: one panel
            levels.press("Backspace")
            page.wait_for_timeout(700)
        page.keyboard.press("Escape")
        sliders = sidebar.get_by_role("slider")
        for i in (1, 2):                                     # sessions and steps to their smallest values
            sliders.nth(i).focus()
            sliders.nth(i).press("Home")
            page.wait_for_timeout(700)
        sidebar.get_by_text("linear", exact=True).click()    # the linear ranker: the click is under test, not the model
        page.wait_for_timeout(700)
        page.get_by_text("12 runs (1 coupling levels").wait_for(timeout=30_000)
        page.get_by_role("button", name="▶ Run grid").click()
        page.get_by_text("Click a cell to see that run's training curves").wait_for(timeout=240_000)
        page.wait_for_timeout(1_000)
        n_plots = page.locator(".js-plotly-plot").count()
        seen["plots_before_click"] = n_plots
        heat = page.locator(".js-plotly-plot").first                  # the finished grid (the live one is gone)
        cell = heat.locator(".scatterlayer .trace").first.locator(".points path").nth(5)
        cell.click(force=True)
        page.get_by_text("η_c = 0, λ =").wait_for(timeout=60_000)
        seen["title"] = page.get_by_text("η_c = 0, λ =").first.inner_text()
        try:                                # the cell's curves render after its title
            page.locator(".js-plotly-plot").nth(2).wait_for(timeout=60_000)
        except Exception:                   # noqa: BLE001 - the count below reports what rendered
            pass
        seen["charts"] = page.locator(".js-plotly-plot").count()
    return seen


def run_compare_and_upload(url: str, csv_path: Path) -> dict:
    """Compare: run the default comparison and see its interval chart; Upload: drop a CSV click
    log and see the verdict, the per-component curve and the JSON download."""
    seen = {}
    with browser_page() as page:
        open_home(page, url)
        page.get_by_role("link", name="Compare").click()
        page.get_by_role("button", name="▶ Run").click(timeout=30_000)
        done = page.get_by_text("Download runs (CSV)").or_(page.get_by_role("button",
        name="Record my guess and reveal"))
        done.first.wait_for(timeout=300_000)
        if page.get_by_role("button", name="Record my guess and reveal").count():   # predict before you see
            page.get_by_role("button", name="Record my guess and reveal").click()
        page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)
        seen["compare_charts"] = page.locator(".js-plotly-plot").count()
        _no_error(page)
        page.get_by_role("link", name="Upload a log").click()
        page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(csv_path))
        page.get_by_text("Position bias per connected component").wait_for(timeout=60_000)
        page.get_by_text("Download the report (JSON)").wait_for(timeout=30_000)
        seen["upload_charts"] = page.locator(".js-plotly-plot").count()
        seen["identifiable"] = page.locator('[data-testid="stMetricValue"]').nth(3).inner_text()
        wait_idle(url.pid, 120)             # the page's run is over: under load a click during it was lost (CI)
        with page.expect_download(timeout=60_000) as download:
            page.get_by_text("Download the report (JSON)").click()
        seen["report_json"] = Path(download.value.path()).read_text()
        _no_error(page)
    return seen


def run_upload_then_identifiability(url: str, log_path: Path, shot: Path | None = None, judgements=None) -> dict:
    """Upload a log, then open the Identifiability page by the Upload page's own link (clicks, no injected
    state; the link keeps the session): the page must show the uploaded log — named — with the same notes and
    verdict, not the built-in data.  With ``judgements`` (a qrels path), drop it once the click models are shown:
    the evaluation further down must value the candidate on the judges' DCG (``seen["judged"]``)."""
    seen = {}
    with browser_page() as page:
        open_home(page, url)
        page.get_by_role("link", name="Upload a log").click()
        page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(log_path))
        page.get_by_text("Download the report (JSON)").wait_for(timeout=60_000)
        seen["upload_components"] = page.locator('[data-testid="stMetricValue"]').nth(1).inner_text()
        seen["upload_notes"] = [t for t in page.locator('[data-testid="stAlertContentInfo"]').all_inner_texts()
                                if "dropped" in t]
        page.get_by_text("Which click model explains the clicks?").wait_for(timeout=60_000)    # the log has sessions
        page.get_by_text("Held-out perplexity by rank").first.wait_for(timeout=30_000)
        page.get_by_text("Each model's bias parameters").click()
        page.get_by_text("UBM: examination by rank and last click above").first.wait_for(timeout=30_000)
        seen["click_model_charts"] = page.get_by_text("Bias parameters by rank").count()
        _no_error(page)
        if judgements is not None:        # dropped inside the click models' fragment; the evaluation reads it too
            # every job done (the estimators table: a data-grid cell, attached but not "visible")
            page.get_by_text("logged (observed)").first.wait_for(state="attached", timeout=60_000)
            page.wait_for_timeout(3_000)
            page.locator('[data-testid="stFileUploaderDropzoneInput"]').nth(1).set_input_files(str(judgements))
            page.get_by_text("Judged: DCG").first.wait_for(timeout=60_000)
            seen["judged"] = page.get_by_text("Judged: DCG").first.inner_text()
        page.get_by_role("link", name="Open the Identifiability page").click()   # the page's own link
        page.get_by_text("Showing: your uploaded log").wait_for(timeout=60_000)
        seen["caption"] = page.get_by_text("Showing:").first.inner_text()
        page.locator('[data-testid="stMetricValue"]').nth(1).wait_for(timeout=60_000)
        seen["graph_components"] = page.locator('[data-testid="stMetricValue"]').nth(1).inner_text()
        seen["graph_notes"] = [t for t in page.locator('[data-testid="stCaptionContainer"]').all_inner_texts()
                               if "dropped" in t]
        seen["source"] = page.locator('[data-testid="stSidebar"] input[type="radio"]:checked').first.evaluate(
            "e => e.closest('label').innerText")
        _no_error(page)
        if shot:
            page.screenshot(path=str(shot), full_page=False)
    return seen


#: the knobs popover: its bottom edge, the screen's height, whether it scrolls and what its scroll hint says
_POPOVER_JS = """() => {
  const b = document.querySelector('[data-testid="stPopoverBody"]');
  const r = b.getBoundingClientRect();
  return {bottom: r.bottom, vh: window.innerHeight, scrolls: b.scrollHeight > b.clientHeight + 1,
          hint: getComputedStyle(b, '::after').content};
}"""


def run_presentation_link(url: str, preset: str, width: int = 1024, height: int = 576, shot: Path | None = None,
                          timeout: float = 240) -> dict:
    """Open a preset's presentation link, wait until its seeds have all finished (the table's caption
    says "over N of N seeds"), read the layout (``fit``: :func:`browser_flow.fit_seen`), then open "knobs"
    and read every knob: the slider values, the story and the methods (clicks only, nothing injected)."""
    from urllib.parse import quote_plus

    from browser_flow import fit_seen
    seen = {}
    with browser_page(width, height) as page:
        page.goto(f"{url}/?preset={quote_plus(preset)}&present=1")
        page.get_by_text(re.compile(r"over (\d) of \1 seeds")).first.wait_for(timeout=timeout * 1000)
        page.wait_for_timeout(2500)                 # the rerun that ends the run has drawn
        seen["fit"] = fit_seen(page)
        body = page.locator('[data-testid="stPopoverBody"]')
        for _attempt in range(4):                    # a rerun may redraw the button under the first click
            page.get_by_role("button", name="knobs").click()
            try:
                body.locator('[data-testid="stSlider"]').last.wait_for(timeout=8_000)   # the popover has drawn
                break
            except Exception:                        # noqa: BLE001 — closed again: click once more
                page.keyboard.press("Escape")
        page.wait_for_timeout(1000)
        seen["popover"] = page.evaluate(_POPOVER_JS)
        for s in body.locator('[data-testid="stSlider"]').all():                # sliders and select sliders
            label = s.locator('[data-testid="stWidgetLabel"]').inner_text().strip()
            seen[label] = s.locator('[data-testid="stSliderThumbValue"]').inner_text().strip()
        seen["story"] = body.locator('[data-testid="stSelectbox"] input[aria-label="story"]').first.input_value()
        tags = body.locator('[data-testid="stMultiSelectTagsContainer"]').first.inner_text()
        seen["methods"] = sorted(t.strip() for t in tags.split("\n") if t.strip())
        _no_error(page)
        if shot:
            page.screenshot(path=str(shot))
    return seen
