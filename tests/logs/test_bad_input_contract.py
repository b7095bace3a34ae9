"""Bad input: the one input contract (issue #50): one test per case of docs/safety.md's "Round three" table.

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
from hypothesis import given, settings, strategies as st

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
            rows.append(
                f"{session(s)},1,{(s + p) % 7},{p},{click(s, p)}" + ("," + extra.split("=")[1] if extra else "")
            )
    return "\n".join(rows) + "\n"


def test_click_models_refuses_what_ig_refuses(tmp_path, capsys):
    cases = {
        "fractional positions": (_sessions().replace(",1,0\n", ",1.6,0\n"), "whole numbers written in decimal"),
        "fractional clicks": (_sessions(click=lambda s, p: 0.6 if s == 3 and p == 1 else 0), "must hold 0 or 1"),
        "shown=yes beside 1": (_sessions(extra="shown=1").replace(",1\n", ",yes\n", 5), "'shown' must hold 0/1"),
        "shown=1.0": (_sessions(extra="shown=1.0"), "'shown' must hold 0/1"),
    }
    for text, words in cases.values():
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
        refused(["click-models", a, "--test", b, "--models", "pbm,ubm,dcm,dbn"], capsys, "--test",
                "results per session")


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


@pytest.mark.slow
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


def test_ig_refuses_flags_that_do_not_apply(tmp_path, capsys):
    f = write(tmp_path, "log.csv", _sessions())
    refused(["ig", f, "--scheduler", "tcp://127.0.0.1:1"], capsys, "--scheduler", "--engine dask")
    refused(["ig", f, "--estimate", "none", "--bootstrap", 5], capsys, "--bootstrap", "--estimate none")


_json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-10, 10), st.floats(allow_nan=True, allow_infinity=True),
                       st.text(alphabet='aN"\\Infity-', max_size=12),
                       st.sampled_from([np.float64("nan"), np.float32("-inf"), np.int64(7), np.float32(0.5)]))
_json_value = st.recursive(_json_leaf, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(alphabet='aN"\\Infity', max_size=8), inner, max_size=4),
                           max_leaves=30)


@settings(max_examples=300, deadline=None)
@given(_json_value)
def test_json_text_is_json_safe_in_one_pass(v):
    # the CLI's fast strict JSON against the walk it replaced: the same text, and it parses with NaN refused
    from ultr_core.logs.outputs import json_safe, json_text
    text = json_text(v)
    assert text == json.dumps(json_safe(v), allow_nan=False)
    json.loads(text, parse_constant=lambda c: pytest.fail(f"non-finite token {c} in {text}"))
