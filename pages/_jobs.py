"""The app's pooled jobs as a page sees them (:mod:`ultr_core.app.jobpool`): submitting within a session's share,
Start / Stop buttons, the queue note and progress bar, the live fragment that polls a running job, and the shared
live figures.  Streamlit only."""
from __future__ import annotations

import collections
import threading

import streamlit as st

from pages._common import WORKERS, guarded, job_pool, session_id
from ultr_core.app.jobpool import JobLimitError
from ultr_core.app.text import escape_markdown


def _within_cap(submit):
    """``submit(session)`` for this session; None after a message when the session already holds
    its share of the pool's jobs."""
    try:
        return submit(session_id())
    except JobLimitError as e:
        st.warning(f"Not started: {e}.")
        return None


def submit_job(key, fn, *args, **kwargs):
    """Queue ``fn`` in the job pool for this session (or join the identical run under ``key``)."""
    return _within_cap(lambda s: job_pool().submit(key, fn, *args, session=s, **kwargs))


def submit_jobs(items):
    """Several ``(key, fn, args, kwargs)`` read as one :class:`~ultr_core.app.jobpool.JobGroup` (they
    run side by side on the pool's workers)."""
    return _within_cap(lambda s: job_pool().submit_many(items, session=s))


def release_job(job) -> None:
    """This session no longer wants ``job`` (it stops unless another session shares it)."""
    if job is not None:
        job_pool().release(job, session_id())


def job_buttons(key: str, start_label: str, start, disabled: bool = False) -> None:
    """Start / Stop buttons for the pooled job (:mod:`ultr_core.app.jobpool`) kept in ``st.session_state[key]``.
    ``start()`` returns a started job (or None after showing a message); Stop is drawn after it,
    so it is enabled in the same run that started the job."""
    job = st.session_state.get(key)
    c1, c2 = st.columns(2)
    if c1.button(start_label, type="primary", disabled=disabled or (job is not None and job.running),
                 key=f"{key}_start"):
        new = start()
        if new is not None:
            st.session_state[key] = new
    job = st.session_state.get(key)
    if c2.button("■ Stop", disabled=job is None or not job.running, key=f"{key}_stop"):   # unique per job
        release_job(job)


def queue_note(job) -> bool:
    """Show a queued job's place in the server's queue; True while it waits."""
    if job is None or not getattr(job, "queued", False):
        return False
    pos = job.position
    st.info(f"Queued — position {pos} of {job_pool().stats()['queued']}: {WORKERS} job"
            f"{'s run' if WORKERS > 1 else ' runs'} at a time for everyone on this server, the visitor with "
            f"the fewest runs going first — so a newcomer may go ahead (waiting {job.waited:.0f} s).",
            icon=":material/hourglass_top:")
    return True


def job_progress(job, unit: str = "runs") -> None:
    """A progress bar from a grid job's latest {"done", "total"} record (or its queue place)."""
    if queue_note(job):
        return
    done, total = next(((r["done"], r["total"]) for r in reversed(job.records) if "done" in r), (0, 1))
    left = f", about {job.elapsed * (total - done) / done:.0f} s left" if 0 < done < total else ""
    st.progress(done / max(total, 1), text=f"{job.status}: {done} of {total} {unit} ({job.elapsed:.0f} s{left})")


def finished_result(job, what: str):
    """Draw a job's progress (and its error, naming ``what`` failed); its result once it has
    finished with rows, else None — the common head of a live job view."""
    if job is None:
        return None
    job_progress(job)
    if job.error:
        from ultr_core.app.text import escape_markdown
        st.error(f"The {what} failed — {escape_markdown(job.error)}")
        return None
    if job.running or job.result is None or len(job.result) == 0:
        return None
    return job.result


_figures: collections.OrderedDict = collections.OrderedDict()


_figures_lock = threading.Lock()


def job_figure(job, kind: str, build, n_records: int):
    """A live figure of ``job`` built once per (job, number of records, ``kind``) for every session
    and refresh that asks (building a plotly figure costs ≈ 40 ms of the server's one interpreter;
    thirty visitors polling the same shared run need it once).  The last 256 are kept."""
    ids = tuple(j.id for j in getattr(job, "jobs", [job])) if job is not None else ()
    key = (ids, n_records, kind)
    with _figures_lock:
        if key in _figures:
            _figures.move_to_end(key)
            return _figures[key]
    fig = build()
    with _figures_lock:
        _figures[key] = fig
        while len(_figures) > 256:
            _figures.popitem(last=False)
    return fig


def poll_interval() -> float:
    """Seconds between a live view's refreshes: 1 s, slower when many sessions watch jobs at once
    (every refresh rebuilds the page's live figures on the server)."""
    watchers = job_pool().stats()["watchers"]
    return 1.0 if watchers <= 2 else min(5.0, watchers / 2)


def live(key: str, body) -> None:
    """Render ``body(job)`` in a fragment that re-runs every :func:`poll_interval` seconds while the
    job runs, and trigger one full rerun when it ends so that the rest of the page sees the result.
    A page may call it in several containers (only what changes is redrawn)."""
    job = st.session_state.get(key)
    running = job is not None and job.running
    flag = f"{key}__polling"
    st.session_state[flag] = running

    def fragment():
        current = st.session_state.get(key)
        if current is not None and (hasattr(current, "subscribers") or hasattr(current, "jobs")):
            job_pool().touch(current, session_id())
        guarded(lambda: body(current))
        if current is not None and not current.running and st.session_state.get(flag):
            st.session_state[flag] = False
            st.rerun()

    st.fragment(fragment, run_every=poll_interval() if running else None)()


def partial_runs(job):
    """The cells a running grid job has finished so far, as a DataFrame (None before the first)."""
    import pandas as pd
    rows = [r["cell"] for r in job.records if "cell" in r]
    if not rows:
        return None
    df = pd.DataFrame(rows)
    return df[df["error"].isna()] if "error" in df else df


def finished_runs(df):
    """The grid rows that ran, after a warning naming the ones that failed (kept, not raised)."""
    if "error" not in df:
        return df
    failed = df[df["error"].notna()]
    if len(failed):
        first = escape_markdown(failed["error"].iloc[0])
        st.warning(f"{len(failed)} of {len(df)} runs failed and are left out (first: {first}); the finished runs "
                   "are shown.")
    return df[df["error"].isna()].drop(columns=["error"])
