"""Figure 12.2: the KL-regularized optimum pi* over the reference, and its frontier."""

import math

import numpy as np
import pandas as pd

from klrl_core import square_root, tilt
from klrl_app import controls, fmt, layout
from klrl_app.tilt_figures import (choose_model, is_book, policy_scale, response_table,
                                   tilt_charts, tilt_details, top_responses)

KAPPA_DEFAULT = 5.0

page = layout.Page(
    "tilt", "The KL-regularized optimum",
    "Figure 12.2 · Sections 12.3.2–12.3.3 · Equations (12.4)–(12.6) · Exercises 12.1, 12.3",
    "The book's model: thirty possible responses to one prompt, with rewards evenly spaced "
    "from 0 to 1, and a reference policy π₀ that rarely writes the best ones. The optimum π* "
    "reweights π₀ by exp(κ·r), κ = 1/β: weaken the anchor (raise κ) and watch π* move. The "
    "Model button swaps in the chapter's small examples or lists of your own.",
)
ui = page.ui
c_kappa, c_model = page.control_row([3, 1])
with c_kappa:
    kappa = ui.kappa(default=KAPPA_DEFAULT)
with c_model:
    b, axis = choose_model(ui)
page.finish_controls()

if not is_book(b):
    page.lead = (f"{b.name}: {b.r.size} responses with the reference probabilities π₀ and "
                 f"rewards r of the table below. The optimum π* reweights π₀ by exp(κ·r), "
                 f"κ = 1/β: raise κ and watch π* move toward the high rewards.")
digits = 2 if is_book(b) else 3   # the chapter's precision on its own model
t = tilt.tilt(b.log_pi0, b.r, kappa)                   # the optimum at this run's κ
kl, reward = float(t.kl), float(t.expected)
# One y axis for every κ (nothing rescales in a drag), readable at every κ: broken when the
# largest bar at any κ is far above what the default κ needs (tilt_figures.policy_scale).
scale = policy_scale(b, KAPPA_DEFAULT)


def view_at(k: float) -> layout.View:
    """The readout and both charts at κ = k (the browser draws this at every stop of κ)."""
    t_k = t if k == kappa else tilt.tilt(b.log_pi0, b.r, k)    # this run's, computed once
    reward_k, log_z = float(t_k.expected), float(t_k.log_z)
    items = [
        ("KL(π* ‖ π₀)", f"{fmt.fixed(float(t_k.kl), digits, min_sig=1)} nats"),
        *zip(("E[r] under π*", "E[r] under π₀"), fmt.apart(reward_k, b.reward_pi0, digits)),
        ("β = dE[r]/dKL here", controls.beta_text(k)),
    ]
    if b.small:
        items += [("log Z", fmt.fixed(log_z, digits)),
                  ("κ·E[r] − log Z", f"{fmt.fixed(k * reward_k - log_z, digits)} nats")]
    return layout.View(items, tilt_charts(b, t_k, k, axis, scale))


helps = [
    "nats of divergence the optimum spends to move away from the reference (Equation 12.6).",
    "expected reward of the optimum π*.",
    "expected reward of the reference policy, where training starts.",
    "the frontier's slope against KL at the current point: one more nat of KL buys about β "
    "more expected reward (Section 12.3.3). Against √KL the slope is 2β·√KL.",
]
if b.small:
    helps += ["log of the normaliser Z = Σ π₀(y)·exp(κ·r(y)) (Equation 12.4).",
              "Equation 12.6: the KL computed from the reward and log Z; it equals the KL."]
view = page.follow(layout.Instant("kappa", view_at, setting=(b.key, axis, scale)), helps)
left, right = page.figures()
with left:
    page.chart(view, "tilt-policy")
with right:
    page.chart(view, "tilt-frontier")

if b.small:
    response_table(page, b, {"π* (optimum)": t.pi})

tops, others = top_responses(b)
top_pi, top_pi0 = float(t.pi[tops].sum()), float(b.pi0[tops].sum())
k_text = controls.kappa_text(kappa)
# All of π*'s mass on the top (κ → ∞) costs only −log π₀(top) nats: rarity under π₀ protects
# a response only logarithmically (Section 12.3). Said where the top is rare under π₀.
RARE = 0.01
cost = (f" Rarity protects only logarithmically: even all of the mass on "
        f"{'it' if tops.size == 1 else 'them'} (the limit κ → ∞) costs only "
        f"−log π₀ = {fmt.fixed(-math.log(top_pi0), 2)} nats of KL."
        if 0 < top_pi0 < RARE else "")
if kappa == 0:
    now = ("At κ = 0 there is no reward term at all: π* is π₀, the bars fill the outlines and "
           "the point sits at the frontier's start.")
elif top_pi0 == 0:
    now = (("The highest-reward response has" if tops.size == 1 else
            f"The {tops.size} responses tied for the highest reward have")
           + " π₀ = 0, so π* gives nothing to "
           + ("it" if tops.size == 1 else "them") + " at any κ: the tilt only reweights what "
           "the reference can write.")
elif tops.size == 1:
    now = (f"At κ = {k_text} the highest-reward response, which π₀ writes with probability "
           f"{fmt.prob(top_pi0, digits=3)}, gets {fmt.prob(top_pi, digits=3, below_one=others)} under π*: "
           f"{fmt.sig(top_pi / top_pi0, 3, trim=True)} times as often.{cost}")
else:
    now = (f"At κ = {k_text} the {tops.size} responses tied for the highest reward, which π₀ "
           f"writes with probability {fmt.prob(top_pi0, digits=3)} together, get "
           f"{fmt.prob(top_pi, digits=3, below_one=others)} under π*: each "
           f"{fmt.sig(top_pi / top_pi0, 3, trim=True)} times as often, since the tilt "
           f"multiplies every response by exp(κ·r)/Z and theirs share one r; so π* keeps "
           f"their ratio to one another from π₀.{cost}")
page.explain(
    f"{now} Move κ to the right and the filled bars slide toward the high-reward responses. "
    "On the right every κ is one point of the frontier: no policy with the same KL earns more "
    "expected reward. "
    + ("Against KL the curve flattens because its slope is β, so each further nat of "
       "divergence buys less reward." if axis == "kl" else
       "On the √KL axis the curve starts as a straight line (the square-root law below) and "
       "bends over later; against KL its slope is β, so each further nat buys less reward.")
)

if page.section("Near the reference: the square-root law"):
    second = square_root.second_order(b.log_pi0, b.r, kappa)
    v = float(square_root.reward_variance(b.log_pi0, b.r))
    gain_exact = reward - b.reward_pi0
    law_gain = float(square_root.sqrt_law(0.0, v, kl))       # √(2v·KL) at the exact KL
    layout.small_table(pd.DataFrame({
        "quantity": ["gain in expected reward", "KL(π* ‖ π₀) (nats)"],
        "second order": [float(second.gain), float(second.kl)],
        "exact": [gain_exact, kl],
    }), {c: lambda v: fmt.fixed(v, 4, sig_from=1000, digits=4) for c in ("second order", "exact")})
    if kappa == 0 or gain_exact <= 0:
        verdict = "At κ = 0 both are zero." if kappa == 0 else "Here the optimum gains nothing."
    else:
        expansion = abs(float(second.gain) - gain_exact) / gain_exact
        # against the reward's range: what the eye sees between the two curves
        curve = abs(law_gain - gain_exact) / (float(np.ptp(b.r)) or 1.0)
        ratio = float(second.gain) / gain_exact
        table = (f"the expansion's κ·v is within {fmt.pct(expansion, 1)} of the exact gain"
                 if expansion < 0.05 else
                 f"the expansion's κ·v is off by {fmt.pct(expansion, 0)}"
                 if expansion < 9.99 else
                 f"the expansion's κ·v is {fmt.sig(ratio, 3)} times the exact gain")
        if expansion >= 0.05:
            table += ": κ is too large for a second-order expansion"
        law_text, exact_text = (fmt.fixed(g, 4, sig_from=1000, digits=4)
                                for g in (law_gain, gain_exact))
        drawn = ((f"√(2v·KL) at the exact KL gives {law_text} against the exact {exact_text}, "
                  if law_text != exact_text else
                  f"√(2v·KL) at the exact KL gives the exact gain, {exact_text}, to the "
                  f"digits shown, ")
                 + ("so at this point the dashed curve lies on the frontier" if curve < 0.01
                    else "so here the frontier and the dashed curve are apart"))
        verdict = f"Here {table}; {drawn}."
    layout.paragraph(
        f"Expanding log Z to second order in κ (Exercise 12.3): the optimum gains κ·v in "
        f"expected reward at a KL of ½κ²·v, with v = {fmt.fixed(v, 4)} the variance of the reward under "
        f"π₀, so near the reference the gain is √(2v·KL), linear in d = √KL (switch the "
        f"frontier's axis under Model to see a straight start). {verdict}")


page.details(lambda: tilt_details(b, t.pi, kappa))
