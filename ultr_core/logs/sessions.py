"""Session-text logs: Baidu-ULTR raw sessions (a query line, then 32-field document lines) and
PyClick's session text (``query<TAB>url,url,… : clicked,…;``), read into the normalised view.
"""
from __future__ import annotations

from ultr_core.errors import DataFormatError
from ultr_core.logs.formats import BAIDU_COLUMNS  # the one table of formats holds its columns
from ultr_core.logs.sql import _NF, _SPLIT, _check, _impressions_view, _scalar, run_sql

__all__ = ["BAIDU_COLUMNS"]

#: Baidu-ULTR document-line fields (1-based, as SQL indexes lists) kept as DOUBLE columns (missing → NULL)
def _baidu(con, name: str) -> dict:
    run_sql(con, _SPLIT, name)
    run_sql(con, f"""CREATE OR REPLACE TEMP TABLE b AS SELECT ln, list_transform(f, lambda x: trim(x)) AS f,
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
                                    "Baidu-ULTR document line has 32 (pos url_md5 title abstract multimedia_type "
                                    "click …)",
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
    run_sql(con, f"""CREATE OR REPLACE TEMP VIEW norm AS
        SELECT d.session_id, q.f[1] AS query_id, d.f[2] AS doc_id, d.f[1]::INTEGER AS position,
               d.f[6]::TINYINT AS click, {extras}
        FROM b d JOIN b q ON q.ln = d.session_id WHERE d.is_doc""", name)
    return {}


def _pyclick(con, name: str) -> dict:
    """PyClick session text (see the module docstring): sessions split at ``;``, then at the first
    tab (query) and the first ``:`` (shown URLs | clicked URLs)."""
    run_sql(con, """CREATE OR REPLACE TEMP TABLE ps AS SELECT ln, k, trim(s) AS s FROM (
            SELECT ln, unnest(string_split(line, ';')) AS s, generate_subscripts(string_split(line, ';'), 1) AS k
            FROM raw WHERE line IS NOT NULL) WHERE trim(s) <> ''""", name)
    _check(con, name, [
        ("SELECT min(ln) FROM ps WHERE strpos(s, chr(9)) = 0 OR strpos(s[strpos(s, chr(9)) + 1:], ':') = 0",
         "a PyClick session needs query<TAB>url,url,… : clicked,… (a tab, then a colon)"),
        ("SELECT min(ln) FROM ps WHERE trim(split_part(s, chr(9), 1)) = ''", "the query of a session is empty"),
        ("SELECT min(ln) FROM ps WHERE len(list_filter(string_split(split_part(s[strpos(s, chr(9)) + 1:], ':', 1), "
         "','),"
         " lambda x: trim(x) = '')) > 0", "an empty URL in a session's list (two commas, or a comma at an end)"),
    ])
    run_sql(con, """CREATE OR REPLACE TEMP TABLE pz AS SELECT row_number() OVER (ORDER BY ln, k) AS session_id,
            trim(split_part(s, chr(9), 1)) AS query_id,
            list_transform(string_split(split_part(s[strpos(s, chr(9)) + 1:], ':', 1), ','), lambda x: trim(x)) AS docs,
            list_filter(list_transform(string_split(
                s[strpos(s, chr(9)) + 1:][strpos(s[strpos(s, chr(9)) + 1:], ':') + 1:], ','),
                lambda x: trim(x)), lambda x: x <> '') AS clicks
        FROM ps""", name)
    run_sql(con, """CREATE OR REPLACE TEMP TABLE imp AS SELECT session_id, query_id, unnest(docs) AS doc_id,
            generate_subscripts(docs, 1)::INTEGER AS position FROM pz""", name)
    run_sql(con, "CREATE OR REPLACE TEMP TABLE clk AS SELECT session_id, unnest(clicks) AS doc_id FROM pz", name)
    run_sql(con, """CREATE OR REPLACE TEMP TABLE hit AS SELECT c.session_id, c.doc_id, count(*) AS n FROM clk c
        JOIN (SELECT DISTINCT session_id, doc_id FROM imp) i USING (session_id, doc_id) GROUP BY ALL""", name)
    return _impressions_view(con, name)
