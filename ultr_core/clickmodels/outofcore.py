"""Sessions read out of core: DuckDB reads any log the app reads (``logs.normalise.register_normalised``: CSV/TSV/
Parquet and globs of them, Yandex, Baidu-ULTR, PyClick), codes the (query, document) pairs and returns the rows
ordered by session and rank as numpy arrays — 4 integers a row, no DataFrame of the whole log.  Sessions are taken
in session-id order (the readers number sessions in file order)."""
from __future__ import annotations

import tempfile

import pandas as pd

from ultr_core.clickmodels.sessions import SessionArrays, check_session_columns
from ultr_core.errors import DataFormatError

__all__ = ["register_rows", "sessions_from_source", "join_sessions"]

_PAIRS = """CREATE TEMP TABLE pairs AS SELECT query_id, doc_id, (row_number() OVER (ORDER BY query_id, doc_id)) - 1
            AS pair FROM (SELECT DISTINCT query_id, doc_id FROM rows)"""


def register_rows(con, source, fmt: str, name: str) -> int:
    """The view ``rows`` (session_id, query_id, doc_id, position, click: shown rows, checked; a view, so that a
    log of any size is scanned, never held) and the table ``pairs`` (the (query, document) pairs coded
    0 … n − 1 in sorted order) of a log in ``con``; returns the largest position."""
    from ultr_core.logs.normalise import register_normalised
    from ultr_core.logs.sql import _run
    register_normalised(con, source, fmt, name)
    have = {r[0] for r in _run(con, "DESCRIBE norm", name)}
    check_session_columns(have, name)
    shown = "WHERE lower(CAST(shown AS VARCHAR)) IN ('1', 'true')" if "shown" in have else ""
    _run(con, f"""CREATE TEMP VIEW rows AS SELECT session_id, query_id, doc_id,
                  try_cast(position AS INTEGER) AS position, try_cast(click AS INTEGER) AS click
                  FROM norm {shown}""", name)
    n, bad, top = _run(con, "SELECT count(*), count(*) FILTER (WHERE position IS NULL OR click IS NULL OR click NOT IN "
                            "(0, 1)), max(position) FROM rows", name)[0]
    if bad:
        raise DataFormatError(name, f"{bad:,} row(s) without a whole-number position or a 0/1 click")
    if n == 0:
        raise DataFormatError(name, "the log has no shown rows")
    _run(con, _PAIRS, name)
    return int(top)


def sessions_from_source(source, fmt: str, name: str, memory_limit: str = "2GB") -> SessionArrays:
    """The sessions of a log file (or glob) as :class:`SessionArrays`, built by DuckDB under ``memory_limit``."""
    from ultr_core.logs.sql import connect
    with tempfile.TemporaryDirectory() as tmp:
        con = connect(memory_limit, tmp)
        try:
            register_rows(con, source, fmt, name)
            arr = con.execute("SELECT session_id, pair, position, click FROM rows JOIN pairs USING (query_id, doc_id) "
                              "ORDER BY session_id, position").fetchnumpy()
            keys = con.execute("SELECT query_id, doc_id FROM pairs ORDER BY pair").df()
        finally:
            con.close()
    return SessionArrays.from_rows(arr["session_id"], arr["pair"], arr["position"], arr["click"], keys, name)


def join_sessions(train: SessionArrays, test: SessionArrays) -> tuple[SessionArrays, SessionArrays]:
    """Two logs' sessions on one coding of (query, document) pairs and queries (a test log against a train log)."""
    keys = pd.concat([train.pair_keys, test.pair_keys], ignore_index=True)
    code, uniq = pd.factorize(pd.MultiIndex.from_frame(keys.astype(str)), sort=True)
    pair_keys = pd.DataFrame(list(uniq), columns=list(keys.columns))
    pair_query = pd.factorize(pair_keys.iloc[:, 0], sort=True)[0]
    a, b = code[:train.n_pairs], code[train.n_pairs:]
    return (SessionArrays(pair_query[a[train.pairs[:, 0]]], a[train.pairs], train.clicks, pair_query, pair_keys),
            SessionArrays(pair_query[b[test.pairs[:, 0]]], b[test.pairs], test.clicks, pair_query, pair_keys))
