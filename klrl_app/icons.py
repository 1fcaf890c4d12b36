"""The icon font a phone downloads (serve.py): Streamlit's Material Symbols cut to the icons the
app and Streamlit's interface name, made by tools/subset_icons.py for the pinned Streamlit."""

from __future__ import annotations

from pathlib import Path

import streamlit

OUT = Path(__file__).parent / "vendor" / "icons"
MEDIA = Path(streamlit.__file__).parent / "static" / "static" / "media"


def streamlit_font() -> Path:
    """The Material Symbols font this Streamlit ships (its name carries a content hash)."""
    return next(MEDIA.glob("MaterialSymbols-Rounded.*.woff2"))


def subset_font() -> Path | None:
    """The cut font for this Streamlit's icon font, or None (made for another Streamlit)."""
    made = OUT / streamlit_font().name
    return made if made.is_file() else None
