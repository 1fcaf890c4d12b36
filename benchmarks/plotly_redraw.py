"""What a chart costs the browser per slider move: Plotly.newPlot against Plotly.react.

    python benchmarks/plotly_redraw.py [--reps 10] [--json out.json]

Why it exists: st.plotly_chart derives its element id from the figure, and Streamlit's
frontend keys the chart by that id, so every slider move mounted a new chart (a full
Plotly.newPlot). The app now draws through klrl_app/live_chart.js, which keeps the chart and
calls Plotly.react. Two measurements, one Chromium:

1. In the app: the script marks every chart node, presses the page's slider key once and
   counts the nodes still in the page (all of them, when charts are updated in place).
2. Standalone: every chart of the app at its default settings (taken from AppTest), drawn in a
   bare page with the plotly.js that the plotly package ships. Median over --reps of
   (a) Plotly.newPlot into a fresh node (what st.plotly_chart costs per move) and
   (b) Plotly.react on the same node with the y values changed (what the app costs now).
"""

from __future__ import annotations

import argparse
import base64
import functools
import http.server
import json
import shutil
import statistics
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e import harness
from tests.e2e.cases import PAGES

PAGE_HTML = (
    '<html><head><script src="plotly.min.js"></script></head>'
    '<body style="width:1100px;margin:0"><div id="host"></div></body></html>'
)

# Draw one figure reps+2 times (the first two are warm-up) and return the median time in ms.
# "react" changes every numeric y by up to 2 % so that Plotly has to redraw the traces.
DRAW_JS = """async ([spec, config, mode, reps]) => {
  const host = document.getElementById('host'); const times = []; let gd = null;
  for (let i = 0; i < reps + 2; i++) {
    const fig = JSON.parse(JSON.stringify(spec));
    if (mode === 'react' && gd) fig.data.forEach(t => {
      if (Array.isArray(t.y)) t.y = t.y.map(v => typeof v === 'number' ? v * (1 + 0.01 * (i % 3)) : v);
    });
    const t0 = performance.now();
    if (mode === 'react' && gd) {
      await Plotly.react(gd, fig.data, fig.layout, config);
    } else {
      if (gd) { Plotly.purge(gd); gd.remove(); }
      gd = document.createElement('div'); host.appendChild(gd);
      await Plotly.newPlot(gd, fig.data, fig.layout, config);
    }
    gd.getBoundingClientRect();  // include the layout the drawing forces
    const t1 = performance.now();
    await new Promise(r => setTimeout(r, 30));
    if (i >= 2) times.push(t1 - t0);
  }
  times.sort((a, b) => a - b); return times[Math.floor(times.length / 2)];
}"""


def _plain(obj):
    """plotly.js typed arrays ({"dtype", "bdata"}) back to number lists, so the standalone
    "react" draws can change the y values like a slider move does."""
    if isinstance(obj, dict):
        if "bdata" in obj and "dtype" in obj:
            return np.frombuffer(
                base64.b64decode(obj["bdata"]), dtype=np.dtype(obj["dtype"]).newbyteorder("<")
            ).tolist()
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_plain(v) for v in obj]
    return obj


def chart_specs() -> dict[str, dict]:
    """Every chart's figure and config at the page's default settings, via AppTest."""
    from klrl_app.nav import PAGES as NAV
    from klrl_app.plots import CHART_CONFIG
    from tests.conftest import charts, run_page

    return {
        f"{page.url_path} #{i + 1}": {"spec": _plain(fig), "config": CHART_CONFIG}
        for page in NAV
        if page.url_path
        for i, fig in enumerate(charts(run_page(Path(page.file).name, timeout=120)))
    }


def survivors_in_app(browser, base_url: str) -> dict[str, tuple[int, int]]:
    """Per page with a slider: (charts before a key press, of those still in the page after)."""
    out = {}
    for case in PAGES:
        if case.slider is None:
            continue
        page = browser.new_page(viewport=harness.DESKTOP)
        page.goto(f"{base_url}/{case.path}", wait_until="domcontentloaded")
        harness.wait_readout(page, case.slider.readout(case.slider.default))
        harness.mark_charts(page)
        harness.slider(page, case.slider.label).focus()
        page.keyboard.press("ArrowRight")
        harness.wait_readout(
            page, case.slider.readout(case.slider.neighbour(case.slider.default, +1))
        )
        marked, kept, _ = harness.charts_since_mark(page)
        out[case.slug] = (marked, kept)
        page.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=10, help="timed draws per chart and mode")
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args()
    problem = harness.chromium_problem()
    if problem:
        print(problem, file=sys.stderr)
        return 2

    import plotly
    from playwright.sync_api import sync_playwright

    specs = chart_specs()
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(Path(plotly.__file__).parent / "package_data" / "plotly.min.js", tmp)
        Path(tmp, "index.html").write_text(PAGE_HTML)

        class Quiet(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

        handler = functools.partial(Quiet, directory=tmp)
        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        try:
            with harness.running_server() as app, sync_playwright() as p:
                browser = harness.launch_chromium(p)
                survived = survivors_in_app(browser, app.url)
                page = browser.new_page(viewport=harness.DESKTOP)
                page.goto(f"http://127.0.0.1:{httpd.server_port}/index.html")
                page.wait_for_function("() => window.Plotly")
                version = page.evaluate("() => Plotly.version")
                rows = []
                for name, s in specs.items():
                    new = page.evaluate(DRAW_JS, [s["spec"], s["config"], "newPlot", args.reps])
                    react = page.evaluate(DRAW_JS, [s["spec"], s["config"], "react", args.reps])
                    rows.append(
                        {"chart": name, "newPlot_ms": round(new, 1), "react_ms": round(react, 1)}
                    )
                browser.close()
        finally:
            httpd.shutdown()

    print("In the app, charts still in the page after one slider key press:")
    for slug, (before, kept) in survived.items():
        print(f"  {slug:<18} {kept} of {before}")
    print(f"\nStandalone, plotly.js {version}, median of {args.reps} draws (ms):")
    print(f"  {'chart':<22}{'newPlot':>9}{'react':>8}{'saved':>8}")
    for r in rows:
        print(
            f"  {r['chart']:<22}{r['newPlot_ms']:>9.1f}{r['react_ms']:>8.1f}"
            f"{r['newPlot_ms'] - r['react_ms']:>8.1f}"
        )
    tot_new = sum(r["newPlot_ms"] for r in rows)
    tot_react = sum(r["react_ms"] for r in rows)
    print(
        f"  {'all charts':<22}{tot_new:>9.1f}{tot_react:>8.1f}{tot_new - tot_react:>8.1f}"
        f"  (median ratio react/newPlot "
        f"{statistics.median(r['react_ms'] / r['newPlot_ms'] for r in rows):.2f})"
    )
    if args.json:
        Path(args.json).write_text(
            json.dumps({"plotly_js": version, "survived": survived, "charts": rows}, indent=1)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
