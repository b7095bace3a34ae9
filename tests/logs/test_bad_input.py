"""The bad-input catalogue: every case gives a clear message naming what is wrong and where,
exit status 2 (CLI) or an in-page message (app), no traceback, no file content beyond a short
token, no server path typed by a user, nothing overwritten and earlier state kept."""
import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from apphelp import no_crash, page as _page

from ultr_core.__main__ import main
from ultr_core.data.loaders import load_svmlight, load_svmlight_upload
from ultr_core.errors import ConfigError, DataFormatError

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = ['<a href="https://evil.example/phish">CLICK</a>', "<b>bold</b>", "<script>alert(1)</script>",
           '<img src=x onerror="alert(1)">']


def cli(args, capsys):
    rc = main(args)
    out = capsys.readouterr()
    assert "Traceback" not in out.err + out.out
    return rc, out.err


# --------------------------------------------------------------------------- CLI
@pytest.mark.parametrize("args, problem", [
    (["train", "--dataset", "synthetic:abc"], "synthetic:N needs a whole number"),
    (["train", "--dataset", "synthetic:0"], "10 to 100,000 queries"),
    (["train", "--dataset", "nope:1"], "unknown dataset"),
    (["train", "--sessions", "10000000000"], "n_sessions: must be a whole number from 1 to"),
    (["train", "--contexts", "1000000000"], "n_contexts"),
    (["train", "--set", "keep_best=maybe"], "not a boolean"),
    (["train", "--set", "lr=fast"], "cannot convert"),
    (["train", "--set", "nope=1"], "expected key=value"),
    (["ig", "/dev/zero"], "a system path (/proc, /sys or /dev) cannot be read as a log"),
])
def test_cli_refuses_with_one_line_and_status_2(args, problem, capsys):
    rc, err = cli(args, capsys)
    assert rc == 2 and err.startswith("error: ") and problem in err and len(err.strip().splitlines()) == 1


def test_cli_ig_on_a_directory_or_symlink_loop(tmp_path, capsys):
    rc, err = cli(["ig", str(tmp_path), "--format", "yandex"], capsys)
    assert rc == 2 and "not a regular file" in err
    loop = tmp_path / "loop.log"
    os.symlink(loop, loop)
    rc, err = cli(["ig", str(loop)], capsys)
    assert rc == 2 and "loop.log" in err


def test_simulate_out_never_overwrites_and_writes_atomically(tmp_path, capsys):
    keep = tmp_path / "keep.csv"
    keep.write_text("precious\n")
    rc, err = cli(["simulate", "--sessions", "200", "--out", str(keep)], capsys)
    assert rc == 2 and "--force" in err and keep.read_text() == "precious\n"
    rc, err = cli(["simulate", "--sessions", "200", "--out", str(tmp_path / "missing" / "x.csv")], capsys)
    assert rc == 2 and "does not exist" in err and not (tmp_path / "missing").exists()
    rc, err = cli(["simulate", "--sessions", "200", "--out", str(tmp_path)], capsys)
    assert rc == 2
    rc, err = cli(["simulate", "--sessions", "200", "--out", str(keep), "--force"], capsys)
    assert rc == 0 and keep.read_text().startswith("session_id")
    assert not list(tmp_path.glob("*.part"))                     # no temporary file left behind


def test_unexpected_errors_are_one_line_unless_debug(monkeypatch, capsys):
    import ultr_core.__main__ as cli_mod

    def boom(a):
        raise RuntimeError("internal detail")
    monkeypatch.setattr(cli_mod, "_ig", boom)
    rc, err = cli(["ig", "x.csv"], capsys)
    assert rc == 2 and "unexpected RuntimeError" in err and "--debug" in err
    with pytest.raises(RuntimeError):
        main(["--debug", "ig", "x.csv"])


def test_cli_subprocess_has_no_traceback():
    r = subprocess.run([sys.executable, "-m", "ultr_core", "train", "--dataset", "synthetic:abc"], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr and r.stderr.startswith("error: dataset")


# --------------------------------------------------------------------------- loaders
@pytest.mark.parametrize("line, problem", [
    ("nan qid:1 1:0.5", "not a whole number from 0 to 31"),
    ("inf qid:1 1:0.5", "not a whole number from 0 to 31"),
    ("1e300 qid:1 1:0.5", "not a whole number from 0 to 31"),
    ("-1 qid:1 1:0.5", "not a whole number from 0 to 31"),
    ("1.5 qid:1 1:0.5", "not a whole number from 0 to 31"),
    ("1 qid:x 1:0.5", "bad query id"),
    ("1 1:0.5", "missing 'qid:'"),
    ("1 qid:1 1:0.5 1:0.7", "feature id 1 appears twice"),
    ("1 qid:1 100000000:0.5", "exceeds the limit"),
    ("1 qid:1 0:0.5", "below the first allowed id"),
    ("1 qid:1 a:0.5", "bad feature id"),
    ("1 qid:1 1:abc", "non-numeric value"),
    ("1 qid:1 1:inf", "not finite"),
    ("1 qid:1 1-0.5", "expected 'feature:value'"),
])
def test_letor_errors_name_file_and_line(tmp_path, line, problem):
    f = tmp_path / "S1.txt"
    f.write_text("0 qid:1 1:0.1\n" + line + "\n")
    with pytest.raises(DataFormatError) as e:
        load_svmlight(f)
    assert problem in str(e.value) and e.value.line == 2 and "S1.txt" in str(e.value)


def test_letor_error_never_echoes_more_than_a_short_token(tmp_path):
    f = tmp_path / "S1.txt"
    f.write_text("SECRET_API_KEY=hunter2 qid:1 1:0.5\n")
    with pytest.raises(DataFormatError) as e:
        load_svmlight(f)
    assert "hunter2" not in str(e.value) and "line 1" in str(e.value)


def test_tiny_file_with_huge_feature_id_allocates_nothing_big(tmp_path):
    data = b"1 qid:1 1:0.5 99999999:1\n0 qid:1 1:0.1\n0 qid:2 1:0.2\n0 qid:3 1:0.3\n"
    tracemalloc.start()
    with pytest.raises(DataFormatError, match="exceeds the limit"):
        load_svmlight_upload("tiny.txt", data)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(data) < 200 and peak < 5 * 2 ** 20


def test_three_query_upload_gives_three_non_empty_splits_and_two_is_refused():
    data = b"1 qid:1 1:0.5\n0 qid:1 1:0.1\n1 qid:2 1:0.5\n0 qid:2 1:0.2\n1 qid:3 1:0.4\n0 qid:3 1:0.3\n"
    ds = load_svmlight_upload("three.txt", data)
    assert [s.n_queries for s in ds.splits()] == [1, 1, 1]
    with pytest.raises(DataFormatError, match="need at least 3"):
        load_svmlight_upload("two.txt", data[: data.index(b"1 qid:3")])


def test_empty_split_is_named():
    from ultr_core.data.dataset import LTRDataset, RankingData
    d = RankingData(np.zeros((2, 3), np.float32), np.array([1, 1]), np.array([0, 1]))
    with pytest.raises(DataFormatError, match="the test split is empty"):
        LTRDataset("mine", d, d, d.subset_queries(np.array([], np.int64)))


def test_dataset_by_unknown_name_lists_what_exists():
    from ultr_core.data.roots import dataset_spec
    with pytest.raises(ConfigError, match="no dataset named '/etc'"):
        dataset_spec("/etc")


# --------------------------------------------------------------------------- result cache
def test_result_cache_never_trusts_edited_truncated_or_stale_entries(tmp_path, monkeypatch):
    from ultr_core.algorithms import TrainConfig
    from ultr_core.studies import resultcache
    from ultr_core.studies.experiment import ExperimentSpec, _run_cell
    spec = ExperimentSpec(n_sessions=500, train=TrainConfig(steps=10, eval_every=5, model="linear"))
    first = _run_cell(spec, tmp_path)
    path = tmp_path / f"{spec.key()}.json"
    entry = json.loads(path.read_text())
    entry["payload"]["metrics"]["ndcg@10"] = 0.999                  # a hand edit
    path.write_text(json.dumps(entry))
    assert resultcache.load(tmp_path, spec.key()) is None
    assert _run_cell(spec, tmp_path)["metrics"]["ndcg@10"] == first["metrics"]["ndcg@10"]
    path.write_text(path.read_text()[:40])                            # truncated
    assert _run_cell(spec, tmp_path)["metrics"] == first["metrics"]
    assert resultcache.load(tmp_path, spec.key()) is not None         # rewritten whole
    key = spec.key()
    resultcache.code_version.cache_clear()
    monkeypatch.setattr(resultcache, "_SOURCES", ("metrics.py",))     # "the code changed"
    assert spec.key() != key
    resultcache.code_version.cache_clear()


def test_result_cache_evicts_least_recently_used_beyond_its_budget(tmp_path):
    from ultr_core.studies import resultcache
    payload = {"metrics": {"m": 1.0}, "observation": None, "true_observation": None, "final_step": 1,
               "history": [{"step": i} for i in range(50)]}
    for i in range(20):
        resultcache.store(tmp_path, f"k{i}", payload, max_bytes=8_000)
    files = list(tmp_path.glob("*.json"))
    assert 0 < len(files) < 20 and sum(f.stat().st_size for f in files) <= 8_000
    assert (tmp_path / "k19.json").exists()                          # the newest stays


def test_byte_lru_keeps_its_budget():
    from ultr_core.app.lrucache import ByteLRU
    c = ByteLRU(10_000)
    for i in range(10):
        c.get_or_compute(i, lambda: np.zeros(300))                    # 2,400 bytes each
    assert c.nbytes <= 10_000 and c.keys() == [6, 7, 8, 9]
    assert c.get_or_compute("big", lambda: np.zeros(5_000)).shape == (5_000,) and "big" not in c.keys()


# --------------------------------------------------------------------------- app
def page(name: str):
    return _page(name, timeout=90)


@pytest.mark.parametrize("params, field", [
    ({"seed": "-1"}, "seed"), ({"sessions": "5"},
                               "sessions"), pytest.param({"sessions": "99999999999"}, "sessions",
                               marks=pytest.mark.slow),
    ({"contexts": "-1"}, "contexts"), ({"eta": "5"}, "eta"), ({"eta": "nan"}, "eta"),
    ({"dataset": "/etc/passwd"}, "dataset"), ({"queries": "abc"}, "queries"),
])
def test_simulate_url_values_are_clamped_with_a_notice(params, field):
    at = page("simulate.py")
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert no_crash(at) and not at.error
    assert any("Link setting corrected" in i.value and field in i.value for i in at.info)


def test_train_url_values_are_clamped():
    at = page("train.py")
    at.query_params["steps"] = "999999"
    at.query_params["lr"] = "7"
    at.run()
    assert no_crash(at) and not at.error
    assert sum("Link setting corrected" in i.value for i in at.info) == 2


@pytest.mark.parametrize("content, problem", [
    (b"inf qid:1 1:0.5\n0 qid:1 1:0.1\n", "not a whole number"),
    (b"1 qid:1 1000000000:0.5\n0 qid:2 1:0.1\n0 qid:3 1:0.1\n", "exceeds the limit"),
    (b"\xff\xfe\x00bad", "UTF-8"),
])
def test_simulate_hostile_letor_upload_shows_a_message(content, problem):
    at = page("simulate.py")
    at.session_state["keep"] = 1
    at.run()
    at.sidebar.selectbox(key="sim_dataset").select("upload").run()
    at.sidebar.file_uploader(key="sim_svmlight_letor_file").set_value(("x.txt", content, "text/plain")).run()
    assert no_crash(at) and at.error and problem in at.error[0].value
    assert at.session_state["keep"] == 1


def test_upload_parquet_with_list_typed_query_id_shows_a_message(tmp_path):
    df = pd.DataFrame({"query_id": [[1, 2], [3]], "doc_id": ["a", "b"], "position": [1, 2], "click": [0, 1]})
    df.to_parquet(tmp_path / "l.parquet")
    at = page("upload.py").run()
    at.file_uploader(key="upload_click_log").set_value(("l.parquet", (tmp_path / "l.parquet").read_bytes(),
                                                        "application/octet-stream"))
    at.run()
    assert no_crash(at) and at.error and "query\\_id" in at.error[0].value and "lists" in at.error[0].value
    from ultr_core.errors import DataFormatError
    from ultr_core.logs.ingestion import ingest
    with pytest.raises(DataFormatError, match="query_id.*lists or records"):
        ingest(str(tmp_path / "l.parquet"), "parquet")


def test_compare_refuses_absurd_session_counts():
    at = page("compare.py").run()
    at.sidebar.selectbox(key="s_custom").select("sessions").run()
    at.sidebar.text_input(key="v_custom").input("1000000000000").run()
    at.button(key="compare_job_start").click().run()
    assert no_crash(at) and at.error and "sessions per run exceed the app's 100,000" in at.error[0].value


def _no_markup(at):
    """No user HTML renders: plotly specs and every text element carry it escaped only."""
    for chart in at.get("plotly_chart"):
        spec = chart.proto.spec
        for h in HOSTILE:
            assert h not in spec and h.replace('"', '\\"') not in spec, "raw HTML reached a plotly figure"
    for kind in ("markdown", "caption", "info", "success", "warning", "error"):
        for el in at.get(kind):
            for h in ("<a href", "<b>", "<script>", "<img"):
                assert h not in el.value, f"raw HTML in a {kind}: {el.value[:80]}"


def test_hostile_strings_never_render_as_markup():
    rows = []
    for s in range(40):
        for p in (1, 2):
            rows.append({"query_id": s % 4, "doc_id": f"d{(s + p) % 3}", "position": p, "click": int(s % 3 == p),
                         "vertical": HOSTILE[(s + p) % 4]})
    data = pd.DataFrame(rows).to_csv(index=False).encode()
    at = page("upload.py").run()
    at.file_uploader(key="upload_click_log").set_value(('<b>x</b><img src=x onerror="alert(1)">.csv', data,
                                                        "text/csv")).run()
    assert no_crash(at) and not at.error
    at.radio(key="upload_a_document_is").set_value("global").run()
    at.multiselect(key="upload_bias_factor_columns").set_value(["position", "vertical"]).run()
    assert no_crash(at) and not at.error
    _no_markup(at)
    log = at.session_state["log"]
    ig = page("identifiability.py")
    ig.session_state["log"] = log
    ig.session_state["log_key"] = at.session_state["log_key"]
    ig.run()
    ig.sidebar.radio(key="ig_source").set_value(ig.sidebar.radio(key="ig_source").options[1]).run()
    ig.sidebar.multiselect(key="ig_bias_factor_columns").set_value(["position", "vertical"]).run()
    assert not ig.exception
    _no_markup(ig)


def test_an_unexpected_page_error_shows_an_id_not_a_traceback(monkeypatch):
    from ultr_core.identifiability import IdentifiabilityGraph

    def boom(*a, **k):
        raise RuntimeError("/secret/server/path exploded")
    monkeypatch.setattr(IdentifiabilityGraph, "display_graph", boom)
    at = page("identifiability.py").run()
    assert not at.exception
    assert at.error and "error id" in at.error[0].value and "/secret" not in at.error[0].value


def test_streamlit_config_hides_tracebacks_and_listens_locally():
    import tomllib
    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert cfg["client"]["showErrorDetails"] == "none" and cfg["server"]["address"] == "localhost"


def test_hostile_upload_name_is_escaped_on_simulate_and_train():
    letor = b"".join(f"{q % 3} qid:{q // 4} 1:{q / 10} 2:{(q * 7) % 5 / 5}\n".encode() for q in range(40))
    sim = page("simulate.py").run()
    sim.sidebar.selectbox(key="sim_dataset").select("upload").run()
    sim.sidebar.file_uploader(key="sim_svmlight_letor_file").set_value(
        ('<b>x</b><img src=x onerror="alert(1)">.txt', letor, "text/plain")
    ).run()
    assert not sim.exception and not sim.error
    _no_markup(sim)
    tr = page("train.py")
    for k in ("log", "dataset", "log_key"):
        tr.session_state[k] = sim.session_state[k]
    tr.run()
    assert not tr.exception
    assert any("&lt;b&gt;" in i.value for i in tr.info)       # the file name, shown as text
    _no_markup(tr)


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_sweep_values_are_escaped_on_compare(text):
    at = page("compare.py").run()
    at.sidebar.selectbox(key="s_custom").select("click noise ε").run()
    at.sidebar.text_input(key="v_custom").input(text).run()
    at.button(key="compare_job_start").click().run()
    assert no_crash(at) and at.error
    _no_markup(at)


def test_heatmaps_and_home_render_without_user_markup():
    for name in ("home.py", "heatmaps.py"):
        at = page(name).run()
        assert no_crash(at) and not at.error
        _no_markup(at)


def test_simulate_page_refuses_logs_beyond_its_row_limit(data_dir):
    at = page("simulate.py")
    at.query_params["sessions"] = "1000000"
    at.query_params["dataset"] = "mq2008"                     # lists of up to 121 documents
    at.run()
    assert no_crash(at) and at.error and "exceed the app's limit" in at.error[0].value


def test_grid_refuses_an_impossible_cell_before_running_and_keeps_finished_runs(monkeypatch):
    import ultr_core.studies.experiment as ex
    from ultr_core.algorithms import TrainConfig
    base = ex.ExperimentSpec(n_sessions=500, train=TrainConfig(steps=10, eval_every=5, model="linear"))
    with pytest.raises(ConfigError, match="choose k below 10"):
        ex.run_grid(base.with_value("train.algorithm", "cld"), {"click.topk": [2, 10]}, seeds=[0])
    real = ex.run_experiment

    def flaky(spec, data=None):
        if spec.seed == 1:
            raise RuntimeError("a run broke")
        return real(spec, data=data)
    monkeypatch.setattr(ex, "run_experiment", flaky)
    df = ex.run_grid(base, {"train.algorithm": ["naive"]}, seeds=[0, 1, 2])
    assert len(df) == 3 and df["error"].notna().sum() == 1 and df["ndcg@10"].notna().sum() == 2


@pytest.mark.parametrize("name", __import__("ultr_core.studies.presets", fromlist=["x"]).PRESET_SWEEPS)
def test_every_compare_preset_is_valid(name):
    from ultr_core.studies.experiment import ExperimentSpec, check_cells, expand_grid
    from ultr_core.studies.presets import PRESET_SWEEPS
    p = PRESET_SWEEPS[name]
    base = ExperimentSpec()
    for k, v in p.base.items():
        base = base.with_value(k, v)
    grid = {p.sweep: list(p.values)} if p.sweep else {}
    check_cells(expand_grid(base, {**grid, "train.algorithm": list(p.methods)}, [0]))   # raises if a cell could not run
    ds = p.base.get("dataset", "synthetic")
    if ds.partition(":")[0] not in ("synthetic", "ig"):            # a data-root name: it must load by that name
        from ultr_core.data.roots import available_datasets
        from ultr_core.data.sources import load_dataset
        if ds not in available_datasets() and not os.environ.get("CI"):
            pytest.skip(f"{ds} is not in the data roots here")
        assert load_dataset(ds).test.n_queries > 0
