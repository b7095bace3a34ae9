"""UI helpers shared by the pages: the error boundary, URL settings (validated and clamped), the shared byte-budget
cache, background-job buttons and the polling fragment.  Streamlit only — every computation stays in ultr_core."""
from __future__ import annotations

import collections
import functools
import logging
import os
import threading
import uuid

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.scriptrunner_utils.exceptions import ScriptControlException

from pages import _streamlit_fix
from ultr_core.app.jobpool import JobLimitError, JobPool
from ultr_core.app.lrucache import ByteLRU, log_digest  # noqa: F401  (log_digest: the pages' content key)
from ultr_core.app.memory import start_janitor
from ultr_core.app.pagestate import parse_value
from ultr_core.app.text import escape_markdown
from ultr_core.errors import ConfigError, DataFormatError
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
            options = CheckOptions(bias=tuple(bias), merge=True, intervene=True, estimate=estimate,
                                   bootstrap=int(n_bootstrap) if estimate else None)
            return memo(("analysis", key, tuple(bias), estimate, int(n_bootstrap)),
                        lambda: check_log(log, options, budget=budget).analysis, own=key[0] == "upload")
    except Stopped:                           # nobody is watching: nothing is shown or cached
        st.stop()


def qp(name: str, default, cast=str, lo=None, hi=None, options=None):
    """A setting from the URL (shareable links), read by :func:`ultr_core.app.pagestate.parse_value`: absent →
    ``default``; not of the right type, not finite or not among ``options`` → ``default`` with a notice; outside
    [``lo``, ``hi``] → clamped with a notice (:func:`url_notices` shows them)."""
    value, notice = parse_value(name, st.query_params.get(name), default, cast=cast, lo=lo, hi=hi, options=options)
    if notice:
        st.session_state.setdefault("_url_notices", []).append(notice)
    return value


def read_setting(setting):
    """A page setting (:class:`ultr_core.app.pagestate.Setting`, a record of the page's table) from the link, read
    as :func:`qp` reads one."""
    return qp(setting.url, setting.default, setting.cast, setting.lo, setting.hi, setting.options)


def linked_log():
    """The log a link's ``log=`` spec names, as (spec string, dataset, log), simulated once and
    shared through :func:`memo`; None when the link has none.  A spec that cannot be rebuilt
    leaves a notice for :func:`url_notices` and returns None."""
    if "log" not in st.query_params:
        return None
    from ultr_core.simulation.logspec import LogSpec
    from ultr_core.simulation.simulated import APP_MAX_LOG_ROWS
    raw = st.query_params["log"]
    try:
        spec = LogSpec.parse(raw)
        with st.spinner("Simulating the click log of this link …"):      # within the app's row limit, as Simulate
            spec, ds, _, log, note = memo(("logspec", spec.to_string(), APP_MAX_LOG_ROWS),
                                          lambda: spec.simulate_within(APP_MAX_LOG_ROWS))
    except (ConfigError, DataFormatError, ValueError) as e:
        st.session_state.setdefault("_url_notices", []).append(f"log={raw[:40]!r} cannot be rebuilt ({e})")
        return None
    if note:
        st.session_state.setdefault("_url_notices", []).append(note)
    return spec.to_string(), ds, log


def session_log_spec() -> str | None:
    """The reproducible spec of the session's current log, or None when that log has none (an upload) — a spec is
    trusted only while the log it was made for is still the current one."""
    pair = st.session_state.get("log_spec")
    if isinstance(pair, tuple) and len(pair) == 2 and pair[0] == st.session_state.get("log_key"):
        return pair[1]
    return None


def url_notices() -> None:
    """Show what :func:`qp` had to correct in the URL on every rerun of this page until another page is opened (a
    live page reruns each second: a notice shown once vanished before anyone read it — issue #60)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx
    here, (page, kept) = get_script_run_ctx().page_script_hash, st.session_state.get("_url_notices_kept", (None, []))
    kept = (kept if page == here else []) + st.session_state.pop("_url_notices", [])
    st.session_state["_url_notices_kept"] = (here, kept)
    for n in kept:
        st.info(f"Link setting corrected: {escape_markdown(n)}")


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
