"""Issue #47, item 2 on the Train page: ULTR rankers judged beside the click models (AppTest)."""
import json

from apphelp import no_crash, page, wait as _wait


def test_train_judges_the_chosen_rankers_beside_the_click_models():
    """Issue #47, item 2 on a log with features: the chosen algorithm (the page's steps) trained on the log's
    training sessions, judged by the data set's labels beside every click model — a table, a figure with the
    ranker as a diamond, and the verdict."""
    at = page("train.py").run()
    at.sidebar.slider(key="train_step_count").set_value(100).run()
    at.button(key="rankers_job_start").click().run()
    job = at.session_state["rankers_job"]
    at = _wait(at, "rankers_job")
    assert no_crash(at) and not at.error and job.status == "done", job.error
    assert job.result.rankers["dla"].seconds > 0
    table = at.dataframe[-1].value
    assert {"DLA (ranker)", "PBM", "raw CTR", "logged order"} <= set(table["model"])
    spec = json.loads(at.get("plotly_chart")[-1].proto.spec)
    assert [d["marker"]["symbol"] for d in spec["data"] if d["name"] == "DLA (ranker)"] == ["diamond"]
    assert any("Held-out clicks:" in i.value and "Judges:" in i.value for i in at.info)     # sentences, labelled
    assert any(c.value.startswith("Rule — Spearman:") and "log-likelihood:" in c.value for c in at.caption)
