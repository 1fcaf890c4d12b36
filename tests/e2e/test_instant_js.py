"""instant.js's figure of a stop, in Chromium: the base and the stop's patches make the stop's
figure without touching the table, and the figure shares the table's arrays (and the chart
template) from draw to draw, so that Plotly.react recomputes only what the stop changed.

The first tests load instant.js alone into a blank page and call it on figures written here;
the last opens length-bias, whose stops change only the x axis, and checks that plotly.js
keeps its computed traces across key presses made with the server held back."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from klrl_app.plots import typed_arrays
from tests.e2e import harness
from tests.e2e.cases import SLIDER_PAGES
from tests.e2e.test_classroom import PROJECTOR, HeldBack, ready

SCRIPT = (Path(__file__).resolve().parents[2] / "klrl_app" / "instant.js").read_text()

# instant.js as a module of a blank page: window.__instant holds its named exports.
LOAD_JS = """async (src) => {
  const url = URL.createObjectURL(new Blob([src], {type: 'text/javascript'}));
  window.__instant = await import(url);
}"""


def f4(values) -> dict:
    """plotly.js's typed-array form of single-precision numbers, as the app sends it."""
    return typed_arrays(np.asarray(values, dtype=np.float32))


@pytest.fixture(scope="module")
def blank(browser):
    ctx = browser.new_context()
    page = ctx.new_page()
    errors = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.set_content("<!doctype html><title>instant.js</title>")
    page.evaluate(LOAD_JS, SCRIPT)
    yield page
    ctx.close()
    assert not errors, errors


BASE = {
    "data": [
        {"type": "bar", "x": [1, 2, 3], "y": f4([0.5, 0.25, 0.25]), "name": "π*"},
        {"type": "scatter", "x": f4([1, 2]), "y": [7, 8], "marker": {"size": 9}},
    ],
    "layout": {
        "template": {"layout": {"font": {"size": 13}}},
        "xaxis": {"range": [0, 4], "tickvals": [1, 2, 3]},
        "annotations": [{"text": "a", "x": 1}],
    },
}


def test_a_stop_is_its_patches_on_the_base_and_the_table_stays_as_it_was(blank):
    table = {
        "base": {"c": BASE},
        "rows": [
            {
                "c": {
                    "c": [
                        [
                            ["data", 0, "y", "bdata"],
                            f4([0.125, 0.375, 0.5])["bdata"],
                        ],  # inside a spec
                        [["data", 1, "y", 1], 9],  # one item
                        [["layout", "annotations", 0, "text"], "b"],
                        [["layout", "xaxis", "range"], [0, 5]],
                    ]
                }
            }
        ],
    }
    out = blank.evaluate(
        """(table) => {
      const I = window.__instant, before = JSON.stringify(table.base);
      table.rawBase = table.base;
      table.base = I.decodeAll(structuredClone(table.base));
      const decodedBase = table.base.c;
      const snapshot = JSON.stringify(decodedBase, (k, v) => ArrayBuffer.isView(v) ? Array.from(v) : v);
      const row = I.ready(table, table.rows[0]);
      const a = I.figureAt(table.base.c, row.c.c), b = I.figureAt(table.base.c, row.c.c);
      const plain = v => JSON.parse(JSON.stringify(v, (k, x) => ArrayBuffer.isView(x) ? Array.from(x) : x));
      return {
        figure: plain(a),
        yType: Object.prototype.toString.call(a.data[0].y),
        baseUntouched: JSON.stringify(decodedBase, (k, v) => ArrayBuffer.isView(v) ? Array.from(v) : v) === snapshot,
        rawUntouched: JSON.stringify(table.rawBase) === before,
        // shared from draw to draw: arrays the stop does not change, and the template
        sameX: a.data[0].x === b.data[0].x && a.data[0].x === decodedBase.data[0].x,
        sameSpecX: a.data[1].x === decodedBase.data[1].x,
        sameTicks: a.layout.xaxis.tickvals === decodedBase.layout.xaxis.tickvals,
        sameTemplate: a.layout.template === decodedBase.layout.template,
        samePatched: a.data[0].y === b.data[0].y,
        // copied: objects plotly.js writes into, an axis range (a zoom writes into it), and
        // an array a patch writes an item into
        ownObjects: a.layout !== decodedBase.layout && a.data[0] !== decodedBase.data[0] &&
                    a.layout.annotations[0] !== decodedBase.layout.annotations[0],
        ownRange: a.layout.xaxis.range !== b.layout.xaxis.range,
        ownItems: a.data[1].y !== decodedBase.data[1].y,
      };
    }""",
        table,
    )
    fig = out["figure"]
    assert fig["data"][0]["y"] == [0.125, 0.375, 0.5]
    assert out["yType"] == "[object Float32Array]"  # the base's dtype
    assert fig["data"][1]["y"] == [7, 9]
    assert fig["data"][1]["x"] == [1, 2]
    assert fig["layout"]["annotations"][0]["text"] == "b"
    assert fig["layout"]["xaxis"]["range"] == [0, 5]
    assert fig["layout"]["xaxis"]["tickvals"] == [1, 2, 3]
    assert out["baseUntouched"] and out["rawUntouched"]
    for k in (
        "sameX",
        "sameSpecX",
        "sameTicks",
        "sameTemplate",
        "samePatched",
        "ownObjects",
        "ownRange",
        "ownItems",
    ):
        assert out[k], k


def test_a_repeated_value_and_a_whole_figure_resolve(blank):
    """{"$": [chart, i]} is the i-th patch's value of that chart at the same stop (instant.py's
    _share), decoded with its own chart's dtype; a patch at the root is the whole figure."""
    whole = {"data": [{"type": "bar", "y": f4([1, 2])}], "layout": {"title": {"text": "t"}}}
    base = {
        "a": {"data": [{"customdata": f4([0, 0])}], "layout": {}},
        "b": {"data": [{"customdata": f4([0, 0])}], "layout": {}},
        "w": {"data": [], "layout": {}},
    }
    table = {
        "base": base,
        "rows": [
            {
                "c": {
                    "a": [[["data", 0, "customdata", "bdata"], f4([3, 4])["bdata"]]],
                    "b": [[["data", 0, "customdata", "bdata"], {"$": ["a", 0]}]],
                    "w": [[[], whole]],
                }
            }
        ],
    }
    out = blank.evaluate(
        """(table) => {
      const I = window.__instant;
      table.rawBase = table.base;
      table.base = I.decodeAll(structuredClone(table.base));
      const row = I.ready(table, table.rows[0]);
      const plain = v => JSON.parse(JSON.stringify(v, (k, x) => ArrayBuffer.isView(x) ? Array.from(x) : x));
      return ["a", "b", "w"].map(k => plain(I.figureAt(table.base[k], row.c[k])));
    }""",
        table,
    )
    assert out[0]["data"][0]["customdata"] == [3, 4]
    assert out[1]["data"][0]["customdata"] == [3, 4]
    assert out[2] == {"data": [{"type": "bar", "y": [1, 2]}], "layout": {"title": {"text": "t"}}}


def test_a_stops_array_of_another_type_is_read_with_its_own_type(blank):
    """When a stop's array has another type than the base's (ppo-clip sends PPO's curves as
    bytes when they are whole numbers), the server's patches change the spec's dtype and its
    bdata: both make the stop's array, whichever comes first."""
    i1 = typed_arrays(np.array([1, -2, 3], dtype=np.int8))
    base = {"c": {"data": [{"y": f4([0.5, 0.25, 0.125])}, {"y": f4([1, 2, 3])}], "layout": {}}}
    table = {
        "base": base,
        "rows": [
            {
                "c": {
                    "c": [
                        [["data", 0, "y", "dtype"], "i1"],
                        [["data", 0, "y", "bdata"], i1["bdata"]],
                        [["data", 1, "y", "bdata"], f4([4, 5, 6])["bdata"]],
                    ]
                }
            }
        ],
    }
    out = blank.evaluate(
        """(table) => {
      const I = window.__instant;
      table.rawBase = table.base;
      table.base = I.decodeAll(structuredClone(table.base));
      const fig = I.figureAt(table.base.c, I.ready(table, table.rows[0]).c.c);
      return fig.data.map(t => [Object.prototype.toString.call(t.y), Array.from(t.y)]);
    }""",
        table,
    )
    assert out == [["[object Int8Array]", [1, -2, 3]], ["[object Float32Array]", [4, 5, 6]]]


def test_a_link_between_stops_draws_its_own_value(browser, app_url):
    """length-bias's slider moves in steps of 100; a link to 2,750 steps shows 2,750 (the
    chart's x axis ends there), not the stop the slider's input snaps to (2,800)."""
    ctx = browser.new_context(viewport=PROJECTOR)
    page = ctx.new_page()
    errors = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    try:
        page.goto(f"{app_url}/length-bias?steps=2750", wait_until="domcontentloaded")
        harness.wait_charts(page, at_least=2)
        harness.wait_table(page, "length-bias")
        page.wait_for_timeout(500)  # the table's arrival may redraw: it must not
        got = page.evaluate("""() => Array.from(document.querySelectorAll('.klrl-chart'))
          .slice(0, 2).map(d => d._fullLayout.xaxis.range[1])""")
        assert got == [2750, 2750]
        assert harness.readout(page)["after"].startswith("2750 steps")  # as the slider writes it
    finally:
        ctx.close()
    assert not errors, errors


def test_a_link_with_more_decimals_than_the_slider_draws_its_own_value(browser, app_url):
    """ppo-clip's ε slider shows two decimals; a link to ε = 0.355 (its text reads "0.35"
    or "0.36") is drawn by the run at 0.355 (PPO's flat region starts at ω = 1.355 in both
    left charts), not as the table's stop its text reads as; the first key press then draws
    a stop of the table."""
    case = next(c for c in SLIDER_PAGES if c.slug == "ppo-clip")
    ctx = browser.new_context(viewport=PROJECTOR)
    page = ctx.new_page()
    errors = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    edges = """() => ['ppo-clip-surrogate', 'ppo-clip-gradient'].map(k =>
      document.querySelector(`.klrl-chart[data-klrl-key="${k}"]`).layout.shapes
        .filter(s => s.type === 'rect' && s.y0 === 0)[0].x0)"""
    try:
        page.goto(f"{app_url}/ppo-clip?eps=0.355", wait_until="domcontentloaded")
        harness.wait_charts(page, at_least=3)
        harness.wait_table(page, "ppo-clip")
        page.wait_for_timeout(500)  # the table's arrival may redraw: it must not
        assert page.evaluate(edges) == [pytest.approx(1.355)] * 2
        assert (
            page.evaluate(
                "() => Array.from(document.querySelectorAll('.klrl-chart')).map(d => d.klrlStop)"
            )
            == [pytest.approx(0.355)] * 3
        )
        harness.slider(page, case.slider.label).press("ArrowRight")
        page.wait_for_function(f"() => ({edges})()[0] !== 1.355")
        stop = round(page.evaluate(edges)[0] - 1, 6)
        assert stop in (0.36, 0.37), stop
    finally:
        ctx.close()
    assert not errors, errors


@pytest.mark.parametrize("slug", ["entropy", "tilt"])
def test_a_run_cut_short_does_not_leave_another_stops_readout(browser, app_url, slug):
    """A run cut short by the next one (the thumb pressed back while it ran) can write its
    stop's readout and never reach its driver. Played here as React would: the readout's
    numbers and its stop mark (data-klrl-stop) set to the next stop's while the thumb rests on
    the default; the driver puts the default's numbers back (a plain slider and a select
    slider). Without it the page showed the next stop's numbers until the following run."""
    case = next(c for c in SLIDER_PAGES if c.slug == slug)
    s = case.slider
    ctx = browser.new_context(viewport=PROJECTOR)
    page = ctx.new_page()
    try:
        page.goto(f"{app_url}/{case.path}", wait_until="domcontentloaded")
        ready(page, case)
        harness.wait_table(page, slug)
        box = ".klrl-readout-main"
        mark = page.get_attribute(box, "data-klrl-stop")
        assert mark is not None
        # a plain slider's stop is its value, a select slider's the text it shows
        text = isinstance(json.loads(mark), str)
        other = json.dumps("another stop" if text else s.neighbour(s.default, +1))
        page.evaluate(
            """([box, other]) => { const b = document.querySelector(box);
          b.querySelectorAll('.klrl-value').forEach(v => { v.firstChild.nodeValue = 'stale'; });
          b.setAttribute('data-klrl-stop', other); }""",
            [box, other],
        )
        try:
            harness.wait_readout(page, case.default_readout, timeout_ms=3000)
        except AssertionError as err:
            state = page.evaluate(
                """(slug) => { const f = window.klrlFollowers[slug], t = window.klrlTables[slug];
              return {thumb: f && f.input && f.input.getAttribute('aria-valuetext'),
                      value: f && f.input && f.input.value, current: f && f.data.current,
                      setting: f && f.data.setting, table: t && [t.id, t.setting, t.keys.length,
                      t.rows.filter(r => r).length],
                      mark: document.querySelector('.klrl-readout-main')
                        .getAttribute('data-klrl-stop'),
                      followers: Object.keys(window.klrlFollowers)}; }""",
                slug,
            )
            raise AssertionError(f"{err}; driver state {state}") from err
    finally:
        ctx.close()


def test_a_stop_that_moves_only_an_axis_keeps_plotlys_computed_traces(browser, app_url):
    """length-bias's stops change only the x axis's end: with the run held back, key presses
    redraw the chart for the stop under the thumb (its x range ends there) without plotly.js
    recomputing the traces (gd.calcdata stays the same object). A new array or template in
    every stop's figure would make it recompute them all."""
    case = next(c for c in SLIDER_PAGES if c.slug == "length-bias")
    held = HeldBack(browser, app_url, case.path, viewport=PROJECTOR)
    page = held.page
    try:
        ready(page, case)
        harness.wait_table(page, case.slug)
        key = harness.slider(page, case.slider.label)
        held.hold()
        key.press("ArrowRight")  # the first stop from the table (after the run's)
        page.wait_for_function("() => document.querySelector('.klrl-chart').klrlFromTable")
        page.evaluate("() => { window.__cd = document.querySelector('.klrl-chart').calcdata; }")
        s = case.slider
        stop = s.neighbour(s.default, +1)
        for press, want in (("ArrowRight", s.neighbour(stop, +1)), ("ArrowLeft", stop)):
            key.press(press)
            page.wait_for_function(
                "(want) => document.querySelector('.klrl-chart')._fullLayout.xaxis.range[1] "
                "=== want",
                arg=want,
                timeout=5000,
            )
            assert page.evaluate(
                "() => document.querySelector('.klrl-chart').calcdata === window.__cd"
            ), f"plotly.js recomputed the traces for the stop at {want}"
    finally:
        held.close()


def _serve_table(page, base: dict, keys: list, rows: list) -> str:
    """A table of stops served as instant.py's route would (JSON); its URL."""
    body = json.dumps(
        {"label": "κ", "kind": "value", "keys": keys, "labels": None, "base": base, "rows": rows}
    )
    url = "http://klrl.test/klrl-table/t1"
    page.route(
        url,
        lambda route: route.fulfill(
            body=body,
            content_type="application/json",
            headers={"Access-Control-Allow-Origin": "*"},
        ),
    )
    return url


def test_a_runs_own_figure_is_not_drawn_over_by_the_tables_next_frame(browser):
    """Reset moves the slider and another control at once: the driver draws the new stop from
    the old setting's table, its first chart at once and the others in the next frame; if
    the run's figure for a later chart (the new setting's) lands in between, the table's
    deferred draw must not cover it. A loaded CI run once showed tilt's frontier on the old
    axis after Reset this way (tests/e2e/test_presets_browser.py)."""
    ctx = browser.new_context()
    page = ctx.new_page()
    try:
        page.set_content(
            "<!doctype html><title>t</title>"
            '<input type="range" aria-label="κ" min="0" max="2" step="1" value="0"'
            ' aria-valuetext="0">'
            '<div class="klrl-chart" data-klrl-key="main"></div>'
            '<div class="klrl-chart" data-klrl-key="frontier"></div>'
        )
        page.evaluate(LOAD_JS, SCRIPT)
        fig = {"data": [], "layout": {"title": {"text": "old axis"}}}
        url = _serve_table(
            page,
            {"main": fig, "frontier": fig},
            [0, 1, 2],
            [{"v": [str(k)], "c": {"main": [], "frontier": []}, "a": {}} for k in range(3)],
        )
        page.evaluate(
            """async (url) => {
          window.__drawn = [];
          window.klrlDrawChart = (div, figure) => {
            window.__drawn.push([div.dataset.klrlKey, figure.layout.title.text]);
            return Promise.resolve();
          };
          const run = window.__instant.default;
          run({parentElement: document.body, data: {url, id: 't1', setting: 'old', slug: 's'}});
          run({parentElement: document.body, data: {slug: 's', label: 'κ', kind: 'value',
               current: 0, values: ['0'], labels: null, charts: ['main', 'frontier'],
               setting: 'old'}});
          // the table is fetched
          for (let i = 0; i < 100 && !(window.klrlTables.s && window.klrlTables.s.rows); i++)
            await new Promise(r => setTimeout(r, 20));
        }""",
            url,
        )
        # The slider moves to stop 2 (the driver draws the main chart now, the frontier in the
        # next frame); before that frame, the run's frontier of the new setting is drawn.
        page.evaluate(
            """() => new Promise(resolve => {
          const input = document.querySelector('input');
          input.value = '2';
          input.setAttribute('aria-valuetext', '2');
          setTimeout(() => {
            const frontier = document.querySelector('[data-klrl-key="frontier"]');
            window.__drawn.push(['frontier', 'the run']);
            frontier.klrlRunDrawnAt = performance.now();   // as live_chart.js marks it
            requestAnimationFrame(() => requestAnimationFrame(resolve));
          }, 0);
        })"""
        )
        drawn = page.evaluate("() => window.__drawn")
        assert ["main", "old axis"] in drawn, drawn
        assert drawn[-1] == ["frontier", "the run"], drawn
    finally:
        ctx.close()
