"""Where the KL penalty goes: chapter 28's first experiment (left panel of its figure).

One prompt with K responses, a reference policy and a reward per response. We compare

* three estimators of KL(pi || pi_ref) from sampled ratios rho = pi_ref / pi (chapter 28,
  "Estimating and differentiating the KL penalty"): k1 = -log rho, k2 = (log rho)^2 / 2,
  k3 = rho - 1 - log rho;
* three ways of putting the penalty into a REINFORCE update for a softmax policy:
  "k1 in the reward" (PPO-style RLHF), "k1 as a loss" and "k3 as a loss" (GRPO-style);
* the two policies they can converge to: the KL-regularised optimum pi* ∝ pi_ref·exp(r/beta)
  and the optimum of the forward-KL objective E_pi[r] − beta·KL(pi_ref || pi) (Exercise 28.3).

Everything is a pure function of its arguments; NumPy and the standard library only.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# The chapter's settings.
K_DEFAULT = 10
BETA_DEFAULT = 0.5
SEED_DEFAULT = 0
STEPS_DEFAULT = 4000
BATCH_DEFAULT = 256          # samples per training step
LR_DEFAULT = 0.5             # step size on the logits
N_SAMPLES_DEFAULT = 16       # samples behind one KL estimate
# The chapter repeats the 16-sample estimate 100,000 times; 20,000 repetitions keep the
# Monte Carlo error of every reported mean below 0.001 and take ~20 ms.
REPS_DEFAULT = 20_000

RULES = ("k1 in the reward", "k1 as a loss", "k3 as a loss")
ESTIMATORS = ("k1", "k2", "k3")


# ---------------------------------------------------------------- the setup

@dataclass(frozen=True)
class Setup:
    pi_ref: np.ndarray   # reference policy over the K responses
    r: np.ndarray        # reward of each response, in [0, 1)


def make_setup(seed: int = SEED_DEFAULT, K: int = K_DEFAULT) -> Setup:
    """pi_ref = softmax of standard-normal logits, then rewards ~ U(0, 1).

    Drawn from ``np.random.default_rng(seed)`` in this order, as in the chapter, so that
    seed 0 gives the chapter's prompt (KL(pi* || pi_ref) = 0.1363 at beta = 0.5).
    """
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=K)
    r = rng.uniform(0.0, 1.0, K)
    return Setup(pi_ref=_softmax(logits), r=r)


def _softmax(z: np.ndarray) -> np.ndarray:
    z = np.asarray(z, dtype=float)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


# ---------------------------------------------------------------- distances

def kl(p: np.ndarray, q: np.ndarray) -> float:
    """KL(p || q) in nats; terms with p = 0 contribute nothing."""
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    mask = p > 0
    return float(np.sum(p[mask] * (np.log(p[mask]) - np.log(q[mask]))))


def tv(p: np.ndarray, q: np.ndarray) -> float:
    """Total-variation distance, half the L1 distance: a number in [0, 1]."""
    return 0.5 * float(np.abs(np.asarray(p, float) - np.asarray(q, float)).sum())


# ---------------------------------------------------------------- the two optima

def target_policy(pi_ref: np.ndarray, r: np.ndarray, beta: float) -> np.ndarray:
    """pi* ∝ pi_ref · exp(r / beta), the maximiser of E[r] − beta·KL(pi || pi_ref) (Ex. 28.1).

    Computed in log space so that tiny beta stays finite.
    """
    logits = np.log(np.asarray(pi_ref, float)) + np.asarray(r, float) / beta
    return _softmax(logits)


def forward_kl_optimum(pi_ref: np.ndarray, r: np.ndarray, beta: float,
                       iters: int = 200) -> np.ndarray:
    """Maximiser of E_pi[r] − beta·KL(pi_ref || pi) over distributions (Ex. 28.3(c)).

    Stationarity with a multiplier lambda for sum(pi) = 1 gives r_k + beta·pi_ref_k / pi_k = lambda,
    i.e. pi_k = beta·pi_ref_k / (lambda − r_k) with lambda > max r. The sum of the right-hand side
    decreases in lambda; it is <= 1 at lambda = max r + beta (each term <= pi_ref_k) and blows up
    as lambda -> max r, so bisection on that bracket finds the root.
    """
    pi_ref = np.asarray(pi_ref, float)
    r = np.asarray(r, float)
    rmax = float(r.max())
    lo, hi = rmax, rmax + beta
    for _ in range(iters):
        lam = 0.5 * (lo + hi)
        if lam <= lo or lam >= hi:      # bracket exhausted at double precision
            break
        if np.sum(beta * pi_ref / (lam - r)) > 1.0:
            lo = lam
        else:
            hi = lam
    lam = hi                              # hi always has a finite, positive gap lambda − r
    pi = beta * pi_ref / (lam - r)
    return pi / pi.sum()


# ---------------------------------------------------------------- estimators of the value

def estimator_values(log_rho: np.ndarray) -> np.ndarray:
    """k1, k2, k3 at sampled log-ratios log rho = log(pi_ref / pi); stacked on a new last axis."""
    log_rho = np.asarray(log_rho, float)
    k1 = -log_rho
    k2 = 0.5 * log_rho ** 2
    k3 = np.expm1(log_rho) - log_rho       # rho − 1 − log rho, accurate near rho = 1
    return np.stack([k1, k2, k3], axis=-1)


@dataclass(frozen=True)
class EstimatorStats:
    true_kl: float           # KL(pi || pi_ref) for the sampling policy pi
    mean: np.ndarray         # (3,) mean of the n-sample estimates, order k1, k2, k3
    std: np.ndarray          # (3,) their standard deviation (the spread)
    share_negative: np.ndarray  # (3,) fraction of estimates below zero
    reps: int
    n_samples: int


def estimator_stats(pi: np.ndarray, pi_ref: np.ndarray, n_samples: int = N_SAMPLES_DEFAULT,
                    reps: int = REPS_DEFAULT, rng: np.random.Generator | None = None
                    ) -> EstimatorStats:
    """Repeat an n-sample estimate of KL(pi || pi_ref) ``reps`` times, samples drawn from pi.

    An n-sample average only depends on how often each response was drawn, so each repetition
    is one multinomial count vector; the averages are counts @ values / n (exact, no loop).
    """
    rng = np.random.default_rng() if rng is None else rng
    pi = np.asarray(pi, float)
    pi_ref = np.asarray(pi_ref, float)
    vals = estimator_values(np.log(pi_ref) - np.log(pi))          # (K, 3)
    counts = rng.multinomial(n_samples, pi, size=reps)            # (reps, K)
    est = counts @ vals / n_samples                               # (reps, 3)
    return EstimatorStats(true_kl=kl(pi, pi_ref), mean=est.mean(0), std=est.std(0),
                          share_negative=(est < 0).mean(0), reps=reps, n_samples=n_samples)


def estimate_moments(pi: np.ndarray, pi_ref: np.ndarray, n_samples: int = N_SAMPLES_DEFAULT
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Exactly, from the K probabilities (no sampling): the expectation of k1, k2 and k3 under
    pi, and the standard deviation of one n-sample estimate (the average of n independent
    samples of pi), each (3,) in the order k1, k2, k3.

    The sample spread of ``estimator_stats`` can miss a heavy tail (its largest values are
    seldom drawn); this is the spread a Monte Carlo error should be judged against.
    """
    pi = np.asarray(pi, float)
    pi_ref = np.asarray(pi_ref, float)
    if int(n_samples) != n_samples or n_samples < 1:
        raise ValueError(f"n_samples must be a whole number >= 1, got {n_samples!r}")
    drawn = pi > 0                                  # responses pi never samples count zero
    vals = estimator_values(np.log(pi_ref[drawn]) - np.log(pi[drawn]))     # (K', 3)
    mean = pi[drawn] @ vals
    var = np.maximum(pi[drawn] @ (vals - mean) ** 2, 0.0)
    return mean, np.sqrt(var / n_samples)


def standard_error(sd, n: int):
    """The standard error of a mean of ``n`` independent draws whose standard deviation is
    ``sd``: sd / sqrt(n) (elementwise for an array of sd)."""
    if int(n) != n or n < 1:
        raise ValueError(f"n must be a whole number >= 1, got {n!r}")
    sd = np.asarray(sd, float)
    if np.any(sd < 0) or not np.all(np.isfinite(sd)):
        raise ValueError("a standard deviation is a finite number >= 0")
    out = sd / np.sqrt(float(n))
    return out if out.ndim else float(out)


def chapter_estimator_stats(beta: float = BETA_DEFAULT, seed: int = SEED_DEFAULT,
                            K: int = K_DEFAULT, n_samples: int = N_SAMPLES_DEFAULT,
                            reps: int = REPS_DEFAULT) -> EstimatorStats:
    """The chapter's table: 16-sample estimates of KL(pi* || pi_ref), samples from pi*.

    Uses the same generator as the setup, continued after its draws (as the chapter does).
    """
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=K)
    r = rng.uniform(0.0, 1.0, K)
    pi_ref = _softmax(logits)
    return estimator_stats(target_policy(pi_ref, r, beta), pi_ref, n_samples, reps, rng)


# ---------------------------------------------------------------- the three training rules

# Rule coefficients, one row per rule in RULES:
#   D: how much of beta·k1 = beta·log(pi/pi_ref) is subtracted from the reward inside REINFORCE;
#   H0, H1: the per-sample factor h = H0 + H1·(1 − rho) whose "gradient through log pi" is
#   subtracted as a loss. Differentiating k1 = log(pi/pi_ref) through log pi gives the score
#   itself (h = 1); differentiating k3 = rho − 1 − log rho gives (1 − rho)·score (h = 1 − rho).
_D = np.array([1.0, 0.0, 0.0])[:, None]
_H0 = np.array([0.0, 1.0, 0.0])[:, None]
_H1 = np.array([0.0, 0.0, 1.0])[:, None]


def train_rules(pi_ref: np.ndarray, r: np.ndarray, beta: float = BETA_DEFAULT,
                steps: int = STEPS_DEFAULT, batch: int = BATCH_DEFAULT, lr: float = LR_DEFAULT,
                rng: np.random.Generator | None = None) -> np.ndarray:
    """Train a softmax policy from pi_ref with each of the three rules; returns (3, K) policies.

    Each step draws ``batch`` responses from the current policy and ascends (chapter 28)
        mean_i (R_i − mean R)·grad log pi(y_i)  −  beta·mean_i h_i·grad log pi(y_i),
    with R = r − beta·k1 for "k1 in the reward" and R = r otherwise, and h as in _D/_H above.
    With f = counts / batch and grad log pi(y) = e_y − pi, the two sums are
        f ⊙ (R − f·R)   and   f ⊙ h − pi (f·h),
    so one multinomial draw per rule per step is exact and no per-sample array is needed.
    Writing Q = R − beta·h, the step is  f ⊙ (Q − f·Q) − beta (f·h) (f − pi).
    The three rules are trained together as the rows of one (3, K) logit matrix.
    """
    rng = np.random.default_rng() if rng is None else rng
    log_ref = np.log(np.asarray(pi_ref, float))
    r = np.asarray(r, float)
    theta = np.tile(log_ref, (len(RULES), 1))            # start at the reference policy
    inv_b = 1.0 / batch
    b_d = beta * _D
    r_minus_bh0 = r - beta * _H0 - beta * _H1             # the constant part of Q
    b_h1 = beta * _H1
    b_h0h1 = beta * (_H0 + _H1)
    for t in range(steps):
        if t % 256 == 0:
            # Each update sums to zero over responses, so the logits' row sums never change;
            # recentring now and then only guards exp() against drift.
            theta -= theta.max(axis=1, keepdims=True)
        e = np.exp(theta)
        s = e.sum(axis=1, keepdims=True)
        pi = e / s
        nlr = (log_ref + np.log(s)) - theta              # log rho = log(pi_ref / pi)
        f = rng.multinomial(batch, pi) * inv_b            # empirical frequencies
        # beta·H1·rho; the clip keeps rows with H1 = 0 away from inf·0
        b_rho = b_h1 * np.exp(np.minimum(nlr, 700.0))
        Q = r_minus_bh0 + b_d * nlr + b_rho               # R − beta·h
        fbh = np.sum(f * (b_h0h1 - b_rho), axis=1, keepdims=True)   # beta·(f·h)
        fQ = np.sum(f * Q, axis=1, keepdims=True)
        theta += lr * (f * (Q - fQ) - fbh * (f - pi))
    return _softmax(theta)


# ---------------------------------------------------------------- the whole experiment

@dataclass(frozen=True)
class KLPenaltyResult:
    pi_ref: np.ndarray
    r: np.ndarray
    beta: float
    target: np.ndarray           # pi*
    forward: np.ndarray          # forward-KL optimum
    policies: np.ndarray         # (3, K), rows in RULES order
    estimators: EstimatorStats

    def summary_rows(self) -> list[dict]:
        """Reward, KL(pi || pi_ref) and TV to pi* and to the forward optimum, per policy."""
        named = [("pi* (target)", self.target), ("forward-KL optimum", self.forward),
                 ("reference pi_ref", self.pi_ref)]
        named += [(name, p) for name, p in zip(RULES, self.policies)]
        return [dict(policy=name, reward=float(p @ self.r), kl_to_ref=kl(p, self.pi_ref),
                     tv_to_target=tv(p, self.target), tv_to_forward=tv(p, self.forward))
                for name, p in named]

    def summary(self) -> dict[str, dict]:
        """``summary_rows`` keyed by policy name."""
        return {row["policy"]: row for row in self.summary_rows()}


def run_experiment(beta: float = BETA_DEFAULT, seed: int = SEED_DEFAULT,
                   steps: int = STEPS_DEFAULT, K: int = K_DEFAULT, batch: int = BATCH_DEFAULT,
                   lr: float = LR_DEFAULT, reps: int = REPS_DEFAULT) -> KLPenaltyResult:
    """Estimator table and trained policies for one (beta, seed, steps).

    The setup and the estimator samples come from default_rng(seed) (the chapter's stream);
    training uses an independent stream spawned from the same seed, so changing ``steps``
    does not change the estimator table.
    """
    setup = make_setup(seed, K)
    est = chapter_estimator_stats(beta, seed, K, N_SAMPLES_DEFAULT, reps)
    train_rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(1,)))
    policies = train_rules(setup.pi_ref, setup.r, beta, steps, batch, lr, train_rng)
    return KLPenaltyResult(pi_ref=setup.pi_ref, r=setup.r, beta=beta,
                           target=target_policy(setup.pi_ref, setup.r, beta),
                           forward=forward_kl_optimum(setup.pi_ref, setup.r, beta),
                           policies=policies, estimators=est)


# ---------------------------------------------------------------- Exercise 28.3, exactly

@dataclass(frozen=True)
class EstimatorGradients:
    """Exercise 28.3 on a softmax policy pi_theta over K responses, by enumeration of y."""
    pi: np.ndarray               # pi_theta = softmax(theta)
    kl_reverse: float            # KL(pi_theta || pi_ref), the penalty the chapter means
    kl_forward: float            # KL(pi_ref || pi_theta)
    mean_k1: float               # E_{y ~ pi}[k1], = kl_reverse (28.3(a))
    mean_k3: float               # E_{y ~ pi}[k3], = kl_reverse (28.3(a))
    grad_k1_loss: np.ndarray     # E[d k1(y) / d theta], y held fixed: the zero vector (28.3(b))
    grad_k3_loss: np.ndarray     # E[d k3(y) / d theta] = pi - pi_ref = grad KL(pi_ref || pi) (c)
    grad_k1_score: np.ndarray    # E[k1(y) grad ln pi(y)] = grad KL(pi || pi_ref) (28.3(d))


def estimator_gradients(theta, pi_ref) -> EstimatorGradients:
    """Exercise 28.3's expectations, each an exact sum over the K responses y ~ pi_theta.

    With rho = pi_ref(y) / pi_theta(y): k1 = -ln rho, k3 = rho - 1 - ln rho. Differentiating
    through pi_theta(y) with y fixed, d ln pi(y) / d theta = e_y - pi (softmax), so
    d k1 = e_y - pi and d k3 = (1 - rho)(e_y - pi). The score-function term of the gradient of
    E_pi[k1] is E[k1 (e_y - pi)]: what "k1 in the reward" follows.
    """
    theta = np.asarray(theta, dtype=float)
    pi_ref = np.asarray(pi_ref, dtype=float)
    if theta.ndim != 1 or theta.shape != pi_ref.shape or not np.all(np.isfinite(theta)):
        raise ValueError("theta must be a finite vector with one logit per response of pi_ref")
    if np.any(pi_ref <= 0) or not np.isclose(pi_ref.sum(), 1.0):
        raise ValueError("pi_ref must be a probability vector with every entry > 0")
    pi = _softmax(theta)
    log_rho = np.log(pi_ref) - np.log(pi)
    k1, _, k3 = estimator_values(log_rho).T       # the page's own estimators, per response
    score = np.eye(pi.size) - pi[None, :]          # row y: d ln pi(y) / d theta = e_y - pi
    d_k1 = score
    d_k3 = (-np.expm1(log_rho))[:, None] * score   # (1 - rho) (e_y - pi)
    return EstimatorGradients(
        pi=pi, kl_reverse=kl(pi, pi_ref), kl_forward=kl(pi_ref, pi),
        mean_k1=float(pi @ k1), mean_k3=float(pi @ k3),
        grad_k1_loss=pi @ d_k1, grad_k3_loss=pi @ d_k3,
        grad_k1_score=pi @ (k1[:, None] * score))


# ---------------------------------------------------------------- reading the results

Z_MC = 3.0      # a mean this many standard errors from its expectation: beyond Monte Carlo error


def optima_apart(pi_ref: np.ndarray, r: np.ndarray, betas) -> np.ndarray:
    """TV(pi*, forward-KL optimum) at each beta: how far apart the optima of the reverse- and
    forward-KL objectives lie (Exercise 28.3) across a range of penalties."""
    return np.array([tv(target_policy(pi_ref, r, b), forward_kl_optimum(pi_ref, r, b))
                     for b in betas])


def furthest_on_log_scale(p: np.ndarray, q: np.ndarray) -> tuple[int, float]:
    """The response where p and q differ most on a log scale, and the ratio p/q there."""
    p, q = np.asarray(p, float), np.asarray(q, float)
    i = int(np.argmax(np.abs(np.log(p) - np.log(q))))
    return i, float(p[i] / q[i])


@dataclass(frozen=True)
class EstimatorCheck:
    """A sampled estimator table (``EstimatorStats``, samples of pi) read against the exact law
    of one sample, computed from the K probabilities. Arrays are (3,), order k1, k2, k3."""
    bias: np.ndarray             # the table's mean minus the true KL
    exact_bias: np.ndarray       # the exact expectation minus the true KL (k2's is not zero)
    exact_sd: np.ndarray         # the exact spread of one n-sample estimate
    se: np.ndarray               # standard error of the table's means, from the exact spread
    z: np.ndarray                # |bias| in standard errors (0 where the standard error is 0)
    within: np.ndarray           # z <= Z_MC: a bias Monte Carlo error explains
    n_negative: int              # k1 estimates below zero, of the table's repetitions
    p_positive: float            # pi's mass where pi > pi_ref, so that a sample of k1 is > 0


def estimator_check(pi: np.ndarray, pi_ref: np.ndarray, stats: EstimatorStats,
                    z_mc: float = Z_MC) -> EstimatorCheck:
    """Judge the table's means by the exact spread: a heavy tail hides from the sample spread
    (its largest values are seldom drawn), so the standard error comes from the exact one."""
    pi, pi_ref = np.asarray(pi, float), np.asarray(pi_ref, float)
    exact_mean, exact_sd = estimate_moments(pi, pi_ref, stats.n_samples)
    se = standard_error(exact_sd, stats.reps)
    bias = stats.mean - stats.true_kl
    z = np.divide(np.abs(bias), se, out=np.zeros(3), where=se > 0)
    return EstimatorCheck(bias=bias, exact_bias=exact_mean - stats.true_kl, exact_sd=exact_sd,
                          se=se, z=z, within=z <= z_mc,
                          n_negative=int(round(stats.share_negative[0] * stats.reps)),
                          p_positive=float(pi[pi > pi_ref].sum()))


@dataclass(frozen=True)
class HeavyTail:
    """The response behind k3's spread under pi: the largest pi(y)·k3(y)²."""
    index: int
    rho: float                   # pi_ref / pi there
    one_sample: float            # what one sample of it adds to an n-sample estimate: k3 / n
    expected_batches: float      # of ``reps`` batches of n samples, those expected to hold it
    p_never: float               # the chance that none of them holds it
    variance_share: float        # its share of k3's exact variance
    largest_share: bool          # whether it gives more of that variance than any other


def heavy_tail(pi: np.ndarray, pi_ref: np.ndarray, n_samples: int, reps: int) -> HeavyTail:
    """Where k3 = rho − 1 − log rho gets its spread: rho = pi_ref/pi is large on a response pi
    pushes down, and there rho − 1 dominates k3. Responses pi never samples are left out."""
    pi, pi_ref = np.asarray(pi, float), np.asarray(pi_ref, float)
    drawn = np.flatnonzero(pi > 0)
    p = pi[drawn]
    log_rho = np.log(pi_ref[drawn]) - np.log(p)
    k3 = estimator_values(log_rho)[:, 2]
    j = int(np.argmax(p * k3 ** 2))
    p_batch = -math.expm1(n_samples * math.log1p(-float(p[j])))    # held by one batch
    mean_k3 = estimate_moments(pi, pi_ref, n_samples)[0][2]
    parts = p * (k3 - mean_k3) ** 2                 # k3's variance, response by response
    return HeavyTail(index=int(drawn[j]), rho=float(np.exp(log_rho[j])),
                     one_sample=float(k3[j]) / n_samples, expected_batches=reps * p_batch,
                     p_never=math.exp(reps * math.log1p(-p_batch)) if p_batch < 1 else 0.0,
                     variance_share=float(parts[j] / parts.sum()),
                     largest_share=int(np.argmax(parts)) == j)
