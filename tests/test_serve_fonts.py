"""The cut fonts (klrl_app/fonts.py, serve.SmallFonts): made for the pinned Streamlit's fonts,
holding every icon that Streamlit's interface and the app name and every character the app
writes, and sent in the full fonts' place. A missing icon would show as its name's letters."""

from __future__ import annotations

from tests.conftest import run_async

import glob
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

from fontTools.ttLib import TTFont  # noqa: E402  (requirements-dev.txt)
from subset_fonts import ligatures  # noqa: E402

from klrl_app import fonts, serve  # noqa: E402
from tests.test_serve import request  # noqa: E402

APP_SOURCES = [
    *ROOT.glob("*.py"),
    *ROOT.glob("pages/*.py"),
    *ROOT.glob("klrl_app/**/*.py"),
    *ROOT.glob("klrl_app/**/*.js"),
    *ROOT.glob("klrl_core/*.py"),
]


def _named(files) -> set[str]:
    found = set()
    for path in files:
        found |= set(re.findall(r":material/([a-z0-9_]+):", Path(path).read_text(errors="ignore")))
    return found


def test_the_cuts_are_made_for_this_streamlits_fonts():
    for pattern in (fonts.ICONS, fonts.TEXT, fonts.ITALIC):
        assert fonts.cut(pattern) is not None, (
            f"no cut of this Streamlit's {pattern}: run `python tools/subset_fonts.py`"
        )


def test_every_icon_named_is_in_the_cut_as_in_the_full_font():
    full = ligatures(TTFont(fonts.streamlit_font(fonts.ICONS)))
    cut = ligatures(TTFont(fonts.cut(fonts.ICONS)))
    streamlit_js = glob.glob(str(fonts.MEDIA.parent / "js" / "*.js"))
    named = (_named(streamlit_js) | _named(APP_SOURCES)) & set(full)
    assert {"expand_more", "keyboard_double_arrow_left", "casino", "co_present"} <= named
    assert named <= set(cut)
    assert len(cut) < len(full) / 4  # a cut, not the whole font
    assert fonts.cut(fonts.ICONS).stat().st_size < 100_000


@pytest.mark.parametrize("pattern", [fonts.TEXT, fonts.ITALIC])
def test_every_character_the_app_writes_is_in_the_text_cut_as_in_the_full_font(pattern):
    full = TTFont(fonts.streamlit_font(pattern)).getBestCmap()
    cut = TTFont(fonts.cut(pattern)).getBestCmap()
    written = {ord(c) for path in APP_SOURCES for c in Path(path).read_text()}
    assert {ord(c) for c in "βκπΣ≤≥−√…✓"} <= written & set(cut)
    assert not {chr(u) for u in (written & set(full)) - set(cut)}
    assert fonts.cut(pattern).stat().st_size < 0.7 * fonts.streamlit_font(pattern).stat().st_size


def test_the_cuts_are_sent_in_the_full_fonts_place():
    async def streamlit(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"streamlit"})

    app = serve.SmallFonts(streamlit)
    for pattern in (fonts.ICONS, fonts.TEXT, fonts.ITALIC):
        path = "/static/media/" + fonts.streamlit_font(pattern).name
        status, head, body = run_async(request(app, path))
        assert status == 200 and body == fonts.cut(pattern).read_bytes()
        assert head["content-type"] == "font/woff2" and "immutable" in head["cache-control"]
        assert run_async(request(app, "/base" + path))[2] == body  # under baseUrlPath
    other = "/static/media/" + fonts.streamlit_font("SourceCodeVF-Upright*.woff2").name
    assert run_async(request(app, other))[2] == b"streamlit"
    assert run_async(request(app, "/static/js/MaterialSymbols.js"))[2] == b"streamlit"
