"""A class session at the protocol level: a lecturer and S students speaking Streamlit's websocket
protocol (no browsers), against one process or deploy/start.sh's N processes behind HAProxy that
share one class store.

    python benchmarks/class_load.py --servers N --students S --json FILE
        [--ramp 20] [--answer-within 10] [--db sqlite|postgres] [--no-proxy]
        [--kill-one | --restart] [--idle-seconds 10]

The servers, the HTTP client and the browser's ForwardMsg handling come from capacity.py
(imported). What differs is the page: everyone is on the class page (pages/class.py).

The lecturer is a browser too: it opens /class, presses "Start a class session" (the key comes
back in the page's query string, as in the address bar), presses "Open" (the selectbox's default
question, the first of the bank), follows the console's live count, and presses "Reveal". Only
the key and code come from the protocol; the store's Python API is used for reading alone (the
store's answer count, each student's stored answer: `lost`).

A student, as a phone does:
  1. GET /class?class=CODE (Accept: text/html): the app's `klrl_student` cookie and the proxy's
     sticky cookie; GET /_stcore/health (the XSRF cookie); the websocket with those cookies; a
     rerun with the link's query string;
  2. what live.js does: holds `GET /klrl-class/CODE/pulse?since=V` (V: the version the last run
     drew) and, when it answers with news, sets the component's trigger ("changed") in a
     `rerun_script` for the fragment it sits in (the trigger widget id is Streamlit's
     `$$STREAMLIT_INTERNAL_KEY_<component id>__events`, a JSON list of {event, value});
  3. once the question shows, at a random moment within --answer-within seconds of its opening,
     sets `class-answer` (a number in the question's range, on its step) and presses
     `class-submit` (trigger) in the same rerun, as the frontend's BackMsg does; the answer is
     `acknowledged` when the run shows "Your answer: X." with X its own number;
  4. after the reveal: the pulse's news carries the truth, which live.js shows at once over the
     open question; the live rerun that follows must draw the `class-truth` block with the
     same true value (from klrl_core through the question bank, checked to the 3 significant
     figures shown). `reveal_p95_ms` runs from the lecturer's Reveal message to the truth on the
     screen (the earlier of the two), `results_p95_ms` to the rerun's block (with the student's
     verdict and the class's chart).
A dropped websocket (a process killed) is reconnected as the frontend does: /_stcore/health
until it answers, a new websocket with the same cookies (HAProxy redispatches a cookie naming a
dead process), a rerun with the page's query string. `recovered` counts the students who
answered before the fault and whose reconnected screen shows the question with their own answer.

Faults: --kill-one (needs --servers 2) sends SIGKILL to the process that holds the lecturer's
session once half the class has its answer confirmed (deploy/start.sh starts it again); --restart kills
the one process (SIGKILL) the same way and, with --no-proxy, starts it again on its port. `lost`
= acknowledged answers that the store no longer holds (must be 0).

Reported (JSON): acknowledged, counted (the projector's count just before the reveal),
store_count, lost, recovered, truth_seen, errors, join_p50/p95_ms, submit_p95_ms,
reveal_p50/p95_ms, idle_cpu_cores (the servers over --idle-seconds while every student waits on
the open question, all answers in), rss_mb, students_per_server, store_shared (each process holds
the same SQLite file open, in WAL mode), load averages.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import parse_qs, urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import capacity as cap
from capacity import StepFailed, http_get, pct, say
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import WebSocketException

TRIGGER_PREFIX = "$$STREAMLIT_INTERNAL_KEY_"
_NUM = re.compile(r"[-−]?[0-9][0-9,]*(?:\.[0-9]+)?")
_TAG = re.compile(r"<[^>]*>")


def text_of(body: str) -> str:
    import html

    return html.unescape(_TAG.sub(" ", body))


def number(text: str) -> float | None:
    m = _NUM.search(text)
    return float(m.group(0).replace(",", "").replace("−", "-")) if m else None


# ------------------------------------------------------------------------ the deployment
class ClassDeployment(cap.Deployment):
    """capacity's deployment, plus: SIGKILL one process; start a bare one again."""

    def kill(self, i: int) -> int:
        pid = self.pids[i]
        os.kill(pid, signal.SIGKILL)
        return pid

    def restart_bare(self) -> None:
        """--no-proxy: the one process again on its port (as a supervisor would)."""
        port = int(self.url.rsplit(":", 1)[1])
        log = open(self.run_dir / "restart.log", "w")
        cmd = self.bare_command(port)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        self.proc = subprocess.Popen(
            cmd,
            cwd=self.app_dir,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.pids = [self.proc.pid]

    def current_pids(self) -> list[int]:
        """Re-read the pid files (start.sh restarts a process that died)."""
        if self.proxy:
            out = []
            for url in self.backend_urls:
                f = self.run_dir / f"streamlit-{url.rsplit(':', 1)[1]}.pid"
                try:
                    out.append(int(f.read_text()))
                except (OSError, ValueError):
                    pass
            self.pids = out or self.pids
        return self.pids


def store_files(pids: list[int]) -> dict[int, list[str]]:
    """The class.db files each process has open (from /proc/<pid>/fd)."""
    out = {}
    for pid in pids:
        names = set()
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                try:
                    target = os.readlink(f"/proc/{pid}/fd/{fd}")
                except OSError:
                    continue
                if "class.db" in target:
                    names.add(target)
        except OSError:
            pass
        out[pid] = sorted(names)
    return out


# ------------------------------------------------------------------------------ the screen
class Screen:
    """What one run drew that a person (or live.js) acts on."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.live_id = self.live_frag = None
        self.live_url, self.version, self.count_shown = None, None, None
        self.answer_id = self.submit_id = self.frag = None
        self.ack: str | None = None
        self.prompt = False
        self.in_truth = False
        self.truth: float | None = None
        self.truth_at: float | None = None
        self.count: int | None = None
        self.in_count = False
        self.open_id = self.reveal_id = self.start_id = None
        self.problems: list[str] = []


class Dropped(StepFailed):
    """The websocket closed under a run after a fault: the browser reconnects (no error)."""


class Browser(cap.Student):
    """One tab on the class page. `role`: 'student' or 'lecturer'."""

    faulted = False  # set once a process has been killed: a lost connection is expected

    def __init__(self, name, base, stats, rng, timeout, role="student"):
        super().__init__(name, base, None, stats, rng, timeout)
        self.role = role
        self.screen = Screen()
        self.lock = asyncio.Lock()
        self.dropped = asyncio.Event()
        self.closing = False
        self.watch: asyncio.Task | None = None

    # ------------------------------------------------------------------ protocol
    async def recv(self, deadline: float) -> ForwardMsg:
        """capacity's recv (its ForwardMsg cache), but a connection lost after a fault is a
        drop to reconnect from, decided when it is lost (a read may have begun before)."""
        left = deadline - time.monotonic()
        if left <= 0:
            raise self.fail(f"no answer within {self.timeout:.0f} s")
        try:
            data = await asyncio.wait_for(self.ws.recv(), left)
        except TimeoutError:
            raise self.fail(f"no answer within {self.timeout:.0f} s") from None
        except (WebSocketException, OSError) as err:
            if Browser.faulted:
                self.dropped.set()
                raise Dropped("connection lost") from None
            raise self.fail(f"connection lost: {type(err).__name__}: {err}") from None
        msg = ForwardMsg()
        msg.ParseFromString(data)
        return cap.through_cache(msg, self.cache, self.runs, self.fail)

    async def send(self, msg: BackMsg) -> None:
        try:
            await self.ws.send(msg.SerializeToString())
        except (WebSocketException, OSError) as err:
            if Browser.faulted:
                self.dropped.set()
                raise Dropped("connection lost") from None
            raise self.fail(f"send failed: {type(err).__name__}: {err}") from None

    def message(self, widgets=(), fragment: str | None = None, first=False) -> BackMsg:
        msg = BackMsg()
        rs = msg.rerun_script
        rs.query_string = self.query
        if first:
            rs.page_script_hash, rs.page_name = "", "class"
        else:
            rs.page_script_hash = self.page_hash
        if fragment:
            rs.fragment_id = fragment
        for w in widgets:
            rs.widget_states.widgets.append(w)
        rs.cached_message_hashes.extend(self.cache.keys())
        ci = rs.context_info
        ci.url = f"{self.base}/class?{self.query}"
        ci.timezone, ci.timezone_offset, ci.locale = "UTC", 0, "en-US"
        ci.is_embedded, ci.color_scheme = False, "light"
        return msg

    @staticmethod
    def widget(wid: str, **value):
        w = BackMsg().rerun_script.widget_states.widgets.add()
        w.id = wid
        for k, v in value.items():
            setattr(w, k, v)
        return w

    def look(self, fm: ForwardMsg, run: dict) -> None:
        sc = self.screen
        kind = fm.WhichOneof("type")
        if kind == "new_session":
            run["started"] = True
            ns = fm.new_session
            self.session_id = ns.initialize.session_id or self.session_id
            self.page_hash = ns.page_script_hash or self.page_hash
            if ns.config.max_cached_message_age:
                self.max_age = ns.config.max_cached_message_age
        elif kind == "navigation" and fm.navigation.page_script_hash:
            self.page_hash = fm.navigation.page_script_hash
        elif kind == "page_info_changed":
            self.query = fm.page_info_changed.query_string
        elif kind == "delta":
            d = fm.delta
            dt = d.WhichOneof("type")
            if dt == "add_block":
                bid = d.add_block.id
                sc.in_truth = "class-truth" in bid
                sc.in_count = "class-count" in bid
                return
            if dt != "new_element":
                return
            el = d.new_element
            et = el.WhichOneof("type")
            wid = getattr(getattr(el, et), "id", "") if et else ""
            if et == "exception":
                sc.problems.append(f"exception: {el.exception.message[:200]}")
            elif et == "bidi_component" and el.bidi_component.component_name.endswith(
                "klrl_class_live"
            ):
                data = json.loads(el.bidi_component.json or "{}")
                sc.live_id, sc.live_frag = wid, d.fragment_id
                sc.live_url, sc.version = data.get("url"), data.get("version")
                sc.count_shown = data.get("count")
            elif et == "number_input" and wid.endswith("class-answer"):
                sc.answer_id, sc.frag = wid, d.fragment_id
            elif et == "button" and wid.endswith("class-submit"):
                sc.submit_id = wid
            elif et == "button" and wid.endswith("class-open"):
                sc.open_id, sc.frag = wid, d.fragment_id
            elif et == "button" and wid.endswith("class-reveal"):
                sc.reveal_id = wid
            elif et == "button" and wid.endswith("class-start"):
                sc.start_id = wid
            elif et == "alert" and "Your answer:" in el.alert.body:
                sc.ack = el.alert.body
            elif et == "alert" and el.alert.format == 1:  # ERROR
                run.setdefault("said", []).append(el.alert.body)
            elif et in ("markdown", "html"):
                body = getattr(el, et).body
                if "klrl-class-prompt" in body:
                    sc.prompt = True
                if "klrl-class-count" in body and sc.in_truth:
                    sc.truth = number(text_of(body))
                    sc.truth_at = time.monotonic()
                elif "klrl-class-count" in body and sc.in_count:
                    sc.count = int(number(text_of(body)))

    async def go(self, msg: BackMsg, what: str) -> dict:
        """Send a rerun, read to its end (a fragment run, or the whole script)."""
        async with self.lock:
            if self.dropped.is_set():
                raise self.fail(f"{what}: the connection is down")
            run = {"started": False, "sent": time.monotonic()}
            self.screen.reset()
            deadline = time.monotonic() + self.timeout
            await self.send(msg)
            while True:
                fm = await self.recv(deadline)
                self.look(fm, run)
                if fm.WhichOneof("type") == "script_finished":
                    st = fm.script_finished
                    if st == ForwardMsg.FINISHED_WITH_COMPILE_ERROR:
                        raise self.fail(f"{what}: compile error")
                    if st in (
                        ForwardMsg.FINISHED_SUCCESSFULLY,
                        ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY,
                    ):
                        break
            self.runs += 1
            self.cache = {h: e for h, e in self.cache.items() if self.runs - e[1] <= self.max_age}
            if self.screen.problems:
                raise self.fail(f"{what}: {self.screen.problems[0]}")
            return run

    async def connect(self, query: str) -> float:
        """Open the page by its link: GET (cookies), health (XSRF), websocket, first run."""
        t0 = time.monotonic()
        self.query = query
        try:
            st_, _, _ = await get_html(f"{self.base}/class?{query}", self.cookies, self.timeout)
            if st_ != 200:
                raise self.fail(f"GET /class: HTTP {st_}")
        except (TimeoutError, OSError, ValueError, IndexError) as err:
            raise self.fail(f"opening the page: {type(err).__name__}: {err}") from None
        await self.open_socket(self.timeout)
        await self.go(self.message(first=True), "first run")
        return (time.monotonic() - t0) * 1000

    async def open_socket(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:  # the frontend: health until it answers, then the websocket
            try:
                st_, _, _ = await http_get(f"{self.base}/_stcore/health", self.cookies, 5)
                if st_ == 200:
                    break
            except (TimeoutError, OSError, ValueError, IndexError):
                pass
            if time.monotonic() > deadline:
                raise self.fail("the server did not come back")
            await asyncio.sleep(0.5)
        xsrf = self.cookies.get("_streamlit_xsrf", "PLACEHOLDER_AUTH_TOKEN")
        try:
            self.ws = await ws_connect(
                self.base.replace("http://", "ws://") + "/_stcore/stream",
                subprotocols=["streamlit", xsrf],
                origin=self.base,
                additional_headers={
                    "Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())
                },
                max_size=None,
                ping_interval=None,
                open_timeout=self.timeout,
                close_timeout=2,
            )
        except (TimeoutError, WebSocketException, OSError) as err:
            raise self.fail(f"websocket: {type(err).__name__}: {err}") from None
        self.dropped.clear()
        ws = self.ws

        async def watch():
            await ws.wait_closed()
            if not self.closing and ws is self.ws:
                self.dropped.set()

        self.watch = asyncio.create_task(watch())

    async def reconnect(self) -> float:
        """After a dropped connection, as the frontend does; returns ms to the redrawn page."""
        t0 = time.monotonic()
        self.cache.clear()
        await self.open_socket(cap.START_TIMEOUT)
        await self.go(self.message(), "rerun after reconnecting")
        return (time.monotonic() - t0) * 1000

    async def trigger(self, news: dict) -> dict:
        """live.js's setTriggerValue("changed", ...): a rerun of the component's fragment."""
        sc = self.screen
        payload = json.dumps([{"event": "changed", "value": news}])
        w = self.widget(f"{TRIGGER_PREFIX}{sc.live_id}__events", json_trigger_value=payload)
        return await self.go(self.message([w], sc.live_frag), "live rerun")

    async def press(self, button_id: str, extra=(), fragment=None) -> dict:
        w = self.widget(button_id, trigger_value=True)
        return await self.go(self.message([*extra, w], fragment), "button")

    async def leave(self) -> None:
        self.closing = True
        if self.watch:
            self.watch.cancel()
        await super().leave()


async def get_html(url, cookies, timeout):
    """A page navigation: capacity's GET with the browser's Accept header (the app sets its
    student cookie only on page requests)."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    reader, writer = await asyncio.wait_for(
        asyncio.open_connection(parts.hostname, parts.port), timeout
    )
    try:
        head = [
            f"GET {path} HTTP/1.1",
            f"Host: {parts.netloc}",
            "Connection: close",
            "User-Agent: klrl-class-load",
            "Accept: text/html,*/*;q=0.8",
            "Accept-Encoding: identity",
        ]
        if cookies:
            head.append("Cookie: " + "; ".join(f"{k}={v}" for k, v in cookies.items()))
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
        await writer.drain()
        raw = await asyncio.wait_for(reader.read(), timeout)
    finally:
        writer.close()
    header_blob = raw.partition(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")
    status = int(header_blob[0].split()[1])
    for line in header_blob[1:]:
        k, _, v = line.partition(":")
        if k.strip().lower() == "set-cookie":
            name, _, value = v.strip().split(";", 1)[0].partition("=")
            cookies[name.strip()] = value.strip()
    return status, header_blob, b""


async def long_poll(b: Browser, since, count=None, timeout=40.0) -> dict | None:
    """One GET of the pulse route, as live.js's fetch (same cookies: same proxy backend)."""
    q = {"since": since}
    if count is not None:
        q["count"] = count
    status, _, body = await http_get(
        f"{b.base}{b.screen.live_url}?{urlencode(q)}", b.cookies, timeout
    )
    if status != 200:
        raise OSError(f"HTTP {status}")
    return json.loads(body)


# ------------------------------------------------------------------------------ the class
class Run:
    def __init__(self, args, db, spec):
        self.args, self.db, self.spec = args, db, spec
        self.stats = cap.Stats()
        self.code = self.key = ""
        self.t_open = self.t_reveal = math.nan
        self.opened = asyncio.Event()
        self.revealed = asyncio.Event()
        self.fault_done = asyncio.Event()
        self.fault_at: float | None = None
        self.joins: list[float] = []
        self.submits: list[float] = []
        self.reveals: list[float] = []
        self.results: list[float] = []  # reveal -> the fragment's run drew the truth
        self.acked: dict[str, float] = {}  # student cookie -> the answer the app confirmed
        self.before_fault: dict[str, float] = {}
        self.recovered = 0
        self.dropped = self.dropped_answered = 0  # students whose connection dropped
        self.reconnected_to: dict[str, int] = {}
        self.reconnects: list[float] = []
        self.truth_ok = 0
        self.wrong_truth = 0
        self.counted: int | None = None
        self.join_done = 0


async def follow(b: Browser, r: Run, on_news, with_count=False) -> None:
    """live.js: keep one long poll open; on news, trigger the fragment's rerun."""
    backoff = 1.0
    while not b.closing:
        if b.dropped.is_set() or b.screen.live_url is None:
            await asyncio.sleep(0.1)
            continue
        since = b.screen.version
        count = b.screen.count_shown if with_count else None
        try:
            s = await long_poll(b, since, count)
            backoff = 1.0
        except (TimeoutError, OSError, ValueError, IndexError):
            await asyncio.sleep(backoff)
            backoff = min(2 * backoff, 15.0)
            continue
        news = (
            s.get("gone")
            or s.get("version") != since
            or (count is not None and s.get("count") != count)
        )
        if news and not b.dropped.is_set():
            try:
                await on_news(s)
            except StepFailed:
                if not b.dropped.is_set():
                    return


async def lecturer(r: Run, dep: ClassDeployment, students_done) -> None:
    a = r.args
    b = Browser("lecturer", dep.url, r.stats, random.Random(0), a.timeout, role="lecturer")
    r.lecturer = b
    try:
        await b.connect("")
        if not b.screen.start_id:
            raise b.fail("no start button on /class")
        await b.press(b.screen.start_id)
        q = parse_qs(b.query)
        r.code, r.key = q["class"][0], q["key"][0]
        say(f"lecturer: class {r.code} started (backend {b.cookies.get('KLRL_SERVER', 'direct')})")
        if not b.screen.open_id:
            raise b.fail("no Open button on the console")
        r.console_ready.set()

        async def news(_s):
            await b.trigger({"version": _s.get("version"), "count": _s.get("count")})
            if b.screen.count is not None:
                r.counted = b.screen.count

        poll = asyncio.create_task(follow(b, r, news, with_count=True))
        await r.all_joined.wait()
        await asyncio.sleep(1.0)
        r.t_open = time.monotonic()
        await b.press(b.screen.open_id, fragment=b.screen.frag)
        r.opened.set()
        say(f"lecturer: question open ({r.spec['id']}); load {os.getloadavg()[0]:.2f}")
        await students_done.wait()
        if a.kill_one or a.restart:
            await r.fault_done.wait()
        for _attempt in range(5):  # again after a dropped connection (a fault)
            try:
                if b.dropped.is_set():
                    await b.reconnect()
                # the projector's count, as the console shows it (a rerun of its fragment)
                for _ in range(int(a.timeout)):
                    await b.trigger({"count": None})
                    r.counted = b.screen.count
                    if r.counted == r.db.count(r.round_id) or not b.screen.reveal_id:
                        break
                    await asyncio.sleep(1.0)
                if math.isnan(r.t_reveal):
                    if not b.screen.reveal_id:
                        raise b.fail("no Reveal button on the console")
                    r.t_reveal = time.monotonic()
                    await b.press(b.screen.reveal_id, fragment=b.screen.frag)
                break
            except Dropped:
                continue
        r.revealed.set()
        say(f"lecturer: revealed; projector count {r.counted}, store {r.db.count(r.round_id)}")
        poll.cancel()
    except StepFailed:
        r.console_ready.set()
        r.revealed.set()


async def student(i: int, r: Run, dep: ClassDeployment, t_arrive: float) -> None:
    a = r.args
    rng = random.Random(a.seed * 7919 + i)
    await asyncio.sleep(max(0.0, t_arrive - time.monotonic()))
    b = Browser(f"student {i}", dep.url, r.stats, rng, a.timeout)
    spec = r.spec
    steps = round((spec["hi"] - spec["lo"]) / spec["step"])
    mine = spec["lo"] + rng.randint(0, steps) * spec["step"]
    mine = round(mine, 9)
    answer_at = None
    got_truth = asyncio.Event()
    poll = None
    try:
        ms = await b.connect(urlencode({"class": r.code}))
        sid = b.cookies.get("klrl_student")
        if not sid:
            raise b.fail("no klrl_student cookie from the page")
        r.joins.append(ms)
        backend = b.cookies.get("KLRL_SERVER", "direct")
        r.stats.backends[backend] = r.stats.backends.get(backend, 0) + 1
        r.join_done += 1
        if r.join_done == a.students:
            r.all_joined.set()

        early: dict = {}

        def check_truth():
            """The truth on the screen: first as live.js shows it from the news of the reveal
            (``early``), then drawn by the fragment's run with the verdict and the chart."""
            sc = b.screen
            if sc.truth is None or got_truth.is_set():
                return
            got_truth.set()
            shown = [
                (t, at)
                for t, at in ((early.get("truth"), early.get("at")), (sc.truth, sc.truth_at))
                if t is not None
            ]
            if all(abs(t - spec["truth"]) <= 0.0051 * abs(spec["truth"]) + 1e-9 for t, _ in shown):
                r.truth_ok += 1
                r.reveals.append((min(at for _, at in shown) - r.t_reveal) * 1000)
                r.results.append((sc.truth_at - r.t_reveal) * 1000)
            else:
                r.wrong_truth += 1
                r.stats.error(b.name, f"truth shown {shown}, klrl_core {spec['truth']}")

        def check_ack():
            sc = b.screen
            if sc.ack is not None:
                shown = number(text_of(sc.ack))
                if shown is not None and abs(shown - mine) <= 1e-6 * max(1, abs(mine)):
                    r.acked[sid] = mine
                    return True
            return False

        async def news(_s):
            told = _s.get("reveal")
            if told and told.get("round") == r.round_id and b.screen.answer_id:
                early.update(truth=number(told["truth"]), at=time.monotonic())  # live.js
            await b.trigger(
                {"version": _s.get("version"), "count": None, "gone": bool(_s.get("gone"))}
            )
            check_truth()

        poll = asyncio.create_task(follow(b, r, news))

        answer_at = None
        while not got_truth.is_set():
            if b.dropped.is_set():
                had = sid in r.acked
                r.dropped += 1
                r.dropped_answered += had
                try:
                    r.reconnects.append(await b.reconnect())
                except StepFailed:
                    return
                to = b.cookies.get("KLRL_SERVER", "direct")
                r.reconnected_to[to] = r.reconnected_to.get(to, 0) + 1
                if had and b.screen.prompt and check_ack():
                    r.recovered += 1
                check_truth()
                continue
            if r.opened.is_set() and answer_at is None:
                answer_at = r.t_open + rng.uniform(0.5, a.answer_within)
            if (
                answer_at is not None
                and sid not in r.acked
                and time.monotonic() >= answer_at
                and b.screen.submit_id
                and b.screen.answer_id
            ):
                t0 = time.monotonic()
                try:
                    await b.press(
                        b.screen.submit_id,
                        [b.widget(b.screen.answer_id, double_value=mine)],
                        fragment=b.screen.frag,
                    )
                except StepFailed:
                    if not b.dropped.is_set():
                        return
                    continue
                if check_ack():
                    r.submits.append((time.monotonic() - t0) * 1000)
                    r.answered += 1
                    if r.answered == a.students:
                        r.all_answered.set()
                else:
                    r.stats.error(b.name, "submitted, but the page did not confirm the answer")
                    answer_at = time.monotonic() + 1.0
                continue
            if r.revealed.is_set() and time.monotonic() - r.t_reveal > a.timeout:
                raise b.fail("the truth did not reach this screen")
            await asyncio.sleep(0.05)
    except StepFailed:
        pass
    except Exception as err:
        r.stats.error(b.name, f"{type(err).__name__}: {err}")
    finally:
        if poll:
            poll.cancel()
        r.finished += 1
        await b.leave()


async def fault(r: Run, dep: ClassDeployment) -> dict:
    a = r.args
    await r.opened.wait()
    # halfway through the answers: half the class confirmed, half still to come
    t_end = time.monotonic() + a.answer_within + 60
    while len(r.acked) < a.students // 2 and time.monotonic() < t_end:
        await asyncio.sleep(0.05)
    r.before_fault = dict(r.acked)
    dep.current_pids()  # (start.sh may have restarted one: its pid file)
    victim = 0
    if a.kill_one:  # the process that holds the lecturer's session (HAProxy cookie s1, s2..)
        sv = r.lecturer.cookies.get("KLRL_SERVER", "s1")
        victim = int(sv[1:]) - 1 if sv[1:].isdigit() else 0
    Browser.faulted = True
    pid = dep.kill(victim)
    r.fault_at = time.monotonic()
    Browser.faulted = True
    say(
        f"SIGKILL to process {victim + 1} (pid {pid}) with {len(r.before_fault)} answers "
        f"acknowledged; load {os.getloadavg()[0]:.2f}"
    )
    if a.restart and not dep.proxy:
        await asyncio.get_running_loop().run_in_executor(None, dep.restart_bare)
    # wait until the killed port answers again (start.sh restarts it; or we did)
    url = dep.backend_urls[victim]
    t0 = time.monotonic()
    while not await asyncio.get_running_loop().run_in_executor(None, cap.health, url):
        if time.monotonic() - t0 > cap.START_TIMEOUT:
            break
        await asyncio.sleep(0.5)
    back = time.monotonic() - t0
    dep.current_pids()
    say(f"process {victim + 1} answers again after {back:.1f} s (pid {dep.pids[victim]})")
    r.fault_done.set()
    return {
        "killed": victim + 1,
        "acknowledged_before": len(r.before_fault),
        "back_after_s": round(back, 1),
    }


async def amain(args) -> int:
    from klrl_app.classroom import questions
    from klrl_app.classroom import store as cs

    out = {
        "servers": args.servers,
        "students": args.students,
        "proxy": not args.no_proxy,
        "db": args.db,
        "ramp_s": args.ramp,
        "answer_within_s": args.answer_within,
        "fault": "kill-one" if args.kill_one else "restart" if args.restart else None,
        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
        "cpus": os.cpu_count(),
        "load_avg_before": round(os.getloadavg()[0], 2),
    }
    pg = None
    data = tempfile.mkdtemp(prefix="klrl-class-load-")
    if args.db == "postgres":
        from tests import class_db

        url = os.environ.get("KLRL_CLASS_TEST_PG_URL")
        pg = class_db.Given(url) if url else class_db.Server()
        os.environ["KLRL_CLASS_DB_URL"] = pg.new_database()
        os.environ.pop("KLRL_DATA_DIR", None)
    else:
        os.environ.pop("KLRL_CLASS_DB_URL", None)
        os.environ["KLRL_DATA_DIR"] = data
    db = cs.ClassStore(os.environ.get("KLRL_CLASS_DB_URL") or f"sqlite:///{data}/class.db")
    spec = questions.to_spec(next(iter(questions.bank().values())))
    if spec["kind"] != "number":
        raise SystemExit("the bank's first question is not a number question")
    dep = ClassDeployment(args.servers, not args.no_proxy, ROOT, args.ttl, args.python, [], 0)
    r = Run(args, db, spec)
    r.console_ready, r.all_joined = asyncio.Event(), asyncio.Event()
    r.all_answered, r.answered, r.finished = asyncio.Event(), 0, 0
    r.may_reveal = asyncio.Event()
    loop = asyncio.get_running_loop()
    load: list[float] = []
    stop_load = asyncio.Event()
    sampler = asyncio.create_task(cap.sample_load(load, stop_load))
    code = 0
    try:
        say(
            f"starting {args.servers} server(s){'' if args.no_proxy else ' behind HAProxy'}, "
            f"store {args.db} (load {os.getloadavg()[0]:.2f})"
        )
        await loop.run_in_executor(None, dep.start)
        say(f"up at {dep.url}; pids {dep.pids}; RSS {dep.rss_mb():.0f} MB")
        # warm every process (its first run imports the pages), as capacity.py does
        for i, u in enumerate(dep.backend_urls):
            w = Browser(f"warm-up {i}", u, cap.Stats(), random.Random(i), args.timeout)
            try:
                await w.connect("")
            except StepFailed:
                pass
            finally:
                await w.leave()
        lect = asyncio.create_task(lecturer(r, dep, r.may_reveal))
        await r.console_ready.wait()
        if not r.code:
            raise StepFailed("the lecturer could not start a class")
        t0 = time.monotonic()
        tasks = [
            asyncio.create_task(student(i, r, dep, t0 + args.ramp * i / max(args.students - 1, 1)))
            for i in range(args.students)
        ]
        # every student joined (or failed): then the lecturer opens
        while r.join_done + len({e.split(":")[0] for e in r.stats.errors}) < args.students:
            if all(t.done() for t in tasks):
                break
            await asyncio.sleep(0.2)
        r.all_joined.set()
        say(
            f"{r.join_done} students joined over {time.monotonic() - t0:.1f} s; "
            f"per server {r.stats.backends}"
        )
        out["store_files"] = {str(k): v for k, v in store_files(dep.current_pids()).items()}
        await r.opened.wait()
        r.round_id = db.session(r.code).round.id
        faulting = asyncio.create_task(fault(r, dep)) if (args.kill_one or args.restart) else None
        # everyone answered (or the window is long past)
        try:
            await asyncio.wait_for(r.all_answered.wait(), args.answer_within + 60)
        except TimeoutError:
            pass
        if faulting:
            out["fault_detail"] = await faulting
        say(f"{r.answered} answers acknowledged; the class waits on the question")
        await asyncio.sleep(2.0)
        pids = dep.current_pids()
        c0, w0 = dep.cpu(), time.monotonic()
        await asyncio.sleep(args.idle_seconds)
        idle = (dep.cpu() - c0) / (time.monotonic() - w0)
        out["idle_cpu_cores"] = round(idle, 3)
        out["idle_load_avg"] = round(os.getloadavg()[0], 2)
        out["rss_mb"] = round(dep.rss_mb(), 1)
        say(
            f"idle class: servers {idle:.3f} cores (pids {pids}), RSS {out['rss_mb']} MB, "
            f"load {out['idle_load_avg']}"
        )
        r.may_reveal.set()
        c0, me0 = dep.cpu(), sum(os.times()[:2])
        await lect
        try:
            await asyncio.wait_for(asyncio.gather(*tasks), args.timeout + 30)
        except TimeoutError:
            r.stats.error("class", "students did not finish in time")
        # the servers' CPU from the reveal to the last truth on a screen, per student
        out["reveal_server_cpu_ms_per_student"] = round(
            1000 * (dep.cpu() - c0) / max(1, args.students), 1
        )
        out["reveal_simulator_cpu_s"] = round(sum(os.times()[:2]) - me0, 1)
    except StepFailed as err:
        r.stats.error("run", str(err))
    finally:
        stop_load.set()
        await sampler
        await loop.run_in_executor(None, dep.stop)
        # what the store holds, read after every server has stopped
        lost = [s for s, v in r.acked.items() if not _same(v, _stored(db, r, s))]
        store_count = db.count(r.round_id) if getattr(r, "round_id", None) else None
        db.engine.dispose()
        if hasattr(pg, "pg_ctl"):
            pg.stop()
        shutil.rmtree(data, ignore_errors=True)
        if r.stats.errors:
            say(f"servers stopped; their logs: {dep.run_dir}")
        else:
            shutil.rmtree(dep.run_dir, ignore_errors=True)

    def lat(xs, q):
        return round(pct(xs, q), 1) if xs else None

    shared = out.get("store_files", {})
    out.update(
        code_ok=bool(r.code),
        acknowledged=len(r.acked),
        counted=r.counted,
        store_count=store_count,
        lost=len(lost),
        lost_samples=lost[:5],
        answered_before_fault=len(r.before_fault) if (args.kill_one or args.restart) else None,
        recovered=r.recovered if (args.kill_one or args.restart) else None,
        dropped=r.dropped,
        dropped_answered=r.dropped_answered,
        reconnected_to=dict(sorted(r.reconnected_to.items())),
        reconnect_p95_ms=lat(r.reconnects, 0.95),
        reconnects=len(r.reconnects),
        truth_seen=r.truth_ok,
        wrong_truth=r.wrong_truth,
        errors=len(r.stats.errors),
        errors_by_kind=cap.error_kinds(r.stats.errors),
        error_samples=r.stats.errors[:20],
        join_p50_ms=lat(r.joins, 0.5),
        join_p95_ms=lat(r.joins, 0.95),
        submit_p50_ms=lat(r.submits, 0.5),
        submit_p95_ms=lat(r.submits, 0.95),
        reveal_first_ms=lat(r.reveals, 0.0),
        reveal_p50_ms=lat(r.reveals, 0.5),
        reveal_p95_ms=lat(r.reveals, 0.95),
        results_p50_ms=lat(r.results, 0.5),
        results_p95_ms=lat(r.results, 0.95),
        students_per_server=dict(sorted(r.stats.backends.items())),
        store_shared=None
        if args.db != "sqlite"
        else (
            len(shared) > 0
            and all(any(f.endswith("class.db") for f in v) for v in shared.values())
            and all(any(f.endswith("class.db-wal") for f in v) for v in shared.values())
        ),
        load_avg_during=round(statistics.mean(load), 2) if load else None,
        load_avg_max=round(max(load), 2) if load else None,
    )
    summary = {
        k: out.get(k)
        for k in (
            "servers",
            "db",
            "fault",
            "students",
            "acknowledged",
            "counted",
            "store_count",
            "lost",
            "recovered",
            "dropped_answered",
            "dropped",
            "answered_before_fault",
            "truth_seen",
            "errors",
            "join_p95_ms",
            "reveal_p95_ms",
            "results_p95_ms",
            "reveal_server_cpu_ms_per_student",
            "idle_cpu_cores",
            "rss_mb",
            "load_avg_during",
        )
    }
    print(json.dumps(summary))
    for e in r.stats.errors[:8]:
        say(f"  error: {e}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    ok = (
        out["errors"] == 0
        and out["lost"] == 0
        and out["counted"] == out["acknowledged"] == args.students
        and out["truth_seen"] == args.students
    )
    return code or (0 if ok else 1)


def _stored(db, r, sid):
    try:
        return db.answer_of(r.round_id, sid)
    except Exception:
        return None


def _same(a, b) -> bool:
    return b is not None and abs(float(a) - float(b)) <= 1e-9 * max(1.0, abs(float(a)))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--servers", type=int, default=1)
    ap.add_argument("--students", type=int, default=30)
    ap.add_argument("--json")
    ap.add_argument("--ramp", type=float, default=20.0, help="seconds over which students join")
    ap.add_argument("--answer-within", type=float, default=10.0)
    ap.add_argument("--db", choices=("sqlite", "postgres"), default="sqlite")
    ap.add_argument("--no-proxy", action="store_true", help="one process, no HAProxy")
    ap.add_argument(
        "--kill-one",
        action="store_true",
        help="SIGKILL one of two processes while the question is open",
    )
    ap.add_argument(
        "--restart",
        action="store_true",
        help="SIGKILL the one process mid-question; it starts again",
    )
    ap.add_argument("--idle-seconds", type=float, default=10.0)
    ap.add_argument(
        "--ttl", type=int, default=120, help="server.disconnectedSessionTTL of every process"
    )
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    cap.VERBOSE = args.verbose
    if args.no_proxy and args.servers != 1:
        ap.error("--no-proxy needs --servers 1")
    if args.kill_one and args.servers < 2:
        ap.error("--kill-one needs --servers 2 or more")
    if args.restart and args.servers != 1:
        ap.error("--restart is for one process")
    return cap.run_until_done(amain(args))


if __name__ == "__main__":
    sys.exit(main())
