"""The Upload page's "would a new ranking do better?" section (issue #47, item 4): a candidate (production order,
a scores file or a click model's relevance) → one pooled job (:func:`ultr_core.tasks.value_ranking.value_ranking_job`)
→ a table and a figure factory."""
import hashlib

import pandas as pd
import streamlit as st

from pages._clickmodels import uploaded_judgements
from pages._common import memo
from pages._jobs import job_progress, live, queue_note, submit_job
from pages._report import add_section
from pages._uploads import kept_file, kept_upload
from ultr_core.app.counterfactual_figures import estimator_rows, value_figure
from ultr_core.app.text import escape_markdown
from ultr_core.clickmodels.registry import CLICK_MODELS, MODEL_BY_KEY
from ultr_core.clickmodels.sessions import PROPENSITY
from ultr_core.counterfactual.candidate import SOURCES
from ultr_core.counterfactual.estimators import default_estimators
from ultr_core.counterfactual.evaluate import DIRECT_MODELS, N_BOOT, expected_seconds
from ultr_core.errors import DataFormatError, counted
from ultr_core.evaluation.intervals import interval_text
from ultr_core.logs.mapping import file_id_frame
from ultr_core.logs.scores import side_file_problem
from ultr_core.tasks.value_ranking import value_ranking_job

SOURCE_BY_LABEL = {s.label: s.key for s in SOURCES}


def _candidate(prefix: str):
    """(ranking, scores bytes, its digest) from the widgets; None when a scores file is chosen but not given."""
    label = st.selectbox("candidate ranking", list(SOURCE_BY_LABEL), key=f"{prefix}_cf_source",
                         help="; ".join(f"{s.label}: {s.help}" for s in SOURCES))
    source = SOURCE_BY_LABEL[label]
    if source == "model":
        m = st.selectbox("re-rank by the relevance of", [s.label for s in CLICK_MODELS], index=3,
                         key=f"{prefix}_cf_model", help="each query's documents sorted by this model's relevance "
                                                        "estimate, fitted on the whole log with the attractiveness "
                                                        "prior chosen above")
        return "model:" + next(s.key for s in CLICK_MODELS if s.label == m), None, m
    if source == "scores":
        up = kept_upload(f"{prefix}_cf_scores", st.file_uploader(
            "scores file (query_id, doc_id, score)", key=f"{prefix}_cf_scores", help="CSV/TSV with a header; higher "
            "scores rank first; rows with NaN or infinite scores, duplicates and pairs the log never shows are counted "
            "and left out"))
        if up is None:
            return None
        problem = side_file_problem(up.size, "scores")
        if problem:
            st.error(f"We did not read the scores — {problem}. The log and its analyses are unchanged.")
            return None
        data = up.getvalue()
        return "scores", data, hashlib.blake2b(data, digest_size=16).hexdigest()
    return "production", None, ""


def evaluate_section(log, key, prefix: str) -> None:
    """The section: widgets, one pooled job per (log, candidate, model, k, judgements), its result."""
    st.subheader("Would a new ranking do better?")
    st.caption("A candidate ranking valued on this log's traffic: expected clicks in its top k per session by the "
               "direct method (a click model), IPS, SNIPS and doubly robust, each with a 90 % interval from a "
               "bootstrap over sessions (docs/counterfactual.md).")
    if log.meta.get("sessions") == "inferred":
        st.info("Counterfactual evaluation needs sessions: this log has no session ids.")
        return
    picked = _candidate(prefix)
    depth = int(log.frame["position"].max())
    c1, c2 = st.columns(2)
    k = c1.number_input("k (top ranks valued)", 1, max(depth, 1), min(10, depth), key=f"{prefix}_cf_k",
                        help="value = expected clicks in the candidate's top k per session")
    dm = c2.selectbox("direct method's click model", [MODEL_BY_KEY[m].label for m in DIRECT_MODELS],
                      key=f"{prefix}_cf_dm", help="the direct method's model of the users, refitted in every "
                                                  "bootstrap resample (PBM: the position bias IPS and DR use too)")
    n_pairs = memo(("pairs", key), lambda: int(log.frame[["query_id", "doc_id"]].drop_duplicates().shape[0]))
    cost = {a: expected_seconds(n_pairs, affine=a) for a in (False, True)}
    affine = st.checkbox(f"also the trust-bias estimators (Affine-IPS, Affine-DR): about {_duration(cost[True])} "
                         f"instead of {_duration(cost[False])}", key=f"{prefix}_cf_affine",
                         help="read each click as b_r + s_r·relevance — trust bias (Vardasbi et al. 2020): users "
                              "click some results they judge non-relevant, more often near the top. One fit per "
                              f"bootstrap resample ({N_BOOT}) over this log's {n_pairs:,} (query, document) pairs; "
                              "the time is this project's 2-core machine at idle, longer on a busy server")
    if picked is None:
        st.info("Upload a scores file to value it.")
        return
    judged = kept_file(f"{prefix}_judgements")
    usable = judged is not None and side_file_problem(judged.size, "judgements") is None
    parsed, digest = None, ""
    if usable:
        try:                          # parsed once, in the shared cache; a file the judges' section cannot read
            parsed, digest = uploaded_judgements(judged)      # only leaves DCG@k out
        except DataFormatError:
            parsed = None
    dm_key = next(m for m in DIRECT_MODELS if MODEL_BY_KEY[m].label == dm)
    prior = st.session_state.get(f"{prefix}_cm_job_for", (None, "auto"))[1]     # the comparison's prior above
    estimators = default_estimators(logged=PROPENSITY in log.frame, affine=affine)
    spec = (key, picked[0], picked[2], dm_key, int(k), digest, prior, estimators)
    job_key = f"{prefix}_cf_job"
    if st.session_state.get(f"{job_key}_for") != spec:
        frame = file_id_frame(log)                  # the file's own ids, as the CLI reads them
        st.session_state[job_key] = submit_job(("evaluate", *spec), value_ranking_job, frame, "your log", picked[0],
                                               scores=picked[1], model=dm_key, k=int(k), judgements=parsed,
                                               prior=prior, estimators=estimators)
        st.session_state[f"{job_key}_for"] = spec
    live(job_key, lambda job: _show(job, prefix))


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


def _show(job, prefix: str) -> None:
    if job is None or queue_note(job):
        return
    if job.error:
        st.info(f"The ranking is not valued: {escape_markdown(job.error)}")
        return
    if job.running or job.result is None:
        job_progress(job, "bootstrap resamples")
        return
    out = job.result
    for n in out.all_notes:
        st.info(escape_markdown(n))
    table, fig = pd.DataFrame(estimator_rows(out)).round(4), value_figure(out)      # built once: page and report
    st.dataframe(table.drop(columns="note"), hide_index=True)        # the notes in full below: no cell cut at 1024
    st.caption("  \n".join(f"**{escape_markdown(r['estimator'])}** — {escape_markdown(r['note'])}"
                            for r in table.to_dict("records")))
    add_section("What would a new ranking be worth?", table=table, figure=fig,
                caption=" ".join(out.all_notes))
    st.plotly_chart(fig, key=f"{prefix}_cf_figure")
    s = out.support
    st.caption(f"{out.sessions:,} sessions of {out.queries:,} queries. Support: {s.identified:.0%} of the "
               f"candidate's top-{out.k} slots put a document where the log identifies its position bias; "
               f"{s.at_position:.0%} show a document the log has shown at that very position (DR corrects "
               f"there); {s.examined:.1%} hold documents with at least 10 examination-weighted impressions. "
               f"The log's positions form {counted(out.position_bias.components, 'component')} of its "
               "identifiability graph. DR's logging propensities — "
               + escape_markdown(out.logging_propensities.text) + ".")
    if out.judged is not None:
        j, kk = out.judged, out.k
        st.caption(escape_markdown(j.get("note") or (
            f"Judged: DCG@{kk} {interval_text(j[f'dcg@{kk}'], '{:.3f}')} against the production order's "
            f"{interval_text(j[f'logged_dcg@{kk}'], '{:.3f}')}; "
            f"{j['judged_share']:.0%} of the top-{kk} slots judged (unjudged count 0).")))
