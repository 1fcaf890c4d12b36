"""The rarity page (Section 12.3.3, Equation 12.7; Section 12.4.2, Example 12.1) through AppTest:
readouts, figures, the live statements and their branches, the presets, deep links and bad
links.

Expected numbers are the chapter's printed ones and the closed forms written plainly here:
pi*(y1) = p0 e^{D/b} / (p0 e^{D/b} + 1 - p0), thresholds D / log((1 - p0)/p0) and
D / log(1/p0), e^{D/b}, and Example 12.1's weights. Nothing expected comes from klrl_core.
"""

from __future__ import annotations

import base64
import math

import numpy as np
import plotly.graph_objects as go
import pytest

from tests.conftest import (
    all_text,
    assert_clean,
    charts,
    instant_readout_at,
    metrics,
    notices,
    run_page,
)

PAGE = "rarity.py"
PI, BOUND, EXACT, EQ127, FACTOR = (
    "π*(y₁), two responses",
    "many responses",
    "exact threshold β",
    "Eq. 12.7 threshold β",
    "largest change factor",
)


def two(p0: float, delta: float, beta: float) -> float:
    """p0 e^{D/b} / (p0 e^{D/b} + 1 - p0), divided through by p0 e^{D/b} when that is huge."""
    x = math.log(p0 / (1 - p0)) + delta / beta
    return 1 / (1 + math.exp(-x)) if x > -700 else math.exp(x)


def values(trace: dict, axis: str) -> np.ndarray:
    v = trace[axis]
    if isinstance(v, dict):
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
    return np.asarray(v, dtype=float)


def trace(fig: dict, name_start: str) -> dict:
    return next(t for t in fig["data"] if str(t.get("name", "")).startswith(name_start))


def look_for(at) -> str:
    text = all_text(at)
    return text[text.index("What to look for") :].split("\n")[0]


def table_with(at, column: str):
    return next(t.value for t in at.table if column in t.value.columns)


# --------------------------------------------------------------------------- defaults
def test_defaults_show_the_printed_numbers():
    at = run_page(PAGE)
    assert_clean(at)
    assert notices(at) == []
    assert dict(at.query_params) == {"p0": "1e-09", "delta": "1", "beta": "0.05"}
    m = metrics(at)
    # pi*(y1) = 1e-9 e^20 / (1e-9 e^20 + 1 - 1e-9) = 0.327; the bound is the same number
    assert m[PI] == f"{two(1e-9, 1, 0.05):.3f}" == "0.327"
    assert m[BOUND] == "≥ 0.327"
    # log(1/p0) = 20.7 and the threshold 0.0483 (both ways to four decimals)
    assert round(math.log(1e9), 1) == 20.7
    assert m[EQ127] == f"{1 / math.log(1e9):.4f}" == "0.0483"
    assert m[EXACT] == f"{1 / math.log((1 - 1e-9) / 1e-9):.4f}" == "0.0483"
    # e^20 = 4.85e8
    assert f"{math.exp(20):.3g}" == "4.85e+08"
    assert m[FACTOR] == "exp(20) = 4.85 × 10⁸"
    figs = charts(at)
    assert len(figs) == 2
    for fig in figs:
        go.Figure(fig)


def test_just_below_the_threshold():
    at = run_page(PAGE, beta="0.04")
    assert_clean(at)
    m = metrics(at)
    assert m[PI] == f"{two(1e-9, 1, 0.04):.3f}" == "0.986"
    assert m[FACTOR] == f"exp(25) = {math.exp(25) / 1e10:.2f} × 10¹⁰"


def test_one_in_a_hundred_half_gap():
    at = run_page(PAGE, p0="0.01", delta="0.5", beta="0.1")
    assert_clean(at)
    m = metrics(at)
    assert m[EXACT] == f"{0.5 / math.log(99):.4f}" == "0.1088"
    assert m[EQ127] == f"{0.5 / math.log(100):.4f}" == "0.1086"
    assert m[PI] == f"{two(0.01, 0.5, 0.1):.3f}"


def test_curve_and_thresholds_drawn():
    at = run_page(PAGE, p0="0.001", delta="2", beta="0.3")
    assert_clean(at)
    left, right = charts(at)
    curve = trace(left, "two responses")
    b = values(curve, "x")
    # the curve in 4-byte floats (7 digits; the hover shows 3)
    np.testing.assert_allclose(values(curve, "y"), [two(0.001, 2, x) for x in b], rtol=1e-6)
    # two decades either side of beta and of both thresholds at every stop of p0 (the same
    # axis at every stop): the lowest threshold is Eq. 12.7's at p0 = 1e-12, 2/log(1e12); the
    # highest finite one Eq. 12.7's at p0 = 1/2, 2/log 2 (above beta = 0.3)
    assert b.min() == pytest.approx(2 / math.log(1e12) / 100, rel=1e-9)
    assert b.max() == pytest.approx(2 / math.log(2) * 100, rel=1e-9)
    exact = values(trace(left, "exact threshold"), "x")
    bound = values(trace(left, "Eq. 12.7"), "x")
    assert exact[0] == pytest.approx(2 / math.log(999), rel=1e-12)
    assert bound[0] == pytest.approx(2 / math.log(1000), rel=1e-12)
    assert bound[0] < exact[0]
    assert two(0.001, 2, exact[0]) == pytest.approx(0.5, rel=1e-12)
    here = trace(left, "β = 0.3")
    assert values(here, "y")[0] == pytest.approx(two(0.001, 2, 0.3), rel=1e-12)
    # right: gap needed against p0 at beta = 0.3, straight in log p0
    p = values(trace(right, "exact"), "x")
    np.testing.assert_allclose(
        values(trace(right, "exact"), "y"), 0.3 * np.log((1 - p) / p), rtol=1e-6, atol=1e-14
    )
    np.testing.assert_allclose(
        values(trace(right, "Eq. 12.7"), "y"), 0.3 * np.log(1 / p), rtol=1e-6
    )
    step = trace(right, "1000× rarer")
    np.testing.assert_allclose(values(step, "x"), [0.001, 1e-6])
    assert np.diff(values(step, "y"))[0] == pytest.approx(0.3 * math.log(1000), rel=1e-10)
    star = trace(right, "y₁:")
    assert list(values(star, "x")) == [0.001] and list(values(star, "y")) == [2.0]


# ------------------------------------------------------------------- live statements
def test_live_statements_at_the_defaults():
    text = look_for(run_page(PAGE))
    assert "At β = 0.05, above both thresholds, y₁ holds less than half" in text
    # a thousand times rarer costs beta log 1000 = 6.9 beta = 0.345 at beta = 0.05
    assert round(6.907755, 1) == 6.9 and f"{0.05 * math.log(1000):.3g}" == "0.345"
    assert "β·log 1000 ≈ 6.9β, here 0.345" in text
    # a billion-to-one response dominates once beta < Delta/20.7 = 0.0483: not at 0.05
    assert "Δ/log 10⁹ = Δ/20.7, here 0.0483; at β = 0.05 such a response does not" in text
    # read the other way: e^{-20} = 2.06e-9, and p0 = 1e-9 lies below it
    assert f"{math.exp(-20):.3g}" == "2.06e-09"
    assert "exp(−Δ/β) = 2.06 × 10⁻⁹; p₀ = 10⁻⁹ is below that line, and the gap holds y₁ off" in text
    # y1's own factor: pi*/p0 = 3.27e8, within a factor 2 of e^20
    assert f"{two(1e-9, 1, 0.05) / 1e-9:.3g}" == "3.27e+08"
    assert "rises by a factor 3.27 × 10⁸, within a factor 2 of that limit" in text


@pytest.mark.parametrize(
    "params,phrases",
    [
        (
            {"beta": "0.04"},
            [
                "At β = 0.04, below both thresholds, y₁ dominates",
                "at β = 0.04 such a response does.",
                "above that line",
                "well short of that limit",
            ],
        ),
        # between the two thresholds: 0.5/log(100) = 0.10857 < 0.1087 < 0.5/log(99) = 0.10881
        (
            {"p0": "0.01", "delta": "0.5", "beta": "0.1087"},
            [
                "still holds at least half of π*: β is at or below the exact threshold",
                "not below Equation 12.7's",
                "yet not below the exact two-response cut",
            ],
        ),
        (
            {"p0": "0.5", "delta": "0.01", "beta": "10"},
            [
                "y₁ already holds at least half under π₀",
                "no exact threshold",
                "β is large against Δ: the largest change factor is below e",
            ],
        ),
        (
            {"p0": "1e-12", "delta": "1", "beta": "0.001"},
            [
                "below both thresholds, y₁ dominates",
                "exp(−Δ/β) = 5.08 × 10⁻⁴³⁵",
                "p₀ = 10⁻¹² is above that line",
            ],
        ),
        ({"p0": "0.2", "delta": "10", "beta": "0.0001"}, ["below both thresholds, y₁ dominates"]),
        (
            {"p0": "1e-12", "delta": "0.01", "beta": "10"},
            ["above both thresholds", "β is large against Δ"],
        ),
    ],
)
def test_explanation_branches(params, phrases):
    at = run_page(PAGE, **params)
    assert_clean(at)
    assert notices(at) == []
    text = look_for(at)
    for phrase in phrases:
        assert phrase in text, phrase


def test_the_between_thresholds_setting_is_really_between():
    b = 0.1087
    assert 0.5 / math.log(100) < b < 0.5 / math.log(99)
    at = run_page(PAGE, p0="0.01", delta="0.5", beta=str(b))
    assert at.select_slider[1].value == b  # a linked beta between stops is kept
    assert float(metrics(at)[PI]) >= 0.5 and two(0.01, 0.5, b) >= 0.5


def test_deepseek_reading():
    at = run_page(PAGE, beta="0.001", p0="1e-12")
    assert_clean(at)
    m = metrics(at)
    # e^1000 = 10^434.29 = 1.97e434, written from its log
    assert 1000 / math.log(10) == pytest.approx(434.294, abs=1e-3)
    assert m[FACTOR] == "exp(1,000) = 1.97 × 10⁴³⁴"
    assert m[PI] == "> 0.999999"  # below 1 (review item 7; was "1.000")
    text = all_text(at)
    assert "exp(−1,000) = 5.08 × 10⁻⁴³⁵" in text  # e^{-1000} = 10^{-434.29}
    assert "every 400 steps (26 phases" in text
    assert "β = 0.001/26 = 3.85 × 10⁻⁵" in text


# ------------------------------------------------------------- Example 12.1 and resets
def test_example_12_1_keeps_its_odds_at_every_beta():
    at = run_page(PAGE, beta="0.2")
    t = table_with(at, "formal : casual")
    assert list(t["formal : casual"]) == ["2.000 : 1"] * 5
    assert list(t.index) == ["0.5", "0.2 (this page)", "0.1", "0.01", "0.001"]
    for beta, row in zip((0.5, 0.2, 0.1), t.itertuples()):
        w = [0.2 * math.exp(1 / beta), 0.1 * math.exp(1 / beta), 0.7]
        expect = [x / sum(w) for x in w]
        assert [float(v) for v in row[1:4]] == pytest.approx(expect, abs=5e-5)
    # printed: about (0.51, 0.25, 0.24) at beta = 0.5 and (0.667, 0.333, 0.0001) at 0.1
    first = [float(v) for v in t.iloc[0, :3]]
    assert [round(v, 2) for v in first] == [0.51, 0.25, 0.24]
    third = [float(v) for v in t.iloc[2, :3]]
    assert [round(third[0], 3), round(third[1], 3), round(third[2], 4)] == [0.667, 0.333, 0.0001]
    assert "stay at the reference's 2 : 1 at every β" in all_text(at)


def test_resetting_the_reference_m_times_is_one_tilt_at_beta_over_m():
    at = run_page(PAGE, p0="0.001", delta="1", beta="2")
    assert_clean(at)
    t = table_with(at, "π*(y₁): one at β/m")
    assert list(t.index) == ["1", "2", "4", "26"]
    for m, row in zip((1, 2, 4, 26), t.itertuples()):
        expect = two(0.001, 1, 2 / m)
        assert row[1] == row[2] == f"{expect:.3f}"
        # KL of the two-response optimum from pi0, computed here
        q = expect
        kl = q * math.log(q / 0.001) + (1 - q) * math.log((1 - q) / 0.999)
        assert row[5] == row[6] == f"{kl:.4f}"
    assert "largest difference in log-probability" in all_text(at)


# ---------------------------------------------------------------- controls and links
def choose_preset(at, start: str):
    menu = at.selectbox(key="rarity.preset")
    return menu.set_value(next(o for o in menu.options if o.startswith(start))).run()


def test_presets_set_the_three_controls():
    at = run_page(PAGE)
    # a menu that closes once chosen, not buttons in a popover that stays open over the chart
    assert not any("DeepSeek" in b.label for b in at.button)
    choose_preset(at, "DeepSeek")
    assert_clean(at)
    assert at.query_params["beta"] == "0.001" and at.query_params["p0"] == "1e-12"
    assert at.query_params["delta"] == "1"
    assert metrics(at)[FACTOR] == "exp(1,000) = 1.97 × 10⁴³⁴"
    assert at.selectbox(key="rarity.preset").value is None  # cleared after choosing
    choose_preset(at, "One in a hundred")
    assert metrics(at)[EXACT] == "0.1088"
    assert at.query_params["p0"] == "0.01"


def readout_html(at) -> str:
    """The readout's help texts (listed under "About this figure and its numbers", an
    expander whose body the page builds only while it is open)."""
    at.session_state["klrl-rarity-about"] = True
    at.run()
    return next(str(m.value) for m in at.markdown if "**Eq. 12.7 threshold β**" in str(m.value))


@pytest.mark.parametrize("p0", ["0.5", "0.2", "1e-12"])
def test_the_eq_12_7_help_is_true_at_both_ends_of_p0(p0):
    at = run_page(PAGE, p0=p0)
    assert_clean(at)
    html = readout_html(at)
    assert "a little below" not in html
    assert "below the exact threshold when there is one, and close to it when p₀ is small" in html
    m, p = metrics(at), float(p0)
    assert m[EQ127] == f"{1 / math.log(1 / p):.4f}"
    if p == 0.5:
        assert m[EXACT].startswith("none")  # no exact threshold; Eq. 12.7 gives 1.4427
    else:
        exact = 1 / math.log((1 - p) / p)
        assert 1 / math.log(1 / p) < exact
        # 14% lower at p0 = 0.2; within 0.1% at 1e-12
        gap = 1 - (1 / math.log(1 / p)) / exact
        assert (gap > 0.13) if p == 0.2 else (gap < 1e-3)


@pytest.mark.parametrize(
    "params", [{"p0": "1e-12", "delta": "1", "beta": "0.001"}, {"p0": "0.5"}, {}]
)
def test_no_decade_tick_sits_at_the_start_of_a_log_axis(params):
    at = run_page(PAGE, **params)
    for fig in charts(at):
        xa = fig["layout"]["xaxis"]
        first = math.log10(min(xa["tickvals"]))
        assert xa["range"][0] < first - 0.1  # room for the label left of the first tick


def test_the_star_is_on_top_and_not_covered_by_the_rarer_marker():
    fig = charts(run_page(PAGE))[1]
    star, rarer = fig["data"][-1], trace(fig, "1000× rarer")
    assert star["name"].startswith("y₁") and star["marker"]["symbol"] == "star"
    assert list(values(rarer, "x"))[0] == 1e-9  # the rarer line starts at y₁'s p₀...
    assert list(rarer["marker"]["size"])[0] == 0  # ...without a marker there
    assert star["marker"]["size"] > max(rarer["marker"]["size"])


def test_moving_the_sliders_updates_readout_and_link():
    at = run_page(PAGE)
    at.select_slider[0].set_value(1e-6).run()
    at.slider[0].set_value(2.0).run()
    at.select_slider[1].set_value(0.1).run()
    assert_clean(at)
    assert dict(at.query_params) == {"p0": "1e-06", "delta": "2", "beta": "0.1"}
    assert metrics(at)[PI] == f"{two(1e-6, 2, 0.1):.3f}"


def test_a_p0_between_stops_is_kept_exactly():
    at = run_page(PAGE, p0="3.7e-10")
    assert_clean(at)
    assert notices(at) == [] and at.select_slider[0].value == 3.7e-10
    assert at.query_params["p0"] == "3.7e-10"
    assert metrics(at)[EQ127] == f"{1 / math.log(1 / 3.7e-10):.4f}"


def test_kappa_link_sets_beta():
    at = run_page(PAGE, kappa="25")
    assert_clean(at)
    assert at.query_params["beta"] == "0.04" and metrics(at)[PI] == "0.986"


@pytest.mark.parametrize(
    "params,shown,expect",
    [
        ({"p0": "1"}, "`p0=1`: above the largest allowed value 0.5", {"p0": "0.5"}),
        ({"p0": "0"}, "`p0=0`: below the smallest allowed value 10⁻¹²", {"p0": "1e-12"}),
        ({"p0": "abc"}, "`p0=abc`: not a number", {"p0": "1e-09"}),
        ({"delta": "-1"}, "`delta=-1`: below the smallest allowed value 0.01", {"delta": "0.01"}),
        ({"beta": "0"}, "`beta=0`: below the smallest allowed value 10⁻⁴", {"beta": "0.0001"}),
        ({"beta": "100"}, "`beta=100`: above the largest allowed value 10", {"beta": "10"}),
    ],
)
def test_bad_links_give_a_notice_and_still_draw(params, shown, expect):
    at = run_page(PAGE, **params)
    assert_clean(at)
    assert len(notices(at)) == 1 and shown in notices(at)[0]
    for key, value in expect.items():
        assert at.query_params[key] == value
    assert len(charts(at)) == 2 and PI in metrics(at)


def test_p0_of_one_is_clamped_and_explained():
    at = run_page(PAGE, p0="1", delta="-1", beta="0")
    assert_clean(at)
    m = metrics(at)
    assert m[EXACT] == "none (p₀ ≥ ½)"
    assert m[EQ127] == f"{0.01 / math.log(2):.4f}"
    assert "y₁ already holds at least half under π₀" in look_for(at)


def test_presentation_view_shows_only_the_first_figures():
    at = run_page(PAGE, present="1")
    assert_clean(at)
    assert len(charts(at)) == 2 and len(at.table) == 0
    assert "What to look for" not in all_text(at)


@pytest.mark.parametrize(
    "params",
    [{}, {"delta": "0.5", "beta": "0.1"}, {"beta": "2"}],
    ids=["defaults", "one-in-a-hundred-preset", "large-beta"],
)
def test_instant_readout_holds_the_readout_the_next_stops_show(params):
    """The table sent for the p₀ stops beside 10⁻⁹ (a select slider: keyed by stop index) is
    what the page shows when p₀ gets there, the ends (10⁻¹², 0.5: no exact threshold) too."""
    stops = [float(f"{m}e{e}") for e in range(-12, 0) for m in (1, 2, 5)]  # 1e-12 .. 0.5
    i = stops.index(1e-9)
    at = run_page(PAGE, p0="1e-9", **params)
    sent = {j: instant_readout_at(at, j) for j in (i - 1, i + 1, i + 12, 0, len(stops) - 1)}
    for j, shown in sent.items():
        moved = run_page(PAGE, p0=repr(stops[j]), **params)
        assert metrics(moved) == shown, stops[j]
    assert sent[len(stops) - 1][EXACT].startswith("none")


# ------------------------------------------------------------------ the instant figures
import json  # noqa: E402

from tests.conftest import drawn, instant_figure, instant_table  # noqa: E402

CHARTS = ("rarity-beta", "rarity-gap")
STOPS = [float(f"{m}e{e}") for e in range(-12, 0) for m in (1, 2, 5)]  # 1e-12 .. 0.5


@pytest.mark.parametrize("params", [{}, {"delta": "0.5", "beta": "0.1"}, {"beta": "2"}])
def test_the_table_holds_the_figures_each_stop_draws(params):
    """Neighbours of 10⁻⁹, a far stop and both ends (0.5: no exact threshold, one trace
    fewer): the browser's figures there are what a run at that stop draws."""
    i = STOPS.index(1e-9)
    at = run_page(PAGE, p0="1e-9", **params)
    for j in (i - 1, i + 1, i + 12, 0, len(STOPS) - 1):
        moved = run_page(PAGE, p0=repr(STOPS[j]), **params)
        for key in CHARTS:
            assert instant_figure(at, j, key) == drawn(moved, key), (STOPS[j], key)


@pytest.mark.parametrize(
    "params", [{}, {"delta": "10", "beta": "0.0001"}, {"beta": "10"}, {"p0": "3.3e-7"}]
)
def test_axis_ranges_are_the_same_at_every_stop(params):
    at = run_page(PAGE, **params)
    t = instant_table(at)
    assert all(r is not None for r in t["rows"])
    for key in CHARTS:
        axes = {
            json.dumps(
                [
                    instant_figure(at, j, key)["layout"][ax].get(part)
                    for ax in ("xaxis", "yaxis")
                    for part in ("range", "tickvals")
                ]
            )
            for j in range(len(t["rows"]))
        }
        assert len(axes) == 1, (key, axes)
        assert json.loads(axes.pop())[0] is not None
    # every threshold line and marker of every stop lies inside the fixed x range
    lo, hi = instant_figure(at, 0, "rarity-beta")["layout"]["xaxis"]["range"]
    for j in range(len(t["rows"])):
        for tr in instant_figure(at, j, "rarity-beta")["data"]:
            x = np.log10(values(tr, "x"))
            assert lo < x.min() and x.max() < hi, (j, tr.get("name"))
        lo_g, hi_g = instant_figure(at, j, "rarity-gap")["layout"]["xaxis"]["range"]
        for tr in instant_figure(at, j, "rarity-gap")["data"]:
            x = np.log10(values(tr, "x"))
            assert lo_g <= x.min() + 1e-9 and x.max() < hi_g, (j, tr.get("name"))


def test_the_table_of_stops_fits_the_budget():
    at = run_page(PAGE)
    from klrl_app import instant
    from tests.conftest import instant_table, sent_table

    # within the budget, so that the table carries the charts (not the readout alone)
    assert len(sent_table(at)) <= instant.MAX_TABLE and instant_table(at)["base"]


# ---------------------------------------------------- review of the eleven pages (rarity)
@pytest.mark.parametrize("params", [{"p0": "0.5"}, {"p0": "0.5", "beta": "0.0001", "delta": "10"}])
def test_pi_star_of_y1_below_one_never_reads_certain(params):
    """Review item 7: π*(y₁) = p₀/(p₀ + (1 − p₀)e^(−Δ/β)) is below 1 at every β > 0 (at p₀ = ½,
    Δ = 1, β = 0.05 it is 1 − 2.1 × 10⁻⁹; at β = 10⁻⁴, Δ = 10 it rounds to 1.0 in floating
    point), so neither readout reads 1.000, and the bound is not written "≥ > 0.999999"."""
    p0, delta = float(params["p0"]), float(params.get("delta", 1))
    beta = float(params.get("beta", 0.05))
    log_gap = math.log((1 - p0) / p0) - delta / beta  # log(1/π* − 1): finite, so π* < 1
    assert log_gap < math.log(1e-6)
    at = run_page("rarity.py", **params)
    assert_clean(at)
    m = metrics(at)
    assert m[PI] == "> 0.999999"
    assert m[BOUND] == "> 0.999999"
    assert "1.000" not in (m[PI] + m[BOUND])


@pytest.mark.parametrize(
    "params, off", [({"beta": "0.0001", "delta": "10", "p0": "1e-12"}, True), ({}, False)]
)
def test_a_reward_gap_far_above_the_lines_does_not_flatten_them(params, off):
    """Review item 13: at β = 10⁻⁴ and Δ = 10 the lines (at most β·log(10¹⁵) = 0.0035) lay flat
    on the floor of a 0–10.8 axis; the axis now holds the lines and the star is drawn at the
    top edge as off the chart; at the defaults the star (Δ = 1) is inside the range."""
    at = run_page(PAGE, **params)
    assert_clean(at)
    fig = next(f for f in charts(at) if "reward gap" in str(f["layout"]["yaxis"]["title"]))
    top = fig["layout"]["yaxis"]["range"][1]
    beta, delta = float(params.get("beta", 0.05)), float(params.get("delta", 1))
    lines = beta * math.log(1 / 1e-15)  # Eq. 12.7's line at the panel's left end
    assert lines <= top
    assert (top < delta) == off
    if off:
        assert top <= 1.1 * lines and "above the chart" in str(fig["data"])
