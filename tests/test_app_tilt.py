"""The tilt page (Figure 12.2) through AppTest: readout, slider, deep links, bad links."""

import pytest

from klrl_app import controls
from tests.conftest import assert_clean, instant_readout_at, metrics, notices, run_page

KL, REWARD, REF = "KL(π* ‖ π₀)", "E[r] under π*", "E[r] under π₀"


def test_defaults_show_the_chapters_readout():
    at = run_page("tilt.py")
    assert_clean(at)
    m = metrics(at)
    assert m[KL] == "0.34 nats" and m[REWARD] == "0.45" and m[REF] == "0.31"
    assert notices(at) == []
    assert at.query_params["kappa"] == "5"


def test_moving_the_slider_recomputes_and_updates_the_link():
    at = run_page("tilt.py")
    at.select_slider[0].set_value(20.0).run()
    m = metrics(at)
    assert m[KL] == "4.76 nats" and m[REWARD] == "0.82"
    assert at.query_params["kappa"] == "20"


@pytest.mark.parametrize(
    "params, kl, reward",
    [
        ({"kappa": "10"}, "1.39 nats", "0.59"),
        ({"beta": "0.05"}, "4.76 nats", "0.82"),
        ({"kappa": "1"}, "0.01 nats", "0.34"),
        ({"beta": "1"}, "0.01 nats", "0.34"),
    ],
)
def test_deep_links(params, kl, reward):
    at = run_page("tilt.py", **params)
    assert_clean(at)
    assert notices(at) == []
    m = metrics(at)
    assert (m[KL], m[REWARD]) == (kl, reward)


def test_a_beta_between_slider_stops_is_kept_exactly():
    at = run_page("tilt.py", beta="0.03")  # kappa 33.3..., not a slider stop
    assert notices(at) == []
    assert at.select_slider[0].value == pytest.approx(1 / 0.03)
    assert metrics(at)[REWARD] == "0.94"  # Section 12.8.1: proxy 0.94 at beta = 0.03


@pytest.mark.parametrize(
    "params, shown_kl",
    [
        ({"kappa": "abc"}, "0.34 nats"),  # default
        ({"kappa": "nan"}, "0.34 nats"),
        ({"beta": "0"}, "10.96 nats"),  # nearest allowed: kappa 10,000
        ({"kappa": "1e400"}, "10.96 nats"),
        ({"kappa": "-3"}, "0.00 nats"),  # nearest allowed: kappa 0, pi* = pi0
        ({"beta": "-1"}, "10.96 nats"),
        ({"beta": "xyz"}, "0.34 nats"),
    ],
)
def test_bad_links_draw_the_page_with_a_notice(params, shown_kl):
    at = run_page("tilt.py", **params)
    assert_clean(at)
    assert len(notices(at)) == 1
    name = next(iter(params))
    assert f"`{name}" in notices(at)[0]
    assert metrics(at)[KL] == shown_kl


def test_kappa_wins_over_beta_with_a_notice():
    at = run_page("tilt.py", kappa="10", beta="0.5")
    assert metrics(at)[KL] == "1.39 nats"
    assert "beta=0.5" in notices(at)[0]


def test_notice_goes_away_once_the_reader_moves_the_slider():
    at = run_page("tilt.py", kappa="abc")
    assert notices(at)
    at.select_slider[0].set_value(10.0).run()
    assert notices(at) == []


def test_the_square_root_law_beside_the_exact_values_at_beta_1():
    """Exercise 12.3 / Section 12.5.4 on the book's model at beta = 1: the expansion's gain
    kappa*v = 0.0249 at KL kappa^2 v/2 = 0.0124, against the exact 0.0253 and 0.0128."""
    at = run_page("tilt.py", beta="1")
    df = next(t.value for t in at.table if "second order" in list(t.value.columns))
    assert list(df["second order"]) == ["0.0249", "0.0124"]
    assert list(df["exact"]) == ["0.0253", "0.0128"]
    text = " ".join(str(m.value) for m in at.markdown)
    # at beta = 1: sqrt(2 v KL) = 0.0252 against the exact gain 0.0253
    assert "within" in text and "gives 0.0252 against the exact 0.0253" in text
    assert "the dashed curve lies on the frontier" in text


def test_the_square_root_law_breaks_down_far_from_the_reference():
    at = run_page("tilt.py", kappa="100")
    text = " ".join(str(m.value) for m in at.markdown)
    # kappa = 100: kappa*v = 2.49 against a gain of 0.685; sqrt(2 v KL) = 0.727
    assert "off by" in text and "too large for a second-order expansion" in text
    assert "the frontier and the dashed curve are apart" in text


def test_axis_switch_puts_sqrt_kl_on_the_frontier():
    from tests.conftest import charts

    at = run_page("tilt.py", axis="sqrt", kappa="20")
    frontier = charts(at)[1]
    assert frontier["layout"]["xaxis"]["title"]["text"].startswith("√KL")
    assert at.query_params["axis"] == "sqrt"
    bad = run_page("tilt.py", axis="log")
    assert len(notices(bad)) == 1 and bad.query_params["axis"] == "kl"


@pytest.mark.parametrize(
    "params", [{}, {"pi0": "0.5,0.3,0.2", "r": "0,0.5,1"}], ids=["book", "own-model"]
)
def test_instant_readout_holds_the_readout_the_next_stops_show(params):
    """The table sent for the stops beside κ = 5 is what the page shows when κ gets there."""
    options = controls.kappa_options()
    i = options.index(5.0)
    at = run_page("tilt.py", kappa="5", **params)
    sent = {j: instant_readout_at(at, j) for j in (i - 1, i + 1, i + 12, 0, len(options) - 1)}
    for j, shown in sent.items():
        moved = run_page("tilt.py", kappa=controls.fmt_number(options[j]), **params)
        assert metrics(moved) == shown, options[j]


# ------------------------------------------------------- review of the eleven pages (tilt)
import math
import re

from tests.conftest import all_text


def _tilt(pi0, r, kappa):
    w = [p * math.exp(kappa * (x - max(r))) for p, x in zip(pi0, r)]
    z = math.fsum(w)
    return [x / z for x in w]


@pytest.mark.parametrize("kappa", ["3", "10000"])
def test_tied_top_responses_are_said_as_a_tie_with_their_ratio_kept(kappa):
    """Review item 2: r = 0,1,1 ties two responses at the top; the text names both, the factor
    exp(κr)/Z they share and the kept ratio, and says nothing of rarity (π₀ of the top is 0.5)."""
    at = run_page("tilt.py", pi0="0.5,0.3,0.2", r="0,1,1", kappa=kappa)
    assert_clean(at)
    text = all_text(at)
    pi = _tilt([0.5, 0.3, 0.2], [0, 1, 1], float(kappa))
    assert "the 2 responses tied for the highest reward" in text
    assert "which π₀ writes with probability 0.500 together" in text
    assert f"each {(pi[1] + pi[2]) / 0.5:.3g} times as often" in text
    assert "Rarity protects" not in text and "gets 0.600 under π*" not in text
    assert "The 2 responses tied for the highest reward have probability" in str(charts_alt(at))


def charts_alt(at):
    """The charts' text alternatives, as the live chart component receives them."""
    import json

    return [
        json.loads(c.proto.json)["alt"]
        for c in at.get("bidi_component")
        if c.proto.component_name == "klrl_live_chart"
    ]


def test_a_single_rare_top_says_what_rarity_costs_and_alt_text_agrees():
    """Review items 2 and 23: the book's top response (π₀ 1.74 × 10⁻⁵) keeps the rarity sentence,
    now with its cost −log π₀ = 10.96 nats; the text and the alt text print π₀ alike; a top
    above RARE drops it."""
    at = run_page("tilt.py")
    text = all_text(at)
    assert "which π₀ writes with probability 1.74 × 10⁻⁵" in text
    assert "costs only −log π₀ = 10.96 nats of KL" in text
    alt = " ".join(charts_alt(at))
    assert "1.74 × 10⁻⁵ under π₀" in alt
    assert "1.7 × 10⁻⁵" not in text.replace("1.74 × 10⁻⁵", "")
    common = run_page("tilt.py", pi0="0.7,0.2,0.1", r="0,1,2", kappa="1")
    assert "Rarity protects" not in all_text(common)
    assert "probability 0.100" in all_text(common)


def test_small_kappa_readout_and_square_root_law_do_not_read_zero_or_repeat():
    """Review items 7 and 19: at κ = 0.1 the KL is 1.2 × 10⁻⁴ (½κ²v to first order), not 0.00;
    E[r] under π* and π₀ differ in the third decimal; the √-law's value equal to the exact one at
    four decimals is said once."""
    m = metrics(run_page("tilt.py", kappa="0.1"))
    assert m["KL(π* ‖ π₀)"] == "1.2 × 10⁻⁴ nats"
    assert m["E[r] under π*"] != m["E[r] under π₀"]
    at = run_page("tilt.py", kappa="0.1")
    text = all_text(at)
    assert re.search(r"gives the exact gain, 0\.0025, to the digits shown", text)
    assert "0.0025 against the exact 0.0025" not in text
    m0 = metrics(run_page("tilt.py", kappa="0"))
    assert m0["KL(π* ‖ π₀)"] == "0.00 nats" and m0["E[r] under π*"] == m0["E[r] under π₀"] == "0.31"


def test_far_from_the_reference_the_expansion_is_a_factor_not_a_capped_percentage():
    """Review item 20: at κ = 10,000 κ·v is 361 times the exact gain (was "off by 999% or
    more"), checked against the book's model written out."""
    from klrl_core import model

    r = model.rewards()
    pi0 = [math.exp(x) for x in model.log_reference(r)]
    mu = math.fsum(p * x for p, x in zip(pi0, r))
    v = math.fsum(p * (x - mu) ** 2 for p, x in zip(pi0, r))
    pi = _tilt(pi0, r, 1e4)
    gain = math.fsum(p * x for p, x in zip(pi, r)) - mu
    text = all_text(run_page("tilt.py", kappa="10000"))
    assert f"the expansion's κ·v is {1e4 * v / gain:.0f} times the exact gain" in text
    assert "999%" not in text
    assert "gets > 0.999999 under π*" in text and "gets 1.000" not in text
