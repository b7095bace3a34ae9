"""The click-model section the Upload and Identifiability pages share (issue #34): widgets → one core call
(:func:`ultr_core.clickmodels.compare_click_models`) → tables and figure factories."""
import pandas as pd
import streamlit as st

from pages._common import memo
from ultr_core.app.clickmodel_figures import continuation_table, rank_parameters_figure, ubm_matrix_figure
from ultr_core.app.figures import perplexity_by_rank_figure
from ultr_core.app.text import escape_markdown
from ultr_core.clickmodels import compare_click_models
from ultr_core.errors import ConfigError, DataFormatError
from ultr_core.identifiability.reports import document_components


def click_model_section(log, an, key, prefix: str) -> None:
    """Which click model explains the log (first 75 % of the sessions train, the rest test — PyClick's protocol),
    each model's bias parameters and its relevance per (query, document) with the IG component: one core call, a
    table, charts and a CSV.  ``prefix`` keeps the widget keys of two pages apart."""
    st.subheader("Which click model explains the clicks?")
    if log.meta.get("sessions") == "inferred":
        st.info("Click models need sessions: this log has no session ids (the Upload page maps a session column), "
                "so its sessions were inferred from query changes — no click model is fitted to them.")
        return
    f = log.frame                                           # the file's own ids; built once, in the cached call
    try:
        out = memo(("clickmodels", key), lambda: compare_click_models(
            f.assign(query_id=f.get("query_key", f["query_id"]), doc_id=f.get("doc_key", f["doc_id"])), prefix))
    except (ConfigError, DataFormatError) as e:
        st.info(f"No click model is fitted: {escape_markdown(e)}")
        return
    rows = [{"model": m["label"], "log-likelihood": m["log_likelihood"], "perplexity": m["perplexity"],
             "conditional perplexity": m["conditional_perplexity"], "seconds": m["seconds"]}
            for m in out["models"].values()]
    st.caption(f"Fitted on the first {out['train_sessions']:,} sessions, scored on the next {out['test_sessions']:,} "
               f"({out['dropped_test_sessions']:,} of unseen queries dropped); PyClick's conventions and scores "
               "(docs/click_models.md). Higher log-likelihood and lower perplexity are better.")
    st.dataframe(pd.DataFrame(rows).round(4), hide_index=True)
    st.plotly_chart(perplexity_by_rank_figure(out["models"]), key=f"{prefix}_perplexity")
    _bias_parameters(out["models"], prefix)
    rel = out["relevance"].astype({"query_id": str, "doc_id": str}).merge(document_components(an, log), how="left")
    st.download_button("Download relevance per (query, document) and model (CSV)", rel.to_csv(index=False), "click_model_relevance.csv", mime="text/csv",
                       key=f"{prefix}_relevance_csv",
                       help="training impressions and clicks of each pair, its IG component and every model's relevance "
                            "estimate: compare estimates only inside one component")


def _bias_parameters(models: dict, prefix: str) -> None:
    """Each fitted model's bias parameters: per-rank lines, UBM's matrix, the scalar continuations."""
    with st.expander("Each model's bias parameters"):
        st.plotly_chart(rank_parameters_figure(models), key=f"{prefix}_rank_params")
        if "ubm" in models:
            st.plotly_chart(ubm_matrix_figure(models), key=f"{prefix}_ubm")
        table = continuation_table(models)
        if len(table):
            st.caption("Continuation parameters (DBN: γ after any document; CCM: τ₁ without a click, τ₂ / τ₃ after a "
                       "click on a non-relevant / relevant result). Attractiveness and satisfaction are per document; "
                       "the CSV below holds each model's relevance estimate (DBN, SDBN: α·σ).")
            st.dataframe(table.round(4), hide_index=True)
