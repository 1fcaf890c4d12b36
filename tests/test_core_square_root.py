"""Tests for klrl_core.square_root (Exercise 12.3, Section 12.5.4; Chapter 28's Gao et al. forms).

References written out here: the book model rebuilt from its definition with math (r_i = i/29,
Gaussian pi0 at 0.3 with width 0.17), log Z by math.fsum and its finite differences, the
exact tilt by plain loops, and least squares by the normal equations solved by hand.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from klrl_core import best_of_n, model
from klrl_core import square_root as sq

SETTINGS = settings(max_examples=50, deadline=None)


# --------------------------------------------------------------------------- references


def book_model():
    r = [i / 29 for i in range(30)]
    w = [math.exp(-((x - 0.3) ** 2) / (2 * 0.17**2)) for x in r]
    s = math.fsum(w)
    return r, [x / s for x in w]


def ref_log_z(pi0, r, kappa):
    return math.log(math.fsum(p * math.exp(kappa * x) for p, x in zip(pi0, r)))


def ref_tilt(pi0, r, kappa):
    """(E_{pi*}[r], KL(pi* || pi0)) by loops."""
    w = [p * math.exp(kappa * x) for p, x in zip(pi0, r)]
    z = math.fsum(w)
    pi = [x / z for x in w]
    e = math.fsum(p * x for p, x in zip(pi, r))
    kl = math.fsum(p * math.log(p / q) for p, q in zip(pi, pi0) if p > 0)
    return e, kl


def ref_lstsq(x1, x2, y):
    """min ||y - a x1 + b x2|| (so y ~ a x1 - b x2) by the 2x2 normal equations."""
    s11 = math.fsum(a * a for a in x1)
    s22 = math.fsum(b * b for b in x2)
    s12 = math.fsum(a * b for a, b in zip(x1, x2))
    t1 = math.fsum(a * c for a, c in zip(x1, y))
    t2 = math.fsum(b * c for b, c in zip(x2, y))
    det = s11 * s22 - s12 * s12
    a = (t1 * s22 - t2 * s12) / det
    b_neg = (s11 * t2 - s12 * t1) / det
    return a, -b_neg


@pytest.fixture(scope="module")
def book():
    r = model.rewards()
    return r, model.log_reference(r), model.true_reward(r)


# --------------------------------------------------------------------------- printed numbers


def test_exercise_12_3_printed(book):
    r, log_pi0, _ = book
    rr, pi0 = book_model()
    v = sq.reward_variance(log_pi0, r)
    assert round(v, 4) == 0.0249
    mu = math.fsum(p * x for p, x in zip(pi0, rr))
    assert v == pytest.approx(math.fsum(p * (x - mu) ** 2 for p, x in zip(pi0, rr)), rel=1e-12)
    so = sq.second_order(log_pi0, r, 1.0)
    assert round(so.gain, 4) == 0.0249 and round(so.kl, 4) == 0.0124
    e, kl = ref_tilt(pi0, rr, 1.0)
    assert round(e - mu, 4) == 0.0253 and round(kl, 4) == 0.0128
    assert so.expected == pytest.approx(mu + v, rel=1e-13)


# --------------------------------------------------------------------------- the expansion


def test_finite_differences_of_log_z(book):
    r, log_pi0, _ = book
    rr, pi0 = book_model()
    h = 1e-3
    lz = [ref_log_z(pi0, rr, k) for k in (-h, 0.0, h)]
    d1 = (lz[2] - lz[0]) / (2 * h)
    d2 = (lz[2] - 2 * lz[1] + lz[0]) / h**2
    so = sq.second_order(log_pi0, r, 1.0)
    # d/dkappa log Z at 0 = mu, d2/dkappa2 log Z at 0 = Var_pi0(r): the expansion's coefficients.
    assert d1 == pytest.approx(so.expected - so.gain, rel=1e-6)
    assert d2 == pytest.approx(sq.reward_variance(log_pi0, r), rel=1e-5)
    # At kappa = 1, d/dkappa log Z = E_{pi*}[r] (Section 12.3.3, step 1).
    d1_at_1 = (ref_log_z(pi0, rr, 1 + h) - ref_log_z(pi0, rr, 1 - h)) / (2 * h)
    assert d1_at_1 == pytest.approx(ref_tilt(pi0, rr, 1.0)[0], rel=1e-6)


def test_small_kappa_limits(book):
    r, log_pi0, _ = book
    rr, pi0 = book_model()
    mu = math.fsum(p * x for p, x in zip(pi0, rr))
    errs = []
    for kappa in (1e-1, 1e-2, 1e-3):
        e, kl = ref_tilt(pi0, rr, kappa)
        so = sq.second_order(log_pi0, r, kappa)
        # gain/kappa -> v and KL/kappa^2 -> v/2, each with an O(kappa) relative error.
        assert (e - mu) / so.gain == pytest.approx(1.0, abs=2 * kappa)
        assert kl / so.kl == pytest.approx(1.0, abs=2 * kappa)
        errs.append(abs((e - mu) - sq.sqrt_law(0.0, sq.reward_variance(log_pi0, r), kl)) / (e - mu))
    # The square-root law's relative error shrinks in proportion to kappa.
    assert errs[0] / errs[1] == pytest.approx(10, rel=0.1)
    assert errs[1] / errs[2] == pytest.approx(10, rel=0.1)


def test_second_order_vectorised_and_zero(book):
    r, log_pi0, _ = book
    # Unnormalised log weights give the same answers (both renormalise).
    v = sq.reward_variance(log_pi0, r)
    assert sq.reward_variance(log_pi0 + 3.0, r) == pytest.approx(v, rel=1e-13)
    assert sq.second_order(log_pi0 - 2.0, r, 1.0).kl == pytest.approx(v / 2, rel=1e-13)
    so = sq.second_order(log_pi0, r, np.array([0.0, 1.0, 2.0]))
    v = sq.reward_variance(log_pi0, r)
    np.testing.assert_allclose(so.gain, [0.0, v, 2 * v], rtol=1e-15)
    np.testing.assert_allclose(so.kl, [0.0, v / 2, 2 * v], rtol=1e-15)


def test_sqrt_law_formula():
    assert sq.sqrt_law(0.3, 0.02, 0.5) == pytest.approx(0.3 + math.sqrt(0.02), rel=1e-15)
    np.testing.assert_allclose(sq.sqrt_law(1.0, 2.0, np.array([0.0, 1.0, 4.0])), [1.0, 3.0, 5.0])
    # On the book model at beta = 1: mu + sqrt(2 v KL_exact) = mu + 0.0252 against 0.0253 exact.
    rr, pi0 = book_model()
    mu = math.fsum(p * x for p, x in zip(pi0, rr))
    v = math.fsum(p * (x - mu) ** 2 for p, x in zip(pi0, rr))
    e, kl = ref_tilt(pi0, rr, 1.0)
    assert round(sq.sqrt_law(mu, v, kl) - mu, 4) == round(math.sqrt(2 * v * kl), 4) == 0.0252


@SETTINGS
@given(st.lists(st.floats(1e-4, 1.0), min_size=2, max_size=8), st.data(), st.floats(-100, 100))
def test_variance_and_expansion_ignore_a_reward_shift(weights, data, shift):
    r = np.array(
        data.draw(st.lists(st.floats(-1, 1), min_size=len(weights), max_size=len(weights)))
    )
    log_pi0 = np.log(np.array(weights) / np.sum(weights))
    p = np.array(weights) / np.sum(weights)
    v_ref = math.fsum(pi * (x - math.fsum(p * r)) ** 2 for pi, x in zip(p, r))
    v = sq.reward_variance(log_pi0, r)
    assert v == pytest.approx(v_ref, rel=1e-9, abs=1e-15)
    assert sq.reward_variance(log_pi0, r + shift) == pytest.approx(v, rel=1e-6, abs=1e-10)
    a, b = sq.second_order(log_pi0, r, 0.7), sq.second_order(log_pi0, r + shift, 0.7)
    assert b.gain == pytest.approx(a.gain, rel=1e-6, abs=1e-10)
    assert b.kl == pytest.approx(a.kl, rel=1e-6, abs=1e-10)


# --------------------------------------------------------------------------- Gao et al.'s forms


@pytest.mark.parametrize("scale", ["gain", "ratio"])
def test_fits_recover_their_own_forms(scale):
    d = np.linspace(0.0, 3.0, 40)
    fb = sq.fit_gao_bon(d, d * (0.31 - 0.088 * d), scale)
    assert (fb.alpha, fb.beta) == pytest.approx((0.31, 0.088), abs=1e-12)
    assert fb.r2 == pytest.approx(1.0, abs=1e-12) and fb.rms < 1e-13
    with np.errstate(divide="ignore", invalid="ignore"):
        g = np.where(d > 0, d * (0.26 - 0.19 * np.log(d)), 0.0)
    fr = sq.fit_gao_rl(d, g, scale)
    assert (fr.alpha, fr.beta) == pytest.approx((0.26, 0.19), abs=1e-12)
    assert fr.form == "rl" and fr.scale == scale
    np.testing.assert_allclose(fr.fitted, g, atol=1e-13)


def test_fits_match_normal_equations(book):
    r, log_pi0, r_true = book
    curve = sq.tilt_curve(log_pi0, r, r_true)
    d, gain = list(curve.d), list(curve.gain)
    fb = sq.fit_gao_bon(curve.d, curve.gain)
    assert (fb.alpha, fb.beta) == pytest.approx(ref_lstsq(d, [x * x for x in d], gain), rel=1e-9)
    dl = [x * math.log(x) if x > 0 else 0.0 for x in d]
    fr = sq.fit_gao_rl(curve.d, curve.gain)
    assert (fr.alpha, fr.beta) == pytest.approx(ref_lstsq(d, dl, gain), rel=1e-9)
    # Divided by d, with d = 0 left out: gain/d ~ alpha - beta d.
    keep = [i for i, x in enumerate(d) if x > 0]
    ones = [1.0] * len(keep)
    fr_ratio = sq.fit_gao_bon(curve.d, curve.gain, "ratio")
    assert (fr_ratio.alpha, fr_ratio.beta) == pytest.approx(
        ref_lstsq(ones, [d[i] for i in keep], [gain[i] / d[i] for i in keep]), rel=1e-9
    )
    # R^2 and rms on the gain itself.
    res = [g - f for g, f in zip(gain, fb.fitted)]
    mean = math.fsum(gain) / len(gain)
    assert fb.rms == pytest.approx(math.sqrt(math.fsum(x * x for x in res) / len(res)), rel=1e-9)
    assert fb.r2 == pytest.approx(
        1 - math.fsum(x * x for x in res) / math.fsum((g - mean) ** 2 for g in gain), rel=1e-9
    )


def test_points_at_d_zero():
    d = np.array([0.0, 0.5, 1.0, 2.0])
    gain = np.array([0.0, 0.14, 0.23, 0.3])
    ref = sq.fit_gao_bon(d[1:], gain[1:], "ratio")
    # Ratio scale: a d = 0 point is dropped whatever its gain.
    for g0 in (0.0, 5.0):
        f = sq.fit_gao_bon(d, np.r_[g0, gain[1:]], "ratio")
        assert (f.alpha, f.beta) == pytest.approx((ref.alpha, ref.beta), rel=1e-12)
    # Gain scale: its row is all zeros, so the coefficients ignore it, but its gain counts in rms.
    a = sq.fit_gao_rl(d, gain)
    b = sq.fit_gao_rl(d, np.r_[1.0, gain[1:]])
    assert (a.alpha, a.beta) == pytest.approx((b.alpha, b.beta), rel=1e-12)
    assert b.rms > a.rms
    assert sq.gao_rl(0.0, 0.3, 0.1) == 0.0 and sq.gao_bon(0.0, 0.3, 0.1) == 0.0
    assert sq.gao_rl(math.e, 0.3, 0.1) == pytest.approx(math.e * 0.2, rel=1e-15)
    assert sq.gao_bon(2.0, 0.3, 0.1) == pytest.approx(0.2, rel=1e-15)


def test_curves(book):
    r, log_pi0, r_true = book
    rr, pi0 = book_model()
    mu_true = math.fsum(p * (x - 2.4 * max(x - 0.5, 0) ** 2) for p, x in zip(pi0, rr))
    # Tilt at kappa = 5: the true gain by loops.
    w = [p * math.exp(5 * x) for p, x in zip(pi0, rr)]
    z = math.fsum(w)
    true5 = math.fsum(wi / z * (x - 2.4 * max(x - 0.5, 0) ** 2) for wi, x in zip(w, rr))
    c = sq.tilt_curve(log_pi0, r, r_true, kappas=[0.0, 5.0])
    assert c.gain[0] == pytest.approx(0.0, abs=1e-15) and c.d[0] == 0.0
    assert c.gain[1] == pytest.approx(true5 - mu_true, rel=1e-10)
    assert c.kl[1] == pytest.approx(ref_tilt(pi0, rr, 5.0)[1], rel=1e-10)
    # Best-of-2 by hand: pi_2(y) = F(y)^2 - F(y-)^2 (distinct rewards).
    cdf = np.cumsum(pi0)
    pi2 = cdf**2 - np.r_[0.0, cdf[:-1]] ** 2
    b = sq.best_of_n_curve(log_pi0, r, r_true, ns=[1, 2])
    assert b.d[0] == pytest.approx(0.0, abs=1e-7) and b.gain[0] == pytest.approx(0.0, abs=1e-15)
    assert b.gain[1] == pytest.approx(float(pi2 @ r_true) - mu_true, rel=1e-10)
    # Evenly in d: the solved n and kappa give back the asked d.
    for fn, method in ((sq.best_of_n_curve, "best_of_n"), (sq.tilt_curve, "tilt")):
        d = np.linspace(0.0, sq.max_d(log_pi0, r, method), 50)
        curve = fn(log_pi0, r, r_true, d=d)
        np.testing.assert_allclose(curve.d, d, atol=1e-9)
    assert sq.max_d(log_pi0, r, "best_of_n") == pytest.approx(
        math.sqrt(best_of_n.best_of_n(log_pi0, r, 2.0**17).kl), rel=1e-14
    )


def test_model_fit_quality_readout(book):
    """The numbers the report quotes (d evenly spaced, 201 points, gain scale)."""
    r, log_pi0, r_true = book
    out = {}
    for fn, method in ((sq.best_of_n_curve, "best_of_n"), (sq.tilt_curve, "tilt")):
        d = np.linspace(0.0, sq.max_d(log_pi0, r, method), 201)
        c = fn(log_pi0, r, r_true, d=d)
        out[method] = (sq.fit_gao_bon(c.d, c.gain), sq.fit_gao_rl(c.d, c.gain))
    # Both curves rise then fall; the best-of-n form fits both far better than the RL form.
    for bon_fit, rl_fit in out.values():
        assert bon_fit.r2 > 0.95 and rl_fit.r2 < 0.9
        assert bon_fit.alpha > 0 and bon_fit.beta > 0 and rl_fit.beta > 0


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "call",
    [
        lambda: sq.reward_variance(np.log([0.5, 0.5]), np.array([0.0, 1.0, 2.0])),
        lambda: sq.reward_variance(np.log([0.5, 0.5]), np.array([0.0, np.nan])),
        lambda: sq.second_order(np.log([0.5, 0.5]), np.array([0.0, 1.0]), -1.0),
        lambda: sq.sqrt_law(0.0, -1.0, 1.0),
        lambda: sq.sqrt_law(0.0, 1.0, -1.0),
        lambda: sq.fit_gao_bon([0.0, 1.0], [0.0, 1.0]),
        lambda: sq.fit_gao_bon([1.0, 2.0], [0.0]),
        lambda: sq.fit_gao_rl([-1.0, 1.0, 2.0], [0.0, 1.0, 2.0]),
        lambda: sq.fit_gao_rl([1.0, 2.0, 3.0], [0.0, np.inf, 2.0]),
        lambda: sq.fit_gao_bon([0.5, 1.0, 2.0], [0.1, 0.2, 0.3], scale="log"),
        lambda: sq.tilt_curve(
            np.log([0.5, 0.5]), np.array([0.0, 1.0]), np.array([0.0, 1.0]), d=[5.0]
        ),
        lambda: sq.max_d(np.log([0.5, 0.5]), np.array([0.0, 1.0]), "ppo"),
    ],
)
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()
