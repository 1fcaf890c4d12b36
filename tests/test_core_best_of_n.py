"""Tests for klrl_core.best_of_n (Figure 12.3, Section 12.5, Exercise 12.2).

Expected values are the chapter's printed numbers, or come from two references written
here: ``enumerate_best_of_n`` (every n-tuple of draws, exact fractions) and ``ref_best_of_n``
(pi_n(y) = F(y)^n - F^-(y)^n with levels found by hand, in 60-digit decimals).
Nothing expected is computed with the code under test.
"""

import itertools
import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest

from klrl_core import best_of_n as bon
from klrl_core import tilt
from tests.test_core_tilt import LOG_PI0, PI0, R, fmt

PREC = 60


# --------------------------------------------------------------------------- references


def enumerate_best_of_n(weights, r, n):
    """Exact best-of-n by listing all K^n ordered draws; ties broken uniformly among the tied draws.

    weights: positive integers (pi0 = weights / sum). Returns a list of Fractions.
    """
    total = sum(weights)
    pi0 = [Fraction(w, total) for w in weights]
    out = [Fraction(0)] * len(weights)
    for draws in itertools.product(range(len(weights)), repeat=n):
        p = Fraction(1)
        for y in draws:
            p *= pi0[y]
        top = max(r[y] for y in draws)
        winners = [y for y in draws if r[y] == top]
        for y in winners:
            out[y] += p / len(winners)
    return out


def ref_best_of_n(log_pi0, r, n) -> dict:
    """F(y)^n - F^-(y)^n per reward level, shared within a level by pi0; KL by a direct sum.

    The precision grows with the spread of log pi0 so that 1 - F never rounds away a tiny mass.
    """
    spread = float(np.max(log_pi0) - np.min(log_pi0))
    with localcontext() as ctx:
        ctx.prec = PREC + int(spread / math.log(10.0)) + 1
        lq = [Decimal(float(x)) for x in log_pi0]
        m = max(lq)
        w = [(x - m).exp() for x in lq]
        s = sum(w)
        q = [x / s for x in w]
        n = int(n)
        level_prob = {}
        for level in sorted(set(float(x) for x in r)):
            f = sum(qj for qj, rj in zip(q, r) if rj <= level)
            f_minus = sum(qj for qj, rj in zip(q, r) if rj < level)
            level_prob[level] = (f**n - f_minus**n) / (f - f_minus)
        pi = [level_prob[float(ri)] * qi for qi, ri in zip(q, r)]
        kl = sum(p * (p / qi).ln() for p, qi in zip(pi, q) if p > 0)
        e = sum(p * Decimal(float(x)) for p, x in zip(pi, r))
        return dict(pi=np.array([float(p) for p in pi]), kl=float(kl), expected=float(e))


def ref_bound(n):
    return math.log(n) - (n - 1) / n


# --------------------------------------------------------------------------- Figure 12.3

KL20 = 4.757216464263608  # tilt KL at kappa = 20; checked against the decimal reference below


def test_kl_at_kappa_20_used_below():
    from tests.test_core_tilt import ref_tilt

    assert ref_tilt(LOG_PI0, R, 20.0)["kl"] == pytest.approx(KL20, rel=1e-14)


def test_matched_n_at_kappa_20_is_324():
    target = float(tilt.tilt(LOG_PI0, R, 20.0).kl)
    n = bon.matched_n(LOG_PI0, R, target)
    assert n == 324
    # 324 is closer than its neighbours, by the decimal reference
    d = {m: abs(ref_best_of_n(LOG_PI0, R, m)["kl"] - KL20) for m in (323, 324, 325)}
    assert d[324] < d[323] and d[324] < d[325]


def test_best_of_324_chapter_numbers():
    b = bon.best_of_n(LOG_PI0, R, 324)
    assert fmt(b.kl, 2) == "4.76"
    assert fmt(b.bound, 2) == "4.78"
    assert fmt(b.expected, 2) == "0.79"
    top = int(np.argmax(b.pi))
    assert top < 29 and fmt(b.pi[top], 2) == "0.22"  # 22% on one response below the top
    assert b.pi[-1] < 0.01  # the best response: under 1%
    assert fmt(tilt.tilt(LOG_PI0, R, 20.0).pi[-1], 2) == "0.08"  # ... against 8% under pi*
    # the tilt at kappa 20 earns more at the same KL: 0.82 against 0.79
    assert fmt(tilt.tilt(LOG_PI0, R, 20.0).expected, 2) == "0.82"


def test_best_of_324_matches_the_decimal_reference():
    b = bon.best_of_n(LOG_PI0, R, 324)
    ref = ref_best_of_n(LOG_PI0, R, 324)
    np.testing.assert_allclose(b.pi, ref["pi"], rtol=1e-10, atol=1e-15)
    assert float(b.kl) == pytest.approx(ref["kl"], rel=1e-11)
    assert float(b.expected) == pytest.approx(ref["expected"], rel=1e-12)
    assert float(b.bound) == pytest.approx(ref_bound(324), rel=1e-14)


def test_powers_of_two_of_the_second_panel():
    p = bon.powers_of_two()
    assert p.tolist() == [2**k for k in range(18)]
    assert bon.powers_of_two(3).tolist() == [1, 2, 4, 8]


def test_best_of_n_on_the_powers_of_two_matches_the_reference_and_the_bound():
    ns = bon.powers_of_two()
    b = bon.best_of_n(LOG_PI0, R, ns)
    assert b.pi.shape == (18, 30)
    for i in (0, 1, 5, 10, 17):
        ref = ref_best_of_n(LOG_PI0, R, ns[i])
        np.testing.assert_allclose(b.pi[i], ref["pi"], rtol=1e-9, atol=1e-15)
        assert float(b.kl[i]) == pytest.approx(ref["kl"], rel=1e-10, abs=1e-15)
    assert np.all(b.kl <= b.bound + 1e-12)
    assert np.all(np.diff(b.kl) > 0) and np.all(np.diff(b.expected) > 0)


# --------------------------------------------------------------------------- Exercise 12.2: the coin

COIN_LOG = np.log(np.array([0.5, 0.5]))
COIN_R = np.array([0.0, 1.0])


def test_coin_best_of_two():
    b = bon.best_of_n(COIN_LOG, COIN_R, 2)
    np.testing.assert_allclose(b.pi, [0.25, 0.75], rtol=1e-15)
    assert fmt(b.kl, 3) == "0.131" and fmt(b.bound, 3) == "0.193"
    assert float(b.kl) == pytest.approx(0.25 * math.log(0.5) + 0.75 * math.log(1.5), rel=1e-14)


def test_coin_general_n_and_the_unbounded_gap():
    b10 = bon.best_of_n(COIN_LOG, COIN_R, 10)
    assert fmt(b10.kl, 3) == "0.685" and fmt(b10.bound, 3) == "1.403"
    assert fmt(bon.kl_bound(100), 3) == "3.615"
    ns = np.array([1, 2, 3, 10, 50, 100, 1_000, 10**7])
    b = bon.best_of_n(COIN_LOG, COIN_R, ns)
    for i, n in enumerate(ns):
        low = 2.0 ** -float(n)
        # exp(n log 1/2) carries a relative error of order n * eps
        np.testing.assert_allclose(b.pi[i], [low, 1.0 - low], rtol=1e-12, atol=0)
        expected_kl = (low * math.log(2.0 * low) if low > 0 else 0.0) + (1 - low) * math.log(
            2.0 * (1 - low)
        )
        assert float(b.kl[i]) == pytest.approx(expected_kl, rel=1e-12, abs=1e-15)
    assert np.all(b.kl < math.log(2.0) + 1e-15)
    assert float(b.kl[-1]) == pytest.approx(math.log(2.0), rel=1e-15)
    assert float(b.bound[-1]) == pytest.approx(ref_bound(10**7), rel=1e-14)


# --------------------------------------------------------------------------- ties, by hand and by enumeration


def test_ties_share_in_proportion_to_the_reference_by_hand():
    # Example 12.1's policy: the two helpful answers tie. Best-of-2 picks a helpful one with
    # probability 1 - 0.7^2 = 0.51, split 2:1 -> (0.34, 0.17, 0.49).
    b = bon.best_of_n(np.log(np.array([0.2, 0.1, 0.7])), np.array([1.0, 1.0, 0.0]), 2)
    np.testing.assert_allclose(b.pi, [0.34, 0.17, 0.49], rtol=1e-14)


@pytest.mark.parametrize(
    "weights, r",
    [
        ((1, 1), (0, 1)),
        ((7, 2, 1), (0, 1, 2)),
        ((2, 1, 7), (1, 1, 0)),
        ((1, 2, 3, 4), (3, 1, 3, 0)),
        ((5, 5, 5, 5), (2, 2, 2, 2)),
        ((1, 10**9, 3, 1), (0.5, 0.25, 0.5, 0.75)),
    ],
)
@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_matches_enumeration_of_all_draws(weights, r, n):
    total = sum(weights)
    log_pi0 = np.array([math.log(w) - math.log(total) for w in weights])
    exact = enumerate_best_of_n(weights, r, n)
    b = bon.best_of_n(log_pi0, np.array(r, dtype=float), n)
    np.testing.assert_allclose(b.pi, [float(p) for p in exact], rtol=1e-12, atol=1e-15)
    assert float(b.expected) == pytest.approx(
        float(sum(p * Fraction(x) for p, x in zip(exact, r))), rel=1e-12, abs=1e-15
    )


def test_enumeration_reference_agrees_with_the_closed_form():
    # the two references check each other on a case with ties
    weights, r = (1, 2, 3, 4), (3.0, 1.0, 3.0, 0.0)
    log_pi0 = np.log(np.array(weights) / 10.0)
    for n in (1, 2, 3):
        enum = [float(p) for p in enumerate_best_of_n(weights, r, n)]
        np.testing.assert_allclose(ref_best_of_n(log_pi0, r, n)["pi"], enum, rtol=1e-14)


# --------------------------------------------------------------------------- the bound


def test_kl_bound_by_hand():
    assert float(bon.kl_bound(1)) == 0.0
    assert float(bon.kl_bound(2)) == pytest.approx(math.log(2.0) - 0.5, rel=1e-15)
    np.testing.assert_allclose(
        bon.kl_bound(np.array([1, 4, 324])), [ref_bound(n) for n in (1, 4, 324)], rtol=1e-15
    )
    assert float(bon.kl_bound(10**7)) == pytest.approx(ref_bound(10**7), rel=1e-15)


def test_bound_is_nearly_tight_when_every_response_is_rare():
    # n^2 max pi0 << 1: the formula is accurate (Section 12.5.2)
    k = 100_000
    log_pi0 = np.full(k, -math.log(k))
    r = np.arange(k, dtype=float)
    b = bon.best_of_n(log_pi0, r, 10)
    assert float(b.kl) <= float(b.bound)
    assert float(b.kl) == pytest.approx(ref_bound(10), abs=1e-3)


# --------------------------------------------------------------------------- extremes

RANDOMISH = [
    (LOG_PI0, R),
    (COIN_LOG, COIN_R),
    (np.log(np.array([0.2, 0.1, 0.7])), np.array([1.0, 1.0, 0.0])),
    (np.log(np.array([1e-300, 0.5, 0.5 - 1e-300])), np.array([1.0, 0.0, 0.5])),
    (np.log(np.array([1.0 - 2e-9, 1e-9, 1e-9])), np.array([0.0, 1.0, 1.0])),
    (np.array([0.0, -600.0, -650.0]), np.array([0.0, 1.0, 2.0])),
]


@pytest.mark.parametrize("log_pi0, r", RANDOMISH)
def test_extreme_n_stays_finite_and_normalised(log_pi0, r):
    ns = np.array([1, 2, 3, 1_000, 123_457, 9_999_999, 10_000_000])
    b = bon.best_of_n(log_pi0, r, ns)
    for field in (b.pi, b.expected, b.kl, b.bound):
        assert np.all(np.isfinite(field))
    assert np.all(np.abs(b.pi.sum(axis=1) - 1.0) < 1e-12)
    assert np.all(b.kl >= 0.0) and np.all(b.kl <= b.bound + 1e-12)
    for i in (0, 3, 6):
        ref = ref_best_of_n(log_pi0, r, ns[i])
        np.testing.assert_allclose(b.pi[i], ref["pi"], rtol=1e-9, atol=1e-14)
        assert float(b.kl[i]) == pytest.approx(ref["kl"], rel=1e-9, abs=1e-13)


def test_n_equal_one_gives_the_reference_and_zero_kl():
    b = bon.best_of_n(LOG_PI0, R, 1)
    np.testing.assert_allclose(b.pi, PI0, rtol=1e-14, atol=1e-16)
    assert float(b.kl) == pytest.approx(0.0, abs=1e-15)
    assert float(b.bound) == 0.0
    assert float(b.expected) == pytest.approx(math.fsum(PI0 * R), rel=1e-14)


def test_ten_million_draws_on_the_model():
    # the top response has pi0 1.74e-5, so 10^7 draws almost surely contain it: pi_n -> top, KL -> log(1/pi0(top))
    b = bon.best_of_n(LOG_PI0, R, 10**7)
    assert b.pi[-1] == pytest.approx(1.0, abs=1e-12)
    assert float(b.kl) == pytest.approx(-LOG_PI0[-1], rel=1e-12)


@pytest.mark.parametrize(
    "log_pi0",
    [
        np.array([math.log(0.5), math.log(0.5), -np.inf]),  # a response pi0 never gives
        np.array([-800.0, 0.0, -1.0]) - math.log1p(math.exp(-1.0)),  # one that underflows
    ],
)
def test_a_level_of_reference_probability_zero(log_pi0):
    with np.errstate(divide="ignore", invalid="ignore"):
        b = bon.best_of_n(log_pi0, np.array([0.5, 0.0, 1.0]), np.array([1, 2, 10]))
    assert np.all(np.isfinite(b.pi)) and np.all(np.isfinite(b.expected))
    assert np.all(b.pi[:, int(np.argmin(log_pi0))] == 0.0)  # the response pi0 (almost) never gives
    np.testing.assert_allclose(b.pi.sum(axis=1), 1.0, atol=1e-12)


@pytest.mark.parametrize(
    "log_pi0, r",
    [
        (np.array([0.0, -100.0]), np.array([1.0, 0.0])),
        (np.array([0.0, -40.0]), np.array([1.0, 0.0])),
        (np.array([-40.0, -40.0, -4e-18]), np.array([0.0, 1.0, 2.0])),
    ],
)
def test_a_lowest_level_lighter_than_rounding(log_pi0, r):
    with np.errstate(divide="ignore", invalid="ignore"):
        b = bon.best_of_n(log_pi0, r, np.array([1, 2, 1000]))
    assert np.all(np.isfinite(b.pi)) and np.all(np.isfinite(b.expected))
    # n = 1 is the reference itself
    np.testing.assert_allclose(b.pi[0], np.exp(log_pi0), rtol=1e-9, atol=0)


# --------------------------------------------------------------------------- matched_n edges


def test_matched_n_edges():
    assert bon.matched_n(LOG_PI0, R, 0.0) == 1
    assert bon.matched_n(LOG_PI0, R, -1.0) == 1
    # a KL above what any n reaches (log 1/pi0(top) = 10.96) goes to n_max
    assert bon.matched_n(LOG_PI0, R, 50.0) == bon.N_MAX
    assert bon.matched_n(LOG_PI0, R, 50.0, n_max=1_000) == 1_000
    assert bon.matched_n(LOG_PI0, R, 50.0, n_max=1) == 1


@pytest.mark.parametrize("target", [0.05, 0.131, 0.5, 0.68])
def test_matched_n_on_the_coin(target):
    n = bon.matched_n(COIN_LOG, COIN_R, target)

    def kl(m):
        low = 2.0**-m
        return low * math.log(2 * low) + (1 - low) * math.log(2 * (1 - low))

    assert abs(kl(n) - target) <= abs(kl(n + 1) - target)
    if n > 1:
        assert abs(kl(n) - target) <= abs(kl(n - 1) - target)
