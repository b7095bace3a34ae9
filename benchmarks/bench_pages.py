"""First render time of every page (AppTest, fresh process state per page; target < 2 s).

    python benchmarks/bench_pages.py
"""
import logging
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.chdir(ROOT)
logging.disable(logging.WARNING)

from streamlit.testing.v1 import AppTest  # noqa: E402

for name in ("home", "simulate", "train", "compare", "heatmaps", "identifiability", "upload"):
    at = AppTest.from_file(str(ROOT / "pages" / f"{name}.py"), default_timeout=120)
    t0 = time.perf_counter()
    at.run()
    dt = time.perf_counter() - t0
    status = "exception" if at.exception else "ok"
    print(f"{name:16s} {dt:6.2f} s  {status}")
    sys.stdout.flush()
