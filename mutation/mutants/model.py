"""Mutants of klrl_core/model.py (the stated model of Figures 12.2, 12.3, 12.5; logsumexp)."""

P = "klrl_core/model.py"

TESTS = ["tests/test_core_tilt.py", "tests/test_core_best_of_n.py", "tests/test_core_pinned_tilt.py"]

MUTANTS = [
    (P, "REF_CENTRE = 0.3", "REF_CENTRE = 0.35", "reference policy centred at 0.35, not 0.3"),
    (P, "REF_WIDTH = 0.17", "REF_WIDTH = 0.2", "reference width 0.2, not 0.17"),
    (P, "BEND_START = 0.5", "BEND_START = 0.55", "true reward bends above 0.55, not 0.5"),
    (P, "BEND_STRENGTH = 2.4", "BEND_STRENGTH = 2.0", "bend strength 2.0, not 2.4"),
    (P, "return np.linspace(0.0, 1.0, n)", "return np.arange(n) / n",
        "rewards i/n instead of i/(n - 1): the top response no longer has reward 1"),
    (P, "logits = -((r - centre) ** 2) / (2.0 * width**2)",
        "logits = -((r - centre) ** 2) / (width**2)",
        "Gaussian reference without the factor 2 in 2 width^2"),
    (P, "return logits - logsumexp(logits)", "return logits - np.max(logits)",
        "reference not normalised (max subtracted instead of log-sum-exp)"),
    (P, "excess = np.maximum(r - BEND_START, 0.0)", "excess = np.abs(r - BEND_START)",
        "true reward bends on both sides of 0.5"),
    (P, "return r - BEND_STRENGTH * excess**2", "return r - BEND_STRENGTH * excess",
        "linear instead of quadratic bend"),
    (P, "m = np.max(x, axis=axis, keepdims=True)", "m = np.min(x, axis=axis, keepdims=True)",
        "logsumexp shifted by the minimum: exp overflows for a wide spread"),
    (P, "m = np.where(np.isfinite(m), m, 0.0)", "m = m",
        "logsumexp without the guard for an all -inf row (gives nan instead of -inf)"),
    (P, "out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m",
        "out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))",
        "logsumexp forgets to add the shift back"),
    (P, "out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m",
        "out = np.log(np.sum(np.exp(x), axis=axis, keepdims=True))",
        "logsumexp without any shift: overflows/underflows for large |x|"),
]
