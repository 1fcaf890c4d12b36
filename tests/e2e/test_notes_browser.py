"""The lecturer's notes in a real browser (klrl_app/notes.py): opened, they are axe-clean in
the light and the dark theme, and a misconception's link opens its page at that setting."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from klrl_app import notes
from tests.e2e import harness
from tests.e2e.test_classroom import assert_axe_clean, assert_dark


def _open_notes(page):
    box = page.get_by_text(notes.TITLE, exact=True)
    box.scroll_into_view_if_needed()
    box.click()
    expect(page.get_by_text("The point.")).to_be_visible(timeout=harness.SCRIPT_TIMEOUT_MS)
    harness.wait_idle(page)


@pytest.mark.parametrize("slug, scheme", [("tilt", "light"), ("loop", "dark")])
def test_open_notes_are_axe_clean(open_page, slug, scheme):
    page = open_page(slug, color_scheme=scheme)
    _open_notes(page)
    harness.assert_clean(page)
    if scheme == "dark":
        assert_dark(page)
    assert_axe_clean(page)


def test_a_misconceptions_link_opens_its_setting(open_page):
    m = notes.notes_for("groups").misconceptions[-1]  # groups?p=0.01&k=64
    page = open_page("groups")
    _open_notes(page)
    link = page.get_by_role("link", name=m.link)
    href = link.get_attribute("href")
    assert href == m.link
    target = open_page(href)  # relative to the app's root
    harness.wait_query(target, "k", m.setting["k"])
    assert harness.query(target) == m.setting
    expect(target.get_by_test_id("stAlert").filter(has_text=harness.NOTICE)).to_have_count(0)


def test_absent_from_the_presentation_view(open_page):
    page = open_page("groups", query={"present": "1"})
    harness.wait_charts(page, at_least=1)
    harness.wait_idle(page)
    assert page.get_by_text(notes.TITLE, exact=True).count() == 0
