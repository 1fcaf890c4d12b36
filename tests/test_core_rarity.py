"""Tests for klrl_core.rarity (Section 12.3.3 and Equation 12.7; Section 12.4.2, Example 12.1).

Expected values are the chapter's printed numbers, hand computations in the comments, 50-digit
decimal evaluations of the closed forms written out here, or the tilt of Equation (12.4)
computed over explicit response sets (klrl_core.tilt, itself pinned in test_core_tilt.py).
"""

import math
from decimal import Decimal, localcontext

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from klrl_core import rarity as ra
from klrl_core import tilt

SETTINGS = settings(max_examples=60, deadline=None)


def ref_two(p0: float, delta: float, beta: float) -> float:
    """p0 e^{delta/beta} / (p0 e^{delta/beta} + 1 - p0) in 50-digit decimals."""
    with localcontext() as ctx:
        ctx.prec = 50
        p = Decimal(p0)
        w = p * (Decimal(delta) / Decimal(beta)).exp()
        return float(w / (w + 1 - p))


# --------------------------------------------------------------------------- printed numbers


def test_billion_to_one():
    # p0 = 1e-9, delta = 1: log(1/p0) = 20.7 and the threshold delta/log(1/p0) = 0.0483.
    assert round(math.log(1e9), 1) == 20.7
    assert round(ra.bound_threshold(1e-9, 1.0), 4) == 0.0483
    assert round(ra.exact_threshold(1e-9, 1.0), 4) == 0.0483
    # "dominates once beta falls below delta/20.7", for any delta.
    for delta in (0.1, 1.0, 3.0):
        assert ra.bound_threshold(1e-9, delta) == pytest.approx(delta / math.log(1e9), rel=1e-15)


def test_one_percent_half_gap():
    # p0 = 0.01, delta = 0.5: 0.5/log(99) = 0.1088 exactly, 0.5/log(100) = 0.1086 by Eq. (12.7).
    assert round(ra.exact_threshold(0.01, 0.5), 4) == 0.1088
    assert round(ra.bound_threshold(0.01, 0.5), 4) == 0.1086


def test_thousand_times_rarer():
    # beta log 1000 = 6.9 beta.
    assert round(ra.reward_gap_for_rarity(1000, 1.0), 1) == 6.9
    assert ra.reward_gap_for_rarity(1000, 0.2) == pytest.approx(0.2 * 6.907755278982137, rel=1e-15)
    # Meaning: a response 1000x rarer with that much more gap has the same Eq. (12.7) threshold.
    p0, delta = 1e-4, 0.8
    b = ra.bound_threshold(p0, delta)
    assert ra.bound_threshold(
        p0 / 1000, delta + ra.reward_gap_for_rarity(1000, b)
    ) == pytest.approx(b, rel=1e-13)


def test_section_12_3_1_two_responses():
    # 0.1 with reward gap 1: 0.27/(0.27 + 0.9) = 0.23 at beta = 1, 5.5/(5.5 + 0.9) = 0.86 at 0.25.
    assert round(ra.two_response_optimum(0.1, 1.0, 1.0), 2) == 0.23
    assert round(ra.two_response_optimum(0.1, 1.0, 0.25), 2) == 0.86


def test_deepseek_r1_zero_reading():
    d = ra.dominance_threshold_probability(ra.DEEPSEEK_R1_ZERO_DELTA, ra.DEEPSEEK_R1_ZERO_BETA)
    assert d.log_probability == pytest.approx(-1000.0, rel=1e-15)
    assert d.probability == 0.0  # e^{-1000} underflows: use the log
    # exact: -log(1 + e^{1000}) = -1000 - log(1 + e^{-1000})
    assert d.exact_log_probability == pytest.approx(-1000.0, rel=1e-15)
    assert ra.max_change_factor(1.0, 0.001).log_factor == pytest.approx(1000.0)
    assert ra.max_change_factor(1.0, 0.001).factor == np.inf


def test_example_12_1_probabilities_and_odds():
    log_pi0 = np.log(ra.EXAMPLE_12_1_PI0)
    r = ra.EXAMPLE_12_1_REWARDS
    # beta = 0.5: weights 0.2e^2 = 1.48, 0.1e^2 = 0.74, 0.7 -> (0.51, 0.25, 0.24).
    np.testing.assert_allclose(np.round(tilt.tilt(log_pi0, r, 2.0).pi, 2), [0.51, 0.25, 0.24])
    # beta = 0.1: (0.667, 0.333, 0.0001).
    pi = tilt.tilt(log_pi0, r, 10.0).pi
    np.testing.assert_allclose(np.round(pi[:2], 3), [0.667, 0.333])
    assert round(pi[2], 4) == 0.0001
    betas = np.array([1e-4, 0.01, 0.1, 0.5, 1.0, 100.0])
    np.testing.assert_allclose(ra.log_odds(log_pi0, r, betas, 0, 1), math.log(2), rtol=1e-14)
    t = tilt.tilt(log_pi0, r, 1 / betas)
    np.testing.assert_allclose(t.pi[:, 0] / t.pi[:, 1], 2.0, rtol=1e-12)
    # Across reward levels the odds move by e^{(r_i - r_j)/beta}: formal against unhelpful.
    np.testing.assert_allclose(
        ra.log_odds(log_pi0, r, betas, 0, 2), t.log_pi[:, 0] - t.log_pi[:, 2], rtol=1e-12
    )
    assert ra.log_odds(log_pi0, r, 0.5, 2, 0) == pytest.approx(math.log(0.7 / 0.2) - 2.0, rel=1e-14)


# --------------------------------------------------------------------------- pi*(y1)


@pytest.mark.parametrize(
    "p0,delta,beta",
    [
        (0.1, 1, 1),
        (1e-12, 1, 1e-4),
        (1e-12, 1, 0.05),
        (1e-12, 0.001, 1),
        (0.3, 0.2, 0.01),
        (0.9, 1, 3),
        (0.01, -0.5, 0.1),
        (1e-9, 1, 0.0483),
    ],
)
def test_two_response_against_decimal(p0, delta, beta):
    assert ra.two_response_optimum(p0, delta, beta) == pytest.approx(
        ref_two(p0, delta, beta), rel=1e-13
    )


@SETTINGS
@given(st.floats(1e-12, 0.999), st.floats(-5, 5), st.floats(1e-3, 100))
def test_two_response_is_the_tilt(p0, delta, beta):
    t = tilt.tilt(np.log([p0, 1 - p0]), np.array([delta, 0.0]), 1 / beta)
    assert ra.two_response_optimum(p0, delta, beta) == pytest.approx(t.pi[0], rel=1e-9, abs=1e-300)


@SETTINGS
@given(
    st.lists(st.floats(1e-6, 1.0), min_size=1, max_size=8),
    st.lists(st.floats(0.0, 3.0), min_size=8, max_size=8),
    st.floats(1e-6, 0.99),
    st.floats(0.0, 2.0),
    st.floats(0.01, 10.0),
)
def test_many_response_bound_holds(weights, extra_gaps, p0, delta, beta):
    # y1 with probability p0 and reward 0; the others share 1 - p0 and earn -delta - extra <= -delta.
    w = np.array(weights) / np.sum(weights) * (1 - p0)
    log_pi0 = np.log(np.r_[p0, w])
    r = np.r_[0.0, -delta - np.array(extra_gaps[: w.size])]
    got = tilt.tilt(log_pi0, r, 1 / beta).pi[0]
    bound = ra.many_response_lower_bound(p0, delta, beta)
    assert got >= bound * (1 - 1e-10)
    # Every other response exactly delta below: the bound is attained.
    flat = tilt.tilt(log_pi0, np.r_[0.0, np.full(w.size, -delta)], 1 / beta).pi[0]
    assert flat == pytest.approx(bound, rel=1e-10)


def test_thresholds_give_half():
    for p0, delta in [(0.01, 0.5), (1e-9, 1.0), (0.3, 2.0), (1e-12, 0.01)]:
        beta = ra.exact_threshold(p0, delta)
        assert ra.two_response_optimum(p0, delta, beta) == pytest.approx(0.5, rel=1e-12)
        assert ra.two_response_optimum(p0, delta, beta * 1.01) < 0.5
        assert ra.two_response_optimum(p0, delta, ra.bound_threshold(p0, delta)) > 0.5


def test_threshold_edges():
    assert ra.exact_threshold(0.5, 1.0) == np.inf
    assert ra.exact_threshold(0.7, 1.0) == np.inf
    assert ra.bound_threshold(1.0, 1.0) == np.inf
    assert ra.exact_threshold(0.1, 0.0) == 0.0
    assert ra.exact_threshold(0.5, 0.0) == np.inf  # pi* = p0 = 1/2 at every beta
    assert ra.exact_threshold(1e-12, 1.0) == pytest.approx(
        1 / math.log((1 - 1e-12) / 1e-12), rel=1e-14
    )
    np.testing.assert_allclose(
        ra.bound_threshold(np.array([1e-2, 1e-9]), 1.0),
        [1 / math.log(100), 1 / math.log(1e9)],
        rtol=1e-14,
    )


@SETTINGS
@given(st.floats(1e-12, 0.4999), st.floats(1e-3, 10))
def test_exact_threshold_above_bound(p0, delta):
    assert ra.exact_threshold(p0, delta) > ra.bound_threshold(p0, delta)


def test_dominance_probability_reads_the_thresholds_backwards():
    for delta, beta in [(1.0, 0.05), (0.5, 0.1), (2.0, 1.0)]:
        d = ra.dominance_threshold_probability(delta, beta)
        assert d.probability == pytest.approx(math.exp(-delta / beta), rel=1e-14)
        assert d.exact_probability == pytest.approx(1 / (1 + math.exp(delta / beta)), rel=1e-14)
        # At p0 just above e^{-delta/beta}, Eq. (12.7) holds at this beta; just below, not.
        assert ra.bound_threshold(d.probability * 1.001, delta) > beta
        assert ra.bound_threshold(d.probability * 0.999, delta) < beta
        assert ra.two_response_optimum(d.exact_probability, delta, beta) == pytest.approx(
            0.5, rel=1e-12
        )


# --------------------------------------------------------------------------- change factor, tilts


@SETTINGS
@given(st.lists(st.floats(1e-6, 1.0), min_size=2, max_size=6), st.data(), st.floats(0.02, 20))
def test_no_probability_changes_by_more_than_the_factor(weights, data, beta):
    r = np.array(
        data.draw(st.lists(st.floats(-2, 2), min_size=len(weights), max_size=len(weights)))
    )
    log_pi0 = np.log(np.array(weights) / np.sum(weights))
    log_ratio = tilt.tilt(log_pi0, r, 1 / beta).log_pi - log_pi0
    cf = ra.max_change_factor(np.ptp(r), beta)
    assert np.max(np.abs(log_ratio)) <= cf.log_factor * (1 + 1e-12) + 1e-12


def test_change_factor_is_nearly_attained_by_a_rare_top_response():
    # Two responses, the top one of probability 1e-12 and gap 1: its ratio is e^{1/beta}/(Z) -> e^{1/beta}.
    cf = ra.max_change_factor(1.0, 0.5)
    assert cf.factor == pytest.approx(math.e**2, rel=1e-15)
    ratio = ra.two_response_optimum(1e-12, 1.0, 0.5) / 1e-12
    assert ratio == pytest.approx(cf.factor, rel=1e-10) and ratio <= cf.factor


def test_repeated_tilt_counts_its_steps():
    log_pi0 = np.log([0.5, 0.3, 0.2])
    r = np.array([0.0, 0.5, 1.0])
    # By hand: two resets at beta = 1 give pi0 e^{2r}/Z.
    w = np.array([0.5, 0.3 * math.e, 0.2 * math.e**2])
    rep = ra.repeated_tilt(log_pi0, r, 1.0, 2)
    np.testing.assert_allclose(rep.pi, w / w.sum(), rtol=1e-13)
    assert rep.log_z == pytest.approx(math.log(w.sum()), rel=1e-13)  # log Z at kappa = 2
    q = w / w.sum()
    assert rep.kl == pytest.approx(math.fsum(q * np.log(q / np.array([0.5, 0.3, 0.2]))), rel=1e-12)
    assert rep.expected == pytest.approx(float(q @ r), rel=1e-13)
    np.testing.assert_allclose(
        ra.repeated_tilt(log_pi0, r, 1.0, 1).pi,
        np.array([0.5, 0.3 * math.e**0.5, 0.2 * math.e]) / (0.5 + 0.3 * math.e**0.5 + 0.2 * math.e),
        rtol=1e-13,
    )
    batch = ra.repeated_tilt(log_pi0, r, np.array([1.0, 2.0]), 2)
    np.testing.assert_allclose(batch.pi[0], w / w.sum(), rtol=1e-13)
    np.testing.assert_allclose(batch.kl[1], tilt.tilt(log_pi0, r, 1.0).kl, rtol=1e-12)


@SETTINGS
@given(
    st.lists(st.floats(1e-6, 1.0), min_size=2, max_size=6),
    st.data(),
    st.floats(0.05, 10),
    st.integers(1, 20),
    st.floats(-50, 50),
)
def test_repeated_tilt_is_one_tilt_at_beta_over_m(weights, data, beta, m, shift):
    r = np.array(data.draw(st.lists(st.floats(0, 1), min_size=len(weights), max_size=len(weights))))
    log_pi0 = np.log(np.array(weights) / np.sum(weights))
    rep = ra.repeated_tilt(log_pi0, r, beta, m)
    one = tilt.tilt(log_pi0, r, m / beta)
    np.testing.assert_allclose(rep.pi, one.pi, rtol=1e-9, atol=1e-14)
    assert rep.kl == pytest.approx(float(one.kl), rel=1e-8, abs=1e-12)
    assert rep.log_z == pytest.approx(float(one.log_z), rel=1e-10, abs=1e-10)
    # Adding a constant to every reward changes no probability.
    np.testing.assert_allclose(
        ra.repeated_tilt(log_pi0, r + shift, beta, m).pi, rep.pi, rtol=1e-9, atol=1e-14
    )


def test_extremes_stay_finite():
    assert ra.two_response_optimum(1e-12, 1.0, 1e-4) == 1.0
    assert ra.two_response_optimum(1e-12, 1e-6, 1.0) == pytest.approx(
        1e-12 * math.exp(1e-6), rel=1e-12
    )
    assert np.isfinite(ra.exact_threshold(1e-12, 1e-4))
    rep = ra.repeated_tilt(np.log([0.999, 0.001]), np.array([0.0, 1.0]), 1e-4, 100)
    assert np.all(np.isfinite(rep.log_pi)) and rep.pi[1] == 1.0


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "call",
    [
        lambda: ra.two_response_optimum(0.0, 1, 1),
        lambda: ra.two_response_optimum(1.0, 1, 1),
        lambda: ra.two_response_optimum(0.1, np.nan, 1),
        lambda: ra.two_response_optimum(0.1, 1, 0),
        lambda: ra.many_response_lower_bound(0.1, -1, 1),
        lambda: ra.exact_threshold(0.1, -1),
        lambda: ra.exact_threshold(1.5, 1),
        lambda: ra.bound_threshold(0.0, 1),
        lambda: ra.max_change_factor(-1, 1),
        lambda: ra.max_change_factor(1, -1),
        lambda: ra.reward_gap_for_rarity(0, 1),
        lambda: ra.dominance_threshold_probability(1, 0),
        lambda: ra.repeated_tilt(np.log([0.5, 0.5]), np.array([0.0, 1.0]), 1.0, 0),
        lambda: ra.repeated_tilt(np.log([0.5, 0.5]), np.array([0.0, 1.0]), 1.0, 2.5),
        lambda: ra.repeated_tilt(np.log([0.5, 0.5]), np.array([0.0, 1.0, 2.0]), 1.0, 2),
    ],
)
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()
