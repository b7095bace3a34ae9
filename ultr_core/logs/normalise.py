"""Readers for real click-log formats: one SQL view of normalised rows per format (DuckDB).

Every format is turned into the same **normalised view** ``norm`` inside a DuckDB connection,
one row per displayed document:

    session_id BIGINT · query_id VARCHAR · doc_id VARCHAR · position INTEGER · click TINYINT · extras…

Consumers either aggregate it out of core (:mod:`ultr_core.logs.ingestion`:
distinct (document, factor) counts) or materialise it (:func:`read_normalised`, used by
:func:`ultr_core.logs.mapping.read_user_log` for the app).  DuckDB reads files itself — plain or
gzip, globs of files — in parallel and with bounded memory; in-memory uploads are split into
lines by pyarrow.  No Python loop runs per line.

Tolerant where real files are: UTF-8 BOM, CRLF, LF or both, blank lines, trailing and empty
tab fields (NAVER's CLARA2 pads its click rows), gzip with or without a ``.gz`` extension.
Strict where it matters: an unknown record type, a row without its ids, a document line before
any query line, a non-numeric position or click — each named with its **line** (1-based file
line; blank lines count).

Text formats (:data:`TEXT_FORMATS`):

* ``yandex`` — the Yandex relevance-prediction log (2011 challenge; CLARA2 uses it):
  query rows ``SessionID TimePassed Q QueryID RegionID URL1 … URLn``, click rows
  ``SessionID TimePassed C URLID``.  Every Q row is one impression (``session_id`` = its
  line); a click belongs to the latest impression at or before it in the same session that
  shows the URL (an as-of join).
* ``yandex2013`` — the Yandex personalized web search challenge log (WSCD 2013): session
  rows ``SessionID M Day USERID``, query rows ``SessionID TimePassed Q|T SERPID QueryID
  Term,Term,… URL,Domain …`` and click rows ``SessionID TimePassed C SERPID URLID``.  A click
  belongs to its (session, SERP); each URL's ``domain`` is kept as a column.
* ``baidu`` — Baidu-ULTR raw session files: a query line ``qid query query_reformulation``
  opens a session; each document line has 32 tab-separated fields (``pos url_md5 title
  abstract multimedia_type click - - skip serp_height displayed_time …``).  Kept as numeric
  columns (:data:`BAIDU_COLUMNS`): display features usable as bias factors, e.g.
  ``--bias position,multimedia_type``.

* ``pyclick`` — the session text of PyClick's samples (its Yandex WSCD examples, ``examples/data``):
  ``query<TAB>url,url,… : clicked,clicked,…;`` — sessions end with ``;`` and several may share a
  line; a URL is clicked when it is in the session's click list (PyClick's own parser does the same);
  a click on a URL the session did not show is ignored (counted in the notes).

Tabular formats: ``csv`` / ``tsv`` (header row; DuckDB's sniffer for types) and ``parquet``.

:func:`~ultr_core.logs.sniff.sniff_format` recognises all of these from the content when the name says
nothing.  The readers live in :mod:`.yandex` (both Yandex logs) and :mod:`.sessions` (Baidu-ULTR,
PyClick); the tabular reader and :func:`register_normalised`, which dispatches on the format, are here.
"""
from __future__ import annotations

import pandas as pd

from ultr_core.errors import DataFormatError, TooManyRowsError
from ultr_core.logs.bounds import read_parquet_bounded
from ultr_core.logs.formats import FORMATS_BY_NAME
from ultr_core.logs.ids import canonical_id_view
from ultr_core.logs.sniff import (
    TABULAR_FORMATS,
    TEXT_FORMATS,
    _is_bytes,
    duplicate_header,
    expand_paths,
    is_gzip,
)
from ultr_core.logs.sql import _q, _register_lines, connect, reading_error, run_sql
from ultr_core.logs.yandex import _yandex_columns

__all__ = ["register_normalised", "repair_notes", "read_normalised"]


#: the normalised names of the id columns
ID_COLUMNS = ("session_id", "query_id", "doc_id")


def _tabular(con, source, fmt: str, name: str, text_columns=(), id_columns=ID_COLUMNS) -> dict:
    if _is_bytes(source):                 # CSV/TSV uploads arrive as files (sniff.spill_upload): DuckDB parses
        if fmt != "parquet":              # them streamed, as the CLI's; only Parquet is read from bytes
            raise DataFormatError(name, f"{fmt} bytes are read from a file: pass a path")
        table = read_parquet_bounded(bytes(source), name)     # footer and dictionaries sized before decoding
        con.register("tab_arrow", table)
        run_sql(con, "CREATE OR REPLACE TEMP VIEW norm AS SELECT * FROM tab_arrow", name)
        return {}
    files = expand_paths(source, name)
    lst = "[" + ", ".join(_q(f) for f in files) + "]"
    if fmt == "parquet":
        run_sql(con, f"CREATE OR REPLACE TEMP VIEW norm AS SELECT * FROM read_parquet({lst}, union_by_name=true)", name)
    else:
        comp = "gzip" if is_gzip(source) else "none"
        delim = "\\t" if fmt == "tsv" else ","
        view = f"""CREATE OR REPLACE TEMP VIEW norm AS SELECT * FROM read_csv({lst}, header=true,
                 delim=E'{delim}', compression={_q(comp)}, union_by_name=true{{types}})"""
        run_sql(con, view.format(types=""), name)
        types = {r[0]: str(r[1]) for r in run_sql(con, "DESCRIBE norm", name)}
        # DuckDB's sniffer reads '0x2' as the number 2, '07' as 7 and 'true' or '2024-01-01' as BOOLEAN or DATE:
        # positions and ids are read as the file's text (ids then follow :mod:`ultr_core.logs.ids`)
        text = list(dict.fromkeys(c for c in (*text_columns, *id_columns) if c in types))
        if text:
            run_sql(con, view.format(types=", types={" + ", ".join(f"{_q(c)}: 'VARCHAR'" for c in text) + "}"), name)
    run_sql(con, "SELECT * FROM norm LIMIT 0", name)          # surface sniffing errors here
    return {}


def register_normalised(con, source, fmt: str, *, name: str | None = None, text_columns=(),
                        id_columns=ID_COLUMNS) -> dict:
    """Create the view ``norm`` for ``source`` in ``con`` (see the module docstring); ``text_columns`` of a
    CSV/TSV file are read as text (checked by the caller instead of parsed by DuckDB's sniffer); the
    ``id_columns`` follow the one id rule of :mod:`ultr_core.logs.ids` (trimmed text, numbers only where every id
    round-trips).  Returns repair counts (``orphan_clicks``, ``repeated_clicks``) for :func:`repair_notes`."""
    name = name or str(source)
    if fmt in TABULAR_FORMATS:
        duplicate_header(source, fmt, name)
        state = _tabular(con, source, fmt, name, text_columns, id_columns)
        canonical_id_view(con, id_columns, name)
        return state
    if fmt not in TEXT_FORMATS:
        raise DataFormatError(name, f"unknown format {fmt!r}; use one of {', '.join(TABULAR_FORMATS + TEXT_FORMATS)}")
    if fmt == "yandex" and not _is_bytes(source):
        try:
            state = _yandex_columns(con, source, name)        # DuckDB's CSV reader splits the fields
            if state is not None:
                canonical_id_view(con, ID_COLUMNS, name)
                return state
        except DataFormatError:
            pass                     # it skips blank lines: re-read line by line so the message names the file's line
    _register_lines(con, source, name)
    state = _reader(fmt)(con, name)
    canonical_id_view(con, ID_COLUMNS, name)
    return state


def _reader(fmt: str):
    """The reader a text format's record names (``"module:function"``, :data:`LOG_FORMATS`)."""
    import importlib
    module, fn = FORMATS_BY_NAME[fmt].reader.split(":")
    return getattr(importlib.import_module(module), fn)


def repair_notes(state: dict) -> list[str]:
    notes = []
    if state.get("orphan_clicks"):
        notes.append(f"ignored {state['orphan_clicks']:,} click(s) on a URL that no earlier impression of the "
                     "session showed")
    if state.get("repeated_clicks"):
        notes.append(f"counted {state['repeated_clicks']:,} repeated click(s) on the same impression once")
    if state.get("multi_position_clicks"):
        notes.append(f"counted {state['multi_position_clicks']:,} click(s) on a URL shown at several positions of one "
                     "result page once, at its first position (PyClick's rule for Yandex logs)")
    return notes


def read_normalised(source, fmt: str, name: str | None = None, *,
                    max_rows: int | None = None) -> tuple[pd.DataFrame, list[str]]:
    """The whole normalised log of a text-format source as a DataFrame (rows in session and
    position order) and notes on what was repaired; more than ``max_rows`` rows raise
    :class:`~ultr_core.errors.TooManyRowsError` (never more than ``max_rows`` + 1 are fetched)."""
    name = name or str(source)
    con = connect()
    try:
        state = register_normalised(con, source, fmt, name=name)
        limit = "" if max_rows is None else f" LIMIT {int(max_rows) + 1}"
        try:
            df = con.sql("SELECT * FROM norm ORDER BY session_id, position" + limit).df()
        except Exception as e:   # noqa: BLE001 — conversion errors of the input
            raise reading_error(e, name) from None
    finally:
        con.close()
    if max_rows is not None and len(df) > max_rows:
        raise TooManyRowsError(name, max_rows)
    if len(df) == 0:
        raise DataFormatError(name, "the log is empty (no impressions)")
    return df, repair_notes(state)
