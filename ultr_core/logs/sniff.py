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

__all__ = ["TEXT_FORMATS", "TABULAR_FORMATS", "ACCEPTED", "expand_paths", "is_gzip", "sniff_format", "infer_format", "format_from_name", "duplicate_header", "unknown_format"]

#: what a reader accepts, for the message on a file that no reader accepts (from the one format table)
ACCEPTED = tuple(accepted().split("; "))


# --------------------------------------------------------------------------- sources
def _is_bytes(source) -> bool:
    return isinstance(source, (bytes, bytearray, memoryview))


SYSTEM_ROOTS = ("/proc", "/sys", "/dev")
#: columns a CSV/TSV header may name (a click log needs a handful; Parquet has its own limit in bounds.py)
MAX_COLUMNS = 10_000


def refuse_system_path(path, name: str) -> None:
    """Refuse a path under /proc, /sys or /dev (followed through links): never a log, and a message
    quoting its content could leak the process environment."""
    try:
        real = str(Path(path).resolve())
    except (OSError, RuntimeError):             # a link loop: reported by the caller as not found
        return
    if any(real == r or real.startswith(r + "/") for r in SYSTEM_ROOTS):
        raise DataFormatError(name, "a system path (/proc, /sys or /dev) cannot be read as a log")


def expand_paths(source, name: str) -> list[str]:
    """The files of a path or glob pattern (sorted); errors name what is missing or wrong."""
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
    if _is_bytes(source):
        data = bytes(source[:n_bytes * 4])
    else:
        try:
            with open(expand_paths(source, name)[0], "rb") as f:
                data = f.read(n_bytes * 4)
        except OSError as e:
            raise DataFormatError(name, f"cannot open ({e.strerror or type(e).__name__})") from None
    if data[:2] == b"\x1f\x8b":
        try:
            d = gzip.GzipFile(fileobj=io.BytesIO(data))
            data = d.read(n_bytes)
        except (OSError, EOFError):
            data = b""            # a truncated first block: sniff what could be read
    return data[:n_bytes]


def is_gzip(source) -> bool:
    """Whether bytes, or the (first) file of a path or glob, start with gzip's magic number
    (False when it cannot be read: the reader then reports the real problem)."""
    if _is_bytes(source):
        return bytes(source[:2]) == b"\x1f\x8b"
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
    if not _is_bytes(source) and not any(ch in str(source) for ch in "*?[") and Path(source).is_dir():
        return "ultra"
    if _is_bytes(source):
        from ultr_core.data.archives import is_archive
        if is_archive(bytes(source[:1 << 20])):
            return "ultra"                  # an ULTRA folder sent as a zip / tar(.gz) archive
    data = _head(source, name)
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
