"""Tests for klrl_core.bandit (Figure 12.1, section 12.1).

Expected values come from the chapter, from hand arithmetic, or from a slow
one-run-at-a-time reference written here from the update rule in SPEC.md;
none is computed with the code under test.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from klrl_core import bandit

MEANS = (1.0, 1.2, 0.8, 1.5, 1.1)


def reference_runs(n_runs, steps, lr, baseline, seed, means=MEANS):
    """Straight transcription of the update, one run and one step at a time.

    It consumes the random numbers in the documented order: a (steps, runs)
    block of uniforms, then a (steps, runs) block of standard normals.
    """
    means = np.asarray(means, dtype=float)
    best = int(np.argmax(means))
    rng = np.random.default_rng(seed)
    u = rng.random((steps, n_runs))
    z = rng.standard_normal((steps, n_runs))
    out = np.empty((n_runs, steps + 1))
    for i in range(n_runs):
        theta = [0.0] * len(means)
        b = 0.0
        for t in range(steps + 1):
            w = [math.exp(x - max(theta)) for x in theta]
            tot = sum(w)
            pi = [x / tot for x in w]
            out[i, t] = pi[best]
            if t == steps:
                break
            acc, a = 0.0, len(pi) - 1
            for j, pj in enumerate(pi):
                acc += pj
                if acc >= u[t, i]:
                    a = j
                    break
            reward = means[a] + z[t, i]
            adv = reward - b if baseline else reward
            for j in range(len(theta)):
                theta[j] += lr * adv * ((1.0 if j == a else 0.0) - pi[j])
            if baseline:
                b += 0.1 * (reward - b)
    return out


# --- the model ---------------------------------------------------------------


def test_model_constants_match_the_chapter():
    assert tuple(bandit.ARM_MEANS) == MEANS
    assert bandit.BEST_ARM == 3  # "the fourth is best"
    assert bandit.DEFAULT_LR == 0.15
    assert bandit.DEFAULT_STEPS == 300


def test_shape_and_uniform_start():
    p = bandit.simulate_reinforce(7, 30, 0.15, False, 1)
    assert p.shape == (7, 31)
    assert np.all(p[:, 0] == pytest.approx(0.2))


@pytest.mark.parametrize("baseline", [False, True])
@pytest.mark.parametrize("lr", [0.15, 0.9])
def test_matches_slow_reference(baseline, lr):
    fast = bandit.simulate_reinforce(6, 120, lr, baseline, 11)
    slow = reference_runs(6, 120, lr, baseline, 11)
    np.testing.assert_allclose(fast, slow, atol=1e-9)


def test_matches_reference_when_best_arm_is_first():
    means = (2.0, 1.0, 0.5)
    fast = bandit.simulate_reinforce(4, 60, 0.3, True, 5, arm_means=means)
    slow = reference_runs(4, 60, 0.3, True, 5, means=means)
    np.testing.assert_allclose(fast, slow, atol=1e-9)


def test_baseline_changes_the_runs():
    a = bandit.simulate_reinforce(10, 50, 0.15, False, 3)
    b = bandit.simulate_reinforce(10, 50, 0.15, True, 3)
    assert not np.allclose(a, b)


def test_huge_learning_rate_stays_finite():
    p = bandit.simulate_reinforce(30, 300, 1000.0, True, 0)
    assert np.all(np.isfinite(p))
    assert np.all((p >= 0) & (p <= 1))


@pytest.mark.parametrize(
    "kwargs",
    [dict(n_runs=0), dict(steps=-1), dict(lr=0.0), dict(lr=float("nan")), dict(lr=-1.0)],
)
def test_rejects_bad_arguments(kwargs):
    args = dict(n_runs=2, steps=5, lr=0.1, baseline=False, seed=0)
    args.update(kwargs)
    with pytest.raises(ValueError):
        bandit.simulate_reinforce(**args)


# --- the chapter's 4,000-run numbers (Monte Carlo) ------------------------------


@pytest.mark.parametrize(
    "baseline, chapter_mean, chapter_share",
    [(False, 0.73, 0.23), (True, 0.86, 0.07)],
)
def test_chapter_statistics_over_4000_runs(baseline, chapter_mean, chapter_share):
    final = bandit.simulate_reinforce(4000, 300, 0.15, baseline, seed=2024)[:, -1]
    n = final.size
    mean = final.mean()
    share = np.mean(final < 0.5)
    se_mean = final.std(ddof=1) / math.sqrt(n)
    se_share = math.sqrt(chapter_share * (1 - chapter_share) / n)
    # 4 standard errors of Monte-Carlo noise plus half a unit in the printed digit.
    assert abs(mean - chapter_mean) < 4 * se_mean + 0.005
    assert abs(share - chapter_share) < 4 * se_share + 0.005


def test_baseline_helps_on_average():
    off = bandit.simulate_reinforce(2000, 300, 0.15, False, 7)[:, -1]
    on = bandit.simulate_reinforce(2000, 300, 0.15, True, 7)[:, -1]
    assert on.mean() > off.mean() + 0.05
    assert np.mean(on < 0.5) < np.mean(off < 0.5)


def test_many_run_summary_defaults_round_like_the_chapter():
    off = bandit.many_run_summary(0.15, False)
    on = bandit.many_run_summary(0.15, True)
    assert off["n_runs"] == on["n_runs"] == 4000
    assert f"{off['mean']:.2f}" == "0.73" and f"{off['share_below']:.0%}" == "23%"
    assert f"{on['mean']:.2f}" == "0.86" and f"{on['share_below']:.0%}" == "7%"


# --- exact gradient path --------------------------------------------------------


def test_exact_gradient_first_step_by_hand():
    # From uniform pi = 1/5: pi . mu = 5.6/5 = 1.12, so theta_j moves by
    # lr * 0.2 * (mu_j - 1.12); with lr = 1 the best arm's theta moves 0.076.
    path = bandit.exact_gradient_path(steps=1, lr=1.0)
    d = 0.2 * (np.array(MEANS) - 1.12)
    expected = math.exp(d[3]) / sum(math.exp(x) for x in d)
    assert path[0] == pytest.approx(0.2)
    assert path[1] == pytest.approx(expected, rel=1e-12)


def test_exact_gradient_path_rises_and_lies_above_the_noisy_mean():
    path = bandit.exact_gradient_path(300, 0.15)
    assert path.shape == (301,)
    assert np.all(np.diff(path) > 0)
    noisy = bandit.simulate_reinforce(1000, 300, 0.15, False, 9).mean(axis=0)
    # "The average falls below the exact path."
    assert noisy[-1] < path[-1] - 0.1


# --- final_summary ----------------------------------------------------------------


def test_final_summary_by_hand():
    runs = np.array([[0.2, 0.1], [0.2, 0.6], [0.2, 0.9], [0.2, 0.4]])
    s = bandit.final_summary(runs)
    assert s["n_runs"] == 4
    assert s["mean"] == pytest.approx(0.5)
    # deviations -0.4, 0.1, 0.4, -0.1: population variance 0.34 / 4 = 0.085
    assert s["std"] == pytest.approx(math.sqrt(0.085))
    assert s["n_below"] == 2
    assert s["share_below"] == pytest.approx(0.5)
    assert s["se_share"] == pytest.approx(math.sqrt(0.25 / 4))


def test_final_summary_exactly_one_half_is_not_below():
    s = bandit.final_summary(np.array([0.5, 0.49]))
    assert s["n_below"] == 1


def test_final_summary_rejects_empty():
    with pytest.raises(ValueError):
        bandit.final_summary(np.empty((0, 3)))


# --- properties -----------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(
    n_runs=st.integers(1, 25),
    steps=st.integers(0, 60),
    lr=st.floats(0.01, 3.0),
    baseline=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_policies_are_distributions(n_runs, steps, lr, baseline, seed):
    pol = bandit.simulate_reinforce(n_runs, steps, lr, baseline, seed, return_policy=True)
    assert pol.shape == (n_runs, steps + 1, 5)
    assert np.all((pol >= 0) & (pol <= 1))
    np.testing.assert_allclose(pol.sum(axis=-1), 1.0, atol=1e-12)
    p = bandit.simulate_reinforce(n_runs, steps, lr, baseline, seed)
    assert np.all((p >= 0) & (p <= 1))
    np.testing.assert_allclose(p, pol[..., 3], atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**63), lr=st.floats(0.01, 1.0), baseline=st.booleans())
def test_seeds_reproduce(seed, lr, baseline):
    a = bandit.simulate_reinforce(5, 40, lr, baseline, seed)
    b = bandit.simulate_reinforce(5, 40, lr, baseline, seed)
    np.testing.assert_array_equal(a, b)
    c = bandit.simulate_reinforce(5, 40, lr, baseline, seed + 1)
    assert not np.array_equal(a, c)


def test_runs_do_not_depend_on_how_many_are_drawn_together_in_distribution():
    # Vectorisation must not couple runs: each run of a batch follows the same
    # law as a lone run.  Compare a batch against lone runs from other seeds.
    batch = bandit.simulate_reinforce(600, 100, 0.15, True, 1)[:, -1]
    lone = np.array(
        [bandit.simulate_reinforce(1, 100, 0.15, True, 10_000 + s)[0, -1] for s in range(600)]
    )
    se = math.sqrt(batch.var() / 600 + lone.var() / 600)
    assert abs(batch.mean() - lone.mean()) < 4 * se
