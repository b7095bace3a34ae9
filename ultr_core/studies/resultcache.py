"""The on-disk cache of finished experiment cells (Compare and Heat-maps pages, ``run_grid``).

One JSON file per cell, named by a key over the **code version** and the cell's spec, so a
change to the algorithms never returns stale numbers.  Every entry carries a checksum of its
payload and is validated against a small schema when read: a truncated, corrupt or
hand-edited file is ignored (and recomputed by the caller), never trusted.  Writes are atomic
(temporary file + rename).  The folder is kept under a byte budget by evicting the least
recently used entries (``ULTR_CACHE_MAX_BYTES``, default 200 MB).

>>> import tempfile
>>> d = tempfile.mkdtemp()
>>> entry = {"metrics": {"ndcg@10": 0.5}, "observation": None, "true_observation": None,
...          "final_step": 10, "history": []}
>>> store(d, "abc", entry); load(d, "abc")["metrics"]
{'ndcg@10': 0.5}
"""
from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import tempfile
from pathlib import Path

__all__ = ["cell_key", "load", "store", "code_version", "evict"]

_DEFAULT_MAX_BYTES = 200 * 2 ** 20
_SOURCES = ("algorithms", "simulation", "data", "evaluation/metrics.py", "studies/experiment.py",
            "logs/clicklog.py")


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """A digest of the package version and of the sources that decide a cell's numbers."""
    from ultr_core import __version__
    root = Path(__file__).resolve().parents[1]          # ultr_core/
    h = hashlib.sha256(__version__.encode())
    for name in _SOURCES:
        p = root / name
        files = sorted(p.rglob("*.py")) if p.is_dir() else [p]
        for f in files:
            if f.is_file():
                h.update(f.name.encode())
                h.update(f.read_bytes())
    return h.hexdigest()[:16]


def cell_key(spec_json: str) -> str:
    """File key of a cell: code version + the spec's canonical JSON."""
    return hashlib.sha256((code_version() + "\n" + spec_json).encode()).hexdigest()[:32]


def _checksum(payload: dict) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=float).encode()).hexdigest()


def _finite_list(v) -> bool:
    return v is None or (isinstance(v, list) and all(isinstance(x, (int, float)) and math.isfinite(x) for x in v))


def _valid(entry) -> bool:
    if not isinstance(entry, dict) or set(entry) != {"payload", "checksum"}:
        return False
    p = entry["payload"]
    if not isinstance(p, dict) or entry["checksum"] != _checksum(p):
        return False
    m = p.get("metrics")
    return (isinstance(m, dict) and all(isinstance(k, str) and isinstance(v, (int, float)) and
                                       (math.isfinite(v) or math.isnan(v)) for k, v in m.items())
            and _finite_list(p.get("observation")) and _finite_list(p.get("true_observation"))
            and isinstance(p.get("final_step"), int) and isinstance(p.get("history"), list))


def load(cache_dir, key: str) -> dict | None:
    """The cached payload, or None when absent, unreadable or invalid (the caller recomputes)."""
    path = Path(cache_dir) / f"{key}.json"
    try:
        entry = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not _valid(entry):
        return None
    try:
        os.utime(path)                       # recently used: kept longest by eviction
    except OSError:
        pass
    return entry["payload"]


def store(cache_dir, key: str, payload: dict, max_bytes: int | None = None) -> None:
    """Write ``payload`` atomically, then evict the least recently used entries over budget."""
    folder = Path(cache_dir)
    folder.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"payload": payload, "checksum": _checksum(payload)}, default=float)
    fd, tmp = tempfile.mkstemp(prefix=f".{key}.", suffix=".part", dir=folder)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, folder / f"{key}.json")
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    evict(folder, max_bytes)


def evict(cache_dir, max_bytes: int | None = None) -> int:
    """Delete least recently used entries until the folder holds at most ``max_bytes``;
    returns how many were deleted."""
    if max_bytes is None:
        max_bytes = int(os.environ.get("ULTR_CACHE_MAX_BYTES", _DEFAULT_MAX_BYTES))
    files = []
    for p in Path(cache_dir).glob("*.json"):
        try:
            st = p.stat()
        except OSError:
            continue
        files.append((st.st_mtime, st.st_size, p))
    total = sum(s for _, s, _ in files)
    deleted = 0
    for _, size, p in sorted(files):
        if total <= max_bytes:
            break
        try:
            p.unlink()
            total -= size
            deleted += 1
        except OSError:
            pass
    return deleted
