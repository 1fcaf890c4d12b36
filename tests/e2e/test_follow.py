"""Figures that follow the hand (klrl_app/instant.py, instant.js), in a real Chromium.

While the main slider's thumb is dragged, the first chart and the readout are redrawn for the
stops under it without a run; at the release the chart shows the stop under the thumb; with the
page's messages to the server held back, a key press (every slider page) and a drag (three
pages) still redraw the figure; the table of stops goes to the
browser once, and later runs send only a reference to it. One page load serves all of a
page's checks: a load is most of a browser test's time on two cores.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from tests.e2e import harness
from tests.e2e.cases import SLIDER_PAGES
from tests.e2e.test_classroom import (
    DARK,
    PROJECTOR,
    HeldBack,
    assert_axe_clean,
    assert_dark,
    assert_first_screen,
    ready,
)
from tests.e2e.test_pages_browser import keys_right, loaded_clean

# Records, in the page, the stops the thumb took and the stops the driver drew (instant.js's
# "klrl-follow-drawn" event), and counts DOM changes of the first chart.
RECORD_JS = """(label) => {
  const input = Array.from(document.querySelectorAll('input[type="range"]'))
    .find(i => i.getAttribute('aria-label') === label);
  const rec = window.__follow = {seen: [], drawn: [], chartChanges: 0, busy: false,
                                 lastChartChange: 0};
  new MutationObserver(() => {
    rec.seen.push([input.value, input.getAttribute('aria-valuetext')]);
    if (document.querySelector('.klrl-readout-main')?.getAttribute('aria-busy') === 'true')
      rec.busy = true;
  }).observe(input, {attributes: true, attributeFilter: ['aria-valuetext', 'value']});
  rec.computing = [];
  window.addEventListener('klrl-follow-drawn', e => {
    (e.detail.ok ? rec.drawn : rec.computing).push(e.detail.key); });
  const chart = document.querySelector('.klrl-chart');
  new MutationObserver(() => { rec.chartChanges++; rec.lastChartChange = performance.now(); })
    .observe(chart, {subtree: true, childList: true, attributes: true, characterData: true});
}"""

THUMB_JS = """(label) => {
  const input = Array.from(document.querySelectorAll('input[type="range"]'))
    .find(i => i.getAttribute('aria-label') === label);
  const thumb = input.parentElement.parentElement, track = thumb.parentElement;
  const t = thumb.getBoundingClientRect(), k = track.getBoundingClientRect();
  return {x: t.x + t.width / 2, y: t.y + t.height / 2, left: k.x, right: k.x + k.width};
}"""


def drag(
    page, label: str, fraction: float = 0.5, moves: int = 16, ms: int = 800, release: bool = True
) -> dict:
    """Pointer down on the thumb, ``moves`` moves over ``fraction`` of the track in ``ms``,
    pointer up: the lecturer's drag. Fewer moves than benchmarks/latency.py's 40: Playwright
    waits for the page to take each move, which on a busy page is a redraw, so 40 moves take
    5-8 s on two shared cores; 16 still cross many stops each way."""
    box = page.evaluate(THUMB_JS, label)
    width = box["right"] - box["left"]
    direction = 1 if box["x"] < box["left"] + width / 2 else -1
    page.mouse.move(box["x"], box["y"])
    page.mouse.down()
    for i in range(1, moves + 1):
        page.mouse.move(box["x"] + direction * fraction * width * i / moves, box["y"])
        page.wait_for_timeout(ms / moves)
    if release:
        page.mouse.up()
    return box


@pytest.mark.parametrize("case", SLIDER_PAGES, ids=lambda c: c.slug)
def test_a_key_press_and_a_drag_follow_the_hand_before_the_server_does(
    case, browser, app_url, screenshot_dir
):
    """One projector-sized page (1280×720) whose messages to the server can be held back:

    1. the main control and the figure share the first screen (assert_first_screen); the page
       loads clean (test_pages_browser.loaded_clean) and, in the light theme, axe-core finds
       nothing of the app's own in it; ArrowRight moves the readout, the charts (in place) and
       the link, ArrowLeft brings the default back (test_pages_browser.keys_right: the same
       page serves both files' checks, a load being most of a browser test's time);
    2. with everything the page sends held back, an arrow key still brings the next stop's
       numbers (klrl_core's, computed by this test) into the readout, and on a page whose stops
       are not simulations, into the first chart; released, the run shows the same numbers;
    3. during a drag the first chart changes and the stops under the thumb are drawn (at least
       half of those the thumb took here; 90% is benchmarks/latency.py's goal on a quiet
       machine); after the release the readout is klrl_core's for the stop under the thumb;
    4. on the pages of HELD_DRAG, a drag with the server held back too;
    5. on the pages of DARK, opened preferring the dark theme: axe-core finds nothing of the
       app's own in it at the end.
    On tilt, the bars are checked against π* computed here, during the drag and after it,
    and a readout number overwritten while the run is held back is put right by the run.
    Any uncaught JavaScript error fails the test (HeldBack.close)."""
    dark = case.slug in DARK
    held = HeldBack(
        browser, app_url, case.path, viewport=PROJECTOR, color_scheme="dark" if dark else "light"
    )
    page = held.page
    try:
        ready(page, case)
        assert_first_screen(page, case)
        loaded_clean(page, case, PROJECTOR, screenshot_dir)
        if not dark:
            assert_axe_clean(page)
        harness.wait_table(page, case.slug)  # the table of stops follows the visible page
        _held_key_press(held, case)
        _drag_and_release(page, case)
        if case.slug in HELD_DRAG:
            _held_drag(held, case)
        if dark:
            assert_dark(page)
            assert_axe_clean(page)
    finally:
        held.close()


def _held_key_press(held, case) -> None:
    page, s = held.page, case.slider
    right = s.neighbour(s.default, +1)
    key = harness.slider(page, s.label)
    # There and back through the server (a simulated stop is then in the process's table).
    keys_right(case, page)
    key.press("ArrowLeft")
    harness.wait_readout(page, s.readout(s.default))
    harness.wait_query(page, s.param, s.url_text(s.default))
    harness.wait_table(page, case.slug)
    page.evaluate(RECORD_JS, s.label)
    held.hold()
    key.press("ArrowRight")
    try:
        page.wait_for_function(harness.READOUT_MATCHES_JS, arg=s.readout(right), timeout=5000)
    except Exception as err:
        raise AssertionError(
            f"the readout shows {harness.readout(page)} with the run held "
            f"back, not {s.readout(right)}"
        ) from err
    if case.slug not in SIMULATED:
        page.wait_for_function("() => window.__follow.drawn.length > 0", timeout=5000)
        assert page.evaluate("() => window.__follow.chartChanges") > 0, (
            "the key press did not redraw the chart with the run held back"
        )
        # and what it drew is the stop under the thumb, by the driver (no run came)
        assert page.evaluate(
            "() => document.querySelector('.klrl-chart').klrlStop === window.__follow.drawn.at(-1)"
        ), "the chart shows another stop"
    if case.slug == "tilt":
        # The page's redraw rewrites only the text that changed since its previous run; a
        # number changed in between (here the π₀ reward, the same at every κ) must still be
        # put right by the run.
        page.evaluate("""() => { for (const item of document.querySelectorAll(
            '.klrl-readout-main .klrl-item')) {
              if (item.querySelector('.klrl-label').textContent === 'E[r] under π₀')
                item.querySelector('.klrl-value').firstChild.nodeValue = 'stale'; } }""")
    held.wait_held()
    held.release_and_wait_run()
    harness.wait_readout(page, s.readout(right))
    if case.slug == "tilt":
        assert harness.readout(page)["E[r] under π₀"] == "0.31"


def _drag_and_release(page, case) -> None:
    harness.wait_table(page, case.slug)
    page.evaluate(RECORD_JS, case.slider.label)
    drag(page, case.slider.label, release=False)
    rec = page.evaluate("() => window.__follow")
    assert rec["chartChanges"] > 0, "the chart did not change during the drag"
    assert rec["busy"], "the readout's live region was not held during the drag"
    if case.slug in SIMULATED:
        # The page tests' server has no background tables (KLRL_PRECOMPUTE=0): most stops
        # are not computed yet, and each must say so in place rather than show another
        # stop's figure (latency.py --mode drag measures the drawn share on a settled server).
        assert rec["computing"], "no stop was shown as computing"
        rec["drawn"] += rec["computing"]
    share = harness.drawn_share(rec["seen"], rec["drawn"])
    runs = harness.runs_so_far(page)
    try:
        # Most of the stops, not a timing: the 90% goal is measured on a quiet machine by
        # benchmarks/latency.py --mode drag; here other tests share the two cores.
        assert len(harness.stops_taken(rec["seen"])) >= 3, f"the thumb took {rec['seen']}"
        assert share >= 0.5, f"only {share:.0%} of the stops under the thumb were drawn"
        if case.slug == "tilt":  # the bars under the thumb are π* at its κ
            page.wait_for_timeout(100)
            np.testing.assert_allclose(
                _tilt_bars(page), _bars_by_hand(_slider_value(page, case)), rtol=1e-6, atol=1e-12
            )
    finally:
        page.mouse.up()
    harness.wait_run_after(page, runs)  # the release's run
    page.wait_for_timeout(700)
    value = _slider_value(page, case)
    harness.wait_readout(page, case.slider.readout(value))
    assert page.evaluate("() => document.querySelectorAll('.klrl-computing').length") == 0, (
        "a chart still says computing after the run"
    )
    if case.slug == "tilt":
        np.testing.assert_allclose(_tilt_bars(page), _bars_by_hand(value), rtol=1e-6, atol=1e-12)
    if case.slug in ALIGNED:  # two charts drawn as one figure: their boxes line up
        keys, side = ALIGNED[case.slug]
        sizes = page.evaluate(
            """([keys, side]) => keys.map(k => {
            const c = document.querySelector(`.klrl-chart[data-klrl-key="${k}"]`);
            const s = c._fullLayout._size, r = c.getBoundingClientRect();
            return side === 'x' ? [Math.round(r.x + s.l), s.w] : [s.t, s.h]; })""",
            [keys, side],
        )
        assert sizes[0] == sizes[1], (keys, sizes)
    # Once the thumb has rested (instant.js: 500 ms), the live region speaks again.
    page.wait_for_function(
        "() => document.querySelector('.klrl-readout-main').getAttribute('aria-busy') === null",
        timeout=3000,
    )


def _held_drag(held, case) -> None:
    """A drag with the run held back: the readout and the chart still follow the thumb."""
    page = held.page
    harness.wait_table(page, case.slug)
    page.evaluate(RECORD_JS, case.slider.label)
    held.hold()
    drag(page, case.slider.label, fraction=0.3, moves=8, ms=400)
    value = _slider_value(page, case)
    harness.wait_readout(page, case.slider.readout(value), timeout_ms=5000)
    assert page.evaluate("() => window.__follow.chartChanges") > 0, (
        "the drag did not redraw the chart with the run held back"
    )
    held.release_and_wait_run()
    harness.wait_readout(page, case.slider.readout(value))


# Charts side by side on one y extent (token-credit's trees: a colour bar widens a margin), or
# stacked on one x axis (ppo-clip's objective over its gradient, dpo's policy over its pair
# weights): (their keys, the shared extent).
ALIGNED = {
    "token-credit": (("token-credit-tree", "token-credit-ref"), "y"),
    "ppo-clip": (("ppo-clip-surrogate", "ppo-clip-gradient"), "x"),
    "dpo": (("dpo-policy", "dpo-weights"), "x"),
}


# Pages whose drag is repeated with the run held back: one mechanism draws every page (the
# drag above already runs without a run until the release), so three kinds of table are
# enough: one chart of closed forms, a sliced simulation with a non-uniform slider, three
# charts.
HELD_DRAG = {"tilt", "length-bias", "ppo-clip"}


# Pages whose stops are each a simulation of their own (length-bias's stops slice one run,
# all ready once the page's run has it).
SIMULATED = {"bandit", "kl-penalty", "dpo"}


def _slider_value(page, case) -> float:
    """The value under the thumb, as the page's slider holds it."""
    input_ = harness.slider(page, case.slider.label)
    v = float(input_.get_attribute("value"))
    if case.slider.stops is not None:
        return case.slider.stops()[int(v)]
    return v


def _tilt_bars(page) -> np.ndarray:
    return np.array(
        page.evaluate("() => Array.from(document.querySelector('.klrl-chart')._fullData[0].y)"),
        dtype=float,
    )


def _bars_by_hand(kappa: float) -> np.ndarray:
    """pi* = pi0·exp(κ r)/Z, computed here in log space from the model's lists."""
    from klrl_core import model

    r = model.rewards()
    lp = model.log_reference(r) + kappa * r
    w = np.exp(lp - lp.max())
    return w / w.sum()


def _wait_quiet(page, frames: list[int], quiet_ms: int = 400, limit_ms: int = 10_000) -> None:
    """Until no websocket frame has arrived for ``quiet_ms``."""
    waited, seen = 0, -1
    while waited < limit_ms and seen != len(frames):
        seen = len(frames)
        page.wait_for_timeout(quiet_ms)
        waited += quiet_ms


def test_the_table_of_stops_is_fetched_once_after_plotly(browser, app_url):
    """The first load fetches the tilt table (over 100 kB as JSON) once, over HTTP, and only
    after plotly.js has arrived (on a phone they would share the network and hold back the
    first chart); key presses after it fetch nothing and send only the run's own messages
    (the two charts at the new stop, the slider, the readout), well under the table."""
    ctx = browser.new_context(viewport=PROJECTOR)
    try:
        page = ctx.new_page()
        frames: list[int] = []
        page.on(
            "websocket",
            lambda ws: ws.on(
                "framereceived",
                lambda f: frames.append(len(f) if isinstance(f, (bytes, str)) else 0),
            ),
        )
        fetched: list[str] = []  # in the order requested or finished
        page.on("request", lambda r: "/klrl-table/" in r.url and fetched.append("table"))
        page.on("requestfinished", lambda r: "plotly" in r.url and fetched.append("plotly"))
        page.goto(f"{app_url}/tilt", wait_until="domcontentloaded")
        case = next(c for c in SLIDER_PAGES if c.slug == "tilt")
        ready(page, case)
        harness.wait_table(page, "tilt")
        page.wait_for_timeout(500)
        assert fetched == ["plotly", "table"], fetched
        table = page.evaluate("() => JSON.stringify(window.klrlTables.tilt.rows).length")
        assert table > 100_000
        assert sum(frames) < table, (sum(frames), table)  # not over the websocket
        key = harness.slider(page, case.slider.label)
        value = case.slider.default
        sizes = []
        for _ in range(3):
            runs = harness.runs_so_far(page)
            n = len(frames)
            key.press("ArrowRight")
            value = case.slider.neighbour(value, +1)
            # The readout is drawn in the browser before the run starts: wait for the run
            # itself, then for the socket to fall quiet, so each press's bytes are its own.
            harness.wait_run_after(page, runs)
            harness.wait_readout(page, case.slider.readout(value))
            _wait_quiet(page, frames)
            sizes.append(sum(frames[n:]))
        assert fetched == ["plotly", "table"], fetched
        assert max(sizes) < table / 2, (sizes, table)
    finally:
        ctx.close()


def test_token_credit_letters_drawn_from_the_table_are_the_runs(browser, app_url):
    """π*'s tree on token-credit, drawn by the browser from the table of stops while the page's
    runs are held back: at every stop the keys reach (κ from 43 up, where the letters move
    between boxes, the last stop, 0, the next), each trace's heights and the letters' places are the run's at that κ
    (computed here by the page itself). A per-stop list of letters once did not update there."""
    from tests.conftest import array, charts, run_page
    from tests.e2e.cases import KAPPA_LABEL, kappa_stops

    stops = kappa_stops()
    held = HeldBack(browser, app_url, "token-credit?kappa=43", viewport=PROJECTOR)
    page = held.page
    try:
        harness.wait_charts(page, at_least=1)
        harness.wait_table(page, "token-credit")
        held.hold()
        key = harness.slider(page, KAPPA_LABEL)
        for press in ["ArrowRight"] * 3 + ["End", "Home", "ArrowRight"]:
            key.press(press)
            shown = key.get_attribute("aria-valuetext")  # a select slider's stop: its text
            kappa = float(re.match(r"κ = ([0-9,.]+)", shown).group(1).replace(",", ""))
            assert kappa in stops, shown
            page.wait_for_function(
                "(k) => document.querySelector('.klrl-chart').klrlStop === k", arg=shown
            )
            page.wait_for_timeout(150)
            drawn = page.evaluate(
                """() => document.querySelector('.klrl-chart').data.map(t => ({
                  mode: t.mode || null, text: t.text ? Array.from(t.text) : null,
                  y: Array.from(t.y, v => (v === null || Number.isNaN(v)) ? null : v)}))"""
            )
            run = charts(run_page("token-credit.py", kappa=f"{kappa:g}"))[0]["data"]
            assert len(drawn) == len(run), kappa
            for mine, theirs in zip(drawn, run):
                want = array(theirs["y"]).astype(float)
                got = np.array([np.nan if v is None else v for v in mine["y"]], dtype=float)
                np.testing.assert_allclose(got, want, rtol=1e-6, equal_nan=True, err_msg=kappa)
                if theirs.get("mode") == "text":
                    assert mine["text"] == theirs["text"], kappa
            # and what is on screen: each text trace's letters as plotly.js rendered them
            rendered = page.evaluate(
                """() => Array.from(document.querySelector('.klrl-chart')
                  .querySelectorAll('g.trace.scatter'), g => Array.from(
                    g.querySelectorAll('g.textpoint text'), t => t.textContent)
                  .filter(t => t !== ''))"""
            )
            letters = [
                [w for w, y in zip(t["text"], array(t["y"])) if w and not np.isnan(y)]
                for t in run
                if t.get("mode") == "text"
            ]
            assert [r for r in rendered if r] == [w for w in letters if w], kappa
    finally:
        held.close()
