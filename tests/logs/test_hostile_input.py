"""The hostile-input catalogue of docs/safety.md ("Hostile input, case by case"): one test per row.

Every file is generated here, small, and fed to the same code the CLI and the Upload page run.  A case is
either refused with a message that names the input (one line, exit status 2 on the CLI, no "unexpected"),
or analysed with every dropped row counted and shown — never a silent drop, cast or guess.
"""
from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from apphelp import no_crash, page as _page
from clihelp import cli, refused, write

from ultr_core.errors import DataFormatError
from ultr_core.logs.bounds import UPLOAD_RSS_BUDGET
from ultr_core.logs.ingestion import ingest
from ultr_core.logs.mapping import read_user_log

ROOT = Path(__file__).resolve().parents[2]
ESC = "\x1b]0;pwned\x07"          # sets a terminal's title; "\x1b[2J" clears the screen


def page(name: str):
    return _page(name, timeout=90)


# --------------------------------------------------------------------------- 1. memory
UPLOAD_PATH = """
import os, sys, threading, time
import psutil
from ultr_core.data.archives import ultra_files_or_one
from ultr_core.logs.bounds import UPLOAD_DUCKDB_MEMORY, UPLOAD_KEEP_ROWS
from ultr_core.logs.ingestion import ingest
from ultr_core.logs.mapping import read_user_log
from ultr_core.logs.sniff import infer_format
peak = [0]
def watch():
    p = psutil.Process()
    while True:
        peak[0] = max(peak[0], p.memory_info().rss); time.sleep(0.02)
threading.Thread(target=watch, daemon=True).start()
path = sys.argv[1]
name, data = ultra_files_or_one([(os.path.basename(path), open(path, "rb").read())])
from ultr_core.identifiability.reports import analyse_identifiability
from ultr_core.logs.bounds import UPLOAD_MAX_PAIRS
from ultr_core.errors import TooManyRowsError
try:                                    # what pages/upload.py runs: kept whole when small (parsed once)
    try:
        subject = read_user_log(data, name=name, max_rows=UPLOAD_KEEP_ROWS)[0]
        rows = len(subject.frame)
    except TooManyRowsError:
        subject = ingest(data, infer_format(data, name), memory_limit=UPLOAD_DUCKDB_MEMORY, name=name,
                         max_pairs=UPLOAD_MAX_PAIRS)
        rows = subject.n_rows
    analyse_identifiability(subject, ["position"], merge=True, intervene=True, estimate="all_pairs", n_bootstrap=100)
    outcome = f"read {rows}"
except Exception as e:
    outcome = f"{type(e).__name__}: {e}"
time.sleep(0.05)
# VmHWM: this process image's high-water mark (ru_maxrss would include the forking pytest worker's)
hwm = [ln for ln in open("/proc/self/status") if ln.startswith("VmHWM:")]
peak[0] = max(peak[0], int(hwm[0].split()[1]) * 1024 if hwm else 0)
print(outcome); print(peak[0])
"""


def _peak_rss(path: Path) -> tuple[str, int]:
    r = subprocess.run([sys.executable, "-c", UPLOAD_PATH, str(path)], capture_output=True, text=True, cwd=ROOT,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    outcome, peak = r.stdout.strip().splitlines()[-2:]
    return outcome, int(peak)


class _Lines:
    """A file-like that yields ``n`` copies of ``line`` without holding them (a bomb made in O(1) memory)."""

    def __init__(self, line: bytes, n: int):
        self.left, self.block = len(line) * n, line * (1 << 16)

    def read(self, k=-1):
        k = len(self.block) if k is None or k < 0 else min(k, len(self.block))
        k = min(k, self.left)
        self.left -= k
        return self.block[:k]


LINE = b"7 0 1 2 3 4 5 6 7 8 9\n"
N_LINES = 20_000_000                      # 440 MB of init_list, 200 M displayed documents


def zip_bomb(path: Path) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        with z.open("K=9/train/train.init_list", "w", force_zip64=True) as f:
            src = _Lines(LINE, N_LINES)
            while chunk := src.read():
                f.write(chunk)
        z.writestr("K=9/train/train.feature", "".join(f"{i} {i}:1\n" for i in range(10)))
    return path


def tgz_bomb(path: Path) -> Path:
    with tarfile.open(path, "w:gz", compresslevel=1) as t:
        info = tarfile.TarInfo("K=9/train/train.init_list")
        info.size = len(LINE) * N_LINES
        t.addfile(info, _Lines(LINE, N_LINES))
    return path


def parquet_bomb(path: Path) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq
    rows = 8000                           # one 1 MiB string referenced 8,000 times: 8 GB decoded
    junk = pa.DictionaryArray.from_arrays(pa.array(np.zeros(rows, np.int32)), pa.array(["x" * (1 << 20)]))
    pq.write_table(pa.table({"query_id": np.ones(rows, np.int64), "doc_id": np.arange(rows), "position":
                             np.ones(rows, np.int64), "click": np.zeros(rows, np.int64), "junk": junk}),
                   path, use_dictionary=True, compression="zstd", store_schema=False)
    return path


@pytest.mark.slow
@pytest.mark.parametrize("make, limit", [(zip_bomb, "displayed documents exceed the limit"),
                                         (tgz_bomb, "displayed documents exceed the limit"),
                                         (parquet_bomb, "decodes to 8,000.0 MB of text")],
                         ids=["zip bomb", "tar.gz bomb", "parquet dictionary bomb"])
def test_upload_path_stays_within_its_memory_budget_on_a_bomb(tmp_path, make, limit):
    f = make(tmp_path / {"zip_bomb": "b.zip", "tgz_bomb": "b.tar.gz", "parquet_bomb": "b.parquet"}[make.__name__])
    assert f.stat().st_size < 3_000_000                      # small on disk …
    outcome, peak = _peak_rss(f)
    assert outcome.startswith("DataFormatError") and limit in outcome, outcome     # … refused, and named
    assert peak < UPLOAD_RSS_BUDGET, f"peak RSS {peak / 2**20:.0f} MB"


@pytest.mark.slow
def test_the_largest_parquet_upload_accepted_stays_within_the_budget(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq
    n = 3_900_000                        # 19.5 M values: just under the 20 M limit (20,000 distinct pairs)
    pq.write_table(pa.table({"query_id": np.arange(n) // 10 % 2000, "doc_id": np.arange(n) % 1000, "position":
                             np.arange(n) % 10 + 1, "click": np.zeros(n, np.int8), "session_id": np.arange(n) // 10}),
                   tmp_path / "big.parquet")
    outcome, peak = _peak_rss(tmp_path / "big.parquet")
    assert outcome == f"read {n}" and peak < UPLOAD_RSS_BUDGET, (outcome, peak / 2**20)


@pytest.mark.slow
@pytest.mark.parametrize("n, accepted", [(1_990_000, True), (3_000_000, False)])
def test_a_csv_upload_is_analysed_within_the_budget_or_refused_by_its_pairs(tmp_path, n, accepted):
    """Random (query, document, position) triples: nearly one distinct pair per row.  Up to 2 M pairs the page
    reads, keeps and analyses the log (graph, plan, curves); past it the upload is refused before its pairs are
    sorted or materialised (a 175 MB CSV of 12 M pairs needed 4.5 GB to analyse)."""
    rng = np.random.default_rng(0)
    pd.DataFrame({"query_id": rng.integers(0, 2000, n), "doc_id": rng.integers(0, 50_000, n),
                  "position": np.arange(n) % 10 + 1, "click": (rng.random(n) < 0.1).astype(int)}
                 ).to_csv(tmp_path / "log.csv", index=False)
    outcome, peak = _peak_rss(tmp_path / "log.csv")
    assert outcome == f"read {n}" if accepted else "distinct (document, factor) pairs" in outcome, outcome
    assert peak < UPLOAD_RSS_BUDGET, f"peak RSS {peak / 2**20:.0f} MB"


def test_settings_json_feature_size_is_checked_before_allocating(tmp_path, capsys):
    from test_official_layout import write_official_layout
    folder = write_official_layout(tmp_path / "K=1", 1)
    for split in ("valid", "test"):
        (folder / split).mkdir()
        for ext in ("feature", "init_list", "labels"):
            (folder / split / f"{split}.{ext}").write_bytes((folder / "train" / f"train.{ext}").read_bytes())
    (folder / "settings.json").write_text('{"feature_size": 3000000}')
    refused(["train", "--dataset", f"ultra:{folder}", "--sessions", 10], capsys, "'feature_size' 3,000,000 exceeds")


def test_a_dense_matrix_over_the_limit_is_refused_before_it_is_built():
    from ultr_core.data.loaders import MAX_MATRIX_BYTES, _check_matrix
    _check_matrix(1000, 100, "f")
    with pytest.raises(DataFormatError, match="GiB as a dense matrix"):
        _check_matrix(MAX_MATRIX_BYTES // 400 + 1, 100, "f")


# --------------------------------------------------------------------------- 2. one log, one truth
def recurring_sessions(n=2000) -> bytes:
    """Session ids that recur on non-contiguous lines: every (session, position) repeats 40 times."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"session_id": np.arange(n) % 50, "query_id": (np.arange(n) // 10) % 20,
                       "doc_id": rng.integers(0, 30, n), "position": np.arange(n) % 10 + 1,
                       "click": rng.integers(0, 2, n)})
    return df.to_csv(index=False).encode()


def test_every_reader_keeps_and_counts_the_same_rows(tmp_path, capsys):
    data = recurring_sessions()
    f = write(tmp_path, "recur.csv", data)
    note = "dropped 1,950 duplicate row(s) (same session and position) of 2,000"
    log, notes = read_user_log(data, "csv", name="recur.csv")           # the kept log (Upload → other pages)
    assert len(log) == 50 and notes == [note]
    for table in (ingest(data, "csv", name="recur.csv"), ingest(f), ingest(f, engine="dask")):
        assert table.n_rows == 50 and list(table.notes) == [note]
    rc, out, _ = cli(["ig", f, "--json", "--estimate", "none"], capsys)
    rep = json.loads(out)
    assert rc == 0 and rep["n_rows"] == 50 and rep["notes"] == [note]


def test_upload_and_identifiability_pages_agree_on_rows_notes_and_verdict():
    up = page("upload.py").run()
    up.file_uploader(key="upload_click_log").set_value(("recur.csv", recurring_sessions(), "text/csv")).run()
    assert no_crash(up) and not up.error
    assert any("dropped 1,950 duplicate row(s)" in i.value for i in up.info)
    assert any("Read 50 impressions" in s.value for s in up.success)
    comps = [m for m in up.metric if m.label == "components"][0].value
    at = page("identifiability.py")
    for k in ("log", "log_key", "log_notes"):
        at.session_state[k] = up.session_state[k]
    at.run()
    assert no_crash(at)
    assert any("dropped 1,950 duplicate row(s)" in c.value for c in at.caption)
    assert at.metric[1].value == comps                    # the same log: the same number of components


def _zipped_k2(tmp_path) -> bytes:
    from test_official_layout import write_official_layout
    folder = write_official_layout(tmp_path / "K=2", 2)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for f in sorted(folder.rglob("*")):
            if f.is_file():
                z.write(f, "K=2/" + f.relative_to(folder).as_posix())
    return buf.getvalue()


def test_upload_and_identifiability_pages_propose_the_same_intervention(tmp_path, capsys):
    up = page("upload.py").run()
    up.file_uploader(key="upload_click_log").set_value(("K=2.zip", _zipped_k2(tmp_path), "application/zip")).run()
    assert no_crash(up) and not up.error
    report = "\n".join(c.value for c in up.code)
    swap = [ln.strip() for ln in report.splitlines() if ln.strip().startswith("show document")]
    assert len(swap) == 1
    at = page("identifiability.py")
    for k in ("log", "log_key", "log_notes"):
        at.session_state[k] = up.session_state[k]
    at.run()
    assert no_crash(at)
    plan = [d.value for d in at.dataframe if "to_label" in d.value.columns][0].iloc[0]
    assert swap[0].startswith(f"show document {plan['document']} at {plan['to_label']} (seen at {plan['from_label']}")
    rc, out, _ = cli(["ig", tmp_path / "K=2", "--intervene", "--estimate", "none"], capsys)   # the CLI's count table
    assert rc == 0 and swap[0] in out                      # … proposes the same swap (ties: the smallest document)
    up_csv, ig_csv = ([b for b in x.get("download_button") if "plan (CSV)" in b.label] for x in (up, at))
    assert len(up_csv) == len(ig_csv) == 1                  # the same plan downloads from both pages


def test_a_bad_upload_after_a_good_one_keeps_the_good_one_and_says_only_that():
    up = page("upload.py").run()
    up.file_uploader(key="upload_click_log").set_value(("good.csv",
                                                        b"query_id,doc_id,position,click\nq,a,1,1\nq,b,2,0\n",
                                                        "text/csv")).run()
    kept = up.session_state["log"]
    up.file_uploader(key="upload_click_log").set_value(("bad.csv", b"query_id,doc_id,position,click\nq,a,0x2,1\n",
                                                        "text/csv")).run()
    assert no_crash(up)
    assert up.error and "decimal digits" in up.error[0].value and "current log is unchanged" in up.error[0].value
    assert not any("now the *current log*" in c.value or "now the current log" in c.value for c in up.caption)
    assert up.session_state["log"] is kept


def test_no_position_bias_is_reported_without_clicks(tmp_path, capsys):
    from test_official_layout import write_official_layout
    folder = write_official_layout(tmp_path / "K=1", 1)            # the paper's folders: no train.clicks
    rc, out, _ = cli(["ig", folder, "--json"], capsys)
    pb = json.loads(out)["position_bias"]
    assert rc == 0 and pb["curves"] == [] and any("has no clicks" in n for n in pb["notes"])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_reported_estimate_lies_inside_its_interval(seed):
    from ultr_core.identifiability import IdentifiabilityGraph
    from ultr_core.identifiability.estimation import estimate_bias_full
    from ultr_core.logs.ingestion import CountTable
    rng = np.random.default_rng(seed)                   # sparse clicks: some factors never clicked
    n = 600
    df = pd.DataFrame({"query_id": rng.integers(0, 30, n), "doc_id": rng.integers(0, 8, n),
                       "position": rng.integers(1, 7, n), "click": (rng.random(n) < 0.08).astype(int)})
    g = IdentifiabilityGraph.from_counts(CountTable.from_log(df, ["position"], ["query_id", "doc_id"]))
    for method in ("all_pairs", "pivot_one", "em"):
        t = estimate_bias_full(g, method=method, n_bootstrap=40, seed=seed).table
        both = t["estimate"].notna() & t["lower"].notna()
        assert ((t.loc[both, "lower"] <= t.loc[both, "estimate"] + 1e-6)
                & (t.loc[both, "estimate"] <= t.loc[both, "upper"] + 1e-6)).all()


# --------------------------------------------------------------------------- 3. refuse, don't guess
@pytest.mark.parametrize("column, value, words", [
    ("click", 257, "'click' must hold values from 0 to 1"),
    ("position", 65537, "'position' must hold values from 1 to 10,000"),
    ("label", 200, "'label' must hold values from 0 to 31"),
])
def test_narrowing_casts_are_range_checked(tmp_path, capsys, column, value, words):
    from ultr_core.logs.clicklog import ClickLog
    d = {"session_id": [0, 0], "query_id": [1, 1], "doc_id": [1, 2], "position": [1, 2], "shown": [True, True],
         "click": [1, 0], "label": [1, 0]}
    d[column] = [d[column][0], value]
    with pytest.raises(DataFormatError, match=words):
        ClickLog(pd.DataFrame(d))
    f = write(tmp_path, "log.csv", pd.DataFrame(d).to_csv(index=False))
    refused(["ig-fit", f], capsys, words)                       # ig-fit reads a log with labels whole


def test_one_label_rule_for_every_reader(tmp_path):
    from test_official_layout import write_official_layout

    from ultr_core.data.loaders import load_ultra
    from ultr_core.logs.ultra import ultra_frame
    folder = write_official_layout(tmp_path / "K=1", 1)
    lab = folder / "train" / "train.labels"
    lines = lab.read_text().splitlines()
    first = lines[0].split()
    lines[0] = " ".join(first[:1] + ["200"] + first[2:])
    lab.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataFormatError, match="from 0 to 31"):
        ultra_frame(folder, "K=1", labels=True)
    for split in ("valid", "test"):
        (folder / split).mkdir()
        for ext in ("feature", "init_list", "labels"):
            (folder / split / f"{split}.{ext}").write_bytes((folder / "train" / f"train.{ext}").read_bytes())
    with pytest.raises(DataFormatError, match="label 200 is not a whole number from 0 to 31"):
        load_ultra(folder)


SHOWN = "query_id,doc_id,position,click,shown\n1,a,1,1,yes\n1,b,2,0,maybe\n2,a,1,0,true\n2,b,2,1,0\n"


def test_shown_must_be_a_boolean_in_every_reader(tmp_path, capsys):
    f = write(tmp_path, "shown.csv", SHOWN)
    refused(["ig", f], capsys, "column 'shown' must hold 0/1 or true/false", "'yes'")
    with pytest.raises(DataFormatError, match="'shown' must hold 0/1 or true/false"):
        ingest(f, engine="dask")
    with pytest.raises(DataFormatError, match="'shown' must hold 0/1 or true/false"):
        read_user_log(f)


@pytest.mark.parametrize("value", ["0x2", "2.0", "1e0"])
def test_positions_must_be_written_in_decimal_digits(tmp_path, capsys, value):
    f = write(tmp_path, "pos.csv", f"query_id,doc_id,position,click\n1,a,1,1\n1,b,{value},0\n")
    refused(["ig", f], capsys, "whole numbers written in decimal digits")
    with pytest.raises(DataFormatError, match="decimal digits"):
        read_user_log(f)
    with pytest.raises(DataFormatError, match="decimal digits"):
        ingest(f, engine="dask")


@pytest.mark.parametrize("args, words", [
    (["--bias", "click"], "'click' cannot be a bias factor"),
    (["--bias", "position,query_id"], "'query_id' cannot be a bias factor"),
    (["--doc-columns", "click"], "'click' cannot identify a document"),
    (["--doc-columns", "position"], "'position' cannot identify a document"),
    (["--column", "qa=query_id", "--column", "qb=query_id"], "'qa' and 'qb' are both mapped to 'query_id'"),
    (["--column", "qa=query_id", "--column", "qa=doc_id"], "file column 'qa' is mapped twice"),
    (["--column", "query_id"], "'query_id' is not FILE_COLUMN=NAME"),
])
def test_columns_in_impossible_roles_are_refused(tmp_path, capsys, args, words):
    f = write(tmp_path, "log.csv", "qa,qb,query_id,doc_id,position,click\n1,1,1,a,1,1\n1,1,1,b,2,0\n")
    refused(["ig", f, *args], capsys, words)


# --------------------------------------------------------------------------- 4. no injection
def test_memory_limit_never_reaches_sql_as_text(tmp_path, capsys):
    f = write(tmp_path, "log.csv", "query_id,doc_id,position,click\n1,a,1,1\n1,b,2,0\n")
    target = tmp_path / "INJECTED.csv"
    refused(["ig", f, "--memory-limit", f"2GB'; COPY (SELECT 1) TO '{target}'; SET threads='1"], capsys,
            "--memory-limit", "is not a size")
    assert not target.exists()
    rc, _, _ = cli(["ig", f, "--memory-limit", "512MiB", "--estimate", "none"], capsys)
    assert rc == 0


def test_control_characters_never_reach_a_terminal(tmp_path, capsys):
    f = write(tmp_path, "esc.csv", f"query_id,doc_id,position,click,ctx{ESC}\n1,a,1,1,x\x1b[2J\n1,b,2,0,y\n")
    rc, out, err = cli(["ig", f, "--bias", f"position,ctx{ESC}"], capsys)
    assert rc == 0 and "\x1b" not in out + err and "\x07" not in out + err
    assert "ctx\\x1b]0;pwned\\x07" in out                              # shown, escaped
    err = refused(["ig", f, "--bias", f"nope{ESC}"], capsys, "nope\\x1b")
    assert "\x1b" not in err


def test_control_characters_never_reach_a_page():
    up = page("upload.py").run()
    up.file_uploader(key="upload_click_log").set_value((f"log{ESC}.csv",
                                                        f"query_id,doc_id,position,click\nq{ESC},a,0x2,1\n".encode(),
                                   "text/csv")).run()
    assert no_crash(up) and up.error
    texts = [e.value for e in up.error] + [c.value for c in up.caption] + [m.value for m in up.markdown]
    assert all("\x1b" not in t and "\x07" not in t for t in texts)
    assert any("log\\\\x1b" in t or "log\\x1b" in t for t in texts)
