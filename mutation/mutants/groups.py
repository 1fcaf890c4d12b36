"""Mutants of klrl_core/groups.py (Figure 12.4: group-relative advantages)."""

P = "klrl_core/groups.py"

TESTS = ["tests/test_core_groups.py", "tests/test_core_pinned_groups.py"]

MUTANTS = [
    (P, "q = np.minimum(p, 1.0 - p)", "q = p",
        "signal_probability: no folding to min(p, 1 - p): 1 - p^k cancels for p near 1"),
    (P, "all_wrong_minus_1 = np.expm1(k * np.log1p(-q))",
        "all_wrong_minus_1 = (1.0 - q) ** k - 1.0",
        "signal_probability: (1 - q)^k - 1 by subtraction: cancels for tiny q"),
    (P, "all_right = np.exp(k * np.log(q))", "all_right = np.exp((k - 1) * np.log(q))",
        "signal_probability: q^(k-1) instead of q^k"),
    (P, 'ddof = 1 if convention == "std_unbiased" else 0',
        'ddof = 0 if convention == "std_unbiased" else 1',
        "group_advantages: k and k - 1 divisors swapped between the conventions"),
    (P, "return np.where(flat, 0.0, centred / np.where(flat, 1.0, sd))",
        "return np.where(flat, 0.0, centred / np.where(flat, 1.0, sd + 1e-6))",
        "group_advantages: an epsilon added to the standard deviation"),
    (P, "    centred = np.where(flat, 0.0, centred)\n", "",
        "group_advantages: a flat group's centred rewards not forced to 0 "
        "(mean of k equal floats can differ from them by rounding)"),
    (P, "hi = np.sqrt((k_arr - c_arr) / c_arr)", "hi = np.sqrt(c_arr / (k_arr - c_arr))",
        "mixed_group_advantages: correct response's closed form inverted"),
    (P, "shrink = np.sqrt((k_arr - 1.0) / k_arr)", "shrink = np.sqrt(k_arr / (k_arr - 1.0))",
        "mixed_group_advantages: k - 1 correction applied the wrong way"),
    (P, "np.any(c_arr > k_arr - 1)", "np.any(c_arr > k_arr)",
        "mixed_group_advantages accepts c = k (an all-correct group is not mixed)"),
    (P, "return (r.sum(axis=-1, keepdims=True) - r) / (g - 1)",
        "return (r.sum(axis=-1, keepdims=True) - r) / g",
        "leave_one_out_baseline divides by G instead of G - 1"),
    (P, "return np.exp(log_choose + c * np.log(p) + (k - c) * np.log1p(-p))",
        "return np.exp(log_choose + (k - c) * np.log(p) + c * np.log1p(-p))",
        "binomial_pmf: p and 1 - p swapped"),
    (P, "return int(np.argmax(pmf[1:-1])) + 1", "return int(np.argmax(pmf[1:-1]))",
        "most_likely_mixed_group: off by one"),
    (P, "share = np.concatenate(([pmf[0] + pmf[k]], p_mixed * c / k, p_mixed * (k - c) / k))",
        "share = np.concatenate(([pmf[0] + pmf[k]], p_mixed * (k - c) / k, p_mixed * c / k))",
        "advantage_distribution: shares of correct and incorrect swapped"),
    (P, "share = np.concatenate(([pmf[0] + pmf[k]],", "share = np.concatenate(([pmf[0]],",
        "advantage_distribution: all-correct groups left out of the no-signal share"),
    (P, "        keep[0] = True\n", "",
        "advantage_distribution: min_share can drop the no-signal entry"),
    (P, "if len(tokens) > MAX_GROUP:", "if len(tokens) >= MAX_GROUP:",
        "parse_grades rejects a group of exactly MAX_GROUP"),
    (P, "np.any(k_arr < 1)", "np.any(k_arr < 0)", "k = 0 accepted"),
    (P, "np.any((p < 0) | (p > 1))", "np.any((p < 0) | (p >= 1))", "p = 1 rejected"),
]
