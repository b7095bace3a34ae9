"""Bad input, the server's side (issue #50): a result cache that verifies, bounds that hold for every
entry point, CPU per analysis bounded, messages without class names.  (The readers' and the CLI's cases:
tests/logs/test_bad_input_contract.py.)"""
from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pytest
from clihelp import refused, write
from test_bad_input_contract import _sessions


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
        path.write_text(json.dumps({"payload": forged, "checksum": _hmac(rc._secret(), "k", forged)}))
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
        assert resultcache._checksum("k", _payload()) != _hmac(key, "k", _payload())
    finally:
        resultcache._secret.cache_clear()


def _hmac(secret, key, payload):
    import hashlib
    import hmac

    from ultr_core.studies.resultcache import code_version
    text = f"{key}\n{code_version()}\n{json.dumps(payload, sort_keys=True)}"
    return hmac.new(secret, text.encode(), hashlib.sha256).hexdigest()


def test_a_signed_entry_copied_under_another_key_is_not_served(tmp_path):
    """Issue #61 item 5: the signature covers the key and the code version, not only the payload — copying a signed
    A.json over B.json made cell B return A's metrics."""
    from ultr_core.studies import resultcache as rc
    a = _payload()
    a["metrics"] = {"ndcg@10": 0.91}
    rc.store(tmp_path, "A", a)
    rc.store(tmp_path, "B", _payload())
    (tmp_path / "B.json").write_bytes((tmp_path / "A.json").read_bytes())
    assert rc.load(tmp_path, "A")["metrics"] == {"ndcg@10": 0.91} and rc.load(tmp_path, "B") is None


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
        comparison_grid({}, ["naive"], sweep="n_sessions", values=["5000", "6000000"],
                        max_sessions=APP_MAX_SWEEP_SESSIONS)
    base, grid = comparison_grid({}, ["naive"], sweep="n_sessions", values=["5000"],
                                 max_sessions=APP_MAX_SWEEP_SESSIONS)
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
    full = analyse_identifiability(log, ["position"], estimate="all_pairs", n_bootstrap=40).report.position_bias
    cut = analyse_identifiability(log, ["position"], estimate="all_pairs", n_bootstrap=40,
                                  budget=Budget(seconds=0.0, chunk=5)).report.position_bias
    assert full.n_bootstrap == 40 and cut.n_bootstrap == 0
    assert any("ended the bootstrap after 0 of 40 resamples: no bootstrap interval (the band is the Fisher interval "
               "alone)" in n for n in cut.notes)
    assert cut.curves["estimate"].equals(full.curves["estimate"])           # the curve itself is the same
    assert cut.curves["bootstrap_lower"].isna().all()
    assert full.curves["bootstrap_lower"].notna().any()
    for c in cut.curves.to_dict("records"):                # the band falls back on the Fisher interval
        assert c["band"] == "fisher" or pd.isna(c["log_se"]) or c["log_se"] == 0.0


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
    assert len(rep.position_bias.curves) == 0 and "exceed the cap 1,000" in rep.position_bias.notes[0]
    assert isinstance(rep.identifiable, bool) and rep.n_components == 1   # the graph's verdict is still given


def test_the_upload_page_analyses_within_the_apps_budget(monkeypatch):
    """The Upload page's estimation runs within the app's budget (here a pairs cap a test can reach): the graph's
    verdict is shown, the curve is refused with the way out."""
    from apphelp import no_crash, page

    from ultr_core.identifiability import pairs
    monkeypatch.setattr(pairs, "APP_MAX_PAIRS", 1_000)
    f = _wide_log().frame
    csv = f.assign(doc_id=f["doc_key"])[["session_id", "query_id", "doc_id", "position", "click"]].to_csv(index=False)
    at = page("upload.py", timeout=120).run()
    at.file_uploader(key="upload_click_log").set_value(("wide.csv", csv.encode(), "text/csv")).run()
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
    assert any("named twice" in i.value for i in at.info) and at.sidebar.multiselect(
        key="ig_bias_factor_columns"
    ).value == ["position"]


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
    with pytest.raises(ConfigError, match="the log has no clicks in its training sessions"):
        compare_click_models(_two_position_log(40, clicks=False).frame, "log")
