"""Mutants of klrl_core/length_bias.py (chapter 28's second experiment: GRPO's length bias)."""

P = "klrl_core/length_bias.py"

TESTS = ["tests/test_core_length_bias.py", "tests/test_core_pinned_length_bias.py"]

MUTANTS = [
    (P, "std = np.sqrt(k_over_g * (1.0 - k_over_g))",
        "std = np.sqrt(k_over_g * (1.0 - k_over_g) * G / max(G - 1, 1))",
        "GRPO advantage: standard deviation with k - 1 instead of k"),
    (P, 'sd = float(x.std(ddof=1)) if len(x) > 1 else float("nan")',
        'sd = float(x.std(ddof=0)) if len(x) > 1 else float("nan")',
        "run summary: spread over runs with ddof=0 (documented: sample sd over the runs)"),
    (P, "out[key + \"_se\"] = sd / float(np.sqrt(len(x)))",
        "out[key + \"_se\"] = sd / float(len(x))",
        "run summary: standard error as sd/n"),
    (P, "np.minimum(s_new, LOGIT_CAP, out=s_new)          # the clamp (cheaper than clip)\n                np.maximum(s_new, -LOGIT_CAP, out=s_new)",
        "",
        "the stop-logit clamp dropped (exp overflows at huge step sizes)"),
    (P, "pa = np.exp(ans - np.maximum.reduce(ans, axis=1, keepdims=True))",
        "pa = np.exp(ans)",
        "answer softmax without the shift by the largest logit"),
    (P, "den = np.where(grpo[:, None], std[None, :] + STD_EPS, 1.0)",
        "den = np.where(grpo[:, None], std[None, :], 1.0)",
        "GRPO advantage without the epsilon (0/0 in an all-wrong group)"),
    (P, "STD_EPS = 1e-6", "STD_EPS = 1e-4", "epsilon 1e-4 instead of the documented 1e-6"),
    (P, "w_tab = np.repeat(np.where(grpo[:, None], 1.0 / (G * lengths)[None, :],",
        "w_tab = np.repeat(np.where(grpo[:, None], 1.0 / (G * (lengths - 1))[None, :],",
        "GRPO weight 1/|o| without counting the answer token"),
    (P, "                               1.0 / (G * (L + 1))), A, axis=0).ravel()",
        "                               1.0 / (G * L)), A, axis=0).ravel()",
        "Dr. GRPO constant 1/(G L) instead of 1/(G (L + 1))"),
    (P, "ans += ANSWER_LR_SCALE * g_ans", "ans += g_ans",
        "answer logits learn at the full step size"),
    (P, "adv_tab = np.stack([(0.0 - k_over_g) / den, (1.0 - k_over_g) / den], axis=-1)",
        "adv_tab = np.stack([(1.0 - k_over_g) / den, (0.0 - k_over_g) / den], axis=-1)",
        "advantages of correct and incorrect responses swapped"),
    (P, "pick[1:, 1] = 1.0 / (A - 1)", "pick[1:, 1] = 1.0 / A",
        "incorrect length averaged over A instead of A - 1 answers"),
    (P, "    return 2.0 + reach.sum(axis=-1)", "    return 1.0 + reach.sum(axis=-1)",
        "expected_length forgets the answer token"),
    (P, "        w[-1] = 0.0\n", "",
        "expected length from hazards counts one position too many"),
    (P, "return np.minimum(np.asarray(stop_pos) + 2, max_pos + 1)",
        "return np.minimum(np.asarray(stop_pos) + 1, max_pos + 1)",
        "response_lengths: end token not counted"),
    (P, "g = _block_rng(entropy, t // chunk)", "g = _block_rng(entropy, t)",
        "block generator keyed by the step instead of the block number "
        "(not the documented draw)"),
    (P, "U_ans = (g.random((chunk, M, G)) + lane).reshape(chunk, M * G)\n"
        "                    E_stop = g.standard_exponential((chunk, M * G))",
        "n_c = max(1, min(chunk, steps - t))\n"
        "                    U_ans = (g.random((n_c, M, G)) + lane).reshape(n_c, M * G)\n"
        "                    E_stop = g.standard_exponential((n_c, M * G))",
        "the old scheme: random numbers in blocks sized by the steps left, so a step's draws "
        "depend on the total step count"),
    (P, "keys_stop[touched, :L] = h_new + (HAZARD_SPAN * touched)[:, None]",
        "keys_stop[touched, :L] = h_new",
        "incremental update of the stopping keys forgets the row shift"),
    (P, "if not isinstance(lr_m, (int, float, np.number)) or not np.isfinite(lr_m) or lr_m < 0:",
        "if not isinstance(lr_m, (int, float, np.number)):",
        "step sizes not checked (nan or inf give nan curves)"),
]
