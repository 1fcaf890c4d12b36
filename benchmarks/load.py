"""A class at once: 30 browser sessions open the pages and move sliders (loopback only, bounded).

    python benchmarks/load.py [--students 30] [--duration 60] [--ramp 60] [--think 3 8]
                              [--classes 2] [--json out.json] [--verbose]

One Streamlit server (app.py, default options: disconnected sessions live for
server.disconnectedSessionTTL = 120 s; run at nice -10 when root, so that on this one machine
the 30 students' page rendering does not starve it, as their own laptops would not) and one
Chromium with a context per student.

1. Single session: one student alone moves the sliders of every page: the latency baseline,
   and the warm-up that fills the process-wide caches every server pays for once.
2. A class: the students arrive over --ramp seconds (the teacher shares the link); each opens a
   page, presses arrow keys on its main slider with a pause (--think) between presses, and
   moves to the next page through the sidebar every few presses, until --duration seconds
   after the last one arrived. Every press is checked: the readout must show the value
   klrl_core computes for the new slider value; no exception element, page error, HTTP error
   or lost connection (each is counted as an error).
3. The students leave; once the session TTL has passed, one more visit (the next student)
   makes Streamlit reap the expired sessions (its TTL cache only reaps on writes), and the
   server's resident memory is read until it settles. --classes repeats 2 and 3, to see
   whether a day of classes grows the server.

Latency is measured in the page as in benchmarks/latency.py (keydown -> readout shows the new
value). Memory is VmRSS of the server process and its descendants (/proc/<pid>/status); CPU
is the server's user+system time over the class's wall time (1.0 = one core; the script runs
share one GIL). Every wait is bounded (90 s); the whole run takes about 10 minutes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from latency import ARM_JS, DONE_JS, INSTALL_JS, RESULT_JS, p95
from tests.e2e import harness
from tests.e2e.cases import SLIDER_PAGES, PageCase

STEPS_AWAY = 6  # a student's slider stays within this many steps of the default
PRESSES_PER_VISIT = 6  # then the student moves to the next page through the sidebar
WAIT_MS = 90_000  # longest wait for a page or a readout under load (then: an error)
COMMUNITY_CLOUD_MB = 1024


VERBOSE = False
T0 = time.monotonic()


def say(who: str, what: str) -> None:
    if VERBOSE:
        print(f"  {time.monotonic() - T0:7.2f} s  {who}: {what}", flush=True)


@dataclass
class Stats:
    latencies: list[float] = field(default_factory=list)
    presses: int = 0
    page_loads: int = 0
    arrived: int = 0  # students whose first page came up
    errors: list[str] = field(default_factory=list)

    def error(self, who: str, what: str) -> None:
        self.errors.append(f"{who}: {what}")


class Expected:
    """Readouts of every slider value a student can reach, computed once up front."""

    def __init__(self, cases: list[PageCase]):
        self.table: dict[tuple[str, float], dict] = {}
        self.values: dict[str, list[float]] = {}
        for c in cases:
            s = c.slider
            vals, v = [s.default], s.default
            for direction in (+1, -1):
                v = s.default
                for _ in range(STEPS_AWAY + 1):
                    v = s.neighbour(v, direction)
                    vals.append(v)
            self.values[c.slug] = sorted(set(vals))
            for v in self.values[c.slug]:
                self.table[(c.slug, v)] = s.want(v)

    def want(self, case: PageCase, value: float) -> dict:
        return self.table[(case.slug, value)]

    def step(self, case: PageCase, value: float, rng: random.Random) -> tuple[int, float]:
        """A random arrow key that stays in range and visibly changes the readout."""
        options = []
        for direction in (-1, 1):
            new = case.slider.neighbour(value, direction)
            if (
                new != value
                and (case.slug, new) in self.table
                and self.want(case, new) != self.want(case, value)
            ):
                options.append((direction, new))
        if not options:
            raise RuntimeError(f"{case.slug}: no key press from {value} changes the readout")
        return rng.choice(options)


async def wait_fn(page, js, arg=None, timeout=WAIT_MS, polling=50):
    return await page.wait_for_function(js, arg=arg, timeout=timeout, polling=polling)


async def arrive(page, case: PageCase, expected: Expected, who: str, stats: Stats) -> float:
    """Wait for a page to be drawn; check its readout against its slider value; return it."""
    await wait_fn(page, harness.IDLE_JS)
    raw = await page.evaluate(
        "(p) => new URLSearchParams(window.location.search).get(p)", case.slider.param
    )
    value = float(raw) if raw is not None else case.slider.default
    await wait_fn(page, harness.READOUT_MATCHES_JS, expected.want(case, value)["metrics"])
    await page.evaluate(INSTALL_JS)
    stats.page_loads += 1
    return value


async def check_clean(page, who: str, stats: Stats) -> None:
    n = await page.get_by_test_id("stException").count()
    if n:
        stats.error(who, f"{n} exception element(s) at {page.url}")


async def student(
    i: int,
    browser,
    base: str,
    cases: list[PageCase],
    expected: Expected,
    start_at: float,
    deadline: float,
    think: tuple[float, float],
    stats: Stats,
    rng: random.Random,
) -> None:
    who = f"student {i}"
    await asyncio.sleep(max(0.0, start_at - time.monotonic()))
    ctx = await browser.new_context(viewport={"width": 1400, "height": 1000})
    ctx.set_default_timeout(WAIT_MS)
    page = await ctx.new_page()
    page.on("pageerror", lambda e: stats.error(who, f"page error: {e}"))
    page.on(
        "response",
        lambda r: (
            r.status >= 400
            and not base_probe(r.url)
            and stats.error(who, f"HTTP {r.status} {r.url}")
        ),
    )
    k = i % len(cases)
    case = cases[k]
    try:
        say(who, f"opens {case.slug}")
        await page.goto(f"{base}/{case.path}", wait_until="domcontentloaded")
        value = await arrive(page, case, expected, who, stats)
        stats.arrived += 1
        say(who, f"arrived at {case.slug}, {case.slider.param}={value}")
        while time.monotonic() < deadline:
            for _ in range(PRESSES_PER_VISIT):
                if time.monotonic() >= deadline:
                    break
                direction, new = expected.step(case, value, rng)
                want = expected.want(case, new)
                await harness_slider(page, case).focus()
                await page.evaluate(ARM_JS, want)
                await page.keyboard.press("ArrowRight" if direction > 0 else "ArrowLeft")
                try:
                    await wait_fn(page, DONE_JS)
                    ms = await page.evaluate(RESULT_JS)
                    stats.latencies.append(ms)
                    await wait_fn(page, harness.IDLE_JS)
                except Exception as err:  # a readout that never came is an error
                    shown = await page.evaluate(harness.READOUT_JS)
                    stats.error(
                        who,
                        f"{case.slug}: readout for {case.slider.param}={new} "
                        f"never shown ({type(err).__name__}); shows {shown}",
                    )
                    return
                stats.presses += 1
                value = new
                say(who, f"{case.slug} {case.slider.param}={new}: {ms:.0f} ms")
                await check_clean(page, who, stats)
                await asyncio.sleep(rng.uniform(*think))
            if time.monotonic() >= deadline:
                break
            # Next page, through the sidebar (the same session, as a reader would).
            k = (k + 1) % len(cases)
            case = cases[k]
            await (
                page.get_by_test_id("stSidebarNav")
                .get_by_role("link", name=nav_title(case))
                .click()
            )
            await wait_fn(page, f"() => window.location.pathname.endsWith('/{case.path}')")
            await page.get_by_role("heading", name=case.title).first.wait_for()
            value = await arrive(page, case, expected, who, stats)
            say(who, f"arrived at {case.slug}, {case.slider.param}={value}")
    except Exception as err:
        stats.error(who, f"{type(err).__name__}: {str(err).splitlines()[0][:300]}")
    finally:
        await check_clean(page, who, stats)
        state = await page.evaluate(
            "() => document.querySelector('[data-testid=stApp]')"
            "?.getAttribute('data-test-connection-state')"
        )
        if state != "CONNECTED":
            stats.error(who, f"connection state {state}")
        await ctx.close()


def base_probe(url: str) -> bool:
    """Streamlit's frontend finds its base path by probing <path>/_stcore/health and
    host-config under the page's path first; those 404s are by design, not errors."""
    return url.endswith(("/_stcore/health", "/_stcore/host-config"))


def harness_slider(page, case: PageCase):
    quoted = case.slider.label.replace("\\", "\\\\").replace('"', '\\"')
    return page.locator(f'input[type="range"][aria-label="{quoted}"]')


def nav_title(case: PageCase) -> str:
    from klrl_app.nav import PAGES as NAV

    return next(p.title for p in NAV if p.url_path == case.path)


async def sample_rss(pid: int, samples: list[tuple[float, int]], stop: asyncio.Event) -> None:
    while not stop.is_set():
        samples.append((time.monotonic(), harness.tree_rss_kb(pid)))
        try:
            await asyncio.wait_for(stop.wait(), timeout=0.25)
        except TimeoutError:
            pass


async def run_class(
    browser, base, cases, expected, n, duration, think, seed, ramp: float
) -> tuple[Stats, float]:
    stats = Stats()
    t0 = time.monotonic()
    deadline = t0 + ramp + duration
    tasks = [
        student(
            i,
            browser,
            base,
            cases,
            expected,
            t0 + ramp * i / max(n - 1, 1),
            deadline,
            think,
            stats,
            random.Random(seed * 1000 + i),
        )
        for i in range(n)
    ]
    await asyncio.gather(*tasks)
    return stats, time.monotonic() - t0


def summary(stats: Stats) -> dict:
    lat = stats.latencies
    return dict(
        arrived=stats.arrived,
        presses=stats.presses,
        page_loads=stats.page_loads,
        errors=len(stats.errors),
        median_ms=round(statistics.median(lat), 1) if lat else None,
        p95_ms=round(p95(lat), 1) if lat else None,
    )


async def settle_rss(pid: int, timeout: float = 90.0, window: float = 35.0) -> int:
    """RSS once it stops falling: the last value after `window` s without a 1% drop (longer
    than the 30 s between the app's malloc_trim calls, app.py)."""
    deadline = time.monotonic() + timeout
    best, best_t = harness.tree_rss_kb(pid), time.monotonic()
    while time.monotonic() < deadline and time.monotonic() - best_t < window:
        await asyncio.sleep(0.5)
        now = harness.tree_rss_kb(pid)
        if now < best * 0.99:
            best, best_t = now, time.monotonic()
    return harness.tree_rss_kb(pid)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (its threads included), in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def one_class(browser, server, cases, expected, args, seed: int) -> dict:
    """A class arrives, works, leaves; then the session TTL passes and the store is reaped."""
    pid, ttl = server.pid, args.ttl
    samples: list[tuple[float, int]] = []
    stop = asyncio.Event()
    sampler = asyncio.create_task(sample_rss(pid, samples, stop))
    load_avg: list[float] = []
    loader = asyncio.create_task(_load_avg(load_avg, stop))
    cpu0 = cpu_seconds(pid)
    crowd, wall = await run_class(
        browser,
        server.url,
        cases,
        expected,
        args.students,
        args.duration,
        args.think,
        seed,
        args.ramp,
    )
    server_cores = (cpu_seconds(pid) - cpu0) / wall
    stop.set()
    await sampler
    await loader
    rss_peak = max(v for _, v in samples)
    print(
        f"  class: {summary(crowd)} in {wall:.0f} s; server used {server_cores:.2f} cores; "
        f"RSS peak {rss_peak / 1024:.0f} MB",
        flush=True,
    )
    rss_closed = await settle_rss(pid, timeout=10)
    print(
        f"  students gone (RSS {rss_closed / 1024:.0f} MB); waiting {ttl} s (session TTL) + 5 s…",
        flush=True,
    )
    await asyncio.sleep(ttl + 5)  # the server's own TTL: there is nothing to poll for
    # The next visitor's disconnect is a write to the session store: that is when it reaps.
    nxt, _ = await run_class(
        browser, server.url, cases[:1], expected, 1, 0.0, (0.0, 0.0), seed + 500, 0.0
    )
    rss_after = await settle_rss(pid)
    print(f"  after the TTL and one more visit: RSS {rss_after / 1024:.0f} MB", flush=True)
    return dict(
        stats=crowd,
        next_visit=nxt,
        wall=wall,
        server_cores=server_cores,
        load_avg=statistics.mean(load_avg) if load_avg else None,
        rss_peak=rss_peak,
        rss_closed=rss_closed,
        rss_after=rss_after,
    )


async def amain(args) -> int:
    from playwright.async_api import async_playwright

    cases = [c for c in SLIDER_PAGES if not args.pages or c.slug in args.pages.split(",")]
    print(f"pages: {', '.join(c.slug for c in cases)}; computing expected readouts…", flush=True)
    expected = Expected(cases)
    extra = ("--server.disconnectedSessionTTL", str(args.ttl)) if args.ttl != 120 else ()
    out: dict = {
        "students": args.students,
        "duration_s": args.duration,
        "think_s": list(args.think),
        "ramp_s": args.ramp,
        "ttl_s": args.ttl,
        "server_nice": args.server_nice,
        "cpus": os.cpu_count(),
    }
    classes = []
    with harness.running_server(extra_args=extra, nice=args.server_nice) as server:
        pid = server.pid
        rss_cold = harness.tree_rss_kb(pid)
        async with async_playwright() as p:
            browser = await p.chromium.launch(
                executable_path=harness.chromium_path(), args=harness.CHROMIUM_ARGS
            )
            try:
                print(
                    f"server pid {pid}, RSS cold {rss_cold / 1024:.0f} MB; single session…",
                    flush=True,
                )
                cpu0 = cpu_seconds(pid)
                single, single_wall = await run_class(
                    browser,
                    server.url,
                    cases,
                    expected,
                    1,
                    args.single_duration,
                    args.think,
                    args.seed,
                    0.0,
                )
                single_cores = (cpu_seconds(pid) - cpu0) / single_wall
                print(f"  single session: {summary(single)}", flush=True)
                rss_before = await settle_rss(pid)
                for k in range(args.classes):
                    print(
                        f"class {k + 1}/{args.classes}: {args.students} students arrive over "
                        f"{args.ramp:.0f} s and work until {args.duration:.0f} s after the "
                        f"last one arrives (RSS now {harness.tree_rss_kb(pid) / 1024:.0f} MB)",
                        flush=True,
                    )
                    classes.append(
                        await one_class(
                            browser, server, cases, expected, args, args.seed + 1000 * (k + 1)
                        )
                    )
            finally:
                await browser.close()

    mb = lambda kb: round(kb / 1024, 1)  # noqa: E731
    first = classes[0]
    arrived = first["stats"].arrived
    per_session = (first["rss_peak"] - rss_before) / 1024 / max(arrived, 1)
    all_errors = single.errors + [
        e for c in classes for e in c["stats"].errors + c["next_visit"].errors
    ]
    out.update(
        single=summary(single),
        single_server_cores=round(single_cores, 2),
        rss_mb=dict(cold=mb(rss_cold), before=mb(rss_before)),
        classes=[
            dict(
                summary(c["stats"]),
                wall_s=round(c["wall"], 1),
                server_cores=round(c["server_cores"], 2),
                load_average=round(c["load_avg"], 1) if c["load_avg"] else None,
                rss_peak_mb=mb(c["rss_peak"]),
                rss_just_closed_mb=mb(c["rss_closed"]),
                rss_after_mb=mb(c["rss_after"]),
                after_vs_before=round(c["rss_after"] / rss_before - 1, 3),
            )
            for c in classes
        ],
        per_session_mb=round(per_session, 2),
        students_per_gb=int((COMMUNITY_CLOUD_MB - rss_before / 1024) / per_session)
        if per_session > 0
        else None,
        errors=all_errors[:80],
    )
    print(json.dumps(out, indent=1, ensure_ascii=False))
    last = out["classes"][-1]
    ok = not all_errors and per_session < 15 and abs(last["after_vs_before"]) <= 0.10
    print(
        "\nerrors {} (goal 0); latency single median {} ms p95 {} ms, under load median {} ms "
        "p95 {} ms; RSS before {} MB, peak {} MB, after {} MB ({:+.1%} of before, goal "
        "within 10%); {:.2f} MB per active session (goal < 15); ~{} concurrent students per "
        "{} MB".format(
            len(all_errors),
            out["single"]["median_ms"],
            out["single"]["p95_ms"],
            out["classes"][0]["median_ms"],
            out["classes"][0]["p95_ms"],
            out["rss_mb"]["before"],
            out["classes"][0]["rss_peak_mb"],
            last["rss_after_mb"],
            last["after_vs_before"],
            per_session,
            out["students_per_gb"],
            COMMUNITY_CLOUD_MB,
        )
    )
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1, ensure_ascii=False))
    return 0 if ok else 1


async def _load_avg(out: list[float], stop: asyncio.Event) -> None:
    while not stop.is_set():
        out.append(os.getloadavg()[0])
        try:
            await asyncio.wait_for(stop.wait(), timeout=5)
        except TimeoutError:
            pass


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", type=int, default=30)
    ap.add_argument(
        "--duration",
        type=float,
        default=60.0,
        help="seconds of slider moving after the last student arrived",
    )
    ap.add_argument("--single-duration", type=float, default=40.0)
    ap.add_argument("--ramp", type=float, default=60.0, help="seconds over which students arrive")
    ap.add_argument(
        "--server-nice",
        type=int,
        default=-10 if os.geteuid() == 0 else 0,
        help="run the server at this nice level (default -10 as root), so that on "
        "one machine the 30 students' page rendering does not starve it",
    )
    ap.add_argument(
        "--classes",
        type=int,
        default=2,
        help="classes one after another (does a day of classes grow the server?)",
    )
    ap.add_argument(
        "--think",
        type=float,
        nargs=2,
        default=(3.0, 8.0),
        help="pause between a student's presses, uniform in [a, b] seconds",
    )
    ap.add_argument(
        "--ttl",
        type=int,
        default=120,
        help="server.disconnectedSessionTTL (Streamlit's default is 120)",
    )
    ap.add_argument("--pages", default="", help="comma-separated slugs (default: all)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", help="write the figures to this file")
    ap.add_argument("--verbose", action="store_true", help="print every student's steps")
    args = ap.parse_args()
    global VERBOSE
    VERBOSE = args.verbose
    problem = harness.chromium_problem()
    if problem:
        print(problem, file=sys.stderr)
        return 2
    return asyncio.run(amain(args))


if __name__ == "__main__":
    sys.exit(main())
