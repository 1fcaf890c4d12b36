"""A page's first load, now against a reference commit: is it at most 10% slower (issue 20)?

    python benchmarks/first_load.py [--ref d566ba5] [--loads 6] [--pages tilt,bandit] [--json F]

Two Streamlit servers on loopback, one on this checkout and one on ``--ref`` (a git worktree
made for the run in a temporary directory and removed after; default: the last commit before
the figures followed the hand). Both are warmed up (every page opened once, then the servers
left until their CPU is idle, as a few minutes into a lecture). Then, for each page, fresh
browser contexts (no cache, no session) open it on one server and the other in turn, and the
script measures from navigation start to the moment every chart of the first screen has drawn
and the run is over (``first``), and to the run's end with the stops' table received and
inflated (``complete``, this checkout only: the table is sent after the visible page).

Prints per page the median of each server's ``first`` and their ratio (goal <= 1.10).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e import harness  # noqa: E402
from tests.e2e.cases import PAGES  # noqa: E402

REF = "d566ba5"
GOAL = 1.10


def cpu_idle(pid: int, below: float = 0.05, timeout: float = 240.0) -> None:
    """Wait until the server's CPU use over a second is below ``below`` of a core."""
    def ticks() -> int:
        f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return int(f[11]) + int(f[12])            # utime + stime, in clock ticks
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        a = ticks()
        time.sleep(1.0)
        if (ticks() - a) / 100.0 < below:
            return


def load(browser, url: str, wait_table: bool) -> tuple[float, float | None]:
    ctx = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        page = ctx.new_page()
        page.goto(url, wait_until="commit")
        harness.wait_charts(page, at_least=1)
        harness.wait_idle(page)
        first = page.evaluate("() => performance.now()")
        complete = None
        if wait_table:
            slug = url.rsplit("/", 1)[1].split("?")[0]
            page.wait_for_function(f"() => window.klrlTables && window.klrlTables[{slug!r}]",
                                   timeout=60_000)
            complete = page.evaluate("() => performance.now()")
        return first, complete
    finally:
        ctx.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ref", default=REF)
    ap.add_argument("--loads", type=int, default=6, help="fresh loads per page and server")
    ap.add_argument("--pages", default="", help="comma-separated slugs (default: every page "
                                                "with a main slider)")
    ap.add_argument("--json")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    cases = [c for c in PAGES if c.slider is not None]
    if args.pages:
        want = args.pages.split(",")
        cases = [c for c in cases if c.slug in want]
    tmp = Path(tempfile.mkdtemp(prefix="klrl-ref-"))
    ref_dir = tmp / "ref"
    subprocess.run(["git", "worktree", "add", "--detach", str(ref_dir), args.ref], cwd=ROOT,
                   check=True, capture_output=True)
    results = {}
    try:
        with harness.running_server(cwd=ROOT) as new, \
                harness.running_server(cwd=ref_dir) as old, sync_playwright() as p:
            browser = harness.launch_chromium(p)
            servers = {"now": new, "ref": old}
            ref_pages = {c.slug for c in cases if (ref_dir / "pages" / f"{c.slug}.py").exists()}
            for c in cases:                      # warm-up: every page once on each server
                for name, s in servers.items():
                    if name == "ref" and c.slug not in ref_pages:
                        continue
                    load(browser, f"{s.url}/{c.slug}", wait_table=False)
            cpu_idle(new.pid), cpu_idle(old.pid)
            for c in cases:
                times = {"now": [], "ref": [], "complete": []}
                for _ in range(args.loads):
                    for name, s in servers.items():
                        if name == "ref" and c.slug not in ref_pages:
                            continue
                        first, complete = load(browser, f"{s.url}/{c.slug}",
                                               wait_table=name == "now")
                        times[name].append(first)
                        if complete is not None:
                            times["complete"].append(complete)
                row = {k: round(statistics.median(v)) for k, v in times.items() if v}
                if "ref" in row:
                    row["ratio"] = round(row["now"] / row["ref"], 2)
                results[c.slug] = row
                print(f"{c.slug:18} first load {row['now']:6d} ms  (ref {row.get('ref', '-')}"
                      f" ms, × {row.get('ratio', '-')})  table in {row.get('complete', '-')} ms",
                      flush=True)
            browser.close()
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(ref_dir)], cwd=ROOT,
                       capture_output=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
