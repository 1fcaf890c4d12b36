"""The KL-regularized RL explorer. Run with `streamlit run app.py`.

Streamlit serves the navigation shell, explorer.py, through its ASGI app (st.App) with three
additions (klrl_app/serve.py and Starlette's own middleware):
- a link to a path below a page (``/tilt/extra``) is sent to the app's page-not-found view
  instead of a blank page (Streamlit would answer it with its index page, whose scripts then
  resolve under /tilt/ and fail to load);
- every text response is gzipped when the browser accepts it (Starlette's GZipMiddleware:
  Streamlit 1.67 leaves its scripts and its root page uncompressed);
- immutable assets (Streamlit's hashed scripts, the app's hashed plotly.js) are compressed
  once per process and sent from memory, the app's with a year-long cache lifetime;
- a page's HTML names the plotly.js bundle its charts load (preload), so a phone fetches it
  alongside Streamlit's scripts.
"""

import streamlit as st
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware

from klrl_app.serve import ImmutableAssets, NestedPathToNotFound, PreloadPlotly

app = st.App("explorer.py", middleware=[
    Middleware(NestedPathToNotFound),
    Middleware(ImmutableAssets),
    Middleware(GZipMiddleware, minimum_size=500),
    Middleware(PreloadPlotly),
])
