"""The printable handout (issue 34, item 4): the bank's prediction questions by page, then
their answers after a page break. Everything is built in klrl_app/classroom/handout.py; this
page lays it out with its print rules and offers it as a download."""

import streamlit as st

from klrl_app.classroom import handout
from klrl_app.layout import ensure_app_navigation

ensure_app_navigation()
st.html(f"<style>{handout.HANDOUT_CSS}{handout.PRINT_CSS}</style>")
base = handout.base_of(st.context.url)
st.html(f"<div class='klrl-handout'>{handout.header_html()}</div>")
with st.container(key="handout-tools", gap="small"):
    st.markdown("Print it from the browser (A4 or Letter; the answers start on a new sheet) "
                "or download it:")
    with st.container(horizontal=True, gap="small"):
        st.download_button("HTML", lambda: handout.standalone_html(base).encode("utf-8"),
                           file_name="klrl-handout.html", mime="text/html", key="handout-html",
                           icon=":material/download:", on_click="ignore",
                           help="One file that prints on its own, with links to this app.")
        st.download_button("Markdown", lambda: handout.markdown(base).encode("utf-8"),
                           file_name="klrl-handout.md", mime="text/markdown", key="handout-md",
                           icon=":material/download:", on_click="ignore")
        st.download_button("CSV", lambda: handout.csv_text(base).encode("utf-8"),
                           file_name="klrl-handout.csv", mime="text/csv", key="handout-csv",
                           icon=":material/download:", on_click="ignore",
                           help="One row per question, with its answer and explanation.")
# The first visit in a server process computes every answer (a few seconds: the bandit's
# 4,000 runs, the loop's runs, the KL experiment); later visits take a tenth of a second.
with st.spinner("Computing every answer…"):
    content = handout.content_html(base)
st.html(content)
