"""One look for every figure: the chapter's colours, axis styling and chart options.

Colours follow the chapter's figures (reference violet, optimum blue, best-of-n green,
proxy orange, true reward aqua, correct green, incorrect red, no signal grey); they are
mid-tones that read on Streamlit's light and dark themes alike.

Figures are described as plain dicts in a ``Chart`` and sent as JSON without building a
plotly Figure: validating one costs 5-8 ms of server time per chart and slider move (building
it call by call, add_bar, update_layout, ..., 5-10 times more). tests/test_plots.py validates
every chart the pages draw instead.

Charts are drawn by a small component (live_chart.js) that keeps each chart in the page and
updates it with Plotly.react. st.plotly_chart would mount a new chart on every slider move,
because its element id follows the figure: about twice the browser's drawing work
(benchmarks/plotly_redraw.py, benchmarks/RESULTS.md).
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import os
import secrets
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import plotly
import plotly.graph_objects as go
import plotly.io as pio
import plotly.offline
import streamlit as st

from klrl_app.controls import PRESENT_KEY
from klrl_app.serve import PRELOADS

log = logging.getLogger(__name__)
ROOT = Path(__file__).resolve().parents[1]

COLORS = {
    "reference": "#8b5cf6",  # violet: pi0
    "optimum": "#3b82f6",  # blue: pi*
    "best_of_n": "#16a34a",  # green: pi_n
    "proxy": "#f97316",  # orange: proxy reward r
    "true": "#14b8a6",  # aqua: true reward r*
    "correct": "#22c55e",
    "incorrect": "#ef4444",
    "neutral": "#9ca3af",  # grey
    "run": "rgba(59, 130, 246, 0.35)",
    "accent": "#ec4899",
}

# ✓ and ✗ drawn in colour (Chart.symbols): the palette's darker green (3.3:1 on the light
# background, 5.4:1 on the dark one; "correct" is 2.3:1 on white) and its red (3.8:1, 4.7:1).
SYMBOL_COLORS = {"correct": COLORS["best_of_n"], "incorrect": COLORS["incorrect"]}

# The charts' own look, close to Streamlit's chart theme but neutral: transparent backgrounds
# and mid-grey text read on the light and the dark theme alike (app.py's CSS gives the legend
# the theme's text colour). Drawn with theme=None, because applying Streamlit's theme in the
# browser costs ~60-100 ms per redraw (benchmarks/RESULTS.md). Tick labels may overflow
# (ticklabeloverflow "allow"): automargin already keeps them inside the chart, and plotly.js's
# default check measures every label again on each redraw, 3-6 ms a chart.
FONT = '"Source Sans", sans-serif'
TEMPLATE = {
    "layout": {
        "font": {"family": FONT, "size": 13, "color": "#808495"},
        "paper_bgcolor": "rgba(0,0,0,0)",
        "plot_bgcolor": "rgba(0,0,0,0)",
        "colorway": [
            COLORS[k]
            for k in (
                "optimum",
                "proxy",
                "best_of_n",
                "reference",
                "true",
                "incorrect",
                "accent",
                "neutral",
            )
        ],
        "xaxis": {
            "showgrid": False,
            "ticks": "",
            "showline": False,
            "zeroline": False,
            "title": {"font": {"size": 14}},
            "ticklabeloverflow": "allow",
        },
        "yaxis": {
            "showgrid": True,
            "gridcolor": "rgba(128, 132, 149, 0.25)",
            "ticks": "",
            "showline": False,
            "zeroline": False,
            "title": {"font": {"size": 14}},
            "ticklabeloverflow": "allow",
        },
        "hoverlabel": {"font": {"family": FONT, "size": 13}},
        "modebar": {"bgcolor": "rgba(0,0,0,0)", "color": "#a0a4b0", "activecolor": "#3b82f6"},
    }
}

# Modebar: keep the camera (PNG for slides), zoom, pan and reset; drop the rest, including
# plotly.js 4's "Share chart" (it uploads the figure to Plotly's cloud).
CHART_CONFIG = {
    "displaylogo": False,
    "modeBarButtonsToRemove": [
        "select2d",
        "lasso2d",
        "autoScale2d",
        "toggleSpikelines",
        "hoverClosestCartesian",
        "hoverCompareCartesian",
        "sendChartToCloud",
    ],
    "toImageButtonOptions": {"format": "png", "scale": 2},
}


def merge_into(base: dict, extra: dict) -> dict:
    """Deep-merge ``extra`` into ``base`` in place and return ``base`` (``merged``: a copy)."""
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            merge_into(base[key], value)
        else:
            base[key] = value
    return base


class Chart:
    """A figure under construction: traces and layout as dicts, validated once in ``figure``."""

    def __init__(self, x_title: str, y_title: str, height: int = 360, **layout: Any):
        self.data: list[dict] = []
        self.layout: dict = merge_into(
            {
                "height": height,
                "margin": {"l": 8, "r": 8, "t": 36, "b": 8},
                "legend": {
                    "orientation": "h",
                    "yanchor": "bottom",
                    "y": 1.0,
                    "xanchor": "left",
                    "x": 0,
                    "bgcolor": "rgba(0,0,0,0)",
                },
                "hovermode": "closest",
                "bargap": 0.15,
                "xaxis": {"title": {"text": x_title}, "zeroline": False, "automargin": True},
                "yaxis": {"title": {"text": y_title}, "zeroline": False, "automargin": True},
                "shapes": [],
                "annotations": [],
            },
            layout,
        )
        self.layout.setdefault("template", TEMPLATE)  # shared, never merged into: no copy

    def add(self, type: str = "scatter", **trace: Any) -> Chart:
        """Add a trace, e.g. ``add("bar", x=..., y=..., name=...)``."""
        self.data.append({"type": type, **trace})
        return self

    def update(self, **layout: Any) -> Chart:
        """Deep-merge layout settings, e.g. ``update(xaxis={"range": [0, 1]})``."""
        merge_into(self.layout, layout)
        return self

    def hline(self, y: float, color: str, dash: str = "dot", label: str | None = None) -> Chart:
        """A horizontal reference line across the plot, labelled at its right end."""
        self.layout["shapes"].append(
            {
                "type": "line",
                "xref": "x domain",
                "x0": 0,
                "x1": 1,
                "yref": "y",
                "y0": y,
                "y1": y,
                "line": {"color": color, "dash": dash, "width": 2},
            }
        )
        if label:
            self.layout["annotations"].append(
                {
                    "xref": "x domain",
                    "x": 1,
                    "yref": "y",
                    "y": y,
                    "text": label,
                    "showarrow": False,
                    "xanchor": "right",
                    "yanchor": "top",
                    "font": {"color": color},
                }
            )
        return self

    def vline(self, x: float, color: str, dash: str = "dot", width: float = 1) -> Chart:
        """A vertical reference line across the plot."""
        self.layout["shapes"].append(
            {
                "type": "line",
                "yref": "y domain",
                "y0": 0,
                "y1": 1,
                "xref": "x",
                "x0": x,
                "x1": x,
                "line": {"color": color, "dash": dash, "width": width},
            }
        )
        return self

    def note(self, x: float, y: float, text: str, color: str, ay: int = -34, **extra: Any) -> Chart:
        """An annotation at (x, y): an arrow by default; ``extra`` overrides any setting."""
        self.layout["annotations"].append(
            {
                "x": x,
                "y": y,
                "text": text,
                "showarrow": True,
                "arrowhead": 2,
                "ax": 0,
                "ay": ay,
                "font": {"color": color},
                "arrowcolor": color,
                **extra,
            }
        )
        return self

    def symbols(
        self,
        x: Any,
        y: float,
        texts: list[str],
        colors: list[str],
        yaxis: str = "y",
        size: int = 16,
    ) -> Chart:
        """Coloured marks such as ✓ and ✗ at (x, y), drawn as a text trace: the browser gives
        every annotation the theme's text colour (live_chart.js), a trace's text keeps its
        own. The symbol itself is the cue that does not need colour; pick colours with 3:1
        contrast on both themes' backgrounds (SYMBOL_COLORS)."""
        return self.add(
            x=x,
            y=[y] * len(texts),
            mode="text",
            text=texts,
            yaxis=yaxis,
            textfont={"color": colors, "size": size, "weight": "bold"},
            textposition="middle center",
            cliponaxis=False,
            showlegend=False,
            hoverinfo="skip",
        )

    def figure(self) -> dict:
        """The figure as plotly's JSON structure (validated in the tests, not here)."""
        return {"data": self.data, "layout": self.layout}

    def to_json(self) -> str:
        """The figure as JSON, numeric arrays as base64 typed arrays (a third of the size of
        number lists, and what plotly's own Figure.to_json sends)."""
        return pio.to_json(typed_arrays(self.figure()), validate=False)


def stack(upper: Chart, lower: Chart, left: int, right: int | None = None) -> None:
    """Draw two charts as one figure's panels, ``upper`` over ``lower`` on the upper's x axis.
    A chart each, not two panels of one, when the upper part moves with the slider and the
    lower is costly: plotly.js recomputes every trace of a chart when one changes, and the
    browser draws a page's first chart a frame before the others. One left (and right) margin
    for both, wide enough for either's labels, so the plot areas line up; the x labels and
    title only under the lower one."""
    margin = {"l": left} if right is None else {"l": left, "r": right}
    lower.update(
        xaxis={name: value for name, value in upper.layout["xaxis"].items() if name != "title"},
        margin={**margin, "t": 8},
    )
    upper.update(xaxis={"title": {"text": ""}, "showticklabels": False}, margin={**margin, "b": 4})


def gapped(x: Any, curves: Any, tags: Any = None) -> dict:
    """Curves over the same x as one trace's ``x``, ``y`` (and ``customdata``): each curve's
    points, then one point at x = NaN, which breaks the line. plotly.js redraws one trace much
    faster than many, which a figure that follows the thumb needs. ``y`` keeps the curves'
    dtype (one byte where they fit), 0 under each gap; ``tags``, one per curve (a run number, a
    sign), go to every point of their curve as customdata, for the hover."""
    curves = [np.asarray(c) for c in curves]
    n = len(x) + 1
    xs = np.full((len(curves), n), np.nan, dtype=np.float32)
    xs[:, :-1] = x
    ys = np.zeros((len(curves), n), dtype=np.result_type(*curves))
    ys[:, :-1] = curves
    out = {"x": xs.ravel(), "y": ys.ravel()}
    if tags is not None:
        out["customdata"] = np.repeat(np.asarray(tags), n)
    return out


# plotly.js reads {"dtype", "bdata"} arrays of these little-endian types.
_TYPED = {"f8", "f4", "i4", "i2", "i1", "u4", "u2", "u1"}


_INTS = [np.dtype(t) for t in ("u1", "i1", "u2", "i2", "u4", "i4")]
F32_MAX = float(np.finfo(np.float32).max)


def compact(arr: np.ndarray) -> np.ndarray:
    """``arr`` in the fewest bytes that draw the same chart: whole numbers (floats too, when
    every one is whole and finite) in the smallest integer type that holds them, other floats
    as 4-byte floats (7 digits, far below a pixel or a hover's decimals; beyond float32's
    range they keep 8 bytes). Used for the table of every stop (klrl_app/instant.py), whose
    size is the budget, and for the run's chart, so both carry the same figure."""
    if arr.dtype.kind == "f":
        if (
            arr.size
            and np.all(np.isfinite(arr))
            and np.all(arr == np.round(arr))
            and np.abs(arr).max() <= np.iinfo(np.int32).max
        ):
            return compact(arr.astype(np.int64))
        if arr.dtype.itemsize > 4:
            finite = arr[np.isfinite(arr)]
            if not finite.size or float(np.abs(finite).max()) <= F32_MAX:
                return arr.astype(np.float32)
        return arr
    if arr.dtype.kind in "iu" and arr.size:
        lo, hi = int(arr.min()), int(arr.max())
        for t in _INTS:
            info = np.iinfo(t)
            if info.min <= lo and hi <= info.max:
                return arr if t.itemsize >= arr.dtype.itemsize else arr.astype(t)
    return arr


def typed_arrays(obj: Any, small: bool = False) -> Any:
    """A copy of ``obj`` (dicts and lists) with numeric NumPy arrays in plotly.js's typed-array
    form; anything else is left for the JSON encoder. ``small``: each array ``compact``."""
    if isinstance(obj, dict):
        # The charts' template holds no arrays: kept as it is (one shared object).
        return {k: v if v is TEMPLATE else typed_arrays(v, small) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [typed_arrays(v, small) for v in obj]
    if isinstance(obj, np.ndarray) and obj.dtype.kind in "fiub":
        arr = obj.astype(np.uint8) if obj.dtype.kind == "b" else obj
        if small:
            arr = compact(arr)
        code = f"{arr.dtype.kind}{arr.dtype.itemsize}"
        if code not in _TYPED:  # int64 and the like: plotly.js has no such type
            arr, code = arr.astype(np.float64), "f8"
        spec = {
            "dtype": code,
            "bdata": base64.b64encode(
                np.ascontiguousarray(arr, arr.dtype.newbyteorder("<")).tobytes()
            ).decode("ascii"),
        }
        if arr.ndim > 1:
            spec["shape"] = ", ".join(map(str, arr.shape))
        return spec
    return obj


# The app's static folder (server.enableStaticServing in .streamlit/config.toml) serves
# plotly.js to the charts in two bundles: the published basic bundle (bar, pie, scatter: every
# chart but token-credit's icicles), vendored in klrl_app/vendor with its licence, 1.2 MB
# against the full 4.8 MB; and the full one that the installed plotly package ships, for a
# figure with another trace type. Each is published under a name carrying its version and a
# hash of its content, so browsers may keep it a year (klrl_app/serve.py) and never mix an old
# copy with a new figure format.
STATIC_DIR = ROOT / "static"
VENDOR = Path(__file__).parent / "vendor"
BASIC_VERSION = "4.1.1"  # the npm package plotly.js-basic-dist-min's version vendored
BASIC_TYPES = frozenset({"bar", "pie", "scatter"})
PLOTLY_VERSION = plotly.offline.get_plotlyjs_version()
FULL_SOURCE = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
BASIC_SOURCE = VENDOR / f"plotly-basic-{BASIC_VERSION}.min.js"


def _hashed_name(kind: str, source: Path) -> str:
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:12]
    return f"plotly-{kind}-{PLOTLY_VERSION}.{digest}.min.js"


PLOTLY_JS = _hashed_name("full", FULL_SOURCE)
# The basic bundle only while it is the plotly.js version the plotly package writes figures
# for; after an upgrade of plotly every chart loads the full bundle until it is vendored anew.
PLOTLY_BASIC_JS = (
    _hashed_name("basic", BASIC_SOURCE)
    if PLOTLY_VERSION == BASIC_VERSION and BASIC_SOURCE.exists()
    else PLOTLY_JS
)


def bundle_for(fig: dict) -> str:
    """The plotly.js file that draws ``fig``: the basic bundle when it has every trace type."""
    types = {trace.get("type", "scatter") for trace in fig["data"]}
    return PLOTLY_BASIC_JS if types <= BASIC_TYPES else PLOTLY_JS


# The app's own browser modules (the charts' and the figures that follow the hand), published
# beside plotly.js: a component's element carries its whole script in every message (22 kB for
# instant.js, 7.6 kB for live_chart.js, in each chart's and each run's message), so the
# components are given a few lines that import the published module once (module_script).
MODULES = {
    "live_chart": Path(__file__).parent / "live_chart.js",
    "instant": Path(__file__).parent / "instant.js",
    "class_live": Path(__file__).parent / "classroom" / "live.js",
}


def _module_name(stem: str, source: Path) -> str:
    return f"{stem}.{hashlib.sha256(source.read_bytes()).hexdigest()[:12]}.js"


MODULE_FILES = {stem: _module_name(stem, source) for stem, source in MODULES.items()}

# Finds the published module next to Streamlit's own scripts, as live_chart.js finds plotly.js
# (any URL prefix); imported once per page (a module URL is one module), then called at once.
_STUB = """const file = %s;
const own = Array.from(document.scripts).map(s => s.src)
  .find(src => /\\/static\\/js\\/index\\.[^/]+\\.js$/.test(src));
const url = own ? own.replace(/static\\/js\\/index\\.[^/]+\\.js$/, `app/static/${file}`)
                : new URL(`app/static/${file}`, document.baseURI).href;
let loaded = null;
const loading = import(url).then(m => (loaded = m));
export default function (args) {
  if (loaded) return loaded.default(args);
  loading.then(m => m.default(args)).catch(e => console.error("klrl module", url, e));
}
"""


def module_script(stem: str) -> str:
    """The script of the component running ``MODULES[stem]``: an import of its published copy,
    or the module itself where nothing can be published (static serving off)."""
    if publish_plotly_js():
        return _STUB % json.dumps(MODULE_FILES[stem])
    return MODULES[stem].read_text()


@st.cache_resource(show_spinner=False)
def publish_plotly_js() -> bool:
    """Copy both plotly.js bundles and the app's browser modules into the static folder once
    per process; False if that is impossible (static serving off, a read-only file system):
    the charts then fall back to st.plotly_chart."""
    if not st.get_option("server.enableStaticServing"):
        log.warning("server.enableStaticServing is off: charts use st.plotly_chart")
        return False
    published = [(FULL_SOURCE, PLOTLY_JS), (BASIC_SOURCE, PLOTLY_BASIC_JS)] + [
        (MODULES[stem], name) for stem, name in MODULE_FILES.items()
    ]
    try:
        for source, name in published:
            target = STATIC_DIR / name
            if not (target.exists() and target.stat().st_size == source.stat().st_size):
                STATIC_DIR.mkdir(exist_ok=True)
                # a temporary file of this process's own: two servers of one checkout (the
                # deploy's processes, a test's second server) publishing at once would otherwise
                # write into one file, and one could move the other's half-written copy into
                # place, which a browser then caches for a year
                tmp = target.with_name(f".{name}.{os.getpid()}.{secrets.token_hex(6)}.tmp")
                shutil.copyfile(source, tmp)
                tmp.replace(target)  # atomic: a browser never loads half a file
        return True
    except OSError as err:
        log.warning("plotly.js not published (%s): charts use st.plotly_chart", err)
        return False


_live_chart = st.components.v2.component(
    "klrl_live_chart", js=module_script("live_chart"), isolate_styles=False
)  # plotly.js styles its modebar and hover labels from the page's head


# The presentation view (layout.Page, present=1): larger type, same height (the first screen).
PRESENT_LAYOUT = {
    "font": {"size": 19},
    "legend": {"font": {"size": 18}},
    "xaxis": {"title": {"font": {"size": 21}}},
    "yaxis": {"title": {"font": {"size": 21}}},
}


def merged(base: dict, extra: dict) -> dict:
    """``base`` with ``extra`` deep-merged in, copying only the dicts on extra's paths."""
    out = dict(base)
    for key, value in extra.items():
        out[key] = (
            merged(base[key], value)
            if isinstance(value, dict) and isinstance(base.get(key), dict)
            else value
        )
    return out


def prepared(chart: Chart, present: bool) -> dict:
    """The figure as it is drawn: with the presentation view's larger type when presenting."""
    fig = chart.figure()
    return (
        {"data": fig["data"], "layout": merged(fig["layout"], PRESENT_LAYOUT)} if present else fig
    )


def _preload(bundle: str) -> None:
    """Note the bundle this page's charts load, for the page's HTML next time (the full one
    wins: it draws every chart). klrl_app/serve.py's PreloadPlotly reads it."""
    slug = urlsplit(st.context.url or "").path.rstrip("/").rsplit("/", 1)[-1]
    if slug and PRELOADS.get(slug) != bundle and PRELOADS.get(slug) != PLOTLY_JS:
        PRELOADS[slug] = bundle


def show(chart: Chart, key: str, alt: str, stop: object = None, setting: str | None = None) -> None:
    """Draw a chart with the app's look (TEMPLATE) and chart options. ``key`` keeps the chart
    in the page from one run to the next, so new numbers update it in place. ``alt`` is its
    text alternative: what it shows and its current key numbers (a screen reader reads it in
    place of the drawing). ``stop``: the main slider's stop this figure is for, when the
    browser also draws it at every stop (klrl_app/instant.py), and ``setting`` the table of
    stops it belongs to (the other controls' values)."""
    fig = prepared(chart, bool(st.session_state.get(PRESENT_KEY)))
    if publish_plotly_js():
        bundle = bundle_for(fig)
        _preload(bundle)
        _live_chart(
            key=key,
            data={
                # The same encoding as the table of stops (instant.py): a stop drawn from the
                # table and the run's figure are the same figure.
                "figure": pio.to_json(typed_arrays(fig, small=True), validate=False),
                "config": CHART_CONFIG,
                "plotly_js": bundle,
                "alt": alt,
                "key": key,
                "stop": stop,
                "setting": setting,
            },
        )
    else:
        with st.container(key=f"fig-{key}"):
            st.markdown(f"<span class='klrl-sr-only'>{alt}</span>", unsafe_allow_html=True)
            st.plotly_chart(go.Figure(fig), theme=None, config=CHART_CONFIG, key=key)
