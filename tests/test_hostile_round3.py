"""Bad input, round three (issue #50): one test per case of docs/safety.md's "Round three" table.

Ids that must stay exact on every engine, one input contract for ``ig`` and ``click-models``, outputs that never
destroy or inject, JSON that is always valid.  Every file is generated here, small.
"""
from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pytest

from clihelp import cli, refused, write
from ultr_core.logs.ingestion import ingest
from ultr_core.logs.mapping import read_user_log

BIG = 18446744073709551000          # near 2**64: DuckDB infers HUGEINT, pandas float64 would merge neighbours
ABOVE53 = 2 ** 53                   # 2**53 and 2**53 + 1 are one float


def _one_position_each(ids) -> str:
    """Each document shown at one position only (10 positions): not identifiable — 10 components."""
    rows = ["session_id,query_id,doc_id,position,click"]
    s = 0
    for i, d in enumerate(ids):
        for rep in range(3):
            rows.append(f"{s},1,{d},{i % 10 + 1},{(i + rep) % 2}")
            s += 1
    return "\n".join(rows) + "\n"


IDS = {"near 2**64": [str(BIG + i) for i in range(40)],
       "above 2**53 beside a decimal id": ["1.5"] + [str(ABOVE53 + i) for i in range(39)]}


@pytest.mark.parametrize("case", list(IDS))
def test_large_and_decimal_ids_stay_distinct_on_every_engine(case, tmp_path, capsys):
    f = write(tmp_path, "ids.csv", _one_position_each(IDS[case]))
    pq = tmp_path / "ids.parquet"
    frame = pd.read_csv(f, dtype={"doc_id": str})
    frame.to_parquet(pq)
    for engine in ("duckdb", "dask"):
        t = ingest(str(f), engine=engine)
        assert t.frame["doc_id"].nunique() == 40, engine
        assert sorted(map(str, t.frame["doc_id"].unique())) == sorted(IDS[case]), engine
    assert ingest(str(pq)).frame["doc_id"].nunique() == 40
    log, _ = read_user_log(f.read_bytes(), "csv", name="ids.csv")            # the Upload page's in-memory log
    assert log.frame["doc_key"].nunique() == 40
    assert sorted(log.frame["doc_key"].unique()) == sorted(IDS[case])
    rc, out, _ = cli(["ig", f, "--estimate", "none", "--json"], capsys)
    rep = json.loads(out)
    assert rc == 0 and rep["identifiable"] is False and rep["n_components"] == 10


def test_small_integer_ids_stay_numbers_in_memory_as_in_duckdb(tmp_path):
    f = write(tmp_path, "ids.csv", _one_position_each([str(i) for i in range(40)]))
    log, _ = read_user_log(f.read_bytes(), "csv", name="ids.csv")
    assert ingest(str(f)).frame["doc_id"].dtype == np.int64
    assert log.frame["doc_key"].tolist()[:3] == ["0", "0", "0"]


def _sessions(n=100, depth=2, session=lambda s: s, click=lambda s, p: int(p == 1 and s % 2), extra="") -> str:
    head = "session_id,query_id,doc_id,position,click" + ("," + extra.split("=")[0] if extra else "")
    rows = [head]
    for s in range(n):
        for p in range(1, depth + 1):
            rows.append(f"{session(s)},1,{(s + p) % 7},{p},{click(s, p)}" + ("," + extra.split("=")[1] if extra else ""))
    return "\n".join(rows) + "\n"


def test_click_models_refuses_what_ig_refuses(tmp_path, capsys):
    cases = {
        "fractional positions": (_sessions().replace(",1,0\n", ",1.6,0\n"), "whole numbers written in decimal"),
        "fractional clicks": (_sessions(click=lambda s, p: 0.6 if s == 3 and p == 1 else 0), "must hold 0 or 1"),
        "shown=yes beside 1": (_sessions(extra="shown=1").replace(",1\n", ",yes\n", 5), "'shown' must hold 0/1"),
        "shown=1.0": (_sessions(extra="shown=1.0"), "'shown' must hold 0/1"),
    }
    for case, (text, words) in cases.items():
        f = write(tmp_path, "log.csv", text)
        for cmd in (["ig", f, "--estimate", "none"], ["click-models", f, "--models", "pbm"]):
            refused(cmd, capsys, words)
    zero = write(tmp_path, "zero.csv", _sessions().replace(",1,", ",0,").replace(",2,", ",1,"))
    refused(["click-models", zero, "--models", "pbm"], capsys, "positions are 1-based", "add")


def test_click_models_reports_the_readers_repairs(tmp_path, capsys):
    text = "q1\ta,b,c : b , a; q1\ta,b,c :; q2\tc,d,e : z  ;  q1\tb,a,c : b , b\nq2\td,c,e : c;\n"
    f = write(tmp_path, "trainSample", text)
    rc, out, _ = cli(["click-models", f, "--models", "pbm", "--split", "0.5", "--json"], capsys)
    notes = json.loads(out)["notes"]
    assert rc == 0 and any("ignored 1 click" in n for n in notes) and any("1 repeated click" in n for n in notes)
    rc, out, _ = cli(["click-models", f, "--models", "pbm", "--split", "0.5"], capsys)
    assert out.startswith("note: ignored 1 click")


def test_click_models_split_follows_the_file_order(tmp_path, capsys):
    """String session ids that sort otherwise: the file's first 75 sessions train.  The first 75 click only
    document 0, the last 25 only document 1: PBM's relevance shows which sessions trained."""
    names = [f"s{(37 * i) % 100:03d}" for i in range(100)]          # alphabetical order is not file order
    rows = ["session_id,query_id,doc_id,position,click"]
    for i, n in enumerate(names):
        clicked = 0 if i < 75 else 1
        rows += [f"{n},1,{clicked},1,1", f"{n},1,{1 - clicked},2,0"]
    f = write(tmp_path, "order.csv", "\n".join(rows) + "\n")
    out_csv = tmp_path / "rel.csv"
    rc, out, _ = cli(["click-models", f, "--models", "pbm", "--relevance", out_csv, "--json"], capsys)
    rel = pd.read_csv(out_csv)
    assert rc == 0 and json.loads(out)["train_sessions"] == 75
    assert rel.set_index("doc_id").loc[0, "clicks"] == 75 and rel.set_index("doc_id").loc[1, "clicks"] == 0


def test_click_models_test_log_of_another_depth_is_refused(tmp_path, capsys):
    d3 = write(tmp_path, "d3.csv", _sessions(depth=3))
    d5 = write(tmp_path, "d5.csv", _sessions(depth=5))
    for a, b in ((d3, d5), (d5, d3)):
        refused(["click-models", a, "--test", b, "--models", "pbm,ubm,dcm,dbn"], capsys, "--test", "results per session")


def test_click_models_flags_that_do_not_apply_are_refused(tmp_path, capsys):
    f = write(tmp_path, "log.csv", _sessions())
    refused(["click-models", f, "--test", f, "--split", "0.5"], capsys, "--split", "does not apply with --test")
    refused(["click-models", f, "--test-format", "csv"], capsys, "--test-format")
    refused(["click-models", f, "--force"], capsys, "--force", "--relevance")
    with pytest.raises(SystemExit):              # argparse: an ULTRA folder has no sessions: not offered
        cli(["click-models", f, "--format", "ultra"], capsys)
    assert "invalid choice: 'ultra'" in capsys.readouterr().err
    rc, out, _ = cli(["click-models", f, "--test", f, "--test-format", "csv", "--format", "csv", "--models", "pbm",
                      "--json"], capsys)
    assert rc == 0 and json.loads(out)["train_sessions"] == 100


def test_relevance_output_never_destroys(tmp_path, capsys):
    f = write(tmp_path, "log.csv", _sessions())
    old = write(tmp_path, "old.csv", "precious\n")
    refused(["click-models", f, "--relevance", old], capsys, "exists", "--force")
    assert old.read_text() == "precious\n"
    link = tmp_path / "link.csv"
    link.symlink_to(old)
    refused(["click-models", f, "--relevance", link, "--force"], capsys, "symbolic link")
    refused(["click-models", f, "--relevance", tmp_path], capsys, "--relevance", ".csv")
    (tmp_path / "dir.csv").mkdir()
    refused(["click-models", f, "--relevance", tmp_path / "dir.csv"], capsys, "is a directory")
    refused(["click-models", f, "--relevance", tmp_path / "missing" / "x.csv"], capsys, "does not exist")
    refused(["click-models", f, "--relevance", "/proc/self/comm.csv"], capsys, "system path")
    refused(["click-models", f, "--relevance", "/dev/full.csv"], capsys, "system path")
    if os.geteuid() != 0:                       # root writes anywhere
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        refused(["click-models", f, "--relevance", ro / "x.csv"], capsys, "cannot write")
    rc, _, _ = cli(["click-models", f, "--models", "pbm", "--relevance", old, "--force"], capsys)
    assert rc == 0 and old.read_text().startswith("query_id,doc_id") and not old.is_symlink()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith((".part", ".probe"))]


def test_an_interrupted_write_leaves_the_earlier_file_whole(tmp_path):
    from ultr_core.errors import ConfigError
    from ultr_core.logs.outputs import atomic_write
    old = write(tmp_path, "rel.csv", "precious\n")

    def fail(tmp):
        with open(tmp, "w") as fh:
            fh.write("half")
        raise OSError(27, "File too large")
    with pytest.raises(ConfigError, match="could not write rel.csv .File too large.; any earlier file is unchanged"):
        atomic_write(old, fail, "--relevance")
    assert old.read_text() == "precious\n" and len(list(tmp_path.iterdir())) == 1


def test_relevance_csv_cells_cannot_run_or_drive_a_terminal(tmp_path, capsys):
    rows = ["session_id,query_id,doc_id,position,click"]
    for s in range(40):
        rows += [f"{s},=1+1,\"=HYPERLINK(\"\"http://x\"\")\",1,{s % 2}", f"{s},=1+1,@SUM\x1b]0;t\x07,2,0"]
    f = write(tmp_path, "evil.csv", "\n".join(rows) + "\n")
    out_csv = tmp_path / "rel.csv"
    rc, _, _ = cli(["click-models", f, "--models", "pbm", "--relevance", out_csv], capsys)
    raw = out_csv.read_bytes()
    assert rc == 0 and b"\x1b" not in raw and b"\x07" not in raw
    rel = pd.read_csv(out_csv, dtype=str)
    assert set(rel["query_id"]) == {"'=1+1"}
    assert set(rel["doc_id"]) == {"'=HYPERLINK(\"http://x\")", "'@SUM\\x1b]0;t\\x07"}
    assert pd.to_numeric(rel["PBM"]).between(0, 1).all()


def test_json_is_always_valid():
    from ultr_core.logs.outputs import json_safe
    text = json.dumps(json_safe({"mcc": float("nan"), "x": [np.float64("inf"), np.int64(3)]}), allow_nan=False)
    assert json.loads(text) == {"mcc": None, "x": [None, 3]}


def test_a_diverged_fit_is_reported_and_its_json_stays_valid(capsys):
    """SGD at lr = 10 without a weight cap: the observation estimates become NaN.  The JSON is strict (null, a
    ``diverged`` reason), the exit status 3, one line on stderr and no warning that names a source path."""
    rc, out, err = cli(["train", "--sessions", 300, "--set", "steps=30", "--set", "eval_every=30", "--set", "lr=10",
                        "--set", "optimizer=sgd", "--set", "max_weight=none", "--json"], capsys)
    d = json.loads(out)                         # json.loads accepts NaN: check the text too
    assert rc == 3 and "NaN" not in out and "Infinity" not in out
    assert d["diverged"].startswith("non-finite") and None in d["observation"]
    assert "diverged for seed(s) 0" in err and ".py" not in err and "/" not in err.replace(" / ", "")


def test_train_options_are_checked_before_any_seed_runs(capsys):
    refused(["train", "--seed", 2 ** 32 - 1, "--seeds", 2], capsys, "--seeds", "4,294,967,295")
    refused(["train", "--set", "algorithm=naive"], capsys, "--set algorithm", "use --algorithm")
    refused(["train", "--set", "seed=3"], capsys, "--set seed", "use --seed")
    refused(["train", "--set", "hidden=65536,65536"], capsys, "hidden", "8,192", "16,777,216 weights")


def test_paper_scale_runs_through_the_cli(capsys):
    """``--paper-scale`` (issue #49: it crashed with "got multiple values for keyword argument 'clicks'")."""
    rc, out, _ = cli(["train", "--paper-scale", "--set", "steps=2", "--set", "eval_every=1", "--sessions", 200,
                      "--json"], capsys)
    d = json.loads(out)
    assert rc == 0 and d["config"]["train"]["hidden"] == [512, 256, 128] and d["config"]["train"]["clicks"] == "online"
    assert d["config"]["train"]["steps"] == 2


# --------------------------------------------------------------------------- the result cache verifies
def _entry(tmp_path):
    from ultr_core.studies import resultcache
    payload = {"metrics": {"ndcg@10": 0.5, "mcc": float("nan")}, "observation": [1.0, 0.5], "true_observation": None,
               "final_step": 10, "history": [{"step": 5, "loss": 0.3, "best": True}]}
    resultcache.store(tmp_path, "k", payload)
    return resultcache, tmp_path / "k.json"


def test_cache_round_trip_keeps_nan_as_nan(tmp_path):
    rc, path = _entry(tmp_path)
    assert "NaN" not in path.read_text()
    got = rc.load(tmp_path, "k")
    assert got["metrics"]["ndcg@10"] == 0.5 and np.isnan(got["metrics"]["mcc"])


def test_cache_refuses_forged_entries(tmp_path):
    """An edit with a recomputed unkeyed SHA-256 (what an attacker without the secret can compute) is refused, and
    so are NaN metrics, junk history and extra keys even with a valid keyed checksum."""
    import hashlib
    rc, path = _entry(tmp_path)
    entry = json.loads(path.read_text())
    entry["payload"]["metrics"]["ndcg@10"] = 0.999999
    entry["checksum"] = hashlib.sha256(json.dumps(entry["payload"], sort_keys=True).encode()).hexdigest()
    path.write_text(json.dumps(entry))
    assert rc.load(tmp_path, "k") is None
    for edit in ({"metrics": {"ndcg@10": float("nan")}}, {"history": [{"step": 1, "x": "junk"}]},
                 {"history": ["junk"]}, {"extra": 1}, {"final_step": "10"}):
        rc.store(tmp_path, "k", _payload())
        assert rc.load(tmp_path, "k") is not None
        forged = {**_payload(), **edit}                     # signed with the install's own key
        path.write_text(json.dumps({"payload": forged, "checksum": _hmac(rc._secret(), forged)}))
        assert rc.load(tmp_path, "k") is None, edit


def _payload():
    return {"metrics": {"ndcg@10": 0.5}, "observation": None, "true_observation": None, "final_step": 1, "history": []}


def test_cache_reads_only_small_regular_files_of_bounded_depth(tmp_path):
    rc, path = _entry(tmp_path)
    path.write_text("[" * 200_000 + "]" * 200_000)                    # RecursionError in json.loads
    assert rc.load(tmp_path, "k") is None
    path.unlink()
    os.mkfifo(path)                                                   # would block a plain open()
    assert rc.load(tmp_path, "k") is None
    path.unlink()
    other = tmp_path / "other.json"
    rc.store(tmp_path, "other", _payload())
    path.symlink_to(other)
    assert rc.load(tmp_path, "k") is None and rc.load(tmp_path, "other") is not None


def test_cache_secret_lives_outside_the_cache_folder(tmp_path, monkeypatch):
    from ultr_core.studies import resultcache
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ULTR_CACHE_SECRET", raising=False)
    resultcache._secret.cache_clear()
    try:
        key = resultcache._secret()
        f = tmp_path / "home" / ".config" / "ultr_explorer" / "cache.key"
        assert f.read_bytes().strip() == key and (f.stat().st_mode & 0o777) == 0o600
        monkeypatch.setenv("ULTR_CACHE_SECRET", "another install")
        resultcache._secret.cache_clear()
        assert resultcache._checksum(_payload()) != _hmac(key, _payload())
    finally:
        resultcache._secret.cache_clear()


def _hmac(key, payload):
    import hashlib
    import hmac
    return hmac.new(key, json.dumps(payload, sort_keys=True).encode(), hashlib.sha256).hexdigest()


# --------------------------------------------------------------------------- every entry point has the app's bounds
def test_a_link_is_clamped_to_the_apps_row_limit():
    from ultr_core.simulation.logspec import LogSpec
    spec, ds, _, log, note = LogSpec.parse("synthetic:100/sessions=6000000/seed=1").simulate_within(30_000)
    list_len = int(np.diff(ds.train.offsets).max())
    assert spec.n_sessions == 30_000 // list_len == log.n_sessions and len(log) <= 30_000
    assert "sessions=6,000,000" in note and f"clamped to {spec.n_sessions:,} sessions" in note
    same = LogSpec.parse("synthetic:100/sessions=2000/seed=1").simulate_within(30_000)
    assert same[0].n_sessions == 2000 and same[-1] is None


@pytest.mark.parametrize("name", ["train.py", "identifiability.py"])
def test_pages_clamp_a_linked_log_with_a_notice(name, monkeypatch):
    from apphelp import no_crash, page
    from ultr_core.simulation import simulated
    monkeypatch.setattr(simulated, "APP_MAX_LOG_ROWS", 40_000)     # the same rule at a size a test can build
    at = page(name, timeout=120)
    at.query_params["log"] = "synthetic:100/sessions=6000000/seed=2"
    at.run()
    notes = " ".join(i.value for i in at.info)
    assert no_crash(at) and "clamped to 4,000 sessions" in notes and "above the app's limit of 40,000" in notes


def test_compare_sweep_sessions_are_bounded():
    from ultr_core.errors import ConfigError
    from ultr_core.simulation.simulated import APP_MAX_SWEEP_SESSIONS
    from ultr_core.studies.presets import comparison_grid
    with pytest.raises(ConfigError, match="6,000,000 sessions per run exceed the app's 100,000"):
        comparison_grid({}, ["naive"], "n_sessions", ["5000", "6000000"], max_sessions=APP_MAX_SWEEP_SESSIONS)
    base, grid = comparison_grid({}, ["naive"], "n_sessions", ["5000"], max_sessions=APP_MAX_SWEEP_SESSIONS)
    assert grid["n_sessions"] == [5000]


# --------------------------------------------------------------------------- CPU per upload analysis is bounded
def _wide_log(ranks=60, sessions=12, seed=0):
    """One query, sessions of ``ranks`` shuffled documents: every document at many positions (many pairs)."""
    from ultr_core.logs.mapping import frame_to_log
    rng = np.random.default_rng(seed)
    docs = np.concatenate([rng.permutation(ranks) for _ in range(sessions)])
    pos = np.tile(np.arange(1, ranks + 1), sessions)
    frame = pd.DataFrame({"session_id": np.repeat(np.arange(sessions), ranks), "query_id": 1, "doc_id": docs,
                          "position": pos, "click": (rng.random(len(pos)) < 0.6 / pos ** 0.5).astype(int)})
    return frame_to_log(frame, "wide.csv")[0]


def test_the_bootstrap_stops_at_its_time_budget_with_a_note():
    from ultr_core.identifiability.pairs import Budget
    from ultr_core.identifiability.reports import analyse_identifiability
    log = _wide_log()
    full = analyse_identifiability(log, ["position"], estimate="all_pairs", n_bootstrap=40).report["position_bias"]
    cut = analyse_identifiability(log, ["position"], estimate="all_pairs", n_bootstrap=40,
                                  budget=Budget(seconds=0.0, chunk=5)).report["position_bias"]
    assert full["n_bootstrap"] == 40 and cut["n_bootstrap"] == 0
    assert any("ended the bootstrap after 0 of 40 resamples: no interval is shown" in n for n in cut["notes"])
    est = [c["estimate"] for c in cut["curves"]]
    assert est == [c["estimate"] for c in full["curves"]]                  # the curve itself is the same
    assert all(c["lower"] is None for c in cut["curves"]) and any(c["lower"] is not None for c in full["curves"])


def test_a_closed_tab_stops_the_estimation_and_a_large_one_is_not_started():
    from ultr_core.identifiability.pairs import Budget, Stopped
    from ultr_core.identifiability.reports import analyse_identifiability
    log = _wide_log()
    calls = []

    def closed():
        calls.append(1)
        return len(calls) > 2                     # the tab closes after two chunks
    with pytest.raises(Stopped):
        analyse_identifiability(log, ["position"], estimate="all_pairs", n_bootstrap=100,
                                budget=Budget(stop=closed, chunk=5))
    assert len(calls) == 3
    rep = analyse_identifiability(log, ["position"], estimate="all_pairs", budget=Budget(max_pairs=1_000)).report
    assert rep["position_bias"]["curves"] == [] and "exceed the cap 1,000" in rep["position_bias"]["notes"][0]
    assert "identifiable" in rep and rep["n_components"] == 1              # the graph's verdict is still given


def test_the_upload_page_analyses_within_the_apps_budget(monkeypatch):
    """The Upload page's estimation runs within the app's budget (here a pairs cap a test can reach): the graph's
    verdict is shown, the curve is refused with the way out."""
    from apphelp import no_crash, page
    from ultr_core.identifiability import pairs
    monkeypatch.setattr(pairs, "APP_MAX_PAIRS", 1_000)
    f = _wide_log().frame
    csv = f.assign(doc_id=f["doc_key"])[["session_id", "query_id", "doc_id", "position", "click"]].to_csv(index=False)
    at = page("upload.py", timeout=120).run()
    at.file_uploader[0].set_value(("wide.csv", csv.encode(), "text/csv")).run()
    text = " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption) + \
        " ".join(i.value for i in at.info) + " ".join(w.value for w in at.warning)
    assert no_crash(at) and [m for m in at.metric if m.label == "identifiable"][0].value == "yes"
    assert "no curve" in text and "exceed the cap 1,000" in text


# --------------------------------------------------------------------------- messages
def test_a_bias_column_named_twice(capsys, tmp_path):
    from apphelp import no_crash, page
    f = write(tmp_path, "log.csv", _sessions())
    refused(["ig", f, "--bias", "position,position"], capsys, "'position' is named twice")
    at = page("identifiability.py", timeout=120)
    at.query_params["bias"] = "position,position"
    at.run()
    assert no_crash(at) and not at.error
    assert any("named twice" in i.value for i in at.info) and at.sidebar.multiselect[0].value == ["position"]


def _two_position_log(n_sessions, clicks=True):
    from ultr_core.logs.mapping import frame_to_log
    rows = [(s, 1, (s + p) % 3, p, int(clicks and (s + p) % 2)) for s in range(n_sessions) for p in (1, 2)]
    return frame_to_log(pd.DataFrame(rows, columns=["session_id", "query_id", "doc_id", "position", "click"]),
                        "log.csv")[0]


def test_the_held_out_repair_refuses_what_it_cannot_measure():
    """One held-out session gave "[+nan, +nan]"; a log without clicks gave a difference of +0.0001 (#49, #50)."""
    from ultr_core.errors import ConfigError
    from ultr_core.identifiability.heldout import heldout_repair
    from ultr_core.identifiability.reports import analyse_identifiability
    for log, words in ((_two_position_log(4), "only 1 held-out session can be scored"),
                       (_two_position_log(40, clicks=False), "the log has no clicks")):
        an = analyse_identifiability(log, ["position"], merge=True)
        with pytest.raises(ConfigError, match=words):
            heldout_repair(log, an)
    log = _two_position_log(40)
    h = heldout_repair(log, analyse_identifiability(log, ["position"], merge=True))
    assert np.isfinite(h.difference).all()


def test_job_failures_never_show_a_class_name():
    from ultr_core.app.jobworker import job_message
    from ultr_core.errors import ConfigError
    assert job_message(ConfigError("log", "no clicks")) == "log: no clicks"
    assert job_message(KeyError("x")) == "an unexpected error stopped it (the server log has the details)"
    from ultr_core.clickmodels.compare import compare_click_models
    with pytest.raises(ConfigError, match="no clicks in its training sessions"):
        compare_click_models(_two_position_log(40, clicks=False).frame, "log")
