"""One fix to Streamlit's session runtime, applied once per server process (imported by
``pages/_common.py``).  UI plumbing only; nothing here computes.  Beside it, ``st.dataframe`` shows a missing
value blank, never Python's "None" (:func:`ultr_core.app.tables.blank_missing`; issue #60).

**The race** (Streamlit 1.67, ``runtime/app_session.py``).  A browser's fragment timer
(``st.fragment(run_every=…)``) sends a fragment rerun.  If the session's ScriptRunner has just
finished its run and stopped, ``AppSession.request_rerun`` starts a new ScriptRunner at once; the
finished runner's last events (its remaining deltas and ``script_finished``) are still waiting on
the event loop behind that request, and ``_handle_scriptrunner_event_on_event_loop`` drops every
event whose sender is no longer the current runner.  The page keeps what it had received so far
and never gets the rest.  Under CPU load the event loop lags the script thread by seconds, so the
window is wide: when training ended, the full run that ``st.rerun()`` starts lost its result table
and its last messages for 1–3 of 10 visitors in 4 of 19 loaded runs (docs/benchmarks.md, the
server's debug log shows "Ignoring event from non-current ScriptRunner").  Streamlit's own early
check (``has_fragment``) only helps when the fragment is gone; ours still exists.

**The fix.**  When a fragment rerun has to start a new ScriptRunner while the stopped one is still
the session's current runner, start it only after that runner's SHUTDOWN event has been handled.
Every event of a runner reaches the loop in order before its SHUTDOWN, so by then all of them
were delivered.  If another runner was started meanwhile (a full rerun), the fragment rerun is
handed to it as an ordinary request.  Full reruns are untouched (``fastReruns`` replaces the
runner on purpose).  Applied only when Streamlit has the private method it wraps; otherwise the
app runs with Streamlit as it is and logs that once.
"""
from __future__ import annotations

import logging

LOG = logging.getLogger("ultr_explorer")
#: how long (s) a deferred fragment rerun waits for the stopped runner's SHUTDOWN before starting anyway
WAIT_S = 2.0
_STEP_S = 0.01


def deferred_create(original):
    """Wrap ``AppSession._create_scriptrunner`` (``original``) as described in the module docstring."""

    def _create_scriptrunner(self, initial_rerun_data) -> None:
        old = getattr(self, "_scriptrunner", None)
        loop = getattr(self, "_event_loop", None)
        if not getattr(initial_rerun_data, "fragment_id", None) or old is None or loop is None:
            return original(self, initial_rerun_data)       # a full rerun, or a runtime this fix does not know
        deadline = loop.time() + WAIT_S

        def later() -> None:
            current = self._scriptrunner
            if current is old and loop.time() < deadline:    # its SHUTDOWN is not handled yet: events pending
                loop.call_later(_STEP_S, later)
                return
            if current is not None and current is not old and current.request_rerun(initial_rerun_data):
                return                                   # a newer runner took the request
            if getattr(getattr(self, "_state", None), "name", "") == "SHUTDOWN_REQUESTED":
                return                                   # the session closed meanwhile
            original(self, initial_rerun_data)

        loop.call_soon(later)

    _create_scriptrunner.__wrapped__ = original
    _create_scriptrunner._ultr_fix = True
    return _create_scriptrunner


def apply() -> bool:
    """Install the fix once; True when it is in place."""
    try:
        from streamlit.runtime.app_session import AppSession
    except ImportError:                                  # pragma: no cover - streamlit always present here
        return False
    current = getattr(AppSession, "_create_scriptrunner", None)
    if current is None:
        LOG.warning("Streamlit has no AppSession._create_scriptrunner; the fragment-rerun fix is not applied")
        return False
    _blank_missing_cells()
    if getattr(current, "_ultr_fix", False):
        return True
    AppSession._create_scriptrunner = deferred_create(current)
    return True


def _blank_missing_cells() -> None:
    """Every page's ``st.dataframe`` of a pandas frame through :func:`~ultr_core.app.tables.blank_missing`."""
    import pandas as pd
    import streamlit as st

    from ultr_core.app.tables import blank_missing
    shown = st.dataframe
    if getattr(shown, "_ultr_blank", False):
        return

    def dataframe(data=None, *args, **kwargs):
        return shown(blank_missing(data) if isinstance(data, pd.DataFrame) else data, *args, **kwargs)
    dataframe._ultr_blank = True
    st.dataframe = dataframe


_gone_since: dict = {}
_closed: set = set()


def _close(rt, sid: str) -> None:
    """On the event loop: empty the session's state (a reference that outlives its shutdown — a finished websocket
    coroutine — would otherwise keep its log alive), then shut it down (its uploaded files go)."""
    info = rt._session_mgr.get_session_info(sid)
    if info is not None:
        info.session.session_state.clear()
        storage = getattr(info.session, "_fragment_storage", None)   # live fragments' closures hold the log too
        if storage is not None:
            storage.clear()
    rt.close_session(sid)


def close_gone_sessions(seen) -> int:
    """Close for good each session of ``seen`` (sessions the app has seen working) that has been disconnected for
    half of ``server.disconnectedSessionTTL`` (once expired, the store no longer hands it out to be shut down).
    Streamlit keeps a closed tab's session for a reconnect in a
    store that drops expired entries only on its next write, and does not shut them down then: the tab's uploaded
    files and current log stayed in memory until a server restart (issue #49).  :func:`_close` runs on the
    server's event loop, as ``Runtime.close_session`` must; nothing happens where Streamlit lacks these internals.
    Returns how many
    were closed."""
    import time
    closed = 0
    try:
        from streamlit import config
        from streamlit.runtime import Runtime
        if not Runtime.exists():
            return 0
        rt = Runtime.instance()
        ttl, now = float(config.get_option("server.disconnectedSessionTTL")), time.monotonic()
        for sid in list(seen):
            if sid in _closed or rt.is_active_session(sid):
                _gone_since.pop(sid, None)
                continue
            if now - _gone_since.setdefault(sid, now) >= ttl / 2:      # still in the store: shut down whole
                rt._get_async_objs().eventloop.call_soon_threadsafe(_close, rt, sid)
                LOG.info("closing session %s: disconnected for %.0f s", sid, now - _gone_since[sid])
                _closed.add(sid)
                closed += 1
    except Exception:                                  # noqa: BLE001 — cleanup is best effort
        return closed
    return closed
