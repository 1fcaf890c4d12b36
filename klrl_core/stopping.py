"""Exercise 28.5: the gradient on a stopping logit, with and without per-response averaging.

A response with advantage A (not depending on its length) ends after L1 tokens with probability
q = sigmoid(s) and after L2 > L1 tokens otherwise; s is a stopping logit.  A token-level loss
gives each token of a response of length L the weight w(L) A, so the response contributes
w(L) A grad log P(response), and its expected gradient on s is

    E[w(L) A d/ds log P] = d/ds E_s[w(L) A] = A q (1 - q) (w(L1) - w(L2)),

because d q/ds = q (1 - q) (``two_length_gradient``):

* constant weight w = c (Dr. GRPO, or DAPO's token-level mean): zero;
* per-response averaging, w(L) = 1/L (GRPO): A q (1 - q) (1/L1 - 1/L2), which has the sign of A:
  correct responses (A > 0) learn to stop early, incorrect ones (A < 0) learn to go on.

``stop_logit_gradients`` carries the same computation to the whole chain of stopping decisions of
chapter 28's length-bias toy (``klrl_core.length_bias``): position t = 0 .. L-1 stops with
probability sigmoid(s_t), and a response that stops at t has t + 2 tokens (answer, t fillers, end),
one that never stops L + 1.  With R_t the probability of reaching t and V_{t+1} the expected weight
of a response that goes on past t,

    d/ds_t E[w(L) A] = A R_t q_t (1 - q_t) (w(t + 2) - V_{t+1}).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._common import sigmoid

WEIGHTS = ("response", "constant")


def _weight_kind(weight: str) -> str:
    if weight not in WEIGHTS:
        raise ValueError(f"weight must be one of {WEIGHTS}, got {weight!r}")
    return weight


def _finite(x, name: str) -> np.ndarray:
    v = np.asarray(x, dtype=float)
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} must be finite")
    return v


def _lengths(l1, l2) -> tuple[np.ndarray, np.ndarray]:
    l1, l2 = _finite(l1, "L1"), _finite(l2, "L2")
    if np.any(l1 <= 0) or np.any(l2 <= l1):
        raise ValueError("lengths must satisfy 0 < L1 < L2")
    return l1, l2


def _w(length: np.ndarray, weight: str, c: float) -> np.ndarray:
    return 1.0 / length if weight == "response" else np.full(np.shape(length), float(c))


def two_length_objective(advantage, s, l1, l2, weight: str = "response", c: float = 1.0):
    """E_s[w(L) A] = A (q w(L1) + (1 - q) w(L2)), q = sigmoid(s): the quantity whose derivative in
    s is the expected gradient."""
    _weight_kind(weight)
    a, s = _finite(advantage, "A"), _finite(s, "s")
    l1, l2 = _lengths(l1, l2)
    q = sigmoid(s)
    out = a * (q * _w(l1, weight, c) + (1.0 - q) * _w(l2, weight, c))
    return out if np.ndim(out) else float(out)


def two_length_gradient(advantage, s, l1, l2, weight: str = "response", c: float = 1.0):
    """Exercise 28.5: A q (1 - q) (w(L1) - w(L2)); zero for a constant weight, and
    A q (1 - q) (1/L1 - 1/L2) for per-response averaging.  Vectorised."""
    _weight_kind(weight)
    a, s = _finite(advantage, "A"), _finite(s, "s")
    l1, l2 = _lengths(l1, l2)
    q = sigmoid(s)
    out = a * q * (1.0 - q) * (_w(l1, weight, c) - _w(l2, weight, c))
    return out if np.ndim(out) else float(out)


def stop_logit_gradient(advantage, q, l1, l2, weighting: str = "per_response", c: float = 1.0):
    """Exercise 28.5 in the exercise's own terms: the stopping probability q instead of its logit.

    A q (1 - q) (1/L1 - 1/L2) for ``weighting="per_response"`` (GRPO's 1/L), 0 for
    ``"constant"``.  q must lie in [0, 1].  Vectorised.
    """
    kinds = {"per_response": "response", "response": "response", "constant": "constant"}
    if weighting not in kinds:
        raise ValueError(f"weighting must be 'per_response' or 'constant', got {weighting!r}")
    q = _finite(q, "q")
    if np.any((q < 0) | (q > 1)):
        raise ValueError("the stopping probability q must lie in [0, 1]")
    a = _finite(advantage, "A")
    l1, l2 = _lengths(l1, l2)
    w = kinds[weighting]
    out = a * q * (1.0 - q) * (_w(l1, w, c) - _w(l2, w, c))
    return out if np.ndim(out) else float(out)


@dataclass(frozen=True)
class Worked:
    """A numeric instance of Exercise 28.5(b) (see ``worked_instance``)."""

    advantage: float
    s: float
    q: float
    l1: float
    l2: float
    gradient_response: float
    gradient_constant: float


def worked_instance(advantage: float = float(np.sqrt(7.0)), s: float = -2.0,
                    l1: float = 2.0, l2: float = 10.0) -> Worked:
    """Defaults: the lone correct response of a group of 8 (GRPO advantage sqrt(7) = 2.65, as in
    Figure 12.4's readout), the toy's initial stop logit -2 (q = 0.119), stopping at once (2
    tokens: answer and end) against going on to 10 tokens.  Per-response averaging gives
    2.6458 x 0.10499 x (1/2 - 1/10) = 0.1111; a constant weight gives 0."""
    return Worked(
        advantage=float(advantage), s=float(s), q=float(sigmoid(np.float64(s))),
        l1=float(l1), l2=float(l2),
        gradient_response=two_length_gradient(advantage, s, l1, l2, "response"),
        gradient_constant=two_length_gradient(advantage, s, l1, l2, "constant"),
    )


def chain_lengths(max_pos: int) -> np.ndarray:
    """Length of a response stopping at position t = 0 .. L-1, then of one that never stops:
    t + 2, and L + 1 (the answer token, t fillers, the end token; the toy's response_lengths)."""
    return np.minimum(np.arange(max_pos + 1) + 2.0, max_pos + 1.0)


def expected_weight(stop_logits, weight: str = "response", c: float = 1.0):
    """E[w(L)] for stop logits s_0 .. s_{L-1} on the last axis (any leading shape)."""
    _weight_kind(weight)
    s = _finite(stop_logits, "stop logits")
    if s.ndim == 0 or s.shape[-1] < 1:
        raise ValueError("give at least one stop logit")
    q = sigmoid(s)
    L = s.shape[-1]
    w = _w(chain_lengths(L), weight, c)
    reach = np.concatenate([np.ones(s.shape[:-1] + (1,)), np.cumprod(1.0 - q, axis=-1)], axis=-1)
    p_end = np.concatenate([reach[..., :-1] * q, reach[..., -1:]], axis=-1)  # stop at t, or never
    out = p_end @ w
    return out if np.ndim(out) else float(out)


def stop_logit_gradients(stop_logits, advantage=1.0, weight: str = "response", c: float = 1.0):
    """d/ds_t E[w(L) A] for every stop logit (last axis), exact.

    Backward over positions: V_L = w(L + 1) (never stops), V_t = q_t w(t + 2) + (1 - q_t) V_{t+1};
    the gradient is A R_t q_t (1 - q_t) (w(t + 2) - V_{t+1}) with R_t = prod_{u<t} (1 - q_u).
    Zero everywhere for a constant weight (Exercise 28.5(a)).
    """
    _weight_kind(weight)
    s = _finite(stop_logits, "stop logits")
    if s.ndim == 0 or s.shape[-1] < 1:
        raise ValueError("give at least one stop logit")
    a = _finite(advantage, "A")
    q = sigmoid(s)
    L = s.shape[-1]
    w = _w(chain_lengths(L), weight, c)
    v_next = np.empty_like(q)  # V_{t+1} for t = 0 .. L-1
    v = np.full(s.shape[:-1], w[L])
    for t in range(L - 1, -1, -1):
        v_next[..., t] = v
        v = q[..., t] * w[t] + (1.0 - q[..., t]) * v
    reach = np.concatenate([np.ones(s.shape[:-1] + (1,)), np.cumprod(1.0 - q[..., :-1], axis=-1)],
                           axis=-1)
    return np.asarray(a)[..., None] * reach * q * (1.0 - q) * (w[:L] - v_next)
