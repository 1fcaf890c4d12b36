"""Figure 12.1: REINFORCE on a five-armed bandit, with and without a baseline."""

import secrets

import numpy as np
import pandas as pd
import streamlit as st

from klrl_core import bandit
from klrl_app import controls, layout, plots

N_SHOWN = bandit.N_SHOWN
N_MANY = bandit.N_MANY
STEPS = bandit.DEFAULT_STEPS
SEED_MAX = 2**31 - 1

slot = layout.header(
    "Policy gradient on a bandit",
    "Figure 12.1 · Sections 12.1.2–12.1.3 · Equation (12.1)",
    "Five arms pay noisy rewards with means 1.0, 1.2, 0.8, 1.5 and 1.1; the fourth is best. "
    "A softmax policy starts uniform and follows REINFORCE for 300 pulls. "
    "Each line is one learner; watch how many of them find the best arm.",
)

ui = controls.Controls("bandit")
c_base, c_lr, c_seed, c_new = st.columns([1.0, 2.4, 1.1, 1.0], gap="medium",
                                         vertical_alignment="bottom")
with c_base:
    use_baseline = ui.switch(
        "baseline", "Baseline", default=False,
        help="Subtract a moving average of past rewards, b ← b + 0.1 (r − b), from each "
             "reward before the update; b is updated after it is used. Off: b = 0.")
with c_lr:
    lr = ui.number("lr", "Learning rate", default=bandit.DEFAULT_LR, lo=0.01, hi=1.0,
                   step=0.01, help="Step size of every update θ ← θ + lr · (r − b) · (onehot(a) − π).")
with c_seed:
    seed = ui.seed(help="The 20 runs drawn come from this seed, so a link shows the same runs.")
with c_new:
    st.button("New runs", icon=":material/refresh:", width="stretch",
              help="Draw another 20 runs from a fresh seed (the seed goes into the link).",
              on_click=lambda: ui.set("seed", secrets.randbelow(SEED_MAX + 1)))
ui.finish(slot)


@st.cache_data(show_spinner=f"Running {N_MANY:,} learners at these settings…", max_entries=256)
def many_runs(lr: float, use_baseline: bool) -> dict:
    """The many-run statistics for one setting (a fixed seed of their own)."""
    return bandit.many_run_summary(lr, use_baseline, n_runs=N_MANY, steps=STEPS)


@st.cache_data(show_spinner=False, max_entries=256)
def drawn_runs(lr: float, use_baseline: bool, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The runs drawn from ``seed`` and the exact-gradient path (cached: a slider moved back
    and forth revisits its values, and the two loops cost ~7 ms per move)."""
    return (bandit.simulate_reinforce(N_SHOWN, STEPS, lr, use_baseline, seed),
            bandit.exact_gradient_path(STEPS, lr))


runs, exact = drawn_runs(lr, use_baseline, seed)
mean_path = runs.mean(axis=0)
shown = bandit.final_summary(runs)
many = many_runs(lr, use_baseline)

st.markdown(f"**The {N_SHOWN} runs drawn** (seed {seed}): best arm's probability after {STEPS} updates")
layout.readout([
    (f"Mean · {N_SHOWN}", layout.fmt(shown["mean"])),
    (f"Spread · {N_SHOWN}", layout.fmt(shown["std"])),
    (f"Below ½ · {N_SHOWN}", f"{shown['n_below']} of {N_SHOWN}"),
], helps=[
    "Probability of the best arm after 300 updates, averaged over the runs drawn.",
    "Standard deviation of that probability between the runs drawn (population sd).",
    "Runs whose best-arm probability finishes under one half.",
])
st.markdown(f"**{N_MANY:,} runs** with the same learning rate and baseline, simulated now")
layout.readout([
    (f"Mean · {N_MANY:,}", layout.fmt(many["mean"])),
    (f"Spread · {N_MANY:,}", layout.fmt(many["std"])),
    (f"Below ½ · {N_MANY:,}", layout.pct(many["share_below"])),
], helps=[
    f"Simulated for this learning rate and baseline setting. Monte-Carlo standard "
    f"error ±{many['se_mean']:.3f}. These runs have their own fixed seed, so New runs "
    f"does not change them.",
    "Standard deviation of the final best-arm probability across all runs.",
    f"Share of all runs finishing under one half (standard error "
    f"±{100 * many['se_share']:.1f} points).",
])

which = "with the moving-average baseline" if use_baseline else "without a baseline"
layout.sentence(
    f"Learning rate {controls.fmt_number(lr)}, {which}. After {STEPS} updates the "
    f"{N_SHOWN} runs drawn here give the best arm probability {layout.fmt(shown['mean'])} on "
    f"average (standard deviation {layout.fmt(shown['std'])} between runs), and "
    f"{shown['n_below']} of them finish below one half. Across {N_MANY:,} runs with the same "
    f"settings the average is {layout.fmt(many['mean'])} and "
    f"{layout.pct(many['share_below'])} finish below one half."
)

steps = np.arange(STEPS + 1)
chart = plots.Chart("update step", "probability of the best arm", height=430)
# All runs in one trace, separated by gaps, so the legend has one entry for them.
# Compact dtypes keep the chart light (Plotly sends arrays as raw bytes): steps fit in 16 bits,
# run numbers in 8, and single precision is far below a pixel. NaN in y breaks the lines.
xs = np.tile(np.append(steps, STEPS), N_SHOWN).astype(np.int16)
ys = np.concatenate([np.append(row, np.nan) for row in runs]).astype(np.float32)
run_id = np.repeat(np.arange(1, N_SHOWN + 1, dtype=np.int8), STEPS + 2)
chart.add(
    x=xs, y=ys, mode="lines", name="one training run", customdata=run_id,
    line={"color": plots.COLORS["run"], "width": 1.2}, connectgaps=False,
    hovertemplate="run %{customdata}, step %{x}: %{y:.2f}<extra></extra>",
)
chart.add(
    x=steps, y=mean_path, mode="lines", name=f"average of the {N_SHOWN} runs",
    line={"color": plots.COLORS["optimum"], "width": 4},
    hovertemplate="average, step %{x}: %{y:.2f}<extra></extra>",
)
chart.add(
    x=steps, y=exact, mode="lines", name="exact gradient",
    line={"color": plots.COLORS["accent"], "width": 2.5, "dash": "dash"},
    hovertemplate="exact gradient, step %{x}: %{y:.2f}<extra></extra>",
)
chart.add(
    x=[0], y=[runs[0, 0]], mode="markers", name="start (uniform, 1/5)", showlegend=False,
    marker={"color": plots.COLORS["optimum"], "size": 11, "line": {"width": 2, "color": "white"}},
    hovertemplate="uniform start: every arm 1/5<extra></extra>", cliponaxis=False,
)
chart.note(0, float(runs[0, 0]), "start (uniform, 1/5)", plots.COLORS["optimum"],
           arrowhead=0, ax=60, ay=34, xanchor="left", font={"size": 12})
chart.hline(0.5, plots.COLORS["neutral"], label="one half")
chart.update(yaxis={"range": [-0.02, 1.02], "tickformat": ".1f"},
             xaxis={"range": [0, STEPS], "dtick": 50})
plots.show(chart, key="bandit-runs")

layout.look_for(
    "Lines that flatten near zero are runs where a weaker arm got lucky early: once its "
    "probability is high the run almost never pulls the best arm again, so it never learns "
    "that arm pays more. Those runs pull the thick average below the dashed line, which "
    "takes the expected step every time. Switch the baseline on: each update still points "
    "the same way on average, but a reward is now judged against what the run usually "
    "earns, so an ordinary pull of a middling arm pushes it down instead of up, and fewer "
    "runs get stuck. A larger learning rate makes runs commit sooner, to the right arm or a "
    "wrong one; a very small one barely moves in 300 steps."
)

with st.expander("The numbers behind the figure"):
    def runs_table() -> pd.DataFrame:
        columns = {"step": steps, **{f"run {i + 1}": row for i, row in enumerate(runs)},
                   f"average of {N_SHOWN} runs": mean_path, "exact gradient": exact}
        return pd.DataFrame(columns)

    finals = pd.DataFrame({"run": np.arange(1, N_SHOWN + 1), "P(best) after 300 steps": runs[:, -1]})
    st.dataframe(finals, hide_index=True, width="stretch",
                 column_config={"P(best) after 300 steps": st.column_config.NumberColumn(format="%.3f")})
    layout.csv_download(
        runs_table, f"bandit_lr_{controls.fmt_number(lr)}_baseline_{'on' if use_baseline else 'off'}"
            f"_seed_{seed}.csv", key="bandit-csv")
