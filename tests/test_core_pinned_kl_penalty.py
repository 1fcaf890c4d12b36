"""klrl_core.kl_penalty pinned where the other tests left room (issue 15).

The estimator statistics are checked on count vectors fixed here (a stand-in generator), so
the mean, spread and share of negative estimates can be worked by hand; kl() on a p with a
zero entry; k3 near rho = 1 against its series; the forward-KL optimum for beta > 1 against a
bisection written here.
"""

import math
import statistics

import numpy as np
import pytest

from klrl_core import kl_penalty as kp


class FixedCounts:
    """Stands in for a Generator: multinomial() returns the count vectors given."""

    def __init__(self, counts):
        self.counts = np.asarray(counts)

    def multinomial(self, n, pvals, size=None):
        assert size == len(self.counts) and np.all(self.counts.sum(axis=1) == n)
        return self.counts


PI_REF = np.array([0.5, 0.3, 0.2])
PI = np.array([0.5, 0.2, 0.3])  # log rho = 0, log 1.5, log(2/3)


def test_estimator_stats_on_fixed_counts_by_hand():
    # two samples per estimate; four repetitions
    counts = [[2, 0, 0], [0, 2, 0], [1, 0, 1], [0, 1, 1]]
    s = kp.estimator_stats(PI, PI_REF, n_samples=2, reps=4, rng=FixedCounts(counts))
    lr = [0.0, math.log(1.5), math.log(2 / 3)]
    k = [[-x for x in lr], [0.5 * x * x for x in lr], [math.exp(x) - 1 - x for x in lr]]
    for i in range(3):
        est = [sum(c * v for c, v in zip(row, k[i])) / 2 for row in counts]
        assert s.mean[i] == pytest.approx(statistics.fmean(est), rel=1e-12, abs=1e-15)
        assert s.std[i] == pytest.approx(statistics.pstdev(est), rel=1e-12, abs=1e-15)
        assert s.share_negative[i] == sum(e < 0 for e in est) / 4
    # k1: estimates 0, -log 1.5, (log(2/3)·-1)/2 > 0, (-log 1.5 + log 1.5)/2 = 0 -> one negative
    assert s.share_negative[0] == 0.25
    assert s.true_kl == pytest.approx(
        0.2 * math.log(0.2 / 0.3) + 0.3 * math.log(0.3 / 0.2), rel=1e-12
    )


def test_zero_estimates_are_not_negative():
    # pi = pi_ref: every estimate is exactly 0, none of them negative
    s = kp.estimator_stats(PI_REF, PI_REF, n_samples=16, reps=300, rng=np.random.default_rng(3))
    np.testing.assert_array_equal(s.share_negative, [0.0, 0.0, 0.0])
    # one sample per estimate: k1 < 0 only when the second response is drawn (rho = 1.5)
    s = kp.estimator_stats(PI, PI_REF, n_samples=1, reps=20_000, rng=np.random.default_rng(4))
    se = math.sqrt(0.2 * 0.8 / 20_000)
    assert s.share_negative[0] == pytest.approx(0.2, abs=5 * se)
    np.testing.assert_array_equal(s.share_negative[1:], [0.0, 0.0])


def test_kl_with_a_zero_entry_is_finite_and_right():
    p = np.array([0.0, 0.5, 0.5])
    q = np.array([0.2, 0.4, 0.4])
    assert kp.kl(p, q) == pytest.approx(math.log(1.25), rel=1e-14)
    assert kp.kl(q, q) == 0.0
    with np.errstate(divide="ignore"):
        assert math.isinf(kp.kl(q, p))  # q puts mass where p has none


def test_k3_near_rho_one_matches_its_series():
    for x in (1e-3, 1e-6, -1e-7, 1e-9):
        k3 = float(kp.estimator_values(np.array([x]))[0, 2])
        series = x * x / 2 + x**3 / 6 + x**4 / 24
        assert k3 == pytest.approx(series, rel=1e-9)


def _forward_by_bisection(pi_ref, r, beta):
    """r_k + beta pi_ref_k / pi_k = lam, sum pi = 1: bisection on lam, bracket grown until it holds."""

    def total(lam):
        return sum(beta * p / (lam - x) for p, x in zip(pi_ref, r))

    lo, step = max(r), 1.0
    hi = lo + step
    while total(hi) > 1.0:
        step *= 2
        hi = lo + step
    for _ in range(300):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        lo, hi = (mid, hi) if total(mid) > 1.0 else (lo, mid)
    pi = [beta * p / (hi - x) for p, x in zip(pi_ref, r)]
    s = sum(pi)
    return np.array([x / s for x in pi])


@pytest.mark.parametrize("beta", [0.05, 0.5, 2.0, 7.5])
def test_forward_optimum_against_a_bisection_here(beta):
    setup = kp.make_setup(0)
    want = _forward_by_bisection(list(setup.pi_ref), list(setup.r), beta)
    got = kp.forward_kl_optimum(setup.pi_ref, setup.r, beta)
    np.testing.assert_allclose(got, want, rtol=1e-9)
    # stationarity: r + beta pi_ref / pi is the same for every response
    lam = setup.r + beta * setup.pi_ref / got
    assert np.ptp(lam) < 1e-8 * np.abs(lam).max()


def test_tv_by_hand():
    assert kp.tv([0.5, 0.5, 0.0], [0.0, 0.5, 0.5]) == pytest.approx(0.5)
    assert kp.tv([1.0, 0.0], [0.0, 1.0]) == 1.0
