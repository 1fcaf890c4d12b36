"""klrl_core.groups pinned where the other tests left room (issue 15): exact zeros for flat
groups, advantages to full precision, the edges of the argument checks, the no-signal entry."""

import math
from fractions import Fraction

import numpy as np
import pytest

from klrl_core import groups


@pytest.mark.parametrize("convention", groups.CONVENTIONS)
@pytest.mark.parametrize("value", [0.1, 0.7, 1e-300, 3.3])
def test_flat_groups_give_exact_zeros(convention, value):
    # the mean of k equal floats can differ from them in the last bit (0.1 · 3 / 3 != 0.1)
    for k in (1, 3, 7, 10):
        adv = groups.group_advantages(np.full(k, value), convention)
        assert np.all(adv == 0.0), (k, adv)


@pytest.mark.parametrize("rewards", [[1, 0, 0, 0, 1, 0, 0, 0], [0.3, 0.9, 0.1], [5.0, -2.0]])
def test_advantages_to_full_precision(rewards):
    k = len(rewards)
    m = sum(Fraction(x) for x in rewards) / k
    ss = sum((Fraction(x) - m) ** 2 for x in rewards)
    for convention, div in (("std", k), ("std_unbiased", k - 1)):
        sd = math.sqrt(ss / div)
        want = [float(Fraction(x) - m) / sd for x in rewards]
        np.testing.assert_allclose(groups.group_advantages(rewards, convention), want, rtol=1e-13)


def test_mixed_group_closed_forms_to_full_precision():
    for k in (2, 5, 8, 64):
        for c in range(1, k):
            hi, lo = groups.mixed_group_advantages(c, k, "std_unbiased")
            assert hi == pytest.approx(math.sqrt((k - c) / c * (k - 1) / k), rel=1e-14)
            assert lo == pytest.approx(-math.sqrt(c / (k - c) * (k - 1) / k), rel=1e-14)


@pytest.mark.parametrize("c, k", [(0, 8), (8, 8), (9, 8), (1.5, 8)])
def test_mixed_group_needs_both_kinds(c, k):
    with pytest.raises(ValueError):
        groups.mixed_group_advantages(c, k)


def test_argument_edges():
    assert groups.signal_probability(1.0, 8) == 0.0  # p = 1 is allowed
    assert groups.signal_probability(0.0, 1) == 0.0
    with pytest.raises(ValueError):
        groups.signal_probability(0.5, 0)  # k = 0 is not
    assert groups.parse_grades(",".join(["1"] * groups.MAX_GROUP)).size == groups.MAX_GROUP
    with pytest.raises(ValueError):
        groups.parse_grades(",".join(["1"] * (groups.MAX_GROUP + 1)))


def test_signal_probability_near_one_and_near_zero():
    # 1 - p^k - (1 - p)^k for p = 1 - 1e-10 and 1e-10: about k·1e-10, exact in fractions
    for p in (1e-10, 1 - 1e-10, 0.999999):
        for k in (2, 8, 1000):
            pf = Fraction(p)
            want = float(1 - pf**k - (1 - pf) ** k)
            assert groups.signal_probability(p, k) == pytest.approx(want, rel=1e-9)


def test_no_signal_entry_survives_min_share():
    # p = 0.5, k = 8: no signal 2/256 ≈ 0.0078, kept even when min_share is above it
    d = groups.advantage_distribution(0.5, 8, min_share=0.05)
    assert d.kind[0] == groups.KIND_NO_SIGNAL and d.share[0] == pytest.approx(2 / 256, rel=1e-14)
    assert np.all(d.share[1:] >= 0.05)


def test_advantage_distribution_shares_by_hand():
    # p = 0.3, k = 3: P(c) = C(3,c) 0.3^c 0.7^(3-c); a correct response in a c-group: P(c)·c/3
    d = groups.advantage_distribution(0.3, 3)
    pmf = [math.comb(3, c) * 0.3**c * 0.7 ** (3 - c) for c in range(4)]
    assert d.share[0] == pytest.approx(pmf[0] + pmf[3], rel=1e-14)
    for c in (1, 2):
        i = list(zip(d.kind, d.n_correct)).index((groups.KIND_CORRECT, c))
        j = list(zip(d.kind, d.n_correct)).index((groups.KIND_INCORRECT, c))
        assert d.share[i] == pytest.approx(pmf[c] * c / 3, rel=1e-13)
        assert d.share[j] == pytest.approx(pmf[c] * (3 - c) / 3, rel=1e-13)
        assert d.value[i] == pytest.approx(math.sqrt((3 - c) / c), rel=1e-14)


def test_binomial_pmf_asymmetric_by_hand():
    np.testing.assert_allclose(
        groups.binomial_pmf(0.2, 3), [0.8**3, 3 * 0.2 * 0.8**2, 3 * 0.04 * 0.8, 0.008], rtol=1e-13
    )
    assert groups.most_likely_mixed_group(0.2, 10) == 2
    assert groups.most_likely_mixed_group(0.9, 10) == 9


def test_leave_one_out_by_hand():
    np.testing.assert_allclose(
        groups.leave_one_out_baseline([1.0, 0.0, 0.0, 1.0]),
        [1 / 3, 2 / 3, 2 / 3, 1 / 3],
        rtol=1e-15,
    )
