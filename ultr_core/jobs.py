"""Background jobs for the UI: run a function in a thread, collect its progress records, stop it.

The function is called as ``fn(*args, report=…, stop=…, **kwargs)``; ``report(record)``
appends a record (any JSON-like object) and ``stop`` is a ``threading.Event``.  Nothing here
knows about Streamlit: a page keeps the :class:`Job` in its session and polls ``records``.
"""
from __future__ import annotations

import threading
import time
import traceback

__all__ = ["Job"]


class Job:
    def __init__(self, fn, *args, **kwargs):
        self._fn, self._args, self._kwargs = fn, args, kwargs
        self._lock = threading.Lock()
        self._records: list = []
        self.stop_event = threading.Event()
        self.result = None
        self.error: str | None = None
        self.error_detail: str | None = None
        self.started_at: float | None = None
        self.finished_at: float | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> "Job":
        self.started_at = time.time()
        self._thread.start()
        return self

    def _report(self, record) -> None:
        with self._lock:
            self._records.append(record)

    def _run(self):
        try:
            self.result = self._fn(*self._args, report=self._report, stop=self.stop_event, **self._kwargs)
        except Exception as e:          # shown to the user as a message, never as a traceback
            self.error = f"{type(e).__name__}: {e}"
            self.error_detail = traceback.format_exc()
        finally:
            self.finished_at = time.time()

    def stop(self) -> None:
        self.stop_event.set()

    def join(self, timeout: float | None = None) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()

    @property
    def records(self) -> list:
        with self._lock:
            return list(self._records)

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    @property
    def status(self) -> str:
        if self.running:
            return "stopping" if self.stop_event.is_set() else "running"
        if self.started_at is None:
            return "not started"
        if self.error:
            return "failed"
        return "stopped" if self.stop_event.is_set() else "done"

    @property
    def elapsed(self) -> float:
        if self.started_at is None:
            return 0.0
        return (self.finished_at or time.time()) - self.started_at
