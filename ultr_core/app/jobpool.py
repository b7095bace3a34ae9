"""One server-wide pool of worker processes for the app's long computations (trainings, grids,
sweeps): bounded, queued, shared and stopped when nobody is watching.

* **Bounded**: at most ``workers`` jobs run at once (default: the machine's cores), each in its
  own process with one torch thread — no oversubscription and no contention for the server's GIL;
  further jobs wait in one queue and know their position.
* **Fair**: a free worker takes the waiting job of the session with the fewest jobs running —
  first come, first served within a session and between equals — so a visitor who queued twenty
  runs (a preset over five seeds) does not hold back one who queued three.
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

import atexit
import collections
import logging
import multiprocessing as mp
import os
import queue
import threading
import time
import weakref

from ultr_core.app.jobhandles import JobGroup, JobLimitError, PoolJob
from ultr_core.app.jobworker import _square, _Worker  # noqa: F401  (_square: the doctest's job)
from ultr_core.app.lrucache import approx_nbytes

__all__ = ["JobPool", "PoolJob", "JobGroup", "JobLimitError"]


LOG = logging.getLogger("ultr_explorer.jobpool")
#: a finished job keeps its inputs when they are this small (a log spec, settings); an upload's frame is dropped
ARGS_KEPT_BYTES = 1 * 2 ** 20


def _closed_at_exit(ref) -> None:
    """At interpreter exit multiprocessing terminates the daemonic workers; a pool never shut down must not
    take them for crashed ones and spawn replacements (which then fail to attach to the closing queue: the
    SemLock FileNotFoundError seen at the end of a CI run).  Registered after multiprocessing's hook, so run
    before it."""
    pool = ref()
    if pool is not None:
        pool._closed.set()


class JobPool:
    """See the module docstring.  ``alive(session) -> bool | None`` tells whether a session is
    still connected (None: unknown — such subscribers are never reaped)."""

    def __init__(self, workers: int | None = None, per_session: int = 48, idle_s: float = 5.0,
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
        self._order: list | None = None                     # pending jobs in start order (None: stale)
        self._closed = threading.Event()
        self._watchers: dict = {}                           # session → time of its last touch
        self._pool = [_Worker(self._ctx, self._outq, initializer) for _ in range(self.workers)]
        atexit.register(_closed_at_exit, weakref.ref(self))      # runs before multiprocessing's own exit hook
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
                self._order = None
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
            self._order = None
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
            self._order = None
            for j in getattr(job, "jobs", [job]):
                j.subscribers.pop(session, None)
                if j.running and not j.subscribers:
                    self._cancel(j)

    def position(self, job: PoolJob) -> int:
        """1 for the job the next free worker takes, 2 after it, … (the fair order); 0 when not waiting."""
        with self._lock:
            try:
                return self._start_order().index(job) + 1
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

    def stop_all(self) -> int:
        """Stop every unfinished job (a queued one is dropped) and return how many there were — for
        an operator, and for tests whose sessions share one process's pool (AppTest's sessions are
        never reported gone, so nothing would reap what a finished test left running)."""
        with self._lock:
            jobs = list(self._by_id.values())
            for job in jobs:
                self._cancel(job)
        return len(jobs)

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

    def _start_order(self) -> list:
        """The waiting jobs in the order free workers will take them: each next one belongs to the
        session with the fewest jobs running or placed before it (a shared job counts for each of
        its sessions and goes by the least served of them); ties keep the order of arrival."""
        if self._order is None:
            load = collections.Counter(s for w in self._pool if w.job is not None for s in w.job.subscribers)
            rest, order = list(self._pending), []
            while rest:
                i = min(range(len(rest)), key=lambda n: (min((load[s] for s in rest[n].subscribers), default=0), n))
                job = rest.pop(i)
                order.append(job)
                load.update(job.subscribers.keys())
            self._order = order
        return self._order

    def _dispatch(self) -> None:
        for w in self._pool:
            if not self._pending:
                return
            if w.job is None and w.proc.is_alive():
                job = self._start_order()[0]
                self._pending.remove(job)
                self._order = None
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
                self._order = None
                self._finish(job, None, None, None)
                return
            for w in self._pool:
                if w.job is job:
                    w.flag.value = 1

    def _finish(self, job: PoolJob, result, error, detail) -> None:
        self._order = None
        job.result, job.error, job.error_detail = result, error, detail
        job.finished_at = time.time()
        if approx_nbytes(job._args) + approx_nbytes(job._kwargs) > ARGS_KEPT_BYTES:   # an upload's frame: a
            job._args, job._kwargs = (), {}                  # finished job needs its result only (issue #49)
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

    def forget_finished(self, gone) -> int:
        """Forget the finished jobs kept for sharing whose every visitor has gone (``gone(session)`` true): their
        results (an upload's click-model comparison) are no one else's.  Jobs of no visitor (the warm start) stay.
        Returns how many were forgotten."""
        with self._lock:
            dead = [k for k, j in self._by_key.items() if not j.running and j.subscribers
                    and all(s is not None and gone(s) for s in j.subscribers)]
            for k in dead:
                del self._by_key[k]
                self._done_keys.pop(k, None)
            return len(dead)

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
                if self._closed.is_set():   # shut down while this thread waited for the lock: its workers
                    return                  # are exiting on purpose — replacing them would spawn orphans
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
