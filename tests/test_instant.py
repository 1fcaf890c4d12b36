"""The instant mechanism's server side (klrl_app/instant.py): patches, the table of stops, and
the table's element identical from run to run of a setting (so Streamlit's message cache sends
it once)."""

import copy
import json

import pytest
from hypothesis import given, strategies as st

from klrl_app import controls
from klrl_app.instant import patches
from tests.conftest import charts, instant_figure, instant_table, run_async, run_page


def apply(base, ps):
    """instant.js's applyPatches (without shared values), written again here."""
    out = copy.deepcopy(base)
    for path, value in ps:
        if not path:
            return value
        node = out
        for part in path[:-1]:
            node = node[part]
        node[path[-1]] = value
    return out


leaves = st.one_of(
    st.integers(-5, 5),
    st.text(max_size=3),
    st.none(),
    st.booleans(),
    st.floats(allow_nan=False, width=32),
)
trees = st.recursive(
    leaves,
    lambda kids: st.one_of(
        st.lists(kids, max_size=4), st.dictionaries(st.sampled_from("abcd"), kids, max_size=4)
    ),
    max_leaves=20,
)


@given(trees, trees)
def test_patches_rebuild_the_new_figure_from_the_base(base, new):
    assert apply(base, patches(base, new)) == new


def test_patches_are_only_what_changed():
    base = {"data": [{"y": [1, 2, 3, 4, 5, 6], "name": "a"}], "layout": {"title": "t"}}
    new = {"data": [{"y": [1, 9, 3, 4, 5, 6], "name": "a"}], "layout": {"title": "t"}}
    assert patches(base, new) == [[["data", 0, "y", 1], 9]]
    # most of a list moved: the whole list, shorter than its items one by one
    moved = {"data": [{"y": [0, 9, 8, 4, 5, 6], "name": "a"}], "layout": {"title": "t"}}
    assert patches(base, moved) == [[["data", 0, "y"], [0, 9, 8, 4, 5, 6]]]
    assert patches(base, base) == []
    # a leaf of another type (1 against True, 1 against 1.0) is a change
    assert patches({"x": 1}, {"x": True}) == [[["x"], True]]
    # a list of another length is replaced whole
    assert patches({"x": [1]}, {"x": [1, 2]}) == [[["x"], [1, 2]]]


def _table_element(at):
    found = [
        c
        for c in at.get("bidi_component")
        if c.proto.component_name == "klrl_instant" and "url" in json.loads(c.proto.json)
    ]
    assert len(found) == 1
    return found[0].proto


def test_the_table_element_names_the_setting_s_table_by_its_hash():
    """Two runs at different κ stops, same setting: the element naming the table is the same
    (one table per setting, fetched and cached once by the browser); it is small, the table is
    not in it; another setting (the √KL axis) names another table."""
    first = run_page("tilt.py", kappa="5")
    other = run_page("tilt.py", kappa="20")
    a, b = _table_element(first), _table_element(other)
    assert a.SerializeToString(deterministic=True) == b.SerializeToString(deterministic=True)
    assert len(a.json) < 300  # the component's data: the table is not in it
    c = _table_element(run_page("tilt.py", kappa="5", axis="sqrt"))
    assert json.loads(c.json)["url"] != json.loads(a.json)["url"]


def test_the_table_is_served_gzipped_by_its_hash_and_kept_by_the_browser():
    """GET /klrl-table/<hash>: the table the run named, gzipped (the browser inflates it), with
    a year's immutable cache lifetime; an unknown hash is a 404 that no cache keeps."""
    import gzip

    from starlette.routing import Router

    from klrl_app import serve
    from tests.test_serve import request

    at = run_page("tilt.py", kappa="5")
    data = json.loads(_table_element(at).json)
    app = Router(routes=serve.TABLE_ROUTES)
    status, headers, body = run_async(request(app, data["url"]))
    assert status == 200
    assert headers["content-encoding"] == "gzip" and "immutable" in headers["cache-control"]
    table = json.loads(gzip.decompress(body))  # as a browser inflates it
    assert table == instant_table(at) and table["keys"] and table["base"]
    status, headers, _ = run_async(request(app, "/klrl-table/0123456789abcdef"))
    assert status == 404 and headers["cache-control"] == "no-store"


def test_the_tilt_table_holds_every_stop_and_the_page_at_each():
    at = run_page("tilt.py", kappa="5")
    t = instant_table(at)
    options = controls.kappa_options()
    assert len(t["keys"]) == len(options) and all(r is not None for r in t["rows"])
    assert len(json.dumps(t, ensure_ascii=False)) <= 300_000
    for kappa in (0.0, 4.5, 5.5, 20.0, 10_000.0):
        i = options.index(kappa)
        moved = run_page("tilt.py", kappa=controls.fmt_number(kappa))
        assert instant_figure(at, i, "tilt-policy") == charts(moved)[0], kappa
        assert instant_figure(at, i, "tilt-frontier") == charts(moved)[1], kappa


def test_the_tilt_charts_axes_are_fixed_over_every_stop():
    at = run_page("tilt.py")
    t = instant_table(at)
    for chart in ("tilt-policy", "tilt-frontier"):
        ranges = {
            json.dumps(
                [
                    instant_figure(at, i, chart)["layout"][ax].get("range")
                    for ax in ("xaxis", "yaxis")
                ]
            )
            for i in range(len(t["keys"]))
        }
        assert len(ranges) == 1 and "null" not in next(iter(ranges)), chart


@pytest.mark.parametrize("present", ["0", "1"])
def test_the_presentation_view_has_its_own_table(present):
    at = run_page("tilt.py", present=present)
    fig = instant_figure(at, 0, "tilt-policy")
    assert (fig["layout"].get("font", {}).get("size") == 19) == (present == "1")


def test_a_table_over_the_budget_carries_the_readout_only(monkeypatch):
    import klrl_app.instant as instant

    monkeypatch.setattr(instant, "MAX_TABLE", 5_000)
    monkeypatch.setattr(instant, "_tables", instant.lru.ByteLRU(instant.TABLES_BYTES))
    at = run_page("tilt.py", kappa="5")
    t = instant_table(at)
    assert t["base"] == {} and all(r["c"] == {} and r["v"] for r in t["rows"])
    assert len(charts(at)) == 2  # the run still draws both charts


def test_a_value_repeated_within_a_stop_is_sent_once():
    from klrl_app.instant import _share

    long = "x" * 80
    row = {"a": [[["data", 0, "y"], long], [["data", 1, "y"], long]], "b": [[["z"], long]]}
    shared = _share(row)
    assert shared["a"][0] == [["data", 0, "y"], long]
    assert shared["a"][1] == [["data", 1, "y"], {"$": ["a", 0]}]
    assert shared["b"] == [[["z"], {"$": ["a", 0]}]]
    short = {"a": [[["p"], "ab"], [["q"], "ab"]]}
    assert _share(short) == short  # short values are cheaper inline


def test_the_components_carry_an_import_of_their_published_module_not_the_module():
    """Each chart's and each run's element carries its component's script: the few lines that
    import the module published in the static folder (by its content's hash), not instant.js's
    22 kB and live_chart.js's 7.6 kB in every message."""
    from klrl_app import plots

    at = run_page("tilt.py", kappa="5")
    found = {c.proto.component_name: c.proto for c in at.get("bidi_component")}
    for name, stem in (("klrl_instant", "instant"), ("klrl_live_chart", "live_chart")):
        js = found[name].js_content
        assert len(js) < 1_000 and plots.MODULE_FILES[stem] in js, name
        published = plots.STATIC_DIR / plots.MODULE_FILES[stem]
        assert published.read_bytes() == plots.MODULES[stem].read_bytes()
