"""The on-disk cache of finished experiment cells (Compare and Heat-maps pages, ``run_grid``).

One JSON file per cell, named by a key over the **code version** and the cell's spec, so a
change to the algorithms never returns stale numbers.  Every entry carries a **keyed** checksum
(HMAC-SHA256 with a per-install secret kept outside the cache folder, :func:`_secret`) and is
re-validated against its schema when read — known keys only, finite numbers (a NaN is stored as
null), a history of step records — from a regular file (no link, FIFO or device) of bounded size,
parsed with nesting too deep refused: a truncated, corrupt, hand-edited or forged file is ignored
(and recomputed by the caller), never trusted (issue #50).  Writes are atomic
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


_KEYS = {"metrics", "observation", "true_observation", "final_step", "history"}
_MAX_ENTRY_BYTES = 8 * 2 ** 20          # a cell's entry is a few KB; anything far larger is not ours
_MAX_DEPTH = 8                          # entry → payload → history → record: never deeper


@functools.lru_cache(maxsize=1)
def _secret() -> bytes:
    """The per-install key of the checksums: ``ULTR_CACHE_SECRET``, else a random key created once in
    ``~/.config/ultr_explorer/cache.key`` (mode 0600, outside any cache folder); where that cannot be written, a
    key for this process only (entries of other processes are then recomputed, never trusted)."""
    env = os.environ.get("ULTR_CACHE_SECRET")
    if env:
        return env.encode()
    path = Path.home() / ".config" / "ultr_explorer" / "cache.key"
    try:
        if not path.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(os.urandom(32).hex().encode())
        key = path.read_bytes().strip()
        if len(key) >= 32:
            return key
    except OSError:
        pass
    return os.urandom(32)


def _checksum(key: str, payload: dict) -> str:
    """HMAC over the entry's key, the code version and the payload: a signed entry copied under another key, or
    left from another code version, does not validate (issue #61)."""
    import hmac
    text = json.dumps(payload, sort_keys=True, default=float, allow_nan=False)
    return hmac.new(_secret(), f"{key}\n{code_version()}\n{text}".encode(), hashlib.sha256).hexdigest()


def _number(v) -> bool:
    return v is None or (isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v))


def _finite_list(v) -> bool:
    return v is None or (isinstance(v, list) and all(_number(x) and x is not None for x in v))


def _record(h) -> bool:
    return (isinstance(h, dict) and isinstance(h.get("step"), int) and len(h) <= 64
            and all(isinstance(k, str) and (_number(v) or isinstance(v, bool)) for k, v in h.items()))


def _valid(entry, key: str) -> bool:
    import hmac
    if not isinstance(entry, dict) or set(entry) != {"payload", "checksum"}:
        return False
    p = entry["payload"]
    if not isinstance(p, dict) or set(p) != _KEYS or not isinstance(entry["checksum"], str):
        return False
    m = p["metrics"]
    return (isinstance(m, dict) and all(isinstance(k, str) and _number(v) for k, v in m.items())
            and _finite_list(p["observation"]) and _finite_list(p["true_observation"])
            and isinstance(p["final_step"], int) and isinstance(p["history"], list)
            and all(_record(h) for h in p["history"])
            and hmac.compare_digest(entry["checksum"], _checksum(key, p)))


def _depth(text: str) -> int:
    """The deepest nesting of brackets in a JSON text (strings included: an over-estimate, never an under-one)."""
    import numpy as np
    b = np.frombuffer(text.encode(), np.uint8)
    step = np.isin(b, (ord("["), ord("{"))).astype(np.int32) - np.isin(b, (ord("]"), ord("}"))).astype(np.int32)
    return int(np.cumsum(step).max(initial=0))


def _read_regular(path: Path) -> str | None:
    """The text of ``path`` when it is a regular file (not a link, FIFO or device) of at most
    :data:`_MAX_ENTRY_BYTES`; opened without blocking and without following links."""
    import stat
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_size > _MAX_ENTRY_BYTES:
            return None
        raw = f.read(_MAX_ENTRY_BYTES + 1)
    try:
        return raw.decode()
    except UnicodeDecodeError:
        return None


def _plain(v):
    """NaN and ±Infinity as None (JSON null) in a payload to store; loaded back as NaN by :func:`load`."""
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return None if isinstance(v, float) and not math.isfinite(v) else v


def load(cache_dir, key: str) -> dict | None:
    """The cached payload, or None when absent, unreadable or invalid (the caller recomputes)."""
    path = Path(cache_dir) / f"{key}.json"
    text = _read_regular(path)
    if text is None or _depth(text) > _MAX_DEPTH:
        return None
    try:
        entry = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not _valid(entry, key):
        return None
    try:
        os.utime(path)                       # recently used: kept longest by eviction
    except OSError:
        pass
    p = entry["payload"]
    p["metrics"] = {k: float("nan") if v is None else v for k, v in p["metrics"].items()}
    return p


def store(cache_dir, key: str, payload: dict, *, max_bytes: int | None = None) -> None:
    """Write ``payload`` atomically, then evict the least recently used entries over budget."""
    folder = Path(cache_dir)
    folder.mkdir(parents=True, exist_ok=True)
    payload = _plain(json.loads(json.dumps(payload, default=float)))
    if set(payload) != _KEYS:
        raise ValueError(f"a cache entry holds exactly {sorted(_KEYS)}")
    text = json.dumps({"payload": payload, "checksum": _checksum(key, payload)}, allow_nan=False)
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
