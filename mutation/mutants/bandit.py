"""Mutants of klrl_core/bandit.py (Figure 12.1: REINFORCE on a five-armed bandit)."""

P = "klrl_core/bandit.py"

TESTS = ["tests/test_core_bandit.py", "tests/test_core_pinned_bandit.py"]

MUTANTS = [
    (P, '"se_mean": float(std / np.sqrt(n)),', '"se_mean": float(std / n),',
        "final_summary: standard error of the mean as sd/n instead of sd/sqrt(n)"),
    (P, "std = float(final.std())", "std = float(final.std(ddof=1))",
        "final_summary: sample sd (ddof=1) where the population sd is documented"),
    (P, "n_below = int(np.count_nonzero(final < 0.5))",
        "n_below = int(np.count_nonzero(final <= 0.5))",
        "final_summary: a run ending at exactly 1/2 counted as below"),
    (P, '"se_share": float(np.sqrt(share * (1.0 - share) / n)),',
        '"se_share": float(np.sqrt(share * (1.0 - share) / (n - 1))),',
        "final_summary: share's standard error with n - 1"),
    (P, "mix[1, n + 1] = -1.0", "mix[1, n + 1] = 1.0",
        "baseline added to the reward instead of subtracted"),
    (P, "mix[0, n + 1] = 1.0 - BASELINE_RATE", "mix[0, n + 1] = 1.0",
        "moving-average baseline never forgets (b <- b + 0.1 r)"),
    (P, "mix[0, n] = BASELINE_RATE", "mix[0, n] = 0.0",
        "baseline tracks the arm's mean reward but not the noise"),
    (P, "BASELINE_RATE = 0.1", "BASELINE_RATE = 0.2", "baseline step size 0.2, not 0.1"),
    (P, "ARM_MEANS = np.array([1.0, 1.2, 0.8, 1.5, 1.1])",
        "ARM_MEANS = np.array([1.0, 1.2, 0.8, 1.4, 1.1])", "best arm's mean 1.4, not 1.5"),
    (P, "uniforms = rng.random((steps, R))\n    noise = rng.standard_normal((steps, R))",
        "noise = rng.standard_normal((steps, R))\n    uniforms = rng.random((steps, R))",
        "random numbers drawn in the other order than documented"),
    (P, "theta -= theta.max(axis=0)", "theta -= theta.min(axis=0)",
        "re-centred by the minimum: exp overflows at large step sizes"),
    (P, "p_lo = pcum[best - 1] if best > 0 else np.zeros(R)", "p_lo = pcum[best - 1]",
        "P(best) wrong when the best arm is the first (pcum[-1] = 1)"),
    (P, "theta += lr * pi * (mu - pi @ mu)", "theta += lr * (mu - pi @ mu)",
        "exact gradient without the factor pi of the softmax"),
    (P, "        out[t] = pi[best]\n        theta += lr", "        theta += lr",
        "exact_gradient_path records nothing (uninitialised output)"),
    (P, "ge(pcum, uniforms[t], h)", "ge(pcum, 1.0 - uniforms[t], h)",
        "arm drawn with 1 - u (same distribution, not the documented draw)"),
    (P, "sub(h, pcum, pcum)", "sub(pcum, h, pcum)",
        "score with the wrong sign: pi - onehot(a)"),
]
