"""A disk that fills while a log is spilled (issue #62, item 5): every command and engine ends in one message naming
the cause and what to do — never DuckDB's words blamed on the input, never a traceback — and nothing half written
stays: the spill folders are gone and an earlier output file is unchanged.

Two ways to fill a disk: DuckDB's own cap on its spill folder (``max_temp_directory_size``, set on every connection
the commands open; runs everywhere), and a real 256 kB tmpfs as TMPDIR (where this machine lets the tests mount one:
it fills the pattern files, the Dask writer's files and DuckDB's spill alike)."""
import errno
import os
import subprocess
import sys
import tempfile

import pytest
from clihelp import refused
from test_click_models_out_of_core import _varied_log

import ultr_core.logs.sql as sql
from ultr_core.errors import ConfigError, DiskFullError
from ultr_core.logs.sql import disk_full, reading_error, reporting_budget

FULL = ("TMPDIR", "temporary folder filled", "Nothing was written.")


@pytest.fixture
def log(tmp_path):
    return _varied_log(tmp_path / "log.parquet", 0, n_sessions=20000)


@pytest.fixture
def spill_capped(tmp_path, monkeypatch):
    """Every DuckDB connection that may spill gets a 64 KiB spill folder and one thread; TMPDIR is a fresh folder to
    inspect."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr(tempfile, "tempdir", None)
    connect = sql.connect

    def capped(memory_limit=None, temp_dir=None, threads=None):
        con = connect(memory_limit, temp_dir, threads)
        if temp_dir:                          # one thread: where DuckDB runs out is then the same every run
            con.execute("SET max_temp_directory_size = '64KiB'").fetchall()
            con.execute("SET threads = 1").fetchall()
        return con
    monkeypatch.setattr(sql, "connect", capped)
    yield tmp
    monkeypatch.setattr(tempfile, "tempdir", None)


def test_disk_full_is_read_from_every_form_it_takes():
    duck = type("OutOfMemoryException", (Exception,), {"__module__": "_duckdb"})
    assert disk_full(OSError(errno.ENOSPC, "No space left on device"))
    assert disk_full(OSError(errno.EDQUOT, "Disk quota exceeded"))
    assert disk_full(OSError("IOError: Could not write file: No space left on device"))      # pyarrow: no errno
    assert disk_full(duck("Out of Memory Error: failed to offload data block of size 256.0 KiB"))
    assert not disk_full(duck("Out of Memory Error: failed to allocate data of size 2.0 MiB"))
    assert not disk_full(OSError(errno.ENOENT, "No such file"))
    assert not disk_full(ValueError("no space left on device"))            # a value in the input, not a disk
    assert isinstance(reading_error(duck("failed to offload data block"), "x"), DiskFullError)
    budget = reading_error(duck("Out of Memory Error: failed to allocate data of size 2.0 MiB"), "x")
    assert type(budget) is ConfigError and budget.field == "--memory-limit"
    with pytest.raises(DiskFullError):
        with reporting_budget():
            raise OSError(errno.ENOSPC, "No space left on device")
    with pytest.raises(KeyError):                                             # other errors pass unchanged
        with reporting_budget():
            raise KeyError("x")
    assert DiskFullError().field == "TMPDIR" and isinstance(DiskFullError(), ConfigError)


@pytest.mark.parametrize("args", [["click-models", "--models", "pbm,dbn"], ["evaluate", "--estimators", "ips"]],
                         ids=["click-models", "evaluate"])
def test_a_full_spill_folder_ends_in_one_message_and_leaves_nothing(log, spill_capped, capsys, args, tmp_path):
    out = tmp_path / "relevance.csv"
    out.write_text("earlier\n")
    extra = ["--relevance", out, "--force"] if args[0] == "click-models" else []
    err = refused([args[0], log, *args[1:], "--memory-limit", "8MB", *extra], capsys, "TMPDIR")
    # where DuckDB notices first (a spill it cannot write, or memory it cannot free by spilling) varies with timing
    assert err.startswith(("error: TMPDIR: the disk of the temporary folder filled", "error: --memory-limit:")), err
    assert os.listdir(spill_capped) == []                   # every spill folder removed
    assert out.read_text() == "earlier\n"                   # an earlier output untouched


@pytest.mark.parametrize("command", ["click-models", "evaluate"])
def test_a_memory_limit_duckdb_cannot_keep_names_the_flag(log, spill_capped, capsys, command):
    """Too little memory even to spill: the flag to raise, never DuckDB's exception class or 'cannot read'."""
    err = refused([command, log, "--memory-limit", "4MB"], capsys, "--memory-limit", "raise --memory-limit")
    assert "Exception" not in err and "cannot read" not in err
    assert os.listdir(spill_capped) == []


def _mount_tiny(path) -> bool:
    path.mkdir()
    try:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(path)], capture_output=True,
                              timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


@pytest.mark.parametrize("args", [["click-models", "--models", "pbm"], ["click-models", "--models", "pbm",
                                                                          "--engine", "dask"]],
                         ids=["duckdb", "dask"])
def test_a_real_full_disk_ends_in_one_message(tmp_path, args):
    """A 256 kB tmpfs as TMPDIR: the pattern files (DuckDB) and the session table (Dask's writer) no longer fit."""
    log = _varied_log(tmp_path / "log.parquet", 1, n_sessions=100000)
    tiny = tmp_path / "tiny"
    if not _mount_tiny(tiny):
        pytest.skip("this machine does not let the tests mount a tmpfs; the capped spill folder above covers DuckDB")
    try:
        env = {**os.environ, "TMPDIR": str(tiny)}
        done = subprocess.run([sys.executable, "-m", "ultr_core", args[0], str(log), *args[1:]], env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 2, done.stderr[-500:]
        err = done.stderr.strip()
        assert err.startswith("error: TMPDIR:") and len(err.splitlines()) == 1 and all(w in err for w in FULL), err
        assert "Traceback" not in err and "unexpected" not in err and "Errno" not in err
        assert os.listdir(tiny) == []
    finally:
        subprocess.run(["umount", str(tiny)], capture_output=True, timeout=20)
