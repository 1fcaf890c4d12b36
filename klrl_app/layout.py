"""Page furniture shared by every page: the classroom layout.

Every figure page has the same shape, built here and nowhere else:

    title · figure reference                          [presentation view]
    main control(s)                                   [more settings]
    readout: the numbers, once, in one line (a polite live region)
    figure(s)
    ---- below the first screen, hidden in the presentation view ----
    what to look for · about this figure · what the numbers mean
    the numbers behind the figure (tables, CSV downloads, the link)

On a 1280×720 projector the main control and the first figure share the first screen; the
presentation view (``present=1`` in the link) hides the sidebar and everything below the
figures and enlarges the figure and the readout.
"""

from __future__ import annotations

import html
import json
from contextlib import contextmanager
from collections.abc import Callable, Iterator, Sequence

import pandas as pd
import streamlit as st

from klrl_app.controls import HIDE, LOCK, PRESENT_KEY, RESET_KEY, Controls
from klrl_app import fmt, instant as _instant, notes, plots, presets
from klrl_app.classroom import ui as classroom_ui
from klrl_app.instant import Instant, View


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


def presenting() -> bool:
    """True in the presentation view (the projector): read by pages, charts and controls."""
    return bool(st.session_state.get(PRESENT_KEY, False))


def _read_present_link() -> None:
    """On a session's first page, ``present=1`` (or on/true) in the link opens the projector
    view; after that the switch owns the value and the link follows it (Controls.finish)."""
    if PRESENT_KEY not in st.session_state:
        raw = str(st.query_params.get("present", "")).strip().lower()
        st.session_state[PRESENT_KEY] = raw in {"1", "on", "true", "yes"}


class Page:
    """One page in the classroom layout; see the module's docstring for its shape."""

    def __init__(self, slug: str, title: str, figure_ref: str, lead: str):
        ensure_app_navigation()
        _read_present_link()
        self.slug = slug
        self.lead = lead
        self.present = presenting()
        if self.present:
            st.html(f"<style>{PRESENT_CSS}</style>")
        with st.container(
            horizontal=True, vertical_alignment="bottom", gap="small", key="klrl-head"
        ):
            st.markdown(
                f"<h1 class='klrl-title'>{html.escape(title)}</h1>"
                f"<p class='klrl-ref'>{html.escape(figure_ref)}</p>",
                unsafe_allow_html=True,
                width="stretch",
            )
            self._reset_slot = st.empty()  # the Reset button, once the controls are known
            st.toggle(
                "Presentation view",
                key=PRESENT_KEY,
                width="content",
                help="For a projector: larger type, no sidebar, nothing but the controls, "
                "the readout and the figure. Kept in the link as present=1.",
            )
        # A class session's bar (lecturer) or banner (student), filled once the readout is known
        self._class_slot = st.container() if classroom_ui.joined() else None
        self._items: list[tuple[str, str]] = []
        self.notice_slot = st.empty()
        self._helps: list[tuple[str, str]] = []
        self._has_readout = False
        self._follow: _instant.Follow | None = None
        self.ui = Controls(slug)

    def finish_controls(self) -> None:
        """After the controls: the link's notices above the readout, the URL updated, and
        Reset in the header (a page with controls)."""
        self.ui.finish(self.notice_slot)
        if any(self.ui.state(n) == LOCK for n in self.ui.entries):
            st.html(f"<style>{LOCKED_CSS}</style>")
        if self.ui.entries:
            self._reset_slot.button(
                "Reset",
                key=RESET_KEY,
                icon=":material/restart_alt:",
                on_click=self.ui.reset,
                width="content",
                help="Reset: every control back to this link's values (the view as it was "
                "opened, or as the lecturer prepared it).",
            )

    # ----- controls ---------------------------------------------------------------------
    def control_row(self, widths: Sequence[float] | int = 1):
        """Columns for the main controls, aligned on their bottom edge."""
        return st.columns(widths, gap="medium", vertical_alignment="bottom")

    @contextmanager
    def more_settings(self, label: str = "More settings") -> Iterator[None]:
        """Secondary controls, one click away so the figure keeps the first screen. Left out
        when the link hides every control in it."""
        slot, before = st.empty(), len(self.ui.entries)
        with slot.container(), st.popover(label, icon=":material/settings:", width="content"):
            yield
        inside = list(self.ui.entries)[before:]
        if inside and all(self.ui.state(n) == HIDE for n in inside):
            slot.empty()

    # ----- numbers ----------------------------------------------------------------------
    def readout(
        self,
        items: Sequence[tuple[str, str]],
        helps: Sequence[str | None] | None = None,
        instant: Instant | None = None,
        stop: object = None,
    ) -> None:
        """The page's numbers, each once, in one line that wraps: a polite live region, so a
        screen reader hears the new values when a slider moves. ``helps`` explain each number
        below the figure (What the numbers mean). With ``instant`` the browser shows the
        readout at every stop of the main slider as soon as the thumb gets there (``follow``
        does the same for the figures too)."""
        helps = helps or [None] * len(items)
        self._items += [(str(a), str(b)) for a, b in items]
        if instant is not None:
            self.ui.main(instant.slider)
            if self.ui.fixed(instant.slider):  # locked or hidden: no hand to follow
                instant = None
        parts = []
        for (label, value), help_text in zip(items, helps):
            parts.append(
                f"<span class='klrl-item'><span class='klrl-label'>{html.escape(label)}"
                f"</span> <span class='klrl-value'>{html.escape(value)}</span></span>"
            )
            if help_text:
                self._helps.append((label, help_text))
        main = " klrl-readout-main" if not self._has_readout else ""
        self._has_readout = True
        # The stop these numbers are for: a run cut short by the next one can leave its numbers
        # on screen without reaching its driver, and instant.js then sees whose they are.
        if instant is not None:
            stop = _instant.stop_of(self.ui, instant.slider)
        mark = (
            f" data-klrl-stop='{html.escape(json.dumps(stop), quote=True)}'"
            if main and stop is not None
            else ""
        )
        st.markdown(
            f"<div class='klrl-readout{main}'{mark} role='status' aria-live='polite'>"
            + "<span class='klrl-sep' aria-hidden='true'> · </span>".join(parts)
            + "</div>",
            unsafe_allow_html=True,
        )
        if instant is not None:
            self._follow = _instant.follow(
                self.slug, self.ui, instant, View(list(items)), self.present
            )

    def follow(self, instant: Instant, helps: Sequence[str | None] | None = None) -> View:
        """The readout at the main slider's current stop, and the page's View there: its
        charts are drawn with ``chart``. The browser redraws the readout and those charts for
        every stop the thumb crosses, from numbers klrl_core computed on the server for each
        stop (klrl_app/instant.py); the run after the release draws the same."""
        self.ui.main(instant.slider)
        value = st.session_state[self.ui.key(instant.slider)]
        view = _instant.as_view(instant.view_at(value))
        if self.ui.fixed(instant.slider):  # locked or hidden: the run draws it, nothing moves
            self.readout(view.items, helps)
            return view
        self.readout(view.items, helps, stop=_instant.stop_of(self.ui, instant.slider))
        self._follow = _instant.follow(self.slug, self.ui, instant, view, self.present)
        return view

    def play(self, slider: str, interval_ms: int = 200) -> None:
        """A Play/Pause button that walks the followed ``slider`` through its stops in the
        browser (instant.play_button); put it beside the slider."""
        _instant.play_button(self.slug, self.ui.sliders[slider][0], interval_ms)

    def chart(self, view: View, key: str) -> None:
        """Draw one of the View's charts (``follow``), followed by the browser's driver."""
        chart, alt = view.charts[key]
        follow = self._follow
        plots.show(
            chart,
            key=key,
            alt=alt,
            stop=follow.stop if follow is not None else None,
            setting=follow.setting if follow is not None else None,
        )

    def _send_stops(self) -> None:
        if self._follow is not None:
            self._follow.send_table()
            self._follow = None

    def figures(self, n: int = 2):
        """Side-by-side columns for the figures (stacked on a phone)."""
        return st.columns(n, gap="large") if n > 1 else [st.container()]

    # ----- below the figures ------------------------------------------------------------
    def explain(self, look_for: str, extra: Callable[[], None] | None = None) -> None:
        """What to look for, about this figure (the lead) and what each number means; and
        ``extra`` (more explanation) after them. Not in the presentation view."""
        if self.present:
            return
        st.markdown(
            f"<div class='klrl-look'><h2 class='klrl-h'>What to look for</h2>"
            f"<p>{look_for}</p></div>",
            unsafe_allow_html=True,
        )
        about = _lazy_expander(
            "About this figure and its numbers", ":material/info:", f"klrl-{self.slug}-about"
        )
        if about.open:
            with about:
                st.markdown(self.lead)
                if self._helps:
                    st.markdown(
                        "\n".join(
                            f"- **{label.replace('*', chr(92) + '*')}**: {text}"
                            for label, text in self._helps
                        )
                    )
        if extra is not None:
            extra()

    def details(
        self, body: Callable[[], None], label: str = "The numbers behind the figure"
    ) -> None:
        """Tables and CSV downloads in a closed expander; not in the presentation view. Every
        page ends with this: the main slider's table of stops is sent here, after everything
        the reader sees (klrl_app/instant.py), and a class session's bar above the controls."""
        self._send_stops()
        if self._class_slot is not None:
            with self._class_slot:
                classroom_ui.page_bar(self.slug, self._items)
        if self.present:
            return
        box = _lazy_expander(label, ":material/table:", f"klrl-{self.slug}-details")
        if box.open:
            with box:
                body()
                st.markdown("**Link to this view** (the address bar holds the same link)")
                st.code(self.ui.link(), language=None, wrap_lines=True)
        if self.ui.entries and not st.session_state.get(
            notes.STUDENT_KEY
        ):  # not on a phone in class
            prepare = _lazy_expander(
                "Prepare a link for a class", ":material/qr_code_2:", f"klrl-{self.slug}-prepare"
            )
            if prepare.open:
                with prepare:
                    presets.builder(self.ui, self.slug)
        notes.show(self.slug, self.ui)  # "For the lecturer" (klrl_app/notes.py), closed

    def section(self, title: str) -> bool:
        """A second part of the page under its own heading (h2); False in the presentation
        view, where the page shows its first figure only."""
        if self.present:
            return False
        st.markdown(f"<h2 class='klrl-h'>{html.escape(title)}</h2>", unsafe_allow_html=True)
        return True


def _lazy_expander(label: str, icon: str, key: str):
    """A closed expander whose body the page builds only while it is open (``.open``; opening
    it reruns the page). A slider move then neither computes nor sends what nobody is reading:
    the tables, grid and download buttons of "the numbers behind the figure" were a third of a
    move's work on the server and in the browser (benchmarks/RESULTS.md)."""
    return st.expander(label, icon=icon, key=key, on_change="rerun")


def paragraph(text: str) -> None:
    """A paragraph of explanation (markdown)."""
    st.markdown(text)


def table(df: pd.DataFrame, digits: int = 6, **kwargs) -> None:
    """A data table whose numeric columns show ``digits`` decimals."""
    numeric = df.select_dtypes("number").columns
    config = {c: st.column_config.NumberColumn(format=f"%.{digits}f") for c in numeric}
    st.dataframe(df, hide_index=True, width="stretch", column_config=config, **kwargs)


def small_table(df: pd.DataFrame, formats: dict[str, int | Callable[[float], str]]) -> None:
    """A short table printed in full, labelled by its first column; ``formats`` maps each other
    column to its number of decimals (``fmt.fixed``: minus signs, thousands separated) or a
    function.

    A static table rather than st.dataframe: a few rows need no scrolling or sorting, and the
    interactive grid costs the browser about 40 ms per slider move (measured on kl-penalty).
    Formatted here rather than with a pandas Styler, which cost ~10-20 ms of server time per
    table and move. app.py's CSS right-aligns the numbers.
    """
    shown = df.copy()
    for col, f in formats.items():
        shown[col] = shown[col].map(f if callable(f) else (lambda v, d=int(f): fmt.fixed(v, d)))
    # No index column: its empty header cell is an empty table header to a screen reader.
    st.table(shown, hide_index=True)


def csv_text(df: pd.DataFrame) -> str:
    """A table as CSV at full precision without float noise: 15 significant digits, all that
    a double holds reliably, so 0.1·2 + 1e-17 reads 0.2, not 0.20000000000000007, and 1.74e-05
    keeps its digits."""
    return df.to_csv(index=False, float_format="%.15g")


def csv_download(
    data: pd.DataFrame | Callable[[], pd.DataFrame],
    file_name: str,
    label: str = "Download the figure's data (CSV)",
    key: str | None = None,
) -> None:
    """A CSV of exactly the numbers drawn, written only when the reader clicks.

    ``data`` is a table or a function that builds one; either way the CSV text is made on
    the click (in Streamlit's download thread), so a slider move never pays for it."""
    make = data if callable(data) else (lambda: data)
    st.download_button(
        label,
        lambda: csv_text(make()).encode("utf-8"),
        file_name=file_name,
        mime="text/csv",
        icon=":material/download:",
        key=key,
        on_click="ignore",
    )


# A control the lecturer locked keeps a readable label and value: they tell students what is
# fixed (Streamlit fades a disabled widget's label below 4.5:1 on the dark theme, and a
# disabled slider's value to a light grey).
LOCKED_CSS = """
[data-testid="stWidgetLabel"][disabled], [data-testid="stWidgetLabel"][disabled] p,
[data-disabled="true"] [data-testid="stSliderThumbValue"]
  {color: inherit !important; opacity: 1 !important;}
"""


# The projector view: no sidebar or its button, a larger readout and title. The figures
# enlarge their own type (plots.show).
PRESENT_CSS = """
section[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"],
[data-testid="stExpandSidebarButton"] {display: none !important;}
.klrl-readout {font-size: 1.55rem !important; line-height: 1.45 !important;}
.klrl-title {font-size: 2.1rem !important;}
[data-testid="stWidgetLabel"] p {font-size: 1.15rem !important;}
[data-testid="stSliderThumbValue"], [data-testid="stSliderTickBar"] {font-size: 1.1rem !important;}
.block-container {max-width: 100% !important; padding-left: 2rem; padding-right: 2rem;}
"""
