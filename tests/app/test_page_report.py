"""Issue #60: the Upload page's analysis downloads as one self-contained HTML report — verdict, curves with intervals,
certainty, plan, click models, judges and counterfactual values as far as they are computed, with the log's
fingerprint and the settings; user strings escaped; plotly.js inlined (the file opens offline)."""
import hashlib
import re

import streamlit
from apphelp import no_crash, page, wait

LOG = ("session_id,query_id,doc_id,position,click\n"
       + "".join(f"{s},q{s % 3},d{(s + p) % 5},{p},{int((s + p) % 4 == 0)}\n" for s in range(300) for p in (1, 2, 3)))


def test_the_upload_page_offers_its_analysis_as_one_offline_html_report(monkeypatch):
    made = {}
    original = streamlit.download_button

    def spy(label, data, *args, **kwargs):
        if str(label).startswith("Download the report (HTML"):
            made["data"], made["file"] = data, args[0] if args else kwargs.get("file_name")
        return original(label, data, *args, **kwargs)
    monkeypatch.setattr(streamlit, "download_button", spy)
    at = page("upload.py", timeout=180).run()
    name = "<b>clicks</b>.csv"
    at.file_uploader(key="upload_click_log").set_value((name, LOG.encode(), "text/csv")).run(timeout=180)
    at = wait(at, "upload_cm_job", 180)
    assert no_crash(at) and not at.error and callable(made.get("data"))
    links = next(t.value for t in at.dataframe if "link or document" in t.value.columns)
    named = [x for k, x in zip(links["kind"], links["link or document"]) if k == "document"]
    assert named and all(x.startswith(("query_id=q0, doc_id=d", "query_id=q1, doc_id=d", "query_id=q2, doc_id=d"))
                         for x in named), named      # the file's own ids, not the log's codes, named as the CLI does
    html = made["data"]()                                  # generated only when the button is pressed
    assert made["file"] == "_b_clicks__b__report.html"
    assert hashlib.sha256(LOG.encode()).hexdigest() in html and "900" in html
    for title in ("Verdict", "Position bias per connected component", "How sure? Identifiability as a measurement",
                  "Which click model explains the clicks?"):
        assert f"<h2>{title}</h2>" in html, title
    assert "&lt;b&gt;clicks&lt;/b&gt;.csv" in html and "<b>clicks</b>" not in html       # the file name escaped
    assert len(re.findall(r"<script[^>]*src=", html)) == 0 and len(html) > 3_000_000   # plotly.js inlined
    assert html.count("Plotly.newPlot") >= 3                          # the figures
