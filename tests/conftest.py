import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("ULTR_DATA", ROOT.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """../shared/data; required in CI, skipped with a reason elsewhere when absent."""
    if not (DATA / "mq2008" / "S1.txt").exists():
        if os.environ.get("CI"):
            pytest.fail(f"real LETOR data not found at {DATA} (CI must have ../shared/data)")
        pytest.skip(f"real LETOR data not found at {DATA}")
    return DATA


@pytest.fixture(scope="session")
def synthetic():
    from ultr_core.data.synthetic import make_synthetic_ltr
    return make_synthetic_ltr(seed=0)


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    """Pages cache sweep cells under ULTR_CACHE_DIR; tests use a fresh one each."""
    monkeypatch.setenv("ULTR_CACHE_DIR", str(tmp_path / "cache"))

import sys as _sys
_sys.path.insert(0, str(Path(__file__).resolve().parent))     # tests/browser_flow.py helpers
