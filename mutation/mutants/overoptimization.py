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
    (P, "(np.asarray(r) - proxy) ** 2",
        "np.asarray(r) ** 2",
     "the proxy's spread taken about 0 instead of about its mean"),
    (P, "return n, scored(t.pi, t.kl, r, r_true), scored(bon.pi, bon.kl, r, r_true)",
        "return n, scored(bon.pi, bon.kl, r, r_true), scored(t.pi, t.kl, r, r_true)",
     "the tilt's and best-of-n's scores swapped"),
    (P, "np.interp(kl, frontier_kl, kappas)",
        "np.interp(kl, kappas, frontier_kl)",
     "the frontier read the wrong way round (kappa taken as KL)"),
    (P, "np.diff((r - r_true)[np.argsort(r)]) >= -1e-12",
        "np.diff((r - r_true)[np.argsort(r)]) > 1e-12",
     "equal overratings counted as not growing"),
    (P, "np.diff((r - r_true)[np.argsort(r)])",
        "np.diff((r - r_true)[np.argsort(r_true)])",
     "the overrating read in order of the true reward instead of the proxy"),
]
