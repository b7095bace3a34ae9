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

from ultr_core.errors import DataFormatError, UnreadableError
from ultr_core.logs.bounds import read_parquet_bounded
from ultr_core.logs.formats import FORMATS_BY_NAME
from ultr_core.logs.sniff import (
    TABULAR_FORMATS,
    TEXT_FORMATS,
    _is_bytes,
    duplicate_header,
    expand_paths,
    is_gzip,
)
from ultr_core.logs.sql import _q, _register_lines, _run, connect
from ultr_core.logs.yandex import _yandex_columns

__all__ = ["register_normalised", "repair_notes", "read_normalised"]


#: id types pandas would not hold exactly (HUGEINT, UBIGINT, DOUBLE, DECIMAL …) are read as the file's text, so that
#: ids above 2**53 or 2**63 never become floats that merge (issue #50); 64-bit and smaller integers stay numbers
#: the normalised names of the id columns
ID_COLUMNS = ("session_id", "query_id", "doc_id")


_INEXACT = ("HUGEINT", "UHUGEINT", "UBIGINT", "DOUBLE", "FLOAT", "REAL", "DECIMAL")


def _inexact(types: dict, id_columns) -> list[str]:
    """The id columns of scalar types pandas would not hold exactly (nested ones are refused by the caller)."""
    return [c for c in id_columns if c in types and types[c].upper().startswith(_INEXACT)]


def _tabular(con, source, fmt: str, name: str, text_columns=(), id_columns=ID_COLUMNS) -> dict:
    if _is_bytes(source):                 # CSV/TSV uploads arrive as files (ingestion._spill_upload): DuckDB parses
        if fmt != "parquet":              # them streamed, as the CLI's; only Parquet is read from bytes
            raise DataFormatError(name, f"{fmt} bytes are read from a file: pass a path")
        table = read_parquet_bounded(bytes(source), name)     # footer and dictionaries sized before decoding
        con.register("tab_arrow", table)
        _run(con, "CREATE OR REPLACE TEMP VIEW norm AS SELECT * FROM tab_arrow", name)
        _exact_parquet_ids(con, "tab_arrow", id_columns, name)
        return {}
    files = expand_paths(source, name)
    lst = "[" + ", ".join(_q(f) for f in files) + "]"
    if fmt == "parquet":
        _run(con, f"CREATE OR REPLACE TEMP VIEW norm AS SELECT * FROM read_parquet({lst}, union_by_name=true)", name)
        _exact_parquet_ids(con, f"read_parquet({lst}, union_by_name=true)", id_columns, name)
    else:
        comp = "gzip" if is_gzip(source) else "none"
        delim = "\\t" if fmt == "tsv" else ","
        view = f"""CREATE OR REPLACE TEMP VIEW norm AS SELECT * FROM read_csv({lst}, header=true,
                 delim=E'{delim}', compression={_q(comp)}, union_by_name=true{{types}})"""
        _run(con, view.format(types=""), name)
        types = {r[0]: str(r[1]) for r in _run(con, "DESCRIBE norm", name)}
        # DuckDB's sniffer reads '0x2' as the number 2, and 64-bit ids as HUGEINT or DOUBLE: read those as text
        text = [c for c in text_columns if c in types] + _inexact(types, id_columns)
        if text:
            _run(con, view.format(types=", types={" + ", ".join(f"{_q(c)}: 'VARCHAR'" for c in text) + "}"), name)
    _run(con, "SELECT * FROM norm LIMIT 0", name)          # surface sniffing errors here
    return {}


def _exact_parquet_ids(con, table: str, id_columns, name: str) -> None:
    """A Parquet file's id columns of inexact types (UBIGINT, HUGEINT, DECIMAL, DOUBLE) as text in ``norm``."""
    from ultr_core.logs.sql import _ident
    types = {r[0]: str(r[1]) for r in _run(con, "DESCRIBE norm", name)}
    text = _inexact(types, id_columns)
    if text:
        cast = ", ".join(f"CAST({_ident(c)} AS VARCHAR) AS {_ident(c)}" for c in text)
        _run(con, f"CREATE OR REPLACE TEMP VIEW norm AS SELECT * REPLACE ({cast}) FROM {table}", name)


def register_normalised(con, source, fmt: str, name: str | None = None, text_columns=(),
                        id_columns=ID_COLUMNS) -> dict:
    """Create the view ``norm`` for ``source`` in ``con`` (see the module docstring); ``text_columns`` of a
    CSV/TSV file are read as text (checked by the caller instead of parsed by DuckDB's sniffer), and so are the file's
    ``id_columns`` whose inferred type pandas would not hold exactly (HUGEINT, UBIGINT, DOUBLE, DECIMAL).  Returns
    repair counts (``orphan_clicks``, ``repeated_clicks``) for :func:`repair_notes`."""
    name = name or str(source)
    if fmt in TABULAR_FORMATS:
        duplicate_header(source, fmt, name)
        return _tabular(con, source, fmt, name, text_columns, id_columns)
    if fmt not in TEXT_FORMATS:
        raise DataFormatError(name, f"unknown format {fmt!r}; use one of {', '.join(TABULAR_FORMATS + TEXT_FORMATS)}")
    if fmt == "yandex" and not _is_bytes(source):
        try:
            state = _yandex_columns(con, source, name)        # DuckDB's CSV reader splits the fields
            if state is not None:
                return state
        except DataFormatError:
            pass                     # it skips blank lines: re-read line by line so the message names the file's line
    _register_lines(con, source, name)
    return _reader(fmt)(con, name)


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


def read_normalised(source, fmt: str, name: str | None = None) -> tuple[pd.DataFrame, list[str]]:
    """The whole normalised log of a text-format source as a DataFrame (rows in session and
    position order) and notes on what was repaired."""
    name = name or str(source)
    con = connect()
    try:
        state = register_normalised(con, source, fmt, name)
        try:
            df = con.sql("SELECT * FROM norm ORDER BY session_id, position").df()
        except Exception as e:   # noqa: BLE001 — conversion errors of the input
            raise UnreadableError(name, f"cannot read ({str(e).splitlines()[0][:300]})") from None
    finally:
        con.close()
    if len(df) == 0:
        raise DataFormatError(name, "the log is empty (no impressions)")
    return df, repair_notes(state)
