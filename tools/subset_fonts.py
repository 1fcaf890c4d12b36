"""Make the fonts a phone downloads (klrl_app/fonts.py; serve.SmallFonts sends them in place of
Streamlit's): its icon font cut to the icons named, its text font to the scripts the app writes.

    python tools/subset_fonts.py            # writes klrl_app/vendor/fonts/<each font's name>

Run it again after moving the pinned Streamlit (README, Deploying): the output is named after
the font Streamlit ships, so a new Streamlit with a new font gets the full font until then
(tests/test_serve_fonts.py says so). Needs fontTools (requirements-dev.txt).

Text: Basic Latin to Latin Extended-B, combining accents, Greek, modifier letters (ᵏ, ᴺ), and
U+2000-U+2BFF (punctuation, super- and subscripts, letterlike signs, arrows, mathematical
operators, technical signs, shapes), the f-ligatures and U+FFFD. A character outside (Cyrillic, say) is
drawn from the device's own sans-serif font, as any character Source Sans lacks always was.

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

from klrl_app.fonts import ICONS, ITALIC, OUT, TEXT, streamlit_font  # noqa: E402


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
    static = streamlit_font(ICONS).parents[1] / "js"
    words = set()
    for path in static.glob("*.js"):
        text = path.read_text(errors="ignore")
        words |= set(re.findall(r"[\"'`]([a-z0-9_]+)[\"'`]", text))
        words |= set(re.findall(r":material/([a-z0-9_]+):", text))
    for path in [*ROOT.glob("*.py"), *ROOT.glob("pages/*.py"), *ROOT.glob("klrl_app/**/*.py")]:
        words |= set(re.findall(r":material/([a-z0-9_]+):", path.read_text()))
    return words & names


TEXT_RANGES = [
    (0x20, 0x24F),
    (0x300, 0x36F),
    (0x370, 0x3FF),
    (0x1D00, 0x1DBF),
    (0x2000, 0x2BFF),
    (0xFB00, 0xFB06),
    (0xFFFD, 0xFFFD),
]


def _options() -> subset.Options:
    options = subset.Options()
    options.flavor = "woff2"
    # fontTools' default features (kerning, ligatures, marks, fractions, locale forms): not the
    # small capitals, old-style or proportional figures and stylistic sets that no style names,
    # a third of the text font. Source Sans's figures are tabular by default, as the readouts'
    # font-variant-numeric: tabular-nums asks (it has no tnum feature to keep).
    options.layout_features = subset.Options().layout_features
    options.notdef_outline = True
    return options


def _save(font: TTFont, source: Path, what: str) -> None:
    target = OUT / source.name
    font.flavor = "woff2"
    font.save(target)
    print(
        f"{what}: {source.stat().st_size / 1000:.0f} kB -> "
        f"{target.stat().st_size / 1000:.0f} kB, {target.relative_to(ROOT)}"
    )


def cut_icons() -> None:
    source = streamlit_font(ICONS)
    font = TTFont(source, recalcTimestamp=False)  # the same bytes from every run
    names = ligatures(font)
    keep = wanted(set(names))
    cmap = font.getBestCmap()
    letters = {cmap[ord(c)] for c in "abcdefghijklmnopqrstuvwxyz0123456789_" if ord(c) in cmap}
    options = _options()
    options.layout_closure = False  # only the ligatures of the kept icons, not every one
    sub = subset.Subsetter(options)
    sub.populate(glyphs=sorted(letters | {names[n] for n in keep}))
    sub.subset(font)
    _save(font, source, f"{len(keep)} of {len(names)} icons")


def cut_text(pattern: str) -> None:
    source = streamlit_font(pattern)
    font = TTFont(source, recalcTimestamp=False)
    sub = subset.Subsetter(_options())
    sub.populate(unicodes=[u for lo, hi in TEXT_RANGES for u in range(lo, hi + 1)])
    sub.subset(font)
    _save(font, source, "text" if pattern == TEXT else "italic")


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.glob("*.woff2"):
        old.unlink()
    cut_icons()
    cut_text(TEXT)
    cut_text(ITALIC)


if __name__ == "__main__":
    main()
