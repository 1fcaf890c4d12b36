"""Figure 12.5: the optimum for a proxy reward, scored by a true reward that disagrees at the top."""

import pandas as pd

from klrl_core import tilt
from klrl_app import controls, layout, plots
from klrl_app.plots import COLORS
from klrl_app.tilt_figures import add_reward_strip, book, frontier_panel, policy_panel

page = layout.Page(
    "overoptimization", "Overoptimizing a proxy", "Figure 12.5 · Section 12.8.1",
    "Read the reward as a proxy: it matches the true reward where π₀ writes most of its "
    "responses and overrates the rare ones at the top (above r = 0.5 the true reward bends "
    "down). The optimum follows the proxy.",
)
ui = page.ui
kappa = ui.kappa(default=20.0)
page.finish_controls()

b = book()
t = tilt.tilt(b.log_pi0, b.r, kappa)
kl, proxy, true = float(t.kl), float(t.expected), float(tilt.expected_under(t.pi, b.r_true))
peak_true = float(tilt.expected_under(b.peak.pi, b.r_true))
peak_kl = float(b.peak.kl)

k_text = controls.kappa_text(kappa)
page.readout([
    ("KL(π* ‖ π₀)", f"{layout.fmt(kl)} nats"),
    ("proxy E[r]", layout.fmt(proxy)),
    ("true E[r*]", layout.fmt(true)),
    ("true reward's peak", f"{layout.fmt(peak_true)} at {layout.fmt(peak_kl, 1)} nats"),
], helps=[
    "divergence of the optimum from the reference.",
    "expected proxy reward, the quantity the optimum maximizes (minus β·KL).",
    "expected true reward of the same policy.",
    f"the best true reward anywhere on the frontier, reached at κ = {b.peak_kappa:.1f}.",
])

left, right = page.figures()
with left:
    chart = policy_panel(b, t.pi, height=430)
    chart.update(xaxis={"title": {"text": "responses, in order of proxy reward r"}})
    add_reward_strip(chart, b)
    plots.show(chart, key="over-policy", alt=(
        f"Bar chart of the 30 responses in order of proxy reward: π* at κ = {k_text} over the "
        f"outline of π₀, and below it each response's proxy reward (dots) and true reward "
        f"(dashed), which bends down above r = 0.5. π* puts {layout.pct(t.pi[b.r > 0.5].sum())} "
        f"of its probability above r = 0.5."))
with right:
    chart = frontier_panel(b, kl, proxy, kappa, height=430)
    plots.merge(chart.data[0], {"name": "proxy r", "line": {"color": COLORS["proxy"]}})
    plots.merge(chart.data[-1], {"name": f"κ = {k_text}, proxy",
                                 "marker": {"color": COLORS["proxy"]}})
    chart.add(x=b.frontier.kl, y=b.frontier_true, mode="lines", name="true r*",
              line={"color": COLORS["true"], "dash": "dash", "width": 2.5},
              hovertemplate="KL %{x:.2f} nats<br>E[r*] %{y:.3f}<extra></extra>")
    chart.add(x=[kl], y=[true], mode="markers", name=f"κ = {k_text}, true",
              marker={"color": COLORS["true"], "size": 13, "line": {"color": "white", "width": 2}},
              hovertemplate="KL %{x:.2f} nats<br>E[r*] %{y:.3f}<extra>current π*</extra>")
    chart.note(peak_kl, peak_true, f"peak {layout.fmt(peak_true)}", COLORS["true"])
    plots.show(chart, key="over-frontier", alt=(
        f"Expected proxy and true reward against KL from π₀ along the optimum: the proxy rises "
        f"toward 1, the true reward peaks at {peak_true:.2f} at {peak_kl:.1f} nats and falls. "
        f"Current point: KL {kl:.2f} nats, proxy {proxy:.2f}, true {true:.2f}."))

if kl < peak_kl - 0.05:
    where = (f"At {layout.fmt(kl)} nats the optimum is still before the peak: more proxy reward "
             f"still buys more true reward, up to {layout.fmt(peak_true)} at "
             f"{layout.fmt(peak_kl, 1)} nats.")
elif kl <= peak_kl + 0.05:
    where = (f"At {layout.fmt(kl)} nats the optimum sits at the true reward's peak: this is the "
             f"best stopping point along the frontier.")
else:
    where = (f"At {layout.fmt(kl)} nats the optimum is past the peak: the proxy says "
             f"{layout.fmt(proxy)}, the true reward has fallen from {layout.fmt(peak_true)} to "
             f"{layout.fmt(true)}. The extra KL is spent on the rare top responses, where the "
             f"proxy is wrong.")
page.explain(
    f"{where} Along the frontier the proxy curve only climbs, while the dashed true reward "
    "rises, peaks and falls. Nothing in Equation (12.4) knows about r*: the KL penalty limits "
    "how far the policy moves, not which way the proxy's errors point."
)


def numbers() -> None:
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


page.details(numbers)
