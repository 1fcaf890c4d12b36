"""Tests for klrl_core.ppo_clip (Equation 12.2, section 12.1.4; chapter 28's clip-higher and CISPO).

References written here: hand values of Equation (12.2), finite differences in the ratio and in
the logits, a per-sample loop for the epochs, and Monte Carlo over batches.
"""

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from klrl_core import ppo_clip as pc

omegas = st.floats(0.0, 5.0)
# no subnormal advantages: clip(omega) * 1e-320 can underflow to 0 in floating point
advs = st.one_of(st.just(0.0), st.floats(1e-9, 5.0), st.floats(-5.0, -1e-9))
eps_lo = st.floats(0.0, 0.9)
eps_hi = st.floats(0.0, 2.0)


def test_equation_12_2_hand_values():
    # A > 0: grows with omega until 1.2, then flat at 1.2 A.
    assert pc.clipped_surrogate(1.5, 2.0) == pytest.approx(2.4)
    assert pc.clipped_surrogate(1.1, 2.0) == pytest.approx(2.2)
    assert pc.clipped_surrogate(0.5, 2.0) == pytest.approx(1.0)  # below the range: unclipped
    # A < 0: flat at 0.8 A below the range, unclipped above it.
    assert pc.clipped_surrogate(0.5, -2.0) == pytest.approx(-1.6)
    assert pc.clipped_surrogate(1.5, -2.0) == pytest.approx(-3.0)
    # clip-higher [0.8, 1.28]
    assert pc.clipped_surrogate(1.5, 1.0, 0.2, 0.28) == pytest.approx(1.28)
    assert pc.clip_ratio([0.1, 1.0, 9.0], 0.2, 0.28) == pytest.approx([0.8, 1.0, 1.28])


def test_ratio_gradient_hand_values():
    assert pc.ratio_gradient([0.5, 1.0, 1.19, 1.21, 3.0], 2.0) == pytest.approx([2, 2, 2, 0, 0])
    assert pc.ratio_gradient([0.5, 0.79, 0.81, 1.0, 3.0], -2.0) == pytest.approx([0, 0, -2, -2, -2])
    assert pc.ratio_gradient(1.25, 2.0, "clip_higher") == 2.0
    # exactly at the edge the two terms agree; the module counts it as not binding
    assert not pc.clip_binds(1.2, 2.0) and pc.ratio_gradient(1.2, 2.0) == 2.0
    assert pc.ratio_gradient(1.3, 2.0, "clip_higher") == 0.0
    assert pc.ratio_gradient(7.0, 2.0, "plain") == 2.0
    # a custom eps for PPO sets both edges: [0.7, 1.3]
    assert pc.ratio_gradient(
        [1.25, 1.35, 0.75, 0.65], [2.0, 2.0, -2.0, -2.0], "ppo", 0.3
    ) == pytest.approx([2.0, 0.0, -2.0, 0.0])
    # CISPO: clip(omega) A / omega, never zero: 1.28 * 2 / 2 at omega = 2.
    assert pc.ratio_gradient(2.0, 2.0, "cispo") == pytest.approx(1.28)
    assert pc.ratio_gradient(1.1, 2.0, "cispo") == pytest.approx(2.0)
    assert pc.ratio_gradient(0.5, -1.0, "cispo") == pytest.approx(-0.8 / 0.5)
    assert pc.score_weight(2.0, 2.0, "cispo") == pytest.approx(2.56)
    assert pc.score_weight(2.0, 2.0, "ppo") == 0.0
    assert pc.score_weight(2.0, -2.0, "ppo") == pytest.approx(-4.0)
    assert pc.score_weight(2.0, 2.0, "plain") == pytest.approx(4.0)


def test_cispo_with_an_open_lower_bound_hand_values():
    """MiniMax-M1's CISPO sets no lower bound on the weight, only 1 + eps_high above. Here that
    is eps_low = 1 (EPS_LOW_OPEN): the lower edge 1 - eps_low is 0, below every ratio."""
    assert pc.EPS_LOW_OPEN == 1.0
    w = [0.0, 0.05, 0.5, 1.0, 1.28, 2.0]
    # the weight clip(w, 0, 1.28) is min(w, 1.28)
    assert pc.clip_ratio(w, pc.EPS_LOW_OPEN, 0.28) == pytest.approx([0, 0.05, 0.5, 1, 1.28, 1.28])
    # on grad log pi (A = -2): min(w, 1.28) * A
    assert pc.score_weight(w, -2.0, "cispo", pc.EPS_LOW_OPEN, 0.28) == pytest.approx(
        [0.0, -0.1, -1.0, -2.0, -2.56, -2.56]
    )
    # on grad omega: min(w, 1.28) * A / w, which is A up to the upper edge and 1.28 * A / w
    # above it; at omega = 0 its limit A (there is no lower edge to divide by omega)
    assert pc.ratio_gradient(w, -2.0, "cispo", pc.EPS_LOW_OPEN, 0.28) == pytest.approx(
        [-2.0, -2.0, -2.0, -2.0, -2.0, -1.28]
    )
    assert pc.ratio_gradient(0.0, 3.0, "cispo", pc.EPS_LOW_OPEN, 0.28) == pytest.approx(3.0)
    assert pc.ratio_gradient(0.0, 0.0, "cispo", pc.EPS_LOW_OPEN, 0.28) == 0.0
    # with a lower edge above 0, omega = 0 stays where (1 - eps_low) A / omega is unbounded
    assert pc.ratio_gradient(0.0, 1.0, "cispo", 0.2, 0.28) == np.inf
    # PPO with eps_low = 1 never clips a negative advantage: no ratio is below 0
    assert not np.any(pc.clip_binds(w, -1.0, pc.EPS_LOW_OPEN, 0.28))


@given(w=omegas, a=advs, lo=eps_lo, hi=eps_hi)
@settings(max_examples=100, deadline=None)
def test_clipped_never_exceeds_unclipped(w, a, lo, hi):
    assert pc.clipped_surrogate(w, a, lo, hi) <= w * a + 1e-12


@given(w=omegas, a=advs, lo=eps_lo, hi=eps_hi)
@settings(max_examples=100, deadline=None)
def test_gradient_zero_exactly_where_the_clip_binds(w, a, lo, hi):
    binding = (a > 0 and w > 1 + hi) or (a < 0 and w < 1 - lo)
    g = pc.ratio_gradient(w, a, "ppo", lo, hi)
    assert pc.clip_binds(w, a, lo, hi) == binding
    if binding:
        assert g == 0.0
        assert pc.score_weight(w, a, "ppo", lo, hi) == 0.0
    else:
        assert g == a
    # CISPO's weight is zero only when A is.
    assert (pc.score_weight(w, a, "cispo", lo, hi) == 0.0) == (a == 0.0)


@given(w=st.floats(0.05, 4.0), a=advs, lo=eps_lo, hi=eps_hi)
@settings(max_examples=100, deadline=None)
def test_ratio_gradient_is_the_finite_difference(w, a, lo, hi):
    h = 1e-6
    assume(min(abs(w - (1 - lo)), abs(w - (1 + hi))) > 10 * h)
    fd = (pc.clipped_surrogate(w + h, a, lo, hi) - pc.clipped_surrogate(w - h, a, lo, hi)) / (2 * h)
    assert pc.ratio_gradient(w, a, "ppo", lo, hi) == pytest.approx(fd, abs=1e-6)


def softmax_log(z):
    m = max(z)
    s = sum(math.exp(x - m) for x in z)
    return [x - m - math.log(s) for x in z]


def loop_objective(z, batch, lo, hi, clip):
    lp = softmax_log(list(z))
    tot = 0.0
    for a, adv in zip(batch.actions, batch.advantages):
        w = math.exp(lp[a] - batch.log_p_old[a])
        if clip:
            tot += min(w * adv, min(max(w, 1 - lo), 1 + hi) * adv)
        else:
            tot += w * adv
    return tot / batch.actions.size


@pytest.mark.parametrize("method", ["plain", "ppo", "clip_higher"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_batch_gradient_is_the_finite_difference_of_the_objective(method, seed):
    batch = pc.draw_batch(seed=seed, n_samples=40)
    rng = np.random.default_rng(seed + 100)
    z = batch.log_p_old + rng.normal(0, 0.3, 5)
    w = pc.batch_ratios(z, batch)
    assert np.all(np.abs(w - 0.8) > 1e-3) and np.all(np.abs(w - 1.2) > 1e-3)
    assert np.all(np.abs(w - 1.28) > 1e-3)
    lo, hi = pc.METHOD_EPS[method]
    lo = lo or 0.0
    hi = hi or 0.0
    h = 1e-6
    fd = np.empty(5)
    for j in range(5):
        e = np.zeros(5)
        e[j] = h
        fd[j] = (
            loop_objective(z + e, batch, lo, hi, method != "plain")
            - loop_objective(z - e, batch, lo, hi, method != "plain")
        ) / (2 * h)
    assert pc.batch_gradient(z, batch, method) == pytest.approx(fd, abs=1e-7)
    assert pc.batch_objective(z, batch, method) == pytest.approx(
        loop_objective(z, batch, lo, hi, method != "plain"), rel=1e-12
    )


def test_cispo_gradient_is_the_stop_gradient_surrogates_derivative():
    batch = pc.draw_batch(seed=3)
    z0 = batch.log_p_old + np.array([0.5, -0.4, 0.1, 0.0, 0.9])
    assert np.any(pc.batch_ratios(z0, batch) > 1.28)  # some weights are clipped
    h = 1e-6
    fd = np.empty(5)
    for j in range(5):
        e = np.zeros(5)
        e[j] = h
        fd[j] = (pc.cispo_surrogate(z0 + e, batch, z0) - pc.cispo_surrogate(z0 - e, batch, z0)) / (
            2 * h
        )
    assert pc.batch_gradient(z0, batch, "cispo") == pytest.approx(fd, abs=1e-8)
    with pytest.raises(ValueError):
        pc.batch_objective(z0, batch, "cispo")


def loop_epochs(batch, method, epochs, lr, lo, hi, rare):
    """Per-sample, per-epoch transcription of the update."""
    z = list(batch.log_p_old)
    p_old = [math.exp(x) for x in batch.log_p_old]
    kls, rares, shares = [], [], []
    for _ in range(epochs + 1):
        lp = softmax_log(z)
        pi = [math.exp(x) for x in lp]
        kls.append(sum(p * (l - math.log(q)) for p, l, q in zip(pi, lp, p_old)))
        rares.append(pi[rare])
        grad = [0.0] * len(z)
        n_bind = 0
        for a, adv in zip(batch.actions, batch.advantages):
            w = pi[a] / p_old[a]
            if method == "plain":
                c = w * adv
            elif method == "cispo":
                c = min(max(w, 1 - lo), 1 + hi) * adv
            else:
                bind = (adv > 0 and w > 1 + hi) or (adv < 0 and w < 1 - lo)
                n_bind += bind
                c = 0.0 if bind else w * adv
            for j in range(len(z)):
                grad[j] += c * ((1.0 if j == a else 0.0) - pi[j]) / len(batch.actions)
        shares.append(n_bind / len(batch.actions))
        z = [x + lr * g for x, g in zip(z, grad)]
    return kls, rares, shares


@pytest.mark.parametrize("method", pc.METHODS)
@pytest.mark.parametrize("bernoulli", [False, True])
def test_run_epochs_matches_plain_loop(method, bernoulli):
    rewards = [0.2, 0.4, 0.0, 0.3, 0.9]
    batch = pc.draw_batch(action_rewards=rewards, n_samples=48, seed=7, bernoulli=bernoulli)
    tr = pc.run_epochs(batch, method, epochs=8, lr=3.0, action_rewards=rewards)
    lo, hi = pc.METHOD_EPS[method]
    kls, rares, shares = loop_epochs(batch, method, 8, 3.0, lo or 0.0, hi or 0.0, 4)
    assert tr.rare == 4
    assert tr.kl == pytest.approx(kls, abs=1e-12)
    assert tr.p_rare == pytest.approx(rares, rel=1e-10)
    assert tr.clipped_share == pytest.approx(shares)
    assert tr.expected_reward == pytest.approx(tr.policy @ np.array(rewards))


def test_default_experiment_story():
    batch = pc.draw_batch()
    assert batch.counts.tolist() == [27, 15, 12, 8, 2]
    res = pc.compare_methods(batch, action_rewards=pc.DEFAULT_REWARDS)
    for t in res.values():
        assert t.kl[0] == 0.0 and t.p_rare[0] == pytest.approx(0.05)
        # the first step starts at omega = 1, inside every range: all methods agree there
        assert t.kl[1] == pytest.approx(res["plain"].kl[1])
    # ten epochs: the clipped methods stay near pi_old, the others keep moving
    assert res["ppo"].kl[-1] < 0.05 and res["clip_higher"].kl[-1] < 0.05
    assert res["plain"].kl[-1] > 0.15 and res["cispo"].kl[-1] > 0.15
    assert res["ppo"].clipped_share[-1] == 1.0
    assert res["clip_higher"].p_rare[-1] > res["ppo"].p_rare[-1]
    assert res["plain"].p_rare[-1] > res["clip_higher"].p_rare[-1]


def test_expected_batch_gradient_monte_carlo():
    # Over fresh batches, the plain gradient at pi_old with batch-centred advantages is
    # (N - 1)/N times the true gradient pi * (r - pi . r) (the batch mean includes the sample).
    p = np.array([0.4, 0.25, 0.2, 0.1, 0.05])
    r = np.array([0.2, 0.4, 0.0, 0.3, 1.0])
    n, reps = 8, 3000
    g = np.array(
        [pc.batch_gradient(np.log(p), pc.draw_batch(p, r, n, seed=s), "plain") for s in range(reps)]
    )
    target = (n - 1) / n * p * (r - p @ r)
    se = g.std(axis=0, ddof=1) / math.sqrt(reps)
    assert np.all(np.abs(g.mean(axis=0) - target) < 4.5 * se)


def test_draw_batch_is_seeded_and_bernoulli_keeps_the_actions():
    a = pc.draw_batch(seed=11)
    b = pc.draw_batch(seed=11, bernoulli=True)
    assert np.array_equal(a.actions, pc.draw_batch(seed=11).actions)
    assert np.array_equal(a.actions, b.actions)
    assert set(np.unique(b.rewards)) <= {0.0, 1.0}
    # success probabilities 0 and 1 give exactly those rewards
    c = pc.draw_batch(action_rewards=[0, 0, 1, 0, 1], seed=11, bernoulli=True)
    assert np.array_equal(c.rewards, np.isin(c.actions, [2, 4]).astype(float))
    # and a probability of 0.3 gives about 30% ones (4.5 standard errors)
    d = pc.draw_batch([0.5, 0.5], [0.3, 0.3], n_samples=20000, seed=5, bernoulli=True)
    assert abs(d.rewards.mean() - 0.3) < 4.5 * math.sqrt(0.3 * 0.7 / 20000)
    assert a.counts.sum() == 64 and a.advantages.sum() == pytest.approx(0.0, abs=1e-12)
    assert a.rewards == pytest.approx(pc.DEFAULT_REWARDS[a.actions])


def test_kl_handles_zero_probabilities():
    log_p = np.array([math.log(0.5), math.log(0.5), -np.inf])
    assert pc.kl(log_p, np.log([0.25, 0.25, 0.5])) == pytest.approx(math.log(2))
    assert pc.kl(np.log([0.3, 0.7]), np.log([0.3, 0.7])) == 0.0


@pytest.mark.parametrize(
    "call",
    [
        lambda: pc.clipped_surrogate(-0.1, 1.0),
        lambda: pc.clipped_surrogate(float("nan"), 1.0),
        lambda: pc.clipped_surrogate(1.0, float("inf")),
        lambda: pc.clipped_surrogate(1.0, 1.0, eps_low=1.5),
        lambda: pc.clipped_surrogate(1.0, 1.0, 0.2, -0.1),
        lambda: pc.ratio_gradient(1.0, 1.0, "trpo"),
        lambda: pc.draw_batch([0.5, 0.6], [0, 1]),
        lambda: pc.draw_batch([0.5, 0.5], [0, 1, 2]),
        lambda: pc.draw_batch([0.5, 0.5], [0, 2], bernoulli=True),
        lambda: pc.draw_batch(n_samples=0),
        lambda: pc.make_batch([0.5, 0.5], [0, 2], [1.0, 0.0]),
        lambda: pc.run_epochs(pc.draw_batch(), "ppo", epochs=-1),
        lambda: pc.run_epochs(pc.draw_batch(), "ppo", lr=0.0),
    ],
)
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_rare_action_breaks_ties_towards_the_least_probable():
    assert pc.rare_action([0.5, 0.3, 0.2], [1.0, 0.0, 1.0]) == 2
    assert pc.rare_action([0.1, 0.3, 0.6], [1.0, 0.0, 1.0]) == 0
    assert (
        pc.run_epochs(
            pc.draw_batch([0.5, 0.3, 0.2], [1.0, 0.0, 1.0], 10),
            epochs=1,
            action_rewards=[1.0, 0.0, 1.0],
        ).rare
        == 2
    )


def test_mean_reward_by_action_hand_values():
    # actions 0, 0, 2 with rewards 1, 0, 1: action 0 averages 0.5, action 1 is not drawn
    b = pc.make_batch([0.5, 0.3, 0.2], [0, 0, 2], [1.0, 0.0, 1.0])
    means = pc.mean_reward_by_action(b)
    assert means[0] == 0.5 and np.isnan(means[1]) and means[2] == 1.0


@given(actions=st.lists(st.integers(0, 3), min_size=1, max_size=30), data=st.data())
@settings(max_examples=60, deadline=None)
def test_mean_reward_by_action_is_the_mean_over_each_actions_draws(actions, data):
    rewards = data.draw(
        st.lists(st.sampled_from([0.0, 0.25, 1.0]), min_size=len(actions), max_size=len(actions))
    )
    b = pc.make_batch([0.4, 0.3, 0.2, 0.1], np.array(actions), rewards)
    means = pc.mean_reward_by_action(b)
    for k in range(4):
        paid = [r for a, r in zip(actions, rewards) if a == k]  # a per-sample loop
        if paid:
            assert means[k] == pytest.approx(sum(paid) / len(paid))
        else:
            assert np.isnan(means[k])


def test_luckiest_action_hand_values():
    b = pc.make_batch([0.5, 0.3, 0.2], [0, 0, 2, 1], [1.0, 0.0, 1.0, 0.0])
    # action 0 paid 0.5 against 0.6, action 1 paid 0 against 0.5, action 2 paid 1 against 0.4
    assert pc.luckiest_action(b, [0.6, 0.5, 0.4]) == 2
    assert pc.luckiest_action(b, [0.2, 0.5, 0.9]) == 0  # 0.3 above against 0.1 above
    assert pc.luckiest_action(b, [0.5, 0.5, 1.0]) is None  # paid exactly as expected
    # an action not drawn is never the lucky one, however low its expected reward
    c = pc.make_batch([0.5, 0.3, 0.2], [0, 0], [1.0, 1.0])
    assert pc.luckiest_action(c, [0.9, -5.0, -5.0]) == 0
    assert pc.luckiest_action(c, [1.0, -5.0, -5.0]) is None
    # a tie goes to the lower index
    d = pc.make_batch([0.5, 0.3, 0.2], [0, 2], [1.0, 1.0])
    assert pc.luckiest_action(d, [0.5, 0.5, 0.5]) == 0
