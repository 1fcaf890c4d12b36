"""The instant readout: the browser shows a slider stop's numbers as soon as the slider moves.

A slider move reaches the readout through a full round trip (the browser sends the value, the
script runs, the page is redrawn): 2-4x the latency of a one-slider app on the figure pages
(benchmarks/RESULTS.md). So the page also sends, with each run, its readout at the main
slider's neighbouring stops, computed by klrl_core on the server like every other number
(``Instant.items_at``); a small script in the browser (instant_readout.js) watches the slider
and, when it lands on one of those stops, writes that stop's numbers into the readout at once.
The run that follows redraws the readout with the same numbers, and the figures.

Each stop's numbers are computed once per process and setting (a bounded cache) and only for
the ``NEIGHBOURS`` stops on either side and the two ends: a key press, Page Up/Down or
Home/End lands on one of them; a drag elsewhere waits for the run, as before.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Hashable, Sequence

import streamlit as st

NEIGHBOURS = 12          # stops on either side of the current one (Page Up moves ~10%)
CACHE_SIZE = 50_000      # stops' readouts kept per process (a few MB at most)


@dataclass(frozen=True)
class Instant:
    """The page's main slider (its name in ``Controls``) and its readout at any stop.

    ``items_at(v)`` returns the readout's items (label, value) at stop ``v`` with every other
    control as it is now, or None where it cannot be had cheaply (a simulation not yet
    precomputed): that stop then waits for the run. ``setting`` names every other control and
    input the readout depends on (it keys the cache)."""

    slider: str
    items_at: Callable[[object], Sequence[tuple[str, str]] | None]
    setting: Hashable = ()


_cache: OrderedDict = OrderedDict()
_lock = threading.Lock()


def _items_at(key: tuple, compute: Callable[[], Sequence[tuple[str, str]] | None]
              ) -> list[tuple[str, str]] | None:
    with _lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    values = compute()
    values = None if values is None else [(str(a), str(b)) for a, b in values]
    if values is not None:   # a stop not ready yet is asked again next run
        with _lock:
            _cache[key] = values
            while len(_cache) > CACHE_SIZE:
                _cache.popitem(last=False)
    return values


def table(slug: str, instant: Instant, options: list, current: int,
          items: list[tuple[str, str]]) -> list[list]:
    """[[stop index, [values...], [labels...] or None where they are this run's], ...] for
    the stops near ``current`` (its own row always carries its labels) and the two ends
    (items of the same count as this run's)."""
    near = set(range(max(0, current - NEIGHBOURS), min(len(options), current + NEIGHBOURS + 1)))
    near |= {0, len(options) - 1}
    labels = [label for label, _ in items]
    rows = []
    for i in sorted(near):
        v = options[i]
        row = items if i == current else _items_at(
            (slug, instant.slider, instant.setting, v), lambda v=v: instant.items_at(v))
        if row is None or len(row) != len(items):
            continue
        its_labels = [label for label, _ in row]
        same = its_labels == labels and i != current
        rows.append([i, [value for _, value in row], None if same else its_labels])
    return rows


_driver = st.components.v2.component(
    "klrl_instant_readout", js=(Path(__file__).parent / "instant_readout.js").read_text(),
    isolate_styles=False)


def instant_readout(slug: str, ui, instant: Instant, items: list[tuple[str, str]]) -> None:
    """Send this run's readout and the neighbouring stops' to the browser's driver.

    A select slider's stops are keyed by the text the slider shows (its aria-valuetext), not
    by position: a linked value between stops adds a stop, so positions shift between runs.
    A plain slider's stops are keyed by value. Every run also sends its own numbers: the
    driver writes them back after the page's redraw, which only rewrites the text that
    changed since the previous run, not what the driver wrote in between."""
    label, kind, options, texts = ui.sliders[instant.slider]
    value = st.session_state[ui.key(instant.slider)]
    items = [(str(a), str(b)) for a, b in items]
    try:
        current = options.index(value)
    except ValueError:
        rows, key = [], None   # a linked value that is not a stop: this run's numbers only
    else:
        rows = table(slug, instant, options, current, items)
        key = texts[current] if kind == "index" else options[current]
    keyed = [[i if kind == "index" else options[i], vals, labs,
              texts[i] if kind == "index" else None] for i, vals, labs in rows]
    _driver(key=f"klrl-instant-{slug}", data={
        "label": label, "kind": kind, "current": key,
        "values": [v for _, v in items], "labels": [lab for lab, _ in items],
        "rows": json.dumps(keyed, ensure_ascii=False)})
