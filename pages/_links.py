"""What a link carries (shareable URLs): a page's settings read from the URL — a wrong value corrected and the
correction announced — and the click log a ``log=`` spec names.  Streamlit only; the reading itself is
:mod:`ultr_core.app.pagestate`'s."""
from __future__ import annotations

import streamlit as st

from pages._common import memo
from ultr_core.app.pagestate import parse_value
from ultr_core.app.text import escape_markdown
from ultr_core.errors import ConfigError, DataFormatError


def note_correction(text: str) -> None:
    """Note what a link got wrong and how it was corrected, for :func:`url_notices` to show."""
    st.session_state.setdefault("_url_notices", []).append(text)


def qp(name: str, default, cast=str, lo=None, hi=None, options=None):
    """A setting from the URL (shareable links), read by :func:`ultr_core.app.pagestate.parse_value`: absent →
    ``default``; not of the right type, not finite or not among ``options`` → ``default`` with a notice; outside
    [``lo``, ``hi``] → clamped with a notice (:func:`url_notices` shows them)."""
    value, notice = parse_value(name, st.query_params.get(name), default, cast=cast, lo=lo, hi=hi, options=options)
    if notice:
        note_correction(notice)
    return value


def read_setting(setting):
    """A page setting (:class:`ultr_core.app.pagestate.Setting`, a record of the page's table) from the link, read
    by its own :meth:`~ultr_core.app.pagestate.Setting.parse` (a correction noted for :func:`url_notices`)."""
    value, notice = setting.parse(st.query_params.get(setting.url))
    if notice:
        note_correction(notice)
    return value


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
        note_correction(f"log={raw[:40]!r} cannot be rebuilt ({e})")
        return None
    if note:
        note_correction(note)
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
