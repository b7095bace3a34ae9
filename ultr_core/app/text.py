"""Safe display of user-provided strings (file names, column names, messages)."""
from __future__ import annotations

import html
import re

from ultr_core.errors import printable

__all__ = ["escape_markdown", "escape_html"]

_MD = re.compile(r"([\\`*_\[\]#|~$])")


def escape_markdown(text) -> str:
    """Escape HTML and Markdown syntax so a user string renders literally in st.markdown."""
    return _MD.sub(r"\\\1", html.escape(printable(text), quote=False))


def escape_html(text) -> str:
    """Escape a user string for plotly labels, hovers and HTML views (plotly renders a subset of
    HTML such as ``<a href>`` and ``<b>`` in text; escaped, it shows the characters instead)."""
    return html.escape(printable(text), quote=True)
