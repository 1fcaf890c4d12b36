"""Mutants of klrl_core/_common.py (the checks and the logistic function the core modules
share: dpo, length_bias, loop, pass_at_k, rarity, step_labels, stopping)."""

P = "klrl_core/_common.py"

TESTS = ["tests/test_core_common.py", "tests/test_core_dpo.py", "tests/test_core_stopping.py",
         "tests/test_core_loop.py", "tests/test_core_step_labels.py",
         "tests/test_core_rarity.py", "tests/test_core_pass_at_k.py"]

MUTANTS = [
    (P, "return np.where(x >= 0, 1.0, e) / (1.0 + e)",
        "return np.where(x >= 0, e, 1.0) / (1.0 + e)",
     "logistic function mirrored: sigma(x) computed as sigma(-x)"),
    (P, "    e = np.exp(-np.abs(x))", "    e = np.exp(-x)",
     "sigmoid without the overflow guard (inf / inf = nan for x below -709)"),
    (P, "return np.where(x >= 0, 1.0, e) / (1.0 + e)",
        "return 1.0 / (1.0 + np.exp(-x))",
     "the textbook formula: overflow warnings far out, and sigma(-40) as a difference"),
    (P, "and not isinstance(x, bool)", "",
     "check_int: True accepted as 1"),
    (P, "isinstance(x, (int, np.integer))", "float(x) == int(x)",
     "check_int: a float such as 3.0 accepted as a whole number"),
    (P, "x < lo", "x <= lo", "check_int: the lower bound itself refused"),
    (P, "(hi is not None and x > hi)", "(hi is not None and x >= hi)",
     "check_int: the upper bound itself refused"),
    (P, "return np.where(x >= 0, 1.0, e) / (1.0 + e)",
        "return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 - e))",
     "sigmoid wrong on the negative branch (was pass_at_k's logistic mutant: tiny p*)"),
    (P, "return np.where(x >= 0, 1.0, e) / (1.0 + e)",
        "return np.where(x >= 0, 1.0, 1.0) / (1.0 + e)",
     "sigmoid wrong for negative x (was rarity's logistic mutant)"),
    (P, "(hi is not None and x > hi)", "False", "check_int: no upper bound"),
    (P, "np.any(np.isnan(beta)) or ", "", "check_beta: nan accepted"),
    (P, "np.any(beta <= 0)", "np.any(beta < 0)", "check_beta: beta = 0 accepted"),
]
