"""The independent review's layout items (issue 31, last bullet), measured in the browser: boxes
of the drawn elements, not the figure's JSON."""

from __future__ import annotations

import pytest

from tests.e2e import harness
from tests.e2e.test_readable import MARKS_JS, PROJECTOR

# The first tick label of each axis (the origin's), as boxes.
ORIGIN_JS = """(key) => {
  const gd = document.querySelector(`.klrl-chart[data-klrl-key="${key}"]`);
  const box = t => { const r = t.getBoundingClientRect();
                     return {l: r.left, t: r.top, r: r.right, b: r.bottom, text: t.textContent}; };
  const x = Array.from(gd.querySelectorAll('.xtick text')).map(box).sort((a, b) => a.l - b.l)[0];
  const y = Array.from(gd.querySelectorAll('.ytick text')).map(box).sort((a, b) => b.b - a.b)[0];
  return {x, y};
}"""

# A trace's drawn line (by legend name) against its plot area, in pixels from the plot's top.
CURVE_JS = """([key, name]) => {
  const gd = document.querySelector(`.klrl-chart[data-klrl-key="${key}"]`);
  const L = gd._fullLayout, i = gd._fullData.findIndex(t => t.name === name);
  const path = gd.querySelectorAll('.scatterlayer .trace')[i].querySelector('.js-line');
  const r = path.getBoundingClientRect(), area = gd.querySelector('.nsewdrag').getBoundingClientRect();
  return {top: r.top - area.top, bottom: r.bottom - area.top, height: area.height};
}"""

# Every y-axis title's box against its chart's box.
TITLES_JS = """() => Array.from(document.querySelectorAll('.klrl-chart')).map(gd => {
  const c = gd.getBoundingClientRect();
  return Array.from(gd.querySelectorAll('.g-ytitle text')).map(t => {
    const r = t.getBoundingClientRect();
    return {key: gd.dataset.klrlKey, text: t.textContent, inside: r.left >= c.left - 0.5 &&
            r.right <= c.right + 0.5 && r.top >= c.top - 0.5 && r.bottom <= c.bottom + 0.5};
  });
}).flat()"""


def opened(open_page, slug, charts, viewport=PROJECTOR, **kw):
    page = open_page(slug, viewport=viewport, **kw)
    harness.wait_idle(page)
    harness.wait_charts(page, at_least=charts)
    page.wait_for_timeout(300)
    return page


def test_dpo_policy_panel_is_filled_at_the_defaults(open_page):
    """Review item 11: π*'s bars (largest ≈ 0.10) filled a tenth of a 0–1.08 axis."""
    page = opened(open_page, "dpo", 3)
    # the bars only: the run's diamonds may sit high at any axis
    m = page.evaluate(MARKS_JS.replace(", .scatterlayer .point", ""), "dpo-policy")
    filled = (m["bottom"] - m["highest"]) / (m["bottom"] - m["top"])
    assert filled >= 0.6, (m, filled)


def test_normalization_exact_weight_is_not_a_flat_line_at_the_bottom(open_page):
    """Review item 12: at k = 8 the exact weight (1.86–2.65) lay in the bottom tenth of a 0–21
    axis; on the log axis it stands clear of the bottom third."""
    page = opened(open_page, "normalization", 2)
    c = page.evaluate(CURVE_JS, ["normalization-weights", "÷ group std (exact)"])
    assert (c["height"] - c["top"]) / c["height"] >= 0.3, c


@pytest.mark.parametrize(
    "slug, keys",
    [
        ("normalization", ("normalization-weights", "normalization-objectives")),
        ("entropy", ("entropy-eta", "entropy-steps")),
    ],
)
def test_the_origins_tick_labels_do_not_overlap(open_page, slug, keys):
    """Review item 15: the y axis's "0" was drawn on the x axis's "0"/"0.0"."""
    page = opened(open_page, slug, 2)
    for key in keys:
        page.locator(f'.klrl-chart[data-klrl-key="{key}"]').scroll_into_view_if_needed()
        o = page.evaluate(ORIGIN_JS, key)
        x, y = o["x"], o["y"]
        apart = x["l"] >= y["r"] or y["l"] >= x["r"] or x["t"] >= y["b"] or y["t"] >= x["b"]
        assert apart, (key, o)


@pytest.mark.parametrize("slug", ["bandit", "kl-penalty"])
def test_y_axis_titles_fit_their_chart_on_a_phone(open_page, slug):
    """Review item 14: at 390×844 the runs chart's y title looked cut ("obability ..."); it lies
    inside its chart (the screenshot's bottom edge cut it, not the chart)."""
    page = opened(open_page, slug, 1, viewport=harness.PHONE)
    titles = page.evaluate(TITLES_JS)
    assert titles and all(t["inside"] for t in titles), titles


def test_rarity_gap_lines_are_not_flat_under_a_large_reward_gap(open_page):
    """Review item 13: at β = 10⁻⁴, Δ = 10, p₀ = 10⁻¹² the gap panel ran 0–10.8 while its lines
    stayed below 0.004, flat on the floor; now they rise through most of the plot."""
    page = open_page("rarity", {"beta": "0.0001", "delta": "10", "p0": "1e-12"}, viewport=PROJECTOR)
    harness.wait_idle(page)
    harness.wait_charts(page, at_least=2)
    c = page.evaluate(CURVE_JS, ["rarity-gap", "Eq. 12.7: β·log(1/p₀)"])
    assert (c["bottom"] - c["top"]) / c["height"] >= 0.5, c
