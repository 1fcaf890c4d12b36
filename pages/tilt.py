"""Figure 12.2: the KL-regularized optimum pi* over the reference, and its frontier."""

import pandas as pd

from klrl_core import tilt
from klrl_app import controls, layout, plots
from klrl_app.tilt_figures import book, frontier_panel, policy_panel

page = layout.Page(
    "tilt", "The KL-regularized optimum",
    "Figure 12.2 · Sections 12.3.2–12.3.3 · Equations (12.4)–(12.6)",
    "Thirty possible responses to one prompt, with rewards evenly spaced from 0 to 1. The "
    "reference policy π₀ rarely writes the best ones. The optimum π* reweights π₀ by "
    "exp(κ·r), κ = 1/β: weaken the anchor (raise κ) and watch π* move.",
)
ui = page.ui
kappa = ui.kappa(default=5.0)
page.finish_controls()

b = book()
t = tilt.tilt(b.log_pi0, b.r, kappa)
kl, reward = float(t.kl), float(t.expected)
k_text, beta = controls.kappa_text(kappa), controls.beta_text(kappa)

page.readout([
    ("KL(π* ‖ π₀)", f"{layout.fmt(kl)} nats"),
    ("E[r] under π*", layout.fmt(reward)),
    ("E[r] under π₀", layout.fmt(b.reward_pi0)),
    ("β, the frontier's slope", beta),
], helps=[
    "nats of divergence the optimum spends to move away from the reference (Equation 12.6).",
    "expected reward of the optimum π*.",
    "expected reward of the reference policy, where training starts.",
    "at the current point one more nat of KL buys about β more expected reward "
    "(Section 12.3.3).",
])

left, right = page.figures()
with left:
    plots.show(policy_panel(b, t.pi), key="tilt-policy", alt=(
        f"Bar chart of the 30 responses by reward: the reference π₀ as outlines, the optimum π* "
        f"at κ = {k_text} as filled bars. The best response has probability "
        f"{t.pi[-1]:.2g} under π* and {b.pi0[-1]:.2g} under π₀."))
with right:
    plots.show(frontier_panel(b, kl, reward, kappa), key="tilt-frontier", alt=(
        f"Line chart of expected reward against KL from π₀ for every κ, rising from "
        f"{b.reward_pi0:.2f} at KL 0 and flattening toward 1. The current optimum is marked at "
        f"KL {kl:.2f} nats and expected reward {reward:.2f}."))

top_pi, top_pi0 = float(t.pi[-1]), float(b.pi0[-1])
if kappa == 0:
    now = ("At κ = 0 there is no reward term at all: π* is π₀, the bars fill the outlines and "
           "the point sits at the frontier's start.")
else:
    now = (f"At κ = {k_text} the best response, which π₀ writes with probability "
           f"{top_pi0:.1e}, gets {top_pi:.2g} under π*: {top_pi / top_pi0:,.3g} times more. "
           f"Rarity protects only logarithmically.")
page.explain(
    f"{now} Move κ to the right and the filled bars slide toward the high-reward responses. "
    "On the right every κ is one point of the frontier: no policy with the same KL earns more "
    "expected reward. The curve flattens because its slope is β, so each further nat of "
    "divergence buys less reward."
)


def numbers() -> None:
    df = pd.DataFrame({"reward r": b.r, "reference pi0": b.pi0, "optimum pi*": t.pi})
    layout.table(df)
    layout.csv_download(df, f"tilt_kappa_{controls.fmt_number(kappa)}.csv", key="tilt-csv")
    fr = pd.DataFrame({"kappa": b.kappas, "KL (nats)": b.frontier.kl,
                       "expected reward": b.frontier.expected})
    layout.csv_download(fr, "tilt_frontier.csv", label="Download the frontier (CSV)",
                        key="tilt-frontier-csv")


page.details(numbers)
