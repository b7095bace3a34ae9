"""The Train page's "Do the judges agree?" section (issue #47, item 2): the chosen algorithms trained on the log's
training sessions beside every click model fitted on the same sessions (one pooled job,
:func:`ultr_core.studies.rankers.rankers_job`), judged by the data set's own labels → a table and a figure."""
import pandas as pd
import streamlit as st

from pages._jobs import job_buttons, job_progress, live, queue_note, submit_job
from ultr_core.app.clickmodel_figures import judges_figure
from ultr_core.app.text import escape_markdown
from ultr_core.clickmodels.judgement_agreement import RULE, judgement_rows
from ultr_core.studies.rankers import rankers_job

KEY = "rankers_job"


def rankers_section(ds, log, link_spec, algorithms: list, train: dict) -> None:
    """A button that trains ``algorithms`` (keys) with the page's ``train`` settings (TrainConfig fields) and fits
    the click models on ``log``; the comparison when done."""
    st.subheader("Do the judges agree? Rankers beside click models")
    st.caption("Each chosen algorithm trains on the first 75 % of the log's sessions (the ranking model, learning "
               "rate, steps and seed above; each method's own defaults) and every "
               "click model is fitted on the same sessions. A ranker is read as a click model through a logistic "
               "link, P(click at r) = γ_r·σ(a·score + b), to score the held-out sessions; all are judged by the "
               "data set's own labels of the log's pairs. " + RULE + ".")
    if "label" not in log.frame or "row" not in log.frame:
        st.info("This log has no labels or no feature rows: there is nothing to judge the rankers by.")
        return
    which = link_spec or f"session log {id(log)}"          # a log a link cannot rebuild is shared by no one
    settings = tuple(sorted(train.items()))
    job_buttons(KEY, "▶ Judge the algorithms", lambda: submit_job(("rankers", which, tuple(algorithms), settings),
                                                                  rankers_job, ds, log, tuple(algorithms), train=train),
                disabled=not algorithms)
    live(KEY, _show)


def _show(job) -> None:
    if job is None or queue_note(job):
        return
    if job.error:
        st.info(f"Nothing was judged: {escape_markdown(job.error)}")
        return
    if job.running or job.result is None:
        job_progress(job, "rankers trained")
        return
    out = job.result
    rep, both = out.judgements, out.scored
    st.caption(f"{out.train_sessions:,} training sessions, {out.test_sessions:,} test sessions; "
               f"{rep.pairs_scored:,} judged pairs scored ({rep.prior_dominated.matched_and_flagged:,} "
               "prior-dominated left out). 90 % intervals: bootstrap over queries.")
    if rep.note is not None:
        st.info(escape_markdown(rep.note))
        return
    st.dataframe(pd.DataFrame(judgement_rows(both, rep)), hide_index=True)
    st.plotly_chart(judges_figure(both, rep), key="rankers_judges")
    if rep.verdict:
        st.info(escape_markdown(rep.verdict.text) + ".")
        st.caption(f"Rule — {rep.verdict.rule}.")
