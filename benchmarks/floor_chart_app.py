"""The first-load floor: a plain Streamlit app with one slider and one st.plotly_chart
(benchmarks/first_load.py --phone measures it beside the app's pages)."""

import plotly.graph_objects as go
import streamlit as st

x = st.slider("x", 0, 100, 50)
st.plotly_chart(go.Figure(go.Bar(x=["a", "b", "c"], y=[x, 100 - x, 50])), theme=None)
