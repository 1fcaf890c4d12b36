"""A lecture hall at the protocol level: simulated students that speak Streamlit's websocket
protocol, no browsers (loopback only, bounded in time).

    python benchmarks/capacity.py --servers N --students S --move-every T --seconds D
                                  [--classes C] --json FILE

Servers. `--servers N` starts the deploy recipe, `deploy/start.sh N` (N `streamlit run app.py`
processes on consecutive loopback ports behind HAProxy with a sticky cookie), on free ports,
in its own process group, and kills that group when done (also on errors and Ctrl-C). With
`--servers 1 --no-proxy` the one process is started directly and students talk to it. Every
process gets a short `server.disconnectedSessionTTL` (`--ttl`, default 10 s) so that a class's
sessions expire soon after it leaves; .streamlit/config.toml is not touched.

A student is what a browser does on the tilt page (Figure 12.2), message for message:
  1. opens a link, `GET /tilt?kappa=K` (the proxy's sticky cookie comes back here), then
     `GET /_stcore/health` (Streamlit's XSRF cookie), then opens the websocket
     `/_stcore/stream` with both cookies and the subprotocols the frontend sends
     (`streamlit`, the XSRF token);
  2. sends a `BackMsg.rerun_script` with the link's query string, an empty page_script_hash
     and the page name `tilt`, as the frontend does for a page opened by link; reads the
     ForwardMsgs (new_session, navigation, page_info_changed, deltas, script_finished),
     learns the kappa select_slider (its widget id and option labels), the download buttons
     and the current query string, and keeps the browser's ForwardMsg cache (messages marked
     cacheable are kept, `ref_hash` messages are resolved from it, and the cached hashes are
     sent back with every rerun, aged out after `max_cached_message_age` runs);
  3. every `--move-every` seconds on average (uniform in [0.5 T, 1.5 T]) moves the slider one
     stop left or right: a `rerun_script` with the slider's new option label as its
     `string_array_value`, the page_script_hash and query string it was given. It does not
     move again before the previous run has finished (a person waits for the figure), so
     when the server falls behind, the offered load backs off and the latency shows it;
  4. every `--download-every` moves downloads the figure's CSV as the download button does:
     a `BackMsg.backend_operation_request` (deferred_file) on the websocket, the URL from
     the `backend_operation_response`, then `GET` of that URL through the same proxy with
     the session's cookies (the file lives in the process that holds the session). A failed
     download is an error, but the student goes on; any other error ends that student.

Every readout is checked: the readout element (the one whose text contains `klrl-readout`,
see `read_kl`) must show KL(pi* || pi0) as klrl_core computes it at the slider's kappa, to
the decimals shown; every CSV must contain the column pi* that klrl_core computes. An error
is a wrong or missing readout, an exception element, a compile error, a failed or wrong
download, an HTTP error, a lost connection, or any step that takes longer than `--timeout`.

Latency: from sending the rerun to receiving the readout element of that run (the browser
would draw it a few ms later). First one student alone makes `--single-moves` moves
(`single_median_ms`, also the warm-up of every process's caches); then the class: S students
arrive over `--ramp` seconds, and moves are counted in a window of `--seconds` seconds that
starts 2 s after the last arrival. `served_moves_per_s` = readouts received in the window /
its length; `offered_moves_per_s` = S / T.

With `--classes C`, C classes come one after another; after each, the students disconnect,
the session TTL passes, one short visitor per process makes Streamlit reap the expired
sessions (its session store reaps only on a write), and the processes' resident memory
(VmRSS from /proc/<pid>/status, summed over the Streamlit processes, not the proxy) is read
once it has stopped falling for `--settle` seconds: `rss_after_mb`, one value per class.

Also recorded: the load average before and during each class (the machine is shared), the
server processes' CPU (cores) and the simulator's own CPU.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import csv
import html
import io
import json
import math
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlencode, urlsplit

from google.protobuf.message import DecodeError
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import WebSocketException

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
PAGE = "tilt"  # the page the students open (Figure 12.2)
PARAM = "kappa"  # its slider's query parameter
READOUT_MARK = "klrl-readout"
START_TIMEOUT = 180.0  # seconds for the servers (and proxy) to come up
T0 = time.monotonic()
VERBOSE = False


def say(text: str) -> None:
    print(f"[{time.monotonic() - T0:7.1f} s] {text}", flush=True)


def debug(text: str) -> None:
    if VERBOSE:
        say(text)


# ------------------------------------------------------------------------------ the readout
_TAG = re.compile(r"<[^>]*>")
# "KL", optionally its argument in parentheses "(π* ‖ π₀)", optionally "=" or ":", then the
# number: ASCII digits only (the subscript in π₀ is not a digit), a true minus sign allowed.
_KL_VALUE = re.compile(
    r"KL\s*(?:\([^)]*\))?\s*[=:]?\s*([-−]?[0-9]+(?:\.([0-9]+))?(?:[eE][-+]?[0-9]+)?)"
)


def read_kl(body: str) -> tuple[float, int] | None:
    """The KL value of a readout element, or None if ``body`` is not the readout.

    The readout is the one element whose text contains the marker class `klrl-readout`; its
    value is the first number after "KL" (after the divergence's argument, if written):
    "KL(π* ‖ π₀) = 0.34 nats" and "KL(π* ‖ π₀) 0.34 nats" both read 0.34. Tags are dropped
    first, so the number may sit in its own <span>. Returns (value, decimals shown)."""
    if READOUT_MARK not in body:
        return None
    text = html.unescape(_TAG.sub(" ", body))
    m = _KL_VALUE.search(text)
    if not m:
        return None
    number = m.group(1).replace("−", "-")
    exponent = re.search(r"[eE]([-+]?[0-9]+)$", number)
    return float(number), len(m.group(2) or "") - (int(exponent.group(1)) if exponent else 0)


# --------------------------------------------------------------------- what the core computes


def through_cache(msg: ForwardMsg, cache: dict, runs: int, fail) -> ForwardMsg:
    """What the browser's ForwardMsg cache does: a ``ref_hash`` message becomes the cached
    message it names (kept fresh at this run), a cacheable one is kept; ``fail(text)`` makes
    the error raised for a reference to a message never received."""
    if msg.WhichOneof("type") == "ref_hash":
        entry = cache.get(msg.ref_hash)
        if entry is None:
            raise fail(f"ref_hash {msg.ref_hash} not in the cache")
        entry[1] = runs
        full = ForwardMsg()
        full.CopyFrom(entry[0])
        full.metadata.CopyFrom(msg.metadata)
        return full
    if msg.metadata.cacheable and msg.hash:
        cache[msg.hash] = [msg, runs]
    return msg


class Expected:
    """KL(pi* || pi0) and pi* at each kappa, from klrl_core (the book's model), and the kappa
    each slider option label stands for."""

    def __init__(self, app_dir: Path):
        sys.path.insert(0, str(app_dir))
        from klrl_core import model, tilt

        self._tilt = tilt.tilt
        self.r = model.rewards()
        self.log_pi0 = model.log_reference(self.r)
        self.labels: dict[str, float] = {}
        try:  # the labels the page formats its options with, if the app names them so
            from klrl_app.controls import kappa_label, kappa_options

            self.labels = {kappa_label(k): float(k) for k in kappa_options()}
            self.options = [float(k) for k in kappa_options()]
        except Exception:
            self.options = []

    @lru_cache(maxsize=4096)
    def at(self, kappa: float) -> tuple[float, tuple[float, ...]]:
        t = self._tilt(self.log_pi0, self.r, kappa)
        return float(t.kl), tuple(float(p) for p in t.pi)

    def kl(self, kappa: float) -> float:
        return self.at(kappa)[0]

    def pi(self, kappa: float) -> tuple[float, ...]:
        return self.at(kappa)[1]

    def kappa_of(self, label: str) -> float:
        if label in self.labels:
            return self.labels[label]
        m = re.search(r"κ\s*=\s*([0-9.eE+-]+)", label)
        if not m:
            raise ValueError(f"cannot read kappa from the slider option {label!r}")
        return float(m.group(1))


def fmt_kappa(k: float) -> str:
    return str(int(k)) if float(k).is_integer() else repr(float(k))


# ----------------------------------------------------------------------------- the servers
def free_port_block(n: int) -> int:
    """A port p such that p .. p+n-1 are free on loopback now."""
    for _ in range(200):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            base = s.getsockname()[1]
        if base + n >= 65000:
            continue
        ok = True
        for p in range(base, base + n):
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", p))
                except OSError:
                    ok = False
                    break
        if ok:
            return base
    raise RuntimeError("no block of free ports found")


def rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def cpu_seconds(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return 0.0


def health(url: str, timeout: float = 2.0) -> bool:
    import urllib.request

    try:
        with urllib.request.urlopen(url + "/_stcore/health", timeout=timeout) as r:
            return r.status == 200
    except OSError:
        return False


LIVE: list[Deployment] = []  # stopped at exit whatever happened (atexit, below)


class Deployment:
    """`deploy/start.sh N` (or one bare `streamlit run`) in its own process group."""

    def __init__(
        self,
        n: int,
        proxy: bool,
        app_dir: Path,
        ttl: int,
        python: str,
        extra: list[str],
        nice: int = 0,
    ):
        self.n, self.proxy, self.app_dir, self.ttl = n, proxy, app_dir, ttl
        self.nice = nice
        self.python, self.extra = python, extra
        self.proc: subprocess.Popen | None = None
        self.run_dir = Path(tempfile.mkdtemp(prefix="klrl-capacity-"))
        self.backend_urls: list[str] = []
        self.pids: list[int] = []
        self.proxy_pid: int | None = None
        self.url = ""

    def streamlit_args(self) -> list[str]:
        return ["--server.disconnectedSessionTTL", str(self.ttl), *self.extra]

    def bare_command(self, port: int) -> list[str]:
        """One Streamlit process of the app on ``port`` (--no-proxy, and its restart)."""
        return [
            self.python,
            "-m",
            "streamlit",
            "run",
            "app.py",
            "--server.port",
            str(port),
            "--server.address",
            "127.0.0.1",
            "--server.headless",
            "true",
            "--server.fileWatcherType",
            "none",
            "--browser.gatherUsageStats",
            "false",
            *self.streamlit_args(),
        ]

    def start(self) -> None:
        LIVE.append(self)
        log = open(self.run_dir / "start.log", "w")
        if self.proxy:
            block = free_port_block(self.n + 1)
            port, first = block, block + 1
            env = dict(
                os.environ,
                KLRL_PORT=str(port),
                KLRL_BIND="127.0.0.1",
                KLRL_BACKEND_PORT=str(first),
                KLRL_APP_DIR=str(self.app_dir),
                KLRL_RUN_DIR=str(self.run_dir),
                KLRL_PYTHON=self.python,
                KLRL_STREAMLIT_ARGS=" ".join(self.streamlit_args()),
                KLRL_HEALTH_TIMEOUT=str(int(START_TIMEOUT)),
            )
            self.proc = subprocess.Popen(
                [*self.niced(), "bash", str(DEPLOY / "start.sh"), str(self.n)],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
            self.url = f"http://127.0.0.1:{port}"
            self.backend_urls = [f"http://127.0.0.1:{first + i}" for i in range(self.n)]
            ready = self.run_dir / "ready"
            deadline = time.monotonic() + START_TIMEOUT + 30
            while not ready.exists():
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        "deploy/start.sh did not come up:\n"
                        + (self.run_dir / "start.log").read_text()[-3000:]
                    )
                time.sleep(0.2)
            self.pids = [
                int((self.run_dir / f"streamlit-{first + i}.pid").read_text())
                for i in range(self.n)
            ]
            self.proxy_pid = int((self.run_dir / "haproxy.pid").read_text())
        else:
            if self.n != 1:
                raise ValueError("--no-proxy runs exactly one server")
            port = free_port_block(1)
            cmd = self.bare_command(port)
            self.proc = subprocess.Popen(
                [*self.niced(), *cmd],
                cwd=self.app_dir,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
            self.url = f"http://127.0.0.1:{port}"
            self.backend_urls = [self.url]
            self.pids = [self.proc.pid]
            deadline = time.monotonic() + START_TIMEOUT
            while not health(self.url):
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        "streamlit did not come up:\n"
                        + (self.run_dir / "start.log").read_text()[-3000:]
                    )
                time.sleep(0.2)

    def niced(self) -> list[str]:
        """`nice` execs its command, so the pid stays the server's (or start.sh's)."""
        return ["nice", "-n", str(self.nice)] if self.nice else []

    def stop(self) -> None:
        """SIGTERM to the whole process group (start.sh, every Streamlit process, HAProxy);
        SIGKILL to whatever is left after 20 s."""
        if self.proc is None:
            return
        pgid = self.proc.pid  # start_new_session: the group's id is the leader's pid
        try:
            os.killpg(pgid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                os.killpg(pgid, 0)
            except ProcessLookupError:
                break
            self.proc.poll()
            time.sleep(0.2)
        else:
            try:
                os.killpg(pgid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait(timeout=10)
        self.proc = None
        if self in LIVE:
            LIVE.remove(self)

    def rss_mb(self) -> float:
        return sum(rss_kb(p) for p in self.pids) / 1024

    def cpu(self) -> float:
        return sum(cpu_seconds(p) for p in self.pids)


# ------------------------------------------------------------------------------- HTTP, raw
async def http_get(
    url: str, cookies: dict[str, str], timeout: float
) -> tuple[int, list[tuple[str, str]], bytes]:
    """GET over a fresh connection (HTTP/1.1, Connection: close): status, headers, body."""
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
            "User-Agent: klrl-capacity",
            "Accept-Encoding: identity",
        ]
        if cookies:
            head.append("Cookie: " + "; ".join(f"{k}={v}" for k, v in cookies.items()))
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
        await writer.drain()
        raw = await asyncio.wait_for(reader.read(), timeout)
    finally:
        writer.close()
    header_blob, _, body = raw.partition(b"\r\n\r\n")
    lines = header_blob.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = [tuple(s.strip() for s in line.split(":", 1)) for line in lines[1:] if ":" in line]
    if any(k.lower() == "transfer-encoding" and "chunked" in v.lower() for k, v in headers):
        out, rest = b"", body
        while rest:
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line.split(b";")[0], 16)
            if size == 0:
                break
            out, rest = out + rest[:size], rest[size + 2 :]
        body = out
    for k, v in headers:
        if k.lower() == "set-cookie":
            name, _, value = v.split(";", 1)[0].partition("=")
            cookies[name.strip()] = value.strip()
    return status, headers, body


# ------------------------------------------------------------------------- the statistics
@dataclass
class Stats:
    moves: list[tuple[float, float, float]] = field(default_factory=list)  # (sent, got, ms)
    downloads: list[float] = field(default_factory=list)
    page_loads: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    backends: dict[str, int] = field(default_factory=dict)

    def error(self, who: str, what: str) -> None:
        self.errors.append(f"{who}: {what}")
        debug(f"ERROR {who}: {what}")


class StepFailed(Exception):
    """A step of a student that went wrong (already counted as an error)."""


# ------------------------------------------------------------------------------ a student
@dataclass
class Slider:
    id: str
    options: list[str]


class Student:
    """One browser tab on the tilt page, speaking Streamlit's protocol."""

    def __init__(
        self,
        name: str,
        base: str,
        expected: Expected,
        stats: Stats,
        rng: random.Random,
        timeout: float,
    ):
        self.name, self.base, self.expected, self.stats = name, base, expected, stats
        self.rng, self.timeout = rng, timeout
        self.cookies: dict[str, str] = {}
        self.ws = None
        self.session_id = ""
        self.page_hash = ""
        self.query = ""
        self.slider: Slider | None = None
        self.label = ""  # the slider's current option label
        self.kappa = math.nan
        self.downloads: dict[str, str] = {}  # widget id -> deferred file id (this run)
        # "The numbers behind the figure" builds its table and downloads only while open
        # (layout.Page.details): a student opens it once, before the first download, and the
        # browser then sends it open with every later move.
        self.details_id: str | None = None
        self.details_open = False
        self.responses: dict[str, ForwardMsg] = {}
        self.cache: dict[str, list] = {}  # hash -> [ForwardMsg, run of last use]
        self.runs = 0
        self.max_age = 2

    # -------------------------------------------------------------- messages in and out
    def fail(self, what: str) -> StepFailed:
        self.stats.error(self.name, what)
        return StepFailed(what)

    async def send(self, msg: BackMsg) -> None:
        try:
            await self.ws.send(msg.SerializeToString())
        except (WebSocketException, OSError) as err:
            raise self.fail(f"send failed: {type(err).__name__}: {err}") from None

    async def recv(self, deadline: float) -> ForwardMsg:
        left = deadline - time.monotonic()
        if left <= 0:
            raise self.fail(f"no answer within {self.timeout:.0f} s")
        try:
            data = await asyncio.wait_for(self.ws.recv(), left)
        except TimeoutError:
            raise self.fail(f"no answer within {self.timeout:.0f} s") from None
        except (WebSocketException, OSError) as err:
            raise self.fail(f"connection lost: {type(err).__name__}: {err}") from None
        msg = ForwardMsg()
        try:
            msg.ParseFromString(data)
        except DecodeError:
            raise self.fail("undecodable ForwardMsg") from None
        return through_cache(msg, self.cache, self.runs, self.fail)

    def rerun(self, widgets: list | None = None, first: bool = False) -> BackMsg:
        msg = BackMsg()
        rs = msg.rerun_script
        rs.query_string = self.query
        if first:
            rs.page_script_hash = ""
            rs.page_name = PAGE
        else:
            rs.page_script_hash = self.page_hash
        for w in widgets or []:
            rs.widget_states.widgets.append(w)
        rs.cached_message_hashes.extend(self.cache.keys())
        ci = rs.context_info
        ci.url = f"{self.base}/{PAGE}"
        ci.timezone, ci.timezone_offset, ci.locale = "UTC", 0, "en-US"
        ci.is_embedded, ci.color_scheme = False, "light"
        return msg

    def slider_state(self, label: str):
        msg = BackMsg()
        w = msg.rerun_script.widget_states.widgets.add()
        w.id = self.slider.id
        w.string_array_value.data.append(label)
        return w

    def widgets(self, label: str) -> list:
        """What the browser sends with a rerun: the slider, and the numbers' expander if open."""
        out = [self.slider_state(label)]
        if self.details_open and self.details_id:
            msg = BackMsg()
            w = msg.rerun_script.widget_states.widgets.add()
            w.id = self.details_id
            w.bool_value = True
            out.append(w)
        return out

    def see(self, msg: ForwardMsg, run: dict) -> None:
        """Learn from one ForwardMsg what a browser would: the session, the page, the URL,
        the slider, the download buttons, the readout."""
        kind = msg.WhichOneof("type")
        if kind == "new_session":
            ns = msg.new_session
            run["started"] = True
            self.session_id = ns.initialize.session_id or self.session_id
            self.page_hash = ns.page_script_hash or self.page_hash
            if ns.config.max_cached_message_age:
                self.max_age = ns.config.max_cached_message_age
            self.downloads = {}
        elif kind == "navigation":
            if msg.navigation.page_script_hash:
                self.page_hash = msg.navigation.page_script_hash
        elif kind == "page_info_changed":
            self.query = msg.page_info_changed.query_string
        elif kind == "page_not_found":
            run["problems"].append(f"page not found: {msg.page_not_found.page_name}")
        elif kind == "backend_operation_response":
            self.responses[msg.backend_operation_response.request_id] = msg
        elif kind == "delta" and msg.delta.WhichOneof("type") == "add_block":
            block = msg.delta.add_block
            if block.WhichOneof("type") == "expandable" and block.expandable.id.endswith(
                f"klrl-{PAGE}-details"
            ):
                self.details_id = block.expandable.id
        elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            el = msg.delta.new_element
            et = el.WhichOneof("type")
            if et == "slider" and self.slider_is_kappa(el.slider):
                self.slider = Slider(el.slider.id, list(el.slider.options))
                if el.slider.raw_value:
                    self.label = el.slider.raw_value[0]
            elif et == "download_button" and el.download_button.deferred_file_id:
                self.downloads[el.download_button.id] = el.download_button.deferred_file_id
            elif et == "exception":
                run["problems"].append(f"exception element: {el.exception.message[:200]}")
            elif et in ("markdown", "html") and run["started"] and run["readout_at"] is None:
                got = read_kl(getattr(el, et).body)
                if got is not None:
                    run["readout_at"] = time.monotonic()
                    run["readout"] = got

    def slider_is_kappa(self, s) -> bool:
        if s.id.endswith(f"{PAGE}.{PARAM}"):
            return True
        return bool(s.options) and all(o in self.expected.labels for o in s.options[:3])

    async def run(self, msg: BackMsg, kappa: float) -> float:
        """Send a rerun and read its run to the end; check the readout; return the
        milliseconds from sending to the readout."""
        run = {"started": False, "readout_at": None, "readout": None, "problems": []}
        deadline = time.monotonic() + self.timeout
        sent = time.monotonic()
        await self.send(msg)
        while True:
            fm = await self.recv(deadline)
            self.see(fm, run)
            if run["problems"]:
                raise self.fail(f"{PARAM}={fmt_kappa(kappa)}: {run['problems'][0]}")
            if fm.WhichOneof("type") == "script_finished" and run["started"]:
                status = fm.script_finished
                if status == ForwardMsg.FINISHED_WITH_COMPILE_ERROR:
                    raise self.fail("script finished with a compile error")
                if status == ForwardMsg.FINISHED_SUCCESSFULLY:
                    break
                if status == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    run.update(started=False, readout_at=None, readout=None)
        self.runs += 1
        self.cache = {h: e for h, e in self.cache.items() if self.runs - e[1] <= self.max_age}
        if run["readout"] is None:
            raise self.fail(f"{PARAM}={fmt_kappa(kappa)}: the run finished without a readout")
        shown, decimals = run["readout"]
        want = self.expected.kl(kappa)
        if abs(shown - want) > 0.5 * 10.0**-decimals + 1e-9:
            raise self.fail(
                f"{PARAM}={fmt_kappa(kappa)}: readout KL {shown} but klrl_core gives {want:.6f}"
            )
        return (run["readout_at"] - sent) * 1000

    # ------------------------------------------------------------------- what it does
    async def arrive(self, kappa: float) -> float:
        """Open the page by its link, as a browser does; return the page-load latency."""
        self.query = urlencode({PARAM: fmt_kappa(kappa)})
        deadline = self.timeout
        try:
            status, _, _ = await http_get(
                f"{self.base}/{PAGE}?{self.query}", self.cookies, deadline
            )
            if status != 200:
                raise self.fail(f"GET /{PAGE}: HTTP {status}")
            status, _, _ = await http_get(f"{self.base}/_stcore/health", self.cookies, deadline)
            if status != 200:
                raise self.fail(f"GET /_stcore/health: HTTP {status}")
        except (TimeoutError, OSError, ValueError, IndexError) as err:
            raise self.fail(f"opening the page: {type(err).__name__}: {err}") from None
        backend = self.cookies.get("KLRL_SERVER", "direct")
        self.stats.backends[backend] = self.stats.backends.get(backend, 0) + 1
        ws_url = self.base.replace("http://", "ws://") + "/_stcore/stream"
        xsrf = self.cookies.get("_streamlit_xsrf", "PLACEHOLDER_AUTH_TOKEN")
        try:
            self.ws = await ws_connect(
                ws_url,
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
        ms = await self.run(self.rerun(first=True), kappa)
        if self.slider is None:
            raise self.fail("the page has no kappa slider")
        self.kappa = kappa
        self.label = self.label or self.option_label(kappa)
        self.stats.page_loads.append(ms)
        return ms

    def option_label(self, kappa: float) -> str:
        for o in self.slider.options:
            if self.expected.kappa_of(o) == kappa:
                return o
        raise self.fail(f"no slider option for {PARAM}={kappa}")

    async def move(self) -> tuple[float, float, float]:
        """One arrow key: the slider to a neighbouring stop. Returns (sent, readout, ms)."""
        opts = self.slider.options
        i = (
            opts.index(self.label)
            if self.label in opts
            else opts.index(self.option_label(self.kappa))
        )
        j = i + self.rng.choice((-1, 1))
        if not 0 <= j < len(opts):
            j = i - (j - i)
        label = opts[j]
        kappa = self.expected.kappa_of(label)
        sent = time.monotonic()
        ms = await self.run(self.rerun(self.widgets(label)), kappa)
        self.label, self.kappa = label, kappa
        return sent, sent + ms / 1000, ms

    async def download(self) -> float:
        """Click the figure's CSV download button: returns milliseconds to the file."""
        if not self.downloads and not self.details_open and self.details_id:
            self.details_open = True  # open "The numbers behind the figure"
            await self.run(self.rerun(self.widgets(self.label)), self.kappa)
        if not self.downloads:
            raise self.fail("no download button on the page")
        wid = next(
            (w for w in self.downloads if w.endswith(f"{PAGE}-csv")), next(iter(self.downloads))
        )
        msg = BackMsg()
        req = msg.backend_operation_request
        req.request_id = str(uuid.uuid4())
        req.session_id = self.session_id
        req.deferred_file.file_id = self.downloads[wid]
        t0 = time.monotonic()
        deadline = t0 + self.timeout
        await self.send(msg)
        while req.request_id not in self.responses:
            fm = await self.recv(deadline)
            self.see(fm, {"started": False, "readout_at": 0, "readout": None, "problems": []})
        resp = self.responses.pop(req.request_id).backend_operation_response
        if resp.error_msg:
            raise self.fail(f"download refused: {resp.error_msg} ({resp.error_reason})")
        url = resp.deferred_file.url
        if not url:
            raise self.fail("download: no URL in the response")
        if url.startswith("/"):
            url = self.base + url
        try:
            status, _, body = await http_get(
                url, self.cookies, max(1.0, deadline - time.monotonic())
            )
        except (TimeoutError, OSError, ValueError, IndexError) as err:
            raise self.fail(f"download GET: {type(err).__name__}: {err}") from None
        ms = (time.monotonic() - t0) * 1000
        if status != 200:
            raise self.fail(f"download GET {urlsplit(url).path}: HTTP {status}")
        self.check_csv(body)
        self.stats.downloads.append(ms)
        return ms

    def check_csv(self, body: bytes) -> None:
        """The CSV must hold pi* at the current kappa, as klrl_core computes it, in a column."""
        try:
            rows = list(csv.reader(io.StringIO(body.decode("utf-8"))))
        except UnicodeDecodeError:
            raise self.fail("download: not UTF-8 text") from None
        want = self.expected.pi(self.kappa)
        if len(rows) != len(want) + 1:
            raise self.fail(f"download: {len(rows) - 1} rows, expected {len(want)}")
        for c in range(len(rows[0])):
            try:
                col = [float(r[c]) for r in rows[1:]]
            except (ValueError, IndexError):
                continue
            if all(abs(a - b) <= 1e-9 * max(abs(b), 1e-300) + 1e-15 for a, b in zip(col, want)):
                return
        raise self.fail(f"download: no column equals pi* at {PARAM}={fmt_kappa(self.kappa)}")

    async def leave(self) -> None:
        if self.ws is not None:
            try:
                await asyncio.wait_for(self.ws.close(), 5)
            except (TimeoutError, WebSocketException, OSError):
                pass
            self.ws = None


# ---------------------------------------------------------------------------- the classes
def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    v = sorted(values)
    return v[min(len(v) - 1, max(0, math.ceil(q * len(v)) - 1))]


async def sample_load(out: list[float], stop: asyncio.Event) -> None:
    while not stop.is_set():
        out.append(os.getloadavg()[0])
        try:
            await asyncio.wait_for(stop.wait(), 5)
        except TimeoutError:
            pass


async def single_student(dep: Deployment, expected: Expected, args, seed: int) -> dict:
    """One student alone: the latency baseline (and every process's warm-up)."""
    stats = Stats()
    lat: list[float] = []
    # the warm-up reaches every process (a cold process's first run imports and caches)
    for i, url in enumerate(dep.backend_urls if len(dep.backend_urls) > 1 else []):
        s = Student(f"warm-up {i}", url, expected, stats, random.Random(seed + i), args.timeout)
        try:
            await s.arrive(5.0)
            for _ in range(3):
                await s.move()
        except StepFailed:
            pass
        finally:
            await s.leave()
    s = Student("single", dep.url, expected, stats, random.Random(seed), args.timeout)
    try:
        await s.arrive(5.0)
        for _ in range(2):  # warm-up moves, not counted
            await s.move()
            await asyncio.sleep(0.2)
        for _ in range(args.single_moves):
            _, _, ms = await s.move()
            lat.append(ms)
            await asyncio.sleep(0.2)
        await s.download()
    except StepFailed:
        pass
    finally:
        await s.leave()
    return {
        "median_ms": statistics.median(lat) if lat else None,
        "p95_ms": pct(lat, 0.95),
        "moves": len(lat),
        "errors": stats.errors,
    }


async def student_life(
    i: int,
    dep: Deployment,
    expected: Expected,
    args,
    stats: Stats,
    t_arrive: float,
    t_end: float,
    seed: int,
) -> None:
    rng = random.Random(seed)
    await asyncio.sleep(max(0.0, t_arrive - time.monotonic()))
    s = Student(f"student {i}", dep.url, expected, stats, rng, args.timeout)
    try:
        start = rng.choice([k for k in expected.options if 0.5 <= k <= 50] or [5.0])
        await s.arrive(start)
        debug(
            f"{s.name} arrived at {PARAM}={fmt_kappa(start)} "
            f"({s.cookies.get('KLRL_SERVER', 'direct')})"
        )
        next_at = time.monotonic() + rng.uniform(0, args.move_every)
        n = 0
        while True:
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))
            if time.monotonic() >= t_end:
                break
            sent, got, ms = await s.move()
            stats.moves.append((sent, got, ms))
            n += 1
            if args.download_every and n % args.download_every == 0:
                try:
                    await s.download()
                except StepFailed:  # counted; the page itself still works: go on
                    pass
            next_at = max(sent + rng.uniform(0.5, 1.5) * args.move_every, time.monotonic())
    except StepFailed:
        pass
    except Exception as err:
        stats.error(s.name, f"{type(err).__name__}: {err}")
    finally:
        await s.leave()


async def one_class(dep: Deployment, expected: Expected, args, k: int) -> tuple[dict, Stats]:
    """S students arrive, move the slider (and download), leave. Figures of the window."""
    stats = Stats()
    load: list[float] = []
    stop = asyncio.Event()
    sampler = asyncio.create_task(sample_load(load, stop))
    t0 = time.monotonic()
    w0 = t0 + args.ramp + 2.0
    w1 = w0 + args.seconds
    say(
        f"class {k}: {args.students} students arrive over {args.ramp:g} s, then "
        f"{args.seconds:g} s of slider moves every {args.move_every:g} s each (offered "
        f"{args.students / args.move_every:.1f} moves/s); load {os.getloadavg()[0]:.2f}"
    )
    gathered = asyncio.gather(
        *[
            student_life(
                i,
                dep,
                expected,
                args,
                stats,
                t0 + args.ramp * i / max(args.students - 1, 1),
                w1,
                args.seed * 100_003 + k * 10_007 + i,
            )
            for i in range(args.students)
        ]
    )
    await asyncio.sleep(max(0.0, w0 - time.monotonic()))
    proxy_cpu = (lambda: cpu_seconds(dep.proxy_pid)) if dep.proxy_pid else (lambda: 0.0)
    cpu_a, me_a, px_a, wall_a = dep.cpu(), sum(os.times()[:2]), proxy_cpu(), time.monotonic()
    await asyncio.sleep(max(0.0, w1 - time.monotonic()))
    cpu_b, me_b, px_b, wall_b = dep.cpu(), sum(os.times()[:2]), proxy_cpu(), time.monotonic()
    try:
        await asyncio.wait_for(gathered, args.timeout + 30)
    except TimeoutError:
        stats.error("class", "students did not finish in time")
    stop.set()
    await sampler
    in_window = [m for m in stats.moves if w0 <= m[1] <= w1]
    lat = [m[2] for m in stats.moves if w0 <= m[0] <= w1]
    r1 = lambda x: round(x, 1) if x is not None else None  # noqa: E731
    out = {
        "served_moves_per_s": round(len(in_window) / args.seconds, 2),
        "median_ms": r1(statistics.median(lat)) if lat else None,
        "p95_ms": r1(pct(lat, 0.95)),
        "moves_in_window": len(in_window),
        "moves_total": len(stats.moves),
        "downloads": len(stats.downloads),
        "download_median_ms": r1(statistics.median(stats.downloads)) if stats.downloads else None,
        "page_load_median_ms": r1(statistics.median(stats.page_loads))
        if stats.page_loads
        else None,
        "errors": len(stats.errors),
        "errors_by_kind": error_kinds(stats.errors),
        "error_samples": stats.errors[:20],
        "students_per_server": dict(sorted(stats.backends.items())),
        "server_cpu_cores": round((cpu_b - cpu_a) / (wall_b - wall_a), 2),
        "simulator_cpu_cores": round((me_b - me_a) / (wall_b - wall_a), 2),
        "proxy_cpu_cores": round((px_b - px_a) / (wall_b - wall_a), 2),
        "load_avg": round(statistics.mean(load), 2) if load else None,
    }
    say(
        f"class {k}: served {out['served_moves_per_s']} moves/s, median {out['median_ms']} ms, "
        f"p95 {out['p95_ms']} ms, {out['downloads']} downloads, {out['errors']} errors; "
        f"servers {out['server_cpu_cores']} cores, simulator {out['simulator_cpu_cores']} "
        f"cores, proxy {out['proxy_cpu_cores']} cores, load {out['load_avg']}; students per server {out['students_per_server']}"
    )
    for e in stats.errors[:5]:
        say(f"  error: {e}")
    return out, stats


async def reap(dep: Deployment, expected: Expected, args) -> None:
    """Streamlit's session store drops expired sessions only when it is written to: one
    visitor per process (directly, not through the proxy, so that each process gets one)
    opens the page and leaves, after the TTL has passed."""
    stats = Stats()
    for i, url in enumerate(dep.backend_urls):
        s = Student(f"visitor {i}", url, expected, stats, random.Random(i), args.timeout)
        try:
            await s.arrive(5.0)
        except StepFailed:
            pass
        finally:
            await s.leave()
    for e in stats.errors:
        say(f"  visitor error: {e}")


async def settled_rss(dep: Deployment, window: float, timeout: float) -> float:
    """Server RSS once it has not fallen by 1% for `window` seconds (app.py returns freed
    heap to the OS every 30 s), or after `timeout` seconds."""
    t_end = time.monotonic() + timeout
    best, best_t = dep.rss_mb(), time.monotonic()
    while time.monotonic() < t_end and time.monotonic() - best_t < window:
        await asyncio.sleep(0.5)
        now = dep.rss_mb()
        if now < best * 0.99:
            best, best_t = now, time.monotonic()
    return dep.rss_mb()


async def amain(args) -> int:
    app_dir = Path(args.app_dir).resolve()
    expected = Expected(app_dir)
    if args.nice:
        os.nice(args.nice)  # the simulator too: it must not fall behind the servers
    dep = Deployment(
        args.servers,
        not args.no_proxy,
        app_dir,
        args.ttl,
        args.python,
        args.streamlit_arg or [],
        args.nice,
    )
    out: dict = {
        "servers": args.servers,
        "students": args.students,
        "move_every_s": args.move_every,
        "seconds": args.seconds,
        "offered_moves_per_s": round(args.students / args.move_every, 2),
        "proxy": "haproxy (deploy/start.sh)" if not args.no_proxy else None,
        "download_every": args.download_every,
        "ttl_s": args.ttl,
        "cpus": os.cpu_count(),
        "nice": args.nice,
        "load_avg_before": round(os.getloadavg()[0], 2),
        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    classes: list[dict] = []
    rss_after: list[float] = []
    errors: list[str] = []
    loop = asyncio.get_running_loop()
    try:
        say(
            f"starting {args.servers} server(s){'' if args.no_proxy else ' behind HAProxy'} "
            f"from {app_dir} (load {os.getloadavg()[0]:.2f})"
        )
        await loop.run_in_executor(None, dep.start)
        say(f"up at {dep.url}; pids {dep.pids}; RSS {dep.rss_mb():.0f} MB")
        out["rss_start_mb"] = round(dep.rss_mb(), 1)
        single = await single_student(dep, expected, args, args.seed)
        errors += single["errors"]
        out["single_median_ms"] = round(single["median_ms"], 1) if single["median_ms"] else None
        out["single_p95_ms"] = round(single["p95_ms"], 1) if single["p95_ms"] else None
        say(
            f"single student: median {out['single_median_ms']} ms, p95 {out['single_p95_ms']} ms "
            f"over {single['moves']} moves; {len(single['errors'])} errors"
        )
        for k in range(1, (args.classes or 1) + 1):
            res, stats = await one_class(dep, expected, args, k)
            errors += stats.errors
            classes.append(res)
            if args.classes:
                say(f"class {k} left; waiting {args.ttl} s (session TTL) + 3 s")
                await asyncio.sleep(args.ttl + 3)
                await reap(dep, expected, args)
                rss = await settled_rss(dep, args.settle, args.settle_timeout)
                rss_after.append(round(rss, 1))
                res["rss_after_mb"] = round(rss, 1)
                say(f"class {k}: server RSS after its sessions expired: {rss:.1f} MB")
    except StepFailed:
        pass
    except KeyboardInterrupt:
        errors.append("interrupted")
        raise
    finally:
        await loop.run_in_executor(None, dep.stop)
        if errors or not classes:
            say(f"servers stopped; their logs: {dep.run_dir}")
        else:
            shutil.rmtree(dep.run_dir, ignore_errors=True)
            say("servers stopped")
    if not classes:
        print(json.dumps(out, indent=1), file=sys.stderr)
        return 2
    window = args.seconds * len(classes)
    served = sum(c["moves_in_window"] for c in classes) / window
    first = classes[0]
    out.update(
        served_moves_per_s=round(served, 2),
        median_ms=first["median_ms"] if len(classes) == 1 else _pooled(classes, "median_ms"),
        p95_ms=first["p95_ms"] if len(classes) == 1 else _pooled(classes, "p95_ms"),
        errors=len(errors),
        errors_by_kind=error_kinds(errors),
        error_samples=errors[:30],
        downloads=sum(c["downloads"] for c in classes),
        classes=classes,
    )
    if args.classes:
        out["rss_after_mb"] = rss_after
    single_ok = out["single_median_ms"] and out["median_ms"]
    out["median_vs_single"] = (
        round(out["median_ms"] / out["single_median_ms"], 2) if single_ok else None
    )
    summary = {
        k: out[k]
        for k in (
            "servers",
            "students",
            "offered_moves_per_s",
            "served_moves_per_s",
            "median_ms",
            "p95_ms",
            "errors",
            "single_median_ms",
            "median_vs_single",
            "downloads",
        )
    }
    if args.classes:
        summary["rss_after_mb"] = rss_after
    print(json.dumps(summary, ensure_ascii=False))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    return 0 if not errors else 1


def error_kinds(errors: list[str]) -> dict[str, int]:
    """Errors counted by what went wrong (student, file id and slider value left out)."""
    kinds: dict[str, int] = {}
    for e in errors:
        what = e.split(": ", 1)[-1]
        what = re.sub(r"[0-9a-f]{32}", "<id>", what)
        what = re.sub(rf"{PARAM}=[0-9.e+-]+", f"{PARAM}=<k>", what)
        what = re.sub(r"[0-9]+(\.[0-9]+)?", "<n>", what)[:90]
        kinds[what] = kinds.get(what, 0) + 1
    return dict(sorted(kinds.items(), key=lambda kv: -kv[1]))


def _pooled(classes: list[dict], key: str) -> float | None:
    """Median over classes of a per-class figure (the per-class values are in `classes`)."""
    vals = [c[key] for c in classes if c[key] is not None]
    return round(statistics.median(vals), 1) if vals else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--servers", type=int, default=1, help="Streamlit processes (N)")
    ap.add_argument("--students", type=int, default=30, help="students in a class (S)")
    ap.add_argument(
        "--move-every",
        type=float,
        default=3.0,
        help="mean seconds between a student's slider moves (T)",
    )
    ap.add_argument(
        "--seconds",
        type=float,
        default=60.0,
        help="length of the measuring window of each class (D)",
    )
    ap.add_argument(
        "--classes",
        type=int,
        default=0,
        help="C classes in a row, reading server memory after each (rss_after_mb)",
    )
    ap.add_argument("--json", help="write every figure to this file")
    ap.add_argument(
        "--no-proxy",
        action="store_true",
        help="with --servers 1: students talk to the one process directly",
    )
    ap.add_argument("--ramp", type=float, default=5.0, help="seconds over which students arrive")
    ap.add_argument(
        "--download-every",
        type=int,
        default=10,
        help="a student downloads the CSV after every K-th move (0: never)",
    )
    ap.add_argument(
        "--single-moves",
        type=int,
        default=20,
        help="moves of the lone student that gives single_median_ms",
    )
    ap.add_argument(
        "--ttl",
        type=int,
        default=10,
        help="server.disconnectedSessionTTL given to every process (seconds)",
    )
    ap.add_argument(
        "--settle",
        type=float,
        default=35.0,
        help="RSS counts as settled after this many seconds without a 1%% fall",
    )
    ap.add_argument("--settle-timeout", type=float, default=120.0)
    ap.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        help="longest wait for any one step of a student (then: an error)",
    )
    ap.add_argument(
        "--app-dir", default=str(ROOT), help="the app to serve (default: this checkout)"
    )
    ap.add_argument(
        "--python", default=sys.executable, help="Python that runs the servers (default: this one)"
    )
    ap.add_argument(
        "--streamlit-arg",
        action="append",
        help="extra `streamlit run` option for every process, e.g. "
        "--streamlit-arg=--server.enableXsrfProtection=false (repeatable)",
    )
    ap.add_argument(
        "--nice",
        type=int,
        default=0,
        help="run the servers, the proxy and this simulator at this nice level "
        "(e.g. -10 as root, so that other work on a shared machine does not "
        "decide the result)",
    )
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    global VERBOSE
    VERBOSE = args.verbose
    if args.servers < 1 or args.students < 1 or args.move_every <= 0 or args.seconds <= 0:
        ap.error("--servers, --students, --move-every and --seconds must be positive")
    if args.no_proxy and args.servers != 1:
        ap.error("--no-proxy needs --servers 1")
    return run_until_done(amain(args))


def run_until_done(coro) -> int:
    """Run a benchmark's coroutine; every deployment still live at exit is stopped, and SIGTERM
    unwinds like Ctrl-C, through the coroutine's `finally` that stops the servers."""
    atexit.register(lambda: [d.stop() for d in list(LIVE)])
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        return asyncio.run(coro)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
