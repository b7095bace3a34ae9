"""A log source is resolved once (issue #45): paths expanded, compression and format known, the first bytes read —
then every reader takes the resolved source, so the CLI opens each file once in Python (DuckDB's own scan aside)
and gives the same answer as before."""
import builtins
import gzip
import json

import numpy as np
import pandas as pd
import pytest

from ultr_core.__main__ import main
from ultr_core.logs.sniff import LogSource, infer_format, is_gzip, resolve_source


def _log(path, seed=0, n=600):
    rng = np.random.default_rng(seed)
    pd.DataFrame({"session_id": np.repeat(np.arange(n) + 10_000 * seed, 4),
                  "query_id": np.repeat(rng.integers(0, 9, n), 4),
                  "doc_id": rng.integers(0, 30, 4 * n), "position": np.tile(np.arange(1, 5), n),
                  "click": rng.integers(0, 2, 4 * n)}).to_csv(path, index=False)


@pytest.fixture
def logs(tmp_path):
    _log(tmp_path / "a.csv")
    _log(tmp_path / "b.csv", seed=1)
    with open(tmp_path / "a.csv", "rb") as f, gzip.open(tmp_path / "c.csv.gz", "wb") as g:
        g.write(f.read())
    return tmp_path


def test_resolving_reads_the_head_once_and_knows_format_and_compression(logs):
    src = resolve_source(str(logs / "c.csv.gz"))
    assert isinstance(src, LogSource) and src == str(logs / "c.csv.gz")
    assert src.fmt == "csv" and src.gzip and src.head.startswith(b"session_id,query_id")
    assert infer_format(src) == "csv" and is_gzip(src)
    glob = resolve_source(str(logs / "[ab].csv"))
    assert glob.paths == (str(logs / "a.csv"), str(logs / "b.csv")) and not glob.gzip
    assert resolve_source(b"raw bytes") == b"raw bytes"                 # an upload passes unchanged


@pytest.mark.parametrize("name", ["a.csv", "c.csv.gz", "[ab].csv"])
@pytest.mark.parametrize("command", [["click-models", "--models", "pbm,dctr", "--json"], ["ig", "--json"]])
def test_the_cli_opens_each_file_once(logs, name, command, monkeypatch, capsys):
    opened = []
    real = builtins.open

    def counting(f, *a, **k):
        if str(f).startswith(str(logs)):
            opened.append(str(f))
        return real(f, *a, **k)
    monkeypatch.setattr(builtins, "open", counting)
    assert main([command[0], str(logs / name), *command[1:]]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(opened) == len(set(opened)) <= 2, opened                  # each file once (a glob: two files)
    assert out
