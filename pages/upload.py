import contextlib
import hashlib

import streamlit as st

from pages._certainty import certainty_section
from pages._clickmodels import click_model_section
from pages._common import MEMBERS_COLUMN, _session_alive, cached_check, memo, page_title, run_page, session_id
from pages._evaluate import evaluate_section
from pages._report import add_section, report_button, start_report
from pages._uploads import kept_upload
from ultr_core.app.graph_figures import bias_curves_figure
from ultr_core.app.memory import UPLOAD_GATE, Left
from ultr_core.app.report import LogFingerprint
from ultr_core.app.text import escape_markdown
from ultr_core.clickmodels.sessions import PROPENSITY
from ultr_core.data.archives import ultra_files_or_one
from ultr_core.errors import ConfigError, DataFormatError, TooManyRowsError
from ultr_core.identifiability.estimation import ESTIMATOR_LABELS, ESTIMATORS
from ultr_core.identifiability.reports import format_report, plan_table
from ultr_core.identifiability.users import users_report
from ultr_core.logs.bounds import UPLOAD_DUCKDB_MEMORY, UPLOAD_KEEP_ROWS, UPLOAD_MAX_PAIRS
from ultr_core.logs.formats import FORMAT_NAMES, LOG_FORMATS
from ultr_core.logs.ingestion import ingest
from ultr_core.logs.mapping import (
    TARGETS,
    column_chosen_twice,
    default_document,
    guess_mapping,
    peek_columns,
    read_user_log,
)
from ultr_core.logs.outputs import safe_csv
from ultr_core.logs.sniff import infer_format

#: the one table of formats (ultr_core.logs.formats): choices, labels and the columns a text format yields
FORMATS = list(FORMAT_NAMES)
TEXT = {f.name for f in LOG_FORMATS if f.kind != "tabular"}
TEXT_COLUMNS = {f.name: f.columns for f in LOG_FORMATS if f.kind != "tabular"}
FORMAT_LABELS = {f.name: f.label for f in LOG_FORMATS}
ACCEPTED_NOTES = """\
- gzip-compressed files of any of these; the format is read from the content when the name says nothing.
- A **document** is, by default, the pair (query, document id) in a click log — relevance belongs to a
  query–document pair — and the feature vector in an ULTRA folder (as the paper's own check); the report says
  when the other choice would change the verdict.
- Logs larger than an upload: `python -m ultr_core ig 'logs/*.csv.gz'` (streams with DuckDB).
"""
DOCUMENT_LABELS = {"auto": "the format's default", "query": "the (query, document id) pair",
                   "global": "the document id alone"}
#: an upload (≤ 200 MB) is reduced by DuckDB within this memory limit; smaller logs are also kept whole
DUCKDB_MEMORY, CURRENT_LOG_MAX_ROWS = UPLOAD_DUCKDB_MEMORY, UPLOAD_KEEP_ROWS


def _document_label(key: str, fmt: str) -> str:
    """What a document key means for ``fmt`` (in an ULTRA folder the document id is the feature
    vector); ``auto`` names the format's default."""
    if key == "auto":
        return f"{DOCUMENT_LABELS['auto']} ({_document_label(default_document(fmt), fmt)})"
    if fmt == "ultra":
        return {"global": "the feature vector", "query": "the (query, feature vector) pair"}[key]
    return DOCUMENT_LABELS[key]


def _read(name: str, digest: str, data: bytes, fmt: str, columns: tuple, doc_columns: tuple, document: str):
    """The parsed log and its notes, kept in the shared byte-budget cache under the file's digest — or (None, ())
    for a log of more than :data:`CURRENT_LOG_MAX_ROWS` rows (read out of core instead; the answer is cached too, so
    a rerun does not parse the file again)."""
    def read():
        try:
            return read_user_log(data, fmt, columns=dict(columns) or None, doc_columns=list(doc_columns) or None,
                                 name=name, document=document, max_rows=CURRENT_LOG_MAX_ROWS)
        except TooManyRowsError:
            return None, ()
    with st.spinner("Reading the log …"):
        return memo(("user-log", digest, fmt, columns, doc_columns, document), read, own=True)




@contextlib.contextmanager
def _upload_slot():
    """A place among the uploads analysed at once (:data:`ultr_core.app.memory.UPLOAD_GATE`); while waiting the page
    says how many are ahead; a visitor who leaves while waiting computes nothing."""
    box = st.empty()

    def waiting(ahead: int, busy: int) -> None:
        box.info(f"Waiting for memory: {busy} upload{'s are' if busy > 1 else ' is'} being analysed "
                 f"(at most {UPLOAD_GATE.slots} at once on this server); {ahead} visitor(s) ahead of you.")
    sid = session_id()
    try:
        with UPLOAD_GATE.hold(on_wait=waiting, stop=lambda: _session_alive(sid) is False):
            box.empty()
            yield
    except Left:
        st.stop()


def _link_identifiability() -> None:
    """A link that keeps this session (and so the uploaded log); a plain caption where pages are not registered."""
    try:
        st.page_link("pages/identifiability.py", label="Open the Identifiability page", icon=":material/hub:")
    except Exception:        # noqa: BLE001 — run as a single page (AppTest): no page registry to link into
        st.caption("Open the Identifiability page from the sidebar.")


def main():
    page_title("Upload a click log")
    st.caption("Check whether the relevance in your own log can be recovered at all: we build its identifiability "
               "graph (Chen et al., ICML 2024) and propose merges or interventions when it is disconnected. "
               "Files are parsed as text or Parquet only — nothing is ever unpickled — and stay in this session.")
    with st.expander("Accepted formats"):
        st.markdown("\n".join(f"- **{f.label}**: {f.help}" for f in LOG_FORMATS) + "\n" + ACCEPTED_NOTES)
    name, data, digest, fmt = _file_and_format()
    start_report()
    document = st.radio("a document is …", ["auto", "query", "global"], horizontal=True,
                        format_func=lambda d: _document_label(d, fmt),
                        help="relevance belongs to a query–document pair in a click log; in an ULTRA folder a "
                             "document is a feature vector shown by any query (the paper's own check). Choose "
                             "'alone' only when the same id means the same document under every query",
                             key="upload_a_document_is")
    columns, doc_columns, cols = None, None, None
    if fmt not in TEXT:
        cols = _stop_on_error(lambda: peek_columns(data, fmt, name))
        columns, doc_columns = _column_mapping(cols, digest)
    mapping, doc_cols = tuple(sorted((columns or {}).items())), tuple(doc_columns or ())
    bias, estimator = _bias_and_estimator(fmt, columns, cols, doc_cols)
    read_key = (name, digest, fmt, mapping, doc_cols, document)
    with _upload_slot():                      # one memory ceiling for every visitor's upload (issue #49)
        subject, notes, kept = _read_for_analysis(name, digest, data, fmt, mapping, doc_cols, document, bias,
                                                  read_key)
        check = _stop_on_error(lambda: cached_check(subject, ("upload", read_key), tuple(bias), estimator,
                                                    notes=tuple(notes)),
                               "We could not analyse the log — ", (ConfigError, DataFormatError, ValueError))
    an = check.analysis
    for n in notes:
        st.info(escape_markdown(n))
    rep = an.report
    st.success(f"Read {rep.n_rows:,} impressions with {rep.n_clicks:,} clicks: {len(an.graph.doc):,} distinct "
               "(document, factor) pairs.")
    if kept:
        st.session_state["log"] = subject
        st.session_state["log_key"] = ("upload", read_key)
        st.session_state["log_notes"] = tuple(notes)
        st.session_state.pop("log_spec", None)          # an upload cannot be rebuilt from a link
    users = _show_report(an)
    certainty_section(an.graph, ("upload", read_key), bias, "upload", documents=True, log=subject if kept else None)
    _downloads(an, check, users)
    if kept:
        click_model_section(subject, an, ("upload", read_key), "upload")
        evaluate_section(subject, ("upload", read_key), "upload")
    report_button(LogFingerprint(name, fmt, rep.n_rows, rep.n_clicks, digest),
                  {"a document is": _document_label(document, fmt), "bias factors": ", ".join(bias),
                   "estimator": estimator or "none", "columns": ", ".join(f"{a} → {b}" for a, b in mapping) or "—"})
    if kept:
        st.caption("The log is now the *current log*: the Identifiability page draws its graph from the same "
                   "analysis (same verdict, same plan).")
        _link_identifiability()
    else:
        st.caption(f"The log has more than {CURRENT_LOG_MAX_ROWS:,} impressions: it was analysed out of core and is "
                   "not kept whole in memory, so the other pages keep their current log.")


def _stop_on_error(fn, prefix: str = "", errors=(DataFormatError,)):
    """``fn()``, or its error as one message and the page stops (nothing the user had is lost)."""
    try:
        return fn()
    except errors as e:
        st.error(prefix + escape_markdown(e))
        st.stop()


def _file_and_format():
    """(name, bytes, digest, format) of the dropped file(s); the format sniffed, then the user's choice."""
    ups = kept_upload("upload_click_log", st.file_uploader("click log", type=None, accept_multiple_files=True,
                           help="one log file (any name: the format is sniffed from the content), or the files of an "
                                "ULTRA folder dropped together (train.init_list, train.feature, …); size limit set "
                                "in .streamlit/config.toml (server.maxUploadSize)", key="upload_click_log"))
    if not ups:
        st.info("Drop a file to start. No file? The Simulate page makes one you can download and upload here.")
        st.stop()
    name, data = _stop_on_error(lambda: ultra_files_or_one([(u.name, u.getvalue()) for u in ups]))
    digest = hashlib.sha256(data).hexdigest()
    fmt_guess = _stop_on_error(lambda: infer_format(data, name))
    fmt = st.selectbox("format", FORMATS, index=FORMATS.index(fmt_guess) if fmt_guess in FORMATS else 0,
                       format_func=FORMAT_LABELS.get,
                       help="from the file name when it is telling, else sniffed from the content; change it if wrong",
                       key="upload_format")
    return name, data, digest, fmt


def _column_mapping(cols: list, digest: str):
    """The user's mapping of file columns onto the log's roles (renames) and, without a doc_id, the feature
    columns that identify a document."""
    doc_columns = None
    guess = guess_mapping(cols)
    st.subheader("Map your columns")
    mc = st.columns(4)
    chosen = {}
    for i, target in enumerate(TARGETS):
        optional = target in ("session_id", "shown")
        opts = (["(none)"] if optional or target == "doc_id" else []) + cols
        default = guess.get(target, "(none)" if "(none)" in opts else cols[min(i, len(cols) - 1)])
        chosen[target] = mc[i % 4].selectbox(target, opts, index=opts.index(default) if default in opts else 0,
                                             key=f"map_{target}_{digest[:16]}",   # a new file starts fresh
                                             help="which file column holds " + target)
    twice = column_chosen_twice(chosen)
    if twice:
        st.error(escape_markdown(twice))
        st.stop()
    if chosen["doc_id"] == "(none)":
        doc_columns = st.multiselect("document = these feature columns", cols,
                                     help="documents with identical values in these columns are one document",
                                     key="upload_document_these_feature_columns")
        if not doc_columns:
            st.warning("Choose a document column or the feature columns that identify a document.")
            st.stop()
    columns = {src: tgt for tgt, src in chosen.items() if src != "(none)" and src != tgt}
    return columns, doc_columns


def _bias_and_estimator(fmt: str, columns, cols, doc_cols: tuple):
    if fmt in TEXT:
        available = list(TEXT_COLUMNS[fmt])
    else:
        available = [(columns or {}).get(c, c) for c in cols]
    candidates = [c for c in available if c not in ("session_id", "query_id", "doc_id", "click", "shown", PROPENSITY)
                  and c not in doc_cols]                       # a logging policy's propensity is not a bias factor
    bias = st.multiselect("bias factor columns", candidates,
                          ["position"] if "position" in candidates else candidates[:1],
                          help="the identifiability graph has one node per distinct tuple of these columns",
                          key="upload_bias_factor_columns")
    if not bias:
        st.stop()
    estimator = st.selectbox("position-bias estimator", ESTIMATORS, index=ESTIMATORS.index("all_pairs"),
                             format_func=ESTIMATOR_LABELS.get,
                             help="observation is estimated inside each connected component of the IG, normalised "
                                  "there; 90 % intervals from 100 document-bootstrap resamples",
                                  key="upload_position_bias_estimator")
    return bias, estimator


def _read_for_analysis(name, digest, data, fmt, mapping, doc_cols, document, bias, read_key):
    """(what is analysed, its notes, kept): the kept log when it is small enough to keep whole — parsed once, every
    number on the page is then the kept log's (one log, one truth) — else the out-of-core count table."""
    try:
        subject, notes = _read(name, digest, data, fmt, mapping, doc_cols, document)
        if subject is not None:
            return subject, list(notes), True
        with st.spinner("Reading the log (DuckDB, out of core) …"):
            table = memo(("counts", read_key, tuple(bias)),
                         lambda: ingest(data, fmt, bias=bias, columns=dict(mapping) or None, document=document,
                                        doc_columns=list(doc_cols) or None, memory_limit=DUCKDB_MEMORY,
                                        name=name, max_pairs=UPLOAD_MAX_PAIRS), own=True)
        return table, list(table.notes), False
    except (DataFormatError, ConfigError) as e:
        st.error(f"We could not read the log — {escape_markdown(e)}. "
                 + ("Your current log is unchanged." if "log" in st.session_state else ""))
        st.stop()


def _users_meaning(graph) -> str:
    """What the verdict means for the users the visitor assumes (PBM by default; trust bias: up to an affine map)."""
    from ultr_core.clickmodels.registry import MODEL_BY_KEY, USER_MODELS
    users = st.selectbox("users click as", USER_MODELS, format_func=lambda k: MODEL_BY_KEY[k].label,
                         help="what the verdict means depends on how your users click: PBM users give relevance up "
                              "to one scale per component; trust-bias users only up to an affine map (the order, "
                              "not the ratios), and only where every factor shows two documents; cascade users "
                              "are not what the graph models", key="upload_users_click_as")
    st.info(f"For {MODEL_BY_KEY[users].label} users: " + escape_markdown(users_report(graph, users).verdict) + ".")
    return users


def _show_report(an) -> str:
    """Verdict metrics, the report, the components and the position-bias curve per component; the users the visitor
    assumes (a key of the click-model table)."""
    rep = an.report
    c = st.columns(4)
    c[0].metric("bias factors", f"{rep.n_nodes:,}")
    c[1].metric("components", f"{rep.n_components:,}")
    c[2].metric("largest component", f"{rep.largest_share:.0%}")
    c[3].metric("identifiable", "yes" if rep.identifiable else "no")
    users = _users_meaning(an.graph)
    alt = rep.alternative_document
    if alt is not None and alt.changes_verdict:
        st.info("The verdict depends on what a document is: " + escape_markdown(alt.message.replace(
            f"use {alt.flag}", "choose the other option above")))
    st.code(format_report(rep), language=None, wrap_lines=True)       # long notes wrap instead of being cut off
    add_section("Verdict", text=format_report(rep))
    comps = an.graph.components_table()
    st.dataframe(comps, hide_index=True, height="auto" if len(comps) <= 5 else 220,     # no empty rows under a few
                 column_config=MEMBERS_COLUMN)
    pb = rep.position_bias
    if pb is not None:
        st.subheader("Position bias per connected component")
        for note in pb.notes:
            st.caption(escape_markdown(note))
        curves = pb.curves
        if len(curves):
            fig = bias_curves_figure(curves)                                 # built once: page and report
            st.plotly_chart(fig, key="upload_bias")
            add_section("Position bias per connected component", figure=fig,
                        table=curves.drop(columns=["factor"]).round(4), caption=" ".join(pb.notes))
            shown = curves[[c for c in CURVE_COLUMNS if c in curves]].round(4)    # whole at 1024 px; the CSV: all
            st.dataframe(shown, hide_index=True, height="auto" if len(curves) <= 5 else 220,
                         column_config={"impressions": st.column_config.NumberColumn(format="localized")})
            st.download_button("Download the curves with every column (CSV)",
                               safe_csv(curves.drop(columns=["factor"])), "position_bias.csv", mime="text/csv",
                               help="adds each factor's log standard error and PBM's maximum-likelihood ratio with "
                                    "its Fisher interval", key="upload_download_curves_csv")
        else:
            st.info("No position-bias curve can be estimated from this log: the notes above say why.")
    return users


#: the curve table's columns on the page (the rest go to its CSV)
CURVE_COLUMNS = ("component", "label", "estimate", "lower", "upper", "impressions", "identification")


def _downloads(an, check, users: str) -> None:
    # the reading the page shows, as --users; written when the button is pressed, not on every rerun
    st.download_button("Download the report (JSON)",
                       lambda: check.to_json(check.report.with_(users=users_report(an.graph, users))),
                       "identifiability.json", mime="application/json", key="upload_download_the_report_json")
    plan = plan_table(an)
    add_section("The repair plan", table=plan, caption="every proposed merge and intervention with its cost, in the "
                "log's own ids" if len(plan) else "nothing to repair: no merge or intervention is proposed")
    if len(plan):
        st.download_button("Download the plan (CSV)", safe_csv(plan), "repair_plan.csv", mime="text/csv",
                           help="every proposed merge and intervention with its cost, in the log's own ids",
                           key="upload_download_the_plan_csv")


run_page(main)
