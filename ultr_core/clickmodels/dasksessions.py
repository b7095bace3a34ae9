"""The session table of the click models built by **Dask** (``click-models --engine dask``, issue #62 item 2).

Dask reads a CSV/TSV/Parquet log (or a glob of them) on its workers — a distributed scheduler at
``--scheduler tcp://…`` or, without one, local threads — checks every row by the rules DuckDB applies
(:func:`~ultr_core.clickmodels.outofcore.refuse_rows`, ``logs.ingestion.VALUE_RULES``, the id rule of
:mod:`ultr_core.logs.ids`), codes the (query, document) pairs in DuckDB's order and groups the rows into one row
per session: the table ``sess`` that :mod:`ultr_core.clickmodels.patterns` otherwise builds in SQL.  From there one
code path splits, checks the lists and writes the patterns, so both engines give the same patterns, hence the
same fits.  File order is (partition, row in partition), the order in which DuckDB numbers the rows.

The session table comes back partition by partition (never whole) and is written to the spill folder; the client
therefore needs no shared file system with the workers.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ultr_core.errors import ConfigError, DataFormatError, show

__all__ = ["dask_sessions", "dask_rows"]

_NEEDED = ["session_id", "query_id", "doc_id", "position", "click"]
_FILE_ORDER_BITS = 40                      # _order = partition << 40 | row: 1 T rows a partition


def dask_sessions(con, source, fmt: str, *, name: str, folder: str, scheduler: str | None = None) -> list[str]:
    """Create ``pairs`` and ``sess`` in the DuckDB connection ``con`` from ``source`` by Dask; the session table's
    partitions are written under ``folder``.  Lists longer than MAX_DEPTH are refused.  Returns the readers' notes
    (none: Dask reads the tabular formats, which need no repair)."""
    from ultr_core.clickmodels.sessions import MAX_DEPTH as max_depth
    from ultr_core.logs.daskcounts import dask_client
    if scheduler:
        with dask_client(scheduler) as client:
            return _sessions(con, source, fmt, name, folder, max_depth, _Computer(client, scheduler))
    return _sessions(con, source, fmt, name, folder, max_depth, _Computer(None, None))


def dask_rows(con, source, fmt: str, *, name: str, folder: str, scheduler: str | None = None) -> tuple[dict, list]:
    """The shown rows by session (file order) and rank as arrays (``s``, ``pair``, ``position``, ``click``), from
    the session table Dask builds, its lists checked as the patterns' are; the table ``pairs`` in ``con``.  A log
    with a logging policy's ``propensity`` column is refused (Dask does not carry it; DuckDB does)."""
    from ultr_core.clickmodels.patterns import check_lists
    from ultr_core.clickmodels.sessions import PROPENSITY
    from ultr_core.logs.daskcounts import dask_frame
    if PROPENSITY in dask_frame(source, fmt, name).columns:
        raise ConfigError("--engine", f"the log has a '{PROPENSITY}' column, which the dask engine does not carry: "
                                      "use --engine duckdb")
    notes = dask_sessions(con, source, fmt, name=name, folder=folder, scheduler=scheduler)
    check_lists(con, name)
    top = con.execute("SELECT max(n) FROM sess").fetchall()[0][0]
    ranks = ", ".join(f"p{i}" for i in range(1, top + 1))
    arr = con.execute(f"""SELECT s, pair, position, CAST((cbits >> (position - 1)) & 1 AS INTEGER) AS click FROM (
                             SELECT dense_rank() OVER (ORDER BY k) AS s, cbits, unnest([{ranks}]) AS pair,
                                    unnest(range(1, {top + 1})) AS position FROM sess)
                         WHERE pair IS NOT NULL ORDER BY s, position""").fetchnumpy()
    return arr, notes


class _Computer:
    """``compute`` of Dask collections on the client (every failure of the cluster one message) or local threads."""

    def __init__(self, client, scheduler):
        self.client, self.scheduler = client, scheduler

    def compute(self, *things):
        import dask
        if self.client is None:
            return dask.compute(*things, scheduler="threads")
        from ultr_core.logs.daskcounts import DASK_RESULT_TIMEOUT
        try:
            return tuple(f.result(timeout=DASK_RESULT_TIMEOUT) for f in self.client.compute(list(things)))
        except _cluster_failures() as e:      # a dead worker, a lost scheduler, a timeout: one message
            raise self.failed(e) from None

    def write(self, frame, folder: str) -> None:
        """Write ``frame``'s partitions as ``folder/sess-i.parquet``: on local threads by Dask's writer (one
        graph, a partition at a time), on a cluster gathered as each finishes and written here (the workers need
        no access to ``folder``)."""
        import os
        if self.client is None:
            frame.to_parquet(folder, name_function=lambda i: f"sess-{i:06d}.parquet", write_index=False,
                             compute_kwargs={"scheduler": "threads"})
            return
        from distributed import as_completed
        try:
            futures = self.client.compute(frame.to_delayed())
            for i, future in enumerate(as_completed(futures, loop=self.client.loop)):
                future.result().to_parquet(os.path.join(folder, f"sess-{i:06d}.parquet"), index=False)
                future.release()
        except _cluster_failures() as e:
            raise self.failed(e) from None

    def failed(self, e: Exception) -> ConfigError:
        from ultr_core.errors import DiskFullError
        from ultr_core.logs.sql import disk_full
        if disk_full(e):                       # the disk filled where the session table was written
            return DiskFullError()
        return ConfigError("scheduler", f"the Dask cluster at {self.scheduler[:80]} failed during the run "
                                        f"({type(e).__name__}: a worker died or the scheduler stopped answering); "
                                        "nothing was written")


def _cluster_failures() -> tuple:
    """What a cluster raises when a worker dies or the scheduler goes: lost connections (OSError), timeouts, a task
    whose workers kept dying (KilledWorker) and futures cancelled with the scheduler."""
    from concurrent.futures import CancelledError

    from distributed import KilledWorker
    return OSError, TimeoutError, KilledWorker, CancelledError


def _sessions(con, source, fmt, name, folder, max_depth, computer) -> list[str]:
    from ultr_core.clickmodels.outofcore import ID_COLUMNS, refuse_rows
    from ultr_core.logs.daskcounts import dask_frame
    rows = _frame(dask_frame(source, fmt, name), name)
    checks = _checks(rows)
    *values, queries, docs = computer.compute(*checks.values(), rows["query_id"].drop_duplicates(),
                                              rows["doc_id"].drop_duplicates())
    counts = dict(zip(checks, values))
    _refuse_values(rows, counts, computer, name)
    shown = rows[rows["_shown"]] if "_shown" in rows.columns else rows
    whole = lambda v: int(v) if np.isfinite(v) else v                                      # noqa: E731
    refuse_rows((int(counts["n"]), int(counts["bad_click"]), _example(shown, "click", "_bad_click", computer)
                 if counts["bad_click"] else None, int(counts["low"]), whole(counts["lo"]), int(counts["high"]),
                 whole(counts["hi"])), name, empty={c: int(counts["empty_" + c]) for c in ID_COLUMNS})
    top = int(counts["hi"])
    if top > max_depth:
        raise DataFormatError(name, f"result lists of {top} exceed the {max_depth} ranks a click model describes")
    keys = _pair_table(computer.compute(shown[["query_id", "doc_id"]].drop_duplicates())[0], queries, docs)
    con.register("dask_pairs", keys[["query_id", "doc_id", "pair"]])
    con.execute("CREATE TEMP TABLE pairs AS SELECT * FROM dask_pairs ORDER BY pair")
    con.unregister("dask_pairs")
    _write_sessions(_session_frame(shown, keys, top), folder, computer)
    cols = ", ".join(f"CAST(p{i} AS BIGINT) AS p{i}" for i in range(1, top + 1))
    con.execute(f"""CREATE TEMP TABLE sess AS SELECT k, n, CAST(hi AS INTEGER) AS hi, ranks, cbits, {cols}
                    FROM read_parquet('{folder}/sess-*.parquet')""")
    return []


def _frame(ddf, name: str):
    """The needed columns, renamed by the log's own names, ids trimmed, with ``_order`` (file order), ``_pos``
    (the position as a number), ``_clk`` and ``_bad_*`` flags, ``_shown`` where the log has the column."""
    from ultr_core.clickmodels.sessions import check_session_columns
    from ultr_core.logs.daskcounts import select_columns
    from ultr_core.logs.ids import trimmed_ids
    check_session_columns(set(ddf.columns), name)
    sel = select_columns(list(ddf.columns), None, list(_NEEDED), name=name)
    ddf = ddf[list(dict.fromkeys(sel.values()))].rename(columns={v: k for k, v in sel.items()})
    text = {k: trimmed_ids(ddf[k]) for k in ("session_id", "query_id", "doc_id")
            if not pd.api.types.is_numeric_dtype(ddf[k].dtype)}
    ddf = ddf.assign(**text).map_partitions(_derive, "shown" in sel)
    return ddf


def _derive(df: pd.DataFrame, has_shown: bool, partition_info=None) -> pd.DataFrame:
    """One partition's derived columns (file order, numbers and their flags)."""
    from ultr_core.logs.clicklog import SHOWN_TEXT
    part = partition_info["number"] if partition_info else 0
    out = {"_order": (np.int64(part) << _FILE_ORDER_BITS) + np.arange(len(df), dtype=np.int64)}
    pos = df["position"]
    if pd.api.types.is_integer_dtype(pos.dtype):
        out["_bad_pos"] = np.zeros(len(df), bool)
        out["_pos"] = pos.astype("float64")
    else:
        txt = pos.astype("string").str.strip()
        out["_bad_pos"] = (pos.notna() & ~txt.str.fullmatch(r"[0-9]+").fillna(False)).to_numpy(bool)
        out["_pos"] = pd.to_numeric(txt.where(~out["_bad_pos"]), errors="coerce").astype("float64")
    clk = pd.to_numeric(df["click"].astype("string").str.strip() if df["click"].dtype == object or
                        pd.api.types.is_string_dtype(df["click"].dtype) else df["click"], errors="coerce")
    out["_bad_click"] = (clk.isna() | ~clk.isin([0, 1])).to_numpy(bool)
    out["_clk"] = clk.where(~out["_bad_click"], 0).astype("int64")
    if has_shown:
        flag = df["shown"].astype("string").str.strip().str.lower()
        out["_bad_shown"] = (df["shown"].notna() & ~flag.isin(list(SHOWN_TEXT)).fillna(False)).to_numpy(bool)
        out["_shown"] = flag.isin(["1", "true"]).fillna(False).to_numpy(bool)
    return df.assign(**out)


def _checks(rows) -> dict:
    """The lazy counts of every rule (the position and shown rules over every row, the rest over shown rows)."""
    from ultr_core.logs.clicklog import MAX_POSITION
    shown = rows[rows["_shown"]] if "_shown" in rows.columns else rows
    pos = shown["_pos"]
    out = {"bad_pos": rows["_bad_pos"].sum(), "n": shown["_order"].count(), "bad_click": shown["_bad_click"].sum(),
           "low": (pos < 1).sum(), "lo": pos.min(), "high": (pos > MAX_POSITION).sum(), "hi": pos.max(),
           **{"empty_" + c: shown[c].isna().sum() for c in ("session_id", "query_id", "doc_id")}}
    if "_bad_shown" in rows.columns:
        out["bad_shown"] = rows["_bad_shown"].sum()
    return out


def _refuse_values(rows, counts: dict, computer, name: str) -> None:
    """The position and ``shown`` rules (DuckDB's ``check_values``), first offending value named."""
    from ultr_core.logs.ingestion import VALUE_RULES
    for col, flag in (("position", "_bad_pos"), ("shown", "_bad_shown")):
        if counts.get(flag[1:]):
            raise DataFormatError(name, f"{VALUE_RULES[col]} (found {show(_example(rows, col, flag, computer), 16)}"
                                        f" in {int(counts[flag[1:]]):,} row(s))")


def _example(rows, col: str, flag: str, computer):
    """One value of ``col`` where ``flag`` holds (read only when a rule is broken)."""
    first = computer.compute(rows[rows[flag]][col].head(1, npartitions=-1, compute=False))[0]
    return first.iloc[0] if len(first) else None


def _pair_table(pairs: pd.DataFrame, queries: pd.Series, docs: pd.Series) -> pd.DataFrame:
    """The shown (query, document) pairs coded 0 … n − 1 in DuckDB's order of their ids under the one id rule
    (a column is numbers only when every id in the log, shown or not, is one) with the log's keys to join on."""
    from ultr_core.logs.ids import canonical_ids
    out = pairs.rename(columns={"query_id": "_q", "doc_id": "_d"}).reset_index(drop=True)
    for col, key, every in (("query_id", "_q", queries), ("doc_id", "_d", docs)):
        numeric = pd.api.types.is_integer_dtype(canonical_ids(every.reset_index(drop=True)).dtype)
        ids = canonical_ids(out[key])
        out[col] = ids if numeric or not pd.api.types.is_integer_dtype(ids.dtype) else ids.astype(str).astype(object)
    out = out.sort_values(["query_id", "doc_id"], kind="stable").reset_index(drop=True)
    out["pair"] = np.arange(len(out), dtype=np.int64)
    return out


def _session_frame(shown, keys: pd.DataFrame, top: int):
    """One row per session (``sess``): k the first row in file order, n rows, hi the last rank, ranks and clicks as
    bit masks (sums of distinct powers of two: n ranks sum to 2ⁿ − 1 only when they are 1 … n once each) and
    the pair at each rank."""
    rows = shown.merge(keys[["_q", "_d", "pair"]], left_on=["query_id", "doc_id"], right_on=["_q", "_d"])
    bit = lambda p: np.left_shift(np.int64(1), (p - 1).clip(0, 62).astype("int64"))      # noqa: E731
    rows = rows.assign(_one=1, _rank=rows["_pos"].map_partitions(bit, meta=("_rank", "int64")),
                       _cb=rows["_clk"] * rows["_pos"].map_partitions(bit, meta=("_cb", "int64")),
                       **{f"p{i}": rows["pair"].where(rows["_pos"] == i) for i in range(1, top + 1)})
    agg = {"_order": "min", "_one": "sum", "_pos": "max", "_rank": "sum", "_cb": "sum",
           **{f"p{i}": "max" for i in range(1, top + 1)}}
    out = rows.groupby("session_id").agg(agg, split_out=max(rows.npartitions, 1))
    return out.rename(columns={"_order": "k", "_one": "n", "_pos": "hi", "_rank": "ranks", "_cb": "cbits"})


def _write_sessions(frame, folder: str, computer) -> None:
    """The session table written as ``sess-i.parquet`` files, a rank a session does not show as null."""
    computer.write(frame.map_partitions(_session_part), folder)


def _session_part(part: pd.DataFrame) -> pd.DataFrame:
    part = part.reset_index(drop=True)
    pairs = [c for c in part.columns if c.startswith("p")]
    return part.astype({c: "Int64" for c in pairs})
