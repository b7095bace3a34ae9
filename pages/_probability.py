"""The Identifiability page's section on Example 2: more contexts, less identifiability (the formula beside the
Monte Carlo count), widgets → :func:`ultr_core.identifiability.probability_table` → a figure."""
import streamlit as st

from ultr_core.algorithms.record import formula_lines
from ultr_core.app.graph_figures import probability_figure
from ultr_core.identifiability import probability_table


@st.cache_data(show_spinner="Monte Carlo …", max_entries=16)
def _prob(n, x, contexts, positions, trials, seed):
    return probability_table(n, x, contexts, n_positions=positions, n_trials=trials, seed=seed)


def contexts_section() -> None:
    """Example 2 with its knobs: the formula and the simulation side by side, by number of contexts."""
    st.subheader("More contexts, less identifiability (Example 2, Fig. 4c/d)")
    st.latex(formula_lines(r"P(\text{connected}) \approx 1 - |T|\,\exp\!\Big(-\frac{N^2(|T|-1)}{|X|\,|T|^2}\Big)",
                           r"|T| = \text{contexts} \times \text{positions}"))
    p1, p2, p3, p4 = st.columns(4)
    n_pairs = p1.slider("N: logged (document, factor) pairs", 1_000, 20_000, 3_000, 500,
                        help="size of the click log in distinct (document, bias factor) pairs",
                        key="ig_n_logged_document_factor_pairs")
    n_x = p2.select_slider("|X|: distinct documents", [1_000, 3_000, 10_000, 30_000], 10_000,
                           help="number of distinct feature vectors", key="ig_x_distinct_documents")
    positions = p3.slider("positions", 1, 20, 10, help="each context type is combined with every position",
                          key="ig_positions")
    trials = p4.select_slider("Monte Carlo trials", [50, 100, 200, 500], 100, help="simulated logs per point",
                              key="ig_monte_carlo_trials")
    ctx = (1, 2, 3, 5, 8, 10, 15, 20, 30)
    st.plotly_chart(probability_figure(_prob(n_pairs, n_x, ctx, positions, trials, 0), x="contexts"), key="prob")
    st.caption("Pairs drawn uniformly from X × T; a factor never drawn is an isolated node. The formula is the "
               "paper's Gilbert-style approximation; the simulation counts connected graphs. Seed 0.")
