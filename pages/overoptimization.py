"""Figure 12.5: the optimum for a proxy reward, scored by a true reward that disagrees at the top."""

import pandas as pd
import streamlit as st

from klrl_core import tilt
from klrl_app import controls, layout, plots
from klrl_app.plots import COLORS
from klrl_app.tilt_figures import add_reward_strip, book, frontier_panel, policy_panel

slot = layout.header(
    "Overoptimizing a proxy",
    "Figure 12.5 · Section 12.8.1",
    "Read the reward as a proxy: it matches the true reward where π₀ writes most of its "
    "responses and overrates the rare ones at the top. The optimum follows the proxy.",
)
ui = controls.Controls("overoptimization")
kappa = ui.kappa(default=20.0)
ui.finish(slot)

b = book()
t = tilt.tilt(b.log_pi0, b.r, kappa)
kl, proxy, true = float(t.kl), float(t.expected), float(tilt.expected_under(t.pi, b.r_true))
peak_true = float(tilt.expected_under(b.peak.pi, b.r_true))
peak_kl = float(b.peak.kl)

layout.readout([
    ("KL(π* ‖ π₀)", f"{layout.fmt(kl)} nats"),
    ("proxy E[r]", layout.fmt(proxy)),
    ("true E[r*]", layout.fmt(true)),
    ("true reward's peak", f"{layout.fmt(peak_true)} at {layout.fmt(peak_kl, 1)} nats"),
], helps=[
    "Divergence of the optimum from the reference.",
    "Expected proxy reward, the quantity the optimum maximizes (minus β·KL).",
    "Expected true reward of the same policy.",
    f"The best true reward anywhere on the frontier, reached at κ = {b.peak_kappa:.1f}.",
])
layout.sentence(
    f"κ = {kappa:.4g} (β = {controls.beta_text(kappa)}): KL {layout.fmt(kl)} nats, expected "
    f"proxy reward {layout.fmt(proxy)}, expected true reward {layout.fmt(true)}. The true "
    f"reward peaks at {layout.fmt(peak_true)} when the KL is {layout.fmt(peak_kl, 1)} nats."
)

left, right = st.columns(2, gap="large")
with left:
    chart = policy_panel(b, t.pi, height=430)
    chart.update(xaxis={"title": {"text": "responses, in order of proxy reward r"}})
    add_reward_strip(chart, b)
    plots.show(chart, key="over-policy")
with right:
    chart = frontier_panel(b, kl, proxy, kappa, height=430)
    plots.merge(chart.data[0], {"name": "proxy r", "line": {"color": COLORS["proxy"]}})
    plots.merge(chart.data[-1], {"name": f"κ = {kappa:.4g}, proxy",
                                 "marker": {"color": COLORS["proxy"]}})
    chart.add(x=b.frontier.kl, y=b.frontier_true, mode="lines", name="true r*",
              line={"color": COLORS["true"], "dash": "dash", "width": 2.5},
              hovertemplate="KL %{x:.2f} nats<br>E[r*] %{y:.3f}<extra></extra>")
    chart.add(x=[kl], y=[true], mode="markers", name=f"κ = {kappa:.4g}, true",
              marker={"color": COLORS["true"], "size": 13, "line": {"color": "white", "width": 2}},
              hovertemplate="KL %{x:.2f} nats<br>E[r*] %{y:.3f}<extra>current π*</extra>")
    chart.note(peak_kl, peak_true, f"peak {layout.fmt(peak_true)}", COLORS["true"])
    plots.show(chart, key="over-frontier")

layout.look_for(
    "As κ grows the orange proxy curve keeps climbing toward 1, but the dashed true reward "
    "rises, peaks and falls: past a few nats the optimum buys proxy reward on the rare "
    "responses where the proxy is wrong. Nothing in Equation (12.4) knows about r*; the KL "
    "penalty limits how far the policy moves, not which way the proxy's errors point."
)

with st.expander("The numbers behind the figure"):
    df = pd.DataFrame({"proxy reward r": b.r, "true reward r*": b.r_true,
                       "reference pi0": b.pi0, "optimum pi*": t.pi})
    layout.table(df)
    layout.csv_download(df, f"overoptimization_kappa_{controls.fmt_number(kappa)}.csv",
                        key="over-csv")
    fr = pd.DataFrame({"kappa": b.kappas, "KL (nats)": b.frontier.kl,
                       "expected proxy reward": b.frontier.expected,
                       "expected true reward": b.frontier_true})
    layout.csv_download(fr, "overoptimization_frontier.csv",
                        label="Download both curves (CSV)", key="over-frontier-csv")
