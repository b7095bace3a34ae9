"""Yandex logs: the relevance-prediction log (2011 challenge; CLARA2) and the personalized web
search log (WSCD 2013), read into the normalised view (formats in :mod:`ultr_core.logs.normalise`).
"""
from __future__ import annotations

import gzip

import numpy as np
import pandas as pd

from ultr_core.errors import DataFormatError, UnreadableError
from ultr_core.logs.sniff import expand_paths, is_gzip
from ultr_core.logs.sql import (
    _NF,
    _SPLIT,
    _check,
    _impressions_view,
    _q,
    _scalar,
    _t,
    run_sql,
)

__all__ = ["MATCH_BUCKET_ROWS"]


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
        raise UnreadableError(name, f"cannot read ({msg[:300]})") from None
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
    con.execute(f"""CREATE OR REPLACE TEMP TABLE yf AS SELECT rowid + 1 AS ln, {
        ", ".join(f"coalesce(trim(c{i}), '') AS f{i}" for i in range(1, n + 1))
    },
        {n} AS nf FROM y WHERE NOT ({
        " AND ".join(f"coalesce(trim(c{i}), '') = ''" for i in range(1, n + 1))
    })""").fetchall()
    return _yandex_from(con, name, "yf")


def _yandex_typed(con, name: str, n: int) -> dict:
    """Impressions and clicks from table ``yb`` (ids BIGINT, record type text); a problem raises
    :class:`DataFormatError` for the caller to re-read line by line (it then names the file's line)."""
    bad = con.execute("""SELECT count(*) FROM yb WHERE c1 IS NULL OR c3 IS NULL OR trim(c3) NOT IN ('Q', 'C')
        OR (trim(c3) = 'Q' AND (c4 IS NULL OR c6 IS NULL)) OR (trim(c3) = 'C' AND c4 IS NULL)""").fetchall()[0][0]
    if bad:
        raise DataFormatError(name, "malformed lines")
    urls = ", ".join(f"c{i}" for i in range(6, n + 1))
    run_sql(con, f"""CREATE OR REPLACE TEMP VIEW q AS SELECT rowid + 1 AS ln, c1 AS s, c4 AS query_id, {urls}
        FROM yb WHERE trim(c3) = 'Q'""", name)
    repairs = _match_clicks(con, name, n)
    run_sql(con, f"""CREATE OR REPLACE TEMP VIEW norm AS SELECT session_id, query_id, doc_id,
        (substr(col, 2)::INTEGER - 5) AS position,
        coalesce(list_contains(clicked, substr(col, 2)::INTEGER - 5), false)::TINYINT AS click
        FROM (UNPIVOT (SELECT q.ln AS session_id, q.query_id, {urls}, h.clicked FROM q
                       LEFT JOIN (SELECT session_id, list(position) AS clicked FROM hitpos GROUP BY ALL) h
                       ON q.ln = h.session_id)
              ON {urls} INTO NAME col VALUE doc_id)""", name)
    # the same counts without unpivoting every impression: identical result pages are counted
    # once first (real logs repeat a query's page often); ingestion reads these when it can
    run_sql(con, f"""CREATE OR REPLACE TEMP VIEW counts AS
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
    session that shows the URL, at the first position showing it (PyClick's ``YandexRelPredChallengeParser``);
    repeated clicks on one impression count once.  Vectorised: most clicks follow their query row, so the latest query
    row before
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
    run_sql(con, "CREATE OR REPLACE TEMP TABLE hitraw (session_id BIGINT, doc_id BIGINT, query_id BIGINT, "
              "position BIGINT)", name)
    matched = total = 0
    for b in range(buckets):
        where = "" if buckets == 1 else f" AND ((c1 % {buckets}) + {buckets}) % {buckets} = {b}"
        m, t = _match_bucket(con, name, urls, none, where)
        matched, total = matched + m, total + t
    # a URL shown at several positions of one page: its click counts once, at the first (PyClick's rule)
    run_sql(con, """CREATE OR REPLACE TEMP TABLE hitpos AS SELECT session_id, doc_id, query_id,
                 min(position) AS position, count(DISTINCT position) AS k FROM hitraw
                 GROUP BY session_id, doc_id, query_id""", name)
    run_sql(con, "DROP TABLE hitraw", name)
    distinct = _scalar(con, "SELECT count(*) FROM (SELECT DISTINCT session_id, doc_id FROM hitpos)")
    multi = _scalar(con, "SELECT count(*) FROM hitpos WHERE k > 1") or 0
    run_sql(con, "ALTER TABLE hitpos DROP COLUMN k", name)
    return {"orphan_clicks": total - matched, "repeated_clicks": matched - distinct, "multi_position_clicks": multi}


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
    run_sql(con, "INSERT INTO hitraw SELECT * FROM hitraw_df", name)
    con.unregister("hitraw_df")
    return int(found.sum()), len(c_ln)


def _yandex(con, name: str) -> dict:
    run_sql(con, f"""CREATE OR REPLACE TEMP TABLE l AS SELECT ln, f, {_t(1)} AS s, {_t(3)} AS k FROM (
        SELECT ln, string_split(line, chr(9)) AS f FROM raw WHERE line IS NOT NULL AND trim(line) <> '')""", name)
    n = max(_scalar(con, "SELECT coalesce(max(len(f)), 6) FROM l"), 6)
    fields = ", ".join(f"{_t(i)} AS f{i}" for i in range(1, n + 1))
    run_sql(con, f"""CREATE OR REPLACE TEMP VIEW l2 AS SELECT ln, {fields}, {n} AS nf FROM l""", name)
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
        run_sql(con, f"CREATE OR REPLACE TEMP TABLE imp AS {union}", name)
        run_sql(con, f"CREATE OR REPLACE TEMP TABLE clk AS SELECT ln, {cast('f1')} AS s, {cast('f4')} AS doc_id "
                  f"FROM {src} WHERE f3 = 'C'", name)
        if not num or not _scalar(
            con,
            "SELECT (SELECT count(*) FROM imp WHERE s IS NULL OR query_id IS NULL OR "
            "doc_id IS NULL) + (SELECT count(*) FROM clk WHERE s IS NULL OR doc_id IS NULL)",
        ):
            break
    # a click belongs to the latest impression at or before its line, same session, same URL
    run_sql(con, """CREATE OR REPLACE TEMP TABLE hit AS SELECT session_id, doc_id, count(*) AS n FROM (
        SELECT c.ln, c.doc_id, max(i.session_id) AS session_id FROM clk c
        JOIN imp i ON c.s = i.s AND c.doc_id = i.doc_id AND i.session_id <= c.ln GROUP BY c.ln, c.doc_id)
        GROUP BY ALL""", name)
    return _impressions_view(con, name, first_only=True)


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
    run_sql(con, _SPLIT, name)
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
    run_sql(con, f"""CREATE OR REPLACE TEMP TABLE imp AS SELECT session_id, s, serp, query_id,
            split_part(p, ',', 1) AS doc_id, split_part(p, ',', 2) AS domain, position FROM (
        SELECT ln AS session_id, {_t(1)} AS s, {_t(4)} AS serp, {_t(5)} AS query_id, trim(unnest(f[7:])) AS p,
               generate_subscripts(f[7:], 1)::INTEGER AS position
        FROM l WHERE NOT {meta} AND {_t(3)} IN ('Q', 'T')) WHERE p <> ''""", name)
    run_sql(con, f"CREATE OR REPLACE TEMP TABLE clk AS SELECT {_t(1)} AS s, {_t(4)} AS serp, {_t(5)} AS doc_id FROM l "
              f"WHERE NOT {meta} AND {_t(3)} = 'C'", name)
    run_sql(con, """CREATE OR REPLACE TEMP TABLE hit AS
        SELECT i.session_id, i.doc_id, count(*) AS n FROM clk c
        JOIN (SELECT DISTINCT session_id, s, serp, doc_id FROM imp) i USING (s, serp, doc_id) GROUP BY ALL""", name)
    return _impressions_view(con, name, ["domain"], first_only=True)
