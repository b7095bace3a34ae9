"""AppTest for every page (streamlit.testing.v1)."""
import json
from pathlib import Path

import pandas as pd
import pytest
from apphelp import no_crash, page, wait as _wait
from streamlit.testing.v1 import AppTest

from ultr_core.app.pagetable import PAGES
from ultr_core.simulation.logspec import LogSpec

ROOT = Path(__file__).resolve().parents[2]


def test_app_entry_opens_the_playground():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30).run()
    assert no_crash(at)
    assert any("ULTR Playground" in m.value for m in at.markdown)       # the teaching landing page
    at.session_state["pg_job"].stop()


def test_home_explains_both_etas():
    at = page("home.py").run()
    assert no_crash(at)
    text = " ".join(m.value for m in at.markdown)
    assert "coupling level" in text and "position-bias severity" in text
    assert "Identifiability Matters" in text


def test_simulate_default_shows_ctr_chart_and_log():
    at = page("simulate.py").run()
    assert no_crash(at) and not at.error
    assert at.metric[0].value == "20,000"
    assert len(at.dataframe) == 1
    assert "log" in at.session_state


def test_simulate_topk_reports_hidden_documents():
    at = page("simulate.py").run()
    at.sidebar.checkbox(key="sim_top_k_cut_off").check().run()
    assert no_crash(at)
    hidden = [m for m in at.metric if "hidden" in m.label]
    assert hidden and int(hidden[0].value.split("/")[0].replace(",", "")) > 0
    assert (at.session_state["log"].frame.groupby("session_id")["shown"].sum() == 5).all()


def test_simulate_offers_datasets_by_name_never_a_path(data_dir):
    at = page("simulate.py").run()
    options = at.sidebar.selectbox(key="sim_dataset").options
    assert {"synthetic", "ig", "mq2008", "yahoo_sample", "upload"} <= set(options)
    assert not at.sidebar.text_input                        # no free-form server path anywhere
    at.sidebar.selectbox(key="sim_dataset").select("mq2008").run()
    assert no_crash(at) and not at.error and at.query_params["dataset"] in ("mq2008", ["mq2008"])


def test_train_default_dla_runs_in_background_and_reports():
    at = page("train.py").run()
    assert no_crash(at)
    at.button(key="train_job_start").click().run()                      # Start
    job = at.session_state["train_job"]
    assert job.status in ("queued", "running", "done")          # queued while the pool's workers are busy
    at = _wait(at, "train_job")
    assert no_crash(at) and not at.error
    assert job.status == "done" and "DLA" in job.result
    assert job.result["DLA"]["metrics"]["ndcg@10"] > 0.85
    assert {"Naive", "Oracle"} <= set(job.result)                # the reference lines, on by default
    spec = json.loads(at.get("plotly_chart")[1].proto.spec)
    assert any(d["name"] == "Oracle (reference)" and d["line"]["dash"] == "dash" for d in spec["data"])
    assert any(r.get("observation") for r in job.records)
    assert not any("truth: the average probability" in c.value for c in at.caption)     # PBM: the truth is o_p
    assert len(at.dataframe) == 1                    # the final metrics table
    table = at.dataframe[0].value                    # one run length for all: said once, not a column (1024 px)
    assert "Spearman ρ" in table.columns and "steps" not in table.columns, table.columns
    assert any("600 steps each" in c.value for c in at.caption)
    assert (table["ndcg@10"].round(3) == table["ndcg@10"]).all()
    assert at.query_params["algorithms"] in (["dla"], "dla")  # links store keys
    at.sidebar.multiselect(key="train_algorithms").set_value(["CLD"]).run()  # the default log shows every candidate
    at.button(key="train_job_start").click().run()
    assert no_crash(at) and at.session_state["train_job"] is job           # nothing was started
    assert any("CLD models top-k selection" in e.value and "shows every candidate" in e.value for e in at.error)
    assert len(at.dataframe) == 1 and "Training failed" not in " ".join(e.value for e in at.error)
    assert not any("belong to the previous log" in w.value for w in at.warning)
    at.sidebar.selectbox(key="train_user").select("dcm").run()          # issue #60, item 2: another log
    assert no_crash(at) and any("belong to the previous log" in w.value for w in at.warning) and not any(
        "truth:" in c.value for c in at.caption)                      # the old runs are not drawn on its truth


def test_train_default_log_keeps_its_name_after_a_rerun():
    """The page writes the default log's spec into its URL; the rerun that reads it back (any click)
    still calls it the built-in default, not "the log this link names"."""
    at = page("train.py").run()
    first = " ".join(i.value for i in at.info)
    at.run()
    again = " ".join(i.value for i in at.info)
    assert "built-in default" in first and again == first, (first, again)
    assert at.query_params["log"] in (LogSpec().to_string(), [LogSpec().to_string()])


def test_train_stop_button_stops():
    at = page("train.py").run()
    at.sidebar.slider(key="train_step_count").set_value(5000).run()       # steps
    at.button(key="train_job_start").click().run()
    at.button(key="train_job_stop").click().run()                        # Stop
    job = at.session_state["train_job"]
    assert job.join(30) and job.status == "stopped"
    # stopped while still queued (no result) or while training (DLA marked stopped)
    assert job.result is None or "DLA" not in job.result or job.result["DLA"]["stopped"]


def test_train_reads_settings_from_url():
    at = page("train.py")
    at.query_params["algorithms"] = "Naive,IPS"
    at.query_params["steps"] = "100"
    at.run()
    assert at.sidebar.multiselect(key="train_algorithms").value == ["Naive", "IPS"]
    assert at.sidebar.slider(key="train_step_count").value == 100


def test_train_link_rebuilds_its_log_on_a_cold_session():
    at = page("train.py")
    at.query_params["log"] = "synthetic:100/eta=1.5/topk=5/sessions=3000/seed=7"
    at.run()
    assert no_crash(at) and not at.error
    text = " ".join(i.value for i in at.info)
    assert "synthetic:100/eta=1.5/topk=5/sessions=3000/seed=7" in text
    at.button(key="train_job_start").click().run()
    at = _wait(at, "train_job")
    spec = at.session_state["train_job"].jobs[0]._args[0]   # the worker rebuilds the log from its spec
    assert spec == "synthetic:100/eta=1.5/topk=5/sessions=3000/seed=7"
    log_meta = LogSpec.parse(spec).simulate()[2].meta
    assert log_meta["click_model"]["eta"] == 1.5 and log_meta["click_model"]["topk"] == 5
    assert log_meta["n_sessions"] == 3000 and log_meta["seed"] == 7


def test_train_bad_log_link_falls_back_with_a_notice():
    at = page("train.py")
    at.query_params["log"] = "../../etc/passwd/eta=1"
    at.run()
    assert no_crash(at) and not at.error
    notes = " ".join(w.value for w in at.info)
    assert "cannot be rebuilt" in notes and "built-in default" in notes and "expected key=value" in notes
    assert at.query_params["log"] in (["synthetic/sessions=20000/seed=0"], "synthetic/sessions=20000/seed=0")
    at2 = page("train.py")
    at2.query_params["log"] = "yahoo:secret/sessions=10"
    at2.run()
    assert not at2.exception and "not a dataset name" in " ".join(i.value for i in at2.info)


def test_simulate_then_train_links_the_simulated_log():
    at = page("simulate.py")
    at.query_params["eta"] = "0.5"
    at.query_params["sessions"] = "2000"
    at.run()
    key, spec = at.session_state["log_spec"]
    assert key == at.session_state["log_key"]
    assert spec.startswith("synthetic:500/") and "eta=0.5" in spec and "sessions=2000" in spec
    ds, _, log = LogSpec.parse(spec).simulate()
    pd.testing.assert_frame_equal(log.frame, at.session_state["log"].frame)     # the link rebuilds the same log


def _run_compare(seeds: int, methods=None, timeout: int = 120):
    """Compare with small runs (5,000 sessions, 100 steps): the finished AppTest and its result."""
    at = page("compare.py").run()
    assert no_crash(at)
    if methods is not None:
        at.sidebar.multiselect(key="m_custom").set_value(methods).run()
    at.sidebar.slider(key="n_custom").set_value(seeds).run()                          # seeds
    at.sidebar.select_slider(key="cmp_sessions").set_value(5_000).run()                   # sessions
    at.sidebar.select_slider(key="cmp_training_steps").set_value(100).run()                     # steps
    at.button(key="compare_job_start").click().run()
    at = _wait(at, "compare_job", timeout)
    assert no_crash(at) and not at.error
    return at, at.session_state["compare_job"].result


def test_compare_default_runs_and_shows_intervals():
    at, df = _run_compare(2)
    assert set(df["algorithm"]) == {"Naive", "DLA", "IPS"} and df["seed"].nunique() == 2
    # predict before you see: no chart or table until a guess is recorded
    assert len(at.dataframe) == 0 and not at.get("plotly_chart")
    at.multiselect(key="cmp_guess").set_value(["IPS"]).run()
    [b for b in at.button if b.label == "Record my guess and reveal"][0].click().run()
    assert no_crash(at) and len(at.dataframe) == 1 and "ndcg@10_lo" in at.dataframe[0].value.columns
    verdict = " ".join(m.value for m in [*at.success, *at.warning])
    assert "Your guess: IPS" in verdict and "of 2 methods right" in verdict
    means = df.groupby("algorithm")["ndcg@10"].mean()
    below = [a for a in ("DLA", "IPS") if means[a] < means["Naive"]]
    assert f"Below Naive on ndcg@10: {', '.join(below) or 'none'}" in verdict


@pytest.mark.slow
def test_compare_preset_says_whether_the_run_reproduces_the_paper():
    """LBD Fig. 3a preset, cut down to η_c = 0.6 and three methods: the claims it can check get a verdict
    from the run's seeds, the two about LBD_Lips / LBD_Ber (not run) say so."""
    at = page("compare.py").run()
    at.sidebar.selectbox(key="cmp_preset").select("LBD Fig. 3a/3b: coupling level η_c (λ, t from Table 3)").run()
    at.sidebar.multiselect(key="m_LBD Fig. 3a/3b: coupling level η_c (λ, t from Table 3)").set_value(["Naive", "DLA",
    "LBD"]).run()
    at.sidebar.text_input(key="v_LBD Fig. 3a/3b: coupling level η_c (λ, t from Table 3)").input("0.6").run()
    at.sidebar.slider(key="n_LBD Fig. 3a/3b: coupling level η_c (λ, t from Table 3)").set_value(2).run()
    at.sidebar.select_slider(key="cmp_sessions").set_value(5_000).run()
    at.sidebar.select_slider(key="cmp_training_steps").set_value(100).run()
    at.button(key="compare_job_start").click().run()
    at = _wait(at, "compare_job", 180)
    assert no_crash(at) and not at.error
    assert any("Does this run reproduce the paper?" in m.value for m in at.markdown)
    table = at.table[-1].value                      # a static table: its sentences wrap (issue #60)
    assert table["verdict"].tolist()[2:] == ["not checked", "not checked"]
    assert set(table["verdict"].tolist()[:2]) <= {"reproduced", "not resolved", "opposite"}
    assert (table["seeds"].tolist()[:2] == [2, 2]) and "LBD Fig. 3a" in table["paper says"].iloc[0]
    df = at.session_state["compare_job"].result
    d = (
        df[df["algorithm"] == "Naive"].set_index("seed")["ndcg@10"]
        - df[df["algorithm"] == "DLA"].set_index("seed")["ndcg@10"]
    )
    assert table["difference [90 % interval]"].iloc[0].startswith(f"{d.mean():+.3f}")   # the page's number is the run's


def test_compare_runs_vectorization_and_hte():
    at, df = _run_compare(1, ["Naive", "Vectorization", "HTE", "HTE-oracle"], timeout=180)
    assert set(df["algorithm"]) == {"Naive", "Vectorization", "HTE", "HTE-oracle"}
    assert df["error"].isna().all() and (df["ndcg@10"] > 0.5).all()
    [b for b in at.button if b.label == "Skip: show the results"][0].click().run()      # the guess can be skipped
    assert no_crash(at) and len(at.dataframe) == 1 and at.get("plotly_chart")
    assert not at.toggle(key="cmp_guess_on").value and at.query_params["guess"] in ("0", ["0"])   # and stays so


def test_compare_bad_sweep_values_message():
    at = page("compare.py").run()
    at.sidebar.selectbox(key="s_custom").select("click noise ε").run()
    at.sidebar.text_input(key="v_custom").input("abc").run()
    at.button(key="compare_job_start").click().run()
    assert no_crash(at) and at.error and "settings" in at.error[0].value


def test_heatmap_figure_draws_a_partial_grid():
    from ultr_core.app.figures import heatmap_figure
    rows = [{"click.coupling": 0.0, "train.lbd_lambda": lam, "train.lbd_t": t, "seed": 0, "ndcg@10": 0.9 + lam / 1e5}
            for lam, t in [(1.0, 0.1), (100.0, 0.2)]]                     # 2 of 12 cells finished
    fig = heatmap_figure(pd.DataFrame(rows))
    z = [d for d in fig.data if d.type == "heatmap"][0].z
    assert sum(v == v for row in z for v in row) == 2                       # the rest are empty (NaN)
    heat = [d for d in fig.data if d.type == "heatmap"][0]
    assert heat.zmax - heat.zmin >= 0.05 - 1e-12          # a 0.001 spread is not drawn as white-to-dark (#36)


def test_simulate_settings_round_trip_through_url():
    at = page("simulate.py")
    at.query_params["eta"] = "0.5"
    at.query_params["topk"] = "3"
    at.query_params["sessions"] = "2000"
    at.run()
    assert no_crash(at)
    log = at.session_state["log"]
    assert log.meta["click_model"]["eta"] == 0.5 and log.meta["click_model"]["topk"] == 3
    assert log.n_sessions == 2000
    assert at.query_params["topk"] in ("3", ["3"])


def test_simulate_letor_upload(data_dir):
    at = page("simulate.py").run()
    at.sidebar.selectbox(key="sim_dataset").select("upload").run()
    assert at.info and "Upload" in at.info[0].value
    raw = (data_dir / "mq2008" / "S2.txt").read_bytes()
    at.sidebar.file_uploader(key="sim_svmlight_letor_file").set_value(("S2.txt", raw, "text/plain")).run()
    assert no_crash(at) and not at.error
    assert at.session_state["dataset"].n_features == 46


def test_simulate_bad_upload_message():
    at = page("simulate.py").run()
    at.sidebar.selectbox(key="sim_dataset").select("upload").run()
    at.sidebar.file_uploader(key="sim_svmlight_letor_file").set_value(("bad.txt", b"1 qid:1 1:x\n", "text/plain")).run()
    assert no_crash(at)
    assert at.error and "line 1" in at.error[0].value and "non-numeric" in at.error[0].value


@pytest.mark.parametrize("name", [p.file for p in PAGES])
def test_every_page_opens_without_an_error_message(name):
    """The error boundary turns exceptions into an in-page message, so `at.exception` alone would
    miss them (a duplicate widget id once did): no error element on a fresh page either."""
    at = page(name).run()
    assert no_crash(at) and not [e.value for e in at.error]
    if "pg_job" in at.session_state:
        at.session_state["pg_job"].stop()


@pytest.mark.parametrize("name", [p.file for p in PAGES if p.controls_help])
def test_every_control_has_help_text(name):
    at = page(name).run()
    kinds = ("selectbox", "multiselect", "slider", "select_slider", "number_input", "text_input", "checkbox",
             "radio", "toggle", "button")
    missing = []
    for kind in kinds:
        for w in at.get(kind):
            if not getattr(w, "help", "") and kind != "button":
                missing.append(f"{kind} {w.label!r}")
    assert not missing, f"{name}: controls without help text: {missing}"


@pytest.mark.slow
def test_heatmaps_quick_grid_draws_and_a_clicked_cell_shows_its_curves():
    at = page("heatmaps.py").run()
    at.sidebar.multiselect(key="lv_False").set_value([0.0]).run()
    at.sidebar.select_slider(key="heat_sessions").set_value(5_000).run()
    at.sidebar.select_slider(key="st_False").set_value(100).run()  # the smallest step count offered
    at.sidebar.radio(key="heat_ranking_model").set_value("linear").run()  # the click, not the model, is under test
    assert "12 runs" in " ".join(m.value for m in at.markdown)
    at.button(key="heat_job_start").click().run()
    at = _wait(at, "heat_job", 180)
    assert no_crash(at) and not at.error
    df = at.session_state["heat_job"].result
    assert len(df) == 12 and "history" in df
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)          # the finished grid: one heat-map panel
    assert sum(1 for d in spec["data"] if d["type"] == "heatmap") == 1
    assert any("Selected on validation" in c.value and "test" in c.value for c in at.caption)
    # what the browser sends when a cell is clicked (Streamlit's plotly selection state)
    at.session_state["heat"] = {"selection": {"points": [{"x": "t=0.2", "y": "λ=100", "curve_number": 1,
                                                          "customdata": {"0": 0.0, "1": 100.0, "2": 0.2,
                                                                         "3": 0.91}}],
                                              "point_indices": [0], "box": [], "lasso": []}}
    at.run()
    assert no_crash(at)
    assert [h.value for h in at.subheader] == ["η_c = 0, λ = 100, t = 0.2"]
    assert len(at.get("plotly_chart")) == 3            # the heat-map and the cell's two curves
    # the page says whether validation picks the paper's Table 3 cell (linear ranker: λ = 10000, t = 0.1)
    assert any("reproduce the paper's Table 3" in m.value for m in at.markdown)
    table = at.dataframe[0].value
    assert table["Table 3"].tolist() == ["λ = 10000, t = 0.1"] and table["same cell"].iloc[0] in ("yes", "no")


def test_heatmaps_state_round_trips_through_the_url():
    at = page("heatmaps.py")
    at.query_params.update({"grid": "paper", "levels": "0.1,0.5", "seeds": "2", "steps": "200", "model": "linear"})
    at.run()
    assert no_crash(at)
    assert at.sidebar.radio(key="heat_grid").value.startswith("paper") and at.sidebar.multiselect(
        key="lv_True"
    ).value == [0.1, 0.5]
    assert at.sidebar.slider(key="sd_True").value == 2 and at.sidebar.select_slider(key="st_True").value == 200
    assert at.sidebar.radio(key="heat_ranking_model").value == "linear"
    assert at.query_params["levels"] in (["0.1,0.5"], "0.1,0.5")


def test_train_hyper_parameters_round_trip_through_the_url():
    at = page("train.py")
    at.query_params.update({"algorithms": "lbd,IPS,cld", "table3": "0", "lam": "10.0", "t": "0.3",
                            "penalty": "paper", "clicks": "online", "ips_true": "0", "ips_eta": "1.5", "gamma": "0.2"})
    at.run()
    assert no_crash(at)
    assert at.sidebar.multiselect(key="train_algorithms").value == ["LBD", "IPS",
    "CLD"]  # keys, and a label of an older link
    assert (
        at.sidebar.checkbox(key="train_naive_and_oracle_as_reference").value
        and not at.checkbox(key="train_table3").value
    )  # references on, Table 3 off
    assert at.select_slider(key="train_lam").value == 10.0
    assert at.slider(key="train_t").value == 0.3 and at.radio(key="train_penalty").value == "paper"
    assert at.sidebar.radio(key="train_clicks").value == "online" and not at.checkbox(key="train_ips_true").value
    assert at.slider(key="train_ips_eta").value == 1.5 and at.slider(key="train_cld_gamma").value == 0.2  # old key
    assert at.query_params["penalty"] in (["paper"], "paper") and at.query_params["lam"] in (["10.0"], "10.0")
    assert at.query_params["algorithms"] in (["lbd,ips,cld"], "lbd,ips,cld")
    only_dla = page("train.py")                       # only what the chosen methods read: DLA reads max_weight only
    only_dla.query_params["algorithms"] = "dla"
    only_dla.run()
    from ultr_core.algorithms.hyper import HYPERS
    hyper_keys = {f"train_{h.url}" for h in HYPERS}
    assert no_crash(only_dla) and not [w for w in [*only_dla.slider, *only_dla.select_slider] if w.key in hyper_keys]


def test_train_draws_the_same_log_with_another_user_model_and_links_it():
    """#34: Train & watch offers the user model — the same data, sessions and seeds with clicks drawn by DBN users;
    the link then names that log, and the training job rebuilds it."""
    at = page("train.py")
    at.query_params["log"] = "synthetic:100/sessions=3000/seed=7"
    at.run()
    assert at.selectbox(key="train_user").value == "pbm"
    at.selectbox(key="train_user").set_value("dbn").run()
    assert no_crash(at) and not at.error
    assert at.query_params["log"] in (["synthetic:100/user_model=dbn/sessions=3000/seed=7"],
                                      "synthetic:100/user_model=dbn/sessions=3000/seed=7")
    assert any("DBN users" in c.value for c in at.sidebar.caption)
    assert any("DBN users" in i.value for i in at.info)                # the page says what it trains on
    at.button(key="train_job_start").click().run()
    at = _wait(at, "train_job")
    assert (
        at.session_state["train_job"].jobs[0]._args[0].endswith("seed=7")
        and "user_model=dbn" in at.session_state["train_job"].jobs[0]._args[0]
    )
    assert any(c.value.startswith("Each curve ÷ its position 1. DLA: its propensity tower") for c in at.caption)
    # under DBN users the "truth" drawn is their mean examination per position, and the caption says so
    assert any("truth: the average probability that DBN users examine each position" in c.value for c in at.caption)
    coupled = page("train.py")
    coupled.query_params["log"] = "synthetic:100/coupling=0.5/sessions=3000/seed=7"
    coupled.run()
    coupled.selectbox(key="train_user").set_value("cm").run()
    assert no_crash(coupled) and any("Kept PBM users" in w.value for w in coupled.sidebar.warning)
