"""One byte-bounded least-recently-used cache for every cache of the app (issue 33, part 4).

A count of entries bounds nothing when entries range from a few bytes (a readout) to tens of
megabytes (a simulation's runs): the caches are bounded by what their values hold instead,
estimated by ``nbytes`` (NumPy arrays by their buffers, texts by their length, containers and
dataclasses by their parts).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import sys
import threading
from collections import OrderedDict
from typing import Any
from collections.abc import Callable, Hashable

import numpy as np

MB = 1 << 20
_MISSING = object()


def nbytes(obj: Any, _seen: set | None = None) -> int:
    """About what ``obj`` keeps alive, in bytes: a part shared within it is counted once."""
    seen = set() if _seen is None else _seen
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        # A view's base is counted once (a slice of a large run keeps the run alive).
        base = obj.base if isinstance(obj.base, np.ndarray) else None
        return 112 + (nbytes(base, seen) if base is not None else obj.nbytes)
    if isinstance(obj, (str, bytes, bytearray)):
        return 49 + len(obj)
    if isinstance(obj, (int, float, bool, complex, np.generic)) or obj is None:
        return 32
    if isinstance(obj, dict):
        return 64 + sum(nbytes(k, seen) + nbytes(v, seen) + 24 for k, v in obj.items())
    if isinstance(obj, (list, tuple, set, frozenset)):
        return 56 + sum(nbytes(v, seen) + 8 for v in obj)
    if hasattr(obj, "memory_usage") and hasattr(obj, "index"):  # a pandas DataFrame/Series
        usage = obj.memory_usage(deep=True, index=True)
        return int(getattr(usage, "sum", lambda: usage)())
    if dataclasses.is_dataclass(obj):
        return 56 + sum(nbytes(getattr(obj, f.name), seen) for f in dataclasses.fields(obj))
    if hasattr(obj, "__dict__"):
        return 56 + nbytes(vars(obj), seen)
    return sys.getsizeof(obj)


class ByteLRU:
    """key -> value, dropping the least recently used values while their ``nbytes`` add up
    to more than ``max_bytes``. A value larger than the whole budget is not kept. Thread-safe
    (sessions' script threads and the background tables share it)."""

    def __init__(self, max_bytes: int, sizeof: Callable[[Any], int] = nbytes):
        self.max_bytes = int(max_bytes)
        self.sizeof = sizeof
        self.bytes = 0
        self._items: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, default: Any = None) -> Any:
        with self._lock:
            item = self._items.get(key)
            if item is None:
                return default
            self._items.move_to_end(key)
            return item[0]

    def __contains__(self, key: Hashable) -> bool:
        return key in self._items

    def __len__(self) -> int:
        return len(self._items)

    def put(self, key: Hashable, value: Any, size: int | None = None) -> bool:
        """Keep ``value`` (of ``size`` bytes, estimated if not given); False if it is larger
        than the whole budget (then it is not kept)."""
        size = self.sizeof(value) if size is None else int(size)
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self.bytes -= old[1]
            if size > self.max_bytes:
                return False
            self._items[key] = (value, size)
            self.bytes += size
            while self.bytes > self.max_bytes:
                _, (_, dropped) = self._items.popitem(last=False)
                self.bytes -= dropped
            return True

    def room_for(self, size: int) -> bool:
        """Whether ``size`` more bytes fit without dropping anything."""
        return self.bytes + size <= self.max_bytes

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self.bytes = 0


# The pages' own caches (what st.cache_data/st.cache_resource with max_entries held) and the
# background tables' values for settings other than the defaults (klrl_app/precompute.py):
# one budget for all of them, so a page whose entries are large leaves less room, not more.
# With the stops' views (instant.py, 64 MB), the tables as sent (16 MB) and the compressed
# assets (serve.py, 24 MB): at most 200 MB of caches beside the ~300 MB a warm process holds
# (benchmarks/memory.py).
PAGE_RESULTS = ByteLRU(96 * MB)


def memo(fn: Callable | None = None, *, cache: ByteLRU | None = None) -> Callable:
    """Remember ``fn``'s results in ``cache`` (PAGE_RESULTS by default), keyed by its name and
    its arguments. As with Streamlit's caches, parameters named with a leading underscore are
    left out of the key (the caller passes a key argument that determines them). The value is
    shared by every caller: callers must not change it. ``fn.clear()`` forgets its entries."""
    if fn is None:
        return functools.partial(memo, cache=cache)
    store = PAGE_RESULTS if cache is None else cache
    sig = inspect.signature(fn)
    keyed = [name for name in sig.parameters if not name.startswith("_")]
    name = f"{fn.__module__}.{fn.__qualname__}"

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        key = (name, *(bound.arguments[p] for p in keyed))
        value = store.get(key, _MISSING)
        if value is _MISSING:
            value = fn(*args, **kwargs)
            store.put(key, value)
        return value

    def clear() -> None:
        with store._lock:
            for key in [k for k in store._items if isinstance(k, tuple) and k[:1] == (name,)]:
                store.bytes -= store._items.pop(key)[1]

    wrapper.clear = clear
    return wrapper
