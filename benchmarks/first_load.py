"""A page's first load, now against a reference commit: is it at most 10% slower (issue 20)?

    python benchmarks/first_load.py [--ref d566ba5] [--loads 6] [--pages tilt,bandit] [--json F]

Two Streamlit servers on loopback, one on this checkout and one on ``--ref`` (a git worktree
made for the run in a temporary directory and removed after; default: the last commit before
the figures followed the hand). Both are warmed up (every page opened once, then the servers
left until their CPU is idle, as a few minutes into a lecture). Then, for each page, fresh
browser contexts (no cache, no session) open it on one server and the other in turn, and the
script measures from navigation start to the moment every chart of the first screen has drawn
and the run is over (``first``), and to the run's end with the stops' table received and
parsed (``complete``, this checkout only: the table is fetched after the visible page).

Prints per page the median of each server's ``first`` and their ratio (goal <= 1.10).

    python benchmarks/first_load.py --phone [--ref 3f7dcf6] [--loads 2] [--pages tilt,bandit]

Phone mode (issue 33): Chromium at 390×844, throttled through the devtools protocol
(Network.emulateNetworkConditions) to Lighthouse's Slow 4G, 1.6 Mbit/s down, 750 kbit/s up,
150 ms round trip. Per page and server: the bytes that crossed over HTTP with the cache off
(as encoded on the wire: compressed where the server compressed) and their count, the seconds
from navigation to the first chart drawn, and the same for a second visit with the cache on
(the same browser context, after a first visit). Beside the app: a plain Streamlit app with
one slider and one st.plotly_chart (benchmarks/floor_chart_app.py) in the same run, and, with
``--ref``, the app at that commit. Goals: at most 1.5 MB and 8 s cold, 2.5 s warm.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e import harness
from tests.e2e.cases import PAGES

REF = "d566ba5"
GOAL = 1.10


def cpu_idle(pid: int, below: float = 0.05, timeout: float = 240.0) -> None:
    """Wait until the server's CPU use over a second is below ``below`` of a core."""

    def ticks() -> int:
        f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return int(f[11]) + int(f[12])  # utime + stime, in clock ticks

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
            page.wait_for_function(
                f"() => window.klrlTables && window.klrlTables[{slug!r}]", timeout=60_000
            )
            complete = page.evaluate("() => performance.now()")
        return first, complete
    finally:
        ctx.close()


# Lighthouse's Slow 4G (its "mobile" throttling): bytes per second, milliseconds.
SLOW_4G = {
    "offline": False,
    "latency": 150,
    "downloadThroughput": 1.6e6 / 8,
    "uploadThroughput": 750e3 / 8,
}
PHONE = {
    "viewport": {"width": 390, "height": 844},
    "device_scale_factor": 3,
    "is_mobile": True,
    "has_touch": True,
}


def phone_visit(ctx, url: str, cache: bool) -> dict:
    """Open ``url`` in a new tab of ``ctx`` at Slow 4G: HTTP bytes and requests, seconds to
    the first chart drawn."""
    page = ctx.new_page()
    try:
        cdp = ctx.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.send("Network.setCacheDisabled", {"cacheDisabled": not cache})
        cdp.send("Network.emulateNetworkConditions", SLOW_4G)
        done = {"bytes": 0, "requests": 0, "ws": 0}
        http = set()

        def sent(e):
            if not e["request"]["url"].startswith("ws"):
                http.add(e["requestId"])

        def finished(e):
            if e["requestId"] in http:
                done["bytes"] += e["encodedDataLength"]
                done["requests"] += 1

        def frame(e):
            n = len(e["response"]["payloadData"])  # binary frames arrive in base64
            done["ws"] += n * 3 // 4 if e["response"].get("opcode") == 2 else n

        cdp.on("Network.requestWillBeSent", sent)
        cdp.on("Network.loadingFinished", finished)
        cdp.on("Network.webSocketFrameReceived", frame)
        page.goto(url, wait_until="commit", timeout=120_000)
        harness.wait_charts(page, at_least=1, timeout_ms=120_000)
        chart_s = page.evaluate("() => performance.now()") / 1000
        harness.wait_idle(page, timeout_ms=120_000)
        page.wait_for_timeout(1500)  # late requests (fonts, the table's component)
        return {
            "chart_s": round(chart_s, 2),
            "kb": round(done["bytes"] / 1000),
            "requests": done["requests"],
            "ws_kb": round(done["ws"] / 1000),
        }
    finally:
        page.close()


def phone(args) -> dict:
    from playwright.sync_api import sync_playwright

    pages = (args.pages or "tilt,bandit").split(",")
    tmp = Path(tempfile.mkdtemp(prefix="klrl-ref-"))
    ref_dir = tmp / "ref"
    results: dict = {}
    with contextlib.ExitStack() as stack:
        servers = {"now": (stack.enter_context(harness.running_server(cwd=ROOT)), pages)}
        if args.ref_given:
            subprocess.run(
                ["git", "worktree", "add", "--detach", str(ref_dir), args.ref],
                cwd=ROOT,
                check=True,
                capture_output=True,
            )
            stack.callback(
                subprocess.run,
                ["git", "worktree", "remove", "--force", str(ref_dir)],
                cwd=ROOT,
                capture_output=True,
            )
            servers["ref"] = (stack.enter_context(harness.running_server(cwd=ref_dir)), pages)
        servers["floor"] = (
            stack.enter_context(harness.running_server("benchmarks/floor_chart_app.py", cwd=ROOT)),
            [""],
        )
        p = stack.enter_context(sync_playwright())
        browser = harness.launch_chromium(p)
        for s, slugs in servers.values():  # warm-up, unthrottled
            for slug in slugs:
                load(browser, f"{s.url}/{slug}", wait_table=False)
        for s, _ in servers.values():  # the background tables and brotli copies are made
            cpu_idle(s.pid)
        for name, (s, slugs) in servers.items():
            for slug in slugs:
                rows = []
                for _ in range(args.loads):
                    ctx = browser.new_context(**PHONE)
                    try:
                        cold = phone_visit(ctx, f"{s.url}/{slug}", cache=False)
                        warm = phone_visit(ctx, f"{s.url}/{slug}", cache=True)
                    finally:
                        ctx.close()
                    rows.append((cold, warm))
                med = {k: statistics.median(r[0][k] for r in rows) for k in rows[0][0]}
                med["warm_s"] = statistics.median(r[1]["chart_s"] for r in rows)
                med["warm_kb"] = statistics.median(r[1]["kb"] for r in rows)
                label = f"{name}/{slug or 'floor'}"
                results[label] = med
                print(
                    f"{label:14} cold {med['kb']:7.0f} kB in {med['requests']:3.0f} requests"
                    f" (+{med['ws_kb']:.0f} kB websocket), first chart {med['chart_s']:5.1f} s"
                    f"; second visit {med['warm_s']:4.1f} s, {med['warm_kb']:.0f} kB",
                    flush=True,
                )
        browser.close()
    return results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ref", default=REF)
    ap.add_argument("--phone", action="store_true", help="phone at Slow 4G: bytes, seconds")
    ap.add_argument("--loads", type=int, default=6, help="fresh loads per page and server")
    ap.add_argument(
        "--pages", default="", help="comma-separated slugs (default: every page with a main slider)"
    )
    ap.add_argument("--json")
    args = ap.parse_args()
    if args.phone:
        args.ref_given = "--ref" in sys.argv
        if args.loads == 6:
            args.loads = 2
        results = phone(args)
        if args.json:
            Path(args.json).write_text(json.dumps(results, indent=2))
        return
    from playwright.sync_api import sync_playwright

    cases = [c for c in PAGES if c.slider is not None]
    if args.pages:
        want = args.pages.split(",")
        cases = [c for c in cases if c.slug in want]
    tmp = Path(tempfile.mkdtemp(prefix="klrl-ref-"))
    ref_dir = tmp / "ref"
    subprocess.run(
        ["git", "worktree", "add", "--detach", str(ref_dir), args.ref],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    results = {}
    try:
        with (
            harness.running_server(cwd=ROOT) as new,
            harness.running_server(cwd=ref_dir) as old,
            sync_playwright() as p,
        ):
            browser = harness.launch_chromium(p)
            servers = {"now": new, "ref": old}
            ref_pages = {c.slug for c in cases if (ref_dir / "pages" / f"{c.slug}.py").exists()}
            for c in cases:  # warm-up: every page once on each server
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
                        first, complete = load(
                            browser, f"{s.url}/{c.slug}", wait_table=name == "now"
                        )
                        times[name].append(first)
                        if complete is not None:
                            times["complete"].append(complete)
                row = {k: round(statistics.median(v)) for k, v in times.items() if v}
                if "ref" in row:
                    row["ratio"] = round(row["now"] / row["ref"], 2)
                results[c.slug] = row
                print(
                    f"{c.slug:18} first load {row['now']:6d} ms  (ref {row.get('ref', '-')}"
                    f" ms, × {row.get('ratio', '-')})  table in {row.get('complete', '-')} ms",
                    flush=True,
                )
            browser.close()
    finally:
        subprocess.run(
            ["git", "worktree", "remove", "--force", str(ref_dir)], cwd=ROOT, capture_output=True
        )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
