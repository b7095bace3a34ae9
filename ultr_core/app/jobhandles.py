"""What a caller of :class:`~.jobpool.JobPool` holds: a :class:`PoolJob` (status, queue position,
progress records, result; shared by every subscriber of the same key), a :class:`JobGroup` of
several jobs read as one, and :class:`JobLimitError` for a session over its cap.
"""
from __future__ import annotations

import itertools
import threading
import time
from typing import Protocol


class _Pool(Protocol):
    """What a handle needs of its pool (:class:`~ultr_core.app.jobpool.JobPool`, which imports this module)."""

    def position(self, job) -> int | None: ...

    def _cancel(self, job) -> None: ...


__all__ = ["JobLimitError", "PoolJob", "JobGroup"]


class JobLimitError(RuntimeError):
    """A session asked for more concurrent jobs than the pool allows it."""


class PoolJob:
    """A handle on one pooled job: its progress ``records``, ``status``, ``result`` or ``error``,
    :attr:`position` (place in the queue) and :attr:`subscribers` (sessions that want it)."""

    _ids = itertools.count(1)

    def __init__(self, pool: _Pool, key, fn, args, kwargs):
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

    @property
    def watchers(self) -> int:
        """How many sessions share this job (known sessions: the warm start's own run is not one)."""
        return sum(1 for s in list(self.subscribers) if s is not None)

    def stop(self) -> None:
        """Stop it for every subscriber (a page's Stop button uses :meth:`JobPool.release`)."""
        self._pool._cancel(self)

    def join(self, timeout: float | None = None) -> bool:
        return self._done.wait(timeout)

    def __repr__(self) -> str:
        return f"PoolJob(id={self.id}, status={self.status!r}, key={self.key!r})"


class JobGroup:
    """Several pooled jobs read as one (a request whose parts run side by side): records in job
    order, results merged (``dict`` results), running while any part runs, queued while none has
    started, the first error.

    >>> from ultr_core.app.jobpool import JobPool
    >>> from ultr_core.app.jobworker import _square
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
    def watchers(self) -> int:
        """Sessions sharing any of its jobs (each counted once)."""
        return len({s for j in self.jobs for s in list(j.subscribers) if s is not None})

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
