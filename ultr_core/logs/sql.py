"""The DuckDB plumbing every reader shares: a connection, quoting, the raw-lines view of a source,
errors with the file's line, and the normalised view built from impressions and click rows.
(Underscored names are private to :mod:`ultr_core.logs`.)
"""
from __future__ import annotations

import errno
import gzip
import re
from contextlib import contextmanager

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv

from ultr_core.errors import ConfigError, DataFormatError, DiskFullError, UnreadableError, show
from ultr_core.logs.sniff import _is_bytes, expand_paths, is_gzip

__all__ = ["connect", "check_memory_limit", "memory_bytes", "run_sql", "reading_error", "disk_full",
           "budget_error", "reporting_budget"]

_SEP = "\x1f"            # a delimiter no log line contains: each line is read as one value


# --------------------------------------------------------------------------- DuckDB
def connect(memory_limit: str | None = None, temp_dir: str | None = None, threads: int | None = None):
    """A fresh in-memory DuckDB connection; ``temp_dir`` lets large aggregations spill to disk
    (the caller owns and removes it)."""
    import duckdb
    con = duckdb.connect(":memory:")
    if memory_limit:
        con.execute("SET memory_limit = ?", [check_memory_limit(memory_limit)]).fetchall()
    if temp_dir:
        con.execute("SET temp_directory = ?", [str(temp_dir)]).fetchall()
    if threads:
        con.execute(f"SET threads = {int(threads)}").fetchall()
    return con


_MEMORY = re.compile(r"\s*([0-9]+(\.[0-9]+)?)\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)\s*", re.IGNORECASE)


def check_memory_limit(value) -> str:
    """A DuckDB memory limit such as ``2GB`` or ``512 MiB``, validated (it reaches DuckDB as a bound
    parameter, never as SQL text).

    >>> check_memory_limit("2GB")
    '2GB'
    >>> check_memory_limit("2GB'; COPY t TO 'x.csv'; --")
    Traceback (most recent call last):
    ...
    ultr_core.errors.ConfigError: --memory-limit: "2GB'; COPY t TO 'x.c…" is not a size: use a number and a unit, e.g.
    2GB or 512MiB
    """
    m = _MEMORY.fullmatch(str(value))
    if not m or float(m.group(1)) <= 0:
        raise ConfigError("--memory-limit", f"{show(str(value), 20)} is not a size: use a number "
                                            "and a unit, e.g. 2GB or 512MiB")
    return str(value).strip()


def memory_bytes(value) -> int:
    """A checked memory limit in bytes (kB, MB, … powers of 1000; KiB, MiB, … of 1024, as DuckDB reads them).

    >>> memory_bytes("2GB"), memory_bytes("512 MiB")
    (2000000000, 536870912)
    """
    m = _MEMORY.fullmatch(check_memory_limit(value))
    unit = m.group(3).upper()
    power = "BKMGT".index(unit[0])
    return int(float(m.group(1)) * ((1024 if "I" in unit else 1000) ** power))


def _q(s: str) -> str:
    return "'" + str(s).replace("'", "''") + "'"


def _ident(s: str) -> str:
    return '"' + str(s).replace('"', '""') + '"'


def _register_lines(con, source, name: str) -> None:
    """View ``raw(ln, line)``: every line of the source with its 1-based line number
    (blank lines are NULL or '')."""
    if _is_bytes(source):
        data = bytes(source)
        if data[:2] == b"\x1f\x8b":
            try:
                data = gzip.decompress(data)
            except (OSError, EOFError) as e:
                raise DataFormatError(name, f"broken gzip data ({e})") from None
        ro = pcsv.ReadOptions(column_names=["line"], block_size=1 << 24, encoding="utf8")
        po = pcsv.ParseOptions(delimiter=_SEP, quote_char=False, escape_char=False, ignore_empty_lines=False)
        co = pcsv.ConvertOptions(column_types={"line": pa.string()}, strings_can_be_null=False)
        try:
            table = pcsv.read_csv(pa.BufferReader(data), read_options=ro, parse_options=po, convert_options=co)
        except pa.ArrowInvalid as e:
            if "Empty CSV file" in str(e):
                table = pa.table({"line": pa.array([], pa.string())})
            else:
                raise UnreadableError(name, f"cannot read as text ({str(e).splitlines()[0]})") from None
        table = table.append_column("ln", pa.array(np.arange(1, table.num_rows + 1, dtype=np.int64)))
        con.register("raw_arrow", table)
        con.execute("CREATE OR REPLACE TEMP VIEW raw AS SELECT ln, ltrim(rtrim(line, chr(13)), chr(65279)) AS line "
                    "FROM raw_arrow").fetchall()
        return
    files = expand_paths(source, name)
    comp = "gzip" if is_gzip(source) else "none"
    lst = "[" + ", ".join(_q(f) for f in files) + "]"
    con.execute(f"""CREATE OR REPLACE TEMP VIEW raw AS
        SELECT row_number() OVER () AS ln, line FROM read_csv({lst}, columns={{'line': 'VARCHAR'}},
            delim=chr(31), quote='', escape='', header=false, auto_detect=false, strict_mode=false,
            compression={_q(comp)}, max_line_size=10000000)""").fetchall()


def _scalar(con, sql: str, params=None):
    rows = con.execute(sql, params or []).fetchall()
    return rows[0][0] if rows else None


#: what DuckDB says when its spill cannot be written: the disk is full, or the temporary folder reached the size
#: DuckDB allows it (``max_temp_directory_size``, by default 90 % of the disk's free space)
_DISK_FULL_WORDS = ("no space left on device", "failed to offload data block", "max_temp_directory_size",
                    "disk quota exceeded")


def disk_full(e: BaseException) -> bool:
    """Whether ``e`` says a disk filled: an ``OSError`` with ENOSPC or EDQUOT (Python, fsspec, pyarrow), or DuckDB's
    words when it could not write its spill or a file.

    >>> disk_full(OSError(errno.ENOSPC, "No space left on device")), disk_full(ValueError("no space left on device"))
    (True, False)
    """
    if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    duck = type(e).__module__.split(".")[0] in ("duckdb", "_duckdb")
    return (duck or isinstance(e, OSError)) and any(w in str(e).lower() for w in _DISK_FULL_WORDS)


def budget_error(e: BaseException) -> ConfigError | None:
    """The error a user should read for ``e`` when it is about the machine, not the input: a disk that filled
    (:class:`~ultr_core.errors.DiskFullError`) or DuckDB's memory budget (``--memory-limit``); else None."""
    if disk_full(e):
        return DiskFullError()
    if type(e).__name__ == "OutOfMemoryException" and type(e).__module__.split(".")[0] in ("duckdb", "_duckdb"):
        return ConfigError("--memory-limit", "the work did not fit in the memory limit even when spilled to disk: "
                                             "raise --memory-limit, or free space in the temporary folder (TMPDIR)")
    return None


@contextmanager
def reporting_budget():
    """Run a block that may spill to disk; a disk that fills or a memory budget that DuckDB cannot keep ends in the
    one message of :func:`budget_error` (the caller removes its temporary folder, so nothing half written stays)."""
    try:
        yield
    except ConfigError:
        raise
    except Exception as e:
        err = budget_error(e)
        if err is not None:
            raise err from None
        raise


def reading_error(e: Exception, name: str, *, verb: str = "cannot read", kind=UnreadableError) -> Exception:
    """The error to raise for DuckDB's ``e`` while reading ``name``: a full disk or the memory budget is the
    machine's problem (:func:`budget_error`); anything else is the input's, named with DuckDB's first line."""
    err = budget_error(e)
    if err is not None:
        return err
    msg = str(e).splitlines()[0] if str(e) else type(e).__name__
    return kind(name, f"{verb} ({msg[:300]})")


def run_sql(con, sql: str, name: str):
    try:
        return con.execute(sql).fetchall()
    except Exception as e:        # DuckDB raises many types; all are format problems of the input here
        raise reading_error(e, name) from None


def _check(con, name: str, checks: list[tuple[str, str]]) -> None:
    """Each check is (SQL giving the first bad line or NULL, problem); raise on the first hit."""
    sel = ", ".join(f"({sql})" for sql, _ in checks)
    row = con.execute(f"SELECT {sel}").fetchall()[0]
    hits = [(ln, problem) for ln, (_, problem) in zip(row, checks) if ln is not None]
    if hits:
        ln, problem = min(hits, key=lambda h: h[0])
        raise DataFormatError(name, problem, int(ln))


_SPLIT = """CREATE OR REPLACE TEMP TABLE l AS
    SELECT ln, string_split(line, chr(9)) AS f FROM raw WHERE line IS NOT NULL AND trim(line) <> ''"""
_NF = "len(list_filter(f, lambda x: trim(x) <> ''))"


def _t(i: int) -> str:
    """Field i (1-based) trimmed; '' where the row is shorter."""
    return f"coalesce(trim(f[{i}]), '')"


def _impressions_view(con, name: str, extra=(), first_only: bool = False) -> dict:
    """The view ``norm`` from tables ``imp`` (impressions), ``clk`` (click rows) and ``hit``
    (clicked impressions with their click counts); returns the repair counts.  ``first_only``: a click on a URL
    that the impression shows at several positions is counted once, at its first (topmost) position — PyClick's
    rule for the Yandex logs (``YandexRelPredChallengeParser``: ``results.index(url)``) — and counted in the
    repairs (``multi_position_clicks``); otherwise at every position showing it (PyClick's rule for its session
    text)."""
    cols = "".join(f", imp.{c}" for c in extra)
    if first_only:
        run_sql(con, """CREATE OR REPLACE TEMP TABLE hit AS SELECT hit.*, f.position, f.k FROM hit JOIN (
            SELECT session_id, doc_id, min(position) AS position, count(*) AS k FROM imp GROUP BY ALL) f
            USING (session_id, doc_id)""", name)
    on = "(session_id, doc_id, position)" if first_only else "(session_id, doc_id)"
    run_sql(con, f"""CREATE OR REPLACE TEMP VIEW norm AS
        SELECT imp.session_id, imp.query_id, imp.doc_id, imp.position,
               (hit.n IS NOT NULL)::TINYINT AS click{cols}
        FROM imp LEFT JOIN hit USING {on}""", name)
    out = _repairs(con)
    if first_only:
        out["multi_position_clicks"] = int(_scalar(con, "SELECT count(*) FROM hit WHERE k > 1") or 0)
    return out


def _repairs(con) -> dict:
    """Orphan and repeated clicks from tables ``clk`` (click rows) and ``hit`` (matched clicks)."""
    n_clicks = _scalar(con, "SELECT count(*) FROM clk") or 0
    matched, rows = con.execute("SELECT coalesce(sum(n), 0), count(*) FROM hit").fetchall()[0]
    return {"orphan_clicks": int(n_clicks - matched), "repeated_clicks": int(matched - rows)}
