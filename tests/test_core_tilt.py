"""Tests for klrl_core.model and klrl_core.tilt (Figures 12.2 and 12.5, Sections 12.3, 12.4, 12.8.1).

Expected values are either the chapter's printed numbers (compared at the digits it prints)
or come from ``ref_tilt`` below: a direct transcription of Equation (12.4) and of the
definition of KL as a sum, evaluated in 60-digit decimal arithmetic. Nothing expected is
computed with the code under test.
"""

import math
from decimal import Decimal, localcontext

import numpy as np
import pytest

from klrl_core import model, tilt

PREC = 60


# --------------------------------------------------------------------------- references


def _dec(x) -> Decimal:
    return Decimal(float(x))  # exact value of the binary float


def ref_tilt(log_pi0, r, kappa) -> dict:
    """pi* = pi0 exp(kappa r) / Z by direct sums in 60-digit decimals.

    Returns floats: pi, log_pi, expected, var (of r under pi*), kl = sum pi* log(pi*/pi0),
    log_z = log sum pi0 exp(kappa r). pi0 is renormalised from log_pi0 first.
    """
    with localcontext() as ctx:
        ctx.prec = PREC
        lq = [_dec(x) for x in log_pi0]
        rr = [_dec(x) for x in r]
        k = _dec(kappa)
        m0 = max(lq)
        s0 = sum((x - m0).exp() for x in lq)
        lq = [x - m0 - s0.ln() for x in lq]
        logits = [a + k * b for a, b in zip(lq, rr)]
        m = max(logits)
        w = [(x - m).exp() for x in logits]
        z = sum(w)
        pi = [x / z for x in w]
        log_pi = [x - m - z.ln() for x in logits]
        e = sum(p * x for p, x in zip(pi, rr))
        var = sum(p * (x - e) ** 2 for p, x in zip(pi, rr))
        kl = sum(p * (a - b) for p, a, b in zip(pi, log_pi, lq))
        return dict(
            pi=np.array([float(p) for p in pi]),
            log_pi=np.array([float(x) for x in log_pi]),
            expected=float(e),
            var=float(var),
            kl=float(kl),
            log_z=float(m + z.ln()),
        )


def ref_model():
    """The stated model of SPEC.md, built independently: r_i = i/29, Gaussian pi0 at 0.3, width 0.17."""
    with localcontext() as ctx:
        ctx.prec = PREC
        r = [Decimal(i) / 29 for i in range(30)]
        logits = [-((x - Decimal("0.3")) ** 2) / (2 * Decimal("0.17") ** 2) for x in r]
        m = max(logits)
        s = sum((x - m).exp() for x in logits)
        log_pi0 = [x - m - s.ln() for x in logits]
        r_true = [x - Decimal("2.4") * max(x - Decimal("0.5"), Decimal(0)) ** 2 for x in r]
        return (
            np.array([float(x) for x in r]),
            np.array([float(x) for x in log_pi0]),
            np.array([float(x) for x in r_true]),
        )


R, LOG_PI0, R_TRUE = ref_model()
PI0 = np.exp(LOG_PI0)


def fmt(x, digits):
    return f"{float(x):.{digits}f}"


# --------------------------------------------------------------------------- the model


def test_model_matches_the_stated_model():
    np.testing.assert_allclose(model.rewards(), R, rtol=0, atol=1e-15)
    np.testing.assert_allclose(model.log_reference(model.rewards()), LOG_PI0, rtol=0, atol=1e-13)
    np.testing.assert_allclose(model.true_reward(model.rewards()), R_TRUE, rtol=0, atol=1e-15)


def test_true_reward_equals_proxy_up_to_half_and_bends_below_it_above():
    r = model.rewards()
    t = model.true_reward(r)
    assert np.array_equal(t[r <= 0.5], r[r <= 0.5])
    assert np.all(t[r > 0.5] < r[r > 0.5])
    assert t[-1] == pytest.approx(1.0 - 2.4 * 0.25, abs=1e-15)  # r* = 0.4 at the top


def test_reference_policy_chapter_numbers():
    mean = math.fsum(PI0 * R)
    var = math.fsum(PI0 * (R - mean) ** 2)
    assert fmt(mean, 3) == "0.312"
    assert fmt(var, 4) == "0.0249"
    assert f"{PI0[-1]:.2e}" == "1.74e-05"
    # and the core's tilt at kappa = 0 is this reference policy
    t = tilt.tilt(model.log_reference(model.rewards()), model.rewards(), 0.0)
    assert fmt(t.expected, 3) == "0.312" and f"{t.pi[-1]:.2e}" == "1.74e-05"


def test_logsumexp_by_hand():
    x = np.array([1000.0, 1000.0, -np.inf])
    assert model.logsumexp(x) == pytest.approx(1000.0 + math.log(2.0), abs=1e-12)
    assert model.logsumexp(np.array([-1000.0, -1000.0])) == pytest.approx(
        -1000.0 + math.log(2.0), abs=1e-12
    )
    assert model.logsumexp(np.array([-np.inf, -np.inf])) == -np.inf
    rows = np.array([[0.0, 0.0], [math.log(3.0), 0.0]])
    np.testing.assert_allclose(model.logsumexp(rows), [math.log(2.0), math.log(4.0)], atol=1e-15)


# --------------------------------------------------------------------------- Figure 12.2


@pytest.mark.parametrize(
    "kappa, kl, reward",
    [
        (1.0, "0.01", "0.34"),
        (5.0, "0.34", "0.45"),
        (10.0, "1.39", "0.59"),
        (20.0, "4.76", "0.82"),
    ],
)
def test_tilt_chapter_numbers(kappa, kl, reward):
    t = tilt.tilt(LOG_PI0, R, kappa)
    assert fmt(t.kl, 2) == kl
    assert fmt(t.expected, 2) == reward
    ref = ref_tilt(LOG_PI0, R, kappa)
    assert float(t.kl) == pytest.approx(ref["kl"], rel=1e-12, abs=1e-15)
    assert float(t.expected) == pytest.approx(ref["expected"], rel=1e-13)
    np.testing.assert_allclose(t.pi, ref["pi"], rtol=1e-12, atol=1e-300)


def test_beta_is_one_over_kappa_and_the_default_readout():
    # the page's default: kappa 5 (beta 0.2): KL 0.34 nats, reward 0.45, under pi0 0.31
    t = tilt.tilt(LOG_PI0, R, 1.0 / 0.2)
    assert (fmt(t.kl, 2), fmt(t.expected, 2), fmt(PI0 @ R, 2)) == ("0.34", "0.45", "0.31")


def test_exercise_12_3_square_root_law_at_beta_one():
    mean = math.fsum(PI0 * R)
    v = math.fsum(PI0 * (R - mean) ** 2)
    t = tilt.tilt(LOG_PI0, R, 1.0)
    gain = float(t.expected) - mean
    assert fmt(gain, 4) == "0.0253"
    assert fmt(t.kl, 4) == "0.0128"
    # the second-order approximations the solution prints: gain kappa v, KL kappa^2 v / 2
    assert fmt(1.0 * v, 4) == "0.0249" and fmt(0.5 * v, 4) == "0.0124"
    # sqrt(2 v KL) with the exact KL is within 1% of the exact gain
    approx = math.sqrt(2.0 * v * float(t.kl))
    assert approx == pytest.approx(gain, rel=0.01)


def test_square_root_law_tightens_as_kappa_shrinks():
    mean = math.fsum(PI0 * R)
    v = math.fsum(PI0 * (R - mean) ** 2)
    errors = []
    for kappa in (1.0, 0.1, 0.01):
        t = tilt.tilt(LOG_PI0, R, kappa)
        gain = float(t.expected) - mean
        errors.append(abs(math.sqrt(2.0 * v * float(t.kl)) / gain - 1.0))
    assert errors[0] > errors[1] > errors[2]
    assert errors[2] < 1e-3


def test_frontier_slope_is_beta_on_the_chapter_model():
    # "one more nat of divergence buys about beta more expected reward": finite differences
    for kappa in (1.0, 5.0, 10.0, 20.0, 100.0):
        h = 1e-3 * kappa
        lo, hi = tilt.tilt(LOG_PI0, R, kappa - h), tilt.tilt(LOG_PI0, R, kappa + h)
        slope = (hi.expected - lo.expected) / (hi.kl - lo.kl)
        assert float(slope) == pytest.approx(1.0 / kappa, rel=1e-4)


def test_frontier_is_the_tilt_at_every_kappa_of_the_grid():
    grid = tilt.kappa_grid()
    assert grid[0] == 0.0 and grid[-1] == pytest.approx(10_000.0, rel=1e-12)
    assert np.all(np.diff(grid) > 0)
    f = tilt.frontier(LOG_PI0, R, grid)
    assert f.pi.shape == (grid.size, 30) and f.kl.shape == (grid.size,)
    for i in (0, 1, 50, 120, 239):
        ref = ref_tilt(LOG_PI0, R, grid[i])
        assert float(f.expected[i]) == pytest.approx(ref["expected"], rel=1e-12)
        assert float(f.kl[i]) == pytest.approx(ref["kl"], rel=1e-10, abs=1e-15)
    assert np.all(np.diff(f.expected) >= -1e-12) and np.all(np.diff(f.kl) >= -1e-12)


def test_kl_tends_to_log_one_over_top_probability():
    # beta -> 0 keeps only the top response: KL -> log(1 / pi0(top)) = 10.96 nats, reward -> 1
    t = tilt.tilt(LOG_PI0, R, 10_000.0)
    assert float(t.kl) == pytest.approx(-LOG_PI0[-1], rel=1e-12)
    assert float(t.expected) == pytest.approx(1.0, abs=1e-12)
    assert t.pi[-1] == pytest.approx(1.0, abs=1e-12)


# --------------------------------------------------------------------------- Figure 12.5


def test_overoptimization_chapter_numbers():
    t20 = tilt.tilt(LOG_PI0, R, 20.0)
    assert (fmt(t20.kl, 2), fmt(t20.expected, 2)) == ("4.76", "0.82")
    assert fmt(tilt.expected_under(t20.pi, R_TRUE), 2) == "0.54"
    t = tilt.tilt(LOG_PI0, R, 1.0 / 0.03)
    assert fmt(t.expected, 2) == "0.94"
    assert fmt(tilt.expected_under(t.pi, R_TRUE), 2) == "0.46"
    assert fmt(tilt.expected_under(PI0, R_TRUE), 2) == "0.31"


def _ref_true_curve(kappas):
    """E_{pi*}[r_true] on a grid by a plain softmax, written here."""
    logits = LOG_PI0[None, :] + np.asarray(kappas)[:, None] * R[None, :]
    logits -= logits.max(axis=1, keepdims=True)
    w = np.exp(logits)
    pi = w / w.sum(axis=1, keepdims=True)
    return pi @ R_TRUE


def test_true_reward_peak_chapter_numbers_and_it_is_the_maximum():
    kappa, t = tilt.true_reward_peak(LOG_PI0, R, R_TRUE)
    peak = float(tilt.expected_under(t.pi, R_TRUE))
    assert fmt(peak, 2) == "0.55"
    assert fmt(t.kl, 1) == "3.2"
    # independently: a dense grid never beats it, and its argmax is next to the returned kappa
    grid = np.linspace(0.0, 200.0, 40_001)
    curve = _ref_true_curve(grid)
    assert peak >= curve.max() - 1e-12
    assert kappa == pytest.approx(grid[np.argmax(curve)], abs=0.01)
    # the tilt it returns is the tilt at that kappa
    ref = ref_tilt(LOG_PI0, R, kappa)
    assert float(t.kl) == pytest.approx(ref["kl"], rel=1e-10)


def test_true_reward_peak_is_the_global_maximum_when_the_curve_has_two_bumps():
    log_pi0 = np.log(np.array([0.9, 0.0999, 0.0001 - 1e-12, 1e-12]))
    r = np.array([0.0, 1.0, 2.0, 3.0])
    r_true = np.array([0.0, 1.0, 0.0, 2.0])
    _, t = tilt.true_reward_peak(log_pi0, r, r_true)
    grid = np.linspace(0.0, 200.0, 20_001)
    best = max(float(ref_tilt(log_pi0, r, k)["pi"] @ r_true) for k in grid[::400])
    assert float(t.pi @ r_true) >= best - 1e-9


def test_true_reward_peak_when_true_reward_keeps_rising():
    # r_true = r: no interior peak; the best is at the largest kappa, reward -> top reward
    _, t = tilt.true_reward_peak(LOG_PI0, R, R)
    assert float(t.pi @ R) == pytest.approx(1.0, abs=1e-6)


# --------------------------------------------------------------------------- Exercise 12.1, Example 12.1, 12.3.1

EX121_LOG = np.log(np.array([0.7, 0.2, 0.1]))
EX121_R = np.array([0.0, 1.0, 2.0])


def test_exercise_12_1_by_hand():
    t = tilt.tilt(EX121_LOG, EX121_R, 1.0)
    assert [fmt(p, 3) for p in t.pi] == ["0.353", "0.274", "0.373"]
    assert fmt(t.expected, 3) == "1.020"
    assert fmt(t.kl, 3) == "0.335"
    # Z = 0.7 + 0.2 e + 0.1 e^2 = 1.9826, log Z = 0.684, and Equation (12.6): KL = kappa E - log Z
    z = 0.7 + 0.2 * math.e + 0.1 * math.e**2
    assert fmt(z, 4) == "1.9826"
    assert float(t.log_z) == pytest.approx(math.log(z), rel=1e-14)
    assert float(t.kl) == pytest.approx(float(t.expected) - math.log(z), rel=1e-12)
    np.testing.assert_allclose(t.pi, np.array([0.7, 0.2 * math.e, 0.1 * math.e**2]) / z, rtol=1e-14)


def test_exercise_12_1_limits():
    t0 = tilt.tilt(EX121_LOG, EX121_R, 0.0)
    np.testing.assert_allclose(t0.pi, [0.7, 0.2, 0.1], rtol=0, atol=1e-15)
    assert float(t0.kl) == 0.0 and float(t0.expected) == pytest.approx(0.4, abs=1e-15)
    tinf = tilt.tilt(EX121_LOG, EX121_R, 10_000.0)
    np.testing.assert_allclose(tinf.pi, [0.0, 0.0, 1.0], rtol=0, atol=1e-300)
    assert fmt(tinf.kl, 3) == "2.303"
    assert float(tinf.kl) == pytest.approx(math.log(10.0), rel=1e-14)
    assert float(tinf.expected) == pytest.approx(2.0, rel=1e-15)


@pytest.mark.parametrize("beta, expected", [(0.5, ["0.51", "0.25", "0.24"])])
def test_example_12_1_two_equally_rewarded_styles(beta, expected):
    log_pi0 = np.log(np.array([0.2, 0.1, 0.7]))
    t = tilt.tilt(log_pi0, np.array([1.0, 1.0, 0.0]), 1.0 / beta)
    assert [fmt(p, 2) for p in t.pi] == expected


def test_example_12_1_at_beta_tenth_and_the_ratio_is_two_at_every_beta():
    log_pi0 = np.log(np.array([0.2, 0.1, 0.7]))
    r = np.array([1.0, 1.0, 0.0])
    t = tilt.tilt(log_pi0, r, 10.0)
    assert [fmt(t.pi[0], 3), fmt(t.pi[1], 3), fmt(t.pi[2], 4)] == ["0.667", "0.333", "0.0001"]
    kappas = np.array([0.0, 0.01, 0.5, 1.0, 2.0, 10.0, 100.0, 1_000.0, 10_000.0])
    f = tilt.tilt(log_pi0, r, kappas)
    # exact in real arithmetic; in floats log pi0 + kappa r rounds at the ulp of kappa r
    ratio = f.pi[:, 0] / f.pi[:, 1]
    assert np.all(np.abs(ratio - 2.0) <= 2.0 * 8 * np.finfo(float).eps * (1.0 + kappas))


def test_two_response_example_of_12_3_1():
    log_pi0 = np.log(np.array([0.9, 0.1]))
    r = np.array([0.0, 1.0])
    assert fmt(tilt.tilt(log_pi0, r, 1.0).pi[1], 2) == "0.23"  # 0.27 / (0.27 + 0.9)
    assert fmt(tilt.tilt(log_pi0, r, 4.0).pi[1], 2) == "0.86"  # 5.5 / (5.5 + 0.9)


def test_tilting_twice_is_one_tilt_at_the_summed_kappa():
    once = tilt.tilt(LOG_PI0, R, 7.0)
    twice = tilt.tilt(tilt.tilt(LOG_PI0, R, 3.0).log_pi, R, 4.0)
    np.testing.assert_allclose(twice.pi, once.pi, rtol=1e-12)


# --------------------------------------------------------------------------- kl_divergence


def test_kl_divergence_by_hand():
    p = np.array([0.25, 0.75])
    q = np.array([0.5, 0.5])
    expected = 0.25 * math.log(0.5) + 0.75 * math.log(1.5)
    assert float(tilt.kl_divergence(np.log(p), np.log(q))) == pytest.approx(expected, rel=1e-14)
    # 0 log 0 counts as 0, and KL of a distribution with itself is 0
    lp = np.log(np.array([0.0, 0.5, 0.5]))
    lq = np.log(np.array([0.2, 0.4, 0.4]))
    with np.errstate(invalid="ignore", divide="ignore"):
        assert float(tilt.kl_divergence(lp, lq)) == pytest.approx(math.log(1.25), rel=1e-14)
    assert float(tilt.kl_divergence(lq, lq)) == 0.0


# --------------------------------------------------------------------------- extremes

EXTREME_KAPPAS = np.array([0.0, 1e-12, 1e-6, 0.5, 1.0, 20.0, 333.0, 1_000.0, 9_999.0, 10_000.0])


@pytest.mark.parametrize(
    "log_pi0, r",
    [
        (LOG_PI0, R),
        (EX121_LOG, EX121_R),
        (np.log(np.array([0.2, 0.1, 0.7])), np.array([1.0, 1.0, 0.0])),
        (
            np.array([0.0, -700.0, -700.0]) - math.log1p(2 * math.exp(-700.0)),
            np.array([0.0, 1.0, 0.999]),
        ),
    ],
)
def test_extreme_kappas_stay_finite_and_normalised(log_pi0, r):
    f = tilt.tilt(log_pi0, r, EXTREME_KAPPAS)
    for field in (f.pi, f.expected, f.kl, f.log_z):
        assert np.all(np.isfinite(field))
    assert np.all(np.abs(f.pi.sum(axis=1) - 1.0) < 1e-12)
    assert np.all(f.kl >= 0.0)
    for i, kappa in enumerate(EXTREME_KAPPAS):
        if kappa in (0.0, 1.0, 10_000.0):
            ref = ref_tilt(log_pi0, r, kappa)
            np.testing.assert_allclose(f.pi[i], ref["pi"], rtol=1e-10, atol=1e-300)
            assert float(f.kl[i]) == pytest.approx(ref["kl"], rel=1e-9, abs=1e-12)
            assert float(f.log_z[i]) == pytest.approx(ref["log_z"], rel=1e-12, abs=1e-12)


def test_kappa_zero_gives_the_reference_policy_and_zero_kl():
    t = tilt.tilt(LOG_PI0, R, 0.0)
    np.testing.assert_allclose(t.pi, PI0, rtol=1e-14, atol=0)
    np.testing.assert_allclose(t.log_pi, LOG_PI0, rtol=0, atol=1e-14)
    assert float(t.kl) == 0.0
    assert float(t.log_z) == pytest.approx(0.0, abs=1e-15)


def test_scalar_and_array_kappa_agree():
    kappas = np.array([0.0, 5.0, 20.0])
    f = tilt.tilt(LOG_PI0, R, kappas)
    assert f.pi.shape == (3, 30) and f.expected.shape == (3,)
    for i, k in enumerate(kappas):
        s = tilt.tilt(LOG_PI0, R, float(k))
        assert np.ndim(s.expected) == 0 and s.pi.shape == (30,)
        np.testing.assert_array_equal(s.pi, f.pi[i])
