"""klrl_core.overoptimization (Figure 12.5): where the true reward turns along a path, and the
tilt and best-of-n scored at about the same KL."""

import itertools

import numpy as np
import pytest

from klrl_core import best_of_n, model, overoptimization, tilt


def test_turn_by_hand():
    t = overoptimization.turn([0.1, 0.3, 0.2], [0.0, 0.5, 0.7])
    assert t.peak == 1 and t.best == 0.3 and abs(t.drop - 0.1) < 1e-15 and t.proxy_rose
    # r* only falls: the peak is the start, the proxy rose from 0.5 to 0.6
    assert overoptimization.turn([0.4, 0.3, 0.1], [0.5, 0.2, 0.6]) == (0, 0.4, 0.4 - 0.1, True)
    # r* still rising at the end: no drop; the proxy below its start did not rise
    assert overoptimization.turn([0.0, 0.2, 0.5], [0.3, 0.4, 0.2]) == (2, 0.5, 0.0, False)
    assert overoptimization.turn([0.7], [0.2]) == (0, 0.7, 0.0, False)  # one step: pi0


def test_turn_by_enumeration():
    """Every path of up to four steps with rewards in {0, 1, 2}, against the definition read
    step by step (the first step with the largest r*; the proxy rose past both values)."""
    for n in range(1, 5):
        for true in itertools.product((0, 1, 2), repeat=n):
            for proxy in itertools.product((0, 1, 2), repeat=n):
                peak = next(i for i in range(n) if all(true[i] >= x for x in true))
                rose = proxy[-1] > proxy[peak] and proxy[-1] > proxy[0]
                assert overoptimization.turn(true, proxy) == (
                    peak,
                    true[peak],
                    true[peak] - true[-1],
                    rose,
                ), (true, proxy)


@pytest.mark.parametrize(
    "true, proxy",
    [([], []), ([1.0, 2.0], [1.0]), ([[1.0]], [[1.0]]), ([1.0, float("nan")], [0.0, 1.0])],
)
def test_turn_refuses_what_is_not_a_path(true, proxy):
    with pytest.raises(ValueError):
        overoptimization.turn(true, proxy)


def test_scored_by_hand():
    """pi = (1/2, 1/2) on r = (0, 1), r* = (0, 1/2): E[r] = 1/2, E[r*] = 1/4, sd(r) = 1/2."""
    s = overoptimization.scored(
        np.array([0.5, 0.5]), 0.3, np.array([0.0, 1.0]), np.array([0.0, 0.5])
    )
    assert s == (0.3, 0.5, 0.25, 0.5)
    # a point mass has no spread
    assert (
        overoptimization.scored(
            np.array([0.0, 1.0]), 0.0, np.array([0.0, 1.0]), np.array([0.0, 0.5])
        ).spread
        == 0.0
    )


def test_at_matched_kl_against_a_scan():
    """The tilt lands on the asked KL (to the frontier grid's interpolation) and best-of-n's
    n is the one whose KL is closest to it, found by scanning n one by one."""
    r = model.rewards()
    lq = model.log_reference(r)
    rt = model.true_reward(r)
    kappas = tilt.kappa_grid()
    front = tilt.frontier(lq, r, kappas)
    for target in (0.5, 3.2):
        n, tl, bn = overoptimization.at_matched_kl(lq, r, rt, target, kappas, front.kl)
        assert abs(tl.kl - target) < 0.02
        kls = [float(best_of_n.best_of_n(lq, r, m).kl) for m in range(1, 3 * n + 2)]
        assert n == 1 + int(np.argmin(np.abs(np.array(kls) - target)))
        assert abs(bn.kl - kls[n - 1]) < 1e-12
        pi = best_of_n.best_of_n(lq, r, n).pi  # its scores, summed by hand
        assert abs(bn.true - sum(p * x for p, x in zip(pi, rt))) < 1e-12


def test_overrating_grows_by_hand():
    assert overoptimization.overrating_grows([0.0, 0.5, 1.0], [0.0, 0.5, 0.4])  # the bend
    assert overoptimization.overrating_grows([1.0, 0.0], [1.0, 0.0])  # equal: 0, 0
    assert not overoptimization.overrating_grows([0.0, 1.0, 2.0], [-1.0, 1.0, 2.0])
    assert overoptimization.overrating_grows([2.0, 0.0], [1.0, 0.0])  # read in order of r
    assert overoptimization.overrating_grows([0.0, 1.0], [1.0, 0.0])  # not of r*
    assert not overoptimization.overrating_grows([2.0, 0.0], [2.5, 0.0])
