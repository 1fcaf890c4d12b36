"""The pass-at-k page (Section 12.7.4, Exercise 28.7) through AppTest: readouts, figures, the
problem set, the estimators, controls, deep links and bad links, and the explanation's branches.

Expected numbers are the printed ones (issue 12, Exercise 28.7) and formulas written plainly
here: p* = p e^{1/beta} / (p e^{1/beta} + 1 - p), pass@k = 1 - (1 - p)^k, and the estimators'
expectations as exact sums over c with math.comb and fractions. Nothing expected comes from
klrl_core.
"""

from __future__ import annotations

import base64
import json
import math
import re
from fractions import Fraction

import numpy as np
import plotly.graph_objects as go
import pytest

from tests.e2e.cases import PASS_AT_K_P_STOPS
from tests.conftest import (
    all_text,
    assert_clean,
    charts,
    instant_readout_at,
    metrics,
    notices,
    run_page,
)

PAGE = "pass-at-k.py"
P_STOPS = PASS_AT_K_P_STOPS  # the page's p stops, written out once for the tests
DEFAULT_QUERY = {"p": "0.05", "beta": "0.5", "k": "10", "samples": "20"}


# ------------------------------------------------------------------------- references
def p_star(p: float, beta: float) -> float:
    w = p * math.exp(1 / beta)
    return w / (w + 1 - p)


def pass_k(p: float, k: int) -> float:
    return 1 - (1 - p) ** k


def estimator_means(p: Fraction, n: int, k: int) -> tuple[float, float]:
    """E[1 - C(n-c, k)/C(n, k)] and E[1 - (1 - c/n)^k] over c ~ Binomial(n, p), enumerated."""
    unbiased = plugin = Fraction(0)
    for c in range(n + 1):
        w = math.comb(n, c) * p**c * (1 - p) ** (n - c)
        if k <= n:  # C(n, k) = 0 beyond: not defined
            unbiased += w * (1 - Fraction(math.comb(n - c, k), math.comb(n, k)))
        plugin += w * (1 - (1 - Fraction(c, n)) ** k)
    return float(unbiased), float(plugin)


def values(trace: dict, axis: str) -> np.ndarray:
    v = trace[axis]
    if isinstance(v, dict):
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
    return np.asarray(v, dtype=float)


def trace(fig: dict, name_start: str) -> dict:
    return next(t for t in fig["data"] if str(t.get("name", "")).startswith(name_start))


def tables(at) -> list:
    return [t.value for t in at.table]


def table_with(at, column: str):
    return next(t for t in tables(at) if column in t.columns)


def look_for(at) -> str:
    text = all_text(at)
    return text[text.index("What to look for") :].split("\n")[0]


def f3(x: float) -> str:
    return f"{x:.3f}".replace("-", "−")


def shown(x: float) -> str:
    """A chance below 1 as the readout must write it: 3 decimals, more while it would read
    1.000, so that no chance below 1 reads as certain (issue 31)."""
    for places in range(3, 7):
        if f"{x:.{places}f}" != f"{1:.{places}f}":
            return f"{x:.{places}f}"
    return "> 0.999999"


# --------------------------------------------------------------------------- defaults
def test_defaults_show_the_printed_numbers():
    at = run_page(PAGE)
    assert_clean(at)
    assert notices(at) == []
    assert dict(at.query_params) == DEFAULT_QUERY
    ps = p_star(0.05, 0.5)
    m = metrics(at)
    # p* is π*'s pass@1: the readout says it once (issue 31)
    assert m == {
        "p* (optimum)": f3(ps),
        "π₀ pass@1": "0.050",
        "π₀ pass@10": f3(pass_k(0.05, 10)),
        "π* pass@10": f3(pass_k(ps, 10)),
    }
    # the printed values: p* 0.280; pass@1 0.050 vs 0.280; pass@10 0.401 vs 0.963
    assert (m["p* (optimum)"], m["π₀ pass@10"], m["π* pass@10"]) == ("0.280", "0.401", "0.963")
    figs = charts(at)
    assert len(figs) == 4
    for fig in figs:
        go.Figure(fig)  # plotly validates every property


def test_the_optimums_curve_is_above_the_references_and_the_gap_is_drawn():
    at = run_page(PAGE, p="0.2", beta="1.5", k="64")
    assert_clean(at)
    curves, gap = charts(at)[:2]
    ps = p_star(0.2, 1.5)
    base, opt = trace(curves, "π₀"), trace(curves, "π*")
    ks = values(base, "x")
    assert ks[0] == 1 and ks[-1] == 1024 and 64 in ks
    np.testing.assert_allclose(values(base, "y"), [pass_k(0.2, int(k)) for k in ks], rtol=1e-7)
    np.testing.assert_allclose(values(opt, "y"), [pass_k(ps, int(k)) for k in ks], rtol=1e-7)
    assert opt.get("fill") == "tonexty"  # the band between the curves is shaded
    g = values(trace(gap, "gap"), "y")
    np.testing.assert_allclose(g, values(opt, "y") - values(base, "y"), atol=1e-7)
    small = ks <= 60  # before both curves round to 1 in floats
    assert np.all(g[small] > 0)
    marker = trace(curves, "k = 64")
    np.testing.assert_allclose(values(marker, "y"), [pass_k(0.2, 64), pass_k(ps, 64)], rtol=1e-7)
    # the gap's largest point, checked on every whole k
    all_k = np.arange(1, 1025)
    gaps = (1 - 0.2) ** all_k - (1 - ps) ** all_k
    peak = trace(gap, "largest at k")
    assert values(peak, "x")[0] == all_k[np.argmax(gaps)]


@pytest.mark.parametrize("p,beta", [(0.001, 5.0), (0.999, 0.01), (0.5, 0.01), (0.3, 5.0)])
def test_readout_at_the_ends_of_the_controls(p, beta):
    at = run_page(PAGE, p=str(p), beta=str(beta), k="1024")
    assert_clean(at)
    ps = p_star(p, beta)
    m = metrics(at)
    assert m["p* (optimum)"] == shown(ps)
    assert m["π₀ pass@1024"] == shown(pass_k(p, 1024))
    assert m["π* pass@1024"] == shown(pass_k(ps, 1024))
    assert "1.000" not in m.values()  # p < 1: nothing here is certain


# ------------------------------------------------------------------------ problem set
def test_exercise_28_7b_problem_set():
    at = run_page(PAGE)
    t = table_with(at, "pass@32")
    before, after = (0.3, 0.05), (0.9, 0.0)
    opt = tuple(p_star(x, 0.5) for x in before)

    def mean_pass(rates, k):
        return sum(pass_k(x, k) for x in rates) / len(rates)

    # a pass@k below 1 is never written 1.000 (issue 31): the optimum's pass@32 is 0.99999
    assert list(t["pass@1"]) == [shown(mean_pass(r, 1)) for r in (before, after, opt)]
    assert list(t["pass@32"]) == [shown(mean_pass(r, 32)) for r in (before, after, opt)]
    # printed: pass@1 0.175 -> 0.450, pass@32 0.903 -> 0.500
    assert list(t["pass@1"])[:2] == ["0.175", "0.450"] and list(t["pass@32"])[:2] == [
        "0.903",
        "0.500",
    ]
    rates = table_with(at, "before")
    assert list(rates["optimum (β = 0.5)"]) == [f3(x) for x in opt] == ["0.760", "0.280"]
    # crossover: first k with mean pass@k before > after, by brute force
    cross = next(k for k in range(1, 1025) if mean_pass(before, k) > mean_pass(after, k))
    assert cross == 5
    text = all_text(at)
    assert f"the base overtakes it from k = {cross}" in text
    assert "its curve is above the base's at every k" in text
    fig = charts(at)[2]
    assert values(trace(fig, "base overtakes at k"), "x")[0] == cross
    # the optimum never falls below the base, at any k drawn
    ks = values(trace(fig, "base model"), "x")
    assert np.all(values(trace(fig, "optimum at β"), "y") >= values(trace(fig, "base model"), "y"))
    assert ks[-1] == 1024


def test_yue_et_al_marks_are_labelled_as_measured():
    at = run_page(PAGE)
    fig = charts(at)[2]
    base, trained = trace(fig, "Yue et al., base"), trace(fig, "Yue et al., after GRPO")
    for t, ys in ((base, [0.099, 0.672]), (trained, [0.425, 0.643])):
        assert "measured, not computed here" in t["name"]
        assert list(t["customdata"]) == [1, 256]  # the k the hover names
        np.testing.assert_allclose(values(t, "y"), ys)
        assert "measured (Yue et al. 2025)" in t["hovertemplate"]
    # the two marks at k = 256 (0.672, 0.643) are 0.03 apart, under a mark's height: drawn
    # to either side of k = 256 so that neither hides the other (issue 31), and told apart by
    # symbol, not only colour
    xb, xt = values(base, "x"), values(trained, "x")
    assert xb[0] == xt[0] == 1  # 0.099 and 0.425: far apart
    assert xb[1] < 256 < xt[1]
    # in pixels on the chart's log axis (about 400 px wide at 1280×720 for 3.19 decades):
    # the centres at least a mark's width (13 px) apart
    px_per_decade = 400 / (math.log10(1024) + 0.16)
    assert (math.log10(xt[1]) - math.log10(xb[1])) * px_per_decade >= 13
    assert base["marker"]["symbol"] != trained["marker"]["symbol"]
    assert "(diamonds)" in base["name"] and "(squares)" in trained["name"]
    text = all_text(at)
    assert "Measured, not computed here." in text
    assert "9.9% to 42.5%" in text and "67.2% to 64.3%" in text


def test_editing_the_rates_moves_the_set_and_the_link():
    at = run_page(PAGE)
    at.text_input[0].set_value("0.2, 0.2").run()
    at.text_input[1].set_value("0.1; 0.15").run()
    assert_clean(at)
    assert at.query_params["before"] == "0.2, 0.2" and at.query_params["after"] == "0.1, 0.15"
    t = table_with(at, "pass@32")
    assert list(t["pass@1"])[:2] == ["0.200", "0.125"]
    assert "the base overtakes it already at k = 1" in all_text(at)
    assert "does not raise pass@1" in all_text(at)


@pytest.mark.parametrize(
    "before,after,phrase",
    [
        ("0.2, 0.2", "0.5, 0.3", "since no problem's rate fell, its curve is on or above"),
        ("0, 1", "0.5, 0.5", "cannot move rates of 0 or 1"),
        ("30%, 5%", "90%, 0", "the base overtakes it from k = 5"),
        ("0.5, 0.5, 0.2", "0.9, 0.6, 0.05", "the base overtakes it from k = 3"),
    ],
)
def test_problem_set_text_branches(before, after, phrase):
    at = run_page(PAGE, before=before, after=after)
    assert_clean(at)
    assert notices(at) == []
    assert phrase in all_text(at)


@pytest.mark.parametrize(
    "before,after,why",
    [
        ("0.3, abc", "0.9, 0", "“abc” is not a number"),
        ("0.3, 0.05", "0.9", "2 rates before but 1 after"),
        ("0.3, 1.5", "0.9, 0", "entry 2 is not a solve rate between 0 and 1"),
        ("", "0.9, 0", "the list is empty"),
    ],
)
def test_rates_that_cannot_be_read(before, after, why):
    # from a link: a notice, and Exercise 28.7(b)'s problems
    at = run_page(PAGE, before=before, after=after)
    assert_clean(at)
    assert len(notices(at)) == 1 and why in notices(at)[0]
    assert list(table_with(at, "pass@32")["pass@1"])[:2] == ["0.175", "0.450"]
    # typed: a warning while the text cannot be read, the page still draws
    at = run_page(PAGE)
    at.text_input[0].set_value(before).run()
    at.text_input[1].set_value(after).run()
    assert_clean(at)
    assert any(why in w for w in notices(at))
    assert len(charts(at)) == 4


# ------------------------------------------------------------------------- estimators
def test_estimators_at_the_printed_setting():
    at = run_page(PAGE)
    unbiased, plugin = estimator_means(Fraction(1, 20), 20, 10)
    assert (f3(unbiased), f3(plugin)) == ("0.401", "0.336")  # printed
    t = table_with(at, "k = 10, n = 20")
    col = list(t["k = 10, n = 20"])
    assert col == [f3(pass_k(0.05, 10)), f3(unbiased), f3(plugin), f3(plugin - pass_k(0.05, 10))]
    fig = charts(at)[3]
    unb = trace(fig, "E[1 − C(n−c, k)/C(n, k)]")
    ks = values(unb, "x")
    assert ks.max() == 20  # defined only for k <= n
    for k, y in zip(ks, values(unb, "y")):
        assert y == pytest.approx(pass_k(0.05, int(k)), abs=1e-12)
    plug = trace(fig, "E[1 − (1 − c/n)^k]")
    pk, py = values(plug, "x"), values(plug, "y")
    assert pk.max() == 1024  # defined for every k
    for i in range(0, pk.size, 12):  # the plug-in is defined for k > n too
        assert py[i] == pytest.approx(
            estimator_means(Fraction(1, 20), 20, int(pk[i]))[1], rel=1e-11
        )
    assert "16.1% low" in all_text(at)


def test_k_above_n_is_capped_with_a_message():
    at = run_page(PAGE, k="37", samples="10")
    assert_clean(at)
    assert notices(at) == []
    text = all_text(at)
    assert "the unbiased estimator needs at least k samples" in text
    assert "this section uses k = 10" in text
    unbiased, plugin = estimator_means(Fraction(1, 20), 10, 10)
    col = list(table_with(at, "k = 10, n = 10")["k = 10, n = 10"])
    assert col[1:3] == [f3(unbiased), f3(plugin)]
    assert metrics(at)["π₀ pass@37"] == f3(pass_k(0.05, 37))


def test_estimators_at_k_1_have_no_bias():
    at = run_page(PAGE, k="1", samples="1000", p="0.3")
    assert_clean(at)
    assert "At k = 1 both estimators are c/n" in all_text(at)
    col = list(table_with(at, "k = 1, n = 1,000")["k = 1, n = 1,000"])
    assert col == ["0.300", "0.300", "0.300", "0.000"]


# --------------------------------------------------------------------------- controls
def test_moving_k_and_samples_updates_readout_and_link():
    at = run_page(PAGE)
    at.select_slider(key="pass-at-k.k").set_value(32).run()
    at.number_input[0].set_value(64).run()
    assert_clean(at)
    assert at.query_params["k"] == "32" and at.query_params["samples"] == "64"
    m = metrics(at)
    assert m["π₀ pass@32"] == shown(pass_k(0.05, 32))
    assert m["π* pass@32"] == shown(pass_k(p_star(0.05, 0.5), 32))  # 0.99997, not 1.000
    assert "k = 32, n = 64" in table_with(at, "k = 32, n = 64").columns


def test_a_k_between_stops_is_kept():
    at = run_page(PAGE, k="37")
    assert at.select_slider(key="pass-at-k.k").value == 37 and at.query_params["k"] == "37"
    assert notices(at) == []


def test_a_p_between_stops_is_kept_and_the_slider_moves_p():
    """p is a slider over uneven stops (dense toward 0 and 1); a link may give any p."""
    at = run_page(PAGE, p="0.0123")
    assert_clean(at)
    assert at.select_slider(key="pass-at-k.p").value == 0.0123 and notices(at) == []
    assert at.query_params["p"] == "0.0123" and metrics(at)["π₀ pass@1"] == "0.012"
    at.select_slider(key="pass-at-k.p").set_value(0.3).run()
    assert at.query_params["p"] == "0.3" and metrics(at)["π₀ pass@1"] == "0.300"


def test_kappa_link_sets_beta():
    at = run_page(PAGE, kappa="4")
    assert_clean(at)
    assert notices(at) == []
    assert at.query_params["beta"] == "0.25"
    assert metrics(at)["p* (optimum)"] == f3(p_star(0.05, 0.25))


@pytest.mark.parametrize(
    "params,shown,expect",
    [
        ({"p": "2"}, "`p=2`: above the largest allowed value 0.999", {"p": "0.999"}),
        ({"beta": "0"}, "`beta=0`: below the smallest allowed value 0.01", {"beta": "0.01"}),
        ({"k": "0"}, "`k=0`: below the smallest allowed value 1", {"k": "1"}),
        ({"k": "2.5"}, "`k=2.5`: not a whole number", {"k": "10"}),
        ({"k": "5000"}, "`k=5000`: above the largest allowed value 1,024", {"k": "1024"}),
        ({"samples": "abc"}, "`samples=abc`: not a number", {"samples": "20"}),
        ({"samples": "0"}, "`samples=0`: below the smallest allowed value 1", {"samples": "1"}),
        ({"kappa": "0"}, "`kappa=0`: must be a positive number", {"beta": "0.5"}),
    ],
)
def test_bad_links_give_a_notice_and_still_draw(params, shown, expect):
    at = run_page(PAGE, **params)
    assert_clean(at)
    assert len(notices(at)) == 1 and shown in notices(at)[0]
    for key, value in expect.items():
        assert at.query_params[key] == value
    assert len(charts(at)) == 4 and "p* (optimum)" in metrics(at)


def test_all_bad_links_at_once():
    at = run_page(PAGE, p="2", beta="0", k="0", samples="abc")
    assert_clean(at)
    text = notices(at)[0]
    for name in ("`p=2`", "`beta=0`", "`k=0`", "`samples=abc`"):
        assert name in text
    m = metrics(at)
    assert m["p* (optimum)"] == shown(p_star(0.999, 0.01)) and m["π₀ pass@1"] == "0.999"
    assert len(charts(at)) == 4


# --------------------------------------------------------------- explanation branches
def test_explanation_at_the_defaults():
    text = look_for(run_page(PAGE))
    assert "e^(1/β) = 7.39" in text  # e^2
    assert "π*'s curve lies above π₀'s at every k, for every p and every β" in text
    assert "a theorem (Section 12.7.4)" in text
    gaps = [(1 - 0.05) ** k - (1 - p_star(0.05, 0.5)) ** k for k in range(1, 1025)]
    assert f"The gap is largest at k = {int(np.argmax(gaps)) + 1}." in text
    thin = next(k for k in range(int(np.argmax(gaps)) + 2, 1025) if gaps[k - 1] < 0.0005)
    assert f"From k = {thin} on the gap is below 0.0005" in text
    # the reason it stays positive is p* > p, not that every problem is eventually solved
    assert "never reaches zero: p* > p, so π* fails all k attempts less often" in text
    assert "p* is within" not in text and "the anchor holds" not in text


def test_explanation_when_beta_is_small():
    text = look_for(run_page(PAGE, p="0.999", beta="0.01", k="1"))
    assert 1 - p_star(0.999, 0.01) < 0.0005
    assert "p* is within 0.0005 of 1" in text
    assert "The gap is largest at k = 1." in text


@pytest.mark.parametrize(
    "p, beta, cause",
    [
        ("0.999", "0.5", "p"),  # e² = 7.39 against odds of 999 to 1 (issue 31)
        ("0.999", "0.01", "factor"),  # e¹⁰⁰ against 999
        ("0.5", "0.05", "factor"),
        ("0.999", "0.12", "factor"),  # e^8.33 = 4,160 against 999
    ],
)
def test_near_1_the_text_says_whether_p_or_the_factor_put_p_star_there(p, beta, cause):
    text = look_for(run_page(PAGE, p=p, beta=beta))
    q, b = float(p), float(beta)
    assert 1 - p_star(q, b) < 0.0005
    odds, factor = q / (1 - q), math.exp(1 / b)
    assert (cause == "p") == (odds > factor)
    assert "p* is within 0.0005 of 1" in text
    assert "the factor is so large" not in text
    if cause == "p":
        assert "mostly p's doing" in text and "mostly the factor's" not in text
        assert f"{odds:.0f} to 1, more than the factor {factor:.2f}" in text
        assert "β → 0" not in text
    else:
        assert "mostly the factor's doing" in text and "mostly p's" not in text


def test_explanation_when_the_anchor_is_strong():
    at = run_page(PAGE, p="0.001", beta="5")
    text = look_for(at)
    gap1 = p_star(0.001, 5) - 0.001
    assert gap1 < 0.01
    assert "the anchor holds p* within 2.21 × 10⁻⁴ of p" in text
    assert f"{gap1:.3g}" == "0.000221"
    # the gap still exceeds 0.0005 at k = 1024 but not at k = 1 and 2 (0.000221, 0.000442)
    assert (1 - 0.001) ** 1024 - (1 - p_star(0.001, 5)) ** 1024 > 0.0005
    assert "Up to k = 2 the gap is below 0.0005" in text
    assert "From k = 3 to 1,024 the gap stays above 0.0005" in text
    assert "Up to k = 1,024 the gap stays above" not in text


@pytest.mark.parametrize(
    "p, beta",
    [
        ("0.001", "5"),
        ("0.05", "0.5"),
        ("0.999", "5"),
        ("0.001", "0.01"),
        ("0.5", "5"),
        ("0.002", "3"),
        ("0.999", "0.01"),
    ],
)
def test_every_thin_gap_claim_holds_at_every_k_it_names(p, beta):
    """Each sentence about where the gap is below or above 0.0005 is checked here against
    the gap at every k = 1 … 1,024, computed plainly."""
    text = look_for(run_page(PAGE, p=p, beta=beta))
    ps = p_star(float(p), float(beta))
    gaps = [(1 - float(p)) ** k - (1 - ps) ** k for k in range(1, 1025)]
    below = [g < 0.0005 for g in gaps]
    checked = 0
    if m := re.search(r"Up to k = ([\d,]+) the gap is below 0.0005", text):
        checked += 1
        assert all(below[: int(m[1].replace(",", ""))])
    if "At k = 1 the gap is below 0.0005" in text:
        checked += 1
        assert below[0] and not below[1]
    if m := re.search(r"From k = ([\d,]+) to 1,024 the gap stays above 0.0005", text):
        checked += 1
        assert not any(below[int(m[1].replace(",", "")) - 1 :])
    if "Up to k = 1,024 the gap stays above 0.0005" in text:
        checked += 1
        assert not any(below)
    if m := re.search(r"From k = ([\d,]+) on the gap is below 0.0005", text):
        checked += 1
        first = int(m[1].replace(",", ""))
        assert all(below[first - 1 :]) and not below[first - 2]
    if "At every k up to 1,024 the gap is below 0.0005" in text:
        checked += 1
        assert all(below)
    assert checked >= 1
    assert ps > float(p)  # why it never reaches zero (floats underflow)


def test_presentation_view_shows_only_the_first_figures():
    at = run_page(PAGE, present="1")
    assert_clean(at)
    assert len(charts(at)) == 2
    assert "What to look for" not in all_text(at)
    assert metrics(at)["p* (optimum)"] == "0.280"


def test_readout_labels_are_unique_at_k_1():
    at = run_page(PAGE, k="1")
    assert list(metrics(at)) == ["p* (optimum)", "π₀ pass@1"]
    assert not any(re.search(r" #\d", key) for key in metrics(at))


@pytest.mark.parametrize(
    "params",
    [{}, {"beta": "0.1", "k": "64"}, {"k": "1"}],
    ids=["defaults", "strong-tilt-k64", "k1"],
)
def test_instant_readout_holds_the_readout_the_next_stops_show(params):
    """The table sent at p = 0.05 (keyed by the p slider's stops) is what the page shows when
    p gets to a neighbouring stop, a far one, or either end 0.001 and 0.999."""
    at = run_page(PAGE, p="0.05", **params)
    sent = {q: instant_readout_at(at, P_STOPS.index(q)) for q in (0.04, 0.06, 0.3, 0.001, 0.999)}
    for q, shown in sent.items():
        moved = run_page(PAGE, p=f"{q:g}", **params)
        assert metrics(moved) == shown, q
    assert len(sent[0.06]) == (2 if params.get("k") == "1" else 4)


# --------------------------------------------------------- the figures that follow p
FOLLOWED = ("pass-at-k-curves", "pass-at-k-gap")


def live_alts(at) -> dict[str, str]:
    return {
        json.loads(c.proto.json)["key"]: json.loads(c.proto.json)["alt"]
        for c in at.get("bidi_component")
        if c.proto.component_name == "klrl_live_chart"
    }


@pytest.mark.parametrize(
    "params",
    [{}, {"beta": "0.1", "k": "64"}, {"k": "1", "present": "1"}],
    ids=["defaults", "strong-tilt-k64", "k1-presenting"],
)
def test_the_table_draws_what_the_page_draws_at_each_stop(params):
    """At neighbouring stops, a far one and both ends of p, the browser's figure for each
    followed chart (the table's base with that stop's patches) and its text alternative are
    what the page draws when run at that p."""
    from tests.conftest import instant_figure, instant_table

    at = run_page(PAGE, p="0.05", **params)
    table = instant_table(at)
    assert table["kind"] == "index" and len(table["rows"]) == len(P_STOPS)
    for q in (0.04, 0.06, 0.3, 0.001, 0.999):
        i = P_STOPS.index(q)
        moved = run_page(PAGE, p=f"{q:g}", **params)
        drawn, alt = charts(moved), live_alts(moved)
        for n, key in enumerate(FOLLOWED):
            assert instant_figure(at, i, key) == drawn[n], (q, key)
            assert table["rows"][i]["a"][key] == alt[key], (q, key)


@pytest.mark.parametrize(
    "params",
    [{}, {"beta": "0.01"}, {"beta": "5", "k": "1024"}],
    ids=["defaults", "weak-anchor", "strong-anchor-k1024"],
)
def test_axis_ranges_are_the_same_at_every_stop_and_hold_every_gap(params):
    """Same x grid and axis ranges at every stop; every stop's curve passes through its own
    marked peak (found here over every k = 1 … 1,024) and stays under the gap's top."""
    from tests.conftest import instant_figure

    at = run_page(PAGE, **params)
    beta = float(params.get("beta", 0.5))
    for key in FOLLOWED:
        figs = [instant_figure(at, i, key) for i in range(len(P_STOPS))]
        for axis in ("xaxis", "yaxis"):
            assert len({tuple(f["layout"][axis]["range"]) for f in figs}) == 1, (key, axis)
        assert len({json.dumps(f["data"][0]["x"]) for f in figs}) == 1
    top = figs[0]["layout"]["yaxis"]["range"][1]
    every_k = np.arange(1, 1025)
    for q, f in zip(P_STOPS, figs):
        gap = pass_k(p_star(q, beta), every_k) - pass_k(q, every_k)
        x, y = values(f["data"][0], "x"), values(f["data"][0], "y")
        k_best = int(every_k[np.argmax(gap)])
        assert k_best in x and y.max() == pytest.approx(gap.max(), rel=1e-7) and y.max() < top
        assert values(f["data"][1], "x")[0] == k_best


def test_the_table_fits_in_300_kb_at_the_defaults():
    from tests.conftest import instant_table

    text = json.dumps(instant_table(run_page(PAGE)), ensure_ascii=False, separators=(",", ":"))
    assert len(text.encode("utf-8")) <= 300_000


def test_the_problem_set_table_never_writes_a_pass_at_k_below_1_as_1():
    """Issue 31 (item 12, everywhere): the optimum's pass@32 on Exercise 28.7(b)'s problems is
    0.99997..., written 1.000 in the table."""
    at = run_page(PAGE)
    table = table_with(at, "pass@32")
    p_b = p_star(0.05, 0.5)
    exact = 1 - ((1 - p_star(0.3, 0.5)) ** 32 + (1 - p_b) ** 32) / 2
    assert exact < 1 and f"{exact:.3f}" == "1.000"
    assert table.loc["optimum at β = 0.5", "pass@32"] == shown(exact)
