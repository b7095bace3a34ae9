"""AppTest for every page (streamlit.testing.v1)."""
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]


def page(name: str) -> AppTest:
    return AppTest.from_file(str(ROOT / "pages" / name), default_timeout=60)


def test_app_entry_renders_home():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30).run()
    assert not at.exception
    assert at.title[0].value == "ULTR Explorer"


def test_home_explains_both_etas():
    at = page("home.py").run()
    assert not at.exception
    text = " ".join(m.value for m in at.markdown)
    assert "coupling level" in text and "position-bias severity" in text
    assert "Identifiability Matters" in text


def test_simulate_default_shows_ctr_chart_and_log():
    at = page("simulate.py").run()
    assert not at.exception and not at.error
    assert at.metric[0].value == "20,000"
    assert len(at.dataframe) == 1
    assert "log" in at.session_state


def test_simulate_topk_reports_hidden_documents():
    at = page("simulate.py").run()
    at.sidebar.checkbox[0].check().run()
    assert not at.exception
    hidden = [m for m in at.metric if "hidden" in m.label]
    assert hidden and int(hidden[0].value.split("/")[0].replace(",", "")) > 0
    assert (at.session_state["log"].frame.groupby("session_id")["shown"].sum() == 5).all()


def test_simulate_bad_folder_shows_message_not_traceback():
    at = page("simulate.py").run()
    at.sidebar.selectbox[0].select("ultra").run()
    at.sidebar.text_input[0].input("/nonexistent/folder").run()
    assert not at.exception
    assert at.error and "settings.json" in at.error[0].value
