"""Small helpers shared by several klrl_core modules (argument checks, the logistic function)."""

import numpy as np


def check_int(x, name: str, lo: int, hi: int | None = None) -> int:
    """``x`` as an int if it is a whole number (a Python or NumPy integer, not a bool, not a
    float) from ``lo`` to ``hi`` (no upper bound when ``hi`` is None); else a ValueError."""
    whole = isinstance(x, (int, np.integer)) and not isinstance(x, bool)
    if not whole or x < lo or (hi is not None and x > hi):
        span = f"from {lo:,} to {hi:,}" if hi is not None else f"of at least {lo:,}"
        raise ValueError(f"{name} must be a whole number {span}, got {x!r}")
    return int(x)


def check_beta(beta) -> np.ndarray:
    """The KL weight beta as a float array: every entry > 0; inf is allowed (no reweighting)."""
    beta = np.asarray(beta, dtype=float)
    if np.any(np.isnan(beta)) or np.any(beta <= 0):
        raise ValueError("beta must be a positive number (inf means no reweighting)")
    return beta


def sigmoid(x: np.ndarray) -> np.ndarray:
    """The logistic function 1 / (1 + e^-x), elementwise.

    Through e = exp(-|x|) <= 1: no overflow at any x, and sigma(-40) = 4.2e-18 keeps its digits
    (1 - sigma(40) or 1 + tanh(x / 2) would round it to 0). NaN in, NaN out.
    """
    e = np.exp(-np.abs(x))
    with np.errstate(invalid="ignore"):
        return np.where(x >= 0, 1.0, e) / (1.0 + e)
