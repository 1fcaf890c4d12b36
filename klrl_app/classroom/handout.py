"""The printable handout (issue 34, item 4): every figure page's prediction questions, grouped
by page with the setting as a link, then, after a page break, their answers and explanations.

One HTML body serves the page (pages/handout.py) and the standalone file a lecturer downloads;
Markdown and CSV carry the same content. Print rules (``PRINT_CSS``) take Streamlit's chrome
off the paper and let the page grow past one screen, so the browser's print to A4 or Letter
cuts nothing off.
"""

from __future__ import annotations

import csv
import html
import io
from typing import NamedTuple
from urllib.parse import urlencode

from klrl_app.classroom import questions as Q
from klrl_app.nav import PAGES, SECTION_EX, PageInfo

TITLE = "Predict, then look: questions on the explorer's figures"
INTRO = (
    "Answer each question before opening its page, then follow the link: the page opens at "
    "the question's setting and shows the answer. Every answer below is computed by the "
    "explorer from the chapters' models at that setting."
)


class Entry(NamedTuple):
    number: int  # Q1, Q2, … across the handout
    spec: dict  # questions.to_spec


def sections() -> list[tuple[PageInfo, list[Entry]]]:
    """The figure pages in the app's order, each with its questions (truths computed)."""
    out, n = [], 0
    for page in PAGES:
        if page.section == SECTION_EX:
            continue
        entries = []
        for q in Q.for_page(page.url_path):
            n += 1
            entries.append(Entry(n, Q.to_spec(q)))
        if entries:
            out.append((page, entries))
    return out


def link(spec: dict, base: str = "") -> str:
    """The page at the question's setting under ``base`` (the app's root, such as
    "https://host/app"), or relative ("tilt?kappa=20", right under any base) without one."""
    query = urlencode(spec["setting"])
    path = f"{base.rstrip('/')}/{spec['page']}" if base else spec["page"]
    return path + (f"?{query}" if query else "")


def _e(text: str) -> str:
    return html.escape(str(text), quote=True)


def header_html() -> str:
    return f"<h1>{_e(TITLE)}</h1><p class='klrl-intro'>{_e(INTRO)}</p>"


def _question(e: Entry, base: str) -> str:
    s, url = e.spec, link(e.spec, base)
    if s["kind"] == Q.CHOICE:
        form = (
            "<ul class='klrl-choices'>"
            + "".join(f"<li>☐ {_e(c)}</li>" for c in s["choices"])
            + "</ul>"
        )
    else:
        form = (
            f"<p class='klrl-blank'>Your answer: <span class='klrl-line'></span> "
            f"<span class='klrl-hint'>({_e(Q.input_text(s))})</span></p>"
        )
    return (
        f"<div class='klrl-q' id='q{e.number}'>"
        f"<p class='klrl-prompt'><strong>Q{e.number}.</strong> {_e(s['prompt'])}</p>{form}"
        f"<p class='klrl-open'>Then open <a href='{_e(url)}'>{_e(url)}</a> "
        f"<span class='klrl-id'>· {_e(s['id'])}</span></p></div>"
    )


def _answer(e: Entry, base: str) -> str:
    s, url = e.spec, link(e.spec, base)
    return (
        f"<div class='klrl-a' id='a{e.number}'><p><strong>Q{e.number}. "
        f"{_e(Q.truth_text(s))}</strong> <span class='klrl-tol'>(right: "
        f"{_e(Q.tolerance_text(s))})</span></p><p>{_e(s['explain'])}</p>"
        f"<p class='klrl-open'><a href='{_e(url)}'>{_e(url)}</a></p></div>"
    )


def content_html(base: str = "") -> str:
    """The questions by page, then (from a new sheet) the answers. A page's heading is kept
    on one sheet with its first item (Chromium ignores break-after: avoid when printing)."""
    questions, answers = [], []
    for page, entries in sections():
        head = f"<h2>{_e(page.title)}</h2><p class='klrl-teaches'>{_e(page.teaches)}</p>"
        first, *rest = entries
        questions.append(
            f"<section class='klrl-page'><div class='klrl-keep'>{head}"
            f"{_question(first, base)}</div>"
            + "".join(_question(e, base) for e in rest)
            + "</section>"
        )
        answers.append(
            f"<div class='klrl-keep'><h3>{_e(page.title)}</h3>"
            f"{_answer(first, base)}</div>" + "".join(_answer(e, base) for e in rest)
        )
    return (
        "<div class='klrl-handout'>"
        + "".join(questions)
        + "<section class='klrl-answers'><h2>Answers</h2>"
        + "".join(answers)
        + "</section></div>"
    )


def body_html(base: str = "") -> str:
    """The whole handout: title, introduction, questions, answers."""
    return f"<div class='klrl-handout'>{header_html()}</div>{content_html(base)}"


# The handout's own look, on screen and on paper (inside the app and in the standalone file).
HANDOUT_CSS = """
.klrl-handout {max-width: 52rem; line-height: 1.5;}
.klrl-handout h1 {font-size: 1.7rem; margin: 0 0 0.4rem 0;}
.klrl-handout h2 {font-size: 1.3rem; margin: 1.4rem 0 0.2rem 0; padding-bottom: 0.2rem;
  border-bottom: 1px solid rgba(128, 128, 128, 0.45);}
.klrl-handout h3 {font-size: 1.1rem; margin: 1rem 0 0.2rem 0;}
.klrl-handout .klrl-q, .klrl-handout .klrl-a {margin: 0 0 0.9rem 0;}
.klrl-handout p {margin: 0.15rem 0; overflow-wrap: anywhere;}
.klrl-teaches, .klrl-id, .klrl-hint, .klrl-tol {opacity: 0.85; font-size: 0.92em;}
.klrl-choices {list-style: none; padding-left: 1.2rem; margin: 0.2rem 0;}
.klrl-line {display: inline-block; width: 9rem; border-bottom: 1px solid currentColor;}
.klrl-open {font-size: 0.92em;}
.klrl-open a {overflow-wrap: anywhere; word-break: break-all;}
.klrl-answers {break-before: page; page-break-before: always; margin-top: 2rem;}
.klrl-handout h2, .klrl-handout h3 {break-after: avoid; page-break-after: avoid;}
.klrl-q, .klrl-a, .klrl-keep {break-inside: avoid; page-break-inside: avoid;}
"""

# On paper: none of Streamlit's chrome (sidebar, header, toolbar, the page's own buttons), black
# on white in either theme. Streamlit's own print rules already let the main area run over as
# many sheets as it needs (tests/e2e/test_handout_print.py checks it).
PRINT_CSS = """
@page {margin: 14mm 14mm;}
@media print {
  [data-testid="stSidebar"], [data-testid="stHeader"], [data-testid="stToolbar"],
  [data-testid="stDecoration"], [data-testid="stSidebarCollapsedControl"],
  [data-testid="stExpandSidebarButton"], [data-testid="stStatusWidget"],
  [data-testid="stBottom"], .klrl-screen-only, [class*="st-key-handout-"] {display: none !important;}
  body, .stApp, .klrl-handout, .klrl-handout * {color: #000 !important;
    background: #fff !important;}
  .klrl-handout {max-width: none; font-size: 11pt;}
  .klrl-handout a {text-decoration: none;}
}
"""


def standalone_html(base: str = "") -> str:
    """The handout as one HTML file that prints on its own (links under ``base``)."""
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{_e(TITLE)}</title><meta name='viewport' content='width=device-width'>"
        f"<style>body {{font-family: system-ui, sans-serif; margin: 2rem auto; "
        f"max-width: 52rem; padding: 0 1rem;}}{HANDOUT_CSS}{PRINT_CSS}</style></head>"
        f"<body>{body_html(base)}</body></html>"
    )


def markdown(base: str = "") -> str:
    """The handout as Markdown: questions, then the answers under their own heading."""
    lines = [f"# {TITLE}", "", INTRO, ""]
    answers = ["", '<div style="page-break-before: always"></div>', "", "## Answers", ""]
    for page, entries in sections():
        lines += [f"## {page.title}", "", f"*{page.teaches}*", ""]
        answers += [f"### {page.title}", ""]
        for e in entries:
            s, url = e.spec, link(e.spec, base)
            lines.append(f"**Q{e.number}.** {s['prompt']}")
            lines.append("")
            if s["kind"] == Q.CHOICE:
                lines += [f"- [ ] {c}" for c in s["choices"]]
            else:
                lines.append(f"Your answer: ________ ({Q.input_text(s)})")
            lines += ["", f"Then open [{url}]({url}) · `{s['id']}`", ""]
            answers += [
                f"**Q{e.number}. {Q.truth_text(s)}** (right: {Q.tolerance_text(s)}). "
                f"{s['explain']} [{url}]({url})",
                "",
            ]
    return "\n".join(lines + answers)


def csv_text(base: str = "") -> str:
    """One row per question: number, id, page, prompt, answer format, link, answer, tolerance,
    explanation; the truth at full precision in its own column."""
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(
        [
            "number",
            "id",
            "page",
            "question",
            "answer format",
            "link",
            "answer",
            "counted right",
            "truth (full precision)",
            "explanation",
        ]
    )
    for _, entries in sections():
        for e in entries:
            s = e.spec
            full = s["truth"] if s["kind"] == Q.CHOICE else repr(float(s["truth"]))
            w.writerow(
                [
                    e.number,
                    s["id"],
                    s["page"],
                    s["prompt"],
                    Q.input_text(s),
                    link(s, base),
                    Q.truth_text(s),
                    Q.tolerance_text(s),
                    full,
                    s["explain"],
                ]
            )
    return out.getvalue()


def base_of(url: str | None, slug: str = "handout") -> str:
    """The app's root from this page's own address ("https://host/app/handout?x" →
    "https://host/app"); "" when unknown (links then stay relative)."""
    if not url:
        return ""
    path = url.split("?", 1)[0].split("#", 1)[0].rstrip("/")
    return path[: -len(slug)].rstrip("/") if path.endswith("/" + slug) else ""
