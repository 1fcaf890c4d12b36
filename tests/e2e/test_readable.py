"""Issue 31's layout items, measured in the browser: what a class reads from the back of a hall
or on a phone (boxes of the drawn elements, not the figure's JSON)."""

from __future__ import annotations

import pytest

from tests.e2e import harness

PROJECTOR = {"width": 1280, "height": 720}

# The policy panel's marks (bars, and best-of-n's dots) at the page's defaults: the top of
# the highest one, and the bars' plot area (both segments of a broken axis), in pixels.
MARKS_JS = """(key) => {
  const gd = document.querySelector(`.klrl-chart[data-klrl-key="${key}"]`);
  const L = gd._fullLayout;
  const axes = [L.yaxis, L.yaxis3].filter(a => a);
  const top = Math.min(...axes.map(a => a._offset));
  const bottom = Math.max(...axes.map(a => a._offset + a._length));
  const box = gd.getBoundingClientRect();
  let highest = Infinity;
  for (const el of gd.querySelectorAll('.barlayer .point path, .scatterlayer .point')) {
    const r = el.getBoundingClientRect();
    if (r.height > 0.5 || r.width > 0.5) highest = Math.min(highest, r.top - box.top);
  }
  return {top, bottom, highest};
}"""


@pytest.mark.parametrize(
    "slug, key",
    [("tilt", "tilt-policy"), ("best-of-n", "bon-policy"), ("overoptimization", "over-policy")],
)
def test_the_policy_panel_is_filled_at_the_defaults(open_page, slug, key):
    """The bars (best-of-n: and its dots) reach most of the way up the panel at the default κ
    on a projector; the axis was 0–1 at every κ, so they filled a tenth of it."""
    page = open_page(slug, viewport=PROJECTOR)
    harness.wait_idle(page)
    harness.wait_charts(page, at_least=2)
    m = page.evaluate(MARKS_JS, key)
    filled = (m["bottom"] - m["highest"]) / (m["bottom"] - m["top"])
    assert filled >= 0.6, (slug, m, filled)


def test_best_of_n_controls_are_not_cut_at_1280(open_page):
    """The n box's placeholder read "the KL-matc" and the model button "Model: the…"."""
    page = open_page("best-of-n", viewport=PROJECTOR)
    harness.wait_idle(page)
    harness.wait_charts(page, at_least=2)
    page.locator('[data-testid="stNumberInput"] input').wait_for()
    found = page.evaluate("""() => {
      const inp = document.querySelector('[data-testid="stNumberInput"] input');
      const cs = getComputedStyle(inp);
      const ctx = document.createElement('canvas').getContext('2d');
      ctx.font = `${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
      const room = inp.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
      const btn = Array.from(document.querySelectorAll('[data-testid="stPopover"] button'))
        .find(b => b.textContent.includes('Model'));
      const text = btn.querySelector('.stMarkdownEllipsis') || btn;
      return {placeholder: inp.placeholder, need: ctx.measureText(inp.placeholder).width,
              room, model: text.textContent, scroll: text.scrollWidth,
              client: text.clientWidth};
    }""")
    assert found["placeholder"] == "the KL-matched n"
    assert found["need"] <= found["room"], found
    assert found["model"] == "Model"
    assert found["scroll"] <= found["client"], found


@pytest.mark.parametrize("slug", ["dpo", "best-of-n", "tilt", "overoptimization"])
def test_the_model_button_is_not_cut_at_1280(open_page, slug):
    """dpo's model button read "Model: the…" (issue 31): the shared picker says "Model" and
    names the model in its tooltip; its text fits its button on every page that has it."""
    page = open_page(slug, viewport=PROJECTOR)
    harness.wait_idle(page)
    btn = page.get_by_role("button", name="Model", exact=True)
    btn.wait_for()
    found = btn.evaluate("""b => { const t = b.querySelector('.stMarkdownEllipsis') || b;
      return {text: t.textContent, scroll: t.scrollWidth, client: t.clientWidth}; }""")
    assert found["text"] == "Model" and found["scroll"] <= found["client"], found


def test_groups_origin_labels_do_not_overlap_on_a_phone(open_page):
    """The signal chart's two "0.0" tick labels (x and y) overlapped at the origin."""
    page = open_page("groups", viewport=harness.PHONE)
    harness.wait_idle(page)
    harness.wait_charts(page, at_least=2)
    boxes = page.evaluate("""() => {
      const gd = document.querySelector('.klrl-chart[data-klrl-key="groups-signal"]');
      const box = t => { const r = t.getBoundingClientRect();
                         return [r.left, r.top, r.right, r.bottom, t.textContent]; };
      return {x: Array.from(gd.querySelectorAll('.xtick text')).map(box),
              y: Array.from(gd.querySelectorAll('.ytick text')).map(box)};
    }""")
    assert boxes["x"] and boxes["y"]
    for a in boxes["x"]:
        for b in boxes["y"]:
            apart = a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]
            assert apart, (a, b)


GRID_TEXTS_JS = """() => {
  const gd = document.querySelector('.klrl-chart[data-klrl-key="token-credit-ref"]');
  const texts = Array.from(gd.querySelectorAll('.barlayer .bartext'))
    .filter(t => t.textContent.trim() && getComputedStyle(t).display !== 'none'
                 && t.getBoundingClientRect().height > 0);
  const marks = Array.from(gd.querySelectorAll('.annotation-text'))
    .map(t => t.textContent.trim());
  const bars = document.querySelector('.klrl-chart[data-klrl-key="token-credit-bars"]');
  const box = bars.getBoundingClientRect();
  const labels = Array.from(bars.querySelectorAll('.xaxislayer-above text, .g-xtitle text'))
    .map(t => t.getBoundingClientRect().bottom);
  return {n: texts.length, sizes: texts.map(t => parseFloat(getComputedStyle(t).fontSize)),
          marks, overflow: Math.max(...labels) - box.bottom};
}"""


@pytest.mark.parametrize("present, min_px", [(False, 11), (True, 14)])
def test_every_token_s_credit_is_printed_readably(open_page, present, min_px):
    """The third tokens' credits hid in thin icicle boxes, y and y′ were not marked, and in
    the presentation view the labels stayed about 10 px; the bar chart's title was cut."""
    page = open_page("token-credit", {"present": "1"} if present else None, viewport=PROJECTOR)
    harness.wait_idle(page)
    harness.wait_charts(page, at_least=3)
    page.wait_for_timeout(300)
    found = page.evaluate(GRID_TEXTS_JS)
    assert found["n"] == 39, found  # 3 + 9 + 27 tokens
    assert min(found["sizes"]) >= min_px, found["sizes"]
    assert "y" in found["marks"] and "y′" in found["marks"]
    assert found["overflow"] <= 0, found


# The x extent (pixels) of the advantage panel's points drawn at least 2 px off its zero line
# (a stem of share ~0 or a curve at 0 is no mark a class sees), and the plot's width.
GROUPS_SPREAD_JS = """() => {
  const gd = document.querySelector('.klrl-chart[data-klrl-key="groups-advantages"]');
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
  const zero = ya.l2p(0);
  let lo = Infinity, hi = -Infinity;
  for (const t of gd._fullData) {
    const xs = Array.from(t.x), ys = Array.from(t.y);
    xs.forEach((x, i) => {
      const px = xa.l2p(x), py = ya.l2p(ys[i]);
      if (Number.isFinite(px) && Number.isFinite(py) && Math.abs(py - zero) >= 2
          && px >= 0 && px <= xa._length) { lo = Math.min(lo, px); hi = Math.max(hi, px); }
    });
  }
  return {lo, hi, width: xa._length};
}"""


@pytest.mark.parametrize("p", ["0.01", "0.1", "0.5", "0.99"])
def test_groups_large_k_marks_spread_over_the_plot(open_page, p):
    """Issue 31: at k = 1024 the advantage stems of one p bunched into a blob on axes that hold
    every p; the panel's marks now span most of the plot's width."""
    page = open_page("groups", {"k": "1024", "p": p}, viewport=PROJECTOR)
    harness.wait_idle(page)
    harness.wait_charts(page, at_least=2)
    m = page.evaluate(GROUPS_SPREAD_JS)
    assert (m["hi"] - m["lo"]) >= 0.8 * m["width"], m


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_groups_large_k_panel_is_axe_clean(open_page, scheme):
    from tests.e2e.test_classroom import assert_axe_clean

    page = open_page("groups", {"k": "1024"}, viewport=PROJECTOR, color_scheme=scheme)
    harness.wait_idle(page)
    harness.wait_charts(page, at_least=2)
    assert_axe_clean(page)
