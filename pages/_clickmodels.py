"""The click-model section the Upload and Identifiability pages share (issue #34): the log → one pooled job
(:func:`ultr_core.tasks.fit_click_models.click_models_job`, progress per model) → tables and figure factories."""
import hashlib

import pandas as pd
import streamlit as st

from pages._common import memo
from pages._jobs import live, queue_note, submit_job
from pages._report import add_section
from pages._uploads import kept_upload
from ultr_core.app.clickmodel_figures import continuation_table, judges_figure, matrix_figures, rank_parameters_figure
from ultr_core.app.figures import perplexity_by_rank_figure
from ultr_core.app.text import escape_markdown
from ultr_core.clickmodels.judgement_agreement import RULE, judgement_rows, score_judgements
from ultr_core.clickmodels.prior import PRIOR_LABELS, prior_text
from ultr_core.clickmodels.registry import CLICK_MODELS
from ultr_core.errors import DataFormatError
from ultr_core.identifiability.reports import document_components
from ultr_core.logs.judgements import read_judgements
from ultr_core.logs.mapping import file_id_frame
from ultr_core.logs.outputs import safe_csv
from ultr_core.logs.scores import side_file_problem
from ultr_core.tasks.fit_click_models import click_models_job

PRIOR_BY_LABEL = {label: key for key, label in PRIOR_LABELS.items()}
LEARNED_BY_DEFAULT = ", ".join(s.label for s in CLICK_MODELS if s.prior == "learned")
PRIOR_HELP = ("Each model's own: the learned prior for " + LEARNED_BY_DEFAULT + " (they fit held-out sessions of "
              "sparse logs better with it), PyClick's ½ for the rest. PyClick's ½: every (query, document) pair "
              "starts at one success in two trials, so a pair never seen in training is estimated at ½. Learned: "
              "shrinkage towards a shared baseline (global, per query or per mean rank) of a strength chosen on a "
              "held-out fifth of the training sessions (docs/click_models.md)")


def click_model_section(log, an, key, prefix: str) -> None:
    """Which click model explains the log (first 75 % of the sessions train, the rest test — PyClick's protocol),
    each model's bias parameters and its relevance per (query, document) with the IG component: one pooled job
    (shared by every page and visitor that asks for the same log, progress per model), a table, charts and a CSV.
    ``prefix`` keeps the widget keys of two pages apart."""
    st.subheader("Which click model explains the clicks?")
    if log.meta.get("sessions") == "inferred":
        st.info("Click models need sessions: this log has no session ids (the Upload page maps a session column), "
                "so its sessions were inferred from query changes — no click model is fitted to them.")
        return
    prior = PRIOR_BY_LABEL[st.radio("attractiveness prior", list(PRIOR_BY_LABEL), horizontal=True,
                                    key=f"{prefix}_cm_prior", help=PRIOR_HELP)]
    job_key = f"{prefix}_cm_job"
    if st.session_state.get(f"{job_key}_for") != (key, prior):  # a new log or prior: fit the zoo as one pooled job
        st.session_state[job_key] = submit_job(("clickmodels", key, prior), click_models_job, file_id_frame(log),
                                               prefix, prior=prior)       # the file's own ids, as the CLI reads them
        st.session_state[f"{job_key}_for"] = (key, prior)
    live(job_key, lambda job: _show(job, an, log, prefix, (key, prior)))


def _show(job, an, log, prefix: str, key) -> None:
    """The running job's progress, its refusal, or the comparison."""
    if job is None or queue_note(job):
        _judge_inputs(prefix)                     # drawn in every state, so that an uploaded file is kept
        return
    if job.error:
        st.info(f"No click model is fitted: {escape_markdown(job.error)}")
        return
    if job.running or job.result is None:
        recs = [r for r in job.records if "done" in r]
        done, total = (recs[-1]["done"], recs[-1]["total"]) if recs else (0, 10)
        last = f" (last: {recs[-1]['model']})" if recs else ""
        st.progress(done / total, text=f"fitting click models: {done} of {total}{last} · {job.elapsed:.0f} s")
        _judge_inputs(prefix)
        return
    out = job.result
    rows = [{"model": m.label, "log-likelihood": m.log_likelihood, "perplexity": m.perplexity,
             "conditional perplexity": m.conditional_perplexity, "seconds": m.seconds,
             **({"prior": prior_text(m.prior)} if m.prior else {})} for m in out.models.values()]
    st.caption(f"Fitted on the first {out.train_sessions:,} sessions, scored on the next {out.test_sessions:,} "
               f"({out.dropped_test_sessions:,} of unseen queries dropped); PyClick's conventions and scores "
               "(docs/click_models.md)" + ("; the learned prior, where a model used one, in the last column" if any(
                   m.prior for m in out.models.values()) else "") + ". Higher log-likelihood and lower "
               "perplexity are better.")
    table, fig = pd.DataFrame(rows).round(4), perplexity_by_rank_figure(out.models)    # built once: page and report
    st.dataframe(table, hide_index=True)
    said = out.best_fit.sentence() + " — 90 % interval paired over the test sessions" if out.best_fit else ""
    if said:
        st.caption(escape_markdown(said) + ".")
    st.plotly_chart(fig, key=f"{prefix}_perplexity")
    add_section("Which click model explains the clicks?", table=table, figure=fig, text=said, caption=f"fitted on "
                f"the first {out.train_sessions:,} sessions, scored on the next {out.test_sessions:,}")
    _bias_parameters(out.models, prefix)
    rel = out.relevance.astype({"query_id": str, "doc_id": str}).merge(document_components(an, log), how="left")
    st.download_button("Download relevance per (query, document) and model (CSV)", safe_csv(rel),
                       "click_model_relevance.csv", mime="text/csv",
                       key=f"{prefix}_relevance_csv",
                       help="training impressions and clicks of each pair, its IG component, every model's relevance "
                            "estimate and DBN's and SDBN's satisfaction, and prior_dominated: whether the clicks or "
                            "the one-in-two prior decide the estimate — compare estimates only inside one component")
    _judges(out, prefix, key)


def uploaded_judgements(up):
    """(the parsed :class:`~ultr_core.logs.judgements.Judgements`, the file's digest) of an uploaded judgements file:
    parsed once per file in the shared cache, the same object for the judges' table and the counterfactual job (which
    receives it parsed, never the bytes to parse again)."""
    data = up.getvalue()
    digest = hashlib.blake2b(data, digest_size=16).hexdigest()
    return memo(("judgements-file", digest), lambda: read_judgements(data, name="judgements"), own=True), digest


def _judges(out, prefix: str, key) -> None:
    """Click fit beside ranking quality: the comparison scored against an uploaded judgements file (issue #47), once
    per (log, file, toggle) in the shared cache — a rerun of the page does not redo the bootstrap."""
    up, include = _judge_inputs(prefix)
    if up is None:
        return
    problem = side_file_problem(up.size, "judgements")
    if problem:
        st.error(f"We did not read the judgements — {problem}. The click models above are unchanged.")
        return
    try:
        judged, digest = uploaded_judgements(up)
        judged_fit = memo(("judges", key, digest, include),
                          lambda: score_judgements(out, judged, include_prior=include), own=True)
        models, rep = judged_fit.models, judged_fit.judgements
    except DataFormatError as e:
        st.error(f"We could not read the judgements — {escape_markdown(e)}. The click models above are unchanged.")
        return
    for n in rep.file.notes:
        st.info(escape_markdown(n))
    st.caption(f"{rep.file.rows:,} judgements kept; {rep.matched_pairs:,} match the log's pairs, "
               f"{rep.unmatched_judgements:,} do not ({rep.judgements_of_queries_not_in_the_log:,} of queries "
               f"the log lacks); {rep.prior_dominated.matched_and_flagged:,} judged pairs are prior-dominated "
               f"and {'included' if include else 'left out'}; {rep.pairs_scored:,} judged pairs scored. "
               "90 % intervals: bootstrap over queries.")
    if rep.note is not None:
        st.info(escape_markdown(rep.note))
        return
    table = pd.DataFrame(judgement_rows(models, rep))
    st.dataframe(table, hide_index=True)
    add_section("Do the judges agree?", table=table,
                text=rep.verdict.text if rep.verdict else "", caption="90 % intervals: bootstrap over "
                "queries; prior-dominated pairs " + ("included" if include else "left out"))
    st.plotly_chart(judges_figure(models, rep), key=f"{prefix}_judges")
    if rep.verdict:
        st.info(escape_markdown(rep.verdict.text) + ".")
        st.caption(f"Rule — {rep.verdict.rule}.")


def _judge_inputs(prefix: str):
    """The judgements uploader and its toggle: (the uploaded file or None, include prior-dominated pairs)."""
    st.markdown("**Do the judges agree?** Add editorial judgements to score every model's relevance against them.")
    up = kept_upload(f"{prefix}_judgements", st.file_uploader(
        "editorial judgements (optional)", key=f"{prefix}_judgements", help="TREC/LETOR qrels (`query 0 document "
        "grade`) or CSV/TSV with query, document and grade columns, grades 0–5; joined on the log's (query, "
        "document) ids"))
    include = st.checkbox("include prior-dominated estimates", key=f"{prefix}_include_prior", help=RULE)
    # this section is drawn inside the job's fragment, where a new file reruns the fragment only; the evaluation
    # below reads the same file (its judged DCG), so a changed file reruns the whole page once
    seen, token = f"{prefix}_judgements_seen", (up.name, up.size) if up is not None else None
    if st.session_state.get(seen) != token:
        st.session_state[seen] = token
        st.rerun()
    return up, include


def _bias_parameters(models: dict, prefix: str) -> None:
    """Each fitted model's bias parameters: per-rank lines, UBM's matrix, the scalar continuations."""
    with st.expander("Each model's bias parameters"):
        st.plotly_chart(rank_parameters_figure(models), key=f"{prefix}_rank_params")
        for key, fig in matrix_figures(models):
            st.plotly_chart(fig, key=f"{prefix}_{key}")
        table = continuation_table(models)
        if len(table):
            st.caption("Continuation parameters (DBN: γ after any document; CCM: τ₁ without a click, τ₂ / τ₃ after a "
                       "click on a non-relevant / relevant result). Attractiveness and satisfaction are per document: "
                       "the CSV below holds every model's relevance estimate (DBN, SDBN: α·σ) and their σ.")
            st.dataframe(table.round(4), hide_index=True)
