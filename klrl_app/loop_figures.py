"""The loop page's figures (Section 12.7.4): the problems' solve rates, pass@k against k with
the KL-matched optimum and Yue et al.'s measurements, and the training dynamics, each with its
text alternative. Numbers come from klrl_core.loop.RunCurves; pages/loop.py wires them."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from klrl_app import controls, fmt, lru
from klrl_app.passk import K_MAX, LOG_K_AXIS, add_yue_marks
from klrl_app.plots import COLORS, Chart
from klrl_core import loop, pass_at_k

K_DRAWN = np.unique(
    np.concatenate([np.round(np.logspace(0, math.log10(K_MAX), 36)), 2.0 ** np.arange(11)])
)
COMMON_COLOR, RARE_COLOR, RUN_COLOR = COLORS["optimum"], COLORS["accent"], COLORS["incorrect"]
STEP_COLOR = COLORS["proxy"]  # the current step's rings and line: no curve is orange
X_PAD = 0.045  # of the steps, left of step 0 on the dynamics chart
NUMBERS_X = np.arange(1, loop.N_PROBLEMS + 1)


@lru.memo
def curves(
    estimator: str,
    g: int,
    lr: float,
    steps: int,
    kl: float,
    shared: bool,
    rare: int,
    seed: int,
    exact: bool = False,
) -> loop.RunCurves:
    """One setting's runs (sampled, or the expected-gradient run) and their curves."""
    run = (
        loop.expected_run(estimator, g, lr, steps, kl, shared, rare)
        if exact
        else loop.run(estimator, g, lr, steps, kl, shared, rare, seed=seed)
    )
    return loop.run_curves(run, K_DRAWN, K_MAX)


def step_stops(steps: int, max_stops: int) -> tuple[list[int], int]:
    """The step slider's stops, every stride-th step from 0 and the last, at most
    ``max_stops`` of them (the browser's table of every stop keeps to its budget,
    klrl_app/instant.py), and the stride."""
    stride = max(1, math.ceil(steps / (max_stops - 1)))
    return sorted(set(range(0, steps + 1, stride)) | {steps}), stride


@dataclass(frozen=True)
class Runs:
    """One setting's runs and its variants: θ shared or per problem, sampled or with the
    exact expected gradient (which draws nothing, so needs no seed)."""

    estimator: str
    g: int
    lr: float
    steps: int
    kl: float
    shared: bool
    rare: int
    seed: int
    exact: bool

    def variant(self, shared: bool, exact: bool) -> loop.RunCurves:
        return curves(
            self.estimator,
            self.g,
            self.lr,
            self.steps,
            self.kl,
            shared,
            self.rare,
            0 if exact else self.seed,
            exact,
        )

    def four(self) -> list[tuple[str, str, loop.RunCurves]]:
        """Every variant, labelled (θ, gradient): the causal section's table."""
        return [
            (a, b, self.variant(a == "shared", b == "exact"))
            for a in ("shared", "per problem")
            for b in ("sampled", "exact")
        ]

    def file_stem(self) -> str:
        """The setting in a download's file name."""
        return (
            f"loop_{self.estimator}_g{self.g}_lr{controls.fmt_number(self.lr)}_kl"
            f"{controls.fmt_number(self.kl)}_{'shared' if self.shared else 'per-problem'}_"
            f"rare{self.rare}_"
            + ("exact" if self.exact else f"seed{self.seed}")
            + f"_steps{self.steps}"
        )


@dataclass(frozen=True)
class RunLine:
    """One run drawn on the pass@k chart; the switches' choice is drawn thicker."""

    name: str
    curves: loop.RunCurves
    color: str
    dash: str
    chosen: bool


def run_lines(shared_sampled, shared_exact, own, shared: bool, exact: bool) -> list[RunLine]:
    """The pass@k chart's three runs: the shared θ sampled and exact, and one θ per problem."""
    return [
        RunLine("shared θ, sampled", shared_sampled, RUN_COLOR, "dash", shared and not exact),
        RunLine("shared θ, exact", shared_exact, COLORS["accent"], "dot", shared and exact),
        RunLine("per-problem θ", own, COLORS["best_of_n"], "solid", not shared),
    ]


def rare_ones(rare: int) -> str:
    return "the rare one" if rare == 1 else f"the {rare} rare ones"


def rare_the(rare: int) -> str:
    return "the rare problem" if rare == 1 else "the rare problems"


def rare_poss(rare: int) -> str:
    return "rare problem's" if rare == 1 else "rare problems'"


def cross_text(c: int) -> str:
    return "none" if c == 0 else f"{c:,}"


def rare_text(x: float) -> str:
    return "no rare problems" if math.isnan(x) else fmt.prob(x)


def problems_chart(tr: loop.RunCurves, t: int, exact: bool) -> tuple[Chart, str]:
    prob, rare = tr.run.problems, tr.run.rare
    n = loop.N_PROBLEMS
    x_title = (
        "problem ("
        + (f"1–{n - rare} common" if rare < n else "")
        + (", " if 0 < rare < n else "")
        + (f"{n + 1 - rare}–{n} rare" if rare > 1 else f"{n} rare" if rare == 1 else "")
        + ")"
    )
    rates = tr.success[t]
    c = Chart(x_title, "solve rate, " + ("exact run" if exact else "mean of 20 runs"), height=320)
    kinds = [("common", ~prob.rare, COMMON_COLOR, ""), ("rare", prob.rare, RARE_COLOR, "/")]
    for name, mask, color, pattern in kinds:
        if mask.any():
            c.add(
                "bar",
                x=NUMBERS_X[mask],
                y=rates[mask],
                name=name,
                marker={"color": color, "pattern": {"shape": pattern}},
                hovertemplate="problem %{x}: %{y:.4f}<extra></extra>",
            )
    c.add(
        x=NUMBERS_X,
        y=prob.base_rates,
        mode="markers",
        name="base model",
        marker={
            "symbol": "line-ew-open",
            "size": 14,
            "color": COLORS["reference"],
            "line": {"width": 3, "color": COLORS["reference"]},
        },
        hovertemplate="problem %{x}: base %{y:.2f}<extra></extra>",
    )
    c.update(
        yaxis={"range": [0, 1.04]},
        xaxis={"range": [0.4, 24.6], "tickvals": sorted({1, n - rare, n} - {0})},
        bargap=0.25,
        legend={"font": {"size": 12}},
    )
    common = tr.common_rate[t]
    parts = []
    if not math.isnan(common):
        parts.append(f"the {n - rare} common problems average {fmt.fixed(common, 3)} (base 0.300)")
    if rare:
        parts.append(f"{rare_ones(rare)} {rare_text(tr.rare_rate[t])} (base 0.050)")
    hatched = f"{rare_ones(rare).removeprefix('the ')} hatched, " if rare else ""
    who = "one run without sampling" if exact else f"mean of {loop.RUNS_DEFAULT} runs"
    return c, (
        f"Bars: the 24 problems' solve rates at step {t:,} ({who}; "
        f"{hatched}base rates as ticks): " + " and ".join(parts) + "."
    )


def passk_chart(tr: loop.RunCurves, t: int, lines: list[RunLine]) -> tuple[Chart, str]:
    c = Chart("attempts k (log scale)", "mean pass@k", height=330)
    c.add(
        x=K_DRAWN,
        y=tr.base,
        mode="lines",
        name="base",
        line={"color": COLORS["reference"], "width": 3},
        hovertemplate="k = %{x:,}<br>base %{y:.3f}<extra></extra>",
    )
    c.add(
        x=K_DRAWN,
        y=tr.opt_passk[t],
        mode="lines",
        name="optimum, same KL",
        line={"color": COLORS["optimum"], "width": 3},
        hovertemplate="k = %{x:,}<br>optimum %{y:.3f}<extra></extra>",
    )
    for line in lines:
        c.add(
            x=K_DRAWN,
            y=line.curves.passk[t],
            mode="lines",
            name=line.name,
            line={"color": line.color, "width": 4.5 if line.chosen else 2.5, "dash": line.dash},
            hovertemplate=f"k = %{{x:,}}<br>{line.name} %{{y:.3f}}<extra></extra>",
        )
    add_yue_marks(
        c,
        base={
            "name": "Yue base, measured",
            "color": COLORS["reference"],
            "hover": "measured by Yue et al. (2025), Qwen2.5-7B base",
        },
        trained={
            "name": "Yue GRPO, measured",
            "color": RUN_COLOR,
            "hover": "measured by Yue et al. (2025), after GRPO",
        },
    )
    cross = int(tr.cross[t])
    # the crossover marker is always present (hidden off the axis when there is none), so
    # every stop's figure has the same traces
    cx = cross if cross else K_MAX * 4
    c.add(
        x=[cx],
        y=[float(pass_at_k.mixture_pass_at_k(tr.run.problems.base_rates, cx))],
        mode="markers",
        name="base overtakes",
        showlegend=bool(cross),
        marker={"symbol": "x", "size": 11, "color": RUN_COLOR},
        hovertemplate="base overtakes at k = %{x:,}<extra></extra>",
    )
    c.update(xaxis=LOG_K_AXIS, yaxis={"range": [0, 1.04]}, legend={"font": {"size": 11}})
    chosen = next(line.name for line in lines if line.chosen)
    where = (
        f"the base overtakes the {chosen} run at k = {cross:,}"
        if cross
        else f"the {chosen} run stays on or above the base up to k = 1,024"
    )
    runs = "; ".join(
        f"{line.name} {fmt.fixed(line.curves.p1[t], 3)}, {fmt.fixed(line.curves.p256[t], 3)}"
        for line in lines
    )
    return c, (
        f"pass@k against k (1 to 1,024, log axis) at step {t:,}; at k = 1 and 256: "
        f"base {fmt.fixed(tr.base_p1, 3)}, {fmt.fixed(tr.base_p256, 3)}; {runs}; optimum "
        f"at the {chosen} run's KL {fmt.fixed(tr.opt_passk[t][0], 3)}, "
        f"{fmt.fixed(tr.opt_p256[t], 3)}; {where} (drawn thicker). Open markers: Yue et "
        f"al.'s measurements."
    )


def dynamics_chart(tr: loop.RunCurves, t: int, exact: bool) -> tuple[Chart, str]:
    rare, steps, g = tr.run.rare, tr.run.steps, tr.run.g
    x_steps = np.arange(steps + 1)
    kl_top = 1.08 * max(float(np.max(tr.kl)), float(np.max(tr.entropy)), math.log(8))
    c = Chart("training step", "nats", height=340)
    c.add(
        x=x_steps,
        y=tr.entropy,
        mode="lines",
        name="entropy of π",
        line={"color": COLORS["true"], "width": 2.5},
        hovertemplate="step %{x}<br>entropy %{y:.3f} nats<extra></extra>",
    )
    c.add(
        x=x_steps,
        y=tr.kl,
        mode="lines",
        name="KL(π ‖ π_ref)",
        line={"color": COLORS["optimum"], "width": 2.5},
        hovertemplate="step %{x}<br>KL %{y:.3f} nats<extra></extra>",
    )
    c.add(
        x=x_steps,
        y=tr.all_wrong,
        mode="lines",
        name="all-wrong groups, all problems",
        yaxis="y2",
        line={"color": COLORS["neutral"], "width": 2.5},
        hovertemplate="step %{x}<br>all wrong %{y:.1%}<extra></extra>",
    )
    if rare:
        c.add(
            x=x_steps,
            y=tr.rare_wrong,
            mode="lines",
            name="all-wrong groups, rare problems",
            yaxis="y2",
            line={"color": RARE_COLOR, "width": 2.5, "dash": "dash"},
            hovertemplate="step %{x}<br>rare, all wrong %{y:.1%}<extra></extra>",
        )
    # The rings are drawn over the plot's edge (cliponaxis off), whole at step 0 and the last.
    ring = {"size": 9, "color": "white", "line": {"width": 2, "color": STEP_COLOR}}
    c.add(
        x=[t, t],
        y=[round(float(tr.entropy[t]), 5), round(float(tr.kl[t]), 5)],
        mode="markers",
        showlegend=False,
        marker=ring,
        hoverinfo="skip",
        cliponaxis=False,
    )
    low = [round(float(v), 5) for v in [tr.all_wrong[t]] + ([tr.rare_wrong[t]] if rare else [])]
    c.add(
        x=[t] * len(low),
        y=low,
        mode="markers",
        showlegend=False,
        yaxis="y2",
        marker=ring,
        hoverinfo="skip",
        cliponaxis=False,
    )
    c.layout["shapes"].append(
        {
            "type": "line",
            "xref": "x",
            "x0": t,
            "x1": t,
            "yref": "paper",
            "y0": 0,
            "y1": 1,
            "line": {"color": STEP_COLOR, "width": 1.5, "dash": "dot"},
        }
    )
    # The x axis starts a little before step 0, so that step 0's rings clear the y axes' tick
    # labels and the "0" under the origin clears "0%" (issue 31, item 14).
    c.update(
        xaxis={"range": [-X_PAD * steps, steps], "anchor": "y2"},
        yaxis={"domain": [0.42, 1.0], "range": [0, kl_top], "title": {"standoff": 6}},
        yaxis2={
            "domain": [0.0, 0.35],
            "range": [0, 1.04],
            "tickvals": [0, 0.5, 1],
            "tickformat": ".0%",
            "automargin": True,
            "title": {"text": "groups", "standoff": 6},
            "gridcolor": "rgba(128, 132, 149, 0.25)",
        },
        margin={"r": 16},
        legend={"font": {"size": 11}},
    )
    rare_part = f", {fmt.pct(tr.rare_wrong[t])} on {rare_the(rare)}" if rare else ""
    chance = "chance that a group" if exact else "groups"
    return c, (
        f"Over the {steps:,} steps, step {t:,} marked: entropy {fmt.fixed(tr.entropy[t], 3)} "
        f"nats (from {fmt.fixed(tr.entropy[0], 3)}), KL {fmt.fixed(tr.kl[t], 3)} nats; "
        f"{chance} of {g} all wrong: {fmt.pct(tr.all_wrong[t])} of all "
        f"problems{rare_part}."
    )


# ------------------------------------------------------------------------------ the tables
def four_runs_frame(grid, step: int) -> pd.DataFrame:
    """The four runs (θ shared or per problem, sampled or exact) at one step, one row each;
    one label column: six columns would scroll sideways on a phone."""
    rare = grid[0][2].run.rare
    return pd.DataFrame(
        {
            "θ, gradient": [f"{a}, {b}" for a, b, _ in grid],
            "pass@1": [x.p1[step] for *_, x in grid],
            "pass@256": [x.p256[step] for *_, x in grid],
            "base overtakes at k": [cross_text(int(x.cross[step])) for *_, x in grid],
            f"{rare_poss(rare)} success": [rare_text(x.rare_rate[step]) for *_, x in grid],
        }
    )


def per_step_frame(tr: loop.RunCurves) -> pd.DataFrame:
    rare = tr.run.rare
    df = pd.DataFrame(
        {
            "step": np.arange(tr.run.steps + 1),
            "pass@1": tr.p1,
            "pass@256": tr.p256,
            "crossover k (0 = none)": tr.cross,
            "KL (nats)": tr.kl,
            "entropy (nats)": tr.entropy,
            "all-wrong share": tr.all_wrong,
            "optimum pass@256": tr.opt_p256,
            "optimum beta": tr.opt.beta,
            "optimum at or above base": tr.opt_ok,
        }
    )
    if rare:
        df["rare success"] = tr.rare_rate
        df["rare all-wrong share"] = tr.rare_wrong
        df["optimum rare success"] = tr.opt_rare_rate
    labels = [f"C{i + 1}" for i in range(24 - rare)] + [f"R{i + 1}" for i in range(rare)]
    for i, name in enumerate(labels):
        df[f"{name} success"] = tr.success[:, i]
    return df


def passk_frame(tr: loop.RunCurves, lines: list[RunLine], step: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "k": K_DRAWN.astype(int),
            "base": tr.base,
            **{line.name: line.curves.passk[step] for line in lines},
            "optimum at the same KL": tr.opt_passk[step],
        }
    )
