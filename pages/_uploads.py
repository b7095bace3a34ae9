"""Uploads kept for the session (issue #60, item 4): Streamlit forgets a file uploader's files when its page is left,
so the Upload page came back empty after a visit to another page (the sidebar or the browser's Back) while the
Identifiability page still showed the log.  Each uploader's files are kept here, one copy per uploader and session,
until another file replaces them or the visitor forgets them.  UI plumbing only."""
from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from ultr_core.app.text import escape_markdown


@dataclass(frozen=True)
class KeptFile:
    """An uploaded file kept for the session, read as Streamlit's ``UploadedFile`` is (``name``, ``size``,
    ``getvalue()``)."""

    name: str
    data: bytes

    @property
    def size(self) -> int:
        return len(self.data)

    def getvalue(self) -> bytes:
        return self.data


def kept_upload(key: str, uploaded):
    """The uploader ``key``'s file(s) — what was just dropped (then kept), else what was kept earlier in the session
    (with a line naming it and a button to forget it), else None.  ``uploaded`` is the widget's value: one file, a
    list of files or None; the answer has the same shape."""
    store = f"_kept_{key}"
    if uploaded:
        files = uploaded if isinstance(uploaded, list) else [uploaded]
        st.session_state[store] = [KeptFile(f.name, f.getvalue()) for f in files]
        return uploaded
    kept = st.session_state.get(store)
    if not kept:
        return None
    names = ", ".join(f.name for f in kept)
    left, right = st.columns([4, 1])
    left.caption(f"Using {escape_markdown(names)}, uploaded earlier in this session; drop another file to replace it.")
    if right.button("Forget it", key=f"{key}_forget", help="drop the kept file from this session"):
        st.session_state.pop(store, None)
        st.rerun()
    return kept if isinstance(uploaded, list) else kept[0]


def kept_file(key: str):
    """The one file uploader ``key`` holds or kept (None when neither), for a section that reads another's upload."""
    value = st.session_state.get(key)
    if value:
        return value[0] if isinstance(value, list) else value
    kept = st.session_state.get(f"_kept_{key}")
    return kept[0] if kept else None
