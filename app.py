"""The KL-regularized RL explorer: navigation shell. Run with `streamlit run app.py`."""

import ctypes
import gc
import threading
import time

import streamlit as st

from klrl_app.nav import PAGES


def _return_freed_memory(every_s: float = 30.0) -> None:
    """Every ``every_s`` seconds, hand the heap pages freed by finished script runs back to the
    OS (glibc's malloc_trim). glibc keeps them in per-thread arenas, and Streamlit runs each
    script run in a new thread: without this the server held 16-26 % more memory after a class
    than before it (benchmarks/RESULTS.md). A daemon thread; the call itself releases the GIL."""
    try:
        trim = ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return  # not glibc (macOS, Windows, musl): nothing to do

    def loop() -> None:
        while True:
            time.sleep(every_s)
            trim(0)

    threading.Thread(target=loop, name="klrl-malloc-trim", daemon=True).start()


@st.cache_resource
def _prepare_process() -> bool:
    """Once per server process: start returning freed memory, and move everything imported so
    far (Streamlit, NumPy, pandas, Plotly) out of the garbage collector's reach. Streamlit
    collects after every script run; without the freeze each slider move spends ~50 ms
    rescanning those long-lived library objects."""
    import klrl_app.tilt_figures  # noqa: F401  (the heavy imports, before freezing)

    _return_freed_memory()
    gc.collect()
    gc.freeze()
    return True


_prepare_process()

st.set_page_config(page_title="KL-regularized RL explorer", page_icon=":material/tune:",
                   layout="wide")

home = st.Page("pages/home.py", title="Home", icon=":material/home:", default=True)
sections: dict[str, list] = {"": [home]}
for p in PAGES:
    sections.setdefault(p.section, []).append(
        st.Page(p.file, title=p.title, icon=p.icon, url_path=p.url_path))

page = st.navigation(sections, position="sidebar", expanded=True)

# Small touches the theme cannot express: readable readout sentence, tighter top padding.
st.markdown(
    """<style>
    .block-container {padding-top: 2.2rem; max-width: 1400px;}
    h1 {font-size: clamp(1.75rem, 4.2vw, 2.5rem) !important;}
    h2, h3 {font-size: clamp(1.25rem, 3vw, 1.6rem) !important;}
    .klrl-readout {font-size: 1.02rem; line-height: 1.55; margin: 0.2rem 0 0.6rem 0;}
    [data-testid="stMetricValue"] {font-size: clamp(1.2rem, 3.2vw, 1.6rem);}
    /* chart legends in the theme's text colour (plots.TEMPLATE keeps the rest neutral) */
    .klrl-chart .legendtext,
    [data-testid="stPlotlyChart"] .legendtext {fill: currentColor !important;}
    /* layout.small_table: labels left, formatted numbers right-aligned like numbers */
    [data-testid="stTable"] td, [data-testid="stTable"] thead th:not(:first-child)
      {text-align: right !important; font-variant-numeric: tabular-nums;}
    [data-testid="stMetric"] {padding: 0.45rem 0.8rem !important; min-width: 8.5rem;}
    @media (max-width: 640px) {
      /* two readout cards a row on phones */
      [data-testid="stElementContainer"]:has(> [data-testid="stMetric"]) {
        flex: 1 1 calc(50% - 1rem) !important; min-width: 0 !important; max-width: calc(50% - 0.5rem);}
      [data-testid="stMetric"] {padding: 0.3rem 0.55rem !important; min-width: 0; width: 100%;}
      [data-testid="stMetricValue"] {font-size: 1.15rem;}
      [data-testid="stMetricLabel"] * {font-size: 0.8rem; white-space: normal !important;
        overflow: visible !important; text-overflow: clip !important;}
      /* a long value ("0.55 at 3.2 nats") wraps instead of ending in an ellipsis */
      [data-testid="stMetricValue"] * {white-space: normal !important;
        overflow: visible !important; text-overflow: clip !important;}
    }
    </style>""",
    unsafe_allow_html=True,
)
page.run()
