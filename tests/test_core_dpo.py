"""Tests for klrl_core.dpo (Section 12.6, Equation 12.9; Azar et al.'s IPO).

How each thing is pinned, without the code under test computing its own expectation:
* the infinite-data DPO optimum against pi* = pi0 exp(r / beta) / Z written out below in
  plain Python (and against the chapter's printed readouts of Figures 12.2 and 12.5);
* finite-data optima against Zermelo's fixed-point iteration for Bradley-Terry (a different
  algorithm from Newton), against a two-response closed form, and against hand-worked
  graphs where no minimiser exists;
* the losses' gradients and Hessians against central finite differences;
* IPO against Azar et al.'s closed form pi ∝ pi0 exp(P(y beats pi0) / beta) and against a
  least-squares fit on an explicit design matrix;
* sampling and labelling by Monte Carlo within a few standard errors computed here.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from klrl_core import dpo, model

R = model.rewards()
LQ = model.log_reference(R)
R_TRUE = model.true_reward(R)


# --------------------------------------------------------------------------- references


def sigma(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


def ref_tilt(log_pi0, r, beta) -> np.ndarray:
    """pi* = pi0 exp(r / beta) / Z, Equation (12.4), one response at a time."""
    logits = [float(a) + float(b) / beta for a, b in zip(log_pi0, r)]
    m = max(logits)
    w = [math.exp(x - m) for x in logits]
    z = math.fsum(w)
    return np.array([x / z for x in w])


def tv(p, q) -> float:
    return 0.5 * float(np.sum(np.abs(np.asarray(p) - np.asarray(q))))


def zermelo(W, iters: int = 200_000) -> list:
    """Bradley-Terry maximum-likelihood strengths by Zermelo's iteration (Hunter 2004):
    p_i <- wins_i / sum_j n_ij / (p_i + p_j), on a strongly connected comparison graph.
    Returns log strengths with mean 0."""
    n = len(W)
    wins = [sum(W[i][j] for j in range(n) if j != i) for i in range(n)]
    p = [1.0] * n
    for _ in range(iters):
        new = []
        for i in range(n):
            s = sum((W[i][j] + W[j][i]) / (p[i] + p[j]) for j in range(n) if j != i)
            new.append(wins[i] / s)
        g = math.exp(sum(math.log(x) for x in new) / n)
        new = [x / g for x in new]
        done = max(abs(a - b) for a, b in zip(new, p)) < 1e-15
        p = new
        if done:
            break
    return [math.log(x) for x in p]


def policy_from_scores(log_pi0, v, beta) -> np.ndarray:
    """pi ∝ pi0 exp(v / beta), plainly."""
    logits = [float(a) + b / beta for a, b in zip(log_pi0, v)]
    m = max(logits)
    w = [math.exp(x - m) for x in logits]
    return np.array([x / math.fsum(w) for x in w])


def normalised(log_p):
    log_p = np.asarray(log_p, dtype=float)
    return log_p - np.log(np.sum(np.exp(log_p - log_p.max()))) - log_p.max()


# --------------------------------------------------------------------------- strategies


@st.composite
def small_models(draw, n_min=2, n_max=6, grid=False):
    """(logits of pi0, rewards, beta). With grid=True the rewards are multiples of 1/8, so
    two rewards are equal or at least 1/8 apart (a constant added cannot create a tie)."""
    n = draw(st.integers(n_min, n_max))
    logits = draw(st.lists(st.floats(-6, 6), min_size=n, max_size=n))
    if grid:
        r = [k / 8 for k in draw(st.lists(st.integers(-24, 24), min_size=n, max_size=n))]
    else:
        r = draw(st.lists(st.floats(-3, 3), min_size=n, max_size=n))
    beta = 10 ** draw(st.floats(-3, 1))
    return np.array(logits), np.array(r), beta


# --------------------------------------------------------------------------- infinite data


@pytest.mark.parametrize("beta", [10.0, 1.0, 0.2, 0.05, 0.01, 1e-3, 1e-4])
def test_all_pairs_bt_optimum_is_the_tilt_on_the_stated_model(beta):
    W = dpo.comparisons(LQ, R, "all", "bt")
    opt = dpo.dpo_optimum(W, LQ, beta)
    assert opt.exists
    assert tv(opt.pi, ref_tilt(LQ, R, beta)) < 1e-9
    assert opt.grad_norm < 1e-12


@settings(max_examples=60, deadline=None)
@given(small_models())
def test_all_pairs_bt_optimum_is_the_tilt_for_any_model(m):
    logits, r, beta = m
    lq = normalised(logits)
    opt = dpo.dpo_optimum(dpo.comparisons(lq, r, "all", "bt"), lq, beta)
    assert opt.exists
    assert tv(opt.pi, ref_tilt(lq, r, beta)) < 1e-9


def test_all_pairs_reproduce_the_chapters_readouts():
    """The DPO optimum on infinitely many Bradley-Terry pairs is the tilt, so it prints the
    chapter's numbers: kappa = 5 (Figure 12.2) KL 0.34, reward 0.45; kappa = 20 (Figure 12.5)
    KL 4.76, proxy 0.82, true 0.54."""
    W = dpo.comparisons(LQ, R, "all", "bt")
    for beta, kl, reward, true in [(0.2, "0.34", "0.45", None), (0.05, "4.76", "0.82", "0.54")]:
        opt = dpo.dpo_optimum(W, LQ, beta)
        p = opt.pi
        assert f"{float(np.sum(p * (opt.log_pi - LQ))):.2f}" == kl
        assert f"{p @ R:.2f}" == reward
        if true:
            assert f"{p @ R_TRUE:.2f}" == true


def test_all_pairs_matrix_is_the_expected_share_of_each_cell():
    lq = np.log([0.5, 0.3, 0.2])
    r = np.array([0.0, 1.0, 1.0])
    W = dpo.comparisons(lq, r, "all", "bt")
    # i beats j: drawn (i, j) and first wins, or (j, i) and second wins.
    assert W[0, 1] == pytest.approx(2 * 0.5 * 0.3 * sigma(-1.0), rel=1e-14)
    assert W[1, 0] == pytest.approx(2 * 0.5 * 0.3 * sigma(1.0), rel=1e-14)
    assert W[1, 2] == pytest.approx(0.3 * 0.2, rel=1e-14)  # equal rewards: a coin
    assert W[0, 0] == pytest.approx(0.25, rel=1e-14)
    assert W.sum() == pytest.approx(1.0, abs=1e-15)
    D = dpo.comparisons(lq, r, "all", "deterministic")
    assert D[0, 1] == 0.0 and D[1, 0] == pytest.approx(0.3, rel=1e-14)
    assert D[1, 2] == pytest.approx(0.06, rel=1e-14) and D[2, 1] == pytest.approx(0.06, rel=1e-14)


@settings(max_examples=40, deadline=None)
@given(small_models(grid=True), st.sampled_from([-7.5, -1.0, 0.3, 12.0]))
def test_optimum_invariant_to_a_constant_added_to_the_rewards(m, c):
    logits, r, beta = m
    lq = normalised(logits)
    for labels in dpo.LABELS:
        a = dpo.dpo_optimum(dpo.comparisons(lq, r, "all", labels), lq, beta)
        b = dpo.dpo_optimum(dpo.comparisons(lq, r + c, "all", labels), lq, beta)
        assert a.exists == b.exists
        assert tv(a.pi, b.pi) < 1e-9


def test_sampled_labels_invariant_to_a_constant_added_to_the_rewards():
    r = np.array([0.0, 1.0, 2.0, 1.0, 3.0])  # integers: shifted differences are exact
    lq = normalised([0.0, 0.5, -0.5, 1.0, -1.0])
    for labels in dpo.LABELS:
        W = dpo.comparisons(lq, r, 500, labels, 3)
        W2 = dpo.comparisons(lq, r + 5.0, 500, labels, 3)
        np.testing.assert_array_equal(W, W2)
        assert tv(dpo.dpo_optimum(W, lq, 0.3).pi, dpo.dpo_optimum(W2, lq, 0.3).pi) == 0.0


# --------------------------------------------------------------------------- finite data


def test_two_responses_closed_form():
    """Two responses, a wins A times and b wins B times: the fit gives v_a - v_b = log(A/B),
    so pi(a)/pi(b) = pi0(a)/pi0(b) (A/B)^(1/beta)."""
    lq = np.log([0.8, 0.2])
    W = np.array([[0.0, 3.0], [1.0, 0.0]])
    for beta in (2.0, 0.5, 0.1):
        opt = dpo.dpo_optimum(W, lq, beta)
        ratio = 0.8 / 0.2 * 3.0 ** (1 / beta)
        assert opt.pi[0] == pytest.approx(ratio / (1 + ratio), rel=1e-12)
        assert opt.exists and opt.iterations >= 1


@pytest.mark.parametrize(
    "W",
    [
        [[0, 3, 1], [2, 0, 4], [1, 1, 0]],
        [[0, 1, 0, 2], [5, 0, 1, 0], [1, 2, 0, 3], [1, 0, 1, 0]],
        [[2, 7, 1, 1], [1, 0, 9, 2], [3, 1, 0, 1], [1, 4, 2, 1]],
    ],
)
def test_finite_data_optimum_matches_zermelo(W):
    W = [[float(x) for x in row] for row in W]
    n = len(W)
    lq = normalised(np.linspace(0.4, -0.8, n))
    v = zermelo(W)
    for beta in (1.0, 0.25):
        opt = dpo.dpo_optimum(np.array(W), lq, beta)
        assert opt.exists
        assert tv(opt.pi, policy_from_scores(lq, v, beta)) < 1e-9
        # the gauge: one component, so the log ratios have mean 0 up to the common log Z
        u = opt.log_pi - lq
        assert np.max(np.abs((u - u.mean()) - np.array(v) / beta)) < 1e-8


def test_responses_never_compared_keep_their_reference_ratio():
    W = dpo.comparisons(LQ, R, 1000, "bt", 0)
    unseen = ~dpo.responses_seen(W)
    assert unseen.sum() >= 2
    idx = np.flatnonzero(unseen)
    opt = dpo.dpo_optimum(W, LQ, 0.05)
    u = opt.log_pi[idx] - LQ[idx]
    assert np.ptp(u) < 1e-12  # same ratio pi / pi0 for all of them
    traj = dpo.dpo_gradient_steps(W, LQ, 0.05, 50)
    u_t = traj.log_pi[:, idx] - LQ[idx]
    assert np.max(np.ptp(u_t, axis=1)) < 1e-12


def test_win_probability_by_hand():
    """Bradley-Terry on the reward: sigma(0) = 1/2, sigma(log 3) = 3/4, sigma(-log 3) = 1/4;
    deterministic: the higher reward always, a tie by a fair coin."""
    p = dpo.win_probability([0.0, math.log(3.0), -math.log(3.0)])
    assert np.allclose(p, [0.5, 0.75, 0.25], rtol=0, atol=1e-15)
    assert dpo.win_probability([2.0, -0.1, 0.0], "deterministic").tolist() == [1.0, 0.0, 0.5]
    with pytest.raises(ValueError):
        dpo.win_probability(1.0, "coin")


def test_responses_seen_by_enumeration():
    """Every 0/1 count matrix on three responses (512 of them), against the definition read
    pair by pair: response i is seen when some pair holds it and a different response j."""
    import itertools

    for cells in itertools.product((0.0, 1.0), repeat=9):
        W = np.array(cells).reshape(3, 3)
        by_hand = [any(W[i, j] + W[j, i] > 0 for j in range(3) if j != i) for i in range(3)]
        assert dpo.responses_seen(W).tolist() == by_hand, W
    # by hand: self-pairs alone see nothing; one pair (0 beat 2) sees 0 and 2, never 1
    assert dpo.responses_seen(np.diag([5.0, 1.0, 2.0])).tolist() == [False, False, False]
    assert dpo.responses_seen([[3, 0, 1], [0, 7, 0], [0, 0, 0]]).tolist() == [True, False, True]


def test_a_response_seen_only_with_itself_is_not_moved_by_the_loss():
    """What "seen" means: a pair of a response with itself has log-ratio difference 0 at
    every policy, so an unseen response's logit gets no gradient and keeps its ratio."""
    rng = np.random.default_rng(5)
    W = np.zeros((4, 4))
    W[0, 1], W[1, 0], W[2, 0], W[0, 2], W[3, 3] = 3.0, 1.0, 2.0, 1.0, 9.0  # 3 meets only itself
    assert dpo.responses_seen(W).tolist() == [True, True, True, False]
    lq = normalised(rng.normal(size=4))
    for _ in range(5):
        z = rng.normal(size=4)
        g = dpo.dpo_gradient(z, W, lq, 0.7)
        assert g[3] == 0.0 and np.all(g[:3] != 0.0)
    # the optimum and a run are those of the same comparisons without the self-pairs
    W_off = W - np.diag(np.diag(W))
    opt = dpo.dpo_optimum(W, lq, 0.7)
    assert opt.exists and np.max(np.abs(opt.pi - dpo.dpo_optimum(W_off, lq, 0.7).pi)) < 1e-12
    assert (
        np.max(
            np.abs(
                dpo.dpo_gradient_steps(W, lq, 0.7, 30).log_pi
                - dpo.dpo_gradient_steps(W_off, lq, 0.7, 30).log_pi
            )
        )
        < 1e-12
    )


def test_gauge_matches_the_limit_of_gradient_steps():
    """Two components ({0, 1, 2} and {3, 4}) and one response never compared (5): the loss
    leaves their offsets open; the returned optimum is where gradient steps from pi0 go."""
    W = np.zeros((6, 6))
    W[0, 1], W[1, 0], W[1, 2], W[2, 1], W[0, 2], W[2, 0] = 4, 1, 3, 2, 2, 2
    W[3, 4], W[4, 3] = 2, 5
    lq = normalised([0.5, 0.0, -1.0, 0.3, -0.2, -2.0])
    beta = 0.7
    opt = dpo.dpo_optimum(W, lq, beta)
    traj = dpo.dpo_gradient_steps(W, lq, beta, 20_000, record_every=20_000)
    assert opt.exists
    assert tv(opt.pi, traj.pi[-1]) < 1e-9
    u = opt.log_pi - lq
    # mean log ratio equal on each component and for the lone response
    assert u[:3].mean() == pytest.approx(u[5], abs=1e-10)
    assert u[3:5].mean() == pytest.approx(u[5], abs=1e-10)
    # within {3, 4}: v_3 - v_4 = log(2/5) (two responses' closed form)
    assert beta * (u[3] - u[4]) == pytest.approx(math.log(2 / 5), abs=1e-10)


def test_no_minimiser_when_one_response_only_wins():
    """0 and 1 beat each other; 2 beat 0 once and never lost; 3 never appears.
    {0, 1} is beaten from outside and never answers: its probability goes to 0. The rest
    keep their reference ratio (each never-beaten class keeps mean log ratio 0)."""
    W = np.zeros((4, 4))
    W[0, 1], W[1, 0], W[2, 0] = 3, 1, 1
    lq = np.log([0.4, 0.3, 0.2, 0.1])
    opt = dpo.dpo_optimum(W, lq, 0.3)
    assert not opt.exists
    np.testing.assert_array_equal(opt.pi[:2], [0.0, 0.0])
    assert np.all(np.isneginf(opt.log_pi[:2]))
    assert opt.pi[2] == pytest.approx(2 / 3, rel=1e-14)


def test_no_minimiser_with_a_never_beaten_group():
    """{0, 1} beat each other and together beat 2, which never wins: 2 goes to 0, and inside
    {0, 1} the fit is the two-response one, v_0 - v_1 = log 3, with mean 0."""
    W = np.zeros((3, 3))
    W[0, 1], W[1, 0], W[0, 2], W[1, 2] = 3, 1, 1, 2
    lq = np.log([0.2, 0.5, 0.3])
    beta = 0.4
    opt = dpo.dpo_optimum(W, lq, beta)
    assert not opt.exists
    assert opt.pi[2] == 0.0
    ratio = 0.2 / 0.5 * 3.0 ** (1 / beta)
    assert opt.pi[0] == pytest.approx(ratio / (1 + ratio), rel=1e-12)


@pytest.mark.parametrize("beta", [5.0, 0.3, 0.01])
def test_deterministic_all_pairs_limit_is_the_best_response_whatever_beta(beta):
    opt = dpo.dpo_optimum(dpo.comparisons(LQ, R, "all", "deterministic"), LQ, beta)
    assert not opt.exists
    expected = np.zeros(R.size)
    expected[-1] = 1.0
    np.testing.assert_array_equal(opt.pi, expected)


def test_deterministic_sampled_labels_have_no_minimiser_and_losers_vanish():
    W = dpo.comparisons(LQ, R, 1000, "deterministic", 0)
    opt = dpo.dpo_optimum(W, LQ, 0.05)
    assert not opt.exists
    lost = (W.sum(axis=0) - np.diag(W)) > 0  # lost at least once
    np.testing.assert_array_equal(opt.pi[lost], 0.0)  # distinct rewards: every loser vanishes
    assert np.all(opt.pi[~lost] > 0)


def test_gradient_steps_drive_deterministic_losers_to_zero():
    """Chain 2 > 1 > 0 with deterministic labels: the optimum does not exist, and gradient
    steps push the bottom response down and the top one up at every step; the middle one
    first gains (it beats 0) and then falls too."""
    W = np.zeros((3, 3))
    W[2, 1], W[1, 0], W[2, 0] = 3, 2, 1
    lq = np.log([0.6, 0.3, 0.1])
    for beta in (0.1, 0.5):
        opt = dpo.dpo_optimum(W, lq, beta)
        assert not opt.exists
        np.testing.assert_array_equal(opt.pi, [0.0, 0.0, 1.0])
    traj = dpo.dpo_gradient_steps(W, lq, 0.5, 3000, dpo.step_size(W, 0.5) / 10)
    assert np.all(np.diff(traj.pi[:, 0]) < 0)
    assert np.all(np.diff(traj.pi[:, 2]) > 0)
    assert traj.pi[1, 1] > traj.pi[0, 1] and np.all(np.diff(traj.pi[100:, 1]) < 0)
    assert traj.pi[-1, 0] < 1e-9 and traj.pi[-1, 1] < 1e-4
    assert np.all(np.diff(traj.loss) < 0)


# --------------------------------------------------------------------------- IPO


def test_ipo_all_pairs_matches_azar_closed_form():
    for labels in dpo.LABELS:
        W = dpo.comparisons(LQ, R, "all", labels)
        pi0 = np.exp(LQ)
        for beta in (0.5, 0.05):
            # P(y beats a response drawn from pi0), ties counted as a half
            win = [
                math.fsum(
                    pi0[j]
                    * (
                        sigma(R[i] - R[j])
                        if labels == "bt"
                        else (1.0 if R[i] > R[j] else 0.5 if R[i] == R[j] else 0.0)
                    )
                    for j in range(R.size)
                )
                for i in range(R.size)
            ]
            opt = dpo.ipo_optimum(W, LQ, beta)
            assert opt.exists
            assert tv(opt.pi, policy_from_scores(LQ, win, beta)) < 1e-10


def test_ipo_stays_finite_with_deterministic_labels():
    """Where DPO's optimum does not exist, IPO's does: every log-probability finite, and the
    fitted scores beta * log ratio differ by at most 1/2 per comparison along a path."""
    for pairs in (1000, 100_000, "all"):
        W = dpo.comparisons(LQ, R, pairs, "deterministic", 0)
        assert not dpo.dpo_optimum(W, LQ, 0.05).exists
        for beta in (1.0, 0.05, 1e-3):
            opt = dpo.ipo_optimum(W, LQ, beta)
            assert opt.exists and np.all(np.isfinite(opt.log_pi))
            assert opt.grad_norm < 1e-9
            if beta >= 0.05:
                assert np.all(opt.pi > 0)
            v = beta * (opt.log_pi - LQ)
            assert np.ptp(v) <= 0.5 * (R.size - 1)


def test_ipo_matches_least_squares_on_the_design_matrix():
    """Each pair (i beat j) asks beta (u_i - u_j) = 1/2: stack one row per pair and solve."""
    W = dpo.comparisons(LQ, R, 300, "bt", 4)
    beta = 0.2
    rows, rhs = [], []
    for i in range(R.size):
        for j in range(R.size):
            if i != j and W[i, j] > 0:
                row = np.zeros(R.size)
                row[i], row[j] = 1.0, -1.0
                rows.append(math.sqrt(W[i, j]) * row)
                rhs.append(math.sqrt(W[i, j]) * 0.5)
    v = np.linalg.lstsq(np.array(rows), np.array(rhs), rcond=None)[0]
    seen = dpo.responses_seen(W)
    opt = dpo.ipo_optimum(W, LQ, beta)
    u = opt.log_pi - LQ
    d = beta * (u[seen][:, None] - u[seen][None, :]) - (v[seen][:, None] - v[seen][None, :])
    assert np.max(np.abs(d)) < 1e-9  # one component among the seen responses
    assert opt.grad_norm < 1e-12


# --------------------------------------------------------------------------- derivatives


def _fd_grad(f, z, h=1e-6):
    g = np.zeros_like(z)
    for k in range(z.size):
        e = np.zeros_like(z)
        e[k] = h
        g[k] = (f(z + e) - f(z - e)) / (2 * h)
    return g


@pytest.mark.parametrize("which", ["dpo", "ipo"])
@pytest.mark.parametrize("beta", [2.0, 0.3])
def test_gradient_and_hessian_against_finite_differences(which, beta):
    rng = np.random.default_rng(11)
    n = 5
    lq = normalised(rng.normal(size=n))
    W = rng.integers(0, 4, size=(n, n)).astype(float)
    z = rng.normal(size=n)
    loss = getattr(dpo, f"{which}_loss")
    grad = getattr(dpo, f"{which}_gradient")
    hess = getattr(dpo, f"{which}_hessian")
    g = grad(z, W, lq, beta)
    g_fd = _fd_grad(lambda x: loss(x, W, lq, beta), z)
    assert np.max(np.abs(g - g_fd)) < 1e-6 * max(1.0, np.max(np.abs(g)))
    H = hess(z, W, lq, beta)
    H_fd = np.array([_fd_grad(lambda x: grad(x, W, lq, beta)[k], z) for k in range(n)])
    assert np.max(np.abs(H - H_fd)) < 1e-6 * max(1.0, np.max(np.abs(H)))
    assert np.allclose(H, H.T)
    assert np.min(np.linalg.eigvalsh(H)) > -1e-12  # convex
    np.testing.assert_allclose(H @ np.ones(n), 0.0, atol=1e-12)  # a shift changes nothing


def test_dpo_loss_by_hand():
    """One pair (0 beat 1) twice, beta = 0.5, log ratios 0.2 and -0.4: 2 * -log sigma(0.3)."""
    lq = np.log([0.5, 0.5])
    z = lq + np.array([0.2, -0.4])
    W = np.array([[0.0, 2.0], [0.0, 0.0]])
    assert dpo.dpo_loss(z, W, lq, 0.5) == pytest.approx(-2 * math.log(sigma(0.3)), rel=1e-14)
    assert dpo.ipo_loss(z, W, lq, 0.5) == pytest.approx(2 * (0.6 - 1.0) ** 2, rel=1e-14)
    # log Z cancels: shifting every logit changes nothing
    assert dpo.dpo_loss(z + 3.0, W, lq, 0.5) == pytest.approx(
        dpo.dpo_loss(z, W, lq, 0.5), rel=1e-14
    )


# --------------------------------------------------------------------------- weights, rewards


def test_pair_weights_by_hand_and_at_the_reference():
    lq = np.log([0.5, 0.25, 0.25])
    z = lq + np.array([0.0, 1.0, -1.0])
    beta = 0.5
    w = dpo.pair_weights(z, lq, beta, winners=[0, 1], losers=[1, 2])
    assert w[0] == pytest.approx(sigma(0.5), rel=1e-14)  # wrongly ordered: weight > 1/2
    assert w[1] == pytest.approx(sigma(-1.0), rel=1e-14)  # rightly ordered: weight < 1/2
    M = dpo.pair_weights(z, lq, beta)
    assert M[0, 1] == pytest.approx(w[0]) and M[1, 2] == pytest.approx(w[1])
    np.testing.assert_allclose(dpo.pair_weights(LQ, LQ, 0.05), 0.5)


def test_pair_weights_at_pi_star_are_the_bradley_terry_probabilities_of_losing():
    opt = dpo.dpo_optimum(dpo.comparisons(LQ, R, "all", "bt"), LQ, 0.05)
    M = dpo.pair_weights(opt.log_pi, LQ, 0.05)
    for i, j in [(29, 0), (3, 20), (10, 11)]:
        assert M[i, j] == pytest.approx(sigma(R[j] - R[i]), abs=1e-9)


def test_implied_reward_of_pi_star_recovers_r():
    beta = 0.05
    log_star = np.log(ref_tilt(LQ, R, beta))
    pi0 = np.exp(LQ)
    np.testing.assert_allclose(dpo.implied_reward(log_star, LQ, beta), R - pi0 @ R, atol=1e-10)
    np.testing.assert_allclose(
        dpo.implied_reward(log_star, LQ, beta, "mean"), R - R.mean(), atol=1e-10
    )
    log_z = math.log(math.fsum(p * math.exp(x / beta) for p, x in zip(pi0, R)))
    np.testing.assert_allclose(
        dpo.implied_reward(log_star, LQ, beta, "none"), R - beta * log_z, atol=1e-10
    )


def test_implied_reward_of_a_limit_policy():
    lq = np.log([0.5, 0.3, 0.2])
    out = dpo.implied_reward(np.array([-np.inf, math.log(0.75), math.log(0.25)]), lq, 2.0)
    assert out[0] == -np.inf
    raw = 2.0 * np.log([0.75 / 0.3, 0.25 / 0.2])
    np.testing.assert_allclose(out[1:], raw - (0.3 * raw[0] + 0.2 * raw[1]) / 0.5, atol=1e-14)


# --------------------------------------------------------------------------- gradient steps


def test_gradient_steps_match_a_plain_loop():
    W = dpo.comparisons(LQ, R, 400, "bt", 2)
    Wn = W / W.sum()
    beta = 0.1
    for which, lr in (("dpo", 150.0), ("ipo", 0.5)):
        grad = getattr(dpo, f"{which}_gradient")
        z = LQ.copy()
        zs = [z]
        for _ in range(30):
            z = z - lr * grad(z, Wn, LQ, beta)
            zs.append(z)
        traj = getattr(dpo, f"{which}_gradient_steps")(W, LQ, beta, 30, lr, record_every=7)
        np.testing.assert_array_equal(traj.step, [0, 7, 14, 21, 28, 30])
        for k, s in enumerate(traj.step):
            np.testing.assert_allclose(
                traj.log_pi[k], zs[s] - np.log(np.sum(np.exp(zs[s]))), atol=1e-11
            )
            assert traj.kl[k] == pytest.approx(
                float(np.sum(traj.pi[k] * (traj.log_pi[k] - LQ))), abs=1e-12
            )
        loss = getattr(dpo, f"{which}_loss")
        assert traj.loss[-1] == pytest.approx(loss(zs[30], Wn, LQ, beta), rel=1e-12)
    np.testing.assert_allclose(traj.pi[0], np.exp(LQ), rtol=1e-13)


def test_step_size_is_the_curvature_bound_and_the_loss_never_rises():
    W = dpo.comparisons(LQ, R, 1000, "bt", 0)
    beta = 0.05
    # at pi0 every sigma(h) sigma(-h) is exactly 1/4, so the bound is attained there
    H = dpo.dpo_hessian(LQ, W / W.sum(), LQ, beta)
    assert 1.0 / dpo.step_size(W, beta) == pytest.approx(np.linalg.eigvalsh(H)[-1], rel=1e-10)
    Hi = dpo.ipo_hessian(LQ, W / W.sum(), LQ, beta)
    assert 1.0 / dpo.step_size(W, beta, "ipo") == pytest.approx(
        np.linalg.eigvalsh(Hi)[-1], rel=1e-10
    )
    for which in ("dpo", "ipo"):
        traj = getattr(dpo, f"{which}_gradient_steps")(W, LQ, beta, 300)
        assert np.all(np.diff(traj.loss) <= 1e-12)
        assert traj.loss[-1] < traj.loss[0]


def test_ipo_gradient_steps_approach_the_ipo_optimum():
    W = dpo.comparisons(LQ, R, "all", "bt")
    traj = dpo.ipo_gradient_steps(W, LQ, 0.5, 20_000, record_every=20_000)
    assert tv(traj.pi[-1], dpo.ipo_optimum(W, LQ, 0.5).pi) < 1e-6


# --------------------------------------------------------------------------- sampling


def test_sample_pairs_are_independent_draws_from_pi0():
    pi0 = np.array([0.5, 0.3, 0.15, 0.05])
    n = 40_000
    pairs = dpo.sample_pairs(np.log(pi0), n, 5)
    assert pairs.shape == (n, 2)
    joint = np.zeros((4, 4))
    np.add.at(joint, (pairs[:, 0], pairs[:, 1]), 1)
    expected = n * np.outer(pi0, pi0)
    se = np.sqrt(n * np.outer(pi0, pi0) * (1 - np.outer(pi0, pi0)))
    assert np.all(np.abs(joint - expected) < 5 * se)


def test_label_pairs_follow_bradley_terry_and_the_deterministic_rule():
    r = np.array([0.0, 0.7, 0.7])
    n = 40_000
    pairs = np.tile([0, 1], (n, 1))
    lab = dpo.label_pairs(pairs, r, "bt", 8)
    frac = np.mean(lab[:, 0] == 0)
    p = sigma(-0.7)
    assert abs(frac - p) < 5 * math.sqrt(p * (1 - p) / n)
    det = dpo.label_pairs(pairs, r, "deterministic", 8)
    np.testing.assert_array_equal(det, np.tile([1, 0], (n, 1)))
    tie = dpo.label_pairs(np.tile([1, 2], (n, 1)), r, "deterministic", 8)
    assert abs(np.mean(tie[:, 0] == 1) - 0.5) < 5 * math.sqrt(0.25 / n)
    assert sorted(map(tuple, np.unique(np.sort(lab, axis=1), axis=0))) == [(0, 1)]


def test_comparisons_have_the_right_distribution():
    """The cell-by-cell draw against its expectation n * W_all, and against the pair-by-pair
    route, pooled over seeds, within five standard errors."""
    lq = np.log([0.4, 0.3, 0.2, 0.1])
    r = np.array([0.0, 1.0, 0.5, 2.0])
    n, seeds = 200, 300
    expect = n * dpo.comparisons(lq, r, "all", "bt")
    total = np.zeros((4, 4))
    total_pp = np.zeros((4, 4))
    for s in range(seeds):
        W = dpo.comparisons(lq, r, n, "bt", s)
        assert W.sum() == n and np.all(np.round(W) == W)
        total += W
        pr = dpo.sample_pairs(lq, n, 1000 + s)
        total_pp += dpo.count_matrix(dpo.label_pairs(pr, r, "bt", 5000 + s), 4)
    share = expect / n
    se = np.sqrt(seeds * n * share * (1 - share))
    assert np.all(np.abs(total - seeds * expect) < 5 * se + 1e-9)
    assert np.all(np.abs(total_pp - seeds * expect) < 5 * se + 1e-9)


def test_comparisons_reproducible_and_seed_dependent():
    a = dpo.comparisons(LQ, R, 1000, "bt", 0)
    np.testing.assert_array_equal(a, dpo.comparisons(LQ, R, "1000", "bt", 0))
    assert not np.array_equal(a, dpo.comparisons(LQ, R, 1000, "bt", 1))
    assert np.all(dpo.comparisons(LQ, R, 0, "bt", 0) == 0)
    assert dpo.dpo_optimum(dpo.comparisons(LQ, R, 0, "bt", 0), LQ, 0.05).pi == pytest.approx(
        np.exp(LQ), rel=1e-12
    )


def test_count_matrix_rows_are_winners():
    W = dpo.count_matrix(np.array([[2, 0], [2, 0], [1, 2]]), 3)
    assert W[2, 0] == 2 and W[1, 2] == 1 and W.sum() == 3


# --------------------------------------------------------------------------- extremes, input


def test_extremes_stay_finite_and_correct():
    lq = normalised([0.0, math.log(1e-12), -3.0, math.log(1e-9)])
    r = np.array([0.0, 1.0, 0.4, 0.9])
    for beta in (1e-4, 1e-2):
        opt = dpo.dpo_optimum(dpo.comparisons(lq, r, "all", "bt"), lq, beta)
        assert tv(opt.pi, ref_tilt(lq, r, beta)) < 1e-9
    # Two rare responses whose comparisons balance at weights ~1e-18 next to a common one:
    # the fit must cancel each pair's two directions before adding rows, or it loses them.
    lq = np.log([1e-10, 1e-8, 1 - 1e-10 - 1e-8])
    r = np.array([6.0, 0.0, 5.0])
    opt = dpo.dpo_optimum(dpo.comparisons(lq, r, "all", "bt"), lq, 0.04)
    assert tv(opt.pi, ref_tilt(lq, r, 0.04)) < 1e-12
    W = dpo.comparisons(LQ, R, 1_000_000, "bt", 0)
    opt = dpo.dpo_optimum(W, LQ, 1e-4)
    assert np.all(np.isfinite(opt.pi)) and opt.pi.sum() == pytest.approx(1.0)
    traj = dpo.dpo_gradient_steps(W, LQ, 1e-4, 50)
    assert np.all(np.isfinite(traj.log_pi)) and np.all(np.isfinite(traj.loss))


@pytest.mark.parametrize(
    "call",
    [
        lambda: dpo.comparisons(LQ, R, -1, "bt", 0),
        lambda: dpo.comparisons(LQ, R, "abc", "bt", 0),
        lambda: dpo.comparisons(LQ, R, 2.5, "bt", 0),
        lambda: dpo.comparisons(LQ, R, dpo.MAX_PAIRS + 1, "bt", 0),
        lambda: dpo.comparisons(LQ, R, 100, "maybe", 0),
        lambda: dpo.comparisons(LQ, R, 100, "bt", -1),
        lambda: dpo.comparisons(LQ, R, 100, "bt", "x"),
        lambda: dpo.comparisons(LQ, R[:5], 100, "bt", 0),
        lambda: dpo.comparisons(np.r_[LQ[:-1], -np.inf], R, 100, "bt", 0),
        lambda: dpo.dpo_optimum(np.ones((30, 30)), LQ, 0.0),
        lambda: dpo.dpo_optimum(np.ones((30, 30)), LQ, "abc"),
        lambda: dpo.dpo_optimum(np.ones((30, 30)), LQ, -1.0),
        lambda: dpo.dpo_optimum(np.ones((30, 30)), LQ, 0.1, tol=0),
        lambda: dpo.dpo_optimum(np.ones((3, 3)), LQ, 0.1),
        lambda: dpo.dpo_optimum(-np.ones((30, 30)), LQ, 0.1),
        lambda: dpo.ipo_optimum(np.ones((30, 30)), LQ, np.nan),
        lambda: dpo.dpo_gradient_steps(np.ones((30, 30)), LQ, 0.1, -1),
        lambda: dpo.dpo_gradient_steps(np.ones((30, 30)), LQ, 0.1, 10, lr=0.0),
        lambda: dpo.dpo_gradient_steps(np.ones((30, 30)), LQ, 0.1, dpo.MAX_STEPS + 1),
        lambda: dpo.label_pairs(np.array([[0, 30]]), R, "bt", 0),
        lambda: dpo.label_pairs(np.array([[0, 1]]), R, "sometimes", 0),
        lambda: dpo.implied_reward(LQ, LQ, 0.1, centre="median"),
        lambda: dpo.pair_weights(LQ, LQ, 0.1, winners=[0, 1], losers=[2]),
        lambda: dpo.dpo_loss(np.full(30, np.nan), np.ones((30, 30)), LQ, 0.1),
        lambda: dpo.step_size(np.ones((30, 30)), 0.1, "kto"),
    ],
)
def test_bad_input_raises_a_clear_value_error(call):
    with pytest.raises(ValueError):
        call()
