"""klrl_core.tilt, .model and .best_of_n pinned where the other tests left room (issue 15).

Expected values come from code written here (a plain softmax and an independent bisection on
the covariance for the true-reward peak), from the 60-digit decimal references of
test_core_tilt / test_core_best_of_n, from exact fractions, or from invariances the chapter
states (shifting every reward by a constant changes nothing, Section 12.3).
"""

import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest

from klrl_core import best_of_n as bon
from klrl_core import model, tilt
from tests.test_core_best_of_n import ref_best_of_n
from tests.test_core_tilt import LOG_PI0, R, R_TRUE, ref_tilt

# --------------------------------------------------------------------------- the true-reward peak

KAPPA_MAX = 10_000.0
# The chapter's frontier grid, rebuilt here: 240 kappas, sinh-spaced from 0 to 10,000.
GRID = np.sinh(np.linspace(0.0, math.asinh(KAPPA_MAX), 240))


def _pi(log_pi0, r, kappa):
    logits = log_pi0 + kappa * (r - r.max())
    logits = logits - logits.max()
    w = np.exp(logits)
    return w / w.sum()


def _slope(log_pi0, r, r_true, kappa):
    """d/dkappa E_{pi*}[r_true] = Cov_{pi*}(r, r_true), written out."""
    pi = _pi(log_pi0, r, kappa)
    er, et = pi @ r, pi @ r_true
    return pi @ ((r - er) * (r_true - et))


def ref_peak(log_pi0, r, r_true):
    """The kappa of the highest E_{pi*}[r_true]: the best point of the chapter's grid, then a
    bisection on the covariance's sign between the two grid neighbours that bracket it."""
    curve = np.array([_pi(log_pi0, r, k) @ r_true for k in GRID])
    i = int(np.argmax(curve))
    assert 0 < i < GRID.size - 1, "the peak must be inside the grid for this reference"
    if _slope(log_pi0, r, r_true, GRID[i]) > 0:
        lo, hi = GRID[i], GRID[i + 1]
    else:
        lo, hi = GRID[i - 1], GRID[i]
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if _slope(log_pi0, r, r_true, mid) > 0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi), i


BENDS = [
    (start, strength) for start in (0.3, 0.4, 0.5, 0.6) for strength in (2.0, 3.5, 4.0, 4.5, 6.0)
]


@pytest.mark.parametrize("start, strength", BENDS)
def test_true_reward_peak_against_an_independent_bisection(start, strength):
    r_true = R - strength * np.maximum(R - start, 0.0) ** 2
    want, _ = ref_peak(LOG_PI0, R, r_true)
    kappa, t = tilt.true_reward_peak(LOG_PI0, R, r_true)
    assert kappa == pytest.approx(want, rel=1e-8)
    np.testing.assert_allclose(t.pi, _pi(LOG_PI0, R, want), rtol=1e-7, atol=1e-300)


def test_some_bends_put_the_peak_left_of_the_best_grid_point():
    # The bisection must bracket the peak on both sides of the grid's best point: these bends
    # (unlike the chapter's) have the peak just left of it.
    left = 0
    for start, strength in BENDS:
        r_true = R - strength * np.maximum(R - start, 0.0) ** 2
        kappa, i = ref_peak(LOG_PI0, R, r_true)
        left += kappa < GRID[i]
        assert tilt.true_reward_peak(LOG_PI0, R, r_true)[0] == pytest.approx(kappa, rel=1e-8)
    assert left >= 3


def test_chapter_peak_to_many_digits():
    want, _ = ref_peak(LOG_PI0, R, R_TRUE)
    kappa, t = tilt.true_reward_peak(LOG_PI0, R, R_TRUE)
    assert kappa == pytest.approx(want, rel=1e-8)
    # the slope there is zero to rounding, positive a little before and negative a little after
    assert (
        _slope(LOG_PI0, R, R_TRUE, kappa * (1 - 1e-4))
        > 0
        > _slope(LOG_PI0, R, R_TRUE, kappa * (1 + 1e-4))
    )


def test_kappa_grid_by_hand():
    np.testing.assert_allclose(tilt.kappa_grid(), GRID, rtol=1e-13, atol=0)
    g = tilt.kappa_grid(100.0, 5)
    u = [i * math.asinh(100.0) / 4 for i in range(5)]
    np.testing.assert_allclose(g, [math.sinh(x) for x in u], rtol=1e-13, atol=0)
    assert g[0] == 0.0 and g[-1] == pytest.approx(100.0, rel=1e-13)


# --------------------------------------------------------------------------- shift invariance

# Rewards on a grid of 1/32, so that adding an integer shift is exact in floating point and
# any change in the result comes from the code, not from rounding the shifted rewards.
R32 = np.arange(30) / 32.0


@pytest.mark.parametrize("shift", [0.0, 1e3, -5e4, 1e6])
@pytest.mark.parametrize("kappa", [1.0, 20.0, 1e4])
def test_shifting_every_reward_changes_neither_the_policy_nor_the_kl(shift, kappa):
    assert np.array_equal((R32 + shift) - shift, R32)  # the shift is exact
    ref = ref_tilt(LOG_PI0, R32, kappa)  # unshifted, in 60-digit decimals
    t = tilt.tilt(LOG_PI0, R32 + shift, kappa)
    keep = ref["pi"] > 1e-250
    np.testing.assert_allclose(t.pi[keep], ref["pi"][keep], rtol=1e-11)
    assert float(t.kl) == pytest.approx(ref["kl"], rel=1e-10, abs=1e-13)
    # log Z moves by exactly kappa·shift (Z = E_pi0[exp(kappa r)])
    assert float(t.log_z) == pytest.approx(ref["log_z"] + kappa * shift, rel=1e-12, abs=1e-10)


def test_log_z_of_a_two_point_reference_by_hand():
    # Z = 0.5 e^{2 kappa} + 0.5 e^{5 kappa} at kappa = 3
    t = tilt.tilt(np.log([0.5, 0.5]), np.array([2.0, 5.0]), 3.0)
    assert float(t.log_z) == pytest.approx(
        math.log(0.5 * math.exp(6) + 0.5 * math.exp(15)), rel=1e-14
    )


def test_expected_under_by_hand():
    pi = np.array([[0.25, 0.75], [1.0, 0.0]])
    np.testing.assert_allclose(
        tilt.expected_under(pi, np.array([4.0, 8.0])), [7.0, 4.0], rtol=1e-15
    )


def test_kl_never_negative_even_for_equal_policies_off_by_rounding():
    # p and q equal up to the last bit: the sum of p (log p - log q) may round below zero
    rng = np.random.default_rng(7)
    for _ in range(200):
        lq = np.log(rng.dirichlet(np.ones(6)))
        lp = lq + rng.choice([-1, 0, 1], 6) * 1e-16
        assert float(tilt.kl_divergence(lp, lq)) >= 0.0


# --------------------------------------------------------------------------- the model's logsumexp


def test_logsumexp_edge_cases_by_hand():
    assert float(model.logsumexp(np.array([1000.0, 1000.0]))) == pytest.approx(
        1000 + math.log(2), rel=1e-15
    )
    assert float(model.logsumexp(np.array([-1000.0, -1001.0]))) == pytest.approx(
        -1000 + math.log1p(math.exp(-1)), rel=1e-15
    )
    # a wide spread: the small term must not overflow or vanish the result
    assert float(model.logsumexp(np.array([800.0, -800.0]))) == pytest.approx(800.0, rel=1e-15)
    with np.errstate(all="raise"):
        assert float(model.logsumexp(np.array([-np.inf, -np.inf]))) == -np.inf
        out = model.logsumexp(np.array([[-np.inf, -np.inf], [0.0, 0.0]]))
    assert out[0] == -np.inf and out[1] == pytest.approx(math.log(2), rel=1e-15)


def test_reference_is_normalised_and_gaussian_by_hand():
    r = np.array([0.1, 0.3, 0.5])
    lp = model.log_reference(r, centre=0.3, width=0.2)
    w = [math.exp(-((x - 0.3) ** 2) / (2 * 0.04)) for x in r]
    np.testing.assert_allclose(np.exp(lp), [x / sum(w) for x in w], rtol=1e-14)


# --------------------------------------------------------------------------- best-of-n


def test_best_of_n_of_rare_top_responses_exact():
    # pi0 = (1 - 2e-12, 1e-12, 1e-12) on three rewards: pi_n(top) = 1 - (1 - 1e-12)^n, tiny gaps
    eps = Fraction(1, 10**12)
    q = [1 - 2 * eps, eps, eps]
    log_pi0 = np.log(np.array([float(x) for x in q]))
    # the floats actually passed in, as exact fractions, renormalised
    qf = [Fraction(float(x)) for x in q]
    qf = [x / sum(qf) for x in qf]
    for n in (1, 2, 3, 10):
        got = bon.best_of_n(log_pi0, np.array([0.0, 1.0, 2.0]), n).pi
        f = [qf[0], qf[0] + qf[1], Fraction(1)]
        fm = [Fraction(0), qf[0], qf[0] + qf[1]]
        want = [float(a**n - b**n) for a, b in zip(f, fm)]
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)


def test_zero_mass_level_mask_is_redundant():
    # Evidence for the equivalent mutant of best_of_n (mask on isfinite(log_mass)): a level of
    # zero reference mass gets log pi = -inf through its share alone, with or without the mask.
    with np.errstate(divide="ignore"):
        log_pi0 = np.log(np.array([0.5, 0.0, 0.3, 0.0, 0.2]))
    r = np.array([0.0, 0.5, 1.0, 1.5, 2.0])
    index, log_mass, log_f, log_f_minus = bon._prepare(log_pi0, r)
    with np.errstate(divide="ignore", invalid="ignore"):
        for n in (1.0, 2.0, 7.0, 1e7):
            gap = n * (log_f_minus - log_f)
            unmasked = np.where(np.isfinite(log_f), n * log_f + np.log(-np.expm1(gap)), -np.inf)
            share = np.where(np.isfinite(log_mass[index]), log_pi0 - log_mass[index], -np.inf)
            assert not np.any(np.isnan(unmasked))
            np.testing.assert_array_equal(
                unmasked[index] + share, bon.best_of_n(log_pi0, r, n).log_pi
            )
    # and zero-mass levels have F exactly equal to the level below: gap 0, log(1 - 1) = -inf
    zero = ~np.isfinite(log_mass)
    np.testing.assert_array_equal(log_f[zero], log_f_minus[zero])


def test_near_ties_are_separate_levels():
    r = np.array([0.0, 1.0, 1.0 + 1e-12])
    ref = ref_best_of_n(np.log([0.5, 0.25, 0.25]), r, 3)
    got = bon.best_of_n(np.log([0.5, 0.25, 0.25]), r, 3)
    np.testing.assert_allclose(got.pi, ref["pi"], rtol=1e-12)
    assert got.pi[2] > got.pi[1]


def test_matched_n_returns_the_closest_not_the_first_above():
    # the coin pi0 = (1/2, 1/2), r = (0, 1): pi_n(1) = 1 - 2^-n, KL = sum pi_n log(2 pi_n)
    def coin_kl(n):
        a = 1 - 0.5**n
        b = 0.5**n
        return a * math.log(2 * a) + b * math.log(2 * b)

    log_pi0, r = np.log([0.5, 0.5]), np.array([0.0, 1.0])
    for lo_n in (1, 3, 7, 40):
        for frac in (0.1, 0.45, 0.55, 0.9):
            target = coin_kl(lo_n) + frac * (coin_kl(lo_n + 1) - coin_kl(lo_n))
            want = lo_n if frac < 0.5 else lo_n + 1
            assert bon.matched_n(log_pi0, r, target) == want, (lo_n, frac)
    assert bon.matched_n(log_pi0, r, 0.0) == 1


def test_matched_n_far_from_the_ends_by_bisection_here():
    # the chapter model: a plain bisection on the decimal reference's KL, then the closer side
    memo = {}

    def kl(n):
        if n not in memo:
            memo[n] = ref_best_of_n(LOG_PI0, R, n)["kl"]
        return memo[n]

    for target in (0.9, 2.5):
        lo, hi = 1, 10_000_000  # KL(lo) <= target < KL(hi)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if kl(mid) <= target:
                lo = mid
            else:
                hi = mid
        want = lo if abs(kl(lo) - target) <= abs(kl(hi) - target) else hi
        assert bon.matched_n(LOG_PI0, R, target) == want


def test_powers_of_two_by_hand():
    np.testing.assert_array_equal(bon.powers_of_two(3), [1.0, 2.0, 4.0, 8.0])
    assert bon.powers_of_two().size == 18 and bon.powers_of_two()[-1] == 2.0**17


def test_kl_bound_exact_values():
    with localcontext() as ctx:
        ctx.prec = 40
        for n in (1, 2, 3, 10, 1000, 10**7):
            want = float(Decimal(n).ln() - Decimal(n - 1) / Decimal(n))
            assert float(bon.kl_bound(n)) == pytest.approx(want, rel=1e-14, abs=1e-16)
