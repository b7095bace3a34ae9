"""Exceptions with messages that say what is wrong and where."""
from __future__ import annotations

import re

__all__ = ["DataFormatError", "MissingColumnError", "UnreadableError", "TooManyRowsError", "ConfigError",
           "DiskFullError", "show", "printable", "counted"]


class DataFormatError(ValueError):
    """A file or table could not be read; names the source, the line and the problem."""

    def __init__(self, source: str, problem: str, line: int | None = None):
        self.source, self.problem, self.line = printable(source), printable(problem), line
        where = f"{self.source}, line {line}" if line is not None else self.source
        super().__init__(f"{where}: {self.problem}")

    def __reduce__(self):            # picklable across worker processes (joblib)
        return (type(self), (self.source, self.problem, self.line))


class MissingColumnError(DataFormatError):
    """A log lacks columns it needs (``columns``); callers branch on the type, never on the message."""

    def __init__(self, source: str, problem: str, columns=(), line: int | None = None):
        self.columns = tuple(columns)
        super().__init__(source, problem, line)

    def __reduce__(self):
        return (type(self), (self.source, self.problem, self.columns, self.line))


class UnreadableError(DataFormatError):
    """A file's bytes could not be parsed in the format tried (a CSV reader on a binary file, a broken gzip);
    callers that guessed the format branch on the type to list the formats on offer instead."""


class TooManyRowsError(DataFormatError):
    """A log has more rows than a reader was asked to hold (``limit``): the caller reads it out of core instead."""

    def __init__(self, source: str, limit: int):
        self.limit = int(limit)
        super().__init__(source, f"more than {self.limit:,} rows: too many to hold in memory")

    def __reduce__(self):
        return (type(self), (self.source, self.limit))


class ConfigError(ValueError):
    """A configuration value is out of range or inconsistent; names the field."""

    def __init__(self, field: str, problem: str):
        self.field, self.problem = printable(field), printable(problem)
        super().__init__(f"{self.field}: {self.problem}")

    def __reduce__(self):            # picklable across worker processes (joblib)
        return (type(self), (self.field, self.problem))


class DiskFullError(ConfigError):
    """A disk filled while a log was being spilled to a temporary folder (DuckDB's spill, the pattern files, Dask's
    session table); the message says what to do, and nothing half written is left behind."""

    def __init__(self, field: str = "TMPDIR", problem: str = ""):
        super().__init__(field, problem or (
            "the disk of the temporary folder filled while the log was spilled to it; free space there, point TMPDIR "
            "at a folder on a larger disk, or raise --memory-limit so that less is spilled. Nothing was written."))


def counted(n, noun: str, plural: str | None = None) -> str:
    """``n`` with thousands separators and ``noun`` in the number it takes — what every message that counts says
    (never "21603 document(s)").

    >>> counted(21603, "document"), counted(1, "swap"), counted(2, "query", "queries")
    ('21,603 documents', '1 swap', '2 queries')
    """
    n = int(n)
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def show(value, limit: int = 20) -> str:
    """A value as it belongs in a message: numpy scalars as plain numbers (never ``np.int64(2)``),
    strings quoted and cut to ``limit`` characters."""
    if hasattr(value, "item") and getattr(value, "ndim", 1) == 0:
        value = value.item()
    if isinstance(value, str):
        return repr(value[:limit] + ("…" if len(value) > limit else ""))
    text = repr(value)
    return text[:limit] + ("…" if len(text) > limit else "")


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def printable(text) -> str:
    r"""``text`` with every control character (terminal escapes, carriage returns, bidirectional overrides)
    written as a visible escape, so a user's column name or value cannot retitle, clear or rewrite a
    terminal or a page; newlines and tabs stay.

    >>> printable("pos\x1b]0;owned\x07ition\r")
    'pos\\x1b]0;owned\\x07ition\\r'
    """
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), str(text))
