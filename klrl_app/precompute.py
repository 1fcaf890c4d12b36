"""Slider stops computed once per server process, in the background, shared by every session.

A page whose readout needs a simulation (the 4,000 bandit runs, the three kl-penalty rules)
would otherwise pay for it on the slider move that first reaches a value: 2-3x the latency
floor (issue 15). ``stops(name, compute, keys)`` starts one daemon thread per table that works
through ``keys`` in order (the default view's neighbours first); a page asks ``.get(key)``,
which returns the stored value or computes it at once (and stores it) if the thread has not
reached it yet. Every value is the app's own computation, made in this process.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Hashable, Iterable

import streamlit as st

from klrl_app import lru


class Stops:
    """A table key -> value filled by a background thread and by ``get`` on a miss.

    The thread's keys (the default views' stops, a fixed set) are kept for the process's life;
    a value for any other key (a link's own seed or setting) goes to the app's shared
    byte-bounded cache (lru.PAGE_RESULTS), so a class's distinct links cannot grow it without
    bound (issue 33)."""

    def __init__(
        self, name: str, compute: Callable[..., object], keys: Iterable[tuple], pause_s: float
    ):
        self.name = name
        self._compute = compute
        self._values: dict[Hashable, object] = {}
        self._lock = threading.Lock()
        self._keys = list(keys)
        self._pinned = set(self._keys)
        self._pause_s = pause_s
        self.filling = False
        # The page tests set KLRL_PRECOMPUTE=0: each test computes only what it shows.
        if os.environ.get("KLRL_PRECOMPUTE", "1") != "0":
            self.filling = True
            _ALL.append(self)
            threading.Thread(target=self._fill, name="klrl-precompute", daemon=True).start()

    def _fill(self) -> None:
        try:
            for key in self._keys:
                if key not in self._values:
                    self._keep(key, self._compute(*key))
                time.sleep(self._pause_s)  # yield: sessions' own runs come first
        finally:
            self.filling = False

    def _keep(self, key: Hashable, value: object) -> None:
        if key in self._pinned:
            with self._lock:
                self._values.setdefault(key, value)
        elif lru.PAGE_RESULTS.get((self.name, key)) is None:
            lru.PAGE_RESULTS.put((self.name, key), value)

    def peek(self, *key) -> object | None:
        """The stored value, or None if neither the thread nor a page has computed it yet
        (the instant readout asks without computing: klrl_app/instant.py)."""
        value = self._values.get(key)
        return value if value is not None else lru.PAGE_RESULTS.get((self.name, key))

    def get(self, *key) -> object:
        value = self.peek(*key)
        if value is None:
            value = self._compute(*key)
            self._keep(key, value)
        return value

    def put(self, value: object, *key) -> None:
        """Store a value the page has just computed itself, by the same computation."""
        self._keep(key, value)

    def __len__(self) -> int:
        return len(self._values)


_ALL: list[Stops] = []


def filling() -> bool:
    """Whether a background table of this process is still being filled (a page opened
    meanwhile waits for it: klrl_app/instant.py)."""
    return any(t.filling for t in _ALL)


@st.cache_resource(show_spinner=False)
def stops(
    name: str, _compute: Callable[..., object], _keys: Iterable[tuple], pause_s: float = 0.02
) -> Stops:
    """The process's one table called ``name`` (``_compute`` and ``_keys`` are used only the
    first time, when the table is made)."""
    return Stops(name, _compute, _keys, pause_s)


def outward(stops_list: list[float], start: float) -> list[float]:
    """The stops ordered by distance from ``start``: the default view's neighbours first."""
    return sorted(stops_list, key=lambda v: (abs(v - start), v))


# ------------------------------------------------------------------ a followed slider's sweep
class Sweep:
    """``compute(v, *setting)`` at the stops ``v`` of a page's followed slider: the one way a
    page routes to a background table (klrl_app/instant.py draws every stop from it).

    The stops of the ``settings`` given (the default view's, say) are filled in the background,
    nearest ``start`` first, then the keys ``more`` ((stop, *setting) each). ``at`` is for the
    run: the stored value, or computed now and kept. ``ready`` is for ``view_at``: the stored
    value or None, never computing (the browser says "computing…" there). ``view_at`` builds the latter for a page. A stop is keyed by its
    value rounded to ``digits`` (0.15, not 0.15000000000000002). Values outside the planned
    stops (another seed, a typed value) go to the app's byte-bounded cache (Stops)."""

    def __init__(
        self,
        name: str,
        compute: Callable[..., object],
        stops: Iterable[float],
        start: float,
        settings: Iterable[tuple],
        digits: int = 10,
        pause_s: float = 0.02,
        more: Iterable[tuple] = (),
    ):
        self.digits = digits
        planned = [(self.stop(v), *s) for v in outward(list(stops), start) for s in settings]
        planned += [k for k in ((self.stop(v), *s) for v, *s in more) if k not in planned]
        self._planned = set(planned)
        self._table = Stops(name, compute, planned, pause_s)

    def stop(self, v: object) -> float:
        return round(float(v), self.digits)

    def planned(self, v: object, *setting) -> bool:
        """Whether the background fills this stop (the default view's stops)."""
        return (self.stop(v), *setting) in self._planned

    def at(self, v: object, *setting) -> object:
        return self._table.get(self.stop(v), *setting)

    def ready(self, v: object, *setting) -> object | None:
        return self._table.peek(self.stop(v), *setting)

    def view_at(
        self, build: Callable[[object, object], object], *setting
    ) -> Callable[[object], object | None]:
        """A page's ``view_at`` over this sweep: ``build(v, value)`` at every stop whose value
        is ready, None elsewhere."""

        def view(v: object) -> object | None:
            value = self.ready(v, *setting)
            return None if value is None else build(v, value)

        return view

    def __len__(self) -> int:
        return len(self._table)


@st.cache_resource(show_spinner=False)
def sweep(
    name: str,
    _compute: Callable[..., object],
    _stops: Iterable[float],
    _start: float,
    _settings: Iterable[tuple] = ((),),
    digits: int = 10,
    _more: Iterable[tuple] = (),
) -> Sweep:
    """The process's one sweep called ``name`` (the arguments after it are used only the first
    time, when it is made)."""
    return Sweep(name, _compute, _stops, _start, _settings, digits, more=_more)
