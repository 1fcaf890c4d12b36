"""Why entropy collapses: chapter 28's "Entropy and exploration" and Exercise 28.6.

A softmax policy pi = softmax(z) over a few actions with advantages A(a) takes the natural
policy-gradient step z <- z + eta * A.  Along that step

    log pi_eta(a) = log pi(a) + eta A(a) - log sum_b pi(b) e^{eta A(b)},

so the entropy H(eta) = -sum pi_eta log pi_eta is exact for every eta (``entropy_along``), and

    dH/deta at 0   = -Cov_pi(log pi, A)                              (Exercise 28.6)
    d2H/deta2 at 0 = -E_pi[(log pi - mean)(A - mean)^2] - Var_pi(A)

(``entropy_slope``, ``entropy_curvature``; from dH/deta = -Cov_eta(log pi, A) - eta Var_eta(A)).
The sign of the covariance decides: when the policy already puts its mass on what is rewarded
(log pi and A move together) the entropy falls; when it is confident in a worse action
(covariance negative) the entropy first rises.  With zero covariance (e.g. a uniform policy) the
first-order change is zero and the second-order term, -Var(A)/2 eta^2 at a uniform policy, makes
it fall.

Repeated steps with fixed advantages add up: after t steps z = z0 + t eta A, so the trajectory
is the same curve read at eta * t (subtracting the policy's mean advantage from A each step only
shifts all logits and changes nothing).  ``trajectory`` gives entropy and expected advantage
(the "reward" of the trajectory) at every step, and ``fit_cui`` fits Cui et al.'s empirical law
R = -a e^H + b to such a trajectory by linear least squares, as a comparison the page labels as
this model's fit, not theirs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DEFAULT_ETA = 0.5
DEFAULT_STEPS = 40

# Presets: (label, logits, advantages).  Action 0 is the rewarded one in all three.
PRESETS = {
    "confident_right": (
        "confident on the rewarded action",
        np.log([0.70, 0.12, 0.08, 0.06, 0.04]),
        np.array([1.0, 0.0, 0.0, 0.0, 0.0]),
    ),
    "confident_wrong": (
        "confident on a wrong action",
        np.log([0.04, 0.70, 0.12, 0.08, 0.06]),
        np.array([1.0, 0.0, 0.0, 0.0, 0.0]),
    ),
    "uniform": (
        "uniform policy",
        np.zeros(5),
        np.array([1.0, 0.0, 0.0, 0.0, 0.0]),
    ),
}


def _vec(x, name: str) -> np.ndarray:
    v = np.asarray(x, dtype=float)
    if v.ndim != 1 or v.size < 2:
        raise ValueError(f"{name} must be a list of at least two numbers")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} must be finite numbers")
    return v


def _pair(logits, advantages) -> tuple[np.ndarray, np.ndarray]:
    z = _vec(logits, "logits")
    a = _vec(advantages, "advantages")
    if a.shape != z.shape:
        raise ValueError("give one advantage per action")
    return z, a


def log_softmax(z) -> np.ndarray:
    """log pi along the last axis, shifted by the maximum so exp never overflows."""
    z = np.asarray(z, dtype=float)
    s = z - z.max(axis=-1, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=-1, keepdims=True))


def entropy(log_pi):
    """H = -sum pi log pi along the last axis (actions with pi = 0, log pi = -inf, add 0)."""
    lp = np.asarray(log_pi, dtype=float)
    if np.any(np.isnan(lp)) or np.any(lp == np.inf):
        raise ValueError("log-probabilities must be numbers below +inf")
    p = np.exp(lp)
    with np.errstate(invalid="ignore"):
        terms = np.where(p > 0, p * lp, 0.0)
    out = np.maximum(-terms.sum(axis=-1), 0.0)  # rounding can leave -1e-17 at a point mass
    return out if out.ndim else float(out)


def _cov(lp: np.ndarray, a: np.ndarray):
    """Cov_pi(log pi, A) along the last axis, ignoring actions with pi = 0."""
    p = np.exp(lp)
    safe = np.where(p > 0, lp, 0.0)
    mean_l = np.sum(p * safe, axis=-1, keepdims=True)
    mean_a = np.sum(p * a, axis=-1, keepdims=True)
    return np.sum(p * (safe - mean_l) * (a - mean_a), axis=-1)


def covariance(logits, advantages) -> float:
    """Cov_{a ~ pi}(log pi(a), A(a)) at pi = softmax(logits)."""
    z, a = _pair(logits, advantages)
    return float(_cov(log_softmax(z), a))


def entropy_slope(logits, advantages) -> float:
    """dH/deta at eta = 0: minus the covariance (Exercise 28.6)."""
    return -covariance(logits, advantages)


def entropy_curvature(logits, advantages) -> float:
    """d2H/deta2 at eta = 0: -E[(log pi - mean)(A - mean)^2] - Var(A) (module notes)."""
    z, a = _pair(logits, advantages)
    lp = log_softmax(z)
    p = np.exp(lp)
    safe = np.where(p > 0, lp, 0.0)
    dl = safe - p @ safe
    da = a - p @ a
    return float(-(p @ (dl * da**2)) - p @ da**2)


def _etas(eta) -> np.ndarray:
    e = np.asarray(eta, dtype=float)
    if not np.all(np.isfinite(e)):
        raise ValueError("the step size eta must be finite")
    return e


def entropy_along(logits, advantages, eta):
    """Exact H after the step z + eta A, for a number or an array of step sizes."""
    z, a = _pair(logits, advantages)
    e = _etas(eta)
    out = entropy(log_softmax(z + e[..., None] * a))
    return out


def first_order(logits, advantages, eta):
    """The first-order prediction H(0) - eta Cov_pi(log pi, A)."""
    z, a = _pair(logits, advantages)
    e = _etas(eta)
    out = entropy(log_softmax(z)) - e * covariance(z, a)
    return out if np.ndim(out) else float(out)


@dataclass(frozen=True)
class Trajectory:
    """Repeated steps z <- z + eta A from the given logits (index 0 = start).

    ``steps`` (T+1,); ``policy`` (T+1, n); ``entropy`` (T+1,); ``reward`` (T+1,) the expected
    advantage pi . A; ``covariance`` (T+1,) Cov(log pi, A) at each step (positive: the next step
    lowers the entropy, to first order); ``predicted`` (T+1,) the entropy predicted one step
    ahead from the previous step's covariance, H_{t-1} - eta Cov_{t-1} (NaN at t = 0).
    """

    steps: np.ndarray
    policy: np.ndarray
    entropy: np.ndarray
    reward: np.ndarray
    covariance: np.ndarray
    predicted: np.ndarray


def trajectory(logits, advantages, eta: float = DEFAULT_ETA, steps: int = DEFAULT_STEPS) -> Trajectory:
    """Entropy and expected advantage over ``steps`` natural-gradient steps (exact, no loop:
    after t steps the logits are z + t eta A)."""
    z, a = _pair(logits, advantages)
    if int(steps) != steps or steps < 0:
        raise ValueError(f"steps must be a non-negative integer, got {steps!r}")
    if not np.isfinite(eta) or eta <= 0:
        raise ValueError(f"eta must be a positive finite number, got {eta!r}")
    t = np.arange(int(steps) + 1)
    lp = log_softmax(z + (eta * t)[:, None] * a)
    pol = np.exp(lp)
    h = np.asarray(entropy(lp))
    cov = _cov(lp, a)
    pred = np.full(t.size, np.nan)
    pred[1:] = h[:-1] - eta * cov[:-1]
    return Trajectory(t, pol, h, pol @ a, cov, pred)


@dataclass(frozen=True)
class CuiFit:
    """R = -a e^H + b fitted by least squares: ``a``, ``b``, ``r2`` (share of the variance of R
    explained; 1 for a perfect fit), ``rmse``, and ``fitted`` values at the given points."""

    a: float
    b: float
    r2: float
    rmse: float
    fitted: np.ndarray


def fit_cui(entropies, rewards) -> CuiFit:
    """Fit Cui et al.'s law R = -a exp(H) + b: linear least squares in (a, b) with the
    regressor exp(H).  Needs at least two points with different entropies.  ``r2`` is NaN when
    the rewards do not vary."""
    h = _vec(entropies, "entropies")
    r = _vec(rewards, "rewards")
    if h.shape != r.shape:
        raise ValueError("give one reward per entropy value")
    x = np.exp(h)
    if np.ptp(x) <= 1e-12 * max(1.0, float(np.abs(x).max())):
        raise ValueError("the entropies must not all be equal to fit the law")
    design = np.stack([-x, np.ones_like(x)], axis=1)
    (coef_a, coef_b), *_ = np.linalg.lstsq(design, r, rcond=None)
    fitted = design @ np.array([coef_a, coef_b])
    resid = r - fitted
    ss_tot = float(np.sum((r - r.mean()) ** 2))
    r2 = 1.0 - float(resid @ resid) / ss_tot if ss_tot > 0 else float("nan")
    return CuiFit(float(coef_a), float(coef_b), r2, float(np.sqrt(np.mean(resid**2))), fitted)


FLAT = 1e-9               # a change below this (nats) is no change of direction
SLOPE_ZERO = 1e-13        # a slope dH/deta this small has no sign


def first_direction(y, flat: float = FLAT) -> int:
    """The direction a sequence starts to move in: +1, -1, or 0 if it never moves by more
    than ``flat`` from one point to the next."""
    d = np.diff(np.asarray(y, dtype=float))
    moving = d[np.abs(d) > flat]
    return 0 if moving.size == 0 else int(np.sign(moving[0]))


def turning_points(x, y, flat: float = FLAT) -> list[tuple[float, float, str]]:
    """Where a sequence y changes direction along x: (x, y, "peak" or "dip") at the first
    point after each turn (changes smaller than ``flat`` are ignored)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    d = np.diff(y)
    sign = np.where(d > flat, 1, np.where(d < -flat, -1, 0))
    out, last = [], 0
    for i, s in enumerate(sign):
        if s == 0:
            continue
        if last and s != last:
            out.append((float(x[i]), float(y[i]), "peak" if last > 0 else "dip"))
        last = s
    return out


def entropy_turns(logits, advantages, eta_max: float, cells: int
                  ) -> tuple[np.ndarray, int, list[tuple[float, float, str]]]:
    """H(eta) on the grid of ``cells`` equal steps from 0 to eta_max, the direction it starts
    in (+1, -1 or 0) and its turns (eta, H, "peak" or "dip").

    A turn is where the exact slope dH/deta = -Cov_eta(log pi, A) changes sign between two
    grid points; it is then pinned by bisection on that slope, so a turn inside a grid cell,
    even the first one, is not missed."""
    z, a = _pair(logits, advantages)
    grid = np.linspace(0.0, eta_max, cells + 1)
    tr = trajectory(z, a, eta_max / cells, cells)
    slope = -tr.covariance
    sign = np.where(slope > SLOPE_ZERO, 1, np.where(slope < -SLOPE_ZERO, -1, 0))
    found, last, j, first = [], 0, 0, 0
    for i, s in enumerate(sign):
        if s == 0:
            continue
        if last and s != last:
            lo, hi = float(grid[j]), float(grid[i])
            for _ in range(60):
                mid = 0.5 * (lo + hi)
                if np.sign(-covariance(z + mid * a, a)) == last:
                    lo = mid
                else:
                    hi = mid
            at = 0.5 * (lo + hi)
            found.append((at, float(entropy_along(z, a, at)), "peak" if last > 0 else "dip"))
        if not last:
            first = int(s)
        last, j = s, i
    return tr.entropy, (first if last else 0), found


def limit_entropy(logits, advantages) -> tuple[float, int]:
    """The entropy as eta -> infinity and how many actions share the largest advantage: pi
    restricted to those actions, in its own proportions."""
    z, a = _pair(logits, advantages)
    top = np.isclose(a, a.max(), rtol=0, atol=1e-12)
    return float(entropy(log_softmax(np.where(top, z, -np.inf)))), int(top.sum())


def advantage_variance(logits, advantages) -> float:
    """Var_pi(A) at pi = softmax(logits): 0 when no step can move the policy."""
    z, a = _pair(logits, advantages)
    pi = np.exp(log_softmax(z))
    return float(pi @ (a - pi @ a) ** 2)


def matching_preset(logits, advantages) -> str | None:
    """The preset (a key of PRESETS) that these lists repeat: the same advantages and the same
    policy to 2e-3 in log-probability, so logits shifted by a constant or rounded to three
    decimals still match; None when none does."""
    z, a = _pair(logits, advantages)
    lp = log_softmax(z)
    for name, (_, pz, pa) in PRESETS.items():
        if pz.size == z.size and np.allclose(pa, a) and np.allclose(log_softmax(pz), lp, atol=2e-3):
            return name
    return None
