"""The shared server as every page meets it: the one error boundary, this visitor's session, the shared byte-budget
cache (``memo``, the cached identifiability analysis) and the one job pool.  The pooled jobs' buttons, progress and
live views are :mod:`pages._jobs`; what a link carries, :mod:`pages._links`.  Streamlit only — every computation
stays in ultr_core."""
from __future__ import annotations

import functools
import logging
import os
import threading
import uuid

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.scriptrunner_utils.exceptions import ScriptControlException

from pages import _streamlit_fix
from ultr_core.app.jobpool import JobPool
from ultr_core.app.lrucache import ByteLRU, log_digest  # noqa: F401  (log_digest: the pages' content key)
from ultr_core.app.memory import start_janitor
from ultr_core.app.text import escape_markdown
from ultr_core.errors import ConfigError, DataFormatError
from ultr_core.logs.clicklog import ClickLog
from ultr_core.tasks import CheckOptions, check_log

_streamlit_fix.apply()          # a Streamlit 1.67 race that drops a finished run's last messages (see the module)

LOG = logging.getLogger("ultr_explorer")
#: memory all sessions together may pin in cached datasets, logs and analyses
CACHE_BYTES = int(os.environ.get("ULTR_APP_CACHE_BYTES", 1_500 * 2 ** 20))
#: trainings, grids and sweeps that run at once for all sessions together (default: the cores)
WORKERS = int(os.environ.get("ULTR_APP_WORKERS", os.cpu_count() or 1))
#: unfinished jobs one session may hold (a Playground request over 5 seeds with every method: 45); the pool's
#: fair order keeps a session with many jobs from holding back the others
JOBS_PER_SESSION = int(os.environ.get("ULTR_APP_JOBS_PER_SESSION", 48))
#: finished runs kept for sharing: the six stories' (≈ 105) and the default run's, with room for visitors' own
KEEP_DONE = 256


def run_page(body) -> None:
    """Run a page's ``body()`` behind the one error boundary: a problem with the user's input
    (ConfigError, DataFormatError) is shown as what to fix; anything else as a short message with
    an error id, whose traceback goes to the server log only.  Session state is untouched."""
    if PagesManager.uses_pages_directory:
        # A deep link (/train, /simulate?…) reached this page through Streamlit's legacy pages/ folder fallback
        # before app.py ran: the sidebar would list raw file names and the layout would not be set.  Turn the
        # fallback off for the process and rerun through app.py's st.navigation, which resolves the URL to this page.
        PagesManager.uses_pages_directory = False
        st.rerun()
    from pages._warm import warm_server, warmed
    if not warmed() and _session_alive(session_id()):    # a real server started without scripts/serve.py
        threading.Thread(target=warm_server, daemon=True, name="ultr-warm").start()
    guarded(body)


def guarded(body) -> None:
    """Run ``body()`` behind the error boundary (see :func:`run_page`); live fragments re-run
    without the page around them, so they use it too."""
    try:
        body()
    except ScriptControlException:          # st.stop() / st.rerun(): Streamlit's own control flow
        raise
    except (ConfigError, DataFormatError) as e:
        st.error(f"Please check the input — {escape_markdown(e)}")
    except MemoryError:
        error_id = uuid.uuid4().hex[:8]
        LOG.exception("error %s: out of memory", error_id)
        st.error(f"This needs more memory than the server has (error id {error_id}). Use fewer sessions, "
                 "contexts or a smaller file; nothing you had is lost.")
    except Exception:                       # noqa: BLE001 — the boundary: never a traceback in the page
        error_id = uuid.uuid4().hex[:8]
        LOG.exception("error %s on a page", error_id)
        st.error(f"Something went wrong on this page (error id {error_id}). Nothing you had is lost: change a "
                 "setting or reload. The details are in the server log under this id.")


def _once(make):
    """``make()`` called once per process even when many session threads ask at the same moment
    (``functools.cache`` alone lets two first callers each build one: two job pools, each with its
    own workers — found by ten visitors opening a fresh server at once, tests/app/test_shared_server.py)."""
    lock, made = threading.Lock(), []

    @functools.wraps(make)
    def get():
        if not made:
            with lock:
                if not made:
                    made.append(make())
        return made[0]
    get.existing = lambda: made[0] if made else None          # without making one
    return get


@_once
def shared_cache() -> ByteLRU:
    """One LRU cache for the process (:data:`CACHE_BYTES`, keyed by content); its janitor frees closed tabs'."""
    cache = ByteLRU(CACHE_BYTES)
    start_janitor(cache, lambda s: _session_alive(s) is False, pool=job_pool.existing,
                  sweep=functools.partial(_streamlit_fix.close_gone_sessions, _seen_sessions))
    return cache


_seen_sessions: set = set()


def _session_alive(session) -> bool | None:
    """Whether a browser session is still connected: True while the server lists it, False once a session it listed
    has gone (tab closed), None when unknown (no server; AppTest's sessions are never listed): never reaped."""
    from streamlit.runtime import Runtime
    if session is None or not Runtime.exists():
        return None
    if Runtime.instance().is_active_session(session):
        _seen_sessions.add(session)
        return True
    return False if session in _seen_sessions else None


@_once
def job_pool() -> JobPool:
    """The server's one job pool (:mod:`ultr_core.app.jobpool`): :data:`WORKERS` worker processes,
    warmed with the default playground log; jobs of closed tabs stop within seconds."""
    from ultr_core.app.playground import warm_worker
    return JobPool(workers=WORKERS, per_session=JOBS_PER_SESSION, alive=_session_alive, initializer=warm_worker,
                   keep_done=KEEP_DONE)


#: static page styling (no user content): below 1180 px the main column keeps its width for tables instead of
#: Streamlit's wide side margins (issue #60: table cells cut at 1024 px)
NARROW_CSS = ("<style>@media (max-width: 1180px) {div[data-testid=\"stMainBlockContainer\"] {padding-left: 1.2rem; "
              "padding-right: 1.2rem;}} @media (max-height: 640px) {div[data-testid=\"stMainBlockContainer\"] "
              "{padding-top: 2.5rem !important;}}</style>")


#: the components table's member list: the rest of the row's width (the grid's own size cut it at 1024 px), whole on
#: hover
MEMBERS_COLUMN = {"members": st.column_config.TextColumn("members", width="large", help="the component's bias "
                                                         "factors (the first 12)")}


def page_title(title: str) -> None:
    """A page's title, with the narrow-screen styling every page with wide tables shares."""
    st.markdown(NARROW_CSS, unsafe_allow_html=True)
    st.title(title)


def session_id() -> str | None:
    from streamlit.runtime.scriptrunner import get_script_run_ctx
    return getattr(get_script_run_ctx(), "session_id", None)


def memo(key: tuple, compute, own: bool = False):
    """``compute()`` once per ``key`` (a content digest or a reproducible spec) in the shared cache; ``own``: the
    entry is this visitor's upload, released when their tab closes."""
    sid = session_id() if own else None
    if sid is not None:
        _session_alive(sid)                                # seen alive: its closing is noticed
    return shared_cache().get_or_compute(key, compute, owner=sid)


#: bootstrap resamples of every position-bias curve a page shows (one number, so two pages showing one log
#: share one cached analysis and draw the same intervals)
N_BOOTSTRAP = 100


def cached_analysis(log, key: tuple, bias: tuple, estimate: str | None = None, n_bootstrap: int = N_BOOTSTRAP):
    """The identifiability analysis (graph, merges, interventions and, with ``estimate``, the
    observation curve per component) of a log, cached by ``key`` (what identifies the log's
    content: a digest or the simulation spec — never an object id), the bias columns and the
    estimator — within the shared server's budget (:func:`~ultr_core.identifiability.pairs.app_budget`)."""
    from ultr_core.identifiability.pairs import Stopped, app_budget
    sid, budget = session_id(), app_budget(stop=lambda: _session_alive(sid) is False)   # stopped when the tab closes
    try:
        with st.spinner("Building the identifiability graph …"):
            options = _page_options(bias, estimate, n_bootstrap)
            return memo(("analysis", key, tuple(bias), estimate, int(n_bootstrap)),
                        lambda: check_log(log, options, budget=budget).analysis, own=key[0] == "upload")
    except Stopped:                           # nobody is watching: nothing is shown or cached
        st.stop()


def _page_options(bias: tuple, estimate: str | None, n_bootstrap: int) -> CheckOptions:
    """What the pages check a log with: the CLI's ``ig --merge --intervene`` with the page's estimator."""
    return CheckOptions(bias=tuple(bias), merge=True, intervene=True, estimate=estimate,
                        bootstrap=int(n_bootstrap) if estimate else None)


def cached_check(log, key: tuple, bias: tuple, estimate: str | None = None, n_bootstrap: int = N_BOOTSTRAP, *,
                 notes=()):
    """The log's :class:`~ultr_core.tasks.check_log.LogCheck` around :func:`cached_analysis` (its report and JSON —
    the CLI's ``ig --merge --intervene`` with the page's estimator); ``notes``: what reading the log dropped or
    repaired (the report's notes)."""
    from ultr_core.tasks import LogCheck
    return LogCheck(cached_analysis(log, key, bias, estimate, n_bootstrap), _page_options(bias, estimate, n_bootstrap),
                    "upload", tuple(notes), log if isinstance(log, ClickLog) else None)


