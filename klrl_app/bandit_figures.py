"""The bandit page's figures (Figure 12.1, Section 12.1.3): the runs at one learning rate, and
what a baseline changes along the exact-gradient path (the variance and the mean of one
gradient estimate), each with its text alternative. pages/bandit.py wires them."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from klrl_app import controls, fmt, plots
from klrl_core import bandit, baseline

N_SHOWN = bandit.N_SHOWN
N_MANY = bandit.N_MANY
STEPS = bandit.DEFAULT_STEPS
EVERY = 2                         # runs drawn at every 2nd step: 151 points, ample at any width
Y_SCALE = 250                     # a drawn run's probability p is sent as the byte round(250 p)
STEPS_DRAWN = np.arange(0, STEPS + 1, EVERY)
# Ticks every 50 steps up to 300; starting a little left of 0 keeps the y axis's 0 off the
# x axis's 0, as on the runs chart.
PATH_XAXIS = {"range": [-5, STEPS], "tickmode": "array", "tickvals": list(range(0, STEPS + 1, 50))}


class Drawn(NamedTuple):
    """The runs drawn from one seed at one learning rate, their summary and the exact path."""
    runs: np.ndarray
    exact: np.ndarray
    summary: dict


def runs_chart(lr: float, d: Drawn, many: dict, use_baseline: bool, seed: int
               ) -> tuple[plots.Chart, str]:
    """Figure 12.1 at learning rate ``lr``, and its text alternative."""
    which = "with the baseline" if use_baseline else "without a baseline"
    chart = plots.Chart("update step", "probability of the best arm", height=400,
                        margin={"r": 66})
    # The 20 runs are one trace with gaps (plots.gapped). A run's probability is sent as one
    # byte (250 p) on a hidden axis aligned with the visible one: 1/250 is under a pixel here,
    # and each stop's runs then fit the browser's table.
    runs = np.rint(d.runs[:, ::EVERY] * Y_SCALE).astype(np.uint8)
    chart.add(**plots.gapped(STEPS_DRAWN, runs, np.arange(1, len(runs) + 1)),
              yaxis="y2", mode="lines", name="one training run",
              line={"color": plots.COLORS["run"], "width": 1.2},
              hovertemplate="run %{customdata}, step %{x}<extra></extra>")
    chart.add(x=STEPS_DRAWN, y=d.runs.mean(axis=0)[::EVERY], mode="lines",
              name=f"average of the {N_SHOWN} runs",
              line={"color": plots.COLORS["optimum"], "width": 4},
              hovertemplate="average, step %{x}: %{y:.2f}<extra></extra>")
    chart.add(x=STEPS_DRAWN, y=d.exact[::EVERY], mode="lines", name="exact gradient",
              line={"color": plots.COLORS["accent"], "width": 2.5, "dash": "dash"},
              hovertemplate="exact gradient, step %{x}: %{y:.2f}<extra></extra>")
    # The start is named in the legend, not by a note on the chart, which would sit on the runs.
    chart.add(x=[0], y=[1 / len(bandit.ARM_MEANS)], mode="markers", name="start: uniform, 1/5",
              marker={"color": plots.COLORS["optimum"], "size": 11,
                      "line": {"width": 2, "color": "white"}},
              hovertemplate="uniform start: every arm 1/5<extra></extra>", cliponaxis=False)
    # One half: a dotted line, labelled in the right margin, off the runs.
    chart.hline(0.5, plots.COLORS["neutral"])
    chart.layout["annotations"].append({
        "xref": "x domain", "x": 1, "yref": "y", "y": 0.5, "text": "one half",
        "showarrow": False, "xanchor": "left", "yanchor": "middle", "xshift": 6,
        "font": {"size": 12}})
    y_range = [-0.02, 1.02]
    chart.update(yaxis={"range": y_range, "tickformat": ".1f"},
                 yaxis2={"overlaying": "y", "visible": False,
                         "range": [Y_SCALE * y for y in y_range]},
                 # Starting a little left of 0 keeps the start marker off the y tick labels.
                 xaxis={"range": [-5, STEPS], "tickmode": "array",
                        "tickvals": list(range(0, STEPS + 1, 50))})
    s = d.summary
    alt = (f"Line chart of the best arm's probability over {STEPS} updates at learning rate "
           f"{controls.fmt_number(lr)}, {which}: {N_SHOWN} runs as thin lines (seed {seed}), "
           f"their average as a thick line ending at {fmt.fixed(s['mean'], 2)}, and the "
           f"exact-gradient path as a dashed line ending at {fmt.fixed(d.exact[-1], 2)}. "
           f"{s['n_below']} of the {N_SHOWN} runs end below one half; across {N_MANY:,} runs "
           f"the average is {fmt.fixed(many['mean'], 2)} and "
           f"{fmt.pct(many['share_below'], max_places=1)} end below one half.")
    return chart, alt


def variance_chart(comp: baseline.PathComparison) -> plots.Chart:
    """The variance (trace) of one gradient estimate along the exact path, b = 0 and b = π·μ."""
    chart = plots.Chart("update step (along the dashed exact-gradient path)",
                        "variance of one gradient estimate (trace)", height=340)
    chart.add(x=comp.steps, y=comp.without.total_var, mode="lines", name="no baseline, b = 0",
              line={"color": plots.COLORS["incorrect"], "width": 3},
              hovertemplate="step %{x}: %{y:.3f}<extra>b = 0</extra>")
    chart.add(x=comp.steps, y=comp.with_expected.total_var, mode="lines",
              name="b = π·μ, the expected reward",
              line={"color": plots.COLORS["optimum"], "width": 3},
              hovertemplate="step %{x}: %{y:.3f}<extra>b = π·μ</extra>")
    chart.add(x=comp.steps, y=comp.without.noise_var, mode="lines",
              name="the reward noise's share (no baseline removes it)",
              line={"color": plots.COLORS["neutral"], "width": 2, "dash": "dot"},
              hovertemplate="step %{x}: %{y:.3f}<extra>noise alone</extra>")
    return chart.update(yaxis={"rangemode": "tozero"}, xaxis=PATH_XAXIS)


def mean_chart(comp: baseline.PathComparison, best: int) -> plots.Chart:
    """The mean gradient estimate's best-arm entry along the same path, with and without."""
    chart = plots.Chart("update step (along the dashed exact-gradient path)",
                        "mean gradient estimate, best arm's entry", height=340)
    chart.add(x=comp.steps, y=comp.without.mean[:, best], mode="lines",
              name="no baseline, b = 0", line={"color": plots.COLORS["incorrect"], "width": 6},
              hovertemplate="step %{x}: %{y:.4f}<extra>b = 0</extra>")
    chart.add(x=comp.steps, y=comp.with_expected.mean[:, best], mode="lines",
              name="b = π·μ (on top: the same)",
              line={"color": plots.COLORS["optimum"], "width": 2.5, "dash": "dash"},
              hovertemplate="step %{x}: %{y:.4f}<extra>b = π·μ</extra>")
    return chart.update(yaxis={"rangemode": "tozero"}, xaxis=PATH_XAXIS)
