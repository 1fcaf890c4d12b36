"""Chapter 28, right panel and second experiment: where GRPO's length bias comes from."""

import numpy as np
import pandas as pd
import streamlit as st

from klrl_core import length_bias as core
from klrl_app import controls, layout, plots

STEPS_MAX = 5000
RUNS_MAX = 200
MAX_POINTS = 200                       # points per curve drawn (ample at the chart's width)
CHECKPOINTS = (0, 100, 300, 1000)      # the chapter's table
BAND = (10, 90)                        # percentiles of the runs shaded around the mean
BAND_FILL = {"correct": "rgba(34, 197, 94, 0.18)", "incorrect": "rgba(239, 68, 68, 0.16)",
             "p": "rgba(59, 130, 246, 0.18)"}

slot = layout.header(
    "GRPO's length bias",
    "Chapter 28 · Normalizations and their biases · right panel of the two-panel figure · "
    "Exercise 28.5",
    "A toy model answers with one of four tokens, only one of them right, then writes filler "
    "until it stops (at most 40 more tokens). The reward ignores length entirely. Train it with "
    "GRPO, which averages each response's loss over its own tokens, and with Dr. GRPO, which "
    "divides every response by the same constant, and watch what happens to the lengths.",
)

ui = controls.Controls("length-bias")
c_steps, c_runs, c_seed = st.columns([2.2, 2.2, 1.0], gap="medium", vertical_alignment="bottom")
with c_steps:
    steps = ui.integer("steps", "Training steps", default=core.STEPS_DEFAULT, lo=100,
                       hi=STEPS_MAX, step=100,
                       help="Updates per run; each samples a group of 8 responses.")
with c_runs:
    runs = ui.integer("runs", "Independent runs", default=core.RUNS_DEFAULT, lo=1, hi=RUNS_MAX,
                      help="Runs of each method, averaged in the curves; the band shows their "
                           "spread.")
with c_seed:
    seed = ui.seed(default=core.SEED_DEFAULT,
                   help="The same seed draws the same runs. Averages over 20 runs differ "
                        "from seed to seed, and from the chapter's table, by Monte Carlo "
                        "error in the last digit.")
c_lr_g, c_lr_d = st.columns(2, gap="medium")
with c_lr_g:
    lr_grpo = ui.number("lr_grpo", "GRPO step size", default=core.LR_DEFAULTS["GRPO"], lo=0.1,
                        hi=10.0, step=0.1,
                        help="Step size on the stop logits (the answer logits get a tenth of "
                             "it). The chapter uses 2.")
with c_lr_d:
    lr_dr = ui.number("lr_dr", "Dr. GRPO step size", default=core.LR_DEFAULTS["Dr. GRPO"], lo=1.0,
                      hi=100.0, step=1.0,
                      help="Larger than GRPO's because its constant weight 1/(8·41) is small; "
                           "the chapter uses 20 so both learn the answer at similar speed.")
ui.finish(slot)


# No elements inside the cached function: Streamlit replays them on every cache hit.
@st.cache_data(show_spinner=f"Training {runs:,} runs of each method for {steps:,} steps…",
               show_time=True, max_entries=64)
def training(steps: int, runs: int, lr_grpo: float, lr_dr: float, seed: int) -> dict:
    """Both methods' curves (mean and band over runs) and the runs' values at the end."""
    # record every k-th step with k a divisor of 100, so the chapter's checkpoints are recorded
    every = next(k for k in (1, 2, 4, 5, 10, 20, 25, 50, 100) if k * MAX_POINTS >= steps)
    res = core.simulate(steps=steps, runs=runs, seed=seed,
                        lrs={"GRPO": lr_grpo, "Dr. GRPO": lr_dr}, record_every=every)
    frames, final, table = [], {}, []
    for m in core.METHODS:
        c = res.curves[m]
        df = pd.DataFrame({"method": m, "step": res.steps})
        for key in core.STATS:
            x = getattr(c, key)
            df[key] = x.mean(axis=1)
            df[f"{key}_p{BAND[0]}"] = np.percentile(x, BAND[0], axis=1)
            df[f"{key}_p{BAND[1]}"] = np.percentile(x, BAND[1], axis=1)
        frames.append(df)
        final[m] = res.final(m)
        for s in CHECKPOINTS:
            if s <= steps and (res.steps == s).any():
                row = res.at(m, int(np.flatnonzero(res.steps == s)[0]))
                table.append({"method": m, "step": s, **{k: row[k] for k in core.STATS}})
    return {"curves": pd.concat(frames, ignore_index=True), "final": final,
            "checkpoints": pd.DataFrame(table)}


out = training(steps, runs, lr_grpo, lr_dr, seed)
curves, final = out["curves"], out["final"]
start = float(curves["len_correct"].iloc[0])          # every run starts at the same 9.3
p_start = float(curves["p_correct"].iloc[0])          # and at 1/4 on the right answer


def method_readout(m: str) -> None:
    f = final[m]
    se = (f"standard errors of the three means: ± {f['p_correct_se']:.3f}, "
          f"± {f['len_correct_se']:.2f} and ± {f['len_incorrect_se']:.2f}" if runs > 1
          else "a single run, so no standard error")
    layout.readout([
        ("P(correct)", layout.fmt(f["p_correct"], 2)),
        ("length if right / wrong", f"{layout.fmt(f['len_correct'], 1)} / "
                                    f"{layout.fmt(f['len_incorrect'], 1)}"),
    ], helps=[
        f"{m}: probability of the right answer after {steps:,} steps, mean of {runs:,} runs "
        f"({se}).",
        f"{m}: expected length in tokens (answer + fillers + end) of a correct response, then of "
        f"an incorrect one (averaged over the three wrong answers). Both start at {start:.1f}; "
        f"no response is shorter than 2.",
    ])


g, d = final["GRPO"], final["Dr. GRPO"]
layout.sentence(
    f"After {steps:,} steps (mean of {runs:,} runs): GRPO gets the answer right with "
    f"probability {layout.fmt(g['p_correct'], 2)}, its correct responses expect "
    f"{layout.fmt(g['len_correct'], 1)} tokens and its incorrect ones "
    f"{layout.fmt(g['len_incorrect'], 1)}; Dr. GRPO: {layout.fmt(d['p_correct'], 2)}, "
    f"{layout.fmt(d['len_correct'], 1)} and {layout.fmt(d['len_incorrect'], 1)}. "
    f"Both started at {layout.fmt(p_start, 2)} and {start:.1f} tokens."
)

top = float(max(curves[f"len_correct_p{BAND[1]}"].max(), curves[f"len_incorrect_p{BAND[1]}"].max()))
y_max = max(14.0, np.ceil(top + 1.0))


def band(c: plots.Chart, df: pd.DataFrame, key: str, fill: str, yaxis: str) -> None:
    """The runs' 10th-90th percentile band of one statistic: one closed, filled outline."""
    step = df["step"].to_numpy()
    c.add(x=np.concatenate([step, step[::-1]]),
          y=np.concatenate([df[f"{key}_p{BAND[1]}"].to_numpy(),
                            df[f"{key}_p{BAND[0]}"].to_numpy()[::-1]]),
          mode="lines", line={"width": 0}, fill="toself", fillcolor=fill, yaxis=yaxis,
          showlegend=False, hoverinfo="skip")


def panel(m: str) -> plots.Chart:
    df = curves[curves["method"] == m]
    c = plots.Chart("training step", "expected length (tokens)", height=500)
    for key, name, color in (("len_incorrect", "incorrect", plots.COLORS["incorrect"]),
                             ("len_correct", "correct", plots.COLORS["correct"])):
        kind = "incorrect" if key == "len_incorrect" else "correct"
        band(c, df, key, BAND_FILL[kind], "y")
        c.add(x=df["step"], y=df[key], mode="lines", name=f"length if {name}",
              line={"color": color, "width": 3},
              hovertemplate=f"step %{{x:,}}<br>{name}: %{{y:.2f}} tokens<extra></extra>")
    band(c, df, "p_correct", BAND_FILL["p"], "y2")
    c.add(x=df["step"], y=df["p_correct"], mode="lines", name="P(correct answer)", yaxis="y2",
          line={"color": plots.COLORS["optimum"], "width": 2.5},
          hovertemplate="step %{x:,}<br>P(correct) %{y:.3f}<extra></extra>")
    c.hline(start, plots.COLORS["neutral"], label=f"start {start:.1f}")
    c.hline(2.0, plots.COLORS["neutral"], dash="dash", label="shortest: 2")
    c.update(yaxis={"domain": [0.36, 1.0], "range": [0, y_max]},
             yaxis2={"domain": [0.0, 0.25], "range": [0, 1.02], "title": {"text": "P(correct)"},
                     "tickvals": [0, 0.5, 1], "zeroline": False, "automargin": True},
             xaxis={"anchor": "y2", "range": [0, steps * 1.02],
                    "tickvals": [round(v) for v in np.linspace(0, steps, 6)], "tickformat": ","},
             legend={"font": {"size": 12}})
    return c


left, right = st.columns(2, gap="large")
for col, m, lr in ((left, "GRPO", lr_grpo), (right, "Dr. GRPO", lr_dr)):
    with col:
        how = ("advantage ÷ group std, each response ÷ its own length" if m == "GRPO"
               else "advantage unscaled, every response ÷ the same 8·41")
        st.markdown(f"**{m}** · step size {controls.fmt_number(lr)} · {how}")
        method_readout(m)
        plots.show(panel(m), key=f"length-bias-{m}")
st.caption(f"Lines: mean of {runs:,} runs. Shaded: the middle {BAND[1] - BAND[0]}% of runs "
           f"({BAND[0]}th to {BAND[1]}th percentile).")

layout.look_for(
    "At the chapter's settings both methods learn the answer (the blue curves), but only GRPO "
    "moves the lengths, and nothing in the reward asks for it. Per-response averaging gives "
    "every token of a response of length L the weight 1/L, so whether a response stops early "
    "changes how hard each of its tokens is pushed. A correct answer has a positive advantage "
    "and is reinforced more per token when it is short, so its stop logits climb until it ends "
    "straight after the answer (2 tokens). A wrong answer has a negative advantage and is "
    "penalised less per token when it is long, so its stop logits fall and it rambles on. "
    "Exercise 28.5 makes this exact: with weight 1/L the expected push on a stop logit is "
    "A·q(1−q)(1/L₁ − 1/L₂), which has the sign of the advantage; with Dr. GRPO's constant weight "
    "it is zero, and the lengths only wander with the sampling noise (the band). Late in GRPO "
    "training wrong answers are rare, so their length creeps up slowly and varies most between "
    "runs."
)

with st.expander("The numbers behind the figure"):
    st.markdown("**At the chapter's checkpoints** (mean of the runs)")
    st.dataframe(out["checkpoints"], hide_index=True, width="stretch", column_config={
        "p_correct": st.column_config.NumberColumn("P(correct)", format="%.2f"),
        "len_correct": st.column_config.NumberColumn("length if correct", format="%.1f"),
        "len_incorrect": st.column_config.NumberColumn("length if incorrect", format="%.1f"),
    })
    stem = (f"length_bias_steps_{steps}_runs_{runs}_lr_grpo_{controls.fmt_number(lr_grpo)}"
            f"_lr_dr_{controls.fmt_number(lr_dr)}_seed_{seed}")
    layout.csv_download(curves, f"{stem}.csv", key="length-bias-csv")
