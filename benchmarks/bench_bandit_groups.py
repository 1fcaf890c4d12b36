"""Timings of the bandit and group computations behind Figures 12.1 and 12.4.

A plain script (not a test): ``python benchmarks/bench_bandit_groups.py``.
Prints the median (and fastest) wall time of each case over repeated calls,
next to the target from issue 3 where there is one.
"""

from __future__ import annotations

import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from klrl_core import bandit, groups


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
    cases = [
        (
            "bandit: 20 runs x 300 steps, no baseline",
            5.0,
            200,
            lambda: bandit.simulate_reinforce(20, 300, 0.15, False, next(seed)),
        ),
        (
            "bandit: 20 runs x 300 steps, baseline",
            5.0,
            200,
            lambda: bandit.simulate_reinforce(20, 300, 0.15, True, next(seed)),
        ),
        (
            "bandit: 4,000 runs x 300 steps, no baseline",
            150.0,
            25,
            lambda: bandit.simulate_reinforce(4000, 300, 0.15, False, next(seed)),
        ),
        (
            "bandit: 4,000 runs x 300 steps, baseline",
            150.0,
            25,
            lambda: bandit.simulate_reinforce(4000, 300, 0.15, True, next(seed)),
        ),
        (
            "bandit: exact-gradient path, 300 steps",
            None,
            200,
            lambda: bandit.exact_gradient_path(300, 0.15),
        ),
        (
            "groups: signal curve, 3 x 401 points",
            None,
            500,
            lambda: groups.signal_probability([[i / 400 for i in range(401)]], [[8], [2], [64]]),
        ),
        (
            "groups: advantage distribution p=0.1, k=8",
            None,
            500,
            lambda: groups.advantage_distribution(0.1, 8),
        ),
        (
            "groups: advantage distribution p=0.3, k=1024",
            None,
            200,
            lambda: groups.advantage_distribution(0.3, 1024, min_share=1e-7),
        ),
    ]
    print(f"{'case':48s} {'median ms':>10s} {'min ms':>8s} {'target':>8s}")
    for name, target, repeats, fn in cases:
        med, best = timed(fn, repeats)
        tgt = f"<{target:g}" if target is not None else ""
        flag = "" if target is None else ("  ok" if med * 1e3 < target else "  SLOW")
        print(f"{name:48s} {med * 1e3:10.3f} {best * 1e3:8.3f} {tgt:>8s}{flag}")


if __name__ == "__main__":
    main()
