"""Options several commands share, read and checked before any log is."""
from __future__ import annotations

__all__ = ["judgements_option", "MAX_JUDGEMENTS_BYTES"]

#: the largest judgements file read (bytes)
MAX_JUDGEMENTS_BYTES = 512 * 2**20


def judgements_option(a):
    """The --judgements file read and checked (None without), before any fit."""
    from ultr_core.errors import ConfigError
    if not a.judgements:
        if a.include_prior_dominated or a.grades != "0-5":
            raise ConfigError("--include-prior-dominated" if a.include_prior_dominated else "--grades",
                              "applies to --judgements; give --judgements too")
        return None
    import os

    from ultr_core.logs.judgements import parse_grades, read_judgements
    from ultr_core.logs.sniff import refuse_system_path
    low, high = parse_grades(a.grades)
    refuse_system_path(a.judgements, "--judgements", "a judgements file")
    if not os.path.isfile(a.judgements):
        raise ConfigError("--judgements", "file not found")
    if os.path.getsize(a.judgements) > MAX_JUDGEMENTS_BYTES:
        raise ConfigError("--judgements", f"larger than {MAX_JUDGEMENTS_BYTES // 2**20} MB")
    with open(a.judgements, "rb") as f:
        return read_judgements(f.read(), "--judgements", grades=(low, high))
