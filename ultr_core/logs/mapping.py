"""Click logs supplied by users, read into a :class:`~ultr_core.logs.clicklog.ClickLog`.

Formats:

* **csv / tsv / parquet** — one row per displayed document.  Default columns
  ``query_id``, ``doc_id`` (or ``doc_columns``: feature columns that identify a document),
  ``position`` (1-based) and ``click`` (0/1); optional ``session_id`` (otherwise a new
  session starts where the query changes or the position does not increase) and ``shown``
  (default: all shown).  Any other column is kept and usable as a bias factor by name.
  ``columns`` maps the file's names onto these (``{"qid": "query_id", …}``).
* **ultra** — an ULTRA directory with click files is rare; we read its ``train`` split's
  ``init_list`` as displayed lists and, when present, ``train/train.clicks``
  (``qid c c …`` aligned with ``init_list``; one session per line).
* **yandex**, **yandex2013**, **baidu** — real public log formats, parsed by the vectorised
  readers of :mod:`ultr_core.logs.yandex` and :mod:`ultr_core.logs.sessions` (Yandex relevance prediction / CLARA2,
  Yandex
  personalized search 2013, Baidu-ULTR raw sessions).

**Documents.**  Relevance belongs to a query–document pair, so by default (``document="query"``)
a document is the pair (query_id, doc_id) in every format: the same URL shown for two queries is
two documents.  ``document="global"`` makes ``doc_id`` alone the document (e.g. one-hot ids
that recur across queries); ``doc_columns`` identifies documents by feature columns.  The
file's own ids stay readable in ``query_key`` and ``doc_key``.

The format is taken from the extension when it is telling, else sniffed from the content
(files without an extension, gzip without ``.gz``).

Readers return ``(log, notes)``: ``notes`` lists what was repaired (duplicates dropped,
clicks that matched no impression).  Unfixable problems raise
:class:`~ultr_core.errors.DataFormatError` naming the file, the line or column and the problem.
"""
from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd

from ultr_core.errors import DataFormatError, MissingColumnError, TooManyRowsError, UnreadableError, show
from ultr_core.logs.bounds import read_parquet_bounded
from ultr_core.logs.clicklog import MAX_POSITION, ClickLog, check_mapping, check_roles, not_decimal
from ultr_core.logs.coding import factor_codes
from ultr_core.logs.formats import FORMAT_NAMES, FORMATS_BY_NAME
from ultr_core.logs.normalise import ID_COLUMNS
from ultr_core.logs.sniff import infer_format, is_gzip, spill_upload
from ultr_core.logs.ultra import ultra_frame

__all__ = ["TARGETS", "FORMATS", "MAX_ROWS", "DOCUMENT_KEYS", "default_document", "read_user_log", "peek_columns",
           "guess_mapping", "frame_to_log", "file_id_frame",
           "column_chosen_twice"]

#: the schema columns a user's columns can be mapped onto (session_id and shown are optional)
TARGETS = ("query_id", "doc_id", "position", "click", "session_id", "shown")
_ALIASES = {"query_id": ("query_id", "qid", "query", "queryid"), "doc_id": ("doc_id", "docid", "doc", "url",
                                                                             "document", "urlid"),
            "position": ("position", "pos", "rank"), "click": ("click", "clicked", "clicks"),
            "session_id": ("session_id", "session", "sessionid", "sid"), "shown": ("shown",)}

FORMATS = FORMAT_NAMES          # the one table: ultr_core.logs.formats
MAX_ROWS = 50_000_000


#: document keys: "auto" (the format's default), (query, doc_id) pairs, or doc_id alone
DOCUMENT_KEYS = ("auto", "query", "global")


def default_document(fmt: str) -> str:
    """The document key a format means by default: ``"global"`` for ULTRA folders (a document is
    a feature vector, shown by any query — the official identifiability check), ``"query"`` — the
    (query, doc_id) pair — for click logs (CSV/TSV/Parquet, Yandex, Baidu, PyClick), where the same URL
    under two queries has two relevances."""
    return FORMATS_BY_NAME[fmt].document if fmt in FORMATS_BY_NAME else "query"


def read_user_log(source, fmt: str | None = None, *, columns: dict | None = None,
                  doc_columns: list | None = None, name: str | None = None, document: str = "auto",
                  max_rows: int | None = None):
    """Read a user's click log.  ``source`` is a path or a bytes buffer (uploads); ``name``
    is used in messages (defaults to the path); ``document`` ``"auto"`` is the format's default
    key (:func:`default_document`); a log of more than ``max_rows`` rows raises
    :class:`~ultr_core.errors.TooManyRowsError` (the caller reads it out of core).  Returns ``(ClickLog, notes)``."""
    from ultr_core.logs.normalise import read_normalised
    from ultr_core.logs.sniff import TEXT_FORMATS, duplicate_header, format_from_name, resolve_source, unknown_format
    name = name or str(source)
    if isinstance(source, io.IOBase):
        source = source.read()
    if isinstance(source, (bytes, bytearray, memoryview)) and len(source) == 0:
        raise DataFormatError(name, "the file is empty")
    source = resolve_source(source, fmt, name)                          # paths, compression and format: once
    sniffed = fmt is None and format_from_name(name) is None
    fmt = (fmt or infer_format(source, name)).lower()
    if fmt not in FORMATS:
        raise DataFormatError(name, f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    document = default_document(fmt) if document == "auto" else document
    if fmt in ("csv", "tsv", "parquet"):
        duplicate_header(source, fmt, name)
    if fmt in TEXT_FORMATS:
        df, notes = read_normalised(source, fmt, name, max_rows=max_rows)
        log, more = frame_to_log(df, name, columns=columns, doc_columns=doc_columns, document=document)
        return log, notes + more
    if fmt == "ultra":
        from ultr_core.data.archives import ultra_root
        with ultra_root(source, name) as root:
            return _read_ultra_clicks(root, name, document, max_rows)
    try:
        if fmt == "parquet":              # footer and dictionaries sized before anything is decoded
            table = read_parquet_bounded(source, name)
            raw = (table.schema.metadata or {}).get(b"ultr_core.meta")
            if max_rows is not None and table.num_rows > max_rows:
                raise TooManyRowsError(name, max_rows)
            if raw and all(c in table.column_names for c in ("session_id", "query_id", "doc_id", "position",
                                                              "shown", "click")) and not columns:
                import json
                return ClickLog._from_frame(table.to_pandas(), json.loads(raw), name), []   # a log this library wrote
        df = _table_frame(source, fmt, name, columns, max_rows)
    except UnreadableError:
        if sniffed:               # nothing told us this was CSV: say what is accepted instead of a parser's words
            raise unknown_format(source, name) from None
        raise
    except DataFormatError:
        raise
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, OSError, ValueError,
            EOFError) as e:
        if sniffed:               # nothing told us this was CSV: say what is accepted instead of a parser's words
            raise unknown_format(source, name) from None
        raise UnreadableError(name, f"cannot read as {fmt}: {str(e).splitlines()[0] if str(e) else type(e).__name__}") \
            from None
    except Exception as e:        # noqa: BLE001 — pyarrow raises several types for a broken Parquet file
        raise UnreadableError(name, f"cannot read as {fmt}: {str(e).splitlines()[0][:200]}") from None
    if sniffed and len(df.columns) < 3 and not columns:
        raise unknown_format(source, name, f"read as {fmt}, it has {len(df.columns)} column(s)")
    return frame_to_log(df, name, columns=columns, doc_columns=doc_columns, document=document)


def peek_columns(source, fmt: str, name: str = "upload") -> list[str]:
    """Column names of a CSV/TSV/Parquet source without reading it all."""
    if isinstance(source, bytes):
        source = io.BytesIO(source)
    try:
        if fmt == "parquet":
            import pyarrow.parquet as pq
            return list(pq.read_schema(source).names)
        return list(pd.read_csv(source, sep="\t" if fmt == "tsv" else ",", nrows=5, encoding="utf-8-sig",
                                compression="gzip" if is_gzip(source.getvalue() if isinstance(source, io.BytesIO)
                                                              else source) else None).columns)
    except Exception as e:        # any parser failure is reported as a format problem
        raise UnreadableError(name, f"cannot read as {fmt}: {str(e).splitlines()[0] if str(e) else type(e).__name__}") \
            from None


def column_chosen_twice(chosen: dict) -> str | None:
    """The message for one file column mapped onto two schema columns (e.g. a query–URL relevance file, whose
    only number would be both the position and the click): what a click log needs instead.  ``chosen`` maps each
    schema column to a file column, or ``"(none)"``.

    >>> column_chosen_twice({"query_id": "q", "position": "relevance", "click": "relevance"})[:47]
    "The column 'relevance' is chosen as both positi"
    """
    seen = {}
    for target, col in chosen.items():
        if col == "(none)":
            continue
        if col in seen:
            return (f"The column {col!r} is chosen as both {seen[col]} and {target}. A click log needs one column "
                    "for each: the query, the document, the 1-based position at which it was shown and the click "
                    "(0/1), one row per displayed document — is this file a click log? (A relevance-judgement file "
                    "has no positions or clicks.)")
        seen[col] = target
    return None


def guess_mapping(columns: list[str]) -> dict:
    """Best guess of which file column is which schema column (by common names)."""
    low = {str(c).lower(): c for c in columns}
    out = {}
    for target, names in _ALIASES.items():
        for n in names:
            if n in low:
                out[target] = low[n]
                break
    return out


def frame_to_log(df: pd.DataFrame, name: str, *, columns: dict | None = None,
                 doc_columns: list | None = None, document: str = "query", session_note: bool = True):
    """Map a user table onto the ClickLog schema (see the module docstring): rename, check the required columns,
    positions and clicks, code queries and documents, then sessions (``session_note``: say when they are
    inferred) and the first row of each (session, position)."""
    check_roles([], doc_columns)
    df = _renamed(df, name, columns)
    need = ["query_id", "position", "click"] + ([] if doc_columns else ["doc_id"])
    _check_required(df, name, need + (["session_id"] if "session_id" in df.columns else []), doc_columns)
    out = df.copy()
    out["position"], out["click"] = _checked_positions_clicks(df, name)
    out["query_key"] = out["query_id"].astype(str)
    out["query_id"] = pd.factorize(out["query_id"], sort=True)[0]
    _code_documents(out, doc_columns, document, name)
    notes, inferred = [], False
    if "session_id" not in out:
        new = (out["query_id"].diff().fillna(1) != 0) | (out["position"].diff().fillna(-1) <= 0)
        out["session_id"] = np.cumsum(new.to_numpy()) - 1
        if session_note:
            inferred = True
            notes.append("no session_id column: a new session starts where the query changes or the "
                         "position does not increase")
    else:
        out["session_id"] = pd.factorize(out["session_id"])[0]
    if "shown" not in out:
        out["shown"] = True
    dup = out.duplicated(["session_id", "position"], keep="first")
    if dup.any():
        notes.append(f"dropped {int(dup.sum()):,} duplicate row(s) (same session and position) of {len(out):,}")
        out = out[~dup]
    meta = {"source": name, "document": "columns" if doc_columns else document}
    if inferred:
        meta["sessions"] = "inferred"            # click models need real sessions (pages say so instead of fitting)
    log = ClickLog._from_frame(out, meta, name)
    return log, notes


def file_id_frame(log: ClickLog) -> pd.DataFrame:
    """The rows of a kept log with ``query_id`` and ``doc_id`` its file's own ids under the one id rule
    (:func:`~ultr_core.logs.ids.canonical_ids`: numbers where every id round-trips, else the trimmed text) — what the
    CLI's readers give ``click-models`` and ``evaluate`` for the same file, so that the pairs, the patterns and the
    seeded bootstraps come out in the same order (the ids' text put 16704940 before 688835); a log without the file's
    ids (a simulated one) as it is.

    >>> log, _ = frame_to_log(pd.DataFrame({"session_id": [1, 1], "query_id": ["q", "q"], "doc_id": [688835, 16704940],
    ...                                     "position": [1, 2], "click": [1, 0]}), "log.csv")
    >>> file_id_frame(log)["doc_id"].tolist(), str(file_id_frame(log)["doc_id"].dtype)
    ([688835, 16704940], 'int64')
    """
    from ultr_core.logs.ids import canonical_ids
    f = log.frame
    return f.assign(**{c: canonical_ids(f[k]) for c, k in (("query_id", "query_key"), ("doc_id", "doc_key")) if k in f})


def file_columns(columns: dict | None, roles) -> tuple:
    """The file columns that hold ``roles`` under the user's mapping (file column → role), for the readers that
    must treat them before the mapping is applied (ids read as text, the position checked as text)."""
    back = {t: src for src, t in (columns or {}).items()}
    return tuple(back.get(r, r) for r in roles)


def _table_frame(source, fmt: str, name: str, columns: dict | None, max_rows: int | None = None) -> pd.DataFrame:
    """A CSV/TSV/Parquet log as a frame, read by the reader the CLI uses (DuckDB: the same sniffer, the positions as
    text, the ids under :mod:`ultr_core.logs.ids`), rows in file order; more than ``max_rows`` rows raise
    :class:`~ultr_core.errors.TooManyRowsError`."""
    import tempfile

    from ultr_core.logs.normalise import register_normalised
    from ultr_core.logs.sql import connect, reading_error, reporting_budget
    with tempfile.TemporaryDirectory(prefix="ultr_read_") as tmp, reporting_budget():
        con = connect(None, tmp)
        try:
            register_normalised(con, spill_upload(source, fmt, tmp), fmt, name=name,
                                text_columns=file_columns(columns, ("position",)),
                                id_columns=file_columns(columns, ID_COLUMNS))
            try:
                df = con.sql("SELECT * FROM norm" + ("" if max_rows is None else f" LIMIT {int(max_rows) + 1}")).df()
            except Exception as e:   # noqa: BLE001 — DuckDB's conversion errors are the input's
                raise reading_error(e, name) from None
        finally:
            con.close()
    if max_rows is not None and len(df) > max_rows:
        raise TooManyRowsError(name, max_rows)
    return df


def _renamed(df: pd.DataFrame, name: str, columns: dict | None) -> pd.DataFrame:
    """``df`` with the user's mapping applied, refused when a mapped column is missing or the table is empty or
    too long."""
    if columns:
        check_mapping(columns)
        unknown = [c for c in columns if c not in df.columns]
        if unknown:
            raise DataFormatError(name, f"mapped column(s) {', '.join(map(str, unknown))} not in the file "
                                        f"(it has {', '.join(map(str, df.columns))})")
        df = df.rename(columns=columns)
    if len(df) == 0:
        raise DataFormatError(name, "the log is empty (no rows)")
    if len(df) > MAX_ROWS:
        raise DataFormatError(name, f"{len(df):,} rows exceed the limit of {MAX_ROWS:,}")
    return df


def _check_required(df: pd.DataFrame, name: str, need: list, doc_columns) -> None:
    missing = [c for c in need if c not in df.columns]
    if missing:
        raise MissingColumnError(name, f"missing column(s) {', '.join(missing)}; found "
                                       f"{', '.join(map(str, df.columns))} — map them to query_id, doc_id, "
                                       "position, click", missing)
    for col in need + list(doc_columns or []):
        if col not in df.columns:
            raise MissingColumnError(name, f"document column {col!r} not in the file", [col])
        if df[col].isna().any():
            row = int(np.flatnonzero(df[col].isna().to_numpy())[0])
            raise DataFormatError(name, f"column {col!r} is empty at data row {row + 1}")


def _checked_positions_clicks(df: pd.DataFrame, name: str):
    """Positions (1 … MAX_POSITION, whole decimal numbers) as int16 and clicks (0/1) as int8, or the first bad row."""
    pos = _positions(df["position"], name)
    if (pos < 1).any():
        row = int(np.flatnonzero((pos < 1).to_numpy())[0])
        raise DataFormatError(name, f"positions are 1-based: {int(pos.iloc[row])} at data row {row + 1}")
    if pos.max() > MAX_POSITION:
        raise DataFormatError(name, f"position {int(pos.max())} is out of range (at most {MAX_POSITION:,})")
    clk = pd.to_numeric(df["click"], errors="coerce")
    if clk.isna().any() or not clk.isin([0, 1]).all():
        row = int(np.flatnonzero((clk.isna() | ~clk.isin([0, 1])).to_numpy())[0])
        raise DataFormatError(name, f"column 'click' must hold 0 or 1 (data row {row + 1}: "
                                    f"{show(df['click'].iloc[row])})")
    return pos.astype(np.int16), clk.astype(np.int8)


def _code_documents(out: pd.DataFrame, doc_columns, document: str, name: str) -> None:
    """Document codes in ``out["doc_id"]`` (the file's ids kept in ``doc_key``): by feature columns, by doc_id
    alone ("global") or by the (query, doc_id) pair ("query")."""
    if doc_columns:
        out["doc_id"] = out.groupby(list(doc_columns), sort=True, dropna=False).ngroup()
    elif document == "global":
        out["doc_key"] = out["doc_id"].astype(str)
        out["doc_id"] = pd.factorize(out["doc_id"], sort=True)[0]
    elif document == "query":             # the document is the (query, doc_id) pair, in the ids' own order (the
        out["doc_key"] = out["doc_id"].astype(str)                # CLI's: numbers as numbers, not as their text)
        out["doc_id"] = factor_codes(out, ["query_id", "doc_id"])[0]
    else:
        raise DataFormatError(name, f"document={document!r}: use 'query' or 'global'")


def _positions(col: pd.Series, name: str) -> pd.Series:
    """Positions as integers, refused unless written as whole decimal numbers (``0x2``, ``2.0`` and ``1e0``
    are refused, as the out-of-core reader does)."""
    if pd.api.types.is_integer_dtype(col.dtype):
        return col
    bad = not_decimal(col)
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise DataFormatError(name, f"column 'position' must hold whole numbers written in decimal digits "
                                    f"(data row {row + 1}: {show(col.iloc[row])})")
    return pd.to_numeric(col.astype(str).str.strip())


def _read_ultra_clicks(root: Path, name, document: str = "global", max_rows: int | None = None):
    """An ULTRA directory as a :class:`ClickLog` (documents: see :func:`ultra_frame`)."""
    df, notes = ultra_frame(root, name)
    if max_rows is not None and len(df) > max_rows:
        raise TooManyRowsError(name, max_rows)
    log, more = frame_to_log(df, name, document=document, session_note=False)    # ULTRA lists are sessions
    return log, notes + more
