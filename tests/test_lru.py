"""The byte-bounded cache (klrl_app/lru.py) that bounds every cache of the app (issue 33)."""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as hs

from klrl_app import lru


def test_sizes_count_what_a_value_holds():
    a = np.zeros(1000)
    assert 8000 <= lru.nbytes(a) <= 8200
    assert lru.nbytes(a[:10]) >= 8000  # a view keeps the whole array alive
    assert lru.nbytes("x" * 5000) >= 5000 and lru.nbytes(b"x" * 5000) >= 5000
    # A part shared within a value counts once.
    assert lru.nbytes([a, a]) < lru.nbytes([a, np.zeros(1000)])
    assert lru.nbytes({"k": [a, {"deep": np.zeros(500)}]}) >= 8000 + 4000
    assert lru.nbytes(pd.DataFrame({"x": np.zeros(1000)})) >= 8000


def test_the_least_recently_used_go_first_when_the_bytes_exceed_the_budget():
    cache = lru.ByteLRU(100, sizeof=len)
    cache.put("a", "x" * 40)
    cache.put("b", "x" * 40)
    assert cache.get("a") == "x" * 40  # a is now the more recent
    cache.put("c", "x" * 40)  # 120 > 100: b goes
    assert "b" not in cache and "a" in cache and "c" in cache and cache.bytes == 80
    cache.put("a", "x" * 10)  # replacing counts the new size only
    assert cache.bytes == 50
    assert not cache.put("huge", "x" * 101)  # larger than the budget: not kept
    assert "huge" not in cache and cache.bytes == 50


@settings(max_examples=200, deadline=None)
@given(
    hs.integers(1, 500), hs.lists(hs.tuples(hs.integers(0, 20), hs.integers(0, 200)), max_size=80)
)
def test_the_bytes_kept_never_exceed_the_budget(budget, puts):
    cache = lru.ByteLRU(budget, sizeof=len)
    last = {}
    for key, size in puts:
        cache.put(key, "x" * size)
        last[key] = size
        assert cache.bytes <= budget
        assert cache.bytes == sum(len(v) for v, _ in cache._items.values())
        # The value just put stays while it fits (it is the most recent).
        assert (key in cache) == (size <= budget)
    for key, (value, _) in cache._items.items():
        assert len(value) == last[key]


def test_a_thousand_distinct_arrays_stay_within_the_budget():
    cache = lru.ByteLRU(10 * lru.MB)
    for i in range(1000):
        cache.put(i, np.full(20_000, float(i)))  # 160 kB each, 160 MB in all
        assert cache.bytes <= 10 * lru.MB
    assert (
        len(cache) == 10 * lru.MB // lru.nbytes(np.zeros(20_000))
        and 999 in cache
        and 0 not in cache
    )


def test_memo_keys_by_the_arguments_and_leaves_out_underscored_ones():
    calls = []
    store = lru.ByteLRU(lru.MB)

    @lru.memo(cache=store)
    def f(a, b=2, _big=None):
        calls.append((a, b))
        return np.arange(a + b)

    assert f(1).tolist() == [0, 1, 2]
    assert f(1, 2, _big=object()) is f(a=1)  # same key: one computation, shared
    f(1, b=3)
    assert calls == [(1, 2), (1, 3)]
    f.clear()
    f(1)
    assert calls == [(1, 2), (1, 3), (1, 2)] and len(store) == 1


def test_threads_share_it_safely():
    cache = lru.ByteLRU(5000, sizeof=len)

    def work(t):
        for i in range(2000):
            cache.put((t, i % 50), "x" * (i % 97))
            cache.get((t, (i * 7) % 50))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert cache.bytes <= 5000
    assert cache.bytes == sum(len(v) for v, _ in cache._items.values())
