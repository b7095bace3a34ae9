import os
from dataclasses import dataclass

import streamlit as st

from pages._common import page_title, run_page
from pages._jobs import finished_result, finished_runs, job_buttons, live, submit_job
from pages._links import read_setting, url_notices
from ultr_core.algorithms import ALGORITHMS
from ultr_core.algorithms.specs import SPECS_BY_KEY
from ultr_core.app.figures import interval_bar_figure, sweep_figure
from ultr_core.app.pagestate import COMPARE_SETTINGS, SWEEPS
from ultr_core.app.playground import score_guess
from ultr_core.app.tables import claims_table
from ultr_core.app.text import escape_markdown
from ultr_core.errors import ConfigError
from ultr_core.evaluation.claims import VERDICT_RULE, VERDICTS
from ultr_core.simulation.simulated import APP_MAX_SWEEP_SESSIONS
from ultr_core.studies.presets import CUSTOM, PRESET_SWEEPS, ComparePreset
from ultr_core.tasks.compare_methods import METRICS, CompareOptions, MethodComparison, compare_methods_job

NAMES = {v: k for k, v in ALGORITHMS.items()}
SETTING = {s.url: s for s in COMPARE_SETTINGS}
CACHE = os.path.join(os.environ.get("ULTR_CACHE_DIR", ".ultr_cache"), "compare")



def main():
    page_title("Compare methods")
    st.caption("Methods × seeds on one setting, or a sweep over one parameter; mean with a 90 % t-interval across "
               "seeds. "
               "Finished cells are kept in the server's result cache and re-used.")
    with st.sidebar:
        c = _choices()
    url_notices()
    if c.preset != "custom":              # the whole name and its claims, never only the sidebar's cut box
        claims = c.p.claims
        st.markdown(f"**Preset:** {escape_markdown(c.preset)}" + (
            " — checks: " + "; ".join(escape_markdown(x.sentence) for x in claims) + "." if claims else
            " — our ablation: the paper makes no claim about it to check."))
    st.query_params.clear()
    st.query_params.update({k: SETTING[k].to_url(v) for k, v in c.url_values().items()})
    job_buttons("compare_job", "▶ Run", lambda: _start(c), disabled=not c.methods)
    live("compare_job", _show)
    with st.expander("Methods and formulas"):
        for m in c.methods:
            spec = SPECS_BY_KEY[NAMES[m]]
            st.markdown(f"**{m}** — {spec.cite}")
            st.latex(spec.latex)


def _linked_methods(p: ComparePreset, linked: bool) -> list:
    """The preset's methods, or those a link for this preset names (its setting: unknown names left out, with a
    notice), as labels."""
    s = SETTING["methods"].with_default(p.methods)
    return [ALGORITHMS[m] for m in (read_setting(s) if linked else s.default)]


@dataclass(frozen=True)
class Choices:
    """The sidebar's choices: the preset's name and record, the methods (labels), the sweep's name and its values as
    typed, seeds, sessions, training steps and whether to guess first."""

    preset: str
    p: ComparePreset
    methods: list
    sweep_name: str
    values_txt: str
    seeds: int
    sessions: int
    steps: int
    guess: bool

    def url_values(self) -> dict:
        """URL key → value: what the link carries (the values only with a sweep)."""
        out = {"preset": self.preset, "sweep": self.sweep_name, "seeds": self.seeds, "sessions": self.sessions,
               "steps": self.steps, "guess": self.guess, "methods": tuple(NAMES[m] for m in self.methods)}
        return out | ({"values": self.values_txt} if SWEEPS[self.sweep_name] is not None else {})


def _choices() -> Choices:
    """The sidebar: preset, methods, sweep and its values, seeds, sessions, steps (a link's choices first)."""
    presets = list(SETTING["preset"].options)
    preset = st.selectbox("preset", presets, presets.index(read_setting(SETTING["preset"])),
                          help="re-create a paper's setting (synthetic data unless the preset names a data set; the "
                               "CLD presets: 24 candidates "
                               "per query, binarised relevance and the official CLD code's protocol — "
                               "docs/conventions.md)", key="cmp_preset")
    p = PRESET_SWEEPS.get(preset, CUSTOM)
    linked = st.query_params.get("preset", "custom") == preset        # the link's choices belong to this preset
    default_methods = _linked_methods(p, linked)
    methods = st.multiselect("methods", list(ALGORITHMS.values()), default_methods,
                             key=f"m_{preset}", help="CLD, CLD_pair, Heckman and RankAgg need a top-k cut-off "
                                                     "(the CLD presets set one)")
    sweep_label = {v: k for k, v in SWEEPS.items()}.get(p.sweep, "none")
    if linked:
        sweep_label = read_setting(SETTING["sweep"].with_default(sweep_label))
    sweep_name = st.selectbox("sweep", list(SWEEPS), list(SWEEPS).index(sweep_label), key=f"s_{preset}",
                              help="the parameter on the x axis")
    s = SETTING["values"].with_default(", ".join(map(str, p.values)))
    default_values = (read_setting(s) if linked else s.default)[:200]
    values_txt = st.text_input("values (comma-separated)", default_values, key=f"v_{preset}",
                               disabled=SWEEPS[sweep_name] is None,
                               help="values of the swept parameter, e.g. 0, 0.5, 1, 1.5, 2")
    s = SETTING["seeds"]
    seeds = st.slider("seeds", s.lo, s.hi, read_setting(s.with_default(p.seeds or s.default)), key=f"n_{preset}",
                      help="each seed re-simulates the clicks and re-initialises training")
    sessions = st.select_slider("sessions", SETTING["sessions"].options, read_setting(SETTING["sessions"]),
                                help="simulated sessions per run (synthetic default data)", key="cmp_sessions")
    steps = st.select_slider("training steps", SETTING["steps"].options, read_setting(SETTING["steps"]),
                             help="batches of 256 sessions per run; the best validation checkpoint is kept",
                             key="cmp_training_steps")
    guess = st.toggle("predict before you see", read_setting(SETTING["guess"]) == 1, key="cmp_guess_on",
                      help="before the bars, guess which methods end below raw clicks (Naive); off: results at once")
    return Choices(preset, p, methods, sweep_name, values_txt, seeds, sessions, steps, guess)


def _start(c: Choices):
    key = SWEEPS[c.sweep_name]
    try:                                    # the task's options: every grid key and cell checked before anything runs
        options = CompareOptions(base=c.p.base, methods=tuple(NAMES[m] for m in c.methods), sweep=key,
                                 values=tuple(c.values_txt.replace(";", ",").split(",")) if key else (),
                                 seeds=c.seeds, sessions=c.sessions, steps=c.steps,
                                 max_sessions=APP_MAX_SWEEP_SESSIONS, claims=c.p.claims)
    except ConfigError as e:
        st.error(f"Check the settings — {escape_markdown(e)}")
        return None
    st.session_state["compare_options"] = (c.preset, options)       # what this run is and is checked against
    return submit_job(options.key(), compare_methods_job, options, n_jobs=1, cache_dir=CACHE)


def _show(job):
    if job is None:
        st.caption("Choose methods (or a preset) and press Run.")
        return
    result = finished_result(job, "comparison")
    if result is None:
        return
    df = finished_runs(result)
    if len(df) == 0:
        return
    preset, options = st.session_state.get("compare_options", ("custom", CompareOptions()))
    comparison = MethodComparison(df, options)
    key, metrics, summ = options.sweep, list(METRICS), comparison.summary()
    if key:
        metric = st.selectbox("metric", metrics, 2, key="cmp_metric")
        st.plotly_chart(sweep_figure(summ, key, metric), key="cmp_sweep")
    else:
        metric = st.selectbox("metric", metrics, 2, key="cmp_metric_sweep")
        if not _guess_then_reveal(job, summ, metric):
            return
        st.plotly_chart(interval_bar_figure(summ, "algorithm", metric,
                                            title=f"{metric} (mean, {comparison.interval_note()})"), key="cmp_bar")
    st.dataframe(summ.round(4), hide_index=True)
    paper_check(comparison, preset)
    st.download_button("Download runs (CSV)", df.drop(columns=["observation", "true_observation"]).to_csv(index=False),
                       "comparison.csv", key="cmp_download_runs_csv")


def _skip_guess() -> None:
    st.session_state["cmp_guess_on"] = False


def _guess_then_reveal(job, summ, metric: str) -> bool:
    """Before the bars: ask which methods end below Naive; after: score the guess. False while waiting."""
    naive = summ.loc[summ["algorithm"] == "Naive", metric]
    below = summ[(summ[metric] < naive.iloc[0])]["algorithm"].tolist() if len(naive) else []
    others = [a for a in summ["algorithm"] if a not in ("Naive", "Oracle")]
    revealed = st.session_state.get("revealed")
    if not st.session_state.get("cmp_guess_on", True):          # the guess is skipped (remembered in the URL)
        return True
    if others and (revealed is None or revealed[0] != id(job)):
        st.info(f"Predict before you look: which methods end up **below** raw clicks (Naive) on {metric} "
                "(by the mean over seeds)? Record your guess, then reveal — or skip it.")
        guess = st.multiselect("my guess: below Naive", others, key="cmp_guess")
        a, b = st.columns(2)
        if a.button("Record my guess and reveal", type="primary", key="cmp_record_my_guess_and_reveal"):
            st.session_state["revealed"] = (id(job), tuple(guess), metric)
            st.rerun()
        b.button("Skip: show the results", on_click=_skip_guess,
                 help="turns off 'predict before you see' in the sidebar (and in this page's link)",
                 key="cmp_skip_show_the_results")
        return False
    if others:
        guess = revealed[1]
        actual = [a for a in below if a in others]
        r = score_guess(guess, actual, others)
        (st.success if not r["missed"] and not r["wrong"] else st.warning)(
            f"Your guess: {escape_markdown(', '.join(guess) or 'none')} — {escape_markdown(r['text'])} "
            f"Below Naive on {metric}: {escape_markdown(', '.join(actual) or 'none')}.")
    return True


def paper_check(comparison, preset_name):
    """Does this run reproduce what the preset's paper claims? (paired over the run's seeds)"""
    if preset_name == "custom":
        return
    if not comparison.options.claims:
        st.caption("This preset is our ablation: the paper makes no claim about it to check.")
        return
    res = comparison.verdicts()
    st.markdown("**Does this run reproduce the paper?** Each claim paired over the run's seeds "
                f"({comparison.runs['seed'].nunique()}): {VERDICT_RULE}.")
    st.table(claims_table(res), hide_index=True)          # a few rows of sentences: wrapped, never cut at 1024 px
    counts = res["verdict"].value_counts()
    st.caption(" · ".join(f"{counts.get(v, 0)} {v}" for v in VERDICTS if counts.get(v, 0)))


run_page(main)
