"""Figures that follow the hand: every stop of a page's main slider is drawn in the browser.

A Streamlit run happens when the slider is released (or a key is pressed), so a figure drawn
by the run stands still during a drag and then jumps. Here a page declares what depends on its
main slider as one function of the stop (``Instant.view_at``: the readout's items and the
slider-dependent charts, computed with klrl_core); this module evaluates it at every stop of
the slider, once per process and setting, and gives the browser one table of all stops. A
script in the browser (instant.js) watches the slider and, at most once per animation frame,
redraws the readout and the charts for the stop under the thumb with Plotly.react, without a
run. The run that follows the release draws the same numbers.

The table: each chart once in full (at the first stop that has it), and per stop only the
parts of each chart that differ from it (``patches``), its text alternative and the readout's
values. The run names it by its content's hash; the browser fetches it over HTTP from
/klrl-table/<hash> (klrl_app/serve.py) once its first chart is drawn, so that on a phone's first load
the table (66 kB for tilt) does not share the network with plotly.js, and keeps it in its HTTP
cache (a hash names one content for ever). A stop whose numbers cannot be had cheaply (a
simulation not yet in the background tables) is null: the browser says "computing…" there
until the run comes.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable, Hashable, Sequence

import numpy as np
import streamlit as st

from klrl_app import lru, plots, precompute, serve

# Per process, by bytes (klrl_app/lru.py): a stop's row ranges from a readout (1 kB) to three
# charts of a simulation (100 kB and more), so a count bounded nothing.
ROWS_BYTES = 64 * lru.MB  # stops' views (readout, figures, texts)
TABLES_BYTES = lru.MB  # which table (its hash) each complete setting has; the tables
# themselves, as sent, are in serve.STOP_TABLES
MAX_TABLE = 225_000  # bytes as sent (gzipped); above it the readout only
POLL_S = 2.0  # while a background table fills: how often an open page looks again


@dataclass
class View:
    """What a page shows at one stop of its main slider: the readout's items (label, value)
    and the charts that depend on the slider, by key: (chart, text alternative)."""

    items: Sequence[tuple[str, str]]
    charts: dict[str, tuple[plots.Chart, str]] = field(default_factory=dict)


@dataclass(frozen=True)
class Instant:
    """The page's main slider (its name in ``Controls``) and the page at any of its stops.

    ``view_at(v)`` returns the View at stop ``v`` with every other control as it is now (a list
    of readout items alone also does), or None where it cannot be had cheaply (a simulation not
    yet precomputed): the browser then says "computing…" at that stop until the run comes.
    ``setting`` names every other control and input the view depends on (it keys the cache)."""

    slider: str
    view_at: Callable[[object], View | Sequence[tuple[str, str]] | None]
    setting: Hashable = ()


def as_view(result) -> View | None:
    if result is None or isinstance(result, View):
        return result
    return View(list(result))


# ----------------------------------------------------------------------- per-stop rows
@dataclass(frozen=True)
class _Row:
    values: list[str]
    labels: list[str]
    figures: dict[str, Any]  # chart key -> figure in plotly's JSON form (typed arrays)
    alts: dict[str, str]


_rows = lru.ByteLRU(ROWS_BYTES)
_tables = lru.ByteLRU(TABLES_BYTES, sizeof=lambda tid: 200)


def _figure(chart: plots.Chart, present: bool) -> Any:
    # The table's encoding is decided here, not by pages: every array in its fewest bytes.
    return plots.typed_arrays(plots.prepared(chart, present), small=True)


def _row(view: View, present: bool) -> _Row:
    return _Row(
        [str(v) for _, v in view.items],
        [str(a) for a, _ in view.items],
        {k: _figure(c, present) for k, (c, _) in view.charts.items()},
        {k: str(alt) for k, (_, alt) in view.charts.items()},
    )


def _row_at(key: tuple, compute: Callable[[], View | None], present: bool) -> _Row | None:
    row = _rows.get(key)
    if row is not None:
        return row
    view = as_view(compute())
    if view is None:  # not ready: asked again next run
        return None
    row = _row(view, present)
    _rows.put(key, row)
    return row


def patches(base: Any, new: Any, path: tuple = ()) -> list[list]:
    """[[path, value], ...]: where ``new`` differs from ``base`` (same structure: dicts, lists,
    leaves); a part whose shape differs is replaced whole."""
    if new is base:  # shared, such as the charts' template
        return []
    if isinstance(new, dict) and isinstance(base, dict) and new.keys() == base.keys():
        out = []
        for k in new:
            out += patches(base[k], new[k], path + (k,))
        return out
    if isinstance(new, list) and isinstance(base, list) and len(new) == len(base):
        if new and not isinstance(new[0], (dict, list)):
            # A list of numbers or texts: the items that changed, or the whole list when
            # that is shorter (most of a curve moves together).
            changed = [
                i for i, (a, b) in enumerate(zip(base, new)) if type(a) is not type(b) or a != b
            ]
            if len(changed) > len(new) // 3:
                return [[list(path), new]]
            return [[list(path) + [i], new[i]] for i in changed]
        out = []
        for i, (a, b) in enumerate(zip(base, new)):
            out += patches(a, b, path + (i,))
        return out
    if type(new) is type(base) and new == base:
        return []
    return [[list(path), new]]


def _share(row: dict[str, list[list]]) -> dict[str, list[list]]:
    """A long value that a stop's patches repeat (a chart's colours and the numbers printed
    on it, the same credits on two trees) is sent once per stop: a later copy becomes
    {"$": [chart key, patch index]}, a reference to the first."""
    first: dict[str, list] = {}
    out: dict[str, list[list]] = {}
    for chart, ps in row.items():
        out[chart] = []
        for i, (path, value) in enumerate(ps):
            if isinstance(value, (str, dict)):
                text = json.dumps(value, sort_keys=True, default=_plain)
                if len(text) >= 64:
                    if text in first:
                        out[chart].append([path, {"$": first[text]}])
                        continue
                    first[text] = [chart, i]
            out[chart].append([path, value])
    return out


def _assemble(label: str, kind: str, keys: list, rows: list[_Row | None]) -> str:
    base: dict[str, Any] = {}
    for row in rows:
        for k, fig in row.figures.items() if row else ():
            base.setdefault(k, fig)
    labels = next((r.labels for r in rows if r), [])
    out = []
    for row in rows:
        if row is None:
            out.append(None)
            continue
        charts = _share({k: patches(base[k], fig) for k, fig in row.figures.items()})
        out.append(
            {
                "v": row.values,
                "l": None if row.labels == labels else row.labels,
                "c": charts,
                "a": row.alts,
            }
        )
    return json.dumps(
        {"label": label, "kind": kind, "keys": keys, "labels": labels, "base": base, "rows": out},
        ensure_ascii=False,
        separators=(",", ":"),
        default=_plain,
    )


def _packed(text: str) -> bytes:
    """The table as sent: gzipped (mtime 0: the same table gives the same bytes and hash),
    which the browser inflates as it reads the response (Content-Encoding). A stop's texts
    repeat most of their words stop to stop. Level 1: a tenth of level 9's time (17 against
    190 ms for 430 kB) for 10% more bytes."""
    return gzip.compress(text.encode("utf-8"), compresslevel=1, mtime=0)


def unpacked(gz: bytes) -> str:
    """The table's JSON from what is sent (for tests and benchmarks)."""
    return gzip.decompress(gz).decode("utf-8")


def _plain(obj):
    """NumPy scalars and small arrays left in a figure (tick values, say) as JSON values."""
    if isinstance(obj, (np.generic, np.ndarray)):
        return obj.tolist()
    raise TypeError(f"{type(obj).__name__} in a figure")


def table(
    slug: str,
    instant: Instant,
    grid: list,
    keys: list,
    label: str,
    kind: str,
    present: bool,
    current: tuple[object, View] | None = None,
) -> str:
    """The id (its content's hash) of the JSON table of every stop in ``grid`` (shown as
    ``keys``), kept gzipped in serve.STOP_TABLES for the browser to fetch; built once per
    process and setting when every stop is ready (and again if the table was forgotten), else
    again at the next run with what is ready then."""
    tkey = (slug, instant.slider, instant.setting, present, tuple(grid))
    tid = _tables.get(tkey)
    if tid is not None and serve.STOP_TABLES.get(tid) is not None:
        return tid
    rows = []
    for v in grid:
        if current is not None and v == current[0]:
            view = current[1]
            rows.append(_row_at((*tkey[:4], v), lambda: view, present))
        else:
            rows.append(_row_at((*tkey[:4], v), lambda v=v: instant.view_at(v), present))
    text = _packed(_assemble(label, kind, keys, rows))
    if len(text) > MAX_TABLE:
        # Too much for one setting (groups at k = 1024): the readout follows the thumb, the
        # charts wait for the run, as they did before.
        text = _packed(
            _assemble(
                label,
                kind,
                keys,
                [None if r is None else _Row(r.values, r.labels, {}, {}) for r in rows],
            )
        )
    tid = hashlib.blake2b(text, digest_size=8).hexdigest()
    serve.STOP_TABLES.put(tid, text)
    if all(r is not None for r in rows):
        _tables.put(tkey, tid)
    return tid


# ------------------------------------------------------------------------- the browser
_driver = st.components.v2.component(
    "klrl_instant", js=plots.module_script("instant"), isolate_styles=False
)


@dataclass
class Follow:
    """One page's followed slider in this run (layout.Page.follow)."""

    slug: str
    instant: Instant
    view: View
    stop: object  # the key of this run's stop as the browser sees it (None: off-grid)
    slot: Any  # where the table goes, filled at the end of the script
    grid: list
    keys: list
    label: str
    kind: str
    present: bool
    value: object
    setting: str  # names the setting: the driver uses a table of the same setting only

    def send_table(self) -> None:
        """The stops' table, after the page's visible elements (the first load shows the
        figures before this is computed): its address, which the browser fetches."""
        tid = table(
            self.slug,
            self.instant,
            self.grid,
            self.keys,
            self.label,
            self.kind,
            self.present,
            (self.value, self.view),
        )
        prefix = (self.slug, self.instant.slider, self.instant.setting, self.present)
        with self.slot.container():
            _driver(
                key=f"klrl-instant-table-{self.slug}",
                data={"slug": self.slug, "setting": self.setting, "id": tid, "url": _url(tid)},
            )
            if (*prefix, tuple(self.grid)) not in _tables and precompute.filling():
                pending = [v for v in self.grid if (*prefix, v) not in _rows]
                _await_stops(prefix, self.instant, pending)


def _url(tid: str) -> str:
    base = "/".join(p for p in (st.get_option("server.baseUrlPath") or "").split("/") if p)
    return ("/" + base if base else "") + serve.TABLE_PATH.format(tid=tid)


@st.fragment(run_every=POLL_S)
def _await_stops(prefix: tuple, instant: Instant, pending: list) -> None:
    """A page opened while a background table fills (a fresh server) has "computing…" at the
    stops not yet computed, and no run comes to send them while the hand drags (issue 33,
    part 6). This fragment looks again every POLL_S seconds, asking only for those stops
    (cheap: the pages' ``view_at`` reads the tables without computing); once they are all
    there, or nothing is filling any more, it reruns the page, whose run sends the full table
    and ends the polling (a full run stops every fragment's timer)."""
    ready = all(
        _row_at((*prefix, v), lambda v=v: instant.view_at(v), prefix[3]) is not None
        for v in pending
    )
    if ready or not precompute.filling():
        st.rerun()


def stop_of(ui, slider: str) -> object:
    """The key of the slider's current stop as the browser sees it (instant.js): the text a
    select slider shows, a plain slider's value."""
    _, kind, options, texts = ui.sliders[slider]
    value = st.session_state[ui.key(slider)]
    return dict(zip(options, texts)).get(value) if kind == "index" else float(value)


def follow(slug: str, ui, instant: Instant, view: View, present: bool) -> Follow:
    """Send this run's readout to the browser's driver and keep a slot for the stops' table.

    A select slider's stops are keyed by the text the slider shows (its aria-valuetext), not
    by position: a linked value between stops adds a stop, so positions shift between runs.
    A plain slider's stops are keyed by value. Every run also sends its own numbers: the
    driver writes them back after the page's redraw, which only rewrites the text that
    changed since the previous run, not what the driver wrote in between."""
    label, kind, options, texts = ui.sliders[instant.slider]
    grid = list(ui.grids.get(instant.slider, options))
    value = st.session_state[ui.key(instant.slider)]
    fmt = dict(zip(options, texts)) if kind == "index" else {}
    keys = [fmt[o] for o in grid] if kind == "index" else [float(o) for o in grid]
    stop = stop_of(ui, instant.slider)
    items = [(str(a), str(b)) for a, b in view.items]
    setting = hashlib.blake2b(
        repr((slug, instant.slider, instant.setting, present, grid)).encode("utf-8"), digest_size=8
    ).hexdigest()
    _driver(
        key=f"klrl-instant-{slug}",
        data={
            "slug": slug,
            "setting": setting,
            "label": label,
            "kind": kind,
            "current": stop,
            "values": [v for _, v in items],
            "labels": [lab for lab, _ in items],
            "charts": list(view.charts),
        },
    )
    return Follow(
        slug, instant, view, stop, st.empty(), grid, keys, label, kind, present, value, setting
    )


def play_button(slug: str, label: str, interval_ms: int = 200) -> None:
    """A Play/Pause button for the followed slider ``label``: in the browser it moves the
    thumb one stop per ``interval_ms`` as the right arrow key does (instant.js), so the
    figures follow from the table of stops; it stops at the last stop."""
    _driver(key=f"klrl-play-{slug}", data={"play": label, "interval": int(interval_ms)})
