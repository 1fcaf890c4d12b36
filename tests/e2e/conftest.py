"""Fixtures of the browser tests: one Streamlit server and one Chromium for the session,
fresh pages of one warm profile for every test (harness.WarmBrowser: compiled scripts are
kept between page loads; each test's pages get their own viewport and a cleared storage).

Browser discovery: $KLRL_CHROMIUM, else Debian's chromium-headless-shell when installed,
else /usr/bin/chromium (harness.chromium_path). When it is missing the tests
skip with the reason, unless KLRL_REQUIRE_BROWSER=1 (set by .ci/run): then they fail.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.e2e import harness

DESKTOP, PHONE = harness.DESKTOP, harness.PHONE


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "tests/e2e/" in item.nodeid.replace("\\", "/"):
            item.add_marker(pytest.mark.browser)


def pytest_configure(config):
    config.addinivalue_line("markers", "browser: drives the app in a real Chromium")


@pytest.fixture(scope="session")
def chromium() -> str:
    problem = harness.chromium_problem(tests=True)
    if problem:
        if harness.browser_required():
            pytest.fail(f"KLRL_REQUIRE_BROWSER=1 but {problem}", pytrace=False)
        pytest.skip(problem)
    return harness.chromium_path(tests=True)


_servers: list[harness.Server] = []


@pytest.fixture(scope="session")
def app_url(chromium) -> str:
    """`streamlit run app.py` on a free loopback port, for the whole session."""
    try:
        with harness.running_server() as server:
            _servers.append(server)
            yield server.url
            _servers.remove(server)
    except RuntimeError as err:
        pytest.fail(str(err), pytrace=False)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failing browser test carries the tail of the server's log (tracebacks land there)."""
    outcome = yield
    report = outcome.get_result()
    if report.failed and _servers and "tests/e2e/" in item.nodeid.replace("\\", "/"):
        report.sections.append(("streamlit server log (tail)", _servers[-1].log_tail(60)))


@pytest.fixture(scope="session")
def browser(chromium):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = harness.WarmBrowser(p, chromium)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def open_page(browser, app_url):
    """open_page(path, query=None, viewport=DESKTOP, ..., on_request=None) -> a page in a
    fresh context, loaded (on_request sees every request the page makes).

    Every uncaught JavaScript error on these pages fails the test (checked at its end)."""
    contexts, errors = [], []

    def _open(
        path: str = "",
        query: dict[str, str] | None = None,
        viewport=DESKTOP,
        accept_downloads: bool = False,
        color_scheme: str = "light",
        on_request=None,
    ):
        ctx = browser.new_context(
            viewport=viewport, accept_downloads=accept_downloads, color_scheme=color_scheme
        )
        ctx.set_default_timeout(harness.SCRIPT_TIMEOUT_MS)
        contexts.append(ctx)
        page = ctx.new_page()
        page.on("pageerror", lambda err: errors.append(f"{page.url}: {err}"))
        if on_request is not None:  # every request of the load, from the first
            page.on("request", on_request)
        url = f"{app_url}/{path}"
        if query:
            from urllib.parse import urlencode

            url += ("&" if "?" in url else "?") + urlencode(query)
        page.goto(url, wait_until="domcontentloaded")
        return page

    yield _open
    for ctx in contexts:
        ctx.close()
    assert not errors, "JavaScript errors in the page: " + " | ".join(errors)


@pytest.fixture(scope="session")
def screenshot_dir() -> Path:
    """$KLRL_SCREENSHOT_DIR, default artifacts/screenshots/ in the repo (gitignored)."""
    d = Path(os.environ.get("KLRL_SCREENSHOT_DIR") or harness.ROOT / "artifacts" / "screenshots")
    d.mkdir(parents=True, exist_ok=True)
    return d
