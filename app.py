"""The KL-regularized RL explorer. Run with `streamlit run app.py`.

Streamlit serves the navigation shell, explorer.py, through its ASGI app (st.App) with one
addition, klrl_app/serve.py: a link to a path below a page (``/tilt/extra``) is sent to the
app's page-not-found view instead of a blank page (Streamlit would answer it with its index
page, whose scripts then resolve under /tilt/ and fail to load).
"""

import streamlit as st
from starlette.middleware import Middleware

from klrl_app.serve import NestedPathToNotFound

app = st.App("explorer.py", middleware=[Middleware(NestedPathToNotFound)])
