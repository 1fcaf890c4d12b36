"""A page is its controls, its wiring to the figures (view_at) and its words (issue 35): no
page builds a trace or chooses an array's encoding, and none is long. Scanned statically.

Pages not yet thinned are listed in NOT_YET, each an expected failure (strict): a page that
is thinned fails here until it is taken off the list, so the test only tightens."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PAGES = Path(__file__).resolve().parents[1] / "pages"
MAX_PAGE_LINES = 400
MAX_ALL_LINES = 4_500

NOT_YET: set[str] = set()
ALL_NOT_YET = False  # pages/ in all is within MAX_ALL_LINES

# Chart-building calls (klrl_app.plots.Chart's methods, plotly's), by attribute or name.
DRAWING_CALLS = {
    "add",
    "add_trace",
    "add_bar",
    "add_scatter",
    "add_shape",
    "add_annotation",
    "update_layout",
    "update_traces",
    "hline",
    "vline",
    "note",
    "symbols",
    "gapped",
    "stack",
    "Chart",
    "Figure",
    "typed_arrays",
}
LAYOUT_WORDS = {
    "xaxis",
    "yaxis",
    "yaxis2",
    "legend",
    "margin",
    "bargap",
    "barmode",
    "shapes",
    "annotations",
    "hovermode",
}
TRACE_TYPES = {
    "scatter",
    "bar",
    "heatmap",
    "histogram",
    "box",
    "violin",
    "scattergl",
    "contour",
    "pie",
    "surface",
}
COMPACT_TYPES = {
    "float32",
    "float16",
    "int8",
    "int16",
    "int32",
    "uint8",
    "uint16",
    "uint32",
    "f4",
    "f2",
    "i1",
    "i2",
    "i4",
    "u1",
    "u2",
    "u4",
}


def findings(source: str) -> list[str]:
    """Where a page's source builds a trace or encodes an array: "line: what"."""
    out = []
    for node in ast.walk(ast.parse(source)):
        where = getattr(node, "lineno", 0)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
            if any(n.split(".")[0] == "plotly" for n in names) or any(
                a.name == "Chart" for a in node.names
            ):
                out.append(f"{where}: imports {', '.join(n for n in names if n)}")
        elif isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if name in DRAWING_CALLS:
                out.append(f"{where}: calls {name}(")
            elif name == "update" and {k.arg for k in node.keywords} & LAYOUT_WORDS:
                out.append(f"{where}: sets a chart's layout")
            elif name in ("astype", "asarray", "array") and any(
                _compact(a) for a in [*node.args, *(k.value for k in node.keywords)]
            ):
                out.append(f"{where}: casts to a compact dtype")
        elif isinstance(node, ast.Attribute):
            if node.attr in COMPACT_TYPES:
                out.append(f"{where}: np.{node.attr}")
            elif node.attr == "layout" and not (
                isinstance(node.value, ast.Name) and node.value.id == "layout"
            ):
                out.append(f"{where}: reaches into a chart's layout")
        elif isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values):
                if (
                    isinstance(k, ast.Constant)
                    and k.value == "type"
                    and isinstance(v, ast.Constant)
                    and v.value in TRACE_TYPES
                ):
                    out.append(f"{where}: a {v.value} trace as a dict")
    return out


def _compact(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr in COMPACT_TYPES) or (
        isinstance(node, ast.Constant) and node.value in COMPACT_TYPES
    )


def lines(path: Path) -> int:
    return len(path.read_text().splitlines())


def _params():
    for path in sorted(PAGES.glob("*.py")):
        marks = (
            [pytest.mark.xfail(strict=True, reason="not yet thinned (issue 35)")]
            if path.stem in NOT_YET
            else []
        )
        yield pytest.param(path, id=path.stem, marks=marks)


@pytest.mark.parametrize("path", list(_params()))
def test_a_page_is_controls_wiring_and_words(path):
    found = findings(path.read_text())
    assert not found, f"{path.name} builds figures or encodes arrays:\n" + "\n".join(found)
    assert lines(path) <= MAX_PAGE_LINES, f"{path.name}: {lines(path)} lines"


@pytest.mark.xfail(ALL_NOT_YET, strict=True, reason="pages not yet thinned (issue 35)")
def test_pages_in_all_are_short():
    total = sum(lines(p) for p in PAGES.glob("*.py"))
    assert total <= MAX_ALL_LINES, f"pages/: {total} lines"


def test_the_scan_finds_what_it_looks_for():
    """The scanner itself, on snippets (so a page that passes has been looked at)."""
    bad = {
        "import plotly.graph_objects as go": "imports",
        "from klrl_app.plots import Chart": "imports",
        "c.add('bar', x=x, y=y)": "calls add(",
        "fig.add_trace(t)": "calls add_trace(",
        "c = plots.Chart('x', 'y')": "calls Chart(",
        "c.update(xaxis={'range': [0, 1]})": "layout",
        "y = y.astype(np.float32)": "np.float32",
        "y = np.asarray(y, dtype='f4')": "compact dtype",
        "t = {'type': 'scatter', 'x': x}": "scatter trace",
        "c.layout['shapes'].append(s)": "chart's layout",
        "d = plots.gapped(x, curves)": "calls gapped(",
    }
    for src, what in bad.items():
        assert any(what in f for f in findings(src)), src
    good = (
        "view = page.follow(layout.Instant('k', view_at))\nlayout.table(df)\n"
        "x = ks.astype(int)\nsettings.update(a=1)\nst.markdown(f'{k}')"
    )
    assert findings(good) == []
