"""Issue #61, items 1, 2, 10-12: one id rule on every entry point (the CLI's DuckDB reader, the Dask engine and the
pages' reader give one document count and one verdict for one file), side files (judgements, scores) read to the
log's standard: ids trimmed the same way, ragged rows counted by line, qrels headers, comments and CR-only line ends
understood, compressed or UTF-16 files named as such, options checked."""
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from ultr_core.identifiability.reports import analyse_identifiability
from ultr_core.logs import ingest, read_user_log
from ultr_core.logs.ids import canonical_ids
from ultr_core.logs.judgements import read_judgements
from ultr_core.logs.scores import read_scores

#: one id of each kind at each position: (ids, the documents the rule makes of them)
ID_KINDS = {
    "numeric-looking": (["7", "07", "007", "+7"], 4),
    "padded": (["7", " 7", "7 ", "8"], 2),
    "boolean-looking": (["true", "t", "TRUE", "T"], 4),
    "date-looking": (["2024-01-01", "2024-1-1", "2024/01/01", "12:00"], 4),
    "signed": (["-1", "1", "+1", "-01"], 4),
    "whole numbers": (["1", "2", "3", "4"], 4),
}


def _log(ids, sessions=100, seed=0) -> bytes:
    rng = np.random.default_rng(seed)
    rows = ["session_id,query_id,doc_id,position,click"]
    rows += [f"{s},q,{d},{p + 1},{int(rng.random() < 0.3)}" for s in range(sessions) for p, d in enumerate(ids)]
    return ("\n".join(rows) + "\n").encode()


@pytest.mark.parametrize("kind", list(ID_KINDS))
def test_one_file_gives_one_document_count_and_one_verdict_on_every_reader(tmp_path, kind):
    ids, documents = ID_KINDS[kind]
    data = _log(ids)
    path = tmp_path / "log.csv"
    path.write_bytes(data)
    seen = {}
    for engine in ("duckdb", "dask"):
        rep = analyse_identifiability(ingest(str(path), "csv", engine=engine)).report
        seen[engine] = (rep.n_documents, rep.n_components)
    log, _ = read_user_log(data, "csv", name="log.csv")               # the pages' reader
    rep = analyse_identifiability(log).report
    seen["page"] = (rep.n_documents, rep.n_components)
    # each document is shown at its own position only: as many components as documents
    assert set(seen.values()) == {(documents, documents)}, seen


def test_ids_become_numbers_only_where_every_id_round_trips(tmp_path):
    path = tmp_path / "log.csv"
    path.write_bytes(_log(["1", "2", "3", "4"]))
    table = ingest(str(path), "csv")
    assert pd.api.types.is_integer_dtype(table.frame["doc_id"].dtype)
    path.write_bytes(_log(["1", "2", "3", "04"]))
    table = ingest(str(path), "csv")
    assert sorted(table.frame["doc_id"].unique()) == ["04", "1", "2", "3"]
    assert canonical_ids(pd.Series([" 12", "-3", None])).tolist() == [12, -3, pd.NA]
    assert canonical_ids(pd.Series(["9223372036854775808"])).tolist() == ["9223372036854775808"]   # past int64


def test_session_ids_that_differ_as_text_stay_apart_on_every_reader(tmp_path):
    rows = ["session_id,query_id,doc_id,position,click"]
    for s in list(range(1, 201)) + [f"0{s}" for s in range(1, 201)]:
        rows += [f"{s},q,d{p},{p},0" for p in (1, 2, 3, 4)]
    data = ("\n".join(rows) + "\n").encode()
    path = tmp_path / "s.csv"
    path.write_bytes(data)
    log, notes = read_user_log(data, "csv", name="s.csv")
    assert len(log.frame) == 1600 and not any("duplicate" in n for n in notes)
    for engine in ("duckdb", "dask"):
        table = ingest(str(path), "csv", engine=engine)
        assert int(table.frame["impressions"].sum()) == 1600 and not any("duplicate" in n for n in table.notes)


def test_side_files_match_the_log_by_the_same_text():
    log, _ = read_user_log(b"query_id,doc_id,position,click\n08,0800,1,1\n08,0801,2,0\n", "csv", name="l.csv")
    assert sorted(log.frame["doc_key"]) == ["0800", "0801"] and set(log.frame["query_key"]) == {"08"}
    j = read_judgements(b"query_id, doc_id, grade\n08, 0800, 2\n 08 ,0801 ,1\n", name="j.csv")
    assert j.frame[["query_id", "doc_id"]].values.tolist() == [["08", "0800"], ["08", "0801"]]
    s = read_scores(b"query_id,doc_id,score\n08 , 0800,1.5\n", "s.csv")
    assert s.frame[["query_id", "doc_id"]].values.tolist() == [["08", "0800"]]


def test_ragged_rows_are_counted_by_line_not_a_traceback():
    j = read_judgements(b"qid,doc,grade\n1,a,2\n2,b,1,9\n\n3,\"c,1\n", name="j.csv")
    assert j.frame.values.tolist() == [["1", "a", 2.0]]
    assert j.counts["unreadable"] == 2 and "(lines 3, 5)" in j.notes[0]
    s = read_scores(b"qid,doc,score\nq,a,1\nq,b,2,3\n", "s.csv")
    assert len(s.frame) == 1 and s.counts["unreadable"] == 1 and "(line 3)" in s.notes[0]


@pytest.mark.parametrize("data", [b"qid iter docno rel\n1 0 a 2\n2 0 b 1\n", b"# TREC qrels\n1 0 a 2\n2 0 b 1\n",
                                  b"1 0 a 2\r2 0 b 1\r"])
def test_qrels_headers_comments_and_cr_line_ends_are_read(data):
    j = read_judgements(data, name="--judgements")
    assert j.format == "qrels" and j.frame.values.tolist() == [["1", "a", 2.0], ["2", "b", 1.0]]
    assert j.counts["unreadable"] == 0


def test_a_table_without_a_query_column_is_named_under_the_files_own_name():
    with pytest.raises(Exception, match="^--judgements: the header names no query column"):
        read_judgements(b"doc,grade\na,1\n", name="--judgements")


@pytest.mark.parametrize("command", [["rankers", "--split", "nan"], ["click-models", "x.csv", "--split", "1.5"]])
def test_a_share_outside_zero_one_is_refused_by_name(command):
    out = subprocess.run([sys.executable, "-m", "ultr_core", *command], capture_output=True, text=True)
    assert out.returncode == 2 and out.stderr.startswith("error: --split: must be a number in (0, 1)")
    assert "Traceback" not in out.stderr and "ValueError" not in out.stderr


def test_the_counterfactual_job_takes_the_judgements_the_page_parsed():
    """Issue #61, item 10: a judgements file was parsed in the server and again in the job's worker; the page now
    parses it once (in the shared cache) and the job takes the parsed judgements — with the same numbers."""
    from ultr_core.studies.counterfactual import simulate_log
    from ultr_core.tasks.value_ranking import value_ranking_job as evaluate_job
    frame, _ = simulate_log("pbm", 300, n_queries=4, epsilon=0.3, seed=1)
    qrels = "".join(f"{q} 0 {d} {(q + d) % 3}\n" for q in range(4) for d in range(20)).encode()
    parsed = evaluate_job(frame, "log", "production", scores=None, model="pbm", k=3,
                          judgements=read_judgements(qrels, name="judgements"))
    again = evaluate_job(frame, "log", "production", scores=None, model="pbm", k=3, judgements=qrels)
    assert parsed.judged == again.judged and parsed.judged["judged_share"] > 0


@pytest.mark.parametrize("column", ["session_id", "query_id", "doc_id"])
@pytest.mark.parametrize("blank", ["", "  "], ids=["missing", "blank"])
def test_a_row_without_an_id_is_refused_alike_by_every_command_engine_and_reader(tmp_path, capsys, column, blank):
    """A missing or blank id (spaces only: nothing once trimmed) is refused with one rule everywhere, naming the
    column — never made a session or document of its own (DuckDB grouped missing session ids into one session,
    Dask and the rows reader dropped them silently, and a blank doc id was a document)."""
    from clihelp import refused
    rows = ["session_id,query_id,doc_id,position,click"]
    for s in range(6):
        for r, d in ((1, "a"), (2, "b")):
            rows.append(f"{s},{s % 2},{d if r == 1 else 'b'},{r},{int((s + r) % 2)}")
    cells = rows[5].split(",")
    cells[["session_id", "query_id", "doc_id"].index(column)] = blank
    rows[5] = ",".join(cells)
    f = tmp_path / "log.csv"
    f.write_text("\n".join(rows) + "\n")
    words = (f"column '{column}' is empty in 1 row(s)", "needs its id")
    for engine in ("duckdb", "dask"):
        refused(["click-models", f, "--engine", engine], capsys, *words)
        refused(["evaluate", f, "--engine", engine, "--n-boot", "20"], capsys, *words)
    for engine in ("duckdb", "dask"):
        refused(["ig", f, "--estimate", "none", "--engine", engine], capsys, *words)
    with pytest.raises(ValueError, match=f"column '{column}' is empty"):
        read_user_log(str(f))


@pytest.mark.parametrize("sessions, numbers", [(True, False), (False, False), (True, True)])
def test_a_kept_log_reports_what_the_file_read_out_of_core_reports(tmp_path, capsys, sessions, numbers):
    """The Upload page analyses a small upload as a kept log (its ``doc_id`` codes (query, document) pairs); the
    report it downloads — a LogCheck of that analysis with the page's reader's notes — is the CLI's report of the same
    file: the document columns, the weakest documents and the certainty plan's named by the file's own ids and the
    within-query document orders included (they were the codes' and missing), the numbers equal to rounding — and
    so is the relevance per document.  With ``numbers`` the document ids are numbers whose text sorts otherwise
    (7, 1007, …, 7007): the kept log coded the pairs by that text and the CLI by the numbers, so the seeded
    document bootstrap gave the documents other weights and its bands differed (PyClick's sample: position 2's
    [0.645, 0.891] on the page against [0.684, 0.906] from ``ig``)."""
    from clihelp import cli, same_report
    from loghelp import random_log

    from ultr_core.tasks import CheckOptions, LogCheck, check_log
    path = tmp_path / "clicks.csv"
    frame = random_log(n_sessions=300, seed=4)[0]
    if numbers:
        frame["doc_id"] = frame["doc_id"].str[1:].astype(int) * 1000 + 7
    (frame if sessions else frame.drop(columns="session_id")).to_csv(path, index=False)
    rc, out, _ = cli(["ig", path, "--merge", "--intervene", "--bootstrap", "20", "--certainty", "2", "--json"], capsys)
    ours = json.loads(out)
    log, notes = read_user_log(path.read_bytes(), "csv", name=path.name)
    options = CheckOptions(merge=True, intervene=True, bootstrap=20, certainty=2)
    page = json.loads(LogCheck(check_log(log, options).analysis, options, "upload", tuple(notes), log).to_json())
    assert rc == 0 and ours.pop("source") == str(path) and page.pop("source") == "upload"
    assert set(ours.pop("notes")) <= set(page.pop("notes"))
    practical = page["position_bias"]["practical_identifiability"]
    assert practical["document_orders"]["pairs"] > 0 and page["document_columns"] == ["query_id", "doc_id"]
    assert page["certainty_plan"]["swaps"][0]["document"].startswith("query_id=")
    # the relevance per document (ig --documents; the Upload page's table and CSV) in the file's own ids
    kept = LogCheck(check_log(log, options).analysis, options, "upload", tuple(notes), log).documents
    read = check_log(str(path), options).documents
    ids = {"query_id": str, "doc_id": str}               # as the CSV writes them (the CLI reads 7 as a number)
    pd.testing.assert_frame_equal(kept.astype(ids), read.astype(ids), check_exact=False, rtol=1e-9)
    assert same_report(page, ours)


@pytest.mark.slow
def test_the_pages_click_models_and_evaluate_get_the_clis_numbers_for_one_file(tmp_path):
    """The Upload page hands its kept log's rows to the click-model and ``evaluate`` jobs (``file_id_frame``): with
    document ids that are numbers whose text sorts otherwise (7, 1007, …, 7007), the jobs give what the CLI gives for
    the file — every interval to the last bit (the page passed the ids' text, so the pairs, the patterns and the
    seeded bootstrap over them came in another order: PyClick's sample, DR [1.192, 1.424] on the page against
    [1.186, 1.383] from ``evaluate``)."""
    from clihelp import same_report
    from loghelp import random_log

    from ultr_core.logs import file_id_frame
    from ultr_core.tasks.fit_click_models import ClickModelOptions, click_models_job, fit_click_models
    from ultr_core.tasks.value_ranking import RankingOptions, value_ranking, value_ranking_job
    frame = random_log(n_sessions=400, seed=5)[0].drop(columns="device")
    frame["doc_id"] = frame["doc_id"].str[1:].astype(int) * 1000 + 7
    path = tmp_path / "clicks.csv"
    frame.to_csv(path, index=False)
    log, _ = read_user_log(path.read_bytes(), "csv", name=path.name)
    rows = file_id_frame(log)
    assert rows["doc_id"].dtype == np.int64 and sorted(rows["doc_id"].unique())[:2] == [7, 1007]
    page = value_ranking_job(rows, "log", "production", scores=None, model="pbm", k=5, judgements=None)
    cli = value_ranking(str(path), RankingOptions(k=5)).report
    for key, e in cli.estimators.items():
        mine = page.estimators[key]
        assert (mine.estimate, mine.lower, mine.upper) == (e.estimate, e.lower, e.upper), key
    f = log.frame                                  # what the page passed before: the ids' text
    text = value_ranking_job(f.assign(query_id=f["query_key"], doc_id=f["doc_key"]), "log", "production",
                             scores=None, model="pbm", k=5, judgements=None)
    assert any(text.estimators[k].lower != e.lower for k, e in cli.estimators.items())
    page, cli = (json.loads(json.dumps(r.to_json(), default=str)) for r in (
        click_models_job(rows, "log"), fit_click_models(str(path), ClickModelOptions()).report))
    for report in (page, cli):
        for m in report["models"].values():
            m.pop("seconds")                                   # how long each fit took: not a figure of the log
    assert same_report(page, cli, tol=1e-9)
