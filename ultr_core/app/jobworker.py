"""The worker-process side of :class:`~.jobpool.JobPool`: the loop each process runs (one torch
thread, jobs from an input queue, records and results to an output queue, a shared stop flag) and
the spawn helper that keeps a script's ``__main__`` out of the children.
"""
from __future__ import annotations

import contextlib
import logging
import os
import queue
import sys
import threading
import traceback
import types

LOG = logging.getLogger("ultr_explorer.jobpool")

#: the thread-count variables of OpenMP and the BLAS libraries, read when torch or numpy's BLAS first loads
THREAD_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")



def _square(x, report=None, stop=None):
    """A tiny job for the doctest."""
    report({"x": x})
    return x * x


class _Flag:
    """``stop`` inside a worker: a ``threading.Event``-like view of a shared byte."""

    def __init__(self, value):
        self._value = value

    def is_set(self) -> bool:
        return bool(self._value.value)


#: seconds between two checks that the server is still alive (issue #49: workers outlived a killed server by 49–110 s)
PARENT_CHECK_SECONDS = 1.0


def _watch_parent(parent: int) -> None:
    """A daemon thread that ends this worker at once when its server is gone (re-parented: ``kill -9`` of the
    server leaves no one to stop it), even in the middle of a job."""
    def watch():
        import time
        while True:
            time.sleep(PARENT_CHECK_SECONDS)
            if os.getppid() != parent:
                os._exit(0)
    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _worker_main(inq, outq, flag, initializer, parent: int | None = None):      # runs in the worker process
    nice = int(os.environ.get("ULTR_WORKER_NICE", "5"))
    if nice > 0 and hasattr(os, "nice"):                   # batch work yields to the server answering pages
        os.nice(nice)
    for var in THREAD_ENV:
        os.environ[var] = "1"          # one thread per worker, read when a job first imports torch or BLAS:
    if "torch" in sys.modules:         # a worker that runs no training never pays torch's import (≈ 1 s)
        sys.modules["torch"].set_num_threads(1)
    # the server's pid, passed by the server itself: read here, a server already gone (a short-lived process, or one
    # killed while this worker started) would make the worker's new parent (pid 1) "the server" and the watch would
    # never fire (issue #61 item 9)
    parent = os.getppid() if parent is None else int(parent)
    if os.getppid() != parent:
        return
    _watch_parent(parent)
    if initializer is not None:
        try:
            initializer()
        except Exception:                                   # noqa: BLE001 — warming is optional
            LOG.exception("worker initializer failed")
    while True:
        try:
            task = inq.get(timeout=2.0)
        except queue.Empty:
            if os.getppid() != parent:                      # the server is gone: do not linger
                return
            continue
        if task is None:
            return
        job_id, fn, args, kwargs = task

        def report(record, _id=job_id):
            outq.put(("rec", _id, record))
        try:
            result = fn(*args, report=report, stop=_Flag(flag), **kwargs)
            outq.put(("done", job_id, result, None, None))
        except Exception as e:                              # noqa: BLE001 — reported to the job
            outq.put(("done", job_id, None, job_message(e), traceback.format_exc()))
        task = fn = args = kwargs = result = None           # the job's inputs too (an upload's frame)
        from ultr_core.app.memory import trim  # what the job held goes back to the system
        trim()


def job_message(e: Exception) -> str:
    """What a page shows of a job's failure: an input problem in its own words, anything else without a class name
    or a path (the traceback goes to the server log as the job's ``error_detail``)."""
    from ultr_core.errors import ConfigError, DataFormatError
    if isinstance(e, (ConfigError, DataFormatError)):
        return str(e)
    if isinstance(e, MemoryError):
        return "it needs more memory than the server has — use fewer sessions or a smaller log"
    return "an unexpected error stopped it (the server log has the details)"


_spawn_lock = threading.Lock()


@contextlib.contextmanager
def _plain_main():
    """While a worker is spawned, hide a ``__main__`` that is a script (Streamlit runs each page as
    ``__main__``): spawn would re-run it in the child.  The workers need nothing from it."""
    with _spawn_lock:
        real = sys.modules.get("__main__")
        hide = real is not None and getattr(real, "__spec__", None) is None and getattr(real, "__file__", None)
        if hide:
            sys.modules["__main__"] = types.ModuleType("__main__")
        stub = sys.modules.get("__main__")
        try:
            yield
        finally:
            if hide and sys.modules.get("__main__") is stub:
                sys.modules["__main__"] = real


class _Worker:
    def __init__(self, ctx, outq, initializer):
        self.flag = ctx.Value("b", 0, lock=False)
        self.inq = ctx.Queue()
        self.proc = ctx.Process(target=_worker_main, args=(self.inq, outq, self.flag, initializer, os.getpid()),
                                daemon=True, name="ultr-worker")
        with _plain_main():
            self.proc.start()
        self.job = None                           # the PoolJob it runs
