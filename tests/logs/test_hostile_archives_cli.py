"""Hostile input, continued (docs/safety.md): schedulers that are not Dask, CLI errors that name the option,
archives that are broken, encrypted or truncated, system paths, quoted content, files that are not click logs."""
from __future__ import annotations

import io
import socket
import struct
import tarfile
import threading
import time
import zipfile
from pathlib import Path

import pytest
from apphelp import no_crash, page as _page
from clihelp import refused, write

from ultr_core.errors import ConfigError, DataFormatError
from ultr_core.logs.ingestion import ingest
from ultr_core.logs.mapping import read_user_log

ROOT = Path(__file__).resolve().parents[2]


def page(name: str):
    return _page(name, timeout=90)


# --------------------------------------------------------------------------- 5. no hang
def _server(mode: str) -> int:
    """A local TCP service that speaks HTTP at once, or says nothing; returns its port."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()

    def run():
        while True:
            c, _ = s.accept()
            if mode == "http":
                c.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            threading.Timer(30, c.close).start()
    threading.Thread(target=run, daemon=True).start()
    return s.getsockname()[1]


@pytest.mark.parametrize("mode", ["http", "silent", "closed"])
def test_a_scheduler_that_is_not_dask_is_named_within_the_timeout(tmp_path, capsys, monkeypatch, mode):
    import ultr_core.logs.daskcounts as dc
    monkeypatch.setattr(dc, "DASK_CONNECT_TIMEOUT", 2)
    f = write(tmp_path, "log.csv", "query_id,doc_id,position,click\n1,a,1,1\n")
    if mode == "closed":
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        probe.close()
    else:
        port = _server(mode)
    t0 = time.perf_counter()
    err = refused(["ig", f, "--engine", "dask", "--scheduler", f"tcp://127.0.0.1:{port}"], capsys,
                  "scheduler", f"127.0.0.1:{port}")
    assert time.perf_counter() - t0 < 10 and ("protocol" in err or "no Dask scheduler answers" in err)


def test_a_real_dask_scheduler_passes_the_probe():
    distributed = pytest.importorskip("distributed")
    from ultr_core.logs.ingestion import probe_scheduler
    with distributed.LocalCluster(n_workers=1, processes=False, threads_per_worker=1, dashboard_address=None,
                                  protocol="tcp://") as c:
        assert probe_scheduler(c.scheduler_address, 5)[1] > 0


# --------------------------------------------------------------------------- 6. every error names its input
@pytest.mark.parametrize("args, words", [
    (["train", "--dataset", "mq2008:{data}/mq2008:9", "--sessions", "10"], ["dataset", "fold must be 1–5"]),
    (["train", "--seed", "-1", "--sessions", "10"], ["--seed", "got -1"]),
    (["train", "--data-seed", "-1", "--sessions", "10"], ["--data-seed"]),
    (["train", "--set", "hidden=1e20", "--sessions", "10"], ["hidden", "1e20"]),
    (["ig-fit", "paper:2", "--impressions", "-1"], ["--impressions", "got -1"]),
    (["ig-fit", "paper:2", "--max-iter", "0"], ["--max-iter", "got 0"]),
    (["simulate", "--out", "{tmp}/missing/x.csv"], ["does not exist"]),
])
def test_cli_errors_name_the_option(tmp_path, capsys, args, words):
    args = [a.format(tmp=tmp_path, data=ROOT.parent / "shared" / "data") for a in args]
    refused(args, capsys, *words)


def test_a_header_of_a_million_columns_is_named(tmp_path, capsys):
    n = 1_000_000
    f = write(tmp_path, "wide.csv", ",".join(f"c{i}" for i in range(n)) + "\n" + ",".join("1" * n) + "\n")
    refused(["ig", f], capsys, "wide.csv, line 1: the header row has more than 10,000 columns")


def _ultra_zip(method=zipfile.ZIP_DEFLATED) -> bytes:
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", method) as z:
        z.writestr("K/train/train.init_list", b"0 0 1 2\n1 2 1 0\n" * 50)
        z.writestr("K/train/train.feature", b"0 1:1\n1 2:1\n2 3:1\n")
    return b.getvalue()


def _flip(data: bytes, edits) -> bytes:
    d = bytearray(data)
    for sig, off, fn in edits:
        i = 0
        while (i := d.find(sig, i)) >= 0:
            fn(d, i + off)
            i += 4
    return bytes(d)


def _bad_crc():
    d = bytearray(_ultra_zip(zipfile.ZIP_STORED))
    d[d.find(b"0 0 1 2")] = ord("9")
    return bytes(d)


def _encrypted():
    def set_bit(d, i):
        d[i] |= 1
    return _flip(_ultra_zip(), [(b"PK\x03\x04", 6, set_bit), (b"PK\x01\x02", 8, set_bit)])


def _unknown_compression():
    def method(d, i):
        d[i:i + 2] = struct.pack("<H", 99)
    return _flip(_ultra_zip(), [(b"PK\x03\x04", 8, method), (b"PK\x01\x02", 10, method)])


def _truncated_tgz():
    b = io.BytesIO()
    with tarfile.open(fileobj=b, mode="w:gz") as t:
        for n, data in (("K/train/train.init_list", b"0 0 1 2\n1 2 1 0\n" * 4000),
                        ("K/train/train.feature", b"0 1:1\n")):
            info = tarfile.TarInfo(n)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return b.getvalue()[:len(b.getvalue()) // 2]


ARCHIVES = {"truncated.tar.gz": (_truncated_tgz, "not a readable tar archive"),
            "badcrc.zip": (_bad_crc, "cannot unpack member 'K/train/train.init_list' (Bad CRC-32"),
            "encrypted.zip": (_encrypted, "member 'K/train/train.init_list' is encrypted"),
            "method99.zip": (_unknown_compression, "compression method is not supported"),
            "truncated.zip": (lambda: _ultra_zip()[:-30], "not a readable zip archive")}


@pytest.mark.parametrize("name", list(ARCHIVES))
def test_archive_errors_name_the_archive_and_member(name):
    make, words = ARCHIVES[name]
    data = make()
    for read in (lambda: ingest(data, "ultra", name=name), lambda: read_user_log(data, "ultra", name=name)):
        with pytest.raises(DataFormatError) as e:
            read()
        assert str(e.value).startswith(name) and words in str(e.value)


def test_archive_errors_reach_the_upload_page_as_a_message():
    up = page("upload.py").run()
    up.file_uploader(key="upload_click_log").set_value(("encrypted.zip", _encrypted(), "application/zip")).run()
    assert no_crash(up) and up.error and "is encrypted" in up.error[0].value


def test_config_errors_are_typed():
    from ultr_core.errors import MissingColumnError
    with pytest.raises(MissingColumnError) as e:
        ingest(b"query_id,doc_id,click\n1,a,1\n", "csv", name="x.csv")
    assert e.value.columns == ("position",)
    with pytest.raises(ConfigError, match="--memory-limit"):
        ingest(b"query_id,doc_id,position,click\n1,a,1,1\n", "csv", memory_limit="lots")


def test_a_file_that_is_not_a_click_log_says_what_a_click_log_needs():
    up = page("upload.py").run()
    up.file_uploader(key="upload_click_log").set_value(("qrels.csv", b"query,url,relevance\nq1,a,2\nq1,b,0\nq2,a,1\n",
                                                        "text/csv")).run()
    assert no_crash(up)
    assert up.error and "is chosen as both position and click" in up.error[0].value
    assert "A click log needs one column for each" in up.error[0].value
    assert "log" not in up.session_state


def test_system_paths_are_refused_and_never_quoted(capsys, monkeypatch):
    monkeypatch.setenv("ULTR_SECRET_TOKEN", "hunter2hunter2")
    for path in ("/proc/self/environ", "/sys/kernel/mm/transparent_hugepage/enabled", "/dev/zero"):
        err = refused(["ig", path], capsys, "a system path (/proc, /sys or /dev) cannot be read as a log")
        assert "hunter2" not in err and "ULTR_SECRET" not in err
    refused(["simulate", "--out", "/proc/self/x.csv", "--sessions", 10], capsys, "--out",
            "a system path (/proc, /sys or /dev) cannot hold an output")


def test_a_message_quotes_at_most_sixteen_characters_of_content(tmp_path, capsys):
    f = write(tmp_path, "secret", b"SECRET_API_KEY=hunter2hunter2hunter2 and more text\n" * 3)
    err = refused(["ig", f], capsys, "not a log format this reader knows")
    assert "'SECRET_API_KEY=h…'" in err and "hunter2" not in err
