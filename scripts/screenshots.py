"""Refresh README's screenshots with the browser test's flow: python scripts/screenshots.py"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))   # the browser helpers, tests/browser_flow.py
from browser_flow import run_main_flow, run_playground, serve_app  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


out = ROOT / "docs" / "screenshots"
out.mkdir(parents=True, exist_ok=True)
with serve_app() as url:
    seen = run_main_flow(url, screenshots=out)
    seen.update({f"playground_{k}": v for k, v in run_playground(url, out / "playground.png").items() if k != "url"})
print(json.dumps({k: round(v, 2) if isinstance(v, float) else v for k, v in seen.items()}))
