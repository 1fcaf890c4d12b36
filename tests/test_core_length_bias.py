"""Tests for klrl_core.length_bias (chapter 28, second experiment; Exercise 28.5).

Expected values are the chapter's printed table (mean of 20 runs, compared with an allowance
of a few standard errors from the run-to-run spread, since both it and ours are sample means),
closed forms worked by hand below, or a per-response loop transcribed here from the chapter's
description of the update. Nothing expected is computed with the code under test.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from klrl_core import length_bias as lb

# The chapter's table: step -> (P(correct), length if correct, length if incorrect).
CHAPTER = {
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
ROUNDING = (0.005, 0.05, 0.05)  # half a unit of the digits printed
# Standard error of a 20-run mean at each printed step (P(correct), length correct, incorrect),
# measured once from the spread of 400 runs (seed 12345) and rounded up. Typed here so that a
# bug which widens the spread cannot widen its own tolerance.
SE_20 = {
    "GRPO": {
        0: (0.0, 0.0, 0.0),
        100: (0.005, 0.044, 0.028),
        300: (0.001, 0.006, 0.036),
        1000: (0.0003, 0.004, 0.038),
    },
    "Dr. GRPO": {
        0: (0.0, 0.0, 0.0),
        100: (0.003, 0.071, 0.019),
        300: (0.001, 0.089, 0.036),
        1000: (0.0003, 0.097, 0.047),
    },
}


def sigmoid(x):
    return 1.0 / (1.0 + math.exp(-x))


@pytest.fixture(scope="module")
def chapter_run():
    return lb.simulate(steps=1000, runs=20, seed=0)


# --------------------------------------------------------------------------- the chapter's table


@pytest.mark.parametrize("method", lb.METHODS)
def test_matches_the_chapter_table(chapter_run, method):
    res = chapter_run
    for step, expect in CHAPTER[method].items():
        got = res.at(method, int(np.flatnonzero(res.steps == step)[0]))
        for key, want, half_unit, se in zip(lb.STATS, expect, ROUNDING, SE_20[method][step]):
            # the chapter's mean and ours both have standard error about se
            tol = half_unit + 3 * math.sqrt(2) * se + 1e-9
            assert got[key] == pytest.approx(want, abs=tol), (method, step, key, got[key], se)


def test_the_length_bias_itself(chapter_run):
    g, d = chapter_run.final("GRPO"), chapter_run.final("Dr. GRPO")
    start = chapter_run.at("GRPO", 0)["len_correct"]
    # GRPO: correct answers shrink toward the 2-token minimum, incorrect ones grow
    assert g["len_correct"] < 2.3 and g["len_incorrect"] > start + 2
    # Dr. GRPO: both stay near where they started (noise only)
    assert abs(d["len_correct"] - start) < 0.6 and abs(d["len_incorrect"] - start) < 0.6
    # both learn the answer
    assert g["p_correct"] > 0.95 and d["p_correct"] > 0.95


def test_step_zero_is_exact(chapter_run):
    p = sigmoid(-2.0)
    q = 1 - p
    length = 1 + (1 - q**40) / p  # answer + a geometric number of positions, capped
    for m in lb.METHODS:
        c = chapter_run.curves[m]
        np.testing.assert_allclose(c.p_correct[0], 0.25, rtol=1e-14)
        np.testing.assert_allclose(c.len_correct[0], length, rtol=1e-12)
        np.testing.assert_allclose(c.len_incorrect[0], length, rtol=1e-12)


def test_shapes_steps_and_recording():
    res = lb.simulate(steps=23, runs=3, seed=1, record_every=5)
    np.testing.assert_array_equal(res.steps, [0, 5, 10, 15, 20, 23])
    for m in lb.METHODS:
        c = res.curves[m]
        assert c.p_correct.shape == c.len_correct.shape == c.len_incorrect.shape == (6, 3)
        assert np.all((c.p_correct > 0) & (c.p_correct < 1))
        assert np.all((c.len_correct >= 2) & (c.len_correct <= 41))


def test_deterministic_and_seed_dependent():
    a = lb.simulate(steps=50, runs=4, seed=7)
    b = lb.simulate(steps=50, runs=4, seed=7)
    c = lb.simulate(steps=50, runs=4, seed=8)
    for m in lb.METHODS:
        np.testing.assert_array_equal(a.curves[m].len_correct, b.curves[m].len_correct)
        assert not np.array_equal(a.curves[m].len_correct, c.curves[m].len_correct)


def test_zero_step_size_changes_nothing():
    res = lb.simulate(steps=30, runs=2, seed=0, lrs={"GRPO": 0.0, "Dr. GRPO": 0.0})
    for m in lb.METHODS:
        np.testing.assert_allclose(res.curves[m].p_correct, 0.25)


def test_single_method_and_bad_method():
    res = lb.simulate(steps=10, runs=2, methods=("Dr. GRPO",))
    assert list(res.curves) == ["Dr. GRPO"]
    with pytest.raises(ValueError):
        lb.simulate(steps=1, runs=1, methods=("PPO",))


# --------------------------------------------------------------------------- the building blocks


def test_expected_length_closed_form():
    p = sigmoid(-2.0)
    expect = 1 + sum((1 - p) ** t for t in range(40))
    assert lb.expected_length(np.full(40, -2.0)) == pytest.approx(expect, rel=1e-13)
    assert expect == pytest.approx(9.3, abs=0.05)  # the chapter's 9.3
    assert lb.expected_length(np.full(40, 60.0)) == pytest.approx(2.0)  # stops at once
    assert lb.expected_length(np.full(40, -60.0)) == pytest.approx(41.0)  # runs to the limit
    # varying logits: position t reached with prob prod_{s<t}(1 − p_s)
    s = np.array([0.0, 1.0, -1.0, 2.0])
    ps = [sigmoid(x) for x in s]
    expect = (
        1 + 1 + (1 - ps[0]) + (1 - ps[0]) * (1 - ps[1]) + (1 - ps[0]) * (1 - ps[1]) * (1 - ps[2])
    )
    assert lb.expected_length(s) == pytest.approx(expect, rel=1e-13)


def test_response_lengths():
    np.testing.assert_array_equal(
        lb.response_lengths(np.array([0, 1, 38, 39, 40]), 40), [2, 3, 40, 41, 41]
    )


def test_cumulative_hazard_by_hand():
    s = np.array([[0.0, 1.0, -2.0]])
    p, h = lb.cumulative_hazard(s)
    ps = [sigmoid(x) for x in s[0]]
    np.testing.assert_allclose(p[0], ps, rtol=1e-13)
    surv = np.cumprod([1 - x for x in ps])
    np.testing.assert_allclose(np.exp(-h[0]), surv, rtol=1e-12)


def test_stop_positions_have_the_right_distribution():
    # three rows of stop logits, 60,000 draws each; compare with P(T = t) = S_{t−1} p_t
    rng = np.random.default_rng(0)
    L = 6
    logits = np.array([[-2.0] * L, [-1.0, 0.5, -3.0, 1.0, -0.5, 0.0], [-4.0] * L])
    _, hz = lb.cumulative_hazard(logits)
    n = 60_000
    rows = np.repeat(np.arange(3), n)
    T = lb.sample_stop_positions(hz, rows, rng.standard_exponential(rows.size))
    for i in range(3):
        ps = [sigmoid(x) for x in logits[i]]
        probs, alive = [], 1.0
        for t in range(L):
            probs.append(alive * ps[t])
            alive *= 1 - ps[t]
        probs.append(alive)  # never stopped
        freq = np.bincount(T[rows == i], minlength=L + 1) / n
        se = np.sqrt(np.array(probs) * (1 - np.array(probs)) / n)
        assert np.all(np.abs(freq - probs) <= 5 * se + 1e-4), (i, freq, probs)


def reference_gradients(p_answer, p_stop, answers, stop_pos, coef):
    """Per response, the chapter's description: grad of coef · log pi(answer, stop decisions)."""
    M, A = p_answer.shape
    L = p_stop.shape[1]
    g_ans = np.zeros((M, A))
    g_stop = np.zeros((M * A, L))
    for m in range(M):
        for i in range(answers.shape[1]):
            a, T, c = answers[m, i], stop_pos[m, i], coef[m, i]
            for b in range(A):
                g_ans[m, b] += c * ((1.0 if b == a else 0.0) - p_answer[m, b])
            row = m * A + a
            for t in range(L):
                if t < T:
                    g_stop[row, t] -= c * p_stop[row, t]  # went on
                elif t == T:
                    g_stop[row, t] += c * (1 - p_stop[row, t])  # stopped here
                    break
    return g_ans, g_stop


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.integers(1, 5),
    st.integers(1, 6),
    st.integers(2, 5),
    st.integers(1, 9),
)
def test_group_gradients_match_per_response_loop(seed, M, G, A, L):
    rng = np.random.default_rng(seed)
    pa = rng.dirichlet(np.ones(A), size=M)
    ps = rng.uniform(0.01, 0.99, size=(M * A, L))
    answers = rng.integers(0, A, size=(M, G))
    stop_pos = rng.integers(0, L + 1, size=(M, G))
    coef = rng.normal(size=(M, G)) * (rng.random((M, G)) < 0.7)
    ref_a, ref_s = reference_gradients(pa, ps, answers, stop_pos, coef)
    g_a, g_s = lb.group_gradients(pa, ps, answers, stop_pos, coef)
    np.testing.assert_allclose(g_a, ref_a, atol=1e-12)
    np.testing.assert_allclose(g_s, ref_s, atol=1e-12)
    # the restricted form returns exactly the listed rows
    rows = np.arange(M)[:, None] * A + answers
    touched = np.unique(rows[coef != 0])
    _, g_t = lb.group_gradients(pa, ps, answers, stop_pos, coef, only_rows=touched)
    np.testing.assert_allclose(g_t, ref_s[touched], atol=1e-12)
    untouched = np.setdiff1d(np.arange(M * A), touched)
    assert np.all(ref_s[untouched] == 0)
    # the simulation's form: indices precomputed, the touched rows found by the function
    flat = rows.ravel() * (L + 1) + stop_pos.ravel()
    g_a2, g_t2, found = lb._group_gradients(pa, ps, coef, rows.ravel(), flat, "touched")
    np.testing.assert_array_equal(found, touched)
    np.testing.assert_allclose(g_a2, ref_a, atol=1e-12)
    np.testing.assert_allclose(g_t2, ref_s[touched], atol=1e-12)
    # answer gradients sum to zero over answers in every lane
    np.testing.assert_allclose(g_a.sum(axis=1), 0.0, atol=1e-12)


def expected_stop_gradient(s, adv, weight):
    """E over the stopping position of group_gradients for one response with coef = adv·w(T)."""
    L = s.size
    ps = np.array([sigmoid(x) for x in s])
    pa = np.array([[1.0]])
    total = np.zeros(L)
    alive = 1.0
    for T in range(L + 1):
        prob = alive * (ps[T] if T < L else 1.0)
        coef = np.array([[adv * weight(T)]])
        _, g = lb.group_gradients(pa, ps[None, :], np.zeros((1, 1), int), np.array([[T]]), coef)
        total += prob * g[0]
        if T < L:
            alive *= 1 - ps[T]
    return total


@pytest.mark.parametrize("adv", [1.0, -0.7])
def test_exercise_28_5(adv):
    # Two possible lengths: stop after the first position (L1 = 2 tokens, probability q) or be
    # forced to stop at the second (L2 = 3): a stop logit of 40 there makes p ≈ 1.
    s0 = 0.3
    s = np.array([s0, 40.0])
    q = sigmoid(s0)
    # (a) a constant weight: the expected gradient on the stop logit is zero
    g_const = expected_stop_gradient(s, adv, lambda T: 1 / 41)
    assert g_const[0] == pytest.approx(0.0, abs=1e-15)
    # (b) weight 1/L: A q (1 − q) (1/L1 − 1/L2) on s0; positive for correct (A > 0) answers
    g_len = expected_stop_gradient(s, adv, lambda T: 1 / lb.response_lengths(T, 2))
    assert g_len[0] == pytest.approx(adv * q * (1 - q) * (1 / 2 - 1 / 3), rel=1e-9)
    assert np.sign(g_len[0]) == np.sign(adv)


# --------------------------------------------------------------------------- properties


@given(st.lists(st.floats(-50, 50, allow_nan=False), min_size=1, max_size=40))
def test_expected_length_within_bounds(logits):
    e = float(lb.expected_length(np.array(logits)))
    assert 2.0 - 1e-12 <= e <= len(logits) + 1 + 1e-9


@given(st.integers(0, 2**32 - 1), st.integers(1, 40))
def test_stop_positions_in_range(seed, L):
    rng = np.random.default_rng(seed)
    logits = rng.normal(scale=5, size=(4, L))
    _, hz = lb.cumulative_hazard(logits)
    rows = rng.integers(0, 4, 50)
    T = lb.sample_stop_positions(hz, rows, rng.standard_exponential(50))
    assert np.all((T >= 0) & (T <= L))
    # the search keys form one sorted list, even at the logit cap
    extreme = np.vstack([logits, np.full((1, L), lb.LOGIT_CAP), np.full((1, L), -lb.LOGIT_CAP)])
    keys = lb.stop_keys(lb.cumulative_hazard(extreme)[1])
    assert np.all(np.diff(keys.ravel()) >= 0)


def test_extreme_step_sizes_stay_finite():
    res = lb.simulate(steps=200, runs=3, seed=0, lrs={"GRPO": 1e4, "Dr. GRPO": 1e5})
    for m in lb.METHODS:
        c = res.curves[m]
        for arr in (c.p_correct, c.len_correct, c.len_incorrect):
            assert np.all(np.isfinite(arr))
        assert np.all((c.len_correct >= 2 - 1e-9) & (c.len_correct <= 41 + 1e-9))


# --------------------------------------------------------------------------- reading the results


def test_run_band_by_hand():
    """np.percentile's default: the q-th percentile of n sorted values sits at position
    (n − 1)·q/100, between neighbours linearly. Five runs 0, 10, 20, 30, 40: the 10th at
    position 0.4 is 4, the 90th at 3.6 is 36; three runs 3, 1, 2: 1.2 and 2.8."""
    mean, lo, hi = lb.run_band(np.array([[40.0, 0, 30, 10, 20], [5, 5, 5, 5, 5]]))
    np.testing.assert_allclose(mean, [20.0, 5.0])
    np.testing.assert_allclose(lo, [4.0, 5.0])
    np.testing.assert_allclose(hi, [36.0, 5.0])
    # a skewed row: mean 2.5, median 0; the 90th at position 2.7 is 7
    mean, lo, hi = lb.run_band(np.array([[0.0, 10.0, 0.0, 0.0]]))
    np.testing.assert_allclose([mean[0], lo[0], hi[0]], [2.5, 0.0, 7.0])
    mean, lo, hi = lb.run_band(np.array([[3.0, 1.0, 2.0]]), 25, 75)
    np.testing.assert_allclose([mean[0], lo[0], hi[0]], [2.0, 1.5, 2.5])
    mean, lo, hi = lb.run_band(np.array([[3.0, 1.0, 2.0]]))
    np.testing.assert_allclose([lo[0], hi[0]], [1.2, 2.8])
    # a single run: the band is the run itself
    x = np.array([[0.25], [0.3], [0.9]])
    for part in lb.run_band(x):
        np.testing.assert_array_equal(part, x[:, 0])


def test_learning_status_by_hand():
    # from 0.25: learned at 0.9 and above, still learning from 0.05 above the start
    assert [lb.learning_status(p, 0.25) for p in (0.9, 0.99, 0.89, 0.35, 0.27, 0.25, 0.1)] == [
        0,
        0,
        1,
        1,
        2,
        2,
        2,
    ]
    assert lb.learning_status(0.5, 0.25, learned=0.5) == 0
    assert lb.learning_status(0.5, 0.25, moved=0.3) == 2


def test_length_moved_by_hand():
    nan = float("nan")
    # one run (no standard error): half a token or more, either way
    assert lb.length_moved(8.5, nan, 9.0) and lb.length_moved(9.5, nan, 9.0)
    assert not lb.length_moved(8.6, nan, 9.0) and not lb.length_moved(9.4, nan, 9.0)
    # several runs: also more than three standard errors (0.75 is exactly three of 0.25)
    assert not lb.length_moved(8.25, 0.25, 9.0) and lb.length_moved(8.0, 0.25, 9.0)
    assert lb.length_moved(10.0, 0.25, 9.0) and not lb.length_moved(9.75, 0.25, 9.0)
    # a tiny standard error does not make a small move count
    assert not lb.length_moved(9.3, 1e-6, 9.0)
    assert lb.length_moved(9.3, 1e-6, 9.0, tokens=0.25) and not lb.length_moved(
        10.0, 0.25, 9.0, z=4.0
    )


def test_reading_the_chapters_run(chapter_run):
    """At step 1,000 of the chapter's setting GRPO has learned the answer and its correct
    responses have clearly shortened; Dr. GRPO's lengths have not clearly moved."""
    g, d = chapter_run.at("GRPO"), chapter_run.at("Dr. GRPO")
    start = chapter_run.at("GRPO", 0)["len_correct"]
    assert lb.learning_status(g["p_correct"], 0.25) == 0
    assert lb.length_moved(g["len_correct"], g["len_correct_se"], start)
    assert not lb.length_moved(d["len_correct"], d["len_correct_se"], start)
