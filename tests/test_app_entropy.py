"""The entropy page (chapter 28's "Entropy and exploration", Exercise 28.6) through AppTest:
readouts against a plain-loop softmax and entropy written here, the covariance against a
finite difference of the entropy, the Cui fit against a hand least-squares fit, links and bad
links, typed lists, and the explanation's branches (the covariance's sign is only local)."""

import base64
import json
import math
import re

import numpy as np
import pytest

from tests.conftest import (
    assert_clean,
    charts,
    instant_readout_at,
    instant_rows,
    metrics,
    notices,
    run_page,
)

PAGE = "entropy.py"
H0, COV, AFTER, FIRST = "H(π)", "Cov(log π, A)", "H after the step", "First-order prediction"
RIGHT = [0.70, 0.12, 0.08, 0.06, 0.04]  # the presets' policies, as probabilities
WRONG = [0.04, 0.70, 0.12, 0.08, 0.06]
REWARD_FIRST = [1.0, 0.0, 0.0, 0.0, 0.0]
COUNTER_PI, COUNTER_A = [0.8, 0.15, 0.05], [1.0, 0.0, 2.0]  # Cov > 0, yet H rises again


# --- plain references ---------------------------------------------------------------------------


def softmax(z):
    m = max(z)
    e = [math.exp(v - m) for v in z]
    s = sum(e)
    return [v / s for v in e]


def step(pi, adv, eta):
    """The policy after z <- z + eta A, starting from probabilities pi (logits log pi)."""
    return softmax([math.log(p) + eta * a for p, a in zip(pi, adv)])


def entropy(pi):
    return -sum(p * math.log(p) for p in pi if p > 0)


def cov(pi, adv):
    mean_l = sum(p * math.log(p) for p in pi)
    mean_a = sum(p * a for p, a in zip(pi, adv))
    return sum(p * (math.log(p) - mean_l) * (a - mean_a) for p, a in zip(pi, adv))


def nats(x):
    return f"{x:.3f} nats".replace("-", "−")


def signed(x):
    return ("+" if x > 0 else "") + f"{x:.3f}".replace("-", "−")


def logits_text(pi):
    return ",".join(repr(math.log(p)) for p in pi)


def look_for(at) -> str:
    found = [str(m.value) for m in at.markdown if "klrl-look" in str(m.value)]
    assert len(found) == 1
    return re.sub(r"<[^>]+>", " ", found[0])


def trajectory_text(at) -> str:
    found = [
        str(m.value)
        for m in at.markdown
        if str(m.value).startswith("Over ") or str(m.value).startswith("With every advantage equal")
    ]
    assert len(found) == 1
    return found[0]


def alts(at) -> list[str]:
    return [
        json.loads(c.proto.json)["alt"]
        for c in at.get("bidi_component")
        if c.proto.component_name == "klrl_live_chart"
    ]


def values(t: dict, axis: str) -> np.ndarray:
    v = t[axis]
    if isinstance(v, dict):
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
    return np.asarray(v, dtype=float)


def hand_fit(hs, rs):
    """Least squares for R = -a e^H + b by the normal equations of a straight line in x = e^H."""
    xs = [math.exp(h) for h in hs]
    n = len(xs)
    mx, mr = sum(xs) / n, sum(rs) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxr = sum((x - mx) * (r - mr) for x, r in zip(xs, rs))
    slope = sxr / sxx
    a, b = -slope, mr - slope * mx
    fitted = [-a * x + b for x in xs]
    ss_res = sum((r - f) ** 2 for r, f in zip(rs, fitted))
    ss_tot = sum((r - mr) ** 2 for r in rs)
    return a, b, 1 - ss_res / ss_tot


def hand_trajectory(pi, adv, eta, steps):
    """Entropy and expected advantage after each of ``steps`` steps, one step at a time."""
    hs, rs, cur = [], [], list(pi)
    for _ in range(steps + 1):
        hs.append(entropy(cur))
        rs.append(sum(p * a for p, a in zip(cur, adv)))
        cur = step(cur, adv, eta)
    return hs, rs


# --- readout ------------------------------------------------------------------------------------


def test_defaults_against_plain_loops():
    at = run_page(PAGE)
    assert_clean(at)
    assert notices(at) == []
    assert dict(at.query_params) == {"eta": "0.5", "preset": "confident_right", "steps": "40"}
    h, c = entropy(RIGHT), cov(RIGHT, REWARD_FIRST)
    after = entropy(step(RIGHT, REWARD_FIRST, 0.5))
    assert metrics(at) == {
        H0: nats(h),
        COV: signed(c),
        AFTER: nats(after),
        FIRST: nats(h - 0.5 * c),
    }
    assert metrics(at) == {
        H0: "1.004 nats",
        COV: "+0.453",
        AFTER: "0.779 nats",
        FIRST: "0.777 nats",
    }
    assert len(at.metric) == 0
    assert len(charts(at)) == 4


@pytest.mark.parametrize(
    "preset, pi", [("confident_right", RIGHT), ("confident_wrong", WRONG), ("uniform", [0.2] * 5)]
)
def test_the_covariance_is_minus_the_entropys_slope(preset, pi):
    """Exercise 28.6 checked by a central difference of the plain-loop entropy."""
    at = run_page(PAGE, preset=preset)
    assert_clean(at)
    d = 1e-5
    slope = (entropy(step(pi, REWARD_FIRST, d)) - entropy(step(pi, REWARD_FIRST, -d))) / (2 * d)
    assert cov(pi, REWARD_FIRST) == pytest.approx(-slope, abs=1e-8)
    shown = metrics(at)[COV]
    expected = signed(-slope) if abs(slope) >= 5e-4 else "0.000"
    assert shown == expected
    assert {"confident_right": "+0.453", "confident_wrong": "−0.089", "uniform": "0.000"}[
        preset
    ] == shown


def test_the_step_size_slider_moves_the_exact_and_first_order_values():
    at = run_page(PAGE)
    at.slider[0].set_value(2.0).run()
    h, c = entropy(RIGHT), cov(RIGHT, REWARD_FIRST)
    m = metrics(at)
    assert m[AFTER] == nats(entropy(step(RIGHT, REWARD_FIRST, 2.0)))  # 0.284
    assert m[FIRST] == nats(h - 2.0 * c)  # 0.098
    assert at.query_params["eta"] == "2"


# --- links, lists and bad input -----------------------------------------------------------------


def test_own_lists_from_the_link():
    at = run_page(PAGE, logits=logits_text(COUNTER_PI), advantages="1,0,2", eta="1.5")
    assert_clean(at)
    assert notices(at) == []
    assert at.query_params["preset"] == "custom"
    assert at.query_params["advantages"] == "1,0,2"
    m = metrics(at)
    after = entropy(step(COUNTER_PI, COUNTER_A, 1.5))
    assert m[H0] == nats(entropy(COUNTER_PI)) and m[AFTER] == nats(after)
    assert m[COV] == signed(cov(COUNTER_PI, COUNTER_A))
    assert cov(COUNTER_PI, COUNTER_A) > 0 and after > entropy(COUNTER_PI)


def test_a_link_that_repeats_a_preset_opens_the_preset():
    at = run_page(PAGE, logits=logits_text(WRONG), advantages="1,0,0,0,0")
    assert_clean(at)
    assert at.query_params["preset"] == "confident_wrong"
    assert "logits" not in at.query_params
    assert metrics(at)[COV] == "−0.089"


@pytest.mark.parametrize(
    "params, word",
    [
        ({"logits": "0,a", "advantages": "1,0"}, "`logits`/`advantages`"),
        ({"logits": "0,0,0", "advantages": "1,0"}, "3 logits but 2 advantages"),
        ({"logits": "0", "advantages": "1"}, "at least two"),
        ({"logits": ",".join(["0"] * 13), "advantages": ",".join(["1"] * 13)}, "at most 12"),
        ({"logits": "0,500", "advantages": "1,0"}, "between −100 and 100"),
        ({"logits": "0,nan", "advantages": "1,0"}, "`logits`/`advantages`"),
        ({"logits": "0,1"}, "need both"),
        ({"preset": "bogus"}, "`preset`"),
        ({"preset": "custom"}, "needs `logits` and `advantages`"),
        ({"eta": "99"}, "`eta=99`"),
        ({"eta": "0"}, "`eta=0`"),
        ({"steps": "1"}, "`steps=1`"),
        ({"steps": "x"}, "`steps=x`"),
    ],
)
def test_bad_links_give_a_notice_and_still_draw(params, word):
    at = run_page(PAGE, **params)
    assert_clean(at)
    assert len(notices(at)) == 1 and word in notices(at)[0]
    assert len(charts(at)) == 4
    assert metrics(at)[H0] == "1.004 nats"  # the default preset's policy


def test_typed_lists_and_their_errors():
    at = run_page(PAGE)
    at.text_input[0].set_value("0, 0, 0").run()
    at.text_input[1].set_value("1, 0").run()
    assert_clean(at)
    warn = [w for w in notices(at) if "Your lists" in w]
    assert len(warn) == 1 and "3 logits but 2 advantages" in warn[0]
    assert len(charts(at)) == 4 and metrics(at)[H0] == "1.004 nats"
    at.text_input[1].set_value("1, 0, −1").run()  # a typed minus sign reads
    assert_clean(at)
    assert notices(at) == []
    assert at.selectbox[0].value == "custom"
    assert metrics(at)[H0] == nats(math.log(3))
    assert at.query_params["logits"] == "0,0,0" and at.query_params["advantages"] == "1,0,-1"
    # back to a preset: the boxes take its lists
    at.selectbox[0].set_value("uniform").run()
    assert at.text_input[1].value == "1,0,0,0,0"
    assert metrics(at)[H0] == nats(math.log(5))
    assert "logits" not in at.query_params


def test_presentation_view_shows_the_first_figures_only():
    at = run_page(PAGE, present="1")
    assert_clean(at)
    assert len(charts(at)) == 2
    assert not [m for m in at.markdown if "klrl-look" in str(m.value)]


# --- charts -------------------------------------------------------------------------------------


def test_the_entropy_chart_is_the_exact_curve_and_its_tangent():
    at = run_page(PAGE, preset="confident_wrong")
    fig = charts(at)[0]
    exact = next(t for t in fig["data"] if t.get("name") == "exact H(η)")
    tangent = next(t for t in fig["data"] if t.get("name", "").startswith("first order"))
    x, y = values(exact, "x"), values(exact, "y")
    for i in (0, 50, 231, 500):
        assert y[i] == pytest.approx(entropy(step(WRONG, REWARD_FIRST, float(x[i]))), abs=1e-12)
    yt = values(tangent, "y")
    c = cov(WRONG, REWARD_FIRST)
    assert yt[100] == pytest.approx(entropy(WRONG) - float(x[100]) * c, abs=1e-12)
    bars = charts(at)[1]
    after = next(t for t in bars["data"] if t.get("name", "").startswith("after"))
    assert np.allclose(values(after, "y"), step(WRONG, REWARD_FIRST, 0.5), atol=1e-12)
    left, right = alts(at)[:2]
    assert left.startswith("Line chart") and "1.004 nats" in left and "+0.089" in left
    assert right.startswith("Grouped bar chart") and "a2" in right


# --- the explanation: every branch is the true one ----------------------------------------------


def test_positive_covariance_lowers_the_entropy():
    text = look_for(run_page(PAGE))
    assert "Cov(log π, A) = +0.453 is positive" in text
    assert "at first the step lowers the entropy, at a rate of 0.453 nats per unit of η" in text
    assert "0.779 nats, down from 1.004" in text
    assert "the exact entropy falls all the way" in text
    assert "The covariance only speaks for small steps" not in text
    assert "the entropy tends to 0" in text


def peak_by_hand(pi, adv, lo, hi):
    """The step size of the entropy's peak in [lo, hi], by golden-section search."""
    g = (math.sqrt(5) - 1) / 2
    for _ in range(200):
        a, b = hi - g * (hi - lo), lo + g * (hi - lo)
        if entropy(step(pi, adv, a)) < entropy(step(pi, adv, b)):
            lo = a
        else:
            hi = b
    return (lo + hi) / 2


def test_negative_covariance_raises_the_entropy_then_it_collapses():
    at = run_page(PAGE, preset="confident_wrong")
    text = look_for(at)
    peak = peak_by_hand(WRONG, REWARD_FIRST, 1.0, 4.0)
    assert "Cov(log π, A) = −0.089 is negative" in text
    assert "raises the entropy, at a rate of 0.089 nats" in text
    top = entropy(step(WRONG, REWARD_FIRST, peak))
    assert f"rises until η ≈ {peak:.2f} ({top:.3f} nats), then falls" in text
    # Repeated steps of 0.5: the plain loop's entropy rises for 5 steps, then falls.
    hs, rs = hand_trajectory(WRONG, REWARD_FIRST, 0.5, 40)
    top_step = int(np.argmax(hs))
    assert top_step == 5
    traj = trajectory_text(at)
    assert f"The entropy rises until step 5 ({hs[5]:.3f} nats), then falls" in traj
    assert "is not monotone" in traj and "fits poorly" in traj


def test_zero_covariance_leaves_it_to_the_second_order():
    at = run_page(PAGE, preset="uniform")
    text = look_for(at)
    # At a uniform policy d2H/deta2 = -Var(A) = -(0.2 - 0.04) = -0.16.
    assert "Cov(log π, A) = 0: the first-order line is flat" in text
    assert "d²H/dη² = −0.160" in text and "the entropy falls even so" in text
    assert metrics(at)[AFTER] == nats(entropy(step([0.2] * 5, REWARD_FIRST, 0.5)))


@pytest.mark.parametrize("eta", ["1.5", "5"])
def test_the_covariances_sign_is_only_local(eta):
    at = run_page(PAGE, logits=logits_text(COUNTER_PI), advantages="1,0,2", eta=eta)
    assert_clean(at)
    text = look_for(at)
    assert "is positive" in text and "at first the step lowers the entropy" in text
    assert "The covariance only speaks for small steps" in text
    # The dip, found by hand: minimise H over [0, 1.5].
    g = (math.sqrt(5) - 1) / 2
    lo, hi = 0.0, 1.5
    for _ in range(200):
        a, b = hi - g * (hi - lo), lo + g * (hi - lo)
        if entropy(step(COUNTER_PI, COUNTER_A, a)) > entropy(step(COUNTER_PI, COUNTER_A, b)):
            lo = a
        else:
            hi = b
    assert f"falls until η ≈ {lo:.2f}" in text
    assert "then rises" in text
    if eta == "5":
        assert "Across the chart" not in text  # the step already covers the chart
    else:
        assert entropy(step(COUNTER_PI, COUNTER_A, 1.5)) > entropy(COUNTER_PI)
        assert "up from" in text


def test_equal_advantages_change_nothing():
    at = run_page(PAGE, logits="0,1,2", advantages="3,3,3")
    assert_clean(at)
    pi = softmax([0, 1, 2])
    assert metrics(at)[AFTER] == metrics(at)[H0] == nats(entropy(pi))
    assert "Every action has the same advantage" in look_for(at)
    assert "nothing moves" in trajectory_text(at)


def test_a_shared_top_advantage_keeps_some_entropy():
    at = run_page(PAGE, logits="0,1,2", advantages="1,1,0")
    text = look_for(at)
    limit = entropy(softmax([0, 1]))  # pi restricted to the two best actions
    assert "onto the 2 actions that share the largest advantage" in text
    assert f"tends to {limit:.3f} nats" in text
    assert "At H = 0 the fitted law" not in trajectory_text(at)


def test_a_tiny_negative_covariance_turns_right_away():
    """Cov = -1e-6: the entropy rises for a sliver of eta only; the text must say so rather
    than claim it falls all the way."""
    at = run_page(PAGE, logits="0,0,0.00001", advantages="1,0,0", eta="0.05", steps="2")
    assert_clean(at)
    text = look_for(at)
    assert "is negative" in text and "rises until η ≈" in text and "× 10⁻⁶" in text
    assert "falls all the way" not in text


# --- repeated steps and the Cui fit ---------------------------------------------------------------


def fit_table(at) -> dict:
    df = at.table[-1].value
    row = df.iloc[0]
    return {c: float(str(row[c]).replace("−", "-")) for c in df.columns}


@pytest.mark.parametrize(
    "preset, pi, eta, steps, quality",
    [
        ("confident_right", RIGHT, 0.5, 40, "closely"),
        ("uniform", [0.2] * 5, 0.5, 40, "closely"),
        ("confident_right", RIGHT, 0.25, 10, "closely"),
    ],
)
def test_cui_fit_against_a_hand_least_squares(preset, pi, eta, steps, quality):
    at = run_page(PAGE, preset=preset, eta=str(eta), steps=str(steps))
    assert_clean(at)
    hs, rs = hand_trajectory(pi, REWARD_FIRST, eta, steps)
    a, b, r2 = hand_fit(hs, rs)
    got = fit_table(at)
    assert got["a"] == pytest.approx(a, abs=6e-4) and got["b"] == pytest.approx(b, abs=6e-4)
    assert got["R²"] == pytest.approx(r2, abs=6e-5)
    traj = trajectory_text(at)
    assert f"fits {quality} here (R² = {r2:.4f})" in traj
    assert "fitted to this model's trajectory, not their measurement" in traj
    assert f"rises from {rs[0]:.3f} to {rs[-1]:.3f}" in traj
    assert "falls at every step" in traj and "not monotone" not in traj
    right = charts(at)[3]
    names = [t.get("name", "") for t in right["data"]]
    assert any("fitted to this trajectory" in n for n in names)


def test_the_default_fit_is_close_and_reaches_its_limit():
    at = run_page(PAGE)
    traj = trajectory_text(at)
    hs, rs = hand_trajectory(RIGHT, REWARD_FIRST, 0.5, 40)
    _, _, r2 = hand_fit(hs, rs)
    assert f"R² = {r2:.4f}" in traj and r2 > 0.999
    assert "an extrapolation" not in traj  # the run ends near H = 0


def test_a_short_run_says_the_fit_extrapolates():
    at = run_page(PAGE, eta="0.05", steps="3")
    traj = trajectory_text(at)
    hs, _ = hand_trajectory(RIGHT, REWARD_FIRST, 0.05, 3)
    assert f"an extrapolation, since this trajectory stops at H = {hs[-1]:.3f} nats" in traj


def test_long_runs_at_the_largest_step_stay_finite():
    at = run_page(PAGE, eta="5", steps="200", preset="confident_wrong")
    assert_clean(at)
    assert len(charts(at)) == 4
    assert "0.000 nats" in trajectory_text(at)


@pytest.mark.parametrize(
    "params",
    [{}, {"preset": "confident_wrong", "eta": "5"}, {"logits": "0,1,2", "advantages": "3,3,3"}],
)
def test_every_chart_is_a_valid_plotly_figure(params):
    import plotly.graph_objects as go

    figs = charts(run_page(PAGE, **params))
    assert figs
    for fig in figs:
        go.Figure(fig)  # raises ValueError on anything plotly.js would not understand


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"preset": "confident_wrong"},
        {"logits": logits_text(COUNTER_PI), "advantages": "1,0,2"},
    ],
    ids=["default", "confident-wrong", "own-lists"],
)
def test_instant_readout_holds_the_readout_the_next_stops_show(params):
    """The table sent at η = 0.5 holds every stop of the slider: what the page shows when η
    moves to a neighbouring stop, further, or to either end."""
    at = run_page(PAGE, eta="0.5", **params)
    keys = [row[0] for row in instant_rows(at)]
    assert len(keys) == 100 and keys[0] == 0.05 and keys[-1] == 5.0  # every stop
    for eta in (0.45, 0.55, 1.1, 0.05, 5.0):
        sent = instant_readout_at(at, eta)
        moved = run_page(PAGE, eta=f"{eta:g}", **params)
        assert metrics(moved) == sent, eta
    assert len({instant_readout_at(at, k)[AFTER] for k in keys}) > 10  # η moves it


# ---- the figures that follow η (klrl_app/instant.py) ------------------------------------------
FOLLOWED = ("entropy-eta", "entropy-policy")


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"preset": "confident_wrong", "present": "1"},
        {"logits": logits_text(COUNTER_PI), "advantages": "1,0,2"},
    ],
    ids=["default", "confident-wrong-presenting", "own-lists"],
)
def test_the_table_draws_what_the_page_draws_at_each_stop(params):
    """At neighbouring stops, a far one and both ends of η, the browser's figure for each
    followed chart (the table's base with that stop's patches) and its text alternative are
    what the page draws when run at that η."""
    from tests.conftest import instant_figure, instant_table

    at = run_page(PAGE, eta="0.5", **params)
    table = instant_table(at)
    for eta in (0.45, 0.55, 2.35, 0.05, 5.0):
        i = next(j for j, k in enumerate(table["keys"]) if abs(k - eta) < 1e-9)
        moved = run_page(PAGE, eta=f"{eta:g}", **params)
        drawn = charts(moved)
        for n, key in enumerate(FOLLOWED):
            assert instant_figure(at, eta, key) == drawn[n], (eta, key)
            assert table["rows"][i]["a"][key] == alts(moved)[n], (eta, key)


def test_axis_ranges_are_the_same_at_every_stop():
    from tests.conftest import instant_figure, instant_table

    at = run_page(PAGE, preset="confident_wrong")
    table = instant_table(at)
    assert len(table["keys"]) == 100 and all(r is not None for r in table["rows"])
    for key in FOLLOWED:
        figs = [instant_figure(at, e, key) for e in table["keys"]]
        for axis in ("xaxis", "yaxis"):
            assert len({tuple(f["layout"][axis].get("range", ())) for f in figs}) == 1
        assert "range" in figs[0]["layout"]["yaxis"]
    # every stop's marks lie inside the fixed ranges
    top = instant_figure(at, 0.05, "entropy-eta")["layout"]["yaxis"]["range"][1]
    for e in table["keys"]:
        marks = values(instant_figure(at, e, "entropy-eta")["data"][2], "y")
        assert 0 <= marks[0] <= top


def test_the_table_fits_in_300_kb_at_the_defaults():
    from tests.conftest import instant_table

    text = json.dumps(instant_table(run_page(PAGE)), ensure_ascii=False, separators=(",", ":"))
    assert len(text.encode("utf-8")) <= 300_000


# --------------------------------------------------- review of the eleven pages (entropy)
@pytest.mark.parametrize("steps, tested", [("2", False), ("3", False), ("4", True), ("40", True)])
def test_too_few_points_cannot_test_the_law(steps, tested):
    """Review item 9: a two-parameter law through 3 or 4 points fits almost any path, so below
    five points the text says the fit cannot test the law, instead of "fits closely"."""
    traj = trajectory_text(run_page(PAGE, steps=steps))
    hs, rs = hand_trajectory(RIGHT, REWARD_FIRST, 0.5, int(steps))
    assert len(hs) == int(steps) + 1
    assert ("fits closely here" in traj) == tested
    assert (
        f"with only {len(hs)} points a law with two parameters fits almost any path" in traj
    ) != tested


@pytest.mark.parametrize("eta, negative", [("5", True), ("0.5", False)])
def test_a_negative_first_order_prediction_is_called_impossible(eta, negative):
    """Review item 10: H(0) − η·Cov below 0 (η = 5 on the default policy: −1.261) is no
    entropy; the readout and the text say so, and only then."""
    at = run_page(PAGE, eta=eta)
    pi = RIGHT
    h0 = entropy(pi)
    lp = [math.log(p) for p in pi]
    mean_lp = sum(p * v for p, v in zip(pi, lp))
    mean_a = sum(p * a for p, a in zip(pi, REWARD_FIRST))
    cov = sum(p * (v - mean_lp) * (a - mean_a) for p, v, a in zip(pi, lp, REWARD_FIRST))
    pred = h0 - float(eta) * cov
    assert (pred < 0) == negative
    m = metrics(at)
    assert m[FIRST].startswith(f"{pred:.3f}".replace("-", "−") + " nats")
    assert ("no entropy can be" in m[FIRST]) == negative
    assert (
        "below 0, which no entropy can be" in " ".join(str(x.value) for x in at.markdown)
    ) == negative


def test_a_trajectory_that_ends_near_zero_entropy_does_not_read_zero():
    """Review item 7: after 40 steps the default run's entropy is 2.0 × 10⁻⁸, not 0.000."""
    traj = trajectory_text(run_page(PAGE))
    hs, _ = hand_trajectory(RIGHT, REWARD_FIRST, 0.5, 40)
    assert 0 < hs[-1] < 5e-4
    m, e = f"{hs[-1]:.1e}".split("e")
    assert f"ending at {m} × 10" in traj and "ending at 0.000 nats" not in traj
    assert "at full collapse, with" not in traj
