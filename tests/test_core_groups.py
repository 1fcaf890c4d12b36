"""Tests for klrl_core.groups (Figure 12.4, section 12.7.1, Exercise 12.4, exercise 28.4).

Expected values are the chapters' printed numbers or hand arithmetic; the
property tests compare against definitions written out here, not against the
module's own helpers.
"""

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from klrl_core import groups

# --- signal probability ------------------------------------------------------


def test_figure_12_4_readout():
    # p = 0.10, k = 8: signal 0.57, 43% of groups all right or all wrong.
    assert groups.signal_probability(0.10, 8) == pytest.approx(0.57, abs=0.005)
    assert groups.no_signal_probability(0.10, 8) == pytest.approx(0.43, abs=0.005)
    # hand value: 0.9^8 + 0.1^8 = 0.43046721 + 1e-8
    assert groups.no_signal_probability(0.10, 8) == pytest.approx(0.43046722, rel=1e-9)


def test_exercise_12_4_no_signal():
    assert groups.no_signal_probability(0.05, 8) == pytest.approx(0.663, abs=0.0005)
    assert groups.no_signal_probability(0.05, 64) == pytest.approx(0.038, abs=0.0005)


def test_signal_probability_ends_and_middle():
    assert groups.signal_probability(0.0, 8) == 0.0
    assert groups.signal_probability(1.0, 8) == 0.0
    assert groups.signal_probability(0.5, 2) == pytest.approx(0.5)
    assert groups.signal_probability(0.3, 1) == pytest.approx(0.0, abs=1e-15)


def test_signal_probability_vectorised_and_broadcast():
    p = np.array([0.1, 0.5, 0.9])
    k = np.array([[2], [8]])
    out = groups.signal_probability(p, k)
    assert out.shape == (2, 3)
    assert out[0, 1] == pytest.approx(0.5)
    assert out[1, 0] == pytest.approx(1 - 0.1**8 - 0.9**8)


def test_signal_probability_stable_for_large_k_and_tiny_p():
    # 1 - (1 - p)^k ~ k p for k p << 1; the naive formula loses every digit here.
    assert groups.signal_probability(1e-12, 1000) == pytest.approx(1e-9, rel=1e-6, abs=0)
    assert groups.signal_probability(0.5, 100_000) == 1.0
    assert np.isfinite(groups.signal_probability(1e-300, 10**7))
    # Same accuracy near p = 1 (2**-40 and 1 - 2**-40 are exact in binary).
    tiny = 2.0**-40
    near_one = groups.signal_probability(1.0 - tiny, 1000)
    assert near_one == pytest.approx(-math.expm1(1000 * math.log1p(-tiny)), rel=1e-10, abs=0)


@pytest.mark.parametrize("p, k", [(-0.1, 8), (1.5, 8), (float("nan"), 8), (0.5, 0), (0.5, 2.5)])
def test_signal_probability_rejects_bad_input(p, k):
    with pytest.raises(ValueError):
        groups.signal_probability(p, k)


@settings(max_examples=200)
@given(p=st.floats(0, 1), k=st.integers(1, 5000))
def test_signal_probability_in_unit_interval_and_symmetric(p, k):
    s = groups.signal_probability(p, k)
    assert 0.0 <= s <= 1.0
    assert groups.signal_probability(1.0 - p, k) == pytest.approx(s, abs=1e-12)


@settings(max_examples=200)
@given(p=st.floats(0.001, 0.999), k=st.integers(1, 3000))
def test_signal_probability_rises_with_k(p, k):
    assert groups.signal_probability(p, k + 1) >= groups.signal_probability(p, k) - 1e-15


@settings(max_examples=100)
@given(p=st.floats(0.01, 0.99), k=st.integers(1, 60))
def test_signal_probability_matches_direct_formula(p, k):
    assert groups.signal_probability(p, k) == pytest.approx(1 - p**k - (1 - p) ** k, abs=1e-12)


# --- group advantages -------------------------------------------------------------


def test_example_12_2():
    np.testing.assert_allclose(groups.group_advantages([1, 0, 0, 1]), [1, -1, -1, 1])
    a = groups.group_advantages([1, 0, 0, 0])
    assert a[0] == pytest.approx(1.73, abs=0.005)
    np.testing.assert_allclose(a[1:], -0.58, atol=0.005)
    np.testing.assert_array_equal(groups.group_advantages([1, 1, 1, 1]), 0.0)
    np.testing.assert_array_equal(groups.group_advantages([0, 0, 0, 0]), 0.0)


def test_exercise_12_4_three_of_eight():
    a = groups.group_advantages([1, 1, 1, 0, 0, 0, 0, 0])
    assert a[0] == pytest.approx(1.29, abs=0.005)
    assert a[-1] == pytest.approx(-0.77, abs=0.005)
    assert a[0] == pytest.approx(math.sqrt(5 / 3))
    assert a[-1] == pytest.approx(-math.sqrt(3 / 5))


def test_one_of_eight_is_figure_12_4_readout():
    a = groups.group_advantages([1] + [0] * 7)
    assert a[0] == pytest.approx(2.65, abs=0.005)
    assert a[0] == pytest.approx(math.sqrt(7))
    np.testing.assert_allclose(a[1:], -0.38, atol=0.005)
    assert groups.mixed_group_advantages(1, 8) == pytest.approx((math.sqrt(7), -1 / math.sqrt(7)))


def test_other_conventions_by_hand():
    # (1, 0, 0, 1): centred +-0.5; sample std with k - 1 = 3: sqrt(1/3).
    np.testing.assert_allclose(
        groups.group_advantages([1, 0, 0, 1], "dr_grpo"), [0.5, -0.5, -0.5, 0.5]
    )
    np.testing.assert_allclose(
        groups.group_advantages([1, 0, 0, 1], "std_unbiased"),
        np.array([1, -1, -1, 1]) * 0.5 / math.sqrt(1 / 3),
    )
    # (1, 0, 0, 0), k - 1 convention: centred 0.75, sample std sqrt(0.75 / 3) = 0.5.
    a = groups.group_advantages([1, 0, 0, 0], "std_unbiased")
    np.testing.assert_allclose(a, [1.5, -0.5, -0.5, -0.5])


@pytest.mark.parametrize("convention", groups.CONVENTIONS)
def test_flat_groups_give_zeros_without_warnings(convention):
    with np.errstate(all="raise"):
        for r in ([0.1, 0.1, 0.1], [1.0], [0, 0], [7.0] * 50):
            np.testing.assert_array_equal(groups.group_advantages(r, convention), 0.0)


def test_group_advantages_along_last_axis():
    r = np.array([[1, 0, 0, 1], [1, 1, 1, 1], [1, 0, 0, 0]])
    a = groups.group_advantages(r)
    np.testing.assert_allclose(a[0], [1, -1, -1, 1])
    np.testing.assert_array_equal(a[1], 0)
    assert a[2, 0] == pytest.approx(math.sqrt(3))


@pytest.mark.parametrize("bad", [[], [1.0, float("nan")], [float("inf"), 0.0]])
def test_group_advantages_rejects_bad_rewards(bad):
    with pytest.raises(ValueError):
        groups.group_advantages(bad)


def test_unknown_convention():
    with pytest.raises(ValueError):
        groups.group_advantages([1, 0], "grpo")


rewards_lists = st.lists(st.floats(-100, 100, allow_subnormal=False), min_size=2, max_size=40)


@settings(max_examples=200)
@given(r=rewards_lists)
def test_std_convention_has_mean_zero_and_unit_population_std(r):
    r = np.array(r)
    assume(np.ptp(r) > 1e-6 * max(1.0, np.abs(r).max()))
    a = groups.group_advantages(r, "std")
    assert abs(a.mean()) < 1e-9
    assert math.sqrt(np.mean(a**2)) == pytest.approx(1.0, rel=1e-9)


@settings(max_examples=200, deadline=None)
@given(bits=st.lists(st.integers(0, 1), min_size=2, max_size=64))
def test_binary_groups_match_closed_forms(bits):
    r = np.array(bits, dtype=float)
    k, c = r.size, int(r.sum())
    for conv in groups.CONVENTIONS:
        a = groups.group_advantages(r, conv)
        if c in (0, k):
            np.testing.assert_array_equal(a, 0.0)
            continue
        m = c / k
        if conv == "dr_grpo":
            hi, lo = 1 - m, -m
        else:
            ddof = 1 if conv == "std_unbiased" else 0
            sd = math.sqrt((c * (1 - m) ** 2 + (k - c) * m**2) / (k - ddof))
            hi, lo = (1 - m) / sd, -m / sd
        np.testing.assert_allclose(a[r == 1], hi, rtol=1e-12)
        np.testing.assert_allclose(a[r == 0], lo, rtol=1e-12)
        assert groups.mixed_group_advantages(c, k, conv) == pytest.approx((hi, lo), rel=1e-12)


@settings(max_examples=200)
@given(r=rewards_lists)
def test_exercise_28_4b_mean_centring_is_scaled_leave_one_out(r):
    r = np.array(r)
    g = r.size
    loo = np.array([(r.sum() - r[i]) / (g - 1) for i in range(g)])
    np.testing.assert_allclose(groups.leave_one_out_baseline(r), loo, rtol=1e-9, atol=1e-9)
    centred = r - r.mean()
    scale = max(1.0, np.abs(r).max())
    np.testing.assert_allclose(
        centred, (g - 1) / g * (r - groups.leave_one_out_baseline(r)), atol=1e-9 * scale
    )


def test_leave_one_out_by_hand():
    np.testing.assert_allclose(
        groups.leave_one_out_baseline([1, 0, 0, 1]), [1 / 3, 2 / 3, 2 / 3, 1 / 3]
    )
    with pytest.raises(ValueError):
        groups.leave_one_out_baseline([1.0])


# --- exact distribution over responses ------------------------------------------


def test_binomial_pmf_by_hand():
    np.testing.assert_allclose(groups.binomial_pmf(0.5, 3), [1 / 8, 3 / 8, 3 / 8, 1 / 8])
    np.testing.assert_allclose(groups.binomial_pmf(0.0, 3), [1, 0, 0, 0])
    np.testing.assert_allclose(groups.binomial_pmf(1.0, 2), [0, 0, 1])


def test_advantage_distribution_at_the_defaults():
    d = groups.advantage_distribution(0.10, 8)
    assert d.kind[0] == groups.KIND_NO_SIGNAL and d.value[0] == 0.0
    assert d.share[0] == pytest.approx(0.9**8 + 0.1**8)
    correct = d.kind == groups.KIND_CORRECT
    wrong = d.kind == groups.KIND_INCORRECT
    assert correct.sum() == wrong.sum() == 7
    # the one-correct group: P(c = 1) = 8 * 0.1 * 0.9^7, split 1/8 and 7/8
    p1 = 8 * 0.1 * 0.9**7
    i = np.flatnonzero(correct & (d.n_correct == 1))[0]
    j = np.flatnonzero(wrong & (d.n_correct == 1))[0]
    assert d.value[i] == pytest.approx(2.65, abs=0.005)
    assert d.value[j] == pytest.approx(-0.38, abs=0.005)
    assert d.share[i] == pytest.approx(p1 / 8)
    assert d.share[j] == pytest.approx(p1 * 7 / 8)
    # the tallest stem is the incorrect responses of one-correct groups (about 33%)
    assert np.argmax(d.share[1:]) + 1 == j
    assert groups.most_likely_mixed_group(0.10, 8) == 1


def test_advantage_distribution_dr_grpo_values():
    d = groups.advantage_distribution(0.5, 4, "dr_grpo")
    got = sorted(zip(d.kind, d.n_correct, np.round(d.value, 12)))
    assert ("correct", 1, 0.75) in got and ("incorrect", 3, -0.75) in got


def test_advantage_distribution_small_k_and_min_share():
    d = groups.advantage_distribution(0.3, 1)
    assert len(d) == 1 and d.share[0] == pytest.approx(1.0)
    big = groups.advantage_distribution(0.3, 1024, min_share=1e-9)
    assert len(big) < 2 * 1023 + 1
    assert big.kind[0] == groups.KIND_NO_SIGNAL
    assert big.share.sum() == pytest.approx(1.0, abs=1e-6)


@settings(max_examples=150)
@given(p=st.floats(0, 1), k=st.integers(1, 400), conv=st.sampled_from(groups.CONVENTIONS))
def test_advantage_shares_sum_to_one(p, k, conv):
    d = groups.advantage_distribution(p, k, conv)
    assert len(d) == 2 * (k - 1) + 1
    assert np.all(d.share >= 0)
    assert d.share.sum() == pytest.approx(1.0, abs=1e-9)
    assert d.share[0] == pytest.approx(p**k + (1 - p) ** k, abs=1e-9)
    assert np.all(np.isfinite(d.value))


@settings(max_examples=100)
@given(p=st.floats(0, 1), k=st.integers(2, 200))
def test_expected_advantage_is_zero(p, k):
    # Every group's advantages sum to zero, so their expectation over responses is zero.
    d = groups.advantage_distribution(p, k)
    assert abs(np.sum(d.value * d.share)) < 1e-9


# --- parsing the calculator's grades -----------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [("1,0,0,1", [1, 0, 0, 1]), (" 1 0 ; 1 ", [1, 0, 1]), ("1.0, 0.", [1, 0]), ("1", [1])],
)
def test_parse_grades_ok(text, expected):
    np.testing.assert_array_equal(groups.parse_grades(text), expected)


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("", "empty"),
        (" , ;", "empty"),
        ("1,2,0", "'2'"),
        ("1,x", "'x'"),
        ("0.5,1", "'0.5'"),
        ("nan", "'nan'"),
    ],
)
def test_parse_grades_errors(text, fragment):
    with pytest.raises(ValueError, match=fragment):
        groups.parse_grades(text)


def test_parse_grades_too_long():
    with pytest.raises(ValueError, match="at most"):
        groups.parse_grades(",".join(["1"] * (groups.MAX_GROUP + 1)))


# ----- issue 23: a group that differs only by rounding is flat
def test_rounding_noise_is_a_flat_group():
    for conv in ("std", "std_unbiased", "dr_grpo"):
        adv = groups.group_advantages([0.1 + 0.2, 0.3, 0.3], conv)
        assert np.array_equal(adv, np.zeros(3)), (conv, adv)
    # a genuine spread, however small against the scale of 1, still counts
    adv = groups.group_advantages([1.0, 1.0 + 1e-9, 1.0])
    assert adv[1] > 1.0 and abs(adv.sum()) < 1e-9


@given(
    st.lists(st.sampled_from([0.0, 0.3, 1.0, 2.5, -1.0]), min_size=2, max_size=16),
    st.lists(st.integers(-4, 4), min_size=16, max_size=16),
    st.sampled_from(["std", "std_unbiased", "dr_grpo"]),
)
def test_advantages_of_every_group_sum_to_zero_under_float_noise(levels, ulps, conv):
    """Rewards from a few levels, each nudged by a few ulps (what sums such as 0.1 + 0.2
    produce): every group's advantages sum to 0, and a group of one level is flat."""
    r = np.array(
        [np.nextafter(x, np.inf if u > 0 else -np.inf) if u else x for x, u in zip(levels, ulps)]
    )
    for _ in range(3):
        r = np.array([np.nextafter(x, np.inf) if u > 1 else x for x, u in zip(r, ulps)])
    adv = groups.group_advantages(r, conv)
    assert abs(adv.sum()) < 1e-9
    if len(set(levels)) == 1:
        assert np.all(adv == 0.0)


def test_a_spread_just_above_the_tolerance_still_sums_to_zero():
    """Centred rewards of 1e-12 carry rounding errors of 1e-16 (1e-4 of themselves): divided
    by the tiny standard deviation, their sum was 6e-4 off zero before the re-centring."""
    for r in ([1.0, 1.0 + 3e-12, 1.0, 1.0 + 1e-12, 1.0 + 2e-12], [0.7, 0.7 + 5e-12, 0.7 + 1e-12]):
        adv = groups.group_advantages(r)
        assert abs(adv.sum()) < 1e-12 and np.ptp(adv) > 1.0


# --- the calculator's spreads and the look-for's likeliest share ----------------------------


def test_group_standard_deviations_by_hand():
    # 1,0,0,1: mean 1/2, squared deviations 1/4 each, sum 1: over k = 4 it is 1/2, over
    # k - 1 = 3 it is sqrt(1/3).
    assert groups.group_standard_deviations([1, 0, 0, 1]) == pytest.approx((0.5, math.sqrt(1 / 3)))
    # 2,4,4,4,5,5,7,9: mean 5, squared deviations sum to 32: sqrt(32/8) = 2, sqrt(32/7).
    assert groups.group_standard_deviations([2, 4, 4, 4, 5, 5, 7, 9]) == pytest.approx(
        (2.0, math.sqrt(32 / 7))
    )
    assert groups.group_standard_deviations([1, 1, 1]) == (0.0, 0.0)
    for bad in ([1.0], [], [[1, 0], [0, 1]]):
        with pytest.raises(ValueError):
            groups.group_standard_deviations(bad)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 1), min_size=2, max_size=40))
def test_group_standard_deviations_are_the_statistics_modules(bits):
    import statistics

    pop, sample = groups.group_standard_deviations(bits)
    assert pop == pytest.approx(statistics.pstdev(bits), abs=1e-12)
    assert sample == pytest.approx(statistics.stdev(bits), abs=1e-12)


def test_likeliest_mixed_share_by_hand():
    # k = 2: the only mixed group is one of two correct, so it holds every mixed group.
    assert groups.likeliest_mixed_share(0.3, 2) == pytest.approx(1.0)
    # p = 1/2, k = 4: P(1), P(2), P(3) = 4/16, 6/16, 4/16; the likeliest (2 of 4) holds 6/14.
    assert groups.likeliest_mixed_share(0.5, 4) == pytest.approx(6 / 14)
    # p = 0.1, k = 8: the likeliest is 1 of 8, 8 (0.1)(0.9)^7 of 1 - 0.9^8 - 0.1^8.
    assert groups.likeliest_mixed_share(0.1, 8) == pytest.approx(
        8 * 0.1 * 0.9**7 / (1 - 0.9**8 - 0.1**8)
    )
    # No group is mixed at p = 0 or 1.
    assert groups.likeliest_mixed_share(0.0, 8) == 0.0
    assert groups.likeliest_mixed_share(1.0, 8) == 0.0


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 99), st.integers(2, 30))
def test_likeliest_mixed_share_by_enumeration(percent, k):
    """The largest of the mixed groups' probabilities over their sum, from math.comb."""
    from fractions import Fraction

    p = Fraction(percent, 100)
    mixed = [math.comb(k, c) * p**c * (1 - p) ** (k - c) for c in range(1, k)]
    assert groups.likeliest_mixed_share(percent / 100, k) == pytest.approx(
        float(max(mixed) / sum(mixed)), rel=1e-9
    )
