"""Real-browser test of the main flow: headless Debian chromium driven by Playwright."""
import json
import os
from pathlib import Path

import pytest
from browser_flow import (
    CHROMIUM,
    clipped_formulas,
    playground_fit,
    run_hostile_flow,
    run_main_flow,
    run_playground,
    run_settings_fit,
    serve_app,
)
from browser_pages import (
    run_closed_tab,
    run_cold_deep_link,
    run_compare_and_upload,
    run_heatmap_click,
    run_interactive_graph,
    run_upload_then_identifiability,
)
from clihelp import cli, same_report


def _need_chromium():
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} missing: scripts/test.sh installs Debian's chromium")
        pytest.skip(f"{CHROMIUM} not installed")


@pytest.fixture
def app_url(tmp_path):
    """A fresh app server on loopback (its own result cache) for one test: for what needs a server
    nobody has used yet (its first visit) — started without the warm-up's default Playground run
    (``ULTR_WARM_RUN=0``), which that test does not use; chromium required in CI."""
    _need_chromium()
    with serve_app(cache_dir=tmp_path / "cache", warm_run=False) as url:
        yield url


@pytest.fixture(scope="module")
def shared_url(tmp_path_factory):
    """One server for the page flows of this module, as a class shares one (each flow opens its own
    browser, so its own session); started once per test worker, which saves a server start and its
    warm-up run per flow (#23: CI time)."""
    _need_chromium()
    with serve_app(cache_dir=tmp_path_factory.mktemp("cache")) as url:
        yield url


@pytest.mark.slow
def test_main_flow_simulate_then_train_in_chromium(shared_url):
    seen = run_main_flow(shared_url)
    assert seen["charts"] >= 3                    # loss, validation nDCG and observation curve
    # no timing assert: speed is a benchmark (docs/benchmarks.md, scripts/screenshots.py; target < 30 s, 16.7 s
    # idle); each step's wait in browser_flow.py is the hang guard (the flow took 109 s beside two studies)


@pytest.mark.slow
def test_playground_fits_one_screen_and_reacts_to_a_knob(shared_url):
    seen = run_playground(shared_url)
    assert seen["exceptions"] == 0, seen
    assert seen["lowest_tile_px"] <= 720 and seen["widest_tile_px"] <= 1280, seen      # no scrolling at 1280×720
    # timings (targets 2 s / 10 s) are benchmarks (docs/benchmarks.md); the step waits are the hang guards,
    # and the restart on the new η is the wait for "training — step" after the key presses
    assert "eta=2.0" in seen["url"], seen


@pytest.mark.slow
@pytest.mark.parametrize("size, query", [((1024, 576), "?preset=top-k+cut+hides+relevance"),
                                         ((1280, 720), "?present=1"),
                                         ((1024, 576), "?users=dcm"),
                                         ((1024, 576), "?present=1&users=cm&coupling=0.5&contexts=20")])
def test_playground_and_presentation_mode_fit_a_projector(shared_url, size, query):
    """No page scrolling and nothing outside the screen at a 1024×576 projector and in presentation
    mode (the top-k preset is the tallest page: a non-identifiable log's verdict and hint under the
    knobs, four methods and two claims in the results tile; 1280×720 is run_playground's; a preset in
    presentation mode at 1024×576 is read by the presentation-link test; cascade users add a line on what
    the "truth" curve is, which ran one line past 576 px before it was shortened; a link whose knobs no run can
    take — cascade users with PBM's coupling and contexts — keeps its tiles and says in one line what it changed:
    it wiped the projector screen, issue #49)."""
    seen = playground_fit(shared_url, *size, query)
    _assert_fits(seen, size, query)
    if "coupling" in query:
        assert "were turned off" in seen["text"] and "Please check the input" not in seen["text"], seen["text"]


def _assert_fits(seen: dict, size, query: str) -> None:
    w, h = size
    assert seen["exceptions"] == 0 and seen["charts"] == 3, seen
    assert seen["bottom"] <= h and seen["right"] <= w, seen
    assert seen["legend_on_axis"] == [], seen                                       # no legend drawn on an axis
    assert not [s for s in seen["scrolls"] if s != "stSidebarContent"], seen      # the page itself does not scroll
    if "present" in query:
        assert seen["scrolls"] == [], seen                                          # no sidebar at all
    if "preset=" in query:      # the story as the page tells it: every claim of the preset read over seeds 0–4
        from ultr_core.app.playground import PRESETS
        preset = next(p for p in PRESETS if p.name.replace(" ", "+") in query)
        assert seen["verdict"] is not None, seen
        assert seen["verdict"].count("reproduced") == len(preset.claims), seen["verdict"]


#: the projector sizes every layout test reads (1024×576 first: the tighter one)
PROJECTORS = [(1024, 576), (1280, 720)]


@pytest.mark.slow
def test_run_settings_fit_the_sidebar_at_projector_sizes(shared_url, tmp_path):
    """Opening "run settings" on a projector: every setting is visible without scrolling the sidebar
    (the page list steps aside while it is open and comes back when it closes) and no label wraps
    (before: 860 px of sidebar in 576, and "seeds" broken as "seed / s" at 1024 px); both sizes are read
    on one page, the viewport resized."""
    seen = run_settings_fit(shared_url, PROJECTORS, tmp_path / "settings.png")
    for size in PROJECTORS:
        assert seen["open"][size]["overflow_px"] <= 0 and seen["open"][size]["wrapped"] == [], (size, seen)
        assert not seen["open"][size]["nav_shown"], (size, seen)
    assert seen["closed"]["nav_shown"], seen
    assert seen["stays_open"], seen                         # changing a setting no longer closes it (#36)


@pytest.mark.slow
def test_no_formula_is_cut_off(shared_url):
    """Every equation the app prints (Home, Heat-maps, Identifiability, Train, and every method's on
    Compare) fits its column at both projector widths (each page loaded once, the viewport resized):
    long ones are set on several lines."""
    seen = clipped_formulas(shared_url, PROJECTORS)
    assert seen[("/compare", "formulas")] >= 15, seen          # every method's formula was on the page
    assert {k: v for k, v in seen.items() if k[1] != "formulas" and v} == {}, seen


@pytest.mark.slow
def test_bad_url_and_hostile_upload_show_messages_not_tracebacks(shared_url, tmp_path):
    hostile = ['<a href="https://evil.example/phish">CLICK</a>', "<b>bold</b>", "<script>alert(1)</script>",
               '<img src=x onerror="alert(1)">']
    lines = ["query_id,doc_id,position,click,vertical"]
    for s in range(40):
        for p in (1, 2):
            lines.append(
                f'{s % 4},d{(s + p) % 3},{p},{int(s % 3 == p)},"{hostile[(s + p) % 4].replace(chr(34), chr(39))}"'
            )
    upload = tmp_path / "<img src=x onerror=alert(1)><b>x.csv"
    upload.write_text("\n".join(lines) + "\n")
    seen = run_hostile_flow(shared_url, upload, tmp_path / "hostile.png")
    assert seen["exceptions"] == 0 and seen["notices"] >= 4, seen
    assert seen["injected"] == 0 and seen["injected_in_graph"] == 0 and not seen["alerts"], seen


@pytest.mark.slow
def test_cold_server_deep_link_keeps_the_app_navigation_and_settings(app_url):
    seen = run_cold_deep_link(app_url)                # the fixture's server is fresh: this is its first visit
    assert "Train & watch" in seen["nav"] and "common" not in seen["nav"], seen
    assert seen["sessions"] == "2,000", seen


@pytest.mark.slow
def test_interactive_identifiability_graph_draws_and_zooms(shared_url, tmp_path):
    seen = run_interactive_graph(shared_url, tmp_path / "ig.png")
    assert seen["nodes"] == 10, seen                           # K = 2 default: 10 positions
    assert seen["wheel_scale_kept"] and seen["wheel_scrolled_px"] > 50, seen   # the wheel scrolls the page past it
    assert seen["zoomed"], seen                                # ctrl + wheel zooms in


@pytest.mark.slow
def test_heatmap_cell_click_in_a_real_browser_opens_its_curves(shared_url):
    seen = run_heatmap_click(shared_url)
    assert seen["plots_before_click"] == 1, seen          # the live partial chart is gone once the grid is done
    assert seen["title"].startswith("η_c = 0, λ = ") and seen["charts"] == 3, seen


@pytest.mark.slow
def test_compare_and_upload_main_flows_in_chromium(shared_url, tmp_path, capsys):
    rows = ["query_id,doc_id,position,click"]
    for s in range(300):                              # documents move between positions 1–3
        for p in (1, 2, 3):
            rows.append(f"q{s % 5},d{(s + p) % 3},{p},{int((s * p) % 4 == 0)}")
    csv = tmp_path / "clicks.csv"
    csv.write_text("\n".join(rows) + "\n")
    seen = run_compare_and_upload(shared_url, csv)
    assert seen["compare_charts"] >= 1 and seen["upload_charts"] >= 1, seen
    assert seen["identifiable"] == "yes", seen
    # the page's JSON download is the CLI's report for the file with the page's options (one log, one truth): the
    # same keys and numbers (to rounding), the CLI's notes among the page's reader's
    page = json.loads(seen["report_json"])
    rc, out, _ = cli(["ig", csv, "--merge", "--intervene", "--json"], capsys)
    ours = json.loads(out)
    assert rc == 0 and page.pop("source") == "upload" and ours.pop("source") == str(csv)
    assert set(ours.pop("notes")) <= set(page.pop("notes"))
    assert same_report(page, ours)


@pytest.mark.slow
def test_upload_then_identifiability_shows_the_uploaded_log(shared_url, tmp_path):
    rows = ["sid,qid,url,pos,clicked"]      # positions {1,2} and {3,4} never share a document: 2 components
    for s in range(40):
        a, b = (f"a{s % 4}", f"b{s % 4}") if s % 2 else (f"b{s % 4}", f"a{s % 4}")
        rows += [f"{s},q{s % 4},{a},1,{s % 3 == 0:d}", f"{s},q{s % 4},{b},2,0",
                 f"{s},q{s % 4},c{s % 4},3,1", f"{s},q{s % 4},d{s % 4},4,0"]
    rows += [f"{s},q0,z{s},1,1" for s in range(3)]        # three rows repeat a (session, position): dropped, counted
    log = tmp_path / "my_clicks.csv"
    log.write_text("\n".join(rows) + "\n")
    qrels = tmp_path / "judges.qrels"
    qrels.write_text("".join(f"q{i} 0 {d}{i} {g}\n" for i in range(4) for d, g in zip("abcd", (2, 0, 1, 0))))
    seen = run_upload_then_identifiability(shared_url, log, judgements=qrels)
    assert seen["click_model_charts"] >= 1, seen                                # upload → click models, by clicks
    assert "my_clicks.csv" in seen["caption"], seen
    assert seen["source"].startswith("current log"), seen
    assert seen["graph_components"] == seen["upload_components"] != "", seen
    assert any("dropped 3 duplicate row(s)" in n for n in seen["upload_notes"]), seen       # one log, one truth:
    assert any("dropped 3 duplicate row(s)" in n for n in seen["graph_notes"]), seen        # the same note on both
    # judgements dropped after the jobs finished reach the evaluation below the click models (a file dropped in the
    # click models' fragment reran that fragment only: the evaluation never saw it)
    assert seen["judged"].startswith("Judged: DCG@4 ") and "production order's" in seen["judged"], seen


@pytest.mark.slow
def test_closing_the_tab_stops_its_training_and_frees_the_cpu(shared_url):
    """A 5,000-step training keeps a worker busy; once its only tab closes, the server notices the
    session is gone (no poll for a few seconds), stops the job, and CPU returns to idle.  On the flows'
    shared server (the flows run one at a time on one worker): the run first waits until the server is at
    rest, so an earlier flow's runs cannot count as this one's."""
    seen = run_closed_tab(shared_url)
    assert seen["idle_before_s"] < 120 and seen["busy_cpu"] > 30, seen      # idle is < 10 % of a core
    # a 5,000-step run left alone keeps a core busy for ≈ 40 s or more here: idle within 30 s means it was
    # stopped.  The 10 s target is a benchmark, measured on a quiet server (docs/benchmarks.md: 6 s); beside
    # the other test worker's studies it took up to 13 s (worker replaced, spawn under load)
    assert seen["idle_after_close_s"] < 30, seen


@pytest.mark.slow
def test_a_presentation_link_fits_a_projector_and_keeps_every_knob_after_its_run(shared_url):
    """Open a story's presentation link at 1024×576, wait for its five seeds: the page fits the projector and
    tells the story's verdict; then open "knobs": every knob is the preset's (it was at its minimum — η 0,
    ε 0, no methods — once the run had ended)."""
    from browser_pages import run_presentation_link

    from ultr_core.app.playground import PRESETS
    preset = next(p for p in PRESETS if p.name == "position bias breaks Naive")      # the quickest story
    seen = run_presentation_link(shared_url, preset.name, 1024, 576)
    _assert_fits(seen["fit"], (1024, 576), "?present=1&preset=" + preset.name.replace(" ", "+"))
    pop = seen["popover"]                 # the knobs fit the screen, and say so when they scroll (issue #49)
    assert pop["bottom"] <= pop["vh"] and (not pop["scrolls"] or "scroll for every knob" in pop["hint"]), pop
    from ultr_core.app.playground import PlaygroundSettings
    c = preset.changes
    sessions = c.get("sessions", PlaygroundSettings().sessions)
    assert seen["story"] == preset.name, seen
    assert float(seen["pos. bias η"]) == c["eta"] != 0 and float(seen["click noise ε"]) == c["noise"] != 0, seen
    assert float(seen["coupling η_c"]) == c["coupling"], seen
    assert seen["shown top-k"] == ("all" if c["topk"] is None else str(c["topk"])), seen
    assert float(seen["exploration"]) == c["shuffle"] and seen["blocks"] == str(c["blocks"]), seen
    assert seen["sessions"] == f"{sessions // 1000}k" and seen["seeds"] == "5", seen
    assert len(seen["methods"]) == len(c["methods"]), seen


@pytest.mark.slow
def test_a_knob_at_its_end_trains_what_it_can_and_says_what_it_left_out(shared_url):
    """Issue #60: a value a knob offers never ends in a failed job. The top-k story with exploration at 1.0 (every
    candidate shown): the page says CLD is left out before training, and the rest of the run finishes."""
    from browser_flow import browser_page
    with browser_page(1024, 576) as page:
        page.goto(shared_url + "/?preset=top-k+cut+hides+relevance&shuffle=1.0&steps=100&seeds=1")
        page.get_by_text("left out of this run").first.wait_for(timeout=120_000)
        page.locator('[data-testid="stDataFrame"]').first.wait_for(timeout=300_000)
        page.wait_for_function("() => !document.body.innerText.includes('training — step')", timeout=300_000)
        text = page.evaluate("() => document.body.innerText")
        assert page.locator('[data-testid="stException"]').count() == 0
        assert "Training failed" not in text and "CLD models top-k selection" in text
