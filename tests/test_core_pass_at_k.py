"""Tests for klrl_core.pass_at_k (Section 12.7.4; Exercise 28.7 of Chapter 28).

Expected values are the chapters' printed numbers (at the digits printed), hand computations
spelled out in comments, or references written plainly here: exact sums with fractions and
math.comb, 50-digit decimals for exponentials, Monte Carlo with its standard error computed
in the test. Nothing expected comes from the code under test.
"""

import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from klrl_core import pass_at_k as pk
from klrl_core import tilt

SETTINGS = settings(max_examples=60, deadline=None)


# --------------------------------------------------------------------------- references


def ref_pass(p, k) -> Fraction:
    return 1 - (1 - Fraction(p)) ** k


def ref_p_star(p: float, beta: float) -> float:
    """p e^{1/beta} / (p e^{1/beta} + 1 - p) in 50-digit decimals (e^{10000} is fine there)."""
    with localcontext() as ctx:
        ctx.prec = 50
        pd = Decimal(p)
        w = pd * (Decimal(1) / Decimal(beta)).exp()
        return float(w / (w + 1 - pd))


def ref_estimator_mean(p: Fraction, n: int, k: int, which: str) -> Fraction:
    """Exact E over c ~ Binomial(n, p) of the estimator, by enumerating c = 0..n."""
    total = Fraction(0)
    for c in range(n + 1):
        prob = math.comb(n, c) * p**c * (1 - p) ** (n - c)
        if which == "unbiased":
            est = 1 - Fraction(math.comb(n - c, k), math.comb(n, k))
        else:
            est = 1 - (1 - Fraction(c, n)) ** k
        total += prob * est
    return total


def ref_crossover(before, after, k_max):
    """First k with mean pass@k of `before` above `after`, exact in fractions."""
    for k in range(1, k_max + 1):
        b = sum(ref_pass(x, k) for x in before) / len(before)
        a = sum(ref_pass(x, k) for x in after) / len(after)
        if b > a:
            return k
    return None


# --------------------------------------------------------------------------- printed numbers


def test_p_star_printed():
    # Issue 12 / Section 12.7.4: p = 0.05, beta = 0.5 gives p* = 0.280 (0.05 e^2 / (0.05 e^2 + 0.95)).
    assert round(pk.optimal_solve_rate(0.05, 0.5), 3) == 0.280
    assert pk.optimal_solve_rate(0.05, 0.5) == pytest.approx(ref_p_star(0.05, 0.5), rel=1e-14)


def test_exercise_28_7b_pass_at_1_and_32():
    before, after = [0.3, 0.05], [0.9, 0.0]
    assert round(pk.mixture_pass_at_k(before, 1), 3) == 0.175
    assert round(pk.mixture_pass_at_k(after, 1), 3) == 0.450
    assert round(pk.mixture_pass_at_k(before, 32), 3) == 0.903
    assert round(pk.mixture_pass_at_k(after, 32), 3) == 0.500
    # (1 - 0.7^32 + 1 - 0.95^32)/2 exactly:
    exact = float((ref_pass(Fraction(3, 10), 32) + ref_pass(Fraction(1, 20), 32)) / 2)
    assert pk.mixture_pass_at_k(before, 32) == pytest.approx(exact, rel=1e-14)


def test_exercise_28_7b_crossover():
    # Before beats after when 0.7^k + 0.95^k - 0.1^k < 1: k=4 gives 1.0546, k=5 gives 0.9419.
    assert pk.crossover_k([0.3, 0.05], [0.9, 0.0]) == 5
    assert pk.crossover_k([0.3, 0.05], [0.9, 0.0], k_max=5) == 5
    assert pk.crossover_k([0.3, 0.05], [0.9, 0.0], k_max=4) is None
    assert ref_crossover([Fraction(3, 10), Fraction(1, 20)], [Fraction(9, 10), 0], 10) == 5


def test_estimators_printed():
    # Exercise 28.7(a) with p = 0.05, k = 10, n = 20: 0.401 (= pass@10) and 0.336.
    u = pk.unbiased_estimator_mean(0.05, 20, 10)
    g = pk.plugin_estimator_mean(0.05, 20, 10)
    assert round(u, 3) == 0.401 and round(g, 3) == 0.336
    assert round(1 - 0.95**10, 3) == 0.401
    p = Fraction(1, 20)
    assert u == pytest.approx(float(ref_estimator_mean(p, 20, 10, "unbiased")), rel=1e-13)
    assert g == pytest.approx(float(ref_estimator_mean(p, 20, 10, "plugin")), rel=1e-13)


# --------------------------------------------------------------------------- pass@k and p*


@pytest.mark.parametrize(
    "p,k",
    [
        (0.05, 1),
        (0.05, 10),
        (0.3, 32),
        (1e-12, 1),
        (1e-12, 10**7),
        (0.5, 1000),
        (1.0, 3),
        (0.0, 5),
        (0.999, 2),
    ],
)
def test_pass_at_k_exact(p, k):
    expected = float(ref_pass(p, k)) if k <= 1000 else -math.expm1(k * math.log1p(-p))
    assert pk.pass_at_k(p, k) == pytest.approx(expected, rel=1e-13, abs=0)


def test_pass_at_k_tiny_p_huge_k():
    # p = 1e-12, k = 1e7: 1 - (1 - p)^k = k p - (k p)^2/2 + ... = 1e-5 - 5e-11 + ...
    assert pk.pass_at_k(1e-12, 10**7) == pytest.approx(1e-5 - 5e-11, rel=1e-9)
    assert pk.pass_at_k(1e-12, 1) == pytest.approx(1e-12, rel=1e-15)
    assert pk.pass_at_k(0.3, 0) == 0.0 and pk.pass_at_k(1.0, 0) == 0.0


def test_pass_at_k_vectorised():
    k = np.arange(1, 6)
    out = pk.pass_at_k(0.2, k)
    assert out.shape == (5,)
    np.testing.assert_allclose(out, [1 - 0.8**j for j in range(1, 6)], rtol=1e-14)


@pytest.mark.parametrize(
    "p,beta",
    [(0.05, 0.5), (0.1, 1.0), (0.1, 0.25), (1e-12, 1e-4), (1e-12, 0.1), (0.5, 2.0), (0.999, 0.01)],
)
def test_p_star_matches_decimal(p, beta):
    assert pk.optimal_solve_rate(p, beta) == pytest.approx(ref_p_star(p, beta), rel=1e-13)


def test_p_star_edges():
    assert pk.optimal_solve_rate(0.0, 0.1) == 0.0
    assert pk.optimal_solve_rate(1.0, 0.1) == 1.0
    assert pk.optimal_solve_rate(0.3, np.inf) == pytest.approx(0.3, rel=1e-15)
    # Section 12.3.1's example: 0.1 at beta = 1 -> about 0.23; at beta = 0.25 -> about 0.86.
    assert round(pk.optimal_solve_rate(0.1, 1.0), 2) == 0.23
    assert round(pk.optimal_solve_rate(0.1, 0.25), 2) == 0.86


def test_p_star_is_the_two_response_tilt_and_ignores_a_reward_shift():
    # The optimum of Eq. (12.4) over {correct, incorrect} with rewards (1 + s, s).
    for s in (0.0, -3.0, 7.5):
        t = tilt.tilt(np.log([0.05, 0.95]), np.array([1.0 + s, s]), 1 / 0.5)
        assert t.pi[0] == pytest.approx(pk.optimal_solve_rate(0.05, 0.5), rel=1e-12)


def test_mixture_shapes_and_loop():
    rates = np.array([[0.3, 0.05], [0.9, 0.0]])
    k = np.array([[1.0], [32.0]])  # broadcasts against the two sets
    out = pk.mixture_pass_at_k(rates, k)
    assert out.shape == (2, 2)
    for i, kk in enumerate((1, 32)):
        for j, row in enumerate(rates):
            assert out[i, j] == pytest.approx(sum(1 - (1 - x) ** kk for x in row) / 2, rel=1e-13)
    grid = pk.mixture_pass_at_k([0.3, 0.05], np.arange(1, 4))
    np.testing.assert_allclose(grid, [(2 - 0.7**j - 0.95**j) / 2 for j in (1, 2, 3)], rtol=1e-14)


def test_crossover_never_with_the_optimum():
    before = [0.3, 0.05, 1e-6, 0.0, 1.0]
    for beta in (1e-4, 0.05, 0.5, 10.0):
        assert pk.crossover_k(before, pk.optimal_solve_rate(before, beta), k_max=10_000) is None
    assert pk.crossover_k(before, before) is None  # equal sets never exceed each other


def test_crossover_late_and_large_kmax():
    # 0.001 solved before, 0.002 after on one problem but the other drops from 0.5 to 0.4:
    # the before-set needs a k where the rare problem's coverage matters.
    before, after = [0.5, 0.001], [0.6, 0.0]
    expected = ref_crossover([Fraction(1, 2), Fraction(1, 1000)], [Fraction(3, 5), 0], 50)
    assert pk.crossover_k(before, after) == expected
    # A crossover far out: 1e-6 lost, 0.5 -> 0.500001 gained. Found beyond the first block.
    k = pk.crossover_k([0.5, 1e-6], [0.5 + 1e-6, 0.0], k_max=1_000_000)
    assert k is not None and k > 1

    def f(kk, b):
        return (-math.expm1(kk * math.log1p(-b[0])) - math.expm1(kk * math.log1p(-b[1]))) / 2

    assert f(k, [0.5, 1e-6]) > f(k, [0.5 + 1e-6, 0.0]) >= f(k - 1, [0.5, 1e-6])


@SETTINGS
@given(
    st.lists(st.floats(0, 1), min_size=1, max_size=4),
    st.lists(st.floats(0, 1), min_size=1, max_size=4),
)
def test_crossover_matches_brute_force(before, after):
    def mean_pass(rates, k):
        return math.fsum(-math.expm1(k * math.log1p(-x)) if x < 1 else 1.0 for x in rates) / len(
            rates
        )

    got = pk.crossover_k(before, after, k_max=64)
    if got is None:
        assert all(mean_pass(before, k) <= mean_pass(after, k) + 1e-12 for k in range(1, 65))
    else:
        assert mean_pass(before, got) > mean_pass(after, got) - 1e-12
        assert all(mean_pass(before, k) <= mean_pass(after, k) + 1e-12 for k in range(1, got))


# --------------------------------------------------------------------------- estimators


@pytest.mark.parametrize("n,k", [(1, 1), (5, 5), (20, 10), (30, 1), (12, 7)])
@pytest.mark.parametrize(
    "p", [Fraction(1, 20), Fraction(1, 2), Fraction(9, 10), Fraction(0), Fraction(1)]
)
def test_estimator_means_match_exact_enumeration(n, k, p):
    u = ref_estimator_mean(p, n, k, "unbiased")
    g = ref_estimator_mean(p, n, k, "plugin")
    assert pk.unbiased_estimator_mean(float(p), n, k) == pytest.approx(
        float(u), rel=1e-12, abs=1e-15
    )
    assert pk.plugin_estimator_mean(float(p), n, k) == pytest.approx(float(g), rel=1e-12, abs=1e-15)
    assert u == ref_pass(p, k)  # the identity itself, in exact arithmetic


def test_estimates_per_c_match_math_comb():
    n = 30
    c = np.arange(n + 1)
    for k in (1, 4, 30):
        want = [1 - math.comb(n - ci, k) / math.comb(n, k) for ci in range(n + 1)]
        np.testing.assert_allclose(pk.unbiased_estimate(c, n, k), want, rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(
            pk.plugin_estimate(c, n, k),
            [1 - (1 - ci / n) ** k for ci in range(n + 1)],
            rtol=1e-13,
            atol=1e-15,
        )
    # The product path (k <= 64) and the Stirling path (k > 64) against exact integers, n large.
    n = 5000
    for k in (3, 64, 65, 300):
        for ci in (0, 1, 7, 2500, 4000):
            want = float(1 - Fraction(math.comb(n - ci, k), math.comb(n, k)))
            assert pk.unbiased_estimate(ci, n, k) == pytest.approx(want, rel=1e-11, abs=1e-300)


def test_plugin_allows_k_above_n():
    p = Fraction(1, 10)
    assert pk.plugin_estimator_mean(0.1, 5, 12) == pytest.approx(
        float(ref_estimator_mean(p, 5, 12, "plugin")), rel=1e-12
    )


def test_estimator_means_monte_carlo():
    # c ~ Binomial(20, 0.05) by sampling; each estimate by math.comb; 4 standard errors.
    rng = np.random.default_rng(12)
    n, k, p, draws = 20, 10, 0.05, 200_000
    c = rng.binomial(n, p, size=draws)
    table_u = np.array([1 - math.comb(n - ci, k) / math.comb(n, k) for ci in range(n + 1)])
    table_g = np.array([1 - (1 - ci / n) ** k for ci in range(n + 1)])
    for table, fn in ((table_u, pk.unbiased_estimator_mean), (table_g, pk.plugin_estimator_mean)):
        x = table[c]
        se = x.std(ddof=1) / math.sqrt(draws)
        assert abs(x.mean() - fn(p, n, k)) < 4 * se
    # The plug-in's shortfall (0.065) is far beyond the noise: it really is biased low.
    assert table_g[c].mean() + 20 * table_g[c].std() / math.sqrt(draws) < 1 - 0.95**10


def test_estimators_large_n_and_tiny_p():
    ks = np.array([1, 5, 64, 65, 1000])
    np.testing.assert_allclose(
        pk.unbiased_estimator_mean(0.3, 10**6, ks),
        [-math.expm1(k * math.log1p(-0.3)) for k in ks],
        rtol=1e-10,
    )
    np.testing.assert_allclose(
        pk.unbiased_estimator_mean(0.5, 10**7, np.array([1, 70])),
        [0.5, -math.expm1(70 * math.log(0.5))],
        rtol=1e-9,
    )
    for k in (10, 1000):
        want = -math.expm1(k * math.log1p(-1e-12))
        assert pk.unbiased_estimator_mean(1e-12, 10**7, k) == pytest.approx(want, rel=1e-9)
    # Plug-in at tiny p: E ~ n p (1 - (1 - 1/n)^k) from c = 1 alone.
    n, k, p = 1000, 50, 1e-12
    want = n * p * (1 - p) ** (n - 1) * (1 - (1 - 1 / n) ** k)
    assert pk.plugin_estimator_mean(p, n, k) == pytest.approx(want, rel=1e-8)


def test_log_factorial_against_lgamma_and_exact_sums():
    m = np.array([0, 1, 2, 10, 1023, 1024, 1025, 5000, 123456, 10**7])
    np.testing.assert_allclose(pk.log_factorial(m), [math.lgamma(x + 1.0) for x in m], rtol=1e-14)
    for a, b in [
        (10**7, 10**7 - 3),
        (5000, 1100),
        (2000, 10),
        (1030, 1024),
        (10**6, 10**6 - 200),
        (1000, 3),
        (1023, 0),
    ]:
        want = math.fsum(math.log(j) for j in range(b + 1, a + 1))
        assert pk.log_factorial_ratio(a, b) == pytest.approx(want, rel=1e-13)


def test_estimators_vectorised_over_p_and_k():
    p = np.array([0.05, 0.2, 0.7])
    k = np.array([[1], [10]])
    out = pk.unbiased_estimator_mean(p, 20, k)
    assert out.shape == (2, 3)
    np.testing.assert_allclose(out, 1 - (1 - p) ** k, rtol=1e-12)


# --------------------------------------------------------------------------- properties


@SETTINGS
@given(st.floats(0, 1), st.floats(1e-4, 100), st.integers(1, 10**6))
def test_optimum_pass_at_k_never_below_reference(p, beta, k):
    p_star = pk.optimal_solve_rate(p, beta)
    assert p_star >= p - 1e-15 * p
    assert pk.pass_at_k(p_star, k) >= pk.pass_at_k(p, k) * (1 - 1e-14)


@SETTINGS
@given(st.floats(0, 1), st.integers(1, 200), st.data())
def test_unbiased_mean_equals_pass_at_k_and_plugin_never_exceeds(p, n, data):
    k = data.draw(st.integers(1, n))
    exact = -math.expm1(k * math.log1p(-p)) if p < 1 else 1.0
    u = pk.unbiased_estimator_mean(p, n, k)
    g = pk.plugin_estimator_mean(p, n, k)
    assert u == pytest.approx(exact, rel=1e-10, abs=1e-14)
    assert g <= exact * (1 + 1e-10) + 1e-14


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "call",
    [
        lambda: pk.pass_at_k(1.5, 3),
        lambda: pk.pass_at_k(-0.1, 3),
        lambda: pk.pass_at_k(np.nan, 3),
        lambda: pk.pass_at_k(0.5, -1),
        lambda: pk.optimal_solve_rate(0.5, 0.0),
        lambda: pk.optimal_solve_rate(0.5, -1.0),
        lambda: pk.mixture_pass_at_k([], 3),
        lambda: pk.crossover_k([0.1], [0.2], k_max=0),
        lambda: pk.crossover_k([[0.1]], [0.2]),
        lambda: pk.unbiased_estimator_mean(0.1, 5, 6),
        lambda: pk.unbiased_estimator_mean(0.1, 0, 1),
        lambda: pk.unbiased_estimator_mean(0.1, 2.5, 1),
        lambda: pk.unbiased_estimator_mean(0.1, 10**8, 1),
        lambda: pk.plugin_estimator_mean(0.1, 10, 2.5),
        lambda: pk.unbiased_estimate(11, 10, 2),
        lambda: pk.plugin_estimate(-1, 10, 2),
    ],
)
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_k_above_n_message_names_the_fix():
    with pytest.raises(ValueError, match="k <= n"):
        pk.unbiased_estimator_mean(0.05, 20, 21)


# ----- issue 23: accuracy at large n, against exact rational arithmetic
def _exact_unbiased(c: int, n: int, k: int) -> Fraction:
    """1 - C(n-c, k)/C(n, k) as a fraction, by the shorter of the two products
    prod_{i<k} (n-c-i)/(n-i) = prod_{j<c} (n-k-j)/(n-j)."""
    if n - c < k:
        return Fraction(1)
    ratio = Fraction(1)
    for j in range(min(c, k)):
        ratio *= Fraction(n - k - j, n - j) if c <= k else Fraction(n - c - j, n - j)
    return 1 - ratio


@pytest.mark.parametrize(
    "c, n, k",
    [
        (2, 10**7, 65),
        (1, 10**7, 1000),
        (3, 10**7, 10**6),
        (65, 10**7, 65),
        (100, 10**7, 70),
        (2, 10**6, 5000),
        (5, 2000, 1500),
        (1000, 10**7, 64),
        (1, 10**5, 100),
    ],
)
def test_unbiased_estimate_matches_exact_rationals_at_large_n(c, n, k):
    got = float(pk.unbiased_estimate(c, n, k))
    want = float(_exact_unbiased(c, n, k))
    assert got == pytest.approx(want, rel=2e-12, abs=1e-300), (got, want)


@pytest.mark.parametrize("c, n, k", [(1025, 10**7, 1025), (2000, 10**7, 3000), (1500, 10**6, 1200)])
def test_unbiased_estimate_beyond_the_product_form(c, n, k):
    """Both c and k above 1,024 factors: the log-factorial difference, relative error well
    under 1e-7 of the estimate here."""
    got = float(pk.unbiased_estimate(c, n, k))
    want = float(_exact_unbiased(c, n, k))
    assert got == pytest.approx(want, rel=1e-7), (got, want)


def test_largest_optimum_gain_by_hand():
    # p = 1/2, e^{1/beta} = 3: p* = 3/4, gap 0.5^k - 0.25^k = 0.25, 0.1875, ...: largest at 1
    k, g = pk.largest_optimum_gain(0.5, 1 / math.log(3), 64)
    assert k == 1 and g == pytest.approx(0.25, abs=1e-12)
    # p = 0.1, e^{1/beta} = 9: p* = 1/2, gap 0.9^k - 0.5^k = 0.4, 0.56, 0.604, 0.5936: at 3
    k, g = pk.largest_optimum_gain(0.1, 1 / math.log(9), 1024)
    assert k == 3 and g == pytest.approx(0.604, abs=1e-12)
    # a cap below the peak: the gap still rising at k_max
    assert pk.largest_optimum_gain(0.1, 1 / math.log(9), 2)[0] == 2
    with pytest.raises(ValueError):
        pk.largest_optimum_gain(0.1, 1.0, 0)


@settings(max_examples=40, deadline=None)
@given(st.floats(0.001, 0.999), st.floats(0.05, 5.0), st.integers(1, 300))
def test_largest_optimum_gain_matches_a_plain_loop(p, beta, k_max):
    w = p * math.exp(1 / beta)
    q = w / (w + 1 - p)
    gaps = [(1 - p) ** k - (1 - q) ** k for k in range(1, k_max + 1)]
    best = max(gaps)
    k, g = pk.largest_optimum_gain(p, beta, k_max)
    assert g == pytest.approx(best, rel=1e-9, abs=1e-14)
    assert gaps[k - 1] >= best - 1e-12


def test_optimum_gain_below_by_hand():
    # p = 1/2, e^{1/beta} = 3: p* = 3/4, gap 0.5^k - 0.25^k = 0.25, 0.1875, 0.109375,
    # 0.05859375, 0.0302734375, ...: below 0.1 from k = 4 on, never at the start.
    head, tail, count, between = pk.optimum_gain_below(0.5, 1 / math.log(3), 0.1, 10)
    assert (head, tail, count, between) == (0, 7, 7, True)
    # p = 0.1, e^{1/beta} = 9: p* = 1/2, gap 0.9^k - 0.5^k = 0.4, 0.56, 0.604, 0.5936, ...:
    # below 0.5 at k = 1 only, in the first 3 k.
    assert pk.optimum_gain_below(0.1, 1 / math.log(9), 0.5, 3) == (1, 0, 1, True)
    # A threshold above the largest gap (0.604): below at every k.
    assert pk.optimum_gain_below(0.1, 1 / math.log(9), 0.7, 5) == (5, 5, 5, True)
    # A threshold below every gap: below nowhere.
    assert pk.optimum_gain_below(0.1, 1 / math.log(9), 0.1, 5) == (0, 0, 0, True)
    with pytest.raises(ValueError):
        pk.optimum_gain_below(0.1, 1.0, 0.1, 0)


@settings(max_examples=40, deadline=None)
@given(st.floats(0.001, 0.999), st.floats(0.05, 5.0), st.floats(1e-4, 0.3), st.integers(1, 200))
def test_optimum_gain_below_matches_a_plain_loop(p, beta, threshold, k_max):
    w = p * math.exp(1 / beta)
    q = w / (w + 1 - p)
    below = [(1 - p) ** k - (1 - q) ** k < threshold for k in range(1, k_max + 1)]
    head, tail, count, between = pk.optimum_gain_below(p, beta, threshold, k_max)
    # (the plain powers and the library's expm1 form may disagree right at the threshold)
    near = [abs((1 - p) ** k - (1 - q) ** k - threshold) < 1e-12 for k in range(1, k_max + 1)]
    assume(not any(near))
    assert count == sum(below)
    if all(below):
        assert (head, tail, between) == (k_max, k_max, True)
        return
    assert all(below[:head]) and not below[head]
    assert all(below[k_max - tail :]) and not below[k_max - tail - 1]
    assert between == (not any(below[head : k_max - tail]))


def test_base_ahead_from_by_hand():
    # Exercise 28.7(b): A 0.3 -> 0.9, B 0.05 -> 0. The trained set's pass@k tends to 1/2, the
    # base's to 1: once the base leads it stays ahead.
    cross = pk.crossover_k([0.3, 0.05], [0.9, 0.0])
    assert cross is not None
    assert pk.base_ahead_from([0.3, 0.05], [0.9, 0.0], cross)
    assert not pk.base_ahead_from([0.3, 0.05], [0.9, 0.0], 1)  # at k = 1, 0.175 < 0.45
    # One problem, 0.5 before and 0.4 after: the base ahead at every k, k_max included.
    assert pk.base_ahead_from([0.5], [0.4], 1, 3)
    # Equal at every k counts as ahead (at least).
    assert pk.base_ahead_from([0.2, 0.7], [0.7, 0.2], 1, 50)
    # Swapped, the base is behind at every k (0.2 < 0.5, 0.36 < 0.75, 0.488 < 0.875).
    assert not pk.base_ahead_from([0.2], [0.5], 1, 3)
    # Ahead from k = 2 on: two problems 0.5, 0.5 against 1, 0.2: pass@k (2 - 2(0.5)^k) / 2
    # against (2 - 0.8^k) / 2, i.e. base ahead while 0.8^k > 2(0.5)^k: from k = 2 (0.64 > 0.5)
    # to every k after; at k = 1, 0.5 < 0.6.
    assert pk.base_ahead_from([0.5, 0.5], [1.0, 0.2], 2, 30)
    assert not pk.base_ahead_from([0.5, 0.5], [1.0, 0.2], 1, 30)
    # The other way round the base leads at k = 1 only (0.6 > 0.5; 0.68 < 0.75): k_max counts.
    assert pk.base_ahead_from([1.0, 0.2], [0.5, 0.5], 1, 1)
    assert not pk.base_ahead_from([1.0, 0.2], [0.5, 0.5], 1, 2)
    for bad in (0, 5, 2.5, True):
        with pytest.raises(ValueError):
            pk.base_ahead_from([0.5], [0.4], bad, 4)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(0, 1), min_size=1, max_size=4),
    st.lists(st.floats(0, 1), min_size=1, max_size=4),
    st.integers(1, 64),
)
def test_base_ahead_from_matches_a_plain_loop(before, after, k):
    def mean_pass(rates, kk):
        return math.fsum(1 - (1 - x) ** kk for x in rates) / len(rates)

    diffs = [mean_pass(before, kk) - mean_pass(after, kk) for kk in range(k, 65)]
    assume(all(abs(d) > 1e-12 for d in diffs))
    assert pk.base_ahead_from(before, after, k, 64) == all(d > 0 for d in diffs)
