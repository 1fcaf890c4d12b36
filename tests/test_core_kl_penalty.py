"""Tests for klrl_core.kl_penalty (chapter 28, first experiment; Exercises 28.1 and 28.3).

Expected values are the chapter's printed numbers (compared at the digits it prints, with a
Monte Carlo allowance where the chapter's number is itself a sample mean), closed forms worked
by hand below, or a per-sample transcription of the chapter's update rules written here.
Nothing expected is computed with the code under test.
"""

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from klrl_core import kl_penalty as kp

# The chapter's printed results (K = 10, beta = 0.5, seed 0).
CH_KL = 0.1363
CH_EST_MEAN = (0.1367, 0.1131, 0.1358)
CH_EST_STD = (0.1138, 0.0415, 0.0673)
CH_NEG = (0.121, 0.0, 0.0)
CH_REPS = 100_000
CH_REWARD = {"k1 in the reward": 0.729, "k1 as a loss": 0.863, "k3 as a loss": 0.706}
CH_KL_RULE = {"k1 in the reward": 0.136, "k1 as a loss": 1.318, "k3 as a loss": 0.096}
CH_TV_TARGET = {"k1 in the reward": 0.000, "k1 as a loss": 0.605, "k3 as a loss": 0.034}
CH_TV_FORWARD = {"k1 in the reward": 0.034, "k1 as a loss": 0.616, "k3 as a loss": 0.001}
CH_TARGET_REWARD, CH_BEST_REWARD = 0.729, 0.863


@pytest.fixture(scope="module")
def chapter():
    return kp.run_experiment(beta=0.5, seed=0, steps=4000)


# --------------------------------------------------------------------------- setup and optima


def test_setup_is_the_chapters_prompt(chapter):
    # KL(pi* || pi_ref) printed to 4 digits; expected reward of pi* and best reward to 3
    assert kp.kl(chapter.target, chapter.pi_ref) == pytest.approx(CH_KL, abs=5e-5)
    assert float(chapter.target @ chapter.r) == pytest.approx(CH_TARGET_REWARD, abs=5e-4)
    assert float(chapter.r.max()) == pytest.approx(CH_BEST_REWARD, abs=5e-4)
    assert len(chapter.r) == 10 and chapter.pi_ref.sum() == pytest.approx(1.0)


def test_setup_draw_order():
    # pi_ref from the first K normals, then the K uniforms, of default_rng(seed)
    rng = np.random.default_rng(3)
    z = rng.normal(size=10)
    u = rng.uniform(0, 1, 10)
    s = kp.make_setup(3)
    expect = [math.exp(x) for x in z]
    tot = sum(expect)
    np.testing.assert_allclose(s.pi_ref, [e / tot for e in expect], rtol=1e-13)
    np.testing.assert_array_equal(s.r, u)


def test_target_policy_by_hand():
    # two responses: pi* ∝ (0.2 e^{0/0.5}, 0.8 e^{1/0.5}) = (0.2, 0.8 e^2)
    pi = kp.target_policy(np.array([0.2, 0.8]), np.array([0.0, 1.0]), 0.5)
    a, b = 0.2, 0.8 * math.e**2
    np.testing.assert_allclose(pi, [a / (a + b), b / (a + b)], rtol=1e-13)


def test_target_policy_tiny_beta_stays_finite():
    pi = kp.target_policy(np.full(4, 0.25), np.array([0.1, 0.9, 0.5, 0.3]), 1e-4)
    assert np.all(np.isfinite(pi)) and pi[1] == pytest.approx(1.0)


def test_forward_optimum_chapter_distance(chapter):
    # TV(pi*, forward-KL optimum) = 0.034 in the chapter
    assert kp.tv(chapter.target, chapter.forward) == pytest.approx(0.034, abs=5e-4)


def test_forward_optimum_two_responses_by_hand():
    # pi_ref = (1/2, 1/2), r = (0, 1), beta = 1: pi_k = (1/2)/(lam − r_k) with
    # 1/(2 lam) + 1/(2(lam − 1)) = 1  ->  2 lam^2 − 4 lam + 1 = 0  ->  lam = 1 + 1/sqrt(2)
    lam = 1 + 1 / math.sqrt(2)
    expect = [0.5 / lam, 0.5 / (lam - 1)]
    pi = kp.forward_kl_optimum(np.array([0.5, 0.5]), np.array([0.0, 1.0]), 1.0)
    np.testing.assert_allclose(pi, expect, rtol=1e-10)


def test_forward_optimum_is_stationary(chapter):
    pi = chapter.forward
    # d/dpi_k [E_pi r − beta KL(pi_ref || pi)] = r_k + beta pi_ref_k / pi_k: equal for all k
    grad = chapter.r + chapter.beta * chapter.pi_ref / pi
    assert np.ptp(grad) < 1e-9
    assert pi.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.all(pi > 0)

    # and it beats every nearby distribution on the forward-KL objective
    def obj(p):
        forward_kl = float(np.sum(chapter.pi_ref * np.log(chapter.pi_ref / p)))
        return float(p @ chapter.r) - chapter.beta * forward_kl

    rng = np.random.default_rng(1)
    for _ in range(20):
        d = rng.normal(size=pi.size) * 1e-4
        d -= d.mean()  # stay on the simplex
        assert obj(pi + d) <= obj(pi) + 1e-12


# --------------------------------------------------------------------------- the estimators


def test_estimator_values_by_hand():
    lr = np.array([-1.0, 0.0, 2.0])
    v = kp.estimator_values(lr)
    np.testing.assert_allclose(v[:, 0], [1.0, 0.0, -2.0])
    np.testing.assert_allclose(v[:, 1], [0.5, 0.0, 2.0])
    np.testing.assert_allclose(v[:, 2], [math.exp(-1) - 1 + 1, 0.0, math.exp(2) - 1 - 2])


def test_k1_k3_unbiased_k2_biased_two_points():
    # pi = (1/2, 1/2), pi_ref = (1/4, 3/4): rho = (1/2, 3/2)
    pi, ref = np.array([0.5, 0.5]), np.array([0.25, 0.75])
    true = 0.5 * math.log(2) + 0.5 * math.log(2 / 3)
    e_k2 = 0.5 * (0.5 * math.log(0.5) ** 2 + 0.5 * math.log(1.5) ** 2)
    vals = kp.estimator_values(np.log(ref / pi))
    means = pi @ vals
    assert means[0] == pytest.approx(true, rel=1e-12)
    assert means[2] == pytest.approx(true, rel=1e-12)  # E[rho] = 1 makes k3 unbiased
    assert means[1] == pytest.approx(e_k2, rel=1e-12)
    assert abs(means[1] - true) > 1e-3
    assert kp.kl(pi, ref) == pytest.approx(true, rel=1e-12)


def test_estimator_stats_match_the_chapter():
    reps = kp.REPS_DEFAULT
    s = kp.chapter_estimator_stats(beta=0.5, seed=0)
    assert s.reps == reps and s.n_samples == 16
    assert s.true_kl == pytest.approx(CH_KL, abs=5e-5)
    for i in range(3):
        # both this and the chapter's number are sample means: allow 4 joint standard errors
        se = CH_EST_STD[i] * math.sqrt(1 / reps + 1 / CH_REPS)
        assert s.mean[i] == pytest.approx(CH_EST_MEAN[i], abs=4 * se + 5e-5)
        # standard error of a sample std is about std / sqrt(2 n); allow generously for tails
        assert s.std[i] == pytest.approx(
            CH_EST_STD[i], abs=8 * CH_EST_STD[i] / math.sqrt(2 * reps) + 5e-5
        )
    se_neg = math.sqrt(CH_NEG[0] * (1 - CH_NEG[0]) * (1 / reps + 1 / CH_REPS))
    assert s.share_negative[0] == pytest.approx(CH_NEG[0], abs=4 * se_neg + 5e-4)
    assert s.share_negative[1] == 0.0 and s.share_negative[2] == 0.0
    # the chapter's qualitative claims: k3 spread under two thirds of k1's; k2 underestimates ~17%
    assert s.std[2] < 2 / 3 * s.std[0]
    assert 1 - s.mean[1] / s.true_kl == pytest.approx(0.17, abs=0.01)


def test_estimator_stats_exact_when_pi_is_pi_ref():
    ref = np.array([0.1, 0.2, 0.7])
    s = kp.estimator_stats(ref, ref, reps=500, rng=np.random.default_rng(0))
    assert s.true_kl == 0.0
    np.testing.assert_array_equal(s.mean, 0.0)
    np.testing.assert_array_equal(s.std, 0.0)


def test_estimate_moments_by_hand():
    """Two equally likely responses, pi = (1/2, 1/2), pi_ref = (1/4, 3/4): log rho is log(1/2)
    or log(3/2). A variable taking a or b with probability 1/2 each has mean (a + b)/2 and
    standard deviation |a - b|/2; an average of n draws has sd |a - b| / (2 sqrt(n))."""
    pi, ref = np.array([0.5, 0.5]), np.array([0.25, 0.75])
    a, b = math.log(0.5), math.log(1.5)  # log rho of the two responses
    k1 = (-a, -b)
    k2 = (a * a / 2, b * b / 2)
    k3 = (0.5 - 1 - a, 1.5 - 1 - b)  # rho - 1 - log rho, rho = 1/2, 3/2
    mean, sd = kp.estimate_moments(pi, ref, n_samples=4)
    for k, (x, y) in enumerate((k1, k2, k3)):
        assert mean[k] == pytest.approx((x + y) / 2, rel=1e-12)
        assert sd[k] == pytest.approx(abs(x - y) / (2 * math.sqrt(4)), rel=1e-12)
    # k1 and k3 are unbiased: their expectation is KL(pi || pi_ref) = (log 2 + log(2/3)) / 2
    assert mean[0] == pytest.approx((math.log(2) + math.log(2 / 3)) / 2, rel=1e-12)
    assert mean[2] == pytest.approx(mean[0], rel=1e-12)
    # a response pi never draws adds nothing, even where pi_ref puts mass
    mean3, sd3 = kp.estimate_moments([0.5, 0.5, 0.0], [0.2, 0.6, 0.2], n_samples=4)
    assert np.all(np.isfinite(mean3)) and np.all(np.isfinite(sd3))


def test_standard_error_by_hand():
    # sd / sqrt(n): 0.36 / sqrt(4000) = 0.36 / 63.2456 = 0.005692
    assert kp.standard_error(0.36, 4000) == pytest.approx(0.0056921, abs=1e-7)
    assert kp.standard_error(0.3, 9) == pytest.approx(0.1)
    np.testing.assert_allclose(kp.standard_error(np.array([0.2, 0.1, 0.0]), 100), [0.02, 0.01, 0])
    for bad in ((0.1, 0), (0.1, 2.5), (-0.1, 10), (float("nan"), 10)):
        with pytest.raises(ValueError):
            kp.standard_error(*bad)


def test_the_chapters_k1_mean_is_within_its_standard_error_of_the_kl():
    """The page's mean ± standard error of 20,000 estimates: the exact KL 0.1363 lies within
    three standard errors of k1's and k3's Monte Carlo means (k2's is biased)."""
    s = kp.chapter_estimator_stats(beta=0.5, seed=0)
    setup = kp.make_setup(0)
    target = kp.target_policy(setup.pi_ref, setup.r, 0.5)
    mean, sd = kp.estimate_moments(target, setup.pi_ref, s.n_samples)
    se = kp.standard_error(sd, s.reps)
    assert 5e-4 < se[0] < 1e-3  # about 8 × 10⁻⁴, the number
    assert mean[0] == pytest.approx(s.true_kl, rel=1e-12)
    for k in (0, 2):
        assert abs(s.mean[k] - s.true_kl) <= 3 * se[k]
    assert abs(s.mean[1] - mean[1]) <= 3 * se[1]  # k2 is near its own expectation


# --------------------------------------------------------------------------- the training rules


def test_trained_policies_match_the_chapter(chapter):
    rows = {row["policy"]: row for row in chapter.summary_rows()}
    for rule in kp.RULES:
        row = rows[rule]
        assert row["reward"] == pytest.approx(CH_REWARD[rule], abs=0.0015), rule
        assert row["kl_to_ref"] == pytest.approx(CH_KL_RULE[rule], abs=0.004), rule
        assert row["tv_to_target"] == pytest.approx(CH_TV_TARGET[rule], abs=0.003), rule
        assert row["tv_to_forward"] == pytest.approx(CH_TV_FORWARD[rule], abs=0.003), rule
    # the convergence claims themselves
    assert rows["k1 in the reward"]["tv_to_target"] < 1e-6
    assert rows["k3 as a loss"]["tv_to_forward"] < 0.005
    assert chapter.policies[1].argmax() == chapter.r.argmax()
    assert chapter.policies[1].max() > 0.95


def test_trained_policies_are_distributions(chapter):
    assert chapter.policies.shape == (3, 10)
    np.testing.assert_allclose(chapter.policies.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(chapter.policies > 0)


class FixedCounts:
    """A stand-in generator whose multinomial returns counts chosen by the test."""

    def __init__(self, counts):
        self.counts = np.asarray(counts)
        self.calls = 0

    def multinomial(self, n, pvals):
        self.calls += 1
        assert np.asarray(pvals).shape == self.counts.shape
        assert np.all(self.counts.sum(axis=-1) == n)
        return self.counts.copy()


def reference_step(pi_ref, r, beta, samples, lr, rule):
    """One update from pi_ref, transcribed per sample from the chapter's description."""
    K = len(pi_ref)
    pi = np.array(pi_ref, float)
    n = len(samples)
    score = [[(1.0 if k == y else 0.0) - pi[k] for k in range(K)] for y in samples]
    if rule == "k1 in the reward":
        R = [r[y] - beta * math.log(pi[y] / pi_ref[y]) for y in samples]
    else:
        R = [r[y] for y in samples]
    Rbar = sum(R) / n
    g = [sum((R[i] - Rbar) * score[i][k] for i in range(n)) / n for k in range(K)]
    if rule == "k1 as a loss":
        g = [g[k] - beta * sum(score[i][k] for i in range(n)) / n for k in range(K)]
    elif rule == "k3 as a loss":
        g = [
            g[k]
            - beta * sum((1 - pi_ref[y] / pi[y]) * score[i][k] for i, y in enumerate(samples)) / n
            for k in range(K)
        ]
    theta = [math.log(p) + lr * gk for p, gk in zip(pi_ref, g)]
    m = max(theta)
    e = [math.exp(x - m) for x in theta]
    return np.array([x / sum(e) for x in e])


def test_one_step_matches_per_sample_rule():
    # (At pi = pi_ref the penalty terms of "k1 in the reward" and "k3 as a loss" vanish; the
    # two-step test below exercises them away from the reference.)
    pi_ref = np.array([0.1, 0.2, 0.3, 0.4])
    r = np.array([0.9, 0.1, 0.5, 0.3])
    counts = np.array([[2, 1, 0, 5], [3, 3, 1, 1], [0, 4, 2, 2]])
    res = kp.train_rules(pi_ref, r, beta=0.7, steps=1, batch=8, lr=0.5, rng=FixedCounts(counts))
    for i, rule in enumerate(kp.RULES):
        samples = [k for k, c in enumerate(counts[i]) for _ in range(c)]
        np.testing.assert_allclose(
            res[i], reference_step(pi_ref, r, 0.7, samples, 0.5, rule), rtol=1e-12, err_msg=rule
        )


def test_two_steps_match_per_sample_rule():
    # the second step starts away from pi_ref, where every penalty term is active
    pi_ref = np.array([0.25, 0.25, 0.5])
    r = np.array([0.2, 1.0, 0.0])
    c1 = np.array([[1, 3, 2], [0, 4, 2], [2, 2, 2]])
    c2 = np.array([[3, 2, 1], [1, 1, 4], [4, 1, 1]])

    class TwoDraws(FixedCounts):
        def __init__(self):
            super().__init__(c1)
            self.seq = [c1, c2]

        def multinomial(self, n, pvals):
            out = self.seq[self.calls].copy()
            self.calls += 1
            return out

    beta, lr = 0.4, 0.8
    res = kp.train_rules(pi_ref, r, beta=beta, steps=2, batch=6, lr=lr, rng=TwoDraws())
    for i, rule in enumerate(kp.RULES):
        s1 = [k for k, c in enumerate(c1[i]) for _ in range(c)]
        s2 = [k for k, c in enumerate(c2[i]) for _ in range(c)]
        p1 = reference_step(pi_ref, r, beta, s1, lr, rule)
        # second step: same formula, current policy p1, reference still pi_ref
        K = len(pi_ref)
        score = [[(1.0 if k == y else 0.0) - p1[k] for k in range(K)] for y in s2]
        if rule == "k1 in the reward":
            R = [r[y] - beta * math.log(p1[y] / pi_ref[y]) for y in s2]
        else:
            R = [r[y] for y in s2]
        Rbar = sum(R) / len(s2)
        g = [sum((R[j] - Rbar) * score[j][k] for j in range(len(s2))) / len(s2) for k in range(K)]
        if rule == "k1 as a loss":
            g = [g[k] - beta * sum(score[j][k] for j in range(len(s2))) / len(s2) for k in range(K)]
        elif rule == "k3 as a loss":
            g = [
                g[k]
                - beta
                * sum((1 - pi_ref[y] / p1[y]) * score[j][k] for j, y in enumerate(s2))
                / len(s2)
                for k in range(K)
            ]
        theta = np.log(p1) + lr * np.array(g)
        expect = np.exp(theta - theta.max())
        expect /= expect.sum()
        np.testing.assert_allclose(res[i], expect, rtol=1e-10, err_msg=rule)


def test_constant_reward_keeps_regularised_rules_at_reference():
    # With equal rewards pi_ref is the optimum; "k1 in the reward" and "k3 as a loss" have an
    # exactly zero update there, whatever is sampled. "k1 as a loss" has only zero-mean noise
    # (Exercise 28.3(b)), so it wanders away.
    pi_ref = np.array([0.05, 0.15, 0.3, 0.5])
    res = kp.train_rules(pi_ref, np.full(4, 0.4), beta=0.5, steps=300, rng=np.random.default_rng(2))
    np.testing.assert_allclose(res[0], pi_ref, rtol=1e-12)
    np.testing.assert_allclose(res[2], pi_ref, rtol=1e-12)
    assert kp.tv(res[1], pi_ref) > 1e-3


def test_run_experiment_deterministic_and_seed_dependent():
    a = kp.run_experiment(seed=5, steps=200)
    b = kp.run_experiment(seed=5, steps=200)
    c = kp.run_experiment(seed=6, steps=200)
    np.testing.assert_array_equal(a.policies, b.policies)
    np.testing.assert_array_equal(a.estimators.mean, b.estimators.mean)
    assert not np.allclose(a.pi_ref, c.pi_ref)


def test_beta_moves_the_optima():
    lo = kp.run_experiment(beta=0.1, seed=0, steps=100, reps=1000)
    hi = kp.run_experiment(beta=2.0, seed=0, steps=100, reps=1000)
    assert float(lo.target @ lo.r) > float(hi.target @ hi.r)
    assert kp.kl(lo.target, lo.pi_ref) > kp.kl(hi.target, hi.pi_ref)


# --------------------------------------------------------------------------- properties

prob_vectors = st.lists(st.floats(0.01, 10.0), min_size=2, max_size=12).map(
    lambda w: np.array(w) / np.sum(w)
)


@given(st.lists(st.floats(-30, 30, allow_nan=False), min_size=1, max_size=50))
def test_k2_k3_never_negative(log_rho):
    v = kp.estimator_values(np.array(log_rho))
    assert np.all(v[:, 1] >= 0)
    assert np.all(v[:, 2] >= 0)  # rho − 1 − log rho >= 0 pointwise (log x <= x − 1)


@given(prob_vectors, st.integers(0, 2**32 - 1))
def test_tv_in_unit_interval(p, seed):
    q = np.random.default_rng(seed).dirichlet(np.ones(p.size))
    d = kp.tv(p, q)
    assert 0.0 <= d <= 1.0
    assert kp.tv(p, p) == 0.0
    assert kp.kl(p, q) >= -1e-12


@settings(max_examples=200, deadline=None)
@given(prob_vectors, st.floats(0.01, 20.0), st.integers(0, 2**32 - 1))
def test_forward_optimum_is_a_distribution(pi_ref, beta, seed):
    r = np.random.default_rng(seed).uniform(-1, 2, pi_ref.size)
    pi = kp.forward_kl_optimum(pi_ref, r, beta)
    assert np.all(np.isfinite(pi)) and np.all(pi > 0)
    assert pi.sum() == pytest.approx(1.0, abs=1e-12)
    grad = r + beta * pi_ref / pi
    assert np.ptp(grad) <= 1e-6 * max(1.0, float(np.abs(grad).max()))
    # more reward -> more probability relative to the reference
    ratio = pi / pi_ref
    order = np.argsort(r)
    assert np.all(np.diff(ratio[order]) >= -1e-12)


@given(prob_vectors, st.floats(0.01, 20.0), st.integers(0, 2**32 - 1))
def test_target_is_a_distribution(pi_ref, beta, seed):
    r = np.random.default_rng(seed).uniform(0, 1, pi_ref.size)
    pi = kp.target_policy(pi_ref, r, beta)
    assert pi.sum() == pytest.approx(1.0, abs=1e-12) and np.all(pi >= 0)


# --------------------------------------------------------------------------- reading the results
# (what the page says about a run: pinned by hand, by enumeration and by plain loops)


def test_optima_apart_two_responses_by_hand():
    """pi_ref = (1/2, 1/2), r = (0, 1). pi* = (1, e^{1/beta}) / (1 + e^{1/beta}). The forward-KL
    optimum pi_k = beta/2 / (lam - r_k) with sum 1: lam^2 - (1 + beta) lam + beta/2 = 0, the
    root above max r = 1. TV on two responses is |pi*_0 - pi_0|."""
    ref, r = np.array([0.5, 0.5]), np.array([0.0, 1.0])
    betas = [0.25, 1.0, 4.0]
    got = kp.optima_apart(ref, r, betas)
    for b, tv in zip(betas, got):
        lam = ((1 + b) + math.sqrt((1 + b) ** 2 - 2 * b)) / 2
        forward0 = b / 2 / lam
        target0 = 1 / (1 + math.exp(1 / b))
        assert tv == pytest.approx(abs(target0 - forward0), rel=1e-9, abs=1e-12)
    # beta = 1: lam = 1 + sqrt(1/2), pi_0 = 0.29289, pi*_0 = 0.26894
    assert got[1] == pytest.approx(0.29289322 - 0.26894142, abs=1e-7)
    assert kp.optima_apart(ref, np.array([0.3, 0.3]), [0.5, 2.0]).tolist() == [0.0, 0.0]


def test_furthest_on_log_scale_by_hand():
    # log(p/q) = (log 2, log 0.6, log 0.8): the first is furthest, p/q = 2 there
    i, ratio = kp.furthest_on_log_scale([0.5, 0.3, 0.2], [0.25, 0.5, 0.25])
    assert (i, ratio) == (0, pytest.approx(2.0))
    # a small probability far below: log 0.02 outweighs log 1.98
    i, ratio = kp.furthest_on_log_scale([0.01, 0.99], [0.5, 0.5])
    assert (i, ratio) == (0, pytest.approx(0.02))
    # on a linear scale the second differs more (0.3 against 0.009): the log scale decides
    i, _ = kp.furthest_on_log_scale([0.001, 0.7, 0.299], [0.01, 0.4, 0.59])
    assert i == 0


def _stats(mean, std, share_negative, reps, n, true_kl):
    return kp.EstimatorStats(
        true_kl=true_kl,
        mean=np.array(mean),
        std=np.array(std),
        share_negative=np.array(share_negative),
        reps=reps,
        n_samples=n,
    )


def test_estimator_check_by_enumeration():
    """pi = (1/2, 1/2), pi_ref = (0.8, 0.2), n = 2: the exact law of a 2-sample average is
    enumerated over the counts (2, 0), (1, 1), (0, 2), with chances 1/4, 1/2, 1/4."""
    pi, ref, n, reps = [0.5, 0.5], [0.8, 0.2], 2, 200
    logs = [math.log(0.8 / 0.5), math.log(0.2 / 0.5)]  # log rho
    per = [(-x, x * x / 2, math.expm1(x) - x) for x in logs]  # k1, k2, k3 per response
    true_kl = 0.5 * math.log(0.5 / 0.8) + 0.5 * math.log(0.5 / 0.2)
    laws = [((2, 0), 0.25), ((1, 1), 0.5), ((0, 2), 0.25)]
    mean_e, sd_e = [], []
    for k in range(3):
        avg = [(c0 * per[0][k] + c1 * per[1][k]) / n for (c0, c1), _ in laws]
        m = sum(a * p for a, (_, p) in zip(avg, laws))
        mean_e.append(m)
        sd_e.append(math.sqrt(sum((a - m) ** 2 * p for a, (_, p) in zip(avg, laws))))
    table_mean = [true_kl + 0.01, true_kl + 0.2, true_kl - 0.002]
    c = kp.estimator_check(
        pi, ref, _stats(table_mean, [0.3, 0.1, 0.2], [0.125, 0, 0], reps, n, true_kl)
    )
    np.testing.assert_allclose(c.bias, [0.01, 0.2, -0.002], atol=1e-12)
    np.testing.assert_allclose(c.exact_bias, [m - true_kl for m in mean_e], atol=1e-12)
    assert abs(c.exact_bias[0]) < 1e-12 and abs(c.exact_bias[2]) < 1e-12  # k1, k3 unbiased
    np.testing.assert_allclose(c.exact_sd, sd_e, rtol=1e-12)
    se = [s / math.sqrt(reps) for s in sd_e]
    np.testing.assert_allclose(c.se, se, rtol=1e-12)
    np.testing.assert_allclose(c.z, [0.01 / se[0], 0.2 / se[1], 0.002 / se[2]], rtol=1e-9)
    assert c.within.tolist() == [0.01 / se[0] <= 3, 0.2 / se[1] <= 3, 0.002 / se[2] <= 3]
    assert c.within.tolist() == [True, False, True]
    assert c.n_negative == 25  # 12.5% of 200
    assert c.p_positive == 0.5  # only the second response: pi > pi_ref


def test_estimator_check_edges():
    # pi = pi_ref: every estimate is exactly 0, no spread: z is 0 (not 0/0) and all within
    ref = [0.2, 0.3, 0.5]
    c = kp.estimator_check(ref, ref, _stats([0, 0, 0], [0, 0, 0], [0, 0, 0], 100, 4, 0.0))
    assert c.z.tolist() == [0.0, 0.0, 0.0] and c.within.all()
    assert c.p_positive == 0.0 and c.n_negative == 0
    # within: up to three standard errors (or the threshold given), either sign
    pi, ref = [0.5, 0.5], [0.25, 0.75]
    se0 = abs(math.log(0.5) - math.log(1.5)) / (2 * math.sqrt(4)) / math.sqrt(100)
    kl_ = 0.5 * math.log(2) + 0.5 * math.log(2 / 3)
    for z, within in ((2.999, True), (-2.999, True), (3.001, False), (-3.001, False)):
        stats = _stats([kl_ + z * se0, kl_, kl_], [1, 1, 1], [0.004, 0, 0], 100, 4, kl_)
        assert kp.estimator_check(pi, ref, stats).within[0] == within
        assert kp.estimator_check(pi, ref, stats, z_mc=2.9).within[0] == (abs(z) < 2.9)
    assert kp.estimator_check(pi, ref, stats).n_negative == 0  # 0.4 rounds to 0
    # 29 of 100 negative: the share 0.29 times 100 is 28.999999999999996 in floating point
    stats = _stats([kl_, kl_, kl_], [1, 1, 1], [0.29, 0, 0], 100, 4, kl_)
    assert kp.estimator_check(pi, ref, stats).n_negative == 29


def _tail_by_loops(pi, ref, n, reps):
    """The same reading, response by response (a second implementation)."""
    drawn = [k for k in range(len(pi)) if pi[k] > 0]
    k3 = {k: ref[k] / pi[k] - 1 - math.log(ref[k] / pi[k]) for k in drawn}
    i = max(drawn, key=lambda k: pi[k] * k3[k] ** 2)
    mean = sum(pi[k] * k3[k] for k in drawn)
    parts = {k: pi[k] * (k3[k] - mean) ** 2 for k in drawn}
    p_batch = 1 - (1 - pi[i]) ** n
    return dict(
        index=i,
        rho=ref[i] / pi[i],
        one_sample=k3[i] / n,
        expected_batches=reps * p_batch,
        p_never=(1 - p_batch) ** reps,
        variance_share=parts[i] / (sum(parts.values()) or math.nan),
        largest_share=max(parts, key=parts.get) == i,
        variance=sum(parts.values()),
        top=max(k3.values()),
    )


def test_heavy_tail_by_hand():
    """pi = (0.9, 0.09, 0.01), pi_ref = (0.3, 0.3, 0.4): rho = (1/3, 10/3, 40) and k3 =
    rho - 1 - log rho = (0.4319, 1.1294, 35.311); pi·k3² = (0.168, 0.115, 12.47), so the third
    response is the tail. One sample of it adds 35.311/16 = 2.207; a batch of 16 holds it with
    chance 1 - 0.99^16 = 0.14854, so 2,970.8 of 20,000 batches; it gives 11.880 of k3's
    variance 12.040 (98.7%)."""
    t = kp.heavy_tail([0.9, 0.09, 0.01], [0.3, 0.3, 0.4], 16, 20_000)
    assert t.index == 2 and t.rho == pytest.approx(40.0)
    assert t.one_sample == pytest.approx(35.3111 / 16, abs=1e-4)
    assert t.expected_batches == pytest.approx(20_000 * (1 - 0.99**16), rel=1e-12)
    assert t.expected_batches == pytest.approx(2970.8, abs=0.1)
    assert t.p_never < 1e-300
    assert t.variance_share == pytest.approx(0.9867, abs=1e-4) and t.largest_share
    # three batches of two draws, a response of chance 0.1: held by one batch with chance
    # 1 - 0.81 = 0.19, expected in 0.57 of them, in none with chance 0.81³ = 0.531441
    t = kp.heavy_tail([0.1, 0.9], [0.9, 0.1], 2, 3)
    assert t.index == 0 and t.expected_batches == pytest.approx(0.57)
    assert t.p_never == pytest.approx(0.531441)
    # a likely tail: 1 - 0.25^28 rounds to 1, so no batch misses it (no log of 0)
    t = kp.heavy_tail([0.0, 0.25, 0.75], [1 / 3] * 3, 28, 1)
    assert (t.index, t.expected_batches, t.p_never) == (2, 1.0, 0.0)


def _two_vectors(k):
    w = st.lists(st.floats(0.01, 10.0), min_size=k, max_size=k).map(
        lambda v: np.array(v) / np.sum(v)
    )
    return st.tuples(w, w)


@settings(max_examples=100, deadline=None)
@given(
    st.integers(2, 10).flatmap(_two_vectors),
    st.integers(1, 64),
    st.integers(1, 100_000),
    st.booleans(),
)
def test_heavy_tail_matches_a_plain_loop(vectors, n, reps, drop_first):
    pi, ref = vectors
    if drop_first and pi.size > 2:  # a response pi never samples is left out
        pi = np.concatenate([[0.0], pi[1:] / pi[1:].sum()])
    want = _tail_by_loops(pi.tolist(), ref.tolist(), n, reps)
    second = sorted(
        (p * (r / p - 1 - math.log(r / p)) ** 2 for p, r in zip(pi, ref) if p > 0), reverse=True
    )
    assume(second[0] > second[1] * (1 + 1e-9))  # no near-tie for the tail response
    # k3 without variance beyond rounding (pi = pi_ref, say): its shares are 0/0
    assume(want["variance"] > 1e-9 * want["top"] ** 2)
    got = kp.heavy_tail(pi, ref, n, reps)
    assert got.index == want["index"]
    assert got.rho == pytest.approx(want["rho"], rel=1e-9)
    assert got.one_sample == pytest.approx(want["one_sample"], rel=1e-9)
    assert got.expected_batches == pytest.approx(want["expected_batches"], rel=1e-6)
    assert got.p_never == pytest.approx(want["p_never"], rel=1e-6, abs=1e-300)
    assert got.variance_share == pytest.approx(want["variance_share"], rel=1e-6, abs=1e-12)


def test_summary_is_keyed_by_policy(chapter):
    rows = chapter.summary_rows()
    assert list(chapter.summary()) == [row["policy"] for row in rows]
    assert chapter.summary()["k1 as a loss"] == rows[4]
