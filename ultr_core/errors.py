"""Exceptions with messages that say what is wrong and where."""
from __future__ import annotations

__all__ = ["DataFormatError", "ConfigError", "show"]


class DataFormatError(ValueError):
    """A file or table could not be read; names the source, the line and the problem."""

    def __init__(self, source: str, problem: str, line: int | None = None):
        self.source, self.problem, self.line = str(source), problem, line
        where = f"{self.source}, line {line}" if line is not None else self.source
        super().__init__(f"{where}: {problem}")

    def __reduce__(self):            # picklable across worker processes (joblib)
        return (type(self), (self.source, self.problem, self.line))


class ConfigError(ValueError):
    """A configuration value is out of range or inconsistent; names the field."""

    def __init__(self, field: str, problem: str):
        self.field, self.problem = field, problem
        super().__init__(f"{field}: {problem}")

    def __reduce__(self):            # picklable across worker processes (joblib)
        return (type(self), (self.field, self.problem))


def show(value, limit: int = 20) -> str:
    """A value as it belongs in a message: numpy scalars as plain numbers (never ``np.int64(2)``),
    strings quoted and cut to ``limit`` characters."""
    if hasattr(value, "item") and getattr(value, "ndim", 1) == 0:
        value = value.item()
    if isinstance(value, str):
        return repr(value[:limit] + ("…" if len(value) > limit else ""))
    text = repr(value)
    return text[:limit] + ("…" if len(text) > limit else "")
