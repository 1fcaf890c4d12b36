"""Benchmark for the three tilt pages (issue 2): the core's work for one slider move, and the
whole page script run. A plain script, not a test: `python benchmarks/bench_tilt.py`.

Targets: core work per slider move under 2 ms (tilt, a frontier of at least 200 points,
best-of-n at 18 values of n plus the KL-matched n); the page script run under 50 ms.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np

from klrl_core import best_of_n, model, tilt


def timed(fn, repeat: int = 200) -> tuple[float, float]:
    """Median and 95th percentile in milliseconds."""
    fn()
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1e3)
    samples.sort()
    return statistics.median(samples), samples[int(0.95 * (len(samples) - 1))]


def core_per_move(kappa: float) -> None:
    r = model.rewards()
    log_pi0 = model.log_reference(r)
    t = tilt.tilt(log_pi0, r, kappa)
    tilt.frontier(log_pi0, r, tilt.kappa_grid())  # 240 points, normally cached
    best_of_n.best_of_n(log_pi0, r, best_of_n.powers_of_two())  # 18 values of n
    n = best_of_n.matched_n(log_pi0, r, float(t.kl))
    best_of_n.best_of_n(log_pi0, r, n)
    tilt.expected_under(t.pi, model.true_reward(r))


def page_runs(page: str, values: list[float], repeat: int = 40) -> tuple[float, float]:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "pages" / page), default_timeout=60).run()
    samples = []
    for i in range(repeat + 3):
        v = values[i % len(values)]
        t0 = time.perf_counter()
        at.select_slider[0].set_value(v).run()
        if i >= 3:
            samples.append((time.perf_counter() - t0) * 1e3)
        assert not at.exception
    samples.sort()
    return statistics.median(samples), samples[int(0.95 * (len(samples) - 1))]


def main() -> None:
    print("core work for one slider move (all three tilt pages' computations, frontier uncached)")
    for kappa in (5.0, 20.0, 1000.0, 10_000.0):
        med, p95 = timed(lambda: core_per_move(kappa))
        print(f"  kappa = {kappa:>7g}: median {med:6.3f} ms   p95 {p95:6.3f} ms   target < 2 ms")
    med, p95 = timed(
        lambda: best_of_n.best_of_n(
            model.log_reference(model.rewards()), model.rewards(), 10_000_000
        )
    )
    print(f"  best-of-n at n = 10^7 alone: median {med:.3f} ms")

    print("\nwhole page script run after a slider move (AppTest, includes its own overhead)")
    kappas = [float(k) for k in np.arange(2.0, 40.0, 0.5)]
    for page in ("tilt.py", "best-of-n.py", "overoptimization.py"):
        med, p95 = page_runs(page, kappas)
        print(f"  {page:22s} median {med:6.1f} ms   p95 {p95:6.1f} ms   target < 50 ms")


if __name__ == "__main__":
    main()
