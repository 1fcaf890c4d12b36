"""HTTP details of serving the app (app.py): unknown nested paths go to the page-not-found view."""

from __future__ import annotations

from urllib.parse import quote

from starlette.responses import RedirectResponse

# Paths with more than one segment that are Streamlit's own (scripts, websocket, media,
# components, the app's static folder); everything else with two or more segments is a
# mistyped or truncated link.
STREAMLIT_PREFIXES = {"_stcore", "static", "app", "media", "component", "~", "favicon.png",
                      "auth", "oauth2callback"}


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
        import streamlit as st   # the option is read once the server's config is loaded

        self.base = [p for p in (st.get_option("server.baseUrlPath") or "").split("/") if p]

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope.get("method") in {"GET", "HEAD"} and _wants_html(scope):
            parts = [p for p in scope["path"].split("/") if p]
            if parts[:len(self.base)] == self.base:   # under server.baseUrlPath, if set
                parts = parts[len(self.base):]
            if len(parts) >= 2 and parts[0] not in STREAMLIT_PREFIXES:
                target = "/" + "/".join(self.base + [quote("-".join(parts))])
                await RedirectResponse(target, status_code=307)(scope, receive, send)
                return
        await self.app(scope, receive, send)


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
                            entry["coordinates"] + "#file"] = made
                        return url
            except Exception:  # noqa: BLE001 - other internals: behave as Streamlit does
                return url
        return url

    execute_deferred._klrl = True
    MediaFileManager.execute_deferred = execute_deferred


STUDENT_COOKIE = "klrl_student"
STUDENT_MAX_AGE = 400 * 24 * 3600   # browsers cap a cookie's life at 400 days


def _has_cookie(scope, name: str) -> bool:
    want = f"{name}=".encode()
    return any(k == b"cookie" and any(part.strip().startswith(want) for part in v.split(b";"))
               for k, v in scope.get("headers") or [])


class StudentCookie:
    """ASGI middleware: a browser's page request without the ``klrl_student`` cookie gets one, a
    random value that a class session uses to know one student's answer from another's (a
    reload or a second tab is the same student). HttpOnly (no script reads it), SameSite=Lax,
    the whole site. The script sees it through the websocket's handshake (st.context.cookies);
    nothing else about the student is kept."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if (scope["type"] != "http" or scope.get("method") != "GET" or not _wants_html(scope)
                or _has_cookie(scope, STUDENT_COOKIE)):
            await self.app(scope, receive, send)
            return
        import secrets

        value = secrets.token_urlsafe(18)
        secure = "; Secure" if scope.get("scheme") == "https" else ""
        cookie = (f"{STUDENT_COOKIE}={value}; Path=/; Max-Age={STUDENT_MAX_AGE}; HttpOnly; "
                  f"SameSite=Lax{secure}").encode("latin-1")

        async def send_with_cookie(message):
            if message["type"] == "http.response.start":
                message = dict(message)
                message["headers"] = list(message.get("headers") or []) + [(b"set-cookie", cookie)]
            await send(message)

        await self.app(scope, receive, send_with_cookie)
