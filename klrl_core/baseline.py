"""Section 12.1.3's key idea, computed exactly: a baseline changes the noise of the update, not its mean.

The bandit is Figure 12.1's (``klrl_core.bandit``): arm means ``ARM_MEANS``, each pull paying its
arm's mean plus normal noise of standard deviation ``noise_sd`` (1 in the chapter), and a softmax
policy pi.  One REINFORCE update (Equation 12.1 with a baseline) is

    g = (R - b) * (onehot(a) - pi),    a ~ pi,  R = mu[a] + noise.

Everything about g is a finite sum over the arms once the noise is integrated out, because g is
linear in R and only E[R | a] = mu[a] and E[(R - b)^2 | a] = (mu[a] - b)^2 + noise_sd^2 enter:

* mean:           E[g]   = sum_a pi[a] (mu[a] - b) (e_a - pi) = pi * (mu - pi . mu)   (b drops out);
* second moment:  E[gg'] = sum_a pi[a] ((mu[a] - b)^2 + noise_sd^2) (e_a - pi)(e_a - pi)';
* covariance:     E[gg'] - E[g] E[g]'.

As a function of a constant b the total variance (the covariance's trace) is a parabola,
``tr(b) = tr(b*) + (b - b*)^2 * sum_a pi[a] |e_a - pi|^2``, with its minimum at the weighted mean
``b* = sum_a pi[a] |e_a - pi|^2 mu[a] / sum_a pi[a] |e_a - pi|^2`` (``optimal_baseline``).  So a
baseline b lowers the variance below b = 0 exactly when it lies strictly between 0 and 2 b*.  The
chapter's choice, the expected reward pi . mu, does so for every policy on Figure 12.1's bandit
(both it and b* are weighted means of arm means in [0.8, 1.5], so they differ by less than 0.7,
while b* > 0.8), but not on every bandit: with arm means (1, 0) and pi = (0.9, 0.1), b* = 0.1 and
pi . mu = 0.9, so the "natural" baseline raises the variance (see ``optimal_baseline``).

The exact-gradient path of the figure's dashed line is re-derived here with the whole policy
(``exact_path_policies``); ``bandit.exact_gradient_path`` keeps only P(best arm).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from klrl_core.bandit import ARM_MEANS, DEFAULT_LR, DEFAULT_STEPS

NOISE_SD = 1.0  # standard deviation of the reward noise in Figure 12.1
# The smallest seed whose twenty runs of bandit.simulate_reinforce (lr 0.15, no baseline, 300 steps)
# give Figure 12.1's printed readout to its digits: mean 0.73, population sd 0.36, 5 of 20 below
# one half (the draw gives 0.7259, 0.3641, 5).  With the baseline on, the same seed gives 0.86,
# 0.26 and 2 of 20.  Seeds 157, 538, 639 and 838 also match; 538 (0.7321, 0.3629) is farthest
# from a rounding edge.
PRINTED_FIGURE_SEED = 61
EXPECTED = "expected"  # baseline keyword: b = pi . mu, the policy's expected reward


def _arm_means(arm_means) -> np.ndarray:
    mu = ARM_MEANS if arm_means is None else np.asarray(arm_means, dtype=float)
    if mu.ndim != 1 or mu.size < 2 or not np.all(np.isfinite(mu)):
        raise ValueError("arm_means must be a 1-D array of at least two finite numbers")
    return mu


def _policy(pi, n_arms: int) -> np.ndarray:
    pi = np.asarray(pi, dtype=float)
    if pi.ndim == 0 or pi.shape[-1] != n_arms:
        raise ValueError(f"a policy must have {n_arms} probabilities along its last axis")
    if not np.all(np.isfinite(pi)) or np.any(pi < 0):
        raise ValueError("policy probabilities must be finite and non-negative")
    if not np.allclose(pi.sum(axis=-1), 1.0, rtol=0, atol=1e-9):
        raise ValueError("policy probabilities must sum to one")
    return pi


def exact_path_policies(
    steps: int = DEFAULT_STEPS,
    lr: float = DEFAULT_LR,
    *,
    arm_means=None,
) -> np.ndarray:
    """The whole policy along the dashed exact-gradient path of Figure 12.1.

    Gradient ascent from the uniform policy with the expected update
    ``theta += lr * pi * (mu - pi . mu)`` (SPEC.md).  Returns shape ``(steps + 1, n_arms)``; row t
    is the policy before update t (row 0 uniform).  Its best-arm column equals
    ``bandit.exact_gradient_path``.
    """
    if int(steps) != steps or steps < 0:
        raise ValueError(f"steps must be a non-negative integer, got {steps!r}")
    if not np.isfinite(lr) or lr <= 0:
        raise ValueError(f"lr must be a positive finite number, got {lr!r}")
    mu = _arm_means(arm_means)
    theta = np.zeros(mu.size)
    out = np.empty((int(steps) + 1, mu.size))
    for t in range(int(steps) + 1):
        z = np.exp(theta - theta.max())  # shift: softmax is unchanged, exp cannot overflow
        pi = z / z.sum()
        out[t] = pi
        theta += lr * pi * (mu - pi @ mu)
    return out


@dataclass(frozen=True)
class GradientMoments:
    """Exact moments of the one-sample REINFORCE update g at one or many policies.

    Shapes: ``...`` is the policies' leading shape, n the number of arms.

    * ``baseline`` (...): the b used;
    * ``mean`` (..., n): E[g] = sum_a pi[a] (mu[a] - b)(e_a - pi), which equals the exact
      gradient pi * (mu - pi . mu) whatever b is (up to rounding);
    * ``cov`` (..., n, n): Cov[g];
    * ``var`` (..., n): per-arm variance, the covariance's diagonal;
    * ``total_var`` (...): its trace, E|g - E g|^2;
    * ``noise_var`` (...): the part of ``total_var`` due to the reward noise alone,
      noise_sd^2 * sum_a pi[a] |e_a - pi|^2, which no constant baseline can remove.
    """

    baseline: np.ndarray
    mean: np.ndarray
    cov: np.ndarray
    var: np.ndarray
    total_var: np.ndarray
    noise_var: np.ndarray


def _baseline_values(baseline, pi: np.ndarray, mu: np.ndarray) -> np.ndarray:
    if isinstance(baseline, str):
        if baseline != EXPECTED:
            raise ValueError(f"baseline must be a number or {EXPECTED!r}, got {baseline!r}")
        return pi @ mu
    b = np.asarray(baseline, dtype=float)
    if not np.all(np.isfinite(b)):
        raise ValueError("the baseline must be a finite number")
    return np.broadcast_to(b, pi.shape[:-1]).astype(float)


def gradient_moments(
    pi,
    baseline=0.0,
    *,
    arm_means=None,
    noise_sd: float = NOISE_SD,
) -> GradientMoments:
    """Exact mean and covariance of g = (R - b)(onehot(a) - pi) at policy (or policies) ``pi``.

    ``pi`` has the arms on its last axis (any leading shape, e.g. the steps of a path).
    ``baseline`` is a number, an array broadcasting against ``pi``'s leading shape, or
    ``"expected"`` for b = pi . mu.  Any such b is fixed before the arm is drawn, which is what
    keeps the mean unchanged (section 12.1.3).
    """
    mu = _arm_means(arm_means)
    pi = _policy(pi, mu.size)
    if not np.isfinite(noise_sd) or noise_sd < 0:
        raise ValueError(f"noise_sd must be a finite number >= 0, got {noise_sd!r}")
    b = _baseline_values(baseline, pi, mu)
    # d[..., a, j] = (e_a - pi)_j: the score of arm a (section 12.1.2).
    d = np.eye(mu.size) - pi[..., None, :]
    # E[(R - b)^2 | a] with the normal noise integrated out.
    second = (mu - b[..., None]) ** 2 + noise_sd**2
    # E[g] summed over the arms with this b, as the covariance is: b's terms sum to
    # b * sum_a pi[a] (e_a - pi) = 0 in the arithmetic itself (section 12.1.3), so the mean
    # equals pi * (mu - pi . mu) up to rounding, rather than by construction.
    mean = np.einsum("...a,...aj->...j", pi * (mu - b[..., None]), d)
    weight = pi * second  # (..., a)
    moment2 = np.einsum("...a,...aj,...ak->...jk", weight, d, d)
    cov = moment2 - mean[..., :, None] * mean[..., None, :]
    var = np.diagonal(cov, axis1=-2, axis2=-1).copy()
    sq_norm = np.sum(d**2, axis=-1)  # |e_a - pi|^2 = 1 - 2 pi_a + |pi|^2
    return GradientMoments(
        baseline=b,
        mean=mean,
        cov=cov,
        var=var,
        total_var=var.sum(axis=-1),
        noise_var=noise_sd**2 * np.sum(pi * sq_norm, axis=-1),
    )


def optimal_baseline(pi, *, arm_means=None) -> np.ndarray:
    """The constant b that minimises the total variance at ``pi``: the weighted mean b*.

    Weights pi[a] |e_a - pi|^2: an arm counts by how often it is pulled and how far its score
    vector reaches, so a dominant arm (score near zero) counts little.  The total variance is
    ``tr(b*) + (b - b*)^2 sum_a pi[a] |e_a - pi|^2`` (independent of the noise level), hence a
    baseline b beats b = 0 exactly when 0 < b / b* < 2.  Returns NaN where pi puts all mass on one
    arm (every update is zero there; any b is optimal).
    """
    mu = _arm_means(arm_means)
    pi = _policy(pi, mu.size)
    sq_norm = 1.0 - 2.0 * pi + np.sum(pi**2, axis=-1, keepdims=True)
    w = pi * sq_norm
    tot = w.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(tot > 0, (w @ mu) / np.where(tot > 0, tot, 1.0), np.nan)
    return out if out.ndim else float(out)


@dataclass(frozen=True)
class PathComparison:
    """Moments along the exact-gradient path, without a baseline and with b = pi . mu.

    ``steps`` (T+1,), ``policy`` (T+1, n), ``p_best`` (T+1,), ``expected_reward`` (T+1,) = pi . mu,
    ``without`` and ``with_expected`` (GradientMoments over the path), ``optimal`` (T+1,) the
    variance-minimising constant b*, ``ratio`` (T+1,) = total variance with b = pi . mu divided
    by total variance with b = 0, and ``mean_gap`` the largest difference between the two mean
    estimates over the path and the arms (rounding only: on average a constant b cancels).
    """

    steps: np.ndarray
    policy: np.ndarray
    p_best: np.ndarray
    expected_reward: np.ndarray
    without: GradientMoments
    with_expected: GradientMoments
    optimal: np.ndarray
    ratio: np.ndarray
    mean_gap: float


def path_comparison(
    steps: int = DEFAULT_STEPS,
    lr: float = DEFAULT_LR,
    *,
    arm_means=None,
    noise_sd: float = NOISE_SD,
) -> PathComparison:
    """Everything the baseline panel draws: both baselines' moments at every step of the path."""
    mu = _arm_means(arm_means)
    pol = exact_path_policies(steps, lr, arm_means=mu)
    without = gradient_moments(pol, 0.0, arm_means=mu, noise_sd=noise_sd)
    with_b = gradient_moments(pol, EXPECTED, arm_means=mu, noise_sd=noise_sd)
    return PathComparison(
        steps=np.arange(pol.shape[0]),
        policy=pol,
        p_best=pol[:, int(np.argmax(mu))],
        expected_reward=pol @ mu,
        without=without,
        with_expected=with_b,
        optimal=optimal_baseline(pol, arm_means=mu),
        ratio=with_b.total_var / without.total_var,
        mean_gap=float(np.max(np.abs(without.mean - with_b.mean))),
    )
