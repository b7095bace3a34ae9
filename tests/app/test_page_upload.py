"""AppTest of the Upload page: column mapping, formats (Yandex, CLARA2, PyClick, ULTRA folders and archives),
messages."""

from apphelp import no_crash, page, wait

CSV = (b"qid,url,pos,clicked,device\n1,a,1,1,m\n1,b,2,0,m\n2,b,1,0,d\n2,c,2,1,d\n"
       b"3,d,3,0,m\n3,e,4,1,m\n4,e,3,0,m\n4,f,4,1,m\n")   # positions {1,2} and {3,4}: two components


def test_upload_maps_columns_and_reports():
    at = page("upload.py").run()
    assert at.info and "Drop a file" in at.info[0].value
    at.file_uploader(key="upload_click_log").set_value(("log.csv", CSV, "text/csv")).run()
    assert no_crash(at) and not at.error
    mapped = {sb.label: sb.value for sb in at.selectbox}
    assert mapped["query_id"] == "qid" and mapped["doc_id"] == "url"   # guessed from common names
    comps = [m for m in at.metric if m.label == "components"][0]
    assert comps.value == "4"          # documents are (query, url) pairs: no url links two queries
    at.radio(key="upload_a_document_is").set_value("global").run()
    comps = [m for m in at.metric if m.label == "components"][0]
    assert comps.value == "2"          # url b and e recur across queries: positions {1,2} and {3,4}
    assert "log" in at.session_state
    assert at.get("download_button")


def test_upload_mapping_starts_fresh_for_a_new_file():
    at = page("upload.py").run()
    at.file_uploader(key="upload_click_log").set_value(("a.csv", CSV, "text/csv")).run()
    [sb for sb in at.selectbox if sb.label == "position"][0].set_value("device").run()
    other = CSV.replace(b"qid,url,pos,clicked,device", b"qid,url,pos,clicked,extra")
    at.file_uploader(key="upload_click_log").set_value(("b.csv", other, "text/csv")).run()
    assert no_crash(at)
    assert [sb for sb in at.selectbox if sb.label == "position"][0].value == "pos"


def test_upload_bad_file_shows_message_and_keeps_session():
    at = page("upload.py")
    at.session_state["keep"] = 42
    at.run()
    at.file_uploader(key="upload_click_log").set_value(("bad.csv", b"qid,url,pos,clicked\n1,a,zero,1\n",
                                                        "text/csv")).run()
    assert no_crash(at)
    assert at.error and "position" in at.error[0].value and "bad.csv" in at.error[0].value
    assert at.session_state["keep"] == 42


def test_upload_escapes_user_strings():
    at = page("upload.py").run()
    at.file_uploader(key="upload_click_log").set_value(("<b>x</b>_*.csv", b"qid,url,pos,clicked\n1,a,zero,1\n",
                                                        "text/csv")).run()
    assert no_crash(at)
    assert at.error and "<b>" not in at.error[0].value and "&lt;b&gt;x&lt;/b&gt;\\_\\*.csv" in at.error[0].value


def test_upload_yandex():
    y = b"10\t0\tQ\t5\t1\tu1\tu2\n10\t3\tC\tu2\n11\t0\tQ\t5\t1\tu2\tu1\n"
    at = page("upload.py").run()
    at.file_uploader(key="upload_click_log").set_value(("clicks.txt", y, "text/plain")).run()
    assert no_crash(at) and not at.error
    assert [m for m in at.metric if m.label == "identifiable"][0].value == "yes"


def test_upload_clara2_without_extension_shows_curves():
    import gzip
    rows = []
    for s in range(60):                                   # documents move between positions 1 and 2
        a, b = ("u1", "u2") if s % 2 else ("u2", "u1")
        rows.append(f"{s}\t0\tQ\t7\t1\t{a}\t{b}\t\t")
        if s % 3 == 0:
            rows.append(f"{s}\t5\tC\t{a}\t\t\t")
    data = gzip.compress(("\r\n".join(rows) + "\r\n").encode())
    at = page("upload.py").run()
    at.file_uploader(key="upload_click_log").set_value(("clara2_log", data, "application/octet-stream")).run()
    assert no_crash(at) and not at.error
    assert at.selectbox(key="upload_format").value == "yandex"                # sniffed from gzip content, no extension
    assert [m for m in at.metric if m.label == "identifiable"][0].value == "yes"
    assert any("Position bias per connected component" in h.value for h in at.subheader)
    assert at.get("plotly_chart")


def _zipped_official_layout(tmp_path, k):
    """An ULTRA folder laid out as the identifiability paper's published data, zipped as a user would."""
    import io
    import zipfile

    from test_official_layout import write_official_layout
    folder = write_official_layout(tmp_path / f"K={k}", k)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for f in sorted(folder.rglob("*")):
            if f.is_file():
                z.write(f, f"K={k}/" + f.relative_to(folder).as_posix())
    return buf.getvalue()


def test_upload_reads_a_zipped_ultra_folder_by_feature_vector(tmp_path):
    at = page("upload.py").run()
    at.file_uploader(key="upload_click_log").set_value(("K=1.zip", _zipped_official_layout(tmp_path, 1),
                                                        "application/zip")).run()
    assert no_crash(at) and not at.error
    assert at.selectbox(key="upload_format").value == "ultra"                  # sniffed from the archive
    assert [m for m in at.metric if m.label == "components"][0].value == "1"
    assert [m for m in at.metric if m.label == "identifiable"][0].value == "yes"
    assert any("verdict depends on what a document is" in i.value for i in at.info)
    at.radio(key="upload_a_document_is").set_value("query").run()  # (query, document): nothing links two positions
    assert [m for m in at.metric if m.label == "components"][0].value == "10"
    assert at.session_state["log_key"][0] == "upload"


def test_upload_reads_a_pyclick_log():
    text = b"q1\ta,b,c : b , a; q1\tb,a,c :; q1\tc,a,b : c;\n" * 20
    at = page("upload.py").run()
    at.file_uploader(key="upload_click_log").set_value(("trainSample", text, "application/octet-stream")).run()
    assert no_crash(at) and not at.error
    assert at.selectbox(key="upload_format").value == "pyclick"
    assert [m for m in at.metric if m.label == "identifiable"][0].value == "yes"


def test_upload_reads_an_ultra_folders_files_dropped_together(tmp_path):
    from test_official_layout import write_official_layout
    folder = write_official_layout(tmp_path / "K=2", 2)
    files = [(f.name, f.read_bytes(), "application/octet-stream") for f in sorted((folder / "train").iterdir())]
    at = page("upload.py").run()
    at.file_uploader(key="upload_click_log").set_value(files).run()
    assert no_crash(at) and not at.error
    assert at.selectbox(key="upload_format").value == "ultra"
    assert [m for m in at.metric if m.label == "components"][0].value == "2"
    at.file_uploader(key="upload_click_log").set_value([("a.csv", CSV, "text/csv"), ("b.csv", CSV, "text/csv")]).run()
    assert no_crash(at) and at.error and "upload one log at a time" in at.error[0].value


def test_upload_compares_click_models_and_gives_relevance_with_components():
    rows = "".join(f"{s},q{s % 3},d{(s + p) % 5},{p},{int((s + p) % 4 == 0)}\n" for s in range(300) for p in (1, 2, 3))
    data = ("session_id,query_id,doc_id,position,click\n" + rows).encode()
    at = page("upload.py").run()
    at.file_uploader(key="upload_click_log").set_value(("sessions.csv", data, "text/csv")).run()
    assert no_crash(at) and not at.error
    assert "Which click model explains the clicks?" in [h.value for h in at.subheader]
    at = wait(at, "upload_cm_job", 120)                       # the zoo is one pooled job with progress per model
    assert no_crash(at) and not at.error
    table = next(d.value for d in at.dataframe if "perplexity" in d.value.columns)
    from ultr_core.clickmodels.registry import CLICK_MODELS
    assert list(table["model"]) == [s.label for s in CLICK_MODELS]
    assert (table["perplexity"] >= 1).all()
    learned = {s.label for s in CLICK_MODELS if s.prior == "learned"}   # each model's own prior by default
    assert learned and ((table["prior"].fillna("") != "") == table["model"].isin(learned)).all()
    import json
    titles = [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart")]
    assert {"Bias parameters by rank", "UBM: examination by rank and last click above"} <= set(titles)
    scalars = at.dataframe[-1].value                                     # DBN's γ and CCM's τ₁–τ₃
    assert list(scalars["model"]) == ["DBN", "CCM", "CCM", "CCM"] and scalars["value"].between(0, 1).all()
    labels = [b.label for b in at.get("download_button")]
    assert "Download relevance per (query, document) and model (CSV)" in labels
    # issue #47: judgements beside the click fit — a bad file says why and keeps the comparison, a good one is scored
    at.file_uploader(key="upload_judgements").set_value(("j.txt", b"\xff\xfe", "text/plain")).run()
    assert any("We could not read the judgements — " in e.value and "UTF-16" in e.value for e in at.error)
    assert any("perplexity" in d.value.columns for d in at.dataframe)
    qrels = "".join(f"q{q} 0 d{d} {(d + q) % 3}\n" for q in range(3) for d in range(5)) + "q9 0 d1 7\n"
    at.file_uploader(key="upload_judgements").set_value(("j.qrels", qrels.encode(), "text/plain")).run()
    assert no_crash(at) and not at.error
    assert any("grade outside 0–5" in i.value for i in at.info)
    at.checkbox(key="upload_include_prior").check().run()
    judged = next(d.value for d in at.dataframe if "Spearman" in d.value.columns)
    assert list(judged["model"])[-2:] == ["raw CTR", "logged order"] and len(judged) == len(CLICK_MODELS) + 2
    titles = [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart")]
    assert "Click fit (x) beside agreement with the judges (y)" in titles
    # issue #47 item 6: the learned prior refits the zoo; the table says what each model chose
    at.radio(key="upload_cm_prior").set_value("learned for all").run()
    assert at.file_uploader(key="upload_judgements").value is not None   # kept while the zoo refits
    at = wait(at, "upload_cm_job", 180)
    table = next(d.value for d in at.dataframe if "perplexity" in d.value.columns)
    assert "prior" in table.columns and (table["prior"].fillna("") != "").all()
    assert any("Spearman" in d.value.columns for d in at.dataframe)        # the judges re-scored on the new fit


def test_upload_without_session_ids_says_why_no_click_model_is_fitted():
    at = page("upload.py").run()
    at.file_uploader(key="upload_click_log").set_value(("log.csv", CSV, "text/csv")).run()
    assert no_crash(at)
    assert any("Click models need sessions" in i.value for i in at.info)


def test_upload_says_what_the_verdict_means_for_trust_bias_users():
    """Issue #48, item 4: the same graph read for PBM users (one scale per component) and for trust-bias users (an
    affine map, and every factor needs two documents: here each position shows 2 distinct documents)."""
    at = page("upload.py").run()
    at.file_uploader(key="upload_click_log").set_value(("log.csv", CSV, "text/csv")).run()
    at.radio(key="upload_a_document_is").set_value("global").run()
    said = [i.value for i in at.info if i.value.startswith("For PBM users")]
    assert said == ["For PBM users: relevance comparable only within each of the 2 components."]
    at.selectbox(key="upload_users_click_as").set_value("trust").run()
    said = [i.value for i in at.info if i.value.startswith("For Trust users")][0]
    assert "up to an affine map" in said and "only within each of the 2 components" in said
    assert "every factor shows at least two documents" in said and no_crash(at)


def test_upload_values_a_candidate_ranking_on_the_log():
    """Issue #47, item 4: the production order by default (valued at what was logged), a scores file with bad rows
    counted, a click model's relevance; the estimators' table and the value figure."""
    import json

    from ultr_core.studies.counterfactual import simulate_log
    frame, _ = simulate_log("pbm", 600, n_queries=5, depth=4, epsilon=0.3, seed=2)
    at = page("upload.py").run()
    at.file_uploader(key="upload_click_log").set_value(("s.csv", frame.to_csv(index=False).encode(),
                                                        "text/csv")).run()
    assert "Would a new ranking do better?" in [h.value for h in at.subheader]
    at = wait(at, "upload_cf_job", 120)
    assert no_crash(at) and not at.error
    table = next(d.value for d in at.dataframe if "90 % interval" in d.value.columns)
    assert list(table["estimator"]) == ["logged (observed)", "DM", "IPS", "SNIPS", "DR"]
    assert "note" not in table.columns                              # each note in full under the table (issue #60)
    assert any("**DR** — " in c.value for c in at.caption)
    assert at.selectbox(key="upload_cf_dm").value == "PBM"          # the direct method's default: the users' PBM
    titles = [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart")]
    assert "the production order: expected clicks in the top 4 per session" in titles
    at.selectbox(key="upload_cf_source").set_value("a scores file").run()
    assert any("Upload a scores file" in i.value for i in at.info)
    pairs = frame[["query_id", "doc_id"]].drop_duplicates()
    scores = pairs.assign(score=pairs["doc_id"] % 100 // 2).to_csv(index=False) + "0,0,nan\n3,999,1\n"
    at.file_uploader(key="upload_cf_scores").set_value(("s.csv", scores.encode(), "text/csv")).run()
    at = wait(at, "upload_cf_job", 120)
    assert no_crash(at) and not at.error
    notes = " ".join(i.value for i in at.info)
    assert "NaN or infinite score" in notes and "never shows" in notes and "tied scores" in notes
    at.file_uploader(key="upload_cf_scores").set_value(("s.csv", b"a,b\n1,2\n", "text/csv")).run()
    at = wait(at, "upload_cf_job", 60)
    assert any("The ranking is not valued" in i.value and "no query column" in i.value for i in at.info)
    at.selectbox(key="upload_cf_source").set_value("a click model's relevance").run()
    at = wait(at, "upload_cf_job", 120)
    table = next(d.value for d in at.dataframe if "90 % interval" in d.value.columns)
    assert table["estimate"].notna().all()
    from ultr_core.counterfactual.evaluate import expected_seconds  # their cost is said before they start
    n_pairs = len(frame[["query_id", "doc_id"]].drop_duplicates())
    cost = [f"{expected_seconds(n_pairs, affine=a):.0f} s" for a in (True, False)]
    assert at.checkbox(key="upload_cf_affine").label.endswith(f"about {cost[0]} instead of {cost[1]}")
    at.checkbox(key="upload_cf_affine").check().run()            # trust bias's affine estimators join the table
    at = wait(at, "upload_cf_job", 120)
    table = next(d.value for d in at.dataframe if "90 % interval" in d.value.columns)
    assert list(table["estimator"])[-2:] == ["Affine-IPS", "Affine-DR"] and no_crash(at) and not at.error


def test_upload_values_the_candidate_on_the_judges_dcg_with_both_intervals():
    """With a judgements file the evaluation adds the candidate's judged DCG@k beside the production order's, each
    with its interval from the one formatter the CLI uses (the page formatted the bounds itself: a bound without a
    value would have ended the page in a TypeError)."""
    import re

    from ultr_core.studies.counterfactual import simulate_log
    frame, _ = simulate_log("pbm", 600, n_queries=5, depth=4, epsilon=0.3, seed=2)
    at = page("upload.py").run()
    at.file_uploader(key="upload_click_log").set_value(("s.csv", frame.to_csv(index=False).encode(),
                                                        "text/csv")).run()
    at = wait(at, "upload_cm_job", 120)
    pairs = frame[["query_id", "doc_id"]].drop_duplicates()
    qrels = "".join(f"{q} 0 {d} {d % 3}\n" for q, d in zip(pairs["query_id"], pairs["doc_id"]))
    at.file_uploader(key="upload_judgements").set_value(("j.qrels", qrels.encode(), "text/plain")).run()
    at = wait(at, "upload_cf_job", 120)
    assert no_crash(at) and not at.error
    judged = [c.value for c in at.caption if c.value.startswith("Judged: DCG@4 ")]
    number = r"\d+\.\d{3}"
    interval = rf"{number} \\?\[{number}, {number}\\?\]"           # brackets escaped for markdown
    assert len(judged) == 1 and re.search(rf"DCG@4 {interval} against the production order's {interval};",
                                          judged[0]), judged


def test_upload_refuses_side_files_beyond_the_page_cap_and_keeps_the_log(monkeypatch):
    """A scores or judgements file larger than the page parses (ultr_core.logs.scores.PAGE_MAX_BYTES, lowered here)
    gets one message naming the limit and the CLI; the click models and the evaluation stay."""
    import ultr_core.logs.scores as scores_module
    from ultr_core.studies.counterfactual import simulate_log
    frame, _ = simulate_log("pbm", 300, n_queries=3, depth=3, epsilon=0.3, seed=1)
    at = page("upload.py").run()
    at.file_uploader(key="upload_click_log").set_value(("s.csv", frame.to_csv(index=False).encode(),
                                                        "text/csv")).run()
    at = wait(at, "upload_cm_job", 120)
    monkeypatch.setattr(scores_module, "PAGE_MAX_BYTES", 50)
    qrels = "".join(f"{q} 0 {100 * q + d} 1\n" for q in range(3) for d in range(3)) * 3
    at.file_uploader(key="upload_judgements").set_value(("j.qrels", qrels.encode(), "text/plain")).run()
    at.selectbox(key="upload_cf_source").set_value("a scores file").run()
    pairs = frame[["query_id", "doc_id"]].drop_duplicates()
    at.file_uploader(key="upload_cf_scores").set_value(("s.csv", pairs.assign(score=1).to_csv(index=False).encode(),
                                                        "text/csv")).run()
    errors = [e.value for e in at.error]
    assert any("We did not read the judgements" in e and "command line" in e for e in errors), errors
    assert any("We did not read the scores" in e and "command line" in e for e in errors), errors
    assert any("perplexity" in d.value.columns for d in at.dataframe) and no_crash(at)


def test_an_upload_is_parsed_once_and_a_larger_one_read_out_of_core(monkeypatch):
    """A small upload is parsed once — read and kept whole, never counted out of core first — and a rerun parses
    nothing; one over the kept-log limit (here 6 rows) is read out of core only, and the page says the same."""
    import ultr_core.logs.bounds as bounds
    import ultr_core.logs.ingestion as ingestion
    import ultr_core.logs.mapping as mapping
    calls = {"read": [], "ingest": 0}
    read, ingest = mapping.read_user_log, ingestion.ingest

    def counted_read(*a, **k):
        calls["read"].append(k.get("max_rows"))
        return read(*a, **k)

    def counted_ingest(*a, **k):
        calls["ingest"] += 1
        return ingest(*a, **k)
    monkeypatch.setattr(mapping, "read_user_log", counted_read)
    monkeypatch.setattr(ingestion, "ingest", counted_ingest)
    unique = CSV.replace(b"device", b"device_once")          # content no other test cached
    at = page("upload.py").run()
    at.file_uploader(key="upload_click_log").set_value(("log.csv", unique, "text/csv")).run()
    assert no_crash(at) and not at.error
    assert calls == {"read": [bounds.UPLOAD_KEEP_ROWS], "ingest": 0} and "log" in at.session_state
    kept_components = [m for m in at.metric if m.label == "components"][0].value
    at.radio(key="upload_a_document_is").set_value("global").run()
    at.radio(key="upload_a_document_is").set_value("auto").run()
    assert calls["ingest"] == 0 and len(calls["read"]) == 2   # the document choice is part of the read; back: cached

    monkeypatch.setattr(bounds, "UPLOAD_KEEP_ROWS", 6)
    calls.update(read=[], ingest=0)
    at = page("upload.py").run()
    at.file_uploader(key="upload_click_log").set_value(("big.csv", unique + b"5,g,1,1,m\n", "text/csv")).run()
    assert no_crash(at) and not at.error
    assert calls == {"read": [6], "ingest": 1}
    assert [m for m in at.metric if m.label == "components"][0].value == kept_components   # g: a 5th query


def test_the_report_download_reads_the_log_for_the_users_the_page_assumes(monkeypatch):
    """The JSON download is the report the page shows: its users' reading follows "users click as" (it said PBM's
    whatever the page assumed), and it is the CLI's ``ig --users`` object for that model."""
    import json

    import streamlit
    made = {}
    original = streamlit.download_button

    def spy(label, data, *args, **kwargs):
        if str(label).startswith("Download the report (JSON)"):
            made["json"] = data() if callable(data) else data
        return original(label, data, *args, **kwargs)
    monkeypatch.setattr(streamlit, "download_button", spy)
    at = page("upload.py").run()
    at.file_uploader(key="upload_click_log").set_value(("log.csv", CSV, "text/csv")).run()
    assert json.loads(made["json"])["users"]["model"] == "pbm"
    at.selectbox(key="upload_users_click_as").set_value("trust").run()
    users = json.loads(made["json"])["users"]
    assert users["model"] == "trust" and "up to an affine map" in users["verdict"] and no_crash(at)
