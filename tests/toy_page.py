"""A toy page for the one-table test: one record in the page table, one widget."""
import streamlit as st

st.title("Toy page")
st.slider("a toy knob", 0, 10, 3, key="toy_knob", help="a toy")
