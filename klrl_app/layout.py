"""Page furniture shared by every figure page: header, readout, caption, downloads."""

from __future__ import annotations

from typing import Callable, Sequence

import pandas as pd
import streamlit as st


def ensure_app_navigation() -> None:
    """Run app.py's navigation even when a deep link is a fresh server's first request.

    Streamlit treats a folder named ``pages/`` as an old-style multipage app until the main
    script calls ``st.navigation``; a first request for /tilt would then run this page alone,
    without app.py's navigation, layout and styling. Switching the mode off and rerunning
    sends the request through app.py, which resolves the same URL path.
    """
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


def header(title: str, figure_ref: str, lead: str):
    """Title, the figure it reproduces, a one-line lead; returns a slot for link notices."""
    ensure_app_navigation()
    st.title(title)
    st.caption(figure_ref)
    st.markdown(lead)
    return st.empty()


def readout(items: Sequence[tuple[str, str]], helps: Sequence[str | None] | None = None) -> None:
    """A row of labelled numbers that wraps on narrow screens."""
    helps = helps or [None] * len(items)
    with st.container(horizontal=True, gap="medium"):
        for (label, value), help_text in zip(items, helps):
            st.metric(label, value, help=help_text, border=True, width="content")


def sentence(text: str) -> None:
    """The figure's readout as one sentence, like the line under the book's figure."""
    st.markdown(f"<div class='klrl-readout'>{text}</div>", unsafe_allow_html=True)


def look_for(text: str) -> None:
    """What to look for in the figure, in a few sentences."""
    st.info(text, icon=":material/visibility:")


def table(df: pd.DataFrame, digits: int = 6, **kwargs) -> None:
    """A data table whose numeric columns show ``digits`` decimals."""
    numeric = df.select_dtypes("number").columns
    config = {c: st.column_config.NumberColumn(format=f"%.{digits}f") for c in numeric}
    st.dataframe(df, hide_index=True, width="stretch", column_config=config, **kwargs)


def small_table(df: pd.DataFrame, formats: dict[str, str | Callable[[float], str]]) -> None:
    """A short table printed in full, labelled by its first column; ``formats`` maps each other
    column to "{:.4f}" or a function.

    A static table rather than st.dataframe: a few rows need no scrolling or sorting, and the
    interactive grid costs the browser about 40 ms per slider move (measured on kl-penalty).
    Formatted here rather than with a pandas Styler, which cost ~10-20 ms of server time per
    table and move. app.py's CSS right-aligns the numbers.
    """
    shown = df.copy()
    for col, f in formats.items():
        shown[col] = shown[col].map(f if callable(f) else f.format)
    st.table(shown.set_index(shown.columns[0]))


def csv_download(data: pd.DataFrame | Callable[[], pd.DataFrame], file_name: str,
                 label: str = "Download the figure's data (CSV)", key: str | None = None) -> None:
    """A CSV of exactly the numbers drawn, written only when the reader clicks.

    ``data`` is a table or a function that builds one; either way the CSV text is made on
    the click (in Streamlit's download thread), so a slider move never pays for it."""
    make = data if callable(data) else (lambda: data)
    st.download_button(label, lambda: make().to_csv(index=False).encode("utf-8"),
                       file_name=file_name, mime="text/csv", icon=":material/download:",
                       key=key, on_click="ignore")


def fmt(x: float, digits: int = 2) -> str:
    """A readout number at the chapter's precision, with a true minus sign."""
    return f"{x:.{digits}f}".replace("-", "−")


def fmt_signed(x: float, digits: int = 2) -> str:
    return ("+" if x > 0 else "") + fmt(x, digits)


def pct(x: float, digits: int = 0) -> str:
    return f"{100 * x:.{digits}f}%"
