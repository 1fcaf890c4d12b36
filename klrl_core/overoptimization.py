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
