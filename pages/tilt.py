"""Figure 12.2: the KL-regularized optimum pi* over the reference, and its frontier."""

import numpy as np
import pandas as pd

from klrl_core import square_root, tilt
from klrl_app import controls, fmt, layout, plots
from klrl_app.plots import COLORS
from klrl_app.tilt_figures import (choose_model, frontier_panel, frontier_x,
                                   is_book, policy_panel, policy_scale,
                                   response_table, scale_text)

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


def numbers_at(kappa: float) -> tuple[tilt.Tilt, list[tuple[str, str]]]:
    """The optimum at κ and the readout's items (label, value)."""
    t = tilt.tilt(b.log_pi0, b.r, kappa)
    kl, reward, log_z = float(t.kl), float(t.expected), float(t.log_z)
    items = [
        ("KL(π* ‖ π₀)", f"{fmt.fixed(kl, digits)} nats"),
        ("E[r] under π*", fmt.fixed(reward, digits)),
        ("E[r] under π₀", fmt.fixed(b.reward_pi0, digits)),
        ("β = dE[r]/dKL here", controls.beta_text(kappa)),
    ]
    if b.small:
        items += [("log Z", fmt.fixed(log_z, digits)),
                  ("κ·E[r] − log Z", f"{fmt.fixed(kappa * reward - log_z, digits)} nats")]
    return t, items


v = float(square_root.reward_variance(b.log_pi0, b.r))
law_kl = np.linspace(0.0, b.kl_max, 200)
law = square_root.sqrt_law(b.reward_pi0, v, law_kl)
law_keep = law <= float(b.r.max()) + 0.02 * float(np.ptp(b.r) or 1.0)
# One y axis for every κ (nothing rescales in a drag), readable at every κ: broken when the
# largest bar at any κ is far above what the default κ needs (tilt_figures.policy_scale).
scale = policy_scale(b, KAPPA_DEFAULT)


def view_at(kappa: float) -> layout.View:
    """The readout and both charts at κ (the browser draws this at every stop of κ)."""
    t, items = numbers_at(kappa)
    kl, reward, k_text = float(t.kl), float(t.expected), controls.kappa_text(kappa)
    policy = (policy_panel(b, t.pi, scale), (
        f"Bar chart of the {b.r.size} responses: the reference π₀ as outlines, the optimum π* "
        f"at κ = {k_text} as filled bars. The highest-reward response has probability "
        f"{fmt.sig(t.pi[np.argmax(b.r)], 3, trim=True)} under π* and "
        f"{fmt.sig(b.pi0[np.argmax(b.r)], 3, trim=True)} under π₀.{scale_text(scale)}"))
    chart = frontier_panel(b, kl, reward, kappa, axis=axis)
    chart.add(x=frontier_x(b, law_kl[law_keep], axis), y=law[law_keep], mode="lines",
              name="μ + √(2v·KL), second order", line={"color": COLORS["accent"], "width": 2,
                                                       "dash": "dash"},
              hovertemplate="second order: E[r] %{y:.3f}<extra></extra>")
    front = (chart, (
        f"Line chart of expected reward against {'√KL' if axis == 'sqrt' else 'KL'} from π₀ "
        f"for every κ, rising from {fmt.fixed(b.reward_pi0, 2)} and flattening toward {fmt.fixed(b.r.max(), 2)}, "
        f"with the second-order law μ + √(2v·KL) dashed. The current optimum is marked at KL "
        f"{fmt.fixed(kl, 2)} nats and expected reward {fmt.fixed(reward, 2)}."))
    return layout.View(items, {"tilt-policy": policy, "tilt-frontier": front})


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
t = tilt.tilt(b.log_pi0, b.r, kappa)
kl, reward, log_z = float(t.kl), float(t.expected), float(t.log_z)
k_text, beta = controls.kappa_text(kappa), controls.beta_text(kappa)

second = square_root.second_order(b.log_pi0, b.r, kappa)
left, right = page.figures()
with left:
    page.chart(view, "tilt-policy")
with right:
    page.chart(view, "tilt-frontier")

if b.small:
    response_table(page, b, {"π* (optimum)": t.pi})

top = int(np.argmax(b.r))
top_pi, top_pi0 = float(t.pi[top]), float(b.pi0[top])
if kappa == 0:
    now = ("At κ = 0 there is no reward term at all: π* is π₀, the bars fill the outlines and "
           "the point sits at the frontier's start.")
elif top_pi0 == 0:
    now = ("The highest-reward response has π₀ = 0, so π* gives it nothing at any κ: the "
           "tilt only reweights what the reference can write.")
else:
    now = (f"At κ = {k_text} the highest-reward response, which π₀ writes with probability "
           f"{fmt.prob(top_pi0)}, gets {fmt.prob(top_pi)} under π*: "
           f"{fmt.sig(top_pi / top_pi0, 3, trim=True)} times as often. Rarity protects only "
           f"logarithmically.")
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
        table = (f"the expansion's κ·v is within {fmt.pct(expansion, 1)} of the exact gain"
                 if expansion < 0.05 else
                 f"the expansion's κ·v is off by {fmt.pct(min(expansion, 9.99), 0)}"
                 f"{' or more' if expansion > 9.99 else ''}: κ is too large for a second-order "
                 f"expansion")
        drawn = (f"√(2v·KL) at the exact KL gives "
                 f"{fmt.fixed(law_gain, 4, sig_from=1000, digits=4)} against the exact "
                 f"{fmt.fixed(gain_exact, 4, sig_from=1000, digits=4)}, "
                 + ("so at this point the dashed curve lies on the frontier" if curve < 0.01
                    else "so here the frontier and the dashed curve are apart"))
        verdict = f"Here {table}; {drawn}."
    layout.paragraph(
        f"Expanding log Z to second order in κ (Exercise 12.3): the optimum gains κ·v in "
        f"expected reward at a KL of ½κ²·v, with v = {fmt.fixed(v, 4)} the variance of the reward under "
        f"π₀, so near the reference the gain is √(2v·KL), linear in d = √KL (switch the "
        f"frontier's axis under Model to see a straight start). {verdict}")


def numbers() -> None:
    df = pd.DataFrame({"response": list(b.labels), "reward r": b.r, "reference pi0": b.pi0,
                       "optimum pi*": t.pi})
    layout.table(df)
    layout.csv_download(df, f"tilt_kappa_{controls.fmt_number(kappa)}.csv", key="tilt-csv")
    fr = pd.DataFrame({"kappa": b.kappas, "KL (nats)": b.frontier.kl,
                       "expected reward": b.frontier.expected})
    layout.csv_download(fr, "tilt_frontier.csv", label="Download the frontier (CSV)",
                        key="tilt-frontier-csv")


page.details(numbers)
