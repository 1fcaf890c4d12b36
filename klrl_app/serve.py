"""HTTP details of serving the app (app.py): unknown nested paths go to the page-not-found view;
immutable assets are sent compressed from memory with a year's cache lifetime; the pages'
tables of stops (klrl_app/instant.py) are fetched by their hash."""

from __future__ import annotations

import asyncio
import gzip
import re
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import quote

from starlette.datastructures import Headers, MutableHeaders
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from klrl_app.lru import MB, ByteLRU

try:
    import brotli
except ImportError:  # gzip only
    brotli = None

# Paths with more than one segment that are Streamlit's own (scripts, websocket, media,
# components, the app's static folder); everything else with two or more segments is a
# mistyped or truncated link.
STREAMLIT_PREFIXES = {
    "_stcore",
    "static",
    "app",
    "media",
    "component",
    "~",
    "favicon.png",
    "auth",
    "oauth2callback",
}


def _wants_html(scope) -> bool:
    """A browser's page navigation (not a script, health probe or download)."""
    accept = dict(scope.get("headers") or []).get(b"accept", b"")
    return b"text/html" in accept


class NestedPathToNotFound:
    """ASGI middleware: a page request (Accept: text/html) for ``/tilt/extra`` becomes a redirect to the single-segment
    path ``/tilt-extra``, which no page has: Streamlit's navigation then shows its "Page not
    found" message over the home page, whose sidebar links every page."""

    def __init__(self, app):
        self.app = app
        import streamlit as st  # the option is read once the server's config is loaded

        self.base = [p for p in (st.get_option("server.baseUrlPath") or "").split("/") if p]

    async def __call__(self, scope, receive, send):
        if (
            scope["type"] == "http"
            and scope.get("method") in {"GET", "HEAD"}
            and _wants_html(scope)
        ):
            parts = [p for p in scope["path"].split("/") if p]
            if parts[: len(self.base)] == self.base:  # under server.baseUrlPath, if set
                parts = parts[len(self.base) :]
            if len(parts) >= 2 and parts[0] not in STREAMLIT_PREFIXES:
                target = "/" + "/".join(self.base + [quote("-".join(parts))])
                await RedirectResponse(target, status_code=307)(scope, receive, send)
                return
        await self.app(scope, receive, send)


IMMUTABLE = "public, max-age=31536000, immutable"


class SmallFonts:
    """ASGI middleware: three of Streamlit's fonts are sent as the cuts made for the pinned
    Streamlit (klrl_app/fonts.py, tools/subset_fonts.py): its icon font (Material Symbols,
    375 kB) holding the icons its interface and the app name (54 kB), its text font (Source
    Sans, 170 kB upright, 138 kB italic) the scripts the app writes in (110 and 91 kB). On a
    phone at Slow 4G the full fonts took the bandwidth the first chart's plotly.js needed. A
    font without a cut made for it is sent whole, as before."""

    def __init__(self, app):
        from klrl_app.fonts import cuts

        self.app = app
        self.cuts = cuts()

    async def __call__(self, scope, receive, send):
        head, _, name = scope["path"].rpartition("/")
        body = self.cuts.get(name) if head.endswith("/static/media") else None
        if body is None or scope["type"] != "http" or scope.get("method") != "GET":
            await self.app(scope, receive, send)
            return
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", b"font/woff2"),
                    (b"content-length", str(len(body)).encode()),
                    (b"cache-control", IMMUTABLE.encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


# A name in the app's static folder that carries its content's hash (plots.publish_plotly_js):
# it never changes, so browsers may keep it a year without asking again.
HASHED_NAME = re.compile(r"/app/static/[^/]*\.[0-9a-f]{12}\.[a-z.]+$")


class ImmutableAssets:
    """ASGI middleware, outside Starlette's GZipMiddleware (app.py): a response that never
    changes (Streamlit's hashed bundles, which it marks immutable, and the app's hashed
    plotly.js) is compressed once per process and then sent from memory, and the app's hashed
    static files get the year-long, immutable cache lifetime Streamlit gives its own.

    Why not compress on every request: Streamlit 1.67 deliberately leaves /static/ and / out of
    its gzip middleware because recompressing the same bundles for every visitor costs the
    server CPU at each first load (starlette_gzip_middleware.py); a phone on a slow network
    pays 3-4 MB more for that. Keeping each compressed body (at most ``budget`` bytes of them)
    gives both: the CPU is spent once per asset, not once per visitor. The first request of an
    asset gets Starlette's gzip; a background thread then makes a brotli copy at its best
    quality (10-25% smaller than gzip -9, 1-7 s of one core per bundle: once per process,
    never on a request's path) for the browsers that accept it."""

    def __init__(self, app, budget: int = 24 * MB):
        self.app = app
        self.bodies = ByteLRU(budget, sizeof=lambda item: len(item[1]) + 2048)
        self._locks: dict[str, asyncio.Lock] = {}
        self._brotli_pending: set[str] = set()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="klrl-brotli")

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope.get("method") != "GET":
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        hashed = bool(HASHED_NAME.search(path))
        headers = Headers(scope=scope)
        accepts = headers.get("accept-encoding", "")
        plain = not ({"if-none-match", "if-modified-since"} & set(headers.keys()))
        if not plain or "gzip" not in accepts:
            await self.app(scope, receive, self._lifetime(send) if hashed else send)
            return
        if "/static/" not in path:  # pages, the websocket's HTTP side, health, media
            await self.app(scope, receive, send)
            return
        # A compressed asset is sent whole and says it takes no ranges: a browser that kept
        # part of one (a tab closed mid-download) would otherwise ask for the rest as a byte
        # range, which the app answers from the uncompressed file, and join the two into a
        # script that ends too early ("Unexpected end of input", seen in the browser tests).
        scope = dict(
            scope, headers=[(k, v) for k, v in scope["headers"] if k not in (b"range", b"if-range")]
        )
        wants_br = bool(re.search(r"\bbr\b", accepts))
        cached = (self.bodies.get((path, "br")) if wants_br else None) or self.bodies.get(
            (path, "gzip")
        )
        if cached is None:
            # One request compresses; the class arriving at the same moment waits for it.
            lock = self._locks.setdefault(path, asyncio.Lock())
            sent = False
            async with lock:
                cached = self.bodies.get((path, "gzip"))
                if cached is None:
                    sent = True
                    cached = await self._respond_and_keep(scope, receive, send, hashed)
                    if cached is not None:
                        self.bodies.put((path, "gzip"), cached)
            if not lock.locked():
                self._locks.pop(path, None)
            if sent:
                if cached is not None and wants_br:
                    self._brotli_later(path, cached)
                return
            if cached is None:  # not a response to keep (an error, a mutable file)
                await self.app(scope, receive, send)
                return
        start, body = cached
        await send({"type": "http.response.start", "status": 200, "headers": list(start)})
        await send({"type": "http.response.body", "body": body})
        if wants_br and (path, "br") not in self.bodies:
            self._brotli_later(path, cached)

    def _brotli_later(self, path: str, gzipped: tuple) -> None:
        if brotli is None or path in self._brotli_pending:
            return
        self._brotli_pending.add(path)
        self._pool.submit(self._brotli, path, gzipped)

    def _brotli(self, path: str, gzipped: tuple) -> None:
        try:
            start, body = gzipped
            compressed = brotli.compress(gzip.decompress(body), quality=11)
            head = MutableHeaders(raw=list(start))
            head["content-encoding"] = "br"
            head["content-length"] = str(len(compressed))
            self.bodies.put((path, "br"), (tuple(head.raw), compressed))
        finally:
            self._brotli_pending.discard(path)

    def _lifetime(self, send):
        async def with_lifetime(message):
            if message["type"] == "http.response.start" and message["status"] == 200:
                MutableHeaders(scope=message)["cache-control"] = IMMUTABLE
            await send(message)

        return with_lifetime

    async def _respond_and_keep(self, scope, receive, send, hashed):
        """Send the response as the app makes it; return (headers, body) if it is a complete,
        immutable, gzipped 200 worth keeping, else None."""
        start: dict = {}
        parts: list[bytes] = []
        ended = []

        async def keep(message):
            if message["type"] == "http.response.start":
                head = MutableHeaders(scope=message)
                if hashed and message["status"] == 200:
                    head["cache-control"] = IMMUTABLE
                if "content-encoding" in head:
                    del head["accept-ranges"]
                start.update(message)
            elif message["type"] == "http.response.body":
                parts.append(message.get("body", b""))
                if not message.get("more_body", False):
                    ended.append(True)
            await send(message)

        await self.app(scope, receive, keep)
        # A visitor who leaves mid-download ends Starlette's file response early without an
        # error (it stops at the disconnect): such a body is cut short and must not be kept,
        # or every later visitor gets a script that ends too early ("Unexpected end of input",
        # a CI run of the browser tests).
        if start.get("status") != 200 or not ended:
            return None
        head = Headers(raw=start.get("headers", []))
        if (
            "immutable" not in head.get("cache-control", "")
            or head.get("content-encoding") != "gzip"
        ):
            return None
        body = b"".join(parts)
        try:
            gzip.decompress(body)  # a whole gzip stream, to its trailer
        except (OSError, EOFError):
            return None
        raw = MutableHeaders(raw=list(start.get("headers", [])))
        raw["content-length"] = str(len(body))
        return tuple(raw.raw), body


# page slug -> the plotly.js bundle its charts drew with in this process (klrl_app/plots.py
# fills it at a page's first chart).
PRELOADS: dict[str, str] = {}


class PreloadPlotly:
    """ASGI middleware, inside Starlette's GZipMiddleware (app.py): a page whose charts this
    process has drawn before is sent with a <link rel="preload"> of their plotly.js bundle, so
    a phone fetches it alongside Streamlit's scripts instead of after them (the chart's
    component asks for it only once the page has run: 3-4 s later at Slow 4G). The page's
    HTML is asked of Streamlit uncompressed (its own gzip would compress it first) and
    compressed by the middleware outside."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope.get("method") != "GET" or not _wants_html(scope):
            await self.app(scope, receive, send)
            return
        name = PRELOADS.get(scope["path"].rstrip("/").rsplit("/", 1)[-1])
        if name is None:
            await self.app(scope, receive, send)
            return
        scope = dict(
            scope, headers=[(k, v) for k, v in scope["headers"] if k != b"accept-encoding"]
        )
        start: dict = {}
        parts: list[bytes] = []

        async def hold(message):
            if message["type"] == "http.response.start":
                start.update(message)
            elif message["type"] == "http.response.body":
                parts.append(message.get("body", b""))

        await self.app(scope, receive, hold)
        body = b"".join(parts)
        head = MutableHeaders(raw=list(start.get("headers", [])))
        if (
            start.get("status") == 200
            and head.get("content-type", "").startswith("text/html")
            and "content-encoding" not in head
            and b"</head>" in body
        ):
            link = f'<link rel="preload" as="script" href="./app/static/{name}">'
            body = body.replace(b"</head>", link.encode() + b"</head>", 1)
            head["content-length"] = str(len(body))
        await send(
            {"type": "http.response.start", "status": start.get("status", 500), "headers": head.raw}
        )
        await send({"type": "http.response.body", "body": body})


def keep_deferred_downloads() -> None:
    """Keep a CSV made on a download click alive until the browser fetches it.

    The download buttons build their CSV only when clicked (Streamlit's deferred download, so a
    slider move never pays for it). Streamlit 1.67 stores that file without attaching it to the
    session, and the clean-up at the end of any session's next script runs removes it: under a
    class's load 24% of downloads answered 404 (benchmarks/capacity.py, RESULTS.md). This
    attaches the file to the session that asked for it, as Streamlit does for its other media,
    and makes it again if it was swept before that. If Streamlit's internals differ (another
    version), it does nothing and the app behaves as Streamlit does."""
    try:
        from streamlit.runtime.media_file_manager import MediaFileManager
    except ImportError:
        return
    original = MediaFileManager.execute_deferred
    if getattr(original, "_klrl", False):
        return

    def execute_deferred(self, file_id):
        url = None
        for _ in range(3):  # swept between being stored and being attached: make it again
            url = original(self, file_id)
            try:
                with self._lock:
                    entry = self._deferred_callables.get(file_id)
                    made = url.rsplit("/", 1)[-1].split(".", 1)[0]
                    if entry is None:
                        return url
                    if made in self._file_metadata:
                        self._files_by_session_and_coord[entry["session_id"]][
                            entry["coordinates"] + "#file"
                        ] = made
                        return url
            except Exception:
                return url
        return url

    execute_deferred._klrl = True
    MediaFileManager.execute_deferred = execute_deferred


STUDENT_COOKIE = "klrl_student"
STUDENT_MAX_AGE = 400 * 24 * 3600  # browsers cap a cookie's life at 400 days


def _has_cookie(scope, name: str) -> bool:
    want = f"{name}=".encode()
    return any(
        k == b"cookie" and any(part.strip().startswith(want) for part in v.split(b";"))
        for k, v in scope.get("headers") or []
    )


class StudentCookie:
    """ASGI middleware: a browser's page request without the ``klrl_student`` cookie gets one, a
    random value that a class session uses to know one student's answer from another's (a
    reload or a second tab is the same student). HttpOnly (no script reads it), SameSite=Lax,
    the whole site. The script sees it through the websocket's handshake (st.context.cookies);
    nothing else about the student is kept."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if (
            scope["type"] != "http"
            or scope.get("method") != "GET"
            or not _wants_html(scope)
            or _has_cookie(scope, STUDENT_COOKIE)
        ):
            await self.app(scope, receive, send)
            return
        import secrets

        value = secrets.token_urlsafe(18)
        secure = "; Secure" if scope.get("scheme") == "https" else ""
        cookie = (
            f"{STUDENT_COOKIE}={value}; Path=/; Max-Age={STUDENT_MAX_AGE}; HttpOnly; "
            f"SameSite=Lax{secure}"
        ).encode("latin-1")

        async def send_with_cookie(message):
            if message["type"] == "http.response.start":
                message = dict(message)
                message["headers"] = list(message.get("headers") or []) + [(b"set-cookie", cookie)]
            await send(message)

        await self.app(scope, receive, send_with_cookie)


# ------------------------------------------------------------------ the tables of stops
# The tables of stops a run of this process named (instant.table), by their content's hash,
# gzipped as sent: the browser fetches them, and later runs of the same setting find theirs.
STOP_TABLES = ByteLRU(16 * MB, sizeof=lambda gz: len(gz) + 100)
TABLE_PATH = "/klrl-table/{tid}"


async def stop_table(request) -> Response:
    gz = STOP_TABLES.get(request.path_params["tid"])
    if gz is None:  # forgotten, or named by another process: the runs still draw every stop
        return JSONResponse({"error": "no such table"}, 404, headers={"Cache-Control": "no-store"})
    # one hash, one content: the browser keeps it (a setting seen again, a second visit)
    headers = {"Content-Encoding": "gzip", "Cache-Control": IMMUTABLE}
    return Response(gz, media_type="application/json", headers=headers)


TABLE_ROUTES = [Route(TABLE_PATH, stop_table, methods=["GET"])]
