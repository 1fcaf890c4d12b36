"""The latency floor: one slider and one line of readout, nothing else (benchmarks/latency.py)."""
import streamlit as st

st.metric("value", st.slider("x", 0, 100, 50))
