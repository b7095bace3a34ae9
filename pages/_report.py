"""The Upload page's report to take away (issue #60): while the page draws, the sections that belong in the report
are collected here (:func:`add_section`: a no-op on every other page), and :func:`report_button` offers them as one
self-contained HTML file (:func:`ultr_core.app.report.report_html`), generated only when the button is pressed."""
from __future__ import annotations

import streamlit as st

from ultr_core.app.report import LogFingerprint, Section, report_html

_KEY = "_report_sections"


def start_report() -> None:
    """Collect the sections this run draws (the Upload page, at its top)."""
    st.session_state[_KEY] = []


def add_section(title: str, **parts) -> None:
    """Add a section (:class:`~ultr_core.app.report.Section`'s fields) when a report is being collected."""
    sections = st.session_state.get(_KEY)
    if isinstance(sections, list):
        sections.append(Section(title, **parts))


def report_button(fingerprint: LogFingerprint, settings: dict) -> None:
    """The download button of the collected report; collection stops here (later fragment reruns add nothing)."""
    sections = tuple(st.session_state.pop(_KEY, None) or ())
    if not sections:
        return
    stem = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in fingerprint.name.rsplit(".", 1)[0])[:60]
    st.download_button("Download the report (HTML, opens offline)", lambda: report_html(fingerprint, settings,
                       list(sections)), f"{stem or 'log'}_report.html", mime="text/html", on_click="ignore",
                       key="upload_download_the_report_html",
                       help="verdict, curves with intervals, certainty, plan, click models, judges and counterfactual "
                            "values as far as they are computed now, with the log's fingerprint and the settings: "
                            "one file, its figures included")
