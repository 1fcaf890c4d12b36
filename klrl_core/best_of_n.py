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


def _levels(log_pi0: np.ndarray, r: np.ndarray):
    """Group responses into reward levels; return per-response level index and level log-masses."""
    levels, index = np.unique(r, return_inverse=True)
    pi0 = np.exp(log_pi0)
    mass = np.bincount(index, weights=pi0, minlength=levels.size)
    # Upper tail S(level) = P(reward > level), summed from the top so tiny tails stay exact.
    above = np.concatenate([np.cumsum(mass[::-1])[::-1][1:], [0.0]])
    return index, mass, above


def best_of_n(log_pi0: np.ndarray, r: np.ndarray, n) -> BestOfN:
    """The exact best-of-n distribution for n draws from pi0 (scalar or array of n)."""
    n = np.asarray(n, dtype=float)[..., None]
    index, mass, above = _levels(log_pi0, r)
    # log F = log(1 - S_above), log F^- = log(1 - S_above - mass); log1p keeps the top accurate.
    log_f = np.log1p(-np.minimum(above, 1.0))
    below = np.maximum(1.0 - above - mass, 0.0)
    with np.errstate(divide="ignore"):
        log_f_minus = np.where(below > 0, np.log1p(-np.minimum(above + mass, 1.0)), -np.inf)
        # F^n - F_-^n = F^n (1 - (F_-/F)^n), all in logs.
        gap = n * (log_f_minus - log_f)                     # <= 0, may be -inf
        log_level = n * log_f + np.log(-np.expm1(gap))
        log_share = log_pi0 - np.log(mass)[index]           # within-level share, from pi0
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
    lo, hi = 1, int(n_max)
    while hi - lo > 64:
        cand = np.unique(np.linspace(lo, hi, 65).round().astype(np.int64))
        kl = best_of_n(log_pi0, r, cand).kl
        i = int(np.searchsorted(kl, target_kl))       # first candidate with KL >= target
        lo = int(cand[max(i - 1, 0)])
        hi = int(cand[min(i, cand.size - 1)])
    cand = np.arange(lo, hi + 1)
    kl = best_of_n(log_pi0, r, cand).kl
    return int(cand[np.argmin(np.abs(kl - target_kl))])
