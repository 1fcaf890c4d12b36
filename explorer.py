"""The KL-regularized RL explorer: navigation shell. Run with `streamlit run app.py`."""

import ctypes
import gc
import threading
import time

from pathlib import Path

import streamlit as st

from klrl_app.nav import PAGES
from klrl_app.serve import keep_deferred_downloads


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
    keep_deferred_downloads()
    gc.collect()
    gc.freeze()
    return True


_prepare_process()

# The favicon is the app's own file: a material icon would be fetched from a font server at
# every load (fails in an offline classroom, and tells a third party who opened the app).
st.set_page_config(
    page_title="KL-regularized RL explorer",
    page_icon=str(Path(__file__).parent / "klrl_app" / "favicon.png"),
    layout="wide",
)

home = st.Page("pages/home.py", title="Home", icon=":material/home:", default=True)
sections: dict[str, list] = {"": [home]}
for p in PAGES:
    sections.setdefault(p.section, []).append(
        st.Page(p.file, title=p.title, icon=p.icon, url_path=p.url_path)
    )

page = st.navigation(sections, position="sidebar", expanded=True)

# Small touches the theme cannot express: the classroom layout's compact header and readout
# (klrl_app/layout.py), captions that keep 4.5:1 contrast in both themes, tables, phones.
st.markdown(
    """<style>
    .block-container {padding-top: 2.6rem; padding-bottom: 3rem; max-width: 1400px;}
    .klrl-title {font-size: clamp(1.35rem, 3.2vw, 1.9rem) !important; font-weight: 700;
      line-height: 1.2; margin: 0 !important; padding: 0 !important;}
    .klrl-ref {margin: 0.1rem 0 0 0; font-size: 0.92rem;}
    /* the header keeps Reset and the presentation switch beside the title on a wide screen:
       the title's lines wrap rather than push them onto a row of their own */
    @media (min-width: 641px) {.st-key-klrl-head {flex-wrap: nowrap !important;}}
    /* Reset is its icon (a circular arrow, as in PhET's simulations); its name stays for
       screen readers and its tooltip says what it does */
    .st-key-reset button [data-testid="stMarkdownContainer"] {position: absolute; width: 1px;
      height: 1px; overflow: hidden; clip: rect(0, 0, 0, 0); white-space: nowrap;}
    .st-key-reset button {padding-left: 0.6rem; padding-right: 0.6rem;}
    h1, h2, h3 {scroll-margin-top: 4rem;}
    h2.klrl-h, .klrl-look h2 {font-size: clamp(1.1rem, 2.6vw, 1.3rem) !important;
      font-weight: 650; margin: 0.6rem 0 0.2rem 0 !important; padding: 0 !important;}
    .klrl-look p {font-size: 1.02rem; line-height: 1.6; max-width: 75rem;}
    /* the readout: the numbers once, in one line that wraps; values in bold */
    .klrl-readout {font-size: 1.08rem; line-height: 1.5; margin: 0.1rem 0 0.2rem 0;}
    .klrl-item {white-space: nowrap;}
    .klrl-value {font-weight: 700; font-variant-numeric: tabular-nums;}
    .klrl-sep {opacity: 0.8;}
    /* captions in the theme's own text colour (Streamlit's faded grey is 4.0:1 on white) */
    [data-testid="stCaptionContainer"], [data-testid="stCaptionContainer"] * {
      color: inherit !important; opacity: 0.92;}
    /* chart legends in the theme's text colour (live_chart.js colours the rest) */
    .klrl-chart .legendtext,
    [data-testid="stPlotlyChart"] .legendtext {fill: currentColor !important;}
    /* the instant driver and its table of stops (klrl_app/instant.py) draw nothing */
    [class*="st-key-klrl-instant-"] {display: none !important;}
    /* a class session's live updates (klrl_app/classroom/live.py) draw nothing either, but
       the truth that comes with a reveal's news (live.js), until the student's run draws it */
    [class*="st-key-klrl-class-live"]:not(:has(.klrl-class-early)) {display: none !important;}
    body:has(.klrl-class-early) .st-key-class-answer-box {display: none !important;}
    /* primary buttons: white text on a blue that holds 4.5:1 in both themes (the dark
       theme's primary, #60a5fa, gives white text 2.5:1) */
    [data-testid="stBaseButton-primary"] {background-color: #2563eb !important;
      border-color: #2563eb !important; color: #ffffff !important;}
    [data-testid="stBaseButton-primary"]:hover {background-color: #1d4ed8 !important;
      border-color: #1d4ed8 !important;}
    /* a stop under the thumb whose numbers are still being computed (instant.js) */
    .klrl-chart.klrl-computing > .plot-container {opacity: 0.25;}
    .klrl-chart.klrl-computing::after {content: "computing…"; position: absolute; left: 0;
      right: 0; top: 42%; text-align: center; font-size: 1.1rem; pointer-events: none;}
    .klrl-sr-only {position: absolute; width: 1px; height: 1px; overflow: hidden;
      clip: rect(0, 0, 0, 0); white-space: nowrap;}
    /* layout.small_table: labels left, formatted numbers right-aligned like numbers */
    [data-testid="stTable"] td:not(:first-child),
    [data-testid="stTable"] thead th:not(:first-child)
      {text-align: right !important; font-variant-numeric: tabular-nums;}
    @media (max-width: 640px) {
      .block-container {padding-top: 3.2rem; padding-left: 0.8rem; padding-right: 0.8rem;}
      .klrl-readout {font-size: 1rem;}
    }
    </style>""",
    unsafe_allow_html=True,
)
page.run()
