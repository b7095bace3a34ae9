"""The "How sure?" section (issue #46) shared by the Identifiability and Upload pages: every factor's Fisher
standard error and level, the graph drawn by information, the weakest links, a profile likelihood for one factor,
repairs that buy certainty, and (Upload) relevance per document with its interval.  Widgets → one core call each
→ a figure factory; the fit is cached per log, so two pages show the same numbers."""
import numpy as np
import pandas as pd
import streamlit as st

from pages._common import _session_alive, memo, session_id
from pages._report import add_section
from ultr_core.app.certainty_figures import (
    certainty_plan_figure,
    factor_span_figure,
    information_graph_figure,
    profile_figure,
)
from ultr_core.app.text import escape_markdown
from ultr_core.errors import ConfigError
from ultr_core.identifiability.pairs import Stopped
from ultr_core.identifiability.precision import (
    certainty_report,
    document_labeller,
    document_outputs,
    factor_levels,
    graph_uncertainty,
    profile_report,
)
from ultr_core.identifiability.resistance import information_graph, weakest_links
from ultr_core.identifiability.uncertainty import rule_text
from ultr_core.logs.outputs import safe_csv

RESISTANCE = ("**Effective resistance.** Read the graph as an electrical network: each document shown at two "
              "factors is a wire between them whose conductance is the information its clicks carry "
              "(n·p/(1 − p) per cell). The variance of log(o_k / o_ref) is the effective resistance between the two "
              "nodes: many well-clicked links in parallel make it small; one long chain of rare swaps adds its "
              "resistances in series. Connected means the resistance is finite — not that it is small.")


LINK_COLUMNS = {"kind": "kind", "link": "link or document", "share": "share of the variance",
                "log_se_after": "error without it", "disconnects": "cuts it off"}


def page_budget():
    """The shared server's analysis budget (:func:`~ultr_core.identifiability.pairs.app_budget`), stopped when this
    visitor's tab closes."""
    from ultr_core.identifiability.pairs import app_budget
    sid = session_id()
    return app_budget(stop=lambda: _session_alive(sid) is False)


def certainty_section(g, key, bias, where: str, teach: bool = False, documents: bool = False, log=None) -> None:
    st.subheader("How sure? Identifiability as a measurement")
    st.caption("The graph says *whether* relevance can be recovered; the Fisher information of the position-based "
               "model at its converged fit says *how well* — the standard error of every bias factor's ratio to its "
               "component's reference (Chen et al., ICML 2024, §7: errors propagating along the graph).")
    if teach:
        st.info(RESISTANCE)
    if g.impressions is None or not g.clicks.any():
        st.info("No clicks: no ratio of factors has any information.")
        return
    u = memo(("uncertainty", key, tuple(bias)), lambda: graph_uncertainty(g), own=where == "upload")
    labels, se, levels = factor_levels(g, u)
    c = st.columns(4)
    for col, level in zip(c, ("identified", "weak", "unidentified")):
        col.metric(level, f"{int((levels == level).sum()):,}")
    c[3].metric("references", f"{int((u.reference == np.arange(len(u.reference))).sum()):,}",
                help="factors that are their component's reference (o_ref): each interval is a ratio to it")
    st.caption("Rule: " + escape_markdown(rule_text()) + ("" if u.converged else " — the fit did not converge: "
                                                          "standard errors are from its last step."))
    left, right = st.columns(2)
    span = factor_span_figure(labels, se, levels.tolist())              # built once: page and report
    left.plotly_chart(span, key=f"{where}_span")
    add_section("How sure? Identifiability as a measurement", figure=span, caption="Rule: " + rule_text())
    graph = information_graph(u, labels)
    if graph["nodes"]:
        right.plotly_chart(information_graph_figure(graph), key=f"{where}_infograph")
    links = weakest_links(u, labels, document_label=document_labeller(g, log))    # the file's own ids
    if links:
        st.markdown("**Weakest links** (the links between two factors — or single documents, with the factors they "
                    "are shown at — whose loss would most raise the weakest factor's error: their share of its "
                    "variance, its standard error of log(o_k/o_ref) without them, and whether losing them cuts it "
                    "off)")
        table = pd.DataFrame([x.to_json() for x in links]).rename(columns=LINK_COLUMNS)
        st.dataframe(table, hide_index=True, height="auto")
        add_section("Weakest links", table=table)
    _profile(g, u, labels, levels, where, (key, tuple(bias)))
    _plan(g, u, key, bias, where, log)
    if documents:
        _documents(g, u, where, log, (key, tuple(bias)))
    if not teach:
        with st.expander("What is effective resistance?"):
            st.markdown(RESISTANCE)


def _profile(g, u, labels, levels, where: str, log_key) -> None:
    choices = [i for i in range(len(labels)) if np.isfinite(u.log_se[i]) and u.log_se[i] > 0]
    if not choices:
        return
    with st.expander("Profile likelihood of one factor (as Fris & Hager's parameter shift)"):
        worst = max(choices, key=lambda i: u.log_se[i])
        k = st.selectbox("factor", choices, choices.index(worst), format_func=lambda i: f"{labels[i]} ({levels[i]})",
                         key=f"{where}_profile_factor", help="a factor with a finite, non-zero standard error; the "
                         "least certain is chosen first")
        try:
            p = memo(("profile", log_key, int(k)), lambda: profile_report(g, labels[k], u, budget=page_budget()))
        except Stopped:                   # the tab closed: nothing to show or cache
            st.stop()
        st.plotly_chart(profile_figure(p), key=f"{where}_profile")
        if p.note:
            st.info(escape_markdown(p.note))
            return
        lower, upper = ("open" if x is None else f"{x:.3f}" for x in (p.lower, p.upper))
        st.caption(f"Profile interval [{lower}, {upper}] beside the Fisher interval "
                   f"[{p.fisher_lower:.3f}, {p.fisher_upper:.3f}]: each point refits every other parameter "
                   "with this ratio held; the interval keeps the ratios the data cannot reject at 90 %.")


def _plan(g, u, key, bias, where: str, log=None) -> None:
    with st.expander("Repairs that buy certainty (an optimal design)"):
        a, b, c = st.columns(3)
        steps = a.slider("swaps", 1, 10, 5, key=f"{where}_plan_steps",
                         help="how many node interventions to plan, one after another (greedy)")
        objective = b.radio("cut the variance of", ["worst", "mean"], horizontal=True, key=f"{where}_plan_obj",
                            format_func={"worst": "the weakest factor", "mean": "the mean factor"}.get,
                            help="each swap is chosen for the largest predicted cut in this variance")
        m = c.number_input("impressions per swap", 1, 1_000_000, 100, key=f"{where}_plan_m",
                           help="how long each swapped document is shown at its new factor")
        try:
            plan = memo(("certainty-plan", key, tuple(bias), steps, objective, int(m)),
                        lambda: certainty_report(g, steps=steps, impressions=int(m), objective=objective, u=u,
                                                 log=log))
        except ConfigError as e:
            st.info(escape_markdown(e))
            return
        if plan.swaps:                  # no swap: no empty chart nor table, the note says why
            st.plotly_chart(certainty_plan_figure(plan), key=f"{where}_plan_fig")
            st.dataframe(pd.DataFrame([s.to_json() for s in plan.swaps]).round(4), hide_index=True, height="auto")
        if plan.note:
            st.info(escape_markdown(plan.note))
        st.caption(escape_markdown(plan.rule) + ". Predictions checked by simulating the swaps (tests: within "
                   "20 % of the realised standard error on 5 seeds).")


def _documents(g, u, where: str, log, log_key) -> None:
    st.markdown("**Relevance per document, with its 90 % interval** (o_ref = 1: r is the click probability at the "
                "component's reference factor)")
    docs, csv, orders = memo(("documents", log_key), lambda: _with_csv(*document_outputs(g, u, log)))
    st.dataframe(docs.head(2000).round(4), hide_index=True, height=250)
    if orders is not None:
        if orders.share is not None:
            st.caption(f"Within-query document orders resolved at 90 %: {orders.resolved:,} of "
                       f"{orders.pairs:,} comparable pairs ({orders.share:.0%}).")
        elif orders.note:
            st.caption(escape_markdown(orders.note))
    counts = docs["status"].value_counts().to_dict()
    st.caption(f"{len(docs):,} documents ({', '.join(f'{v:,} {k}' for k, v in counts.items())}); the table shows "
               "the first 2,000, the CSV has all.")
    st.download_button("Download relevance per document (CSV)", csv, "document_relevance.csv",
                       mime="text/csv", key=f"{where}_documents_csv")


def _with_csv(docs, orders):
    return docs, safe_csv(docs), orders
