"""Figure 12.3: exact best-of-n beside the optimum pi* at the same KL."""

import numpy as np
import pandas as pd
import streamlit as st

from klrl_core import best_of_n, tilt
from klrl_app import controls, layout, plots
from klrl_app.tilt_figures import (add_best_of_n_dots, add_best_of_n_ladder, book,
                                   frontier_panel, policy_panel)

slot = layout.header(
    "Best-of-n against the optimum",
    "Figure 12.3 · Section 12.5 · Equation (12.8)",
    "Draw n responses from π₀ and keep the one with the highest reward. Here is that policy, "
    "computed exactly, beside the optimum π* that spends the same KL.",
)
ui = controls.Controls("best-of-n")
left_ctl, right_ctl = st.columns([3, 1], gap="medium", vertical_alignment="bottom")
with left_ctl:
    kappa = ui.kappa(default=20.0)
with right_ctl:
    chosen_n = ui.optional_integer(
        "n", "Number of draws n", 1, best_of_n.N_MAX, when_empty="the KL-matched n",
        help="Leave empty to use the n whose exact KL is closest to the optimum's. "
             "Any n from 1 to 10,000,000 is computed exactly.")
ui.finish(slot)

b = book()
t = tilt.tilt(b.log_pi0, b.r, kappa)
n = chosen_n if chosen_n is not None else best_of_n.matched_n(b.log_pi0, b.r, float(t.kl))
bon = best_of_n.best_of_n(b.log_pi0, b.r, n)
kl_t, reward_t = float(t.kl), float(t.expected)
kl_n, reward_n, bound = float(bon.kl), float(bon.expected), float(bon.bound)
how = "chosen" if chosen_n is not None else "KL-matched"

layout.readout([
    ("π*: KL", f"{layout.fmt(kl_t)} nats"),
    ("π*: E[r]", layout.fmt(reward_t)),
    (f"n ({how})", f"{n:,}"),
    (f"best-of-{n:,}: KL", f"{layout.fmt(kl_n)} nats"),
    ("log n − (n−1)/n", f"{layout.fmt(bound)} nats"),
    (f"best-of-{n:,}: E[r]", layout.fmt(reward_n)),
], helps=[
    "KL divergence of the optimum from π₀ at this κ.",
    "Expected reward of the optimum.",
    "Leave the n box empty for the integer n whose exact KL is closest to the optimum's.",
    "Exact KL(πₙ ‖ π₀), computed from πₙ = F(y)ⁿ − F⁻(y)ⁿ.",
    "The folklore formula: exact only for continuous rewards, an upper bound here (Eq. 12.8).",
    "Expected reward of best-of-n; never above the optimum's at the same KL.",
])
top = int(np.argmax(bon.pi))
layout.sentence(
    f"κ = {kappa:.4g} (β = {controls.beta_text(kappa)}): the optimum has KL {layout.fmt(kl_t)} "
    f"nats and expected reward {layout.fmt(reward_t)}. Best-of-{n:,}: KL {layout.fmt(kl_n)} "
    f"nats (the formula log n − (n−1)/n gives {layout.fmt(bound)}), expected reward "
    f"{layout.fmt(reward_n)}. Its likeliest response (r = {b.r[top]:.2f}) gets "
    f"{layout.pct(bon.pi[top])}; the best response gets {layout.pct(bon.pi[-1], 1)} "
    f"under best-of-{n:,} and {layout.pct(t.pi[-1], 1)} under π*."
)

left, right = st.columns(2, gap="large")
with left:
    chart = policy_panel(b, t.pi)
    add_best_of_n_dots(chart, b, bon.pi, n)
    plots.show(chart, key="bon-policy")
with right:
    chart = frontier_panel(b, kl_t, reward_t, kappa)
    add_best_of_n_ladder(chart, b, n, kl_n, reward_n)
    plots.show(chart, key="bon-frontier")

layout.look_for(
    "The green dots pile up just below the top: a batch of n draws from π₀ rarely contains "
    "the very best responses, so best-of-n can only return what its draws hold, while the "
    "optimum's weight exp(κr) keeps growing to the top of the scale. On the right, every "
    "best-of-n sits on or below the frontier, which no policy can cross. Type an n to see "
    "where the folklore formula drifts from the exact KL: it is an upper bound, loose "
    "once the draws often repeat a response."
)

with st.expander("The numbers behind the figure"):
    df = pd.DataFrame({"reward r": b.r, "reference pi0": b.pi0, "optimum pi*": t.pi,
                       f"best-of-{n} pi_n": bon.pi})
    layout.table(df)
    layout.csv_download(df, f"best_of_n_kappa_{controls.fmt_number(kappa)}_n_{n}.csv",
                        key="bon-csv")
    ladder = pd.DataFrame({"n": b.ladder_n.astype(int), "exact KL (nats)": b.ladder.kl,
                           "log n - (n-1)/n": b.ladder.bound, "expected reward": b.ladder.expected})
    layout.csv_download(ladder, "best_of_n_ladder.csv", label="Download the n = 1 … 2¹⁷ points (CSV)",
                        key="bon-ladder-csv")
