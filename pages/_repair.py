"""The repair evaluated on the log itself (issue #36): widgets →
:func:`ultr_core.identifiability.heldout.heldout_repair` (held-out click likelihood as logged vs after node merging,
what the merge decides) → a table, a verdict, a figure and a CSV.  Shared by every log the Identifiability page
shows; a simulated log also gets the truth-based comparison."""
import streamlit as st

from pages._common import memo
from ultr_core.app.graph_figures import repair_relevance_figure
from ultr_core.app.text import escape_markdown
from ultr_core.errors import ConfigError
from ultr_core.identifiability.heldout import heldout_repair, merge_verdict
from ultr_core.logs.outputs import safe_csv

#: the table's columns as a 1024-px screen fits them (LL: log-likelihood per impression, natural log)
SHORT = {"observation parameters": "ô parameters", "train log-likelihood": "train LL",
         "held-out log-likelihood": "held-out LL", "held-out perplexity": "perplexity", "EM iterations": "EM steps"}
#: logs up to this many rows are evaluated on open; larger ones wait for the toggle
AUTO_ROWS = 2_000_000


def repair_on_log_section(an, log, key, bias: list) -> None:
    """Held-out clicks as logged vs after the merge plan: can the clicks test the merge, and what does it decide?"""
    st.subheader("The repair on this log: what the clicks can say")
    if an.merge_plan is None or not len(an.merge_plan.pairs):
        st.caption("The graph is connected: no merge to evaluate.")
        return
    if not st.toggle("Evaluate node merging on held-out clicks", value=len(log.frame) <= AUTO_ROWS,
                     key="ig_heldout", help="PBM r·o fitted by EM on the first 75 % of the sessions (file order), as "
                                            "logged and after the merges above, scored on the remaining sessions"):
        return
    try:
        h = memo(("heldout-repair", key, tuple(bias)), lambda: heldout_repair(log, an))
    except ConfigError as e:
        st.info(f"Not evaluated: {escape_markdown(e)}")
        return
    st.caption(f"Click model P(click) = r(document)·o(bias factor) (*Identifiability Matters* eq. 1) fitted by EM "
               f"with PyClick's prior on {h.train_sessions:,} training sessions, scored on {h.test_sessions:,} "
               f"held-out sessions ({h.scored_rows:,} rows; {h.unscored_rows:,} rows whose document or factor "
               f"training never showed are not scored). LL: log-likelihood per impression (natural log).")
    st.dataframe(h.table.round(5).rename(columns=SHORT), hide_index=True)
    st.markdown(merge_verdict(h))
    st.plotly_chart(repair_relevance_figure(h.documents), key="ig_heldout_scatter")
    st.caption("As logged, each component's relevance has its own free scale; the merge puts them on one. A component "
               "whose points leave one line could not rescale whole (r and o stay ≤ 1): the merged fit moved the tied "
               "examinations instead.")
    st.caption("Node intervention is not evaluated here: it needs clicks on the swapped lists, which only new "
               "traffic gives — run the plan above and upload the new log with this one.")
    st.download_button("Download relevance as logged and after merging (CSV)", safe_csv(h.documents),
                       "relevance_before_after_merge.csv", mime="text/csv", key="ig_heldout_csv")
