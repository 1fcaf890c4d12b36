"""Property tests for the tilt and best-of-n over random reference policies and rewards.

Reference policies come from random logits, from flat to very peaked (probabilities down to
about e^-600); rewards are continuous on [0, 1], or on two to four discrete levels (ties), or
constant. Expected values come from the decimal / enumeration references of the two other
core test files, from hand-written sums here, or from inequalities the chapter proves
(Sections 12.3.2, 12.3.3, 12.5); the kappa matching a given KL is found by a bisection here.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from klrl_core import best_of_n as bon
from klrl_core import tilt
from tests.test_core_best_of_n import enumerate_best_of_n, ref_best_of_n, ref_bound
from tests.test_core_tilt import ref_tilt

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FEW = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
EPS = np.finfo(float).eps


# --------------------------------------------------------------------------- strategies


def normalise(logits):
    logits = np.asarray(logits, dtype=float)
    m = logits.max()
    return logits - (m + math.log(math.fsum(np.exp(logits - m))))


@st.composite
def references(draw, min_k=2, max_k=30):
    """log pi0 from random logits: flat, moderate, peaked, or very peaked (one dominant response)."""
    k = draw(st.integers(min_k, max_k))
    spread = draw(st.sampled_from([0.0, 0.3, 3.0, 20.0, 100.0, 300.0]))
    u = np.array(draw(st.lists(st.floats(-1.0, 1.0), min_size=k, max_size=k)))
    if draw(st.booleans()):
        u[draw(st.integers(0, k - 1))] = 1.0  # one response dominates
    return normalise(spread * u)


@st.composite
def reward_vectors(draw, k):
    kind = draw(st.sampled_from(["continuous", "grid", "levels", "levels", "constant"]))
    if kind == "continuous":
        r = draw(st.lists(st.floats(0.0, 1.0), min_size=k, max_size=k))
    elif kind == "grid":  # continuous-looking but gaps >= 1e-3
        r = [i / 1000 for i in draw(st.lists(st.integers(0, 1000), min_size=k, max_size=k))]
    elif kind == "levels":  # ties on a few discrete levels
        n_levels = draw(st.integers(2, 4))
        r = [
            i / (n_levels - 1)
            for i in draw(st.lists(st.integers(0, n_levels - 1), min_size=k, max_size=k))
        ]
    else:
        r = [draw(st.floats(0.0, 1.0))] * k
    return np.array(r, dtype=float)


@st.composite
def problems(draw, min_k=2, max_k=30):
    log_pi0 = draw(references(min_k, max_k))
    return log_pi0, draw(reward_vectors(log_pi0.size))


def bon_problems(min_k=2, max_k=30):
    """Problems for best-of-n: the same draws, lowest levels as light as they come."""
    return problems(min_k, max_k)


kappas = st.one_of(st.just(0.0), st.floats(-6.0, 4.0).map(lambda e: 10.0**e))
ns = st.one_of(st.integers(1, 50), st.floats(0.0, 7.0).map(lambda e: int(round(10.0**e))))


def direct_kl(p, q):
    """KL(p || q) for probability vectors, by a plain sum with 0 log 0 = 0."""
    mask = p > 0
    return math.fsum(p[mask] * (np.log(p[mask]) - np.log(q[mask])))


def kappa_at_kl(log_pi0, r, target, kappa_hi=1e5):
    """Smallest kappa (to rounding) whose tilt has KL >= target, by bisection; None if out of reach."""
    if float(tilt.tilt(log_pi0, r, kappa_hi).kl) < target:
        return None
    lo, hi = 0.0, kappa_hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if float(tilt.tilt(log_pi0, r, mid).kl) < target:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-14 * hi:
            break
    return hi


# --------------------------------------------------------------------------- the tilt


@SETTINGS
@given(problems(), kappas)
def test_tilt_is_a_normalised_distribution_and_matches_the_reference(prob, kappa):
    log_pi0, r = prob
    t = tilt.tilt(log_pi0, r, kappa)
    assert np.all(np.isfinite(t.pi)) and np.isfinite(t.kl) and np.isfinite(t.expected)
    assert abs(t.pi.sum() - 1.0) < 1e-12
    assert t.kl >= 0.0
    assert r.min() - 1e-12 <= t.expected <= r.max() + 1e-12
    ref = ref_tilt(log_pi0, r, kappa)
    # log pi0 + kappa r is rounded at its own ulp, so allow errors of order eps * (kappa + |log pi0|)
    tol = 64 * EPS * (1.0 + kappa + np.abs(log_pi0).max())
    np.testing.assert_allclose(t.pi, ref["pi"], rtol=tol, atol=1e-300)
    assert abs(float(t.kl) - ref["kl"]) <= tol * (1.0 + ref["kl"] + kappa)
    assert abs(float(t.expected) - ref["expected"]) <= tol
    assert abs(float(t.log_z) - ref["log_z"]) <= tol * (1.0 + kappa)


@SETTINGS
@given(problems(), kappas)
def test_tilt_changes_no_probability_by_more_than_the_reward_range_allows(prob, kappa):
    # Section 12.3.3: log(pi*/pi0) = kappa r - log Z with kappa min r <= log Z <= kappa max r
    log_pi0, r = prob
    t = tilt.tilt(log_pi0, r, kappa)
    log_ratio = t.log_pi - log_pi0
    tol = 64 * EPS * (1.0 + kappa + np.abs(log_pi0).max())  # rounding at the size of the logs
    assert np.all(log_ratio <= kappa * (r - r.min()) + tol)
    assert np.all(log_ratio >= kappa * (r - r.max()) - tol)
    # and equally rewarded responses keep their reference odds (Section 12.4.2)
    for level in np.unique(r):
        idx = np.nonzero(r == level)[0]
        np.testing.assert_allclose(log_ratio[idx], log_ratio[idx[0]], atol=tol)


@SETTINGS
@given(problems(), st.lists(kappas, min_size=2, max_size=25))
def test_reward_and_kl_never_fall_as_kappa_grows(prob, ks):
    log_pi0, r = prob
    ks = np.sort(np.array(ks))
    f = tilt.frontier(log_pi0, r, ks)
    assert np.all(np.diff(f.expected) >= -1e-12)
    assert np.all(np.diff(f.kl) >= -1e-12 * (1.0 + f.kl[1:]))


@SETTINGS
@given(problems(), st.floats(-1.3, 1.7).map(lambda e: 10.0**e))
def test_frontier_slope_is_beta(prob, kappa):
    """d E / d KL = 1/kappa (finite differences), dE/dkappa = Var and dKL/dkappa = kappa Var (Section 12.3.3)."""
    log_pi0, r = prob
    ref = ref_tilt(log_pi0, r, kappa)
    h = 1e-3 * kappa
    assume(ref["var"] * kappa * h > 1e-9)  # the frontier actually moves here
    lo, hi = tilt.tilt(log_pi0, r, kappa - h), tilt.tilt(log_pi0, r, kappa + h)
    d_e, d_kl = float(hi.expected - lo.expected), float(hi.kl - lo.kl)
    assert d_kl > 0 and d_e > 0
    # the chord slope differs from 1/kappa by O(h^2 |third cumulant| / (kappa var)) <= O(h^2 / kappa)
    assert abs(d_e / d_kl * kappa - 1.0) <= 1e-3
    assert abs(d_e / (2 * h) / ref["var"] - 1.0) <= 1e-3
    assert abs(d_kl / (2 * h) / (kappa * ref["var"]) - 1.0) <= 1e-3


@SETTINGS
@given(problems(max_k=12), st.floats(-2.0, 2.0).map(lambda e: 10.0**e), st.data())
def test_tilt_maximises_the_penalised_objective(prob, kappa, data):
    """J(pi) = E_pi[r] - beta KL(pi || pi0) is largest at pi* (Equation 12.5), against random policies."""
    log_pi0, r = prob
    beta = 1.0 / kappa
    t = tilt.tilt(log_pi0, r, kappa)
    j_star = float(t.expected) - beta * float(t.kl)
    ref = ref_tilt(log_pi0, r, kappa)
    assert abs(j_star - beta * ref["log_z"]) <= 1e-9 * (1.0 + abs(beta * ref["log_z"]))
    pi0 = np.exp(log_pi0)
    other = normalise(data.draw(st.lists(st.floats(-20.0, 20.0), min_size=r.size, max_size=r.size)))
    q_other = np.exp(other)
    for t_mix in (1e-3, 0.1, 0.5, 1.0):
        q = (1 - t_mix) * ref["pi"] + t_mix * q_other
        q = q / math.fsum(q)
        j_q = math.fsum(q * r) - beta * direct_kl(q, pi0)
        assert j_q <= j_star + 1e-9 * (1.0 + abs(j_star))


@SETTINGS
@given(problems(max_k=12), st.floats(0.01, 1.0), st.data())
def test_no_policy_with_the_same_kl_earns_more(prob, t_mix, data):
    """Budget form (Section 12.3.2): mixtures of pi0 with any policy, and tilts by a perturbed reward,
    never beat the tilt whose KL equals theirs."""
    log_pi0, r = prob
    pi0 = np.exp(log_pi0)
    other = normalise(data.draw(st.lists(st.floats(-20.0, 20.0), min_size=r.size, max_size=r.size)))
    q_mix = (1 - t_mix) * pi0 + t_mix * np.exp(other)
    noise = np.array(data.draw(st.lists(st.floats(-0.5, 0.5), min_size=r.size, max_size=r.size)))
    k_other = data.draw(st.floats(0.1, 50.0))
    q_tilt = ref_tilt(log_pi0, r + noise, k_other)["pi"]
    for q in (q_mix / math.fsum(q_mix), q_tilt):
        budget = direct_kl(q, pi0)
        e_q = math.fsum(q * r)
        kappa = kappa_at_kl(log_pi0, r, budget)
        if kappa is None:  # beyond the frontier's reach: only the top
            assert e_q <= r.max() + 1e-12
            continue
        assert e_q <= float(tilt.tilt(log_pi0, r, kappa).expected) + 1e-9


@SETTINGS
@given(problems(), st.floats(-3.0, -0.5).map(lambda e: 10.0**e))
def test_square_root_law_near_the_reference(prob, kl_small):
    """Exercise 12.3: near pi0 the gain is about sqrt(2 v KL), v the reward variance under pi0."""
    log_pi0, r = prob
    pi0 = np.exp(log_pi0)
    mean = math.fsum(pi0 * r)
    v = math.fsum(pi0 * (r - mean) ** 2)
    assume(v > 1e-3)
    kappa = 1e-3 / math.sqrt(v)  # KL ~ kappa^2 v / 2 = 5e-7
    t = tilt.tilt(log_pi0, r, kappa)
    gain = float(t.expected) - mean
    assert math.sqrt(2.0 * v * float(t.kl)) == pytest.approx(gain, rel=1e-2)


# --------------------------------------------------------------------------- best-of-n


@st.composite
def small_problems(draw):
    """K <= 4 responses with integer reference weights (some very peaked) and rewards with ties."""
    k = draw(st.integers(1, 4))
    weights = draw(
        st.lists(st.one_of(st.integers(1, 10), st.integers(1, 10**12)), min_size=k, max_size=k)
    )
    r = draw(st.lists(st.integers(0, 3), min_size=k, max_size=k))
    return weights, [x / 3 for x in r]


@SETTINGS
@given(small_problems(), st.integers(1, 4))
def test_best_of_n_matches_enumeration_of_every_draw(prob, n):
    weights, r = prob
    total = sum(weights)
    log_pi0 = np.array([math.log(Fraction(w, total)) for w in weights])
    exact = enumerate_best_of_n(weights, r, n)
    b = bon.best_of_n(log_pi0, np.array(r), n)
    np.testing.assert_allclose(b.pi, [float(p) for p in exact], rtol=1e-12, atol=1e-15)
    assert abs(float(b.expected) - float(sum(p * Fraction(x) for p, x in zip(exact, r)))) <= 1e-12


@SETTINGS
@given(bon_problems(), ns)
def test_best_of_n_is_normalised_under_the_bound_and_matches_the_reference(prob, n):
    log_pi0, r = prob
    b = bon.best_of_n(log_pi0, r, n)
    assert np.all(np.isfinite(b.pi)) and np.isfinite(b.kl) and np.isfinite(b.expected)
    assert abs(b.pi.sum() - 1.0) < 1e-12
    assert 0.0 <= float(b.kl) <= ref_bound(n) + 1e-12
    assert float(b.bound) == pytest.approx(ref_bound(n), rel=1e-14, abs=1e-300)
    ref = ref_best_of_n(log_pi0, r, n)
    np.testing.assert_allclose(b.pi, ref["pi"], rtol=1e-8, atol=1e-13)
    assert abs(float(b.kl) - ref["kl"]) <= 1e-9 * (1.0 + ref["kl"])
    # ties keep their reference odds (compared as log-odds: the probabilities may be subnormal)
    tol = 64 * EPS * (1.0 + np.abs(b.log_pi[np.isfinite(b.log_pi)]).max())
    for level in np.unique(r):
        idx = np.nonzero(r == level)[0]
        if np.all(np.isfinite(b.log_pi[idx])):
            np.testing.assert_allclose(
                b.log_pi[idx] - b.log_pi[idx[0]], log_pi0[idx] - log_pi0[idx[0]], rtol=0, atol=tol
            )


@SETTINGS
@given(bon_problems(), st.lists(ns, min_size=2, max_size=20))
def test_best_of_n_kl_and_reward_never_fall_as_n_grows(prob, n_list):
    log_pi0, r = prob
    n_sorted = np.array(sorted(set(n_list)), dtype=float)
    b = bon.best_of_n(log_pi0, r, n_sorted)
    assert np.all(np.diff(b.kl) >= -1e-12 * (1.0 + b.kl[1:]))
    assert np.all(np.diff(b.expected) >= -1e-12)
    assert np.all(b.kl <= bon.kl_bound(n_sorted) + 1e-12)


@SETTINGS
@given(bon_problems(), ns)
def test_best_of_n_never_beats_the_tilt_at_the_same_kl(prob, n):
    """Section 12.5.3: at best-of-n's KL, the tilt earns at least as much."""
    log_pi0, r = prob
    b = bon.best_of_n(log_pi0, r, n)
    kappa = kappa_at_kl(log_pi0, r, float(b.kl))
    if kappa is None:
        assert float(b.expected) <= r.max() + 1e-12
        return
    t = tilt.tilt(log_pi0, r, kappa)
    assert float(b.expected) <= float(t.expected) + 1e-9


@FEW
@given(bon_problems(), st.floats(0.0, 1.0))
def test_matched_n_is_closest_among_its_neighbours(prob, frac):
    log_pi0, r = prob
    kl_max = -math.log(math.fsum(np.exp(log_pi0[r == r.max()])))  # KL of best-of-infinity
    target = frac * kl_max
    n = bon.matched_n(log_pi0, r, target)
    assert 1 <= n <= bon.N_MAX
    here = abs(ref_best_of_n(log_pi0, r, n)["kl"] - target)
    for m in (n - 1, n + 1):
        if 1 <= m <= bon.N_MAX:
            assert here <= abs(ref_best_of_n(log_pi0, r, m)["kl"] - target) + 1e-12
