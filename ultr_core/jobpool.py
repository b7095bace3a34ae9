"""One server-wide pool of worker processes for the app's long computations (trainings, grids,
sweeps): bounded, queued, shared and stopped when nobody is watching.

* **Bounded**: at most ``workers`` jobs run at once (default: the machine's cores), each in its
  own process with one torch thread — no oversubscription and no contention for the server's GIL;
  further jobs wait in one first-in-first-out queue and know their position.
* **Shared**: a job submitted under a ``key`` already queued, running or finished successfully is
  not run again — the caller subscribes to the same job and sees the same records and result.
  The last ``keep_done`` finished jobs are kept for that.
* **Capped per session**: one session may hold at most ``per_session`` unfinished jobs.
* **Stopped when nobody watches**: a job's subscribers ``touch`` it while they poll; when every
  subscriber has been silent for ``idle_s`` seconds and ``alive(session)`` says its session is
  gone, the job is stopped (a queued one is dropped).  ``alive`` is also asked on every submit and
  touch, while the session is surely there, so a predicate that must see a session before it can
  call it gone learns it then.  A worker that ignores a stop for
  ``hard_stop_s`` seconds is terminated and replaced.

The job function is called in the worker as ``fn(*args, report=…, stop=…, **kwargs)`` —
``report(record)`` appends a progress record, ``stop.is_set()`` asks whether to end early — and
must be picklable (a module-level function) with picklable arguments and result.  Nothing here knows about Streamlit.

>>> pool = JobPool(workers=1)
>>> job = pool.submit(("doc", 2), _square, 7)
>>> job.join(60), job.status, job.result, job.records
(True, 'done', 49, [{'x': 7}])
>>> pool.submit(("doc", 2), _square, 7) is job          # identical key: shared, not re-run
True
>>> pool.shutdown()
"""
from __future__ import annotations

import collections
import contextlib
import itertools
import logging
import multiprocessing as mp
import os
import queue
import sys
import threading
import time
import traceback
import types

__all__ = ["JobPool", "PoolJob", "JobGroup", "JobLimitError"]

LOG = logging.getLogger("ultr_explorer.jobpool")


class JobLimitError(RuntimeError):
    """A session asked for more concurrent jobs than the pool allows it."""


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


def _worker_main(inq, outq, flag, initializer):          # runs in the worker process
    try:
        import torch
        torch.set_num_threads(1)
    except ImportError:                                     # pragma: no cover — torch is a dependency
        pass
    parent = os.getppid()
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
            outq.put(("done", job_id, None, f"{type(e).__name__}: {e}", traceback.format_exc()))


class PoolJob:
    """A handle on one pooled job: its progress ``records``, ``status``, ``result`` or ``error``,
    :attr:`position` (place in the queue) and :attr:`subscribers` (sessions that want it)."""

    _ids = itertools.count(1)

    def __init__(self, pool: "JobPool", key, fn, args, kwargs):
        self.id = next(self._ids)
        self.key = key
        self._pool = pool
        self._fn, self._args, self._kwargs = fn, args, kwargs
        self._records: list = []
        self._lock = threading.Lock()
        self._done = threading.Event()
        self.stop_event = threading.Event()
        self.result = None
        self.error: str | None = None
        self.error_detail: str | None = None
        self.submitted_at = time.time()
        self.started_at: float | None = None
        self.finished_at: float | None = None
        self.stop_requested_at: float | None = None
        self.subscribers: dict = {}                         # session id → time of its last touch

    # -- what a page reads -------------------------------------------------------------------
    @property
    def records(self) -> list:
        with self._lock:
            return list(self._records)

    @property
    def running(self) -> bool:
        """Queued or running (a page keeps polling)."""
        return not self._done.is_set()

    @property
    def queued(self) -> bool:
        return self.started_at is None and not self._done.is_set()

    @property
    def status(self) -> str:
        if self.queued:
            return "queued"
        if self.running:
            return "stopping" if self.stop_event.is_set() else "running"
        if self.error:
            return "failed"
        return "stopped" if self.stop_event.is_set() else "done"

    @property
    def position(self) -> int:
        """1 for the next job to start, 2 after it, …; 0 when it is running or finished."""
        return self._pool.position(self)

    @property
    def elapsed(self) -> float:
        """Seconds since it started running (0 while queued)."""
        if self.started_at is None:
            return 0.0
        return (self.finished_at or time.time()) - self.started_at

    @property
    def waited(self) -> float:
        """Seconds it spent (or has spent so far) in the queue."""
        return (self.started_at or self.finished_at or time.time()) - self.submitted_at

    def stop(self) -> None:
        """Stop it for every subscriber (a page's Stop button uses :meth:`JobPool.release`)."""
        self._pool._cancel(self)

    def join(self, timeout: float | None = None) -> bool:
        return self._done.wait(timeout)

    def __repr__(self) -> str:
        return f"PoolJob(id={self.id}, status={self.status!r}, key={self.key!r})"


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


class JobGroup:
    """Several pooled jobs read as one (a request whose parts run side by side): records in job
    order, results merged (``dict`` results), running while any part runs, queued while none has
    started, the first error.

    >>> pool = JobPool(workers=2)
    >>> g = pool.submit_many([(("a",), _square, (2,), {}), (("b",), _square, (3,), {})])
    >>> g.join(60), g.status, g.records, [j.result for j in g.jobs]
    (True, 'done', [{'x': 2}, {'x': 3}], [4, 9])
    >>> pool.shutdown()
    """

    def __init__(self, jobs: list):
        self.jobs = list(jobs)

    @property
    def records(self) -> list:
        return [r for j in self.jobs for r in j.records]

    @property
    def result(self):
        parts = [j.result for j in self.jobs if j.result is not None]
        if parts and all(isinstance(p, dict) for p in parts):
            return {k: v for p in parts for k, v in p.items()}
        return parts or None

    @property
    def running(self) -> bool:
        return any(j.running for j in self.jobs)

    @property
    def queued(self) -> bool:
        return all(j.queued for j in self.jobs)

    @property
    def error(self):
        return next((j.error for j in self.jobs if j.error), None)

    @property
    def status(self) -> str:
        states = {j.status for j in self.jobs}
        if "failed" in states:
            return "failed"
        if states == {"queued"}:
            return "queued"
        if self.running:
            return "stopping" if "stopping" in states else "running"
        return "stopped" if "stopped" in states else "done"

    @property
    def position(self) -> int:
        return min((j.position for j in self.jobs if j.position), default=0)

    @property
    def waited(self) -> float:
        return max(j.waited for j in self.jobs) if self.queued else min(j.waited for j in self.jobs)

    @property
    def elapsed(self) -> float:
        started = [j.started_at for j in self.jobs if j.started_at is not None]
        if not started:
            return 0.0
        end = time.time() if self.running else max(j.finished_at or 0 for j in self.jobs)
        return end - min(started)

    def stop(self) -> None:
        for j in self.jobs:
            j.stop()

    def join(self, timeout: float | None = None) -> bool:
        end = None if timeout is None else time.time() + timeout
        return all(j.join(None if end is None else max(0.0, end - time.time())) for j in self.jobs)


class _Worker:
    def __init__(self, ctx, outq, initializer):
        self.flag = ctx.Value("b", 0, lock=False)
        self.inq = ctx.Queue()
        self.proc = ctx.Process(target=_worker_main, args=(self.inq, outq, self.flag, initializer), daemon=True,
                                name="ultr-worker")
        with _plain_main():
            self.proc.start()
        self.job: PoolJob | None = None


class JobPool:
    """See the module docstring.  ``alive(session) -> bool | None`` tells whether a session is
    still connected (None: unknown — such subscribers are never reaped)."""

    def __init__(self, workers: int | None = None, per_session: int = 8, idle_s: float = 5.0,
                 hard_stop_s: float = 8.0, keep_done: int = 64, alive=None, initializer=None):
        self.workers = int(workers or os.cpu_count() or 1)
        if self.workers < 1 or per_session < 1:
            raise ValueError("workers and per_session must be at least 1")
        self.per_session, self.idle_s, self.hard_stop_s = per_session, idle_s, hard_stop_s
        self.keep_done = keep_done
        self._alive = alive or (lambda session: None)
        self._ctx = mp.get_context("spawn")
        self._outq = self._ctx.Queue()
        self._initializer = initializer
        self._lock = threading.RLock()
        self._pending: collections.deque = collections.deque()
        self._by_id: dict = {}                              # unfinished jobs
        self._by_key: dict = {}                             # key → unfinished or kept finished job
        self._done_keys: collections.OrderedDict = collections.OrderedDict()
        self._closed = threading.Event()
        self._watchers: dict = {}                           # session → time of its last touch
        self._pool = [_Worker(self._ctx, self._outq, initializer) for _ in range(self.workers)]
        threading.Thread(target=self._collect, daemon=True, name="ultr-pool-collect").start()
        threading.Thread(target=self._reap, daemon=True, name="ultr-pool-reap").start()

    # -- the API ----------------------------------------------------------------------------
    def submit(self, key, fn, *args, session=None, **kwargs) -> PoolJob:
        """Queue ``fn(*args, **kwargs)`` (or join the identical job under ``key``; ``key=None``
        never shares) for ``session``.  Raises :class:`JobLimitError` when the session already
        holds ``per_session`` unfinished jobs."""
        self._alive(session)
        with self._lock:
            job = self._by_key.get(key) if key is not None else None
            if job is not None and not (job.stop_event.is_set() or job.error):
                if job.running and session not in job.subscribers:
                    self._check_cap(session)
                job.subscribers[session] = time.time()
                if not job.running:
                    self._done_keys.move_to_end(key)
                return job
            self._check_cap(session)
            job = PoolJob(self, key, fn, args, kwargs)
            job.subscribers[session] = time.time()
            self._by_id[job.id] = job
            if key is not None:
                self._by_key[key] = job
            self._pending.append(job)
            self._dispatch()
            return job

    def submit_many(self, items, session=None) -> JobGroup:
        """:meth:`submit` each ``(key, fn, args, kwargs)`` of ``items`` (all or none: the parts
        already queued are released when one hits the session's cap) as one :class:`JobGroup`."""
        jobs: list = []
        with self._lock:
            try:
                for key, fn, args, kwargs in items:
                    jobs.append(self.submit(key, fn, *args, session=session, **kwargs))
            except JobLimitError:
                for j in jobs:
                    self.release(j, session)
                raise
        return JobGroup(jobs)

    def touch(self, job, session=None) -> None:
        """``session`` is still watching ``job`` (a :class:`PoolJob` or :class:`JobGroup`)."""
        now = time.time()
        self._alive(session)
        with self._lock:
            self._watchers[session] = now
            for j in getattr(job, "jobs", [job]):
                if session in j.subscribers:
                    j.subscribers[session] = now

    def release(self, job, session=None) -> None:
        """``session`` no longer wants ``job`` (or a group's jobs); each is stopped when nobody
        else wants it."""
        with self._lock:
            for j in getattr(job, "jobs", [job]):
                j.subscribers.pop(session, None)
                if j.running and not j.subscribers:
                    self._cancel(j)

    def position(self, job: PoolJob) -> int:
        with self._lock:
            try:
                return self._pending.index(job) + 1
            except ValueError:
                return 0

    def stats(self) -> dict:
        """Running and queued jobs, workers, kept results and ``watchers`` — sessions that polled
        a job in the last 3 s (pages slow their polling when many watch)."""
        now = time.time()
        with self._lock:
            for s, t in list(self._watchers.items()):
                if now - t > 3.0:
                    del self._watchers[s]
            return {"workers": self.workers, "running": sum(w.job is not None for w in self._pool),
                    "queued": len(self._pending), "kept": len(self._done_keys), "watchers": len(self._watchers)}

    def shutdown(self) -> None:
        self._closed.set()
        with self._lock:
            for job in list(self._by_id.values()):
                self._cancel(job)
            for w in self._pool:
                w.inq.put(None)
        for w in self._pool:
            w.proc.join(5)
            if w.proc.is_alive():
                w.proc.terminate()

    # -- internals --------------------------------------------------------------------------
    def _check_cap(self, session) -> None:
        if session is None:
            return
        mine = sum(1 for j in self._by_id.values() if session in j.subscribers and not j.stop_event.is_set())
        if mine >= self.per_session:
            raise JobLimitError(f"you already have {mine} jobs queued or running (the limit is {self.per_session} "
                                "per visitor): stop one or wait for it to finish")

    def _dispatch(self) -> None:
        for w in self._pool:
            if not self._pending:
                return
            if w.job is None and w.proc.is_alive():
                job = self._pending.popleft()
                w.flag.value = 0
                w.job = job
                job.started_at = time.time()
                w.inq.put((job.id, job._fn, job._args, job._kwargs))

    def _cancel(self, job: PoolJob) -> None:
        with self._lock:
            if not job.running:
                return
            if not job.stop_event.is_set():
                job.stop_event.set()
                job.stop_requested_at = time.time()
            if self._by_key.get(job.key) is job:
                del self._by_key[job.key]
            if job in self._pending:
                self._pending.remove(job)
                self._finish(job, None, None, None)
                return
            for w in self._pool:
                if w.job is job:
                    w.flag.value = 1

    def _finish(self, job: PoolJob, result, error, detail) -> None:
        job.result, job.error, job.error_detail = result, error, detail
        job.finished_at = time.time()
        self._by_id.pop(job.id, None)
        if job.key is not None and self._by_key.get(job.key) is job:
            if error or job.stop_event.is_set():
                del self._by_key[job.key]
            else:
                self._done_keys[job.key] = True
                while len(self._done_keys) > self.keep_done:
                    old, _ = self._done_keys.popitem(last=False)
                    self._by_key.pop(old, None)
        if detail:
            LOG.error("pooled job %s failed: %s", job.id, detail)
        job._done.set()

    def _collect(self) -> None:
        while not self._closed.is_set():
            try:
                msg = self._outq.get(timeout=0.5)
            except queue.Empty:
                continue
            except (EOFError, OSError):                    # pragma: no cover — interpreter shutdown
                return
            with self._lock:
                worker = next((w for w in self._pool if w.job is not None and w.job.id == msg[1]), None)
                if worker is None:
                    continue                                # a replaced worker's late message
                job = worker.job
                if msg[0] == "rec":
                    with job._lock:
                        job._records.append(msg[2])
                else:
                    worker.job = None
                    self._finish(job, *msg[2:])
                    self._dispatch()

    def _reap(self) -> None:
        while not self._closed.wait(0.5):
            now = time.time()
            with self._lock:
                for job in list(self._by_id.values()):
                    subs = job.subscribers
                    if subs and all(now - t > self.idle_s and self._alive(s) is False for s, t in subs.items()):
                        LOG.info("stopping job %s: nobody is watching it", job.id)
                        self._cancel(job)
                for i, w in enumerate(self._pool):
                    job = w.job
                    stuck = (job is not None and job.stop_requested_at is not None
                             and now - job.stop_requested_at > self.hard_stop_s)
                    if stuck or not w.proc.is_alive():
                        if w.proc.is_alive():
                            w.proc.terminate()
                        if job is not None:
                            self._finish(job, None, None if stuck else "the worker process ended unexpectedly",
                                         None)
                        self._pool[i] = _Worker(self._ctx, self._outq, self._initializer)
                self._dispatch()
