"""How group normalisation weights prompts of different solve rates (section 12.7.1's wrinkle,
Exercise 28.4 of chapter 28).

A prompt is solved with probability p; a group of k responses is graded 0/1 and response i gets an
advantage A_i computed from the group (``groups.group_advantages``: mean-centred, and possibly
divided by the group's standard deviation).  The prompt's expected update is
E[A_i grad log pi(y_i)].  Because A_i depends on the responses only through their grades, and
E[grad log pi(y) 1{y correct}] = grad p, this is exactly

    E[A_i grad log pi(y_i)] = w(p, k) * grad p,   w(p, k) = E[A_i | r_i = 1] - E[A_i | r_i = 0],

for any parametrisation of the policy (``update_weight``).  So every normalisation moves the
prompt along grad p; it only changes how hard, through the weight w.

* Mean-centring (Dr. GRPO's choice): r_i - mean = ((k - 1)/k) (r_i - b_i) with b_i the mean of the
  other k - 1 rewards (Exercise 28.4(b)), and b_i does not depend on response i, so
  w = (k - 1)/k for every p: the gradient of p, shortened (section 12.7.1).
* Division by the standard deviation sqrt(p (1 - p)) of the *true* solve rate (Exercise 28.4(c)):
  w = ((k - 1)/k) / sqrt(p (1 - p)), which is (k - 1)/k times d/dp of 2 arcsin sqrt(p): the update
  climbs 2 arcsin sqrt(p) instead of p and favours prompts with p near 0 or 1.
* Division by the *group's* standard deviation (what GRPO does, divisor k or k - 1): an exact sum
  over the binomial number of correct answers among the other k - 1 responses; groups that are
  all right or all wrong give zero.  It follows the arcsin law in the middle and saturates at the
  ends: as p -> 0 (or 1), w -> sqrt(k - 1) (divisor k), because a lone success gets advantage
  sqrt(k - 1) and never more.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from klrl_core import groups

CONVENTIONS = groups.CONVENTIONS  # "std", "std_unbiased", "dr_grpo"
DEFAULT_K = 8
MAX_K = 1024  # a 401-point curve at k = 1024 takes ~75 ms; k <= 256 stays under ~20 ms


def _p(p) -> np.ndarray:
    p = np.asarray(p, dtype=float)
    if not np.all(np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise ValueError("solve rate p must lie in [0, 1]")
    return p


def _k(k) -> int:
    if isinstance(k, bool) or int(k) != k or not 2 <= k <= MAX_K:
        raise ValueError(f"group size k must be an integer from 2 to {MAX_K}, got {k!r}")
    return int(k)


def centring_factor(k) -> float:
    """(k - 1)/k: how much mean-centring shortens the gradient (Exercise 28.4(b))."""
    k = _k(k)
    return (k - 1) / k


def _binomial_matrix(p: np.ndarray, n: int) -> np.ndarray:
    """P(j successes of n) for each p (rows) and j = 0..n (columns), in log space."""
    j = np.arange(n + 1, dtype=float)
    i = np.arange(1, n + 1, dtype=float)
    log_choose = np.concatenate(([0.0], np.cumsum(np.log(n - i + 1.0) - np.log(i))))
    pp = p.reshape(-1, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        # 0 * log 0 := 0, so p = 0 and p = 1 give point masses
        t1 = np.where(j == 0, 0.0, j * np.log(pp))
        t2 = np.where(j == n, 0.0, (n - j) * np.log1p(-pp))
    return np.exp(log_choose + t1 + t2)


def update_weight(p, k=DEFAULT_K, convention: str = "std"):
    """w(p, k) = E[A_i | r_i = 1] - E[A_i | r_i = 0]: the expected update is w * grad p.

    Exact: the other k - 1 grades are Binomial(k - 1, p).  With r_i = 1 and j others correct the
    group has c = j + 1 correct (no signal when c = k); with r_i = 0, c = j (no signal when
    c = 0).  Advantages of a mixed group come from ``groups.mixed_group_advantages``.
    Vectorised in p; at p = 0 or 1 the value is the limit (the conditional expectations are
    still defined there), although grad p vanishes for a softmax policy at those points.
    """
    p = _p(p)
    k = _k(k)
    groups._check_convention(convention)
    pmf = _binomial_matrix(p.ravel(), k - 1)  # (P, k) over j = 0..k-1
    c = np.arange(1, k, dtype=float)
    hi, lo = groups.mixed_group_advantages(c, k, convention)  # for c = 1..k-1
    hi, lo = np.atleast_1d(hi), np.atleast_1d(lo)
    # r_i = 1: c = j + 1 for j = 0..k-2 is mixed; j = k-1 (all correct) gives 0.
    a_right = pmf[:, : k - 1] @ hi
    # r_i = 0: c = j for j = 1..k-1 is mixed; j = 0 (all wrong) gives 0.
    a_wrong = pmf[:, 1:] @ lo
    out = (a_right - a_wrong).reshape(p.shape)
    return out if out.ndim else float(out)


def logit_update(p, k=DEFAULT_K, convention: str = "std"):
    """Expected update of the prompt's logit when the policy is one logit, p = sigmoid(theta):
    w(p, k) * dp/dtheta = w(p, k) p (1 - p).  This is how fast the prompt's solve rate moves."""
    p = _p(p)
    out = np.asarray(update_weight(p, k, convention)) * p * (1.0 - p)
    return out if out.ndim else float(out)


def arcsin_weight(p, k=None):
    """1/sqrt(p (1 - p)), the weight of Exercise 28.4(c) (true-std normalisation), times
    (k - 1)/k when k is given; +inf at p = 0 and p = 1."""
    p = _p(p)
    with np.errstate(divide="ignore"):
        out = 1.0 / np.sqrt(p * (1.0 - p))
    if k is not None:
        out = out * centring_factor(k)
    return out if out.ndim else float(out)


def objective_p(p):
    """The unnormalised objective: the solve rate itself."""
    p = _p(p)
    return p if p.ndim else float(p)


def objective_arcsin(p):
    """2 arcsin sqrt(p), whose derivative in p is 1/sqrt(p (1 - p)) (Exercise 28.4(c)).
    It runs from 0 to pi, against p's 0 to 1."""
    out = 2.0 * np.arcsin(np.sqrt(_p(p)))
    return out if out.ndim else float(out)


def objective_climbed(p, w) -> np.ndarray:
    """The objective whose slope in p is the weight w (the update climbs it: w times the
    gradient of p), as the running trapezoid integral of w over the increasing grid p, 0 at
    p[0]. With w the arcsin law it tends to ((k - 1)/k)·2·arcsin√p (Exercise 28.4(c))."""
    p, w = np.asarray(p, dtype=float), np.asarray(w, dtype=float)
    if p.ndim != 1 or p.shape != w.shape or p.size < 1 or np.any(np.diff(p) < 0):
        raise ValueError("p must be an increasing 1-D grid and w its weights, of one length")
    steps = np.diff(p) * 0.5 * (w[1:] + w[:-1])
    return np.concatenate(([0.0], np.cumsum(steps)))


@dataclass(frozen=True)
class WeightCurves:
    """Everything the page plots against p for one k (arrays over ``p``).

    ``centred`` = (k-1)/k; ``arcsin`` = (k-1)/k / sqrt(p(1-p)); ``std`` and ``std_unbiased`` the
    exact finite-k weights of the two std conventions; ``signal`` = 1 - p^k - (1-p)^k;
    ``saturation`` = sqrt(k - 1), the std weight's limit at p -> 0 and 1.
    """

    p: np.ndarray
    k: int
    centred: np.ndarray
    arcsin: np.ndarray
    std: np.ndarray
    std_unbiased: np.ndarray
    signal: np.ndarray
    saturation: float


def weight_curves(p, k=DEFAULT_K) -> WeightCurves:
    p = _p(p)
    k = _k(k)
    return WeightCurves(
        p=p,
        k=k,
        centred=np.full(p.shape, (k - 1) / k),
        arcsin=np.asarray(arcsin_weight(p, k)),
        std=np.asarray(update_weight(p, k, "std")),
        std_unbiased=np.asarray(update_weight(p, k, "std_unbiased")),
        signal=np.asarray(groups.signal_probability(p, k)),
        saturation=float(np.sqrt(k - 1.0)),
    )


@dataclass(frozen=True)
class LeaveOneOut:
    """Exercise 28.4(b) on one group: ``centred`` r - mean(r), ``baseline`` b_i (mean of the
    others), ``loo`` r - b, ``factor`` (G - 1)/G, and ``residual`` max |centred - factor * loo|
    (zero up to rounding)."""

    rewards: np.ndarray
    centred: np.ndarray
    baseline: np.ndarray
    loo: np.ndarray
    factor: float
    residual: float


def leave_one_out(rewards) -> LeaveOneOut:
    """The leave-one-out baseline of a group and the (G - 1)/G identity (reuses
    ``groups.leave_one_out_baseline``; rewards need not be 0/1)."""
    r = np.asarray(rewards, dtype=float)
    if r.ndim != 1 or not np.all(np.isfinite(r)):
        raise ValueError("give one finite reward per response")
    b = groups.leave_one_out_baseline(r)  # raises for fewer than two rewards
    g = r.size
    centred = r - r.mean()
    loo = r - b
    factor = (g - 1) / g
    return LeaveOneOut(r, centred, b, loo, factor, float(np.max(np.abs(centred - factor * loo))))
