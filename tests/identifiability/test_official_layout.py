"""Identifiability on data laid out as other people lay it out: ULTRA folders with ``train/`` only,
documents shared across queries and keyed by their feature vector (the layout of the identifiability
paper's published ``dataset_fully_simulation`` folders, built here the same way), the verdict under the
other document key, and the vectorised position-bias estimators against per-component fits."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ultr_core.data.synthetic import make_paper_identifiability_data
from ultr_core.identifiability import IdentifiabilityGraph
from ultr_core.identifiability.estimation import ESTIMATORS, estimate_bias_full
from ultr_core.identifiability.reports import identifiability_report
from ultr_core.logs.ingestion import CountTable, ingest

ROOT = Path(__file__).resolve().parents[2]


def write_official_layout(folder: Path, k: int, seed: int = 0, n_queries: int = 150, per_position: int = 120,
                          shared: int = 12, duplicate_rows: int = 0) -> Path:
    """An ULTRA folder as the official data: settings.json and train/ only; one one-hot feature row
    per document (ids 0…n−1), init_list lines ``qid row row …`` pointing at them from many queries,
    labels aligned by line.  ``duplicate_rows`` appends copies of the first rows' vectors and points
    the first query at them (the same documents under other row numbers)."""
    d = make_paper_identifiability_data(n_components=k, n_queries=n_queries, docs_per_position=per_position,
                                        shared_per_edge=shared, seed=seed)
    n_docs = 10 * per_position
    (folder / "train").mkdir(parents=True)
    (folder / "settings.json").write_text(json.dumps({"feature_size": n_docs, "rank_cutoff": 10, "max_label": 5}))
    rows = [f"{i} {i}:1" for i in range(n_docs)] + [f"{n_docs + j} {j}:1.0" for j in range(duplicate_rows)]
    (folder / "train" / "train.feature").write_text("\n".join(rows) + "\n")
    grid = d.doc_ids.reshape(n_queries, 10).copy()
    labels = d.labels.reshape(n_queries, 10)
    if duplicate_rows:
        hit = np.isin(grid[0], np.arange(duplicate_rows))
        grid[0, hit] = grid[0, hit] + n_docs                 # same vectors, other rows
    (folder / "train" / "train.init_list").write_text(
        "".join(f"{q} " + " ".join(map(str, grid[q])) + "\n" for q in range(n_queries)))
    (folder / "train" / "train.labels").write_text(
        "".join(f"{q} " + " ".join(map(str, labels[q])) + "\n" for q in range(n_queries)))
    return folder


def _cli(args, capsys):
    from ultr_core.__main__ import main
    rc = main(args)
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_ig_with_no_flags_counts_the_official_layouts_components(tmp_path, capsys, k):
    folder = write_official_layout(tmp_path / f"K={k}", k)
    rc, out, err = _cli(["ig", str(folder), "--json"], capsys)
    rep = json.loads(out)
    assert rc == 0, err
    assert rep["n_components"] == k and rep["identifiable"] == (k == 1)
    assert rep["document_key"] == "global" and rep["n_documents"] == 10 * 120
    alt = rep["alternative_document"]          # (query, document) pairs: no document links two positions
    assert alt["document"] == "query" and alt["n_components"] == 10 and alt["flag"] == "--document query"
    assert alt["changes_verdict"] == (k == 1)


def test_the_text_report_names_the_other_key_when_it_changes_the_verdict(tmp_path, capsys):
    folder = write_official_layout(tmp_path / "K=1", 1)
    rc, out, _ = _cli(["ig", str(folder), "--estimate", "none"], capsys)
    assert rc == 0 and "IDENTIFIABLE: the graph is connected" in out
    assert "use --document query" in out and "it has 10 (not identifiable)" in out
    rc, out, _ = _cli(["ig", str(folder), "--estimate", "none", "--document", "query"], capsys)
    assert rc == 0 and "NOT IDENTIFIABLE" in out and "use --document global" in out


def test_identical_feature_vectors_are_one_document(tmp_path):
    plain = ingest(str(write_official_layout(tmp_path / "a", 2)))
    dup = ingest(str(write_official_layout(tmp_path / "b", 2, duplicate_rows=40)))
    assert dup.frame["doc_id"].nunique() == plain.frame["doc_id"].nunique() == 1200
    assert any("repeat an earlier row's vector" in n for n in dup.notes)
    g_plain, g_dup = IdentifiabilityGraph.from_counts(plain), IdentifiabilityGraph.from_counts(dup)
    assert g_plain.n_components == g_dup.n_components == 2


def test_ig_fit_runs_on_a_train_only_folder(tmp_path, capsys):
    one = write_official_layout(tmp_path / "K=1", 1)
    rc, out, err = _cli(["ig-fit", str(one), "--json"], capsys)
    rep = json.loads(out)
    assert rc == 0, err
    assert rep["n_components"] == 1 and rep["mcc"] > 0.99
    two = write_official_layout(tmp_path / "K=2", 2)
    rc, out, _ = _cli(["ig-fit", str(two), "--repair", "intervene", "--json"], capsys)
    rep = json.loads(out)
    assert rep["n_components"] == 2 and rep["n_components_after_repair"] == 1 and rep["mcc"] > 0.99


def test_ultra_errors_name_the_folder_not_the_server_path(tmp_path, capsys):
    folder = write_official_layout(tmp_path / "K=1", 1)
    (folder / "train" / "train.init_list").write_text("0 1 2 x\n")
    rc, _, err = _cli(["ig", str(folder)], capsys)
    assert rc == 2 and "document indexes must be whole numbers" in err and "line 1" in err
    from ultr_core.identifiability.repairs import fit_source
    (folder / "train" / "train.init_list").write_text("0 1 2 3\n")
    (folder / "train" / "train.labels").unlink()
    with pytest.raises(Exception, match=r"^K=1/train/train.labels: file not found") as e:
        fit_source(str(folder), name="K=1")
    assert str(tmp_path) not in str(e.value)


def test_csv_report_offers_the_global_key_when_it_connects_the_graph():
    # every query shows its two documents at fixed positions; the doc ids recur across queries at
    # different positions: by (query, doc) nothing links positions, by doc id alone everything does
    rows = [(f"q{q}", f"d{(q + p) % 3}", p, int((q + p) % 2)) for q in range(6) for p in (1, 2, 3)]
    df = pd.DataFrame(rows, columns=["query_id", "doc_id", "position", "click"])
    table = ingest(df.to_csv(index=False).encode(), "csv", name="demo.csv")
    rep = identifiability_report(table)
    assert rep.document_key == "query" and rep.n_components == 3
    alt = rep.alternative_document
    assert alt.document == "global" and alt.n_components == 1 and alt.changes_verdict
    # a log without query ids keyed by doc id alone: no alternative, no error
    table = ingest(df.drop(columns="query_id").to_csv(index=False).encode(), "csv", name="d.csv", document="global")
    assert table.alternative == () and identifiability_report(table).alternative_document is None


# --------------------------------------------------------------------------- vectorised estimators
def _two_component_log(seed=0, n_sessions=3000):
    """Positions 1–4 and 5–8 never share a document (two components), documents move inside each."""
    rng = np.random.default_rng(seed)
    n_q, n_d = 30, 8
    r = rng.uniform(0.05, 0.9, (n_q, n_d))
    q = rng.integers(0, n_q, n_sessions)
    perm = np.concatenate([np.argsort(rng.random((n_sessions, 4)), 1), 4 + np.argsort(rng.random((n_sessions, 4)), 1)],
                          axis=1)
    qq, dd = np.repeat(q, n_d), perm.ravel()
    pos = np.tile(np.arange(1, n_d + 1), n_sessions)
    o = (1 / np.arange(1, n_d + 1)) ** 0.8
    click = (rng.random(len(qq)) < r[qq, dd] * o[pos - 1]).astype(int)
    return pd.DataFrame({"query_id": qq, "doc_id": dd, "position": pos, "click": click})


@pytest.mark.parametrize("method", ESTIMATORS)
def test_stacked_components_equal_each_component_estimated_alone(method):
    df = _two_component_log()
    table = CountTable.from_log(df, ["position"], ["query_id", "doc_id"])
    g = IdentifiabilityGraph.from_counts(table)
    assert g.n_components == 2
    both = estimate_bias_full(g, method=method, n_bootstrap=0).table.set_index("position")["estimate"]
    for half in (df[df["position"] <= 4], df[df["position"] > 4]):
        alone = IdentifiabilityGraph.from_counts(CountTable.from_log(half, ["position"], ["query_id", "doc_id"]))
        one = estimate_bias_full(alone, method=method, n_bootstrap=0).table.set_index("position")["estimate"]
        np.testing.assert_allclose(both.loc[one.index].to_numpy(), one.to_numpy(), rtol=1e-6, atol=1e-8)
    assert both.loc[1] == both.loc[5] == 1.0          # each component normalised at its own first position


def test_the_work_rule_is_applied_and_stated():
    df = _two_component_log()
    g = IdentifiabilityGraph.from_counts(CountTable.from_log(df, ["position"], ["query_id", "doc_id"]))
    est = estimate_bias_full(g, method="pivot_one", n_bootstrap=5, max_components=1)
    assert set(est.table["component"]) == {0}
    assert any("largest first, at most 1 components" in n for n in est.notes)
    est = estimate_bias_full(g, method="all_pairs", n_bootstrap=5)
    assert set(est.table["component"]) == {0, 1} and any("Newton decrement" in n for n in est.notes)


# --------------------------------------------------------------------------- other people's formats
def _pyclick_text():
    """Sessions in PyClick's sample format (examples/data of markovi/PyClick): several per line,
    spaces around the click commas, an empty click list, a click on a URL the session did not show,
    a repeated click."""
    return ("q1\ta,b,c : b , a; q1\ta,b,c :; q2\tc,d,e : z  ;  q1\tb,a,c : b , b\n"
            "q2\td,c,e : c;\n")


def _pyclick_reference(text):
    """PyClick's own rule (examples/WscdExample.py), written here with loops: a shown URL is
    clicked when it is in the session's click list."""
    rows = []
    for line in text.split("\n"):
        for s in line.split(";"):
            if not s.strip():
                continue
            q, rest = s.strip().split("\t", 1)
            docs, clk = rest.split(":", 1)
            clk = [c.strip() for c in clk.split(",")]
            rows += [(q, d.strip(), p, int(d.strip() in clk)) for p, d in enumerate(docs.strip().split(","), 1)]
    return rows


def test_pyclick_sessions_are_sniffed_and_read_as_pyclick_does():
    from ultr_core.logs.mapping import read_user_log
    from ultr_core.logs.sniff import sniff_format
    text = _pyclick_text()
    assert sniff_format(text.encode(), "trainSample") == "pyclick"
    log, notes = read_user_log(text.encode(), name="trainSample")
    f = log.frame
    got = list(zip(f["query_key"], f["doc_key"], f["position"].astype(int), f["click"].astype(int)))
    assert got == _pyclick_reference(text)
    assert any("ignored 1 click" in n for n in notes) and any("repeated click" in n for n in notes)
    rep = identifiability_report(ingest(text.encode(), name="trainSample"))
    assert rep.n_rows == 15 and rep.n_clicks == 4


def test_pyclick_structural_errors_name_the_line():
    from ultr_core.errors import DataFormatError
    from ultr_core.logs.mapping import read_user_log
    with pytest.raises(DataFormatError, match="a tab, then a colon") as e:
        read_user_log(b"q1\ta,b : a;\nq2 a,b : a;\n", "pyclick", name="s")
    assert e.value.line == 2
    with pytest.raises(DataFormatError, match="empty URL") as e:
        read_user_log(b"q1\ta,,b : a;\n", "pyclick", name="s")
    assert e.value.line == 1


def test_a_file_no_reader_accepts_gets_one_message_with_the_accepted_formats(tmp_path, capsys):
    from ultr_core.errors import DataFormatError
    from ultr_core.logs.mapping import read_user_log
    junk = b"<html>\x01 not a log at all " + b"x" * 200 + b"\n"
    with pytest.raises(DataFormatError) as e:
        read_user_log(junk, name="upload")
    msg = str(e.value)
    assert "not a log format this reader knows" in msg and "PyClick sessions" in msg and "Baidu-ULTR" in msg
    assert "'<html>· not a lo…'" in msg and "x" * 17 not in msg       # escaped, cut to 16 characters (docs/safety.md)
    (tmp_path / "junk").write_bytes(junk)
    rc, _, err = _cli(["ig", str(tmp_path / "junk")], capsys)
    assert rc == 2 and "not a log format this reader knows" in err
    (tmp_path / "named.csv").write_bytes(junk)                 # the name says CSV: the CSV problem is reported
    rc, _, err = _cli(["ig", str(tmp_path / "named.csv")], capsys)
    assert rc == 2 and "not a log format this reader knows" not in err


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_duplicate_column_names_are_refused_with_the_name(tmp_path, fmt, capsys):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ultr_core.errors import DataFormatError
    from ultr_core.logs.mapping import read_user_log
    path = tmp_path / f"log.{fmt}"
    if fmt == "csv":
        path.write_text("query_id,doc_id,position,click,position\nq,a,1,0,2\n")
    else:
        pq.write_table(pa.table([["q"], ["a"], [1], [0], [2]],
                                names=["query_id", "doc_id", "position", "click", "position"]), path)
    with pytest.raises(DataFormatError, match=r"column 'position' appears twice in the header \(columns 3 and 5\)"):
        read_user_log(path.read_bytes(), fmt, name=path.name)
    rc, _, err = _cli(["ig", str(path)], capsys)
    assert rc == 2 and "appears twice" in err


def test_baidu_and_yandex_structural_errors_name_the_line_and_the_field_count(tmp_path, capsys):
    cases = [("baidu", "q1\tx\ty\n1\t2\t3\n", "line 1", "at most 3 tab-separated field(s)"),
             ("baidu", "q1\n1\t2\t3\t4\n", "line 2", "4 tab-separated fields"),
             ("yandex", "1\t0\tQ\t5\t213\t7\n1\t0\tQ\t5\n", "line 2", "this line has 4 non-empty")]
    for fmt, text, line, words in cases:
        (tmp_path / "f").write_text(text)
        rc, _, err = _cli(["ig", str(tmp_path / "f"), "--format", fmt], capsys)
        assert rc == 2 and line in err and words in err, err


def test_train_only_folders_are_not_offered_for_simulation_and_errors_name_the_dataset(tmp_path, monkeypatch):
    from ultr_core.data.roots import available_datasets, dataset_spec
    from ultr_core.data.sources import load_dataset
    from ultr_core.errors import DataFormatError
    write_official_layout(tmp_path / "K=2", 2)                      # train/ only
    broken = tmp_path / "broken"
    for split in ("train", "valid", "test"):
        (broken / split).mkdir(parents=True)
    (broken / "settings.json").write_text('{"feature_size": 3}')
    monkeypatch.setenv("ULTR_DATA_DIR", str(tmp_path))
    found = available_datasets()
    assert "K=2" not in found and found["broken"][0] == "ultra"
    with pytest.raises(DataFormatError) as e:
        load_dataset(dataset_spec("broken"))
    assert str(e.value).startswith("broken/train/") and str(tmp_path) not in str(e.value)


def test_archives_are_read_safely(tmp_path):
    import io
    import tarfile
    import zipfile

    from ultr_core.data.archives import ultra_folder
    from ultr_core.errors import DataFormatError
    folder = write_official_layout(tmp_path / "K=3", 3)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        t.add(folder, arcname="K=3")
    table = ingest(buf.getvalue(), name="K=3.tar.gz")
    assert IdentifiabilityGraph.from_counts(table).n_components == 3
    evil = io.BytesIO()
    with zipfile.ZipFile(evil, "w") as z:
        z.writestr("../train/train.init_list", "0 0 1\n")        # a path outside the folder is never used
        z.writestr("notes.txt", "hello")
    with pytest.raises(DataFormatError, match="holds no train/train.init_list"):
        with ultra_folder(evil.getvalue(), "evil.zip"):
            pass
