"""Safe display of user-provided strings (file names, column names, messages)."""
from __future__ import annotations

import html
import re

from ultr_core.errors import printable

__all__ = ["escape_markdown", "escape_html", "code_span"]

_MD = re.compile(r"([\\`*_\[\]#|~$])")


def escape_markdown(text) -> str:
    """Escape HTML and Markdown syntax so a user string renders literally in st.markdown."""
    return _MD.sub(r"\\\1", html.escape(printable(text), quote=False))


def escape_html(text) -> str:
    """Escape a user string for plotly labels, hovers and HTML views (plotly renders a subset of
    HTML such as ``<a href>`` and ``<b>`` in text; escaped, it shows the characters instead)."""
    return html.escape(printable(text), quote=True)


def code_span(text) -> str:
    r"""A user string as inline code: shown literally — Markdown escapes would show their backslashes there (issue
    #49: "yahoo\_sample/…") — with a fence longer than any run of backticks inside, so none can close it early.

    >>> code_span("yahoo_sample/topk=10"), code_span("a`b")
    ('`yahoo_sample/topk=10`', '``a`b``')
    """
    t = printable(text).replace("\n", " ")
    fence = "`" * (max((len(m) for m in re.findall(r"`+", t)), default=0) + 1)
    pad = " " if t.startswith("`") or t.endswith("`") else ""
    return f"{fence}{pad}{t}{pad}{fence}"
