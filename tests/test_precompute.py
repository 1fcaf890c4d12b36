"""klrl_app.precompute.Sweep: the one route from a page to a background table."""

from __future__ import annotations

import os

from klrl_app import precompute


def make(calls, **kw):
    def compute(v, flag):
        calls.append((v, flag))
        return (v, flag)

    return precompute.Sweep(
        f"test-{id(calls)}", compute, [0.1, 0.2, 0.3], 0.2, [(False,), (True,)], **kw
    )


def test_ready_never_computes_and_at_computes_once():
    assert os.environ.get("KLRL_PRECOMPUTE") == "0"  # no background thread in the tests
    calls = []
    s = make(calls)
    assert s.ready(0.1, True) is None and calls == []
    assert s.at(0.1 + 0.2 - 0.2, True) == (0.1, True)  # keyed by the rounded stop
    assert s.ready(0.1, True) == (0.1, True) and calls == [(0.1, True)]
    assert s.at(0.1, True) == (0.1, True) and calls == [(0.1, True)]


def test_planned_stops_are_the_settings_given():
    s = make([])
    assert s.planned(0.30000000000000004, False) and s.planned(0.1, True)
    assert not s.planned(0.4, False) and not s.planned(0.1, None)


def test_view_at_builds_only_where_ready():
    s = make([])
    view = s.view_at(lambda v, value: ("view", v, value), True)
    assert view(0.2) is None
    s.at(0.2, True)
    assert view(0.2) == ("view", 0.2, (0.2, True))
    assert s.view_at(lambda v, value: 1, False)(0.2) is None  # another setting


def test_unplanned_values_go_to_the_byte_bounded_cache():
    """A planned stop is kept in the table for the process's life; any other value (a link's
    own seed, a typed value) in lru.PAGE_RESULTS, whose bound is in bytes (tests/test_lru.py)."""
    from klrl_app import lru

    calls = []
    s = make(calls)
    s.at(0.1, False)
    s.at(5.0, False)
    assert len(s) == 1  # only the planned stop is pinned
    assert s.ready(5.0, False) == (5.0, False) and calls == [(0.1, False), (5.0, False)]
    assert lru.PAGE_RESULTS.get((s._table.name, (5.0, False))) == (5.0, False)


def test_the_background_fills_nearest_the_start_first(monkeypatch):
    monkeypatch.setenv("KLRL_PRECOMPUTE", "1")
    calls = []
    s = make(calls, pause_s=0)
    for _ in range(200):
        if len(s) == 6:
            break
        import time

        time.sleep(0.01)
    assert [v for v, _ in calls[:2]] == [0.2, 0.2] and len(s) == 6


def test_more_keys_are_planned_after_the_sweep(monkeypatch):
    monkeypatch.setenv("KLRL_PRECOMPUTE", "1")
    calls = []
    s = make(calls, pause_s=0, more=[(5.0, True), (0.1, False)])  # the second is planned already
    for _ in range(200):
        if len(s) == 7:
            break
        import time

        time.sleep(0.01)
    assert s.planned(5.0, True) and not s.planned(5.0, False)
    assert len(calls) == 7 and calls[-1] == (5.0, True)
