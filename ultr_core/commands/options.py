"""Options several commands share, read and checked before any log is."""
from __future__ import annotations

import argparse

__all__ = ["HelpFormatter", "judgements_option", "file_bytes", "MAX_JUDGEMENTS_BYTES"]


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Every command's ``--help``: a flag's default appended where it has one worth stating — not where its help
    already states it, and not for ``None`` (a flag given or not) or a switch's ``False``.

    >>> p = argparse.ArgumentParser(formatter_class=HelpFormatter)
    >>> _ = p.add_argument("--a", help="sniffed (default: sniffed)"); _ = p.add_argument("--b", default=3, help="b")
    >>> _ = p.add_argument("--c", action="store_true", help="a switch"); _ = p.add_argument("--d", default=0, help="d")
    >>> text = p.format_help(); text.count("(default:"), "(default: 3)" in text, "(default: 0)" in text
    (3, True, True)
    """

    def _get_help_string(self, action):
        text = action.help or ""
        if "default" in text or any(action.default is v for v in (None, False, argparse.SUPPRESS)):
            return text
        return super()._get_help_string(action)

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
    from ultr_core.logs.judgements import parse_grades, read_judgements
    low, high = parse_grades(a.grades)
    data = file_bytes(a.judgements, "--judgements", "a judgements file", max_bytes=MAX_JUDGEMENTS_BYTES,
                      missing="file not found", too_large="larger than {mb} MB")
    return read_judgements(data, name="--judgements", grades=(low, high))


def file_bytes(path: str, flag: str, what: str, *, max_bytes: int, missing: str, too_large: str) -> bytes:
    """The bytes of a small file a flag names, after refusing a system path, a missing file (``missing``) and one
    over ``max_bytes`` (``too_large``, with ``{mb}`` its limit in MB) — each a message naming the flag."""
    import os

    from ultr_core.errors import ConfigError
    from ultr_core.logs.sniff import refuse_system_path
    refuse_system_path(path, flag, what)
    if not os.path.isfile(path):
        raise ConfigError(flag, missing)
    if os.path.getsize(path) > max_bytes:
        raise ConfigError(flag, too_large.format(mb=max_bytes // 2**20))
    with open(path, "rb") as f:
        return f.read()
