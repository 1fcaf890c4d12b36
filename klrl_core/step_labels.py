"""Step labels from rollouts (Section 12.7.3; chapter 28's process rewards, Math-Shepherd;
Exercise 28.8).

The step model of SPEC.md ("Pages of the third round"). A solution has T steps. To label
step t, the partial solution (steps 1..t) is completed N times by a completer mu that gets
each of the T - t remaining steps right with probability q (its skill); the answer is right
only if every step is. Once a step of the solution is wrong, a completion still reaches the
right answer with probability g (a lucky guess). So the step's value under mu is

    v_t = q^(T - t) on a correct prefix (1 after the last step),   v_t = g after a wrong one,

and with K ~ Binomial(N, v_t) completions reaching the right answer the labels are

    soft label K / N       (mean v_t: it estimates mu's value of the prefix),
    hard label [K >= 1]    (mean 1 - (1 - v_t)^N: whether best-of-N completions by mu finish).

A process reward model fitted to either label learns its expectation given the prefix: a
function of mu, not of the step's correctness (Exercise 28.8(b)).

Exact binomial arithmetic in log space (lgamma), so N up to 1024 and q, g anywhere in [0, 1]
(including 0 and 1) give finite numbers. NumPy and the standard library only.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ._common import check_int

N_MAX = 1024
T_MAX = 20
Q_DEFAULT, G_DEFAULT, N_DEFAULT, T_DEFAULT, ERROR_DEFAULT = 0.6, 0.05, 8, 6, 3
SPREAD = (0.05, 0.95)           # the quantiles drawn as each label's spread


# ------------------------------------------------------------------ checks

def _check_prob(x, what: str) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a number in [0, 1], got {x!r}") from None
    if not 0.0 <= v <= 1.0:              # also refuses nan
        raise ValueError(f"{what} must be a number in [0, 1], got {x!r}")
    return v


def _check_n(n) -> int:
    return check_int(n, "N (completions per step)", 1, N_MAX)


def _check_values(v) -> np.ndarray:
    a = np.asarray(v, dtype=float)
    if np.any(np.isnan(a)) or np.any(a < 0) or np.any(a > 1):
        raise ValueError("step values must be probabilities in [0, 1]")
    return a


# ------------------------------------------------------------------ the model

def step_values(q, g, T: int = T_DEFAULT, error: int | None = None) -> np.ndarray:
    """v_t for t = 1..T: mu's chance of reaching the right answer from after step t.

    ``error`` is the first wrong step of the solution (1..T), or None for a correct solution.
    Before it the prefix is correct, v_t = q^(T - t); from it on, v_t = g."""
    q, g = _check_prob(q, "the skill q"), _check_prob(g, "the guess rate g")
    T = check_int(T, "the number of steps T", 1, T_MAX)
    if error is not None:
        error = check_int(error, "the wrong step", 1, T)
    remaining = T - np.arange(1, T + 1)               # T - t steps left after step t
    # q ** 0 = 1 also at q = 0: after the last correct step nothing is left to get wrong.
    v = np.power(q, remaining.astype(float))
    if error is not None:
        v[error - 1:] = g
    return v


def hard_mean(v, n) -> np.ndarray:
    """P(at least one of N completions reaches the right answer) = 1 - (1 - v)^N."""
    v, n = _check_values(v), _check_n(n)
    with np.errstate(divide="ignore"):             # log1p(-1) = -inf gives exactly 1
        return -np.expm1(n * np.log1p(-v))


# ln k! for k = 0..N_MAX, once: every binomial coefficient below is read from it.
_LOG_FACT = np.array([math.lgamma(i + 1) for i in range(N_MAX + 1)])


def _log_pmf(n, k, v) -> np.ndarray:
    """ln P(K = k) for K ~ Binomial(n, v), broadcasting n, k and v (k <= n); 0 ln 0 = 0."""
    log_choose = _LOG_FACT[n] - _LOG_FACT[k] - _LOG_FACT[n - k]
    with np.errstate(divide="ignore", invalid="ignore"):
        log_p = log_choose + k * np.log(v) + (n - k) * np.log1p(-v)
    # At v = 0 all mass is on k = 0, at v = 1 on k = n (the formula gives nan there).
    log_p = np.where(v == 0, np.where(k == 0, 0.0, -np.inf), log_p)
    log_p = np.where(v == 1, np.where(k == n, 0.0, -np.inf), log_p)
    return log_p


def binomial_pmf(n, v) -> np.ndarray:
    """P(K = k), k = 0..N, for K ~ Binomial(N, v), exact in log space. Shape v.shape + (N+1,)."""
    n = _check_n(n)
    v = _check_values(v)[..., None]
    return np.exp(_log_pmf(n, np.arange(n + 1), v))


def binomial_quantile(n, v, p) -> np.ndarray:
    """The p-quantile of K ~ Binomial(N, v): the smallest k with P(K <= k) >= p (exact sums of
    the pmf, no normal approximation)."""
    p = _check_prob(p, "the quantile level p")
    n = _check_n(n)
    v = _check_values(v)
    if p == 1.0:
        # The top of the support: N whenever v > 0 (a tail mass below 1e-308 still counts).
        return np.where(v > 0, n, 0)
    return _quantile_from_pmf(binomial_pmf(n, v), p)


def _quantile_from_pmf(pmf: np.ndarray, p: float) -> np.ndarray:
    if p <= 0.5:
        return np.argmax(np.cumsum(pmf, axis=-1) >= p, axis=-1)
    # Upper quantiles from the upper tail P(K > k), summed from the top: the lower sum
    # rounds to 1 once the tail falls below 1e-16 and would stop too early.
    tail = np.cumsum(pmf[..., ::-1], axis=-1)[..., ::-1]       # P(K >= k)
    above = np.concatenate([tail[..., 1:], np.zeros(pmf.shape[:-1] + (1,))], axis=-1)
    return np.argmax(above <= 1.0 - p, axis=-1)


class OverN(NamedTuple):
    n: np.ndarray              # the numbers of completions
    soft_lo: np.ndarray        # the soft label's 5% quantile at each N
    soft_hi: np.ndarray        # its 95% quantile
    hard_mean: np.ndarray      # 1 - (1 - v)^N at each N


def labels_over_n(v, ns, spread=SPREAD) -> OverN:
    """One step of value v labelled with each N in ``ns``: the soft label's exact quantile
    spread and the hard label's mean, in one pass (a table of pmfs, one row per N)."""
    v = float(_check_values(v))
    ns = np.asarray([_check_n(m) for m in np.atleast_1d(ns)], dtype=int)
    lo, hi = (_check_prob(s, "a quantile level") for s in spread)
    k = np.arange(int(ns.max()) + 1)
    inside = k[None, :] <= ns[:, None]
    kk = np.where(inside, k[None, :], 0)
    pmf = np.where(inside, np.exp(_log_pmf(ns[:, None], kk, v)), 0.0)
    out = []
    for p in (lo, hi):
        out.append(np.where(v > 0, ns, 0) if p == 1.0 else _quantile_from_pmf(pmf, p))
    with np.errstate(divide="ignore"):
        hard = -np.expm1(ns * np.log1p(-v))
    return OverN(ns, out[0] / ns, out[1] / ns, hard)


class Labels(NamedTuple):
    v: np.ndarray              # value per step under mu (the soft label's mean)
    soft_mean: np.ndarray      # = v
    soft_lo: np.ndarray        # 5% quantile of K / N
    soft_hi: np.ndarray        # 95% quantile of K / N
    hard_mean: np.ndarray      # 1 - (1 - v)^N
    hard_lo: np.ndarray        # 5% quantile of the hard label (0 or 1)
    hard_hi: np.ndarray        # 95% quantile


def labels(v, n, spread=SPREAD) -> Labels:
    """Both labels' means and exact quantile spreads for steps of value v, N completions each."""
    v, n = _check_values(v), _check_n(n)
    lo, hi = (_check_prob(s, "a quantile level") for s in spread)
    h = hard_mean(v, n)
    soft_lo = binomial_quantile(n, v, lo) / n
    soft_hi = binomial_quantile(n, v, hi) / n
    # The hard label is Bernoulli(h): its p-quantile is 0 while P(label = 0) = 1 - h >= p.
    hard_lo = np.where(1.0 - h >= lo, 0.0, 1.0)
    hard_hi = np.where(1.0 - h >= hi, 0.0, 1.0)
    return Labels(v, v.copy(), soft_lo, soft_hi, h, hard_lo, hard_hi)


def draw_counts(v, n, seed) -> np.ndarray:
    """A seeded draw of the data set's labels: for each step, K ~ Binomial(N, v) completions
    that reached the right answer (soft label K / N, hard label K >= 1)."""
    v, n = _check_values(v), _check_n(n)
    s = check_int(seed, "the seed", 0, 2**63 - 1)
    return np.random.default_rng(s).binomial(n, v)


def crossing_skill(g, T: int, t: int) -> float:
    """The skill q below which a correct step t gets a lower expected label than a wrong one:
    q^(T - t) < g, i.e. q < g^(1 / (T - t)) (the same for both labels, since 1 - (1 - v)^N
    rises with v). 0 at t = T: a correct last step has v = 1, never below g."""
    g = _check_prob(g, "the guess rate g")
    T = check_int(T, "the number of steps T", 1, T_MAX)
    t = check_int(t, "the step", 1, T)
    if t == T:
        return 0.0
    return float(g ** (1.0 / (T - t)))


def separation(v_correct, v_wrong, error: int) -> tuple[bool, float, float]:
    """Whether the labels put every correct step above every wrong one: the correct
    solution's values and the wrong solution's steps before ``error`` (all correct) against
    its steps from ``error`` on. Returns (separate, lowest correct value, highest wrong
    value); the hard label rises with the value, so one order holds for both labels."""
    v_correct, v_wrong = _check_values(v_correct), _check_values(v_wrong)
    error = check_int(error, "the wrong step", 1, v_wrong.size)
    ok = np.r_[v_correct, v_wrong[:error - 1]]
    bad = v_wrong[error - 1:]
    lo, hi = float(ok.min()), float(bad.max())
    return lo > hi, lo, hi
