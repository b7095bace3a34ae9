"""A click log whose result lists vary as a real log's do (issue #62): ``--sessions`` sessions over ``--queries``
queries, each session showing ``--depth`` of its query's ``--docs`` documents in a fresh random order, clicks drawn
by PBM (attractiveness per (query, document) uniform in [0, 0.5], examination 1/rank).  Nearly every session is its
own (result list, click pattern): memory and time of a click-model fit follow the sessions, not repetition.

Written as Parquet in row groups of ``--chunk`` sessions (memory bounded by the chunk, not the log)::

    python benchmarks/varied_lists.py OUT.parquet --sessions 10000000      # 100 M rows, about 2 minutes
"""
from __future__ import annotations

import argparse

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq


def chunk_table(rng, first: int, n: int, *, queries: int, docs: int, depth: int, attract: np.ndarray) -> pa.Table:
    """Sessions ``first … first + n − 1`` as one Arrow table (session_id, query_id, doc_id, position, click)."""
    q = rng.integers(0, queries, n)
    order = np.argsort(rng.random((n, docs)), axis=1)[:, :depth]
    exam = 1.0 / np.arange(1, depth + 1)
    click = rng.random((n, depth)) < attract[q[:, None], order] * exam[None, :]
    return pa.table({"session_id": np.repeat(np.arange(first, first + n, dtype=np.int64), depth),
                     "query_id": np.repeat(q.astype(np.int32), depth),
                     "doc_id": (q[:, None].astype(np.int64) * docs + order).ravel(),
                     "position": np.tile(np.arange(1, depth + 1, dtype=np.int8), n),
                     "click": click.ravel().astype(np.int8)})


def write_log(path: str, *, sessions: int, queries: int = 100_000, docs: int = 20, depth: int = 10,
              chunk: int = 500_000, seed: int = 0) -> int:
    """Write the log; returns its rows."""
    rng = np.random.default_rng(seed)
    attract = rng.uniform(0.0, 0.5, (queries, docs))
    writer = None
    try:
        for first in range(0, sessions, chunk):
            t = chunk_table(rng, first, min(chunk, sessions - first), queries=queries, docs=docs, depth=depth,
                            attract=attract)
            writer = writer or pq.ParquetWriter(path, t.schema)
            writer.write_table(t)
    finally:
        if writer is not None:
            writer.close()
    return sessions * depth


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--sessions", type=int, default=1_000_000)
    p.add_argument("--queries", type=int, default=100_000)
    p.add_argument("--docs", type=int, default=20)
    p.add_argument("--depth", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    rows = write_log(a.out, sessions=a.sessions, queries=a.queries, docs=a.docs, depth=a.depth, seed=a.seed)
    print(f"{a.out}: {rows:,} rows")


if __name__ == "__main__":
    main()
