"""A page opened on a fresh server, while its background table is still filling, follows the
hand as soon as the table is full, without a release or a reload (issue 33, part 6)."""

from __future__ import annotations

import time

from tests.e2e import harness
from tests.e2e.cases import SLIDER_PAGES
from tests.e2e.test_follow import RECORD_JS, drag

MISSING_JS = """(slug) => { const t = window.klrlTables && window.klrlTables[slug];
  return t ? t.rows.filter(r => r === null).length : -1; }"""


def test_bandit_opened_while_its_table_fills_follows_the_hand_once_it_is_full(browser, monkeypatch):
    case = next(c for c in SLIDER_PAGES if c.slug == "bandit")
    # This test's own server, with its background tables as deployed (the session's server
    # has none: tests/conftest.py), started for the test: the tables start empty.
    monkeypatch.setenv("KLRL_PRECOMPUTE", "1")
    with harness.running_server() as server:
        pages = browser.new_context()
        page = pages.new_page()
        page.goto(f"{server.url}/bandit")
        harness.wait_charts(page, at_least=1)
        harness.wait_table(page, "bandit")
        missing = page.evaluate(MISSING_JS, "bandit")
        assert missing > 0, "the table was already full: the test shows nothing"
        runs = harness.runs_so_far(page)
        started = time.monotonic()
        # No input from here on: the page must get the full table by itself.
        while page.evaluate(MISSING_JS, "bandit") != 0:
            assert time.monotonic() - started < 300, (
                f"{page.evaluate(MISSING_JS, 'bandit')} stops still missing after 300 s"
            )
            page.wait_for_timeout(1000)
        print(
            f"full table after {time.monotonic() - started:.0f} s "
            f"({missing} stops missing at first)"
        )
        assert harness.runs_so_far(page) > runs
        page.evaluate(RECORD_JS, case.slider.label)
        drag(page, case.slider.label, release=False)
        rec = page.evaluate("() => window.__follow")
        page.mouse.up()
        assert rec["chartChanges"] > 0, "the chart did not change during the drag"
        assert not rec["computing"], f"stops said computing: {rec['computing']}"
        assert harness.drawn_share(rec["seen"], rec["drawn"]) >= 0.5
        pages.close()
