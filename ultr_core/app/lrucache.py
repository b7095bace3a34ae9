"""A thread-safe least-recently-used cache with a byte budget (used by the app's pages).

Entries are keyed by what determines them (a content digest or a reproducible spec), so
sharing one cache between sessions reveals nothing a session could not compute itself, and the
budget bounds the memory all sessions together can pin.  Sizes are estimated with
:func:`approx_nbytes` (numpy buffers, pandas frames, the library's result types).

>>> c = ByteLRU(max_bytes=1000)
>>> c.get_or_compute("a", lambda: b"x" * 600)[:3], c.get_or_compute("b", lambda: b"y" * 600)[:3]
(b'xxx', b'yyy')
>>> list(c.keys())            # "a" was evicted to keep the budget
['b']
"""
from __future__ import annotations

import sys
import threading
from collections import OrderedDict

import numpy as np

__all__ = ["ByteLRU", "approx_nbytes", "log_digest"]


def approx_nbytes(obj, _depth: int = 0) -> int:
    """Rough memory of ``obj``: numpy arrays and pandas frames exactly (shallow for object
    columns), containers and dataclass-like objects recursively (depth-limited)."""
    if _depth > 6 or obj is None:
        return 0
    if isinstance(obj, np.ndarray):
        return int(obj.nbytes)
    if isinstance(obj, (bytes, bytearray, str)):
        return len(obj)
    try:
        import pandas as pd
        if isinstance(obj, (pd.DataFrame, pd.Series, pd.Index)):
            usage = obj.memory_usage(index=True, deep=False)
            return int(usage.sum() if hasattr(usage, "sum") else usage)
    except ImportError:                       # pragma: no cover
        pass
    if isinstance(obj, dict):
        return sum(approx_nbytes(k, _depth + 1) + approx_nbytes(v, _depth + 1) for k, v in obj.items())
    if isinstance(obj, (list, tuple, set, frozenset)):
        return sum(approx_nbytes(v, _depth + 1) for v in obj) + sys.getsizeof(obj)
    if hasattr(obj, "__dict__"):
        return sum(approx_nbytes(v, _depth + 1) for v in vars(obj).values())
    return sys.getsizeof(obj)


class ByteLRU:
    """LRU cache evicting the least recently used entries beyond ``max_bytes``.  An entry
    larger than the budget is returned but not kept."""

    def __init__(self, max_bytes: int):
        self.max_bytes = int(max_bytes)
        self._items: OrderedDict = OrderedDict()
        self._sizes: dict = {}
        self._lock = threading.RLock()
        self._key_locks: dict = {}
        self._owners: dict = {}              # key -> the sessions that asked for it (entries of one visitor's data)

    @property
    def nbytes(self) -> int:
        with self._lock:
            return sum(self._sizes.values())

    def keys(self):
        with self._lock:
            return list(self._items)

    def get(self, key, default=None):
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
            return default

    def put(self, key, value, nbytes: int | None = None) -> None:
        size = approx_nbytes(value) if nbytes is None else int(nbytes)
        with self._lock:
            if key in self._items:
                del self._items[key], self._sizes[key]
            if size > self.max_bytes:
                return
            self._items[key] = value
            self._sizes[key] = size
            while sum(self._sizes.values()) > self.max_bytes:
                old, _ = self._items.popitem(last=False)
                del self._sizes[old]

    def get_or_compute(self, key, compute, owner=None):
        """The cached value of ``key``, computing it once (concurrent callers of the same key wait).  With
        ``owner`` (a session) the entry is that visitor's: :meth:`release` drops it once every owner has gone."""
        if owner is not None:
            with self._lock:
                self._owners.setdefault(key, set()).add(owner)
        hit = self.get(key, _MISSING)
        if hit is not _MISSING:
            return hit
        with self._lock:
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:
            hit = self.get(key, _MISSING)
            if hit is not _MISSING:
                return hit
            value = compute()
            self.put(key, value)
        with self._lock:
            self._key_locks.pop(key, None)
        return value

    def release(self, gone) -> int:
        """Drop the entries whose owners have all gone (``gone(owner)`` true): what closed tabs held comes back
        (issue #49).  Entries without an owner (simulated logs any visitor may share) stay.  Returns bytes freed.

        >>> c = ByteLRU(10_000)
        >>> _ = c.get_or_compute("upload", lambda: b"x" * 100, owner="tab1"); _ = c.get_or_compute("spec", lambda: b"y")
        >>> c.release(lambda owner: owner == "tab1"), c.keys()
        (100, ['spec'])
        """
        with self._lock:
            dead = [k for k, owners in self._owners.items() if owners and all(gone(o) for o in owners)]
            freed = 0
            for k in dead:
                del self._owners[k]
                if k in self._items:
                    del self._items[k]
                    freed += self._sizes.pop(k)
            return freed

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._sizes.clear()
            self._owners.clear()


_MISSING = object()


def log_digest(log) -> tuple:
    """A content key of a click log (for caches): a digest of its rows."""
    import hashlib

    import pandas as pd
    h = hashlib.sha256(pd.util.hash_pandas_object(log.frame, index=False).to_numpy().tobytes()).hexdigest()
    return ("log", h[:32])
