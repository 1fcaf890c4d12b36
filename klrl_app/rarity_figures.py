"""The rarity page's figures (Section 12.3.3, Equation 12.7): π*(y₁) against β with both
thresholds, and the reward gap y₁ needs against its reference probability, each with its text
alternative; the axes they share across every stop of p₀; and the tables of Example 12.1 and of
the reference resets. pages/rarity.py wires them."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from klrl_app import controls, fmt, layout
from klrl_app.plots import COLORS, Chart
from klrl_core import rarity as core
from klrl_core import tilt

BOUND_COLOR = COLORS["reference"]
EXACT_COLOR = COLORS["optimum"]
BAND = "rgba(59, 130, 246, 0.13)"
RARER = 1000.0  # "a thousand times rarer"
OFF_TOP = 3.0
LN10 = math.log(10)  # natural logs to base-10 logs, for fmt.pow10
EXAMPLE_BETAS = (0.5, 0.1, 0.01, 0.001)
RESETS = (1, 2, 4, 26)  # 26: DeepSeek-R1-Zero's 10,400 steps / 400 between resets


def threshold_text(b: float) -> str:
    return fmt.fixed(b, 4, min_sig=3, sig_from=100, digits=3)


def padded(lo: float, hi: float) -> list[float]:
    """A log axis range from lo to hi with 6% to spare at each end, so a decade tick at the
    start does not sit on the y axis's "0"."""
    a, b_ = math.log10(lo), math.log10(hi)
    return [a - 0.06 * (b_ - a), b_ + 0.06 * (b_ - a)]


@dataclass(frozen=True)
class Axes:
    """What both charts keep fixed while p₀ moves: the β grid and its range, the p₀ grid, the
    gap lines on it and the gap chart's top."""

    b_lo: float
    b_hi: float
    betas: np.ndarray
    decades: list
    p_lo: float
    p_hi: float
    p0s: np.ndarray
    need_exact: np.ndarray
    need_bound: np.ndarray
    top: float
    star_off: bool
    pdec: list


def axes(p0_stops: list[float], delta: float, beta: float, p0_lo: float, p0_hi: float) -> Axes:
    # Two decades either side of β and of the thresholds at every stop of p₀ (the fall from 1
    # to p₀ happens within a factor of a few in β, and a wider axis would make it a cliff);
    # the same range at every stop, so nothing rescales while p₀ is dragged.
    thr_all = [
        float(t)
        for q in p0_stops
        for t in (core.exact_threshold(q, delta), core.bound_threshold(q, delta))
        if math.isfinite(t)
    ]
    b_lo = min([beta] + thr_all) / 100
    b_hi = max([beta] + thr_all) * 100
    # 250 points: smooth on the log axis, and the table of every stop within its budget.
    betas = np.logspace(math.log10(b_lo), math.log10(b_hi), 250)
    decades = [
        10.0**e for e in range(math.ceil(math.log10(b_lo)), math.floor(math.log10(b_hi)) + 1)
    ]
    # The gap panel reaches a thousand times below the rarest stop: its curves depend on β
    # alone.
    p_lo = min(p0_lo, p0_stops[0] / RARER)
    p0s = np.logspace(math.log10(p_lo), math.log10(p0_hi), 300)
    need_exact = beta / np.asarray(core.exact_threshold(p0s, 1.0))  # β·log((1 − p₀)/p₀)
    need_bound = beta / np.asarray(core.bound_threshold(p0s, 1.0))  # β·log(1/p₀)
    # The y axis holds the lines; a Δ far above them (review item 13: Δ = 10 over lines below
    # 0.004 left them flat on the floor) is drawn at the top edge, marked as off the chart.
    lines_top = float(need_bound.max())
    top = max(lines_top, delta if delta <= OFF_TOP * lines_top else 0.0) * 1.08
    pdec = [10.0**e for e in range(math.ceil(math.log10(p_lo)), 0, 3)]
    return Axes(
        b_lo, b_hi, betas, decades, p_lo, p0_hi, p0s, need_exact, need_bound, top, delta > top, pdec
    )


def beta_chart(
    ax: Axes, p0: float, delta: float, beta: float, delta_text: str, beta_text: str
) -> tuple[Chart, str]:
    """π*(y₁) against β for two responses, the band many responses reach, both thresholds
    and the current β."""
    pi_two = core.two_response_optimum(p0, delta, beta)
    thr_exact = core.exact_threshold(p0, delta)
    thr_bound = core.bound_threshold(p0, delta)
    betas = ax.betas
    curve = np.asarray(core.two_response_optimum(p0, delta, betas))
    c = Chart("KL weight β (log scale)", "π*(y₁)", height=360)
    c.add(
        x=np.concatenate([betas, betas[::-1]]),
        y=np.concatenate([curve, np.ones_like(curve)]),
        mode="lines",
        fill="toself",
        fillcolor=BAND,
        line={"width": 0},
        hoverinfo="skip",
        name="many responses",
    )
    c.add(
        x=betas,
        y=curve,
        mode="lines",
        name="two responses",
        line={"color": EXACT_COLOR, "width": 3},
        hovertemplate="β = %{x:.3g}<br>π*(y₁) = %{y:.3f}<extra></extra>",
    )
    if math.isfinite(thr_exact):
        c.add(
            x=[thr_exact, thr_exact],
            y=[0, 1],
            mode="lines",
            name="exact threshold",
            line={"color": EXACT_COLOR, "dash": "dot", "width": 2},
            hovertemplate=f"exact threshold β = {threshold_text(thr_exact)}<extra></extra>",
        )
    c.add(
        x=[thr_bound, thr_bound],
        y=[0, 1],
        mode="lines",
        name="Eq. 12.7",
        line={"color": BOUND_COLOR, "dash": "dash", "width": 2},
        hovertemplate=f"Equation 12.7: β = {threshold_text(thr_bound)}<extra></extra>",
    )
    c.hline(0.5, COLORS["neutral"], label="½")
    c.add(
        x=[beta],
        y=[pi_two],
        mode="markers",
        name=f"β = {beta_text}",
        marker={"size": 11, "color": EXACT_COLOR, "line": {"color": "white", "width": 1.5}},
        hovertemplate="β = %{x:.4g}<br>π*(y₁) = %{y:.3f}<extra></extra>",
    )
    c.update(
        xaxis={
            "type": "log",
            "range": padded(ax.b_lo, ax.b_hi),
            "tickvals": ax.decades,
            "ticktext": [fmt.sig(v, 1, trim=True) for v in ax.decades],
        },
        yaxis={"range": [0, 1.04]},
        legend={"font": {"size": 12}},
    )
    return c, (
        f"Line chart of π*(y₁) against β on a log axis for p₀ = {fmt.sig(p0, 3, trim=True)} and Δ "
        f"= "
        f"{delta_text}: falling from 1 at small β to p₀ at large β, with the exact threshold "
        + (
            "(none: p₀ is at least ½) "
            if math.isinf(thr_exact)
            else f"β = {threshold_text(thr_exact)} "
        )
        + f"and Equation 12.7's β = {threshold_text(thr_bound)} "
        f"marked as vertical lines and "
        f"the current β = {beta_text} at π*(y₁) = {fmt.prob(pi_two, digits=3, below_one=True)}. The shaded band "
        f"above the "
        f"curve is where π*(y₁) lies when there are many responses."
    )


def gap_chart(
    ax: Axes,
    p0: float,
    delta: float,
    beta: float,
    delta_text: str,
    beta_text: str,
    rarer_cost: float,
) -> tuple[Chart, str]:
    """The reward gap y₁ needs for π*(y₁) ≥ ½ against p₀ (exact and Equation 12.7), what a
    thousand times rarer adds, and y₁ itself."""
    thr_exact = core.exact_threshold(p0, delta)
    p0s, top, star_off = ax.p0s, ax.top, ax.star_off
    rarer = p0 / RARER
    need_here = beta / core.bound_threshold(p0, 1.0)
    need_rarer = beta / core.bound_threshold(rarer, 1.0)
    g = Chart(
        "reference probability p₀ (log scale)", "reward gap Δ that gives π*(y₁) ≥ ½", height=360
    )
    g.add(
        x=np.concatenate([p0s, p0s[::-1]]),
        y=np.concatenate([ax.need_exact, np.full_like(p0s, top)]),
        mode="lines",
        fill="toself",
        fillcolor=BAND,
        line={"width": 0},
        hoverinfo="skip",
        name="y₁ holds at least half",
    )
    g.add(
        x=p0s,
        y=ax.need_exact,
        mode="lines",
        name="exact: β·log((1 − p₀)/p₀)",
        line={"color": EXACT_COLOR, "width": 3},
        hovertemplate="p₀ = %{x:.2e}<br>Δ needed %{y:.3f}<extra></extra>",
    )
    g.add(
        x=p0s,
        y=ax.need_bound,
        mode="lines",
        name="Eq. 12.7: β·log(1/p₀)",
        line={"color": BOUND_COLOR, "width": 2.5, "dash": "dash"},
        hovertemplate="p₀ = %{x:.2e}<br>Δ needed (Eq. 12.7) %{y:.3f}<extra></extra>",
    )
    g.add(
        x=[p0, rarer],
        y=[need_here, need_rarer],
        mode="lines+markers",
        name=f"1000× rarer: +{fmt.sig(rarer_cost, 3)}",
        line={"color": COLORS["accent"], "width": 3},
        marker={"size": [0, 8], "color": COLORS["accent"]},  # none under y₁'s star
        hovertemplate="p₀ = %{x:.2e}<br>Δ needed (Eq. 12.7) %{y:.3f}<extra></extra>",
    )
    g.add(
        x=[p0],
        y=[top if star_off else delta],
        mode="markers",
        cliponaxis=False,
        name=f"y₁: p₀ = {fmt.sig(p0, 3, trim=True)}, Δ = {delta_text}"
        + (" (above the chart)" if star_off else ""),
        marker={
            "size": 16,
            "symbol": "triangle-up" if star_off else "star",
            "color": COLORS["proxy"],
            "line": {"color": "white", "width": 1},
        },
        hovertemplate=f"p₀ = %{{x:.2e}}<br>Δ = {delta_text}<extra></extra>",
    )
    g.update(
        xaxis={
            "type": "log",
            "range": padded(ax.p_lo, ax.p_hi),
            "tickvals": ax.pdec,
            "ticktext": [fmt.sig(v, 3, trim=True) for v in ax.pdec],
        },
        yaxis={"range": [0, top]},
        legend={"font": {"size": 12}},
    )
    return g, (
        f"Line chart of the reward gap y₁ needs to hold at least half of π* against its "
        f"reference probability p₀ on a log axis, at β = {beta_text}: straight lines, exact "
        f"β·log((1 − p₀)/p₀) and Equation 12.7's β·log(1/p₀). Each factor of 1,000 in rarity "
        f"adds {fmt.sig(rarer_cost, 3)} to the gap. The current response (p₀ = "
        f"{fmt.sig(p0, 3, trim=True)}, Δ = "
        f"{delta_text}) is marked "
        + (
            "with a triangle at the top edge, its Δ far above the chart's range, "
            if star_off
            else "with a star, "
        )
        + (
            "on or above the exact line: it holds at least half."
            if math.isinf(thr_exact) or beta <= thr_exact
            else "below the exact line: it holds less than half with two responses."
        )
    )


def example_table(beta: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Example 12.1 (Section 12.4.2) at the chapter's β values and the page's: the table as
    shown and as downloaded (π* of each style and the formal : casual odds)."""
    log_pi0 = np.log(core.EXAMPLE_12_1_PI0)
    r = core.EXAMPLE_12_1_REWARDS
    rows = []
    for b in sorted(set(EXAMPLE_BETAS) | {beta}, reverse=True):
        t = tilt.tilt(log_pi0, r, 1.0 / b)
        odds = math.exp(core.log_odds(log_pi0, r, b, 0, 1))
        rows.append(
            {
                "β": fmt.sig(b, 4, trim=True) + (" (this page)" if b == beta else ""),
                "beta": b,
                **{f"π*({lab})": float(t.pi[i]) for i, lab in enumerate(core.EXAMPLE_12_1_LABELS)},
                "log": [float(v) for v in t.log_pi],
                "formal : casual": odds,
            }
        )
    data = pd.DataFrame(rows)
    shown = pd.DataFrame({"β": data["β"]})
    for i, lab in enumerate(core.EXAMPLE_12_1_LABELS):
        shown[f"π*({lab})"] = [
            fmt.prob(row[f"π*({lab})"], 4, digits=3, log10=row["log"][i] / LN10) for row in rows
        ]
    shown["formal : casual"] = [f"{fmt.fixed(v, 3)} : 1" for v in data["formal : casual"]]
    return shown, data.drop(columns=["β", "log"])


def resets_table(p0: float, delta: float, beta: float) -> tuple[pd.DataFrame, pd.DataFrame, float]:
    """The page's two responses tilted m times at β, the reference reset to each optimum,
    against one tilt at β/m (Section 12.4.2), for m in RESETS: the table as shown, as
    downloaded, and the largest difference in log-probability between the two."""
    log_pi0 = np.array([math.log(p0), math.log1p(-p0)])
    r = np.array([delta, 0.0])
    rows = []
    for m in RESETS:
        rep = core.repeated_tilt(log_pi0, r, beta, m)
        one = tilt.tilt(log_pi0, r, m / beta)
        rows.append(
            {
                "m": m,
                "pi*(y1), m resets at beta": float(rep.pi[0]),
                "pi*(y1), one tilt at beta/m": float(one.pi[0]),
                "log pi*(y2), m resets": float(rep.log_pi[1]),
                "log pi*(y2), one tilt": float(one.log_pi[1]),
                "KL (nats), m resets": float(rep.kl),
                "KL (nats), one tilt": float(one.kl),
                "largest difference in log pi": float(np.max(np.abs(rep.log_pi - one.log_pi))),
            }
        )
    data = pd.DataFrame(rows)

    def prob(column: str) -> list[str]:
        return [fmt.prob(v, digits=3, below_one=True) for v in data[column]]

    def from_log(column: str) -> list[str]:
        return [fmt.prob(math.exp(v), digits=3, log10=v / LN10) for v in data[column]]

    shown = pd.DataFrame(
        {
            "m": [f"{m}" for m in data["m"]],
            "π*(y₁): m optima at β": prob("pi*(y1), m resets at beta"),
            "π*(y₁): one at β/m": prob("pi*(y1), one tilt at beta/m"),
            "π*(y₂): m optima at β": from_log("log pi*(y2), m resets"),
            "π*(y₂): one at β/m": from_log("log pi*(y2), one tilt"),
            "KL: m optima": [fmt.fixed(v, 4) for v in data["KL (nats), m resets"]],
            "KL: one at β/m": [fmt.fixed(v, 4) for v in data["KL (nats), one tilt"]],
        }
    )
    return shown, data, float(data["largest difference in log pi"].max())


def details(
    ax: Axes, p0: float, delta: float, beta: float, example: pd.DataFrame, resets: pd.DataFrame
) -> None:
    """The numbers behind the figures: the readout's quantities as a table, and five downloads
    (it, both curves, Example 12.1 and the reference resets)."""
    curve_df = pd.DataFrame(
        {
            "beta": ax.betas,
            "pi*(y1), two responses (= many-response bound)": np.asarray(
                core.two_response_optimum(p0, delta, ax.betas)
            ),
        }
    )
    gap_df = pd.DataFrame(
        {"p0": ax.p0s, "gap needed, exact": ax.need_exact, "gap needed, Eq. 12.7": ax.need_bound}
    )
    summary = pd.DataFrame(
        {
            "quantity": [
                "p0",
                "delta",
                "beta",
                "pi*(y1), two responses",
                "many-response bound",
                "exact threshold beta",
                "Eq. 12.7 threshold beta",
                "log of the largest change factor",
                "log of exp(-delta/beta)",
                "extra gap for 1000x rarer",
            ],
            "value": [
                p0,
                delta,
                beta,
                core.two_response_optimum(p0, delta, beta),
                core.many_response_lower_bound(p0, delta, beta),
                core.exact_threshold(p0, delta),
                core.bound_threshold(p0, delta),
                core.max_change_factor(delta, beta).log_factor,
                core.dominance_threshold_probability(delta, beta).log_probability,
                core.reward_gap_for_rarity(RARER, beta),
            ],
        }
    )
    # Six figures whatever the size (the switching rule would write −3162.28 as −3,162).
    layout.small_table(
        summary, {"value": lambda v: fmt.sig(v, 6, trim=True) if abs(v) < 1000 else fmt.fixed(v, 2)}
    )
    stem = (
        f"rarity_p0_{controls.fmt_number(p0)}_delta_{controls.fmt_number(delta)}_beta_"
        f"{controls.fmt_number(beta)}"
    )
    layout.csv_download(
        summary, f"{stem}_summary.csv", label="Download the readout (CSV)", key="rarity-summary-csv"
    )
    layout.csv_download(
        curve_df,
        f"{stem}_pi_vs_beta.csv",
        label="Download π*(y₁) against β (CSV)",
        key="rarity-csv",
    )
    layout.csv_download(
        gap_df,
        f"{stem}_gap_vs_p0.csv",
        label="Download the gap needed against p₀ (CSV)",
        key="rarity-gap-csv",
    )
    layout.csv_download(
        example,
        "rarity_example_12_1.csv",
        label="Download Example 12.1 (CSV)",
        key="rarity-example-csv",
    )
    layout.csv_download(
        resets,
        f"{stem}_resets.csv",
        label="Download the reference resets (CSV)",
        key="rarity-resets-csv",
    )
