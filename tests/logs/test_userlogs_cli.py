import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from ultr_core.__main__ import main
from ultr_core.errors import DataFormatError
from ultr_core.logs.mapping import read_user_log

ROOT = Path(__file__).resolve().parents[2]
CSV = "query_id,doc_id,position,click,vertical\nq1,a,1,1,web\nq1,b,2,0,web\nq2,c,1,1,img\nq2,a,2,0,img\n"


def test_csv_default_columns(tmp_path):
    f = tmp_path / "log.csv"
    f.write_text(CSV)
    log, notes = read_user_log(f)
    assert len(log) == 4 and log.n_sessions == 2
    assert set(log.frame["doc_key"]) == {"a", "b", "c"}
    assert "vertical" in log.frame and any("session" in n for n in notes)


def test_tsv_parquet_and_mapping(tmp_path):
    df = pd.read_csv(pd.io.common.StringIO(CSV)).rename(columns={"query_id": "qid", "click": "clicked"})
    df.to_csv(tmp_path / "l.tsv", sep="\t", index=False)
    df.to_parquet(tmp_path / "l.parquet")
    for f in ("l.tsv", "l.parquet"):
        log, _ = read_user_log(tmp_path / f, columns={"qid": "query_id", "clicked": "click"})
        assert log.frame["click"].sum() == 2


def test_document_from_feature_columns(tmp_path):
    f = tmp_path / "f.csv"
    f.write_text("query_id,f1,f2,position,click\n1,0.1,0.2,1,0\n1,0.3,0.2,2,1\n2,0.1,0.2,3,0\n")
    log, _ = read_user_log(f, doc_columns=["f1", "f2"])
    assert log.frame["doc_id"].tolist() == [0, 1, 0]     # identical features = one document


@pytest.mark.parametrize("text, problem", [
    ("query_id,doc_id,click\n1,a,0\n", "missing column(s) position"),
    ("query_id,doc_id,position,click\n1,a,x,0\n", "'position' must hold whole numbers written in decimal digits "
                                                 "(data row 1"),
    ("query_id,doc_id,position,click\n1,a,0x2,0\n", "decimal digits (data row 1: '0x2')"),
    ("query_id,doc_id,position,click\n1,a,2.0,0\n", "decimal digits (data row 1: '2.0')"),
    ("query_id,doc_id,position,click\n1,a,0,0\n", "1-based: 0 at data row 1"),
    ("query_id,doc_id,position,click\n1,a,50000,0\n", "out of range (at most 10,000)"),
    ("query_id,doc_id,position,click\n1,a,1,2\n", "'click' must hold 0 or 1 (data row 1"),
    ("query_id,doc_id,position,click\n1,,1,0\n", "'doc_id' is empty at data row 1"),
    ("query_id,doc_id,position,click\n", "empty"),
    ("", "empty"),
])
def test_csv_errors(tmp_path, text, problem):
    f = tmp_path / "bad.csv"
    f.write_text(text)
    with pytest.raises(DataFormatError) as e:
        read_user_log(f)
    assert problem in str(e.value) and "bad.csv" in str(e.value)


def test_mapping_unknown_column(tmp_path):
    (tmp_path / "l.csv").write_text(CSV)
    with pytest.raises(DataFormatError, match="mapped column"):
        read_user_log(tmp_path / "l.csv", columns={"nope": "query_id"})


def test_duplicates_dropped(tmp_path):
    f = tmp_path / "d.csv"
    f.write_text("session_id,query_id,doc_id,position,click\n1,1,a,1,1\n1,1,a,1,1\n1,1,b,2,0\n")
    log, notes = read_user_log(f)
    assert len(log) == 2 and any("duplicate" in n for n in notes)


YANDEX = ("10\t0\tQ\t5\t1\tu1\tu2\tu3\n10\t3\tC\tu2\n10\t9\tQ\t6\t1\tu2\tu4\n10\t10\tC\tu2\n"
          "11\t0\tQ\t5\t1\tu3\tu1\tu2\n11\t1\tC\tu9\n")


def test_yandex(tmp_path):
    f = tmp_path / "y.txt"
    f.write_text(YANDEX)
    log, notes = read_user_log(f, "yandex")
    df = log.frame
    assert len(df) == 8 and log.n_sessions == 3
    assert df[df.click == 1][["session_id", "position"]].values.tolist() == [[0, 2], [1, 1]]
    # a document is the pair (query, URL): u2 under query 5 is one document at positions 2 and 3
    u2q5 = df[(df.doc_key == "u2") & (df.query_key == "5")]
    assert u2q5["doc_id"].nunique() == 1 and sorted(u2q5["position"]) == [2, 3]
    assert any("ignored 1 click" in n for n in notes)


@pytest.mark.parametrize("text, problem", [
    ("10\t0\tQ\t5\n", "query row needs"),
    ("10\t0\tX\t5\n", "neither Q nor C"),
    ("10\t0\tC\n", "click row needs"),
    ("10 0 Q 5 1 u1\n", "tab-separated"),
    ("", "empty"),
])
def test_yandex_errors(tmp_path, text, problem):
    f = tmp_path / "y.txt"
    f.write_text(text)
    with pytest.raises(DataFormatError, match=problem):
        read_user_log(f, "yandex")


def test_ultra_directory(tmp_path):
    (tmp_path / "train").mkdir()
    (tmp_path / "train" / "train.init_list").write_text("q1 0 1 2\nq2 2 3 -1\n")
    (tmp_path / "train" / "train.clicks").write_text("q1 1 0 0\nq2 0 1 0\n")
    log, _ = read_user_log(tmp_path)
    assert len(log) == 5 and log.frame["click"].sum() == 2


def test_cli_json(tmp_path, capsys):
    f = tmp_path / "log.csv"
    f.write_text("query_id,doc_id,position,click\n1,a,1,1\n1,b,2,0\n2,c,3,0\n2,d,4,1\n3,c,4,0\n")
    assert main(["ig", str(f), "--json", "--merge", "--intervene", "--document", "global"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n_nodes"] == 4 and out["n_components"] == 3 and out["component_sizes"] == [2, 1, 1]
    assert out["identifiable"] is False
    assert out["n_components_after_merge"] == 1 and out["n_components_after_intervention"] == 1
    assert len(out["merges"]) == 2 and len(out["interventions"]) == 2
    assert {"document", "from_label", "to_label", "cost"} <= set(out["interventions"][0])


def test_cli_human_summary_and_error(tmp_path):
    f = tmp_path / "log.csv"
    f.write_text(CSV)
    r = subprocess.run([sys.executable, "-m", "ultr_core", "ig", str(f), "--bias", "vertical,position"],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0 and "NOT IDENTIFIABLE" in r.stdout and "vertical" in r.stdout
    r = subprocess.run([sys.executable, "-m", "ultr_core", "ig", str(tmp_path / "none.csv")],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2 and "none.csv" in r.stderr and "Traceback" not in r.stderr


def test_report_skips_intervention_for_huge_graphs():
    from ultr_core.identifiability.reports import analyse_identifiability
    from ultr_core.simulation.synthetic_logs import make_contextual_log
    log = make_contextual_log(n_sessions=2000, n_queries=1000, n_contexts=300, n_docs=10**7, seed=0)
    an = analyse_identifiability(log, ["context", "position"], merge=True, intervene=True,
                                 max_intervention_components=50)
    assert an.intervention_plan is None and "at most 50" in an.report.intervention_skipped
    assert an.report.merge.n_components_after == 1
