"""Every page in a real Chromium: clean load, keyboard on the main slider, links, bad links,
screenshots, downloads. The pages are rows of tests/e2e/cases.py."""

from __future__ import annotations

import csv
import io
import os

import numpy as np
import pytest

from klrl_core.baseline import PRINTED_FIGURE_SEED

try:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout, expect
except ImportError:  # the `chromium` fixture then skips every test (or fails them in CI)
    expect = PlaywrightTimeout = None

from tests.e2e import harness
from tests.e2e.test_classroom import DARK, assert_axe_clean, assert_dark
from tests.e2e.cases import (
    BANDIT,
    GROUPS,
    PAGES,
    SLIDER_PAGES,
    TILT,
    bandit_numbers,
    bandit_readout,
    num_text,
    tilt_numbers,
)

DESKTOP, PHONE = harness.DESKTOP, harness.PHONE


def rows(cases):
    return [pytest.param(c, id=c.slug, marks=c.marks) for c in cases]


# Screenshots of every page at two sizes: KLRL_SCREENSHOTS=1 (a developer looking at pages).
SHOTS = os.environ.get("KLRL_SCREENSHOTS") == "1"


# The notice and its fallback are the shared layout's (klrl_app/layout.py), drawn the same way
# on every page: the browser shows it for four kinds of control (a plain slider, a count or
# `all`, a clamped count, a learning rate), and AppTest checks every bad link of every page
# (tests/test_app_*.py), which is where each page's notices and fallbacks come from.
BAD_LINK_PAGES = ("tilt", "dpo", "step-labels", "bandit")


def bad_link_rows():
    return [
        pytest.param(c, c.bad_links[0], id=f"{c.slug}-{c.bad_links[0].id}", marks=c.marks)
        for c in SLIDER_PAGES
        if c.bad_links and c.slug in BAD_LINK_PAGES
    ]


def wait_ready(page, case, readout=None):
    """The page's heading is up and (for a figure page) its readout shows ``readout``."""
    expect(page.get_by_role("heading", name=case.title).first).to_be_visible(
        timeout=harness.SCRIPT_TIMEOUT_MS
    )
    if case.slider is not None:
        harness.wait_readout(page, readout if readout is not None else case.default_readout)
    else:
        harness.wait_idle(page)


def expect_no_notice(page):
    assert page.get_by_test_id("stAlert").filter(has_text=harness.NOTICE).count() == 0


# --------------------------------------------------------------------------- every page
@pytest.mark.parametrize("case", rows(PAGES))
def test_loads_clean_passes_axe_and_answers_the_keys(case, open_page, screenshot_dir):
    """No exception, no nan/inf/Traceback, no placeholder, every chart drawn (full-content
    shots with KLRL_SCREENSHOTS=1).

    - A page with a main slider is opened here on a phone, from a link one stop from the
      default, in a new session: the link reproduces that view, and the phone's first figure
      is within 1.25 screens. Its projector-sized page, where the keys move the readout, the
      charts and the link and axe-core runs, is test_follow.py's (one load serves both). On
      the slider pages of DARK, which test_follow.py opens in the dark theme, axe-core runs
      here on the phone, in the light one.
    - Home and the exercises: on a desktop (axe-core in the light theme), then on a phone in
      the dark theme (axe-core again)."""
    if case.slider is not None:
        s = case.slider
        new = s.neighbour(s.default, +1)
        phone = open_page(case.path.split("?")[0], query={s.param: s.url_text(new)}, viewport=PHONE)
        wait_ready(phone, case, s.readout(new))
        assert harness.query(phone).get(s.param) == s.url_text(new)
        harness.wait_charts(phone, at_least=1)  # issue 10: a phone's first figure
        top = phone.locator(".klrl-chart").first.bounding_box()["y"]  # within 1.25 screens
        assert top <= 1.25 * PHONE["height"], f"first chart starts at {top:.0f} px"
        loaded_clean(phone, case, PHONE, screenshot_dir)
        if case.slug in DARK:
            assert_axe_clean(phone)
        return

    page = open_page(case.path, viewport=DESKTOP)
    wait_ready(page, case)
    loaded_clean(page, case, DESKTOP, screenshot_dir)
    assert_axe_clean(page)
    dark = case.slug in DARK
    phone = open_page(case.path, viewport=PHONE, color_scheme="dark" if dark else "light")
    wait_ready(phone, case)
    loaded_clean(phone, case, PHONE, screenshot_dir)
    if dark:
        assert_dark(phone)
        assert_axe_clean(phone)


def loaded_clean(page, case, viewport, screenshot_dir) -> None:
    harness.assert_clean(page)
    assert "Coming soon" not in harness.main_text(page), "page is still the placeholder"
    expect_no_notice(page)
    harness.wait_idle(page)
    # a figure page draws at least one chart, and no chart reports a failure to load
    harness.wait_charts(page, at_least=0 if case.slider is None else 1)
    assert page.locator(".klrl-chart-error").count() == 0
    if SHOTS:  # full-content shots to look at (CI skips them: nobody reads them there)
        harness.grow_to_content(page, viewport["width"], viewport["height"])
        harness.wait_idle(page)
        page.screenshot(
            path=str(screenshot_dir / f"{case.slug}-{viewport['width']}x{viewport['height']}.png"),
            full_page=True,
        )
        page.set_viewport_size(viewport)


def test_home_links_every_page(open_page):
    from klrl_app.nav import PAGES as NAV

    page = open_page("")
    wait_ready(page, PAGES[0])
    main = page.get_by_test_id("stMain")
    for p in NAV:
        link = main.get_by_role("link", name=p.title)
        expect(link.first).to_be_visible()
        href = link.first.get_attribute("href") or ""
        assert href.rstrip("/").rsplit("/", 1)[-1] == p.url_path, (p.title, href)


def keys_right(case, page) -> None:
    """ArrowRight on the main slider: the readout from klrl_core, the charts updated in place,
    the link (test_follow.py, on its projector-sized page)."""
    s = case.slider
    slider = harness.slider(page, s.label)

    new = s.neighbour(s.default, +1)
    assert s.want(new) != s.want(s.default), "pick a step that moves the readout"
    n_charts = harness.mark_charts(page)
    assert n_charts >= 1
    slider.focus()
    page.keyboard.press("ArrowRight")
    harness.wait_readout(page, s.readout(new))
    # The charts are updated in place, not mounted anew (the cheap redraw, plots.show).
    marked, kept, redrawn = harness.charts_since_mark(page)
    assert (marked, kept) == (n_charts, n_charts), "a chart was replaced instead of updated"
    assert redrawn >= 1, "no chart drew the new numbers"
    if s.sentence:
        harness.wait_sentence(page, s.sentence(new))
    harness.wait_query(page, s.param, s.url_text(new))
    harness.assert_clean(page)


@pytest.mark.parametrize("case, bad", bad_link_rows())
def test_malformed_link_shows_notice_and_fallback(case, bad, open_page):
    page = open_page(case.path, query=bad.query)
    wait_ready(page, case, bad.expect())
    notice = page.get_by_test_id("stAlert").filter(has_text=harness.NOTICE)
    expect(notice).to_have_count(1)
    name = next(iter(bad.query))
    expect(notice).to_contain_text(name)
    harness.assert_clean(page)


# ------------------------------------------------------------------------- page-specific
def _download(page, button_name: str):
    """Click a download button (opening the data expander if needed); return name and rows.

    A click that lands while the session reruns can ask for a file the new run has already
    replaced (Streamlit answers 404 and no download starts): then wait for the run to end and
    click once more. Bounded: two clicks."""
    button = page.get_by_role("button", name=button_name)
    if not button.is_visible():  # the data sits in a collapsed expander
        page.get_by_text("The numbers behind the figure").click()
    # The expander builds its contents in the run its opening starts: a run's time, not 5 s.
    expect(button).to_be_visible(timeout=harness.SCRIPT_TIMEOUT_MS)
    for attempt, timeout_ms in enumerate((20_000, harness.SCRIPT_TIMEOUT_MS)):
        harness.wait_idle(page)
        try:
            with page.expect_download(timeout=timeout_ms) as info:
                button.click()
            break
        except PlaywrightTimeout:
            if attempt == 1:
                raise
    download = info.value
    with open(download.path(), encoding="utf-8") as f:
        text = f.read()
    return download.suggested_filename, list(csv.DictReader(io.StringIO(text)))


def _column(table, name) -> np.ndarray:
    return np.array([float(row[name]) for row in table])


def test_tilt_csv_holds_the_figures_numbers(open_page):
    kappa = 20.0
    page = open_page("tilt", query={"kappa": num_text(kappa)}, accept_downloads=True)
    wait_ready(page, TILT, TILT.slider.readout(kappa))
    name, table = _download(page, "Download the figure's data (CSV)")
    assert name == "tilt_kappa_20.csv"
    pi, _, _, _ = tilt_numbers(kappa)
    from klrl_core import model

    r = model.rewards()
    pi0 = np.exp(model.log_reference(r))
    assert len(table) == r.size
    np.testing.assert_allclose(_column(table, "reward r"), r, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(_column(table, "reference pi0"), pi0, rtol=1e-9, atol=1e-300)
    np.testing.assert_allclose(_column(table, "optimum pi*"), pi, rtol=1e-9, atol=1e-300)
    assert abs(_column(table, "optimum pi*").sum() - 1) < 1e-9


def test_bandit_new_runs_changes_runs_and_seed_and_csv_holds_them(open_page):
    """ "New runs" draws another 20 runs: new seed in the link, readout and CSV from that seed."""
    page = open_page("bandit", accept_downloads=True)
    wait_ready(page, BANDIT)
    default = str(PRINTED_FIGURE_SEED)  # the draw that prints Figure 12.1's readout
    assert harness.query(page).get("seed") == default
    page.get_by_role("button", name="New runs").click()
    page.wait_for_function(
        "(d) => { const s = new URLSearchParams(window.location.search).get('seed');"
        "        return s !== null && s !== d; }",
        arg=default,
        timeout=harness.SCRIPT_TIMEOUT_MS,
    )
    seed = int(harness.query(page)["seed"])
    lr = BANDIT.slider.default
    harness.wait_readout(page, bandit_readout(lr, False, seed))
    assert harness.query(page).get("lr") == num_text(lr)
    harness.assert_clean(page)
    # the runs chart's text alternative names the seed it draws
    assert f"seed {seed}" in page.locator(".klrl-chart").first.get_attribute("aria-label")

    name, table = _download(page, "Download the figure's data (CSV)")
    assert name == f"bandit_lr_{num_text(lr)}_baseline_off_seed_{seed}.csv"
    runs, _, _ = bandit_numbers(lr, False, seed)
    old_runs, _, _ = bandit_numbers(lr, False, PRINTED_FIGURE_SEED)
    assert len(table) == runs.shape[1]
    drawn = np.stack([_column(table, f"run {i + 1}") for i in range(runs.shape[0])])
    np.testing.assert_allclose(drawn, runs, rtol=1e-9, atol=1e-12)
    assert not np.allclose(drawn, old_runs), "the runs drawn did not change"
    from klrl_core import bandit

    np.testing.assert_allclose(
        _column(table, "exact gradient"),
        bandit.exact_gradient_path(bandit.DEFAULT_STEPS, lr),
        rtol=1e-9,
    )
    np.testing.assert_allclose(
        _column(table, "average of 20 runs"), runs.mean(axis=0), rtol=1e-9, atol=1e-12
    )

    # The link with the new seed reproduces the same runs in a fresh session.
    fresh = open_page("bandit", query=harness.query(page))
    wait_ready(fresh, BANDIT, bandit_readout(lr, False, seed))


def test_groups_calculator_reports_advantages_of_typed_grades(open_page):
    """The typed group's table (two decimals, signed) and its CSV (full precision), for three
    ways of typing a group, one after the other on one page."""
    page = open_page("groups", accept_downloads=True)
    wait_ready(page, GROUPS)
    # Sizes 4, 8 and 3: the wait for the table's row count tells one group's table from the
    # one before it.
    for grades in ("1,0,0,1", "1 0 0 0 0 0 0 0", "0;1;1"):
        _typed_group(page, grades)


def _typed_group(page, grades: str) -> None:
    from klrl_core import groups

    box = page.get_by_label("Grades of one group")
    box.fill(grades)
    box.press("Enter")
    expected = groups.parse_grades(grades)
    n = expected.size
    page.wait_for_function(
        "([n]) => { const t = Array.from(document.querySelectorAll('[data-testid=stTable]')).pop();"
        "  return t && t.querySelectorAll('tbody tr').length === n; }",
        arg=[n],
        timeout=harness.SCRIPT_TIMEOUT_MS,
    )
    harness.wait_idle(page)
    shown = page.get_by_test_id("stTable").last.evaluate(
        "t => Array.from(t.querySelectorAll('tbody tr')).map("
        "  tr => Array.from(tr.querySelectorAll('th, td')).map(c => c.textContent.trim()))"
    )
    heads = page.get_by_test_id("stTable").last.evaluate(
        "t => Array.from(t.querySelectorAll('thead th')).map(c => c.textContent.trim())"
    )
    col = {h: i for i, h in enumerate(heads)}
    std = groups.group_advantages(expected, "std")
    assert [r[col[groups.CONVENTION_LABELS["std"]]] for r in shown] == [
        ("+" if v > 0 else "") + f"{v:.2f}".replace("-", "−") for v in std
    ]
    name, table = _download(page, "Download every response's advantages (CSV)")
    assert name == "group_advantages.csv" and len(table) == n
    assert [int(float(r["grade"])) for r in table] == list(expected.astype(int))
    for conv in groups.CONVENTIONS:
        np.testing.assert_allclose(
            _column(table, groups.CONVENTION_LABELS[conv]),
            groups.group_advantages(expected, conv),
            rtol=1e-12,
            atol=1e-14,
        )
    if grades == "1,0,0,1":  # the example: +1 for a right answer, -1 for a wrong one
        assert list(_column(table, groups.CONVENTION_LABELS["std"])) == [1.0, -1.0, -1.0, 1.0]
    harness.assert_clean(page)
