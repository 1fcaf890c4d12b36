"""The KL-regularized RL explorer. Run with `streamlit run app.py`.

Streamlit serves the navigation shell, explorer.py, through its ASGI app (st.App) with these
additions (klrl_app/serve.py, klrl_app/classroom/live.py and Starlette's own middleware):
- a link to a path below a page (``/tilt/extra``) is sent to the app's page-not-found view
  instead of a blank page (Streamlit would answer it with its index page, whose scripts then
  resolve under /tilt/ and fail to load);
- every text response is gzipped when the browser accepts it (Starlette's GZipMiddleware:
  Streamlit 1.67 leaves its scripts and its root page uncompressed);
- Streamlit's icon and text fonts are sent cut to the icons named and the scripts written
  (683 kB -> 211 kB, klrl_app/fonts.py);
- immutable assets (Streamlit's hashed scripts, the app's hashed plotly.js) are compressed
  once per process and sent from memory, the app's with a year-long cache lifetime;
- a page's HTML names the plotly.js bundle its charts load (preload), so a phone fetches it
  alongside Streamlit's scripts;
- a page request without the ``klrl_student`` cookie gets one (a class session tells its
  students apart by it). Beside Streamlit's routes, /klrl-class/<code>/pulse holds each class
  member's browser until the class changes (klrl_app/classroom/live.py): a class waiting on a
  question costs no script runs.
"""

import streamlit as st
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware

from klrl_app.classroom.live import ROUTES as CLASS_ROUTES
from klrl_app.serve import (
    ImmutableAssets,
    NestedPathToNotFound,
    PreloadPlotly,
    SmallFonts,
    StudentCookie,
    TABLE_ROUTES,
)

app = st.App(
    "explorer.py",
    routes=CLASS_ROUTES + TABLE_ROUTES,
    middleware=[
        Middleware(NestedPathToNotFound),
        Middleware(StudentCookie),
        Middleware(SmallFonts),
        Middleware(ImmutableAssets),
        Middleware(GZipMiddleware, minimum_size=500),
        Middleware(PreloadPlotly),
    ],
)
