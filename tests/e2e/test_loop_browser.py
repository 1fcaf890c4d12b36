"""The loop page in Chromium (issue 31): the Play button walks the step slider to its end, and
at step 0 the dynamics chart's rings and tick labels do not overlap (their boxes, measured)."""

from __future__ import annotations

import pytest

from tests.e2e import harness
from tests.e2e.harness import DESKTOP, PHONE

SLIDER = "Training step"

# Boxes of the dynamics chart's pieces: the y axes' tick labels, the x axis's "0", and the
# current step's rings (white-filled points drawn over the plot's edge).
BOXES_JS = """() => {
  const chart = document.querySelector('.klrl-chart[data-klrl-key="loop-dynamics"]');
  const rect = el => { const b = el.getBoundingClientRect();
                       return {x: b.x, y: b.y, w: b.width, h: b.height, t: el.textContent}; };
  const ticks = sel => Array.from(chart.querySelectorAll(sel)).map(rect);
  const rings = Array.from(chart.querySelectorAll('.scatterlayer path.point'))
    .filter(p => (p.style.fill || '').replace(/\\s/g, '') === 'rgb(255,255,255)').map(rect);
  return {y: ticks('.ytick text').concat(ticks('.y2tick text')), x: ticks('.xtick text'),
          rings};
}"""


def overlaps(a: dict, b: dict, slack: float = 0.5) -> bool:
    return (
        a["x"] + slack < b["x"] + b["w"]
        and b["x"] + slack < a["x"] + a["w"]
        and a["y"] + slack < b["y"] + b["h"]
        and b["y"] + slack < a["y"] + a["h"]
    )


def loaded(page) -> None:
    harness.slider(page, SLIDER).wait_for(state="attached")
    harness.wait_charts(page, at_least=1)
    harness.wait_idle(page)


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_step_zero_rings_and_origin_clear_the_tick_labels(open_page, viewport):
    page = open_page("loop", query={"step": "0"}, viewport=viewport)
    loaded(page)
    chart = page.locator('.klrl-chart[data-klrl-key="loop-dynamics"]')
    chart.scroll_into_view_if_needed()
    chart.locator(".main-svg").first.wait_for()  # charts off screen draw when shown
    page.wait_for_function("""() => document.querySelectorAll(
      '.klrl-chart[data-klrl-key="loop-dynamics"] .scatterlayer path.point').length >= 4""")
    boxes = page.evaluate(BOXES_JS)
    assert len(boxes["rings"]) == 4 and boxes["y"] and boxes["x"]
    hits = [(r, t["t"]) for r in boxes["rings"] for t in boxes["y"] + boxes["x"] if overlaps(r, t)]
    assert not hits, f"step 0's rings cover tick labels: {hits}"
    zero = [t for t in boxes["x"] if t["t"] == "0"]
    assert zero, boxes["x"]
    clash = [t["t"] for t in boxes["y"] if overlaps(zero[0], t)]
    assert not clash, f"the x axis's 0 overlaps {clash} at the origin"
    harness.assert_clean(page)


def test_play_walks_the_steps_to_the_end_and_stops(open_page):
    """Play moves the thumb stop by stop (the readout follows), ends at the last stop with
    the button back to Play, and the link and the run follow the slider."""
    page = open_page("loop", query={"step": "0", "steps": "12"})
    loaded(page)
    button = page.get_by_role("button", name=f"Play: step through {SLIDER}")
    assert button.inner_text().endswith("Play")
    page.evaluate("""() => { window.__steps = new Set();
      const i = Array.from(document.querySelectorAll('input[type="range"]'))
        .find(x => x.getAttribute('aria-label') === 'Training step');
      new MutationObserver(() => window.__steps.add(i.getAttribute('aria-valuetext')))
        .observe(i, {attributes: true, attributeFilter: ['aria-valuetext']}); }""")
    button.click()
    page.get_by_role("button", name=f"Pause: step through {SLIDER}").wait_for()
    page.get_by_role("button", name=f"Play: step through {SLIDER}").wait_for(timeout=30_000)
    seen = set(page.evaluate("() => Array.from(window.__steps)"))
    assert {"3", "6", "9", "12"} <= seen, seen
    assert harness.slider(page, SLIDER).get_attribute("aria-valuetext") == "12"
    harness.wait_readout(page, {"GRPO step": "12 of 12"})
    harness.wait_query(page, "step", "12")
    assert page.locator("button.klrl-play").inner_text().endswith("Play")
    # Play at the end starts again from step 0; Pause holds the thumb where it is
    button.click()
    page.wait_for_function("""() => { const i = Array.from(document.querySelectorAll(
        'input[type="range"]')).find(x => x.getAttribute('aria-label') === 'Training step');
        const v = parseInt(i.getAttribute('aria-valuetext')); return v >= 1 && v < 12; }""")
    page.get_by_role("button", name=f"Pause: step through {SLIDER}").click()
    page.wait_for_timeout(300)  # a press made just before the click has landed
    held = harness.slider(page, SLIDER).get_attribute("aria-valuetext")
    page.wait_for_timeout(1000)
    assert harness.slider(page, SLIDER).get_attribute("aria-valuetext") == held != "12"
    harness.wait_idle(page)
    harness.assert_clean(page)
