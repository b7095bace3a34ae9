"""Safe display of user-provided strings (file names, column names, messages)."""
from __future__ import annotations

import html
import re

__all__ = ["escape_markdown"]

_MD = re.compile(r"([\\`*_\[\]#|~$])")


def escape_markdown(text) -> str:
    """Escape HTML and Markdown syntax so a user string renders literally in st.markdown."""
    return _MD.sub(r"\\\1", html.escape(str(text), quote=False))
