import hashlib
import json

import streamlit as st

from ultr_core.errors import ConfigError, DataFormatError
from ultr_core.reports import format_report
from ultr_core.text import escape_markdown
from ultr_core.userlogs import TARGETS, guess_mapping, infer_format, peek_columns, read_user_log
from pages._common import cached_analysis

@st.cache_resource(show_spinner="Reading the log …", max_entries=4)
def _read(name: str, digest: str, _data: bytes, fmt: str, columns: tuple, doc_columns: tuple):
    return read_user_log(_data, fmt, columns=dict(columns) or None, doc_columns=list(doc_columns) or None, name=name)


st.title("Upload a click log")
st.caption("Check whether the relevance in your own log can be recovered at all: we build its identifiability "
           "graph (Chen et al., ICML 2024) and propose merges or interventions when it is disconnected. "
           "Files are parsed as text or Parquet only — nothing is ever unpickled — and stay in this session.")

with st.expander("Accepted formats"):
    st.markdown("""
- **CSV / TSV / Parquet**: one row per displayed document with columns for the query, the document
  (or feature columns that identify it), the 1-based position and the click (0/1); optional session id
  and shown flag. Any other column can serve as a bias factor (e.g. a vertical or device type).
- **Yandex relevance-prediction log** (tab-separated, as click-model libraries use): query rows
  `SessionID TimePassed Q QueryID RegionID URL1 … URLn`, click rows `SessionID TimePassed C URLID`.
  A document is the pair (query, URL).
- ULTRA directories are folders: use `python -m ultr_core ig PATH --format ultra`.
""")

up = st.file_uploader("click log", type=["csv", "tsv", "parquet", "pq", "txt", "log"],
                      help="size limit set in .streamlit/config.toml (server.maxUploadSize)")
if up is None:
    st.info("Drop a file to start. No file? The Simulate page makes one you can download and upload here.")
    st.stop()

data = up.getvalue()
fmt_guess = infer_format(up.name)
fmt = st.selectbox("format", ["csv", "tsv", "parquet", "yandex"],
                   index=["csv", "tsv", "parquet", "yandex"].index(fmt_guess) if fmt_guess != "ultra" else 0,
                   help="inferred from the file name; change it if the guess is wrong")
columns, doc_columns = None, None
if fmt != "yandex":
    try:
        cols = peek_columns(data, fmt, up.name)
    except DataFormatError as e:
        st.error(escape_markdown(e))
        st.stop()
    guess = guess_mapping(cols)
    st.subheader("Map your columns")
    mc = st.columns(4)
    chosen = {}
    for i, target in enumerate(TARGETS):
        optional = target in ("session_id", "shown")
        opts = (["(none)"] if optional or target == "doc_id" else []) + cols
        default = guess.get(target, "(none)" if "(none)" in opts else cols[min(i, len(cols) - 1)])
        chosen[target] = mc[i % 4].selectbox(target, opts, index=opts.index(default) if default in opts else 0,
                                             key=f"map_{target}", help="which file column holds " + target)
    if chosen["doc_id"] == "(none)":
        doc_columns = st.multiselect("document = these feature columns", cols,
                                     help="documents with identical values in these columns are one document")
        if not doc_columns:
            st.warning("Choose a document column or the feature columns that identify a document.")
            st.stop()
    columns = {src: tgt for tgt, src in chosen.items() if src != "(none)" and src != tgt}

digest = hashlib.sha256(data).hexdigest()
read_key = (up.name, digest, fmt, tuple(sorted((columns or {}).items())), tuple(doc_columns or ()))
try:
    log, notes = _read(up.name, digest, data, fmt, read_key[3], read_key[4])
except DataFormatError as e:
    st.error(f"We could not read the log — {escape_markdown(e)}")
    st.stop()

for n in notes:
    st.info(escape_markdown(n))
st.success(f"Read {len(log):,} rows, {log.n_sessions:,} sessions, {int(log.frame['click'].sum()):,} clicks.")

extra = [c for c in log.frame.columns if c not in ("session_id", "query_id", "doc_id", "click", "shown",
                                                   "doc_key", "query_key", "url_id")]
bias = st.multiselect("bias factor columns", extra, ["position"] if "position" in extra else extra[:1],
                      help="the identifiability graph has one node per distinct tuple of these columns")
if not bias:
    st.stop()
try:
    an = cached_analysis(log, read_key, tuple(bias))
except (ConfigError, DataFormatError, ValueError) as e:
    st.error(f"We could not analyse the log — {escape_markdown(e)}")
    st.stop()
rep = an.report
st.session_state["log"] = log
c = st.columns(4)
c[0].metric("bias factors", f"{rep['n_nodes']:,}")
c[1].metric("components", f"{rep['n_components']:,}")
c[2].metric("largest component", f"{rep['largest_share']:.0%}")
c[3].metric("identifiable", "yes" if rep["identifiable"] else "no")
st.code(format_report(rep), language=None)
st.dataframe(an.graph.components_table(), hide_index=True, height=220)
st.download_button("Download the report (JSON)", json.dumps(rep, default=str, indent=1), "identifiability.json",
                   mime="application/json")
st.caption("The log is now the *current log*: open the Identifiability page to draw its graph.")
