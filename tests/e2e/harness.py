"""Shared machinery of the browser tests and the benchmarks: the browser, the server, the DOM.

Everything here is bounded: every wait has a deadline, every server is stopped by its own id.
Used by tests/e2e/conftest.py and by benchmarks/latency.py and benchmarks/load.py.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from collections.abc import Iterator
from urllib.parse import parse_qs, urlparse

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CHROMIUM = "/usr/bin/chromium"
# Chromium's headless build (Debian's chromium-headless-shell; Playwright's own default for
# headless Chromium): the same Blink and V8 without the desktop browser's interface. Measured
# here, a page load costs a quarter less CPU in it, so the browser tests use it when present.
HEADLESS_SHELL = "/usr/bin/chromium-headless-shell"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SERVER_START_TIMEOUT = 90.0  # seconds for /_stcore/health to answer
SCRIPT_TIMEOUT_MS = 45_000  # a page's script run, generous for a loaded 2-core machine

DESKTOP = {"width": 1400, "height": 1000}
PHONE = {"width": 390, "height": 844}

BAD_TEXT = re.compile(r"\b(nan|NaN|inf|Infinity)\b|Traceback")
NOTICE = "Part of this link could not be used."


# ----------------------------------------------------------------------------- the browser
def chromium_path(tests: bool = False) -> str:
    """Where Chromium is expected: $KLRL_CHROMIUM; else, for the tests, the headless shell
    when it is installed; else Debian's /usr/bin/chromium (the benchmarks' browser: the one a
    reader's machine runs)."""
    if os.environ.get("KLRL_CHROMIUM"):
        return os.environ["KLRL_CHROMIUM"]
    if tests and os.access(HEADLESS_SHELL, os.X_OK):
        return HEADLESS_SHELL
    return DEFAULT_CHROMIUM


def chromium_problem(tests: bool = False) -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    path = chromium_path(tests)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        return (
            f"Chromium not found at {path}; install Debian's chromium "
            f"(apt-get install chromium) or set KLRL_CHROMIUM"
        )
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the Playwright Python package is not installed; pip install -r requirements-dev.txt"
    return None


def browser_required() -> bool:
    """CI sets KLRL_REQUIRE_BROWSER=1: a missing browser is then a failure, not a skip."""
    return os.environ.get("KLRL_REQUIRE_BROWSER", "").strip().lower() in {"1", "true", "yes", "on"}


def launch_chromium(playwright):
    return playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)


class Pages:
    """Stands in for a fresh browser context in the tests: pages opened in the one warm
    profile of ``WarmBrowser``, each at its own viewport and colour scheme. Closing it closes
    its pages and clears what they stored (the theme a test chose in the app's menu)."""

    def __init__(self, ctx, viewport: dict, color_scheme: str):
        self.ctx, self.viewport, self.color_scheme = ctx, viewport, color_scheme
        self.timeout_ms: float | None = None
        self.pages: list = []

    def set_default_timeout(self, ms: float) -> None:
        self.timeout_ms = ms
        for page in self.pages:
            page.set_default_timeout(ms)

    def new_page(self):
        page = self.ctx.new_page()
        page.set_viewport_size(self.viewport)
        page.emulate_media(color_scheme=self.color_scheme)
        if self.timeout_ms is not None:
            page.set_default_timeout(self.timeout_ms)
        self.pages.append(page)
        return page

    def close(self) -> None:
        for page in self.pages:
            if page.is_closed():
                continue
            with contextlib.suppress(Exception):  # a page that never loaded the app
                page.evaluate("() => { localStorage.clear(); sessionStorage.clear(); }")
            page.close()
        self.pages.clear()


class WarmBrowser:
    """One persistent Chromium profile for a test session. Chromium keeps compiled code only
    for a profile with a disk cache: from the third load on, plotly.js (4.8 MB) starts in
    about 0.1 s instead of 1.5 s, and a page load takes half the CPU. ``new_context`` gives
    ``Pages`` (a viewport, a colour scheme, a clean storage on close) instead of a context."""

    def __init__(self, playwright, executable: str | None = None):
        self.dir = tempfile.mkdtemp(prefix="klrl-chromium-")
        self.playwright = playwright  # for tests that need separate profiles (class sessions)
        self.ctx = playwright.chromium.launch_persistent_context(
            self.dir,
            executable_path=executable or chromium_path(),
            args=CHROMIUM_ARGS,
            accept_downloads=True,
            viewport=DESKTOP,
        )
        for page in self.ctx.pages:  # the profile opens with one blank tab
            page.close()

    def new_context(
        self,
        viewport: dict | None = None,
        accept_downloads: bool = True,
        color_scheme: str = "light",
    ) -> Pages:
        return Pages(self.ctx, viewport or DESKTOP, color_scheme)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.ctx.close()
        shutil.rmtree(self.dir, ignore_errors=True)


# ------------------------------------------------------------------------------ the server
def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
            return r.status == 200
    except (urllib.error.URLError, OSError):
        return False


class Server:
    """A `streamlit run` child process on a free loopback port."""

    def __init__(
        self,
        script: str = "app.py",
        cwd: Path = ROOT,
        extra_args: tuple[str, ...] = (),
        nice: int = 0,
    ):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = tempfile.NamedTemporaryFile(
            prefix="klrl-streamlit-", suffix=".log", delete=False
        )
        cmd = [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            script,
            "--server.headless",
            "true",
            "--server.port",
            str(self.port),
            "--server.address",
            "127.0.0.1",
            "--server.fileWatcherType",
            "none",
            "--browser.gatherUsageStats",
            "false",
            *extra_args,
        ]
        if nice:  # `nice` execs the server: the pid stays the server's
            cmd = ["nice", "-n", str(int(nice)), *cmd]
        self.proc = subprocess.Popen(
            cmd, cwd=str(cwd), stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
        self.pid = self.proc.pid

    def log_tail(self, n: int = 40) -> str:
        try:
            lines = Path(self.log.name).read_text(errors="replace").splitlines()
        except OSError:
            return ""
        return "\n".join(lines[-n:])

    def wait_healthy(self, timeout: float = SERVER_START_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"streamlit exited with code {self.proc.returncode}:\n{self.log_tail()}"
                )
            if _healthy(self.url):
                return
            time.sleep(0.2)  # poll interval of a bounded wait, not a fixed delay
        raise RuntimeError(
            f"streamlit did not answer {self.url}/_stcore/health within "
            f"{timeout:.0f} s:\n{self.log_tail()}"
        )

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=15)
        self.log.close()
        with contextlib.suppress(OSError):
            os.unlink(self.log.name)


@contextlib.contextmanager
def running_server(
    script: str = "app.py", cwd: Path = ROOT, extra_args: tuple[str, ...] = (), nice: int = 0
) -> Iterator[Server]:
    server = Server(script, cwd, extra_args, nice)
    try:
        server.wait_healthy()
        yield server
    finally:
        server.stop()


def tree_rss_kb(pid: int) -> int:
    """Resident memory (VmRSS, kB) of a process and all of its descendants."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
        except (OSError, IndexError, ValueError):
            continue
    total, todo, seen = 0, [pid], set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
                        break
        except OSError:
            continue
        todo.extend(children.get(p, []))
    return total


# --------------------------------------------------------------------------------- the DOM
# The readout (layout.Page.readout) as {label: value}; a label that repeats gets " #2", " #3"
# in document order.
COLLECT_JS = """
  const collect = () => {
    const seen = {};
    for (const m of document.querySelectorAll('.klrl-readout .klrl-item')) {
      const l = m.querySelector('.klrl-label');
      const v = m.querySelector('.klrl-value');
      if (!l || !v) continue;
      let key = l.textContent.trim(), n = 1;
      while (key in seen) key = `${l.textContent.trim()} #${++n}`;
      seen[key] = v.textContent.trim();
    }
    return seen;
  };"""

READOUT_JS = "() => {" + COLLECT_JS + " return collect(); }"

# True when every expected label shows its value (wanted: {label: value}).
READOUT_MATCHES_JS = (
    "(wanted) => {"
    + COLLECT_JS
    + """
  const seen = collect();
  return Object.entries(wanted).every(([k, v]) => seen[k] === v);
}"""
)

SENTENCE_JS = """() => Array.from(document.querySelectorAll('.klrl-readout'))
  .map(e => e.textContent).join(' ')"""

IDLE_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  return !!app && app.getAttribute('data-test-script-state') === 'notRunning'
         && app.getAttribute('data-test-connection-state') === 'CONNECTED';
}"""


# Counts the page's script runs (each time the app's script state becomes "running"): a test
# that releases held-back messages waits for the run they start, not for a readout that may
# already match before the run has begun.
COUNT_RUNS_JS = """() => {
  if (window.__klrlRuns !== undefined) return window.__klrlRuns;
  window.__klrlRuns = 0;
  const app = document.querySelector('[data-testid="stApp"]');
  new MutationObserver(() => {
    if (app.getAttribute('data-test-script-state') === 'running') window.__klrlRuns++;
  }).observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
  return 0;
}"""


def runs_so_far(page) -> int:
    """How many script runs the page has started since it was first asked (0 then)."""
    return page.evaluate(COUNT_RUNS_JS)


def wait_run_after(
    page, runs: int, timeout_ms: int = SCRIPT_TIMEOUT_MS, show_ms: int = 10_000
) -> None:
    """Until a run later than the ``runs``-th has started and the page is idle again. A run
    short enough may never show as running (the page renders only its end): after
    ``show_ms`` without one, only the idle page is waited for."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(
            "(n) => window.__klrlRuns > n", arg=runs, timeout=min(show_ms, timeout_ms)
        )
    except PlaywrightTimeout:
        pass
    wait_idle(page, timeout_ms)


def slider(page, label: str):
    """A slider by its label (the input's aria-label; its accessible name repeats the label)."""
    quoted = label.replace("\\", "\\\\").replace('"', '\\"')
    return page.locator(f'input[type="range"][aria-label="{quoted}"]')


def readout(page) -> dict[str, str]:
    return page.evaluate(READOUT_JS)


def wait_idle(page, timeout_ms: int = SCRIPT_TIMEOUT_MS) -> None:
    """Wait until the script run has finished and the app is connected."""
    page.wait_for_function(IDLE_JS, timeout=timeout_ms)


def wait_readout(page, wanted: dict[str, str], timeout_ms: int = SCRIPT_TIMEOUT_MS) -> None:
    """Wait until the metric cards show ``wanted``, then until the run is over; explain a miss."""
    try:
        page.wait_for_function(READOUT_MATCHES_JS, arg=wanted, timeout=timeout_ms)
        wait_idle(page, timeout_ms)
    except Exception as err:  # playwright's TimeoutError: say what was on screen instead
        raise AssertionError(
            f"readout never showed {wanted}; it shows {readout(page)} at {page.url}"
        ) from err
    # Once idle, the cards must still match (no stale element from the previous run). A run
    # of a value the thumb has already left can end after the browser drew the thumb's stop,
    # and the run of the thumb's value may start only after a moment of idle: what counts is
    # that an idle page settles on ``wanted``.
    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        shown = readout(page)
        if all(shown.get(k) == v for k, v in wanted.items()):
            return
        assert time.monotonic() < deadline, (wanted, shown, page.url)
        page.wait_for_timeout(250)
        wait_idle(page, timeout_ms)


def wait_sentence(page, text: str, timeout_ms: int = SCRIPT_TIMEOUT_MS) -> None:
    js = "(t) => Array.from(document.querySelectorAll('.klrl-readout')).some(e => e.textContent.includes(t))"
    try:
        page.wait_for_function(js, arg=text, timeout=timeout_ms)
    except Exception as err:
        raise AssertionError(
            f"readout sentence never showed {text!r}; it shows {page.evaluate(SENTENCE_JS)!r}"
        ) from err


def query(page) -> dict[str, str]:
    """The current address bar's query parameters (last value of each)."""
    return {k: v[-1] for k, v in parse_qs(urlparse(page.url).query, keep_blank_values=True).items()}


def wait_query(page, name: str, value: str, timeout_ms: int = SCRIPT_TIMEOUT_MS) -> None:
    js = """([name, value]) => new URLSearchParams(window.location.search).get(name) === value"""
    try:
        page.wait_for_function(js, arg=[name, value], timeout=timeout_ms)
    except Exception as err:
        raise AssertionError(f"address bar never held {name}={value}: {page.url}") from err


def main_text(page) -> str:
    return page.get_by_test_id("stMain").inner_text()


def assert_clean(page) -> None:
    """No exception element, and no traceback/nan/inf in the page's text."""
    n = page.get_by_test_id("stException").count()
    assert n == 0, (
        f"{n} exception element(s) at {page.url}: "
        + " | ".join(page.get_by_test_id("stException").all_inner_texts())[:2000]
    )
    text = main_text(page)
    found = BAD_TEXT.search(text)
    assert found is None, (
        f"page {page.url} shows {found.group(0)!r}: …{text[max(0, found.start() - 120) : found.end() + 120]}…"
    )


# A chart is the app's live chart (klrl_app/live_chart.js) or, as a fallback, st.plotly_chart.
# A component's host is in the page before its script has made the chart: wait on the hosts.
CHARTS = '.klrl-chart, [data-testid="stPlotlyChart"]'
# every components-v2 host but those that draw no chart: the instant readout's driver
# (klrl_app/instant.py), its Play button (instant.play_button), and a class session's live
# updates and QR code (klrl_app/classroom)
CHART_HOSTS = (
    '[class*="st-key-"]:not([class*="st-key-klrl-instant-"])'
    ':not([class*="st-key-klrl-play-"])'
    ':not([class*="st-key-klrl-class-"]) > .stBidiComponent, '
    '[data-testid="stPlotlyChart"]'
)
CHARTS_DRAWN_JS = (
    """(atLeast) => {
  const hosts = Array.from(document.querySelectorAll('"""
    + CHART_HOSTS
    + """'));
  return hosts.length >= atLeast && hosts.every(c => c.querySelector('.main-svg'));
}"""
)
# Mark the charts on the page and fingerprint what they draw (their traces' SVG).
CHARTS_MARK_JS = (
    """() => {
  const print = c => Array.from(c.querySelectorAll('.trace')).map(t => t.outerHTML).join('');
  window.__klrlCharts = Array.from(document.querySelectorAll('"""
    + CHARTS
    + """'))
    .map(c => ({node: c, print: print(c)}));
  window.__klrlPrint = print;
  return window.__klrlCharts.length;
}"""
)
# After a slider move: [charts marked, of those still in the page, of those drawing new traces]
CHARTS_SINCE_MARK_JS = """() => {
  const marked = window.__klrlCharts;
  return [marked.length, marked.filter(m => m.node.isConnected).length,
          marked.filter(m => window.__klrlPrint(m.node) !== m.print).length];
}"""


def stops_taken(seen: list) -> set[tuple]:
    """The distinct stops in a drag's record of [value, aria-valuetext] pairs."""
    return {tuple(p) for p in seen}


def drawn_share(seen: list, drawn: list) -> float:
    """The share of the stops the thumb took (``seen``: [the input's value, its
    aria-valuetext] at each change) that the driver drew (``drawn``: instant.js's stop keys, a
    number for a plain slider, the stop's text for a select slider). Numbers are compared as
    numbers: the announced text may round the value ("0.50" for 0.5, "0.21" for 0.205)."""
    stops = stops_taken(seen)
    if not stops:
        return 0.0
    texts = {d for d in drawn if isinstance(d, str)}
    numbers = [float(d) for d in drawn if isinstance(d, (int, float))]

    def hit(value, text) -> bool:
        if text in texts:
            return True
        try:
            v = float(value)
        except (TypeError, ValueError):
            return False
        return any(abs(d - v) <= 1e-9 * max(1.0, abs(v)) for d in numbers)

    return sum(hit(v, t) for v, t in stops) / len(stops)


TABLE_READY_JS = """(slug) => {
  const t = window.klrlTables && window.klrlTables[slug];
  const f = window.klrlFollowers && window.klrlFollowers[slug];
  return !!(t && f && f.data && t.setting === f.data.setting);
}"""


def wait_table(page, slug: str, timeout_ms: int = SCRIPT_TIMEOUT_MS) -> None:
    """Until the browser holds the page's table of stops for the setting on screen (it is
    sent after the visible page and inflated in the browser: a loaded machine takes a while)."""
    page.wait_for_function(TABLE_READY_JS, arg=slug, timeout=timeout_ms)


def wait_charts(page, at_least: int = 0, timeout_ms: int = SCRIPT_TIMEOUT_MS) -> None:
    """Wait until the page has ``at_least`` charts and every one has drawn its SVG."""
    page.wait_for_function(CHARTS_DRAWN_JS, arg=at_least, timeout=timeout_ms)


def mark_charts(page) -> int:
    """Remember the page's chart nodes and what they draw; returns how many there are."""
    wait_charts(page, at_least=1)
    return page.evaluate(CHARTS_MARK_JS)


def charts_since_mark(page, timeout_ms: int = SCRIPT_TIMEOUT_MS) -> tuple[int, int, int]:
    """(marked, still in the page, redrawn) once some chart has redrawn, or at the deadline."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(f"() => ({CHARTS_SINCE_MARK_JS})()[2] > 0", timeout=timeout_ms)
    except PlaywrightTimeout:
        pass  # the counts below say what happened
    return tuple(page.evaluate(CHARTS_SINCE_MARK_JS))


def grow_to_content(page, width: int, min_height: int, max_height: int = 12_000) -> int:
    """Resize the viewport to the main container's full height (Streamlit scrolls inside it)."""
    height = page.evaluate("""() => {
      const m = document.querySelector('[data-testid="stMain"]');
      const app = document.querySelector('[data-testid="stAppViewContainer"]');
      return Math.max(m ? m.scrollHeight : 0, app ? app.scrollHeight : 0,
                      document.documentElement.scrollHeight);
    }""")
    height = int(min(max(min_height, math.ceil(height)), max_height))
    page.set_viewport_size({"width": width, "height": height})
    return height
