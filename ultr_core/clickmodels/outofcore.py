"""Sessions read out of core: DuckDB reads any log the app reads (``logs.normalise.register_normalised``: CSV/TSV/
Parquet and globs of them, Yandex, Baidu-ULTR, PyClick), codes the (query, document) pairs and returns the rows
ordered by session and rank as numpy arrays — 4 integers a row, no DataFrame of the whole log.  Sessions are taken
in file order (a tabular file's row order; the text readers number sessions in file order)."""
from __future__ import annotations

import tempfile

import numpy as np
import pandas as pd

from ultr_core.clickmodels.sessions import PROPENSITY, SessionArrays, check_session_columns
from ultr_core.errors import DataFormatError

__all__ = ["ID_COLUMNS", "read_sessions", "register_rows", "refuse_rows", "sessions_from_source", "join_sessions",
           "duckdb_rows"]

_PAIRS = """CREATE TEMP TABLE pairs AS SELECT query_id, doc_id, (row_number() OVER (ORDER BY query_id, doc_id)) - 1
            AS pair FROM (SELECT DISTINCT query_id, doc_id FROM rows)"""


def register_rows(con, source, fmt: str, *, name: str) -> tuple[int, list[str]]:
    """The view ``rows`` (session_id, query_id, doc_id, position, click, ``_order``: shown rows, checked; a view, so
    that a log of any size is scanned, never held) and the table ``pairs`` (the (query, document) pairs coded
    0 … n − 1 in sorted order) of a log in ``con``; returns the largest position and the readers' repair notes.

    The input contract is ``ig``'s (:func:`ultr_core.logs.ingestion.ingest`): positions whole decimal numbers from
    1, clicks 0 or 1, ``shown`` 0/1 or true/false — anything else refused, never rounded or dropped.  ``_order``
    orders sessions as the file does: the row number of a CSV/TSV/Parquet file, the session id the text readers
    number in file order."""
    from ultr_core.logs.formats import FORMATS_BY_NAME
    from ultr_core.logs.ingestion import check_values
    from ultr_core.logs.normalise import register_normalised, repair_notes
    from ultr_core.logs.sql import run_sql
    state = register_normalised(con, source, fmt, name=name, text_columns=("position",))
    types = {r[0]: str(r[1]) for r in run_sql(con, "DESCRIBE norm", name)}
    check_session_columns(set(types), name)
    check_values(con, {c: c for c in ("position", "shown") if c in types}, types, name=name)
    shown = "WHERE try_cast(shown AS BOOLEAN)" if "shown" in types else ""
    prop = f", try_cast({PROPENSITY} AS DOUBLE) AS {PROPENSITY}" if PROPENSITY in types else ""
    order = "row_number() OVER ()" if FORMATS_BY_NAME[fmt].kind == "tabular" else "session_id"
    run_sql(
        con,
        f"""CREATE TEMP VIEW cm_raw AS SELECT session_id, query_id, doc_id, try_cast(position AS BIGINT) AS position,
                  click AS click_value, try_cast(click AS DOUBLE) AS clickd, {order} AS _order{prop}
                  FROM norm {shown}""",
        name,
    )
    _check_rows(con, name)
    run_sql(con, f"""CREATE TEMP VIEW rows AS SELECT session_id, query_id, doc_id,
                     CAST(position AS INTEGER) AS position, CAST(clickd AS INTEGER) AS click,
                     _order{', ' + PROPENSITY if prop else ''} FROM cm_raw""", name)
    run_sql(con, _PAIRS, name)
    return int(con.execute("SELECT max(position) FROM rows").fetchall()[0][0]), repair_notes(state)


def _check_rows(con, name: str) -> None:
    """Refuse clicks other than 0/1 and positions outside 1 … MAX_POSITION, naming the first value and the count."""
    from ultr_core.logs.clicklog import MAX_POSITION
    row = con.execute(
        f"""SELECT count(*), count(*) FILTER (WHERE clickd IS NULL OR clickd NOT IN (0, 1)),
            any_value(click_value::VARCHAR) FILTER (WHERE clickd IS NULL OR clickd NOT IN (0, 1)),
            count(*) FILTER (WHERE position < 1), min(position),
            count(*) FILTER (WHERE position > {MAX_POSITION}), max(position),
            {", ".join(f"count(*) FILTER (WHERE {c} IS NULL)" for c in ID_COLUMNS)} FROM cm_raw""").fetchall()[0]
    refuse_rows(row[:7], name, empty=dict(zip(ID_COLUMNS, row[7:])))


#: the ids every shown row of a click model's log needs (an id missing or blank is refused, as ``ig`` refuses it)
ID_COLUMNS = ("session_id", "query_id", "doc_id")


def refuse_rows(counts: tuple, name: str, *, empty: dict) -> None:
    """The one rule of a click model's rows, from (rows, bad clicks, a bad click value, positions below 1, the
    lowest, positions above MAX_POSITION, the highest) and ``empty`` (rows per id column of :data:`ID_COLUMNS`
    without an id) — counted by DuckDB or by Dask."""
    from ultr_core.errors import show
    from ultr_core.logs.clicklog import MAX_POSITION
    from ultr_core.logs.ids import missing_id_error
    n, bad_click, click_value, low, low_value, high, high_value = counts
    if n == 0:
        raise DataFormatError(name, "the log has no shown rows")
    for c in ID_COLUMNS:
        if empty.get(c):
            raise missing_id_error(name, c, empty[c])
    if bad_click:
        raise DataFormatError(name, f"column 'click' must hold 0 or 1 (found {show(click_value, 16)} in "
                                    f"{bad_click:,} row(s))")
    if low:
        raise DataFormatError(name, f"positions are 1-based: found {low_value} in {low:,} row(s) — a 0-based log "
                                    "needs 1 added to every position")
    if high:
        raise DataFormatError(name, f"column 'position' must hold whole numbers from 1 to {MAX_POSITION:,} "
                                    f"(found {high_value} in {high:,} row(s))")


def sessions_from_source(source, fmt: str, name: str, *, memory_limit: str = "2GB", engine: str = "duckdb",
                         scheduler: str | None = None) -> SessionArrays:
    """The sessions of a log file (or glob) as :class:`SessionArrays` (in file order, the readers' repair notes in
    ``notes``), built by ``engine`` (:func:`~ultr_core.logs.engines.log_engines`) under ``memory_limit``."""
    from dataclasses import replace

    from ultr_core.logs.engines import engine_function
    from ultr_core.logs.sql import connect, reporting_budget
    with tempfile.TemporaryDirectory(prefix="ultr-sessions-") as tmp, reporting_budget():
        con = connect(memory_limit, tmp)
        try:
            arr, notes = engine_function(engine, "rows")(con, source, fmt, name=name, folder=tmp, scheduler=scheduler)
            keys = con.execute("SELECT query_id, doc_id FROM pairs ORDER BY pair").df()
        finally:
            con.close()
    out = SessionArrays.from_rows(arr["s"], arr["pair"], arr["position"], click=arr["click"], pair_keys=keys, name=name,
                                  propensity=np.asarray(arr[PROPENSITY], float) if PROPENSITY in arr else None)
    return replace(out, notes=tuple(notes))


def duckdb_rows(con, source, fmt: str, *, name: str, folder: str, scheduler: str | None = None) -> tuple[dict, list]:
    """The shown rows ordered by session (file order) and rank as arrays (``s``, ``pair``, ``position``, ``click``
    and the logging policy's ``propensity`` where the log has one), read by DuckDB; the table ``pairs`` in ``con``."""
    _, notes = register_rows(con, source, fmt, name=name)
    has = PROPENSITY in {r[0] for r in con.execute("DESCRIBE rows").fetchall()}
    arr = con.execute(f"""SELECT dense_rank() OVER (ORDER BY k) AS s, pair, position, click
                         {', ' + PROPENSITY if has else ''} FROM rows
                         JOIN pairs USING (query_id, doc_id)
                         JOIN (SELECT session_id, min(_order) AS k FROM rows GROUP BY ALL) USING (session_id)
                         ORDER BY k, position""").fetchnumpy()
    return arr, notes


def join_sessions(train: SessionArrays, test: SessionArrays) -> tuple[SessionArrays, SessionArrays]:
    """Two logs' sessions on one coding of (query, document) pairs and queries (a test log against a train log)."""
    keys = pd.concat([train.pair_keys, test.pair_keys], ignore_index=True)
    code, uniq = pd.factorize(pd.MultiIndex.from_frame(keys.astype(str)), sort=True)
    pair_keys = pd.DataFrame(list(uniq), columns=list(keys.columns))
    pair_query = pd.factorize(pair_keys.iloc[:, 0], sort=True)[0]
    a, b = code[:train.n_pairs], code[train.n_pairs:]
    return (SessionArrays(pair_query[a[train.pairs[:, 0]]], a[train.pairs], train.clicks, pair_query, pair_keys,
                          shown=train.shown),
            SessionArrays(pair_query[b[test.pairs[:, 0]]], b[test.pairs], test.clicks, pair_query, pair_keys,
                          shown=test.shown))


def read_sessions(path: str, fmt, name: str, *, engine: str = "duckdb", scheduler: str | None = None,
                  memory_limit: str = "2GB"):
    """The log's sessions, read out of core by ``engine`` (DuckDB: any format the app reads) under ``memory_limit``;
    the file resolved once."""
    from ultr_core.logs.sniff import resolve_source
    src = resolve_source(path, fmt, name)
    return sessions_from_source(src, src.fmt, name, memory_limit=memory_limit, engine=engine, scheduler=scheduler)
