import os
import sys
import time
from pathlib import Path

import pytest

# One BLAS/OpenMP thread per test process (and every server, CLI or pool process a test starts): the
# suite runs on two workers on two cores, and two processes with two spinning OpenMP threads each made
# the click models' L-BFGS fits 4.5x slower (27 s instead of 6 s for the ten models on 40 k sessions,
# measured; #33).  Set before torch or numpy's BLAS is imported.
from ultr_core.app.jobworker import THREAD_ENV  # noqa: E402  (imports neither numpy nor torch)

for _var in THREAD_ENV:
    os.environ.setdefault(_var, "1")
if "torch" in sys.modules:
    sys.modules["torch"].set_num_threads(1)
# The AppTests' job pool (one per test process, pages/_common.job_pool) runs one worker: two test processes
# already keep both cores busy, and every pool worker pays the warm-up (torch's import, the default log and
# three optimiser steps: 3.7 CPU-s) — a second worker per process added two warm-ups to every run and made
# the pools' jobs compete with the tests.  The app servers the browser tests start keep the app's default
# (one worker per core): tests/browser_flow.serve_app removes this variable from their environment.
os.environ.setdefault("ULTR_APP_WORKERS", "1")
# The AppTests' pool trains for the test at hand only: no story warm-up (pages/_warm.py) queued ahead of its jobs
# (the browser tests' servers set it themselves, tests/browser_flow.serve_app).
os.environ.setdefault("ULTR_WARM_STORIES", "0")

ROOT = Path(__file__).resolve().parents[1]
# the same variable as the app's data roots (ultr_core.data.roots): its first folder, else ../shared/data
DATA = Path(next((p for p in os.environ.get("ULTR_DATA_DIR", "").split(os.pathsep) if p.strip()),
                 ROOT.parent / "shared" / "data"))


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


@pytest.fixture(scope="session")
def study_cache(tmp_path_factory) -> Path:
    """One result cache (``run_grid``'s, keyed by the code version and each cell's whole spec) for the seeded
    studies of one test process: two studies that run the same cell (the PBM preset's IPS and Oracle runs are
    also the user-model preset's PBM runs) train it once (#33: a shared fitted fixture)."""
    return tmp_path_factory.mktemp("study-cache")


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    """Pages cache sweep cells under ULTR_CACHE_DIR; tests use a fresh one each."""
    monkeypatch.setenv("ULTR_CACHE_DIR", str(tmp_path / "cache"))

@pytest.fixture(autouse=True)
def _no_jobs_left_running():
    """A test's unfinished pool jobs are stopped when it ends: AppTest sessions share this process's
    job pool and are never reported gone, so a Playground opened by one test would otherwise go on
    training beside every later test (and queue ahead of their jobs)."""
    yield
    common = sys.modules.get("pages._common")
    pool = common.job_pool.existing() if common is not None else None
    if pool is not None:
        pool.stop_all()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """With ``ULTR_TEST_TIMELINE=<file>``: one line per test (process, start, end, node id) appended to the
    file, with the CPU seconds the test used itself and in the processes it started, to see where a run's
    two workers wait and what they compute (#33: CI time); nothing otherwise."""
    path = os.environ.get("ULTR_TEST_TIMELINE")
    start, cpu = time.time(), _cpu_seconds()
    yield
    if path:
        own, children = (after - before for after, before in zip(_cpu_seconds(), cpu))
        with open(path, "a") as f:
            f.write(f"{os.getpid()}\t{start:.2f}\t{time.time():.2f}\t{item.nodeid}\t{own:.2f}\t{children:.2f}\n")


def _cpu_seconds() -> tuple[float, float]:
    """CPU seconds (user + system) of this process and of its finished children (servers, CLI runs,
    chromium: each counted once its parent has waited for it)."""
    import resource
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time(), kids.ru_utime + kids.ru_stime


@pytest.hookimpl(trylast=True)           # after -m's deselection: the halves are halves of what runs
def pytest_collection_modifyitems(config, items):
    """The full tier's browser flows lead one worker's half of this list and the other studies (longest
    first where known) the other's, the short tests after them: xdist's work-stealing gives each worker one
    contiguous half of the list, so the flows' waits on their server and chromium overlap the studies'
    computing (when both workers ran flows at once, both waited and the CPU idled), one server serves every
    flow (the module's fixture starts one per worker), the short tests fill the gaps, and an idle worker
    steals what is left (#23, #33: CI time).  Order never changes a result: every test seeds its own
    randomness."""
    def rank(item):
        return next((i for i, name in enumerate(SLOW_FIRST) if item.name.startswith(name)), len(SLOW_FIRST))
    slow = sorted((it for it in items if it.get_closest_marker("slow") is not None), key=rank)
    flows = [it for it in slow if it.path.name in ("test_browser.py", "test_shared_server.py")]
    studies = [it for it in slow if it not in flows]
    fast = [it for it in items if it.get_closest_marker("slow") is None]
    k = min(max(len(items) // 2 - len(flows), 0), len(fast))
    # the fast tier's longest tests (4-10 s: they wait for the pool's trainings or start processes) lead the
    # two halves in turn, so that neither worker is left with one of them at the end (fast tier: one worker
    # ended 7 s before the other)
    longs = [it for name in FAST_FIRST for it in fast if it.name.startswith(name)]
    rest = [it for it in fast if it not in longs]
    head_a, head_b = longs[0::2], longs[1::2]
    cut = max(k - len(head_a), 0)
    items[:] = flows + head_a + rest[:cut] + studies + head_b + rest[cut:]


#: the full tier's longest tests, longest first (ULTR_TEST_TIMELINE measures them)
SLOW_FIRST = ("test_fig3a_on_the_yahoo_sample", "test_playground_and_presentation_mode",
              "test_playground_fits_one_screen",
              "test_mq2008_oracle_dla_naive", "test_compare_preset_paper_claims", "test_compare_preset_verdicts",
              "test_readme_command_lines", "test_main_flow_simulate", "test_closing_the_tab", "test_preset_story_holds",
              "test_pbm_ordering")
#: the fast tier's longest tests, longest first
FAST_FIRST = ("test_identifiability_page_fits_click_models", "test_train_default_dla_runs",
              "test_train_draws_the_same_log", "test_moving_a_knob_restarts",
              "test_playground_users_knob", "test_playground_starts_by_itself", "test_train_link_rebuilds",
              "test_hostile_strings_never_render", "test_several_seeds_give_an_interval", "test_compare_page_sweeps")

#: the test folders, one per package of ultr_core (``app`` for ultr_core.app and the pages, ``project`` for the rules
#: over the whole repository); the helpers (apphelp, clihelp, loghelp, browser_flow, …) stay in tests/ itself
TEST_FOLDERS = ("algorithms", "app", "clickmodels", "counterfactual", "data", "evaluation", "identifiability", "logs",
                "simulation", "tasks", "project")
# the helpers, and each folder's test modules for the few tests that share a generator with another folder's, import
# by their file names wherever pytest collects from (its import mode adds a folder only as it reaches it)
for _folder in (*TEST_FOLDERS[::-1], ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent / _folder))
