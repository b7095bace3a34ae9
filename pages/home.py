import streamlit as st

from pages._common import page_title, run_page


def main():
    page_title("ULTR Explorer")
    st.caption("Unbiased learning to rank from click logs — simulate bias, train debiasing methods, "
               "and check whether relevance can be recovered at all.")

    st.markdown("""
    ### What is unbiased learning to rank?
    Search engines log which results users click. Clicks are cheap relevance signals, but they are
    **biased**: people click what they *see*, and they mostly see the top of the list. A document at
    rank 8 that nobody clicked may be irrelevant — or simply never looked at. *Unbiased learning to rank*
    (ULTR) learns a ranker from such logs by modelling how users observe results.

    The standard model is the **examination hypothesis**: a click needs both observation and relevance,
    """)
    st.latex(r"P(C = 1 \mid x, t) \;=\; \underbrace{r(x)}_{\text{relevance}} \cdot "
             r"\underbrace{o(t)}_{\text{observation}}")
    st.markdown("""
    where *t* is the **bias factor** that drives observation: the position, a (context, position) pair,
    or the document itself.

    ### The three papers behind this app
    - **LBD** — M. Chen, C. Liu, Z. Liu, J. Sun. *LBD: Decouple Relevance and Observation for
      Individual-Level Unbiased Learning to Rank.* NeurIPS 2022. Observation can depend on the document
      (individual-level bias); LBD decouples relevance from observation with a Lipschitz gradient penalty
      (λ) and Bernoulli decoupling (t). Its Figure 4 is a (λ, t) heat-map per coupling level.
    - **CLD** — *Causal Likelihood Decomposition* for ULTR under position bias **and** top-k selection
      bias: a pointwise Tobit-style model and a pairwise neural extension.
    - **Identifiability Matters** — M. Chen, C. Liu, Z. Liu, Z. Li, J. Sun. *Identifiability Matters:
      Revealing the Hidden Recoverable Condition in Unbiased Learning to Rank.* ICML 2024. Relevance is
      recoverable (up to scale) **iff the identifiability graph over bias factors is connected**; node
      intervention and node merging repair a disconnected graph.

    ### Two different η — read this once
    The papers use η for two different things, and this app keeps them apart:

    | name in this app | symbol | paper | meaning |
    |---|---|---|---|
    | position-bias severity | η | CLD (and ULTRA's PBM) | exponent of the position curve: o_p = v_p^η or (1/p)^η |
    | coupling level | η_c | LBD | how strongly document features drive observation: w = η_c·u, u ∈ [−1, 1]¹⁰ \
one direction per sweep, crux features scaled to [−1, 1] (official LBD code) |

    ### A guided tour
    0. **Playground** — the landing page for teaching: move η, ε, top-k or η_c and watch Naive, DLA and
       LBD react within seconds, beside the click curve, the observation estimate and the
       identifiability verdict. Its presets tell one story each.
    1. **Simulate** — pick a dataset and a click model, watch the click-through rate fall with position,
       see how many relevant documents a top-k cut hides, and download the log. The URL holds the settings.
    2. **Train & watch** — train Naive, DLA, IPS, LBD, CLD … on that log and watch the loss, validation
       nDCG and the estimated observation curve converge to the truth, live.
    3. **Compare** — methods × seeds with confidence intervals and sweeps; presets re-create the papers'
       settings (a teacher can start there).
    4. **Heat-maps** — LBD's Figure 4: where in (λ, t) does LBD work best as coupling grows?
    5. **Identifiability** — is relevance recoverable from this log at all? The graph, its components, and
       the merges or interventions that repair it.
    6. **Upload a log** — the same question for your own click log.

    *Convention:* nDCG@k uses gain 2^y − 1 and discount 1/log₂(rank+1); queries with no relevant
    document are excluded from the mean (as ULTRA does).
    """)


run_page(main)
