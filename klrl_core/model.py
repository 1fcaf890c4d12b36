"""The stated illustrative model behind Figures 12.2, 12.3 and 12.5 (SPEC.md).

Thirty responses with rewards evenly spaced on [0, 1], a Gaussian-shaped reference
policy centred at 0.3, and a true reward that bends down above 0.5 (Section 12.8.1).
"""

import numpy as np

N_RESPONSES = 30
REF_CENTRE = 0.3
REF_WIDTH = 0.17
BEND_START = 0.5
BEND_STRENGTH = 2.4


def rewards(n: int = N_RESPONSES) -> np.ndarray:
    """Proxy rewards r of the responses, in the order drawn."""
    return np.linspace(0.0, 1.0, n)


def log_reference(r: np.ndarray, centre: float = REF_CENTRE, width: float = REF_WIDTH) -> np.ndarray:
    """log pi0(r), pi0 proportional to exp(-(r - centre)^2 / (2 width^2)), normalised over r."""
    logits = -((r - centre) ** 2) / (2.0 * width**2)
    return logits - logsumexp(logits)


def true_reward(r: np.ndarray) -> np.ndarray:
    """Figure 12.5's true reward: equal to the proxy up to 0.5, bending down above it."""
    excess = np.maximum(r - BEND_START, 0.0)
    return r - BEND_STRENGTH * excess**2


def logsumexp(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """log(sum(exp(x))) along ``axis`` without overflow."""
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):   # all -inf gives log 0 = -inf, which is right
        out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return np.squeeze(out, axis=axis)
