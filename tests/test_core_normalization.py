"""Tests for klrl_core.normalization (section 12.7.1, Exercise 28.4).

References written here: enumeration of all 2^k graded groups (with exact fractions for the
mean-centred case), the advantage rule written from Algorithm 12.1 with the statistics module,
the closed forms of Exercise 28.4, and finite differences of 2 arcsin sqrt(p).
"""

import itertools
import math
import statistics
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from klrl_core import normalization as nm


def enumerate_weight(p, k, divide):
    """w = E[A_1 (r_1 - p)] / (p (1 - p)): the expected update of one response on a one-logit
    policy, divided by dp/dtheta.  ``divide`` is None (centred), "pop" or "sample" std."""
    total = 0.0
    for grades in itertools.product((0, 1), repeat=k):
        prob = math.prod(p if g else 1 - p for g in grades)
        mean = sum(grades) / k
        if divide is None:
            a1 = grades[0] - mean
        elif min(grades) == max(grades):
            a1 = 0.0
        else:
            sd = statistics.pstdev(grades) if divide == "pop" else statistics.stdev(grades)
            a1 = (grades[0] - mean) / sd
        total += prob * a1 * (grades[0] - p)
    return total / (p * (1 - p))


def test_centred_weight_is_exactly_k_minus_1_over_k_with_fractions():
    for k in (2, 3, 5):
        for p in (Fraction(1, 3), Fraction(7, 10)):
            tot = Fraction(0)
            for grades in itertools.product((0, 1), repeat=k):
                prob = math.prod(p if g else 1 - p for g in grades)
                tot += prob * (grades[0] - Fraction(sum(grades), k)) * (grades[0] - p)
            assert tot / (p * (1 - p)) == Fraction(k - 1, k)
            assert nm.update_weight(float(p), k, "dr_grpo") == pytest.approx(
                float(Fraction(k - 1, k))
            )
    assert nm.centring_factor(8) == 0.875


@pytest.mark.parametrize("k", [2, 3, 5, 8])
@pytest.mark.parametrize("p", [0.03, 0.2, 0.5, 0.77])
def test_std_weight_matches_enumeration(k, p):
    assert nm.update_weight(p, k, "std") == pytest.approx(enumerate_weight(p, k, "pop"), rel=1e-10)
    assert nm.update_weight(p, k, "std_unbiased") == pytest.approx(
        enumerate_weight(p, k, "sample"), rel=1e-10
    )
    assert nm.update_weight(p, k, "dr_grpo") == pytest.approx(
        enumerate_weight(p, k, None), rel=1e-10
    )


def test_hand_values():
    # k = 2: a mixed group is always (+1, -1), so w = (1 - p) + p = 1 for every p.
    assert nm.update_weight(np.array([0.01, 0.3, 0.5, 0.99]), 2) == pytest.approx([1, 1, 1, 1])
    # p -> 0: a lone success gets sqrt(k - 1) (Example 12.2: 1 of 4 gives sqrt(3) = 1.73).
    assert nm.update_weight(0.0, 4) == pytest.approx(math.sqrt(3))
    assert nm.update_weight(1.0, 8) == pytest.approx(math.sqrt(7))
    assert nm.update_weight(1e-12, 8) == pytest.approx(math.sqrt(7), rel=1e-9)
    # k = 3, p = 1/2: others (0,0) 1/4, (1 or 0 mixed) 1/2, (1,1) 1/4.
    # r_1 = 1: c = 1 -> sqrt(2) w.p. 1/4; c = 2 -> sqrt(1/2) w.p. 1/2; c = 3 -> 0.
    # r_1 = 0: c = 1 -> -sqrt(1/2) w.p. 1/2; c = 2 -> -sqrt(2) w.p. 1/4.
    expect = (math.sqrt(2) / 4 + math.sqrt(0.5) / 2) * 2
    assert nm.update_weight(0.5, 3) == pytest.approx(expect)


def test_arcsin_law_and_objectives():
    p = np.array([0.1, 0.25, 0.5, 0.9])
    assert nm.arcsin_weight(p) == pytest.approx(1 / np.sqrt(p * (1 - p)))
    assert nm.arcsin_weight(p, 8) == pytest.approx(0.875 / np.sqrt(p * (1 - p)))
    assert nm.arcsin_weight(0.0) == math.inf
    assert nm.objective_arcsin(1.0) == pytest.approx(math.pi)
    assert nm.objective_arcsin(0.5) == pytest.approx(math.pi / 2)
    assert nm.objective_p(0.3) == 0.3
    h = 1e-6
    for x in (0.05, 0.3, 0.5, 0.8):
        fd = (nm.objective_arcsin(x + h) - nm.objective_arcsin(x - h)) / (2 * h)
        assert fd == pytest.approx(nm.arcsin_weight(x), rel=1e-7)


def test_finite_k_approaches_the_arcsin_law():
    # At k = 8 the exact std weight is within 10% of (k-1)/k / sqrt(p(1-p)) on [0.15, 0.85]
    # and saturates at sqrt(7) at the ends; the gap in the middle shrinks with k.
    p = np.linspace(0.15, 0.85, 29)
    w = nm.weight_curves(p, 8)
    assert np.all(np.abs(w.std / w.arcsin - 1) < 0.1)
    assert w.saturation == pytest.approx(math.sqrt(7))
    assert nm.update_weight(0.02, 8) < math.sqrt(7) < nm.arcsin_weight(0.02, 8)
    gaps = [abs(nm.update_weight(0.5, k) / nm.arcsin_weight(0.5, k) - 1) for k in (4, 8, 16, 64)]
    assert gaps == sorted(gaps, reverse=True) and gaps[-1] < 0.01
    # the group-std weight is symmetric in p and 1 - p
    assert nm.update_weight(0.2, 8) == pytest.approx(nm.update_weight(0.8, 8))


@given(p=st.floats(0.0, 1.0), k=st.integers(2, 40))
@settings(max_examples=100, deadline=None)
def test_std_weight_bounds(p, k):
    w = nm.update_weight(p, k)
    # between the k = 2 value 1 ... and the lone-success advantage sqrt(k - 1)
    assert 1 - 1e-9 <= w <= math.sqrt(k - 1) + 1e-9
    assert nm.update_weight(p, k, "dr_grpo") == pytest.approx((k - 1) / k)


def test_logit_update_and_curves():
    assert nm.logit_update(0.5, 8, "dr_grpo") == pytest.approx(0.875 * 0.25)
    assert nm.logit_update(np.array([0.0, 1.0]), 8) == pytest.approx([0.0, 0.0])
    w = nm.weight_curves(np.array([0.1, 0.5]), 8)
    assert w.signal == pytest.approx([1 - 0.1**8 - 0.9**8, 1 - 2 * 0.5**8])
    assert np.all(w.centred == 0.875)
    assert w.std_unbiased == pytest.approx([enumerate_weight(x, 8, "sample") for x in (0.1, 0.5)])
    assert w.std == pytest.approx([enumerate_weight(x, 8, "pop") for x in (0.1, 0.5)])


@given(r=st.lists(st.floats(-10, 10), min_size=2, max_size=12))
@settings(max_examples=100, deadline=None)
def test_leave_one_out_identity(r):
    res = nm.leave_one_out(r)
    g = len(r)
    for i in range(g):
        b = sum(r[j] for j in range(g) if j != i) / (g - 1)
        assert res.baseline[i] == pytest.approx(b, abs=1e-9)
        assert res.centred[i] == pytest.approx((g - 1) / g * (r[i] - b), abs=1e-9)
    assert res.factor == (g - 1) / g
    assert res.residual < 1e-9


def test_leave_one_out_hand_group():
    res = nm.leave_one_out([1, 0, 0, 1])
    assert res.baseline == pytest.approx([1 / 3, 2 / 3, 2 / 3, 1 / 3])
    assert res.loo == pytest.approx([2 / 3, -2 / 3, -2 / 3, 2 / 3])
    assert res.centred == pytest.approx([0.5, -0.5, -0.5, 0.5])
    assert res.factor == 0.75


@pytest.mark.parametrize(
    "call",
    [
        lambda: nm.update_weight(1.2, 8),
        lambda: nm.update_weight(float("nan"), 8),
        lambda: nm.update_weight(0.5, 1),
        lambda: nm.update_weight(0.5, 2.5),
        lambda: nm.update_weight(0.5, 10**6),
        lambda: nm.update_weight(0.5, 8, "median"),
        lambda: nm.leave_one_out([1.0]),
        lambda: nm.leave_one_out([1.0, float("inf")]),
        lambda: nm.centring_factor(0),
    ],
)
def test_bad_input(call):
    with pytest.raises(ValueError):
        call()


def test_objective_climbed_hand_values_and_slope():
    """The running trapezoid integral, by hand: weights 1, 3, 5 at p = 0, ½, 1 climb 0, 1, 3;
    a constant weight c climbs c·(p − p0); the exact weight's objective nears the arcsin law's."""
    assert nm.objective_climbed([0.0, 0.5, 1.0], [1.0, 3.0, 5.0]).tolist() == [0.0, 1.0, 3.0]
    grid = np.array([0.1, 0.25, 0.7, 0.9])
    assert np.allclose(nm.objective_climbed(grid, np.full(4, 0.75)), 0.75 * (grid - 0.1))
    fine = 0.5 * (1.0 - np.cos(np.pi * np.linspace(0.0, 1.0, 4001)))[1:-1]
    law = nm.objective_climbed(fine, nm.arcsin_weight(fine, 8))
    exact = 7 / 8 * 2 * (np.arcsin(np.sqrt(fine)) - np.arcsin(np.sqrt(fine[0])))
    assert np.max(np.abs(law - exact)) < 1e-3
    for bad in (([0.0, 1.0], [1.0]), ([1.0, 0.0], [1.0, 1.0])):
        with pytest.raises(ValueError):
            nm.objective_climbed(*bad)
