"""Mutants of klrl_core/tilt.py (the exponential tilt, its frontier and the true-reward peak)."""

P = "klrl_core/tilt.py"

TESTS = ["tests/test_core_tilt.py", "tests/test_core_properties.py",
         "tests/test_core_best_of_n.py", "tests/test_core_pinned_tilt.py"]

MUTANTS = [
    (P, "lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]",
        "lo, hi = grid[i], grid[min(i + 1, grid.size - 1)]",
        "true_reward_peak: bisection bracket starts at the best grid point, not its left neighbour"),
    (P, "lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]",
        "lo, hi = grid[max(i - 1, 0)], grid[i]",
        "true_reward_peak: bracket ends at the best grid point, not its right neighbour"),
    (P, "logits = log_pi0 + kappa * (r - r_top)",
        "logits = log_pi0 + kappa * r",
        "tilt without the shift of r by its maximum (kappa*r loses digits at large kappa)"),
    (P, "log_z = log_z_shifted + kappa[..., 0] * r_top[..., 0]",
        "log_z = log_z_shifted",
        "log Z without adding back the shift kappa*max r"),
    (P, "log_z = log_z_shifted + kappa[..., 0] * r_top[..., 0]",
        "log_z = log_z_shifted + kappa[..., 0] * np.min(r, axis=-1)",
        "log Z adds back the wrong shift (min instead of max)"),
    (P, "terms = np.where(p > 0, p * (log_p - log_q), 0.0)",
        "terms = p * (log_p - log_q)",
        "kl_divergence without the 0 log 0 mask"),
    (P, "return np.maximum(np.sum(terms, axis=-1), 0.0)",
        "return np.sum(terms, axis=-1)",
        "kl_divergence without the clamp of rounding noise below zero"),
    (P, "return Tilt(log_pi, pi, pi @ r, kl_divergence(log_pi, log_pi0), log_z)",
        "return Tilt(log_pi, pi, pi @ r, kl_divergence(log_pi0, log_pi), log_z)",
        "tilt reports the reverse KL(pi0 || pi*)"),
    (P, "return pi @ (r * r_true) - (pi @ r) * (pi @ r_true)",
        "return pi @ (r * r_true) + (pi @ r) * (pi @ r_true)",
        "true_reward_peak: covariance with a wrong sign on the product of means"),
    (P, "        if slope(mid) > 0:\n            lo = mid",
        "        if slope(mid) < 0:\n            lo = mid",
        "true_reward_peak: bisection moves the wrong end"),
    (P, "logits = log_pi0 + kappa * (r - r_top)\n"
        "    log_z_shifted = logsumexp(logits)\n"
        "    log_pi = logits - log_z_shifted[..., None]\n"
        "    pi = np.exp(log_pi)\n"
        "    log_z = log_z_shifted + kappa[..., 0] * r_top[..., 0]",
        "logits = log_pi0 + kappa * r\n"
        "    log_z_shifted = logsumexp(logits)\n"
        "    log_pi = logits - log_z_shifted[..., None]\n"
        "    pi = np.exp(log_pi)\n"
        "    log_z = log_z_shifted",
        "tilt without the shift of r by its maximum, consistently (log Z unshifted too): "
        "exact in theory, loses digits when kappa*r is large"),
    (P, "if not (slope(lo) > 0 >= slope(hi)):      # the best is at an end of the grid",
        "if True:      # the best is at an end of the grid",
        "true_reward_peak: no bisection, the best grid point is returned"),
    (P, "u = np.linspace(0.0, np.arcsinh(kappa_max), n)\n    return np.sinh(u)",
        "u = np.linspace(0.0, np.log(kappa_max), n)\n    return np.exp(u)",
        "kappa_grid: geometric spacing that starts at kappa = 1 instead of 0"),
    (P, "u = np.linspace(0.0, np.arcsinh(kappa_max), n)",
        "u = np.linspace(0.0, np.arcsinh(kappa_max), n - 1)",
        "kappa_grid: one point short"),
    (P, "return pi @ values\n",
        "return pi @ values / pi.shape[-1]\n",
        "expected_under divides by the number of responses"),
    (P, "while hi - lo > tol * max(1.0, hi):",
        "while hi - lo > tol * max(1.0, hi) * 1e7:",
        "true_reward_peak: bisection stops far too early (tolerance 1e-3)"),
]
