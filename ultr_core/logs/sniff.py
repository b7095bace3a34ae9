"""Where a log comes from and what format it is: paths and globs, gzip detection, the format from a
file name or sniffed from the first bytes, and the errors for files no reader accepts.
"""
from __future__ import annotations

import glob as _glob
import gzip
import io
from pathlib import Path

import pyarrow as pa

from ultr_core.errors import DataFormatError
from ultr_core.logs.formats import LOG_FORMATS, TABULAR_FORMATS, TEXT_FORMATS, accepted, sniff_rule

__all__ = ["LogSource", "resolve_source", "TEXT_FORMATS", "TABULAR_FORMATS", "ACCEPTED", "expand_paths", "is_gzip",
           "sniff_format", "infer_format", "format_from_name", "duplicate_header", "unknown_format",
           "spill_upload"]

#: what a reader accepts, for the message on a file that no reader accepts (from the one format table)
ACCEPTED = tuple(accepted().split("; "))


# --------------------------------------------------------------------------- sources
def _is_bytes(source) -> bool:
    return isinstance(source, (bytes, bytearray, memoryview))


SYSTEM_ROOTS = ("/proc", "/sys", "/dev")
#: columns a CSV/TSV header may name (a click log needs a handful; Parquet has its own limit in bounds.py)
MAX_COLUMNS = 10_000


def refuse_system_path(path, name: str, what: str = "a log") -> None:
    """Refuse a path under /proc, /sys or /dev (followed through links): never a log, and a message
    quoting its content could leak the process environment."""
    try:
        real = str(Path(path).resolve())
    except (OSError, RuntimeError):             # a link loop: reported by the caller as not found
        return
    if any(real == r or real.startswith(r + "/") for r in SYSTEM_ROOTS):
        raise DataFormatError(name, f"a system path (/proc, /sys or /dev) cannot be read as {what}")


class LogSource(str):
    """A log file (or glob, or folder) resolved once (issue #45): the text of the path, with ``paths`` (the files,
    checked), ``gzip``, ``head`` (its first 64 KB, gunzipped), ``fmt`` (given, from the name, or sniffed from
    ``head``) and ``sniffed`` (the format came from the content).  Being the path's text, it goes wherever a path
    goes; the functions of this module answer from it instead of opening the file again.  Made by
    :func:`resolve_source`."""

    paths: tuple = ()
    gzip: bool = False
    head: bytes = b""
    fmt: str = ""
    sniffed: bool = False


def resolve_source(source, fmt: str | None = None, name: str | None = None):
    """Resolve a path, glob or folder once — files expanded and checked, first bytes read, compression and format
    known — into a :class:`LogSource` the readers take; bytes (an upload) and a resolved source pass unchanged."""
    if _is_bytes(source) or isinstance(source, LogSource) or hasattr(source, "read"):
        return source
    name = name or str(source)
    out = LogSource(str(source))
    if not any(ch in out for ch in "*?[") and Path(out).is_dir():
        out.fmt = (fmt or "ultra").lower()
        return out
    out.paths = tuple(expand_paths(str(source), name))
    out.gzip, out.head = _read_head(out.paths[0], name)
    by_name = format_from_name(name)
    out.sniffed = fmt is None and by_name is None
    out.fmt = (fmt or by_name or _sniff_head(out.head)).lower()
    return out


def _read_head(path: str, name: str, n_bytes: int = 1 << 16) -> tuple[bool, bytes]:
    """(gzip?, the first ``n_bytes`` gunzipped) of one file, read once."""
    try:
        with open(path, "rb") as f:
            data = f.read(n_bytes * 4)
    except OSError as e:
        raise DataFormatError(name, f"cannot open ({e.strerror or type(e).__name__})") from None
    return data[:2] == b"\x1f\x8b", _gunzip(data, n_bytes)


def _gunzip(data: bytes, n_bytes: int) -> bytes:
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.GzipFile(fileobj=io.BytesIO(data)).read(n_bytes)
        except (OSError, EOFError):
            data = b""            # a truncated first block: sniff what could be read
    return data[:n_bytes]


def expand_paths(source, name: str) -> list[str]:
    """The files of a path or glob pattern (sorted); errors name what is missing or wrong."""
    if isinstance(source, LogSource) and source.paths:
        return list(source.paths)
    s = str(source)
    if any(ch in s for ch in "*?["):
        files = sorted(_glob.glob(s))
        if not files:
            raise DataFormatError(name, "no file matches this pattern")
    else:
        files = [s]
    for f in files:
        p = Path(f)
        refuse_system_path(p, name)
        if not p.exists():
            raise DataFormatError(f, "file not found")
        if not p.is_file():
            raise DataFormatError(f, "not a regular file (a directory, device or pipe cannot be read as a log)")
    return files


def _head(source, name: str, n_bytes: int = 1 << 16) -> bytes:
    """The first bytes of the (first) file, gunzipped when it is gzip."""
    if isinstance(source, LogSource) and source.paths and n_bytes <= 1 << 16:
        return source.head[:n_bytes]
    if _is_bytes(source):
        return _gunzip(bytes(source[:n_bytes * 4]), n_bytes)
    return _read_head(expand_paths(source, name)[0], name, n_bytes)[1]


def is_gzip(source) -> bool:
    """Whether bytes, or the (first) file of a path or glob, start with gzip's magic number
    (False when it cannot be read: the reader then reports the real problem)."""
    if _is_bytes(source):
        return bytes(source[:2]) == b"\x1f\x8b"
    if isinstance(source, LogSource) and source.paths:
        return source.gzip
    files = sorted(_glob.glob(str(source))) if any(ch in str(source) for ch in "*?[") else [str(source)]
    try:
        with open(files[0], "rb") as f:
            return f.read(2) == b"\x1f\x8b"
    except (OSError, IndexError):
        return False


def sniff_format(source, name: str | None = None) -> str:
    """The format of a log from its first bytes (see the module docstring); ``csv`` when
    nothing else fits.  A directory is ``ultra``."""
    name = name or str(source)
    if isinstance(source, LogSource) and source.fmt:
        return source.fmt
    if not _is_bytes(source) and not any(ch in str(source) for ch in "*?[") and Path(source).is_dir():
        return "ultra"
    if _is_bytes(source):
        from ultr_core.data.archives import is_archive
        if is_archive(bytes(source[:1 << 20])):
            return "ultra"                  # an ULTRA folder sent as a zip / tar(.gz) archive
    return _sniff_head(_head(source, name))


def _sniff_head(data: bytes) -> str:
    """The format the first bytes of a file say (see :func:`sniff_format`)."""
    if data[:4] == b"PAR1":
        return "parquet"
    text = data.decode("utf-8", errors="replace").lstrip("\ufeff")
    lines = [ln.rstrip("\r") for ln in text.split("\n") if ln.strip()][:5]
    if not lines:
        return "csv"
    fmt = sniff_rule([x.strip() for x in lines[0].split("\t")], lines)     # the text formats' own rules
    if fmt is not None:
        return fmt
    return "tsv" if lines[0].count("\t") > lines[0].count(",") else "csv"


def infer_format(source, name: str | None = None) -> str:
    """Format from the extension when it is telling (``.csv``, ``.tsv``, ``.parquet``, with an
    optional ``.gz``), else from the content (:func:`sniff_format`); a directory is ``ultra``."""
    if isinstance(source, LogSource) and source.fmt:
        return source.fmt
    if not _is_bytes(source) and Path(str(source)).is_dir():
        return "ultra"
    return format_from_name(name or source) or sniff_format(source, name)


def format_from_name(name) -> str | None:
    """The format a file name's extension tells (``.csv``, ``.tsv``, ``.parquet``, ``.pq``, with an
    optional ``.gz``), or None."""
    s = str(name).lower()
    if s.endswith(".gz"):
        s = s[:-3]
    for f in LOG_FORMATS:
        if any(s.endswith(ext) for ext in f.extensions):
            return f.name
    return None


def duplicate_header(source, fmt: str, name: str) -> None:
    """Refuse a CSV/TSV/Parquet source whose header names a column twice (one would silently win)."""
    if fmt == "parquet":
        try:
            import pyarrow.parquet as pq
            names = pq.read_schema(pa.BufferReader(bytes(source)) if _is_bytes(source)
                                   else expand_paths(source, name)[0]).names
        except Exception:         # noqa: BLE001 — an unreadable file is reported by the reader itself
            return
    else:
        import csv
        text = _head(source, name).decode("utf-8", errors="replace").lstrip("\ufeff")
        lines = [ln for ln in text.splitlines(keepends=True) if ln.strip()]
        first = lines[0] if lines else ""
        names = next(csv.reader([first.rstrip("\r\n")], delimiter="\t" if fmt == "tsv" else ","), [])
        if len(names) > MAX_COLUMNS:
            count = f"{len(names):,}" if first.endswith("\n") else f"more than {MAX_COLUMNS:,}"
            raise DataFormatError(name, f"the header row has {count} columns; the limit is {MAX_COLUMNS:,}", 1)
        if first and not first.endswith("\n") and len(text.encode()) >= 1 << 18:
            names = names[:-1]                 # the head cut the last name short: do not compare a fragment
    seen: dict = {}
    for i, n in enumerate(names, 1):
        key = str(n).strip()
        if key in seen:
            raise DataFormatError(name, f"column {key[:40]!r} appears twice in the header (columns {seen[key]} and "
                                        f"{i}); rename one of them")
        seen[key] = i


def unknown_format(source, name: str, problem: str = "") -> DataFormatError:
    """The error for a file that no reader accepts: the formats accepted and how its first line
    starts (printable characters only, cut short)."""
    try:
        text = _head(source, name, 4096).decode("utf-8", errors="replace").lstrip("\ufeff")
    except DataFormatError:
        text = ""
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    shown = "".join(ch if ch.isprintable() else "·" for ch in first[:16]) + ("…" if len(first) > 16 else "")
    return DataFormatError(name, f"not a log format this reader knows{' (' + problem + ')' if problem else ''}; its "
                                 f"first line starts {shown!r}. Accepted: " + "; ".join(ACCEPTED))


def spill_upload(source, fmt: str, tmp: str):
    """An uploaded CSV/TSV (bytes) as a file in ``tmp``, so DuckDB parses it as it parses the CLI's files — streamed,
    within its memory limit, with the same sniffer (pyarrow needed 1.15 GB to parse a 175 MB CSV in memory)."""
    if fmt not in ("csv", "tsv") or not isinstance(source, (bytes, bytearray, memoryview)):
        return source
    from pathlib import Path

    path = Path(tmp) / f"upload.{fmt}{'.gz' if is_gzip(source) else ''}"
    path.write_bytes(bytes(source))
    return str(path)
