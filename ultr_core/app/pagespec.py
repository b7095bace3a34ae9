"""The record of the page table (:mod:`~ultr_core.app.pagetable`), apart from the table so that an extension
module (:mod:`ultr_core.extensions`) can build records while the table is being built."""
from __future__ import annotations

from dataclasses import dataclass

from ultr_core.constraints import Options, Rule, validate

__all__ = ["PageSpec"]


@dataclass(frozen=True)
class PageSpec:
    """One page: its file under ``pages/``, title, Material icon, URL path ("" : from the file name), whether it
    opens first (``default``) and whether its controls carry help text (``controls_help``; the Playground's knobs
    are explained by its tiles, Home has no controls)."""

    file: str
    title: str
    icon: str
    url_path: str = ""
    default: bool = False
    controls_help: bool = True

    CONSTRAINTS = {
        "file": [Rule(lambda f: isinstance(f, str) and f.endswith(".py") and not f.startswith(("_", "/")),
                      "a page file under pages/")],
        "title": [Rule(lambda t: isinstance(t, str) and t.strip() != "", "a title")],
        "icon": [Rule(lambda i: isinstance(i, str) and i.startswith(":material/"), "a :material/…: icon")],
        "url_path": [Rule(lambda u: isinstance(u, str), "a URL path or ''")],
        "default": [Options(True, False)], "controls_help": [Options(True, False)],
    }

    def __post_init__(self):
        validate(self, where=f"page {self.file!r}")

    @property
    def path(self) -> str:
        return f"pages/{self.file}"
