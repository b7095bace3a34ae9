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
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ultr_core.clickmodels.sessions import MAX_DEPTH, SessionTable
from ultr_core.errors import ConfigError, DataFormatError

__all__ = ["SplitPatterns", "patterns_from_source"]

def _sessions_sql(depth: int) -> str:
    """One row per session: its size, the ranks it shows as a bit mask, its clicks as a bit mask and the pair shown
    at each rank — fixed-width aggregates only, so that DuckDB can spill the grouping to disk."""
    cols = ", ".join(f"max(pair) FILTER (WHERE position = {i}) AS p{i}" for i in range(1, depth + 1))
    return f"""CREATE TEMP TABLE sess AS SELECT session_id, min(_order) AS k, count(*) AS n, max(position) AS hi,
        bit_or(CAST(1 AS BIGINT) << (position - 1)) AS ranks, sum(CAST(click AS BIGINT) << (position - 1)) AS cbits,
        {cols} FROM rows JOIN pairs USING (query_id, doc_id) GROUP BY session_id"""


@dataclass(frozen=True)
class SplitPatterns:
    """Training and test patterns on one coding of (query, document) pairs (``pair_keys``, ``pair_query``)."""

    train: SessionTable
    test: SessionTable
    pair_keys: pd.DataFrame
    pair_query: np.ndarray
    dropped: int
    notes: tuple = ()          # what the reader repaired (ignored or repeated clicks)

    @property
    def depth(self) -> int:
        return self.train.depth


def patterns_from_source(source, fmt: str, name: str, split: float = 0.75, memory_limit: str = "2GB") -> SplitPatterns:
    """The split patterns of a log file (or glob), grouped by DuckDB under ``memory_limit`` (spilling to disk)."""
    from ultr_core.clickmodels.outofcore import register_rows
    from ultr_core.logs.sql import connect, run_sql
    if not 0 < split < 1:
        raise ConfigError("split", f"must be a number in (0, 1), got {split!r}")
    with tempfile.TemporaryDirectory() as tmp:
        con = connect(memory_limit, tmp)
        try:
            top, notes = register_rows(con, source, fmt, name)
            if top > MAX_DEPTH or top < 1:
                raise DataFormatError(name, f"result lists of {top} exceed the {MAX_DEPTH} ranks a click model "
                                            "describes" if top > MAX_DEPTH else "positions must start at 1")
            run_sql(con, _sessions_sql(top), name)
            depth, n_sessions = _check_lists(con, name)
            cut = int(n_sessions * split)
            if cut == 0 or cut == n_sessions:
                raise ConfigError("split", f"{split} of {n_sessions} sessions leaves no training or no test session")
            first_test = con.execute("SELECT k FROM sess ORDER BY k LIMIT 1 OFFSET ?", [cut]).fetchall()[0][0]
            cols = ", ".join(f"coalesce(p{i}, -1) AS p{i}" for i in range(1, depth + 1))
            pat = con.execute(f"SELECT k < ? AS train, {cols}, cbits, count(*) AS w FROM sess GROUP BY ALL",
                              [first_test]).fetchnumpy()
            keys = con.execute("SELECT query_id, doc_id FROM pairs ORDER BY pair").df()
        finally:
            con.close()
    return replace(_split(pat, keys, depth, cut, n_sessions), notes=tuple(notes))


def _check_lists(con, name: str) -> tuple[int, int]:
    """(D, sessions): D the longest list (≤ MAX_DEPTH); every session shows ranks 1 … n once each."""
    n_sessions, hi_n = con.execute("SELECT count(*), max(n) FROM sess").fetchall()[0]
    if hi_n > MAX_DEPTH:
        raise DataFormatError(name, f"result lists of {hi_n} exceed the {MAX_DEPTH} ranks a click model describes")
    gaps = con.execute("SELECT k FROM (SELECT row_number() OVER (ORDER BY k) AS k, n, ranks FROM sess) WHERE "
                       "ranks <> (CAST(1 AS BIGINT) << n) - 1 ORDER BY k LIMIT 1").fetchall()
    if gaps:
        raise DataFormatError(name, f"session {gaps[0][0]} (in file order) does not show ranks 1 to n once each: "
                                    "every session must show ranks 1 … n")
    return int(hi_n), int(n_sessions)


def _split(pat: dict, keys: pd.DataFrame, depth: int, cut: int, n_sessions: int) -> SplitPatterns:
    """Patterns → training and test :class:`SessionTable` s; test patterns of unseen queries dropped."""
    pairs = np.stack([np.asarray(pat[f"p{i}"], np.int64) for i in range(1, depth + 1)], axis=1)
    bits = np.asarray(pat["cbits"], np.int64)
    clicks = ((bits[:, None] >> np.arange(depth)[None, :]) & 1).astype(bool)
    weight = np.asarray(pat["w"], np.float64)
    train = np.asarray(pat["train"], bool)
    pair_query = pd.factorize(keys["query_id"], sort=True)[0]
    query = pair_query[pairs[:, 0]]
    seen = np.isin(query, np.unique(query[train]))
    test = ~train & seen
    dropped = int(weight[~train & ~seen].sum())
    n_pairs = len(keys)
    shown = pairs >= 0
    pairs = np.maximum(pairs, 0)                   # padding: pair 0, unclicked, masked out of every count
    mask = (lambda rows: None) if shown.all() else (lambda rows: shown[rows])
    return SplitPatterns(SessionTable(pairs[train], clicks[train], weight[train], n_pairs, cut, shown=mask(train)),
                         SessionTable(pairs[test], clicks[test], weight[test], n_pairs,
                                      n_sessions - cut - dropped, shown=mask(test)), keys, pair_query, dropped)
