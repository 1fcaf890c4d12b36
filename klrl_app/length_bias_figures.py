"""The length-bias page's figures (Chapter 28, right panel): each method's expected lengths and
P(correct) over training, the runs' band shaded around the mean, with its text alternative;
and the tables behind them (the curves, the chapter's checkpoints). pages/length-bias.py
wires them."""

from __future__ import annotations

import numpy as np
import pandas as pd

from klrl_app import controls, fmt, plots
from klrl_core import length_bias as core

MAX_POINTS = 200  # points per curve in the CSV (ample at the chart's width)
CHECKPOINTS = (0, 100, 300, 1000)  # the chapter's table
BAND = (10, 90)  # percentiles of the runs shaded around the mean
BAND_FILL = {
    "correct": "rgba(34, 197, 94, 0.18)",
    "incorrect": "rgba(239, 68, 68, 0.16)",
    "p": "rgba(59, 130, 246, 0.18)",
}


def tables(res: core.LengthBiasResult, steps: int) -> dict:
    """The first ``steps`` steps of a full run: each method's curves (mean and band over runs,
    at most MAX_POINTS per curve), the runs' values at the end, the chapter's checkpoints."""
    # every k-th step with k a divisor of 100, so the chapter's checkpoints are among them
    every = next(k for k in (1, 2, 4, 5, 10, 20, 25, 50, 100) if k * MAX_POINTS >= steps)
    shown = np.arange(0, steps + 1, every)
    frames, final, table = [], {}, []
    for m in core.METHODS:
        df = pd.DataFrame({"method": m, "step": res.steps[shown]})
        for key in core.STATS:
            df[key], df[f"{key}_p{BAND[0]}"], df[f"{key}_p{BAND[1]}"] = core.run_band(
                getattr(res.curves[m], key)[shown], *BAND
            )
        frames.append(df)
        final[m] = res.at(m, steps)
        for s in CHECKPOINTS:
            if s <= steps:
                row = res.at(m, s)
                table.append({"method": m, "step": s, **{k: row[k] for k in core.STATS}})
    return {
        "curves": pd.concat(frames, ignore_index=True),
        "final": final,
        "checkpoints": pd.DataFrame(table),
    }


def grid(steps_max: int) -> np.ndarray:
    """The steps the charts draw, over the whole run: dense early, where the lengths move
    fastest. "Training steps" only sets the x axis's end, so a stop differs from another in
    its axis and texts alone, and the browser's table of every stop stays small."""
    return np.unique(
        np.concatenate(
            [np.arange(0, 201), np.arange(200, 1001, 5), np.arange(1000, steps_max + 1, 25)]
        )
    )


def full_curves(res: core.LengthBiasResult) -> dict:
    """Each method's mean and band on the grid over the whole run, the grid ("step") and the
    top of the length axis over all steps."""
    out, top = {"step": grid(int(res.steps[-1]))}, 0.0
    for m in core.METHODS:
        cols = {}
        for key in core.STATS:
            cols[key], cols[f"{key}_lo"], cols[f"{key}_hi"] = core.run_band(
                getattr(res.curves[m], key)[out["step"]], *BAND
            )
        top = max(top, float(cols["len_correct_hi"].max()), float(cols["len_incorrect_hi"].max()))
        out[m] = cols
    out["y_max"] = max(14.0, float(np.ceil(top + 1.0)))
    return out


def _band(c: plots.Chart, x: np.ndarray, cols: dict, key: str, fill: str, yaxis: str) -> None:
    """The runs' 10th-90th percentile band of one statistic: one closed, filled outline."""
    c.add(
        x=np.concatenate([x, x[::-1]]),
        y=np.concatenate([cols[f"{key}_hi"], cols[f"{key}_lo"][::-1]]),
        mode="lines",
        line={"width": 0},
        fill="toself",
        fillcolor=fill,
        yaxis=yaxis,
        showlegend=False,
        hoverinfo="skip",
    )


def panel(
    m: str, s: int, full: dict, f: dict, runs: int, lr: float, start: float, p_start: float
) -> tuple[plots.Chart, str]:
    """Method m's chart up to step s (``f``: its numbers there, ``start`` and ``p_start``:
    where every run starts), with its text alternative."""
    cols, x = full[m], full["step"]
    c = plots.Chart("training step", "expected length (tokens)", height=400)
    for key, kind in (("len_incorrect", "incorrect"), ("len_correct", "correct")):
        if runs > 1:
            _band(c, x, cols, key, BAND_FILL[kind], "y")
        c.add(
            x=x,
            y=cols[key],
            mode="lines",
            name=f"length if {kind}",
            line={
                "color": plots.COLORS[kind],
                "width": 3,
                "dash": "solid" if kind == "correct" else "dash",
            },
            hovertemplate=f"step %{{x:,}}<br>{kind}: %{{y:.2f}} tokens<extra></extra>",
        )
    if runs > 1:
        _band(c, x, cols, "p_correct", BAND_FILL["p"], "y2")
    c.add(
        x=x,
        y=cols["p_correct"],
        mode="lines",
        name="P(correct answer)",
        yaxis="y2",
        line={"color": plots.COLORS["optimum"], "width": 2.5},
        hovertemplate="step %{x:,}<br>P(correct) %{y:.3f}<extra></extra>",
    )
    c.hline(start, plots.COLORS["neutral"], label=f"start {fmt.fixed(start, 1)}")
    c.hline(2.0, plots.COLORS["neutral"], dash="dash", label="shortest: 2")
    c.update(
        yaxis={"domain": [0.36, 1.0], "range": [0, full["y_max"]]},
        yaxis2={
            "domain": [0.0, 0.25],
            "range": [0, 1.02],
            "title": {"text": "P(correct)"},
            "tickvals": [0, 0.5, 1],
            "zeroline": False,
            "automargin": True,
        },
        # The axis ends at s (the curves run on to the run's end, off the chart); the
        # tick label at s may reach into the margin. Six ticks from 0 to s as a step
        # (dtick), not a list: a stop then changes no array, and the browser redraws it
        # without recomputing the traces (a new tickvals list makes plotly.js recompute).
        xaxis={
            "anchor": "y2",
            "range": [0, s],
            "ticklabeloverflow": "allow",
            "tickmode": "linear",
            "tick0": 0,
            "dtick": s / 5,
            "tickformat": ".0f",
        },
        legend={"font": {"size": 12}},
    )
    spread = (
        ""
        if runs == 1
        else f", with the middle {BAND[1] - BAND[0]}% of the runs shaded around each mean"
    )
    return c, (
        f"Line chart of {m} training (step size {controls.fmt_number(lr)}) over {s} steps, "
        f"mean of {fmt.count(runs, 'run')}{spread}. Top: the expected length of correct "
        f"responses, from {fmt.fixed(start, 1)} to {fmt.fixed(f['len_correct'], 1)} tokens, "
        f"and of incorrect ones, to {fmt.fixed(f['len_incorrect'], 1)}; reference lines at the "
        f"start and at the shortest length, 2. Bottom: P(correct) from {fmt.fixed(p_start, 2)} "
        f"to {fmt.fixed(f['p_correct'], 2)}."
    )
