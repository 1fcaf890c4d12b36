"""The bandit page's figures (Figure 12.1, Section 12.1.3): the runs at one learning rate, and
what a baseline changes along the exact-gradient path (the variance and the mean of one
gradient estimate), each with its text alternative; the runs they are drawn from and the
page's downloads. pages/bandit.py wires them."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from klrl_app import controls, fmt, layout, plots
from klrl_core import bandit, baseline

N_SHOWN = bandit.N_SHOWN
N_MANY = bandit.N_MANY
STEPS = bandit.DEFAULT_STEPS
EVERY = 2  # runs drawn at every 2nd step: 151 points, ample at any width
Y_SCALE = 250  # a drawn run's probability p is sent as the byte round(250 p)
STEPS_DRAWN = np.arange(0, STEPS + 1, EVERY)
NEAR_ZERO, COMMITTED = 0.1, 0.9  # a run "near zero" / "committed" ends below 0.1 / above 0.9
# Ticks every 50 steps up to 300; starting a little left of 0 keeps the y axis's 0 off the
# x axis's 0, as on the runs chart.
PATH_XAXIS = {"range": [-5, STEPS], "tickmode": "array", "tickvals": list(range(0, STEPS + 1, 50))}


class Drawn(NamedTuple):
    """The runs drawn from one seed at one learning rate, their summary and the exact path."""

    runs: np.ndarray
    exact: np.ndarray
    summary: dict


def many_runs_now(lr: float, use_baseline: bool) -> dict:
    """The many-run statistics for one setting, from runs with a fixed seed of their own
    (bandit.MANY_SEED, as bandit.many_run_summary), with the shares the explanation reads."""
    final = bandit.simulate_reinforce(N_MANY, STEPS, lr, use_baseline, bandit.MANY_SEED)[:, -1]
    out = bandit.final_summary(final)
    out["share_near_zero"] = float(np.mean(final < NEAR_ZERO))
    out["share_committed"] = float(np.mean((final < NEAR_ZERO) | (final > COMMITTED)))
    return out


def drawn_now(lr: float, use_baseline: bool, seed: int) -> Drawn:
    runs = bandit.simulate_reinforce(N_SHOWN, STEPS, lr, use_baseline, seed)
    return Drawn(runs, bandit.exact_gradient_path(STEPS, lr), bandit.final_summary(runs))


def runs_chart(
    lr: float, d: Drawn, many: dict, use_baseline: bool, seed: int
) -> tuple[plots.Chart, str]:
    """Figure 12.1 at learning rate ``lr``, and its text alternative."""
    which = "with the baseline" if use_baseline else "without a baseline"
    chart = plots.Chart("update step", "probability of the best arm", height=400, margin={"r": 66})
    # The 20 runs are one trace with gaps (plots.gapped). A run's probability is sent as one
    # byte (250 p) on a hidden axis aligned with the visible one: 1/250 is under a pixel here,
    # and each stop's runs then fit the browser's table.
    runs = np.rint(d.runs[:, ::EVERY] * Y_SCALE).astype(np.uint8)
    chart.add(
        **plots.gapped(STEPS_DRAWN, runs, np.arange(1, len(runs) + 1)),
        yaxis="y2",
        mode="lines",
        name="one training run",
        line={"color": plots.COLORS["run"], "width": 1.2},
        hovertemplate="run %{customdata}, step %{x}<extra></extra>",
    )
    chart.add(
        x=STEPS_DRAWN,
        y=d.runs.mean(axis=0)[::EVERY],
        mode="lines",
        name=f"average of the {N_SHOWN} runs",
        line={"color": plots.COLORS["optimum"], "width": 4},
        hovertemplate="average, step %{x}: %{y:.2f}<extra></extra>",
    )
    chart.add(
        x=STEPS_DRAWN,
        y=d.exact[::EVERY],
        mode="lines",
        name="exact gradient",
        line={"color": plots.COLORS["accent"], "width": 2.5, "dash": "dash"},
        hovertemplate="exact gradient, step %{x}: %{y:.2f}<extra></extra>",
    )
    # The start is named in the legend, not by a note on the chart, which would sit on the runs.
    chart.add(
        x=[0],
        y=[1 / len(bandit.ARM_MEANS)],
        mode="markers",
        name="start: uniform, 1/5",
        marker={
            "color": plots.COLORS["optimum"],
            "size": 11,
            "line": {"width": 2, "color": "white"},
        },
        hovertemplate="uniform start: every arm 1/5<extra></extra>",
        cliponaxis=False,
    )
    # One half: a dotted line, labelled in the right margin, off the runs.
    chart.hline(0.5, plots.COLORS["neutral"])
    chart.layout["annotations"].append(
        {
            "xref": "x domain",
            "x": 1,
            "yref": "y",
            "y": 0.5,
            "text": "one half",
            "showarrow": False,
            "xanchor": "left",
            "yanchor": "middle",
            "xshift": 6,
            "font": {"size": 12},
        }
    )
    y_range = [-0.02, 1.02]
    chart.update(
        yaxis={"range": y_range, "tickformat": ".1f"},
        yaxis2={"overlaying": "y", "visible": False, "range": [Y_SCALE * y for y in y_range]},
        # Starting a little left of 0 keeps the start marker off the y tick labels.
        xaxis={
            "range": [-5, STEPS],
            "tickmode": "array",
            "tickvals": list(range(0, STEPS + 1, 50)),
        },
    )
    s = d.summary
    alt = (
        f"Line chart of the best arm's probability over {STEPS} updates at learning rate "
        f"{controls.fmt_number(lr)}, {which}: {N_SHOWN} runs as thin lines (seed {seed}), "
        f"their average as a thick line ending at {fmt.fixed(s['mean'], 2)}, and the "
        f"exact-gradient path as a dashed line ending at {fmt.fixed(d.exact[-1], 2)}. "
        f"{s['n_below']} of the {N_SHOWN} runs end below one half; across {N_MANY:,} runs "
        f"the average is {fmt.fixed(many['mean'], 2)} and "
        f"{fmt.pct(many['share_below'], max_places=1)} end below one half."
    )
    return chart, alt


def variance_chart(comp: baseline.PathComparison, lr_text: str) -> tuple[plots.Chart, str]:
    """The variance (trace) of one gradient estimate along the exact path, b = 0 and b = π·μ,
    and its text alternative."""
    chart = plots.Chart(
        "update step (along the dashed exact-gradient path)",
        "variance of one gradient estimate (trace)",
        height=340,
    )
    chart.add(
        x=comp.steps,
        y=comp.without.total_var,
        mode="lines",
        name="no baseline, b = 0",
        line={"color": plots.COLORS["incorrect"], "width": 3},
        hovertemplate="step %{x}: %{y:.3f}<extra>b = 0</extra>",
    )
    chart.add(
        x=comp.steps,
        y=comp.with_expected.total_var,
        mode="lines",
        name="b = π·μ, the expected reward",
        line={"color": plots.COLORS["optimum"], "width": 3},
        hovertemplate="step %{x}: %{y:.3f}<extra>b = π·μ</extra>",
    )
    chart.add(
        x=comp.steps,
        y=comp.without.noise_var,
        mode="lines",
        name="the reward noise's share (no baseline removes it)",
        line={"color": plots.COLORS["neutral"], "width": 2, "dash": "dot"},
        hovertemplate="step %{x}: %{y:.3f}<extra>noise alone</extra>",
    )
    v0, v1 = comp.without.total_var, comp.with_expected.total_var
    alt = (
        f"Line chart of the variance (trace) of one gradient estimate "
        f"(r − b)(onehot(a) − π) along the exact-gradient path at learning rate {lr_text}: "
        f"without a baseline it starts at {fmt.fixed(v0[0], 3)} and ends at "
        f"{fmt.fixed(v0[-1], 3)}; with the expected reward as baseline {fmt.fixed(v1[0], 3)} "
        f"and {fmt.fixed(v1[-1], 3)}."
    )
    return chart.update(yaxis={"rangemode": "tozero"}, xaxis=PATH_XAXIS), alt


def mean_chart(comp: baseline.PathComparison) -> tuple[plots.Chart, str]:
    """The mean gradient estimate's best-arm entry along the same path, with and without, and
    its text alternative."""
    best = int(np.argmax(bandit.ARM_MEANS))
    chart = plots.Chart(
        "update step (along the dashed exact-gradient path)",
        "mean gradient estimate, best arm's entry",
        height=340,
    )
    chart.add(
        x=comp.steps,
        y=comp.without.mean[:, best],
        mode="lines",
        name="no baseline, b = 0",
        line={"color": plots.COLORS["incorrect"], "width": 6},
        hovertemplate="step %{x}: %{y:.4f}<extra>b = 0</extra>",
    )
    chart.add(
        x=comp.steps,
        y=comp.with_expected.mean[:, best],
        mode="lines",
        name="b = π·μ (on top: the same)",
        line={"color": plots.COLORS["optimum"], "width": 2.5, "dash": "dash"},
        hovertemplate="step %{x}: %{y:.4f}<extra>b = π·μ</extra>",
    )
    gap = comp.mean_gap
    alt = (
        "Line chart of the mean gradient estimate's best-arm entry along the same path, "
        "with and without the baseline: the two lines coincide ("
        + ("identical" if gap == 0 else f"largest difference {fmt.standard_form(gap, 1)}")
        + ")."
    )
    return chart.update(yaxis={"rangemode": "tozero"}, xaxis=PATH_XAXIS), alt


def numbers(d: Drawn, lr_text: str, use_baseline: bool, seed: int) -> None:
    """The details: each drawn run's final probability, and every step of the runs as a CSV."""

    def runs_table() -> pd.DataFrame:
        columns = {
            "step": np.arange(STEPS + 1),
            **{f"run {i + 1}": row for i, row in enumerate(d.runs)},
            f"average of {N_SHOWN} runs": d.runs.mean(axis=0),
            "exact gradient": d.exact,
        }
        return pd.DataFrame(columns)

    finals = pd.DataFrame(
        {"run": np.arange(1, N_SHOWN + 1), f"P(best) after {STEPS} steps": d.runs[:, -1]}
    )
    layout.table(finals, digits=3)
    layout.csv_download(
        runs_table,
        f"bandit_lr_{lr_text}_baseline_{'on' if use_baseline else 'off'}_seed_{seed}.csv",
        key="bandit-csv",
    )
