from dataclasses import dataclass

import streamlit as st

from pages._certainty import certainty_section
from pages._clickmodels import click_model_section
from pages._common import MEMBERS_COLUMN, cached_analysis, log_digest, memo, page_title, run_page
from pages._jobs import finished_result, job_buttons, live, submit_job
from pages._links import linked_log, read_setting, session_log_spec, url_notices
from pages._probability import contexts_section
from pages._repair import repair_on_log_section
from ultr_core.algorithms.record import formula_lines
from ultr_core.app.figures import interval_bar_figure, observation_curve_figure
from ultr_core.app.graph_figures import (
    bias_curves_figure,
    component_sizes_figure,
    identifiability_graph_figure,
    identifiability_graph_html,
)
from ultr_core.app.pagestate import IDENTIFIABILITY_SETTINGS
from ultr_core.app.text import escape_markdown
from ultr_core.clickmodels.registry import CLICK_MODELS
from ultr_core.errors import ConfigError, DataFormatError
from ultr_core.evaluation.stats import summarise
from ultr_core.identifiability.equal_fit import equal_fit_fits, equal_fit_spread
from ultr_core.identifiability.estimation import ESTIMATOR_LABELS, ESTIMATORS
from ultr_core.identifiability.reports import compare_repairs, plan_table, verdict_caveat
from ultr_core.logs.outputs import safe_csv
from ultr_core.simulation.clickmodel import ClickModelConfig
from ultr_core.simulation.simulated import simulate_log
from ultr_core.studies.identifiability_sweeps import components_sweep, repairs_sweep


def _builtin(k: int, sessions: int, seed: int):
    def run():
        ds, _, log = simulate_log(f"ig:{k}", ClickModelConfig(logging="given"), n_sessions=sessions, seed=seed,
                                  data_seed=seed)
        return ds, log
    with st.spinner("Simulating the fully synthetic log …"):
        return memo(("ig-builtin", k, sessions, seed), run)


def _describe(source: str, key, builtin: str, current: str) -> str:
    """Which log the page shows, in words (an upload by its file name)."""
    if source == builtin:
        return f"built-in fully synthetic data (K = {key[1]}, {key[2]:,} sessions, seed {key[3]})"
    if source == current and isinstance(key, tuple) and key and key[0] == "upload":
        return f"your uploaded log “{key[1][0]}” (from the Upload page)"
    if source == current and isinstance(key, tuple) and key and key[0] == "simulation":
        return "the log simulated on the Simulate page"
    return "the log this link names" if source != current else "the current log"


SETTING = {s.url: s for s in IDENTIFIABILITY_SETTINGS}
GRAPH_PX = 520          # the interactive graph's frame; its card is sized to fill it exactly


def _plan_height(rows):
    """A plan table's height: its rows when a few (no empty rows under one merge), else 200 px scrolling."""
    return "auto" if len(rows) <= 5 else 200


def main():
    page_title("Identifiability explorer")
    st.caption("Chen et al., *Identifiability Matters* (ICML 2024): relevance is recoverable up to scale **iff** "
               "the identifiability graph (IG) over bias factors is connected (Theorem 1). Nodes are bias factors; "
               "two factors are linked when one document was shown with both.")
    with st.sidebar:
        st.header("Log")
        src = _source_choice(linked_log())
        bias, teach = _bias_choice(src.log)
    url_notices()
    _say_what_is_shown(src)
    st.query_params.clear()
    st.query_params.update({k: SETTING[k].to_url(v) for k, v in {**src.params, "teach": teach}.items()})
    st.query_params["bias"] = ",".join(bias)
    if src.link_spec:
        st.query_params["log"] = src.link_spec
    if not bias:
        st.warning("Pick at least one bias-factor column in the sidebar.")
        st.stop()
    log, key = src.log, src.key
    try:
        an = cached_analysis(log, key, tuple(bias))
    except (ConfigError, DataFormatError, ValueError) as e:
        st.error(f"Cannot build the graph: {escape_markdown(e)}")
        st.stop()
    rep = an.report
    reveal = _verdict(rep, bias, key, teach)
    c = st.columns(4)
    c[0].metric("bias factors (nodes)", f"{rep.n_nodes:,}")
    c[1].metric("components", f"{rep.n_components:,}" if reveal else "?")
    c[2].metric("largest component", f"{rep.largest_share:.0%}" if reveal else "?")
    c[3].metric("documents", f"{rep.n_documents:,}")
    if reveal:
        _graph(an)
        _curves(an, log, key, bias)
        certainty_section(an.graph, key, bias, "ig", teach, log=log)
        _plans(an)
        if st.toggle(f"Which click model explains this log? (fits {len(CLICK_MODELS)} click models)",
                     key="ig_click_models",
                     help="GCTR … Trust fitted on the first 75 % of the sessions and scored on the rest, as on the "
                          "Upload page — with each model's relevance per document and its IG component"):
            click_model_section(log, an, key, "ig")
        repair_on_log_section(an, log, key, bias)
        if log.has_truth:
            _before_after(an, log, key, bias, src.lists)
    st.divider()
    for preset in PRESETS:
        _preset(*preset)
    st.divider()
    contexts_section()


@dataclass(frozen=True)
class SourceChoice:
    """The sidebar's log: the source chosen (and the built-in and current ones' labels), the log, its cache key, its
    ranked lists (built-in only), the link that rebuilds it, the URL parameters, whether the asked-for log is gone."""

    source: str
    builtin: str
    current: str
    log: object
    key: object
    lists: tuple | None
    link_spec: str | None
    params: dict
    lost_log: bool


def _source_choice(linked) -> SourceChoice:
    """The sidebar's log: built-in data, a link's log or the current log (Simulate / Upload), with its cache key,
    its ranked lists (built-in only), the link that rebuilds it and the URL parameters."""
    lost_log = False
    builtin, current = "built-in: fully synthetic", "current log (Simulate / Upload page)"
    from_link = "the log this link names"
    options = [builtin] + ([from_link] if linked is not None else []) + ([current] if "log" in st.session_state else [])
    has_current = "log" in st.session_state
    asked = read_setting(SETTING["source"].with_default("link" if linked is not None else "current" if has_current
                                                         else "builtin"))
    want = {"builtin": builtin, "current": current, "link": from_link}.get(asked, builtin)
    if want == current and current not in options and linked is not None:
        want = from_link                  # a shared link to a simulated log, opened in a new session
    elif want == current and not has_current:
        lost_log = True                   # e.g. an upload from another session: it cannot be rebuilt from a link
    source = st.radio("source", options, options.index(want) if want in options else 0,
                      help="fully synthetic one-hot data with K components (a teaching version of the paper's "
                           "App. C.1 data: dense position blocks, uniform labels — the presets below use the "
                           "paper's own layouts), a log that a shared link names, or the log made on the "
                           "Simulate or Upload page", key="ig_source")
    params = {"source": {builtin: "builtin", current: "current", from_link: "link"}[source]}
    link_spec = None
    if source == builtin:
        k = st.slider("components K", SETTING["k"].lo, SETTING["k"].hi, read_setting(SETTING["k"]),
                      help="positions are cut into K blocks that never share a document", key="ig_components_k")
        sessions = st.select_slider("sessions", SETTING["sessions"].options, read_setting(SETTING["sessions"]),
                                    help="more sessions give more clicks per (document, position)", key="ig_sessions")
        seed = st.number_input("seed", SETTING["seed"].lo, SETTING["seed"].hi, read_setting(SETTING["seed"]),
                               key="ig_seed", help="data and clicks")
        ds, log = _builtin(k, sessions, int(seed))
        key = ("builtin", k, sessions, int(seed))
        lists = (ds.train.labels, ds.train.offsets, ds.train.doc_ids)
        params.update(k=k, sessions=sessions, seed=int(seed))
    elif source == from_link:
        link_spec, _, log = linked
        key = ("logspec", link_spec)
        lists = None
    else:
        log = st.session_state["log"]
        key = st.session_state.get("log_key") or log_digest(log)
        lists = None
        link_spec = session_log_spec()     # a simulated log: a link rebuilds it in another session
    return SourceChoice(source, builtin, current, log, key, lists, link_spec, params, lost_log)


def _bias_choice(log):
    candidates = [c for c in log.frame.columns if c not in ("session_id", "doc_id", "click", "shown", "row",
                                                            "true_relevance", "true_observation", "label",
                                                            "doc_key", "query_key")]
    default = [c for c in log.bias_columns if c in candidates] or candidates[:1]
    if candidates:                                     # a link's columns: those of this log, each once
        default = list(read_setting(SETTING["bias"].with_options(tuple(candidates)).with_default(tuple(default)))) \
            or default
    bias = st.multiselect("bias factor columns", candidates, default, key="ig_bias_factor_columns",
                          help="a bias factor is the tuple of these columns (e.g. context × position)")
    teach = st.toggle("teaching mode: predict before you see", read_setting(SETTING["teach"]) == 1,
                      help="hide the verdict until you have guessed", key="ig_teaching_mode_predict_before_y")
    return bias, teach


def _say_what_is_shown(src: SourceChoice) -> None:
    if src.lost_log:
        st.warning("This link names the current log of another session (an upload, or a log without a "
                   "reproducible spec): it cannot be rebuilt here, so the page shows the built-in fully synthetic "
                   "data instead. Upload the file on the Upload page to see its graph.")
    st.caption("Showing: " + escape_markdown(_describe(src.source, src.key, src.builtin, src.current)))
    if src.source == src.current:
        for note in st.session_state.get("log_notes", ()):      # what the reader dropped or repaired
            st.caption("Reading the log: " + escape_markdown(note))


def _verdict(rep, bias: list, key, teach: bool) -> bool:
    """The verdict, after a guess in teaching mode; True once it is shown."""
    reveal = True
    if teach:
        revealed_for = st.session_state.get("ig_revealed")
        guess = st.radio("Before you look: can relevance be recovered from this log?", ["yes", "no", "not sure"],
                         index=None, horizontal=True, key="guess", help="no answer is pre-selected")
        reveal = revealed_for == (key, tuple(bias))         # the reveal survives reruns of the same log
        if not reveal and st.button("Reveal the answer", disabled=guess is None,
                                    help="make a guess first", key="ig_reveal_the_answer"):
            st.session_state["ig_revealed"] = (key, tuple(bias))
            reveal = True
        if reveal and guess is not None:
            right = (guess == "yes") == bool(rep.identifiable) and guess != "not sure"
            st.caption(f"Your guess: {guess} — {'right' if right else 'not quite'}.")
    if reveal:
        if rep.identifiable:
            st.success(f"Identifiable — the IG over ({escape_markdown(', '.join(bias))}) is connected.")
        else:
            st.warning(f"Not identifiable — the IG has {rep.n_components:,} components. Relevance can only be "
                     "compared inside a component; merging or intervention below reconnects it.")
        alt = rep.alternative_document
        if alt is not None and alt.changes_verdict:
            st.info("The verdict depends on what a document is: " + escape_markdown(alt.message.replace(
                f"use {alt.flag}", "choose the other key on the Upload page")))
    return reveal


def _graph(an) -> None:
    """The IG drawn (interactive or static) with the proposed merges and swaps, and the components."""
    g = an.graph
    show_m = st.checkbox("show proposed merges", True, key="ig_show_proposed_merges",
                         help="node merging (§4.2): nearest factors of other components, by a minimum spanning tree")
    show_i = st.checkbox("show proposed interventions", an.intervention_plan is not None,
                         disabled=an.intervention_plan is None,
                         help="node intervention (§4.1): swap one document into another component, K − 1 swaps",
                         key="ig_show_proposed_interventions")
    view = g.display_graph()
    merges = an.merge_plan.pairs if show_m and an.merge_plan else None
    swaps = an.intervention_plan.swaps if show_i and an.intervention_plan else None
    drawing = st.radio("graph view", ["interactive", "static"], horizontal=True, key="ig_view",
                       format_func={"interactive": "interactive (drag; ctrl + wheel zooms)",
                                    "static": "static (plotly: PNG export from its toolbar)"}.get,
                       help="interactive: vis-network via pyvis, inlined, works offline; static: the same graph "
                            "drawn by plotly")
    if drawing == "interactive":
        # the page is ours: user labels sit only inside pyvis' tojson-escaped data (see the factory)
        st.iframe(identifiability_graph_html(view, merges=merges, swaps=swaps, height=GRAPH_PX),
                  height=GRAPH_PX)  # card = frame
    else:
        st.plotly_chart(identifiability_graph_figure(view, merges=merges, swaps=swaps), key="ig_graph")
    st.caption("Drawing rule: up to 150 factors are drawn with their IG edges (at most 600, sampled); larger "
               "graphs are drawn with each component contracted to one node, the 149 largest kept and the rest "
               "pooled as 'other'.")
    left, right = st.columns(2)
    with left:
        st.subheader("Components")
        comps = g.components_table()
        st.dataframe(comps, hide_index=True, height="auto" if len(comps) <= 5 else 250, column_config=MEMBERS_COLUMN)
    with right:
        st.plotly_chart(component_sizes_figure(g.sizes), key="sizes")


def _curves(an, log, key, bias: list) -> None:
    g = an.graph
    st.subheader("Position bias per component")
    st.caption("Observation is identifiable only up to one scale per connected component: each curve is "
               "normalised within its component (Agarwal et al., WSDM 2019, intervention harvesting; or a "
               "position-based model fitted by EM), with 90 % document-bootstrap bands.")
    est = st.selectbox("position-bias estimator", ESTIMATORS, index=ESTIMATORS.index("all_pairs"),
                       key="ig_estimator", format_func=ESTIMATOR_LABELS.get,
                       help="intervention harvesting (Agarwal et al. 2019): click-rate ratios of documents shown at "
                            "two factors; EM: r·o fitted by expectation–maximisation")
    try:
        curves_an = cached_analysis(log, key, tuple(bias), est)
    except (ConfigError, ValueError) as e:
        st.info(f"No curve: {escape_markdown(e)}")
        return
    if caveat := verdict_caveat(curves_an.report, see="“How sure?” below"):        # the CLI's, under its verdict
        st.warning(f"The graph is connected, {caveat}.")
    pb = curves_an.report.position_bias
    for note in pb.notes:
        st.caption(escape_markdown(note))
    if len(pb.curves):
        truth = log.true_observation_curve() if list(bias) == ["position"] and log.has_truth else None
        st.plotly_chart(bias_curves_figure(pb.curves, truth if g.n_components == 1 else None), key="ig_bias")


def _plans(an) -> None:
    rep = an.report
    if an.merge_plan is not None and len(an.merge_plan.pairs):
        st.subheader("Proposed merges")
        st.latex(formula_lines(r"\text{cost}(t, t') = \lVert b_t - b_{t'} \rVert_2",
                               r"b = [\text{context vector},\ 10\,p]\ \text{(or } [p]\text{)} "
                               r"\qquad \text{(§4.2, eq. 7–8)}"))
        st.dataframe(an.merge_plan.pairs[["label_a", "label_b", "cost"]].round(6), hide_index=True,
                     height=_plan_height(an.merge_plan.pairs))
    if an.intervention_plan is not None and len(an.intervention_plan.swaps):
        st.subheader("Proposed interventions")
        st.latex(formula_lines(r"\text{cost}(x, t, t') = \frac{1 - \hat r(x)\hat o(t)}{\hat r(x)\hat o(t)} + "
                               r"\frac{1 - \hat r(x)\hat o(t')}{\hat r(x)\hat o(t')}", r"\text{(§4.1, eq. 3)}"))
        st.dataframe(an.interventions.round(6), hide_index=True, height=_plan_height(an.intervention_plan.swaps))
    elif rep.intervention_skipped:
        st.info(rep.intervention_skipped)
    plan = plan_table(an)
    if len(plan):
        st.download_button("Download the plan (CSV)", safe_csv(plan), "repair_plan.csv", mime="text/csv",
                           help="every proposed merge and intervention with its cost, in the log's own ids",
                           key="ig_download_the_plan_csv")


def _before_after(an, log, key, bias: list, lists) -> None:
    st.subheader("Before / after: embedding DLA with and without repair")
    if st.button("Train DLA (3 bootstrap replicates)",
                 help="embedding DLA (closed-form alternating updates) without repair, after node "
                      "merging and after node intervention, each on 3 bootstrap replicates of the log's "
                      "sessions (DLA to convergence is deterministic: replicates show the data's "
                      "uncertainty)", key="ig_train_dla_3_bootstrap_replicat"):
        table, curves = compare_repairs(log, an, **dict(zip(("labels", "offsets", "doc_of_row"), lists or ())))
        st.session_state["repairs"] = (key, tuple(bias), table, curves)
    if st.session_state.get("repairs", (None,))[0] == key and st.session_state["repairs"][1] == tuple(bias):
        _, _, table, curves = st.session_state["repairs"]
        metrics = [m for m in ("mcc", "ndcg@10") if m in table]
        summ = summarise(table, "strategy", metrics)
        cols = st.columns(len(metrics))
        for col, m in zip(cols, metrics):
            title = f"{m} (mean, 90 % t-interval, 3 replicates)"
            col.plotly_chart(interval_bar_figure(summ, "strategy", m, title=title), key=f"rep_{m}")
        if list(bias) == ["position"]:
            truth = log.true_observation_curve()
            st.plotly_chart(observation_curve_figure({**curves, "truth": truth}), key="rep_curve")
        st.dataframe(table, hide_index=True)


def _show_sweep(job):
    df = finished_result(job, "sweep")
    if df is not None:
        summ = summarise(df.assign(K=df["K"].astype(str)), "K", ["mcc", "ndcg@10"])
        a, b = st.columns(2)
        a.plotly_chart(interval_bar_figure(summ, "K", "mcc", title="MCC by number of components (90 % t-interval)"),
                       key="ksweep_mcc")
        b.plotly_chart(interval_bar_figure(summ, "K", "ndcg@10", title="nDCG@10 by number of components"),
                       key="ksweep_ndcg")
        st.dataframe(df.round(4), hide_index=True)


def _show_repairs(job):
    df = finished_result(job, "comparison")
    if df is not None:
        summ = summarise(df, "strategy", ["mcc", "ndcg@10"])
        st.plotly_chart(interval_bar_figure(summ, "strategy", "mcc", title="MCC by repair (90 % t-interval)"),
                        key="repairs_mcc")
        st.dataframe(df.round(4), hide_index=True)


def _show_equal_fit(job):
    df = finished_result(job, "fits")
    if df is None:
        return
    spread = equal_fit_spread(df)
    a, b = spread.iloc[0], spread.iloc[1]
    st.markdown(f"As logged (2 components) the four fits' click log-likelihoods differ by **{a.ll:.1e}** per "
                f"impression, yet their relevance correlates with the truth anywhere from MCC **{a.lo:.3f}** to "
                f"**{a.hi:.3f}**: each component keeps its own scale. After node merging (1 component) the "
                f"likelihoods differ by {b.ll:.1e} and every fit reaches MCC {b.lo:.3f}–{b.hi:.3f}.")
    title = "MCC of four equally good fits (90 % t-interval over starts)"
    st.plotly_chart(interval_bar_figure(summarise(df, "repair", ["mcc"]), "repair", "mcc", title=title), key="eq_mcc")
    st.dataframe(df.round({"log_likelihood": 9, "mcc": 4, "ndcg@10": 4}), hide_index=True)


def _preset(title: str, caption: str, key: str, button: str, run, show) -> None:
    """One preset section: what it runs and what to predict, a pooled job with Run and Stop, its live result."""
    st.subheader(title)
    st.caption(caption)
    job_buttons(key, button, lambda: submit_job((key,), run))
    live(key, show)


#: the page's presets: (title, caption, job key, button, the core call, the view of its result)
PRESETS = (
    ("Preset: K components → recovery (paper Fig. 3a / Table 1)",
     "The paper's own fully synthetic data (App. C.1: its K = 1…4 layouts, 10⁶ impressions per row), embedding DLA "
     "fitted to convergence with its official update, 3 seeds (≈ 2 s on a free worker, measured). Predict first: for "
     "which K will DLA recover the relevance (MCC ≈ 1)?", "k_sweep_job", "▶ Run the K sweep", components_sweep,
     _show_sweep),
    ("Preset: which repair, and how (paper Table 1 row K = 2, Figs. 4a/4b)",
     "The paper's K = 2 data (blocks {1–4}, {5–10}), DLA to convergence, 3 seeds (≈ 20 s on a free worker, measured; "
     "longer while other visitors' jobs run): node merging of the planned neighbours 4 & 5 against the farther 3 & 5 "
     "and 2 & 5 (the paper writes them 0-based: 3 & 4, 2 & 4, 1 & 4), and node intervention with minimum-cost "
     "against random-cost swaps. Predict first: which merge recovers most?", "repairs_sweep_job",
     "▶ Run the repairs", repairs_sweep, _show_repairs),
    ("A perfect click fit can still rank wrong (Oosterhuis 2022, quoted in §1)",
     "The paper's K = 2 data, DLA to convergence from four random starts, before and after node merging. Predict "
     "first: do fits that explain the clicks equally well rank the documents alike?", "equal_fit_job",
     "▶ Fit four times", equal_fit_fits, _show_equal_fit),
)


run_page(main)
