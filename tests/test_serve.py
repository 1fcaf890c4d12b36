"""klrl_app/serve.py's ImmutableAssets without a server: an immutable asset is compressed once
per process, whatever the number of visitors arriving together (issue 33)."""

from __future__ import annotations

from tests.conftest import run_async

import asyncio
import gzip
import time

import brotli
from starlette.middleware.gzip import GZipMiddleware

from klrl_app.serve import IMMUTABLE, ImmutableAssets

BODY = b"function f(){return 1}\n" * 4000


def app_counting(calls: list, status: int = 200, cache: str = "public, immutable, max-age=1"):
    async def app(scope, receive, send):
        calls.append(scope["path"])
        await asyncio.sleep(0.01)  # a class arrives while the first is being served
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/javascript"),
                    (b"cache-control", cache.encode()),
                ],
            }
        )
        for i in range(0, len(BODY), 16384):  # as Starlette's FileResponse: in chunks
            await send(
                {
                    "type": "http.response.body",
                    "body": BODY[i : i + 16384],
                    "more_body": i + 16384 < len(BODY),
                }
            )

    return app


async def request(app, path: str, encoding: str = "gzip") -> tuple[int, dict, bytes]:
    scope = {
        "type": "http",
        "method": "GET",
        "path": path,
        "headers": [(b"accept-encoding", encoding.encode())],
    }
    out: dict = {"body": b""}

    async def receive():
        return {"type": "http.request", "body": b""}

    async def send(message):
        if message["type"] == "http.response.start":
            out["status"] = message["status"]
            out["headers"] = {k.decode(): v.decode() for k, v in message["headers"]}
        else:
            out["body"] += message.get("body", b"")

    await app(scope, receive, send)
    return out["status"], out["headers"], out["body"]


def test_a_class_arriving_together_costs_one_compression():
    calls: list = []
    app = ImmutableAssets(GZipMiddleware(app_counting(calls)))

    async def class_of(n):
        return await asyncio.gather(*(request(app, "/static/js/index.abc.js") for _ in range(n)))

    answers = run_async(class_of(30)) + run_async(class_of(5))
    assert calls == ["/static/js/index.abc.js"]
    for status, headers, body in answers:
        assert status == 200 and headers["content-encoding"] == "gzip"
        assert gzip.decompress(body) == BODY and len(body) < len(BODY) / 10


def test_brotli_follows_in_the_background_and_errors_are_never_kept():
    calls: list = []
    app = ImmutableAssets(GZipMiddleware(app_counting(calls)))
    _, headers, _ = run_async(request(app, "/static/js/a.js", "gzip, br"))
    assert headers["content-encoding"] == "gzip"  # the first visitor does not wait
    deadline = time.monotonic() + 30
    while (("/static/js/a.js", "br") not in app.bodies) and time.monotonic() < deadline:
        time.sleep(0.05)
    _, headers, body = run_async(request(app, "/static/js/a.js", "gzip, br"))
    assert headers["content-encoding"] == "br" and brotli.decompress(body) == BODY
    assert headers["content-length"] == str(len(body)) and calls == ["/static/js/a.js"]

    missing: list = []
    app = ImmutableAssets(GZipMiddleware(app_counting(missing, status=404)))
    for _ in range(2):
        assert run_async(request(app, "/static/js/gone.js"))[0] == 404
    assert len(missing) == 2


def test_the_apps_hashed_files_get_a_years_lifetime_and_others_are_left_alone():
    calls: list = []
    app = ImmutableAssets(GZipMiddleware(app_counting(calls, cache="no-cache")))
    _, headers, _ = run_async(request(app, "/app/static/plotly-basic-4.1.1.0123456789ab.min.js"))
    assert headers["cache-control"] == IMMUTABLE
    _, headers, _ = run_async(
        request(app, "/app/static/plotly-basic-4.1.1.0123456789ab.min.js", "identity")
    )
    assert headers["cache-control"] == IMMUTABLE
    assert len(calls) == 2  # the uncompressed one is not kept
    _, headers, _ = run_async(request(app, "/app/static/notes.js"))
    assert headers["cache-control"] == "no-cache"
    run_async(request(app, "/app/static/notes.js"))
    assert calls.count("/app/static/notes.js") == 2  # not immutable: asked every time


def test_a_compressed_asset_is_sent_whole_and_takes_no_ranges():
    """A browser that kept part of a compressed script (a tab closed mid-download) resumes it
    with a byte range only if the response said it accepts ranges; the app would answer that
    range from the uncompressed file, and the joined script ends too early. So a compressed
    asset never says accept-ranges, and a range asked for anyway gets the whole body."""
    calls: list = []

    def with_ranges(app):
        async def ranged(scope, receive, send):
            async def tagged(message):
                if message["type"] == "http.response.start":
                    message = dict(
                        message, headers=list(message["headers"]) + [(b"accept-ranges", b"bytes")]
                    )
                await send(message)

            await app(scope, receive, tagged)

        return ranged

    app = ImmutableAssets(GZipMiddleware(with_ranges(app_counting(calls))))
    first = run_async(request(app, "/static/js/index.abc.js"))
    assert "accept-ranges" not in first[1]

    async def ranged_request():
        scope = {
            "type": "http",
            "method": "GET",
            "path": "/static/js/index.abc.js",
            "headers": [
                (b"accept-encoding", b"gzip"),
                (b"range", b"bytes=1000-"),
                (b"if-range", b'"abc"'),
            ],
        }
        out: dict = {"body": b""}

        async def receive():
            return {"type": "http.request", "body": b""}

        async def send(message):
            if message["type"] == "http.response.start":
                out["status"], out["headers"] = message["status"], dict(message["headers"])
            else:
                out["body"] += message.get("body", b"")

        await app(scope, receive, send)
        return out

    out = run_async(ranged_request())
    assert out["status"] == 200 and b"accept-ranges" not in out["headers"]
    assert gzip.decompress(out["body"]) == BODY


def test_a_download_cut_short_is_never_kept():
    """A visitor who leaves mid-download ends Starlette's file response early, without an
    error: the body so far is not the asset, and must not be what later visitors get."""
    calls: list = []

    def app_cut(calls):
        async def app(scope, receive, send):
            calls.append(scope["path"])
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [
                        (b"content-type", b"application/javascript"),
                        (b"cache-control", b"public, immutable, max-age=1"),
                    ],
                }
            )
            if len(calls) == 1:  # the first visitor leaves after the first chunk
                await send({"type": "http.response.body", "body": BODY[:16384], "more_body": True})
                return
            await send({"type": "http.response.body", "body": BODY, "more_body": False})

        return app

    app = ImmutableAssets(GZipMiddleware(app_cut(calls)))
    run_async(request(app, "/static/js/index.cut.js"))
    status, headers, body = run_async(request(app, "/static/js/index.cut.js"))
    assert status == 200 and gzip.decompress(body) == BODY
    assert calls == ["/static/js/index.cut.js"] * 2  # the cut one was not kept
    assert run_async(request(app, "/static/js/index.cut.js"))[2] == body
    assert len(calls) == 2  # the whole one is
