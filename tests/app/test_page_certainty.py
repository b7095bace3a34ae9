"""AppTest of "How sure?" (issue #46) on the Identifiability and Upload pages: every factor's level, the graph by
information, the weakest links, a profile likelihood, repairs that buy certainty, and relevance per document with
its CSV — and the two pages agree on one log."""
import numpy as np
from apphelp import no_crash, page


def _chain_csv() -> bytes:
    """A rare-swap chain over 6 positions (one query): connected, deep positions weakly identified."""
    from test_uncertainty import _chain_log
    doc, fac, n, c, D, F, _ = _chain_log(3, swap=0.01)
    rows = ["session_id,query_id,doc_id,position,click"]
    s = 0
    for d, f, ni, ci in zip(doc, fac, n.astype(int), c.astype(int)):
        for j in range(ni):
            rows.append(f"{s},0,{d},{f + 1},{int(j < ci)}")
            s += 1
    return ("\n".join(rows) + "\n").encode()


def _levels(at) -> dict:
    return {m.label: m.value for m in at.metric if m.label in ("identified", "weak", "unidentified")}


def test_identifiability_page_shows_how_sure_with_profile_and_plan():
    at = page("identifiability.py", timeout=120).run()
    assert no_crash(at)
    assert any("How sure?" in h.value for h in at.subheader)
    levels = _levels(at)
    assert set(levels) == {"identified", "weak", "unidentified"} and sum(int(v) for v in levels.values()) == 10
    assert at.selectbox(key="ig_profile_factor").value is not None
    at.slider(key="ig_plan_steps").set_value(3).run(timeout=120)
    assert no_crash(at)
    assert any("Profile interval [" in c.value for c in at.caption)
    at.sidebar.toggle(key="ig_teaching_mode_predict_before_y").set_value(True).run()
    at.radio(key="guess").set_value("no").run()
    at.button(key="ig_reveal_the_answer").click().run(timeout=120)
    assert any("Effective resistance" in i.value for i in at.info)       # teaching mode: the paragraph up front


def test_upload_page_shows_documents_and_agrees_with_the_identifiability_page():
    at = page("upload.py", timeout=180).run()
    at.file_uploader(key="upload_click_log").set_value(("chain.csv", _chain_csv(), "text/csv")).run(timeout=180)
    assert no_crash(at) and not at.error
    up = _levels(at)
    assert int(up["weak"]) >= 3 and at.get("download_button")
    assert any("Weakest links" in m.value for m in at.markdown)
    assert any("Within-query document orders resolved at 90 %" in c.value for c in at.caption)
    for table in at.dataframe:                  # issue #60: a missing value is blank, never Python's "None"
        cells = table.value.astype(object).to_numpy().ravel()
        assert not any(x is None or (isinstance(x, float) and np.isnan(x)) or x == "None" for x in cells)
    keys = [b.proto.id for b in at.get("download_button")]
    assert any("upload_documents_csv" in k for k in keys) or len(keys) >= 2
    curves = [t.value for t in at.dataframe if "identification" in t.value.columns and "estimate" in t.value.columns]
    assert curves and list(curves[0].columns) == ["component", "label", "estimate", "lower", "upper", "impressions",
                                                  "identification"]   # whole at 1024 px; the rest in the CSV
    assert any("upload_download_curves_csv" in k for k in keys)
    at.switch_page("identifiability.py").run(timeout=180)
    assert no_crash(at)
    assert _levels(at) == up                                # one log, one truth


def test_playground_log_levels_are_finite_numbers():
    from ultr_core.app.playground import PRESETS, verdict
    preset = next(p for p in PRESETS if p.name == "connected, yet unsure")
    v = verdict(preset.settings(0).log_spec().simulate()[2])
    se = [x for x in v["log_se"] if x is not None]
    assert se and np.isfinite(se).all() and "position=10" in v["weak"]


def test_upload_page_says_why_its_plan_has_no_swap():
    """A log whose informative documents are all shown at every factor of their block, and whose position 3 hangs on
    a document clicked at every impression: the plan's expander showed an empty chart and an empty table.  Now it
    shows the plan's note alone, and the curve table leaves position 3's band blank."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "identifiability"))
    import tempfile

    from test_log_edges import _linked_only_by_an_always_clicked_document
    with tempfile.TemporaryDirectory() as tmp:
        _linked_only_by_an_always_clicked_document(Path(tmp) / "l3.csv")
        data = (Path(tmp) / "l3.csv").read_bytes()
    at = page("upload.py", timeout=180).run()
    at.file_uploader(key="upload_click_log").set_value(("l3.csv", data, "text/csv")).run(timeout=180)
    assert no_crash(at) and not at.error
    assert any(i.value.startswith("no swap to propose") and "(position=3)" in i.value for i in at.info)
    assert not any("upload_plan_fig" in str(c.proto.id) for c in at.get("plotly_chart"))
    curves = next(t.value for t in at.dataframe if {"identification", "estimate"} <= set(t.value.columns))
    third = curves[curves["label"] == "position=3"].iloc[0]
    assert third["identification"] == "unidentified" and str(third["lower"]) in ("", "nan", "None")
