"""ULTR Explorer — entry point: `streamlit run app.py`.

Pages live in pages/ and stay thin: widgets → one ultr_core call → a figure factory.
"""
import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

# pages/ is read by st.navigation below, not by Streamlit's legacy folder discovery, whatever URL
# the first visit after a server start asks for (see pages/_common.py: run_page).
PagesManager.uses_pages_directory = False

st.set_page_config(page_title="ULTR Explorer", page_icon=":material/travel_explore:", layout="wide")

PAGES = [
    st.Page("pages/playground.py", title="Playground", icon=":material/toys:", default=True),
    st.Page("pages/home.py", title="Home", icon=":material/home:", url_path="home"),
    st.Page("pages/simulate.py", title="Simulate", icon=":material/casino:"),
    st.Page("pages/train.py", title="Train & watch", icon=":material/monitoring:"),
    st.Page("pages/compare.py", title="Compare", icon=":material/balance:"),
    st.Page("pages/heatmaps.py", title="Heat-maps", icon=":material/grid_on:"),
    st.Page("pages/identifiability.py", title="Identifiability", icon=":material/hub:"),
    st.Page("pages/upload.py", title="Upload a log", icon=":material/upload_file:"),
]

st.navigation(PAGES).run()
