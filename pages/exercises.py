"""The chapters' exercises with instant checking: Exercises 12.1-12.4 and worked numeric
instances of Exercises 28.1-28.8.

Everything shown comes from klrl_app/exercises/ (statements, parts, hints, solutions computed
by klrl_core); this page only lays it out. Answers live in the widgets of this session only:
nothing is written to the link or stored, so a reload starts afresh.
"""

from __future__ import annotations

import re

import streamlit as st

from klrl_app import exercises as cat
from klrl_app import fmt, layout
from klrl_app.nav import PAGES

PAGE_TITLES = {p.url_path: p.title for p in PAGES}
CHAPTERS = (
    ("12", "Chapter 12 · AI Alignment", None),
    ("28", "Chapter 28 · RL for language models and reasoning (a different book)",
     "The exercises of this chapter ask for derivations. Each one below is paired with a "
     "small numeric instance chosen for this app; its worked solution says what the "
     "instance illustrates."),
)
# A lone asterisk right after a non-ASCII letter ("π*", "κ*") is mathematics, not markup:
# escaped so that no markdown renderer can pair it with a later one and italicise the text
# between. ASCII letters are left alone (the catalogue italicises book titles, "*AI
# Alignment*"), and so are the doubled asterisks of bold text.
_MATH_STAR = re.compile(r"(?<=[^\W\d_A-Za-z])\*(?!\*)")


# This page's headings: chapters (h2) above exercises (h3), each clearly smaller than the one
# above; the app's CSS styles h2.klrl-h small for the figure pages, where no h3 follows.
PAGE_CSS = """
h2.klrl-h {font-size: clamp(1.3rem, 3.4vw, 1.6rem) !important; margin-top: 1.6rem !important;
  padding-bottom: 0.3rem !important; border-bottom: 1px solid rgba(128, 128, 128, 0.35);}
[data-testid="stMarkdownContainer"] h3 {font-size: clamp(1.08rem, 2.6vw, 1.25rem) !important;
  font-weight: 650; margin-top: 1.2rem; padding-bottom: 0.1rem;}
"""
# On a projector (presentation view) the statements, answers and verdicts grow with the labels
# (layout.PRESENT_CSS enlarges those), so the room can read what is being worked on.
PRESENT_PAGE_CSS = """
[data-testid="stMarkdownContainer"] p, [data-testid="stMarkdownContainer"] li
  {font-size: 1.2rem !important; line-height: 1.55 !important;}
[data-testid="stNumberInput"] input {font-size: 1.2rem !important;}
[data-testid="stMarkdownContainer"] h3 {font-size: 1.5rem !important;}
h2.klrl-h {font-size: 1.8rem !important;}
"""


def md(text: str) -> str:
    """Catalogue text made safe for st.markdown."""
    return _MATH_STAR.sub(r"\\*", text)


def _can_open_emphasis(text: str, i: int) -> bool:
    """CommonMark: a "*" can open emphasis when it is left-flanking, that is, the next
    character is not a space and is either no punctuation or follows a space or punctuation."""
    def kind(c: str) -> str:
        return "space" if not c or c.isspace() else ("punct" if not c.isalnum() else "word")
    before = kind(text[i - 1] if i else "")
    after = kind(text[i + 1] if i + 1 < len(text) else "")
    return after == "word" or (after == "punct" and before != "word")


def label_md(text: str) -> str:
    """A widget label: escaped only where a star could start italics. The browser also uses
    the raw label as the box's accessible name (aria-label), where an escape would be read
    out, so "π*(y₁)" and "KL(π* ‖ π₀)", which cannot open emphasis, stay as they are."""
    return "".join("\\*" if c == "*" and _can_open_emphasis(text, i) else c
                   for i, c in enumerate(text))


def id_ranges(ids: list[str]) -> str:
    """"12.1–12.4" for a run of three or more consecutive exercises, commas otherwise."""
    nums = [int(i.split(".")[1]) for i in ids]
    chapter = ids[0].split(".")[0]
    runs: list[list[int]] = []
    for n in nums:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    out = []
    for run in runs:
        if len(run) >= 3:
            out.append(f"{chapter}.{run[0]}–{chapter}.{run[-1]}")
        else:
            out.extend(f"{chapter}.{n}" for n in run)
    return ", ".join(out)


def reference_line(exercises: list[cat.Exercise]) -> str:
    parts = []
    for chapter, _, _ in CHAPTERS:
        ids = [e.id for e in exercises if e.id.split(".")[0] == chapter]
        if not ids:
            continue
        name = "Chapter 12" if chapter == "12" else "Chapter 28 (a different book)"
        parts.append(f"{name} · {fmt.agree(len(ids), 'Exercise', 'Exercises')} {id_ranges(ids)}")
    return " · ".join(parts)


def number_box(ex: cat.Exercise, i: int, part: cat.Part):
    """One answer box: empty until the reader types; the value stays in this session only."""
    decimals = "a whole number" if part.digits == 0 else f"to {part.digits} decimals"
    unit = f" ({part.unit})" if part.unit else ""
    common = dict(value=None, key=f"exercises.{ex.id}.{i}", placeholder=decimals + unit)
    if part.digits == 0:
        return st.number_input(label_md(part.label), step=1, format="%d", **common)
    return st.number_input(label_md(part.label), step=10.0 ** -part.digits,
                           format=f"%.{part.digits}f", **common)


def verdict(part: cat.Part, value) -> None:
    """Correct or Not yet with the hint, under the box; nothing while the box is empty."""
    if value is None:
        return
    result, hint = cat.check(part, value)
    if result == cat.CORRECT:
        st.success(f"**Correct** · "
                   f"{fmt.fixed(part.answer(), part.digits)}", icon=":material/check_circle:")
    else:
        st.warning(f"**Not yet.** {md(hint)}", icon=":material/lightbulb:")


def exercise(ex: cat.Exercise) -> None:
    parts = ex.parts
    st.markdown(f"### Exercise {ex.id} · {md(ex.title)}")
    st.markdown(md(ex.statement))
    with st.form(f"exercises.{ex.id}", enter_to_submit=True):
        values = []
        for row in range(0, len(parts), 2):
            for col, i in zip(st.columns(2, gap="medium"), range(row, min(row + 2, len(parts)))):
                with col:
                    values.append(number_box(ex, i, parts[i]))
                    verdict(parts[i], values[-1])
        pressed = st.form_submit_button("Check", type="secondary", icon=":material/done_all:",
                                        key=f"exercises.{ex.id}.check")
        if pressed and all(v is None for v in values):
            st.info("Type a number in at least one box, then press Check (or Enter).",
                    icon=":material/info:")
    with st.expander("Show the worked solution", icon=":material/menu_book:"):
        if ex.illustrates:
            st.markdown(f"**What this instance shows.** {md(ex.illustrates)}")
        st.markdown(md(ex.solution()))
    target = ex.link.split("?", 1)[0]
    setting = " set to this exercise" if "?" in ex.link else ""
    link = f"[Open “{PAGE_TITLES[target]}”{setting}\u00a0↗]({ex.link})"
    # what the link alone cannot set: on a line of its own under the link
    st.markdown(link + (f"  \n{md(ex.link_note)}" if ex.link_note else ""))


page = layout.Page(
    "exercises", "Exercises", reference_line(cat.EXERCISES),
    "Every numeric part of the chapters' exercises, each with a box for your answer: press "
    "Check (or Enter) and a right answer says Correct, a wrong one gets a hint at the step "
    "most likely missed. Each exercise has a worked solution, computed by the explorer, and "
    "a link to the page that shows it live. Nothing you type is saved or put in the link; "
    "a reload starts afresh.",
)
page.finish_controls()            # no controls of its own: keeps only present=1 in the link
st.html(f"<style>{PAGE_CSS}{PRESENT_PAGE_CSS if page.present else ''}</style>")
st.markdown(page.lead)

for chapter, heading, intro in CHAPTERS:
    group = [e for e in cat.EXERCISES if e.id.split(".")[0] == chapter]
    st.markdown(f"<h2 class='klrl-h'>{heading}</h2>", unsafe_allow_html=True)
    if intro:
        st.markdown(intro)
    for ex in group:
        exercise(ex)
