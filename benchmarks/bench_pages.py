"""First render time of every page (AppTest, fresh process state per page; target < 2 s).

    python benchmarks/bench_pages.py
"""
import logging
import os
import sys
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

from ultr_core.app.pagetable import PAGES

ROOT = Path(__file__).resolve().parents[1]
os.chdir(ROOT)
logging.disable(logging.WARNING)


for page in PAGES:
    name = page.file.removesuffix(".py")
    at = AppTest.from_file(str(ROOT / page.path), default_timeout=120)
    t0 = time.perf_counter()
    at.run()
    dt = time.perf_counter() - t0
    status = "exception" if at.exception else "ok"
    print(f"{name:16s} {dt:6.2f} s  {status}")
    if "pg_job" in at.session_state:                # the Playground starts training on first open
        at.session_state["pg_job"].stop()
    sys.stdout.flush()
