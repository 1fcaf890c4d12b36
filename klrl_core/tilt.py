"""The exponential tilt pi* = pi0 exp(kappa r) / Z and its frontier (Section 12.3).

Everything is computed from log pi0 in log space, so kappa up to 10,000 stays finite.
``kappa`` (= 1/beta) may be a scalar or an array; results broadcast over it.
"""

from typing import NamedTuple

import numpy as np

from .model import logsumexp


class Tilt(NamedTuple):
    log_pi: np.ndarray        # log pi*(y), shape (..., n)
    pi: np.ndarray            # pi*(y)
    expected: np.ndarray      # E_{pi*}[r]
    kl: np.ndarray            # KL(pi* || pi0), nats
    log_z: np.ndarray         # log Z(kappa)


def kl_divergence(log_p: np.ndarray, log_q: np.ndarray) -> np.ndarray:
    """KL(p || q) = sum p (log p - log q), over the last axis; 0 log 0 counts as 0."""
    p = np.exp(log_p)
    with np.errstate(invalid="ignore"):   # -inf - -inf where p = 0; masked just below
        terms = np.where(p > 0, p * (log_p - log_q), 0.0)
    return np.maximum(np.sum(terms, axis=-1), 0.0)


def tilt(log_pi0: np.ndarray, r: np.ndarray, kappa) -> Tilt:
    """pi*(y) proportional to pi0(y) exp(kappa r(y)), Equation (12.4) with kappa = 1/beta."""
    kappa = np.asarray(kappa, dtype=float)[..., None]
    # Shifting r by a constant leaves pi* unchanged; measuring it from the top reward that
    # pi0 can write keeps kappa * r small and so the logits exact when kappa is large (a
    # response with pi0 = 0 gets nothing whatever its reward, Section 12.3.3).
    r_top = np.max(np.where(np.isfinite(log_pi0), r, -np.inf), axis=-1, keepdims=True)
    logits = log_pi0 + kappa * (r - r_top)
    log_z_shifted = logsumexp(logits)
    log_pi = logits - log_z_shifted[..., None]
    pi = np.exp(log_pi)
    log_z = log_z_shifted + kappa[..., 0] * r_top[..., 0]
    return Tilt(log_pi, pi, pi @ r, kl_divergence(log_pi, log_pi0), log_z)


def frontier(log_pi0: np.ndarray, r: np.ndarray, kappas: np.ndarray) -> Tilt:
    """The tilt at every kappa of a grid: expected reward against KL (Section 12.3.2)."""
    return tilt(log_pi0, r, np.asarray(kappas, dtype=float))


def kappa_grid(kappa_max: float = 10_000.0, n: int = 240) -> np.ndarray:
    """Kappas from 0 to kappa_max, dense near 0 where the frontier bends most."""
    # sinh spacing: roughly linear near 0, geometric for large kappa.
    u = np.linspace(0.0, np.arcsinh(kappa_max), n)
    return np.sinh(u)


def expected_under(pi: np.ndarray, values: np.ndarray) -> np.ndarray:
    """E_pi[values] for each row of pi, e.g. the true reward of Figure 12.5."""
    return pi @ values


def true_reward_peak(log_pi0: np.ndarray, r: np.ndarray, r_true: np.ndarray,
                     kappa_max: float = 10_000.0, tol: float = 1e-10):
    """Kappa where E_{pi*}[r_true] peaks along the frontier (Section 12.8.1).

    d/dkappa E_{pi*}[r_true] = Cov_{pi*}(r, r_true) (as in Section 12.3.3, step 2), so the peak
    is where that covariance changes sign from + to -. The highest point of a grid picks the
    global peak; bisection refines it. Returns (kappa, tilt at kappa).
    """
    def slope(k):
        pi = tilt(log_pi0, r, k).pi
        return pi @ (r * r_true) - (pi @ r) * (pi @ r_true)

    # The grid's best point, then bisection on the slope's sign between its neighbours.
    grid = kappa_grid(kappa_max)
    i = int(np.argmax(tilt(log_pi0, r, grid).pi @ r_true))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    if not (slope(lo) > 0 >= slope(hi)):      # the best is at an end of the grid
        return float(grid[i]), tilt(log_pi0, r, grid[i])
    while hi - lo > tol * max(1.0, hi):
        mid = 0.5 * (lo + hi)
        if slope(mid) > 0:
            lo = mid
        else:
            hi = mid
    k = 0.5 * (lo + hi)
    return float(k), tilt(log_pi0, r, k)
