"""Click logs supplied by users, read into a :class:`~ultr_core.clicklog.ClickLog`.

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
  readers of :mod:`ultr_core.logformats` (Yandex relevance prediction / CLARA2, Yandex
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

from .clicklog import ClickLog
from .errors import DataFormatError, show
from .identifiability.coding import factor_codes
from .logformats import is_gzip

__all__ = ["read_user_log", "infer_format", "default_document", "DOCUMENT_KEYS", "ultra_frame", "peek_columns",
           "guess_mapping", "FORMATS", "MAX_ROWS", "TARGETS"]

#: the schema columns a user's columns can be mapped onto (session_id and shown are optional)
TARGETS = ("query_id", "doc_id", "position", "click", "session_id", "shown")
_ALIASES = {"query_id": ("query_id", "qid", "query", "queryid"), "doc_id": ("doc_id", "docid", "doc", "url",
                                                                             "document", "urlid"),
            "position": ("position", "pos", "rank"), "click": ("click", "clicked", "clicks"),
            "session_id": ("session_id", "session", "sessionid", "sid"), "shown": ("shown",)}

FORMATS = ("csv", "tsv", "parquet", "ultra", "yandex", "yandex2013", "baidu", "pyclick")
MAX_ROWS = 50_000_000


#: document keys: "auto" (the format's default), (query, doc_id) pairs, or doc_id alone
DOCUMENT_KEYS = ("auto", "query", "global")


def default_document(fmt: str) -> str:
    """The document key a format means by default: ``"global"`` for ULTRA folders (a document is
    a feature vector, shown by any query — the official identifiability check), ``"query"`` — the
    (query, doc_id) pair — for click logs (CSV/TSV/Parquet, Yandex, Baidu, PyClick), where the same URL
    under two queries has two relevances."""
    return "global" if fmt == "ultra" else "query"


def infer_format(path, name: str | None = None) -> str:
    """Format of a path or bytes: the extension when telling, else the content (a directory
    is an ULTRA directory)."""
    from .logformats import infer_format as _infer
    if not isinstance(path, (bytes, bytearray, memoryview)) and Path(str(path)).is_dir():
        return "ultra"
    return _infer(path, name)


def read_user_log(source, fmt: str | None = None, columns: dict | None = None,
                  doc_columns: list | None = None, name: str | None = None, document: str = "auto"):
    """Read a user's click log.  ``source`` is a path or a bytes buffer (uploads); ``name``
    is used in messages (defaults to the path); ``document`` ``"auto"`` is the format's default
    key (:func:`default_document`).  Returns ``(ClickLog, notes)``."""
    from .logformats import TEXT_FORMATS, duplicate_header, format_from_name, read_normalised, unknown_format
    name = name or str(source)
    if isinstance(source, io.IOBase):
        source = source.read()
    if isinstance(source, (bytes, bytearray, memoryview)) and len(source) == 0:
        raise DataFormatError(name, "the file is empty")
    sniffed = fmt is None and format_from_name(name) is None
    fmt = (fmt or infer_format(source, name)).lower()
    if fmt not in FORMATS:
        raise DataFormatError(name, f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    document = default_document(fmt) if document == "auto" else document
    if fmt in ("csv", "tsv", "parquet"):
        duplicate_header(source, fmt, name)
    if fmt in TEXT_FORMATS:
        df, notes = read_normalised(source, fmt, name)
        log, more = frame_to_log(df, name, columns, doc_columns, document)
        return log, notes + more
    if fmt == "ultra":
        from .archives import ultra_root
        with ultra_root(source, name) as root:
            return _read_ultra_clicks(root, name, document)
    buf = io.BytesIO(bytes(source)) if isinstance(source, (bytes, bytearray, memoryview)) else source
    try:
        if fmt == "parquet":
            import pyarrow.parquet as pq
            table = pq.read_table(buf)
            df = table.to_pandas()
            raw = (table.schema.metadata or {}).get(b"ultr_core.meta")
            if raw and all(c in df.columns for c in ("session_id", "query_id", "doc_id", "position",
                                                     "shown", "click")) and not columns:
                import json
                return ClickLog._from_frame(df, json.loads(raw), name), []   # a log this library wrote
        else:
            df = pd.read_csv(buf, sep="\t" if fmt == "tsv" else ",", compression="gzip" if is_gzip(source) else None,
                             encoding="utf-8-sig")
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, OSError, ValueError,
            EOFError) as e:
        if sniffed:               # nothing told us this was CSV: say what is accepted instead of a parser's words
            raise unknown_format(source, name) from None
        raise DataFormatError(name, f"cannot read as {fmt}: {str(e).splitlines()[0] if str(e) else type(e).__name__}") \
            from None
    except Exception as e:        # noqa: BLE001 — pyarrow raises several types for a broken Parquet file
        raise DataFormatError(name, f"cannot read as {fmt}: {str(e).splitlines()[0][:200]}") from None
    if sniffed and len(df.columns) < 3 and not columns:
        raise unknown_format(source, name, f"read as {fmt}, it has {len(df.columns)} column(s)")
    return frame_to_log(df, name, columns, doc_columns, document)


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
        raise DataFormatError(name, f"cannot read as {fmt}: {str(e).splitlines()[0] if str(e) else type(e).__name__}") \
            from None


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


def frame_to_log(df: pd.DataFrame, name: str, columns: dict | None = None,
                 doc_columns: list | None = None, document: str = "query"):
    """Map a user table onto the ClickLog schema (see the module docstring)."""
    notes = []
    if columns:
        unknown = [c for c in columns if c not in df.columns]
        if unknown:
            raise DataFormatError(name, f"mapped column(s) {', '.join(map(str, unknown))} not in the file "
                                        f"(it has {', '.join(map(str, df.columns))})")
        df = df.rename(columns=columns)
    if len(df) == 0:
        raise DataFormatError(name, "the log is empty (no rows)")
    if len(df) > MAX_ROWS:
        raise DataFormatError(name, f"{len(df):,} rows exceed the limit of {MAX_ROWS:,}")
    need = ["query_id", "position", "click"] + ([] if doc_columns else ["doc_id"])
    missing = [c for c in need if c not in df.columns]
    if missing:
        raise DataFormatError(name, f"missing column(s) {', '.join(missing)}; found "
                                    f"{', '.join(map(str, df.columns))} — map them to query_id, doc_id, "
                                    "position, click")
    for col in need + list(doc_columns or []):
        if col not in df.columns:
            raise DataFormatError(name, f"document column {col!r} not in the file")
        if df[col].isna().any():
            row = int(np.flatnonzero(df[col].isna().to_numpy())[0])
            raise DataFormatError(name, f"column {col!r} is empty at data row {row + 1}")
    pos = pd.to_numeric(df["position"], errors="coerce")
    if pos.isna().any() or (pos % 1 != 0).any():
        row = int(np.flatnonzero((pos.isna() | (pos % 1 != 0)).to_numpy())[0])
        raise DataFormatError(name, f"column 'position' must hold whole numbers (data row {row + 1}: "
                                    f"{show(df['position'].iloc[row])})")
    if (pos < 1).any():
        row = int(np.flatnonzero((pos < 1).to_numpy())[0])
        raise DataFormatError(name, f"positions are 1-based: {int(pos.iloc[row])} at data row {row + 1}")
    if pos.max() > 1000:
        raise DataFormatError(name, f"position {int(pos.max())} is out of range (at most 1000)")
    clk = pd.to_numeric(df["click"], errors="coerce")
    if clk.isna().any() or not clk.isin([0, 1]).all():
        row = int(np.flatnonzero((clk.isna() | ~clk.isin([0, 1])).to_numpy())[0])
        raise DataFormatError(name, f"column 'click' must hold 0 or 1 (data row {row + 1}: "
                                    f"{show(df['click'].iloc[row])})")
    out = df.copy()
    out["position"], out["click"] = pos.astype(np.int16), clk.astype(np.int8)
    out["query_key"] = out["query_id"].astype(str)
    out["query_id"] = pd.factorize(out["query_id"], sort=True)[0]
    if doc_columns:
        out["doc_id"] = out.groupby(list(doc_columns), sort=True, dropna=False).ngroup()
    elif document == "global":
        out["doc_key"] = out["doc_id"].astype(str)
        out["doc_id"] = pd.factorize(out["doc_id"], sort=True)[0]
    elif document == "query":             # the document is the (query, doc_id) pair
        out["doc_key"] = out["doc_id"].astype(str)
        out["doc_id"] = factor_codes(out, ["query_id", "doc_key"])[0]
    else:
        raise DataFormatError(name, f"document={document!r}: use 'query' or 'global'")
    if "session_id" not in out:
        new = (out["query_id"].diff().fillna(1) != 0) | (out["position"].diff().fillna(-1) <= 0)
        out["session_id"] = np.cumsum(new.to_numpy()) - 1
        notes.append("no session_id column: a new session starts where the query changes or the "
                     "position does not increase")
    else:
        out["session_id"] = pd.factorize(out["session_id"])[0]
    if "shown" not in out:
        out["shown"] = True
    dup = out.duplicated(["session_id", "position"], keep="first")
    if dup.any():
        notes.append(f"dropped {int(dup.sum()):,} duplicate row(s) (same session and position)")
        out = out[~dup]
    try:
        log = ClickLog._from_frame(out, {"source": name, "document": "columns" if doc_columns else document}, name)
    except DataFormatError:
        raise
    return log, notes


def ultra_frame(root: Path, name, labels: bool = False):
    """The displayed lists of an ULTRA directory's ``train`` split as rows (``session_id``,
    ``query_id``, ``doc_id``, ``position``, ``click``): ``train.init_list`` (``qid d1 d2 …``,
    −1 = padding; one session per line) and, when present, ``train.clicks`` (``qid c1 c2 …``,
    aligned by line).  Only ``train/`` is read (the identifiability paper's folders have no other).

    **Documents.**  A line of ``init_list`` points at rows of ``train.feature``; as in the official
    identifiability check (Keytoyze/ULTR-identifiability, ``identifiability_check.py``, which keys
    by the feature tuple), the **feature vector** is the document: ``doc_id`` is one id per distinct
    vector (rows with identical features are one document, explicit zeros ignored), whatever query
    shows it.  Without a feature file, ``doc_id`` is the row index.  With ``labels``, the graded
    label of each row from ``train.labels`` (aligned by line and rank) is a ``label`` column.
    Returns ``(frame, notes)``."""
    from .logformats import _register_lines, _run, connect
    init = root / "train" / "train.init_list"
    clk = root / "train" / "train.clicks"
    feat = root / "train" / "train.feature"
    label = f"{name}/train/"
    if not init.is_file():
        raise DataFormatError(label + "train.init_list", "file not found (an ULTRA folder needs train/train.init_list)")
    con = connect()
    notes = []
    try:
        _register_lines(con, init, label + init.name)
        _run(con, "CREATE TEMP TABLE il AS SELECT ln, string_split(regexp_replace(trim(line), '\\s+', ' ', 'g'), ' ') "
                  "AS t FROM raw WHERE line IS NOT NULL AND trim(line) <> ''", label + init.name)
        bad = con.execute("SELECT min(ln) FROM (SELECT ln, unnest(t[2:]) AS d FROM il) "
                          "WHERE try_cast(d AS BIGINT) IS NULL").fetchall()[0][0]
        if bad is not None:
            raise DataFormatError(label + init.name, "document indexes must be whole numbers", int(bad))
        if clk.exists():
            _register_lines(con, clk, label + clk.name)
            _run(con, "CREATE TEMP TABLE cl AS SELECT ln, string_split(regexp_replace(trim(line), '\\s+', ' ', 'g'), "
                      "' ') AS c FROM raw", label + clk.name)
            n_clk = con.execute("SELECT count(*) FROM cl").fetchall()[0][0]
            short = con.execute("SELECT min(ln) FROM il WHERE ln > ?", [n_clk]).fetchall()[0][0]
            if short is not None:
                raise DataFormatError(label + clk.name, f"has {n_clk} lines but {init.name} has more", int(short))
        else:
            _run(con, "CREATE TEMP TABLE cl AS SELECT ln, []::VARCHAR[] AS c FROM il", label + init.name)
        _run(con, """CREATE TEMP TABLE docs AS SELECT ln, t[1] AS query_id, d::BIGINT AS row_index,
                row_number() OVER (PARTITION BY ln ORDER BY k) AS position FROM (
                SELECT ln, t, unnest(t[2:]) AS d, generate_subscripts(t[2:], 1) AS k FROM il) WHERE d <> '-1'""",
             label + init.name)
        if clk.exists():
            bad = con.execute("""SELECT d.ln, count(*) AS n, any_value(len(cl.c) - 1) AS m FROM docs d
                                 JOIN cl USING (ln) GROUP BY d.ln HAVING count(*) > any_value(len(cl.c) - 1)
                                 ORDER BY d.ln LIMIT 1""").fetchall()
            if bad:
                raise DataFormatError(label + clk.name, f"{bad[0][2]} clicks for {bad[0][1]} documents", int(bad[0][0]))
        if feat.is_file():
            _register_lines(con, feat, label + feat.name)
            # one id per distinct feature vector: (index, value) pairs without zeros, sorted, grouped
            _run(con, """CREATE TEMP TABLE fr AS SELECT (row_number() OVER (ORDER BY ln)) - 1 AS row_index, ln,
                    list_sort(list_filter(list_transform(t[2:], lambda x: {'i': try_cast(split_part(x, ':', 1) AS INTEGER),
                                                                      'v': try_cast(split_part(x, ':', 2) AS DOUBLE)}),
                                          lambda x: x.v IS NULL OR x.i IS NULL OR x.v <> 0)) AS fv
                    FROM (SELECT ln, string_split(regexp_replace(trim(line), '\\s+', ' ', 'g'), ' ') AS t FROM raw
                          WHERE line IS NOT NULL AND trim(line) <> '')""", label + feat.name)
            bad = con.execute("SELECT min(ln) FROM fr WHERE len(list_filter(fv, lambda x: x.v IS NULL OR x.i IS NULL)) > 0"
                              ).fetchall()[0][0]
            if bad is not None:
                raise DataFormatError(label + feat.name, "features must be index:value pairs", int(bad))
            _run(con, """CREATE TEMP TABLE vid AS SELECT fv, (row_number() OVER (ORDER BY min_row)) - 1 AS doc_id
                         FROM (SELECT fv, min(row_index) AS min_row FROM fr GROUP BY fv)""", label + feat.name)
            n_rows, n_vec = con.execute("SELECT (SELECT count(*) FROM fr), (SELECT count(*) FROM vid)").fetchall()[0]
            out_of_range = con.execute("SELECT min(ln) FROM docs WHERE row_index < 0 OR row_index >= ?",
                                       [n_rows]).fetchall()[0][0]
            if out_of_range is not None:
                raise DataFormatError(label + init.name, f"document index out of range ({feat.name} has {n_rows:,} "
                                                         "rows)", int(out_of_range))
            key_join = "LEFT JOIN (SELECT fr.row_index, vid.doc_id FROM fr JOIN vid USING (fv)) k USING (row_index)"
            key = "k.doc_id"
            if n_vec < n_rows:
                notes.append(f"{n_rows - n_vec:,} of {n_rows:,} feature rows repeat an earlier row's vector: a "
                             "document is a distinct feature vector (as the official identifiability check)")
        else:
            key_join, key = "", "d.row_index"
            notes.append("no train/train.feature: a document is a row index of init_list")
        lab_sql, lab_join = "", ""
        if labels:
            lpath = root / "train" / "train.labels"
            if not lpath.is_file():
                raise DataFormatError(label + lpath.name, "file not found (the labels are the truth to score against)")
            _register_lines(con, lpath, label + lpath.name)
            _run(con, "CREATE TEMP TABLE lb AS SELECT ln, string_split(regexp_replace(trim(line), '\\s+', ' ', 'g'), "
                      "' ') AS y FROM raw", label + lpath.name)
            bad = con.execute("""SELECT d.ln FROM docs d LEFT JOIN lb USING (ln)
                                 WHERE try_cast(lb.y[d.position + 1] AS INTEGER) IS NULL
                                    OR try_cast(lb.y[d.position + 1] AS INTEGER) < 0 ORDER BY d.ln LIMIT 1""").fetchall()
            if bad:
                raise DataFormatError(label + lpath.name, "a displayed document has no label (or a negative one) "
                                                          "on this line", int(bad[0][0]))
            lab_sql, lab_join = ", lb.y[d.position + 1]::INTEGER AS label", "LEFT JOIN lb USING (ln)"
        df = con.sql(f"""SELECT d.ln - 1 AS session_id, d.query_id, {key} AS doc_id, d.position::INTEGER AS position,
                               coalesce(try_cast(cl.c[d.position + 1] AS INTEGER), -1) AS click {lab_sql}
                        FROM docs d LEFT JOIN cl USING (ln) {key_join} {lab_join} ORDER BY d.ln, d.position""").df()
    finally:
        con.close()
    if clk.exists() and len(df) and ((df["click"] != 0) & (df["click"] != 1)).any():
        row = df.index[(df["click"] != 0) & (df["click"] != 1)][0]
        raise DataFormatError(label + clk.name, "clicks must be 0 or 1", int(df["session_id"].iloc[row]) + 1)
    df["click"] = df["click"].clip(lower=0)
    if not clk.exists():
        notes.append("no train/train.clicks: all clicks are 0 (the graph does not need clicks)")
    return df, notes


def _read_ultra_clicks(root: Path, name, document: str = "global"):
    """An ULTRA directory as a :class:`ClickLog` (documents: see :func:`ultra_frame`)."""
    df, notes = ultra_frame(root, name)
    log, more = frame_to_log(df, name, document=document)
    return log, notes + [n for n in more if not n.startswith("no session_id")]
