"""Shared CLI checks: run ``python -m ultr_core`` in process and read what a user would see."""
from pathlib import Path

from ultr_core.__main__ import main


def cli(args, capsys):
    """(exit status, stdout, stderr) of the CLI; never a traceback."""
    rc = main([str(a) for a in args])
    out = capsys.readouterr()
    assert "Traceback" not in out.err + out.out
    return rc, out.out, out.err


def refused(args, capsys, *words):
    """The CLI refuses ``args`` with one line 'error: …' holding every word, exit status 2."""
    rc, out, err = cli(args, capsys)
    assert rc == 2 and err.startswith("error: ") and len(err.strip().splitlines()) == 1, err
    assert "unexpected" not in err and all(w in err for w in words), err
    return err


def write(tmp_path, name, text: str | bytes) -> Path:
    f = tmp_path / name
    f.write_bytes(text if isinstance(text, bytes) else text.encode())
    return f
