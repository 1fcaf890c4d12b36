"""Exercise 28.3 (klrl_core.kl_penalty.estimator_gradients): the expectations by a plain-Python
enumeration of the three responses, the gradients by central finite differences."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from klrl_core import kl_penalty

PI_REF = [0.5, 0.3, 0.2]
THETA = [0.0, 0.5, -0.5]
H = 1e-6


def softmax(theta):
    e = [math.exp(t) for t in theta]
    return [x / sum(e) for x in e]


def k1(pi_y, ref_y):
    return -math.log(ref_y / pi_y)


def k3(pi_y, ref_y):
    rho = ref_y / pi_y
    return rho - 1 - math.log(rho)


def kl(p, q):
    return sum(a * math.log(a / b) for a, b in zip(p, q))


def fd(f, theta):
    out = []
    for i in range(len(theta)):
        up, dn = list(theta), list(theta)
        up[i] += H
        dn[i] -= H
        out.append((f(up) - f(dn)) / (2 * H))
    return out


def loss_gradient(k, theta, ref):
    """E_{y ~ pi_theta0}[d k(y; theta) / d theta] with the sampled y (its weights) held fixed:
    differentiate sum_y pi0(y) k(pi_theta(y)) with pi0 frozen."""
    pi0 = softmax(theta)
    return fd(lambda th: sum(w * k(p, r) for w, p, r in zip(pi0, softmax(th), ref)), theta)


def test_exercise_28_3_numbers():
    g = kl_penalty.estimator_gradients(THETA, PI_REF)
    pi = softmax(THETA)
    want = kl(pi, PI_REF)
    assert round(want, 3) == 0.102
    # (a) both estimators are unbiased: their means are the KL, by enumeration
    assert g.mean_k1 == pytest.approx(sum(p * k1(p, r) for p, r in zip(pi, PI_REF)), rel=1e-13)
    assert g.mean_k3 == pytest.approx(sum(p * k3(p, r) for p, r in zip(pi, PI_REF)), rel=1e-13)
    assert g.mean_k1 == pytest.approx(want, rel=1e-12) and g.mean_k3 == pytest.approx(
        want, rel=1e-12
    )
    assert g.kl_reverse == pytest.approx(want, rel=1e-13)
    assert g.kl_forward == pytest.approx(kl(PI_REF, pi), rel=1e-13)
    assert g.pi == pytest.approx(pi, rel=1e-14)
    # (b) k1 as a loss: zero expected gradient
    assert g.grad_k1_loss == pytest.approx([0, 0, 0], abs=1e-15)
    assert loss_gradient(k1, THETA, PI_REF) == pytest.approx([0, 0, 0], abs=1e-8)
    # (c) k3 as a loss: pi - pi_ref = grad KL(pi_ref || pi_theta)
    assert g.grad_k3_loss == pytest.approx(np.array(pi) - PI_REF, abs=1e-15)
    assert g.grad_k3_loss == pytest.approx(loss_gradient(k3, THETA, PI_REF), abs=1e-8)
    assert g.grad_k3_loss == pytest.approx(fd(lambda th: kl(PI_REF, softmax(th)), THETA), abs=1e-8)
    assert np.round(g.grad_k3_loss, 3).tolist() == [-0.193, 0.206, -0.014]
    # (d) the score-function term E[k1 grad ln pi] = grad KL(pi_theta || pi_ref)
    assert g.grad_k1_score == pytest.approx(fd(lambda th: kl(softmax(th), PI_REF), THETA), abs=1e-8)
    assert np.round(g.grad_k1_score, 3).tolist() == [-0.181, 0.213, -0.032]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(theta=st.lists(st.floats(-3, 3), min_size=2, max_size=6), data=st.data())
def test_properties(theta, data):
    ref = data.draw(st.lists(st.floats(0.05, 1), min_size=len(theta), max_size=len(theta)))
    ref = [x / sum(ref) for x in ref]
    g = kl_penalty.estimator_gradients(theta, ref)
    assert g.mean_k1 == pytest.approx(g.kl_reverse, abs=1e-12)
    assert g.mean_k3 == pytest.approx(g.kl_reverse, abs=1e-12)
    assert g.grad_k1_loss == pytest.approx(np.zeros(len(theta)), abs=1e-12)
    assert g.grad_k3_loss == pytest.approx(loss_gradient(k3, theta, ref), abs=1e-6)
    assert g.grad_k3_loss == pytest.approx(fd(lambda th: kl(ref, softmax(th)), theta), abs=1e-6)
    assert g.grad_k1_score == pytest.approx(fd(lambda th: kl(softmax(th), ref), theta), abs=1e-6)


@pytest.mark.parametrize(
    "theta, ref",
    [
        ([0, 1], [0.5, 0.3, 0.2]),
        ([0, float("nan"), 1], PI_REF),
        ([0, 1, 2], [0.5, 0.5, 0.0]),
        ([0, 1, 2], [0.5, 0.3, 0.3]),
    ],
)
def test_bad_input_is_refused(theta, ref):
    with pytest.raises(ValueError):
        kl_penalty.estimator_gradients(theta, ref)
