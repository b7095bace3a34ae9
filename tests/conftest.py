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

def pytest_collection_modifyitems(config, items):
    """The full tier's seeded studies and browser flows first, longest first where known: on two
    workers the long runs then overlap with each other and the many short tests fill the gaps at the
    end, instead of one long run starting last (#23: CI time).  Order never changes a result: every
    test seeds its own randomness."""
    first = ("test_mq2008_oracle_dla_naive", "test_fig3a_on_the_yahoo_sample", "test_pbm_ordering")
    def rank(item):
        slow = item.get_closest_marker("slow") is not None
        known = next((i for i, name in enumerate(first) if item.name.startswith(name)), len(first))
        return (not slow, known)
    items.sort(key=rank)                  # stable: file order within each rank


import sys as _sys
_sys.path.insert(0, str(Path(__file__).resolve().parent))     # tests/browser_flow.py helpers
