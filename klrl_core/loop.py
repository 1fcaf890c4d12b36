"""The training loop of Section 12.7.4: a sampled policy-gradient run on shared parameters.

SPEC.md, "The training loop". 24 problems and 8 solution strategies shared by all of them. On a
common problem strategy 1 is right (reference probability 0.3), strategy 2 is wrong (0.1) and
the other six share 0.6; on a rare problem only strategy 2 is right (0.05) and the other seven
share 0.95. The number of problems stays 24: ``rare`` of them are rare (default 4) and
24 - rare common, so the rare ones are problems 25 - rare, ..., 24 and ``rare`` may be 0..24.

The policy on problem i is softmax(log pi_ref_i + theta) with theta one vector of 8 shared by
every problem (``shared=True``, a network's shared weights) or one vector per problem
(``shared=False``, the tabular case in which each problem is its own optimum). Each step draws
G strategies per problem from the current policy, grades them 0/1 and ascends

    (1/G) sum_j A_j grad log pi(y_j)  -  kl (1/G) sum_j (1 - rho_j) grad log pi(y_j)

with the estimator's advantages A_j (Section 12.7.1; ``advantages``), rho_j = pi_ref(y_j) /
pi(y_j), and grad log pi(y) = onehot(y) - pi, the softmax's exact score (the second term is
"k3 as a loss" of chapter 28, the GRPO-style penalty of klrl_core/kl_penalty.py). With shared
parameters the one vector takes the mean of the problems' gradients; per problem, each
problem's vector takes its own problem's gradient at the same step size, so a common problem
moves about as fast in both cases (20/24 of the speed when shared, at the defaults).

Recorded at every step t = 0..steps (before the update of step t; t = steps is the end):
each problem's exact solve rate from the policy (not from the samples), KL(pi || pi_ref) and
the entropy averaged over problems, the exact chance that a problem's group is all wrong
(averaged over problems) and, for t < steps, the share of the groups actually drawn that were
all wrong. All R runs are one array computation; the only Python loop is over the steps.

The same model without sampling (``expected_run``): each step takes the estimator's expected
update under the current policy, enumerated exactly over the group's outcomes, so a class can
tell what the sampling does from what the shared parameters do.

Also here: pass@k of the trained mixture by step, the smallest k at which the base overtakes it,
and the KL-matched optimum (one beta for all problems, found by bisection, such that the tilts
pi_ref_i exp(r_i / beta) have the run's mean KL; Section 12.7.4 shows its pass@k never falls).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import groups, pass_at_k, tilt
from ._common import check_int

N_PROBLEMS = 24
N_STRATEGIES = 8
RIGHT_COMMON, RIGHT_RARE = 0, 1          # strategy 1 and strategy 2, as indices
REF_COMMON = (0.3, 0.1) + (0.1,) * 6     # strategy 1 right, 2 wrong, six share 0.6
REF_RARE_RIGHT = 0.05                    # strategy 2, the only right one on a rare problem
RARE_DEFAULT = 4
RUNS_DEFAULT = 20
STEPS_DEFAULT = 300
G_DEFAULT = 8
LR_DEFAULT = 0.5
KL_DEFAULT = 0.0
ESTIMATOR_DEFAULT = "grpo"
ESTIMATORS = ("reinforce", "rloo", "grpo", "dr_grpo")
ESTIMATOR_LABELS = {"reinforce": "REINFORCE (no baseline)", "rloo": "RLOO",
                    "grpo": "GRPO", "dr_grpo": "Dr. GRPO"}
G_MAX = 1024
STEPS_MAX = 100_000
RUNS_MAX = 10_000
KAPPA_MAX = 1e4            # the matched optimum's largest 1/beta (klrl_app's kappa range)
CROSSOVER_TOL = 1e-9       # the base must lead by more than this (rounding is ~1e-16)
_BISECTION_STEPS = 64      # on log kappa from 1e-8 to 1e4: a relative width below 1e-9


# --------------------------------------------------------------------------- the problems

@dataclass(frozen=True)
class Problems:
    """The 24 problems: reference policies (24, 8), 0/1 correctness (24, 8), rare mask (24,)."""

    pi_ref: np.ndarray
    correct: np.ndarray
    rare: np.ndarray

    @property
    def base_rates(self) -> np.ndarray:
        """Each problem's solve rate under pi_ref: 0.3 on a common problem, 0.05 on a rare one."""
        return np.sum(self.pi_ref * self.correct, axis=-1)


def _check_real(x, name: str, positive: bool) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a number, got {x!r}")
    x = float(x)
    if not math.isfinite(x) or (x <= 0 if positive else x < 0):
        raise ValueError(f"{name} must be a finite number {'> 0' if positive else '>= 0'}, "
                         f"got {x!r}")
    return x


def _check_estimator(estimator: str) -> str:
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator must be one of {ESTIMATORS}, got {estimator!r}")
    return estimator


def problems(rare: int = RARE_DEFAULT) -> Problems:
    """The SPEC's problems: 24 - rare common ones first, then ``rare`` rare ones."""
    rare = check_int(rare, "rare", 0, N_PROBLEMS)
    common_ref = np.array(REF_COMMON)
    rare_ref = np.full(N_STRATEGIES, (1.0 - REF_RARE_RIGHT) / (N_STRATEGIES - 1))
    rare_ref[RIGHT_RARE] = REF_RARE_RIGHT
    is_rare = np.arange(N_PROBLEMS) >= N_PROBLEMS - rare
    pi_ref = np.where(is_rare[:, None], rare_ref, common_ref)
    correct = np.zeros((N_PROBLEMS, N_STRATEGIES))
    correct[~is_rare, RIGHT_COMMON] = 1.0
    correct[is_rare, RIGHT_RARE] = 1.0
    return Problems(_frozen(pi_ref), _frozen(correct), _frozen(is_rare))


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    a.flags.writeable = False
    return a


# --------------------------------------------------------------------------- one step's pieces

def policy(logits) -> tuple[np.ndarray, np.ndarray]:
    """(log pi, pi) = log-softmax and softmax of the logits over the last axis (the 8
    strategies), shifted by the row's largest logit so exp never overflows."""
    z = np.asarray(logits, dtype=float)
    z = z - z.max(axis=-1, keepdims=True)
    log_pi = z - np.log(np.sum(np.exp(z), axis=-1, keepdims=True))
    return log_pi, np.exp(log_pi)


def advantages(rewards, estimator: str) -> np.ndarray:
    """Each response's advantage in its group (groups along the last axis), Section 12.7.1.

    REINFORCE without a baseline uses the reward itself; RLOO subtracts the mean of the other
    G - 1 rewards (chapter 28, exercise 28.4); GRPO centres on the group mean and divides by the
    group's standard deviation over the G rewards (the chapter's convention); Dr. GRPO only
    centres. A flat group gets zeros under the last three (groups.group_advantages)."""
    _check_estimator(estimator)
    r = np.asarray(rewards, dtype=float)
    if estimator == "reinforce":
        return r.copy()
    if estimator == "rloo":
        return r - groups.leave_one_out_baseline(r)
    return groups.group_advantages(r, "std" if estimator == "grpo" else "dr_grpo")


def sample_groups(pi: np.ndarray, g: int, rng: np.random.Generator) -> np.ndarray:
    """G strategies drawn from each row of pi (..., 8), as one-hot rows (..., G, 8) of 0/1.

    Inverse CDF: u ~ U(0, 1) picks the first y with u < F(y), so the indicator row is where
    [u < F(y)] switches from False to True. The last CDF entry is set to 1 so rounding can
    never leave a draw without a strategy."""
    cdf = np.cumsum(pi, axis=-1)
    cdf[..., -1] = 1.0
    u = rng.random(pi.shape[:-1] + (g,))
    below = u[..., None] < cdf[..., None, :]              # (..., G, 8): False.., True..
    return np.diff(below, axis=-1, prepend=False).astype(float)


def group_gradient(pi: np.ndarray, onehot: np.ndarray, adv: np.ndarray,
                   kl: float = 0.0, log_rho: np.ndarray | None = None) -> np.ndarray:
    """(1/G) sum_j w_j (onehot_j - pi) with w_j = A_j - kl (1 - rho_j): the step's direction.

    pi (..., 8), onehot (..., G, 8), adv and log_rho = log pi_ref(y_j) - log pi(y_j) (..., G).
    The k3 penalty's gradient through log pi is (1 - rho) times the score (chapter 28, "k3 as a
    loss"); 1 - rho is taken as -expm1(log rho), exact near rho = 1."""
    w = np.asarray(adv, dtype=float)
    if kl:
        w = w + kl * np.expm1(log_rho)                    # A - kl (1 - rho)
    g = onehot.shape[-2]
    return (np.einsum("...g,...gk->...k", w, onehot) - w.sum(axis=-1)[..., None] * pi) / g


def exact_gradient(pi, correct) -> np.ndarray:
    """grad_theta E_pi[r] = pi * (r - E_pi[r]) for a softmax policy with 0/1 rewards r."""
    pi = np.asarray(pi, dtype=float)
    correct = np.asarray(correct, dtype=float)
    p = np.sum(pi * correct, axis=-1, keepdims=True)
    return pi * (correct - p)


# --------------------------------------------------------------------------- the run

@dataclass(frozen=True)
class LoopRun:
    """R runs of ``steps`` steps; arrays indexed [run, step (0..steps), problem]."""

    estimator: str
    g: int
    lr: float
    steps: int
    kl_coef: float
    shared: bool
    rare: int
    runs: int
    seed: int
    problems: Problems
    success: np.ndarray          # (R, steps + 1, 24) exact solve rate of each problem
    kl: np.ndarray               # (R, steps + 1) KL(pi || pi_ref), mean over problems (nats)
    entropy: np.ndarray          # (R, steps + 1) entropy of pi, mean over problems (nats)
    all_wrong: np.ndarray        # (R, steps + 1) P(a group of G is all wrong), mean over problems
    all_wrong_drawn: np.ndarray  # (R, steps) share of the drawn groups that were all wrong
    exact: bool = False          # expected_run: no draws (all_wrong_drawn is then all_wrong's)

    @property
    def mean_success(self) -> np.ndarray:
        """(steps + 1, 24): each problem's solve rate, mean over runs."""
        return self.success.mean(axis=0)


def run(estimator: str = ESTIMATOR_DEFAULT, g: int = G_DEFAULT, lr: float = LR_DEFAULT,
        steps: int = STEPS_DEFAULT, kl: float = KL_DEFAULT, shared: bool = True,
        rare: int = RARE_DEFAULT, runs: int = RUNS_DEFAULT, seed: int = 0) -> LoopRun:
    """Train ``runs`` independent policies from pi_ref (module docstring) and record them.

    Draws come from np.random.default_rng(seed); the same arguments give the same runs."""
    estimator = _check_estimator(estimator)
    g = check_int(g, "the group size G", 2, G_MAX)
    lr = _check_real(lr, "the step size lr", positive=True)
    steps = check_int(steps, "steps", 0, STEPS_MAX)
    kl = _check_real(kl, "the KL coefficient kl", positive=False)
    runs = check_int(runs, "runs", 1, RUNS_MAX)
    seed = check_int(seed, "seed", 0, 2**63 - 1)
    if not isinstance(shared, (bool, np.bool_)):
        raise ValueError(f"shared must be True or False, got {shared!r}")
    prob = problems(rare)
    rng = np.random.default_rng(seed)
    log_ref = np.log(prob.pi_ref)                           # (P, 8)
    correct = prob.correct
    theta = np.zeros((runs, 1 if shared else N_PROBLEMS, N_STRATEGIES))
    shape = (runs, steps + 1)
    success = np.empty(shape + (N_PROBLEMS,))
    kl_mean, entropy, all_wrong = np.empty(shape), np.empty(shape), np.empty(shape)
    drawn = np.empty((runs, steps))
    for t in range(steps + 1):
        log_pi, pi = policy(log_ref + theta)                # (R, P, 8)
        p = np.sum(pi * correct, axis=-1)                   # exact solve rates (R, P)
        success[:, t] = p
        kl_mean[:, t] = np.sum(pi * (log_pi - log_ref), axis=-1).mean(axis=-1)
        entropy[:, t] = -np.sum(pi * log_pi, axis=-1).mean(axis=-1)
        # (1 - p)^G, the chance that a group carries no signal for any estimator (12.7.1)
        with np.errstate(divide="ignore"):              # p = 1: log 0 = -inf, e^-inf = 0
            all_wrong[:, t] = np.exp(g * np.log1p(-np.minimum(p, 1.0))).mean(axis=-1)
        if t == steps:
            break
        onehot = sample_groups(pi, g, rng)                  # (R, P, G, 8)
        rewards = onehot @ correct[:, :, None]              # (R, P, G, 1)
        rewards = rewards[..., 0]
        drawn[:, t] = np.mean(rewards.max(axis=-1) == 0.0, axis=-1)
        adv = advantages(rewards, estimator)
        log_rho = None
        if kl:
            log_rho = (onehot @ (log_ref - log_pi)[..., None])[..., 0]
        grad = group_gradient(pi, onehot, adv, kl, log_rho)  # (R, P, 8)
        if shared:
            grad = grad.mean(axis=1, keepdims=True)
        theta += lr * grad
    return LoopRun(estimator, g, lr, steps, kl, bool(shared), int(prob.rare.sum()), runs, seed,
                   prob, _frozen(success), _frozen(kl_mean), _frozen(entropy),
                   _frozen(all_wrong), _frozen(drawn))


# --------------------------------------------------------------------------- no sampling

def estimator_factor(p, g: int, estimator: str) -> np.ndarray:
    """E[the estimator's group step] / exact_gradient on a problem solved with chance p.

    With 0/1 rewards a group's step depends on the draws only through the number c of right
    answers, c ~ Binomial(G, p). REINFORCE and RLOO are unbiased (1); Dr. GRPO's centring on
    the group's own mean costs (G - 1)/G; GRPO gives a right answer sqrt((G - c)/c) and a wrong
    one -sqrt(c/(G - c)), so its mean step is E[sqrt(c (G - c))] / (G p (1 - p)) times the
    exact gradient (Section 12.7.1). Summed as sum_c C(G, c) p^(c-1) (1-p)^(G-c-1)
    sqrt(c (G - c)) / G in logs: no division, finite as p -> 0 or 1 (sqrt(G - 1) there)."""
    _check_estimator(estimator)
    g = check_int(g, "the group size G", 2, G_MAX)
    p = np.asarray(p, dtype=float)
    if estimator in ("reinforce", "rloo"):
        return np.ones_like(p)
    if estimator == "dr_grpo":
        return np.full_like(p, (g - 1) / g)
    c = np.arange(1, g)                                  # c = 0 and c = G give no step
    log_comb = np.array([math.lgamma(g + 1) - math.lgamma(k + 1) - math.lgamma(g - k + 1)
                         for k in c])
    q = np.clip(p, 0.0, 1.0)[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        # (c - 1) log p and (G - c - 1) log(1 - p), with 0 * log 0 = 0 (p^0 = 1 at p = 0)
        lp = np.where(c > 1, (c - 1) * np.log(q), 0.0)
        lq = np.where(c < g - 1, (g - c - 1) * np.log1p(-q), 0.0)
    terms = np.exp(log_comb + lp + lq) * np.sqrt(c * (g - c))
    return terms.sum(axis=-1) / g


def expected_step(pi, pi_ref, correct, g: int, estimator: str, kl: float = 0.0) -> np.ndarray:
    """The expected group_gradient under pi (no sampling): estimator_factor times
    exact_gradient, minus kl (pi - pi_ref), the expectation of the k3 penalty's term
    E[(1 - rho) grad log pi] = pi - pi_ref (chapter 28, "k3 as a loss")."""
    pi = np.asarray(pi, dtype=float)
    correct = np.asarray(correct, dtype=float)
    p = np.sum(pi * correct, axis=-1)
    step = estimator_factor(p, g, estimator)[..., None] * exact_gradient(pi, correct)
    if kl:
        step = step - kl * (pi - np.asarray(pi_ref, dtype=float))
    return step


def expected_run(estimator: str = ESTIMATOR_DEFAULT, g: int = G_DEFAULT, lr: float = LR_DEFAULT,
                 steps: int = STEPS_DEFAULT, kl: float = KL_DEFAULT, shared: bool = True,
                 rare: int = RARE_DEFAULT) -> LoopRun:
    """``run`` without sampling: every step ascends the estimator's expected update under the
    current policy (expected_step), with the same shared or per-problem theta. One
    deterministic run (R = 1, seed 0); the drawn all-wrong share is replaced by its
    expectation, (1 - p)^G averaged over problems."""
    estimator = _check_estimator(estimator)
    g = check_int(g, "the group size G", 2, G_MAX)
    lr = _check_real(lr, "the step size lr", positive=True)
    steps = check_int(steps, "steps", 0, STEPS_MAX)
    kl = _check_real(kl, "the KL coefficient kl", positive=False)
    if not isinstance(shared, (bool, np.bool_)):
        raise ValueError(f"shared must be True or False, got {shared!r}")
    prob = problems(rare)
    log_ref = np.log(prob.pi_ref)
    theta = np.zeros((1 if shared else N_PROBLEMS, N_STRATEGIES))
    success = np.empty((1, steps + 1, N_PROBLEMS))
    kl_mean, entropy, all_wrong = (np.empty((1, steps + 1)) for _ in range(3))
    for t in range(steps + 1):
        log_pi, pi = policy(log_ref + theta)                # (P, 8)
        p = np.sum(pi * prob.correct, axis=-1)
        success[0, t] = p
        kl_mean[0, t] = np.sum(pi * (log_pi - log_ref), axis=-1).mean()
        entropy[0, t] = -np.sum(pi * log_pi, axis=-1).mean()
        with np.errstate(divide="ignore"):
            all_wrong[0, t] = np.exp(g * np.log1p(-np.minimum(p, 1.0))).mean()
        if t == steps:
            break
        grad = expected_step(pi, prob.pi_ref, prob.correct, g, estimator, kl)
        if shared:
            grad = grad.mean(axis=0, keepdims=True)
        theta += lr * grad
    return LoopRun(estimator, g, lr, steps, kl, bool(shared), int(prob.rare.sum()), 1, 0,
                   prob, _frozen(success), _frozen(kl_mean), _frozen(entropy),
                   _frozen(all_wrong), _frozen(all_wrong[:, :steps].copy()), exact=True)


# --------------------------------------------------------------------------- pass@k

def pass_at_k_by_step(success: np.ndarray, ks) -> np.ndarray:
    """(steps + 1, K): pass@k of the mixture over problems at each step, mean over runs.

    success is (R, T, P); the mean over runs of each run's mixture pass@k is the mixture over
    all R·P (run, problem) pairs, which pass_at_k.mixture_pass_at_k averages."""
    success = np.asarray(success, dtype=float)
    if success.ndim != 3:
        raise ValueError("success must have shape (runs, steps + 1, problems)")
    r, t, p = success.shape
    rates = np.moveaxis(success, 1, 0).reshape(t, r * p)
    ks = np.asarray(ks, dtype=float)
    if ks.ndim != 1:
        raise ValueError("ks must be a 1-D list of k")
    return np.asarray(pass_at_k.mixture_pass_at_k(rates, ks[:, None])).T


def crossover_by_step(base_rates, success: np.ndarray, k_max: int = 1024,
                      tol: float = CROSSOVER_TOL) -> np.ndarray:
    """At each step, the smallest whole k <= k_max at which the base's pass@k exceeds the
    trained mixture's (mean over runs) by more than ``tol``; 0 where it never does.

    Every integer k is checked (the curves can cross more than once), with the failure
    probabilities (1 - p)^k kept as running products over k: one multiplication per k instead
    of a power, so all steps and all 1..k_max take one pass. The products drift by about k
    rounding errors (1e-13 at k = 1,024), far below ``tol``; tests check the result against
    pass_at_k.crossover_k."""
    base = pass_at_k._check_rates(base_rates, "base_rates")
    success = np.asarray(success, dtype=float)
    if success.ndim != 3 or base.ndim != 1:
        raise ValueError("need base rates (P,) and success of shape (runs, steps + 1, problems)")
    k_max = check_int(k_max, "k_max", 1, pass_at_k.CROSSOVER_K_MAX)
    r, t, p = success.shape
    q_after = 1.0 - np.moveaxis(success, 1, 0).reshape(t, r * p)
    q_base = 1.0 - base
    fail_after, fail_base = np.ones_like(q_after), np.ones_like(q_base)
    out = np.zeros(t, dtype=int)
    open_ = np.ones(t, dtype=bool)
    for k in range(1, k_max + 1):
        fail_after *= q_after
        fail_base *= q_base
        # base pass@k - trained pass@k = mean fail(trained) - mean fail(base)
        lead = fail_after.mean(axis=1) - fail_base.mean() > tol
        hit = lead & open_
        out[hit] = k
        open_ &= ~hit
        if not open_.any():
            break
    return out


# --------------------------------------------------------------------------- the matched optimum

@dataclass(frozen=True)
class MatchedOptimum:
    """The KL-regularized optimum with one beta whose mean KL over problems is the target."""

    kappa: np.ndarray        # 1/beta per target (0: the reference itself)
    beta: np.ndarray         # inf where kappa = 0
    kl: np.ndarray           # its mean KL over problems, nats
    rates: np.ndarray        # (targets, P) each problem's solve rate p*
    reached: np.ndarray      # False where the target exceeds the optimum's KL at kappa = 1e4


def _kinds(prob: Problems) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct (pi_ref, correct) rows and how many problems have each: common and rare."""
    rows = np.concatenate([prob.pi_ref, prob.correct], axis=1)
    kinds, counts = np.unique(rows, axis=0, return_counts=True)
    return kinds[:, :N_STRATEGIES], kinds[:, N_STRATEGIES:], counts


def _mean_tilt_kl(prob: Problems, kappa: np.ndarray) -> np.ndarray:
    """mean_i KL(pi*_i || pi_ref_i) at each kappa: klrl_core.tilt on each kind of problem."""
    ref, correct, counts = _kinds(prob)
    kls = [np.asarray(tilt.tilt(np.log(pr), c, kappa).kl) for pr, c in zip(ref, correct)]
    return np.tensordot(counts / counts.sum(), np.array(kls), axes=1)


def matched_optimum(prob: Problems, target_kl) -> MatchedOptimum:
    """For each target mean KL, the beta with mean_i KL(pi*_i || pi_ref_i) = target (bisection).

    pi*_i = pi_ref_i exp(r_i / beta) / Z_i (Equation 12.4, klrl_core.tilt); its mean KL rises
    with kappa = 1/beta from 0, so bisection on log kappa finds it. A target above the KL at
    kappa = 1e4 (the optimum cannot spend more: mean_i -log p_i is its limit) gets kappa = 1e4
    and ``reached`` False. The solve rates are pass_at_k.optimal_solve_rate at that beta."""
    target = np.atleast_1d(np.asarray(target_kl, dtype=float))
    if target.ndim != 1 or not np.all(np.isfinite(target)) or np.any(target < 0):
        raise ValueError("target_kl must be finite KL values >= 0 (nats)")
    kl_max = _mean_tilt_kl(prob, np.array([KAPPA_MAX]))[0]
    reached = target <= kl_max
    lo = np.full(target.shape, math.log(1e-8))
    hi = np.full(target.shape, math.log(KAPPA_MAX))
    for _ in range(_BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        above = _mean_tilt_kl(prob, np.exp(mid)) > target
        hi = np.where(above, mid, hi)
        lo = np.where(above, lo, mid)
    kappa = np.where(reached, np.exp(0.5 * (lo + hi)), KAPPA_MAX)
    kappa = np.where(target == 0, 0.0, kappa)
    with np.errstate(divide="ignore"):
        beta = 1.0 / kappa
    rates = np.asarray(pass_at_k.optimal_solve_rate(prob.base_rates, beta[:, None]))
    return MatchedOptimum(kappa, beta, _mean_tilt_kl(prob, kappa), rates, reached)


# --------------------------------------------------------------------------- what a run shows

def solve_rate_by_step(success: np.ndarray, which) -> np.ndarray:
    """(steps + 1,): the mean solve rate of the problems ``which`` selects (a mask over the
    24), over the runs and those problems; NaN at every step when it selects none."""
    success = np.asarray(success, dtype=float)
    which = np.asarray(which, dtype=bool)
    if success.ndim != 3 or which.shape != success.shape[2:]:
        raise ValueError("need success (runs, steps + 1, problems) and a mask over problems")
    if not which.any():
        return np.full(success.shape[1], np.nan)
    return success[:, :, which].mean(axis=(0, 2))


def all_wrong_by_step(success: np.ndarray, g: int, which) -> np.ndarray:
    """(steps + 1,): the chance (1 - p)^G that a group of G answers to one of the problems
    ``which`` selects is all wrong (no reward signal, Section 12.7.1), mean over runs and
    those problems; NaN when it selects none."""
    success = np.asarray(success, dtype=float)
    which = np.asarray(which, dtype=bool)
    g = check_int(g, "g", 1, G_MAX)
    if success.ndim != 3 or which.shape != success.shape[2:]:
        raise ValueError("need success (runs, steps + 1, problems) and a mask over problems")
    if not which.any():
        return np.full(success.shape[1], np.nan)
    return 1.0 - np.asarray(pass_at_k.pass_at_k(success[:, :, which], g)).mean(axis=(0, 2))


def optimum_check(base_rates, opt_rates, base_passk, opt_passk) -> np.ndarray:
    """(targets,): Section 12.7.4's guarantee, checked at each step's matched optimum: every
    problem's optimal solve rate p* at least its base rate, and the optimum's mixture pass@k
    at least the base's at every k of the grid (opt_passk (targets, K), base_passk (K,))."""
    base_rates, opt_rates = np.asarray(base_rates, float), np.asarray(opt_rates, float)
    base_passk, opt_passk = np.asarray(base_passk, float), np.asarray(opt_passk, float)
    if opt_rates.ndim != 2 or opt_rates.shape[1:] != base_rates.shape \
            or opt_passk.ndim != 2 or opt_passk.shape[1:] != base_passk.shape \
            or opt_rates.shape[0] != opt_passk.shape[0]:
        raise ValueError("need base (P,), p* (T, P), base pass@k (K,) and optimum's (T, K)")
    return np.all(opt_rates >= base_rates, axis=1) & np.all(opt_passk >= base_passk, axis=1)


def largest_base_lead(base_rates, rates, k_max: int = 1024) -> tuple[float, int]:
    """The base model's largest lead over the trained mixture (solve rates ``rates``, any
    shape, every entry one problem of one run) in mixture pass@k over whole k = 1..k_max, and
    the smallest k where it is reached. Negative when the trained mixture leads everywhere."""
    k_max = check_int(k_max, "k_max", 1, pass_at_k.CROSSOVER_K_MAX)
    ks = np.arange(1.0, k_max + 1.0)
    after = np.asarray(pass_at_k.mixture_pass_at_k(np.ravel(rates), ks))
    before = np.asarray(pass_at_k.mixture_pass_at_k(base_rates, ks))
    i = int(np.argmax(before - after))
    return float(before[i] - after[i]), int(ks[i])


@dataclass(frozen=True)
class RunCurves:
    """What Section 12.7.4's figures read from one setting's runs, per step (mean over the
    runs): pass@k on the grid ``ks`` (which holds 1 and 256), the KL-matched optimum, and the
    rare and common problems' rates (NaN when there are none of the kind)."""

    run: LoopRun
    ks: np.ndarray
    success: np.ndarray       # (T, 24) mean solve rate per problem
    passk: np.ndarray         # (T, K) the trained mixture
    base: np.ndarray          # (K,) the base model
    opt: MatchedOptimum
    opt_passk: np.ndarray     # (T, K) the KL-matched optimum
    p1: np.ndarray            # (T,) pass@1 of the trained mixture
    p256: np.ndarray
    opt_p256: np.ndarray
    base_p1: float
    base_p256: float
    cross: np.ndarray         # (T,) where the base overtakes (0: nowhere up to k_max)
    kl: np.ndarray            # (T,) mean over runs and problems
    entropy: np.ndarray
    all_wrong: np.ndarray     # (T,) all problems
    rare_wrong: np.ndarray    # (T,) rare problems only
    rare_rate: np.ndarray     # (T,) mean solve rate of the rare problems
    common_rate: np.ndarray
    opt_rare_rate: np.ndarray  # (T,) the matched optimum's on the rare problems
    opt_ok: np.ndarray        # (T,) optimum_check

    def narrowed(self, step: int, seen: float) -> bool:
        """pass@256 is more than ``seen`` below the base model's at ``step``."""
        return bool(self.p256[step] < self.base_p256 - seen)

    def rare_fell(self, step: int, seen: float) -> bool:
        """The rare problems' success is more than ``seen`` below its start at ``step``
        (never, without rare problems)."""
        return self.run.rare > 0 and bool(self.rare_rate[step] < self.rare_rate[0] - seen)


def run_curves(run_: LoopRun, ks, k_max: int = 1024) -> RunCurves:
    """Every per-step curve of a run that the chapter's figures and checks read."""
    ks = np.asarray(ks, dtype=float)
    if ks.ndim != 1 or not {1.0, 256.0} <= set(ks.tolist()):
        raise ValueError("ks must be a 1-D grid holding k = 1 and k = 256")
    i1, i256 = int(np.flatnonzero(ks == 1)[0]), int(np.flatnonzero(ks == 256)[0])
    prob = run_.problems
    passk = pass_at_k_by_step(run_.success, ks)
    base = np.asarray(pass_at_k.mixture_pass_at_k(prob.base_rates, ks))
    kl_mean = run_.kl.mean(axis=0)
    opt = matched_optimum(prob, kl_mean)
    opt_passk = np.asarray(pass_at_k.mixture_pass_at_k(opt.rates, ks[:, None])).T
    rare_rate = solve_rate_by_step(run_.success, prob.rare)
    opt_rare = (opt.rates[:, prob.rare].mean(axis=1) if prob.rare.any()
                else np.full(len(kl_mean), np.nan))
    return RunCurves(
        run_, ks, run_.mean_success, passk, base, opt, opt_passk, passk[:, i1], passk[:, i256],
        opt_passk[:, i256], float(base[i1]), float(base[i256]),
        crossover_by_step(prob.base_rates, run_.success, k_max), kl_mean,
        run_.entropy.mean(axis=0), run_.all_wrong.mean(axis=0),
        all_wrong_by_step(run_.success, run_.g, prob.rare), rare_rate,
        solve_rate_by_step(run_.success, ~prob.rare), opt_rare,
        optimum_check(prob.base_rates, opt.rates, base, opt_passk))
