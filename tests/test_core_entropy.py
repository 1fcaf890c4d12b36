"""Tests for klrl_core.entropy (chapter 28, "Entropy and exploration"; Exercise 28.6).

References written here: entropy and covariance as plain loops, finite differences of the exact
entropy for dH/deta and d2H/deta2, repeated explicit steps for the trajectory, and the normal
equations of the two-parameter least-squares fit.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from klrl_core import entropy as en


def plain_policy(z):
    m = max(z)
    w = [math.exp(x - m) for x in z]
    s = sum(w)
    return [x / s for x in w]


def plain_entropy(pi):
    return -sum(p * math.log(p) for p in pi if p > 0)


def plain_h(z, a, eta):
    return plain_entropy(plain_policy([x + eta * y for x, y in zip(z, a)]))


def plain_cov(z, a):
    pi = plain_policy(z)
    lp = [math.log(p) for p in pi]
    ml = sum(p * l for p, l in zip(pi, lp))
    ma = sum(p * x for p, x in zip(pi, a))
    return sum(p * (l - ml) * (x - ma) for p, l, x in zip(pi, lp, a))


def plain_curvature(z, a):
    pi = plain_policy(z)
    lp = [math.log(p) for p in pi]
    ml = sum(p * l for p, l in zip(pi, lp))
    ma = sum(p * x for p, x in zip(pi, a))
    third = sum(p * (l - ml) * (x - ma) ** 2 for p, l, x in zip(pi, lp, a))
    var = sum(p * (x - ma) ** 2 for p, x in zip(pi, a))
    return -third - var


vecs = st.lists(st.floats(-3, 3), min_size=4, max_size=4)
advs = st.lists(st.floats(-2, 2), min_size=4, max_size=4)


def test_entropy_hand_values():
    assert en.entropy(np.log(np.full(5, 0.2))) == pytest.approx(math.log(5))
    assert en.entropy([0.0, -np.inf, -np.inf]) == 0.0
    assert en.entropy(np.log([0.5, 0.25, 0.25])) == pytest.approx(1.5 * math.log(2))
    assert en.entropy(en.log_softmax([1000.0, 0.0])) == pytest.approx(0.0, abs=1e-300)
    assert en.log_softmax([1000.0, 0.0]) == pytest.approx([0.0, -1000.0])
    big = en.trajectory([800.0, 0.0, 0.0], [0.0, 1.0, 0.0], eta=10.0, steps=100)
    assert np.all(np.isfinite(big.entropy)) and big.reward[-1] == pytest.approx(1.0)
    rows = en.entropy(np.log([[0.5, 0.5], [1.0, 1e-300]]))
    assert rows[0] == pytest.approx(math.log(2)) and rows[1] >= 0


@given(z=vecs, a=advs)
@settings(max_examples=100, deadline=None)
def test_slope_is_minus_the_covariance_and_the_finite_difference(z, a):
    h = 1e-5
    fd = (plain_h(z, a, h) - plain_h(z, a, -h)) / (2 * h)
    assert en.entropy_slope(z, a) == pytest.approx(fd, abs=1e-7)
    assert en.covariance(z, a) == pytest.approx(plain_cov(z, a), abs=1e-12)
    assert en.entropy_slope(z, a) == pytest.approx(-plain_cov(z, a), abs=1e-12)


@given(z=vecs, a=advs)
@settings(max_examples=60, deadline=None)
def test_curvature_matches_second_difference(z, a):
    h = 1e-3
    fd2 = (plain_h(z, a, h) - 2 * plain_h(z, a, 0.0) + plain_h(z, a, -h)) / h**2
    assert en.entropy_curvature(z, a) == pytest.approx(fd2, abs=1e-4)


@given(z=vecs, a=advs)
@settings(max_examples=100, deadline=None)
def test_first_order_prediction_is_exact_to_second_order(z, a):
    half_curv = abs(plain_curvature(z, a)) / 2
    for eta in (1e-2, 1e-3, -1e-3):
        err = float(en.entropy_along(z, a, eta)) - en.first_order(z, a, eta)
        # |error| / eta^2 stays bounded as eta -> 0 ...
        assert abs(err) <= (half_curv + 1.0) * eta**2
    # ... and tends to half the second derivative
    eta = 1e-3
    err = float(en.entropy_along(z, a, eta)) - en.first_order(z, a, eta)
    assert err / eta**2 == pytest.approx(plain_curvature(z, a) / 2, abs=0.05)


def test_presets_signs():
    _, z, a = en.PRESETS["confident_right"]
    assert en.covariance(z, a) > 0 and en.entropy_slope(z, a) < 0
    assert float(en.entropy_along(z, a, 0.1)) < en.entropy(en.log_softmax(z))
    _, z, a = en.PRESETS["confident_wrong"]
    assert en.covariance(z, a) < 0
    assert float(en.entropy_along(z, a, 0.1)) > en.entropy(en.log_softmax(z))
    _, z, a = en.PRESETS["uniform"]
    assert en.covariance(z, a) == pytest.approx(0.0, abs=1e-15)
    # uniform: no first-order change, second order -Var(A) eta^2 / 2 with Var(A) = 0.16
    assert en.entropy_curvature(z, a) == pytest.approx(-0.16)
    assert float(en.entropy_along(z, a, 0.01)) < math.log(5)


def test_entropy_along_is_vectorised():
    _, z, a = en.PRESETS["confident_wrong"]
    etas = np.array([0.0, 0.3, 1.0, 2.0])
    out = en.entropy_along(z, a, etas)
    assert out.shape == (4,)
    assert out == pytest.approx([plain_h(list(z), list(a), e) for e in etas], abs=1e-13)
    assert en.first_order(z, a, etas) == pytest.approx(
        plain_h(list(z), list(a), 0.0) + etas * plain_cov(list(z), list(a)) * -1
    )


@pytest.mark.parametrize("key", sorted(en.PRESETS))
def test_trajectory_matches_repeated_steps(key):
    _, z0, a = en.PRESETS[key]
    eta, steps = 0.4, 25
    tr = en.trajectory(z0, a, eta, steps)
    z = list(z0)
    prev = z  # the policy before the step (read from t = 1 on)
    for t in range(steps + 1):
        pi = plain_policy(z)
        assert tr.entropy[t] == pytest.approx(plain_entropy(pi), abs=1e-12)
        assert tr.reward[t] == pytest.approx(sum(p * x for p, x in zip(pi, a)), abs=1e-12)
        assert tr.covariance[t] == pytest.approx(plain_cov(z, a), abs=1e-12)
        if t:
            assert tr.predicted[t] == pytest.approx(
                plain_entropy(plain_policy(prev)) - eta * plain_cov(prev, a), abs=1e-12
            )
        # the step with the advantage centred under the current policy
        mean_a = sum(p * x for p, x in zip(pi, a))
        prev = z
        z = [x + eta * (y - mean_a) for x, y in zip(z, a)]
    assert math.isnan(tr.predicted[0])


def test_confident_wrong_entropy_rises_then_falls():
    _, z, a = en.PRESETS["confident_wrong"]
    tr = en.trajectory(z, a, 0.5, 40)
    peak = int(np.argmax(tr.entropy))
    assert 0 < peak < 40 and tr.entropy[peak] > tr.entropy[0] > tr.entropy[-1]
    # the covariance is negative before the peak and positive after it
    assert np.all(tr.covariance[:peak] < 0) and np.all(tr.covariance[peak + 1 :] > 0)


def test_fit_cui_recovers_an_exact_law():
    h = np.linspace(0.1, 1.5, 12)
    r = -0.3 * np.exp(h) + 1.2
    f = en.fit_cui(h, r)
    assert f.a == pytest.approx(0.3) and f.b == pytest.approx(1.2)
    assert f.r2 == pytest.approx(1.0) and f.rmse == pytest.approx(0.0, abs=1e-12)


def test_fit_cui_normal_equations():
    h = [0.2, 0.5, 0.9, 1.1, 1.6]
    r = [0.9, 0.8, 0.5, 0.45, 0.1]
    x = [math.exp(v) for v in h]
    n = len(x)
    sx, sr = sum(x), sum(r)
    sxx = sum(v * v for v in x)
    sxr = sum(v * w for v, w in zip(x, r))
    slope = (n * sxr - sx * sr) / (n * sxx - sx * sx)  # R = slope x + intercept
    intercept = (sr - slope * sx) / n
    f = en.fit_cui(h, r)
    assert f.a == pytest.approx(-slope) and f.b == pytest.approx(intercept)
    res = [w - (slope * v + intercept) for v, w in zip(x, r)]
    mean_r = sr / n
    r2 = 1 - sum(e * e for e in res) / sum((w - mean_r) ** 2 for w in r)
    assert f.r2 == pytest.approx(r2)
    assert f.rmse == pytest.approx(math.sqrt(sum(e * e for e in res) / n))
    assert f.fitted == pytest.approx([slope * v + intercept for v in x])


@pytest.mark.parametrize(
    "call",
    [
        lambda: en.covariance([0.0, 1.0], [1.0]),
        lambda: en.covariance([0.0], [1.0]),
        lambda: en.covariance([0.0, float("nan")], [1.0, 0.0]),
        lambda: en.entropy_along([0.0, 1.0], [1.0, 0.0], float("inf")),
        lambda: en.trajectory([0.0, 1.0], [1.0, 0.0], eta=-1.0),
        lambda: en.trajectory([0.0, 1.0], [1.0, 0.0], steps=2.5),
        lambda: en.fit_cui([0.5, 0.5, 0.5], [1.0, 2.0, 3.0]),
        lambda: en.fit_cui([0.5, 0.6], [1.0]),
        lambda: en.entropy([float("nan"), 0.0]),
    ],
)
def test_bad_input(call):
    with pytest.raises(ValueError):
        call()


def test_turning_points_and_first_direction_by_hand():
    assert en.turning_points([0, 1, 2, 3, 4], [0, 1, 2, 1, 0]) == [(2.0, 2.0, "peak")]
    # a flat stretch is not a turn: down, flat, up is one dip, reported where it rises
    assert en.turning_points([0, 1, 2, 3], [3, 1, 1, 2]) == [(2.0, 1.0, "dip")]
    assert en.turning_points([0, 1, 2], [1, 1 + 1e-12, 1]) == []
    assert en.first_direction([1, 1, 0.5, 2]) == -1
    assert en.first_direction([2, 2, 2]) == 0
    assert en.first_direction([0, 1e-12, 1]) == 1


def test_entropy_turns_peak_where_the_policy_is_uniform():
    # z = (0, 2), A = (1, 0): z1 catches up with z2 at eta = 2, where pi is uniform and the
    # entropy is ln 2 (its maximum), then falls
    h, first, found = en.entropy_turns([0.0, 2.0], [1.0, 0.0], 5.0, 500)
    assert first == 1 and len(found) == 1
    eta, top, kind = found[0]
    assert kind == "peak" and eta == pytest.approx(2.0, abs=1e-9)
    assert top == pytest.approx(math.log(2), abs=1e-12)
    assert h.size == 501 and h[0] == pytest.approx(
        -(1 / (1 + math.e**2)) * math.log(1 / (1 + math.e**2))
        - (math.e**2 / (1 + math.e**2)) * math.log(math.e**2 / (1 + math.e**2)),
        abs=1e-12,
    )
    # a uniform policy stepping toward one action: the entropy only falls
    assert en.entropy_turns([0.0, 0.0], [1.0, 0.0], 5.0, 500)[1:] == (-1, [])
    # equal advantages: nothing moves
    assert en.entropy_turns([0.0, 1.0], [1.0, 1.0], 5.0, 500)[1:] == (0, [])


def test_entropy_turns_turn_inside_the_first_cell():
    # z = (0, 0.001), A = (1, 0): the peak at eta = 0.001 lies inside the first cell of 0.01
    _, first, found = en.entropy_turns([0.0, 0.001], [1.0, 0.0], 5.0, 500)
    assert first == 1 and [k for *_, k in found] == ["peak"]
    assert found[0][0] == pytest.approx(0.001, abs=1e-9)


def test_limit_entropy_and_advantage_variance_by_hand():
    # the two actions of largest advantage keep pi's proportions 1 : 3
    h, count = en.limit_entropy([0.0, math.log(3), 5.0], [1.0, 1.0, 0.0])
    assert count == 2
    assert h == pytest.approx(-(0.25 * math.log(0.25) + 0.75 * math.log(0.75)), abs=1e-12)
    assert en.limit_entropy([0.0, 1.0, 2.0], [2.0, 1.0, 0.0]) == (0.0, 1)
    assert en.advantage_variance([0.0, 0.0], [1.0, 0.0]) == pytest.approx(0.25, abs=1e-15)
    # pi = (1/4, 3/4), A = (2, 0): mean 1/2, variance 1/4 * 9/4 + 3/4 * 1/4 = 3/4
    assert en.advantage_variance([0.0, math.log(3)], [2.0, 0.0]) == pytest.approx(0.75, abs=1e-14)
    assert en.advantage_variance([0.0, 5.0], [1.0, 1.0]) == pytest.approx(0.0, abs=1e-15)


def test_matching_preset_by_hand():
    # The presets' own policies, written as the chapter's probabilities (log of them) or as
    # the boxes show them (logits to three decimals: log 0.70 = -0.357, log 0.12 = -2.120, ...)
    one_hot = [1, 0, 0, 0, 0]
    assert en.matching_preset(np.log([0.70, 0.12, 0.08, 0.06, 0.04]), one_hot) == "confident_right"
    assert (
        en.matching_preset([-0.357, -2.120, -2.526, -2.813, -3.219], one_hot) == "confident_right"
    )
    assert en.matching_preset(np.log([0.04, 0.70, 0.12, 0.08, 0.06]), one_hot) == "confident_wrong"
    # A uniform policy, whatever constant its logits share.
    assert en.matching_preset([0, 0, 0, 0, 0], one_hot) == "uniform"
    assert en.matching_preset([7, 7, 7, 7, 7], one_hot) == "uniform"
    # logits shifted by a constant: the same policy
    assert en.matching_preset([1.643, -0.120, -0.526, -0.813, -1.219], one_hot) == "confident_right"
    # Not a preset: another advantage, another policy (0.71 against 0.70: log-probabilities
    # 0.014 apart), another number of actions.
    assert en.matching_preset([0, 0, 0, 0, 0], [1, 0, 0, 0, 0.5]) is None
    assert en.matching_preset(np.log([0.71, 0.11, 0.08, 0.06, 0.04]), one_hot) is None
    assert en.matching_preset([0, 0, 0, 0], [1, 0, 0, 0]) is None
    with pytest.raises(ValueError):
        en.matching_preset([0, 0, 0], [1, 0])
