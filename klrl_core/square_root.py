"""Why reward grows like the square root of KL, and Gao et al.'s overoptimization forms.

Exercise 12.3 and Section 12.5.4: near the reference, log Z(kappa) = kappa mu + kappa^2 v / 2 +
O(kappa^3), with mu and v the mean and variance of the reward under pi0. Differentiating
(Section 12.3.3) gives a gain kappa v at KL(pi* || pi0) = kappa^2 v / 2, so the gain is
sqrt(2 v KL): linear in d = sqrt(KL).

Chapter 28's "Rewards and their failures" quotes the forms Gao et al. fitted to the gold
reward of policies optimised against a proxy: d (alpha - beta d) along best-of-n and
d (alpha - beta log d) along RL, with d = sqrt(KL). Both are linear in (alpha, beta), so the
fits here are ordinary least squares, applied to the model's exact true-reward curves.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import best_of_n as bon
from . import tilt as tl

SCALES = ("gain", "ratio")


class SecondOrder(NamedTuple):
    gain: np.ndarray | float      # kappa v: predicted E_{pi*}[r] - mu
    kl: np.ndarray | float        # kappa^2 v / 2: predicted KL(pi* || pi0)
    expected: np.ndarray | float  # mu + kappa v


class GaoFit(NamedTuple):
    form: str            # "bon": d (alpha - beta d); "rl": d (alpha - beta log d)
    alpha: float
    beta: float
    fitted: np.ndarray   # the fitted form at the given d
    r2: float            # 1 - SS_res/SS_tot, on the gain itself
    rms: float           # root-mean-square residual of the gain
    scale: str           # "gain" or "ratio": what the least squares minimised


class Curve(NamedTuple):
    d: np.ndarray        # sqrt(KL(pi || pi0))
    gain: np.ndarray     # E_pi[r_true] - E_pi0[r_true]
    kl: np.ndarray


def _out(x):
    x = np.asarray(x, dtype=float)
    return float(x) if x.ndim == 0 else x


def _check_model(log_pi0, r):
    log_pi0 = np.asarray(log_pi0, dtype=float)
    r = np.asarray(r, dtype=float)
    if r.ndim != 1 or r.size == 0 or log_pi0.shape[-1:] != r.shape:
        raise ValueError("log_pi0 and r must give one value per response")
    if not np.all(np.isfinite(r)):
        raise ValueError("rewards must be finite numbers")
    return log_pi0, r


# --------------------------------------------------------------------------- second order

def reward_variance(log_pi0, r):
    """Var_{pi0}(r), taken about the mean (two passes), over the last axis of log_pi0.

    log_pi0 may be off by a constant (unnormalised log weights): it is renormalised.
    """
    log_pi0, r = _check_model(log_pi0, r)
    pi0 = np.exp(log_pi0)
    pi0 = pi0 / np.sum(pi0, axis=-1, keepdims=True)
    mu = np.asarray(pi0 @ r)[..., None]
    return _out(np.sum(pi0 * (r - mu) ** 2, axis=-1))


def second_order(log_pi0, r, kappa) -> SecondOrder:
    """Exercise 12.3's prediction at kappa = 1/beta: gain kappa v at KL kappa^2 v / 2.

    Exact as kappa -> 0 (the error of each is O(kappa^3) relative to kappa^2); further out
    the third cumulant of r under pi0 takes over. Vectorised over kappa.
    """
    log_pi0, r = _check_model(log_pi0, r)
    if log_pi0.ndim != 1:
        raise ValueError("second_order takes one reference policy")
    kappa = np.asarray(kappa, dtype=float)
    if np.any(np.isnan(kappa)) or np.any(kappa < 0):
        raise ValueError("kappa = 1/beta must be a non-negative number")
    pi0 = np.exp(log_pi0)
    pi0 = pi0 / pi0.sum()
    mu = float(pi0 @ r)
    v = float(pi0 @ (r - mu) ** 2)
    return SecondOrder(_out(kappa * v), _out(0.5 * kappa**2 * v), _out(mu + kappa * v))


def sqrt_law(mu, v, kl):
    """The frontier's small-KL law mu + sqrt(2 v KL) (Section 12.5.4, Exercise 12.3)."""
    v = np.asarray(v, dtype=float)
    kl = np.asarray(kl, dtype=float)
    if np.any(~np.isfinite(v)) or np.any(v < 0):
        raise ValueError("the variance v must be a non-negative number")
    if np.any(np.isnan(kl)) or np.any(kl < 0):
        raise ValueError("KL must be a non-negative number")
    return _out(np.asarray(mu, dtype=float) + np.sqrt(2.0 * v * kl))


# --------------------------------------------------------------------------- Gao et al.'s forms

def gao_bon(d, alpha, beta):
    """Gao et al.'s best-of-n form d (alpha - beta d)."""
    d = np.asarray(d, dtype=float)
    return _out(d * (alpha - beta * d))


def _d_log_d(d: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(d > 0, d * np.log(np.where(d > 0, d, 1.0)), 0.0)   # d log d -> 0 at 0


def gao_rl(d, alpha, beta):
    """Gao et al.'s RL form d (alpha - beta log d); its limit 0 at d = 0."""
    d = np.asarray(d, dtype=float)
    return _out(alpha * d - beta * _d_log_d(d))


def _fit(form: str, d, gain, scale: str) -> GaoFit:
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
    d = np.asarray(d, dtype=float).ravel()
    gain = np.asarray(gain, dtype=float).ravel()
    if d.shape != gain.shape:
        raise ValueError("d and gain must have the same number of points")
    if not (np.all(np.isfinite(d)) and np.all(np.isfinite(gain))) or np.any(d < 0):
        raise ValueError("d must be non-negative and d, gain finite")
    # gain = alpha * x1 - beta * x2, linear in (alpha, beta).
    x2 = d**2 if form == "bon" else _d_log_d(d)
    design = np.column_stack([d, -x2])
    if scale == "ratio":
        # Divided by d: gain/d = alpha - beta d (or - beta log d). Points at d = 0 carry no
        # information (every member of the family passes through the origin) and are left out.
        keep = d > 0
        a, y = design[keep] / d[keep, None], gain[keep] / d[keep]
    else:
        # On the gain itself: points at d = 0 are rows of zeros and add only their gain^2.
        a, y = design, gain
    if a.shape[0] < 2 or np.linalg.matrix_rank(a) < 2:
        raise ValueError("the fit needs at least two points with distinct d > 0")
    (alpha, beta), *_ = np.linalg.lstsq(a, y, rcond=None)
    fitted = design @ np.array([alpha, beta])
    resid = gain - fitted
    ss_tot = float(np.sum((gain - gain.mean()) ** 2))
    r2 = 1.0 - float(np.sum(resid**2)) / ss_tot if ss_tot > 0 else float("nan")
    return GaoFit(form, float(alpha), float(beta), fitted, r2, float(np.sqrt(np.mean(resid**2))), scale)


def fit_gao_bon(d, gain, scale: str = "gain") -> GaoFit:
    """Least-squares fit of gain = d (alpha - beta d), Gao et al.'s best-of-n form.

    ``scale="gain"`` minimises the squared error of the gain, the quantity drawn;
    ``scale="ratio"`` divides by d first (fitting gain/d = alpha - beta d) and drops d = 0.
    """
    return _fit("bon", d, gain, scale)


def fit_gao_rl(d, gain, scale: str = "gain") -> GaoFit:
    """Least-squares fit of gain = d (alpha - beta log d), Gao et al.'s RL form.

    Same ``scale`` choice as ``fit_gao_bon``. Note that gain/d of this form diverges as
    d -> 0 when beta > 0, while a tilt's gain/d tends to sqrt(2 v): the form cannot follow
    the square-root law at the very start.
    """
    return _fit("rl", d, gain, scale)


# --------------------------------------------------------------------------- the model's curves

def default_n_grid(n_max: int = 2**17, points: int = 241) -> np.ndarray:
    """Whole n from 1 to n_max, evenly spaced in log n."""
    return np.unique(np.round(np.geomspace(1.0, float(n_max), points)))


def _solve_increasing(kl_of, targets: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """The parameter t in [lo, hi] with kl_of(t) = target, for an increasing kl_of, by
    vectorised bisection on log(1 + t) (60 halvings: far below any visible difference)."""
    a = np.full(targets.shape, np.log1p(lo))
    b = np.full(targets.shape, np.log1p(hi))
    for _ in range(60):
        mid = 0.5 * (a + b)
        below = kl_of(np.expm1(mid)) < targets
        a = np.where(below, mid, a)
        b = np.where(below, b, mid)
    return np.expm1(0.5 * (a + b))


def _check_d(d, d_max: float) -> np.ndarray:
    d = np.asarray(d, dtype=float)
    if d.ndim != 1 or not np.all(np.isfinite(d)) or np.any(d < 0) or np.any(d > d_max):
        raise ValueError(f"d must be a 1-D array of values in [0, {d_max:.4g}] "
                         "(the largest sqrt(KL) this method reaches here)")
    return d


def best_of_n_curve(log_pi0, r, r_true, ns=None, d=None, n_max: float = 2.0**17) -> Curve:
    """Exact d = sqrt(KL) and true-reward gain of best-of-n chosen by the proxy r.

    At the given ``ns`` (default: 241 whole n from 1 to 2^17, even in log n), or, if ``d``
    is given, at the real n in [1, n_max] whose exact KL is d^2 (pi_n = F^n - F_-^n is
    defined for real n), so that a fit can weigh the curve evenly along d.
    """
    log_pi0, r = _check_model(log_pi0, r)
    r_true = np.asarray(r_true, dtype=float)
    prepared = bon._prepare(log_pi0, r)
    if d is not None:
        d_max = float(np.sqrt(bon.best_of_n(log_pi0, r, n_max, prepared).kl))
        d = _check_d(d, d_max)
        ns = _solve_increasing(lambda n: bon.best_of_n(log_pi0, r, 1.0 + n, prepared).kl,
                               d**2, 0.0, n_max - 1.0) + 1.0
    ns = default_n_grid() if ns is None else np.asarray(ns, dtype=float)
    res = bon.best_of_n(log_pi0, r, ns, prepared)
    base = float(np.exp(log_pi0) @ r_true)
    return Curve(np.sqrt(res.kl), res.pi @ r_true - base, res.kl)


def tilt_curve(log_pi0, r, r_true, kappas=None, d=None, kappa_max: float = 10_000.0) -> Curve:
    """Exact d = sqrt(KL) and true-reward gain along the tilt by the proxy r (Figure 12.5).

    At the given ``kappas`` (default: tilt.kappa_grid()), or, if ``d`` is given, at the
    kappa in [0, kappa_max] whose KL is d^2.
    """
    log_pi0, r = _check_model(log_pi0, r)
    r_true = np.asarray(r_true, dtype=float)
    if d is not None:
        d_max = float(np.sqrt(tl.tilt(log_pi0, r, kappa_max).kl))
        d = _check_d(d, d_max)
        kappas = _solve_increasing(lambda k: tl.tilt(log_pi0, r, k).kl, d**2, 0.0, kappa_max)
    kappas = tl.kappa_grid() if kappas is None else np.asarray(kappas, dtype=float)
    res = tl.frontier(log_pi0, r, kappas)
    base = float(np.exp(log_pi0) @ r_true)
    return Curve(np.sqrt(res.kl), res.pi @ r_true - base, res.kl)


def max_d(log_pi0, r, method: str, limit: float | None = None) -> float:
    """The largest d = sqrt(KL) best-of-n reaches by n = limit (default 2^17) or the tilt by
    kappa = limit (default 10,000)."""
    log_pi0, r = _check_model(log_pi0, r)
    if method == "best_of_n":
        return float(np.sqrt(bon.best_of_n(log_pi0, r, 2.0**17 if limit is None else limit).kl))
    if method == "tilt":
        return float(np.sqrt(tl.tilt(log_pi0, r, 10_000.0 if limit is None else limit).kl))
    raise ValueError("method must be 'best_of_n' or 'tilt'")
