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
    np.testing.assert_allclose(optimum_bars(charts(at)[0]), expected_optimum(5.0), rtol=1e-12)

    at.select_slider[0].set_value(20.0).run()
    assert live_ids(at) == ids
    np.testing.assert_allclose(optimum_bars(charts(at)[0]), expected_optimum(20.0), rtol=1e-12)
    assert not np.allclose(expected_optimum(20.0), expected_optimum(5.0))


def test_the_chart_carries_the_apps_options_and_plotly_js():
    at = run_page("tilt.py")
    data = json.loads(live_charts(at)[0].proto.json)
    assert data["config"] == plots.CHART_CONFIG
    assert data["plotly_js"] == plots.PLOTLY_JS
    assert json.loads(data["figure"])["layout"]["template"]["layout"]["font"]["family"] == \
        plots.FONT


def test_plotly_js_is_published_byte_for_byte():
    import plotly

    assert plots.publish_plotly_js()
    shipped = os.path.join(os.path.dirname(plotly.__file__), "package_data", "plotly.min.js")
    with open(shipped, "rb") as a, open(plots.STATIC_DIR / plots.PLOTLY_JS, "rb") as b:
        assert a.read() == b.read()


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
    np.testing.assert_allclose(optimum_bars(charts(at)[0]), expected_optimum(5.0), rtol=1e-12)


PAGES_WITH_CHARTS = ["bandit.py", "tilt.py", "best-of-n.py", "groups.py", "overoptimization.py",
                     "kl-penalty.py", "length-bias.py", "rarity.py", "pass-at-k.py", "dpo.py",
                     "ppo-clip.py", "normalization.py", "entropy.py", "token-credit.py",
                     "step-labels.py", "loop.py"]


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
    got = plots.typed_arrays({"data": [{
        "y": np.array([0.1, -2.5, 3e-300]), "x": np.arange(4, dtype=np.int64),
        "z": np.array([[1, 2], [3, 4]], dtype=np.int16), "mask": np.array([True, False]),
        "f": np.array([1.5], dtype=np.float32), "name": "kept", "text": ["a", "b"]}]})
    t = got["data"][0]
    assert t["y"]["dtype"] == "f8" and list(trace_values(t, "y")) == [0.1, -2.5, 3e-300]
    assert t["x"]["dtype"] == "f8" and list(trace_values(t, "x")) == [0, 1, 2, 3]  # no i8
    assert t["z"]["dtype"] == "i2" and t["z"]["shape"] == "2, 2"
    assert list(trace_values(t, "z")) == [1, 2, 3, 4]
    assert t["mask"]["dtype"] == "u1" and list(trace_values(t, "mask")) == [1, 0]
    assert t["f"]["dtype"] == "f4" and list(trace_values(t, "f")) == [1.5]
    assert t["name"] == "kept" and t["text"] == ["a", "b"]


def test_gapped_curves_are_one_trace_with_a_nan_after_each():
    out = plots.gapped([0, 1, 2], [np.array([5, 6, 7], dtype=np.int8),
                                   np.array([-1, -2, -3], dtype=np.int8)], [1, -1])
    np.testing.assert_array_equal(out["x"], [0, 1, 2, np.nan, 0, 1, 2, np.nan])
    np.testing.assert_array_equal(out["y"], [5, 6, 7, 0, -1, -2, -3, 0])
    assert out["y"].dtype == np.int8 and out["x"].dtype == np.float32   # bytes stay bytes
    np.testing.assert_array_equal(out["customdata"], [1, 1, 1, 1, -1, -1, -1, -1])
    assert "customdata" not in plots.gapped([0], [[1.5]])
