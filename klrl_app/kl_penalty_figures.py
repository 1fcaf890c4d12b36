"""The kl-penalty page's figure (Chapter 28, left panel): the policies each training rule
reaches, on a log scale, with its text alternative; and the tables behind it (the estimators,
where each policy ends up, the policies drawn). pages/kl-penalty.py wires them."""

from __future__ import annotations

import numpy as np
import pandas as pd

from klrl_app import controls, fmt, layout, lru, plots
from klrl_core import kl_penalty as core

RULE_COLORS = {
    "k1 in the reward": plots.COLORS["optimum"],
    "k1 as a loss": plots.COLORS["incorrect"],
    "k3 as a loss": plots.COLORS["proxy"],
}
FORWARD_COLOR = "#a16207"  # dark amber: the forward-KL optimum, beside the orange k3 bars
PRESENT_HEIGHT = 330  # chart height (px) in the presentation view, to fit 720 px
ESTIMATORS = ["k1 = −log ρ", "k2 = ½(log ρ)²", "k3 = ρ − 1 − log ρ"]
# the summary table's rows: (name shown, policy in KLPenaltyResult.summary_rows)
SUMMARY = [
    ("k1 in the reward", "k1 in the reward"),
    ("k1 as a loss", "k1 as a loss"),
    ("k3 as a loss", "k3 as a loss"),
    ("π* (reverse-KL opt.)", "pi* (target)"),
    ("forward-KL opt.", "forward-KL optimum"),
    ("π_ref (start)", "reference pi_ref"),
]


@lru.memo
def log_floor(seed: int, betas: tuple[float, ...]) -> float:
    """The chart's log-axis floor, one for every β stop (nothing rescales during a drag): a
    decade below the smallest probability of π*, the forward-KL optimum and π_ref at any β,
    and at most 10⁻⁶ (the trained rules' smallest, about 6 × 10⁻⁵ here, stay above it)."""
    setup = core.make_setup(seed)
    low = min(
        min(
            float(core.target_policy(setup.pi_ref, setup.r, b).min()),
            float(core.forward_kl_optimum(setup.pi_ref, setup.r, b).min()),
        )
        for b in betas
    )
    return float(10 ** np.floor(np.log10(max(min(low, 1e-6, float(setup.pi_ref.min())), 1e-12))))


@lru.memo
def optima_apart(seed: int, betas: tuple[float, ...]) -> np.ndarray:
    """TV(pi*, forward-KL optimum) at every beta the slider offers, for one prompt."""
    setup = core.make_setup(seed)
    return core.optima_apart(setup.pi_ref, setup.r, betas)


def policies_chart(
    beta: float, res: core.KLPenaltyResult, steps: int, floor: float, present: bool
) -> tuple[plots.Chart, str]:
    """The policies reached at β: grouped bars on a log scale, responses sorted by reward."""
    order = np.argsort(res.r)
    x = np.arange(1, len(order) + 1)
    policies = {name: res.policies[i][order] for i, name in enumerate(core.RULES)}
    target, forward, ref = res.target[order], res.forward[order], res.pi_ref[order]
    rows = res.summary()
    pi_k1l = res.policies[core.RULES.index("k1 as a loss")]
    top_k1l = int(np.argmax(pi_k1l))
    # In the presentation view the type is larger and the whole chart, tick labels and axis
    # title included, must fit under the controls and readout on a 1280 × 720 projector.
    c = plots.Chart(
        "response, sorted by its reward r",
        "probability (log scale)",
        height=PRESENT_HEIGHT if present else 440,
        barmode="group",
        bargap=0.22,
        bargroupgap=0.05,
    )
    reward_text = [f"r = {fmt.fixed(v, 2)}" for v in res.r[order]]
    c.add(
        "bar",
        x=x,
        y=ref,
        name="π_ref (start)",
        customdata=reward_text,
        marker={"color": "rgba(0,0,0,0)", "line": {"color": plots.COLORS["reference"], "width": 2}},
        hovertemplate="%{customdata}<br>π_ref = %{y:.4f}<extra></extra>",
    )
    c.add(
        "bar",
        x=x,
        y=target,
        name="π* (k1 in the reward heads here)",
        customdata=reward_text,
        marker={"color": plots.COLORS["optimum"]},
        hovertemplate="%{customdata}<br>π* = %{y:.4f}<extra></extra>",
    )
    c.add(
        "bar",
        x=x,
        y=policies["k3 as a loss"],
        name="k3 as a loss",
        customdata=reward_text,
        marker={"color": RULE_COLORS["k3 as a loss"]},
        hovertemplate="%{customdata}<br>k3 as a loss: %{y:.4f}<extra></extra>",
    )
    c.add(
        "bar",
        x=x,
        y=policies["k1 as a loss"],
        name="k1 as a loss",
        customdata=reward_text,
        marker={"color": RULE_COLORS["k1 as a loss"]},
        hovertemplate="%{customdata}<br>k1 as a loss: %{y:.4f}<extra></extra>",
    )
    # Markers for the two policies that sit on top of bars: k1-in-the-reward on pi*, and the
    # forward-KL optimum on the k3 bars (bar group offsets: four bars of width 0.78/4).
    w = (1 - 0.22) / 4
    c.add(
        x=x - 0.5 * w,
        y=policies["k1 in the reward"],
        mode="markers",
        name="k1 in the reward (trained)",
        customdata=reward_text,
        marker={
            "symbol": "circle",
            "size": 8,
            "color": "white",
            "line": {"color": plots.COLORS["optimum"], "width": 2},
        },
        hovertemplate="%{customdata}<br>k1 in the reward: %{y:.4f}<extra></extra>",
    )
    c.add(
        x=x + 0.5 * w,
        y=forward,
        mode="markers",
        name="forward-KL optimum (dashes)",
        customdata=reward_text,
        marker={"symbol": "line-ew", "size": 16, "line": {"color": FORWARD_COLOR, "width": 3}},
        hovertemplate="%{customdata}<br>forward-KL optimum: %{y:.4f}<extra></extra>",
    )
    decades = [10.0**k for k in range(int(np.log10(floor)), 1)]
    c.update(
        yaxis={
            "type": "log",
            "range": [np.log10(floor), 0.05],
            "tickvals": decades,
            "ticktext": [fmt.sig(v, 1, trim=True) for v in decades],
        },
        xaxis={
            "tickvals": list(x),
            "ticktext": [fmt.fixed(v, 3) for v in res.r[order]],
            "range": [0.45, len(x) + 0.55],
        },
        legend={"font": {"size": 12}},
    )
    return c, (
        f"Grouped bar chart on a log scale of the {len(x)} responses sorted by reward, at "
        f"β = {controls.fmt_number(beta)} after {steps:,} steps: π_ref as outlines, π* as blue "
        f"bars, the policies trained with k3 as a loss and with k1 as a loss as bars, the "
        f"policy trained with k1 in the reward as circles and the forward-KL optimum as "
        f"dashes. k1 in the reward ends {fmt.fixed(rows['k1 in the reward']['tv_to_target'], 3)}"
        f" from π* in total variation, k3 as a loss "
        f"{fmt.fixed(rows['k3 as a loss']['tv_to_forward'], 3)} from the forward-KL optimum, and "
        f"k1 as a loss puts {fmt.pct(pi_k1l[top_k1l], 1)} on the response with r = "
        f"{fmt.fixed(res.r[top_k1l], 3)}; the two optima are "
        f"{fmt.fixed(rows['pi* (target)']['tv_to_forward'], 3)} apart."
    )


def estimator_table(est: core.EstimatorStats, se: np.ndarray) -> pd.DataFrame:
    """The estimator table: each estimator's mean, its standard error, bias, spread and share
    of negative estimates (in %)."""
    return pd.DataFrame(
        {
            "estimator": ESTIMATORS,
            "mean": est.mean,
            "standard error": se,
            "bias": est.mean - est.true_kl,
            "spread (sd)": est.std,
            "negative (%)": np.round(100 * est.share_negative, 6),
        }
    )


def estimator_shown(
    table: pd.DataFrame, est: core.EstimatorStats, se: np.ndarray
) -> tuple[pd.DataFrame, dict]:
    """The estimator table as printed (layout.small_table's table and formats): each mean with
    its standard error, to the digits that error supports."""
    shown = (
        table.drop(columns="standard error")
        .assign(mean=[fmt.mean_se(m, s) for m, s in zip(est.mean, se)])
        .rename(columns={"mean": "mean ± SE"})
    )
    return shown, {
        "bias": lambda v: fmt.fixed(v, 4, signed=True),
        "spread (sd)": lambda v: fmt.fixed(v, 4),
        "negative (%)": lambda v: fmt.fixed(v, 1),
    }


def summary_table(res: core.KLPenaltyResult) -> pd.DataFrame:
    """Expected reward, KL to π_ref and the distances to both optima, one row per policy."""
    rows = res.summary()
    return pd.DataFrame(
        [
            {
                "policy": name,
                "E[r]": rows[key]["reward"],
                "KL to π_ref": rows[key]["kl_to_ref"],
                "TV to π*": rows[key]["tv_to_target"],
                "TV to fwd opt.": rows[key]["tv_to_forward"],
            }
            for name, key in SUMMARY
        ]
    )


def policies_table(res: core.KLPenaltyResult) -> pd.DataFrame:
    """The policies drawn, responses sorted by reward as on the chart."""
    order = np.argsort(res.r)
    return pd.DataFrame(
        {
            "reward r": res.r[order],
            "pi_ref": res.pi_ref[order],
            "pi* (target)": res.target[order],
            "forward-KL optimum": res.forward[order],
            **{name: res.policies[i][order] for i, name in enumerate(core.RULES)},
        }
    )


def details(
    res: core.KLPenaltyResult,
    est_df: pd.DataFrame,
    summary: pd.DataFrame,
    beta: float,
    seed: int,
    steps: int,
) -> None:
    """The numbers behind the figure: the policies drawn, and three downloads (them, the
    estimator table and the summary table)."""
    est = res.estimators
    df = policies_table(res)
    layout.table(df)
    stem = f"kl_penalty_beta_{controls.fmt_number(beta)}_seed_{seed}_steps_{steps}"
    layout.csv_download(df, f"{stem}_policies.csv", key="kl-penalty-csv")
    est_out = est_df.assign(true_kl=est.true_kl, repetitions=est.reps, samples=est.n_samples)
    layout.csv_download(
        est_out,
        f"{stem}_estimators.csv",
        label="Download the estimator table (CSV)",
        key="kl-penalty-est-csv",
    )
    layout.csv_download(
        summary,
        f"{stem}_summary.csv",
        label="Download the reward, KL and distance table (CSV)",
        key="kl-penalty-summary-csv",
    )
