"""Hygiene that keeps the docs and the build honest (issue #45): README's package table matches the layers the
architecture test enforces, Streamlit is pinned to the release the session-runtime patch is tested on, and the
experiments, benchmarks and scripts import the installed package instead of editing ``sys.path``."""
import re
from pathlib import Path

from test_architecture import LAYERS

REPO = Path(__file__).resolve().parents[1]


def test_readme_package_table_matches_the_layers():
    rows = re.findall(r"^\| `(\w+)(?:/|\.py)` \| (\d+) \|", (REPO / "README.md").read_text(), flags=re.M)
    assert {name: int(layer) for name, layer in rows} == LAYERS


def test_streamlit_is_pinned_to_the_release_the_patch_wraps():
    import streamlit
    from streamlit.runtime.app_session import AppSession
    pin = re.search(r"^streamlit==([\d.]+)$", (REPO / "requirements.txt").read_text(), flags=re.M)
    assert pin and streamlit.__version__ == pin.group(1)
    assert f'"streamlit=={pin.group(1)}"' in (REPO / "pyproject.toml").read_text()
    assert hasattr(AppSession, "_create_scriptrunner")          # what pages/_streamlit_fix.py wraps


#: the scripts that edit sys.path, and why: serve.py imports pages/ (the app's folder, not part of the package); the
#: others drive the app in a browser with the test suite's helpers (tests/browser_flow.py)
ALLOWED = {"scripts/serve.py", "scripts/screenshots.py", "benchmarks/bench_upload_memory.py", "benchmarks/load_app.py",
           "benchmarks/load_playground.py", "benchmarks/load_protocol.py"}


def test_scripts_import_the_installed_package():
    offenders = {str(p.relative_to(REPO)) for d in ("experiments", "benchmarks", "scripts")
                 for p in sorted((REPO / d).glob("*.py")) if "sys.path.insert" in p.read_text()}
    assert offenders == ALLOWED
    assert re.search(r"^-e \.$", (REPO / "requirements.txt").read_text(), flags=re.M)
