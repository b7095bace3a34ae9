"""Readers for real click-log formats: one SQL view of normalised rows per format (DuckDB).

Every format is turned into the same **normalised view** ``norm`` inside a DuckDB connection,
one row per displayed document:

    session_id BIGINT · query_id VARCHAR · doc_id VARCHAR · position INTEGER · click TINYINT · extras…

Consumers either aggregate it out of core (:mod:`ultr_core.identifiability.ingestion`:
distinct (document, factor) counts) or materialise it (:func:`read_normalised`, used by
:func:`ultr_core.userlogs.read_user_log` for the app).  DuckDB reads files itself — plain or
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

:func:`sniff_format` recognises all of these from the content when the name says nothing.
"""
from __future__ import annotations

import glob as _glob
import gzip
import io
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pcsv

from .errors import DataFormatError

__all__ = ["TEXT_FORMATS", "TABULAR_FORMATS", "ACCEPTED", "unknown_format", "format_from_name", "duplicate_header", "sniff_format", "connect", "register_normalised",
           "read_normalised", "BAIDU_COLUMNS", "expand_paths"]

TEXT_FORMATS = ("yandex", "yandex2013", "baidu", "pyclick")
TABULAR_FORMATS = ("csv", "tsv", "parquet")
#: Baidu-ULTR document-line fields (1-based, as SQL indexes lists) kept as DOUBLE columns (missing → NULL)
BAIDU_COLUMNS = {"multimedia_type": 5, "serp_height": 10, "displayed_time": 11, "displayed_count": 14,
                 "slipoff_count_after_click": 16, "dwelling_time": 17}
_PYCLICK = __import__("re").compile(r"^[^\t]+\t[^\t:;]+:[^\t:]*(;|$)")
#: what a reader accepts, for the message on a file that no reader accepts
ACCEPTED = ("CSV/TSV with a header row (query_id, doc_id, position, click …)", "Parquet",
            "Yandex relevance prediction (SessionID TimePassed Q|C …)", "Yandex WSCD 2013 (SessionID M Day USERID …)",
            "Baidu-ULTR sessions (qid line, 32-field document lines)", "PyClick sessions (query<TAB>url,url,… : clicked,…;)",
            "an ULTRA folder (train/train.init_list, train.feature)")
_SEP = "\x1f"            # a delimiter no log line contains: each line is read as one value


# --------------------------------------------------------------------------- sources
def _is_bytes(source) -> bool:
    return isinstance(source, (bytes, bytearray, memoryview))


def expand_paths(source, name: str) -> list[str]:
    """The files of a path or glob pattern (sorted); errors name what is missing or wrong."""
    s = str(source)
    if any(ch in s for ch in "*?["):
        files = sorted(_glob.glob(s))
        if not files:
            raise DataFormatError(name, "no file matches this pattern")
    else:
        files = [s]
    for f in files:
        p = Path(f)
        if not p.exists():
            raise DataFormatError(f, "file not found")
        if not p.is_file():
            raise DataFormatError(f, "not a regular file (a directory, device or pipe cannot be read as a log)")
    return files


def _head(source, name: str, n_bytes: int = 1 << 16) -> bytes:
    """The first bytes of the (first) file, gunzipped when it is gzip."""
    if _is_bytes(source):
        data = bytes(source[:n_bytes * 4])
    else:
        try:
            with open(expand_paths(source, name)[0], "rb") as f:
                data = f.read(n_bytes * 4)
        except OSError as e:
            raise DataFormatError(name, f"cannot open ({e.strerror or type(e).__name__})") from None
    if data[:2] == b"\x1f\x8b":
        try:
            d = gzip.GzipFile(fileobj=io.BytesIO(data))
            data = d.read(n_bytes)
        except (OSError, EOFError):
            data = b""            # a truncated first block: sniff what could be read
    return data[:n_bytes]


def is_gzip(source) -> bool:
    """Whether bytes, or the (first) file of a path or glob, start with gzip's magic number
    (False when it cannot be read: the reader then reports the real problem)."""
    if _is_bytes(source):
        return bytes(source[:2]) == b"\x1f\x8b"
    files = sorted(_glob.glob(str(source))) if any(ch in str(source) for ch in "*?[") else [str(source)]
    try:
        with open(files[0], "rb") as f:
            return f.read(2) == b"\x1f\x8b"
    except (OSError, IndexError):
        return False


def sniff_format(source, name: str | None = None) -> str:
    """The format of a log from its first bytes (see the module docstring); ``csv`` when
    nothing else fits.  A directory is ``ultra``."""
    name = name or str(source)
    if not _is_bytes(source) and not any(ch in str(source) for ch in "*?[") and Path(source).is_dir():
        return "ultra"
    if _is_bytes(source):
        from .archives import is_archive
        if is_archive(bytes(source[:1 << 20])):
            return "ultra"                  # an ULTRA folder sent as a zip / tar(.gz) archive
    data = _head(source, name)
    if data[:4] == b"PAR1":
        return "parquet"
    text = data.decode("utf-8", errors="replace").lstrip("\ufeff")
    lines = [ln.rstrip("\r") for ln in text.split("\n") if ln.strip()][:5]
    if not lines:
        return "csv"
    f = [x.strip() for x in lines[0].split("\t")]
    if len(f) >= 4 and f[1] == "M":
        return "yandex2013"
    if len(f) >= 4 and f[2] in ("Q", "T", "C"):
        if f[2] in ("Q", "T") and len(f) > 6 and "," in f[6]:
            return "yandex2013"
        if f[2] == "C" and len([x for x in f if x]) == 5:
            return "yandex2013"
        return "yandex"
    if len(lines) > 1 and len(f) <= 3 and len(lines[1].split("\t")) >= 28:
        return "baidu"
    if _PYCLICK.match(lines[0]):
        return "pyclick"
    return "tsv" if lines[0].count("\t") > lines[0].count(",") else "csv"


def infer_format(source, name: str | None = None) -> str:
    """Format from the extension when it is telling (``.csv``, ``.tsv``, ``.parquet``, with an
    optional ``.gz``), else from the content (:func:`sniff_format`)."""
    return format_from_name(name or source) or sniff_format(source, name)


def format_from_name(name) -> str | None:
    """The format a file name's extension tells (``.csv``, ``.tsv``, ``.parquet``, ``.pq``, with an
    optional ``.gz``), or None."""
    s = str(name).lower()
    if s.endswith(".gz"):
        s = s[:-3]
    for ext, fmt in ((".csv", "csv"), (".tsv", "tsv"), (".parquet", "parquet"), (".pq", "parquet")):
        if s.endswith(ext):
            return fmt
    return None


# --------------------------------------------------------------------------- DuckDB
def connect(memory_limit: str | None = None, temp_dir: str | None = None, threads: int | None = None):
    """A fresh in-memory DuckDB connection; ``temp_dir`` lets large aggregations spill to disk
    (the caller owns and removes it)."""
    import duckdb
    con = duckdb.connect(":memory:")
    if memory_limit:
        con.execute(f"SET memory_limit = '{memory_limit}'").fetchall()
    if temp_dir:
        con.execute("SET temp_directory = ?", [str(temp_dir)]).fetchall()
    if threads:
        con.execute(f"SET threads = {int(threads)}").fetchall()
    return con


def _q(s: str) -> str:
    return "'" + str(s).replace("'", "''") + "'"


def _ident(s: str) -> str:
    return '"' + str(s).replace('"', '""') + '"'


def _register_lines(con, source, name: str) -> None:
    """View ``raw(ln, line)``: every line of the source with its 1-based line number
    (blank lines are NULL or '')."""
    if _is_bytes(source):
        data = bytes(source)
        if data[:2] == b"\x1f\x8b":
            try:
                data = gzip.decompress(data)
            except (OSError, EOFError) as e:
                raise DataFormatError(name, f"broken gzip data ({e})") from None
        ro = pcsv.ReadOptions(column_names=["line"], block_size=1 << 24, encoding="utf8")
        po = pcsv.ParseOptions(delimiter=_SEP, quote_char=False, escape_char=False, ignore_empty_lines=False)
        co = pcsv.ConvertOptions(column_types={"line": pa.string()}, strings_can_be_null=False)
        try:
            table = pcsv.read_csv(pa.BufferReader(data), read_options=ro, parse_options=po, convert_options=co)
        except pa.ArrowInvalid as e:
            if "Empty CSV file" in str(e):
                table = pa.table({"line": pa.array([], pa.string())})
            else:
                raise DataFormatError(name, f"cannot read as text ({str(e).splitlines()[0]})") from None
        table = table.append_column("ln", pa.array(np.arange(1, table.num_rows + 1, dtype=np.int64)))
        con.register("raw_arrow", table)
        con.execute("CREATE OR REPLACE TEMP VIEW raw AS SELECT ln, ltrim(rtrim(line, chr(13)), chr(65279)) AS line "
                    "FROM raw_arrow").fetchall()
        return
    files = expand_paths(source, name)
    comp = "gzip" if is_gzip(source) else "none"
    lst = "[" + ", ".join(_q(f) for f in files) + "]"
    con.execute(f"""CREATE OR REPLACE TEMP VIEW raw AS
        SELECT row_number() OVER () AS ln, line FROM read_csv({lst}, columns={{'line': 'VARCHAR'}},
            delim=chr(31), quote='', escape='', header=false, auto_detect=false, strict_mode=false,
            compression={_q(comp)}, max_line_size=10000000)""").fetchall()


def _scalar(con, sql: str, params=None):
    rows = con.execute(sql, params or []).fetchall()
    return rows[0][0] if rows else None


def _run(con, sql: str, name: str):
    try:
        return con.execute(sql).fetchall()
    except Exception as e:        # DuckDB raises many types; all are format problems of the input here
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise DataFormatError(name, f"cannot read ({msg[:300]})") from None


def _check(con, name: str, checks: list[tuple[str, str]]) -> None:
    """Each check is (SQL giving the first bad line or NULL, problem); raise on the first hit."""
    sel = ", ".join(f"({sql})" for sql, _ in checks)
    row = con.execute(f"SELECT {sel}").fetchall()[0]
    hits = [(ln, problem) for ln, (_, problem) in zip(row, checks) if ln is not None]
    if hits:
        ln, problem = min(hits, key=lambda h: h[0])
        raise DataFormatError(name, problem, int(ln))


_SPLIT = """CREATE OR REPLACE TEMP TABLE l AS
    SELECT ln, string_split(line, chr(9)) AS f FROM raw WHERE line IS NOT NULL AND trim(line) <> ''"""
_NF = "len(list_filter(f, lambda x: trim(x) <> ''))"


def _t(i: int) -> str:
    """Field i (1-based) trimmed; '' where the row is shorter."""
    return f"coalesce(trim(f[{i}]), '')"


def _impressions_view(con, name: str, extra=()) -> dict:
    """The view ``norm`` from tables ``imp`` (impressions), ``clk`` (click rows) and ``hit``
    (clicked impressions with their click counts); returns the repair counts."""
    cols = "".join(f", imp.{c}" for c in extra)
    _run(con, f"""CREATE OR REPLACE TEMP VIEW norm AS
        SELECT imp.session_id, imp.query_id, imp.doc_id, imp.position,
               (hit.n IS NOT NULL)::TINYINT AS click{cols}
        FROM imp LEFT JOIN hit USING (session_id, doc_id)""", name)
    return _repairs(con)


def _repairs(con) -> dict:
    """Orphan and repeated clicks from tables ``clk`` (click rows) and ``hit`` (matched clicks)."""
    n_clicks = _scalar(con, "SELECT count(*) FROM clk") or 0
    matched, rows = con.execute("SELECT coalesce(sum(n), 0), count(*) FROM hit").fetchall()[0]
    return {"orphan_clicks": int(n_clicks - matched), "repeated_clicks": int(matched - rows)}


def _max_fields(path: str, gzipped: bool, limit: int = 1 << 22) -> int:
    """Most tab-separated fields of a line in the first ``limit`` bytes of a file."""
    opener = gzip.open if gzipped else open
    with opener(path, "rb") as f:
        head = f.read(limit)
    lines = head.split(b"\n")
    if len(head) == limit and len(lines) > 1:
        lines = lines[:-1]                                    # the last line may be cut
    return max((ln.count(b"\t") + 1 for ln in lines), default=1)


def _yandex_read(con, files: list[str], gz: bool, n: int, types: dict[int, str], table: str, name: str,
                 keep: str = "*") -> bool:
    """Table ``table`` (c1 … cN) from DuckDB's parallel CSV reader: tab-separated, short lines
    padded with NULL, blank lines skipped, file order kept (``rowid`` is the non-blank line − 1).
    False when a line is wider than N fields; a typed column that does not convert raises
    ``duckdb.ConversionException``; other problems raise :class:`DataFormatError`."""
    import duckdb
    cols = "{" + ", ".join(f"'c{i}': '{types.get(i, 'VARCHAR')}'" for i in range(1, n + 1)) + "}"
    lst = "[" + ", ".join(_q(f) for f in files) + "]"
    try:
        con.execute(f"""CREATE OR REPLACE TEMP TABLE {table} AS SELECT {keep} FROM read_csv({lst},
            columns={cols}, delim=chr(9), quote='', escape='', header=false, auto_detect=false,
            null_padding=true, strict_mode=true, compression={_q('gzip' if gz else 'none')},
            max_line_size=10000000)""").fetchall()
    except duckdb.ConversionException:
        raise
    except duckdb.Error as e:
        if "Expected Number of Columns" in str(e) or "Found:" in str(e):
            return False
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise DataFormatError(name, f"cannot read ({msg[:300]})") from None
    return True


def _yandex_columns(con, source, name: str) -> dict | None:
    """The log read by DuckDB's CSV reader, or None when a line is wider than the first 4 MB's
    (the caller then splits lines itself).  Fast path (:func:`_yandex_typed`): ids read as BIGINT
    while parsing, clicks matched with numpy, impressions unpivoted only while aggregating.
    When an id is not a whole number the fields are read as text (view ``yf`` of trimmed fields,
    '' where a line is shorter) and matched in SQL (:func:`_yandex_from`)."""
    import duckdb
    files = expand_paths(source, name)
    gz = is_gzip(source)
    n = max(max(_max_fields(f, gz) for f in files[:4]), 6)
    try:
        ids = {i: "BIGINT" for i in range(1, n + 1) if i not in (2, 3)}
        keep = ", ".join(f"c{i}" for i in range(1, n + 1) if i not in (2, 5))   # time and region are unused
        return _yandex_typed(con, name, n) if _yandex_read(con, files, gz, n, ids, "yb", name, keep) else None
    except duckdb.ConversionException:
        pass                                                   # an id is not a whole number: read text
    if not _yandex_read(con, files, gz, n, {}, "y", name):
        return None
    con.execute(f"""CREATE OR REPLACE TEMP TABLE yf AS SELECT rowid + 1 AS ln, {', '.join(f"coalesce(trim(c{i}), '') AS f{i}"
                                                                       for i in range(1, n + 1))},
        {n} AS nf FROM y WHERE NOT ({' AND '.join(f"coalesce(trim(c{i}), '') = ''" for i in range(1, n + 1))})""").fetchall()
    return _yandex_from(con, name, "yf")


def _yandex_typed(con, name: str, n: int) -> dict:
    """Impressions and clicks from table ``yb`` (ids BIGINT, record type text); a problem raises
    :class:`DataFormatError` for the caller to re-read line by line (it then names the file's line)."""
    bad = con.execute("""SELECT count(*) FROM yb WHERE c1 IS NULL OR c3 IS NULL OR trim(c3) NOT IN ('Q', 'C')
        OR (trim(c3) = 'Q' AND (c4 IS NULL OR c6 IS NULL)) OR (trim(c3) = 'C' AND c4 IS NULL)""").fetchall()[0][0]
    if bad:
        raise DataFormatError(name, "malformed lines")
    urls = ", ".join(f"c{i}" for i in range(6, n + 1))
    _run(con, f"""CREATE OR REPLACE TEMP VIEW q AS SELECT rowid + 1 AS ln, c1 AS s, c4 AS query_id, {urls}
        FROM yb WHERE trim(c3) = 'Q'""", name)
    repairs = _match_clicks(con, name, n)
    _run(con, f"""CREATE OR REPLACE TEMP VIEW norm AS SELECT session_id, query_id, doc_id,
        (substr(col, 2)::INTEGER - 5) AS position,
        coalesce(list_contains(clicked, substr(col, 2)::INTEGER - 5), false)::TINYINT AS click
        FROM (UNPIVOT (SELECT q.ln AS session_id, q.query_id, {urls}, h.clicked FROM q
                       LEFT JOIN (SELECT session_id, list(position) AS clicked FROM hitpos GROUP BY ALL) h
                       ON q.ln = h.session_id)
              ON {urls} INTO NAME col VALUE doc_id)""", name)
    # the same counts without unpivoting every impression: identical result pages are counted
    # once first (real logs repeat a query's page often); ingestion reads these when it can
    _run(con, f"""CREATE OR REPLACE TEMP VIEW counts AS
        WITH pages AS (SELECT query_id, {urls}, count(*) AS n FROM q GROUP BY ALL),
             shown AS (SELECT query_id, doc_id, (substr(col, 2)::INTEGER - 5) AS position, sum(n) AS impressions
                       FROM (UNPIVOT pages ON {urls} INTO NAME col VALUE doc_id) GROUP BY ALL),
             clicked AS (SELECT query_id, doc_id, position, count(*) AS clicks FROM hitpos GROUP BY ALL)
        SELECT query_id, doc_id, position, impressions, coalesce(clicked.clicks, 0) AS clicks
        FROM shown LEFT JOIN clicked USING (query_id, doc_id, position)""", name)
    return repairs | {"counts": "counts"}


#: query rows per bucket of sessions in :func:`_match_clicks` (bounds the arrays it holds: ≈ 100 bytes a row)
MATCH_BUCKET_ROWS = 2_000_000


def _match_clicks(con, name: str, n: int) -> dict:
    """Table ``hitpos(session_id, doc_id, query_id, position)``: the clicked impressions of the
    typed log ``yb``.  A click belongs to the latest query row at or before its line in the same
    session that shows the URL (at every position showing it); repeated clicks on one impression
    count once.  Vectorised: most clicks follow their query row, so the latest query row before
    each click (a binary search over line numbers) is tried first; the rest — a click on an
    earlier page of the session, interleaved sessions — go through a general join in SQL.
    Sessions are taken in buckets (session id modulo B, B = query rows / :data:`MATCH_BUCKET_ROWS`)
    so the arrays held at once stay bounded however long the file is; a bucket holds whole
    sessions, so the latest query row of the bucket before a click, when of the click's session,
    is that session's latest one — the same match as over the whole file.
    Returns the repair counts (orphan and repeated clicks)."""
    none = -(2 ** 63)                                        # no URL in this column
    urls = [f"c{i}" for i in range(6, n + 1)]
    n_q = _scalar(con, "SELECT count(*) FROM yb WHERE trim(c3) = 'Q'") or 0
    buckets = max(1, -(-n_q // MATCH_BUCKET_ROWS))
    _run(con, "CREATE OR REPLACE TEMP TABLE hitraw (session_id BIGINT, doc_id BIGINT, query_id BIGINT, "
              "position BIGINT)", name)
    matched = total = 0
    for b in range(buckets):
        where = "" if buckets == 1 else f" AND ((c1 % {buckets}) + {buckets}) % {buckets} = {b}"
        m, t = _match_bucket(con, name, urls, none, where)
        matched, total = matched + m, total + t
    _run(con, "CREATE OR REPLACE TEMP TABLE hitpos AS SELECT DISTINCT * FROM hitraw", name)
    _run(con, "DROP TABLE hitraw", name)
    distinct = _scalar(con, "SELECT count(*) FROM (SELECT DISTINCT session_id, doc_id FROM hitpos)")
    return {"orphan_clicks": total - matched, "repeated_clicks": matched - distinct}


def _match_bucket(con, name: str, urls: list, none: int, where: str) -> tuple[int, int]:
    """:func:`_match_clicks` for the sessions that ``where`` selects: appends their clicked
    impressions to table ``hitraw``; returns (clicks matched, clicks)."""
    qa = con.execute("SELECT rowid + 1 AS ln, c1 AS s, c4 AS query_id, " + ", ".join(
        f"coalesce({u}, {none}) AS {u}" for u in urls) + f" FROM yb WHERE trim(c3) = 'Q'{where}").fetchnumpy()
    ca = con.execute(f"SELECT rowid + 1 AS ln, c1 AS s, c4 AS doc_id FROM yb WHERE trim(c3) = 'C'{where}").fetchnumpy()
    qa = {k: np.asarray(v) for k, v in qa.items()}
    c_ln, c_s, c_doc = (np.asarray(ca[k]) for k in ("ln", "s", "doc_id"))
    if not len(c_ln) or not len(qa["ln"]):                  # no clicks, or none can match
        return 0, len(c_ln)
    if np.any(np.diff(qa["ln"]) <= 0) or np.any(np.diff(c_ln) <= 0):   # scans keep file order; be sure
        oq, oc = np.argsort(qa["ln"], kind="stable"), np.argsort(c_ln, kind="stable")
        qa = {k: v[oq] for k, v in qa.items()}
        c_ln, c_s, c_doc = c_ln[oc], c_s[oc], c_doc[oc]

    def positions(qi, clicks):
        """(click index, position) of every position of query row ``qi[k]`` showing click k's URL."""
        out_c, out_p = [], []
        for p, u in enumerate(urls, start=1):                # a loop over columns, not rows
            hit = np.flatnonzero(qa[u][qi] == c_doc[clicks])
            out_c.append(clicks[hit])
            out_p.append(np.full(len(hit), p, np.int64))
        return np.concatenate(out_c), np.concatenate(out_p)

    qi = np.searchsorted(qa["ln"], c_ln, side="right") - 1  # the bucket's latest query row before each click
    ok = qi >= 0
    qi = np.maximum(qi, 0)
    ok &= qa["s"][qi] == c_s
    cand = np.flatnonzero(ok)
    ci, pos = positions(qi[cand], cand)
    found = np.zeros(len(c_ln), bool)
    found[ci] = True
    rest = np.flatnonzero(~found)
    if len(rest):           # the general rule for the others: latest query row of the session showing the URL
        con.register("clk_rest", pd.DataFrame({"i": rest, "ln": c_ln[rest], "s": c_s[rest], "doc_id": c_doc[rest]}))
        m = con.execute(f"""SELECT c.i, max(q.ln) AS qln FROM clk_rest c JOIN q ON c.s = q.s AND q.ln <= c.ln
            AND list_contains([{', '.join(urls)}], c.doc_id) GROUP BY c.i""").fetchnumpy()
        con.unregister("clk_rest")
        if len(m["i"]):
            ri = np.asarray(m["i"], np.int64)
            qi[ri] = np.searchsorted(qa["ln"], np.asarray(m["qln"]))
            ci2, pos2 = positions(qi[ri], ri)
            ci, pos = np.concatenate([ci, ci2]), np.concatenate([pos, pos2])
            found[ri] = True
    con.register("hitraw_df", pd.DataFrame({"session_id": qa["ln"][qi[ci]], "doc_id": c_doc[ci],
                                            "query_id": qa["query_id"][qi[ci]], "position": pos}))
    _run(con, "INSERT INTO hitraw SELECT * FROM hitraw_df", name)
    con.unregister("hitraw_df")
    return int(found.sum()), len(c_ln)


def _yandex(con, name: str) -> dict:
    _run(con, f"""CREATE OR REPLACE TEMP TABLE l AS SELECT ln, f, {_t(1)} AS s, {_t(3)} AS k FROM (
        SELECT ln, string_split(line, chr(9)) AS f FROM raw WHERE line IS NOT NULL AND trim(line) <> '')""", name)
    n = max(_scalar(con, "SELECT coalesce(max(len(f)), 6) FROM l"), 6)
    _run(con, f"""CREATE OR REPLACE TEMP VIEW l2 AS SELECT ln, {', '.join(f"{_t(i)} AS f{i}" for i in range(1, n + 1))},
        {n} AS nf FROM l""", name)
    return _yandex_from(con, name, "l2")


def _yandex_from(con, name: str, table: str) -> dict:
    """Impressions, clicks and hits of a Yandex relevance-prediction log from a view of trimmed
    fields ``f1 … fN`` ('' where a line is shorter) and line numbers ``ln``."""
    src = table
    n = _scalar(con, f"SELECT max(nf) FROM {src}") or 6
    try:
        _yandex_checks(con, name, src)
    except DataFormatError as e:            # say how many fields the offending line has
        filled = " + ".join(f"(f{i} <> '')::INTEGER" for i in range(1, n + 1))
        width = _scalar(con, f"SELECT {filled} FROM {src} WHERE ln = ?", [e.line])
        raise DataFormatError(name, f"{e.problem} (this line has {width} non-empty tab-separated field(s))",
                              e.line) from None
    for num in (True, False):        # whole-number ids compare much faster as BIGINT; else text
        cast = (lambda e: f"try_cast({e} AS BIGINT)") if num else (lambda e: e)
        union = " UNION ALL ".join(
            f"SELECT ln AS session_id, {cast('f1')} AS s, {cast('f4')} AS query_id, {cast(f'f{i}')} AS doc_id, "
            f"{i - 5}::INTEGER AS position FROM {src} WHERE f3 = 'Q' AND f{i} <> ''" for i in range(6, n + 1))
        _run(con, f"CREATE OR REPLACE TEMP TABLE imp AS {union}", name)
        _run(con, f"CREATE OR REPLACE TEMP TABLE clk AS SELECT ln, {cast('f1')} AS s, {cast('f4')} AS doc_id "
                  f"FROM {src} WHERE f3 = 'C'", name)
        if not num or not _scalar(con, "SELECT (SELECT count(*) FROM imp WHERE s IS NULL OR query_id IS NULL OR "
                                       "doc_id IS NULL) + (SELECT count(*) FROM clk WHERE s IS NULL OR doc_id IS NULL)"):
            break
    # a click belongs to the latest impression at or before its line, same session, same URL
    _run(con, """CREATE OR REPLACE TEMP TABLE hit AS SELECT session_id, doc_id, count(*) AS n FROM (
        SELECT c.ln, c.doc_id, max(i.session_id) AS session_id FROM clk c
        JOIN imp i ON c.s = i.s AND c.doc_id = i.doc_id AND i.session_id <= c.ln GROUP BY c.ln, c.doc_id)
        GROUP BY ALL""", name)
    return _impressions_view(con, name)


def _yandex_checks(con, name: str, src: str) -> None:
    _check(con, name, [
        (f"SELECT min(ln) FROM {src} WHERE f3 NOT IN ('Q', 'C')",
         "record type is neither Q nor C (expected tab-separated SessionID TimePassed Q|C …)"),
        (f"SELECT min(ln) FROM {src} WHERE f3 = 'Q' AND (f4 = '' OR f6 = '')",
         "query row needs SessionID TimePassed Q QueryID RegionID URL1 … URLn"),
        (f"SELECT min(ln) FROM {src} WHERE f3 = 'C' AND f4 = ''",
         "click row needs SessionID TimePassed C URLID"),
    ])


def _yandex2013(con, name: str) -> dict:
    _run(con, _SPLIT, name)
    meta = f"{_t(2)} = 'M'"
    _check(con, name, [
        (f"SELECT min(ln) FROM l WHERE NOT {meta} AND {_t(3)} NOT IN ('Q', 'T', 'C')",
         "record type is none of M, Q, T, C (expected the tab-separated WSCD 2013 layout)"),
        (f"SELECT min(ln) FROM l WHERE NOT {meta} AND {_t(3)} IN ('Q', 'T') AND ({_NF} < 7 OR {_t(5)} = '')",
         "query row needs SessionID TimePassed Q|T SERPID QueryID Terms URL,Domain …"),
        (f"SELECT min(ln) FROM l WHERE NOT {meta} AND {_t(3)} = 'C' AND {_NF} < 5",
         "click row needs SessionID TimePassed C SERPID URLID"),
        (f"SELECT min(ln) FROM (SELECT ln, trim(unnest(f[7:])) AS p FROM l WHERE NOT {meta} AND {_t(3)} IN ('Q', 'T')) "
         "WHERE p <> '' AND NOT contains(p, ',')", "expected URL,Domain pairs after the query terms"),
    ])
    _run(con, f"""CREATE OR REPLACE TEMP TABLE imp AS SELECT session_id, s, serp, query_id,
            split_part(p, ',', 1) AS doc_id, split_part(p, ',', 2) AS domain, position FROM (
        SELECT ln AS session_id, {_t(1)} AS s, {_t(4)} AS serp, {_t(5)} AS query_id, trim(unnest(f[7:])) AS p,
               generate_subscripts(f[7:], 1)::INTEGER AS position
        FROM l WHERE NOT {meta} AND {_t(3)} IN ('Q', 'T')) WHERE p <> ''""", name)
    _run(con, f"CREATE OR REPLACE TEMP TABLE clk AS SELECT {_t(1)} AS s, {_t(4)} AS serp, {_t(5)} AS doc_id FROM l "
              f"WHERE NOT {meta} AND {_t(3)} = 'C'", name)
    _run(con, """CREATE OR REPLACE TEMP TABLE hit AS
        SELECT i.session_id, i.doc_id, count(*) AS n FROM clk c
        JOIN (SELECT DISTINCT session_id, s, serp, doc_id FROM imp) i USING (s, serp, doc_id) GROUP BY ALL""", name)
    return _impressions_view(con, name, ["domain"])


def _baidu(con, name: str) -> dict:
    _run(con, _SPLIT, name)
    _run(con, f"""CREATE OR REPLACE TEMP TABLE b AS SELECT ln, list_transform(f, lambda x: trim(x)) AS f,
            {_NF} >= 6 AS is_doc,
            max(CASE WHEN {_NF} < 6 THEN ln END) OVER (ORDER BY ln ROWS UNBOUNDED PRECEDING) AS session_id
        FROM l""", name)
    n_doc = _scalar(con, "SELECT count(*) FILTER (WHERE is_doc) FROM b")
    first, width = (con.execute(f"SELECT ln, {_NF} FROM l ORDER BY ln LIMIT 1").fetchall() or [(None, 0)])[0]
    odd = con.execute(f"SELECT ln, {_NF} FROM l WHERE {_NF} BETWEEN 4 AND 5 ORDER BY ln LIMIT 1").fetchall()
    if odd:
        raise DataFormatError(name, f"{odd[0][1]} tab-separated fields: a Baidu-ULTR query line has 1–3 (qid query "
                                    "reformulation), a document line 32 (pos url_md5 … click …)", int(odd[0][0]))
    if not n_doc:
        raise DataFormatError(name, f"no document line: every line has at most {width} tab-separated field(s); a "
                                    "Baidu-ULTR document line has 32 (pos url_md5 title abstract multimedia_type click …)",
                              first)
    _check(con, name, [
        ("SELECT min(ln) FROM b WHERE is_doc AND session_id IS NULL", "a document line comes before any query line"),
        ("SELECT min(ln) FROM b WHERE is_doc AND try_cast(f[1] AS BIGINT) IS NULL",
         "position (field 1) of a document line must be a whole number"),
        ("SELECT min(ln) FROM b WHERE is_doc AND coalesce(try_cast(f[6] AS INTEGER), -1) NOT IN (0, 1)",
         "click (field 6) of a document line must be 0 or 1"),
        ("SELECT min(ln) FROM b WHERE is_doc AND f[2] = ''", "url_md5 (field 2) of a document line is empty"),
    ])
    extras = ", ".join(f"try_cast(nullif(d.f[{k}], '') AS DOUBLE) AS {c}" for c, k in BAIDU_COLUMNS.items())
    _run(con, f"""CREATE OR REPLACE TEMP VIEW norm AS
        SELECT d.session_id, q.f[1] AS query_id, d.f[2] AS doc_id, d.f[1]::INTEGER AS position,
               d.f[6]::TINYINT AS click, {extras}
        FROM b d JOIN b q ON q.ln = d.session_id WHERE d.is_doc""", name)
    return {}


def _pyclick(con, name: str) -> dict:
    """PyClick session text (see the module docstring): sessions split at ``;``, then at the first
    tab (query) and the first ``:`` (shown URLs | clicked URLs)."""
    _run(con, """CREATE OR REPLACE TEMP TABLE ps AS SELECT ln, k, trim(s) AS s FROM (
            SELECT ln, unnest(string_split(line, ';')) AS s, generate_subscripts(string_split(line, ';'), 1) AS k
            FROM raw WHERE line IS NOT NULL) WHERE trim(s) <> ''""", name)
    _check(con, name, [
        ("SELECT min(ln) FROM ps WHERE strpos(s, chr(9)) = 0 OR strpos(s[strpos(s, chr(9)) + 1:], ':') = 0",
         "a PyClick session needs query<TAB>url,url,… : clicked,… (a tab, then a colon)"),
        ("SELECT min(ln) FROM ps WHERE trim(split_part(s, chr(9), 1)) = ''", "the query of a session is empty"),
        ("SELECT min(ln) FROM ps WHERE len(list_filter(string_split(split_part(s[strpos(s, chr(9)) + 1:], ':', 1), ','),"
         " lambda x: trim(x) = '')) > 0", "an empty URL in a session's list (two commas, or a comma at an end)"),
    ])
    _run(con, """CREATE OR REPLACE TEMP TABLE pz AS SELECT row_number() OVER (ORDER BY ln, k) AS session_id,
            trim(split_part(s, chr(9), 1)) AS query_id,
            list_transform(string_split(split_part(s[strpos(s, chr(9)) + 1:], ':', 1), ','), lambda x: trim(x)) AS docs,
            list_filter(list_transform(string_split(s[strpos(s, chr(9)) + 1:][strpos(s[strpos(s, chr(9)) + 1:], ':') + 1:],
                                                    ','), lambda x: trim(x)), lambda x: x <> '') AS clicks
        FROM ps""", name)
    _run(con, """CREATE OR REPLACE TEMP TABLE imp AS SELECT session_id, query_id, unnest(docs) AS doc_id,
            generate_subscripts(docs, 1)::INTEGER AS position FROM pz""", name)
    _run(con, "CREATE OR REPLACE TEMP TABLE clk AS SELECT session_id, unnest(clicks) AS doc_id FROM pz", name)
    _run(con, """CREATE OR REPLACE TEMP TABLE hit AS SELECT c.session_id, c.doc_id, count(*) AS n FROM clk c
        JOIN (SELECT DISTINCT session_id, doc_id FROM imp) i USING (session_id, doc_id) GROUP BY ALL""", name)
    return _impressions_view(con, name)


def duplicate_header(source, fmt: str, name: str) -> None:
    """Refuse a CSV/TSV/Parquet source whose header names a column twice (one would silently win)."""
    if fmt == "parquet":
        try:
            import pyarrow.parquet as pq
            names = pq.read_schema(pa.BufferReader(bytes(source)) if _is_bytes(source)
                                   else expand_paths(source, name)[0]).names
        except Exception:         # noqa: BLE001 — an unreadable file is reported by the reader itself
            return
    else:
        import csv
        text = _head(source, name).decode("utf-8", errors="replace").lstrip("\ufeff")
        first = next((ln for ln in text.splitlines() if ln.strip()), "")
        names = next(csv.reader([first], delimiter="\t" if fmt == "tsv" else ","), [])
    seen: dict = {}
    for i, n in enumerate(names, 1):
        key = str(n).strip()
        if key in seen:
            raise DataFormatError(name, f"column {key[:40]!r} appears twice in the header (columns {seen[key]} and "
                                        f"{i}); rename one of them")
        seen[key] = i


def unknown_format(source, name: str, problem: str = "") -> DataFormatError:
    """The error for a file that no reader accepts: the formats accepted and how its first line
    starts (printable characters only, cut short)."""
    try:
        text = _head(source, name, 4096).decode("utf-8", errors="replace").lstrip("\ufeff")
    except DataFormatError:
        text = ""
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    shown = "".join(ch if ch.isprintable() else "·" for ch in first[:60]) + ("…" if len(first) > 60 else "")
    return DataFormatError(name, f"not a log format this reader knows{' (' + problem + ')' if problem else ''}; its "
                                 f"first line starts {shown!r}. Accepted: " + "; ".join(ACCEPTED))


def _tabular(con, source, fmt: str, name: str) -> dict:
    if _is_bytes(source):
        data = bytes(source)
        if fmt == "parquet":
            import pyarrow.parquet as pq
            try:
                table = pq.read_table(pa.BufferReader(data))
            except Exception as e:        # pyarrow raises several types for a broken file
                raise DataFormatError(name, f"not a readable Parquet file ({str(e).splitlines()[0][:200]})") from None
        else:
            if data[:2] == b"\x1f\x8b":
                try:
                    data = gzip.decompress(data)
                except (OSError, EOFError) as e:
                    raise DataFormatError(name, f"broken gzip data ({e})") from None
            try:
                table = pcsv.read_csv(pa.BufferReader(data),
                                      parse_options=pcsv.ParseOptions(delimiter="\t" if fmt == "tsv" else ","))
            except pa.ArrowInvalid as e:
                raise DataFormatError(name, f"cannot read as {fmt} ({str(e).splitlines()[0][:200]})") from None
        con.register("tab_arrow", table)
        _run(con, "CREATE OR REPLACE TEMP VIEW norm AS SELECT * FROM tab_arrow", name)
        return {}
    files = expand_paths(source, name)
    lst = "[" + ", ".join(_q(f) for f in files) + "]"
    if fmt == "parquet":
        _run(con, f"CREATE OR REPLACE TEMP VIEW norm AS SELECT * FROM read_parquet({lst}, union_by_name=true)", name)
    else:
        comp = "gzip" if is_gzip(source) else "none"
        delim = "\\t" if fmt == "tsv" else ","
        _run(con, f"""CREATE OR REPLACE TEMP VIEW norm AS SELECT * FROM read_csv({lst}, header=true,
                 delim=E'{delim}', compression={_q(comp)}, union_by_name=true)""", name)
    _run(con, "SELECT * FROM norm LIMIT 0", name)          # surface sniffing errors here
    return {}


def register_normalised(con, source, fmt: str, name: str | None = None) -> dict:
    """Create the view ``norm`` for ``source`` in ``con`` (see the module docstring).  Returns
    repair counts (``orphan_clicks``, ``repeated_clicks``) for :func:`repair_notes`."""
    name = name or str(source)
    if fmt in TABULAR_FORMATS:
        duplicate_header(source, fmt, name)
        return _tabular(con, source, fmt, name)
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
    return {"yandex": _yandex, "yandex2013": _yandex2013, "baidu": _baidu, "pyclick": _pyclick}[fmt](con, name)


def repair_notes(state: dict) -> list[str]:
    notes = []
    if state.get("orphan_clicks"):
        notes.append(f"ignored {state['orphan_clicks']:,} click(s) on a URL that no earlier impression of the "
                     "session showed")
    if state.get("repeated_clicks"):
        notes.append(f"counted {state['repeated_clicks']:,} repeated click(s) on the same impression once")
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
            raise DataFormatError(name, f"cannot read ({str(e).splitlines()[0][:300]})") from None
    finally:
        con.close()
    if len(df) == 0:
        raise DataFormatError(name, "the log is empty (no impressions)")
    return df, repair_notes(state)
