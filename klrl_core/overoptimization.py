"""Overoptimization along a path of policies (Figure 12.5, Section 12.8.1).

A path is a sequence of policies, one per step of a run (or per point of a frontier), each
scored by the proxy reward r it is trained on and by the true reward r*. Overoptimization is
the proxy rising while r* falls: where r* peaks along the path, how far it has fallen since,
and whether the proxy has risen past both its start and its value at r*'s peak.

NumPy and the standard library only.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import best_of_n, tilt


class Turn(NamedTuple):
    peak: int                 # the first step where the true reward r* is highest
    best: float               # r* there
    drop: float               # how far r* has fallen since: best - r* at the last step (>= 0)
    proxy_rose: bool          # the proxy at the last step is above its values at 0 and at peak


def turn(true, proxy) -> Turn:
    """Where the true reward turns along a path, given r* and the proxy r at each step
    0..T (two 1-D arrays of the same length, at least one step)."""
    t, p = np.asarray(true, dtype=float), np.asarray(proxy, dtype=float)
    if t.ndim != 1 or t.size < 1 or p.shape != t.shape:
        raise ValueError("true and proxy must be 1-D arrays of the same length, one per step")
    if not (np.all(np.isfinite(t)) and np.all(np.isfinite(p))):
        raise ValueError("rewards along a path must be finite numbers")
    peak = int(np.argmax(t))
    return Turn(peak, float(t[peak]), float(t[peak] - t[-1]),
                bool(p[-1] > p[peak] and p[-1] > p[0]))


class Scored(NamedTuple):
    kl: float                 # KL(pi || pi0), nats
    proxy: float              # E_pi[r]
    true: float               # E_pi[r*]
    spread: float             # the proxy reward's standard deviation under pi


def scored(pi, kl, r, r_true) -> Scored:
    """A policy's KL (given), expected proxy and true reward, and how widely it spreads its
    probability over the proxy reward (the standard deviation of r under pi)."""
    proxy = float(tilt.expected_under(pi, r))
    return Scored(float(kl), proxy, float(tilt.expected_under(pi, r_true)),
                  float(np.sqrt(tilt.expected_under(pi, (np.asarray(r) - proxy) ** 2))))


def at_matched_kl(log_pi0, r, r_true, kl: float, kappas, frontier_kl
                  ) -> tuple[int, Scored, Scored]:
    """The tilt and best-of-n at about the same KL, scored: the tilt pi* at the kappa whose
    KL is ``kl`` (read off a frontier, ``frontier_kl`` at ``kappas``, linearly), and best-of-n
    with the n whose exact KL is closest to ``kl``. Returns (n, tilt's, best-of-n's)."""
    t = tilt.tilt(log_pi0, r, float(np.interp(kl, frontier_kl, kappas)))
    n = best_of_n.matched_n(log_pi0, r, kl)
    bon = best_of_n.best_of_n(log_pi0, r, n)
    return n, scored(t.pi, t.kl, r, r_true), scored(bon.pi, bon.kl, r, r_true)


def overrating_grows(r, r_true) -> bool:
    """Whether the proxy's overrating r - r* never shrinks as r grows (the chapter's bend:
    the proxy overrates the very top most); equal overratings to 1e-12 count as growing."""
    r, r_true = np.asarray(r, dtype=float), np.asarray(r_true, dtype=float)
    return bool(np.all(np.diff((r - r_true)[np.argsort(r)]) >= -1e-12))
