"""What crosses the wire on a first load (issue 33): every text response compressed when the
browser accepts it, the hashed assets cached for a year. Against the session's real server."""

from __future__ import annotations

import gzip
import re
import time
import urllib.request
from pathlib import Path

import brotli
import pytest

from klrl_app import plots
from tests.e2e import harness

IMMUTABLE = "public, max-age=31536000, immutable"


def get(
    url: str, encoding: str | None = "gzip, deflate, br", accept: str = "*/*"
) -> tuple[int, dict, bytes]:
    headers = {"Accept": accept}
    if encoding:
        headers["Accept-Encoding"] = encoding
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=30) as r:
        return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read()


def decoded(headers: dict, body: bytes) -> bytes:
    coding = headers.get("content-encoding")
    if coding == "gzip":
        return gzip.decompress(body)
    if coding == "br":
        return brotli.decompress(body)
    assert coding is None, coding
    return body


def script_of(app_url: str) -> str:
    """The path of Streamlit's main script bundle, as the page names it."""
    _, headers, body = get(f"{app_url}/tilt")
    return "/" + re.search(
        r'src="\./(static/js/index\.[^"]+\.js)"', decoded(headers, body).decode()
    ).group(1)


def test_the_page_is_compressed(app_url):
    _, plain_headers, plain = get(f"{app_url}/tilt", encoding=None)
    status, headers, body = get(f"{app_url}/tilt", encoding="gzip")
    assert status == 200 and headers["content-encoding"] == "gzip"
    assert "content-encoding" not in plain_headers
    assert decoded(headers, body) == plain and len(body) < len(plain) / 2
    # The root page too (Streamlit leaves it out of its own gzip).
    _, headers, _ = get(f"{app_url}/", encoding="gzip")
    assert headers["content-encoding"] == "gzip"


def test_streamlits_scripts_are_compressed_once_and_cached_for_a_year(app_url):
    path = script_of(app_url)
    shipped = (
        Path(__import__("streamlit").__file__).parent / "static" / path.lstrip("/")
    ).read_bytes()
    _, headers, first = get(app_url + path, encoding="gzip")
    _, headers2, second = get(app_url + path, encoding="gzip")
    assert headers["content-encoding"] == headers2["content-encoding"] == "gzip"
    assert decoded(headers, first) == decoded(headers2, second) == shipped
    assert len(second) < len(shipped) / 2 and headers2["content-length"] == str(len(second))
    assert "immutable" in headers2["cache-control"]
    # A browser that accepts brotli gets the brotli copy once it is made (in the background).
    deadline = time.monotonic() + 60
    while True:
        _, headers, body = get(app_url + path, encoding="gzip, br")
        if headers["content-encoding"] == "br" or time.monotonic() > deadline:
            break
        time.sleep(0.5)  # poll interval of a bounded wait
    assert headers["content-encoding"] == "br"
    assert decoded(headers, body) == shipped and len(body) < len(second)
    # Without Accept-Encoding: the file as it is.
    _, headers, body = get(app_url + path, encoding=None)
    assert "content-encoding" not in headers and body == shipped


@pytest.mark.parametrize("name", [plots.PLOTLY_BASIC_JS, plots.PLOTLY_JS])
def test_the_plotly_bundles_are_compressed_and_immutable(app_url, name):
    assert plots.publish_plotly_js()
    assert re.fullmatch(r"plotly-(basic|full)-[\d.]+\.[0-9a-f]{12}\.min\.js", name)
    source = plots.BASIC_SOURCE if "basic" in name else plots.FULL_SOURCE
    for encoding in ("gzip", "gzip, br", None):
        status, headers, body = get(f"{app_url}/app/static/{name}", encoding=encoding)
        assert status == 200 and headers["cache-control"] == IMMUTABLE
        assert decoded(headers, body) == source.read_bytes()
        if encoding:
            assert headers["content-encoding"] in ("gzip", "br")
            assert len(body) < len(source.read_bytes()) / 2


def test_json_is_compressed(app_url):
    _, plain_headers, plain = get(f"{app_url}/_stcore/agent/openapi.json", encoding=None)
    assert plain_headers["content-type"].startswith("application/json") and len(plain) > 500
    _, headers, body = get(f"{app_url}/_stcore/agent/openapi.json", encoding="gzip")
    assert headers["content-encoding"] == "gzip" and decoded(headers, body) == plain


def test_a_drawn_page_preloads_its_plotly_bundle_and_every_page_draws_with_the_basic_one(
    app_url, open_page
):
    """After a page has drawn its charts once, its HTML names their bundle (fetched alongside
    Streamlit's scripts). token-credit's trees, once icicles, are bars and shapes now: moving
    there within the app loads no second bundle (tests/test_plots.py checks that a figure
    with another trace type would ask for the full one)."""
    page = open_page("tilt")
    harness.wait_charts(page, at_least=2)
    page.click("a[href$='token-credit']")  # within the app: the basic bundle is loaded
    page.wait_for_function("() => location.pathname.endsWith('/token-credit')")
    harness.wait_charts(page, at_least=3)
    scripts = page.evaluate(
        "() => Array.from(document.scripts).map(s => s.src)"
        ".filter(s => s.includes('/app/static/plotly-'))"
    )
    assert [s.rsplit("/", 1)[1] for s in scripts] == [plots.PLOTLY_BASIC_JS]
    for slug in ("tilt", "token-credit"):
        _, headers, body = get(f"{app_url}/{slug}", encoding="gzip", accept="text/html")
        assert headers["content-encoding"] == "gzip"
        html = decoded(headers, body).decode()
        assert (
            f'<link rel="preload" as="script" href="./app/static/{plots.PLOTLY_BASIC_JS}">' in html
        )
        assert html.count('rel="preload" as="script"') == 1


def test_the_icon_font_is_the_cut_and_every_icon_draws_as_one(app_url, open_page):
    """serve.SmallFonts sends the cut Material Symbols (klrl_app/fonts.py): each icon on the
    page, Streamlit's own (the sidebar's, the expanders') and the app's (the pages' and the
    class screens'), is drawn as one glyph, not spelled out in letters."""
    from klrl_app import fonts

    asked: list[str] = []
    page = open_page(
        "tilt", on_request=lambda r: asked.append(r.url) if "MaterialSymbols" in r.url else None
    )
    harness.wait_charts(page, at_least=1)
    harness.wait_idle(page)
    page.wait_for_function("() => document.fonts.status === 'loaded'")
    assert asked, "the page asked for no icon font"
    status, head, body = get(asked[0])
    assert status == 200 and body == fonts.cut(fonts.ICONS).read_bytes()
    widths = page.evaluate("""() => [...document.querySelectorAll(
        '[data-testid=stIconMaterial], [data-testid=stExpanderIcon]')]
        .filter(e => e.getBoundingClientRect().width > 0)
        .map(e => [e.textContent, e.getBoundingClientRect().width,
                   e.getBoundingClientRect().height])""")
    assert len(widths) >= 10
    spelled = [(t, w) for t, w, h in widths if w > 1.6 * h]  # a word, not a glyph
    assert not spelled, spelled
