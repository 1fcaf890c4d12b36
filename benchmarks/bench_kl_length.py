"""Timings of chapter 28's two experiments (the kl-penalty and length-bias pages).

A plain script (not a test): ``python benchmarks/bench_kl_length.py [--quick]``.
Prints, for each case, the median and fastest wall time and the fastest CPU time of this
process over repeated calls, next to the targets of issue 5 (length bias: 20 runs x 1,000
steps of both methods < 0.2 s; KL penalty: all three rules at 4,000 steps < 0.3 s). On a
machine shared with other jobs the wall time includes their turns on the CPU; the CPU time
does not. Then it times two plain loops over runs, group members and positions, written here
(a pure-Python one and one in the NumPy-per-draw style of the chapter's code), on a few runs,
extrapolates them to 20 runs of both methods and reports the speed-up, and prints the
vectorised statistics beside the chapter's table. ``--quick`` uses fewer repeats and runs.
"""

from __future__ import annotations

import math
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from klrl_core import kl_penalty, length_bias

CHAPTER_LENGTH = {
    "GRPO": {
        0: (0.25, 9.3, 9.3),
        100: (0.82, 2.6, 10.7),
        300: (0.96, 2.2, 11.5),
        1000: (0.99, 2.1, 12.1),
    },
    "Dr. GRPO": {
        0: (0.25, 9.3, 9.3),
        100: (0.55, 9.3, 9.3),
        300: (0.89, 9.2, 9.3),
        1000: (0.98, 9.2, 9.3),
    },
}


def timed(fn, repeats: int) -> tuple[float, float, float]:
    """Median and fastest wall time, and fastest CPU time of this process, over repeats.

    On a shared machine the wall time also counts the time other processes hold the CPU;
    the CPU time does not, so it is the steadier number to compare against a target.
    """
    fn()  # warm-up
    wall, cpu = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), min(wall), min(cpu)


# --------------------------------------------------------------------------- plain-loop reference


def loop_run(
    method: str, steps: int, lr: float, rng: np.random.Generator, record=(0, 100, 300, 1000)
) -> dict:
    """One run of the length toy, one response and one position at a time (no vectorisation).

    Same model and update as klrl_core.length_bias (chapter 28's description); used only to
    time the straightforward approach and to check that it gives the same statistics.
    """
    A, L, G = length_bias.N_ANSWERS, length_bias.MAX_POS, length_bias.GROUP
    ans = [0.0] * A
    stop = [[length_bias.STOP_LOGIT0] * L for _ in range(A)]
    out = {}

    def exp_len(row):
        total, alive = 1.0, 1.0
        for s in row:
            total += alive  # this position is reached
            alive *= 1.0 - 1.0 / (1.0 + math.exp(-s))
        return total

    for step in range(steps + 1):
        m = max(ans)
        w = [math.exp(x - m) for x in ans]
        z = sum(w)
        pa = [x / z for x in w]
        if step in record:
            out[step] = (
                pa[0],
                exp_len(stop[0]),
                sum(exp_len(stop[a]) for a in range(1, A)) / (A - 1),
            )
        if step == steps:
            break
        answers, lengths, grads = [], [], []
        for _ in range(G):
            u, a, acc = rng.random(), 0, pa[0]
            while u >= acc and a < A - 1:
                a += 1
                acc += pa[a]
            g = [0.0] * L
            n = 1  # the answer token
            for t in range(L):
                p = 1.0 / (1.0 + math.exp(-stop[a][t]))
                n += 1
                if rng.random() < p:
                    g[t] += 1.0 - p
                    break
                g[t] -= p
            answers.append(a)
            lengths.append(n)
            grads.append(g)
        r = [1.0 if a == 0 else 0.0 for a in answers]
        mean = sum(r) / G
        if method == "GRPO":
            sd = math.sqrt(sum((x - mean) ** 2 for x in r) / G)
            adv = [(x - mean) / (sd + length_bias.STD_EPS) for x in r]
        else:
            adv = [x - mean for x in r]
        for i in range(G):
            wi = 1.0 / (G * lengths[i]) if method == "GRPO" else 1.0 / (G * (L + 1))
            c = lr * wi * adv[i]
            for b in range(A):
                ans[b] += (
                    length_bias.ANSWER_LR_SCALE * c * ((1.0 if b == answers[i] else 0.0) - pa[b])
                )
            row = stop[answers[i]]
            for t in range(L):
                row[t] += c * grads[i][t]
    return out


def loop_run_numpy(method: str, steps: int, lr: float, rng: np.random.Generator) -> None:
    """The same run written the way one first writes it with NumPy: array parameters, one
    np.random call per draw, an inner loop over positions on NumPy scalars (as the chapter's
    code is organised). Only timed; it returns nothing."""
    A, L, G = length_bias.N_ANSWERS, length_bias.MAX_POS, length_bias.GROUP
    ans = np.zeros(A)
    stop = np.full((A, L), length_bias.STOP_LOGIT0)
    for _ in range(steps):
        pa = np.exp(ans - ans.max())
        pa /= pa.sum()
        picks = rng.choice(A, size=G, p=pa)
        reward = (picks == 0).astype(float)
        centred = reward - reward.mean()
        adv = centred / (reward.std() + length_bias.STD_EPS) if method == "GRPO" else centred
        g_ans, g_stop = np.zeros(A), np.zeros((A, L))
        for i in range(G):
            p_stop = 1.0 / (1.0 + np.exp(-stop[picks[i]]))
            g = np.zeros(L)
            n = 1
            for t in range(L):
                n += 1
                if rng.random() < p_stop[t]:
                    g[t] += 1.0 - p_stop[t]
                    break
                g[t] -= p_stop[t]
            w = 1.0 / (G * n) if method == "GRPO" else 1.0 / (G * (L + 1))
            onehot = -pa.copy()
            onehot[picks[i]] += 1.0
            g_ans += w * adv[i] * onehot
            g_stop[picks[i]] += w * adv[i] * g
        ans += length_bias.ANSWER_LR_SCALE * lr * g_ans
        stop += lr * g_stop


def main() -> None:
    quick = "--quick" in sys.argv
    reps = 3 if quick else 10
    ref_runs = 1 if quick else 2

    s = kl_penalty.make_setup(0)
    seeds = iter(range(10**6))
    cases = [
        (
            "length bias: 20 runs x 1,000 steps, both methods",
            200.0,
            lambda: length_bias.simulate(1000, 20, next(seeds)),
        ),
        (
            "length bias: 200 runs x 1,000 steps, both methods",
            None,
            lambda: length_bias.simulate(1000, 200, next(seeds)),
        ),
        (
            "kl penalty: 3 rules x 4,000 steps (256 samples)",
            300.0,
            lambda: kl_penalty.train_rules(
                s.pi_ref, s.r, 0.5, 4000, rng=np.random.default_rng(next(seeds))
            ),
        ),
        (
            f"kl penalty: estimator table ({kl_penalty.REPS_DEFAULT:,} x 16 samples)",
            None,
            lambda: kl_penalty.chapter_estimator_stats(0.5, next(seeds)),
        ),
        (
            "kl penalty: whole page computation (defaults)",
            None,
            lambda: kl_penalty.run_experiment(seed=next(seeds)),
        ),
    ]
    print(f"{'case':52s} {'median ms':>10s} {'min ms':>8s} {'min cpu ms':>10s} {'target':>8s}")
    best_len = None
    for name, target, fn in cases:
        med, best, cpu = timed(fn, reps)
        if best_len is None:
            best_len = (med, best, cpu)
        tgt = f"<{target:g}" if target is not None else ""
        flag = "" if target is None else ("  ok" if min(med, cpu) * 1e3 < target else "  SLOW")
        print(f"{name:52s} {med * 1e3:10.1f} {best * 1e3:8.1f} {cpu * 1e3:10.1f} {tgt:>8s}{flag}")

    # Two plain loops over runs, group members and positions: a few runs of each method, each
    # timed alone; the fastest run per method, times 20 runs, summed over the two methods.
    rng = np.random.default_rng(12345)
    loop_stats = {m: [] for m in length_bias.METHODS}
    for label, runner in (
        ("pure-Python loop (floats and lists)", loop_run),
        ("NumPy-scalar loop (the chapter's style)", loop_run_numpy),
    ):
        est_wall = est_cpu = 0.0
        for m in length_bias.METHODS:
            walls, cpus = [], []
            for _ in range(ref_runs):
                t0, c0 = time.perf_counter(), time.process_time()
                out = runner(m, 1000, length_bias.LR_DEFAULTS[m], rng)
                walls.append(time.perf_counter() - t0)
                cpus.append(time.process_time() - c0)
                if out is not None:
                    loop_stats[m].append(out)
            est_wall += 20 * min(walls)
            est_cpu += 20 * min(cpus)
        print(
            f"\n{label}: 20 runs x 1,000 steps of both methods ~ {est_wall:.1f} s wall "
            f"({est_cpu:.1f} s cpu), extrapolated from {ref_runs} run(s) per method"
        )
        print(
            f"  vectorised, fastest {best_len[1] * 1e3:.0f} ms wall ({best_len[2] * 1e3:.0f} ms "
            f"cpu)  ->  speed-up ~ {est_wall / best_len[1]:.0f}x wall, "
            f"{est_cpu / best_len[2]:.0f}x cpu"
        )

    res = length_bias.simulate(1000, 20, 0)
    print(
        "\nlength bias, mean of 20 runs (vectorised, seed 0) vs chapter [plain loop, "
        f"{ref_runs} run(s)]"
    )
    print(
        f"  {'method':9s} {'step':>5s}   {'P(correct)':>16s}   {'len if correct':>18s}   "
        f"{'len if incorrect':>18s}"
    )
    for m in length_bias.METHODS:
        for step, ch in CHAPTER_LENGTH[m].items():
            g = res.at(m, step)
            lp = np.mean([run[step] for run in loop_stats[m]], axis=0)
            print(
                f"  {m:9s} {step:5d}   {g['p_correct']:5.2f} vs {ch[0]:4.2f} [{lp[0]:4.2f}]"
                f"   {g['len_correct']:5.1f} vs {ch[1]:4.1f} [{lp[1]:4.1f}]"
                f"   {g['len_incorrect']:5.1f} vs {ch[2]:4.1f} [{lp[2]:4.1f}]"
            )

    r = kl_penalty.run_experiment()
    e = r.estimators
    print(f"\nkl penalty (seed 0, beta 0.5): KL(pi*||pi_ref) {e.true_kl:.4f} (chapter 0.1363)")
    for i, name in enumerate(kl_penalty.ESTIMATORS):
        print(
            f"  {name}: mean {e.mean[i]:.4f} std {e.std[i]:.4f} negative {e.share_negative[i]:6.1%}"
        )
    for row in r.summary_rows():
        print(
            f"  {row['policy']:20s} reward {row['reward']:.3f} KL {row['kl_to_ref']:.3f} "
            f"TV to pi* {row['tv_to_target']:.3f} TV to forward {row['tv_to_forward']:.3f}"
        )


if __name__ == "__main__":
    main()
