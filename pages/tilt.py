"""Figure 12.2: the KL-regularized optimum pi* over the reference, and its frontier."""

import pandas as pd
import streamlit as st

from klrl_core import tilt
from klrl_app import controls, layout, plots
from klrl_app.tilt_figures import book, frontier_panel, policy_panel

slot = layout.header(
    "The KL-regularized optimum",
    "Figure 12.2 · Sections 12.3.2–12.3.3 · Equations (12.4)–(12.6)",
    "Thirty possible responses to one prompt, with rewards evenly spaced from 0 to 1. "
    "The reference π₀ rarely writes the best ones. Weaken the anchor and watch π* move.",
)
ui = controls.Controls("tilt")
kappa = ui.kappa(default=5.0)
ui.finish(slot)

b = book()
t = tilt.tilt(b.log_pi0, b.r, kappa)
kl, reward = float(t.kl), float(t.expected)

layout.readout([
    ("KL(π* ‖ π₀)", f"{layout.fmt(kl)} nats"),
    ("E[r] under π*", layout.fmt(reward)),
    ("E[r] under π₀", layout.fmt(b.reward_pi0)),
    ("β, the frontier's slope", controls.beta_text(kappa)),
], helps=[
    "Nats of divergence the optimum spends to move away from the reference (Equation 12.6).",
    "Expected reward of the optimum π*.",
    "Expected reward of the reference policy, where training starts.",
    "One more nat of KL buys about β more expected reward here (Section 12.3.3).",
])
layout.sentence(
    f"κ = {kappa:.4g} (β = {controls.beta_text(kappa)}): KL(π* ‖ π₀) = {layout.fmt(kl)} nats, "
    f"expected reward {layout.fmt(reward)} (under π₀: {layout.fmt(b.reward_pi0)})."
)

left, right = st.columns(2, gap="large")
with left:
    plots.show(policy_panel(b, t.pi), key="tilt-policy")
with right:
    plots.show(frontier_panel(b, kl, reward, kappa), key="tilt-frontier")

layout.look_for(
    "Moving κ to the right slides the blue bars toward the high-reward responses, even those "
    "π₀ gives a few in a hundred thousand: rarity only protects logarithmically. On the right, "
    "every κ is one point of the frontier; no policy with the same KL earns more reward. The "
    "curve flattens because its slope is β: each extra nat of divergence buys less reward."
)

with st.expander("The numbers behind the figure"):
    df = pd.DataFrame({"reward r": b.r, "reference pi0": b.pi0, "optimum pi*": t.pi})
    layout.table(df)
    layout.csv_download(df, f"tilt_kappa_{controls.fmt_number(kappa)}.csv", key="tilt-csv")
    fr = pd.DataFrame({"kappa": b.kappas, "KL (nats)": b.frontier.kl,
                       "expected reward": b.frontier.expected})
    layout.csv_download(fr, "tilt_frontier.csv", label="Download the frontier (CSV)",
                        key="tilt-frontier-csv")
