"""What one redraw of a page's followed charts costs the browser: Plotly.react against
Plotly.restyle/relayout, on the app's real charts and its real table of stops.

    python benchmarks/follow_redraw.py [--pages tilt,groups] [--stops 40] [--json out.json]

For every slider page (tests/e2e/cases.py): open it at 1280×720 in Chromium, wait for the
table of stops (klrl_app/instant.py), then step through --stops stops spread over the slider and
redraw every followed chart at each, timing from the call to the end of the drawing and the
next animation frame:

- react: the stop's full figure (the table's base with the stop's patches) to Plotly.react, as
  instant.js does;
- restyle: only the changed parts, Plotly.restyle per changed trace and Plotly.relayout for the
  layout (what a hand-tuned driver would send).

Prints the median ms per redraw (all followed charts of the page) for each method.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e import harness
from tests.e2e.cases import PAGES

BENCH_JS = """async ([slug, stops, method]) => {
  const t = window.klrlTables[slug];
  const keys = Object.keys(t.base);
  const divs = keys.map(k => document.querySelector(`.klrl-chart[data-klrl-key="${k}"]`));
  const apply = (fig, ps) => { for (const [path, v] of ps || []) { let n = fig;
    for (let i = 0; i < path.length - 1; i++) n = n[path[i]]; n[path[path.length - 1]] = v; }
    return fig; };
  const frame = () => new Promise(r => requestAnimationFrame(() => r()));
  const idx = [];
  for (let i = 0; i < stops; i++) idx.push(Math.round(i * (t.rows.length - 1) / (stops - 1)));
  const out = [];
  for (const i of idx) {
    const row = t.rows[i];
    if (!row) continue;
    await frame();
    const t0 = performance.now();
    for (let c = 0; c < keys.length; c++) {
      const div = divs[c], patches = row.c[keys[c]] || [];
      if (!div) continue;
      if (method === "react") {
        await window.klrlDrawChart(div, apply(structuredClone(t.base[keys[c]]), patches));
      } else {
        const full = apply(structuredClone(t.base[keys[c]]), patches);
        const traces = new Set(), lay = {};
        for (const [path] of patches) {
          if (path[0] === "data" && path.length > 2) traces.add(path[1]);
          else if (path[0] === "layout" && path.length > 1) lay[path[1]] = full.layout[path[1]];
        }
        for (const tr of traces) {
          const upd = {};
          for (const [k, v] of Object.entries(full.data[tr])) if (k !== "type") upd[k] = [v];
          await window.Plotly.restyle(div, upd, [tr]);
        }
        if (Object.keys(lay).length) await window.Plotly.relayout(div, lay);
      }
    }
    await frame();
    out.push(performance.now() - t0);
  }
  return out;
}"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", default="")
    ap.add_argument("--stops", type=int, default=40)
    ap.add_argument("--json")
    args = ap.parse_args()
    if harness.chromium_problem():
        print(harness.chromium_problem(), file=sys.stderr)
        return 2
    wanted = {s for s in args.pages.split(",") if s}
    cases = [c for c in PAGES if c.slider is not None and (not wanted or c.slug in wanted)]
    from playwright.sync_api import sync_playwright

    rows = []
    with harness.running_server() as app, sync_playwright() as p:
        browser = harness.launch_chromium(p)
        print(f"{'page':<18}{'charts':>7}{'react ms':>10}{'restyle ms':>12}   (median per redraw)")
        for case in cases:
            ctx = browser.new_context(viewport={"width": 1280, "height": 720})
            ctx.set_default_timeout(harness.SCRIPT_TIMEOUT_MS)
            page = ctx.new_page()
            page.goto(f"{app.url}/{case.path}", wait_until="domcontentloaded")
            harness.wait_readout(page, case.default_readout)
            page.wait_for_function(f"() => window.klrlTables && window.klrlTables[{case.slug!r}]")
            n = page.evaluate(f"() => Object.keys(window.klrlTables[{case.slug!r}].base).length")
            res = {}
            for method in ("react", "restyle", "react"):  # react twice: warm, then measured
                res[method] = page.evaluate(BENCH_JS, [case.slug, args.stops, method])
            med = {m: statistics.median(v) if v else float("nan") for m, v in res.items()}
            rows.append(
                dict(
                    page=case.slug,
                    charts=n,
                    react_ms=round(med["react"], 1),
                    restyle_ms=round(med["restyle"], 1),
                )
            )
            print(f"{case.slug:<18}{n:>7}{med['react']:>10.1f}{med['restyle']:>12.1f}", flush=True)
            ctx.close()
        browser.close()
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
