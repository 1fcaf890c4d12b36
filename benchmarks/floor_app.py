"""The latency floor: one slider and one line of readout, nothing else (benchmarks/latency.py).

The line has the markup of the app's readout (klrl_app.layout.Page.readout), so the benchmark
reads both the same way."""

import streamlit as st

x = st.slider("x", 0, 100, 50)
st.markdown(
    "<div class='klrl-readout' role='status' aria-live='polite'><span class='klrl-item'>"
    f"<span class='klrl-label'>value</span> <span class='klrl-value'>{x}</span></span>"
    "</div>",
    unsafe_allow_html=True,
)
