"""``click-models`` and ``evaluate --engine dask`` (issue #62, item 2): Dask builds the session table — on a
``LocalCluster`` of two workers or on local threads — and every figure equals DuckDB's to 1e-9; bad input is refused
with DuckDB's message; a scheduler that cannot be reached or a worker that dies ends in one message, with nothing
written."""
import json

import numpy as np
import pandas as pd
import pytest
from clihelp import cli, refused, write
from test_bad_input_contract import _sessions
from test_click_models_out_of_core import ALL, SCORES, _varied_log

from ultr_core.clickmodels.compare import compare_click_models
from ultr_core.clickmodels.patterns import patterns_from_source

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as c:
        yield c.scheduler_address


def _fit(path, fmt, **engine):
    with patterns_from_source(str(path), fmt, "log", **engine) as patterns:
        return compare_click_models(patterns, "log", models=ALL)


def _same(a, b) -> None:
    assert (a.train_sessions, a.test_sessions, a.dropped_test_sessions) == \
           (b.train_sessions, b.test_sessions, b.dropped_test_sessions)
    for k in ALL:
        for m in SCORES:
            assert getattr(b.models[k], m) == pytest.approx(getattr(a.models[k], m), abs=1e-9), (k, m)
    pd.testing.assert_frame_equal(a.relevance, b.relevance, check_exact=False, atol=1e-9)
    for k, iv in a.best_fit.versus.items():
        assert (b.best_fit.versus[k].lower, b.best_fit.versus[k].upper) == \
               pytest.approx((iv.lower, iv.upper), abs=1e-9)


@pytest.mark.parametrize("seed,ragged", [(0, False), (1, True)])
def test_dask_on_a_cluster_gives_duckdbs_figures(tmp_path, cluster, seed, ragged):
    """Ragged lists, one document shown under two queries, Parquet and CSV: all twelve models, the counts, the
    relevance table and the paired intervals equal DuckDB's to 1e-9 (the same patterns reach the same fits)."""
    parquet = _varied_log(tmp_path / "log.parquet", seed, ragged=ragged)
    csv = tmp_path / "log.csv"
    f = pd.read_parquet(parquet)
    f.to_csv(csv, index=False)
    base = _fit(parquet, "parquet")
    assert base.dropped_test_sessions >= 0 and base.relevance["impressions"].sum() > 0
    _same(base, _fit(parquet, "parquet", engine="dask", scheduler=cluster))
    _same(base, _fit(csv, "csv", engine="dask", scheduler=cluster))
    _same(base, _fit(csv, "csv", engine="dask"))                       # local threads, no scheduler
    for i, part in enumerate(np.array_split(np.arange(len(f)), 3)):      # a glob of three files: partitions
        f.iloc[part].to_parquet(tmp_path / f"part-{i}.parquet")
    glob = str(tmp_path / "part-*.parquet")
    _same(base, _fit(glob, "parquet", engine="dask"))
    _same(base, _fit(glob, "parquet", engine="dask", scheduler=cluster))


def test_dask_keeps_the_id_rule_the_shown_rows_and_the_file_order(tmp_path, cluster):
    """Text ids (one written '07', so the column stays text) with spaces trimmed, session ids that sort otherwise
    than the file, rows not shown, documents clicked at every impression and never: DuckDB's pairs, split and
    relevance, to the last bit."""
    rng = np.random.default_rng(5)
    n = 400
    names = [f" s{(37 * i) % n:04d}" for i in range(n)]            # alphabetical order is not file order
    rows = []
    for i, s in enumerate(names):
        q = i % 7
        for p, d in enumerate(rng.permutation(5)[:3], start=1):
            doc = "07" if (q, d) == (0, 4) else f"{d} "
            click = 1 if d == 0 else 0 if d == 1 else int(rng.random() < 0.3)
            rows.append((s, q, doc, p, click, int(rng.random() > 0.05) if p == 3 else 1))
    f = pd.DataFrame(rows, columns=["session_id", "query_id", "doc_id", "position", "click", "shown"])
    path = tmp_path / "ids.csv"
    f.to_csv(path, index=False)
    a, b = _fit(path, "csv"), _fit(path, "csv", engine="dask", scheduler=cluster)
    _same(a, b)
    assert b.relevance["doc_id"].map(type).eq(str).all() and "07" in set(b.relevance["doc_id"])
    assert b.relevance["query_id"].dtype == np.int64


CASES = {
    "fractional positions": (_sessions().replace(",1,0\n", ",1.6,0\n"), "whole numbers written in decimal"),
    "fractional clicks": (_sessions(click=lambda s, p: 0.6 if s == 3 and p == 1 else 0), "must hold 0 or 1"),
    "shown=yes beside 1": (_sessions(extra="shown=1").replace(",1\n", ",yes\n", 5), "'shown' must hold 0/1"),
    "zero-based": (_sessions().replace(",1,", ",0,").replace(",2,", ",1,"), "positions are 1-based"),
    "a gap": ("session_id,query_id,doc_id,position,click\n" + "".join(f"{s},1,{s % 3},1,{s % 2}\n{s},1,9,"
                                                                       f"{2 + (s == 5)},0\n" for s in range(20)),
              "session 6 (in file order) does not show ranks 1 to 2 once each"),
    "51 ranks": (_sessions(n=20, depth=51), "exceed the 50 ranks"),
    "no session id": ("query_id,doc_id,position,click\n1,2,1,0\n", "need column(s) session_id"),
}


COMMANDS = {"click-models": ["--models", "pbm"], "evaluate": ["--n-boot", "20"]}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("command", list(COMMANDS))
def test_dask_refuses_what_duckdb_refuses_in_the_same_words(tmp_path, capsys, cluster, case, command):
    text, words = CASES[case]
    if command == "evaluate" and case == "51 ranks":
        words = "result lists of"                 # DuckDB counts a session's rows, Dask its highest rank: both 51
    f = write(tmp_path, "log.csv", text)
    err = refused([command, f, *COMMANDS[command]], capsys, words)
    assert refused([command, f, *COMMANDS[command], "--engine", "dask"], capsys, words) == err
    assert refused([command, f, *COMMANDS[command], "--engine", "dask", "--scheduler", cluster],
                   capsys, words) == err


def test_the_engine_flags_are_checked(tmp_path, capsys):
    f = write(tmp_path, "log.csv", _sessions())
    refused(["click-models", f, "--scheduler", "tcp://127.0.0.1:9"], capsys, "--scheduler", "--engine dask")
    refused(["evaluate", f, "--scheduler", "tcp://127.0.0.1:9"], capsys, "--scheduler", "--engine dask")
    with_propensity = write(tmp_path, "p.csv", _sessions(extra="propensity=0.5"))
    refused(["evaluate", with_propensity, "--engine", "dask"], capsys, "'propensity' column", "--engine duckdb")
    refused(["click-models", f, "--engine", "dask", "--scheduler", "tcp://127.0.0.1:9"], capsys,
            "no Dask scheduler answers at tcp://127.0.0.1:9")
    yandex = write(tmp_path, "log.txt", "1\t0\tQ\t7\t0\t11\t12\n1\t5\tC\t11\n2\t0\tQ\t7\t0\t12\t11\n")
    refused(["click-models", yandex, "--engine", "dask", "--format", "yandex"], capsys, "csv, tsv and parquet")


def test_the_cli_prints_the_same_with_either_engine(tmp_path, capsys, cluster):
    path = _varied_log(tmp_path / "log.parquet", 2, n_sessions=600)
    outs = []
    for extra in ([], ["--engine", "dask"], ["--engine", "dask", "--scheduler", cluster]):
        rc, out, _ = cli(["click-models", path, "--models", "pbm,ubm,dcm,dbn", "--json", *extra], capsys)
        assert rc == 0
        report = json.loads(out)
        outs.append({(k, m): v[m] for k, v in report["models"].items() for m in SCORES})
    assert len(outs[0]) == 12 and outs[0] == pytest.approx(outs[1], abs=1e-9) == outs[2]


@pytest.mark.filterwarnings("ignore:Port .* is already in use")
def test_a_worker_that_dies_ends_in_one_message_and_nothing_is_written(tmp_path, capsys, monkeypatch):
    """A task that kills its worker process on every try (the nanny restarts it, the scheduler gives up: Dask's
    KilledWorker): one line naming the cluster and the cause; --relevance is not written, no pattern file stays."""
    import os
    import tempfile

    import dask

    import ultr_core.clickmodels.dasksessions as ds
    derive = ds._derive

    def dying(df, has_shown, partition_info=None):
        from distributed import get_worker
        try:
            get_worker()                              # on a worker process: die; here (Dask's meta): derive
        except ValueError:
            return derive(df, has_shown, partition_info)
        os._exit(1)

    monkeypatch.setattr(ds, "_derive", dying)
    path = _varied_log(tmp_path / "log.parquet", 3, n_sessions=200)
    out = tmp_path / "rel.csv"
    spill = tmp_path / "spill"                   # this test's own temporary directory: other tests' spills run beside
    spill.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spill))
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), \
            distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                     dashboard_address=None) as c:
        err = refused(["click-models", path, "--models", "pbm", "--engine", "dask", "--scheduler",
                       c.scheduler_address, "--relevance", out], capsys, "failed during the run", "KilledWorker",
                      "nothing was written")
    assert not out.exists() and "Traceback" not in err
    assert not [p for p in os.listdir(spill) if p.startswith("ultr-patterns-")]


def test_evaluate_and_a_test_log_give_duckdbs_numbers_with_dask(tmp_path, capsys, cluster):
    """``evaluate`` (every default estimator, its bootstrap intervals and support) and ``click-models --test`` on two
    files: the JSON of both engines is the same to 1e-9."""
    train = _varied_log(tmp_path / "train.parquet", 6, n_sessions=500, ragged=True)
    test = _varied_log(tmp_path / "test.parquet", 7, n_sessions=300, ragged=True)
    for args in (["evaluate", train, "--n-boot", "20", "--json"],
                 ["evaluate", train, "--ranking", "model:pbm", "--n-boot", "20", "--json"],
                 ["click-models", train, "--test", test, "--models", "pbm,dbn", "--json"]):
        outs = []
        for extra in ([], ["--engine", "dask"], ["--engine", "dask", "--scheduler", cluster]):
            rc, out, _ = cli([*args, *extra], capsys)
            assert rc == 0
            outs.append(_numbers(json.loads(out)))
        assert len(outs[0]) > 10 and outs[1] == pytest.approx(outs[0], abs=1e-9) and outs[2] == outs[1], args[0]


def _numbers(report, path="") -> dict:
    """Every number of a JSON report by its path (times left out)."""
    if isinstance(report, dict):
        return {k: v for key, val in report.items() if "second" not in key
                for k, v in _numbers(val, f"{path}/{key}").items()}
    if isinstance(report, list):
        return {k: v for i, val in enumerate(report) for k, v in _numbers(val, f"{path}/{i}").items()}
    return {path: report} if isinstance(report, (int, float)) and not isinstance(report, bool) else {}
