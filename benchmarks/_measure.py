"""Tiny helpers shared by the benchmark scripts: wall time and peak memory."""
from __future__ import annotations

import resource
import time
import tracemalloc
from contextlib import contextmanager


@contextmanager
def measure(label: str, results: dict):
    """Record wall seconds and peak traced memory (numpy allocations included) of a block."""
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        yield
    finally:
        seconds = time.perf_counter() - t0
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        results[label] = {"seconds": round(seconds, 3), "peak_mb": round(peak / 2**20, 1),
                          "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}
        print(f"{label:<48s} {seconds:8.2f} s   traced peak {peak / 2**20:8.1f} MB   "
              f"process max RSS {results[label]['max_rss_mb']:8.1f} MB", flush=True)
