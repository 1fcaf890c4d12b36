"""The KL-regularized RL explorer. Run with `streamlit run app.py`.

Streamlit serves the navigation shell, explorer.py, through its ASGI app (st.App) with one
addition, klrl_app/serve.py: a link to a path below a page (``/tilt/extra``) is sent to the
app's page-not-found view instead of a blank page (Streamlit would answer it with its index
page, whose scripts then resolve under /tilt/ and fail to load); a page request without the
``klrl_student`` cookie gets one (a class session tells its students apart by it). Beside
Streamlit's routes, /klrl-class/<code>/pulse holds each class member's browser until the class
changes (klrl_app/classroom/live.py): a class waiting on a question costs no script runs.
"""

import streamlit as st
from starlette.middleware import Middleware

from klrl_app.classroom.live import ROUTES as CLASS_ROUTES
from klrl_app.serve import NestedPathToNotFound, StudentCookie

app = st.App("explorer.py", routes=CLASS_ROUTES,
             middleware=[Middleware(NestedPathToNotFound), Middleware(StudentCookie)])
