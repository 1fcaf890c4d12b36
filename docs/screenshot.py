"""Take the README's screenshot (docs/screenshot.png): the tilt page at 1400×1000 with the
sidebar listing every page, as a reader first sees it.

    python docs/screenshot.py [--out docs/screenshot.png]

Starts `streamlit run app.py` on a free loopback port and Chromium (tests/e2e/harness.py finds
both), waits until the charts are drawn, and writes the PNG.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e import harness


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "docs" / "screenshot.png"))
    ap.add_argument("--path", default="/tilt?kappa=20", help="the page and link to show")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    with harness.running_server() as server, sync_playwright() as p:
        browser = harness.launch_chromium(p)
        page = browser.new_page(viewport={"width": 1400, "height": 1000}, color_scheme="light")
        page.goto(server.url + args.path)
        harness.wait_charts(page, at_least=2)
        harness.wait_idle(page)
        page.wait_for_timeout(1500)  # the charts' entry transition
        page.screenshot(path=args.out)
        browser.close()
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
