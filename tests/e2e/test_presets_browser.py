"""A lecturer's presets in a real Chromium (issue 34): Reset brings every control back to the
link's values after each one is moved, including the slider the figures follow (drawn by
instant.js from its table of stops and by the run); a locked main slider does not move, so
its figure does not follow a drag; the preset builder's link, QR code and copy button, clean
under axe-core in both themes."""

from __future__ import annotations

import numpy as np

from tests.e2e import harness
from tests.e2e.cases import KAPPA_LABEL, bandit_readout, groups_readout, kappa_stops, tilt_readout
from tests.e2e.test_classroom import PROJECTOR, assert_axe_clean, assert_dark
from tests.e2e.test_follow import RECORD_JS, _bars_by_hand, _tilt_bars, drag


def _reset(page) -> None:
    runs = harness.runs_so_far(page)
    page.get_by_role("button", name="Reset", exact=True).click()
    harness.wait_run_after(page, runs)


def _press(page, label: str, key: str, times: int = 1) -> None:
    runs = harness.runs_so_far(page)
    slider = harness.slider(page, label)
    for _ in range(times):
        slider.press(key)
    harness.wait_run_after(page, runs)


def _valuetext(page, label: str) -> str:
    return harness.slider(page, label).get_attribute("aria-valuetext")


def test_reset_on_tilt_brings_back_kappa_and_the_axis(open_page):
    """tilt?kappa=20&axis=sqrt&lock=model: move κ (keys: instant.js draws each stop) and the
    axis, press Reset: κ = 20 and the √KL axis again, in the readout, the bars (π* at κ = 20,
    computed here), the slider and the address bar; the model stays locked."""
    page = open_page("tilt", {"kappa": "20", "axis": "sqrt", "lock": "model"})
    harness.wait_readout(page, tilt_readout(20.0))
    harness.wait_table(page, "tilt")
    shown = _valuetext(page, KAPPA_LABEL)
    _press(page, KAPPA_LABEL, "ArrowRight", 3)
    moved = kappa_stops()[kappa_stops().index(20.0) + 3]
    harness.wait_readout(page, tilt_readout(moved))
    page.get_by_role("button", name="Model", exact=True).click()
    # the selectbox in the opened popover (its button is also named "Model" now)
    model = page.locator('[data-testid="stPopoverBody"]').get_by_label("Model", exact=True)
    assert model.is_disabled()  # locked by the link
    runs = harness.runs_so_far(page)
    page.locator(".st-key-tilt-axis").get_by_text("KL", exact=True).click()
    harness.wait_run_after(page, runs)
    harness.wait_query(page, "axis", "kl")
    page.keyboard.press("Escape")
    assert harness.query(page)["kappa"] != "20"

    page.evaluate(RECORD_JS, KAPPA_LABEL)
    _reset(page)
    harness.wait_readout(page, tilt_readout(20.0))
    harness.wait_query(page, "kappa", "20")
    assert harness.query(page) == {"kappa": "20", "axis": "sqrt", "lock": "model"}
    assert _valuetext(page, KAPPA_LABEL) == shown
    # the reset stop was drawn by the browser's driver from its table, and the run agrees
    page.wait_for_function(
        "() => window.__follow.drawn.length > 0 || window.__follow.chartChanges > 0"
    )
    page.wait_for_timeout(300)
    np.testing.assert_allclose(_tilt_bars(page), _bars_by_hand(20.0), rtol=1e-6, atol=1e-12)
    assert page.evaluate("() => document.querySelectorAll('.klrl-computing').length") == 0
    # and the frontier's axis is √KL again (drawn by the reset's run, not from the table of
    # stops: the axis is another table's setting; a loaded CI run read it before the run ended)
    harness.wait_idle(page)
    title = page.evaluate(
        "() => document.querySelectorAll('.klrl-chart')[1]._fullLayout.xaxis.title.text"
    )
    assert "√" in title, title


def test_reset_on_bandit_brings_back_the_rate_and_the_baseline(open_page):
    """bandit?lr=0.3&baseline=on&lock=seed: the learning rate (the followed slider) and the
    baseline moved, Reset brings both back, the readout is klrl_core's at lr 0.3 with a
    baseline; New runs cannot move the locked seed."""
    page = open_page("bandit", {"lr": "0.3", "baseline": "on", "lock": "seed"})
    harness.wait_readout(page, bandit_readout(0.3, True))
    assert page.get_by_role("button", name="New runs").is_disabled()
    _press(page, "Learning rate", "ArrowLeft", 2)
    harness.wait_readout(page, {"lr": "0.2"})
    runs = harness.runs_so_far(page)
    page.get_by_text("Baseline", exact=True).click()
    harness.wait_run_after(page, runs)
    harness.wait_query(page, "baseline", "off")
    _reset(page)
    harness.wait_readout(page, bandit_readout(0.3, True))
    harness.wait_query(page, "baseline", "on")
    assert harness.query(page) == {"baseline": "on", "lr": "0.3", "seed": "61", "lock": "seed"}
    assert page.get_by_role("switch", name="Baseline").is_checked()


def test_reset_on_groups_brings_back_p_and_k(open_page):
    """groups?p=0.3&k=12: p moved by keys and k typed, Reset brings back both."""
    page = open_page("groups", {"p": "0.3", "k": "12"})
    harness.wait_readout(page, groups_readout(0.3, 12))
    # Not this issue's: on a fresh load, keys pressed on p before the page has settled can
    # reset the linked k box to its default 8 (seen 2 times in 6 on main as well).
    harness.wait_table(page, "groups")
    harness.wait_idle(page)
    label = "Solve rate p of the prompt"
    shown = _valuetext(page, label)
    _press(page, label, "ArrowRight", 4)
    harness.wait_readout(page, groups_readout(0.34, 12))
    box = page.locator('input[aria-label="Group size k"]')
    runs = harness.runs_so_far(page)
    box.fill("5")
    box.press("Enter")
    harness.wait_run_after(page, runs)
    harness.wait_readout(page, groups_readout(0.34, 5))
    _reset(page)
    harness.wait_readout(page, groups_readout(0.3, 12))
    assert harness.query(page) == {"p": "0.3", "k": "12"}
    assert _valuetext(page, label) == shown
    assert box.input_value() == "12"


def test_a_locked_main_slider_does_not_follow_a_drag(open_page):
    """tilt?kappa=20&lock=kappa: the slider is disabled; a drag over its thumb and an arrow
    key change nothing: no stop drawn, the same bars, readout and link."""
    page = open_page("tilt", {"kappa": "20", "lock": "kappa"}, viewport=PROJECTOR)
    harness.wait_readout(page, tilt_readout(20.0))
    harness.wait_charts(page, at_least=2)
    slider = harness.slider(page, KAPPA_LABEL)
    assert slider.is_disabled()
    page.get_by_text("The lecturer fixed κ for this view.").wait_for()
    bars = _tilt_bars(page)
    shown = _valuetext(page, KAPPA_LABEL)
    start = slider.get_attribute("value")
    page.evaluate(RECORD_JS, KAPPA_LABEL)
    drag(page, KAPPA_LABEL, fraction=0.4, moves=8, ms=400)
    page.wait_for_timeout(600)
    harness.wait_idle(page)
    rec = page.evaluate("() => window.__follow")
    # the thumb never left its stop (an attribute written again with the same value aside)
    assert {tuple(x) for x in rec["seen"]} <= {(start, shown)}, rec
    assert rec["drawn"] == [] and rec["chartChanges"] == 0, rec
    assert _valuetext(page, KAPPA_LABEL) == shown
    np.testing.assert_array_equal(_tilt_bars(page), bars)
    harness.wait_readout(page, tilt_readout(20.0))
    assert harness.query(page) == {"kappa": "20", "axis": "kl", "lock": "kappa"}


def test_the_builder_makes_a_link_that_opens_the_same_locked_view(
    open_page, browser, screenshot_dir
):
    """Prepare a link on tilt: tick Lock κ and Hide the model; the link shown opens the same
    view with κ disabled and no model button; the QR code is an image with a text
    alternative; Copy puts the link on the clipboard and says so; axe-core finds nothing of
    the app's own, light and dark."""
    browser.ctx.grant_permissions(["clipboard-read", "clipboard-write"])
    page = open_page("tilt", {"kappa": "20"})
    harness.wait_readout(page, tilt_readout(20.0))
    runs = harness.runs_so_far(page)
    page.get_by_text("Prepare a link for a class").click()
    page.get_by_text("Lock κ").wait_for()
    harness.wait_run_after(page, runs)  # the builder is drawn by the run the click starts
    code = page.locator(".st-key-klrl-tilt-prepared [data-testid='stCode'] code")
    for label, param in (("Lock κ", "lock=kappa"), ("Hide the model", "hide=model")):
        box = page.get_by_role("checkbox", name=label, exact=True)
        for _ in range(3):
            # a click that lands while the last run redraws the builder can miss the box
            # (seen once in a loaded CI run): the box must then read unchecked, and is
            # clicked again; a box that reads checked must be in the link
            if not box.is_checked():
                runs = harness.runs_so_far(page)
                box.check(force=True)
                harness.wait_run_after(page, runs)
            if box.is_checked():
                break
        page.wait_for_function(
            '(p) => document.querySelector(".st-key-klrl-tilt-prepared '
            "[data-testid='stCode'] code\")?.textContent.includes(p)",
            arg=param,
        )
    assert harness.query(page)["kappa"] == "20"
    link = code.inner_text().strip()
    assert link.endswith("/tilt?kappa=20&axis=kl&lock=kappa&hide=model"), link
    qr = page.locator(".st-key-klrl-tilt-prepared img")
    assert qr.get_attribute("alt").startswith("QR code of the link above")
    assert qr.evaluate("img => img.naturalWidth") > 100
    page.get_by_role("button", name="Copy the link").click()
    page.get_by_text("Copied.").wait_for()
    assert page.evaluate("() => navigator.clipboard.readText()") == link
    assert_axe_clean(page)

    opened = open_page(link.split("/", 3)[3], viewport=PROJECTOR, color_scheme="dark")
    harness.wait_readout(opened, tilt_readout(20.0))
    assert harness.slider(opened, KAPPA_LABEL).is_disabled()
    assert opened.get_by_role("button", name="Model", exact=True).count() == 0
    opened.get_by_role("button", name="Frontier's axis").wait_for()
    opened.get_by_text(
        "The lecturer fixed κ for this view and set the model, which is not shown."
    ).wait_for()
    assert harness.query(opened) == {"kappa": "20", "axis": "kl", "lock": "kappa", "hide": "model"}
    assert_dark(opened)
    assert_axe_clean(opened)
