"""Reduction helpers shared by both engines of :mod:`ultr_core.logs.ingestion`: the column selection (the
user's mapping checked first), the ``shown`` rule, and the **Dask** engine with every wait bounded (a TCP
probe and Dask's handshake within :data:`DASK_CONNECT_TIMEOUT` seconds, the result within
:data:`DASK_RESULT_TIMEOUT`).  The same rows are kept as by DuckDB: duplicate (session, position) rows
dropped and counted, ``shown`` values other than 0/1/true/false refused.
"""
from __future__ import annotations

import pandas as pd

from ultr_core.errors import ConfigError, DataFormatError, MissingColumnError, show
from ultr_core.logs.clicklog import SHOWN_TEXT, check_mapping, not_decimal
from ultr_core.logs.ids import canonical_ids, missing_id_error, trimmed_ids

__all__ = ["probe_scheduler", "dask_client", "dask_frame", "select_columns", "DASK_CONNECT_TIMEOUT"]

_RESERVED = ("impressions", "clicks")
_SHOWN_TEXT = tuple(SHOWN_TEXT)          # the one rule for a ``shown`` flag (ultr_core.logs.clicklog)


def select_columns(available: list[str], columns: dict | None, needed: list[str], *, name: str) -> dict:
    """Map schema names → source columns (after the user's ``columns`` renaming)."""
    columns = dict(columns or {})
    check_mapping(columns)
    unknown = [c for c in columns if c not in available]
    if unknown:
        raise DataFormatError(name, f"mapped column(s) {', '.join(map(str, unknown))} not in the log "
                                    f"(it has {', '.join(map(str, available))})")
    renamed = {columns.get(c, c): c for c in available}
    missing = [c for c in needed if c not in renamed]
    if missing:
        raise MissingColumnError(name, f"missing column(s) {', '.join(missing)}; the log has "
                                       f"{', '.join(map(str, available))} — map them with columns=…", missing)
    clash = [c for c in needed if c in _RESERVED]
    if clash:
        raise ConfigError("bias", f"{', '.join(clash)} is a reserved name; rename the column")
    return {c: renamed[c] for c in needed} | {c: renamed[c] for c in ("shown", "session_id") if c in renamed}


def dask_counts(source, fmt, name, *, columns, keys, scheduler=None, memory_limit=None, threads=None,
                max_pairs=None):
    """Impressions, clicks and bad click values per ``keys`` group of a CSV/TSV/Parquet source, by Dask: read,
    select and rename, aggregate, compute (locally or on ``scheduler``), then check and convert as DuckDB does."""
    ddf = dask_frame(source, fmt, name)
    sel = select_columns(list(ddf.columns), columns, keys + ["click"], name=name)
    ddf = ddf[list(dict.fromkeys(sel.values()))].rename(columns={v: k for k, v in sel.items()})
    ids = [k for k in ("session_id", "query_id", "doc_id")
           if k in sel and not pd.api.types.is_numeric_dtype(ddf[k].dtype)]
    if ids:                                  # the one id rule (ultr_core.logs.ids): trimmed text before grouping
        ddf = ddf.assign(**{k: trimmed_ids(ddf[k]) for k in ids})
    agg, counts = _dask_graph(ddf, sel, keys)
    out, counts = _dask_compute(agg, counts, scheduler)
    return _dask_table(out, counts, keys, name)


def dask_frame(source, fmt: str, name: str):
    try:
        import dask.dataframe as dd
    except ImportError:
        raise ConfigError("engine", "the dask engine needs dask[dataframe] (pip install 'dask[dataframe]' "
                                    "distributed)") from None
    from ultr_core.logs.sniff import expand_paths, is_gzip
    if fmt not in ("csv", "tsv", "parquet"):
        raise ConfigError("engine", f"the dask engine reads csv, tsv and parquet; use duckdb for {fmt}")
    files = expand_paths(source, name)
    if fmt == "parquet":
        return dd.read_parquet(files)
    gz = is_gzip(source)
    return dd.read_csv(files, sep="\t" if fmt == "tsv" else ",", compression="gzip" if gz else None,
                       blocksize=None if gz else "64MB", dtype=str)


def _dask_graph(ddf, sel: dict, keys: list):
    """The lazy aggregation and the lazy row counts (rows, rows kept, bad ``shown`` values)."""
    import dask.dataframe as dd
    counts = {"rows": ddf.map_partitions(len).sum()}
    if "session_id" in sel:               # the kept log's rule: first row of each (session, position)
        counts["empty_session"] = ddf["session_id"].isna().sum()
        ddf = ddf.drop_duplicates(subset=["session_id", "position"], keep="first")
        counts["kept"] = ddf.map_partitions(len).sum()
    if "shown" in sel:                    # one rule: 0/1 or true/false, anything else refused
        flag = ddf["shown"].astype(str).str.strip().str.lower()
        counts["bad_shown"] = (~flag.isin(list(_SHOWN_TEXT))).sum()
        ddf = ddf[flag.isin(["1", "true"])]
    clk = dd.to_numeric(ddf["click"], errors="coerce")
    bad = (clk.isna() | ~clk.isin([0, 1])).astype("int64")
    ddf = ddf.assign(_one=1, _clk=clk.fillna(0), _bad=bad)
    return ddf.groupby(keys, dropna=False).agg({"_one": "sum", "_clk": "sum", "_bad": "sum"}), counts


def _dask_compute(agg, counts: dict, scheduler):
    if not scheduler:
        import dask
        out, *vals = dask.compute(agg, *counts.values(), scheduler="threads")
        return out, dict(zip(counts, vals))
    with dask_client(scheduler) as client:
        try:
            futures = client.compute([agg, *counts.values()])
            out, *vals = [f.result(timeout=DASK_RESULT_TIMEOUT) for f in futures]
            return out, dict(zip(counts, vals))
        except (OSError, TimeoutError) as e:
            raise ConfigError("scheduler", f"the Dask scheduler at {scheduler[:80]} stopped answering "
                                           f"({type(e).__name__}); the aggregation was abandoned") from None


def _dask_table(out, counts: dict, keys: list, name: str):
    """The computed aggregate as DuckDB's count table (columns, checks, inferred numbers) and its notes."""
    if counts.get("empty_session"):      # every reader's rule (ingestion._dedupe_view): a row needs its session's id
        raise missing_id_error(name, "session_id", counts["empty_session"])
    if counts.get("bad_shown"):
        raise DataFormatError(name, f"column 'shown' must hold 0/1 or true/false ({int(counts['bad_shown']):,} "
                                    "row(s) hold something else)")
    notes = []
    if counts.get("kept", counts["rows"]) < counts["rows"]:
        notes.append(f"dropped {int(counts['rows'] - counts['kept']):,} duplicate row(s) (same session and "
                     f"position) of {int(counts['rows']):,}")
    out = out.reset_index().rename(columns={"_one": "impressions", "_clk": "clicks", "_bad": "_bad_click"})
    if not pd.api.types.is_integer_dtype(out["position"].dtype):     # 0x2, 2.0: refused as DuckDB refuses them
        bad = not_decimal(out["position"])
        if bad.any():
            raise DataFormatError(name, "column 'position' must hold whole numbers written in decimal digits "
                                        f"(found {show(out['position'][bad].iloc[0], 16)})")
    out["_bad_click_value"] = "a non-0/1 value"
    for k in keys:            # CSV text → the numbers DuckDB would have inferred; ids by the one id rule
        if k in ("query_id", "doc_id"):
            out[k] = canonical_ids(out[k])
        elif k in ("position",) or out[k].dtype == object:
            conv = pd.to_numeric(out[k], errors="coerce")
            if k == "position" or (conv.notna() == out[k].notna()).all():
                out[k] = conv if k == "position" or (conv % 1 != 0).any() else conv.astype("Int64")
    return out, notes


#: seconds to reach a Dask scheduler (TCP connect, then Dask's handshake) and to wait for its result
DASK_CONNECT_TIMEOUT = 10
DASK_RESULT_TIMEOUT = 3600


def probe_scheduler(address: str, timeout: float | None = None) -> tuple[str, int]:
    """Check that ``address`` (``tcp://host:port``) accepts a TCP connection within ``timeout`` seconds;
    a :class:`ConfigError` names the address otherwise (before Dask would wait or misread another protocol)."""
    import socket
    from urllib.parse import urlsplit
    timeout = DASK_CONNECT_TIMEOUT if timeout is None else timeout
    u = urlsplit(address if "://" in address else f"tcp://{address}")
    if u.scheme == "inproc":                 # a scheduler in this process: nothing to wait on
        return address, 0
    try:
        host, port = u.hostname, u.port
    except ValueError:
        host = port = None
    if u.scheme not in ("tcp", "tls") or not host or not port:
        raise ConfigError("scheduler", f"{address[:80]!r} is not a Dask scheduler address (tcp://host:port)")
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            head = _first_bytes(sock, 8) if u.scheme == "tcp" else b"\0" * 8
    except OSError as e:
        raise ConfigError("scheduler", f"no Dask scheduler answers at {address[:80]} within {timeout:g} s "
                                       f"({e.strerror or type(e).__name__})") from None
    # a Dask peer opens with its handshake: an 8-byte little-endian frame length (a few hundred bytes)
    if len(head) < 8 or not 0 < int.from_bytes(head, "little") < 1 << 26:
        raise ConfigError("scheduler", f"{address[:80]} does not speak Dask's protocol (no handshake within "
                                       f"{timeout:g} s); check the address and port")
    return host, port


def _first_bytes(sock, n: int) -> bytes:
    """Up to ``n`` bytes the peer sends first (the socket's timeout bounds the wait; b"" on timeout)."""
    import socket
    buf = b""
    try:
        while len(buf) < n and (chunk := sock.recv(n - len(buf))):
            buf += chunk
    except socket.timeout:
        pass
    return buf


def dask_client(address: str):
    """A Dask client of ``address`` with every wait bounded: a TCP probe first, then Dask's handshake within
    :data:`DASK_CONNECT_TIMEOUT` (a server that speaks another protocol, or none, is named, not waited on)."""
    probe_scheduler(address)
    from distributed import Client
    try:
        return Client(address, set_as_default=False, timeout=f"{DASK_CONNECT_TIMEOUT}s")
    except Exception as e:        # noqa: BLE001 — Dask reports a foreign protocol as OSError, TimeoutError, even MemoryError
        raise ConfigError("scheduler", f"{address[:80]} does not answer as a Dask scheduler within "
                                       f"{DASK_CONNECT_TIMEOUT} s ({type(e).__name__})") from None


