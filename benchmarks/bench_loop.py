"""Timings of the training loop behind the loop page (klrl_core/loop.py, issue 22).

A plain script (not a test): ``python benchmarks/bench_loop.py``. Prints the median (and
fastest) wall time of each case over repeated calls, beside issue 22's target for the run at
the defaults (20 runs x 300 steps x 24 problems x G 8 in at most 0.3 s), and the run's
figures at the defaults (mean over the 20 runs), so the numbers the issue asks for are
measured in one place.
"""

from __future__ import annotations

import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from klrl_core import loop, pass_at_k


def timed(fn, repeats: int) -> tuple[float, float]:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), min(times)


def main() -> None:
    seed = iter(range(10**6))
    default = loop.run()
    ks = np.unique(np.round(np.logspace(0, np.log10(1024), 60)))
    kl_mean = default.kl.mean(axis=0)
    cases = [
        ("run: defaults (GRPO, 20 x 300 x 24, G 8)", 300.0, 15, lambda: loop.run(seed=next(seed))),
        ("run: shared off", 300.0, 15, lambda: loop.run(shared=False, seed=next(seed))),
        ("run: kl 0.5 (k3 as a loss)", None, 10, lambda: loop.run(kl=0.5, seed=next(seed))),
        ("run: G 64", None, 5, lambda: loop.run(g=64, seed=next(seed))),
        ("run: 1,000 steps", None, 5, lambda: loop.run(steps=1000, seed=next(seed))),
        (
            "pass@k by step, 60 k x 301 steps",
            None,
            10,
            lambda: loop.pass_at_k_by_step(default.success, ks),
        ),
        (
            "crossover by step, k = 1..1,024",
            None,
            10,
            lambda: loop.crossover_by_step(default.problems.base_rates, default.success),
        ),
        (
            "matched optimum, 301 targets",
            None,
            10,
            lambda: loop.matched_optimum(default.problems, kl_mean),
        ),
    ]
    print(f"{'case':44s} {'median ms':>10s} {'min ms':>8s} {'target':>8s}")
    for name, target, repeats, fn in cases:
        med, best = timed(fn, repeats)
        tgt = f"<={target:g}" if target is not None else ""
        flag = "" if target is None else ("  ok" if med * 1e3 <= target else "  SLOW")
        print(f"{name:44s} {med * 1e3:10.1f} {best * 1e3:8.1f} {tgt:>8s}{flag}")

    print("\nFigures at the defaults (mean over 20 runs, seed 0):")
    for shared in (True, False):
        r = default if shared else loop.run(shared=False)
        pk = loop.pass_at_k_by_step(r.success, [1, 256])
        rare = r.mean_success[-1][r.problems.rare].mean()
        print(
            f"  shared {'on ' if shared else 'off'}: pass@1 {pk[0, 0]:.3f} -> {pk[-1, 0]:.3f}, "
            f"pass@256 {pk[0, 1]:.3f} -> {pk[-1, 1]:.3f}, rare problems' mean success "
            f"{r.problems.base_rates[r.problems.rare].mean():.3f} -> {rare:.4f}, "
            f"KL {r.kl.mean(axis=0)[-1]:.3f} nats"
        )
    opt = loop.matched_optimum(default.problems, kl_mean)
    base = pass_at_k.mixture_pass_at_k(default.problems.base_rates, np.arange(1.0, 1025.0))
    worst = np.min(
        np.asarray(pass_at_k.mixture_pass_at_k(opt.rates, np.arange(1.0, 1025.0)[:, None])).T - base
    )
    print(
        f"  matched optimum at the last step: beta {opt.beta[-1]:.3f}, pass@256 "
        f"{pass_at_k.mixture_pass_at_k(opt.rates[-1], 256):.3f}; smallest lead over the base "
        f"at any k = 1..1,024 and any step: {worst:.2e}"
    )


if __name__ == "__main__":
    main()
