"""Benchmark for the dpo page's core work (issue 14). A plain script, not a test:
`python benchmarks/bench_dpo.py`.

Times, per slider move: drawing and labelling the pairs into the 30 x 30 count matrix, the
exact DPO optimum (Newton), the IPO optimum, and runs of plain gradient steps. Also times the
pair-by-pair route (sample_pairs + label_pairs + count_matrix) for comparison.
Target: the exact optimum for up to 10^5 pairs within a few ms.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from klrl_core import dpo, model


def timed(fn, repeat: int = 50) -> tuple[float, float]:
    """Median and 95th percentile in milliseconds."""
    fn()
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1e3)
    samples.sort()
    return statistics.median(samples), samples[int(0.95 * (len(samples) - 1))]


def main() -> None:
    r = model.rewards()
    lq = model.log_reference(r)
    beta = 0.05
    rows = []
    for pairs in (1_000, 10_000, 100_000, 1_000_000, "all"):
        for labels in ("bt", "deterministic"):
            W = dpo.comparisons(lq, r, pairs, labels, 0)
            opt = dpo.dpo_optimum(W, lq, beta)
            rows.append(
                (
                    f"comparisons   pairs={pairs} labels={labels}",
                    timed(lambda: dpo.comparisons(lq, r, pairs, labels, 0)),
                )
            )
            rows.append(
                (
                    f"dpo_optimum   pairs={pairs} labels={labels} "
                    f"({opt.iterations} Newton steps, exists={opt.exists})",
                    timed(lambda: dpo.dpo_optimum(W, lq, beta)),
                )
            )
    W = dpo.comparisons(lq, r, 100_000, "bt", 0)
    rows.append(("ipo_optimum   pairs=100000", timed(lambda: dpo.ipo_optimum(W, lq, beta))))

    def pair_by_pair():
        pr = dpo.sample_pairs(lq, 100_000, 0)
        dpo.count_matrix(dpo.label_pairs(pr, r, "bt", 1), r.size)

    rows.append(
        (
            "pair by pair  pairs=100000 (sample_pairs+label_pairs+count_matrix)",
            timed(pair_by_pair, 20),
        )
    )
    for steps in (200, 1_000, 10_000):
        every = max(1, steps // 200)
        rows.append(
            (
                f"dpo_gradient_steps steps={steps} (record every {every})",
                timed(
                    lambda: dpo.dpo_gradient_steps(W, lq, beta, steps, record_every=every),
                    5 if steps > 1000 else 20,
                ),
            )
        )
        rows.append(
            (
                f"ipo_gradient_steps steps={steps} (record every {every})",
                timed(
                    lambda: dpo.ipo_gradient_steps(W, lq, beta, steps, record_every=every),
                    5 if steps > 1000 else 20,
                ),
            )
        )
    width = max(len(name) for name, _ in rows)
    print(f"{'':{width}}  median ms   p95 ms")
    for name, (med, p95) in rows:
        print(f"{name:{width}}  {med:9.2f}  {p95:7.2f}")


if __name__ == "__main__":
    main()
