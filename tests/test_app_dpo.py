"""The DPO page (Section 12.6) through AppTest: readout against a plain second computation,
bad links, and the explanation's branches at the ends of each control.

The expected numbers are computed here without the page's solvers: the tilt written out, the
gradient steps as a plain loop on the sigmoid form of the gradient, IPO as a least-squares fit
on an explicit design matrix, and which responses vanish by a boolean transitive closure.
Only the count matrix W (tested by Monte Carlo in test_core_dpo.py) comes from klrl_core.
"""

import math
import re
import urllib.parse

import numpy as np
import pytest

from klrl_core import dpo, model
from klrl_app import controls
from tests.conftest import (
    all_text,
    assert_clean,
    charts,
    instant_readout_at,
    instant_rows,
    metrics,
    notices,
    run_page,
)

R = model.rewards()
LQ = model.log_reference(R)
R_TRUE = model.true_reward(R)
PI0 = np.exp(LQ)

OPT, RUN, UNSEEN, IPO, WEIGHT = (
    "TV(DPO optimum, π*)",
    "TV(run, π*)",
    "never compared",
    "TV(IPO, π*)",
    "mean pair weight",
)
RUN_KL, RUN_R, STAR_R = "run: KL", "run: E[r] / E[r*]", "π*: E[r] / E[r*]"


# ----------------------------------------------------------------------- plain references
def softmax(logits):
    m = max(logits)
    w = [math.exp(x - m) for x in logits]
    z = math.fsum(w)
    return np.array([x / z for x in w])


def tilt_plain(beta):
    return softmax([a + b / beta for a, b in zip(LQ, R)])


def tv(p, q):
    return 0.5 * float(np.sum(np.abs(np.asarray(p) - np.asarray(q))))


def sig(x):
    return 1.0 / (1.0 + np.exp(-x))


def off_diagonal(w):
    w = np.array(w, dtype=float)
    np.fill_diagonal(w, 0.0)
    return w


def run_plain(w, beta, steps):
    """Gradient descent on L(u) = -sum Wn_ij log sigma(beta (u_i - u_j)) from u = 0, with the
    step 1/L for the curvature bound L = beta^2/4 * lambda_max(Laplacian(Wn + Wn^T))."""
    wn = off_diagonal(w) / w.sum()
    c = wn + wn.T
    lam = float(np.linalg.eigvalsh(np.diag(c.sum(axis=1)) - c)[-1])
    lr = 4.0 / (beta * beta * lam)
    u = np.zeros(len(w))
    for _ in range(steps):
        h = beta * (u[:, None] - u[None, :])
        grad = -beta * ((wn * sig(-h)).sum(axis=1) - (wn.T * sig(h)).sum(axis=1))
        u = u - lr * grad
    return u


def vanishing(w):
    """Responses beaten (along a chain of wins) by one they never beat back, by a plain
    Floyd-Warshall closure: the responses the DPO loss drives to 0 when it has no minimiser."""
    n = len(w)
    reach = [[i == j or (w[i][j] > 0) for j in range(n)] for i in range(n)]
    for k in range(n):
        for i in range(n):
            if reach[i][k]:
                for j in range(n):
                    if reach[k][j]:
                        reach[i][j] = True
    return [i for i in range(n) if any(reach[j][i] and not reach[i][j] for j in range(n))]


def never_compared(w):
    o = off_diagonal(w)
    return [i for i in range(len(w)) if o[i].sum() + o[:, i].sum() == 0]


def ipo_plain(w, beta):
    """argmin sum W_ij (v_i - v_j - 1/2)^2 as least squares on rows sqrt(W_ij)(e_i - e_j);
    the minimum-norm answer has mean 0 on each connected part (isolated responses: 0)."""
    n = len(w)
    rows, rhs = [], []
    for i in range(n):
        for j in range(n):
            if i != j and w[i][j] > 0:
                row = np.zeros(n)
                row[i], row[j] = math.sqrt(w[i][j]), -math.sqrt(w[i][j])
                rows.append(row)
                rhs.append(0.5 * math.sqrt(w[i][j]))
    v = np.linalg.lstsq(np.array(rows), np.array(rhs), rcond=None)[0]
    return softmax(list(LQ + v / beta))


def f2(x):
    return f"{x:.2f}".replace("-", "−")


def f3(x):
    return f"{x:.3f}".replace("-", "−")


@pytest.fixture(scope="module")
def default_page():
    return run_page("dpo.py")


# --------------------------------------------------------------------------------- tests
def test_the_page_uses_the_books_model():
    from klrl_app.tilt_figures import book

    b = book()
    np.testing.assert_allclose(b.r, R, rtol=0, atol=0)
    np.testing.assert_allclose(b.pi0, PI0, rtol=1e-14)
    np.testing.assert_allclose(b.r_true, R_TRUE, rtol=0, atol=1e-15)


def test_default_readout_against_a_plain_computation(default_page):
    at = default_page
    assert_clean(at)
    assert notices(at) == []
    m = metrics(at)
    beta = 0.05
    w = dpo.comparisons(LQ, R, 1000, "bt", 0)
    star = tilt_plain(beta)
    u = run_plain(w, beta, 200)
    run = softmax(list(LQ + u))
    gone = vanishing(w)
    unseen = never_compared(w)
    o = off_diagonal(w)
    weight = float((o * sig(beta * (u[None, :] - u[:, None]))).sum() / o.sum())
    kl = float(np.sum(run * (np.log(run) - LQ)))
    assert gone, "the default comparisons are expected to have no minimiser"
    assert m[OPT] == f"no optimum: {len(gone)} → 0"
    assert m[RUN] == f"{f3(tv(run, star))} at T = 200"
    assert m[UNSEEN] == f"{len(unseen)} (π* mass {f3(star[unseen].sum())})"
    assert m[IPO] == f3(tv(ipo_plain(w, beta), star))
    assert m[WEIGHT] == f2(weight)
    assert m[RUN_KL] == f"{f2(kl)} nats"
    assert m[RUN_R] == f"{f2(run @ R)} / {f2(run @ R_TRUE)}"
    assert m[STAR_R] == f"{f2(star @ R)} / {f2(star @ R_TRUE)}"
    # the values the lead can read off the default view
    assert (m[OPT], m[RUN], m[UNSEEN]) == (
        "no optimum: 1 → 0",
        "0.868 at T = 200",
        "5 (π* mass 0.468)",
    )
    assert at.query_params["kappa"] == "20" and at.query_params["pairs"] == "1000"
    assert at.query_params["labels"] == "bt" and at.query_params["steps"] == "200"


def test_the_default_view_explains_the_missing_optimum_and_the_unseen_top(default_page):
    text = all_text(default_page)
    assert "No optimum: among 1,000 pairs, 1 response loses" in text
    assert "5 responses never meet another in a pair" in text
    assert "π* raises 5 of them above π₀" in text
    assert "the labels are close to coin flips" in text  # BT labels on r in [0, 1]


def test_every_chart_is_a_valid_plotly_figure_with_the_runs_policy(default_page):
    import plotly.graph_objects as go

    figs = charts(default_page)
    assert len(figs) == 4
    for fig in figs:
        go.Figure(fig)
    run = next(t for t in figs[0]["data"] if str(t.get("name", "")).startswith("DPO, T ="))
    w = dpo.comparisons(LQ, R, 1000, "bt", 0)
    expected = softmax(list(LQ + run_plain(w, 0.05, 200)))
    from tests.test_plots import trace_values

    np.testing.assert_allclose(trace_values(run, "y"), expected, rtol=1e-6, atol=1e-12)


def test_the_weight_strip_is_each_responses_mean_pair_weight(default_page):
    """The strip below the policy (a chart of its own, on the policy's x axis): each response's
    pair weight sigma(beta (u_l - u_w)) at the run, averaged over the pairs it is in, computed
    here from the comparisons; rings at 0.5 over the responses never compared."""
    from tests.test_plots import trace_values

    policy, strip = charts(default_page)[:2]
    beta = 0.05
    w = dpo.comparisons(LQ, R, 1000, "bt", 0)
    u = run_plain(w, beta, 200)
    o = off_diagonal(w)
    pw = o * sig(beta * (u[None, :] - u[:, None]))  # [i, j]: i won against j
    with np.errstate(invalid="ignore"):
        mean = (pw.sum(axis=1) + pw.sum(axis=0)) / (o.sum(axis=1) + o.sum(axis=0))
    bars = next(t for t in strip["data"] if t["name"] == "pair weight")
    np.testing.assert_array_equal(trace_values(bars, "x"), trace_values(policy["data"][0], "x"))
    got = trace_values(bars, "y").astype(float)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(mean))
    np.testing.assert_allclose(got[~np.isnan(mean)], mean[~np.isnan(mean)], rtol=1e-5)
    rings = next(t for t in strip["data"] if t["name"] == "never compared")
    np.testing.assert_array_equal(trace_values(rings, "x"), R[never_compared(w)])
    np.testing.assert_array_equal(trace_values(rings, "y"), 0.5)
    assert strip["layout"]["xaxis"]["range"] == policy["layout"]["xaxis"]["range"]
    # one x axis for the two, read under the strip: its labels there, not over the policy
    assert policy["layout"]["xaxis"]["showticklabels"] is False
    assert strip["layout"]["xaxis"].get("showticklabels", True) is True
    assert strip["layout"]["xaxis"]["title"]["text"].startswith("response, by its reward r")


def test_all_pairs_with_bradley_terry_labels_recover_the_tilt():
    at = run_page("dpo.py", pairs="all", steps="2000")
    assert_clean(at)
    m = metrics(at)
    assert m[OPT] == "0.000" and m[UNSEEN] == "none"
    w = dpo.comparisons(LQ, R, "all", "bt", 0)
    u = run_plain(w, 0.05, 2000)
    assert m[RUN] == f"{f3(tv(softmax(list(LQ + u)), tilt_plain(0.05)))} at T = 2,000"
    text = all_text(at)
    assert "the DPO optimum is π* itself" in text
    assert "the run has not reached the optimum" in text
    assert "direct methods overoptimize too" in text  # r* peaks near step 144, falls


@pytest.mark.parametrize("pairs", ["all", "1000"])
def test_deterministic_labels_collapse_and_ipo_stays_finite(pairs):
    at = run_page("dpo.py", labels="deterministic", pairs=pairs)
    assert_clean(at)
    w = dpo.comparisons(LQ, R, "all" if pairs == "all" else int(pairs), "deterministic", 0)
    gone = vanishing(w)
    m = metrics(at)
    assert m[OPT] == f"no optimum: {len(gone)} → 0"
    assert m[IPO] == f3(tv(ipo_plain(w, 0.05), tilt_plain(0.05)))
    text = all_text(at)
    assert "Deterministic labels: the higher reward wins every comparison" in text
    assert "whatever β is (Azar et al., 2024)" in text
    assert "the same deterministic labels leave IPO finite" in text
    if pairs == "all":
        assert len(gone) == 29 and "Only one response survives (y30, r = 1.00)" in text


def test_deterministic_collapse_whatever_beta():
    """Azar et al.: the same responses vanish at the largest and the smallest beta."""
    counts = set()
    for kappa in ("0.1", "10000"):
        at = run_page("dpo.py", labels="deterministic", kappa=kappa)
        assert_clean(at)
        counts.add(metrics(at)[OPT])
    w = dpo.comparisons(LQ, R, 1000, "deterministic", 0)
    assert counts == {f"no optimum: {len(vanishing(w))} → 0"}


@pytest.mark.parametrize(
    "params, name",
    [
        ({"pairs": "-1"}, "pairs"),
        ({"pairs": "abc"}, "pairs"),
        ({"pairs": "2.5"}, "pairs"),
        ({"beta": "0"}, "beta"),
        ({"labels": "maybe"}, "labels"),
        ({"steps": "-4"}, "steps"),
    ],
)
def test_bad_links_draw_the_page_with_a_notice(params, name):
    at = run_page("dpo.py", **params)
    assert_clean(at)
    assert len(notices(at)) == 1 and f"`{name}" in notices(at)[0]
    assert len(charts(at)) == 4
    m = metrics(at)
    if name == "pairs":  # the default 1,000 pairs
        assert m[UNSEEN] == "5 (π* mass 0.468)" and at.query_params["pairs"] == "1000"
    if name == "beta":  # nearest allowed: kappa 10,000
        assert at.query_params["kappa"] == "10000"


def test_a_count_between_stops_is_kept_and_a_huge_one_clamped():
    at = run_page("dpo.py", pairs="500")
    assert notices(at) == [] and at.select_slider[1].value == 500
    w = dpo.comparisons(LQ, R, 500, "bt", 0)
    assert metrics(at)[UNSEEN].startswith(f"{len(never_compared(w))} (")
    at = run_page("dpo.py", pairs="1e9")
    assert "10,000,000" in notices(at)[0] and at.query_params["pairs"] == "10000000"
    assert_clean(at)
    at = run_page("dpo.py", pairs="ALL")
    assert notices(at) == [] and metrics(at)[UNSEEN] == "none"


def test_moving_the_pairs_slider_recomputes_and_clears_the_notice():
    at = run_page("dpo.py", pairs="abc")
    assert notices(at)
    at.select_slider[1].set_value("all").run()
    assert notices(at) == []
    assert metrics(at)[OPT] == "0.000" and at.query_params["pairs"] == "all"


def test_kappa_zero_is_the_reference_everywhere():
    at = run_page("dpo.py", kappa="0")
    assert_clean(at)
    m = metrics(at)
    assert m[RUN] == "0.000 at T = 200" and m[IPO] == "0.000" and m[RUN_KL] == "0.00 nats"
    w = dpo.comparisons(LQ, R, 1000, "bt", 0)
    unseen = never_compared(w)
    assert m[UNSEEN] == f"{len(unseen)} (π* mass {f3(PI0[unseen].sum())})"  # pi* = pi0
    text = all_text(at)
    assert "At κ = 0 (β = ∞) the KL term allows no move at all" in text
    assert "π* does not raise any of them above π₀" in text
    assert "At κ = 0 the run stays on π₀" in text


def test_smallest_beta_and_fewest_pairs():
    at = run_page("dpo.py", kappa="10000", pairs="10")
    assert_clean(at)
    w = dpo.comparisons(LQ, R, 10, "bt", 0)
    unseen = never_compared(w)
    m = metrics(at)
    assert m[UNSEEN].startswith(f"{len(unseen)} (")
    assert m[OPT] == f"no optimum: {len(vanishing(w))} → 0"
    text = all_text(at)
    assert f"{len(unseen)} responses never meet another in a pair" in text
    assert "won every one of their comparisons" in text


def test_largest_beta_keeps_the_run_near_the_reference():
    at = run_page("dpo.py", kappa="0.1", pairs="all")
    assert_clean(at)
    m = metrics(at)
    w = dpo.comparisons(LQ, R, "all", "bt", 0)
    run = softmax(list(LQ + run_plain(w, 10.0, 200)))
    assert m[OPT] == "0.000"
    assert m[RUN] == f"{f3(tv(run, tilt_plain(10.0)))} at T = 200"
    assert "After 200 steps the run has reached the optimum." in all_text(at)


def test_zero_steps_is_the_reference():
    at = run_page("dpo.py", steps="0")
    assert_clean(at)
    m = metrics(at)
    assert m[RUN] == f"{f3(tv(PI0, tilt_plain(0.05)))} at T = 0"
    assert m[WEIGHT] == "0.50"  # every pair weighs sigma(0) at pi0
    text = all_text(at)
    assert "At T = 0 the run is π₀" in text and "every pair has weight ½" in text


def test_a_readers_model_exercise_12_1():
    """Exercise 12.1's three responses: with every pair the optimum is the tilt (0.353,
    0.274, 0.373 at beta = 1); deterministic labels leave only the top response."""
    ex = {"pi0": "0.7,0.2,0.1", "r": "0,1,2", "beta": "1", "pairs": "all"}
    at = run_page("dpo.py", **ex)
    assert_clean(at)
    assert metrics(at)[OPT] == "0.000"
    df = at.table[0].value
    assert list(df["π*"]) == ["0.353", "0.274", "0.373"]  # printed as 3 decimals
    assert list(df["DPO optimum"]) == ["0.353", "0.274", "0.373"]
    at = run_page("dpo.py", labels="deterministic", **ex)
    assert metrics(at)[OPT] == "no optimum: 2 → 0"
    assert "Only one response survives (y3 (r = 2), r = 2.00)" in all_text(at)


def test_a_readers_model_with_a_response_the_reference_never_writes():
    at = run_page("dpo.py", pi0="0.5,0.5,0", r="0,1,2", pairs="all")
    assert_clean(at)
    assert notices(at) == []
    m = metrics(at)
    assert m[OPT] == "0.000" and m[UNSEEN] == "none"
    df = at.table[0].value
    assert list(df["DPO run"])[2] == "0.000" and list(df["IPO"])[2] == "0.000"
    assert list(df["DPO optimum"]) == list(df["π*"])


def test_a_finite_optimum_that_lands_on_the_tilt_says_so():
    """Exercise 12.2's coin at beta = 0.05: pi* is all but a point mass on the better face,
    and the optimum from 10 noisy labels lands there too (to three decimals)."""
    at = run_page("dpo.py", pi0="0.5,0.5", r="0,1", pairs="10")
    assert_clean(at)
    w = dpo.comparisons(np.log([0.5, 0.5]), np.array([0.0, 1.0]), 10, "bt", 0)
    assert not vanishing(w)  # this seed's ten labels leave a minimiser
    assert metrics(at)[OPT] == "0.000"
    text = all_text(at)
    assert "land on π* to three decimals" in text and "misses π*" not in text


def test_a_single_pair():
    at = run_page("dpo.py", pairs="1")
    assert_clean(at)
    w = dpo.comparisons(LQ, R, 1, "bt", 0)
    assert metrics(at)[UNSEEN].startswith(f"{len(never_compared(w))} (")
    # one pair: one winner, so "to a response", not "to responses"
    assert int((off_diagonal(w) > 0).sum()) == 1
    assert "among 1 pair, 1 response loses to a response it never beats back" in all_text(at)


def test_at_the_smallest_beta_an_existing_optimum_marks_nothing_as_vanishing():
    """At kappa = 10,000 most shares of the optimum round to 0.0, but the loss has a
    minimiser: nothing is drawn as driven to 0 and the text says it exists."""
    at = run_page("dpo.py", kappa="10000", pairs="all")
    assert_clean(at)
    assert metrics(at)[OPT] == "0.000"
    names = [t.get("name") for t in charts(at)[0]["data"]]
    assert "DPO → 0" not in names and "DPO optimum" in names
    assert "the DPO optimum is π* itself" in all_text(at)


# ------------------------------------------------------- reviewer's items (overoptimization)
FALL_LINK = re.compile(r"\]\((dpo\?[^)]*)\)")


def test_the_default_view_links_to_a_run_that_overoptimizes(default_page):
    """At the default view r* has levelled off (1,000 pairs rarely reach the top responses);
    the text links to a view where it rises and falls, and that view says so, checked here
    against a plain gradient descent on every pair."""
    text = all_text(default_page)
    assert "has levelled off" in text and "direct methods overoptimize too" not in text
    link = FALL_LINK.search(text)
    assert link, "no link to a view that overoptimizes"
    params = dict(urllib.parse.parse_qsl(link[1].split("?", 1)[1]))
    assert params == {"pairs": "all", "kappa": "100", "steps": "2000"}
    at = run_page("dpo.py", **params)
    assert_clean(at)
    fall = all_text(at)
    assert "direct methods overoptimize too" in fall
    assert "peaked at 0.60 after 51 steps" in fall
    assert "has fallen to 0.52 while the proxy kept rising" in fall
    assert FALL_LINK.search(fall) is None  # no link to the view it is on
    w = dpo.comparisons(LQ, R, "all", "bt", 0)
    at_51, at_end = (softmax(list(LQ + run_plain(w, 0.01, t))) for t in (51, 2000))
    assert f2(at_51 @ R_TRUE) == "0.60" and f2(at_end @ R_TRUE) == "0.52"
    assert at_end @ R > at_51 @ R


def test_kappa_zero_reads_the_pair_weights_in_the_limit():
    """At kappa = 0 the run is pi0 (every log ratio 0) but its implied reward beta*log(pi/pi0)
    is read in the limit beta -> infinity: the text says so wherever the weights are not 1/2."""
    at = run_page("dpo.py", kappa="0", labels="deterministic")
    assert_clean(at)
    m = metrics(at)
    assert m[RUN] == "0.000 at T = 200" and m[RUN_KL] == "0.00 nats"
    assert float(m[WEIGHT]) < 0.25
    text = all_text(at)
    assert (
        "every log ratio is 0. The implied reward itself, and with it the pair weights, "
        "are read in the limit β → ∞" in text
    )
    assert "At κ = 0 the run never leaves π₀; read in the limit β → ∞" in text
    at.session_state["klrl-dpo-about"] = True  # the helps' expander, built only while open
    text = all_text(at.run())
    assert (
        "½ at π₀ (T = 0)" in text
        and "At κ = 0 (β = ∞) the run stays on π₀ and the weights are read in the limit β → ∞"
        in text
    )
    assert metrics(run_page("dpo.py", kappa="0", steps="0"))[WEIGHT] == "0.50"


def test_the_step_size_help_names_1_over_l():
    at = run_page("dpo.py")
    helps = [
        w.help
        for w in list(at.number_input) + list(at.slider)
        if getattr(w, "label", "") == "Gradient steps T"
    ]
    assert helps and "1/L, with L the loss's largest curvature" in helps[0]
    assert "largest step size" not in helps[0]


@pytest.mark.parametrize(
    "params",
    [{}, {"steps": "100"}, {"labels": "deterministic"}],
    ids=["default", "steps-100", "deterministic"],
)
def test_instant_readout_holds_the_readout_the_next_stops_show(params):
    """The table sent for the κ stops beside 20 is what the page shows when κ gets there. The
    page tests run without the background tables, so each neighbour is first visited (its fit
    and run then sit in the process's tables). Deterministic labels are outside the
    background tables: only the stops already visited are sent, the others are null (the
    browser says "computing…" there), nothing is computed for them."""
    options = controls.kappa_options()
    i = options.index(20.0)
    near = (i - 1, i + 1)
    for j in near:
        run_page("dpo.py", kappa=controls.fmt_number(options[j]), **params)
    at = run_page("dpo.py", kappa="20", **params)
    assert_clean(at)
    assert instant_readout_at(at, i) == metrics(at)
    if "labels" in params:
        ready = [row[0] for row in instant_rows(at)]
        assert {i, *near} <= set(ready) and len(ready) < len(options) // 2
    for j in near:
        moved = run_page("dpo.py", kappa=controls.fmt_number(options[j]), **params)
        assert instant_readout_at(at, j) == metrics(moved), options[j]


def test_the_stops_table_carries_both_figures_as_the_page_draws_them():
    """At a visited κ stop the table's two figures are the ones the page draws there; the
    run's path is drawn at no more than 40 steps, from step 0 to T, on the core's run; both
    figures' y axes are the same at every stop; the table as sent is under 300 kB."""
    import json
    from klrl_core import user_model
    from tests.conftest import array, instant_figure, instant_table

    options = controls.kappa_options()
    i = options.index(20.0)
    run_page("dpo.py", kappa=controls.fmt_number(options[i + 1]))
    at = run_page("dpo.py", kappa="20")
    moved = charts(run_page("dpo.py", kappa=controls.fmt_number(options[i + 1])))
    for n, key in enumerate(("dpo-policy", "dpo-weights", "dpo-frontier")):
        assert instant_figure(at, i + 1, key) == moved[n], key
    fig = instant_figure(at, i, "dpo-frontier")
    path = next(d for d in fig["data"] if d.get("name") == "DPO run, proxy r")
    p = user_model.PRESETS[user_model.BOOK]
    m = user_model.make_model(np.array(p.pi0), np.array(p.r), np.array(p.r_true))
    w = dpo.comparisons(m.log_pi0, m.r, 1000, "bt", 0)
    tr = dpo.dpo_gradient_steps(w, m.log_pi0, 1 / 20, 200)
    y = array(path["y"])
    assert 2 <= y.size <= 40
    assert y[0] == pytest.approx(float(tr.pi[0] @ m.r), rel=1e-6)
    assert y[-1] == pytest.approx(float(tr.pi[200] @ m.r), rel=1e-6)
    t = instant_table(at)
    ready = [j for j, r in enumerate(t["rows"]) if r is not None]
    for chart in ("dpo-policy", "dpo-frontier"):
        ranges = {
            json.dumps(instant_figure(at, j, chart)["layout"]["yaxis"]["range"]) for j in ready
        }
        assert len(ranges) == 1, chart
    from klrl_app import instant
    from tests.conftest import instant_table, sent_table

    # within the budget, so that the table carries the charts (not the readout alone)
    assert len(sent_table(at)) <= instant.MAX_TABLE and instant_table(at)["base"]


# ------------------------------------------- review of the eleven pages: overoptimization
def test_ten_noisy_pairs_both_rewards_fall_which_is_not_overoptimization():
    """Review item 1: from 10 pairs r* peaks after 1 step and falls, but the proxy ends below
    pi0's too (checked by the plain gradient descent), so the page must not call it
    overoptimization."""
    at = run_page("dpo.py", pairs="10")
    assert_clean(at)
    text = all_text(at)
    w = dpo.comparisons(LQ, R, 10, "bt", 0)
    end = softmax(list(LQ + run_plain(w, 0.05, 200)))
    assert end @ R < PI0 @ R  # the proxy fell
    assert "direct methods overoptimize too" not in text
    assert "the proxy r did not rise either" in text and "That is not overoptimization" in text
    assert f"it ends at {f2(end @ R)}, against {f2(PI0 @ R)} under π₀" in text


def test_a_true_reward_that_falls_from_step_0_has_no_peak_after_0_steps():
    """Review item 1: r* highest at pi0 reads "only fell", never "peaked ... after 0 steps";
    here the proxy rises (deterministic-looking reader's model), which is overoptimization."""
    at = run_page("dpo.py", pi0="0.7,0.2,0.1", r="0,1,2", kappa="1")
    assert_clean(at)
    text = all_text(at)
    assert "after 0 steps" not in text and "peaked" not in text
    assert "r* only fell, from −0.260 under π₀" in text
    assert "while the proxy rose from" in text and "direct methods overoptimize too" in text


@pytest.mark.parametrize(
    "params, minimiser",
    [({}, False), ({"kappa": "0"}, False), ({"kappa": "10000"}, False), ({"pairs": "all"}, True)],
)
def test_coin_flip_labels_keep_weights_near_half_only_where_a_minimiser_exists(params, minimiser):
    """Review items 4 and 17: with no minimiser the response driven to 0 has an implied reward
    falling without bound, so "however long the run" holds only where the loss has one; the
    count of vanishing responses agrees with its noun."""
    at = run_page("dpo.py", **params)
    assert_clean(at)
    text = all_text(at)
    w = dpo.comparisons(
        LQ, R, params.get("pairs", 1000) if params.get("pairs") != "all" else "all", "bt", 0
    )
    n = len(vanishing(w))
    assert (n == 0) == minimiser
    assert (
        "the fitted gaps stay small, and most weights stay near ½ however long the run" in text
    ) == minimiser
    assert ("falls without bound as the run goes on" in text) != minimiser
    if not minimiser:
        assert f"the pairs with the {n} response{'' if n == 1 else 's'} the loss drives" in text
    assert "the same 1 responses" not in text
