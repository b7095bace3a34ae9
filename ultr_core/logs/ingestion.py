"""Out-of-core reduction of a click log to what the IG needs: distinct (document, bias factor)
pairs with impression and click counts — a :class:`CountTable`.

The identifiability graph, node merging, node intervention planning, the embedding fits and
the position-bias estimators all work on this table, which is far smaller than the log
(one row per distinct pair instead of one per impression).

* **DuckDB** (default, embedded, no server): one SQL aggregation over the normalised view of
  :mod:`ultr_core.logs.normalise`; DuckDB streams CSV/TSV/Parquet/gzip files and globs of files
  in parallel with a memory limit (``memory_limit``) and spills to a temporary directory that
  this module creates and removes.
* **Dask** (``engine="dask"``; CSV/TSV/Parquet): the same aggregation as a Dask dataframe
  group-by, computed on a distributed scheduler (``scheduler="tcp://…"``) or, without one,
  on Dask's local threads — for logs that outgrow one machine.

Documents are keyed by the format's default (``document="auto"``): **(query_id, doc_id)** for
click logs (relevance belongs to a query–document pair), the **feature vector** for ULTRA folders
(:func:`ultr_core.logs.ultra.ultra_frame`); ``"query"`` / ``"global"`` (``doc_id`` alone) choose
explicitly, ``doc_columns`` keys by feature columns.  The table keeps both ``query_id`` and
``doc_id`` (its ``alternative`` names the other key), so the verdict under the other key is
computed from the same reduced table (:func:`ultr_core.identifiability.reports.analyse_identifiability`).
Bias-factor values that are missing form their own level
(:mod:`.coding`); missing document or query ids are rejected with the offending key.
"""
from __future__ import annotations

import tempfile
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from ultr_core.errors import ConfigError, DataFormatError, MissingColumnError, UnreadableError, show
from ultr_core.logs.clicklog import MAX_POSITION, SHOWN_TEXT, ClickLog, check_roles
from ultr_core.logs.daskcounts import probe_scheduler, select_columns
from ultr_core.logs.engines import check_engine, engine_function, engines_by_key
from ultr_core.logs.ids import missing_id_error
from ultr_core.logs.sniff import spill_upload

__all__ = ["CountTable", "ingest", "document_columns", "duckdb_counts", "probe_scheduler", "check_values"]


def document_columns(document: str = "query", doc_columns=None) -> list[str]:
    """The columns that identify a document: ``["query_id", "doc_id"]`` (``document="query"``,
    the default), ``["doc_id"]`` (``"global"``) or the given ``doc_columns``."""
    if doc_columns:
        return list(doc_columns)
    if document == "query":
        return ["query_id", "doc_id"]
    if document == "global":
        return ["doc_id"]
    raise ConfigError("document", f"{document!r} is not a document key: use 'query' (query_id, doc_id) or "
                                  "'global' (doc_id alone), or give doc_columns")


@dataclass(frozen=True)
class CountTable:
    """Distinct (document, factor) pairs of a log's shown rows: ``frame`` has the
    ``document`` columns, the ``bias`` columns, ``impressions`` and ``clicks``."""

    frame: pd.DataFrame
    document: tuple
    bias: tuple
    source: str = "log"
    notes: tuple = field(default=())
    alternative: tuple = field(default=())     # the other document key the frame can be grouped by
    keys: tuple = field(default=())            # (name of document, name of alternative) when not implied

    @property
    def document_key(self) -> str:
        """``"query"`` for (query_id, doc_id), ``"global"`` for doc_id alone, else ``"columns"``."""
        if self.keys:
            return self.keys[0]
        return {("query_id", "doc_id"): "query", ("doc_id",): "global"}.get(tuple(self.document), "columns")

    @property
    def file_document_columns(self) -> tuple:
        """The file's columns that identify a document: ``document``, or — for a kept log whose ``doc_id`` codes its
        documents (it names its key, ``keys``) — the columns that key means (``query_id, doc_id`` for a (query,
        document) pair), as the same file read by :func:`ingest` says."""
        return tuple(document_columns(self.keys[0])) if self.keys else tuple(self.document)

    def with_document(self, document: tuple) -> "CountTable":
        """The same counts keyed by other document columns of the frame."""
        return replace(self, document=tuple(document), alternative=tuple(self.document), keys=self.keys[::-1])

    @property
    def n_rows(self) -> int:
        return int(self.frame["impressions"].sum())

    @property
    def n_clicks(self) -> int:
        return int(self.frame["clicks"].sum())

    def __len__(self) -> int:
        return len(self.frame)

    @classmethod
    def from_log(cls, log: ClickLog | pd.DataFrame, bias=None, document=("doc_id",), *, source: str = "log",
                 notes=(), shown_only: bool = True) -> "CountTable":
        """Aggregate an in-memory log (its ``shown`` rows unless ``shown_only`` is False).  For a
        :class:`ClickLog`, ``doc_id`` already is the document identity (see its schema)."""
        frame = log.frame if isinstance(log, ClickLog) else log
        if bias is None:
            bias = log.bias_columns if isinstance(log, ClickLog) else ["position"]
        bias = [bias] if isinstance(bias, str) else list(bias)
        check_roles(bias)
        document = [document] if isinstance(document, str) else list(document)
        missing = [c for c in bias + document if c not in frame.columns]
        if missing:
            raise ConfigError("bias", f"column(s) {', '.join(missing)} not in the log "
                                      f"(it has {', '.join(map(str, frame.columns))})")
        if shown_only and "shown" in frame:
            frame = frame[frame["shown"].to_numpy(bool)]
        if len(frame) == 0:
            raise ConfigError("log", "the log has no shown rows: nothing to build a graph from")
        # a user's log (read by ultr_core.logs.mapping) says which key its doc_id codes: keep the other too
        kind = log.meta.get("document") if isinstance(log, ClickLog) else None
        alt, names = (), ()
        if document == ["doc_id"] and kind in ("query", "global") and {"query_id", "doc_key"} <= set(frame.columns):
            alt = ("doc_key",) if kind == "query" else ("query_id", "doc_id")
            names = (kind, "global" if kind == "query" else "query")
        keys = list(dict.fromkeys(document + list(alt) + bias))
        g = frame.groupby(keys, dropna=False, sort=True, observed=True)
        out = g.size().rename("impressions").to_frame()
        out["clicks"] = g["click"].sum().astype(np.int64)
        return cls(out.reset_index(), tuple(document), tuple(bias), source, tuple(notes), alt, names)


# --------------------------------------------------------------------------- ingestion
def _validate(agg: pd.DataFrame, doc: list[str], name: str) -> pd.DataFrame:
    """Check the aggregated counts (positions whole and ≥ 1, clicks 0/1, ids present)."""
    def where(i):
        return ", ".join(f"{c}={agg[c].iloc[i]!s}"[:60] for c in doc + ["position"] if c in agg)
    for c in doc:
        bad = agg[c].isna().to_numpy()
        if bad.any():
            raise missing_id_error(name, c, agg["impressions"][bad].sum())
    if int(agg["_bad_click"].sum()):
        i = int(np.flatnonzero(agg["_bad_click"].to_numpy() > 0)[0])
        raise DataFormatError(name, f"column 'click' must hold 0 or 1 (found {agg['_bad_click_value'].iloc[i]!s}"[:80]
                                    + f" at {where(i)})")
    pos = pd.to_numeric(agg["position"], errors="coerce").to_numpy(np.float64)
    bad = ~np.isfinite(pos) | (pos % 1 != 0) | (pos < 1) | (pos > MAX_POSITION)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DataFormatError(name, f"column 'position' must hold whole numbers from 1 to {MAX_POSITION:,} "
                                    f"(found {str(agg['position'].iloc[i])[:20]!r} at {where(i)})")
    agg = agg.drop(columns=["_bad_click", "_bad_click_value"])
    agg["position"] = pos.astype(np.int64)
    agg["impressions"] = agg["impressions"].astype(np.int64)
    agg["clicks"] = agg["clicks"].astype(np.int64)
    return agg


_INTEGER_TYPES = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER",
                  "UBIGINT", "UHUGEINT")


#: what a position and a ``shown`` flag must hold (every engine's message)
VALUE_RULES = {"position": "column 'position' must hold whole numbers written in decimal digits",
               "shown": "column 'shown' must hold 0/1 or true/false"}


def check_values(con, sel: dict, types: dict, *, name: str) -> None:
    """Refuse, with the first offending value, positions that are not written as whole decimal numbers
    (``0x2``, ``2.0``, ``1e0``) and ``shown`` flags that are not 0/1 or true/false: nothing is dropped or
    converted silently."""
    from ultr_core.logs.sql import _ident as q
    checks = {}
    ptype = types[sel["position"]].upper()
    if ptype not in _INTEGER_TYPES:
        checks["position"] = (f"NOT regexp_full_match(trim({q(sel['position'])}::VARCHAR), '[0-9]+')",
                              VALUE_RULES["position"])
    if "shown" in sel and types[sel["shown"]].upper() != "BOOLEAN":
        checks["shown"] = (f"lower(trim({q(sel['shown'])}::VARCHAR)) NOT IN {tuple(SHOWN_TEXT)}",
                           VALUE_RULES["shown"])
    for col, (bad, problem) in checks.items():
        row = con.execute(f"SELECT count(*), any_value({q(sel[col])}::VARCHAR) FROM norm "
                          f"WHERE {q(sel[col])} IS NOT NULL AND ({bad})").fetchall()[0]
        if row[0]:
            raise DataFormatError(name, f"{problem} (found {show(row[1], 16)} in {row[0]:,} row(s))")


_INT64_SAFE = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT", "UINTEGER")


def _increasing(con, sel: dict, types: dict, batch: int = 1 << 20) -> bool:
    """True when integer (session, position) keys strictly increase in file order — a log written session by
    session, which has no duplicate by construction.  Read in batches of ``batch`` rows (memory stays bounded);
    one exact pass in NumPy instead of DuckDB's distinct count of every key (≈ 4× faster on 10 M rows).  False
    (the caller counts exactly) at the first step back, a missing value or a key that is not an integer."""
    from ultr_core.logs.sql import _ident as q
    if not all(types[sel[k]].upper() in _INT64_SAFE for k in ("session_id", "position")):
        return False
    reader = con.sql(f"SELECT {q(sel['session_id'])}::BIGINT, {q(sel['position'])}::BIGINT "
                         "FROM norm").to_arrow_reader(batch)
    last = None
    for rb in reader:
        if rb.column(0).null_count or rb.column(1).null_count:
            return False
        s, p = rb.column(0).to_numpy(), rb.column(1).to_numpy()
        if last is not None and len(s):
            s, p = np.concatenate(([last[0]], s)), np.concatenate(([last[1]], p))
        ds = np.diff(s)
        if not ((ds > 0) | ((ds == 0) & (np.diff(p) > 0))).all():
            return False
        if len(s):
            last = (s[-1], p[-1])
    return True


def _dedupe_view(con, sel: dict, types: dict, name: str) -> list[str]:
    """With a session column, keep the first row of each (session, position) in file order — the rule of
    :func:`ultr_core.logs.mapping.frame_to_log`, so the CLI, the out-of-core path and the kept log count the
    same rows — and say how many were dropped."""
    from ultr_core.logs.sql import _ident as q, run_sql
    if "session_id" not in sel:
        return []
    empty = con.execute(f"SELECT count(*) FROM norm WHERE {q(sel['session_id'])} IS NULL").fetchall()[0][0]
    if empty:                        # the rule of every reader: a row needs its session's id (ids: blank = missing)
        raise missing_id_error(name, "session_id", empty)
    key = f"{q(sel['session_id'])}, {q(sel['position'])}"
    if _increasing(con, sel, types):
        return []
    n, distinct = con.execute(f"SELECT count(*), count(DISTINCT ({key})) FROM norm").fetchall()[0]
    if n == distinct:
        return []
    run_sql(con, f"""CREATE OR REPLACE TEMP TABLE norm_kept AS SELECT * EXCLUDE (_rn) FROM (
                  SELECT *, row_number() OVER () AS _rn FROM norm)
                  QUALIFY row_number() OVER (PARTITION BY {key} ORDER BY _rn) = 1""", name)
    return [f"dropped {n - distinct:,} duplicate row(s) (same session and position) of {n:,}"]


def _count_sql(con, sel: dict, keys: list[str], table: str) -> str:
    """The counts per group of ``keys``, in key order.  Clicks are checked first in one scan (≈ 0.05 s on 10 M
    rows); only a log with a click that is not 0/1 is counted with the columns that say where (≈ 0.3 s more)."""
    from ultr_core.logs.sql import _ident as q
    shown = f"WHERE try_cast({q(sel['shown'])} AS BOOLEAN)" if "shown" in sel else ""
    group = ", ".join(f"{q(sel[k])} AS {q(k)}" for k in keys)
    clk = f"try_cast({q(sel['click'])} AS DOUBLE)"
    bad = f"{clk} IS NULL OR {clk} NOT IN (0, 1)"
    order = ", ".join(f"{q(k)} NULLS LAST" for k in keys)     # a deterministic row order
    if con.execute(f"SELECT count(*) FILTER (WHERE {bad}) FROM {table} {shown}").fetchall()[0][0]:
        where = f"""count(*) FILTER (WHERE {bad}) AS _bad_click,
                    any_value({q(sel['click'])}::VARCHAR) FILTER (WHERE {bad}) AS _bad_click_value"""
    else:
        where = "0 AS _bad_click, NULL::VARCHAR AS _bad_click_value"
    return f"""SELECT {group}, count(*) AS impressions, coalesce(sum({clk}), 0)::BIGINT AS clicks, {where}
              FROM {table} {shown} GROUP BY ALL ORDER BY {order}"""


def duckdb_counts(source, fmt, name, *, columns, keys, memory_limit=None, threads=None, max_pairs=None,
                  scheduler=None):
    from ultr_core.logs.mapping import file_columns
    from ultr_core.logs.normalise import ID_COLUMNS, register_normalised, repair_notes
    from ultr_core.logs.sql import _ident as q, connect, reading_error, reporting_budget
    with tempfile.TemporaryDirectory(prefix="ultr_duckdb_") as tmp, reporting_budget():
        source = spill_upload(source, fmt, tmp)
        con = connect(memory_limit, tmp, threads)
        try:
            state = register_normalised(con, source, fmt, name=name, text_columns=file_columns(columns, ("position",)),
                                        id_columns=file_columns(columns, ID_COLUMNS))
            types = {r[0]: str(r[1]) for r in con.execute("DESCRIBE norm").fetchall()}
            sel = select_columns(list(types), columns, keys + ["click"], name=name)
            nested = [c for c in dict.fromkeys(sel.values()) if "[" in types[c]
                      or types[c].upper().startswith(("STRUCT", "MAP", "UNION", "LIST"))]
            if nested:
                raise DataFormatError(name, f"column {nested[0]!r} holds {types[nested[0]]} values (lists or "
                                            "records); each row needs one plain value there")
            check_values(con, sel, types, name=name)
            dropped = _dedupe_view(con, sel, types, name)
            if state.get("counts") and not columns and not dropped and set(keys) <= {"query_id", "doc_id", "position"}:
                # the reader's own counts (Yandex: pages counted before unpivoting); clicks are 0/1 there
                group = ", ".join(f"{q(sel[k])} AS {q(k)}" for k in keys)
                order = ", ".join(f"{q(k)} NULLS LAST" for k in keys)
                sql = f"""SELECT {group}, sum(impressions)::BIGINT AS impressions, sum(clicks)::BIGINT AS clicks,
                            0 AS _bad_click, NULL::VARCHAR AS _bad_click_value
                          FROM {state['counts']} GROUP BY ALL ORDER BY {order}"""
            else:
                sql = _count_sql(con, sel, keys, "norm_kept" if dropped else "norm")
            if max_pairs is not None:                # count the groups first: never sort or materialise past the budget
                table = "norm_kept" if dropped else "norm"
                keys_sql = ", ".join(q(sel[k]) for k in keys)
                n = con.execute(f"SELECT count(*) FROM (SELECT DISTINCT {keys_sql} FROM {table})").fetchall()[0][0]
                _check_pairs(n, max_pairs, name)
            try:
                agg = con.sql(sql).df()
            except Exception as e:    # noqa: BLE001 — DuckDB's errors here are the input's problems
                raise reading_error(e, name, verb="cannot aggregate", kind=DataFormatError) from None
        finally:
            con.close()
    return agg, repair_notes(state) + dropped


def _check_pairs(n: int, max_pairs: int | None, name: str) -> None:
    if max_pairs is not None and n > max_pairs:
        raise DataFormatError(name, f"the log reduces to more than {max_pairs:,} distinct (document, factor) pairs, "
                                    "more than an upload may hold in this shared server's memory; analyse it on your "
                                    "own machine: python -m ultr_core ig FILE")


def _both_keys(doc: list[str]) -> tuple[list[str], tuple]:
    """Group keys that hold both document keys, and the alternative to ``doc``."""
    if doc == ["query_id", "doc_id"]:
        return doc, ("doc_id",)
    if doc == ["doc_id"]:
        return ["query_id", "doc_id"], ("query_id", "doc_id")
    return doc, ()


def _checked_arguments(bias, doc_columns, engine: str, document: str) -> list:
    """``ingest``'s bias columns as a list, after checking them, the engine and the document key."""
    from ultr_core.logs.mapping import DOCUMENT_KEYS
    bias = [bias] if isinstance(bias, str) else list(bias)
    if not bias:
        raise ConfigError("bias", "name at least one bias-factor column (e.g. position)")
    check_roles(bias, doc_columns)
    check_engine(engine, None, names=("engine", "scheduler"))
    if document not in DOCUMENT_KEYS:
        raise ConfigError("document", f"{document!r} is not a document key: use {', '.join(DOCUMENT_KEYS)}")
    return bias


def _ingest_ultra(source, name: str, bias: list, doc: list, group_doc: list, alternative: tuple,
                  max_pairs: int | None) -> CountTable:
    """An ULTRA folder (or an upload's archive of one) as a count table; its only bias factor is the position."""
    from ultr_core.data.archives import ultra_root
    from ultr_core.logs.ultra import ultra_frame
    other = [b for b in bias if b != "position"]
    if other:
        raise ConfigError("bias", f"an ULTRA folder has no column {other[0]!r}; its bias factor is the position")
    with ultra_root(source, name) as root:
        frame, notes = ultra_frame(root, name)
    table = CountTable.from_log(frame, ["position"], group_doc, source=name, notes=notes)
    _check_pairs(len(table), max_pairs, name)
    return replace(table, document=tuple(doc), alternative=alternative)


def ingest(source, fmt: str | None = None, *, bias=("position",), columns: dict | None = None,
           document: str = "auto", doc_columns=None, engine: str = "duckdb", scheduler: str | None = None,
           memory_limit: str | None = "2GB", threads: int | None = None, name: str | None = None,
           max_pairs: int | None = None) -> CountTable:
    """Reduce a click log to a :class:`CountTable` without loading it into memory.  With ``max_pairs`` (the
    Upload page: a shared server's budget), a log that reduces to more distinct (document, factor) pairs is
    refused before more than that many are materialised.

    ``source`` is a path, a glob of paths (``logs/*.csv.gz``) or bytes (an upload);
    ``fmt`` one of csv, tsv, parquet, yandex, yandex2013, baidu, ultra (inferred from the
    name or the content when omitted); ``columns`` renames source columns onto
    ``query_id``/``doc_id``/``position``/``click``/``shown``; ``bias`` the bias-factor columns;
    ``document`` ``"auto"`` (the format's default key), ``"query"`` or ``"global"``.

    >>> import io, pandas as pd
    >>> csv = b"query_id,doc_id,position,click\\nq1,a,1,1\\nq1,b,2,0\\nq2,a,1,0\\n"
    >>> t = ingest(csv, "csv", name="demo.csv")
    >>> t.document, t.alternative
    (('query_id', 'doc_id'), ('doc_id',))
    >>> cols = ["query_id", "doc_id", "position", "impressions", "clicks"]
    >>> t.frame.sort_values(["query_id", "doc_id"])[cols].values.tolist()
    [['q1', 'a', 1, 1, 1], ['q1', 'b', 2, 1, 0], ['q2', 'a', 1, 1, 0]]
    """
    from ultr_core.logs.mapping import default_document
    from ultr_core.logs.sniff import infer_format
    name = name or str(source)
    bias = _checked_arguments(bias, doc_columns, engine, document)
    from ultr_core.logs.sniff import format_from_name, resolve_source, unknown_format
    source = resolve_source(source, fmt, name)                          # paths, compression and format: once
    sniffed = fmt is None and format_from_name(name) is None
    fmt = (fmt or infer_format(source, name)).lower()
    doc = document_columns(default_document(fmt) if document == "auto" else document, doc_columns)
    group_doc, alternative = _both_keys(doc)
    if fmt == "ultra":
        return _ingest_ultra(source, name, bias, doc, group_doc, alternative, max_pairs)
    counts = engine_function(engine, "counts")

    def count(keys):
        return counts(source, fmt, name, columns=columns, keys=keys, memory_limit=memory_limit, threads=threads,
                      max_pairs=max_pairs, scheduler=scheduler)
    try:
        keys = list(dict.fromkeys(group_doc + bias + ["position"]))
        agg, notes = count(keys)
    except DataFormatError as e:          # a log without query ids keyed by doc_id alone: no alternative
        missing = isinstance(e, MissingColumnError)
        if sniffed and fmt in ("csv", "tsv") and (isinstance(e, UnreadableError) or (missing and not columns)):
            raise unknown_format(source, name) from None   # nothing said CSV: list what is accepted
        if group_doc == doc or not missing or "query_id" not in e.columns:
            raise
        group_doc, alternative = doc, ()
        keys = list(dict.fromkeys(group_doc + bias + ["position"]))
        agg, notes = count(keys)
    _check_pairs(len(agg), max_pairs, name)
    if len(agg) == 0:
        raise DataFormatError(name, "the log is empty (no shown rows)")
    agg = _validate(agg, group_doc, name)
    if not engines_by_key()[engine].sorted_counts:
        agg = agg.sort_values(keys, kind="stable", na_position="last").reset_index(drop=True)
    return CountTable(agg, tuple(doc), tuple(bias), name, tuple(notes), alternative)
