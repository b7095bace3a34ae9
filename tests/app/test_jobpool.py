"""The server-wide job pool: bounded, queued in order, shared by key, capped per session, stopped
when its sessions are gone, and robust to a worker that ignores a stop."""
import os
import time
import weakref

import pytest

from ultr_core.app.jobhandles import JobGroup
from ultr_core.app.jobpool import JobLimitError, JobPool


def sleeper(seconds, tag="", report=None, stop=None):
    """Report the worker's pid, then sleep in small steps until done or stopped."""
    report({"pid": os.getpid(), "tag": tag, "t": time.time()})
    end = time.time() + seconds
    while time.time() < end:
        if stop.is_set():
            return "stopped"
        time.sleep(0.02)
    return tag


def stubborn(seconds, report=None, stop=None):
    """Ignores its stop flag."""
    report({"pid": os.getpid()})
    time.sleep(seconds)
    return "finished anyway"


def niceness(report=None, stop=None):
    return os.nice(0)


def torch_threads(report=None, stop=None):
    import sys
    already = "torch" in sys.modules            # imported at the worker's start?
    import torch
    return already, torch.get_num_threads()


def broken(report=None, stop=None):
    raise ValueError("bad knob")


@pytest.fixture(scope="module")
def pool():
    p = JobPool(workers=2, per_session=2, idle_s=0.5, hard_stop_s=1.5)
    yield p
    p.shutdown()


def _wait(cond, timeout=30.0):
    end = time.time() + timeout
    while time.time() < end:
        if cond():
            return True
        time.sleep(0.05)
    return False


def test_training_progress_counts_every_seed_and_cached_runs_in_full():
    """A 5-seed preset: Naive, Oracle and DLA per seed (15 jobs of 300 steps).  Seeds 0–3 come from
    the result cache (done, no step records); seed 4 is at step 150 in each of its three jobs.  The
    same method names recur across seeds, so the page's old count (the last step per method name over
    all records) said 450 of 4,500 — 10 % of a run that was 90 % done."""
    from ultr_core.studies.experiment import steps_done, training_progress

    class Job:
        def __init__(self, status, records):
            self.status, self.records = status, records

    names = ("Naive", "Oracle", "DLA")
    jobs = [Job("done", []) for _ in range(4) for _ in names]
    jobs += [Job("running", [{"algorithm": m, "step": s} for s in (50, 100, 150)]) for m in names]
    group = JobGroup(jobs)
    assert training_progress(group, 300) == (4 * 3 * 300 + 3 * 150, 4500)
    assert steps_done(group.records) == 450                              # what the page showed before
    running = Job("running", [{"algorithm": "DLA", "step": 400}])        # never beyond the job's steps
    assert training_progress(JobGroup([running]), 300) == (300, 300)


def test_at_most_workers_run_and_the_rest_queue_in_order(pool):
    assert _wait(lambda: pool.stats()["running"] == 0)
    jobs = [pool.submit(None, sleeper, 0.6, tag=str(i)) for i in range(5)]
    time.sleep(0.1)
    assert sum(j.status == "running" for j in jobs) == 2
    assert [j.position for j in jobs] == [0, 0, 1, 2, 3]
    assert [j.status for j in jobs[2:]] == ["queued"] * 3 and jobs[4].elapsed == 0.0
    assert all(j.join(30) for j in jobs)
    assert [j.result for j in jobs] == ["0", "1", "2", "3", "4"]
    starts = sorted((j.started_at, j) for j in jobs)
    assert [j.result for _, j in starts] == ["0", "1", "2", "3", "4"]          # first in, first out
    # never more than two at once: each start happens after an earlier job finished
    finishes = sorted(j.finished_at for j in jobs)
    assert starts[2][0] >= finishes[0] - 0.01 and starts[4][0] >= finishes[2] - 0.01
    assert pool.stats()["running"] == 0 and pool.stats()["queued"] == 0


def test_a_session_with_many_jobs_does_not_hold_back_a_later_one():
    """Fair order: "big" queues six jobs, then "small" two; a free worker takes the waiting job of the
    session with the fewest jobs running, so small's jobs start before big's last two (not after all six)."""
    p = JobPool(workers=2, per_session=10)
    try:
        big = [p.submit(None, sleeper, 0.4, tag=f"b{i}", session="big") for i in range(6)]
        small = [p.submit(None, sleeper, 0.4, tag=f"s{i}", session="small") for i in range(2)]
        time.sleep(0.1)
        # waiting: b2 b3 b4 b5 s0 s1; running: b0, b1 (big holds 2, small 0) → s0, s1 (small catches up), then big
        assert [j.position for j in small] == [1, 2]
        assert [j.position for j in big] == [0, 0, 3, 4, 5, 6]
        assert all(j.join(30) for j in big + small)
        order = [j.result for j in sorted(big + small, key=lambda j: j.started_at)]
        # FIFO would start s0, s1 last; fair: s0 on the first free worker, s1 before big's fifth job (when b1 ends,
        # small holds s0 and big nothing, so b2 starts; when s0 and b2 end at the same moment, as workers that start
        # at once make them, whichever is reported first decides between s1 and b3)
        assert set(order[:2]) == {"b0", "b1"} and order[2] == "s0" and order.index("s1") < order.index("b4")
        assert max(j.finished_at for j in small) < max(j.finished_at for j in big) - 0.2      # a round (0.4 s) earlier
    finally:
        p.shutdown()


def test_workers_run_at_a_lower_priority_than_the_server(pool):
    """Trainings yield the CPU to the server process answering pages (``ULTR_WORKER_NICE``, default 5)."""
    job = pool.submit(None, niceness)
    assert job.join(30) and job.result == os.nice(0) + int(os.environ.get("ULTR_WORKER_NICE", "5"))


def test_a_job_trains_on_one_torch_thread_and_a_bare_worker_never_imports_torch():
    """One thread per worker (no oversubscription), set before a job first imports torch; a worker whose jobs
    do not train (and that has no warm-up initializer) does not pay torch's import at its start."""
    p = JobPool(workers=1)                      # a fresh worker: no earlier job has imported torch in it
    try:
        job = p.submit(None, torch_threads)
        assert job.join(60) and job.result == (False, 1), job.result
    finally:
        p.shutdown()


def test_identical_keys_are_run_once_and_shared(pool):
    a = pool.submit(("same", 1), sleeper, 0.3, tag="shared", session="s1")
    b = pool.submit(("same", 1), sleeper, 0.3, tag="shared", session="s2")
    assert a is b and set(a.subscribers) == {"s1", "s2"} and a.watchers == 2
    e = pool.submit(("same", 1), sleeper, 0.3, tag="shared", session=None)        # the warm start: not a visitor
    g = JobGroup([a, pool.submit(("g", 1), sleeper, 0.3, tag="g", session="s2")])
    assert e is a and a.watchers == 2 and g.watchers == 2                         # s2 counted once in the group
    assert a.join(30) and a.result == "shared" and len(a.records) == 1
    c = pool.submit(("same", 1), sleeper, 0.3, tag="shared", session="s3")      # finished results are kept
    assert c is a and c.status == "done"
    d = pool.submit(("other", 1), sleeper, 0.05, tag="other")
    assert d is not a and d.join(30) and d.result == "other"


def test_failed_jobs_report_their_error_and_are_not_shared(pool):
    a = pool.submit(("broken",), broken)
    assert (
        a.join(30)
        and a.status == "failed"
        and a.error == "an unexpected error stopped it (the server log has the details)"
    )
    assert "ValueError: bad knob" in a.error_detail                              # the traceback, for the server log
    assert pool.submit(("broken",), broken) is not a


def test_a_session_may_hold_only_its_cap(pool):
    a = pool.submit(None, sleeper, 5, session="greedy")
    b = pool.submit(None, sleeper, 5, session="greedy")
    with pytest.raises(JobLimitError, match="limit is 2"):
        pool.submit(None, sleeper, 5, session="greedy")
    other = pool.submit(None, sleeper, 0.05, session="modest")               # others are not affected
    pool.release(a, "greedy")
    assert a.join(30) and a.status == "stopped"
    c = pool.submit(None, sleeper, 0.05, session="greedy")                    # a freed slot can be used
    pool.release(b, "greedy")
    assert all(j.join(30) for j in (b, c, other)) and c.result == "" and b.status == "stopped"


def test_release_stops_only_when_nobody_else_watches(pool):
    job = pool.submit(("watched",), sleeper, 1.0, session="a")
    pool.submit(("watched",), sleeper, 1.0, session="b")
    pool.release(job, "a")
    time.sleep(0.2)
    assert job.status == "running"
    pool.release(job, "b")
    assert job.join(30) and job.status == "stopped"
    assert pool.submit(("watched",), sleeper, 0.05, session="a") is not job  # a stopped job is not reused


def test_a_queued_job_that_is_released_never_runs(pool):
    assert _wait(lambda: pool.stats()["running"] == 0)
    blockers = [pool.submit(None, sleeper, 0.8) for _ in range(2)]
    queued = pool.submit(None, sleeper, 0.05, tag="never", session="leaver")
    assert queued.status == "queued" and queued.position == 1
    pool.release(queued, "leaver")
    assert queued.join(1) and queued.status == "stopped" and queued.records == [] and queued.started_at is None
    assert all(b.join(30) for b in blockers)


def test_stop_all_stops_running_and_drops_queued_jobs():
    p = JobPool(workers=1, per_session=4, hard_stop_s=5)
    try:
        running, queued = p.submit(("all", 1), sleeper, 30, "a"), p.submit(("all", 2), sleeper, 30, "b")
        assert _wait(lambda: running.records)                   # the first one runs, the second waits
        assert p.stop_all() == 2
        assert running.join(10) and queued.join(10)
        assert running.status == "stopped" and running.result == "stopped"
        assert queued.status == "stopped" and not queued.records  # dropped before it ran
        assert p.stop_all() == 0 and p.stats()["running"] == 0
    finally:
        p.shutdown()


def test_jobs_of_sessions_that_are_gone_are_stopped():
    live = {"open-tab"}
    p = JobPool(workers=1, idle_s=0.5, alive=lambda s: s in live)
    try:
        job = p.submit(None, sleeper, 30, session="closed-tab")
        kept = p.submit(None, sleeper, 0.5, session="open-tab")   # queued behind it, its session is open
        assert _wait(lambda: job.status == "running")
        assert job.join(30) and job.status == "stopped"           # nobody polled it for idle_s, tab gone
        assert kept.join(30) and kept.status == "done"            # queued job of a live session ran
    finally:
        p.shutdown()


def test_a_worker_that_ignores_stop_is_replaced(pool):
    job = pool.submit(None, stubborn, 60)
    assert _wait(lambda: len(job.records) == 1)
    pid = job.records[0]["pid"]
    job.stop()
    assert job.join(30) and job.status == "stopped"
    after = pool.submit(None, sleeper, 0.05, tag="after")
    assert after.join(30) and after.result == "after"
    assert _wait(lambda: all(w.proc.is_alive() for w in pool._pool))
    assert not any(w.proc.pid == pid and w.proc.is_alive() for w in pool._pool)


def test_shutdown_never_spawns_replacement_workers():
    """The reaper thread may wake just before a shutdown and wait for the lock while the workers exit
    on purpose; it must not take them for crashed ones and spawn replacements (orphans that then fail
    to attach to the closing pool's queue: the SemLock FileNotFoundError seen in CI logs)."""
    p = JobPool(workers=1, idle_s=0.5)
    original = p._pool[0]
    with p._lock:                     # the reaper wakes (every 0.5 s) and blocks on the lock here …
        time.sleep(0.8)
        p._closed.set()               # … while a shutdown begins and the worker exits
        original.inq.put(None)
        original.proc.join(10)
    time.sleep(1.0)                   # the reaper has the lock now
    assert p._pool[0] is original and not original.proc.is_alive()     # no replacement was spawned
    p.shutdown()


def test_a_pool_never_shut_down_spawns_no_workers_at_interpreter_exit():
    """At exit multiprocessing terminates a pool's daemonic workers; the pool's exit hook (registered when the
    pool starts) closes it first, so the reaper does not replace them."""
    from ultr_core.app.jobpool import _closed_at_exit
    p = JobPool(workers=1, idle_s=0.5)
    original = p._pool[0]
    _closed_at_exit(weakref.ref(p))              # the hook, run as the interpreter exits
    original.proc.terminate()                    # what multiprocessing's own exit hook does next
    original.proc.join(10)
    time.sleep(1.2)                              # two reaper ticks
    assert p._closed.is_set() and p._pool[0] is original and not original.proc.is_alive()
    p.shutdown()


def test_server_singletons_are_built_once_when_sessions_ask_at_the_same_moment():
    """pages/_common.py's ``_once``: eight session threads asking for the job pool at one moment get
    one pool (``functools.cache`` alone built one per racing thread: two pools, twice the workers)."""
    import sys
    import threading
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from pages._common import _once
    built = []

    def make():
        time.sleep(0.2)                       # a pool start takes a while: the window of the race
        built.append(object())
        return built[-1]
    get = _once(make)
    got, start = [], threading.Barrier(8)

    def ask():
        start.wait()
        got.append(get())
    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(built) == 1 and all(g is built[0] for g in got)


# --- pages/_streamlit_fix.py: a fragment rerun must not start a new ScriptRunner before the stopped one's
# events were delivered (the Streamlit 1.67 race that left a page without its last full run) -----------------

class _FakeRunner:
    def __init__(self, accepts=True):
        self.accepts, self.requests = accepts, []

    def request_rerun(self, data):
        self.requests.append(data)
        return self.accepts


class _FakeSession:
    """What the wrapper reads of an AppSession: the current runner, the event loop and the state."""
    def __init__(self, loop, runner):
        self._event_loop, self._scriptrunner, self._state = loop, runner, None


def _rerun(fragment_id):
    import types
    return types.SimpleNamespace(fragment_id=fragment_id)


def _drive(session, wrapped, data, old_events, shutdown_after=0.0):
    """Queue the stopped runner's events (as its thread does before it stops), then the request, and run
    the loop until the wrapper is done; returns what the session had received when a runner was created."""
    import asyncio
    loop = session._event_loop
    delivered, created = [], []

    def original(self, d):
        created.append((list(delivered), d))
    fn = wrapped(original)
    for e in old_events:
        loop.call_soon(delivered.append, e)

    def shutdown():
        delivered.append("SHUTDOWN")
        session._scriptrunner = None
    loop.call_later(shutdown_after, shutdown) if shutdown_after else loop.call_soon(shutdown)
    fn(session, data)
    loop.run_until_complete(asyncio.sleep(shutdown_after + 0.1))
    return created


def test_a_fragment_rerun_waits_for_the_stopped_runners_events():
    """The stopped runner's deltas and script_finished reach the session before the new runner starts
    (Streamlit's own order starts it at once, and then drops them as events from a non-current runner)."""
    import asyncio

    from pages._streamlit_fix import deferred_create
    loop = asyncio.new_event_loop()
    try:
        old = _FakeRunner(accepts=False)
        events = ["delta: table", "delta: caption", "script_finished"]
        created = _drive(_FakeSession(loop, old), deferred_create, _rerun("frag"), events)
        assert created == [(events + ["SHUTDOWN"], _rerun("frag"))]
        # even when the SHUTDOWN comes late (the runner's thread still winding down)
        created = _drive(_FakeSession(loop, old), deferred_create, _rerun("frag"), events, shutdown_after=0.05)
        assert len(created) == 1 and created[0][0] == events + ["SHUTDOWN"]
        # Streamlit's own order (no wrapper) creates the runner before any of them arrived
        created = _drive(_FakeSession(loop, old), lambda original: original, _rerun("frag"), events)
        assert created == [([], _rerun("frag"))]
    finally:
        loop.close()


def test_full_reruns_and_newer_runners_are_left_to_streamlit():
    import asyncio

    from pages._streamlit_fix import deferred_create
    loop = asyncio.new_event_loop()
    try:
        calls = []
        fn = deferred_create(lambda self, d: calls.append(d))
        fn(_FakeSession(loop, _FakeRunner()), _rerun(None))           # a full rerun: created at once
        assert calls == [_rerun(None)]
        calls.clear()
        session = _FakeSession(loop, _FakeRunner(accepts=False))
        newer = _FakeRunner(accepts=True)
        fn(session, _rerun("frag"))
        session._scriptrunner = newer                                  # a full rerun started meanwhile
        loop.run_until_complete(asyncio.sleep(0.05))
        assert calls == [] and newer.requests == [_rerun("frag")]    # handed to it, no second runner
    finally:
        loop.close()


def test_the_fix_is_installed_on_streamlit():
    from streamlit.runtime.app_session import AppSession

    import pages._common  # noqa: F401  (installs it)
    assert getattr(AppSession._create_scriptrunner, "_ultr_fix", False)

