"""One id rule for every reader and every side file (issue #61, item 1).

An id is **the file's text**, with surrounding spaces and tabs trimmed; an id that is nothing once trimmed (``""``,
``"  "``) is missing, as an empty field is.  A column of ids becomes 64-bit integers only
where *every* id in it is written the way the integer prints (``0``, ``7``, ``-12``; never ``07``, ``+7``, ``7.0``,
``1e3``), so that the number round-trips to the same text; otherwise every id of the column stays text.  An id is
never read as a BOOLEAN, DATE or TIME: ``true``, ``2024-01-01`` and ``12:00`` are text.  ``7`` and ``07`` are
therefore two documents everywhere — DuckDB (the CLI, out of core), Dask and the pages — and a side file's ids
(judgements, scores) match a log's by this same text.

>>> canonical_ids(pd.Series([" 7", "8 ", "-12"])).tolist()
[7, 8, -12]
>>> canonical_ids(pd.Series(["7", "07", "true"])).tolist()
['7', '07', 'true']
"""
from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["ID_TRIM", "ID_NUMBER", "canonical_ids", "canonical_id_view", "id_text", "trimmed_ids", "missing_id_error"]

#: the characters trimmed from both ends of an id (every reader, every side file)
ID_TRIM = " \t"
#: an id that is a number: written exactly as the integer prints (19 digits at most; int64 is checked as well)
ID_NUMBER = r"0|-?[1-9][0-9]{0,18}"
_INTEGER_TYPES = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT", "UINTEGER")


def id_text(values: pd.Series) -> pd.Series:
    """Ids as the trimmed text the rule compares (missing stays missing; blank becomes missing).

    >>> id_text(pd.Series([" a ", "  ", None])).isna().tolist()
    [False, True, True]
    """
    text = values.astype("string") if values.dtype != object else values.astype(object).where(values.isna(),
                                                                                              values.astype(str))
    return trimmed_ids(text)


def trimmed_ids(text):
    """A column of id text (pandas or Dask) trimmed of :data:`ID_TRIM`, blank ids missing — the rule's one step
    that every engine takes before grouping."""
    text = text.str.strip(ID_TRIM)
    return text.where(text != "")


def missing_id_error(name: str, column: str, rows: int):
    """The one message of every reader and engine for rows without an id in ``column`` (missing or blank).

    >>> str(missing_id_error("log.csv", "session_id", 2))
    "log.csv: column 'session_id' is empty in 2 row(s) (a session needs its id)"
    """
    from ultr_core.errors import DataFormatError
    whose = "session" if column == "session_id" else "document"
    return DataFormatError(name, f"column {column!r} is empty in {int(rows):,} row(s) (a {whose} needs its id)")


def canonical_ids(values: pd.Series) -> pd.Series:
    """A column of ids under the rule: int64 (``Int64`` with missing ids) when every id is a canonical integer,
    else the trimmed text (object)."""
    if pd.api.types.is_integer_dtype(values.dtype):
        return values
    text = id_text(values)
    present = text.dropna()
    if len(present) and present.str.fullmatch(ID_NUMBER).all():
        num = pd.to_numeric(present, errors="coerce")
        if str(num.dtype).lower() == "int64" and (num.astype(str) == present.astype(str)).all():   # int64, round-trips
            full = pd.to_numeric(text, errors="coerce")
            return full.astype("Int64") if text.isna().any() else full.astype(np.int64)
    return text.astype(object).where(text.notna(), None)


def canonical_id_view(con, id_columns, name: str) -> None:
    """Rewrite the DuckDB view ``norm`` so that its ``id_columns`` follow the rule: one pass decides, for every
    text id column at once, whether all its ids are canonical integers (then BIGINT) or stay trimmed text;
    integer-typed columns stay as they are, every other type (BOOLEAN, DATE, TIME, DOUBLE …) becomes its text."""
    from ultr_core.logs.sql import _ident, _q, run_sql
    types = {r[0]: str(r[1]).upper() for r in run_sql(con, "DESCRIBE norm", name)}
    cols = [c for c in dict.fromkeys(id_columns) if c in types and not types[c].startswith(_INTEGER_TYPES)
            and "[" not in types[c] and not types[c].startswith(("STRUCT", "MAP", "UNION", "LIST"))]
    if not cols:
        return
    trimmed = {c: f"nullif(trim({_ident(c)}::VARCHAR, {_q(ID_TRIM)}), '')" for c in cols}
    tests = ", ".join(f"bool_and({t} IS NULL OR (regexp_full_match({t}, {_q(ID_NUMBER)}) AND "
                      f"try_cast({t} AS BIGINT) IS NOT NULL))" for t in trimmed.values())
    numeric = run_sql(con, f"SELECT {tests} FROM norm", name)[0]
    cast = ", ".join(f"{'CAST(' + t + ' AS BIGINT)' if num else t} AS {_ident(c)}"
                     for (c, t), num in zip(trimmed.items(), numeric))
    run_sql(con, "ALTER VIEW norm RENAME TO norm_file", name)
    run_sql(con, f"CREATE OR REPLACE TEMP VIEW norm AS SELECT * REPLACE ({cast}) FROM norm_file", name)
