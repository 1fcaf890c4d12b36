"""klrl_core.length_bias pinned independently of itself (issue 15).

* ``reference_simulate`` below is a second, slow implementation of the whole training loop,
  written per lane and per response with plain Python loops from the chapter's description
  (chapter 28, "Normalizations and their biases") and the random-number scheme that
  ``simulate`` documents. It must agree with the vectorised code to rounding, so any slip in
  the advantages, weights, step sizes, clamps or bookkeeping shows.
* The run summary (mean, sample sd, standard error) is recomputed here with ``statistics``.
* A run to 1000 steps passes through exactly the states of a run to 100 steps.
* The chapter's step-1000 numbers at the default seed, to the printed digits.
* Huge step sizes work (finite, in range) and bad arguments raise ValueError.
"""

import math
import statistics
import warnings

import numpy as np
import pytest

from klrl_core import length_bias as lb

G, L, A = 8, 40, 4


# --------------------------------------------------------------------------- the slow reference


def _softmax(x):
    m = max(x)
    e = [math.exp(v - m) for v in x]
    s = sum(e)
    return [v / s for v in e]


def _sig(x):
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


def _expected_length(logits):
    """Answer token + one token at every position reached; position t is reached when no
    stop happened before it."""
    total, alive = 1.0, 1.0
    for s in logits:
        total += alive  # this position is reached: one more token
        alive *= 1.0 - _sig(s)
    return total


def reference_simulate(steps, runs, seed, lrs, chunk=128, methods=lb.METHODS, cap=300.0):
    """Per-lane, per-response transcription of the training loop. Returns {method: (steps+1,
    runs, 3)} with P(correct), E[len | correct answer], mean over incorrect answers."""
    M = len(methods) * runs
    ans = [[0.0] * A for _ in range(M)]
    stop = [[[-2.0] * L for _ in range(A)] for _ in range(M)]
    out = np.empty((steps + 1, M, 3))
    U = E = None
    for t in range(steps + 1):
        for m in range(M):
            pa = _softmax(ans[m])
            lens = [_expected_length(stop[m][a]) for a in range(A)]
            out[t, m] = (pa[0], lens[0], sum(lens[1:]) / (A - 1))
        if t == steps:
            break
        block, j = divmod(t, chunk)
        if j == 0:
            gen = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(block,)))
            U = gen.random((chunk, M, G))
            E = gen.standard_exponential((chunk, M * G))
        for m in range(M):
            method = methods[m // runs]
            lr = lrs[method]
            pa = _softmax(ans[m])
            drawn = []
            for i in range(G):
                u, a, cum = U[j, m, i], A - 1, 0.0
                for b in range(A):  # inverse CDF over the answers
                    cum += pa[b]
                    if u < cum:
                        a = b
                        break
                e, hazard, T = E[j, m * G + i], 0.0, L
                for pos in range(L):  # stop where the hazard passes e
                    hazard += math.log1p(math.exp(stop[m][a][pos]))
                    if hazard > e:
                        T = pos
                        break
                drawn.append((a, T))
            rewards = [1.0 if a == 0 else 0.0 for a, _ in drawn]
            mean = sum(rewards) / G
            sd = math.sqrt(sum((x - mean) ** 2 for x in rewards) / G)  # population sd
            g_ans = [0.0] * A
            g_stop = [[0.0] * L for _ in range(A)]
            for (a, T), x in zip(drawn, rewards):
                if method == "GRPO":
                    length = min(T + 2, L + 1)  # answer, T fillers, end (or L fillers)
                    coef = lr * (x - mean) / (sd + 1e-6) / (G * length)
                else:
                    coef = lr * (x - mean) / (G * (L + 1))
                for b in range(A):
                    g_ans[b] += coef * ((1.0 if b == a else 0.0) - pa[b])
                for pos in range(min(T + 1, L)):
                    p = _sig(stop[m][a][pos])
                    g_stop[a][pos] += coef * ((1.0 - p) if pos == T else -p)
            for b in range(A):
                ans[m][b] += 0.1 * g_ans[b]
                for pos in range(L):
                    stop[m][b][pos] = min(cap, max(-cap, stop[m][b][pos] + g_stop[b][pos]))
    return {meth: out[:, i * runs : (i + 1) * runs] for i, meth in enumerate(methods)}


def _curves(res, method):
    c = res.curves[method]
    return np.stack([c.p_correct, c.len_correct, c.len_incorrect], axis=-1)


@pytest.mark.parametrize(
    "steps, runs, seed, lrs, chunk",
    [
        (40, 2, 3, {"GRPO": 2.0, "Dr. GRPO": 20.0}, 16),  # crosses two block boundaries
        (131, 1, 10, {"GRPO": 6.0, "Dr. GRPO": 60.0}, 128),  # the default block size
    ],
)
def test_simulate_matches_the_slow_reference(steps, runs, seed, lrs, chunk):
    res = lb.simulate(steps=steps, runs=runs, seed=seed, lrs=lrs, chunk=chunk)
    ref = reference_simulate(steps, runs, seed, lrs, chunk)
    for m in lb.METHODS:
        np.testing.assert_allclose(_curves(res, m), ref[m], rtol=1e-9, atol=1e-12)
    # and the run moved: the comparison is not between two untouched starting points
    assert abs(ref["GRPO"][-1, 0, 1] - ref["GRPO"][0, 0, 1]) > 0.5


def test_huge_step_sizes_match_the_reference_with_its_clamp():
    # step sizes far beyond the page's limits: logits hit the clamp at ±300 at once
    lrs = {"GRPO": 1e5, "Dr. GRPO": 1e6}
    res = lb.simulate(steps=12, runs=2, seed=1, lrs=lrs)
    ref = reference_simulate(12, 2, 1, lrs)
    for m in lb.METHODS:
        np.testing.assert_allclose(_curves(res, m), ref[m], rtol=1e-9, atol=1e-9)


def test_single_method_uses_lanes_from_zero():
    lrs = {"Dr. GRPO": 30.0}
    res = lb.simulate(steps=25, runs=2, seed=4, lrs=lrs, methods=("Dr. GRPO",), chunk=8)
    ref = reference_simulate(25, 2, 4, lrs, chunk=8, methods=("Dr. GRPO",))
    np.testing.assert_allclose(_curves(res, "Dr. GRPO"), ref["Dr. GRPO"], rtol=1e-9, atol=1e-12)


# --------------------------------------------------------------------------- the time axis


def test_a_longer_run_passes_through_the_shorter_one_exactly():
    short = lb.simulate(steps=100, runs=20)
    long = lb.simulate(steps=1000, runs=20)
    np.testing.assert_array_equal(short.steps, np.arange(101))
    for m in lb.METHODS:
        for key in lb.STATS:
            np.testing.assert_array_equal(
                getattr(short.curves[m], key), getattr(long.curves[m], key)[:101]
            )
    # also off a block boundary and with sparse recording
    a = lb.simulate(steps=77, runs=3, seed=5, record_every=7)
    b = lb.simulate(steps=300, runs=3, seed=5, record_every=7)
    for m in lb.METHODS:
        rows = np.searchsorted(b.steps, a.steps[:-1])
        np.testing.assert_array_equal(
            a.curves[m].len_incorrect[:-1], b.curves[m].len_incorrect[rows]
        )


# --------------------------------------------------------------------------- the summary


def test_run_summary_by_hand():
    res = lb.simulate(steps=30, runs=5, seed=2)
    for m in lb.METHODS:
        for index in (0, 17, -1):
            got = res.at(m, index)
            assert got["step"] == int(res.steps[index])
            for key in lb.STATS:
                x = [float(v) for v in getattr(res.curves[m], key)[index]]
                sd = statistics.stdev(x)  # sample sd over the 5 runs
                assert got[key] == pytest.approx(statistics.fmean(x), rel=1e-13)
                assert got[key + "_sd"] == pytest.approx(sd, rel=1e-9, abs=1e-15)
                assert got[key + "_se"] == pytest.approx(sd / math.sqrt(5), rel=1e-9, abs=1e-15)


def test_run_summary_of_a_known_spread():
    # two runs whose final P(correct) is known: sample sd |x1 - x2| / sqrt(2), se = sd / sqrt(2)
    res = lb.LengthBiasResult(steps=np.array([0]), runs=2)
    res.curves["GRPO"] = lb.MethodCurves(
        "GRPO", 1.0, np.array([[0.2, 0.6]]), np.array([[3.0, 3.0]]), np.array([[5.0, 9.0]])
    )
    got = res.final("GRPO")
    assert got["p_correct"] == pytest.approx(0.4)
    assert got["p_correct_sd"] == pytest.approx(0.4 / math.sqrt(2))
    assert got["p_correct_se"] == pytest.approx(0.2)
    assert got["len_correct_sd"] == 0.0
    assert got["len_incorrect_se"] == pytest.approx(2.0)


# --------------------------------------------------------------------------- the chapter's numbers


def test_the_chapter_step_1000_numbers_at_the_default_seed():
    res = lb.simulate()
    assert (res.runs, res.seed, int(res.steps[-1])) == (20, lb.SEED_DEFAULT, 1000)
    printed = {"GRPO": ("0.99", "2.1", "12.1"), "Dr. GRPO": ("0.98", "9.2", "9.3")}
    for m in lb.METHODS:
        f = res.final(m)
        got = (f"{f['p_correct']:.2f}", f"{f['len_correct']:.1f}", f"{f['len_incorrect']:.1f}")
        assert got == printed[m], (m, f)


# --------------------------------------------------------------------------- extremes and bad input


def test_the_issue_15_case_works():
    res = lb.simulate(steps=200, runs=3, seed=0, lrs={"GRPO": 1e5, "Dr. GRPO": 1e6})
    for m in lb.METHODS:
        c = res.curves[m]
        for arr in (c.p_correct, c.len_correct, c.len_incorrect):
            assert np.all(np.isfinite(arr))
        assert np.all((c.p_correct >= 0) & (c.p_correct <= 1))
        assert np.all((c.len_correct >= 2 - 1e-9) & (c.len_correct <= 41 + 1e-9))
        assert np.all((c.len_incorrect >= 2 - 1e-9) & (c.len_incorrect <= 41 + 1e-9))


def test_expected_length_of_extreme_logits_is_exact_and_quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert float(lb.expected_length(np.full(40, -1000.0))) == 41.0
        assert float(lb.expected_length(np.full(40, 1000.0))) == 2.0
        assert float(lb.expected_length(np.r_[-800.0, 800.0, np.zeros(38)])) == 3.0


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        (dict(steps=-1), "steps"),
        (dict(steps=2.5), "steps"),
        (dict(runs=0), "runs"),
        (dict(max_pos=lb.MAX_POS_LIMIT + 1), "max_pos"),
        (dict(group=0), "group"),
        (dict(n_answers=1), "n_answers"),
        (dict(seed=-3), "seed"),
        (dict(lrs={"GRPO": float("nan"), "Dr. GRPO": 1.0}), "step size"),
        (dict(lrs={"GRPO": float("inf"), "Dr. GRPO": 1.0}), "step size"),
        (dict(lrs={"GRPO": -1.0, "Dr. GRPO": 1.0}), "step size"),
        (dict(lrs={"GRPO": 1.0}), "Dr. GRPO"),
        (dict(methods=()), "method"),
    ],
)
def test_bad_arguments_raise_clear_errors(kwargs, fragment):
    with pytest.raises(ValueError, match=fragment):
        lb.simulate(**{"steps": 5, "runs": 2, **kwargs})


def test_the_largest_allowed_max_pos_keeps_the_search_keys_sorted():
    # every cumulative hazard at the clamp stays below the sentinel, so rows never overlap
    L = lb.MAX_POS_LIMIT
    _, hz = lb.cumulative_hazard(np.full((3, L), lb.LOGIT_CAP))
    keys = lb.stop_keys(hz)
    assert hz.max() < lb.HAZARD_SPAN - 1
    assert np.all(np.diff(keys.ravel()) > 0)
    res = lb.simulate(steps=20, runs=1, max_pos=L, lrs={"GRPO": 1e6, "Dr. GRPO": 1e6})
    assert np.all(res.curves["GRPO"].len_incorrect[-1] <= L + 1 + 1e-9)


# The chapter's table (Chapter 28, second experiment): step -> (P(correct), length if correct,
# length if incorrect), mean of 20 runs, as printed.
CHAPTER_TABLE = {
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


def test_the_default_seed_prints_every_row_of_the_chapters_table():
    """The page slices one run for every step count, so each printed row shows at its step."""
    from klrl_core import length_bias as lb

    res = lb.simulate(steps=1000, runs=20, seed=lb.SEED_DEFAULT)
    for method, rows in CHAPTER_TABLE.items():
        for step, (p, lc, li) in rows.items():
            got = res.at(method, step)
            assert (
                round(got["p_correct"], 2),
                round(got["len_correct"], 1),
                round(got["len_incorrect"], 1),
            ) == (p, lc, li), (method, step, got)
