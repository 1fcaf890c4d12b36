"""A class session in a real browser: a lecturer and two students (three browser profiles, so
three student cookies) through a whole question: open, answer, change, count, reveal, truth,
bring everyone here, end. Also a wrong key and a wrong code. The elements are found by the
Streamlit keys SPEC.md lists ("Class sessions and presets")."""

from __future__ import annotations

import os
import re
import time
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.e2e import harness
from tests.e2e.test_classroom import assert_axe_clean, assert_dark

SHOTS = os.environ.get("KLRL_SCREENSHOTS") == "1"
PROJECTOR = {"width": 1280, "height": 720}
LIVE_S = 2.0  # the target for a count and a reveal
LIVE_BOUND_S = 8.0  # what the test allows on a loaded 2-core CI machine (the time is printed)
# Figure 12.4 at p = 0.1, k = 8: the chance that a group of 8 carries signal, by hand
SIGNAL = 1 - 0.9**8 - 0.1**8


@pytest.fixture(scope="module")
def class_url(chromium, tmp_path_factory):
    """A server of these tests' own, on a class store of its own. On the server the other
    browser tests share, the console twice lost its Open button in a full run (never when
    these tests ran alone; the cause is not found yet): a class is tested on a fresh server,
    as a lecture meets one."""
    old = os.environ.get("KLRL_DATA_DIR")
    os.environ["KLRL_DATA_DIR"] = str(tmp_path_factory.mktemp("class-data"))
    try:
        with harness.running_server() as server:
            if old is None:  # the server has its environment: the tests' is restored
                os.environ.pop("KLRL_DATA_DIR", None)
            else:
                os.environ["KLRL_DATA_DIR"] = old
            yield server.url
    finally:
        if old is None:
            os.environ.pop("KLRL_DATA_DIR", None)
        else:
            os.environ["KLRL_DATA_DIR"] = old


@pytest.fixture
def people(browser, chromium, class_url):
    """open(path, viewport, dark) -> a page in a browser profile of its own (own cookies)."""
    b = browser.playwright.chromium.launch(executable_path=chromium, args=harness.CHROMIUM_ARGS)
    errors: list[str] = []

    def _open(path: str, viewport=harness.PHONE, dark: bool = False):
        ctx = b.new_context(viewport=viewport, color_scheme="dark" if dark else "light")
        ctx.set_default_timeout(harness.SCRIPT_TIMEOUT_MS)
        page = ctx.new_page()
        page.on("pageerror", lambda err: errors.append(f"{page.url}: {err}"))
        page.goto(f"{class_url}/{path}", wait_until="domcontentloaded")
        harness.wait_idle(page)
        return page

    yield _open
    b.close()
    assert not errors, "JavaScript errors: " + " | ".join(errors)


def key_el(page, key: str):
    return page.locator(f".st-key-{key}")


def wait_text(page, key: str, pattern: str, timeout_s: float = LIVE_BOUND_S) -> float:
    """Seconds until the element with this key shows text matching ``pattern``."""
    t0 = time.monotonic()
    page.wait_for_function(
        "([k, p]) => { const e = document.querySelector('.st-key-' + k);"
        " return !!e && new RegExp(p).test(e.innerText); }",
        arg=[key, pattern],
        timeout=timeout_s * 1000,
    )
    return time.monotonic() - t0


def shot(page, name: str) -> None:
    if SHOTS:
        d = os.environ.get("KLRL_SCREENSHOT_DIR") or str(harness.ROOT / "artifacts" / "screenshots")
        os.makedirs(d, exist_ok=True)
        harness.wait_idle(page)
        page.wait_for_timeout(400)
        page.screenshot(path=f"{d}/class-{name}.png")


def press(page, key: str) -> None:
    """Click the button with this key (a button with help text has a hidden twin that
    Streamlit measures: the one a reader can reach is the one with a role)."""
    key_el(page, key).get_by_role("button").click()


def answer(page, value: str) -> None:
    box = key_el(page, "class-answer").locator("input")
    box.fill(value)
    press(page, "class-submit")  # the input commits on blur
    page.get_by_text(f"Your answer: {value}.").wait_for()
    harness.wait_idle(page)


def choose(page, key: str, text: str) -> None:
    """Pick the option holding ``text`` in the select ``key``. The select is drawn once its
    script has loaded (a skeleton until then): a click on the skeleton opens nothing (loaded
    CI runs then waited in vain for the option, and for the console's Open button). Wait for
    the select, open it, choose, and check the value it shows; again if the list missed."""
    box = key_el(page, key).locator("[data-testid=stSelectbox]")
    box.wait_for()
    shown = (
        "([k, t]) => document.querySelector(`.st-key-${k} input[role=combobox]`)?.value.includes(t)"
    )
    for _ in range(3):
        box.locator("input[role=combobox]").click()
        try:
            page.get_by_role("option").filter(has_text=text).first.click(timeout=10_000)
            page.wait_for_function(shown, arg=[key, text], timeout=10_000)
            return
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
    raise AssertionError(f"the select {key} never showed {text}")


def test_a_whole_question(people):
    lecturer = people("class", PROJECTOR)
    press(lecturer, "class-start")
    key_el(lecturer, "class-code").wait_for()
    harness.wait_idle(lecturer)
    q = parse_qs(urlparse(lecturer.url).query)
    code, secret = q["class"][0], q["key"][0]
    assert re.fullmatch(r"[A-Z0-9]{6}", code) and len(secret) >= 22
    assert code in key_el(lecturer, "class-code").inner_text()
    # the key is in the lecturer's address only: not on the console, the join link or its QR
    main = harness.main_text(lecturer)
    join = key_el(lecturer, "class-join")
    assert secret not in main and secret not in lecturer.content()  # the address bar only
    assert f"class?class={code}" in join.inner_text()
    qr = join.locator("img[alt*='QR code']")
    qr.wait_for()
    assert secret not in (qr.get_attribute("alt") or "") and qr.bounding_box()["width"] >= 280
    shot(lecturer, "console-start-1280x720")

    ann = people(f"class?class={code}")
    bob = people(f"class?class={code}", dark=True)
    for s in (ann, bob):
        assert secret not in s.content()
        assert key_el(s, "class-open").count() == 0 and key_el(s, "class-reveal").count() == 0

    # open a question (its id shows in the select)
    choose(lecturer, "class-question", "groups/signal")
    harness.wait_idle(lecturer)
    press(lecturer, "class-open")
    for s in (ann, bob):  # the question reaches the phones; no figure with it
        key_el(s, "class-answer").wait_for(timeout=LIVE_BOUND_S * 1000)
        harness.wait_idle(s)
        assert s.locator(".klrl-chart").count() == 0
        assert "groups of 8" in harness.main_text(s) or "k = 8" in harness.main_text(s)
    wait_text(lecturer, "class-count", r"^\s*0\s*$")
    shot(ann, "student-open-390x844")
    shot(bob, "student-open-390x844-dark")

    # answers, counted live on the projector; a change replaces the first answer
    answer(ann, "0.5")
    count_s = wait_text(lecturer, "class-count", r"^\s*1\s*$")
    answer(bob, "0.9")
    count_s = max(count_s, wait_text(lecturer, "class-count", r"^\s*2\s*$"))
    answer(ann, "0.6")
    # a reload is a new Streamlit session but the same student: the cookie (HttpOnly, so the
    # page's scripts never see it) reaches the script through the websocket's handshake
    ann.reload()
    ann.get_by_text("Your answer: 0.6.").wait_for()
    assert "klrl_student" not in ann.evaluate("() => document.cookie")
    lecturer.wait_for_timeout(1500)
    assert key_el(lecturer, "class-count").inner_text().strip() == "2"
    assert "0.9" not in harness.main_text(lecturer)  # nothing of the answers yet
    shot(lecturer, "console-open-1280x720")

    assert_axe_clean(bob)  # a question open on a dark phone (its primary button)
    # the reveal: the truth on every phone, with the student's own answer. live.js shows the
    # truth from the news itself, before the student's run draws it (live.py): record it
    # (its text, its height on the screen, whether the answer box still shows beside it)
    ann.evaluate("""() => { window.klrlEarly = [];
      const shown = e => !!e && e.getBoundingClientRect().height > 0;
      new MutationObserver(ms => { for (const m of ms) for (const n of m.addedNodes)
        if (n.classList && n.classList.contains('klrl-class-early'))
          window.klrlEarly.push([n.textContent, shown(n),
                                 shown(document.querySelector('.st-key-class-answer-box'))]);
      }).observe(document.body, {childList: true, subtree: true}); }""")
    press(lecturer, "class-reveal")
    t0 = time.monotonic()
    for s in (ann, bob):
        key_el(s, "class-truth").wait_for(timeout=LIVE_BOUND_S * 1000)
    reveal_s = time.monotonic() - t0
    print(f"\nclass: count within {count_s:.2f} s, reveal within {reveal_s:.2f} s")
    for s, mine in ((ann, "0.6"), (bob, "0.9")):
        harness.wait_idle(s)
        truth = float(re.search(r"[\d.]+", key_el(s, "class-truth").inner_text()).group())
        assert truth == pytest.approx(SIGNAL, abs=0.005)
        assert f"Your answer: {mine}" in harness.main_text(s)
        assert s.locator("[aria-live='polite']", has_text=re.compile(r"\d")).count() >= 1
    early = ann.evaluate("() => window.klrlEarly")
    assert len(early) == 1 and re.match(r"True value\s*0\.57\D", early[0][0]), early
    assert early[0][1:] == [True, False], early  # on the screen, in the answer box's place
    assert ann.locator(".klrl-class-early").count() == 0  # gone: the run drew the page
    harness.wait_idle(lecturer)
    results = key_el(lecturer, "class-results")
    results.wait_for()
    assert "1 of 2" in results.inner_text()  # 0.6 within 0.05 of 0.57, 0.9 not
    harness.wait_charts(lecturer, at_least=1)
    label = results.locator(".klrl-chart").first.get_attribute("aria-label") or ""
    assert "answers" in label and re.search(r"\d", label)
    assert secret not in harness.main_text(lecturer)
    shot(lecturer, "console-revealed-1280x720")
    shot(ann, "student-revealed-390x844")
    shot(bob, "student-revealed-390x844-dark")
    assert_axe_clean(lecturer)
    assert_dark(bob)
    assert_axe_clean(bob)
    assert_axe_clean(ann)

    # bring everyone here: the lecturer on a figure page at a view of their own
    lecturer.goto(lecturer.url.split("/class")[0] + "/groups?p=0.3&k=8")  # a reload: a new session
    harness.wait_idle(lecturer)
    assert key_el(lecturer, "klrl-class-bar").count() == 0  # the key lives in the session
    lecturer.goto(lecturer.url.split("/groups")[0] + f"/class?class={code}&key={secret}")
    key_el(lecturer, "class-code").wait_for()
    harness.wait_idle(lecturer)
    lecturer.get_by_test_id("stSidebar").get_by_role(
        "link", name="When a group carries signal"
    ).click()
    key_el(lecturer, "klrl-class-bar").wait_for()
    harness.wait_idle(lecturer)
    harness.slider(lecturer, "Solve rate p of the prompt").press("ArrowRight")
    harness.wait_query(lecturer, "p", "0.11")
    assert secret not in lecturer.url and secret not in lecturer.content()  # not even a link
    harness.wait_idle(lecturer)
    key_el(lecturer, "klrl-class-bar").get_by_role("button", name="Bring everyone here").click()
    for s in (ann, bob):
        s.wait_for_url(re.compile(r"/groups\?"), timeout=LIVE_BOUND_S * 1000)
        harness.wait_idle(s)
        got = harness.query(s)
        assert got.get("p") == "0.11" and got.get("k") == "8" and "key" not in got
        assert key_el(s, "klrl-class-banner").count() == 1
    shot(ann, "student-brought-390x844")
    shot(lecturer, "lecturer-bar-1280x720")
    lecturer.mouse.move(0, 0)  # the pressed button's help tooltip (Streamlit's) away
    lecturer.wait_for_timeout(500)
    assert_axe_clean(lecturer)  # the lecturer's bar on a figure page
    assert_axe_clean(bob)  # a student's banner, dark
    # afterwards the controls are the student's own
    harness.slider(ann, "Solve rate p of the prompt").press("ArrowRight")
    harness.wait_query(ann, "p", "0.12")
    ann.wait_for_timeout(2000)
    assert harness.query(ann).get("p") == "0.12"

    # "ask this number": a readout item of the lecturer's view becomes a question; the phones
    # leave the figure (which shows the answer) for the question
    bar = key_el(lecturer, "klrl-class-bar")
    bar.locator(".st-key-klrl-class-number").click()
    lecturer.get_by_role("option", name="Has signal").click()
    harness.wait_idle(lecturer)
    press(lecturer, "klrl-class-ask")
    key_el(lecturer, "class-count").wait_for()
    assert "Has signal" in harness.main_text(lecturer)
    for s in (ann, bob):
        s.wait_for_url(re.compile(r"/class\?"), timeout=LIVE_BOUND_S * 1000)
        key_el(s, "class-answer").wait_for()
        assert s.locator(".klrl-chart").count() == 0
    answer(bob, "0.66")
    wait_text(lecturer, "class-count", r"^\s*1\s*$")
    press(lecturer, "class-reveal")
    key_el(bob, "class-truth").wait_for(timeout=LIVE_BOUND_S * 1000)
    # the truth is the readout's number at the lecturer's view (p = 0.11, k = 8), by hand
    truth = float(re.search(r"[\d.]+", key_el(bob, "class-truth").inner_text()).group())
    assert truth == pytest.approx(1 - 0.89**8 - 0.11**8, abs=0.005)

    # the end: the answers are deleted and the phones say so
    harness.wait_idle(lecturer)
    press(lecturer, "class-end")
    key_el(lecturer, "class-start").wait_for()
    bob.get_by_text("This class session has ended").wait_for(timeout=LIVE_BOUND_S * 1000)


def test_a_wrong_key_or_code(people):
    lecturer = people("class", PROJECTOR)
    press(lecturer, "class-start")
    key_el(lecturer, "class-code").wait_for()
    code = parse_qs(urlparse(lecturer.url).query)["class"][0]
    thief = people(f"class?class={code}&key=guessed-key-0123456789abcdef")
    text = harness.main_text(thief)
    assert "does not open class" in text
    for k in (
        "class-open",
        "class-reveal",
        "class-here",
        "class-end",
        "class-question",
        "class-count",
        "class-results",
    ):
        assert key_el(thief, k).count() == 0, k
    assert key_el(thief, "class-typed-code").count() == 1
    lost = people("class?class=ZZZZZZ")
    assert "No running class has the code ZZZZZZ" in harness.main_text(lost)
    # a typed code joins
    key_el(lost, "class-typed-code").locator("input").fill(code.lower())
    lost.get_by_role("button", name="Join").click()
    lost.get_by_text("Waiting for the lecturer's next question").wait_for()
    assert harness.query(lost).get("class") == code
    press(lecturer, "class-end")
