"""The app's pages as one table (:data:`PAGES`): ``app.py`` builds its navigation from it, and the tests and the
page benchmark take their lists of pages from it — so a page added here is opened by every page test.

>>> [p.file for p in PAGES][:2], PAGES[0].default
(['playground.py', 'home.py'], True)
"""
from __future__ import annotations

from ultr_core.app.pagespec import PageSpec
from ultr_core.extensions import extra

__all__ = ["PageSpec", "PAGES"]


PAGES = (
    PageSpec("playground.py", "Playground", ":material/toys:", default=True, controls_help=False),
    PageSpec("home.py", "Home", ":material/home:", url_path="home", controls_help=False),
    PageSpec("simulate.py", "Simulate", ":material/casino:"),
    PageSpec("train.py", "Train & watch", ":material/monitoring:"),
    PageSpec("compare.py", "Compare", ":material/balance:"),
    PageSpec("heatmaps.py", "Heat-maps", ":material/grid_on:"),
    PageSpec("identifiability.py", "Identifiability", ":material/hub:"),
    PageSpec("upload.py", "Upload a log", ":material/upload_file:"),
)
PAGES += extra("PAGES")                          # records of extension modules (ultr_core.extensions)
