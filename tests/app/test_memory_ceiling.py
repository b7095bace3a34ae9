"""One memory ceiling for the server (issue #49): uploads wait their turn, and what a closed tab held comes back.
The whole-server figures (three 190 MB uploads at once) are benchmarks/bench_upload_memory.py's."""
from __future__ import annotations

import threading
import time

import pytest

from ultr_core.app.lrucache import ByteLRU
from ultr_core.app.memory import Left, MemoryGate, upload_slots


def test_uploads_take_the_gate_in_order_and_say_their_place():
    gate, order, said = MemoryGate(slots=1), [], []
    first = threading.Event()

    def waiting(*names, limit=5.0):          # until each of ``names`` has said its place (events, not sleeps: the
        end = time.monotonic() + limit       # fixed sleeps lost the order on a loaded machine)
        while not {n for n, *_ in said} >= set(names) and time.monotonic() < end:
            time.sleep(0.01)

    def visitor(name):
        with gate.hold(on_wait=lambda ahead, busy: said.append((name, ahead, busy)), poll=0.01):
            order.append(name)
            if name == "a":
                first.set()
                waiting("b", "c")            # a holds the slot until both wait behind it
    a = threading.Thread(target=visitor, args=("a",))
    a.start()
    first.wait(5)
    b = threading.Thread(target=visitor, args=("b",))
    b.start()
    waiting("b")                             # b is queued before c arrives
    c = threading.Thread(target=visitor, args=("c",))
    c.start()
    for t in (a, b, c):
        t.join(5)
    assert order == ["a", "b", "c"] and gate.busy == 0
    assert ("b", 0, 1) in said and ("c", 1, 1) in said          # c saw b ahead of it while a ran


def test_a_visitor_who_leaves_while_waiting_computes_nothing():
    gate = MemoryGate(slots=1)
    with gate.hold():
        with pytest.raises(Left):
            with gate.hold(stop=lambda: True, poll=0.01):
                raise AssertionError("never reached")
    assert gate.busy == 0 and not gate._waiting


def test_the_stated_ceiling_gives_the_slots():
    assert upload_slots(3 * 2 ** 30) == 2 and upload_slots(1) == 1


def test_a_closed_tabs_cache_entries_and_finished_jobs_are_released():
    from ultr_core.app.jobpool import ARGS_KEPT_BYTES, JobPool
    cache = ByteLRU(10 ** 9)
    cache.get_or_compute(("user-log", "abc"), lambda: b"x" * 1000, owner="tab")
    cache.get_or_compute(("logspec", "synthetic"), lambda: b"y" * 10)                  # shared: stays
    assert cache.release(lambda s: s == "other") == 0 and cache.release(lambda s: s == "tab") == 1000
    assert cache.keys() == [("logspec", "synthetic")]
    pool = JobPool(workers=1)
    try:
        big = pool.submit(("cm", 1), _echo_len, b"z" * (ARGS_KEPT_BYTES + 1), session="tab")
        small = pool.submit(("spec", 1), _echo_len, b"s", session="tab")
        warm = pool.submit(("warm", 1), _echo_len, b"w")                               # no visitor
        assert big.join(60) and small.join(60) and warm.join(60)
        assert big.result == ARGS_KEPT_BYTES + 1 and big._args == () and small._args == (b"s",)
        assert pool.submit(("cm", 1), _echo_len, b"", session="tab2") is big                # shared while kept
        assert pool.forget_finished(lambda s: s in ("tab", "tab2")) == 2                            # warm's stays
        assert pool.submit(("warm", 1), _echo_len, b"w") is warm
    finally:
        pool.shutdown()


def _echo_len(data, report=None, stop=None):
    return len(data)
