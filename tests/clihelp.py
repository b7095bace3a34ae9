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


def same_report(a, b, tol: float = 1e-9) -> bool:
    """Two JSON reports hold the same keys, texts and numbers (to ``tol``: sums taken in another order)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(same_report(a[k], b[k], tol) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_report(x, y, tol) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and abs(a - b) <= tol * max(1, abs(a))
    return a == b
