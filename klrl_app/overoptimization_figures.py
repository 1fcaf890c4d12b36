"""The overoptimization page's figures (Figure 12.5, Section 12.8.1): π* over π₀ with each
response's proxy and true reward below it, the frontier of the proxy and of the true reward
with the current π*, and Gao et al.'s forms fitted to the model's exact curves, each with its
text alternative; and the numbers behind them. pages/overoptimization.py wires them."""

from __future__ import annotations

import numpy as np
import pandas as pd

from klrl_app import controls, fmt, layout, plots
from klrl_app.plots import COLORS, Chart
from klrl_app.tilt_figures import (
    Book,
    GaoCurves,
    Scale,
    add_reward_strip,
    frontier_panel,
    frontier_x,
    policy_panel,
    scale_text,
)
from klrl_core import tilt


def peak(b: Book) -> tuple[float, float]:
    """The true reward's peak along the frontier and the KL where it is reached."""
    return float(tilt.expected_under(b.peak.pi, b.r_true)), float(b.peak.kl)


def policy_chart(b: Book, pi: np.ndarray, kappa: float, scale: Scale) -> tuple[Chart, str]:
    """π* at κ over π₀, and below it each response's proxy reward and true reward."""
    chart = policy_panel(b, pi, scale, height=430)
    if not b.small:
        chart.update(xaxis={"title": {"text": "responses, in order of proxy reward r"}})
    add_reward_strip(chart, b)
    return chart, (
        f"Bar chart of the {b.r.size} responses: π* at κ = {controls.kappa_text(kappa)} over "
        f"the outline of π₀, and below it each response's proxy reward (dots) and true reward "
        f"(dashed). π* puts {fmt.pct(pi[b.r_true < b.r].sum())} of its probability on "
        f"responses whose true reward is below their proxy reward.{scale_text(scale)}"
    )


def frontier_chart(
    b: Book, kappa: float, kl: float, proxy: float, true: float, axis: str, digits: int
) -> tuple[Chart, str]:
    """Expected proxy and true reward against KL along the optimum, with π* at κ on both and
    the true reward's peak marked (at ``digits`` decimals)."""
    k_text = controls.kappa_text(kappa)
    x_unit = "√KL %{x:.2f} √nats" if axis == "sqrt" else "KL %{x:.2f} nats"
    peak_true, peak_kl = peak(b)
    chart = frontier_panel(b, kl, proxy, kappa, height=430, axis=axis)
    plots.merge_into(chart.data[0], {"name": "proxy r", "line": {"color": COLORS["proxy"]}})
    plots.merge_into(
        chart.data[-1], {"name": f"κ = {k_text}, proxy", "marker": {"color": COLORS["proxy"]}}
    )
    chart.add(
        x=frontier_x(b, b.frontier.kl, axis),
        y=b.frontier_true,
        mode="lines",
        name="true r*",
        line={"color": COLORS["true"], "dash": "dash", "width": 2.5},
        hovertemplate=f"{x_unit}<br>E[r*] %{{y:.3f}}<extra></extra>",
    )
    chart.add(
        x=frontier_x(b, [kl], axis),
        y=[true],
        mode="markers",
        name=f"κ = {k_text}, true",
        marker={"color": COLORS["true"], "size": 13, "line": {"color": "white", "width": 2}},
        hovertemplate=f"{x_unit}<br>E[r*] %{{y:.3f}}<extra>current π*</extra>",
    )
    # The model's ranges (frontier_panel's, lowered to the true curve's minimum): the same
    # at every κ.
    lo = min(float(b.frontier_true.min()), float(chart.layout["yaxis"]["range"][0]))
    chart.update(
        yaxis={"range": [lo - 0.03 * float(np.ptp(b.r) or 1.0), chart.layout["yaxis"]["range"][1]]}
    )
    chart.note(
        float(frontier_x(b, peak_kl, axis)),
        peak_true,
        f"peak {fmt.fixed(peak_true, digits)}",
        COLORS["true"],
    )
    return chart, (
        f"Expected proxy and true reward against KL from π₀ along the optimum: the proxy rises "
        f"toward 1, the true reward peaks at {fmt.fixed(peak_true, 2)} at "
        f"{fmt.fixed(peak_kl, 1)} nats and falls. Current point: KL {fmt.fixed(kl, 2)} nats, "
        f"proxy {fmt.fixed(proxy, 2)}, true {fmt.fixed(true, 2)}."
    )


def gao_chart(g: GaoCurves) -> tuple[Chart, str]:
    """The true reward's exact gain over π₀ against d = √KL along best-of-n and along the
    tilt, each with Gao et al.'s form fitted to it by least squares."""
    chart = Chart("d = √KL from π₀ (√nats)", "true reward gain over π₀", height=380)
    for curve, fit, name, color, form in (
        (g.bon, g.bon_fit, "best-of-n", COLORS["best_of_n"], "d(α − γ·d)"),
        (g.rl, g.rl_fit, "the tilt (RL)", COLORS["optimum"], "d(α − γ·log d)"),
    ):
        chart.add(
            x=curve.d,
            y=curve.gain,
            mode="lines",
            name=f"{name}, exact",
            line={"color": color, "width": 3},
            hovertemplate=f"{name}: d %{{x:.2f}}, gain %{{y:.3f}}<extra></extra>",
        )
        chart.add(
            x=curve.d,
            y=fit.fitted,
            mode="lines",
            name=f"{form}: α = {fmt.fixed(fit.alpha, 3)}, γ = {fmt.fixed(fit.beta, 3)}",
            line={"color": color, "width": 2, "dash": "dot"},
            hovertemplate=f"fitted {form}: %{{y:.3f}}<extra></extra>",
        )
    chart.hline(0.0, COLORS["neutral"])
    return chart, (
        f"Line chart of the true reward's gain over π₀ against d = √KL: exact along best-of-n "
        f"and along the tilt, each with Gao et al.'s form fitted by least squares "
        f"(best-of-n: α {fmt.fixed(g.bon_fit.alpha, 3)}, γ {fmt.fixed(g.bon_fit.beta, 3)}, "
        f"R² {fmt.fixed(g.bon_fit.r2, 2)}; tilt: α {fmt.fixed(g.rl_fit.alpha, 3)}, "
        f"γ {fmt.fixed(g.rl_fit.beta, 3)}, R² {fmt.fixed(g.rl_fit.r2, 2)})."
    )


def details(b: Book, pi: np.ndarray, kappa: float) -> None:
    """The numbers behind the figures: the table per response and two downloads (it, and
    both frontier curves)."""
    df = pd.DataFrame(
        {
            "response": list(b.labels),
            "proxy reward r": b.r,
            "true reward r*": b.r_true,
            "reference pi0": b.pi0,
            "optimum pi*": pi,
        }
    )
    layout.table(df)
    layout.csv_download(
        df, f"overoptimization_kappa_{controls.fmt_number(kappa)}.csv", key="over-csv"
    )
    fr = pd.DataFrame(
        {
            "kappa": b.kappas,
            "KL (nats)": b.frontier.kl,
            "expected proxy reward": b.frontier.expected,
            "expected true reward": b.frontier_true,
        }
    )
    layout.csv_download(
        fr,
        "overoptimization_frontier.csv",
        label="Download both curves (CSV)",
        key="over-frontier-csv",
    )
