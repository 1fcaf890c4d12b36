"""Class session: a lecturer asks the class a prediction question before the figure answers it.

Without a session the page starts one or takes a typed join code. With ``class=<code>&key=<key>``
in the address it is the lecturer's console; with ``class=<code>`` alone, a student's view. The
machinery (the store, the live updates, the screens) is in klrl_app/classroom.
"""

import html

import streamlit as st

from klrl_app.classroom import store as cs, ui
from klrl_app.controls import PRESENT_KEY
from klrl_app.layout import PRESENT_CSS, ensure_app_navigation, presenting, _read_present_link

ensure_app_navigation()
_read_present_link()
if presenting():
    st.html(f"<style>{PRESENT_CSS}</style>")
st.html("<style>" + ui.CSS + "</style>")

code = cs.normal_code(st.query_params.get("class", ""))
key = st.query_params.get("key")
me = ui.joined()
if not code and me is not None:      # back to the class page from a figure page
    code, key = me["code"], me.get("key")
    st.query_params.from_dict({"class": code, **({"key": key} if key else {})})

with st.container(horizontal=True, vertical_alignment="bottom", gap="small", key="klrl-head"):
    title = "Class session" + (f" {code}" if code and key else "")
    st.markdown(f"<h1 class='klrl-title'>{html.escape(title)}</h1>"
                "<p class='klrl-ref'>Predict, then see: the class answers before the figure "
                "does</p>", unsafe_allow_html=True, width="stretch")
    if key:
        st.toggle("Presentation view", key=PRESENT_KEY, width="content",
                  help="For a projector: larger type, no sidebar.")

db = ui.store()
if db is None:
    st.error("The class database cannot be reached, so class sessions are off for now. "
             "Every figure page works as before.")
    st.stop()

session = db.session(code) if code else None
if not code:
    ui.start_or_join(db)
elif session is None:
    ui.forget()
    ui.start_or_join(db, f"No running class has the code {code}: it may have ended (a session "
                         "ends 12 hours after its last activity) or be mistyped. Type the code "
                         "shown by the lecturer.")
elif key:
    if db.is_lecturer(code, key):
        ui.remember(code, key, session)
        ui.console(db, code, key)
    else:
        ui.forget()
        ui.start_or_join(db, f"This address holds a key that does not open class {code}, so "
                             "this page shows no lecturer controls. To join as a student, type "
                             "the code below.")
else:
    ui.remember(code, None, session)
    ui.student(code)
