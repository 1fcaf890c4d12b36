"""The chart path (klrl_app/plots.show): what reaches the browser, and the fallback."""

from __future__ import annotations

import base64
import json
import os

import numpy as np
import pytest

from klrl_app import plots
from klrl_core import model, tilt
from tests.conftest import assert_clean, charts, run_page


def trace_values(trace: dict, axis: str) -> np.ndarray:
    """A trace's x or y, decoded from plotly's JSON (a list, or typed-array base64)."""
    v = trace[axis]
    if isinstance(v, dict):
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
    return np.asarray(v, dtype=float)


def optimum_bars(fig: dict) -> np.ndarray:
    return trace_values(next(t for t in fig["data"] if t["name"] == "optimum π*"), "y")


def expected_optimum(kappa: float) -> np.ndarray:
    r = model.rewards()
    return tilt.tilt(model.log_reference(r), r, kappa).pi


def live_charts(at) -> list:
    return [c for c in at.get("bidi_component") if c.proto.component_name == "klrl_live_chart"]


def live_ids(at) -> list[str]:
    return [c.proto.id for c in live_charts(at)]


def test_a_slider_move_sends_new_numbers_to_the_same_chart():
    """Same element ids before and after (the browser updates the chart in place), new data."""
    at = run_page("tilt.py")
    ids = live_ids(at)
    assert len(ids) == 2 and not at.get("plotly_chart")
    np.testing.assert_allclose(optimum_bars(charts(at)[0]), expected_optimum(5.0), rtol=1e-7)

    at.select_slider[0].set_value(20.0).run()
    assert live_ids(at) == ids
    np.testing.assert_allclose(optimum_bars(charts(at)[0]), expected_optimum(20.0), rtol=1e-7)
    assert not np.allclose(expected_optimum(20.0), expected_optimum(5.0))


def test_the_chart_carries_the_apps_options_and_plotly_js():
    at = run_page("tilt.py")
    data = json.loads(live_charts(at)[0].proto.json)
    assert data["config"] == plots.CHART_CONFIG
    # tilt draws bars only: the basic bundle (issue 33; the full one before).
    assert data["plotly_js"] == plots.PLOTLY_BASIC_JS != plots.PLOTLY_JS
    assert (
        json.loads(data["figure"])["layout"]["template"]["layout"]["font"]["family"] == plots.FONT
    )


def test_plotly_js_is_published_byte_for_byte():
    import plotly

    assert plots.publish_plotly_js()
    shipped = os.path.join(os.path.dirname(plotly.__file__), "package_data", "plotly.min.js")
    with open(shipped, "rb") as a, open(plots.STATIC_DIR / plots.PLOTLY_JS, "rb") as b:
        assert a.read() == b.read()
    basic = plots.STATIC_DIR / plots.PLOTLY_BASIC_JS
    assert basic.read_bytes() == plots.BASIC_SOURCE.read_bytes()
    assert b"plotly.js (basic - minified) v" + plots.PLOTLY_VERSION.encode() in basic.read_bytes()


def test_a_figure_gets_the_basic_bundle_when_it_has_every_trace_type():
    def fig(*types):
        return {"data": [{"type": t} for t in types], "layout": {}}

    assert plots.bundle_for(fig("bar", "scatter")) == plots.PLOTLY_BASIC_JS
    assert plots.bundle_for({"data": [{"x": [1]}], "layout": {}}) == plots.PLOTLY_BASIC_JS
    assert plots.bundle_for(fig("bar", "icicle")) == plots.PLOTLY_JS
    assert plots.bundle_for(fig("heatmap")) == plots.PLOTLY_JS


@pytest.fixture
def read_only_static(monkeypatch, tmp_path):
    """A static folder that cannot be created (its parent is a file)."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setattr(plots, "STATIC_DIR", blocker / "static")
    plots.publish_plotly_js.clear()
    yield
    plots.publish_plotly_js.clear()


def test_charts_fall_back_to_st_plotly_chart_when_plotly_js_cannot_be_published(read_only_static):
    at = run_page("tilt.py")
    assert_clean(at)
    assert not live_charts(at)
    assert len(at.get("plotly_chart")) == 2
    np.testing.assert_allclose(optimum_bars(charts(at)[0]), expected_optimum(5.0), rtol=1e-7)


PAGES_WITH_CHARTS = [
    "bandit.py",
    "tilt.py",
    "best-of-n.py",
    "groups.py",
    "overoptimization.py",
    "kl-penalty.py",
    "length-bias.py",
    "rarity.py",
    "pass-at-k.py",
    "dpo.py",
    "ppo-clip.py",
    "normalization.py",
    "entropy.py",
    "token-credit.py",
    "step-labels.py",
    "loop.py",
]


def test_every_chart_page_is_listed():
    """A new page with charts joins the validation above (nav lists every page)."""
    from klrl_app.nav import PAGES

    listed = {p.file.split("/")[-1] for p in PAGES} - {"exercises.py", "handout.py", "class.py"}
    assert listed == set(PAGES_WITH_CHARTS)


@pytest.mark.parametrize("file", PAGES_WITH_CHARTS)
def test_every_chart_is_a_valid_plotly_figure(file):
    """The app sends figures without building a plotly Figure (server time per slider move);
    here plotly validates each one: a misspelt property or a bad value raises."""
    import plotly.graph_objects as go

    figs = charts(run_page(file))
    assert figs
    for fig in figs:
        go.Figure(fig)  # raises ValueError on anything plotly.js would not understand


def test_validation_catches_a_misspelt_property():
    import plotly.graph_objects as go

    bad = plots.Chart("x", "y").add(x=[0, 1], y=[1, 2], mode="lines", colour="red").figure()
    with pytest.raises(ValueError):
        go.Figure(json.loads(plots.pio.to_json(bad, validate=False)))


def test_typed_arrays_round_trip():
    got = plots.typed_arrays(
        {
            "data": [
                {
                    "y": np.array([0.1, -2.5, 3e-300]),
                    "x": np.arange(4, dtype=np.int64),
                    "z": np.array([[1, 2], [3, 4]], dtype=np.int16),
                    "mask": np.array([True, False]),
                    "f": np.array([1.5], dtype=np.float32),
                    "name": "kept",
                    "text": ["a", "b"],
                }
            ]
        }
    )
    t = got["data"][0]
    assert t["y"]["dtype"] == "f8" and list(trace_values(t, "y")) == [0.1, -2.5, 3e-300]
    assert t["x"]["dtype"] == "f8" and list(trace_values(t, "x")) == [0, 1, 2, 3]  # no i8
    assert t["z"]["dtype"] == "i2" and t["z"]["shape"] == "2, 2"
    assert list(trace_values(t, "z")) == [1, 2, 3, 4]
    assert t["mask"]["dtype"] == "u1" and list(trace_values(t, "mask")) == [1, 0]
    assert t["f"]["dtype"] == "f4" and list(trace_values(t, "f")) == [1.5]
    assert t["name"] == "kept" and t["text"] == ["a", "b"]


def test_gapped_curves_are_one_trace_with_a_nan_after_each():
    out = plots.gapped(
        [0, 1, 2],
        [np.array([5, 6, 7], dtype=np.int8), np.array([-1, -2, -3], dtype=np.int8)],
        [1, -1],
    )
    np.testing.assert_array_equal(out["x"], [0, 1, 2, np.nan, 0, 1, 2, np.nan])
    np.testing.assert_array_equal(out["y"], [5, 6, 7, 0, -1, -2, -3, 0])
    assert out["y"].dtype == np.int8 and out["x"].dtype == np.float32  # bytes stay bytes
    np.testing.assert_array_equal(out["customdata"], [1, 1, 1, 1, -1, -1, -1, -1])
    assert "customdata" not in plots.gapped([0], [[1.5]])


def test_compact_keeps_every_value_a_chart_shows():
    """plots.compact (the charts' encoding): whole numbers in the smallest integer type,
    exactly; other floats in 4-byte floats, within float32's rounding; NaN kept."""
    cases = [
        (np.array([0.0, 3.0, -2.0]), "i1"),
        (np.array([0, 200]), "u1"),
        (np.array([-1, 300]), "i2"),
        (np.array([0.0, 70000.0]), "u4"),
        (np.array([True, False]), "b1"),
        (np.array([0.5, np.nan]), "f4"),
        (np.array([1e300, 1.0]), "f8"),
        (np.array([0.1, 2.0]), "f4"),
        (np.arange(3, dtype=np.int8), "i1"),
    ]
    for arr, code in cases:
        out = plots.compact(arr)
        assert f"{out.dtype.kind}{out.dtype.itemsize}" == code, (arr, out.dtype)
        np.testing.assert_allclose(out.astype(float), arr.astype(float), rtol=6e-8)
    got = plots.typed_arrays({"y": np.array([0.25, 1.0 / 3.0]), "x": np.arange(5)}, small=True)
    assert got["y"]["dtype"] == "f4" and got["x"]["dtype"] == "u1"
    assert list(trace_values(got, "x")) == [0, 1, 2, 3, 4]


def test_two_servers_publishing_at_once_write_their_own_temporary_copies(tmp_path, monkeypatch):
    """Two processes of one checkout (deploy/start.sh's, or a browser test's second server)
    may publish plotly.js at the same moment. With one shared temporary file the second's
    truncation could fall between the first's copy and its move, and half a bundle went into
    place, which browsers then cached for a year ("Unexpected end of input" in a browser
    test's profile). Each publisher now writes a temporary file of its own."""
    import threading as _threading
    from pathlib import Path as _Path

    monkeypatch.setattr(plots, "STATIC_DIR", tmp_path)
    written = []
    real_copy = plots.shutil.copyfile

    def copy(src, dst):
        written.append(_Path(dst).name)
        return real_copy(src, dst)

    monkeypatch.setattr(plots.shutil, "copyfile", copy)
    for _ in range(2):  # two publishers (threads here), one after the other
        for f in tmp_path.iterdir():
            f.unlink()
        plots.publish_plotly_js.clear()  # once per process: here, once per publisher
        t = _threading.Thread(target=plots.publish_plotly_js)
        t.start()
        t.join()
    # four files each (two plotly.js bundles, two of the app's modules), each publisher's
    # temporary copies its own
    n = 2 + len(plots.MODULES)
    assert len(written) == 2 * n and all(a != b for a, b in zip(written[:n], written[n:]))
    for source, name in (
        (plots.FULL_SOURCE, plots.PLOTLY_JS),
        (plots.BASIC_SOURCE, plots.PLOTLY_BASIC_JS),
        *((plots.MODULES[stem], plots.MODULE_FILES[stem]) for stem in plots.MODULES),
    ):
        assert (tmp_path / name).stat().st_size == source.stat().st_size
    plots.publish_plotly_js.clear()
    assert not list(tmp_path.glob(".*.tmp"))
