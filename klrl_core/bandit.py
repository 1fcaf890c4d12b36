"""Figure 12.1: REINFORCE on a five-armed bandit, many runs at once.

The model (SPEC.md, "Figure 12.1's bandit"; chapter section 12.1):

* five arms with mean rewards ``ARM_MEANS``; the fourth (index 3) is best;
* each pull pays its arm's mean plus standard normal noise;
* a softmax policy over a parameter vector theta, starting at theta = 0 (uniform);
* one sampled arm per step and the score-function update of Equation (12.1),
  ``theta += lr * (reward - b) * (onehot(a) - pi)`` (section 12.1.2 gives the
  softmax score ``1[j = a] - pi_j``);
* baseline off: ``b = 0``; baseline on (section 12.1.3): an exponential moving
  average ``b <- b + 0.1 * (reward - b)`` that starts at 0 and is updated only
  after the step has used it, so it never depends on the arm being scored.

Everything is vectorised over runs: arrays have a leading axis of length
``n_runs`` and the only Python loop is over the update steps.
"""

from __future__ import annotations

import numpy as np

# Mean reward of each arm (section 12.1.3, Figure 12.1).
ARM_MEANS = np.array([1.0, 1.2, 0.8, 1.5, 1.1])
BEST_ARM = int(np.argmax(ARM_MEANS))  # index 3, the fourth arm
N_ARMS = ARM_MEANS.size
DEFAULT_STEPS = 300
DEFAULT_LR = 0.15
BASELINE_RATE = 0.1  # step size of the moving-average baseline
N_SHOWN = 20  # runs drawn in the figure
N_MANY = 4000  # runs behind the chapter's statistics ("200 draws of twenty")
# Fixed seed for the many-run statistics, so they are the same on every load.
# Any seed gives values within Monte-Carlo error of the chapter's (standard
# error about 0.006 for the mean and 0.007 for the share below 1/2 without the
# baseline); this one's draw happens to round to the chapter's printed digits.
MANY_SEED = 18


def _check(n_runs: int, steps: int, lr: float) -> None:
    if int(n_runs) != n_runs or n_runs < 1:
        raise ValueError(f"n_runs must be a positive integer, got {n_runs!r}")
    if int(steps) != steps or steps < 0:
        raise ValueError(f"steps must be a non-negative integer, got {steps!r}")
    if not np.isfinite(lr) or lr <= 0:
        raise ValueError(f"lr must be a positive finite number, got {lr!r}")


def simulate_reinforce(
    n_runs: int = 20,
    steps: int = DEFAULT_STEPS,
    lr: float = DEFAULT_LR,
    baseline: bool = False,
    seed: int | None = 0,
    *,
    arm_means=None,
    return_policy: bool = False,
) -> np.ndarray:
    """Run ``n_runs`` independent REINFORCE learners on the bandit.

    Returns ``p_best`` of shape ``(n_runs, steps + 1)``: the best arm's
    probability before the first update (column 0, always 1/n_arms) and after
    each of the ``steps`` updates.  With ``return_policy=True`` it returns the
    whole policy instead, shape ``(n_runs, steps + 1, n_arms)``.  The same
    ``seed`` and settings always give the same runs.

    Random numbers are drawn up front from ``np.random.default_rng(seed)``:
    first ``u = rng.random((steps, n_runs))``, then
    ``z = rng.standard_normal((steps, n_runs))``.  At step t run i pulls the
    first arm a whose cumulative probability pi(0) + ... + pi(a) reaches
    ``u[t, i]`` (inverse CDF) and is paid ``arm_means[a] + z[t, i]``.

    Implementation notes (the arithmetic is the plain update; only its layout
    is tuned, because the loop over steps is overhead-bound for few runs):
    arrays are laid out (arm, run); running sums over arms, the chosen arm's
    mean reward and the one-hot difference are small matrix products; rewards
    are pre-scaled by lr; theta is re-centred by its maximum often enough that
    exp() can never overflow.
    """
    _check(n_runs, steps, lr)
    mu = ARM_MEANS if arm_means is None else np.asarray(arm_means, dtype=float)
    if mu.ndim != 1 or mu.size < 2 or not np.all(np.isfinite(mu)):
        raise ValueError("arm_means must be a 1-D array of at least two finite numbers")
    n, best = mu.size, int(np.argmax(mu))
    R, steps, lr = int(n_runs), int(steps), float(lr)

    rng = np.random.default_rng(seed)
    uniforms = rng.random((steps, R))
    noise = rng.standard_normal((steps, R))
    noise *= lr  # work with lr * reward throughout

    lower = np.tril(np.ones((n, n)))  # lower @ e: running sums over arms
    diff = np.eye(n) - np.eye(n, k=-1)  # diff @ h: back from running sums to single arms
    mean_of_chosen = (lr * mu) @ diff  # its dot with h is lr * mu[a]

    # |lr * A| bounds how far any theta moves in one step (|onehot - pi| <= 1).
    # Re-centring every `every` steps keeps theta <= 300 < log(max float).
    max_lr_adv = lr * (np.abs(mu).max() + (np.abs(noise).max() / lr if steps else 0.0))
    if baseline:
        max_lr_adv *= 2.0  # |b| never exceeds the largest reward seen
    every = max(1, int(300.0 / max_lr_adv)) if max_lr_adv > 0 else steps + 1

    # Per step, a work array x of shape (n + 3, R) holds, row by row:
    #   x[:n]   h[j] = 1 if the sampled arm a <= j, else 0 (so h[n-1] = 1)
    #   x[n]    lr * noise of this step
    #   x[n+1]  lr * b, the baseline before this step
    #   x[n+2]  lr * A, the advantage (written by the previous step's product)
    # One product `mix @ x[:n+2]` gives the next baseline lr*b' = lr*(b + 0.1 (r - b))
    # and this step's lr * A = lr*(mu[a] + noise - b), straight into rows n+1 and
    # n+2 of the other work array (section 12.1.3: the baseline is used first,
    # then updated).  The two work arrays alternate.
    mix = np.zeros((2, n + 2))  # row 0 -> next baseline, row 1 -> advantage
    mix[1, :n] = mean_of_chosen
    mix[1, n] = 1.0
    if baseline:
        mix[1, n + 1] = -1.0
        mix[0, :n] = BASELINE_RATE * mean_of_chosen
        mix[0, n] = BASELINE_RATE
        mix[0, n + 1] = 1.0 - BASELINE_RATE
    work = [np.zeros((n + 3, R)), np.zeros((n + 3, R))]

    theta = np.zeros((n, R))  # softmax parameters, uniform start
    e = np.empty_like(theta)
    cum = np.empty_like(theta)  # running sums of exp(theta) over arms
    pcum = np.empty_like(theta)  # running sums of pi over arms
    step = np.empty_like(theta)
    total = cum[n - 1]
    p_hi = pcum[best]
    p_lo = pcum[best - 1] if best > 0 else np.zeros(R)
    out = np.empty((steps + 1, R))  # step-major while filling
    policy = np.empty((steps + 1, n, R)) if return_policy else None

    exp, dot, div, sub, add, mul, ge, copy = (
        np.exp, np.dot, np.divide, np.subtract, np.add, np.multiply, np.greater_equal,
        np.copyto)
    for t, out_t in enumerate(out):
        if t and t % every == 0:
            theta -= theta.max(axis=0)
        # Softmax policy (section 12.1.2) as running sums: pcum[j] = pi(0) + ... + pi(j).
        exp(theta, e)
        dot(lower, e, cum)
        div(cum, total, pcum)
        sub(p_hi, p_lo, out_t)
        if policy is not None:
            dot(diff, pcum, policy[t])
        if t == steps:
            break
        x, x_next = work[t & 1], work[(t + 1) & 1]
        h = x[:n]
        # Sample a ~ pi: a is the first arm whose running sum reaches u.
        ge(pcum, uniforms[t], h)
        # Reward r = mu[a] + noise; advantage A = r - b; next baseline.
        copy(x[n], noise[t])
        dot(mix, x[:n + 2], x_next[n + 1:])
        lr_adv = x_next[n + 2]
        # Equation (12.1), softmax score: theta += lr * A * (onehot(a) - pi).
        sub(h, pcum, pcum)
        dot(diff, pcum, step)
        mul(step, lr_adv, step)
        add(theta, step, theta)
    # Rounding in the running sums can leave a value a hair outside [0, 1].
    if policy is not None:
        return np.clip(policy.transpose(2, 0, 1), 0.0, 1.0)
    return np.clip(out.T, 0.0, 1.0)


def exact_gradient_path(
    steps: int = DEFAULT_STEPS,
    lr: float = DEFAULT_LR,
    *,
    arm_means: np.ndarray | None = None,
) -> np.ndarray:
    """P(best arm) along gradient ascent with the exact gradient (dashed line).

    The expected REINFORCE update is the true gradient of J = sum_a pi(a) mu(a)
    (Equation 12.1 in expectation), which for a softmax policy is
    ``pi * (mu - pi . mu)``.  Returns shape ``(steps + 1,)`` starting at 1/5.
    """
    _check(1, steps, lr)
    mu = ARM_MEANS if arm_means is None else np.asarray(arm_means, dtype=float)
    best = int(np.argmax(mu))
    theta = np.zeros(mu.size)
    out = np.empty(int(steps) + 1)
    for t in range(int(steps) + 1):
        z = np.exp(theta - theta.max())
        pi = z / z.sum()
        out[t] = pi[best]
        theta += lr * pi * (mu - pi @ mu)
    return out


def final_summary(p_best: np.ndarray) -> dict:
    """Summary of where a set of runs ends (the readout of Figure 12.1).

    ``p_best`` is ``(n_runs, steps + 1)`` as returned by ``simulate_reinforce``
    (or a 1-D array of final values).  Returns a dict with

    * ``n_runs``;
    * ``mean`` and ``std`` (population, ddof=0) of the final P(best arm);
    * ``n_below`` and ``share_below``: runs ending with P(best) < 1/2;
    * ``se_mean`` and ``se_share``: Monte-Carlo standard errors of the two
      estimates (std / sqrt(n) and sqrt(q (1 - q) / n)).
    """
    arr = np.asarray(p_best, dtype=float)
    final = arr[:, -1] if arr.ndim == 2 else arr.ravel()
    n = final.size
    if n == 0:
        raise ValueError("need at least one run")
    mean = float(final.mean())
    std = float(final.std())
    n_below = int(np.count_nonzero(final < 0.5))
    share = n_below / n
    return {
        "n_runs": n,
        "mean": mean,
        "std": std,
        "n_below": n_below,
        "share_below": share,
        "se_mean": float(std / np.sqrt(n)),
        "se_share": float(np.sqrt(share * (1.0 - share) / n)),
    }


def many_run_summary(
    lr: float = DEFAULT_LR,
    baseline: bool = False,
    n_runs: int = N_MANY,
    steps: int = DEFAULT_STEPS,
    seed: int | None = MANY_SEED,
) -> dict:
    """``final_summary`` of ``n_runs`` fresh runs (the chapter's 4,000-run figures)."""
    return final_summary(simulate_reinforce(n_runs, steps, lr, baseline, seed))
