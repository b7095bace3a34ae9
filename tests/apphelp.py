"""Shared AppTest checks."""

#: what the pages' error boundary (pages/_common.py) shows instead of a traceback
CRASH_MESSAGES = ("Something went wrong on this page", "This needs more memory than the server has")


def no_crash(at) -> bool:
    """No uncaught exception and no error-boundary message: the boundary turns exceptions into an
    in-page ``st.error``, which ``at.exception`` alone does not see.  Messages about the user's
    input ("Please check the input — …") are allowed: tests that expect them assert them."""
    return not at.exception and not any(m in e.value for e in at.error for m in CRASH_MESSAGES)


def page(name: str, timeout: float = 60):
    """An AppTest of ``pages/<name>`` (``timeout`` seconds per run)."""
    from pathlib import Path

    from streamlit.testing.v1 import AppTest
    return AppTest.from_file(str(Path(__file__).resolve().parents[1] / "pages" / name), default_timeout=timeout)


def wait(at, key: str, timeout: float = 60):
    """Wait for the page's background job in ``session_state[key]``, then rerun the page."""
    job = at.session_state[key]
    assert job.join(timeout), "the background job did not finish"
    return at.run()
