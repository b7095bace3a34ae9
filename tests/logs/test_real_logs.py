"""Real click logs: factor coding, document keys, readers for real formats (written here from
their documented layouts), out-of-core ingestion (DuckDB, Dask) and per-component position
bias estimation checked against an independent implementation and the simulator's truth."""
import gzip
import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from loghelp import random_log

from ultr_core.__main__ import main
from ultr_core.errors import DataFormatError
from ultr_core.identifiability import IdentifiabilityGraph, factor_codes
from ultr_core.logs.ingestion import CountTable, ingest
from ultr_core.logs.mapping import read_user_log
from ultr_core.logs.sniff import sniff_format

TWO_ROWS = "query_id,doc_id,position,click,vertical\n1,X,1,1,web\n2,Y,2,0,\n"


# --------------------------------------------------------------------------- coding
@pytest.mark.parametrize("bias", [["position", "vertical"], ["vertical", "position"]])
def test_missing_value_is_its_own_level_in_any_column_order(tmp_path, capsys, bias):
    f = tmp_path / "two.csv"
    f.write_text(TWO_ROWS)
    assert main(["ig", str(f), "--bias", ",".join(bias), "--json", "--estimate", "none"]) == 0
    rep = json.loads(capsys.readouterr().out)
    # two documents, each at its own factor: two components, never identifiable
    assert rep["n_nodes"] == 2 and rep["n_components"] == 2 and rep["identifiable"] is False


def test_missing_level_never_merges_with_a_value():
    df = pd.DataFrame({"p": [1, 1, 2], "v": ["web", None, "web"]})
    codes, keys = factor_codes(df, ["p", "v"])
    assert len(set(codes)) == 3
    g = IdentifiabilityGraph.from_counts(CountTable(df.assign(doc=[0, 0, 1], impressions=1, clicks=0),
                                                    ("doc",), ("p", "v")))
    assert sorted(g.factor_labels()) == ["(p=1, v=(missing))", "(p=1, v=web)", "(p=2, v=web)"]


def test_six_columns_of_100k_values_decode_exactly():
    rng = np.random.default_rng(0)
    n = 100_000
    df = pd.DataFrame({f"c{i}": rng.permutation(n) * 7 + i for i in range(6)})   # 10^5 distinct per column
    codes, keys = factor_codes(df, list(df.columns))
    assert codes.min() == 0 and codes.max() == len(keys) - 1 == n - 1
    back = keys.iloc[codes].reset_index(drop=True)
    pd.testing.assert_frame_equal(back, df, check_dtype=False)       # every label decodes to its row


_value = st.one_of(st.none(), st.integers(0, 3), st.sampled_from(["a", "b"]))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), _value, _value, _value), min_size=1, max_size=40),
       st.permutations(["x", "y", "z"]))
def test_coding_and_components_invariant_to_column_order(rows, order):
    df = pd.DataFrame(rows, columns=["doc", "x", "y", "z"]).astype({"x": object, "y": object, "z": object})
    base, _ = factor_codes(df, ["x", "y", "z"])
    perm, _ = factor_codes(df, list(order))
    # the same partition of rows into factors, whatever the order
    assert (pd.factorize(base)[0] == pd.factorize(perm)[0]).all()
    table = df.assign(impressions=1, clicks=0)
    a = IdentifiabilityGraph.from_counts(CountTable(table, ("doc",), ("x", "y", "z")))
    b = IdentifiabilityGraph.from_counts(CountTable(table, ("doc",), tuple(order)))
    assert a.n_components == b.n_components and sorted(a.sizes) == sorted(b.sizes)
    # a missing value never shares a code with a present one
    for col in ("x", "y", "z"):
        miss = df[col].isna().to_numpy()
        if miss.any() and (~miss).any():
            assert not set(base[miss]) & set(base[~miss])


# --------------------------------------------------------------------------- document keys
def test_document_is_query_doc_pair_unless_global(tmp_path, capsys):
    f = tmp_path / "log.csv"
    f.write_text("query_id,doc_id,position,click\nq1,a,1,1\nq2,a,2,0\n")
    log, _ = read_user_log(f)
    assert log.frame["doc_id"].nunique() == 2                      # 'a' under two queries: two documents
    log, _ = read_user_log(f, document="global")
    assert log.frame["doc_id"].nunique() == 1
    assert main(["ig", str(f), "--json", "--estimate", "none"]) == 0
    assert json.loads(capsys.readouterr().out)["n_components"] == 2
    assert main(["ig", str(f), "--json", "--estimate", "none", "--document", "global"]) == 0
    assert json.loads(capsys.readouterr().out)["n_components"] == 1


# --------------------------------------------------------------------------- readers
# Yandex relevance prediction, as NAVER's CLARA2 writes it: click rows padded with empty tab
# fields, CRLF line ends, a BOM, a blank line.
CLARA2 = ("\ufeff7\t0\tQ\t100\t1\t11\t12\t13\t\t\r\n7\t5\tC\t12\t\t\t\t\t\t\r\n\r\n"
          "7\t9\tQ\t100\t1\t12\t11\r\n7\t12\tC\t12\t\t\r\n8\t0\tQ\t101\t1\t14\t15\r\n8\t3\tC\t15\r\n8\t4\tC\t99\r\n")


def _expected_clara(df):
    assert len(df) == 7 and df["click"].sum() == 3
    clicked = df[df["click"] == 1][["query_key", "doc_key", "position"]].values.tolist()
    assert clicked == [["100", "12", 2], ["100", "12", 1], ["101", "15", 2]]


@pytest.mark.parametrize("gz", [False, True])
def test_yandex_clara2_padded_crlf_bom_gzip_without_extension(tmp_path, gz):
    data = CLARA2.encode()
    f = tmp_path / "clara2_search_log"                   # no extension
    f.write_bytes(gzip.compress(data) if gz else data)
    assert sniff_format(f) == "yandex"
    log, notes = read_user_log(f)                        # format sniffed from the content
    _expected_clara(log.frame)
    assert any("ignored 1 click" in n for n in notes)
    log2, _ = read_user_log(f, "yandex")
    assert log2.frame.equals(log.frame)
    log3, _ = read_user_log(f.read_bytes(), name="upload")   # the upload path (bytes)
    assert log3.frame["click"].sum() == 3


def test_cli_reads_clara2_with_and_without_format(tmp_path, capsys):
    f = tmp_path / "clara2"
    f.write_text(CLARA2)
    for extra in ([], ["--format", "yandex"]):
        assert main(["ig", str(f), "--json", "--bootstrap", "20"] + extra) == 0
        rep = json.loads(capsys.readouterr().out)
        assert rep["n_rows"] == 7 and rep["n_clicks"] == 3 and rep["n_nodes"] == 3
        assert "position_bias" in rep


@pytest.mark.parametrize("text, problem, line", [
    ("7\t0\tQ\t100\n", "query row needs", 1),
    ("7\t0\tQ\t100\t1\t11\n7\t0\tX\t5\n", "neither Q nor C", 2),
    ("7\t0\tQ\t100\t1\t11\n\n7\t0\tC\t\t\n", "click row needs", 3),
    ("7 0 Q 100 1 11\n", "tab-separated", 1),
])
def test_yandex_errors_name_the_line(tmp_path, text, problem, line):
    f = tmp_path / "y.txt"
    f.write_text(text)
    with pytest.raises(DataFormatError) as e:
        read_user_log(f, "yandex")
    assert problem in str(e.value) and e.value.line == line


# Yandex personalized web search (WSCD 2013): M, Q/T, C records; clicks name their SERP.
WSCD = ("1\tM\t3\t77\n"
        "1\t0\tQ\t0\t500\t1,2\t31,4\t32,4\t33,5\n"
        "1\t10\tC\t0\t32\n"
        "1\t20\tT\t1\t501\t3\t33,5\t31,4\n"
        "1\t25\tC\t1\t31\n"
        "2\tM\t4\t78\n"
        "2\t0\tQ\t0\t500\t1,2\t32,4\t31,4\n"
        "2\t5\tC\t0\t99\n")


def test_yandex2013_records_serp_clicks_and_domain(tmp_path, capsys):
    f = tmp_path / "train"
    f.write_text(WSCD)
    assert sniff_format(f) == "yandex2013"
    log, notes = read_user_log(f)
    df = log.frame
    assert len(df) == 7 and df["click"].sum() == 2 and "domain" in df
    clicked = df[df.click == 1][["query_key", "doc_key", "position"]].values.tolist()
    assert clicked == [["500", "32", 2], ["501", "31", 2]]
    assert any("ignored 1 click" in n for n in notes)
    assert main(["ig", str(f), "--bias", "position,domain", "--json", "--estimate", "none"]) == 0
    assert json.loads(capsys.readouterr().out)["n_nodes"] == 4      # (1,4) (2,4) (3,5) (1,5)


def test_yandex2013_error_line(tmp_path):
    f = tmp_path / "train"
    f.write_text("1\tM\t3\t77\n1\t0\tQ\t0\t500\t1,2\t31\n")
    with pytest.raises(DataFormatError) as e:
        read_user_log(f, "yandex2013")
    assert "URL,Domain" in str(e.value) and e.value.line == 2


def _baidu_doc(pos, url, mm, click):
    f = [""] * 32
    f[0], f[1], f[2], f[3], f[4], f[5] = str(pos), url, "\x01".join(["5", "6"]), "7\x018", str(mm), str(click)
    f[9], f[10] = "120", "3.5"
    return "\t".join(f)


def test_baidu_sessions_gzip_and_display_features(tmp_path, capsys):
    lines = ["1001\t11\x0112\t", _baidu_doc(1, "ua", 0, 1), _baidu_doc(2, "ub", 3, 0),
             "1002\t13\t", _baidu_doc(1, "ub", 3, 0), _baidu_doc(2, "ua", 0, 1)]
    f = tmp_path / "part-00001.gz"
    f.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    assert sniff_format(f) == "baidu"
    log, _ = read_user_log(f)
    df = log.frame
    assert len(df) == 4 and df["click"].sum() == 2 and log.n_sessions == 2
    assert df["multimedia_type"].tolist() == [0, 3, 3, 0] and df["serp_height"].eq(120).all()
    assert main(["ig", str(f), "--bias", "position,multimedia_type", "--json", "--estimate", "none"]) == 0
    assert json.loads(capsys.readouterr().out)["n_nodes"] == 4


def test_baidu_errors(tmp_path):
    f = tmp_path / "b.txt"
    f.write_text(_baidu_doc(1, "ua", 0, 1) + "\n")
    with pytest.raises(DataFormatError, match="before any query line") as e:
        read_user_log(f, "baidu")
    assert e.value.line == 1
    f.write_text("1001\tq\t\n" + _baidu_doc(1, "ua", 0, 2) + "\n")
    with pytest.raises(DataFormatError, match="0 or 1") as e:
        read_user_log(f, "baidu")
    assert e.value.line == 2


def test_ingest_matches_the_in_memory_path_for_globs_of_gzip_csv(tmp_path):
    df, _ = random_log()
    half = len(df) // 2
    for i, part in enumerate((df.iloc[:half], df.iloc[half:])):
        (tmp_path / f"part{i}.csv.gz").write_bytes(gzip.compress(part.to_csv(index=False).encode()))
    table = ingest(str(tmp_path / "part*.csv.gz"), bias=["position", "device"])
    log, _ = read_user_log(df.to_csv(index=False).encode(), "csv", name="mem")
    ref = CountTable.from_log(log, ["position", "device"])
    assert table.n_rows == ref.n_rows == len(df) and table.n_clicks == ref.n_clicks == df["click"].sum()
    a, b = IdentifiabilityGraph.from_counts(table), IdentifiabilityGraph.from_counts(ref)
    assert (a.n_factors, a.n_documents, a.n_components) == (b.n_factors, b.n_documents, b.n_components)


def test_ingest_errors_name_the_problem(tmp_path):
    f = tmp_path / "l.csv"
    f.write_text("query_id,doc_id,position,click\n1,a,1,2\n")
    with pytest.raises(DataFormatError, match="'click' must hold 0 or 1"):
        ingest(f)
    f.write_text("query_id,doc_id,position,click\n1,a,0,1\n")
    with pytest.raises(DataFormatError, match="'position' must hold whole numbers"):
        ingest(f)
    f.write_text("qid,doc_id,position,click\n1,a,1,1\n")
    with pytest.raises(DataFormatError, match="missing column"):
        ingest(f)
    assert ingest(f, columns={"qid": "query_id"}).n_rows == 1
    with pytest.raises(DataFormatError, match="not a regular file"):
        ingest(tmp_path, "csv")          # a directory given as a CSV
    with pytest.raises(DataFormatError, match="no file matches"):
        ingest(str(tmp_path / "none*.csv"))


def test_dask_engine_on_a_local_cluster_agrees_with_duckdb(tmp_path):
    distributed = pytest.importorskip("distributed")
    df, _ = random_log(n_sessions=500)
    f = tmp_path / "log.parquet"
    df.to_parquet(f)
    csv = tmp_path / "log.csv"
    df.to_csv(csv, index=False)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        for path in (f, csv):
            dk = ingest(path, engine="dask", scheduler=cluster.scheduler_address)
            db = ingest(path)
            cols = ["query_id", "doc_id", "position", "impressions", "clicks"]
            a = dk.frame[cols].astype({"query_id": str}).sort_values(cols[:3]).reset_index(drop=True)
            b = db.frame[cols].astype({"query_id": str}).sort_values(cols[:3]).reset_index(drop=True)
            pd.testing.assert_frame_equal(a, b, check_dtype=False)


def test_ultra_click_directory_vectorised_reader(tmp_path):
    (tmp_path / "train").mkdir()
    (tmp_path / "train" / "train.init_list").write_text("q1 0 1 2\n\nq2 2  3 -1\n")
    (tmp_path / "train" / "train.clicks").write_text("q1 1 0 0\n\nq2 0 1 0\n")
    log, _ = read_user_log(tmp_path)
    df = log.frame
    assert len(df) == 5 and df["click"].tolist() == [1, 0, 0, 0, 1] and df["position"].tolist() == [1, 2, 3, 1, 2]
    (tmp_path / "train" / "train.clicks").write_text("q1 1 0 0\n")
    with pytest.raises(DataFormatError, match="has 1 lines but train.init_list has more") as e:
        read_user_log(tmp_path)
    assert e.value.line == 3
    (tmp_path / "train" / "train.clicks").write_text("q1 1 0\n\nq2 0 1 0\n")
    with pytest.raises(DataFormatError, match="2 clicks for 3 documents") as e:
        read_user_log(tmp_path)
    assert e.value.line == 1
    (tmp_path / "train" / "train.clicks").unlink()
    log, notes = read_user_log(tmp_path)
    assert log.frame["click"].sum() == 0 and any("all clicks are 0" in n for n in notes)


def _yandex_sample_text(n_sessions=300, seed=0, crlf=False, pad=False):
    rng = np.random.default_rng(seed)
    lines = []
    for s in range(n_sessions):
        urls = rng.integers(0, 50, size=10)
        f = (lambda v: f" {v} ") if pad else str
        lines.append("\t".join([f(s), "0", "Q", f(int(rng.integers(0, 20))), "213"] + [f(u) for u in urls]))
        for u in urls[rng.random(10) < 0.2]:
            lines.append("\t".join([f(s), "5", "C", f(u)]))
    sep = "\r\n" if crlf else "\n"
    return sep.join(lines) + sep


@pytest.mark.parametrize("crlf,pad,gz", [(False, False, False), (True, True, False), (False, True, True)])
def test_yandex_fast_path_equals_the_line_by_line_reader(tmp_path, crlf, pad, gz):
    """Files are read by DuckDB's CSV reader, uploads (bytes) line by line: same log."""
    import gzip as _gz

    from ultr_core.logs.normalise import read_normalised
    text = _yandex_sample_text(crlf=crlf, pad=pad).encode()
    path = tmp_path / ("y.txt.gz" if gz else "y.txt")
    path.write_bytes(_gz.compress(text) if gz else text)
    fast, notes_fast = read_normalised(str(path), "yandex")
    slow, notes_slow = read_normalised(text, "yandex", "upload")
    pd.testing.assert_frame_equal(fast.reset_index(drop=True), slow.reset_index(drop=True), check_dtype=False)
    assert notes_fast == notes_slow and fast["click"].sum() > 100


def _yandex_rich_text(n_sessions=400, seed=1):
    """Sessions with 1–3 result pages, clicks on an earlier page of the session, repeated clicks,
    orphan clicks, a URL shown twice on one page, and neighbouring sessions interleaved."""
    rng = np.random.default_rng(seed)
    sessions = []
    for s in range(n_sessions):
        lines, pages = [], []
        for _ in range(int(rng.integers(1, 4))):
            urls = rng.integers(0, 40, size=int(rng.integers(3, 11)))
            pages.append(urls)
            lines.append("\t".join([str(s), "0", "Q", str(int(rng.integers(0, 15))), "213"] + [str(u) for u in urls]))
            for u in urls[rng.random(len(urls)) < 0.25]:
                lines.append(f"{s}\t5\tC\t{u}")
                if rng.random() < 0.1:
                    lines.append(f"{s}\t6\tC\t{u}")                       # repeated click
            if len(pages) > 1 and rng.random() < 0.5:
                lines.append(f"{s}\t7\tC\t{rng.choice(pages[0])}")      # back to an earlier page
            if rng.random() < 0.05:
                lines.append(f"{s}\t8\tC\t999")                         # no page showed it
        sessions.append(lines)
    out = []
    for a in range(0, n_sessions, 2):                        # interleave sessions pairwise
        x, y = sessions[a], sessions[a + 1] if a + 1 < n_sessions else []
        for i in range(max(len(x), len(y))):
            out += ([x[i]] if i < len(x) else []) + ([y[i]] if i < len(y) else [])
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("bucket_rows", [None, 7])
def test_yandex_vectorised_click_matching_equals_the_sql_reader_on_messy_sessions(tmp_path, monkeypatch, bucket_rows):
    """The file path matches clicks with a binary search plus a SQL fallback; the upload path
    (bytes) with one SQL as-of rule: same impressions, clicks, notes and counts — also when the
    sessions are matched in many buckets (7 query rows each: ≈ 110 buckets, interleaved sessions
    in different buckets)."""
    import ultr_core.logs.yandex as lf
    from ultr_core.logs.ingestion import CountTable, ingest
    from ultr_core.logs.normalise import read_normalised
    calls = []
    if bucket_rows:
        monkeypatch.setattr(lf, "MATCH_BUCKET_ROWS", bucket_rows)
        real = lf._match_bucket
        monkeypatch.setattr(lf, "_match_bucket", lambda *a: calls.append(a[-1]) or real(*a))
    text = _yandex_rich_text()
    path = tmp_path / "rich.txt"
    path.write_text(text)
    fast, notes_fast = read_normalised(str(path), "yandex")
    slow, notes_slow = read_normalised(text.encode(), "yandex", "upload")
    pd.testing.assert_frame_equal(fast.reset_index(drop=True), slow.reset_index(drop=True), check_dtype=False)
    assert notes_fast == notes_slow
    assert any("ignored" in n for n in notes_fast) and any("repeated" in n for n in notes_fast)
    assert len(calls) == (0 if bucket_rows is None else -(-sum(ln.split("\t")[2] == "Q" for ln in text.splitlines())
                                                          // bucket_rows))
    # counts read by ingestion (pages counted before unpivoting) = counts of the row-level log
    table = ingest(str(path), "yandex")
    ref = slow.groupby(["query_id", "doc_id", "position"]).agg(impressions=("click", "size"),
                                                              clicks=("click", "sum")).reset_index()
    got = table.frame[["query_id", "doc_id", "position", "impressions", "clicks"]].copy()
    got[["query_id", "doc_id"]] = got[["query_id", "doc_id"]].astype(str)
    ref[["query_id", "doc_id"]] = ref[["query_id", "doc_id"]].astype(str)
    key = ["query_id", "doc_id", "position"]
    pd.testing.assert_frame_equal(got.sort_values(key).reset_index(drop=True),
                                  ref.sort_values(key).reset_index(drop=True), check_dtype=False)
    assert isinstance(table, CountTable) and table.frame["clicks"].sum() == slow["click"].sum()


def test_yandex_line_wider_than_sniffed_falls_back(tmp_path, monkeypatch):
    import ultr_core.logs.yandex as lf
    from ultr_core.logs.normalise import read_normalised
    text = _yandex_sample_text(50)
    path = tmp_path / "y.txt"
    path.write_text(text)
    ref, _ = read_normalised(str(path), "yandex")
    monkeypatch.setattr(lf, "_max_fields", lambda *a, **k: 6)      # as if the head had only short lines
    df, _ = read_normalised(str(path), "yandex")
    pd.testing.assert_frame_equal(df, ref)

