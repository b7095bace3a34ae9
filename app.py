"""ULTR Explorer — entry point: `streamlit run app.py`.

Pages live in pages/ and stay thin: widgets → one ultr_core call → a figure factory.
"""
import streamlit as st

st.set_page_config(page_title="ULTR Explorer", page_icon="🔎", layout="wide")

PAGES = [
    st.Page("pages/home.py", title="Home", icon="🏠", default=True),
    st.Page("pages/simulate.py", title="Simulate", icon="🎲"),
    st.Page("pages/train.py", title="Train & watch", icon="📈"),
    st.Page("pages/compare.py", title="Compare", icon="⚖️"),
    st.Page("pages/heatmaps.py", title="Heat-maps", icon="🟦"),
    st.Page("pages/identifiability.py", title="Identifiability", icon="🕸️"),
    st.Page("pages/upload.py", title="Upload a log", icon="📤"),
]

st.navigation(PAGES).run()
