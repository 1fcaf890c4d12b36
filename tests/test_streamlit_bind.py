"""KNOWN STREAMLIT LIMITS: what `bind="query-params"` does in the Streamlit this app pins.

These tests do not test the app. They pin the behaviours of Streamlit's own widget-to-URL
binding that keep klrl_app/controls.py from using it (docs/query-params.md, one table row
per case: the link, what bind does, what SPEC.md requires). They pass while the limits
hold. When one fails after a Streamlit upgrade, that case may be solved upstream: read its
row and see whether controls.py can now hand that control to bind.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest


def _bound_app():
    import streamlit as st

    from klrl_app.controls import kappa_label, kappa_options

    # What the app would add on top of bind: its own value for a link it corrects
    # (controls.py's nearest allowed value), put in session state before the widget.
    fixes = st.session_state.get("__fixes__") or {}
    for key, value in fixes.items():
        st.session_state.setdefault(key, value)
    lr = st.slider(
        "Learning rate",
        0.0,
        1.0,
        step=0.05,
        key="lr",
        bind="query-params",
        **({} if "lr" in fixes else {"value": 0.15}),
    )
    baseline = st.toggle("Baseline", key="baseline", bind="query-params")
    kappa = st.select_slider(
        "Inverse KL weight",
        kappa_options(),
        value=5.0,
        format_func=kappa_label,
        key="kappa",
        bind="query-params",
    )
    axis = st.segmented_control(
        "Axis",
        ["kl", "sqrt"],
        default="kl",
        format_func={"kl": "KL", "sqrt": "√KL"}.get,
        key="axis",
        bind="query-params",
    )
    seed = st.number_input("Seed", value=0, step=1, key="seed", bind="query-params")
    st.text(repr({"lr": lr, "baseline": baseline, "kappa": kappa, "axis": axis, "seed": seed}))


def _open(link: dict[str, str], fixes: dict | None = None, runs: int = 1):
    at = AppTest.from_function(_bound_app, default_timeout=30)
    if fixes:
        at.session_state["__fixes__"] = fixes
    for key, value in link.items():
        at.query_params[key] = value
    for _ in range(runs):
        at.run()
    assert not at.exception
    return ast.literal_eval(at.text[0].value), dict(at.query_params)


def test_pinned_streamlit_version():
    """The cases below were read in this version's source (docs/query-params.md)."""
    import streamlit

    assert streamlit.__version__.startswith("1.67."), streamlit.__version__


def test_bind_select_slider_links_the_label_not_the_number():
    """Case 1: `?kappa=20` is dropped without a word; the link bind reads and writes is the
    slider's label (`κ = 20  ·  β = 0.05`). SPEC: `kappa=20` (or `beta=0.05`)."""
    values, url = _open({"kappa": "20"})
    assert values["kappa"] == 5.0 and url == {}
    values, url = _open({"kappa": "κ = 20  ·  β = 0.05"})
    assert values["kappa"] == 20.0 and url == {"kappa": "κ = 20  ·  β = 0.05"}


def test_bind_puts_an_out_of_range_link_at_the_default_silently():
    """Case 2: `?lr=5` (largest allowed 1) gives the default 0.15, and the parameter is
    removed: nothing tells the page. SPEC: the nearest allowed value, 1, with a notice."""
    values, url = _open({"lr": "5"})
    assert values["lr"] == 0.15 and url == {}


def test_bind_keeps_a_value_the_app_sets_out_of_the_address_bar():
    """Case 2, the work-around: the app puts 1 in session state before the widget. The page
    shows 1, but the address bar keeps no `lr`, on this run or the next: a copied link opens
    at 0.15. SPEC: the address bar holds the value shown, so a link reproduces the view."""
    values, url = _open({"lr": "5"}, fixes={"lr": 1.0}, runs=2)
    assert values["lr"] == 1.0 and url == {}


def test_bind_toggle_reads_only_true_and_false():
    """Case 3: `?baseline=on` is dropped; bind writes `true`. SPEC: on/off, true/false, 1/0
    in any case; the app writes `on`/`off` (tests/test_app_bandit.py)."""
    for word in ("on", "1", "yes"):
        values, url = _open({"baseline": word})
        assert values["baseline"] is False and url == {}, word
    values, url = _open({"baseline": "true"})
    assert values["baseline"] is True and url == {"baseline": "true"}


def test_bind_segmented_control_links_the_label_case_exact():
    """Case 4: `?axis=sqrt` (the option) and `?axis=SQRT` are dropped; the link holds the
    label `√KL`. SPEC (tilt): `axis=sqrt`, read case-blind."""
    for raw in ("sqrt", "SQRT"):
        values, url = _open({"axis": raw})
        assert values["axis"] == "kl" and url == {}, raw
    values, url = _open({"axis": "√KL"})
    assert values["axis"] == "sqrt" and url == {"axis": "√KL"}


def test_bind_removes_a_default_from_the_address_bar():
    """Case 5: a value at its default is taken out of the link (`?lr=0.15` becomes no
    `lr`). The app keeps every control in the link (tests/test_app_bandit.py, test_app_tilt.py
    assert `lr=0.15`, `kappa=5` at the defaults)."""
    values, url = _open({"lr": "0.15", "seed": "0"})
    assert values["lr"] == 0.15 and url == {}


def test_bind_number_box_takes_a_negative_seed_and_truncates_a_fraction():
    """Case 6: without bounds (the app's box has none, so that a typed value is clamped with
    a message instead of turning red) `?seed=-5` is used as it is, and `?seed=2.5` silently
    becomes 2, rewritten in the link. SPEC: a seed is a non-negative integer; 2.5 is refused
    with a notice."""
    values, url = _open({"seed": "-5"})
    assert values["seed"] == -5 and url == {"seed": "-5"}
    values, url = _open({"seed": "2.5"})
    assert values["seed"] == 2 and url == {"seed": "2"}


@pytest.fixture
def two_pages(tmp_path: Path) -> Path:
    """A two-page app whose pages bind `kappa`, as tilt and overoptimization would."""
    page = (
        "import streamlit as st\n"
        "k = st.select_slider('Inverse KL weight', [5.0, 10.0, 20.0], value=5.0,\n"
        "                     key='kappa', bind='query-params')\n"
        "st.text(f'kappa={k}')\n"
        "if st.button('Bring everyone to b at kappa 20'):\n"
        "    try:\n"
        "        st.switch_page('b.py', query_params={'kappa': '20.0'})\n"
        "    except st.errors.StreamlitAPIException as err:  # shown: AppTest redacts errors\n"
        "        st.text(f'{type(err).__name__}: {err}')\n"
    )
    (tmp_path / "a.py").write_text(page)
    (tmp_path / "b.py").write_text(page)
    (tmp_path / "main.py").write_text(
        "import streamlit as st\n"
        "st.navigation([st.Page('a.py', default=True), st.Page('b.py')]).run()\n"
    )
    return tmp_path / "main.py"


def test_bind_makes_switch_page_with_a_bound_name_raise(two_pages):
    """Case 7: once `kappa` is bound, `st.switch_page(page, query_params={"kappa": ...})`
    raises (it sets st.query_params, which refuses bound names), as do
    `st.query_params.from_dict` and `.clear()`. The class's "Bring everyone here"
    (klrl_app/classroom/ui.go) and Controls.finish use exactly these."""
    at = AppTest.from_file(str(two_pages), default_timeout=30)
    at.query_params["kappa"] = "10.0"
    at.run()
    assert not at.exception and at.text[0].value == "kappa=10.0"
    at.button[0].click().run()
    assert not at.exception and at.text[0].value == "kappa=10.0"  # still on a
    assert at.text[1].value.startswith(
        "StreamlitAPIException: Cannot directly set query parameter 'kappa' - it is bound"
    )
