"""Mutants of klrl_core/best_of_n.py (exact best-of-n, Section 12.5)."""

P = "klrl_core/best_of_n.py"

TESTS = ["tests/test_core_best_of_n.py", "tests/test_core_properties.py",
         "tests/test_core_pinned_tilt.py"]

MUTANTS = [
    (P, "return np.log(n) - (n - 1.0) / n", "return np.log(n) - (n + 1.0) / n",
        "kl_bound: (n + 1)/n instead of (n - 1)/n"),
    (P, "return np.log(n) - (n - 1.0) / n", "return np.log(n) - (n - 1.0) / (n + 1.0)",
        "kl_bound: divides by n + 1"),
    (P, "starts = np.flatnonzero(np.r_[True, sorted_r[1:] != sorted_r[:-1]])",
        "starts = np.flatnonzero(np.r_[True, sorted_r[1:] > sorted_r[:-1] + 1e-9])",
        "levels merge rewards closer than 1e-9 (near-ties treated as ties)"),
    (P, "total = np.add.reduceat(np.exp(log_pi0[order] - safe_top[index[order]]), starts)",
        "total = np.maximum.reduceat(np.exp(log_pi0[order] - safe_top[index[order]]), starts)",
        "a level's mass is its largest member, not the sum"),
    (P, "return np.where(above < 0.5, np.log1p(-np.minimum(above, 1.0)), log_below)",
        "return log_below",
        "log F always the running sum from below: 1 - tiny tail rounds to 1 at large n"),
    (P, "log_above = np.concatenate([np.logaddexp.accumulate(log_mass[::-1])[::-1][1:], [-np.inf]])",
        "log_above = np.logaddexp.accumulate(log_mass[::-1])[::-1]",
        "upper tail includes the level itself (P(reward >= level) instead of >)"),
    (P, "log_f_minus = np.concatenate([[-np.inf], log_f[:-1]])",
        "log_f_minus = np.concatenate([[log_f[0]], log_f[:-1]])",
        "F^- of the lowest level is F, not 0: the lowest level gets no mass"),
    (P, "gap = n * (log_f_minus - log_f)", "gap = (n - 1) * (log_f_minus - log_f)",
        "(F^-/F)^(n-1) instead of ^n"),
    (P, "n * log_f + np.log(-np.expm1(gap))", "n * log_f + np.log1p(-np.exp(gap))",
        "1 - (F^-/F)^n by log1p(-exp) instead of -expm1: cancels when the gap is tiny"),
    (P, "log_level = np.where(np.isfinite(log_f) & np.isfinite(log_mass),",
        "log_level = np.where(np.isfinite(log_f),",
        "equivalent: a level of zero mass has log_share = -inf (masked on isfinite(log_mass)), so "
        "log_pi = log_level + log_share = -inf whatever log_level is; see "
        "test_core_pinned.test_zero_mass_level_mask_is_redundant"),
    (P, "log_share = np.where(np.isfinite(log_mass[index]), log_pi0 - log_mass[index], -np.inf)",
        "log_share = np.where(np.isfinite(log_mass[index]), -np.log(np.bincount(index)[index]), -np.inf)",
        "tied responses share their level's mass equally instead of in proportion to pi0"),
    (P, "return BestOfN(log_pi, pi, pi @ r, kl_divergence(log_pi, log_pi0), kl_bound(n[..., 0]))",
        "return BestOfN(log_pi, pi, pi @ r, kl_divergence(log_pi0, log_pi), kl_bound(n[..., 0]))",
        "reverse KL(pi0 || pi_n)"),
    (P, "return 2.0 ** np.arange(max_exponent + 1)", "return 2.0 ** np.arange(max_exponent)",
        "powers_of_two stops one short"),
    (P, "lo = int(cand[max(i - 1, 0)])", "lo = int(cand[max(i, 0)])",
        "matched_n: next bracket starts at the first candidate above the target"),
    (P, "return int(cand[np.argmin(np.abs(kl - target_kl))])",
        "return int(cand[np.searchsorted(kl, target_kl)])",
        "matched_n: first n with KL >= target instead of the closest"),
    (P, "lo, hi = 1, int(n_max)", "lo, hi = 2, int(n_max)",
        "matched_n never returns n = 1"),
]
