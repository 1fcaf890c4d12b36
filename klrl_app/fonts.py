"""The fonts a phone downloads (serve.SmallFonts): two of Streamlit's own, cut by
tools/subset_fonts.py for the pinned Streamlit. Material Symbols (its icons, 375 kB) to the
icons Streamlit's interface and the app name; Source Sans (its text, 170 kB upright and
138 kB italic) to the scripts the app writes in (Latin, Greek, punctuation, arrows, mathematical signs)."""

from __future__ import annotations

from pathlib import Path

import streamlit

OUT = Path(__file__).parent / "vendor" / "fonts"
MEDIA = Path(streamlit.__file__).parent / "static" / "static" / "media"
ICONS = "MaterialSymbols-Rounded.*.woff2"
TEXT = "SourceSansVF-Upright.ttf.*.woff2"
ITALIC = "SourceSansVF-Italic.ttf.*.woff2"


def streamlit_font(pattern: str) -> Path:
    """The font of this name that this Streamlit ships (its name carries a content hash)."""
    return next(MEDIA.glob(pattern))


def cut(pattern: str) -> Path | None:
    """The cut of this Streamlit's font, or None (made for another Streamlit's font)."""
    made = OUT / streamlit_font(pattern).name
    return made if made.is_file() else None


def cuts() -> dict[str, bytes]:
    """Font file name (as Streamlit serves it under /static/media/) -> the cut's bytes."""
    return {
        streamlit_font(p).name: made.read_bytes()
        for p in (ICONS, TEXT, ITALIC)
        if (made := cut(p)) is not None
    }
