"""Exact best-of-n on a finite set of responses (Section 12.5).

pi_n(y) = F(y)^n - F^-(y)^n (Section 12.5.1), with F the reference probability of a reward
at most r(y) and F^- of a reward strictly below it. Responses with tied rewards form one
level; a level's mass is shared among its responses in proportion to pi0. Everything is in
log space so that n up to 10^7 stays exact and finite.
"""

from typing import NamedTuple

import numpy as np

from .tilt import kl_divergence

N_MAX = 10_000_000


class BestOfN(NamedTuple):
    log_pi: np.ndarray    # log pi_n(y), shape (..., responses), in the input order
    pi: np.ndarray
    expected: np.ndarray  # E_{pi_n}[r]
    kl: np.ndarray        # exact KL(pi_n || pi0), nats
    bound: np.ndarray     # log n - (n - 1)/n, Equation (12.8)


def kl_bound(n) -> np.ndarray:
    """The folklore formula log n - (n-1)/n, an upper bound on the exact KL (Eq. 12.8)."""
    n = np.asarray(n, dtype=float)
    return np.log(n) - (n - 1.0) / n


def _log_levels(log_pi0: np.ndarray, r: np.ndarray):
    """Reward levels (tied rewards share one) and the log of each level's reference mass.

    Returns the level index of every response and log P(level), summed in log space so that
    levels far below machine precision keep their mass."""
    order = np.argsort(r, kind="stable")
    sorted_r = r[order]
    starts = np.flatnonzero(np.r_[True, sorted_r[1:] != sorted_r[:-1]])
    counts = np.diff(np.r_[starts, r.size])
    index = np.empty(r.size, dtype=np.intp)
    index[order] = np.repeat(np.arange(starts.size), counts)
    top = np.maximum.reduceat(log_pi0[order], starts)
    safe_top = np.where(np.isfinite(top), top, 0.0)
    total = np.add.reduceat(np.exp(log_pi0[order] - safe_top[index[order]]), starts)
    with np.errstate(divide="ignore"):
        log_mass = np.where(np.isfinite(top), safe_top + np.log(total), -np.inf)
    return index, log_mass


def _log_cdf(log_mass: np.ndarray) -> np.ndarray:
    """log F(level) = log P(reward <= level), accurate at both ends of the scale.

    Near the top F is 1 minus a small upper tail, taken as log1p(-tail); elsewhere F is the
    running sum from the bottom. Both sums are done in log space."""
    log_below = np.logaddexp.accumulate(log_mass)                     # log P(reward <= level)
    log_above = np.concatenate([np.logaddexp.accumulate(log_mass[::-1])[::-1][1:], [-np.inf]])
    above = np.exp(log_above)
    with np.errstate(divide="ignore"):
        return np.where(above < 0.5, np.log1p(-np.minimum(above, 1.0)), log_below)


def _prepare(log_pi0: np.ndarray, r: np.ndarray):
    """What best-of-n needs that does not depend on n."""
    index, log_mass = _log_levels(log_pi0, r)
    log_f = _log_cdf(log_mass)
    log_f_minus = np.concatenate([[-np.inf], log_f[:-1]])             # F^-(level) = F(level below)
    return index, log_mass, log_f, log_f_minus


def best_of_n(log_pi0: np.ndarray, r: np.ndarray, n, _prepared=None) -> BestOfN:
    """The exact best-of-n distribution for n draws from pi0 (scalar or array of n)."""
    n = np.asarray(n, dtype=float)[..., None]
    index, log_mass, log_f, log_f_minus = _prepared or _prepare(log_pi0, r)
    with np.errstate(divide="ignore", invalid="ignore"):
        # F^n - F_-^n = F^n (1 - (F_-/F)^n), all in logs; a level of no mass gets nothing.
        gap = n * (log_f_minus - log_f)                                  # <= 0, may be -inf
        log_level = np.where(np.isfinite(log_f) & np.isfinite(log_mass),
                             n * log_f + np.log(-np.expm1(gap)), -np.inf)
        # Within a level, the mass is shared in proportion to pi0.
        log_share = np.where(np.isfinite(log_mass[index]), log_pi0 - log_mass[index], -np.inf)
    log_pi = log_level[..., index] + log_share
    pi = np.exp(log_pi)
    return BestOfN(log_pi, pi, pi @ r, kl_divergence(log_pi, log_pi0), kl_bound(n[..., 0]))


def powers_of_two(max_exponent: int = 17) -> np.ndarray:
    """n = 1, 2, 4, ..., 2^max_exponent, the best-of-n points of Figure 12.3."""
    return 2.0 ** np.arange(max_exponent + 1)


def matched_n(log_pi0: np.ndarray, r: np.ndarray, target_kl: float, n_max: int = N_MAX) -> int:
    """The integer n in [1, n_max] whose exact best-of-n KL is closest to ``target_kl``.

    The KL rises with n, so a k-ary search narrows [lo, hi] with one vectorised call per round.
    """
    prepared = _prepare(log_pi0, r)
    lo, hi = 1, int(n_max)
    while hi - lo > 64:
        cand = np.unique(np.linspace(lo, hi, 65).round().astype(np.int64))
        kl = best_of_n(log_pi0, r, cand, prepared).kl
        i = int(np.searchsorted(kl, target_kl))       # first candidate with KL >= target
        lo = int(cand[max(i - 1, 0)])
        hi = int(cand[min(i, cand.size - 1)])
    cand = np.arange(lo, hi + 1)
    kl = best_of_n(log_pi0, r, cand, prepared).kl
    return int(cand[np.argmin(np.abs(kl - target_kl))])
