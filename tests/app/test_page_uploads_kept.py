"""Issue #60, item 4: after "Open the Identifiability page" the sidebar or the browser's Back returned an empty Upload
page — the log, its labels and scores had to be uploaded again while Identifiability still showed the log.  Uploads
are kept for the session until replaced or forgotten."""
from apphelp import no_crash, page

LOG = ("session_id,query_id,doc_id,position,click\n"
       + "".join(f"{s},q{s % 3},d{(s + p) % 5},{p},{int((s + p) % 4 == 0)}\n" for s in range(300) for p in (1, 2, 3)))


def test_the_upload_page_keeps_its_log_and_judgements_across_pages_until_forgotten():
    at = page("upload.py", timeout=180).run()
    at.file_uploader(key="upload_click_log").set_value(("sessions.csv", LOG.encode(), "text/csv")).run(timeout=180)
    qrels = "".join(f"q{q} 0 d{d} {(d + q) % 3}\n" for q in range(3) for d in range(5)).encode()
    at.file_uploader(key="upload_judgements").set_value(("j.qrels", qrels, "text/plain")).run(timeout=180)
    assert no_crash(at) and not at.error
    read = next(s.value for s in at.success if s.value.startswith("Read "))
    at.switch_page("identifiability.py").run(timeout=180)
    assert no_crash(at)
    at.switch_page("upload.py")                                   # back: a browser's uploaders start empty
    at.file_uploader(key="upload_click_log").set_value([])
    at.file_uploader(key="upload_judgements").set_value(None).run(timeout=180)
    assert no_crash(at) and not at.error
    assert any(s.value == read for s in at.success), "the log was forgotten"
    kept = [c.value for c in at.caption if c.value.startswith("Using ")]
    assert any("sessions.csv" in c for c in kept) and any("j.qrels" in c for c in kept), kept
    at.button(key="upload_click_log_forget").click().run(timeout=180)
    assert any("Drop a file to start" in i.value for i in at.info)
