"""Click logs: the :class:`ClickLog` table, every real format's reader, and the reduction of a log
to the (document, bias factor) count table the identifiability graph needs.

A log flows through this package in one direction, each module importing only those before it:

1. :mod:`.sniff` — where the log is (bytes, path, glob) and what format it is;
2. :mod:`.sql` — the shared DuckDB plumbing (raw lines, errors with their line number);
3. :mod:`.yandex`, :mod:`.sessions` (Baidu-ULTR, PyClick) and the tabular reader in
   :mod:`.normalise` — each format into the one **normalised view** (session, query, document,
   position, click, extras); :mod:`.ultra` — ULTRA folders as displayed lists;
4. :mod:`.mapping` — a normalised frame mapped onto a :class:`ClickLog` (in-memory logs for the app:
   :func:`read_user_log`), with :mod:`.coding` for bias-factor codes;
5. :mod:`.ingestion` — the out-of-core path: :func:`ingest` reads, normalises and reduces a log of
   any size to a :class:`CountTable` on DuckDB (or Dask), which :mod:`ultr_core.identifiability`
   analyses.  The ``ig`` command enters here once and leaves with that table.

>>> from ultr_core.logs import ingest
>>> csv = b"query_id,doc_id,position,click\\nq1,a,1,1\\nq1,b,2,0\\nq2,a,1,0\\nq2,b,2,1\\n"
>>> table = ingest(csv, "csv", name="toy.csv")
>>> int(table.frame["impressions"].sum()), int(table.frame["clicks"].sum())
(4, 2)
"""
from ultr_core._lazy import lazy

__all__ = ["ClickLog", "CountTable", "ingest", "document_columns", "read_user_log", "frame_to_log", "file_id_frame",
           "peek_columns",
           "guess_mapping", "default_document", "read_normalised", "register_normalised", "infer_format",
           "sniff_format", "format_from_name", "factor_codes", "lookup_codes", "format_value", "tuple_labels",
           "MISSING"]

# imported on first use (ultr_core._lazy): the CLI starts without pandas, scipy or torch
__getattr__, __dir__ = lazy(__name__, {
    "ClickLog": "ultr_core.logs.clicklog",
    "MISSING": "ultr_core.logs.coding",
    "factor_codes": "ultr_core.logs.coding",
    "format_value": "ultr_core.logs.coding",
    "lookup_codes": "ultr_core.logs.coding",
    "tuple_labels": "ultr_core.logs.coding",
    "CountTable": "ultr_core.logs.ingestion",
    "document_columns": "ultr_core.logs.ingestion",
    "ingest": "ultr_core.logs.ingestion",
    "default_document": "ultr_core.logs.mapping",
    "file_id_frame": "ultr_core.logs.mapping",
    "frame_to_log": "ultr_core.logs.mapping",
    "guess_mapping": "ultr_core.logs.mapping",
    "peek_columns": "ultr_core.logs.mapping",
    "read_user_log": "ultr_core.logs.mapping",
    "read_normalised": "ultr_core.logs.normalise",
    "register_normalised": "ultr_core.logs.normalise",
    "format_from_name": "ultr_core.logs.sniff",
    "infer_format": "ultr_core.logs.sniff",
    "sniff_format": "ultr_core.logs.sniff",
})
