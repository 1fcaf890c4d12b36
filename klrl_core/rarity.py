"""The price of rarity: how much reward gap a rare response needs to dominate the optimum.

Section 12.3.3 (the derivation ending in Equation 12.7) and Section 12.4.2. A response y1 of
reference probability p0 whose reward exceeds every other response's by at least delta gets,
at the optimum of Equation (12.4),

    pi*(y1) >= p0 e^{delta/beta} / (p0 e^{delta/beta} + 1 - p0),

with equality when there are two responses (or all the others sit exactly delta below).
In log-odds this is logit pi*(y1) >= logit p0 + delta/beta, the form used here: it never
overflows, so p0 down to 1e-12 and beta down to 1e-4 stay exact. Scalar inputs give floats.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._common import check_beta, sigmoid
from .tilt import Tilt, kl_divergence, tilt

M_MAX = 10_000        # most reference resets repeated_tilt performs

# Example 12.1: formal, casual and unhelpful answers; both helpful styles earn 1.
EXAMPLE_12_1_PI0 = np.array([0.2, 0.1, 0.7])
EXAMPLE_12_1_REWARDS = np.array([1.0, 1.0, 0.0])
EXAMPLE_12_1_LABELS = ("formal", "casual", "unhelpful")

# Section 12.4.2's reading of DeepSeek-R1-Zero: KL coefficient 0.001, a reward gap of 1.
DEEPSEEK_R1_ZERO_BETA = 0.001
DEEPSEEK_R1_ZERO_DELTA = 1.0


class ChangeFactor(NamedTuple):
    factor: float | np.ndarray      # e^{(r_max - r_min)/beta}; inf once it overflows a float
    log_factor: float | np.ndarray  # (r_max - r_min)/beta, always finite


class DominanceThreshold(NamedTuple):
    probability: float | np.ndarray        # e^{-delta/beta}, Eq. (12.7) read for p0 (may underflow)
    log_probability: float | np.ndarray    # -delta/beta
    exact_probability: float | np.ndarray  # 1/(1 + e^{delta/beta}): pi*(y1) = 1/2 exactly there
    exact_log_probability: float | np.ndarray


def _out(x):
    x = np.asarray(x, dtype=float)
    return float(x) if x.ndim == 0 else x


def _check_p0(p0, allow_one: bool = False) -> np.ndarray:
    p0 = np.asarray(p0, dtype=float)
    upper_ok = (p0 <= 1) if allow_one else (p0 < 1)
    if not np.all(np.isfinite(p0)) or np.any(p0 <= 0) or not np.all(upper_ok):
        bound = "(0, 1]" if allow_one else "(0, 1)"
        raise ValueError(f"the reference probability p0 must lie in {bound}")
    return p0


def _check_delta(delta, nonnegative: bool = True) -> np.ndarray:
    delta = np.asarray(delta, dtype=float)
    if not np.all(np.isfinite(delta)) or (nonnegative and np.any(delta < 0)):
        kind = "a non-negative" if nonnegative else "a finite"
        raise ValueError(f"the reward gap delta must be {kind} number")
    return delta


# --------------------------------------------------------------------------- pi*(y1)

def two_response_optimum(p0, delta, beta):
    """pi*(y1) when y1 (reference probability p0) beats the only other response by delta.

    Equation (12.4) with two responses: logit pi*(y1) = logit p0 + delta/beta. A negative
    delta (y1 worse) is allowed and exact too. Vectorised.
    """
    p0 = _check_p0(p0)
    delta = _check_delta(delta, nonnegative=False)
    beta = check_beta(beta)
    return _out(sigmoid(np.log(p0) - np.log1p(-p0) + delta / beta))


def many_response_lower_bound(p0, delta, beta):
    """The chapter's lower bound on pi*(y1) for any number of responses (Section 12.3.3).

    If every other response earns at most r(y1) - delta, then
    Z <= p0 e^{r(y1)/beta} + (1 - p0) e^{(r(y1) - delta)/beta} (step 1), and so
    pi*(y1) >= p0 e^{delta/beta} / (p0 e^{delta/beta} + 1 - p0) (step 2). The bound is the
    two-response optimum: the others' mass acts at worst as one response exactly delta below,
    and it is attained when every other response sits exactly delta below.
    """
    return two_response_optimum(p0, _check_delta(delta), beta)


# --------------------------------------------------------------------------- thresholds

def exact_threshold(p0, delta):
    """The beta below which pi*(y1) >= 1/2 in the two-response case: delta / log((1 - p0)/p0).

    Step 3 of the derivation, exact for two responses and sufficient for many. For
    p0 >= 1/2 the response holds half the mass at every beta, and the threshold is inf.
    """
    p0 = _check_p0(p0)
    delta = _check_delta(delta)
    log_odds_against = np.log1p(-p0) - np.log(p0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(p0 >= 0.5, np.inf, delta / np.where(p0 >= 0.5, 1.0, log_odds_against))
    return _out(out)


def bound_threshold(p0, delta):
    """Equation (12.7)'s sufficient condition beta < delta / log(1/p0).

    log(1/p0) > log((1 - p0)/p0), so this lies below the exact threshold: a conservative
    reading. p0 = 1 gives inf.
    """
    p0 = _check_p0(p0, allow_one=True)
    delta = _check_delta(delta)
    log_inv = -np.log(p0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(log_inv > 0, delta / np.where(log_inv > 0, log_inv, 1.0), np.inf)
    return _out(out)


def max_change_factor(reward_range, beta) -> ChangeFactor:
    """The largest factor by which the optimum can change any probability: e^{(r_max - r_min)/beta}.

    log(pi*/pi0) = r/beta - log Z and log Z lies between r_min/beta and r_max/beta
    (Section 12.3.3). The factor overflows a float once the exponent passes ~709, so its log
    is returned as well.
    """
    reward_range = _check_delta(reward_range)
    beta = check_beta(beta)
    log_factor = reward_range / beta
    with np.errstate(over="ignore"):
        factor = np.exp(log_factor)
    return ChangeFactor(_out(factor), _out(log_factor))


def reward_gap_for_rarity(factor, beta):
    """Extra reward gap that keeps a response dominant when it becomes `factor` times rarer: beta log factor.

    Equation (12.7) with p0 -> p0/factor: delta / log(factor/p0) < beta needs delta to grow
    by beta log(factor). A thousand times rarer costs beta log 1000 = 6.9 beta.
    """
    factor = np.asarray(factor, dtype=float)
    if not np.all(np.isfinite(factor)) or np.any(factor <= 0):
        raise ValueError("the rarity factor must be a positive number")
    return _out(check_beta(beta) * np.log(factor))


def dominance_threshold_probability(delta, beta) -> DominanceThreshold:
    """The reference probability above which a reward gap delta makes a response dominate.

    Equation (12.7) read for p0: beta < delta/log(1/p0) exactly when p0 > e^{-delta/beta}. The
    exact two-response condition p0 e^{delta/beta} >= 1 - p0 reads p0 >= 1/(1 + e^{delta/beta}),
    slightly lower. DeepSeek-R1-Zero's reading (beta = 0.001, delta = 1) gives e^{-1000}, which
    underflows a float: use the logs.
    """
    delta = _check_delta(delta)
    beta = check_beta(beta)
    x = delta / beta
    exact_log = -np.logaddexp(0.0, x)
    return DominanceThreshold(_out(np.exp(-x)), _out(-x), _out(np.exp(exact_log)), _out(exact_log))


# --------------------------------------------------------------------------- within a reward level

def log_odds(log_pi0, r, beta, i: int, j: int):
    """log pi*(y_i)/pi*(y_j) = log pi0(y_i)/pi0(y_j) + (r_i - r_j)/beta (Section 12.4.2).

    Responses of equal reward keep their reference odds at every beta (Example 12.1).
    Vectorised over beta.
    """
    log_pi0 = np.asarray(log_pi0, dtype=float)
    r = np.asarray(r, dtype=float)
    beta = check_beta(beta)
    return _out(log_pi0[..., i] - log_pi0[..., j] + (r[..., i] - r[..., j]) / beta)


def repeated_tilt(log_pi0, r, beta, m: int) -> Tilt:
    """m successive optima, each at beta with the reference reset to the previous one.

    Section 12.4.2: a tilt of a tilt is a tilt, so the result equals one tilt at beta/m.
    Done here step by step (not by that identity) so that it can be checked against it.
    ``kl`` is measured from the original pi0 and ``log_z`` is the sum of the steps' log Z,
    which equals log Z at kappa = m/beta. Vectorised over beta.
    """
    if isinstance(m, bool) or m != int(m) or not 1 <= m <= M_MAX:
        raise ValueError(f"the number of reference resets m must be a whole number from 1 to {M_MAX:,}")
    log_pi0 = np.asarray(log_pi0, dtype=float)
    r = np.asarray(r, dtype=float)
    if log_pi0.shape[-1:] != r.shape[-1:] or r.size == 0:
        raise ValueError("log_pi0 and r must give one value per response")
    kappa = 1.0 / check_beta(beta)
    log_pi = log_pi0
    log_z = 0.0
    for _ in range(int(m)):
        step = tilt(log_pi, r, kappa)
        log_pi = step.log_pi
        log_z = log_z + step.log_z
    pi = np.exp(log_pi)
    return Tilt(log_pi, pi, pi @ r, kl_divergence(log_pi, log_pi0), log_z)
