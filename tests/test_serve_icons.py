"""The cut icon font (klrl_app/icons.py, serve.SmallIcons): made for the pinned Streamlit's font,
holding every icon that Streamlit's interface and the app name, and sent in the full font's
place. A missing icon would show as its name's letters."""

from __future__ import annotations

import asyncio
import glob
import re
import sys
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

from fontTools.ttLib import TTFont  # noqa: E402  (requirements-dev.txt)
from subset_icons import ligatures  # noqa: E402

from klrl_app import icons, serve  # noqa: E402
from tests.test_serve import request  # noqa: E402


def _named(pattern_files) -> set[str]:
    found = set()
    for path in pattern_files:
        found |= set(re.findall(r":material/([a-z0-9_]+):", Path(path).read_text(errors="ignore")))
    return found


def test_the_cut_is_made_for_this_streamlits_font():
    assert icons.subset_font() is not None, (
        "no cut of this Streamlit's icon font: run `python tools/subset_icons.py` and commit it")


def test_every_icon_named_is_in_the_cut_as_in_the_full_font():
    full = ligatures(TTFont(icons.streamlit_font()))
    cut = ligatures(TTFont(icons.subset_font()))
    streamlit_js = glob.glob(str(icons.MEDIA.parent / "js" / "*.js"))
    ours = [*ROOT.glob("*.py"), *ROOT.glob("pages/*.py"), *ROOT.glob("klrl_app/**/*.py")]
    named = (_named(streamlit_js) | _named(ours)) & set(full)
    assert {"expand_more", "keyboard_double_arrow_left", "casino", "co_present"} <= named
    assert named <= set(cut)
    assert len(cut) < len(full) / 4                  # a cut, not the whole font
    assert icons.subset_font().stat().st_size < 100_000


def test_the_cut_is_sent_in_the_full_fonts_place():
    async def streamlit(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"streamlit"})

    app = serve.SmallIcons(streamlit)
    font = "/static/media/" + icons.streamlit_font().name
    status, head, body = asyncio.run(request(app, font))
    assert status == 200 and body == icons.subset_font().read_bytes()
    assert head["content-type"] == "font/woff2" and "immutable" in head["cache-control"]
    assert asyncio.run(request(app, "/base" + font))[2] == body        # under baseUrlPath
    assert asyncio.run(request(app, "/static/media/SourceSansVF-Upright.woff2"))[2] == \
        b"streamlit"
