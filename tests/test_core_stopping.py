"""Tests for klrl_core.stopping (Exercise 28.5; chapter 28's length-bias toy).

References written here: the exercise's closed form by hand, finite differences of the expected
weight, an enumeration of stopping positions written as a plain loop, the score-function
expectation summed outcome by outcome, and Monte Carlo with the toy's own sampler.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from klrl_core import length_bias
from klrl_core import stopping as sp


def sig(x):
    return 1 / (1 + math.exp(-x))


def test_worked_instance_by_hand():
    w = sp.worked_instance()
    q = sig(-2.0)
    assert w.q == pytest.approx(0.11920292202211755)
    assert w.gradient_response == pytest.approx(math.sqrt(7) * q * (1 - q) * (1 / 2 - 1 / 10))
    assert w.gradient_response == pytest.approx(0.1111, abs=5e-5)
    assert w.gradient_constant == 0.0


@given(a=st.floats(-3, 3), s=st.floats(-6, 6), l1=st.integers(1, 30), extra=st.integers(1, 30))
@settings(max_examples=100, deadline=None)
def test_two_length_gradient_three_ways(a, s, l1, extra):
    l2 = l1 + extra
    q = sig(s)
    g = sp.two_length_gradient(a, s, l1, l2)
    # (1) the exercise's closed form
    assert g == pytest.approx(a * q * (1 - q) * (1 / l1 - 1 / l2), abs=1e-12)
    # (2) the score-function expectation, outcome by outcome: d/ds log q = 1 - q,
    #     d/ds log(1 - q) = -q
    score = q * (a / l1) * (1 - q) + (1 - q) * (a / l2) * (-q)
    assert g == pytest.approx(score, abs=1e-12)
    # (3) finite difference of the expected weighted advantage
    h = 1e-6
    fd = (sp.two_length_objective(a, s + h, l1, l2) - sp.two_length_objective(a, s - h, l1, l2)) / (
        2 * h
    )
    assert g == pytest.approx(fd, abs=1e-7)
    # a constant weight gives no gradient (Exercise 28.5(a)), whatever the constant
    assert sp.two_length_gradient(a, s, l1, l2, "constant", c=0.37) == 0.0
    # per-response averaging pushes along the sign of A
    assert g == 0 or np.sign(g) == np.sign(a)


def plain_expected_weight(s, weight="response"):
    L = len(s)
    reach, tot = 1.0, 0.0
    for t in range(L):
        q = sig(s[t])
        length = min(t + 2, L + 1)
        tot += reach * q * (1 / length if weight == "response" else 0.5)
        reach *= 1 - q
    return tot + reach * (1 / (L + 1) if weight == "response" else 0.5)


@given(s=st.lists(st.floats(-4, 4), min_size=1, max_size=12), a=st.floats(-2, 2))
@settings(max_examples=60, deadline=None)
def test_chain_gradient_is_the_finite_difference(s, a):
    assert sp.expected_weight(s) == pytest.approx(plain_expected_weight(s), rel=1e-12)
    g = sp.stop_logit_gradients(s, a)
    h = 1e-6
    for t in range(len(s)):
        up, down = list(s), list(s)
        up[t] += h
        down[t] -= h
        fd = a * (plain_expected_weight(up) - plain_expected_weight(down)) / (2 * h)
        assert g[t] == pytest.approx(fd, abs=1e-8)
    assert np.all(sp.stop_logit_gradients(s, a, "constant", c=0.5) == 0.0)
    assert sp.expected_weight(s, "constant", c=0.5) == pytest.approx(0.5)


def test_chain_matches_the_toy():
    s = np.full(length_bias.MAX_POS, length_bias.STOP_LOGIT0)
    # same lengths as the toy: expected length 9.3 at the start
    p_end = []
    reach = 1.0
    for t in range(len(s)):
        p_end.append(reach * sig(s[t]))
        reach *= 1 - sig(s[t])
    p_end.append(reach)
    mean_len = float(np.dot(p_end, sp.chain_lengths(len(s))))
    assert mean_len == pytest.approx(length_bias.expected_length(s), rel=1e-12)
    assert mean_len == pytest.approx(9.3, abs=0.05)
    g = sp.stop_logit_gradients(s, 1.0)
    assert np.all(g[:-1] > 0) and g[-1] == 0.0  # stopping at the last position changes nothing
    assert np.all(sp.stop_logit_gradients(s, -0.4)[:-1] < 0)


def test_chain_monte_carlo_with_the_toys_sampler():
    rng = np.random.default_rng(2024)
    L = 12
    s = rng.normal(-1.5, 0.7, L)
    n = 200_000
    p_stop, hazard = length_bias.cumulative_hazard(s[None, :])
    T = length_bias.sample_stop_positions(
        hazard, np.zeros(n, dtype=int), rng.standard_exponential(n)
    )
    lengths = np.minimum(T + 2, L + 1)
    q = p_stop[0]
    # score of each stop logit: -q_t for positions passed, 1 - q_T where it stopped
    t = np.arange(L)
    score = np.where(t[None, :] < T[:, None], -q, 0.0) + np.where(
        t[None, :] == T[:, None], 1 - q, 0.0
    )
    samples = (1.0 / lengths)[:, None] * score
    exact = sp.stop_logit_gradients(s, 1.0)
    se = samples.std(axis=0, ddof=1) / math.sqrt(n)
    assert np.all(np.abs(samples.mean(axis=0) - exact) < 4.5 * se + 1e-12)


def test_vectorised_over_rows():
    s = np.array([[-2.0, -1.0, 0.5], [0.0, 0.0, 0.0]])
    g = sp.stop_logit_gradients(s, np.array([1.0, -2.0]))
    assert g.shape == (2, 3)
    assert g[0] == pytest.approx(sp.stop_logit_gradients(s[0], 1.0))
    assert g[1] == pytest.approx(sp.stop_logit_gradients(s[1], -2.0))
    assert sp.expected_weight(s) == pytest.approx([plain_expected_weight(list(r)) for r in s])


def test_extreme_logits_stay_finite():
    g = sp.stop_logit_gradients(np.array([-800.0, 800.0, 0.0]), 1.0)
    assert np.all(np.isfinite(g))
    assert sp.two_length_gradient(1.0, 1e4, 2, 3) == 0.0


def test_stop_logit_gradient_in_terms_of_q():
    # q = 1/2, L1 = 2, L2 = 10, A = sqrt 3 (one correct of four): sqrt 3 / 4 * 0.4
    assert sp.stop_logit_gradient(math.sqrt(3), 0.5, 2, 10) == pytest.approx(math.sqrt(3) * 0.1)
    assert sp.stop_logit_gradient(-1 / math.sqrt(3), 0.5, 2, 10) == pytest.approx(
        -0.1 / math.sqrt(3)
    )
    assert sp.stop_logit_gradient(math.sqrt(3), 0.5, 2, 10, "constant") == 0.0
    q = sig(-1.3)
    assert sp.stop_logit_gradient(0.7, q, 3, 8) == pytest.approx(
        sp.two_length_gradient(0.7, -1.3, 3, 8)
    )
    with pytest.raises(ValueError):
        sp.stop_logit_gradient(1.0, 1.5, 2, 10)
    with pytest.raises(ValueError):
        sp.stop_logit_gradient(1.0, 0.5, 2, 10, "token")


@pytest.mark.parametrize(
    "call",
    [
        lambda: sp.two_length_gradient(1.0, 0.0, 3, 2),
        lambda: sp.two_length_gradient(1.0, 0.0, 0, 2),
        lambda: sp.two_length_gradient(float("nan"), 0.0, 1, 2),
        lambda: sp.two_length_gradient(1.0, 0.0, 1, 2, weight="token"),
        lambda: sp.stop_logit_gradients([], 1.0),
        lambda: sp.stop_logit_gradients([0.0, float("inf")], 1.0),
        lambda: sp.expected_weight(3.0),
    ],
)
def test_bad_input(call):
    with pytest.raises(ValueError):
        call()
