"""A report to take away (issue #60): the Upload page's analysis of a log as one self-contained HTML file — what a
practitioner sends a colleague.  Its figures are plotly's, with plotly.js inlined once (the file opens offline); the
log's fingerprint (name, format, rows, clicks, SHA-256) and the settings head it; every string from the user's file
is escaped.  Pure: sections in, text out (the page collects the sections as it draws them).

>>> import pandas as pd
>>> fp = LogFingerprint(name="<b>log</b>.csv", format="csv", rows=900, clicks=225, sha256="ab" * 32)
>>> html = report_html(fp, {"bias": "position"}, [Section("Verdict", text="identifiable"),
...                    Section("Plan", table=pd.DataFrame({"doc": ["<i>a</i>", None]}))], plotly_js="")
>>> "&lt;b&gt;log&lt;/b&gt;.csv" in html and "<b>log" not in html and "&lt;i&gt;a&lt;/i&gt;" in html
True
"""
from __future__ import annotations

import html as _html
from dataclasses import dataclass

import pandas as pd

__all__ = ["LogFingerprint", "Section", "report_html"]


@dataclass(frozen=True)
class LogFingerprint:
    """What identifies the log a report is about."""

    name: str
    format: str
    rows: int
    clicks: int
    sha256: str


@dataclass(frozen=True)
class Section:
    """One part of the report: a heading with a sentence (``text``), a ``figure`` (plotly) and/or a ``table``
    (pandas; missing values blank), and a ``caption``."""

    title: str
    text: str = ""
    figure: object = None
    table: pd.DataFrame | None = None
    caption: str = ""


_STYLE = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.6em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0}td,th{border:1px solid #ddd;padding:2px 6px;
text-align:right}th{background:#f6f6f6}pre{white-space:pre-wrap;background:#f8f8f8;padding:.6em}
.caption{color:#666;font-size:.85em}dl{display:grid;grid-template-columns:max-content auto;gap:2px 12px}
dt{color:#666}dd{margin:0;font-family:monospace;word-break:break-all}"""


def _esc(x) -> str:
    return _html.escape(str(x), quote=True)


def _table(frame: pd.DataFrame) -> str:
    shown = frame.astype(object).where(frame.notna(), "")
    return shown.to_html(index=False, escape=True, na_rep="", border=0)


def _section(s: Section) -> str:
    out = [f"<h2>{_esc(s.title)}</h2>"]
    if s.text:
        out.append(f"<pre>{_esc(s.text)}</pre>")
    if s.figure is not None:                   # plotly.js is inlined once in the head
        out.append(s.figure.to_html(full_html=False, include_plotlyjs=False, config={"displaylogo": False}))
    if s.table is not None and len(s.table):
        out.append(_table(s.table))
    if s.caption:
        out.append(f'<p class="caption">{_esc(s.caption)}</p>')
    return "\n".join(out)


def report_html(fingerprint: LogFingerprint, settings: dict, sections: list[Section], *, title: str = "",
                plotly_js: str | None = None) -> str:
    """The report as one HTML document: heading, the log's fingerprint and the settings, then ``sections`` in order.
    ``plotly_js``: the plotly.js source to inline (default: plotly's own, so the file opens offline; "" leaves it
    out, for tests)."""
    if plotly_js is None:
        from plotly.offline import get_plotlyjs
        plotly_js = get_plotlyjs()
    fp = fingerprint
    facts = [("file", fp.name), ("format", fp.format), ("impressions", f"{fp.rows:,}"), ("clicks", f"{fp.clicks:,}"),
             ("SHA-256", fp.sha256)] + [(k, v) for k, v in settings.items()]
    head = "".join(f"<dt>{_esc(k)}</dt><dd>{_esc(v)}</dd>" for k, v in facts)
    body = [_section(s) for s in sections]
    script = f"<script>{plotly_js}</script>" if plotly_js else ""
    name = title or f"ULTR Explorer — what {fp.name} says"
    return (f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{_esc(name)}</title>"
            f"<style>{_STYLE}</style>{script}</head><body><h1>{_esc(name)}</h1><dl>{head}</dl>"
            + "\n".join(body) + "<p class=\"caption\">Made by ULTR Explorer's Upload page; every interval is a 90 % "
            "interval unless its caption says otherwise.</p></body></html>")
