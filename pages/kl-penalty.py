"""Chapter 28, left panel and first experiment: where the KL penalty goes, and what it reaches."""

import numpy as np
import pandas as pd
import streamlit as st

from klrl_core import kl_penalty as core
from klrl_app import controls, layout, plots

STEPS_MAX = 5000
RULE_COLORS = {"k1 in the reward": plots.COLORS["optimum"],
               "k1 as a loss": plots.COLORS["incorrect"],
               "k3 as a loss": plots.COLORS["proxy"]}
FORWARD_COLOR = "#a16207"          # dark amber: the forward-KL optimum, beside the orange k3 bars

slot = layout.header(
    "Where the KL penalty goes",
    "Chapter 28 · Estimating and differentiating the KL penalty · left panel of the "
    "two-panel figure · Exercise 28.3",
    "One prompt, ten possible responses, a reference policy π_ref and a reward for each "
    "response. The penalty β·KL(π ‖ π_ref) is estimated from sampled responses, and where that "
    "estimate enters the update decides which policy training ends at.",
)


BETA_LO, BETA_HI = 0.05, 5.0


ui = controls.Controls("kl-penalty")
c_beta, c_steps, c_seed = st.columns([2.2, 2.2, 1.0], gap="medium", vertical_alignment="bottom")
with c_beta:
    beta = ui.number("beta", "KL weight β (κ = 1/β)", default=core.BETA_DEFAULT, lo=BETA_LO,
                     hi=BETA_HI, step=0.05, inverse_alias="kappa",
                     help="Price of one nat of KL(π ‖ π_ref) in the objective E[r] − β·KL. "
                          "Small β: a weak anchor. A link may also give κ = 1/β.")
with c_steps:
    steps = ui.integer("steps", "Training steps", default=core.STEPS_DEFAULT, lo=100,
                       hi=STEPS_MAX, step=100,
                       help="Updates of each policy; every update samples 256 responses and "
                            "moves the logits with step size 0.5.")
with c_seed:
    seed = ui.seed(help="Draws the prompt (π_ref and the rewards) and every sample. Seed 0 is "
                        "the chapter's prompt.")
ui.finish(slot)


# No elements inside the cached function: Streamlit replays them on every cache hit.
@st.cache_data(show_spinner=f"Training the three rules for {steps:,} steps…", show_time=True,
               max_entries=128)
def experiment(beta: float, seed: int, steps: int) -> core.KLPenaltyResult:
    """Estimator table and the three trained policies for one setting."""
    return core.run_experiment(beta=beta, seed=seed, steps=steps)


res = experiment(beta, seed, steps)
est = res.estimators
rows = {row["policy"]: row for row in res.summary_rows()}
kappa_text = controls.fmt_number(round(1.0 / beta, 4))

layout.readout([
    ("KL(π* ‖ π_ref)", f"{est.true_kl:.4f} nats"),
    ("k1 estimates < 0", layout.pct(est.share_negative[0], 1)),
    ("TV(k3 loss, fwd opt.)", layout.fmt(rows["k3 as a loss"]["tv_to_forward"], 3)),
    ("TV(π*, fwd opt.)", layout.fmt(rows["pi* (target)"]["tv_to_forward"], 3)),
], helps=[
    "The divergence the target π* ∝ π_ref·exp(r/β) spends: what the estimators below estimate.",
    f"Share of the {est.reps:,} sixteen-sample estimates of k1 = −log ρ that come out negative.",
    "Total-variation distance between the policy trained with k3 as a loss and the optimum "
    "of the forward-KL objective E[r] − β·KL(π_ref ‖ π).",
    "Total-variation distance between the two optima: π* (reverse KL) and the forward-KL "
    "optimum.",
])
layout.sentence(
    f"β = {controls.fmt_number(beta)} (κ = 1/β = {kappa_text}), seed {seed}, {steps:,} steps. "
    f"Sixteen samples of π* estimate KL = {est.true_kl:.4f}: k1 averages {est.mean[0]:.4f} "
    f"(spread {est.std[0]:.4f}, {layout.pct(est.share_negative[0], 1)} negative), "
    f"k2 {est.mean[1]:.4f} (spread {est.std[1]:.4f}), k3 {est.mean[2]:.4f} "
    f"(spread {est.std[2]:.4f}). Expected reward: k1 in the reward "
    f"{rows['k1 in the reward']['reward']:.3f}, k1 as a loss {rows['k1 as a loss']['reward']:.3f}, "
    f"k3 as a loss {rows['k3 as a loss']['reward']:.3f} (π*: {rows['pi* (target)']['reward']:.3f})."
)

# --- the estimators -----------------------------------------------------------------------
left, right = st.columns(2, gap="large")
with left:
    st.markdown(f"**Estimating the value** · {est.reps:,} estimates, each from "
                f"{est.n_samples} samples of π*")
    est_df = pd.DataFrame({
        "estimator": ["k1 = −log ρ", "k2 = ½(log ρ)²", "k3 = ρ − 1 − log ρ"],
        "mean": est.mean,
        "bias": est.mean - est.true_kl,
        "spread (sd)": est.std,
        "negative": 100 * est.share_negative,
    })
    layout.small_table(est_df, {"mean": lambda v: layout.fmt(v, 4),
                                "bias": lambda v: layout.fmt_signed(v, 4),
                                "spread (sd)": "{:.4f}", "negative": "{:.1f}%"})
    st.caption(f"ρ = π_ref(y)/π*(y) at a sampled response y. Bias: mean minus the true "
               f"KL(π* ‖ π_ref) = {est.true_kl:.4f} nats. Spread: standard deviation of one "
               f"16-sample estimate. Negative: share of the estimates below zero.")

with right:
    st.markdown(f"**Where each policy ends up** after {steps:,} training steps")
    table = pd.DataFrame([
        {"policy": name, "E[r]": rows[key]["reward"], "KL to π_ref": rows[key]["kl_to_ref"],
         "TV to π*": rows[key]["tv_to_target"], "TV to fwd opt.": rows[key]["tv_to_forward"]}
        for name, key in [("k1 in the reward", "k1 in the reward"),
                          ("k1 as a loss", "k1 as a loss"),
                          ("k3 as a loss", "k3 as a loss"),
                          ("π* (reverse-KL opt.)", "pi* (target)"),
                          ("forward-KL opt.", "forward-KL optimum"),
                          ("π_ref (start)", "reference pi_ref")]])
    layout.small_table(table, {c: "{:.3f}" for c in ("E[r]", "KL to π_ref", "TV to π*",
                                                      "TV to fwd opt.")})
    st.caption("E[r]: expected reward. KL(π ‖ π_ref) in nats. TV: total-variation distance, "
               "to π* ∝ π_ref·exp(r/β) and to the forward-KL optimum, which maximizes "
               "E[r] − β·KL(π_ref ‖ π).")

# --- the policies ---------------------------------------------------------------------------
order = np.argsort(res.r)
x = np.arange(1, len(order) + 1)
policies = {name: res.policies[i][order] for i, name in enumerate(core.RULES)}
target, forward, ref = res.target[order], res.forward[order], res.pi_ref[order]
floor = 10 ** np.floor(np.log10(max(min(float(np.min(res.policies)), float(forward.min()),
                                        float(target.min()), float(ref.min())), 1e-12)))
with st.container():
    st.markdown(f"**The policies reached**, responses sorted by reward (log scale: the "
                f"low-reward responses are where the rules differ)")
    c = plots.Chart("response, sorted by its reward r", "probability (log scale)", height=470,
                    barmode="group", bargap=0.22, bargroupgap=0.05)
    reward_text = [f"r = {v:.2f}" for v in res.r[order]]
    c.add("bar", x=x, y=ref, name="π_ref (start)", customdata=reward_text,
          marker={"color": "rgba(0,0,0,0)", "line": {"color": plots.COLORS["reference"], "width": 2}},
          hovertemplate="%{customdata}<br>π_ref = %{y:.4f}<extra></extra>")
    c.add("bar", x=x, y=target, name="π* (k1 in the reward reaches it)", customdata=reward_text,
          marker={"color": plots.COLORS["optimum"]},
          hovertemplate="%{customdata}<br>π* = %{y:.4f}<extra></extra>")
    c.add("bar", x=x, y=policies["k3 as a loss"], name="k3 as a loss", customdata=reward_text,
          marker={"color": RULE_COLORS["k3 as a loss"]},
          hovertemplate="%{customdata}<br>k3 as a loss: %{y:.4f}<extra></extra>")
    c.add("bar", x=x, y=policies["k1 as a loss"], name="k1 as a loss", customdata=reward_text,
          marker={"color": RULE_COLORS["k1 as a loss"]},
          hovertemplate="%{customdata}<br>k1 as a loss: %{y:.4f}<extra></extra>")
    # Markers for the two policies that sit on top of bars: k1-in-the-reward on pi*, and the
    # forward-KL optimum on the k3 bars (bar group offsets: four bars of width 0.73/4).
    w = (1 - 0.22) / 4
    c.add(x=x - 0.5 * w, y=policies["k1 in the reward"], mode="markers",
          name="k1 in the reward (trained)", customdata=reward_text,
          marker={"symbol": "circle", "size": 8, "color": "white",
                  "line": {"color": plots.COLORS["optimum"], "width": 2}},
          hovertemplate="%{customdata}<br>k1 in the reward: %{y:.4f}<extra></extra>")
    c.add(x=x + 0.5 * w, y=forward, mode="markers", name="forward-KL optimum",
          customdata=reward_text,
          marker={"symbol": "line-ew", "size": 16, "line": {"color": FORWARD_COLOR, "width": 3}},
          hovertemplate="%{customdata}<br>forward-KL optimum: %{y:.4f}<extra></extra>")
    decades = [10.0 ** k for k in range(int(np.log10(floor)), 1)]
    c.update(yaxis={"type": "log", "range": [np.log10(floor), 0.05], "tickvals": decades,
                    "ticktext": [f"{v:g}" for v in decades]},
             xaxis={"tickvals": list(x), "ticktext": [f"{v:.3f}" for v in res.r[order]],
                    "range": [0.45, len(x) + 0.55]},
             legend={"font": {"size": 12}})
    plots.show(c, key="kl-penalty-policies")

bias_k2 = est.mean[1] - est.true_kl
layout.look_for(
    f"The table estimates one number, KL(π* ‖ π_ref) = {est.true_kl:.4f}, three ways from the "
    f"same samples. k1 and k3 are unbiased (their bias column is Monte Carlo noise), but k1 "
    f"averages log-ratios of either sign, so here {layout.pct(est.share_negative[0], 1)} of the "
    f"16-sample estimates are negative, which no divergence can be. k3 adds ρ − 1, which "
    f"averages to zero, cancels much of that noise and can never go below zero "
    f"(ρ − 1 − log ρ ≥ 0). k2 is steady but simply not the KL's expectation: its bias here is "
    f"{layout.fmt_signed(bias_k2, 4)}, low at the chapter's β and high when β is small. "
    f"In the chart, only the penalty placed in the reward heads for π* (it ends "
    f"{layout.fmt(rows['k1 in the reward']['tv_to_target'], 3)} away in total variation): its "
    f"score-function gradient is the gradient of the reverse KL, and at π* every penalized "
    f"reward is equal, so the updates stop there. Differentiated as a loss, k1's gradient "
    f"averages to zero (Exercise 28.3b), nothing holds the policy back, and it piles onto the "
    f"best response. k3 as a loss follows the gradient of the forward divergence KL(π_ref ‖ π) "
    f"instead (Exercise 28.3c), which punishes dropping responses the reference likes: its "
    f"orange bars stop at the amber marks of the forward-KL optimum and keep mass on "
    f"low-reward responses that π* nearly drops. Lower β and the two optima part further "
    f"(they are {layout.fmt(rows['pi* (target)']['tv_to_forward'], 3)} apart now)."
)

with st.expander("The numbers behind the figure"):
    df = pd.DataFrame({
        "reward r": res.r[order], "pi_ref": ref, "pi* (target)": target,
        "forward-KL optimum": forward,
        **{name: policies[name] for name in core.RULES},
    })
    layout.table(df)
    stem = f"kl_penalty_beta_{controls.fmt_number(beta)}_seed_{seed}_steps_{steps}"
    layout.csv_download(df, f"{stem}_policies.csv", key="kl-penalty-csv")
    est_out = est_df.assign(true_kl=est.true_kl, repetitions=est.reps, samples=est.n_samples)
    layout.csv_download(est_out, f"{stem}_estimators.csv",
                        label="Download the estimator table (CSV)", key="kl-penalty-est-csv")
    layout.csv_download(table, f"{stem}_summary.csv",
                        label="Download the reward, KL and distance table (CSV)",
                        key="kl-penalty-summary-csv")
