"""Playground — the teaching landing page: click-model knobs beside live charts on one screen.
Any change re-simulates the log and restarts training (Naive, the chosen methods, Oracle)."""
from dataclasses import replace

import streamlit as st

from pages._common import memo, run_page
from pages._jobs import job_figure, live, queue_note, release_job, submit_jobs
from pages._links import note_correction, qp, url_notices
from pages._params import url_name
from pages._story import ig_box, log_claims_line, log_span_tile
from ultr_core.app.figures import compact, ctr_by_position_figure, observation_curve_figure, training_curves_figure
from ultr_core.app.jobhandles import JobGroup
from ultr_core.app.knobs import (
    KNOB_BY_FIELD,
    KNOBS,
    LRS,
    SEEDS,
    SESSIONS,
    knob_value,
    reconcile,
    settings_from_state,
    trainable,
)
from ultr_core.app.playground import (
    PRESET_SEEDS,
    PRESETS,
    PlaygroundSettings,
    algorithm_names,
    check_claims,
    curve_note,
    log_view,
    seed_runs,
    seed_table,
    truth_note,
)
from ultr_core.app.text import escape_markdown
from ultr_core.clickmodels.registry import MODEL_BY_KEY, USER_MODELS
from ultr_core.data.roots import available_datasets
from ultr_core.evaluation.claims import VERDICT_RULE_SHORT
from ultr_core.studies.experiment import live_observation_curves, training_progress

# Static page styling (no user content): a tighter page so the knobs and four charts fit 1280×720.
CSS = """<style>
div[data-testid="stMainBlockContainer"] {padding: 1.6rem 1.5rem 0.4rem 1.5rem; max-width: none;}
div[data-testid="stVerticalBlock"] {gap: 0.35rem;}
div[data-testid="stSlider"] {padding-bottom: 0rem;}
div[data-testid="stAlert"] p {font-size: 0.85rem; line-height: 1.35;}
div[data-testid="stAlertContainer"] {padding: 0.6rem 0.8rem;}
@media (max-width: 1180px) {          /* a 1024-px projector: narrower sidebar, smaller labels */
  section[data-testid="stSidebar"] {min-width: 190px !important; max-width: 190px !important;}
  div[data-testid="stMainBlockContainer"] {padding: 1.6rem 0.8rem 0.2rem 0.8rem;}
  div[data-testid="stWidgetLabel"] p {font-size: 0.78rem;}
  div[data-testid="stMarkdownContainer"] h4 {font-size: 1.05rem; padding: 0.2rem 0 0.4rem 0;}
  div[data-testid="stAlert"] p, div[data-testid="stCaptionContainer"] p {font-size: 0.78rem; line-height: 1.3;}
  div[data-testid="stAlertContainer"] {padding: 0.5rem 0.7rem;}
  section[data-testid="stSidebar"] div[data-testid="stExpanderDetails"] {padding-left: 0.5rem; padding-right: 0.5rem;}
  section[data-testid="stSidebar"] div[data-baseweb="select"] {font-size: 0.8rem;}
}
/* the story box shows its whole name instead of cutting it at 1024 px ("coupling breaks DLA, LBD h"): a smaller font */
@media (max-width: 1100px) {.st-key-pg_preset input {font-size: 0.74rem !important; padding-left: 0.3rem !important;}
  .st-key-pg_user_model input, .st-key-pg_continuation input {font-size: 0.74rem !important;
    padding-left: 0.3rem !important; padding-right: 0 !important; min-width: 0 !important;}
  .st-key-pg_user_model button, .st-key-pg_continuation button[aria-label="Open"] {padding: 0 !important;
    width: 1rem !important;}}
@media (max-height: 640px) {          /* a 576-px-high projector: denser knobs, no page title (the sidebar names it) */
  div[data-testid="stMarkdownContainer"] h4 {display: none;}
  .st-key-pg_user_model [data-testid="stWidgetLabel"], .st-key-pg_methods [data-testid="stWidgetLabel"] {display: none;}
  div[data-testid="stVerticalBlock"] {gap: 0.15rem;}
  div[data-testid="stWidgetLabel"] {min-height: 1rem; margin-bottom: -0.2rem;}
  div[data-testid="stSlider"] > div {margin-top: -0.3rem;}
  div[data-testid="stTickBar"], div[data-testid="stSliderTickBarMin"], div[data-testid="stSliderTickBarMax"] {display:
  none;}
}
@media (max-height: 800px) {          /* run settings open: the page list steps aside so they fit the sidebar */
  section[data-testid="stSidebar"]:has(details[open]) [data-testid="stSidebarNav"],
  section[data-testid="stSidebar"]:has(details[open]) [data-testid="stSidebarNavSeparator"] {display: none;}
}
</style>"""
PRESENT_CSS = """<style>
section[data-testid="stSidebar"], div[data-testid="stSidebarCollapsedControl"],
button[data-testid="stExpandSidebarButton"], header[data-testid="stHeader"] {display: none;}
div[data-testid="stMainBlockContainer"] {padding: 0.6rem 1.2rem 0.2rem 1.2rem;}
@media (min-height: 700px) and (min-width: 1200px) {html {font-size: 18px;}}
@media (max-height: 640px) {div[data-testid="stCaptionContainer"] p {font-size: 0.8rem; line-height: 1.3;}}
div[data-testid="stPopoverBody"] {max-height: calc(100vh - 90px) !important; overflow-y: scroll !important;}
div[data-testid="stPopoverBody"]::-webkit-scrollbar {width: 10px;}
div[data-testid="stPopoverBody"]::-webkit-scrollbar-thumb {background: #9aa0a6; border-radius: 5px;}
div[data-testid="stPopoverBody"]::-webkit-scrollbar-track {background: #eceff1;}
div[data-testid="stPopoverBody"]::after {content: "⇕ scroll for every knob"; position: sticky; bottom: -24px;
  display: block; text-align: center; font-size: 0.75rem; color: #444; padding: 16px 0 6px 0;
  background: linear-gradient(rgba(255, 255, 255, 0), #fff 45%);}
</style>"""
PRESENT_TILE = 230          # px: two rows of tiles under one row of buttons and a two-line note fit 576 px
NAMES = algorithm_names()
OWN = "(your own settings)"
D = PlaygroundSettings()


def _init(key: str, value) -> None:
    """A widget's first value (from the URL); later runs keep what the user set."""
    if key not in st.session_state:
        st.session_state[key] = value


def _apply_preset(keep=()) -> None:
    """Set the knobs of the chosen preset (those named in ``keep`` — URL parameters — stay): every knob the
    story depends on, its data included, and the seeds its claims are checked over."""
    name = st.session_state["pg_preset"]
    st.session_state["pg_knob_notes"] = []          # a story's knobs are consistent: earlier notes no longer apply
    preset = next((p for p in PRESETS if p.name == name), None)
    if preset is None:
        return
    settings = preset.settings(seeds=PRESET_SEEDS, steps=st.session_state.get("pg_steps", D.steps),
                               lr=st.session_state.get("pg_lr", D.lr))
    st.session_state.update({k.key: k.to_widget(knob_value(settings, k)) for k in KNOBS
                             if k.query not in keep and k.field not in ("steps", "lr")})


def _pin_knobs() -> None:
    """Send every knob's value with every run.  A widget the browser has not drawn yet — the knobs of a closed
    presentation popover — is built from its proto when it is first shown; after a run that did not set its
    value (the rerun when training ends) that proto carries only the widget's default, its minimum, and the
    knobs opened at η 0, ε 0, no methods.  Re-assigning the session value marks it as set in this run."""
    for key in ["pg_preset"] + [k.key for k in KNOBS]:
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def _moved(field: str) -> None:
    """A knob's callback: remember which knob the user moved (it wins in :func:`_reconcile_knobs`)."""
    st.session_state["pg_changed"] = field


def _reconcile_knobs() -> None:
    """Before the knobs are drawn: a combination no run can take (cascade users with PBM's coupling, CLD without a
    top-k) is resolved by :func:`ultr_core.app.knobs.reconcile`, and the page says what it changed."""
    values = {k.field: k.to_setting(st.session_state[k.key]) for k in KNOBS}
    moved = st.session_state.pop("pg_changed", None)
    fixed, notes = reconcile(values, moved)
    for field, value in fixed.items():
        if value != values[field]:
            st.session_state[KNOB_BY_FIELD[field].key] = KNOB_BY_FIELD[field].to_widget(value)
    if notes or moved is not None:          # kept through the live reruns until a knob moves again
        st.session_state["pg_knob_notes"] = notes


def _from_url(knob, datasets):
    """A knob's first value: its URL value when valid (clamped to its range), else the default's widget value."""
    default = knob.to_widget(knob_value(D, knob))
    if knob.field == "dataset":
        return qp("dataset", default, options=datasets)
    name = url_name(knob.query, knob.aliases)                                         # older keys too
    if knob.lo is not None:
        return qp(name, default, knob.cast, knob.lo, knob.hi)
    if name not in st.query_params:
        return default
    raw = st.query_params[name]
    value = knob.parse(raw)
    dropped = isinstance(value, list) and len(value) < len([x for x in raw.split(",") if x])
    if value is None or dropped:                                  # every corrected value is announced
        bad = [x for x in raw.split(",") if x and knob.parse(x) is None] if dropped else [raw]
        note_correction(
            f"{name}={','.join(bad)[:30]!r} is not one of the choices; "
            f"using {', '.join(value) if dropped else default}")
    return default if value is None else value


#: how the click model's knobs sit in the main column (pairs), before the user model and the methods
MODEL_LAYOUT = (("eta", "noise"), ("topk", "coupling"), ("shuffle", "blocks"), ("contexts", "steps"))


def _knob_widget(where, knob, **kw) -> None:
    """One knob's widget from its record: a choice (a select-slider, or a select box for names), a short whole-number
    range as a select-slider, else a slider; label, help, range and key from the knob table."""
    common = dict(key=knob.key, on_change=_moved, args=(knob.field,), help=knob.help, **kw)
    if knob.options is not None and isinstance(knob.options[0], str) and knob.options[0] != "all":
        where.selectbox(knob.label, knob.options, **common)
    elif knob.options is not None:
        where.select_slider(knob.label, knob.options, **common)
    elif knob.cast is int:
        where.select_slider(knob.label, list(range(int(knob.lo), int(knob.hi) + 1)), **common)
    else:
        where.slider(knob.label, float(knob.lo), float(knob.hi), step=knob.step, **common)


def _model_knobs() -> None:
    """The click model's knobs, the methods and the steps (the main column, or the presentation popover)."""
    for pair in MODEL_LAYOUT:
        for where, field in zip(st.columns(2), pair):
            _knob_widget(where, KNOB_BY_FIELD[field])
    users, gamma = st.columns([1.3, 1], vertical_alignment="bottom")   # boxes level when the users label hides
    _users_knob(users)
    _knob_widget(gamma, KNOB_BY_FIELD["continuation"])
    for knob in KNOBS:                               # knobs an extension adds (simulation parameters)
        if knob.field not in D.__dataclass_fields__:
            _knob_widget(st, knob)
    st.multiselect("methods (+ Naive, Oracle)", list(NAMES), key="pg_methods", on_change=_moved, args=("methods",),
                   help="trained one after another on the same log with the same seed; Naive (raw clicks) and "
                        "Oracle (true labels) are always trained first as the floor and the ceiling")


def _users_knob(where) -> None:
    """The user model the clicks are drawn from ("users: PBM" in the box, so its label may go on a projector)."""
    knob = KNOB_BY_FIELD["user_model"]
    _knob_widget(where, replace(knob, help="how simulated users click — " + "; ".join(
        f"{MODEL_BY_KEY[k].label}: {MODEL_BY_KEY[k].behaviour}" for k in USER_MODELS)
        + ". Coupling and contexts apply to PBM only."), format_func=lambda k: f"users: {MODEL_BY_KEY[k].label}")


def _run_knobs(datasets) -> None:
    """Data, log size, learning rate and seeds (the sidebar, or the presentation popover)."""
    st.selectbox("data", datasets, key="pg_dataset",
                 help="synthetic: 300 generated queries (fast); named data sets come from the data roots")
    st.select_slider("sessions", SESSIONS, key="pg_sessions", format_func=lambda n: f"{n // 1000}k",
                     help="simulated search sessions in the click log")
    st.select_slider("learning rate", LRS, key="pg_lr", help="Adam step size")
    a, b = st.columns(2, gap="xsmall")      # "seeds" and its help icon on one line in the 1024-px sidebar
    a.number_input("seed", 0, 10_000, key="pg_seed", help="the first seed (log and initialisation)")
    b.select_slider("seeds", SEEDS, key="pg_seeds",
                    help="train seeds seed, seed + 1, …: the table then shows each method's mean and its 90 % "
                         "interval over seeds (presets run 5, the seeds their claims are checked over)")


def main():
    st.markdown(CSS, unsafe_allow_html=True)
    datasets = ["synthetic"] + [n for n in sorted(available_datasets()) if n in ("yahoo_sample", "mq2008")]
    st.session_state["pg_datasets"] = datasets
    presets = [OWN] + [p.name for p in PRESETS]
    if "pg_preset" not in st.session_state:          # first run: a link's preset, then its explicit knobs
        st.session_state["pg_preset"] = qp("preset", OWN, options=presets)
        _apply_preset(keep=set(st.query_params))
    for k in KNOBS:                                  # URL → state, one loop over the table of knobs
        _init(k.key, _from_url(k, datasets))
    _init("pg_present", qp("present", 0, int, 0, 1) == 1)
    _pin_knobs()
    _reconcile_knobs()
    present = st.session_state["pg_present"]
    charts, story_box, verdict_box = _layout(present, presets, datasets)
    settings = settings_from_state(st.session_state)
    preset = next((p for p in PRESETS if p.name == st.session_state["pg_preset"]), None)
    st.query_params.update({"preset": st.session_state["pg_preset"],          # state → URL, the same loop
                            **{k.query: k.to_url(st.session_state[k.key]) for k in KNOBS},
                            "present": str(int(st.session_state["pg_present"]))})
    with charts:
        url_notices()
    with story_box if present else charts:               # one plain line each; on a projector in the top row
        for note in st.session_state.get("pg_knob_notes", []):
            st.caption(f"⚠ {escape_markdown(note)}")
    changed = True
    if preset is not None:
        changed = any(getattr(settings, k) != v for k, v in preset.changes.items())
        story_box.caption(f"**{preset.name}**{' (knobs moved since)' if changed else ''} — {preset.story} "
                          f"*{preset.cite}*.")
    with charts:
        _charts(settings, preset, changed, present, verdict_box)


def _layout(present: bool, presets: list, datasets: list):
    """(charts, story box, verdict box): on a projector the charts take the screen and the knobs open from one
    button; else the knobs sit beside the charts and the run settings in the sidebar."""
    if present:                  # projector: the charts take the screen, the knobs open from one button
        st.markdown(PRESENT_CSS, unsafe_allow_html=True)
        top, story_box = st.columns([1.25, 3.0], vertical_alignment="center")
        with top:
            a, b = st.columns([0.8, 1.45], vertical_alignment="center")
            with a.popover("knobs", use_container_width=True):
                st.selectbox("story", presets, key="pg_preset", on_change=_apply_preset,
                             help="presets that tell one story each; any knob can be moved afterwards")
                _model_knobs()
                _run_knobs(datasets)
            b.toggle("presentation", key="pg_present", help="leave presentation mode (sidebar and knobs back)")
        charts = st.container()
        verdict_box = None                                  # the verdict goes in the results tile
    else:
        knobs, charts = st.columns([1.05, 2.7], gap="medium")
        with knobs:
            st.markdown("#### ULTR Playground")
            st.selectbox("story", presets, key="pg_preset", on_change=_apply_preset, label_visibility="collapsed",
                         help="presets that tell one story each; any knob can be moved afterwards")
            _model_knobs()
            st.toggle("presentation mode", key="pg_present",
                      help="projector: hide the sidebar, the charts take the screen, the knobs open from a button")
            verdict_box = st.container()                    # the log's IG verdict, under the knobs that made it
        n_seeds = st.session_state["pg_seeds"]
        with st.sidebar.expander("run settings", key="pg_run_settings"):   # one label and key: it stays open
            _run_knobs(datasets)
        st.sidebar.caption(f"{n_seeds} seed{'s' if n_seeds > 1 else ''} · {st.session_state['pg_sessions']:,} sessions")
        story_box = charts

    return charts, story_box, verdict_box


def _tile(present: bool):
    return (lambda fig: compact(fig, height=PRESENT_TILE, title_size=17, font_size=13)) if present else compact


def _charts(settings, preset, changed: bool, present: bool, verdict_box) -> None:
    """The log's CTR tile, the live curves, the live observation estimate, the IG verdict and the results table."""
    spec = settings.log_spec()
    with st.spinner("Simulating clicks …"):
        ds, sim, log = memo(("logspec", spec.to_string()), spec.simulate)
    settings, left_out = trainable(settings, log)        # a method this log cannot train: said, never a failed job
    if left_out:
        st.caption(f"⚠ {escape_markdown(left_out)}")
    if st.session_state.get("pg_running_settings") != settings:      # a knob moved: restart
        release_job(st.session_state.get("pg_job"))   # stops it unless another visitor shares it
        st.session_state["pg_job"] = submit_jobs(settings.jobs())        # one pooled job per method
        st.session_state["pg_running_settings"] = settings
    view = memo(("pg-view", spec.to_string()), lambda: log_view(log, sim))
    ctr_fig = job_figure(None, ("pg-ctr", spec.to_string(), present),
                         lambda: _tile(present)(ctr_by_position_figure(view.ctr, view.observation,
                                                                       view.observation_label)), 0)
    n_methods = len(settings.train_configs())
    about_log = preset is not None and bool(preset.log_claims) and not changed
    if about_log:                      # its verdict above the tiles, in view at 1280×720 and 1024×576
        log_claims_line(preset)
    top_l, top_r = st.columns(2)
    bot_l, bot_r = st.columns(2)
    top_l.plotly_chart(ctr_fig, key="pg_ctr")          # fixed for this log: drawn once, not polled
    with top_r:
        live("pg_job", lambda job: _show_curves(_first_seed(job, n_methods), present))
    with bot_l:
        if about_log:                  # a story about the log itself: the chart its sentence is about
            log_span_tile(log, spec.to_string(), _tile(True))
        else:
            live("pg_job", lambda job: _show_observation(_first_seed(job, n_methods), present, view.truth,
                                                         settings.user_model))
    with verdict_box or bot_r:
        ig_box(view.verdict, present)
    with bot_r:
        live("pg_job", lambda job: _show_status(job, settings, preset, changed))


def _first_seed(job, n_methods: int):
    """The curves show the first seed's runs."""
    return JobGroup(job.jobs[:n_methods]) if job is not None and hasattr(job, "jobs") else job


def _show_curves(job, present: bool) -> None:                 # the live parts, each its own small fragment
    recs = job.records if job is not None else []
    fig = job_figure(job, f"pg-curves-{present}", lambda: _tile(present)(training_curves_figure(
        recs, key="valid_ndcg@3", title="validation nDCG@3 (live)", references=("Naive", "Oracle"))
    ).update_yaxes(title_text="nDCG@3"), len(recs))           # the title names the split: a short axis title
    st.plotly_chart(fig, key="pg_curves")


def _show_observation(job, present: bool, truth, users: str) -> None:
    recs = job.records if job is not None else []
    obs = live_observation_curves(recs, truth)
    if len(obs) > 1:                               # an estimate beside the truth
        st.plotly_chart(job_figure(job, f"pg-obs-{present}", lambda: _tile(present)(observation_curve_figure(obs)),
                                   len(recs)), key="pg_obs")
        note = curve_note(list(obs), short=True)       # the Train page says what every curve is, in full
        if note and not present:
            note += " Train & watch says what every curve is."
        said = " ".join(n for n in (note, truth_note(users, short=True)) if n)
        if said:                                       # one caption: a projector has no line to spare
            st.caption(said)


def _show_status(job, settings, preset, changed: bool):
    if job is None:
        return
    if job.error:
        st.error(f"Training failed — {escape_markdown(job.error)}")
        return
    if queue_note(job):
        return
    runs = seed_runs(settings, [j.result for j in job.jobs] if hasattr(job, "jobs") else [job.result])
    if job.running:
        done, total = training_progress(job, settings.steps)      # every seed's jobs, cached ones in full
        others = getattr(job, "watchers", 0)          # visitors sharing this very run (identical settings)
        st.progress(min(done / total, 1.0), text=f"training — step {done:,} of {total:,} "
                                                  f"({job.elapsed:.0f} s)"
                                                  + (f" · shared by {others} visitors" if others > 1 else ""))
    if len(runs):
        n = runs["seed"].nunique()
        st.dataframe(seed_table(runs), hide_index=True, row_height=28)
        if n == 1 and settings.seeds > 1:      # mid-run: the other seeds are still training
            st.caption(f"Test nDCG, 1 of {settings.seeds} seeds in (seed {runs['seed'].iloc[0]}): the 90 % "
                       "intervals appear once two seeds have finished.")
        elif n == 1:
            st.caption(f"Test nDCG, one seed ({runs['seed'].iloc[0]}): gaps under ≈ 0.02 are seed noise "
                       "(raise *seeds* for intervals).")
        else:
            text = f"Test nDCG@3, mean and 90 % t-interval over {n} of {settings.seeds} seeds."
            if preset is not None and preset.claims and not changed and n == settings.seeds:     # all in
                text += " Claims — " + "; ".join(
                    f"{c.sentence}: **{r.verdict}** ({c.better} − {c.worse} = {r.mean_diff:+.3f} [{r.lo:+.3f}, "
                    f"{r.hi:+.3f}])" for c, r in zip(preset.claims, check_claims(runs, preset.claims).itertuples()))
                text += f" ({VERDICT_RULE_SHORT})."
            st.caption(text)
    if preset is not None and preset.claims and (changed or len(runs) == 0 or runs["seed"].nunique() < settings.seeds):
        st.caption("Claims: " + "; ".join(c.sentence for c in preset.claims)
                   + f" — read over {PRESET_SEEDS} seeds, as the project's tests check it")


run_page(main)
