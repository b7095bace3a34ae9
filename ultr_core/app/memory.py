"""One memory ceiling for the shared server (issue #49): uploads wait for a slot, and memory comes back.

* :class:`MemoryGate` — the analyses of uploads (reading, reducing, the graph and its curves) take one of
  ``slots`` places at a time, first come first served; a visitor beyond them waits and is told their place.  The
  slots follow from the stated ceiling: :data:`UPLOAD_CEILING_BYTES` (``ULTR_UPLOAD_MEMORY``, default 3 GB) over
  the measured peak of one upload's path (``logs.bounds.UPLOAD_RSS_BUDGET``, 1.5 GB) — two at once by default.
* :func:`trim` — a full garbage collection, then Arrow's pool and glibc's ``malloc_trim(0)`` give freed pages
  back to the operating system (they otherwise keep them, so a process that once read a 190 MB upload stays
  gigabytes large after the tab has closed).  The server's janitor calls it with the release of the cache
  entries closed sessions owned; pool workers call it after each job.

>>> gate = MemoryGate(slots=1)
>>> with gate.hold():
...     gate.busy
1
>>> gate.busy
0
"""
from __future__ import annotations

import contextlib
import ctypes
import gc
import itertools
import logging
import os
import threading

__all__ = ["MemoryGate", "Left", "trim", "UPLOAD_CEILING_BYTES", "UPLOAD_GATE", "upload_slots", "start_janitor"]

#: what the analyses of uploads may hold together in the server beyond its baseline (bytes)
UPLOAD_CEILING_BYTES = int(float(os.environ.get("ULTR_UPLOAD_MEMORY", 3 * 2 ** 30)))


def upload_slots(ceiling: int = UPLOAD_CEILING_BYTES) -> int:
    """Uploads analysed at once within ``ceiling``: at least one.

    >>> upload_slots(3 * 2 ** 30), upload_slots(10)
    (2, 1)
    """
    from ultr_core.logs.bounds import UPLOAD_RSS_BUDGET
    return max(1, int(ceiling // UPLOAD_RSS_BUDGET))


class Left(Exception):
    """A visitor left (their tab closed) while waiting for a slot: nothing was computed."""


class MemoryGate:
    """``slots`` places, taken in order of arrival; :meth:`hold` waits for one — calling ``on_wait(ahead, busy)``
    with the visitors ahead in the queue and the analyses running, and raising :class:`Left` when ``stop()`` says
    the visitor has gone — and gives it back, then trims the process's memory."""

    def __init__(self, slots: int):
        self.slots = max(1, int(slots))
        self._cond = threading.Condition()
        self._tickets = itertools.count()
        self._waiting: list[int] = []
        self.busy = 0

    @contextlib.contextmanager
    def hold(self, on_wait=None, stop=None, poll: float = 1.0):
        with self._cond:
            ticket = next(self._tickets)
            self._waiting.append(ticket)
            while self.busy >= self.slots or self._waiting[0] != ticket:
                if stop is not None and stop():
                    self._waiting.remove(ticket)
                    self._cond.notify_all()
                    raise Left("the visitor left while waiting")
                if on_wait is not None:
                    on_wait(self._waiting.index(ticket), self.busy)
                self._cond.wait(poll)
            self._waiting.pop(0)
            self.busy += 1
        try:
            yield
        finally:
            with self._cond:
                self.busy -= 1
                self._cond.notify_all()
            trim()


#: the server's one gate for upload analyses (pages/upload.py)
UPLOAD_GATE = MemoryGate(upload_slots())


def _system_arrow_pool() -> None:
    """Arrow allocations (pandas' string columns, Parquet reads) from glibc's heap instead of mimalloc's per-thread
    heaps: the script thread that read an upload has ended by the time its tab closes, and pages freed there stayed
    with its abandoned heap (1.4 GB kept after one 190 MB upload); glibc's ``malloc_trim`` returns them."""
    try:
        import pyarrow as pa
        pa.set_memory_pool(pa.system_memory_pool())
    except Exception:                               # noqa: BLE001 — keep Arrow's default where this fails
        pass


def trim() -> None:
    """Collect garbage and hand freed memory back to the operating system: glibc's heap (``malloc_trim``) and
    Arrow's own pool (pandas' string columns live there; mimalloc keeps freed pages: 470 MB after one 190 MB upload
    here)."""
    import sys
    gc.collect()
    pa = sys.modules.get("pyarrow")
    if pa is not None:
        try:
            pa.default_memory_pool().release_unused()
        except Exception:                           # noqa: BLE001 — an older pyarrow: nothing to release
            pass
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):           # not glibc: nothing more to do
        pass


#: the janitor trims when the process has grown by this much since its last trim (freed objects of closed
#: sessions — Streamlit drops their state ``server.disconnectedSessionTTL`` seconds after the tab closes)
TRIM_GROWTH_BYTES = 256 * 2 ** 20


def start_janitor(cache, gone, *, interval: float = 10.0, sweep=None, pool=None) -> threading.Thread:
    """A daemon thread that every ``interval`` seconds drops the cache entries of sessions that have gone
    (``cache.release(gone)``) and trims the process when that freed something or the process has grown by
    :data:`TRIM_GROWTH_BYTES` since its last trim: memory a closed tab held comes back within seconds.  ``sweep()``
    (optional) first lets the web server shut down sessions that have gone (it returns how many; the next round
    trims after them); ``pool()`` (optional) returns the job pool whose finished jobs of gone visitors are dropped
    too."""
    _system_arrow_pool()

    def run():
        import time

        import psutil
        me, floor, closed = psutil.Process(), 0, 0
        while True:
            time.sleep(interval)
            try:
                if closed:                            # the sessions closed last round have been shut down since
                    trim()
                    floor = me.memory_info().rss
                closed = sweep() if sweep is not None else 0
                jobs = pool() if pool is not None else None
                freed = (jobs.forget_finished(gone) if jobs is not None else 0) + cache.release(gone)
                if freed or me.memory_info().rss - floor > TRIM_GROWTH_BYTES:
                    trim()
                    floor = me.memory_info().rss
            except Exception:                       # noqa: BLE001 — a janitor never takes the server down
                logging.getLogger("ultr_explorer").exception("memory janitor")
    t = threading.Thread(target=run, name="memory-janitor", daemon=True)
    t.start()
    return t

