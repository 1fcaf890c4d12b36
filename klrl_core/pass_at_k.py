"""pass@k at the optimum, over a set of problems, and estimated from n samples.

Section 12.7.4 ("What the loop does to a policy") and Exercise 28.7 of Chapter 28. One problem
with a 0/1 verifier reward and solve rate p: k independent samples solve it at least once with
probability pass@k = 1 - (1 - p)^k. The optimum of Equation (12.4) multiplies the correct
responses' probability by e^{1/beta} before renormalising, so its solve rate p* is at least p,
and so is its pass@k at every k.

Everything is vectorised and stays accurate for p down to 1e-12, beta down to 1e-4 and k or n
up to 10^7: pass@k is taken as -expm1(k log1p(-p)), p* through the log-odds, and the binomial
sums of the estimators in log space. Scalar inputs give Python floats.
"""

from __future__ import annotations

import math

import numpy as np

from ._common import check_beta, sigmoid

K_MAX = 10_000_000          # largest k the functions accept
N_SAMPLES_MAX = 10_000_000  # largest number of samples n for the estimators
CROSSOVER_K_MAX = 1_000_000  # crossover_k scans every integer up to this
_CHUNK = 1 << 21            # elements per block when a sum would need a large array
_TAIL_SDS = 40.0            # binomial window: mean +- (40 sd + 40), tails below 1e-25


def _out(x):
    x = np.asarray(x, dtype=float)
    return float(x) if x.ndim == 0 else x


# --------------------------------------------------------------------------- validation

def _check_p(p, name: str = "p") -> np.ndarray:
    p = np.asarray(p, dtype=float)
    if not np.all(np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise ValueError(f"solve rate {name} must lie in [0, 1]")
    return p


def _check_k(k, integer: bool = True) -> np.ndarray:
    k = np.asarray(k, dtype=float)
    if not np.all(np.isfinite(k)) or np.any(k < (1 if integer else 0)) or np.any(k > K_MAX):
        lo = 1 if integer else 0
        raise ValueError(f"k must be a number of attempts between {lo} and {K_MAX:,}")
    if integer and np.any(k != np.round(k)):
        raise ValueError("k must be a whole number of attempts")
    return k


def _check_n(n) -> int:
    if isinstance(n, bool) or not np.isscalar(n) or not np.isfinite(n) or n != int(n) \
            or not 1 <= n <= N_SAMPLES_MAX:
        raise ValueError(f"the number of samples n must be a whole number between 1 and "
                         f"{N_SAMPLES_MAX:,}, got {n!r}")
    return int(n)


def _check_c(c, n: int) -> np.ndarray:
    c = np.asarray(c, dtype=float)
    if not np.all(np.isfinite(c)) or np.any((c < 0) | (c > n) | (c != np.round(c))):
        raise ValueError("the number correct c must be a whole number between 0 and n")
    return c


def _check_rates(rates, name: str) -> np.ndarray:
    rates = _check_p(rates, name)
    if rates.ndim == 0 or rates.shape[-1] == 0:
        raise ValueError(f"{name} needs the solve rate of at least one problem")
    return rates


# --------------------------------------------------------------------------- pass@k and p*

def pass_at_k(p, k):
    """pass@k = 1 - (1 - p)^k: at least one of k independent samples is correct.

    Taken as -expm1(k log1p(-p)), which keeps the k p of a tiny p and the 1 - tiny of a
    huge k. k may be any real >= 0 (pass@0 = 0); p and k broadcast.
    """
    p = _check_p(p)
    k = _check_k(k, integer=False)
    with np.errstate(divide="ignore", invalid="ignore"):   # p = 1: log1p(-1) = -inf
        out = -np.expm1(k * np.log1p(-p))
    return _out(np.where(k == 0, 0.0, out))


def _logit(p: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(p) - np.log1p(-p)


def optimal_solve_rate(p, beta):
    """The optimum's solve rate p* = p e^{1/beta} / (p e^{1/beta} + 1 - p) (Section 12.7.4, step 1).

    In log-odds the tilt only adds the reward gap over beta: logit p* = logit p + 1/beta. That
    form never overflows (beta down to 1e-4 gives e^{10000}) and keeps a tiny p* exact.
    p = 0 and p = 1 are fixed points; beta = inf gives p* = p.
    """
    p = _check_p(p)
    beta = check_beta(beta)
    return _out(sigmoid(_logit(p) + 1.0 / beta))


def mixture_pass_at_k(rates, k):
    """pass@k averaged over problems: rates has shape (..., problems).

    k broadcasts against the leading shape ``rates.shape[:-1]`` (a k grid of shape (K,) with
    a 1-D rates gives shape (K,)).
    """
    rates = _check_rates(rates, "rates")
    k = np.asarray(k, dtype=float)
    return _out(np.mean(np.asarray(pass_at_k(rates, k[..., None])), axis=-1))


def crossover_k(rates_before, rates_after, k_max: int = 1024):
    """The smallest integer k <= k_max at which the before-set's pass@k exceeds the after-set's.

    ``None`` when it never does up to k_max. Exact: every integer k is checked (the two
    curves may cross more than once, so bisection would not be safe).
    """
    before = _check_rates(rates_before, "rates_before")
    after = _check_rates(rates_after, "rates_after")
    if before.ndim != 1 or after.ndim != 1:
        raise ValueError("crossover_k takes one 1-D list of solve rates per set")
    if isinstance(k_max, bool) or k_max != int(k_max) or not 1 <= k_max <= CROSSOVER_K_MAX:
        raise ValueError(f"k_max must be a whole number between 1 and {CROSSOVER_K_MAX:,}")
    k_max = int(k_max)
    step = max(1, _CHUNK // max(before.size, after.size))
    for start in range(1, k_max + 1, step):
        ks = np.arange(start, min(start + step, k_max + 1), dtype=float)
        above = np.asarray(mixture_pass_at_k(before, ks)) > np.asarray(mixture_pass_at_k(after, ks))
        if np.any(above):
            return int(ks[np.argmax(above)])
    return None


# --------------------------------------------------------------------------- estimators

_TABLE_SIZE = 1024
_LOG_FACTORIAL_TABLE = np.array([math.lgamma(i + 1.0) for i in range(_TABLE_SIZE)])
_EXACT_PRODUCT_K = 1024     # up to this many factors, C(n-c, k)/C(n, k) is a product in log1p


def _stirling_tail(x: np.ndarray) -> np.ndarray:
    """log x! - (x log x - x + log(2 pi x)/2) for x >= 1024; the first omitted term is < 1e-24."""
    inv = 1.0 / x
    inv2 = inv * inv
    return inv * (1.0 / 12.0 - inv2 * (1.0 / 360.0 - inv2 * (1.0 / 1260.0)))


def log_factorial(m) -> np.ndarray:
    """log m! for whole m >= 0, vectorised (NumPy has no lgamma).

    A table below 1024, Stirling's series above it.
    """
    m = np.asarray(m, dtype=float)
    small = m < _TABLE_SIZE
    table = _LOG_FACTORIAL_TABLE[np.where(small, m, 0).astype(np.intp)]
    x = np.maximum(m, float(_TABLE_SIZE))
    stirling = x * np.log(x) - x + 0.5 * np.log(2.0 * np.pi * x) + _stirling_tail(x)
    return np.where(small, table, stirling)


def log_factorial_ratio(a, b) -> np.ndarray:
    """log(a!/b!) for whole a >= b >= 0, without the cancellation of log a! - log b!.

    With j = a - b and both above the table, Stirling's series gives
    b log1p(j/b) + j log a - j + log1p(j/b)/2 + (tails), whose error is relative to the
    result, not to log a! (which is 1.5e8 at a = 10^7).
    """
    a, b = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    if a.size and np.max(a) < _TABLE_SIZE:            # all in the table: one lookup each
        return _LOG_FACTORIAL_TABLE[a.astype(np.intp)] - _LOG_FACTORIAL_TABLE[b.astype(np.intp)]
    j = a - b
    big = b >= _TABLE_SIZE
    bb = np.maximum(b, float(_TABLE_SIZE))
    aa = bb + j
    rel = j / bb
    stirling = (bb * np.log1p(rel) + j * np.log(aa) - j + 0.5 * np.log1p(rel)
                + _stirling_tail(aa) - _stirling_tail(bb))
    return np.where(big, stirling, log_factorial(a) - log_factorial(b))


def _log_choose_ratio(c: np.ndarray, n: int, k: np.ndarray) -> np.ndarray:
    """log [C(n-c, k) / C(n, k)] for n - c >= k (the caller masks the rest).

    The ratio is a product of min(c, k) factors, either way round:
    prod_{i<k} (1 - c/(n-i)) = prod_{j<c} (1 - k/(n-j)). Summed in log1p while the shorter
    product has at most _EXACT_PRODUCT_K factors (relative error near 1e-13 at any n);
    beyond that, the difference of two log-factorial ratios (relative error ~1e-9 at 10^7,
    which a result of ~1 then hides)."""
    c, k = np.broadcast_arrays(c, k)
    m = np.minimum(c, k)
    by_c = c <= k
    out = np.zeros(c.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        for j in range(int(min(np.max(m), _EXACT_PRODUCT_K)) if m.size else 0):
            factor = np.where(by_c, -k / (n - j), -c / (n - j))
            out = out + np.where(j < m, np.log1p(factor), 0.0)
        long = m > _EXACT_PRODUCT_K
        if np.any(long):
            # log (n-k)!/(n-c-k)! - log n!/(n-c)!; both are exactly 0 at c = 0.
            lf = (log_factorial_ratio(n - k, np.maximum(n - c - k, 0.0))
                  - log_factorial_ratio(n, n - c))
            out = np.where(long, lf, out)
    return out


def unbiased_estimate(c, n, k):
    """Chen et al.'s estimator 1 - C(n-c, k)/C(n, k) from c correct out of n samples (k <= n).

    C(n-c, k) = 0 when fewer than k samples failed, and the estimate is then 1.
    """
    n = _check_n(n)
    c = _check_c(c, n)
    k = _check_k(k)
    if np.any(k > n):
        raise ValueError(f"the unbiased estimator needs at least k samples (n = {n}, k up to "
                         f"{int(np.max(k))}): choose k <= n")
    enough = n - c >= k
    with np.errstate(invalid="ignore"):
        log_ratio = _log_choose_ratio(np.where(enough, c, 0.0), n, k)
    return _out(np.where(enough, -np.expm1(np.minimum(log_ratio, 0.0)), 1.0))


def plugin_estimate(c, n, k):
    """The plug-in estimate 1 - (1 - c/n)^k: pass@k at the observed solve rate.

    Defined for every k >= 1, also k > n.
    """
    n = _check_n(n)
    c = _check_c(c, n)
    k = _check_k(k)
    return pass_at_k(c / n, k)


def _binomial_expectation(p, n: int, k, estimate) -> np.ndarray:
    """E[estimate(c, n, k)] for c ~ Binomial(n, p), summed over a window of c.

    The window is every c within 40 standard deviations + 40 of n p (all of 0..n when n is
    small); the binomial mass outside it is below 1e-25, far under float precision. The
    probabilities come from the ratio P(c+1)/P(c) = (n - c) p / ((c + 1)(1 - p)), summed in
    logs from the window's start and normalised over it, so no large log-factorials cancel.
    """
    p, k = np.broadcast_arrays(p, k)
    shape = p.shape
    p, k = p.ravel(), k.ravel()
    spread = _TAIL_SDS * np.sqrt(n * p * (1.0 - p)) + _TAIL_SDS
    lo = int(max(0.0, np.floor(np.min(n * p - spread))))
    hi = int(min(float(n), np.ceil(np.max(n * p + spread))))
    c = np.arange(lo, hi + 1, dtype=float)
    # log C(n, c) - log C(n, lo), by the ratio C(n, c+1)/C(n, c) = (n - c)/(c + 1).
    log_choose = np.concatenate([[0.0], np.cumsum(np.log(n - c[:-1]) - np.log(c[:-1] + 1.0))])
    # log(p/(1-p)) steps; p = 0 and p = 1 become steep finite slopes that put all the mass
    # on c = 0 or c = n (the window then reaches that end), exactly as the point mass does.
    with np.errstate(divide="ignore"):
        log_odds = np.clip(np.log(p) - np.log1p(-p), -1e4, 1e4)
    out = np.empty(p.size)
    rows = max(1, _CHUNK // (c.size * (1 + min(int(np.max(k, initial=1)), _EXACT_PRODUCT_K))))
    for s in range(0, p.size, rows):
        log_w = log_choose + (c - lo) * log_odds[s:s + rows, None]
        log_w = log_w - np.max(log_w, axis=-1, keepdims=True)
        w = np.exp(log_w)
        values = np.asarray(estimate(c, n, k[s:s + rows, None]))
        out[s:s + rows] = np.sum(w * values, axis=-1) / np.sum(w, axis=-1)
    return np.clip(out, 0.0, 1.0).reshape(shape)


def unbiased_estimator_mean(p, n, k):
    """E[1 - C(n-c, k)/C(n, k)] over c ~ Binomial(n, p), computed as a sum, not assumed.

    Exercise 28.7(a): it equals pass@k = 1 - (1 - p)^k for every k <= n. k > n raises
    ValueError (C(n, k) = 0: n samples cannot say anything about k > n attempts).
    """
    p = _check_p(p)
    n = _check_n(n)
    k = _check_k(k)
    if np.any(k > n):
        raise ValueError(f"the unbiased estimator needs at least k samples (n = {n}, k up to "
                         f"{int(np.max(k))}): choose k <= n")
    return _out(_binomial_expectation(p, n, k, unbiased_estimate))


def plugin_estimator_mean(p, n, k):
    """E[1 - (1 - c/n)^k] over c ~ Binomial(n, p): the plug-in estimate's expected value.

    (1 - c/n)^k is convex in c, so by Jensen's inequality this never exceeds pass@k: the
    plug-in underestimates. Defined for every k >= 1, also k > n.
    """
    p = _check_p(p)
    n = _check_n(n)
    k = _check_k(k)
    return _out(_binomial_expectation(p, n, k, plugin_estimate))


def _optimum_gains(p: float, beta: float, k_max: int) -> tuple[np.ndarray, np.ndarray]:
    """k = 1 ... k_max and the gap pass@k(p*) - pass@k(p) at each."""
    if isinstance(k_max, bool) or k_max != int(k_max) or not 1 <= k_max <= CROSSOVER_K_MAX:
        raise ValueError(f"k_max must be a whole number between 1 and {CROSSOVER_K_MAX:,}")
    ks = np.arange(1, int(k_max) + 1, dtype=float)
    gap = (np.asarray(pass_at_k(float(optimal_solve_rate(p, beta)), ks))
           - np.asarray(pass_at_k(p, ks)))
    return ks, gap


def largest_optimum_gain(p: float, beta: float, k_max: int = 1024) -> tuple[int, float]:
    """Where the gap pass@k(p*) - pass@k(p) between the optimum and the reference is largest
    over k = 1 ... k_max, and its size there (the first such k on a tie).

    The gap (1 - p)^k - (1 - p*)^k is 0 at k = 0 and tends to 0, so it rises and falls once.
    """
    ks, gap = _optimum_gains(p, beta, k_max)
    i = int(np.argmax(gap))
    return int(ks[i]), float(gap[i])


def optimum_gain_below(p: float, beta: float, threshold: float,
                       k_max: int = 1024) -> tuple[int, int, int, bool]:
    """Where the gap pass@k(p*) - pass@k(p) is below ``threshold`` over k = 1 ... k_max:
    (head, tail, count, between) with head the number of k from 1 on and tail the number from
    k_max down at which it is (each k_max when it is below at every k), count how many k in
    all, and between whether it is at or above the threshold at every k between those two."""
    _, gap = _optimum_gains(p, beta, k_max)
    below = gap < threshold
    if below.all():
        return int(k_max), int(k_max), int(k_max), True
    head, tail = int(np.argmax(~below)), int(np.argmax(~below[::-1]))
    return head, tail, int(below.sum()), not below[head:below.size - tail].any()


def base_ahead_from(rates_before, rates_after, k: int, k_max: int = 1024) -> bool:
    """Whether the before-set's mean pass@k is at least the after-set's at every whole k from
    ``k`` to ``k_max`` (after ``crossover_k``: whether the base stays ahead once it leads)."""
    if isinstance(k, bool) or k != int(k) or not 1 <= k <= k_max:
        raise ValueError("k must be a whole number from 1 to k_max")
    ks = np.arange(int(k), int(k_max) + 1, dtype=float)
    return bool(np.all(np.asarray(mixture_pass_at_k(rates_before, ks))
                       >= np.asarray(mixture_pass_at_k(rates_after, ks))))
