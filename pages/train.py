from dataclasses import dataclass, replace

import pandas as pd
import streamlit as st

from pages._common import memo, page_title, run_page
from pages._jobs import job_buttons, live, queue_note, submit_jobs
from pages._links import linked_log, note_correction, qp, read_setting, session_log_spec, url_notices
from pages._params import url_name
from pages._rankers import rankers_section
from ultr_core.algorithms import ALGORITHMS, TrainConfig
from ultr_core.algorithms.hyper import shown_for
from ultr_core.algorithms.specs import SPECS_BY_KEY
from ultr_core.app.figures import observation_curve_figure, training_curves_figure
from ultr_core.app.pagestate import TRAIN_SETTINGS
from ultr_core.app.playground import curve_note, truth_note
from ultr_core.app.text import code_span, escape_markdown
from ultr_core.clickmodels.registry import MODEL_BY_KEY, USER_MODELS
from ultr_core.errors import ConfigError
from ultr_core.simulation.clickmodel import signal_curve
from ultr_core.simulation.logspec import LogSpec
from ultr_core.studies.experiment import live_observation_curves, training_progress
from ultr_core.tasks import MethodsOptions, train_methods_jobs

NAMES = {v: k for k, v in ALGORITHMS.items()}
#: metrics of a run the test table leaves out: pooled MCC, and the preset claims' curve fits (the chart shows the curve)
NOT_SHOWN = ("mcc", "curve_fit", "flat_curve_fit")
TRAINABLE = list(ALGORITHMS.values())
SETTING = {s.url: s for s in TRAIN_SETTINGS}






def main():
    page_title("Train & watch")
    st.caption(
        "Training runs in the background: the charts update every second while the rest of the app stays usable."
    )
    link_spec, ds, log, note = _log_to_train()
    with st.sidebar:
        link_spec, ds, log, other_users = _users_of(link_spec, ds, log)
    st.info(other_users or note)
    noise = log.meta.get("click_model", {}).get("noise", 0.1)
    with st.sidebar:
        c = _choices()
    url_notices()
    st.query_params.update({k: SETTING[k].to_url(v) if k in SETTING else str(int(v)) if isinstance(v, bool) else str(v)
                            for k, v in c.url_values().items()})
    if link_spec:
        st.query_params["log"] = link_spec
    elif "log" in st.query_params:
        del st.query_params["log"]
    job_buttons("train_job", "▶ Start training", lambda: _start(c, noise, link_spec, log, ds, _log_name(link_spec)),
                disabled=not c.algorithms)
    truth = signal_curve(log)                 # θ_p, or the click signal θ_p(ε⁺ − ε⁻) of trust-bias users
    users = _user_model(log)
    trained_on = st.session_state.get("train_job_log")
    if st.session_state.get("train_job") is not None and trained_on not in (None, _log_name(link_spec)):
        st.warning(f"The charts and metrics below belong to the previous log ({escape_markdown(trained_on)}), not "
                   "to this one: press Start to train on it.")             # a result names the log it belongs to
        truth, users = None, None                   # this log's truth is not the curve those runs estimated
    live("train_job", lambda job: _show(job, truth, c.seed, users))
    rankers_section(ds, log, link_spec, list(c.algorithms),
                    {"model": c.model, "lr": c.lr, "steps": c.steps, "seed": int(c.seed)})
    with st.expander("Methods and formulas", expanded=False):
        for a in c.algorithms:
            spec = SPECS_BY_KEY[a]
            st.markdown(f"**{ALGORITHMS[a]}** — {spec.cite}")
            st.latex(spec.latex)


def _log_to_train():
    """(link spec or None, data set, log, what the page says it trains on): a link's log, else the Simulate
    page's, else the built-in default."""
    session_log = ("log" in st.session_state and "dataset" in st.session_state
                   and "row" in st.session_state["log"].frame)
    link_spec = None
    linked = linked_log()                              # a shared link names its log: rebuild exactly that one
    default = LogSpec()
    default_note = ("Training on the built-in default: synthetic data, PBM η = 1, ε = 0.1, 20,000 sessions (seed 0). "
                    "Change it on the Simulate page.")
    if linked is not None:
        link_spec, ds, log = linked
        if link_spec == default.to_string():       # the page's own link to the default (it is in the URL after a rerun)
            note = default_note
        else:
            note = (f"Training on the log this link names: {code_span(link_spec)} ({log.n_sessions:,} sessions "
                    f"on {escape_markdown(ds.name)}).")
    elif "log" in st.query_params:
        note_correction(
            "using " + ("the Simulate page's log" if session_log else "the built-in default") + " instead")
    if link_spec is None and session_log:
        log = st.session_state["log"]
        ds = st.session_state["dataset"]
        link_spec = session_log_spec()
        note = (
            f"Training on the log from the Simulate page ({log.n_sessions:,} sessions on "
            f"{escape_markdown(ds.name)})."
            + ("" if link_spec else " It was built from an uploaded file, so links to this page cannot rebuild it.")
        )
    elif link_spec is None:
        link_spec = default.to_string()
        ds, _, log = memo(("logspec", link_spec), default.simulate)
        note = default_note
    return link_spec, ds, log, note


def _users_of(link_spec, ds, log):
    """The user model of the log to train on (issue #34): the same simulated log with users who click as another
    model of the click-model table — the link then names that log; an uploaded log's users are what they are.
    Returns (link spec, data set, log, what the page says it trains on when the users changed, else None)."""
    st.header("Log")
    spec = None
    if link_spec:
        try:
            spec = LogSpec.parse(link_spec)
        except ConfigError:
            spec = None
    current = _user_model(log)
    if spec is None or current not in USER_MODELS:
        st.caption("Users: as recorded in the uploaded log (no user model to change).")
        return link_spec, ds, log, None
    if st.session_state.get("train_user_for") != link_spec:       # another log: start from its own users
        st.session_state.pop("train_user", None)
    user = st.selectbox("users click as", USER_MODELS, USER_MODELS.index(current), key="train_user",
                        format_func=lambda k: MODEL_BY_KEY[k].label,
                        help="the same data, sessions and seeds with clicks drawn by this user model (its default "
                             "continuation γ); the Simulate page sets every other knob")
    if user == current:
        st.session_state["train_user_for"] = link_spec
        return link_spec, ds, log, None
    st.session_state["train_user_for"] = link_spec
    try:
        new = replace(spec, click=replace(spec.click, user_model=user, continuation=None))
    except ConfigError as e:
        st.warning(f"Kept {MODEL_BY_KEY[current].label} users: {escape_markdown(e)}")
        return link_spec, ds, log, None
    ds, _, log = memo(("logspec", new.to_string()), new.simulate)
    said = f"Training on the same log with {MODEL_BY_KEY[user].label} users: {code_span(new.to_string())}."
    st.caption(said)
    return new.to_string(), ds, log, said


def _user_model(log) -> str:
    """The user model that drew the log's clicks (its metadata; a log without one: PBM's positions)."""
    return log.meta.get("click_model", {}).get("user_model", "pbm")


@dataclass(frozen=True)
class Choices:
    """The sidebar's choices: the algorithms (internal names), ranking model, learning rate, steps, seed, whether to
    add the reference lines, where clicks come from, and the methods' hyper-parameters — by URL key (``urls``) and
    by the field they set (``hyper``)."""

    algorithms: tuple
    model: str
    lr: float
    steps: int
    seed: int
    refs: bool
    clicks: str
    urls: dict
    hyper: dict

    def url_values(self) -> dict:
        """URL key → value, the page's settings first, then the methods' hyper-parameters."""
        return {"algorithms": self.algorithms, "model": self.model, "lr": self.lr, "steps": self.steps,
                "seed": self.seed, "refs": self.refs, "clicks": self.clicks, **self.urls}


def _choices() -> Choices:
    """The sidebar's algorithms, ranker, optimisation and method hyper-parameters (URL keys as keys)."""
    st.header("Algorithms")
    v = _settings()
    chosen = st.multiselect("algorithms", TRAINABLE, [ALGORITHMS[a] for a in v["algorithms"]],
                            help="each is trained on the same log; see the formulas below the charts",
                            key="train_algorithms")
    model = st.radio("ranking model", SETTING["model"].options, SETTING["model"].options.index(v["model"]),
                     horizontal=True, help="DNN = ELU MLP (64, 32); Linear = one affine layer",
                     key="train_ranking_model")
    lr = st.select_slider("learning rate", SETTING["lr"].options, v["lr"], help="Adam step size",
                          key="train_learning_rate")
    s = SETTING["steps"]
    steps = st.slider("steps", s.lo, s.hi, v["steps"], 50, help="batches of 256 sessions", key="train_step_count")
    s = SETTING["seed"]
    seed = st.number_input("seed", s.lo, s.hi, v["seed"], help="initialisation and batch order", key="train_seed")
    refs_on = st.checkbox("Naive and Oracle as reference lines", v["refs"] == 1,
                          help="also train raw clicks (Naive, the floor) and true labels (Oracle, the ceiling) "
                               "on the same log; drawn dashed", key="train_naive_and_oracle_as_reference")
    clicks = st.radio("clicks", SETTING["clicks"].options, SETTING["clicks"].options.index(v["clicks"]),
                      horizontal=True,
                      help="log: batches drawn from the simulated log; online: fresh clicks every step from the same "
                           "click model (ULTRA's simulation, used by the LBD paper)", key="train_clicks")
    keys = tuple(NAMES[a] for a in chosen)
    urls, fields = _hyper_widgets(list(keys))
    return Choices(keys, model, lr, steps, seed, refs_on, clicks, urls, fields)


def _settings() -> dict:
    """The page's settings (:data:`~ultr_core.app.pagestate.TRAIN_SETTINGS`) read from the link, each corrected value
    announced."""
    return {s.url: read_setting(s) for s in TRAIN_SETTINGS}


def _hyper_widgets(algorithms: list) -> tuple[dict, dict]:
    """The hyper-parameters the chosen methods read (their records' ``params``), one widget each from the table of
    :mod:`ultr_core.algorithms.hyper`: (URL key → value, TrainConfig field → value, None where a toggle chose the
    method's own)."""
    urls, fields = {}, {}
    with st.expander("method hyper-parameters"):
        shown = shown_for(algorithms)
        if not shown:
            st.caption("The chosen methods have no hyper-parameter here; the CLI's `train --set FIELD=VALUE` sets any.")
        for h in shown:
            t = h.toggle
            if t is not None and t.url not in urls:
                urls[t.url] = st.checkbox(t.label, qp(t.url, int(t.default), int, 0, 1) == 1, help=t.help,
                                          key=f"train_{t.url}")
            off = t is not None and urls[t.url]
            name = url_name(h.url, h.aliases)
            common = dict(help=h.help, disabled=off, key=f"train_{h.url}")
            if h.options:
                make = st.radio if isinstance(h.default, str) else st.select_slider
                value = qp(name, h.default, type(h.default), options=h.options)
                urls[h.url] = (make(h.label, h.options, h.options.index(value), horizontal=True, **common)
                               if make is st.radio else make(h.label, h.options, value, **common))
            else:
                urls[h.url] = st.slider(h.label, h.lo, h.hi, qp(name, h.default, float, h.lo, h.hi), h.step, **common)
            fields[h.field] = None if off else urls[h.url]
    return urls, fields


def _log_name(link_spec) -> str:
    """The log a run trains on, as a sentence can name it: its spec, or the uploaded file's name."""
    if link_spec:
        return link_spec
    key = st.session_state.get("log_key")
    return f"the uploaded log {key[1][0]}" if isinstance(key, tuple) and key[:1] == ("upload",) else "the current log"


def _start(c: Choices, noise: float, link_spec, log, ds, log_name: str):
    try:
        options = MethodsOptions(algorithms=c.algorithms, references=bool(c.refs),
                                 train=TrainConfig(model=c.model, lr=c.lr, steps=c.steps, seed=int(c.seed),
                                                   clicks=c.clicks),
                                 hyper=tuple(c.hyper.items()))
        jobs = train_methods_jobs(options, noise=noise, spec=link_spec, log=log, dataset=ds)   # checked: earlier
    except ConfigError as e:                                                                 # results stay
        st.error(f"Check the settings: {escape_markdown(e)}")
        return None
    st.session_state["train_refs"] = tuple(ALGORITHMS[r] for r in options.added_references)
    st.session_state["train_steps"] = c.steps                  # per job: one method each
    st.session_state["train_job_log"] = log_name
    # one pooled job per method; a reproducible log travels as its spec and identical runs are shared
    return submit_jobs(jobs)


def _show(job, truth, seed, users="pbm"):
    if job is None:
        st.caption("Press Start: loss, validation nDCG@10 and the estimated observation curve appear here live.")
        return
    if queue_note(job):
        return
    recs = job.records
    done_steps, total = training_progress(job, st.session_state.get("train_steps", 1))   # a cached run counts in full
    st.progress(min(done_steps / total, 1.0), text=f"{job.status} — step {done_steps:,} of {total:,} "
                                                    f"({job.elapsed:.0f} s)")
    a, b = st.columns(2)
    refs = st.session_state.get("train_refs", ())
    a.plotly_chart(training_curves_figure([r for r in recs if r["algorithm"] not in refs], key="loss",
                                          title="training loss"),
                   key="live_loss")
    a.caption("Losses of debiasing methods are re-weighted by their current bias estimate (e.g. DLA's ô₁/ô_p), "
              "so they can rise while the estimate sharpens; validation nDCG is the number to watch.")
    b.plotly_chart(training_curves_figure(recs, key="valid_ndcg@10", title="validation nDCG@10", references=refs),
                   key="live_ndcg")
    curves = live_observation_curves(recs, truth)
    if len(curves) > 1:                                # an estimate beside the truth
        st.plotly_chart(observation_curve_figure(curves), key="live_obs")
        st.caption(" ".join(x for x in (curve_note(list(curves)), truth_note(users) if "truth" in curves else "") if x))
    if job.error:
        st.error(f"Training failed — {escape_markdown(job.error)}")
    elif not job.running and job.result:
        rows = [{"algorithm": k, **{m: x for m, x in v["metrics"].items() if m not in NOT_SHOWN}, "steps": v["steps"]}
                for k, v in job.result.items()]
        table = pd.DataFrame(rows).rename(columns={"spearman_within_query": "Spearman ρ"}).round(3)
        steps = f"{table['steps'].iloc[0]:,} steps each; " if table["steps"].nunique() == 1 else ""
        st.subheader("Test metrics")
        st.dataframe(table.drop(columns="steps") if steps else table, hide_index=True)   # fits a 1024 px projector
        st.caption(f"Seed {seed}; {steps}nDCG@k excludes queries without a relevant document; Spearman ρ (within "
                   f"query) = "
                   "rank correlation of the scores with the true relevance inside each query, pooled over queries. "
                   "MCC (a Pearson correlation of raw scores) is not shown here: listwise scores are fixed only up "
                   "to a shift per query and on a log scale, so it is not defined for them.")


run_page(main)
