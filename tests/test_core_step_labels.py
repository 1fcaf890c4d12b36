"""klrl_core.step_labels against the SPEC's defaults, Exercise 28.8(b), direct binomial sums in
exact arithmetic (math.comb and fractions) for both labels and their quantiles, seeded draws,
and Hypothesis properties over q, g, N, T and the wrong step."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from klrl_core import step_labels as sl

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def exact_pmf(n: int, v: float) -> list[Fraction]:
    f = Fraction(v)
    return [math.comb(n, k) * f**k * (1 - f) ** (n - k) for k in range(n + 1)]


def exact_quantile(n: int, v: float, p: float) -> int:
    """The least k with P(K <= k) >= p, in exact integers: v = a/d and p = c/e as the floats
    are, so P(K <= k) >= p is sum_j C(n, j) a^j (d - a)^(n - j) e >= c d^n (no Fraction
    arithmetic, whose gcds made n = 1024 take seconds)."""
    fv, fp = Fraction(v), Fraction(p)
    a, d = fv.numerator, fv.denominator
    target, total = fp.numerator * d**n, 0
    for k in range(n + 1):
        total += math.comb(n, k) * a**k * (d - a) ** (n - k) * fp.denominator
        if total >= target:
            return k
    return n


def test_defaults_printed_in_the_issue():
    v = sl.step_values(0.6, 0.05, 6)
    lab = sl.labels(v, 8)
    assert np.round(lab.soft_mean, 3).tolist() == [0.078, 0.130, 0.216, 0.360, 0.600, 1.000]
    assert np.round(lab.hard_mean, 3).tolist() == [0.477, 0.671, 0.857, 0.972, 0.999, 1.000]
    wrong = sl.labels(sl.step_values(0.6, 0.05, 6, error=3), 8)
    assert np.round(wrong.soft_mean, 3).tolist() == [0.078, 0.130, 0.05, 0.05, 0.05, 0.05]
    assert np.round(wrong.hard_mean[2:], 3).tolist() == [0.337] * 4
    # by hand: v = q^(T - t); hard = 1 - (1 - v)^8
    assert v.tolist() == pytest.approx([0.6**5, 0.6**4, 0.6**3, 0.6**2, 0.6, 1.0], rel=1e-15)
    assert wrong.hard_mean[2] == pytest.approx(1 - 0.95**8, rel=1e-14)


def test_exercise_28_8b():
    right = sl.labels(sl.step_values(0.3, 0.05, 6), 8)
    wrong = sl.labels(sl.step_values(0.3, 0.05, 6, error=1), 8)
    assert round(float(right.soft_mean[0]), 4) == 0.0024
    assert round(float(right.hard_mean[0]), 3) == 0.019
    assert round(float(wrong.soft_mean[0]), 2) == 0.05
    assert round(float(wrong.hard_mean[0]), 3) == 0.337
    assert wrong.soft_mean[0] > right.soft_mean[0] and wrong.hard_mean[0] > right.hard_mean[0]
    # the crossing: below q = g^(1/5) a correct first step is outranked by a wrong one
    q_star = sl.crossing_skill(0.05, 6, 1)
    assert q_star == pytest.approx(0.05**0.2)
    for q, outranked in [(q_star - 1e-6, True), (q_star + 1e-6, False)]:
        a = sl.step_values(q, 0.05, 6)[0]
        assert bool(a < 0.05) is outranked
    assert sl.crossing_skill(0.05, 6, 6) == 0.0


@pytest.mark.parametrize("n", [1, 2, 8, 37, 128])
@pytest.mark.parametrize("v", [0.0, 0.0024, 0.05, 0.0778, 0.3, 0.5, 0.6, 0.97, 1.0])
def test_pmf_hard_mean_and_quantiles_against_exact_sums(n, v):
    exact = exact_pmf(n, v)
    assert sl.binomial_pmf(n, v) == pytest.approx([float(m) for m in exact], rel=1e-11, abs=1e-300)
    assert float(sl.hard_mean(v, n)) == pytest.approx(float(1 - exact[0]), rel=1e-13, abs=0)
    # 0.25 and 0.75 are exact ties at v = 0.5, n = 2; 1 - 2**-53 needs the upper tail's digits
    for p in (0.05, 0.25, 0.5, 0.75, 0.95, 1 - 2**-53, 1.0):
        assert int(sl.binomial_quantile(n, v, p)) == exact_quantile(n, v, p)
    lab = sl.labels(np.array([v]), n)
    assert lab.soft_lo[0] == exact_quantile(n, v, 0.05) / n
    assert lab.soft_hi[0] == exact_quantile(n, v, 0.95) / n
    # the hard label is Bernoulli(1 - P(K = 0)): quantile 0 while P(K = 0) >= p
    assert lab.hard_lo[0] == (0.0 if exact[0] >= Fraction(0.05) else 1.0)
    assert lab.hard_hi[0] == (0.0 if exact[0] >= Fraction(0.95) else 1.0)


@pytest.mark.parametrize("v", [0.0024, 0.05, 0.36])
def test_quantiles_at_n_1024_against_exact_sums(v):
    for p in (0.05, 0.95):
        assert int(sl.binomial_quantile(1024, v, p)) == exact_quantile(1024, v, p)


@pytest.mark.parametrize("q", [0.0, 1.0])
@pytest.mark.parametrize("g", [0.0, 1.0])
@pytest.mark.parametrize("n", [1, 1024])
def test_ends_of_q_and_g_are_exact(q, g, n):
    for error in (None, 1, 3, 6):
        v = sl.step_values(q, g, 6, error)
        lab = sl.labels(v, n)
        for arr in lab:
            assert np.all(np.isfinite(arr)) and set(np.unique(arr)) <= {0.0, 1.0}
        expect = [1.0 if (q == 1 or t == 6) else 0.0 for t in range(1, 7)]
        if error is not None:
            expect[error - 1 :] = [g] * (6 - error + 1)
        assert v.tolist() == expect
        assert lab.hard_mean.tolist() == expect and lab.soft_lo.tolist() == expect
        assert sl.draw_counts(v, n, 3).tolist() == [n * e for e in expect]


def test_draws_are_seeded_binomial():
    v = sl.step_values(0.6, 0.05, 6, 3)
    a, b = sl.draw_counts(v, 8, 11), sl.draw_counts(v, 8, 11)
    assert a.tolist() == b.tolist() and a.shape == (6,)
    assert np.all((a >= 0) & (a <= 8))
    many = sl.draw_counts(np.tile(v, (20_000, 1)), 8, 0)
    # means within 5 standard errors of N v
    se = np.sqrt(8 * v * (1 - v) / 20_000)
    assert np.all(np.abs(many.mean(axis=0) - 8 * v) <= 5 * se + 1e-12)
    assert np.mean(many >= 1, axis=0) == pytest.approx(sl.hard_mean(v, 8), abs=0.02)


@SETTINGS
@given(
    q=st.floats(0, 1),
    g=st.floats(0, 1),
    n=st.integers(1, 1024),
    T=st.integers(1, 20),
    data=st.data(),
)
def test_properties(q, g, n, T, data):
    error = data.draw(st.one_of(st.none(), st.integers(1, T)))
    v = sl.step_values(q, g, T, error)
    assert v.shape == (T,) and v[-1] == (1.0 if error is None else g)
    correct = sl.step_values(q, g, T)
    assert np.all(np.diff(correct) >= 0)  # a correct prefix is worth more later on
    lab = sl.labels(v, n)
    for arr in lab:
        assert np.all(np.isfinite(arr))
    # the hard label's mean is at least the soft one's; the 5%-95% spread holds at least 90%
    # of the draws (it need not hold the mean: Bernoulli(0.02) has both quantiles at 0)
    assert np.all(lab.hard_mean >= lab.soft_mean - 1e-15)
    assert np.all(lab.soft_lo <= lab.soft_hi) and np.all(lab.hard_lo <= lab.hard_hi)
    k = np.arange(n + 1) / n
    pmf_all = sl.binomial_pmf(n, v)
    inside = np.sum(
        np.where((k >= lab.soft_lo[:, None]) & (k <= lab.soft_hi[:, None]), pmf_all, 0.0), axis=1
    )
    assert np.all(inside >= 0.9 - 1e-9)
    below = np.sum(np.where(k < lab.soft_lo[:, None], pmf_all, 0.0), axis=1)
    assert np.all(below < 0.05 + 1e-9)
    # more completions never lower the hard label
    if n < 1024:
        assert np.all(sl.hard_mean(v, n + 1) >= lab.hard_mean - 1e-15)
    pmf = sl.binomial_pmf(n, v)
    assert pmf.sum(axis=-1) == pytest.approx(np.ones(T), rel=1e-9)
    assert pmf @ np.arange(n + 1) / n == pytest.approx(v, abs=1e-9)


@pytest.mark.parametrize(
    "call",
    [
        lambda: sl.step_values(-0.1, 0.05),
        lambda: sl.step_values(0.6, 1.5),
        lambda: sl.step_values(float("nan"), 0.05),
        lambda: sl.step_values(0.6, 0.05, 6, 7),
        lambda: sl.step_values(0.6, 0.05, 6, 0),
        lambda: sl.step_values(0.6, 0.05, 0),
        lambda: sl.step_values(0.6, 0.05, 21),
        lambda: sl.hard_mean(0.5, 0),
        lambda: sl.hard_mean(0.5, 1025),
        lambda: sl.hard_mean(0.5, 2.5),
        lambda: sl.binomial_pmf(8, 1.2),
        lambda: sl.binomial_quantile(8, 0.5, 1.5),
        lambda: sl.draw_counts(0.5, 8, -1),
        lambda: sl.hard_mean(0.5, True),
    ],
)
def test_bad_input_is_refused(call):
    with pytest.raises(ValueError):
        call()


def test_largest_allowed_sizes():
    assert sl.step_values(0.6, 0.05, 20).shape == (20,)
    assert float(sl.hard_mean(0.001, 1024)) == pytest.approx(1 - 0.999**1024, rel=1e-12)


@pytest.mark.parametrize("v", [0.0, 0.0024, 0.05, 0.36, 0.6, 1.0])
def test_labels_over_n_against_exact_sums(v):
    ns = [1, 2, 3, 5, 8, 13, 64, 200, 1024]
    over = sl.labels_over_n(v, ns)
    assert over.n.tolist() == ns
    for i, m in enumerate(ns):
        if m <= 200:
            assert over.soft_lo[i] == exact_quantile(m, v, 0.05) / m
            assert over.soft_hi[i] == exact_quantile(m, v, 0.95) / m
        assert over.soft_lo[i] == int(sl.binomial_quantile(m, v, 0.05)) / m
        assert over.soft_hi[i] == int(sl.binomial_quantile(m, v, 0.95)) / m
        assert over.hard_mean[i] == pytest.approx(
            float(1 - (1 - Fraction(v)) ** m), rel=1e-12, abs=0
        )  # 1 - P(K = 0)
    top = sl.labels_over_n(v, [1, 8], spread=(0.0, 1.0))
    assert top.soft_hi.tolist() == ([1.0, 1.0] if v > 0 else [0.0, 0.0])
    assert top.soft_lo.tolist() == [0.0, 0.0]
    with pytest.raises(ValueError):
        sl.labels_over_n(v, [0, 8])


def test_separation_by_hand():
    """Correct values [0.36, 0.6, 1] against a solution wrong from step 2 with g = 0.05:
    its step 1 is correct (0.36 is counted with the correct ones), steps 2 and 3 are 0.05."""
    right = np.array([0.36, 0.6, 1.0])
    wrong = np.array([0.36, 0.05, 0.05])
    assert sl.separation(right, wrong, 2) == (True, 0.36, 0.05)
    # wrong from step 1: its first step's guess rate 0.7 beats the correct step's 0.36
    assert sl.separation(right, np.array([0.7, 0.7, 0.7]), 1) == (False, 0.36, 0.7)
    # a tie is not a separation
    assert sl.separation(np.array([0.5, 1.0]), np.array([0.5, 0.5]), 2) == (False, 0.5, 0.5)
    with pytest.raises(ValueError):
        sl.separation(right, wrong, 4)
