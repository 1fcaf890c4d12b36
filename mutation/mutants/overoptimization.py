"""Mutants of klrl_core/overoptimization.py (Figure 12.5: where the true reward turns)."""

P = "klrl_core/overoptimization.py"
TESTS = ["tests/test_core_overoptimization.py"]

MUTANTS = [
    (P, "peak = int(np.argmax(t))",
        "peak = int(t.size - 1 - np.argmax(t[::-1]))",
     "the last step where r* is highest instead of the first"),
    (P, "float(t[peak] - t[-1])",
        "float(t[-1] - t[peak])",
     "the drop since the peak with its sign flipped"),
    (P, "bool(p[-1] > p[peak] and p[-1] > p[0])",
        "bool(p[-1] > p[peak])",
     "the proxy counted as rising when it ends below its start"),
    (P, "bool(p[-1] > p[peak] and p[-1] > p[0])",
        "bool(p[-1] >= p[peak] and p[-1] >= p[0])",
     "a proxy that only held level counted as rising"),
]
