"""Placeholder: this page is being built."""

import streamlit as st

st.title("Coming soon")
st.info("This figure is being built and will appear here shortly.")
