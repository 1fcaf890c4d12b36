"""The handout printed by Chromium to A4 and Letter (issue 34, item 4): every question and
answer on paper, the answers from a new sheet, none of the app's chrome, nothing cut off."""

from __future__ import annotations

import io
import os
import re

import pypdf
import pytest
from playwright.sync_api import expect

from klrl_app.classroom import handout
from klrl_app.classroom import questions as Q
from tests.e2e import harness


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _open_handout(open_page, scheme="light"):
    page = open_page("handout", color_scheme=scheme)
    expect(page.get_by_role("heading", name="Answers")).to_be_attached(
        timeout=harness.SCRIPT_TIMEOUT_MS
    )
    harness.wait_idle(page)
    return page


@pytest.mark.parametrize("paper", ["A4", "Letter"])
def test_the_handout_prints_whole(open_page, paper, screenshot_dir):
    page = _open_handout(open_page, "dark" if paper == "Letter" else "light")
    pdf = page.pdf(format=paper, print_background=True)
    if os.environ.get("KLRL_SCREENSHOTS"):
        (screenshot_dir / f"handout-{paper}.pdf").write_bytes(pdf)
    sheets = [p.extract_text() for p in pypdf.PdfReader(io.BytesIO(pdf)).pages]
    assert len(sheets) >= 4, len(sheets)
    flat = [_squash(s) for s in sheets]
    everything = "".join(flat)
    # the app's chrome stays off the paper: the sidebar's sections, the download buttons
    assert "Chapter12·AIAlignment" not in everything and "Markdown" not in everything
    # the answers start a sheet of their own, after every question
    start = next(i for i, s in enumerate(flat) if s.startswith("Answers"))
    assert 0 < start < len(sheets) - 1
    assert all("Youranswer" not in s for s in flat[start:])
    questions, answers = "".join(flat[:start]), "".join(flat[start:])
    specs = [e.spec for _, es in handout.sections() for e in es]
    for n, s in enumerate(specs, 1):
        assert f"Q{n}." in questions and _squash(s["id"]) in questions, s["id"]
        assert _squash(f"Q{n}. {Q.truth_text(s)}") in answers, s["id"]
        # each prompt's last words: a line cut off at the sheet's edge would lose them
        tail = _squash(" ".join(s["prompt"].split()[-3:]))
        assert tail in questions, (s["id"], tail)
        tail = _squash(" ".join(s["explain"].split()[-3:]))
        assert tail in answers, (s["id"], tail)


def test_in_print_the_page_flows_over_sheets_and_cuts_nothing(open_page):
    page = _open_handout(open_page)
    page.emulate_media(media="print")
    found = page.evaluate("""() => {
      const hidden = s => [...document.querySelectorAll(s)].every(
        e => getComputedStyle(e).display === 'none');
      const width = document.documentElement.clientWidth;
      const items = [...document.querySelectorAll('.klrl-q, .klrl-a')];
      const cut = items.filter(e => e.getBoundingClientRect().right > width + 1
                                     || e.scrollWidth > e.clientWidth + 1).map(e => e.id);
      const boxes = ['[data-testid="stMain"]', '[data-testid="stAppViewContainer"]']
        .map(s => document.querySelector(s)).filter(Boolean)
        .map(e => getComputedStyle(e).overflowY);
      return {sidebar: hidden('[data-testid="stSidebar"]'),
              header: hidden('[data-testid="stHeader"]'),
              tools: hidden('[class*="st-key-handout-tools"]'),
              items: items.length, cut, boxes,
              tall: document.documentElement.scrollHeight / window.innerHeight};
    }""")
    assert found["sidebar"] and found["header"] and found["tools"]
    assert found["items"] == 2 * len(Q.bank()) and found["cut"] == []
    assert set(found["boxes"]) <= {"visible"}
    assert found["tall"] > 5  # one long page, not a screen-high box that scrolls


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_handout_page_is_axe_clean(open_page, scheme, screenshot_dir):
    from tests.e2e.test_classroom import assert_axe_clean, assert_dark

    page = _open_handout(open_page, scheme)
    if scheme == "dark":
        assert_dark(page)
    assert_axe_clean(page)
    if os.environ.get("KLRL_SCREENSHOTS"):
        for size in (
            {"width": 1280, "height": 720},
            {"width": 1400, "height": 1000},
            {"width": 390, "height": 844},
        ):
            page.set_viewport_size(size)
            page.wait_for_timeout(300)
            page.screenshot(
                path=str(screenshot_dir / f"handout-{scheme}-{size['width']}x{size['height']}.png")
            )


def test_the_downloaded_file_prints_on_its_own(browser, chromium):
    ctx = browser.new_context()
    try:
        page = ctx.new_page()
        page.set_content(handout.standalone_html("https://lecture.example/app"))
        sheets = [
            _squash(p.extract_text())
            for p in pypdf.PdfReader(io.BytesIO(page.pdf(format="A4"))).pages
        ]
    finally:
        ctx.close()
    start = next(i for i, s in enumerate(sheets) if s.startswith("Answers"))
    assert 0 < start < len(sheets) - 1
    n = len(Q.bank())
    assert f"Q{n}." in "".join(sheets[:start]) and f"Q{n}." in "".join(sheets[start:])
    assert "https://lecture.example/app/tilt?kappa=20" in "".join(sheets)
