"""The step-labels page's figures (Section 12.7.3, Exercise 28.8): the labels of every step,
one step's labels against N, and one seeded data set's labels, with their text alternatives;
and the page's tables. Numbers come from klrl_core.step_labels; pages/step-labels.py wires
them."""

from __future__ import annotations

import numpy as np
import pandas as pd

from klrl_app import controls, fmt, layout, plots
from klrl_core import step_labels as sl

N_GRID = np.unique(np.round(np.logspace(0, np.log10(sl.N_MAX), 61)).astype(int))
N_BARS = 2 ** np.arange(int(np.log2(sl.N_MAX)) + 1)  # 1, 2, 4, …, 1,024
COL_C, COL_W = plots.COLORS["correct"], plots.COLORS["incorrect"]
# Green and red mean a correct and a wrong step on this page; the two labels are blue and
# violet (the hard label was green, the correct step's colour in the other charts).
SOFT_C, HARD_C = plots.COLORS["optimum"], plots.COLORS["reference"]


def p3(x: float) -> str:
    """A label as the page writes it: two significant digits, at most three places."""
    return fmt.prob(x, min_sig=2, max_places=3)


def _panel(
    chart: plots.Chart, lab: sl.Labels, T: int, axis: str, wrong_from: int | None, legend: bool
) -> None:
    steps = np.arange(1, T + 1)
    # The soft label with its exact 5%–95% range over the binomial draw (K of N finish);
    # the hard label as its mean alone: it is 0 or 1, so its range is 0 to 1 at almost every
    # step and says nothing (issue 31).
    mean, lo, hi = lab.soft_mean, lab.soft_lo, lab.soft_hi
    chart.add(
        x=steps - 0.13,
        y=mean,
        mode="markers",
        name="soft label",
        legendgroup="soft label",
        showlegend=legend,
        yaxis=axis,
        marker={"color": SOFT_C, "size": 10, "symbol": "circle"},
        error_y={
            "type": "data",
            "symmetric": False,
            "array": hi - mean,
            "arrayminus": mean - lo,
            "color": SOFT_C,
            "thickness": 2,
            "width": 5,
        },
        hovertemplate=(
            "step %{x:.0f}: soft label mean %{y:.3f} (bar: its 5%–95% range)<extra></extra>"
        ),
    )
    chart.add(
        x=steps + 0.13,
        y=lab.hard_mean,
        mode="markers",
        name="hard label (mean)",
        legendgroup="hard label",
        showlegend=legend,
        yaxis=axis,
        marker={"color": HARD_C, "size": 11, "symbol": "diamond"},
        hovertemplate=(
            "step %{x:.0f}: hard label mean %{y:.3f}, the chance that one "
            "of N finishes<extra></extra>"
        ),
    )
    yref = "y" if axis == "y" else "y2"
    for t in range(1, T + 1):
        ok = wrong_from is None or t < wrong_from
        if not ok:
            chart.layout["shapes"].append(
                {
                    "type": "rect",
                    "xref": "x",
                    "yref": f"{yref} domain",
                    "x0": t - 0.45,
                    "x1": t + 0.45,
                    "y0": 0,
                    "y1": 1,
                    "fillcolor": COL_W,
                    "opacity": 0.12,
                    "line": {"width": 0},
                    "layer": "below",
                }
            )


def steps_chart(
    right: sl.Labels, wrong: sl.Labels | None, T: int, err: int | None, q: float, n: int
) -> tuple[plots.Chart, str]:
    """Every step's labels, the correct solution above the one wrong from step err."""
    two = wrong is not None
    chart = plots.Chart("step t (✓ correct, ✗ wrong)", "", height=400, margin={"t": 40, "r": 8})
    y_range = [-0.04, 1.2]
    ticks = {"tickvals": [0, 0.5, 1], "range": y_range, "fixedrange": True}
    if two:
        chart.update(
            yaxis={"domain": [0.56, 1.0], **ticks, "title": {"text": "correct solution"}},
            yaxis2={
                "domain": [0.0, 0.44],
                **ticks,
                "title": {"text": f"wrong from step {err}"},
                "showgrid": True,
                "gridcolor": "rgba(128, 132, 149, 0.25)",
            },
        )
    else:
        chart.update(yaxis={**ticks, "title": {"text": "correct solution: label"}})
    chart.update(
        xaxis={
            "range": [0.4, T + 0.6],
            "tickmode": "linear",
            "dtick": 1,
            "fixedrange": True,
            "anchor": "y2" if two else "y",
        }
    )
    _panel(chart, right, T, "y", None, True)
    if two:
        _panel(chart, wrong, T, "y2", err, False)
    # ✓ and ✗ above every step, in green and red (a trace: annotations take the text colour)
    steps = np.arange(1, T + 1)
    for wrong_from, axis in [(None, "y")] + ([(err, "y2")] if two else []):
        ok = [wrong_from is None or t < wrong_from for t in steps]
        chart.symbols(
            steps,
            1.13,
            ["✓" if k else "✗" for k in ok],
            [plots.SYMBOL_COLORS["correct" if k else "incorrect"] for k in ok],
            yaxis=axis,
        )
    alt = (
        f"Per-step labels at q = {fmt.fixed(q, 2)}, N = {n:,}. Correct solution, soft: "
        + ", ".join(p3(x) for x in right.soft_mean)
        + "; hard: "
        + ", ".join(p3(x) for x in right.hard_mean)
        + "."
    )
    if wrong is not None:
        alt += (
            f" Solution wrong from step {err}, soft: "
            + ", ".join(p3(x) for x in wrong.soft_mean)
            + "; hard: "
            + ", ".join(p3(x) for x in wrong.hard_mean)
            + "."
        )
    alt += (
        " Bars: the soft label's 5%–95% range over the binomial draw; the hard label is "
        "0 or 1, drawn as its mean."
    )
    return chart, alt


def n_chart(q: float, g: float, T: int, S: int, n: int, err: int | None) -> tuple[plots.Chart, str]:
    """Both labels of step S against N, for the correct solution and (if any) the wrong one."""
    chart = plots.Chart(
        "completions N (log scale)", f"label of step {S}", height=400, margin={"t": 40, "r": 22}
    )
    cases = [("correct", sl.step_values(q, g, T)[S - 1], COL_C)]
    if err is not None:
        cases.append(("wrong", g, COL_W))
    alt = []
    for name, v, color in cases:
        hard = sl.labels_over_n(v, N_GRID).hard_mean
        # The soft label's exact 5%–95% range at N = 1, 2, 4, …, 1,024 as bars: K/N is
        # discrete, so a band over every N is a sawtooth that says nothing more (issue 31).
        # The flat soft mean as two points: the browser's table of every q stop stays within
        # its budget (klrl_app/instant.py).
        spread = sl.labels_over_n(v, N_BARS)
        chart.add(
            x=N_GRID[[0, -1]],
            y=np.full(2, v),
            mode="lines",
            name=f"{name} step: soft (bars 5%–95%)",
            line={"color": color, "width": 2},
            hovertemplate=f"{name} step: soft mean %{{y:.4f}}<extra></extra>",
        )
        chart.add(
            x=N_BARS * (0.94 if name == "correct" else 1.06),
            y=np.full(N_BARS.size, v),
            mode="markers",
            marker={"color": color, "size": 1, "opacity": 0},
            error_y={
                "type": "data",
                "symmetric": False,
                "color": color,
                "array": spread.soft_hi - v,
                "arrayminus": v - spread.soft_lo,
                "thickness": 2.5,
                "width": 4,
            },
            showlegend=False,
            name=f"{name} step: soft 5%–95%",
            hovertemplate=f"N = %{{x:.0f}}: {name} step's soft label 5%–95% range<extra></extra>",
        )
        chart.add(
            x=N_GRID,
            y=hard,
            mode="lines",
            name=f"{name} step: hard (dashed)",
            line={"color": color, "width": 3, "dash": "dash"},
            hovertemplate=f"{name} step, N = %{{x}}: hard mean %{{y:.3f}}<extra></extra>",
        )
        ns = sorted({1, n, sl.N_MAX})  # N = 1 or 1,024 only once
        hards = [p3(float(sl.hard_mean(v, m))) for m in ns]
        at_n = (
            [f"{hards[0]} at every N"]
            if len(set(hards)) == 1
            else [f"{h} at N = {m:,}" for h, m in zip(hards, ns)]
        )
        alt.append(
            f"{name} step {S}: soft mean {p3(v)} at every N; hard mean "
            + (", ".join(at_n[:-1]) + " and " if len(at_n) > 1 else "")
            + at_n[-1]
        )
    chart.vline(n, plots.COLORS["neutral"], dash="dot", width=2)
    # a little room beyond N = 1 and 1,024 for the spread bars drawn beside them
    chart.update(
        xaxis={
            "type": "log",
            "range": [-0.1, np.log10(sl.N_MAX) + 0.1],
            "tickvals": [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024],
            "fixedrange": True,
        },
        yaxis={"range": [-0.02, 1.04], "fixedrange": True},
    )
    return chart, (
        f"Line chart of step {S}'s labels against N on a log axis, N = {n:,} "
        f"marked: " + "; ".join(alt) + ". Bars at each power of two from 1 to 1,024: the soft "
        "label's 5%–95% range, which narrows as N grows."
    )


def draw_chart(
    right: sl.Labels, wrong: sl.Labels | None, T: int, n: int, err: int | None, seed: int
) -> tuple[plots.Chart, str]:
    """One seeded data set's labels: how many of N completions finished at each step. The
    wrong solution draws from a child of the seed, the correct one from the seed itself."""
    counts_c = sl.draw_counts(right.v, n, seed)
    counts_w = (
        sl.draw_counts(wrong.v, n, np.random.SeedSequence(seed).spawn(1)[0].generate_state(1)[0])
        if wrong is not None
        else None
    )
    chart = plots.Chart(
        "step t", "label in the data set", height=360, barmode="group", margin={"t": 48}
    )
    steps = np.arange(1, T + 1)
    # Each bar and diamond in its step's colour (green right, red wrong), the second
    # solution's steps 1 … err − 1 green too; the two solutions told apart by hatching.
    rows = [("correct", counts_c, [COL_C] * T, "")]
    if counts_w is not None:
        rows.append(
            (
                f"wrong from step {err}",
                counts_w,
                [COL_C if t < err else COL_W for t in range(1, T + 1)],
                "/",
            )
        )
    # Each hard label's diamond sits over its own soft bar (the bars of a step are side by
    # side: 0.85 of a step shared by the rows, plots.Chart's bargap 0.15), so that the two
    # solutions' diamonds never cover each other; the axis leaves room below 0 and above 1.
    width = 0.85 / len(rows)
    for i, (name, k, color, hatch) in enumerate(rows):
        chart.add(
            "bar",
            x=steps,
            y=k / n,
            name=f"soft, {name}" + (" (hatched)" if hatch else ""),
            marker={"color": color, "pattern": {"shape": hatch}},
            customdata=k,
            hovertemplate=(
                f"{name}, step %{{x}}: %{{customdata}} of "
                f"{n:,} finished, soft %{{y:.3f}}"
                f"<extra></extra>"
            ),
        )
        chart.add(
            x=steps + (i - (len(rows) - 1) / 2) * width,
            y=(k >= 1).astype(float),
            mode="markers",
            name=f"hard, {name}",
            customdata=steps,
            marker={"color": color, "symbol": "diamond-open", "size": 11, "line": {"width": 2}},
            cliponaxis=False,
            hovertemplate=f"{name}, step %{{customdata}}: hard %{{y:.0f}}<extra></extra>",
        )
    chart.update(
        yaxis={"range": [-0.07, 1.1], "tickvals": [0, 0.5, 1], "fixedrange": True},
        xaxis={"tickmode": "linear", "dtick": 1, "range": [0.4, T + 0.6], "fixedrange": True},
    )
    alt = (
        f"Bar chart of one seeded draw (seed {seed}) of the labels, green for a "
        f"correct step and red for a wrong one, N = {fmt.count(n, 'completion')} "
        f"per step. Correct solution, completions that finished: "
        + ", ".join(str(int(x)) for x in counts_c)
    )
    if counts_w is not None:
        alt += f"; solution wrong from step {err}: " + ", ".join(str(int(x)) for x in counts_w)
    return chart, alt + ". Diamonds: the hard labels."


def labels_frame(right: sl.Labels, wrong: sl.Labels | None, T: int) -> pd.DataFrame:
    """Every step's value and labels (mean and 5%–95%), for both solutions."""
    df = pd.DataFrame(
        {
            "step": [str(t) for t in range(1, T + 1)],
            "value correct": right.v,
            "soft mean correct": right.soft_mean,
            "soft 5% correct": right.soft_lo,
            "soft 95% correct": right.soft_hi,
            "hard mean correct": right.hard_mean,
            "hard 5% correct": right.hard_lo,
            "hard 95% correct": right.hard_hi,
        }
    )
    if wrong is not None:
        df["value wrong"] = wrong.v
        df["soft mean wrong"] = wrong.soft_mean
        df["soft 5% wrong"] = wrong.soft_lo
        df["soft 95% wrong"] = wrong.soft_hi
        df["hard mean wrong"] = wrong.hard_mean
        df["hard 5% wrong"] = wrong.hard_lo
        df["hard 95% wrong"] = wrong.hard_hi
    return df


def by_n_frame(right: sl.Labels, wrong: sl.Labels | None, g: float, S: int) -> pd.DataFrame:
    """Step S's labels against N, for the correct step and (if any) the wrong one."""
    v_c = float(right.v[S - 1])
    out = pd.DataFrame({"N": N_GRID})
    cases = [("correct", v_c)] + ([("wrong", g)] if wrong is not None else [])
    for label, v in cases:
        over = sl.labels_over_n(v, N_GRID)
        out[f"soft mean {label}"] = v
        out[f"soft 5% {label}"] = over.soft_lo
        out[f"soft 95% {label}"] = over.soft_hi
        out[f"hard mean {label}"] = over.hard_mean
    return out


def numbers(
    right: sl.Labels, wrong: sl.Labels | None, q: float, g: float, n: int, T: int, S: int
) -> None:
    """The details: every step's labels as a table and a CSV, and step S's against N."""
    df = labels_frame(right, wrong, T)
    layout.table(df, digits=4)
    name = f"q_{controls.fmt_number(q)}_g_{controls.fmt_number(g)}_n_{n}_T_{T}"
    layout.csv_download(
        df, f"step_labels_{name}.csv", label="Download the labels (CSV)", key="step-labels-csv"
    )

    def by_n() -> pd.DataFrame:
        return by_n_frame(right, wrong, g, S)

    layout.csv_download(
        by_n,
        f"step_labels_by_n_step_{S}_{name}.csv",
        label=f"Download step {S}'s labels against N (CSV)",
        key="step-labels-by-n-csv",
    )
