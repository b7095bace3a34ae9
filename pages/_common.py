"""UI helpers shared by the pages: URL settings, background-job buttons and the polling
fragment.  Streamlit only — every computation stays in ultr_core."""
from __future__ import annotations

import streamlit as st

from ultr_core.reports import analyse_identifiability


@st.cache_resource(show_spinner="Building the identifiability graph …", max_entries=8)
def cached_analysis(_log, key: tuple, bias: tuple, estimate: str | None = None, n_bootstrap: int = 100):
    """The identifiability analysis (graph, merges, interventions and, with ``estimate``, the
    observation curve per component) of a log, cached by ``key`` (what identifies the log),
    the bias columns and the estimator."""
    return analyse_identifiability(_log, list(bias), merge=True, intervene=True, estimate=estimate,
                                   n_bootstrap=n_bootstrap)


def qp(name: str, default, cast=str):
    """A setting from the URL (shareable links), falling back to ``default`` when absent or invalid."""
    try:
        return cast(st.query_params[name]) if name in st.query_params else default
    except (TypeError, ValueError):
        return default


def job_buttons(key: str, start_label: str, start, disabled: bool = False) -> None:
    """Start / Stop buttons for the :class:`ultr_core.jobs.Job` kept in ``st.session_state[key]``.
    ``start()`` returns a started job (or None after showing a message); Stop is drawn after it,
    so it is enabled in the same run that started the job."""
    job = st.session_state.get(key)
    c1, c2 = st.columns(2)
    if c1.button(start_label, type="primary", disabled=disabled or (job is not None and job.running)):
        new = start()
        if new is not None:
            st.session_state[key] = new
    job = st.session_state.get(key)
    if c2.button("■ Stop", disabled=job is None or not job.running):
        job.stop()


def job_progress(job, unit: str = "runs") -> None:
    """A progress bar from a grid job's latest {"done", "total"} record."""
    recs = job.records
    done, total = (recs[-1]["done"], recs[-1]["total"]) if recs else (0, 1)
    st.progress(done / max(total, 1), text=f"{job.status}: {done} of {total} {unit} ({job.elapsed:.0f} s)")


def live(key: str, body) -> None:
    """Render ``body(job)`` in a fragment that re-runs every second while the job runs, and
    trigger one full rerun when it ends so that the rest of the page sees the result."""
    job = st.session_state.get(key)
    running = job is not None and job.running
    flag = f"{key}__polling"
    st.session_state[flag] = running

    def fragment():
        current = st.session_state.get(key)
        body(current)
        if current is not None and not current.running and st.session_state.get(flag):
            st.session_state[flag] = False
            st.rerun()

    st.fragment(fragment, run_every=1.0 if running else None)()
