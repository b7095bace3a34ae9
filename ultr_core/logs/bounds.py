"""What a file may unpack to, checked **before** it is materialised (docs/safety.md, "Bounded resources").

A file's size on disk says little about its size in memory: a 23 KB Parquet file whose string column is
dictionary-encoded (one 1 MiB value referenced by 8,000 rows) decodes to 8 GB, and a 2 MB zip of an
ULTRA folder unpacks to 900 MB of text and 400 M displayed documents.  These helpers read only
metadata, or stream, to bound rows, cells and decoded bytes first:

* :func:`read_parquet_bounded` — Parquet from bytes or a path: rows, leaf values and uncompressed bytes
  from the footer; string columns read **as dictionaries** and their decoded size summed before decoding.
* :func:`count_tokens` — whitespace-separated tokens, lines and ``-1`` paddings of a text file, streamed in
  16 MiB chunks (numpy), so an ULTRA ``init_list`` is sized before DuckDB splits it.

>>> import io, pyarrow as pa, pyarrow.parquet as pq
>>> buf = io.BytesIO()
>>> pq.write_table(pa.table({"q": [1, 2], "junk": pa.array(["x" * 1000, "x" * 1000]).dictionary_encode()}), buf)
>>> read_parquet_bounded(buf.getvalue(), "ok.parquet").num_rows
2
>>> read_parquet_bounded(buf.getvalue(), "bomb.parquet", max_decoded_bytes=1500)
Traceback (most recent call last):
...
ultr_core.errors.DataFormatError: bomb.parquet: column 'junk' decodes to 0.0 MB of text (2,000 bytes); the limit is 0.0
MB
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ultr_core.errors import DataFormatError

__all__ = ["read_parquet_bounded", "count_tokens", "MAX_PARQUET_CELLS", "MAX_DECODED_BYTES", "UPLOAD_DUCKDB_MEMORY",
           "UPLOAD_KEEP_ROWS", "UPLOAD_RSS_BUDGET", "UPLOAD_MAX_PAIRS"]

#: the Upload page's path (read out of core, then kept whole when small) stays under this peak RSS, bombs
#: included (tests/logs/test_hostile_input.py measures it in a fresh process)
UPLOAD_RSS_BUDGET = 1536 * 2 ** 20
#: DuckDB's memory while an upload is reduced (larger work spills to a temporary folder)
UPLOAD_DUCKDB_MEMORY = "1GB"
#: uploads of at most this many impressions are also kept whole as the session's current log
UPLOAD_KEEP_ROWS = 2_000_000
#: distinct (document, factor) pairs an upload may reduce to: its graph, plan and curves then stay within
#: UPLOAD_RSS_BUDGET (2 M pairs: 1.06 GB measured; 12 M pairs needed 4.5 GB)
UPLOAD_MAX_PAIRS = 2_000_000

#: values (rows × leaf columns) an uploaded Parquet log may hold: 20 M (e.g. 2 M rows × 10 columns), which
#: keeps the upload path within its 1.5 GB budget (docs/safety.md); the CLI's own files pass their own limit
MAX_PARQUET_CELLS = 20_000_000
#: bytes the string columns of a Parquet log may decode to, all together
MAX_DECODED_BYTES = 512 * 2 ** 20
#: leaf columns a Parquet log may have
MAX_PARQUET_COLUMNS = 10_000


def _footer(source, name: str):
    import pyarrow as pa
    import pyarrow.parquet as pq
    try:
        f = pq.ParquetFile(pa.BufferReader(bytes(source)) if isinstance(source, (bytes, bytearray, memoryview))
                           else str(source))
        return f, f.metadata, f.schema_arrow
    except Exception as e:        # pyarrow raises several types for a broken file
        raise DataFormatError(name, f"not a readable Parquet file ({_first(e)})") from None


def _first(e: Exception) -> str:
    return str(e).splitlines()[0][:160] if str(e) else type(e).__name__


def _check_footer(md, schema, name: str, max_cells: int) -> None:
    import pyarrow.types as pt
    if md.num_columns > MAX_PARQUET_COLUMNS:
        raise DataFormatError(name, f"{md.num_columns:,} columns exceed the limit of {MAX_PARQUET_COLUMNS:,}")
    nested = [f.name for f in schema if pt.is_nested(f.type)]
    if nested:
        raise DataFormatError(name, f"column {nested[0][:40]!r} holds lists or records; each row of a click log needs "
                                    "one plain value per column")
    cells = sum(md.row_group(i).column(j).num_values for i in range(md.num_row_groups) for j in range(md.num_columns))
    if cells > max_cells:
        raise DataFormatError(name, f"{md.num_rows:,} rows × {md.num_columns:,} columns ({cells:,} values) exceed the "
                                    f"limit of {max_cells:,} values")


def read_parquet_bounded(source, name: str, *, max_cells: int = MAX_PARQUET_CELLS,
                         max_decoded_bytes: int = MAX_DECODED_BYTES):
    """The Parquet table of ``source`` (bytes or a path), refused with a :class:`DataFormatError` naming the
    limit when its footer counts more than ``max_cells`` values, a column is nested, or its string columns
    decode to more than ``max_decoded_bytes`` (measured on the dictionaries, before decoding)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.types as pt
    f, md, schema = _footer(source, name)
    _check_footer(md, schema, name, max_cells)
    text = [fl.name for fl in schema if pt.is_string(fl.type) or pt.is_binary(fl.type)
            or pt.is_large_string(fl.type) or pt.is_large_binary(fl.type) or pt.is_dictionary(fl.type)]
    try:
        import pyarrow.parquet as pq
        src = pa.BufferReader(bytes(source)) if isinstance(source, (bytes, bytearray, memoryview)) else str(source)
        table = pq.ParquetFile(src, read_dictionary=text).read()
    except Exception as e:        # noqa: BLE001 — pyarrow raises several types for a broken file
        raise DataFormatError(name, f"not a readable Parquet file ({_first(e)})") from None
    total = 0
    for col in text:
        chunks = table.column(col).chunks
        size = 0
        for ch in chunks:
            if pt.is_dictionary(ch.type):
                lengths = pc.binary_length(ch.dictionary).fill_null(0)
                size += int(pc.sum(pc.take(lengths, ch.indices.fill_null(0))).as_py() or 0)
            else:
                size += ch.nbytes
        total += size
        if total > max_decoded_bytes:
            raise DataFormatError(name, f"column {col[:40]!r} decodes to {size / 2**20:,.1f} MB of text ({size:,} "
                                        f"bytes); "
                                        f"the limit is {max_decoded_bytes / 2**20:,.1f} MB")
    for col in text:
        i = table.schema.get_field_index(col)
        c = table.column(i)
        if pt.is_dictionary(c.type):
            table = table.set_column(i, col, c.cast(c.type.value_type))
    return table


def count_tokens(path: Path, chunk: int = 1 << 24) -> tuple[int, int, int]:
    """(tokens, lines, ``-1`` tokens) of a text file, streamed: whitespace-separated
    tokens counted with numpy, so a file is sized before a reader splits it.

    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("wb", delete=False) as fh:
    ...     _ = fh.write(b"q1 0 1 -1\\n q2  3 -1 -1 \\n")
    >>> count_tokens(Path(fh.name)); os.unlink(fh.name)
    (8, 2, 3)
    """
    tokens = lines = pads = 0
    prev_space = True
    tail = b"\n"
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            a = np.frombuffer(block, np.uint8)
            space = (a == 32) | (a == 9) | (a == 10) | (a == 13)
            starts = ~space & np.r_[prev_space, space[:-1]]
            tokens += int(starts.sum())
            lines += block.count(b"\n")
            both = tail + block
            pads += both.count(b" -1") + both.count(b"\t-1") - (tail.count(b" -1") + tail.count(b"\t-1"))
            prev_space, tail = bool(space[-1]), block[-2:]
    return tokens, lines + (not tail.endswith(b"\n")), pads
