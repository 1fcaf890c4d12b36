"""Mutants of klrl_core/stopping.py (Exercise 28.5, the stop-logit gradient)."""

P = "klrl_core/stopping.py"
TESTS = ["tests/test_core_stopping.py"]

MUTANTS = [
    (P, "    out = a * q * (1.0 - q) * (_w(l1, weight, c) - _w(l2, weight, c))",
        "    out = a * q * (_w(l1, weight, c) - _w(l2, weight, c))",
     "dq/ds missing the (1 - q) factor"),
    (P, "    out = a * q * (1.0 - q) * (_w(l1, weight, c) - _w(l2, weight, c))",
        "    out = a * q * (1.0 - q) * (_w(l2, weight, c) - _w(l1, weight, c))",
     "lengths swapped: wrong sign"),
    (P, "    return 1.0 / length if weight == \"response\" else np.full(np.shape(length), float(c))",
        "    return 1.0 / length**2 if weight == \"response\" else np.full(np.shape(length), float(c))",
     "weight 1/L^2 instead of 1/L"),
    (P, "    return np.minimum(np.arange(max_pos + 1) + 2.0, max_pos + 1.0)",
        "    return np.minimum(np.arange(max_pos + 1) + 1.0, max_pos + 1.0)",
     "length off by one (no end token)"),
    (P, "        v = q[..., t] * w[t] + (1.0 - q[..., t]) * v",
        "        v = q[..., t] * w[t] + (1.0 - q[..., t]) * w[t + 1]",
     "continuation value replaced by the next length's weight"),
    (P, "    reach = np.concatenate([np.ones(s.shape[:-1] + (1,)), np.cumprod(1.0 - q[..., :-1], axis=-1)],",
        "    reach = np.concatenate([np.ones(s.shape[:-1] + (1,)), np.cumprod(q[..., :-1], axis=-1)],",
     "reach probability from stop instead of go-on probabilities"),
    (P, "    return np.asarray(a)[..., None] * reach * q * (1.0 - q) * (w[:L] - v_next)",
        "    return np.asarray(a)[..., None] * q * (1.0 - q) * (w[:L] - v_next)",
     "dropped the reach probability"),
    (P, "    p_end = np.concatenate([reach[..., :-1] * q, reach[..., -1:]], axis=-1)  # stop at t, or never",
        "    p_end = np.concatenate([reach[..., 1:] * q, reach[..., -1:]], axis=-1)  # stop at t, or never",
     "stop probability uses reach of the next position"),
    (P, "    if np.any(l1 <= 0) or np.any(l2 <= l1):", "    if np.any(l1 <= 0):",
     "L2 <= L1 accepted"),
    (P, "    v = np.full(s.shape[:-1], w[L])", "    v = np.full(s.shape[:-1], w[L - 1])",
     "equivalent: w[L - 1] == w[L] because a response stopping at the last position and one that never "
     "stops both have L + 1 tokens (chain_lengths)"),
    (P, "    out = a * q * (1.0 - q) * (_w(l1, w, c) - _w(l2, w, c))",
        "    out = a * q * (_w(l1, w, c) - _w(l2, w, c))",
     "q-form: missing the (1 - q) factor"),
]
