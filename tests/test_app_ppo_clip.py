"""The ppo-clip page (Equation 12.2, section 12.1.4) through AppTest: readout and charts against
hand values and a per-sample loop written here, bad links, and the explanation's branches."""

import base64
import re

import numpy as np
import pytest

from klrl_app import controls
from tests.conftest import (
    all_text,
    assert_clean,
    charts,
    instant_figure,
    instant_readout_at,
    instant_table,
    metrics,
    notices,
    run_page,
)

P_OLD = np.array([0.40, 0.25, 0.20, 0.10, 0.05])
R = np.array([0.2, 0.4, 0.0, 0.3, 1.0])
RULES = {"plain": None, "ppo": (0.2, 0.2), "clip_higher": (0.2, 0.28), "cispo": (0.2, 0.28)}


def values(trace: dict, axis: str) -> np.ndarray:
    v = trace[axis]
    if isinstance(v, dict):
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
    return np.array([np.nan if x is None else x for x in v], dtype=float)


def curve(figs: list[dict], starts: str, lower: bool) -> tuple[np.ndarray, np.ndarray]:
    """(ω, y) of the curve named ``starts`` ("PPO, A = +1") in the lower chart (the gradient)
    or the upper one (the objective) of ``figs``: a rule's trace holds its A = +1 and A = −1
    curves with a gap, each point's A in customdata."""
    name, sign = starts.split(", A = ")
    found = [
        t
        for t in figs[1 if lower else 0]["data"]
        if t.get("hovertemplate", "").startswith(f"{name}, A = ")
    ]
    assert len(found) == 1, starts
    t = found[0]
    x, y, a = values(t, "x"), values(t, "y"), values(t, "customdata")
    # one block per sign: the ω grid, then a NaN ω that breaks the line; one A per block
    k = len(set(a.tolist()))
    x, y, a = x.reshape(k, -1), y.reshape(k, -1), a.reshape(k, -1)
    assert np.isnan(x[:, -1]).all() and np.all(np.diff(x[:, :-1], axis=1) > 0)
    assert (a == a[:, :1]).all()
    mine = a[:, 0] == (1 if sign == "+1" else -1)
    assert mine.sum() == 1, starts
    return x[mine, :-1][0], y[mine, :-1][0]


def trace(fig: dict, starts: str, lower: bool) -> dict:
    """The trace whose hover text starts with ``starts``, in the lower or upper panel."""
    found = [
        t
        for t in fig["data"]
        if t.get("hovertemplate", "").startswith(starts) and (t.get("yaxis") == "y2") == lower
    ]
    assert len(found) == 1, starts
    return found[0]


def signs_drawn(figs: list[dict]) -> set[int]:
    return {
        int(v)
        for f in figs[:2]
        for t in f["data"]
        if "customdata" in t
        for v in values(t, "customdata")
    }


def at_omega(figs: list[dict], starts: str, lower: bool, omegas) -> np.ndarray:
    x, y = curve(figs, starts, lower)
    return np.array([y[np.argmin(np.abs(x - w))] for w in omegas])


# ---- a plain second implementation of the epochs: one sample at a time ----------------------
def draw(seed: int, n: int, bernoulli: bool = False):
    rng = np.random.default_rng(seed)
    actions = rng.choice(5, size=n, p=P_OLD)
    rewards = R[actions]
    if bernoulli:
        rewards = (rng.random(n) < rewards).astype(float)
    return actions, rewards - rewards.mean()


def epochs_by_hand(actions, adv, rule: str, eps, lr: float, epochs: int):
    """Policies after each epoch: z += lr * mean_i c_i (onehot(a_i) - pi), c_i written out."""
    z = np.log(P_OLD)
    out = []
    for t in range(epochs + 1):
        pi = np.exp(z - z.max())
        pi /= pi.sum()
        out.append(pi)
        if t == epochs:
            break
        g = np.zeros(5)
        for a, A in zip(actions, adv):
            w = pi[a] / P_OLD[a]
            if rule == "plain":
                c = w * A
            elif rule == "cispo":
                c = min(max(w, 1 - eps[0]), 1 + eps[1]) * A
            else:
                binds = (A > 0 and w > 1 + eps[1]) or (A < 0 and w < 1 - eps[0])
                c = 0.0 if binds else w * A
            onehot = np.zeros(5)
            onehot[a] = 1.0
            g += c * (onehot - pi)
        z = z + lr * g / len(actions)
    return np.array(out)


def kl_to_old(pi: np.ndarray) -> float:
    return float(sum(p * np.log(p / q) for p, q in zip(pi, P_OLD)))


# ---- defaults ---------------------------------------------------------------------------------
def test_defaults_readout_matches_a_per_sample_loop():
    at = run_page("ppo-clip.py")
    assert_clean(at)
    assert notices(at) == []
    m = metrics(at)
    assert m["A > 0 flat for"] == "ω > 1.20" and m["A < 0 flat for"] == "ω < 0.80"
    assert m["after"] == "10 epochs"
    # Printed by the page at 2 significant figures; recomputed here one sample at a time.
    shown = {
        "plain": ("0.19", "0.085"),
        "PPO": ("0.035", "0.065"),
        "clip-higher": ("0.034", "0.068"),
        "CISPO": ("0.18", "0.083"),
    }
    actions, adv = draw(0, 64)
    assert np.sum(actions == 4) == 2  # the rare action is drawn twice
    for rule, label in zip(RULES, shown):
        pols = epochs_by_hand(actions, adv, rule, RULES[rule], 2.0, 10)
        kl, p5 = kl_to_old(pols[-1]), pols[-1][4]
        assert (f"{kl:.2g}", f"{p5:.2g}") == shown[label]
        assert m[label] == f"KL {shown[label][0]}, π₅ {shown[label][1]}"
    assert at.query_params["eps"] == "0.2" and at.query_params["epochs"] == "10"


def test_default_epoch_chart_is_the_per_sample_loop():
    at = run_page("ppo-clip.py")
    fig = charts(at)[2]
    actions, adv = draw(0, 64)
    for rule, name in zip(RULES, ("plain", "PPO", "clip-higher", "CISPO")):
        pols = epochs_by_hand(actions, adv, rule, RULES[rule], 2.0, 10)
        kl = [kl_to_old(p) for p in pols]
        np.testing.assert_allclose(
            values(trace(fig, f"{name}, epoch", False), "y"), kl, rtol=1e-7, atol=1e-15
        )
        np.testing.assert_allclose(
            values(trace(fig, f"{name}, epoch", True), "y"), pols[:, 4], rtol=1e-7
        )
    # The first epoch is one and the same step for every rule (every ratio is 1).
    firsts = {
        values(t, "y")[1]
        for t in fig["data"]
        if t.get("yaxis") != "y2" and "epoch" in t.get("hovertemplate", "")
    }
    assert len({round(v, 15) for v in firsts}) == 1


def test_surrogate_and_gradient_at_hand_values():
    at = run_page("ppo-clip.py")
    fig = charts(at)
    w = [0.5, 1.1, 1.25, 2.0]
    # Equation (12.2), A = +1: min(w, clip(w, 0.8, 1.2)); A = -1: min(-w, -clip(w)).
    np.testing.assert_allclose(at_omega(fig, "PPO, A = +1", False, w), [0.5, 1.1, 1.2, 1.2])
    np.testing.assert_allclose(at_omega(fig, "PPO, A = −1", False, w), [-0.8, -1.1, -1.25, -2])
    np.testing.assert_allclose(
        at_omega(fig, "clip-higher, A = +1", False, w), [0.5, 1.1, 1.25, 1.28]
    )
    np.testing.assert_allclose(at_omega(fig, "plain, A = −1", False, w), [-0.5, -1.1, -1.25, -2])
    # d/d omega: A inside, 0 where the clip binds; CISPO clip(w) A / w.
    np.testing.assert_allclose(at_omega(fig, "PPO, A = +1", True, w), [1, 1, 0, 0])
    np.testing.assert_allclose(at_omega(fig, "PPO, A = −1", True, w), [0, -1, -1, -1])
    np.testing.assert_allclose(at_omega(fig, "clip-higher, A = +1", True, w), [1, 1, 1, 0])
    np.testing.assert_allclose(at_omega(fig, "CISPO, A = +1", True, w), [0.8 / 0.5, 1, 1, 1.28 / 2])
    np.testing.assert_allclose(
        at_omega(fig, "CISPO, A = −1", True, w), [-0.8 / 0.5, -1, -1, -1.28 / 2]
    )
    # The shaded zero-gradient regions, in both charts: omega > 1.2 above the axis, omega < 0.8
    # below it; the objective's chart names them in its legend.
    for f in fig[:2]:
        rects = [
            (s["x0"], s["x1"], s["y0"], s["y1"])
            for s in f["layout"]["shapes"]
            if s["type"] == "rect"
        ]
        assert len(rects) == 2
        assert any(x0 == pytest.approx(1.2) and y0 == 0 for x0, _, y0, _ in rects)
        assert any(x0 == 0 and x1 == pytest.approx(0.8) and y1 == 0 for x0, x1, _, y1 in rects)
    assert [s.get("name") for s in fig[0]["layout"]["shapes"] if s.get("showlegend")] == [
        "PPO: gradient 0"
    ]
    # the two charts share one omega axis, and each rule has its line in the first legend
    # (CISPO, which has no objective, in the second)
    assert fig[0]["layout"]["xaxis"]["range"] == fig[1]["layout"]["xaxis"]["range"]
    assert [t["name"] for t in fig[0]["data"] if t.get("showlegend")] == [
        "ω·A (plain)",
        "PPO",
        "clip-higher",
    ]
    assert [t["name"] for t in fig[1]["data"] if t.get("showlegend")] == [
        "CISPO, weight [0.80, 1.28]"
    ]


def test_score_weights_and_a_wider_eps():
    at = run_page("ppo-clip.py", grad="score", eps="0.3", sign="pos")
    assert_clean(at)
    m = metrics(at)
    assert m["A > 0 flat for"] == "ω > 1.30" and "A < 0 flat for" not in m
    fig = charts(at)
    w = [0.5, 1.25, 1.5, 2.0]
    # weight on grad log pi: PPO w A or 0 past 1.3; CISPO clip(w, 0.8, 1.28) A; plain w A.
    np.testing.assert_allclose(at_omega(fig, "PPO, A = +1", True, w), [0.5, 1.25, 0, 0])
    np.testing.assert_allclose(at_omega(fig, "CISPO, A = +1", True, w), [0.8, 1.25, 1.28, 1.28])
    np.testing.assert_allclose(at_omega(fig, "plain, A = +1", True, w), w)
    assert signs_drawn(fig) == {1}
    assert "bounded, and never zero" in all_text(at)


def readout_number(item: str, name: str) -> float:
    """One number of a readout item "KL 0.16, π₅ 0.084": name "KL" or "π₅"."""
    return float(re.search(name + r" ([0-9.]+)", item).group(1))


def test_cispo_with_minimax_m1_bounds():
    """cispo=m1: MiniMax-M1's CISPO puts no lower bound on the weight, only 1 + ε_high = 1.28
    above. The CISPO run is the per-sample loop with the weight min(w, 1.28) (eps_low = 1:
    a lower edge of 0), not the default [0.8, 1.28], and the page says which bounds it uses."""
    at = run_page("ppo-clip.py", cispo="m1")
    assert_clean(at)
    assert notices(at) == []
    actions, adv = draw(0, 64)
    m1 = epochs_by_hand(actions, adv, "cispo", (1.0, 0.28), 2.0, 10)[-1]
    dapo = epochs_by_hand(actions, adv, "cispo", (0.2, 0.28), 2.0, 10)[-1]
    item = metrics(at)["CISPO"]
    assert readout_number(item, "KL") == pytest.approx(kl_to_old(m1), abs=0.005)
    assert readout_number(item, "π₅") == pytest.approx(m1[4], abs=0.0005)
    assert abs(kl_to_old(m1) - kl_to_old(dapo)) > 0.01  # the bound matters here
    t = all_text(at)
    assert "weight clipped to at most 1.28 (no lower bound: MiniMax-M1's setting)" in t
    assert "A up to ω = 1.28, since below the cap the weight is ω itself" in t
    assert "[0.80, 1.28]" not in t.split("CISPO (pink)")[1].split(".")[0]
    # the lower panel: CISPO's weight on grad omega is A from omega = 0 up to 1.28, then
    # 1.28 A / omega; on grad log pi it is min(w, 1.28) A
    fig = charts(at)
    np.testing.assert_allclose(
        at_omega(fig, "CISPO, A = +1", True, [0.0, 0.5, 1.2, 2.0]), [1, 1, 1, 1.28 / 2]
    )
    np.testing.assert_allclose(
        at_omega(fig, "CISPO, A = −1", True, [0.0, 0.5, 2.0]), [-1, -1, -1.28 / 2]
    )
    legend = [tr.get("name", "") for tr in fig[1]["data"] if tr.get("showlegend")]
    assert "CISPO, weight ≤ 1.28" in legend
    score = charts(run_page("ppo-clip.py", cispo="m1", grad="score"))
    np.testing.assert_allclose(
        at_omega(score, "CISPO, A = +1", True, [0.1, 0.5, 1.25, 2.0]), [0.1, 0.5, 1.25, 1.28]
    )
    assert at.query_params["cispo"] == "m1"


def test_cispo_bounds_default_and_link():
    """The default keeps DAPO's [0.8, 1.28] for CISPO and says so; choosing MiniMax-M1's
    bounds on the page puts cispo=m1 in the link, and that link opens the same view."""
    at = run_page("ppo-clip.py")
    assert at.query_params["cispo"] == "dapo"
    assert "weight clipped to [0.80, 1.28] and held fixed" in all_text(at)
    control = at.button_group(key="ppo-clip.cispo")
    assert control.value == "dapo"
    control.set_value("m1").run()
    assert_clean(at)
    assert at.query_params["cispo"] == "m1"
    shown = metrics(at)["CISPO"]
    assert "no lower bound: MiniMax-M1's setting" in all_text(at)
    linked = run_page("ppo-clip.py", **{k: str(v) for k, v in at.query_params.items()})
    assert metrics(linked)["CISPO"] == shown and notices(linked) == []


def test_moving_eps_updates_readout_and_link():
    at = run_page("ppo-clip.py")
    at.slider[0].set_value(0.35).run()
    m = metrics(at)
    assert m["A > 0 flat for"] == "ω > 1.35" and m["A < 0 flat for"] == "ω < 0.65"
    assert at.query_params["eps"] == "0.35"


def test_charts_are_valid_plotly_figures():
    import plotly.graph_objects as go

    for params in ({}, {"sign": "neg", "show": "none", "epochs": "50", "grad": "score"}):
        figs = charts(run_page("ppo-clip.py", **params))
        assert len(figs) == 3
        for fig in figs:
            go.Figure(fig)


# ---- links ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "params, key, shown",
    [
        ({"eps": "-1"}, "A > 0 flat for", "ω > 1.05"),
        ({"eps": "abc"}, "A > 0 flat for", "ω > 1.20"),
        ({"eps": "9"}, "A < 0 flat for", "ω < 0.50"),
        ({"epochs": "0"}, "after", "1 epoch"),
        ({"epochs": "2.5"}, "after", "10 epochs"),
        ({"lr": "1e9"}, "PPO", None),
        ({"n": "0"}, "after", "10 epochs"),
        ({"sign": "sideways"}, "A < 0 flat for", "ω < 0.80"),
        ({"show": "everything"}, "CISPO", None),
        ({"cispo": "open"}, "CISPO", "KL 0.18, π₅ 0.083"),
        ({"bernoulli": "maybe"}, "plain", "KL 0.19, π₅ 0.085"),
        ({"seed": "-4"}, "plain", "KL 0.19, π₅ 0.085"),
    ],
)
def test_bad_links_give_a_notice_and_still_draw(params, key, shown):
    at = run_page("ppo-clip.py", **params)
    assert_clean(at)
    assert len(notices(at)) == 1 and f"`{next(iter(params))}" in notices(at)[0]
    m = metrics(at)
    assert key in m
    if shown is not None:
        assert m[key] == shown
    assert len(charts(at)) == 3


def test_lr_too_large_is_clamped_to_ten():
    at = run_page("ppo-clip.py", lr="1e9")
    assert at.query_params["lr"] == "10"
    actions, adv = draw(0, 64)
    pols = epochs_by_hand(actions, adv, "ppo", (0.2, 0.2), 10.0, 10)
    assert metrics(at)["PPO"].startswith(f"KL {kl_to_old(pols[-1]):.2g}")


def test_a_deep_link_is_read():
    at = run_page("ppo-clip.py", eps="0.1", epochs="3", lr="0.5", n="200", seed="7", show="higher")
    assert_clean(at)
    assert notices(at) == []
    m = metrics(at)
    assert "CISPO" not in m and m["after"] == "3 epochs"
    actions, adv = draw(7, 200)
    pols = epochs_by_hand(actions, adv, "clip_higher", (0.2, 0.28), 0.5, 3)
    assert m["clip-higher"].startswith(f"KL {kl_to_old(pols[-1]):.2g}")


# ---- what to look for at the ends of the controls -----------------------------------------------
def text(**params) -> str:
    at = run_page("ppo-clip.py", **params)
    assert_clean(at)
    return all_text(at)


def test_defaults_explanation():
    t = text()
    assert "the plain surrogate has moved furthest" in t and "clip-higher least" in t
    assert "every gradient is zero and PPO has stopped moving" in t
    assert "Here clip-higher has given action 5 more than PPO (0.068 against 0.065)" in t
    assert "for 55 of the 100 batches" in t
    assert "like the plain surrogate it keeps moving" in t
    assert "beyond PPO's 1.20" in t


def test_clip_higher_beats_ppo_in_55_of_100_default_batches():
    """The count the explanation quotes, recounted with the per-sample loop."""
    wins = 0
    for seed in range(100):
        actions, adv = draw(seed, 64)
        ph = epochs_by_hand(actions, adv, "clip_higher", (0.2, 0.28), 2.0, 10)[-1][4]
        pp = epochs_by_hand(actions, adv, "ppo", (0.2, 0.2), 2.0, 10)[-1][4]
        wins += ph > pp
    assert wins == 55


def test_one_epoch_is_the_same_step_for_every_rule():
    at = run_page("ppo-clip.py", epochs="1")
    m = metrics(at)
    assert len({m[k] for k in ("plain", "PPO", "clip-higher", "CISPO")}) == 1
    assert "With one epoch every rule takes the same step" in all_text(at)


def test_eps_edges_of_clip_higher():
    assert "clip-higher (green) is the narrower range on top" in text(eps="0.5")
    assert "PPO's upper edge is clip-higher's (1.28)" in text(eps="0.28")
    t = text(eps="0.05")
    assert "Its lower edge stays at 0.80, below PPO's 0.95 here" in t
    assert "switch to A > 0 to see it" in text(sign="neg")


def test_a_batch_without_signal_moves_nothing():
    at = run_page("ppo-clip.py", n="2", seed="3", bernoulli="on")
    assert "every advantage is zero" in all_text(at)
    assert metrics(at)["PPO"] == "KL 0, π₅ 0.050"


def test_rare_action_not_drawn():
    t = text(n="2", seed="0")
    assert "was not drawn in this batch" in t
    assert "It has left action 5 below where it started (0.041 against 0.050)" in t
    assert "Here clip-higher has given action 5 less than PPO" in t


def test_small_steps_few_epochs_nothing_clipped():
    t = text(lr="0.5", epochs="2")
    assert "In 2 epochs no sample's clip has changed its update yet" in t
    assert "has moved furthest" not in t


def test_ties_between_rules_are_named_together():
    t = text(eps="0.05", lr="0.5", epochs="2", n="3", seed="1")
    assert (
        "the plain surrogate, clip-higher and CISPO have moved furthest from the sampling "
        "policy (KL 0.0024) and PPO least (0.0011)"
    ) in t
    assert "Here CISPO has moved as far as clip-higher (KL 0.0024)" in t
    t = text(eps="0.5", lr="0.5", epochs="5", n="3", seed="4")
    assert "Here PPO has moved as far as the plain surrogate (KL 0.010)" in t
    assert "Here CISPO has moved as far as PPO (KL 0.010)" in t  # 0.00999... reads 0.010


def test_large_steps_many_epochs():
    at = run_page("ppo-clip.py", lr="10", epochs="50")
    assert_clean(at)
    t = all_text(at)
    assert metrics(at)["plain"].endswith("π₅ 1.0")
    assert "PPO has stopped moving" in t and "keeps moving" in t
    # 0.066 and 0.066 to two figures (the loop here: 0.066420 and 0.065999): printed with four
    actions, adv = draw(0, 64)
    ph = epochs_by_hand(actions, adv, "clip_higher", (0.2, 0.28), 10.0, 50)[-1][4]
    pp = epochs_by_hand(actions, adv, "ppo", (0.2, 0.2), 10.0, 50)[-1][4]
    assert f"{ph:.2g}" == f"{pp:.2g}" and ph > pp
    assert "clip-higher has given action 5 more than PPO (0.06642 against 0.06600)" in t


def lucky_action_2(seed: int, n: int) -> str:
    """How action 2 paid in a Bernoulli batch, drawn here: actions first, then 0/1 rewards."""
    rng = np.random.default_rng(seed)
    actions = rng.choice(5, size=n, p=P_OLD)
    paid = rng.random(n) < R[actions]
    k = actions == 1
    return f"action 2 paid {paid[k].mean():.2f} on average in its {k.sum()} draws"


def test_bernoulli_rewards_show_the_plain_surrogate_following_luck():
    assert lucky_action_2(0, 64) == "action 2 paid 0.47 on average in its 15 draws"
    t = text(bernoulli="on")
    assert "action 2 paid 0.47 on average in its 15 draws, against a true rate of 0.4" in t
    assert "luck included, further than PPO" in t


def test_bernoulli_rewards_where_the_plain_surrogate_does_not_favour_the_lucky_action():
    assert lucky_action_2(49, 1000) == "action 2 paid 0.43 on average in its 263 draws"
    t = text(eps="0.28", lr="5", n="1000", seed="49", bernoulli="on", show="none")
    assert "action 2 paid 0.43 on average in its 263 draws" in t
    assert (
        "Here the plain surrogate does not favour it more than PPO: it leaves it at 0.076, "
        "PPO at 0.30, from 0.25"
    ) in t


def test_neither_companion_shown():
    at = run_page("ppo-clip.py", show="none")
    assert set(metrics(at)) == {"A > 0 flat for", "A < 0 flat for", "after", "plain", "PPO"}
    t = all_text(at).split("What to look for")[1].split("Several gradient steps")[0]
    assert "CISPO" not in t and "clip-higher" not in t.lower()


@pytest.mark.parametrize(
    "params",
    [{}, {"sign": "neg", "show": "higher", "epochs": "30", "lr": "6", "n": "200", "seed": "3"}],
    ids=["defaults", "other-settings"],
)
def test_instant_readout_holds_the_readout_the_next_stops_show(params):
    """The table sent for the stops beside ε = 0.2 is what the page shows when ε gets there
    (PPO's run is redone per stop; the other rules' numbers stay this run's)."""
    at = run_page("ppo-clip.py", eps="0.2", **params)
    sent = {e: instant_readout_at(at, e) for e in (0.19, 0.21, 0.32, 0.05, 0.5)}
    for e, shown in sent.items():
        moved = run_page("ppo-clip.py", eps=controls.fmt_number(e), **params)
        assert metrics(moved) == shown, e
    assert sent[0.32] != sent[0.21]  # the stops' numbers differ: ε reaches PPO's run


# ---- the figures that follow ε (klrl_app/instant.py) ------------------------------------------
FOLLOWED = ("ppo-clip-surrogate", "ppo-clip-gradient", "ppo-clip-epochs")
AXES = {
    "ppo-clip-surrogate": ("xaxis", "yaxis"),
    "ppo-clip-gradient": ("xaxis", "yaxis"),
    "ppo-clip-epochs": ("xaxis", "yaxis", "yaxis2"),
}


@pytest.mark.parametrize(
    "params",
    [
        {},
        {
            "sign": "neg",
            "show": "higher",
            "grad": "score",
            "epochs": "30",
            "lr": "6",
            "n": "200",
            "seed": "3",
        },
    ],
    ids=["defaults", "other-settings"],
)
def test_the_table_draws_what_the_page_draws_at_each_stop(params):
    """At neighbouring stops, a far one and both ends, the browser's figure for each followed
    chart (the table's base with that stop's patches) is the figure the page draws when run at
    that ε, and its text alternative the page's."""
    at = run_page("ppo-clip.py", eps="0.2", **params)
    table = instant_table(at)
    for e in (0.19, 0.21, 0.37, 0.05, 0.5):
        moved = run_page("ppo-clip.py", eps=controls.fmt_number(e), **params)
        drawn = charts(moved)
        i = table["keys"].index(e)
        for n, key in enumerate(FOLLOWED):
            assert instant_figure(at, e, key) == drawn[n], (e, key)
            assert table["rows"][i]["a"][key] == live_alt(moved, key), (e, key)


def test_the_table_of_stops_is_cispos_own():
    """CISPO's bounds are part of the setting the table of stops is kept for: after a run with
    DAPO's range, a run with MiniMax-M1's bounds sends a table that draws its own CISPO curve
    and legend (it was sent the DAPO table, so a drag showed the other bounds)."""
    run_page("ppo-clip.py", cispo="dapo")
    at = run_page("ppo-clip.py", cispo="m1")
    moved = run_page("ppo-clip.py", eps="0.21", cispo="m1")
    assert instant_figure(at, 0.21, "ppo-clip-gradient") == charts(moved)[1]
    i = instant_table(at)["keys"].index(0.21)
    alt = instant_table(at)["rows"][i]["a"]["ppo-clip-gradient"]
    assert alt == live_alt(moved, "ppo-clip-gradient") and "no lower bound" in alt


def live_alt(at, key: str) -> str:
    import json

    return next(
        json.loads(c.proto.json)["alt"]
        for c in at.get("bidi_component")
        if c.proto.component_name == "klrl_live_chart" and json.loads(c.proto.json)["key"] == key
    )


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"epochs": "50", "lr": "10", "n": "1000"},
        {"sign": "pos", "grad": "score", "show": "none"},
    ],
    ids=["defaults", "fast-drift", "one-sign"],
)
def test_axis_ranges_are_the_same_at_every_stop(params):
    """Nothing rescales during a drag: every stop's figure has the same, explicit axis ranges,
    and PPO's curves stay inside them at every stop."""
    at = run_page("ppo-clip.py", **params)
    table = instant_table(at)
    assert len(table["keys"]) == 46 and all(r is not None for r in table["rows"])
    for key in FOLLOWED:
        ranges = {json_key(instant_figure(at, e, key), a) for e in table["keys"] for a in AXES[key]}
        assert len(ranges) == len(AXES[key]), (key, ranges)
    top = {
        a: instant_figure(at, 0.2, "ppo-clip-epochs")["layout"][a]["range"][1]
        for a in ("yaxis", "yaxis2")
    }
    for e in table["keys"]:
        for t in instant_figure(at, e, "ppo-clip-epochs")["data"]:
            if t.get("hovertemplate", "").startswith("PPO"):
                y = values(t, "y")
                assert y.min() >= 0 and y.max() <= top[t.get("yaxis", "y").replace("y", "yaxis")]


def json_key(fig: dict, axis: str) -> tuple:
    r = fig["layout"][axis].get("range")
    assert r is not None, axis
    return (axis, tuple(r))


def test_the_table_fits_in_300_kb_at_the_defaults():
    import json

    at = run_page("ppo-clip.py")
    text = json.dumps(instant_table(at), ensure_ascii=False, separators=(",", ":"))
    assert len(text.encode("utf-8")) <= 300_000


# --------------------------------------------------- review of the eleven pages (ppo-clip)
@pytest.mark.parametrize("sign, mirror", [("neg", False), ("both", True)])
def test_the_negative_advantage_is_a_mirror_image_only_beside_the_positive_one(sign, mirror):
    """Review item 16: with A = −1 alone the positive-advantage sentence is not shown, so the
    text cannot call the negative case its mirror image; it states the objective instead."""
    text = all_text(run_page("ppo-clip.py", sign=sign))
    assert ("it is the mirror image" in text) == mirror
    assert ("PPO's objective is min(ω·A, clip(ω, 0.80, 1.20)·A)" in text) != mirror
