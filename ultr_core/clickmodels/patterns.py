"""Train and test sessions compressed to patterns where the log lives: DuckDB groups a log of any size into
distinct (shown pairs, click vector) patterns with their counts, so that a 100 M-row log reaches Python as the few
million patterns the models fit — never as one array per row (issue #34, item 7).

The split is PyClick's ``examples/Example.py`` as :func:`~ultr_core.clickmodels.sessions.split_sessions` does it:
the first ``int(S · split)`` sessions in file order (a tabular file's row order; the text readers number sessions in
file order) train, the
rest test, test sessions of queries unseen in training dropped and counted; the lists are checked as
:class:`~ultr_core.clickmodels.sessions.SessionArrays` checks them (one length D ≤ 10, ranks 1 … D once each).
"""
from __future__ import annotations

import tempfile
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ultr_core.clickmodels.cells import CELL_BYTES, cell_sums
from ultr_core.clickmodels.sessions import CHUNK_ROWS, MAX_DEPTH, PYCLICK_PRIOR, SessionTable, per_pair
from ultr_core.errors import ConfigError, DataFormatError
from ultr_core.logs.engines import check_engine, engine_function

__all__ = ["SplitPatterns", "PatternFile", "patterns_from_source", "IN_MEMORY_PATTERNS", "PATTERN_BYTES",
           "duckdb_sessions", "check_lists"]

def _sessions_sql(depth: int) -> str:
    """One row per session: its size, the ranks it shows as a bit mask, its clicks as a bit mask and the pair shown
    at each rank — fixed-width aggregates only, so that DuckDB can spill the grouping to disk."""
    cols = ", ".join(f"max(pair) FILTER (WHERE position = {i}) AS p{i}" for i in range(1, depth + 1))
    return f"""CREATE TEMP TABLE sess AS SELECT session_id, min(_order) AS k, count(*) AS n, max(position) AS hi,
        bit_or(CAST(1 AS BIGINT) << (position - 1)) AS ranks, sum(CAST(click AS BIGINT) << (position - 1)) AS cbits,
        {cols} FROM rows JOIN pairs USING (query_id, doc_id) GROUP BY session_id"""


#: bytes of fit state a held pattern may take (its pairs, clicks and the fits' (pattern, rank) arrays at 10 ranks):
#: a memory limit of 2 GB holds 1,000,000 distinct (result list, click) patterns, training and test together, as
#: :class:`~ultr_core.clickmodels.sessions.SessionTable` s; more are read from disk chunk by chunk
#: (:class:`PatternFile`)
PATTERN_BYTES = 2_000
IN_MEMORY_PATTERNS = 2_000_000_000 // PATTERN_BYTES


@dataclass(frozen=True)
class PatternFile:
    """Patterns on disk (a Parquet file DuckDB wrote: ``p1 … pD`` the pair codes, −1 past a list's end, ``cbits``
    the clicks as a bit mask, ``w`` the sessions) read in chunks of :data:`~ultr_core.clickmodels.sessions.CHUNK_ROWS`
    — every fit and score iterates :meth:`chunks`, so memory is bounded by a chunk and the per-pair arrays, not by
    the log."""

    path: str
    n_pairs: int
    n_sessions: int
    depth: int
    rows: int
    total_weight: float
    attr_prior: tuple = PYCLICK_PRIOR
    in_memory_rows: int = IN_MEMORY_PATTERNS
    #: the columns are also stored raw beside the file (:meth:`with_raw_columns`): a fit's passes read a chunk's
    #: bytes instead of decoding Parquet each time (issue #62: 3.4 of 30 s of DBN on 750,000 patterns)
    raw: bool = False
    #: other sessions per pattern than the file's ``w`` (a raw float64 file, one per pattern in file order): a part
    #: of the training sessions, as the learned prior's held-out fifth (:func:`~ultr_core.clickmodels.prior.hold_out`)
    weight_file: str | None = None
    #: distinct cells a cell sum over the file may hold before it leaves key ranges to later passes
    #: (:func:`~ultr_core.clickmodels.cells.cell_sums`; None: the default memory limit's)
    cell_budget: int | None = None

    def chunks(self, rows: int | None = None):
        parts = self._patterns(rows or CHUNK_ROWS)
        if self.weight_file is None:
            yield from parts
            return
        with open(self.weight_file, "rb") as f:
            for c in parts:
                w = np.fromfile(f, np.float64, len(c.weight))
                if (w > 0).any():     # the held-out fifth weighs 0 on about four patterns in five (issue #62)
                    yield c.reweighted(w)

    def _patterns(self, rows: int):
        if self.raw:
            yield from self._raw_chunks(rows)
            return
        import pyarrow.parquet as pq
        with pq.ParquetFile(self.path) as f:
            for batch in f.iter_batches(batch_size=rows):
                yield _table({k: batch.column(k).to_numpy() for k in batch.schema.names}, self.depth,
                             self.n_pairs, self.n_sessions, self.attr_prior)

    def _columns(self) -> dict:
        """Each column's raw file and its dtype (pair codes as int32 where they fit)."""
        code = np.int32 if self.n_pairs < 2**31 else np.int64
        return {**{f"p{i}": (f"{self.path}.p{i}", code) for i in range(1, self.depth + 1)},
                "cbits": (f"{self.path}.cbits", np.int16), "w": (f"{self.path}.w", np.float64)}

    def with_raw_columns(self) -> "PatternFile":
        """The file's columns written raw beside it in one pass (memory: one batch); the copy that reads them."""
        from dataclasses import replace

        import pyarrow.parquet as pq
        cols = self._columns()
        outs = {k: open(path, "wb") for k, (path, _) in cols.items()}
        try:
            with pq.ParquetFile(self.path) as f:
                for batch in f.iter_batches(batch_size=CHUNK_ROWS):
                    for k, (_, dtype) in cols.items():
                        np.asarray(batch.column(k).to_numpy(), dtype).tofile(outs[k])
        finally:
            for out in outs.values():
                out.close()
        return replace(self, raw=True)

    def _raw_chunks(self, rows: int):
        cols = self._columns()
        files = {k: open(path, "rb") for k, (path, _) in cols.items()}
        try:
            for first in range(0, self.rows, rows):
                n = min(rows, self.rows - first)
                part = {}
                for k, (_, dtype) in cols.items():
                    f = files[k]
                    f.seek(first * np.dtype(dtype).itemsize)
                    part[k] = np.fromfile(f, dtype, n)
                yield _table(part, self.depth, self.n_pairs, self.n_sessions, self.attr_prior)
        finally:
            for f in files.values():
                f.close()

    def per_pair(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return per_pair(self)

    def cells(self, previous_click: bool = False):
        return cell_sums(self, previous_click, budget=self.cell_budget)

    def load(self) -> SessionTable:
        """The whole file as one in-memory table."""
        parts = list(self.chunks(max(self.rows, 1)))
        return parts[0] if parts else _table({**{f"p{i}": np.zeros(0, np.int64) for i in range(1, self.depth + 1)},
                                              "cbits": np.zeros(0, np.int64), "w": np.zeros(0)}, self.depth,
                                             self.n_pairs, self.n_sessions, self.attr_prior)


def _table(cols: dict, depth: int, n_pairs: int, n_sessions: int, prior: tuple) -> SessionTable:
    """One batch of a pattern file as a :class:`SessionTable` (padding: pair 0, unclicked, masked out).  Every pass
    of every fit builds its chunks here, so it writes each array once: the clicks unpacked from the bit mask's two
    little-endian bytes (a list is at most :data:`~ultr_core.clickmodels.sessions.MAX_DEPTH` = 10 ranks deep)."""
    n = len(cols["w"])
    pairs = np.empty((n, depth), np.int64)
    for i in range(depth):
        pairs[:, i] = cols[f"p{i + 1}"]
    bits = np.ascontiguousarray(np.asarray(cols["cbits"]).astype("<u2"))
    clicks = np.unpackbits(bits.view(np.uint8).reshape(n, 2), axis=1, count=depth, bitorder="little").view(bool)
    shown = pairs >= 0
    full = bool(shown.all())
    return SessionTable(pairs if full else np.maximum(pairs, 0), clicks, np.array(cols["w"], np.float64), n_pairs,
                        n_sessions, prior, None if full else shown)


@dataclass(frozen=True)
class SplitPatterns:
    """Training and test patterns on one coding of (query, document) pairs (``pair_keys``, ``pair_query``)."""

    train: SessionTable
    test: SessionTable
    pair_keys: pd.DataFrame
    pair_query: np.ndarray
    dropped: int
    notes: tuple = ()          # what the reader repaired (ignored or repeated clicks)
    directory: object = None   # the temporary directory of pattern files read from disk (closed by :meth:`close`)

    @property
    def depth(self) -> int:
        return self.train.depth

    def close(self) -> None:
        if self.directory is not None:
            self.directory.cleanup()

    def __enter__(self) -> "SplitPatterns":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def patterns_from_source(source, fmt: str, name: str, *, split: float = 0.75, memory_limit: str = "2GB",
                         in_memory: int | None = None, engine: str = "duckdb",
                         scheduler: str | None = None) -> SplitPatterns:
    """The split patterns of a log file (or glob), grouped by DuckDB under ``memory_limit`` (spilling to disk) and
    written to Parquet in key order (deterministic); up to ``in_memory`` patterns are then held as
    :class:`SessionTable` s, more are read chunk by chunk (:class:`PatternFile`, its directory removed by
    :meth:`SplitPatterns.close`; ``in_memory`` None: ``memory_limit`` ÷ :data:`PATTERN_BYTES`), and the cell sums
    over a file hold up to ``memory_limit`` ÷ :data:`~ultr_core.clickmodels.cells.CELL_BYTES` cells.  ``engine`` builds
    the session table (:func:`~ultr_core.logs.engines.log_engines`: DuckDB, or Dask on ``scheduler`` or
    local threads)."""
    from ultr_core.logs.sql import connect, memory_bytes, reporting_budget
    in_memory = memory_bytes(memory_limit) // PATTERN_BYTES if in_memory is None else in_memory
    if not 0 < split < 1:
        raise ConfigError("split", f"must be a number in (0, 1), got {split!r}")
    directory = tempfile.TemporaryDirectory(prefix="ultr-patterns-")
    try:
        with reporting_budget():
            con = connect(memory_limit, directory.name)
            try:
                check_engine(engine, scheduler)
                notes = engine_function(engine, "sessions")(con, source, fmt, name=name, folder=directory.name,
                                                            scheduler=scheduler)
                depth, n_sessions = check_lists(con, name)
                cut = int(n_sessions * split)
                if cut == 0 or cut == n_sessions:
                    raise ConfigError("split", f"{split} of {n_sessions} sessions leaves no training or no test "
                                               "session")
                files, dropped = _write_patterns(con, directory.name, depth, cut, name)
                keys = con.execute("SELECT query_id, doc_id FROM pairs ORDER BY pair").df()
            finally:
                con.close()
        pair_query = pd.factorize(keys["query_id"], sort=True)[0]
        budget = memory_bytes(memory_limit) // CELL_BYTES
        train, test = (PatternFile(path, len(keys), sessions, depth, rows, total, in_memory_rows=in_memory,
                                   cell_budget=budget)
                       for path, sessions, rows, total in ((files[0][0], cut, *files[0][1:]),
                                                           (files[1][0], n_sessions - cut - dropped, *files[1][1:])))
        if train.rows + test.rows <= in_memory:
            out = SplitPatterns(train.load(), test.load(), keys, pair_query, dropped, tuple(notes))
            directory.cleanup()
            return out
        return SplitPatterns(train.with_raw_columns(), test.with_raw_columns(), keys, pair_query, dropped,
                             tuple(notes), directory)
    except BaseException:
        directory.cleanup()      # nothing half written stays: the spill folder goes with every failure
        raise


def duckdb_sessions(con, source, fmt: str, *, name: str, folder: str, scheduler: str | None = None) -> list[str]:
    """The session table ``sess`` built by DuckDB in SQL; returns the readers' repair notes."""
    from ultr_core.clickmodels.outofcore import register_rows
    from ultr_core.logs.sql import run_sql
    top, notes = register_rows(con, source, fmt, name=name)
    if top > MAX_DEPTH or top < 1:
        raise DataFormatError(name, f"result lists of {top} exceed the {MAX_DEPTH} ranks a click model "
                                    "describes" if top > MAX_DEPTH else "positions must start at 1")
    run_sql(con, _sessions_sql(top), name)
    return notes


def _write_patterns(con, folder: str, depth: int, cut: int, name: str) -> tuple[list, int]:
    """Training and test patterns written to ``folder`` as Parquet in key order — test patterns of queries unseen in
    training dropped — as [(path, rows, sessions)] × 2, and the sessions dropped."""
    import os

    from ultr_core.logs.sql import run_sql
    first_test = con.execute("SELECT k FROM sess ORDER BY k LIMIT 1 OFFSET ?", [cut]).fetchall()[0][0]
    cols = ", ".join(f"p{i}" for i in range(1, depth + 1))
    run_sql(con, f"""CREATE TEMP TABLE pat AS SELECT k < {int(first_test)} AS train,
                     {", ".join(f"coalesce(p{i}, -1) AS p{i}" for i in range(1, depth + 1))}, cbits,
                     CAST(count(*) AS DOUBLE) AS w FROM sess GROUP BY ALL""", name)
    run_sql(con, "DROP TABLE sess", name)
    run_sql(con, """CREATE TEMP TABLE pat_q AS SELECT pat.*, pairs.query_id IN (SELECT DISTINCT pairs.query_id FROM
                    pat JOIN pairs ON pat.p1 = pairs.pair WHERE pat.train) AS seen FROM pat JOIN pairs
                    ON pat.p1 = pairs.pair""", name)
    files = []
    for which, where in (("train", "train"), ("test", "NOT train AND seen")):
        path = os.path.join(folder, f"{which}.parquet")
        run_sql(con, f"COPY (SELECT {cols}, cbits, w FROM pat_q WHERE {where} ORDER BY {cols}, cbits) TO "
                     f"'{path}' (FORMAT parquet, ROW_GROUP_SIZE {CHUNK_ROWS})", name)
        rows, total = con.execute(f"SELECT count(*), coalesce(sum(w), 0) FROM pat_q WHERE {where}").fetchall()[0]
        files.append((path, int(rows), float(total)))
    dropped = con.execute("SELECT coalesce(sum(w), 0) FROM pat_q WHERE NOT train AND NOT seen").fetchall()[0][0]
    return files, int(dropped)


def check_lists(con, name: str) -> tuple[int, int]:
    """(D, sessions): D the longest list (≤ MAX_DEPTH); every session shows ranks 1 … n once each."""
    n_sessions, hi_n = con.execute("SELECT count(*), max(n) FROM sess").fetchall()[0]
    if hi_n > MAX_DEPTH:
        raise DataFormatError(name, f"result lists of {hi_n} exceed the {MAX_DEPTH} ranks a click model describes")
    gaps = con.execute("SELECT k, n FROM (SELECT row_number() OVER (ORDER BY k) AS k, n, ranks FROM sess) WHERE "
                       "ranks <> (CAST(1 AS BIGINT) << n) - 1 ORDER BY k LIMIT 1").fetchall()
    if gaps:
        raise DataFormatError(name, f"session {gaps[0][0]} (in file order) does not show ranks 1 to {gaps[0][1]} once "
                                    "each: every session must show ranks 1 … n")
    return int(hi_n), int(n_sessions)
