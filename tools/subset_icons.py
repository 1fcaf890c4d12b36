"""Make the icon font a phone downloads: Streamlit's Material Symbols (375 kB) cut to the icons
this app and Streamlit's own interface can name (serve.py sends it in place of the full font).

    python tools/subset_icons.py            # writes klrl_app/vendor/icons/<font's name>

Run it again after moving the pinned Streamlit (README, Deploying): the output is named after
the font Streamlit ships, so a new Streamlit with a new font gets the full font until then
(tests/test_serve_icons.py says so). Needs fontTools (requirements-dev.txt).

Kept: every icon name written in Streamlit's frontend, as `:material/name:` (the icons its
interface draws: expand_more, keyboard_double_arrow_left, ...) or as a plain string, and every
`:material/name:` in this repository's Python (the pages' icons, the class screens' buttons). A name kept that Streamlit never
draws costs a few hundred bytes; one dropped would show as its letters.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from fontTools import subset
from fontTools.ttLib import TTFont

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from klrl_app.icons import OUT, streamlit_font  # noqa: E402


def ligatures(font: TTFont) -> dict[str, str]:
    """Icon name -> its glyph, from the font's ligature substitutions."""
    cmap = {glyph: chr(code) for code, glyph in font.getBestCmap().items()}
    names = {}
    for lookup in font["GSUB"].table.LookupList.Lookup:
        for table in lookup.SubTable:
            table = table.ExtSubTable if lookup.LookupType == 7 else table
            for first, ligs in getattr(table, "ligatures", {}).items():
                for lig in ligs:
                    name = cmap.get(first, "") + "".join(cmap.get(c, "?") for c in lig.Component)
                    names[name] = lig.LigGlyph
    return names


def wanted(names: set[str]) -> set[str]:
    static = Path(streamlit_font()).parents[1] / "js"
    words = set()
    for path in static.glob("*.js"):
        text = path.read_text(errors="ignore")
        words |= set(re.findall(r"[\"'`]([a-z0-9_]+)[\"'`]", text))
        words |= set(re.findall(r":material/([a-z0-9_]+):", text))
    for path in [*ROOT.glob("*.py"), *ROOT.glob("pages/*.py"), *ROOT.glob("klrl_app/**/*.py")]:
        words |= set(re.findall(r":material/([a-z0-9_]+):", path.read_text()))
    return words & names


def main() -> None:
    source = Path(streamlit_font())
    font = TTFont(source, recalcTimestamp=False)     # the same bytes from every run
    names = ligatures(font)
    keep = wanted(set(names))
    cmap = font.getBestCmap()
    letters = {cmap[ord(c)] for c in "abcdefghijklmnopqrstuvwxyz0123456789_" if ord(c) in cmap}
    options = subset.Options()
    options.flavor = "woff2"
    options.layout_closure = False       # only the ligatures of the kept icons, not every one
    options.layout_features = ["*"]
    options.notdef_outline = True
    sub = subset.Subsetter(options)
    sub.populate(glyphs=sorted(letters | {names[n] for n in keep}))
    sub.subset(font)
    OUT.mkdir(parents=True, exist_ok=True)
    target = OUT / source.name
    for old in OUT.glob("*.woff2"):
        old.unlink()
    font.flavor = "woff2"
    font.save(target)
    print(f"{len(keep)} of {len(names)} icons, {source.stat().st_size / 1000:.0f} kB -> "
          f"{target.stat().st_size / 1000:.0f} kB: {target.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
