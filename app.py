"""ULTR Explorer — entry point: `streamlit run app.py`.

Pages live in pages/ and stay thin: widgets → one ultr_core call → a figure factory.
"""
import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

from ultr_core.app.pagetable import PAGES as PAGE_TABLE

# pages/ is read by st.navigation below, not by Streamlit's legacy folder discovery, whatever URL
# the first visit after a server start asks for (see pages/_common.py: run_page).
PagesManager.uses_pages_directory = False

st.set_page_config(page_title="ULTR Explorer", page_icon=":material/travel_explore:", layout="wide")

# one st.Page per record of the page table (ultr_core.app.pagetable.PAGES), which the tests and benchmarks read too
PAGES = [st.Page(p.path, title=p.title, icon=p.icon, default=p.default,
                 **({"url_path": p.url_path} if p.url_path else {}))
         for p in PAGE_TABLE]

st.navigation(PAGES).run()
