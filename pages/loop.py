"""Section 12.7.4: what narrows pass@k in a policy-gradient run. The same model trained with
shared or per-problem parameters, sampled or with its exact expected gradient, against the
KL-matched optimum (whose pass@k never falls); scrubbed step by step."""

from __future__ import annotations

import math
import secrets
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from klrl_core import loop, pass_at_k
from klrl_app import controls, fmt, layout, lru, plots
from klrl_app.plots import COLORS, Chart

SEED_MAX = 2**31 - 1
G_LO, G_HI = 2, 64
LR_LO, LR_HI, LR_STEP = 0.05, 2.0, 0.05
KL_LO, KL_HI, KL_STEP = 0.0, 2.0, 0.05
STEPS_LO, STEPS_HI = 10, 1000
RARE_HI = 12                       # rare problems stay at most half of the 24
MAX_STOPS = 101                    # stops of the step slider (a table per setting)
K_MAX = 1024
K_DRAWN = np.unique(np.concatenate([np.round(np.logspace(0, math.log10(K_MAX), 36)),
                                    2.0 ** np.arange(11)]))
K_ALL = np.arange(1.0, K_MAX + 1.0)
YUE = {"base": (0.099, 0.672), "trained": (0.425, 0.643)}   # pass@1, pass@256, measured
YUE_K = (1, 256)
YUE_NUDGE = 10 ** 0.08             # the k = 256 marks drawn this factor left and right
SEEN = 0.0005                      # a change below this does not show at three decimals
COMMON_COLOR, RARE_COLOR, RUN_COLOR = COLORS["optimum"], COLORS["accent"], COLORS["incorrect"]
STEP_COLOR = COLORS["proxy"]       # the current step's rings and line: no curve is orange
ESTIMATOR_OPTIONS = {"reinforce": "REINFORCE", "rloo": "RLOO", "grpo": "GRPO",
                     "dr_grpo": "Dr. GRPO"}

TITLE = "What narrows pass@k in training"
page = layout.Page(
    "loop", TITLE,
    "Section 12.7.4 · Chapter 28's lab on pass@k and entropy · Yue et al. (2025)",
    "",            # the model's description is computed from the setting below (model_text)
)
ui = page.ui
c_step, c_play, c_shared, c_exact, c_more = page.control_row([2.6, 0.9, 1.45, 1.75, 1.2])
with c_more, page.more_settings("More"):
    estimator = ui.choice("estimator", "Estimator", ESTIMATOR_OPTIONS, loop.ESTIMATOR_DEFAULT,
                          help="REINFORCE without a baseline, RLOO (leave-one-out mean), GRPO "
                               "(group mean and standard deviation), Dr. GRPO (group mean "
                               "only): Section 12.7.1.")
    g = ui.integer("g", "Group size G", default=loop.G_DEFAULT, lo=G_LO, hi=G_HI,
                   help=f"Answers sampled per problem per step, {G_LO} to {G_HI}. A group "
                        f"that is all wrong carries no signal for any of the four estimators.")
    lr = ui.number("lr", "Step size lr", default=loop.LR_DEFAULT, lo=LR_LO, hi=LR_HI,
                   step=LR_STEP, help="θ ← θ + lr · (the estimator's gradient), on the logits.")
    kl = ui.number("kl", "KL coefficient (k3 as a loss)", default=loop.KL_DEFAULT, lo=KL_LO,
                   hi=KL_HI, step=KL_STEP,
                   help="Weight of the penalty k3 = ρ − 1 − log ρ, ρ = π_ref/π, on the "
                        "sampled answers, differentiated as a loss (GRPO's placement, "
                        "chapter 28). 0: no penalty, as in the run Yue et al. measured.")
    steps = ui.integer("steps", "Training steps", default=loop.STEPS_DEFAULT, lo=STEPS_LO,
                       hi=STEPS_HI, widget="number",
                       help=f"Length of the runs, {STEPS_LO} to {STEPS_HI:,} steps.")
    rare = ui.integer("rare", "Rare problems (of 24)", default=loop.RARE_DEFAULT, lo=0,
                      hi=RARE_HI,
                      help=f"How many of the 24 problems are rare (only strategy 2 right); "
                           f"the rest are common. 0 to {RARE_HI}.")
    seed = ui.seed(help=f"The {loop.RUNS_DEFAULT} sampled runs come from this seed, so a link "
                        f"shows the same runs (the exact gradient draws nothing). Whole numbers "
                        f"from 0 to {SEED_MAX:,}.")
    st.button("New runs", icon=":material/refresh:", disabled=ui.fixed("seed"),
              help=f"Train another {loop.RUNS_DEFAULT} runs from a fresh seed (kept in the link).",
              on_click=lambda: ui.set("seed", secrets.randbelow(SEED_MAX + 1)))
with c_shared:
    shared = ui.switch("shared", "Shared θ", default=True,
                       help="On: one logit vector θ for all 24 problems (a network's shared "
                            "weights). Off: one per problem, so each problem is trained on "
                            "its own, the case the optimum describes.")
with c_exact:
    exact = ui.switch("exact", "Exact gradient", default=False,
                      help="On: no sampling. Each step takes the estimator's expected update "
                           "under the current policy, computed exactly over every outcome of "
                           "a group of G, so one run stands for the mean of infinitely many. "
                           "Off: G answers are sampled per problem per step.")
with c_step:
    step_key = ui.key("step")
    if step_key in st.session_state and st.session_state[step_key] > steps:
        st.session_state[step_key] = steps           # the runs were shortened
    # At most MAX_STOPS stops, so that the browser's table of every stop stays within its
    # budget (klrl_app/instant.py); a linked step between them is kept exactly.
    stride = max(1, math.ceil(steps / (MAX_STOPS - 1)))
    step = ui.stops("step", "Training step", sorted(set(range(0, steps + 1, stride)) | {steps}),
                    default=steps, integer=True,
                    help=f"Scrub through the {steps:,} steps of the runs"
                         + (f" ({stride} at a time; a link may give any step)" if stride > 1
                            else "") + ": every figure and number shows the policy after "
                         "this many updates.")
with c_play:
    page.play("step")
page.finish_controls()


# ------------------------------------------------------------------------------ the runs
@dataclass(frozen=True)
class Trained:
    """One setting's runs and everything the figures read, per step (mean over the runs)."""

    run: loop.LoopRun
    success: np.ndarray       # (T, 24) mean solve rate per problem
    passk: np.ndarray         # (T, len(K_DRAWN)) trained mixture
    base: np.ndarray          # (len(K_DRAWN),) base model
    opt_passk: np.ndarray     # (T, len(K_DRAWN)) the KL-matched optimum
    opt: loop.MatchedOptimum
    p1: np.ndarray            # (T,)
    p256: np.ndarray
    opt_p256: np.ndarray
    base_p1: float
    base_p256: float
    cross: np.ndarray         # (T,) 0 = none
    kl: np.ndarray            # (T,) mean over runs and problems
    entropy: np.ndarray
    all_wrong: np.ndarray     # (T,) all problems
    rare_wrong: np.ndarray    # (T,) rare problems only (nan when there are none)
    rare_rate: np.ndarray     # (T,) mean solve rate of the rare problems (nan: none)
    common_rate: np.ndarray
    opt_ok: np.ndarray        # (T,) every problem's p* >= its base rate, and pass@k on the grid


@lru.memo
def trained(estimator: str, g: int, lr: float, steps: int, kl: float, shared: bool,
            rare: int, seed: int, exact: bool = False) -> Trained:
    run = (loop.expected_run(estimator, g, lr, steps, kl, shared, rare) if exact else
           loop.run(estimator, g, lr, steps, kl, shared, rare, seed=seed))
    prob = run.problems
    passk = loop.pass_at_k_by_step(run.success, K_DRAWN)
    base = np.asarray(pass_at_k.mixture_pass_at_k(prob.base_rates, K_DRAWN))
    kl_mean = run.kl.mean(axis=0)
    opt = loop.matched_optimum(prob, kl_mean)
    opt_passk = np.asarray(pass_at_k.mixture_pass_at_k(opt.rates, K_DRAWN[:, None])).T
    i1, i256 = int(np.flatnonzero(K_DRAWN == 1)[0]), int(np.flatnonzero(K_DRAWN == 256)[0])
    mean_success = run.mean_success
    if rare:
        rare_succ = run.success[:, :, prob.rare]
        rare_rate = rare_succ.mean(axis=(0, 2))
        rare_wrong = 1.0 - np.asarray(pass_at_k.pass_at_k(rare_succ, g)).mean(axis=(0, 2))
    else:
        rare_rate = rare_wrong = np.full(steps + 1, np.nan)
    common = mean_success[:, ~prob.rare].mean(axis=1) if rare < 24 else np.full(steps + 1, np.nan)
    opt_ok = np.all(opt.rates >= prob.base_rates, axis=1) & np.all(opt_passk >= base, axis=1)
    return Trained(run, mean_success, passk, base, opt_passk, opt, passk[:, i1], passk[:, i256],
                   opt_passk[:, i256], float(base[i1]), float(base[i256]),
                   loop.crossover_by_step(prob.base_rates, run.success, K_MAX), kl_mean,
                   run.entropy.mean(axis=0), run.all_wrong.mean(axis=0), rare_wrong, rare_rate,
                   common, opt_ok)


setting = (estimator, g, lr, steps, kl, shared, rare, seed, exact)


def variant(shared_: bool, exact_: bool) -> Trained:
    """The same setting with θ shared or not, sampled or exact (no seed without sampling)."""
    return trained(estimator, g, lr, steps, kl, shared_, rare, 0 if exact_ else seed, exact_)


tr = variant(shared, exact)
# The pass@k chart's three runs: the shared θ sampled and exact, and one θ per problem (as
# the exact switch says); the switches choose which of them the rest of the page shows.
shared_sampled, shared_exact, own = variant(True, False), variant(True, True), variant(False, exact)
prob = tr.run.problems
labels = [f"C{i + 1}" for i in range(24 - rare)] + [f"R{i + 1}" for i in range(rare)]
numbers_x = np.arange(1, 25)
N_COMMON = 24 - rare
EST = ESTIMATOR_OPTIONS[estimator]
# Words for the rare problems, one or many (rare = 1 is allowed).
RARE_ONES = "the rare one" if rare == 1 else f"the {rare} rare ones"
RARE_THE = "the rare problem" if rare == 1 else "the rare problems"
RARE_POSS = "rare problem's" if rare == 1 else "rare problems'"
WHO = "one run without sampling" if exact else f"mean of {loop.RUNS_DEFAULT} runs"
ticks_x = sorted({1, 24 - rare, 24} - {0})
x_title = ("problem (" + (f"1–{24 - rare} common" if rare < 24 else "") +
           (", " if 0 < rare < 24 else "") +
           (f"{25 - rare}–24 rare" if rare > 1 else "24 rare" if rare == 1 else "") + ")")
kl_top = 1.08 * max(float(np.max(tr.kl)), float(np.max(tr.entropy)), math.log(8))


def problems_text(lo: int, hi: int) -> str:
    return f"problem {lo}" if lo == hi else f"problems {lo}–{hi}"


def model_text() -> str:
    """What is modelled, from the setting (the first screen and About this figure)."""
    right_c, right_r = fmt.pct(loop.REF_COMMON[0]), fmt.pct(loop.REF_RARE_RIGHT)
    head = f"{loop.N_PROBLEMS} problems share {loop.N_STRATEGIES} solution strategies. "
    if rare == 0:
        return head + (f"None is rare: on every problem strategy 1 is right, and the base model "
                       f"picks it {right_c} of the time.")
    if rare == 24:
        return head + (f"All are rare: on every problem only strategy 2 is right, and the base "
                       f"model picks it {right_r} of the time.")
    return head + (f"On {problems_text(1, N_COMMON)} (common) strategy 1 is right, picked "
                   f"{right_c} of the time by the base model; on {problems_text(25 - rare, 24)} "
                   f"(rare) only strategy 2 is right, picked {right_r} of the time.")


def training_text() -> str:
    theta = ("logits θ shared by all 24 problems, as a network's weights are" if shared else
             "one logit vector θ per problem")
    if exact:
        return (f"Each step adds lr times {EST}'s expected update, computed exactly over every "
                f"group of {g} answers (nothing is sampled), to {theta}. The figures show this "
                f"one run.")
    return (f"Each step samples G = {g} answers per problem, grades them 0/1 and updates {theta} "
            f"with {EST}. {loop.RUNS_DEFAULT} runs are trained at once; the figures show their "
            f"mean.")


page.lead = model_text() + " " + training_text()
st.caption(model_text())


def f32(a: np.ndarray) -> np.ndarray:
    """A curve that changes from stop to stop, sent as 4-byte floats: the table of every stop
    (klrl_app/instant.py) halves, and 7 digits are more than a chart can show."""
    return np.asarray(a, dtype=np.float32)


def cross_text(c: int) -> str:
    return "none" if c == 0 else f"{c:,}"


def rare_text(x: float) -> str:
    return "no rare problems" if math.isnan(x) else fmt.prob(x)


def opt_rare(x: Trained, t: int) -> float:
    """The KL-matched optimum's mean solve rate on the rare problems at step t."""
    return float(x.opt.rates[t][prob.rare].mean())


# ------------------------------------------------------------------------------ the view
log_x = {"type": "log", "range": [-0.06, math.log10(K_MAX) + 0.1],
         "tickvals": [1, 4, 16, 64, 256, 1024], "ticktext": ["1", "4", "16", "64", "256", "1,024"]}


def problems_chart(t: int) -> tuple[Chart, str]:
    rates = tr.success[t]
    c = Chart(x_title, "solve rate, " + ("exact run" if exact else "mean of 20 runs"), height=320)
    kinds = [("common", ~prob.rare, COMMON_COLOR, ""), ("rare", prob.rare, RARE_COLOR, "/")]
    for name, mask, color, pattern in kinds:
        if mask.any():
            c.add("bar", x=numbers_x[mask], y=f32(rates[mask]), name=name,
                  marker={"color": color, "pattern": {"shape": pattern}},
                  hovertemplate="problem %{x}: %{y:.4f}<extra></extra>")
    c.add(x=numbers_x, y=prob.base_rates, mode="markers", name="base model",
          marker={"symbol": "line-ew-open", "size": 14, "color": COLORS["reference"],
                  "line": {"width": 3, "color": COLORS["reference"]}},
          hovertemplate="problem %{x}: base %{y:.2f}<extra></extra>")
    c.update(yaxis={"range": [0, 1.04]}, xaxis={"range": [0.4, 24.6], "tickvals": ticks_x},
             bargap=0.25, legend={"font": {"size": 12}})
    common = tr.common_rate[t]
    parts = []
    if not math.isnan(common):
        parts.append(f"the {24 - rare} common problems average {fmt.fixed(common, 3)} (base 0.300)")
    if rare:
        parts.append(f"{RARE_ONES} {rare_text(tr.rare_rate[t])} (base 0.050)")
    hatched = f"{RARE_ONES.removeprefix('the ')} hatched, " if rare else ""
    return c, (f"Bars: the 24 problems' solve rates at step {t:,} ({WHO}; "
               f"{hatched}base rates as ticks): " + " and ".join(parts) + ".")


# The pass@k chart's runs: name, run, colour, dash; the switches' choice drawn thicker.
RUN_LINES = [("shared θ, sampled", shared_sampled, RUN_COLOR, "dash", shared and not exact),
             ("shared θ, exact", shared_exact, COLORS["accent"], "dot", shared and exact),
             ("per-problem θ", own, COLORS["best_of_n"], "solid", not shared)]


def passk_chart(t: int) -> tuple[Chart, str]:
    c = Chart("attempts k (log scale)", "mean pass@k", height=330)
    c.add(x=K_DRAWN, y=tr.base, mode="lines", name="base",
          line={"color": COLORS["reference"], "width": 3},
          hovertemplate="k = %{x:,}<br>base %{y:.3f}<extra></extra>")
    c.add(x=K_DRAWN, y=f32(tr.opt_passk[t]), mode="lines", name="optimum, same KL",
          line={"color": COLORS["optimum"], "width": 3},
          hovertemplate="k = %{x:,}<br>optimum %{y:.3f}<extra></extra>")
    for name, x, color, dash, chosen in RUN_LINES:
        c.add(x=K_DRAWN, y=f32(x.passk[t]), mode="lines", name=name,
              line={"color": color, "width": 4.5 if chosen else 2.5, "dash": dash},
              hovertemplate=f"k = %{{x:,}}<br>{name} %{{y:.3f}}<extra></extra>")
    # Yue et al.'s two marks at k = 256 are 0.03 apart: drawn a little left and right of
    # k = 256 (0.08 of a decade each way) so that neither hides the other; the hover says k.
    c.add(x=[YUE_K[0], YUE_K[1] / YUE_NUDGE], y=list(YUE["base"]), mode="markers",
          name="Yue base, measured", customdata=list(YUE_K),
          marker={"symbol": "diamond-open", "size": 12, "color": COLORS["reference"],
                  "line": {"width": 2.5, "color": COLORS["reference"]}},
          hovertemplate="measured by Yue et al. (2025), Qwen2.5-7B base<br>"
                        "pass@%{customdata}: %{y:.1%}<extra></extra>")
    c.add(x=[YUE_K[0], YUE_K[1] * YUE_NUDGE], y=list(YUE["trained"]), mode="markers",
          name="Yue GRPO, measured", customdata=list(YUE_K),
          marker={"symbol": "square-open", "size": 10, "color": RUN_COLOR,
                  "line": {"width": 2.5, "color": RUN_COLOR}},
          hovertemplate="measured by Yue et al. (2025), after GRPO<br>pass@%{customdata}: "
                        "%{y:.1%}<extra></extra>")
    cross = int(tr.cross[t])
    # the crossover marker is always present (hidden off the axis when there is none), so
    # every stop's figure has the same traces
    cx = cross if cross else K_MAX * 4
    c.add(x=[cx], y=[float(pass_at_k.mixture_pass_at_k(prob.base_rates, cx))], mode="markers",
          name="base overtakes", showlegend=bool(cross),
          marker={"symbol": "x", "size": 11, "color": RUN_COLOR},
          hovertemplate="base overtakes at k = %{x:,}<extra></extra>")
    c.update(xaxis=log_x, yaxis={"range": [0, 1.04]}, legend={"font": {"size": 11}})
    chosen = next(name for name, *_, on in RUN_LINES if on)
    where = (f"the base overtakes the {chosen} run at k = {cross:,}" if cross else
             f"the {chosen} run stays on or above the base up to k = 1,024")
    runs = "; ".join(f"{name} {fmt.fixed(x.p1[t], 3)}, {fmt.fixed(x.p256[t], 3)}"
                     for name, x, *_ in RUN_LINES)
    return c, (f"pass@k against k (1 to 1,024, log axis) at step {t:,}; at k = 1 and 256: "
               f"base {fmt.fixed(tr.base_p1, 3)}, {fmt.fixed(tr.base_p256, 3)}; {runs}; optimum "
               f"at the {chosen} run's KL {fmt.fixed(tr.opt_passk[t][0], 3)}, "
               f"{fmt.fixed(tr.opt_p256[t], 3)}; {where} (drawn thicker). Open markers: Yue et "
               f"al.'s measurements.")


x_steps = np.arange(steps + 1)
X_PAD = 0.045                      # of the steps, left of step 0 on the dynamics chart


def dynamics_chart(t: int) -> tuple[Chart, str]:
    c = Chart("training step", "nats", height=340)
    c.add(x=x_steps, y=tr.entropy, mode="lines", name="entropy of π",
          line={"color": COLORS["true"], "width": 2.5},
          hovertemplate="step %{x}<br>entropy %{y:.3f} nats<extra></extra>")
    c.add(x=x_steps, y=tr.kl, mode="lines", name="KL(π ‖ π_ref)",
          line={"color": COLORS["optimum"], "width": 2.5},
          hovertemplate="step %{x}<br>KL %{y:.3f} nats<extra></extra>")
    c.add(x=x_steps, y=tr.all_wrong, mode="lines", name="all-wrong groups, all problems",
          yaxis="y2", line={"color": COLORS["neutral"], "width": 2.5},
          hovertemplate="step %{x}<br>all wrong %{y:.1%}<extra></extra>")
    if rare:
        c.add(x=x_steps, y=tr.rare_wrong, mode="lines", name="all-wrong groups, rare problems",
              yaxis="y2", line={"color": RARE_COLOR, "width": 2.5, "dash": "dash"},
              hovertemplate="step %{x}<br>rare, all wrong %{y:.1%}<extra></extra>")
    # The rings are drawn over the plot's edge (cliponaxis off), whole at step 0 and the last.
    ring = {"size": 9, "color": "white", "line": {"width": 2, "color": STEP_COLOR}}
    c.add(x=[t, t], y=[round(float(tr.entropy[t]), 5), round(float(tr.kl[t]), 5)],
          mode="markers", showlegend=False, marker=ring, hoverinfo="skip", cliponaxis=False)
    low = [round(float(v), 5) for v in [tr.all_wrong[t]] + ([tr.rare_wrong[t]] if rare else [])]
    c.add(x=[t] * len(low), y=low, mode="markers", showlegend=False, yaxis="y2", marker=ring,
          hoverinfo="skip", cliponaxis=False)
    c.layout["shapes"].append({"type": "line", "xref": "x", "x0": t, "x1": t,
                               "yref": "paper", "y0": 0, "y1": 1,
                               "line": {"color": STEP_COLOR, "width": 1.5, "dash": "dot"}})
    # The x axis starts a little before step 0, so that step 0's rings clear the y axes' tick
    # labels and the "0" under the origin clears "0%" (issue 31, item 14).
    c.update(xaxis={"range": [-X_PAD * steps, steps], "anchor": "y2"},
             yaxis={"domain": [0.42, 1.0], "range": [0, kl_top], "title": {"standoff": 6}},
             yaxis2={"domain": [0.0, 0.35], "range": [0, 1.04], "tickvals": [0, 0.5, 1],
                     "tickformat": ".0%", "automargin": True,
                     "title": {"text": "groups", "standoff": 6},
                     "gridcolor": "rgba(128, 132, 149, 0.25)"},
             margin={"r": 16}, legend={"font": {"size": 11}})
    rare_part = (f", {fmt.pct(tr.rare_wrong[t])} on {RARE_THE}" if rare else "")
    chance = "chance that a group" if exact else "groups"
    return c, (f"Over the {steps:,} steps, step {t:,} marked: entropy {fmt.fixed(tr.entropy[t], 3)} "
               f"nats (from {fmt.fixed(tr.entropy[0], 3)}), KL {fmt.fixed(tr.kl[t], 3)} nats; "
               f"{chance} of {g} all wrong: {fmt.pct(tr.all_wrong[t])} of all "
               f"problems{rare_part}.")


def optimum_item(t: int) -> tuple[str, str]:
    """The KL-matched optimum where the base is not saturated: the rare problems' success
    (pass@1 when there are none), checked against the base at every step (opt_ok)."""
    mark = " ✓" if tr.opt_ok[t] else " ✗ below the base"
    if rare:
        return ("Optimum at this KL, rare", f"{fmt.prob(opt_rare(tr, t))} ≥ "
                f"{fmt.prob(loop.REF_RARE_RIGHT)}{mark}" if tr.opt_ok[t] else
                f"{fmt.prob(opt_rare(tr, t))}{mark}")
    return ("Optimum at this KL, pass@1", f"{fmt.fixed(tr.opt_passk[t][0], 3)} ≥ "
            f"{fmt.fixed(tr.base_p1, 3)}{mark}" if tr.opt_ok[t] else
            f"{fmt.fixed(tr.opt_passk[t][0], 3)}{mark}")


def view_at(t) -> layout.View:
    """The readout and the three charts at step t: look-ups in the cached runs."""
    t = int(t)
    items = [
        (f"{EST} step" + (", exact" if exact else ""), f"{t:,} of {steps:,}"),
        ("pass@1 base → now", f"{fmt.fixed(tr.base_p1, 3)} → {fmt.fixed(tr.p1[t], 3)}"),
        ("pass@256 base → now", f"{fmt.fixed(tr.base_p256, 3)} → {fmt.fixed(tr.p256[t], 3)}"),
        ("Base overtakes at k", cross_text(int(tr.cross[t]))),
        (f"{RARE_POSS.capitalize()} success", "none" if not rare else
         f"{fmt.prob(tr.rare_rate[0])} → {fmt.prob(tr.rare_rate[t])}"),
        optimum_item(t),
    ]
    return layout.View(items, {"loop-problems": problems_chart(t), "loop-passk": passk_chart(t),
                               "loop-dynamics": dynamics_chart(t)})


MEAN_OF = "this run (nothing is sampled)" if exact else f"the mean of the {loop.RUNS_DEFAULT} runs"
helps = [
    "the estimator, and the updates made so far; step 0 is the base model itself"
    + ("; exact: each update is the estimator's expected one, so no sample is drawn." if exact
       else "."),
    "the mean over problems of each problem's solve rate (one attempt), for the base model and "
    f"for the trained policy ({MEAN_OF}). Exact, from the policy, not from samples.",
    "the chance that at least one of 256 attempts is right, 1 − (1 − p)^256, averaged over the "
    f"problems ({MEAN_OF}).",
    "the smallest whole k from 1 to 1,024 at which the base model's pass@k exceeds the trained "
    "one's (by more than 10⁻⁹); none if it never does.",
    f"mean solve rate of {RARE_THE}, base → now." if rare else "there are no rare problems.",
    ("the mean solve rate on the rare problems" if rare else "pass@1")
    + " of the KL-regularized optimum π* ∝ π_ref·exp(r/β), with one β chosen (by bisection) so "
    "that its mean KL over the problems equals the run's at this step, against the base's. ✓: "
    "at every step every problem's optimal solve rate is at least its base rate, so the "
    "optimum's pass@k is at least the base's at every k (Section 12.7.4's derivation). pass@256 "
    f"would not tell them apart: the base model's is already {fmt.fixed(tr.base_p256, 3)} here.",
]
view = page.follow(layout.Instant("step", view_at, setting=setting), helps)
left, right = page.figures()
with left:
    page.chart(view, "loop-problems")
with right:
    page.chart(view, "loop-passk")
page.chart(view, "loop-dynamics")


# ------------------------------------------------------------------------------ the story
def base_lead(t: int) -> tuple[float, int]:
    """The base's largest lead over the trained mixture at any whole k <= 1,024, and where."""
    after = np.asarray(pass_at_k.mixture_pass_at_k(tr.run.success[:, t].ravel(), K_ALL))
    before = np.asarray(pass_at_k.mixture_pass_at_k(prob.base_rates, K_ALL))
    i = int(np.argmax(before - after))
    return float(before[i] - after[i]), int(K_ALL[i])


p1_now, p256_now, cross_now = float(tr.p1[step]), float(tr.p256[step]), int(tr.cross[step])
lead, lead_k = base_lead(step)
narrowed_256 = p256_now < tr.base_p256 - SEEN
rose_1 = p1_now > tr.base_p1 + SEEN


def loses_rare(x: Trained) -> bool:
    """The rare problems' success has fallen visibly by this step."""
    return bool(rare) and x.rare_rate[step] < x.rare_rate[0] - SEEN


def narrows(x: Trained) -> bool:
    return x.p256[step] < x.base_p256 - SEEN


rare_fell = loses_rare(tr)
rare_name = "rare problem's" if rare == 1 else f"{rare} rare problems'"


def numbers_of(x: Trained) -> str:
    return (f"rare success {rare_text(x.rare_rate[step])}, " if rare else "") + \
        f"pass@256 {fmt.fixed(x.p256[step], 3)}"


def cause_text() -> str:
    """Which ingredient loses the rare problems here: the three runs at this step compared."""
    if not rare or step == 0:
        return ""
    sh_s, sh_e = loses_rare(shared_sampled), loses_rare(shared_exact)
    mine = loses_rare(own)
    own_name = f"one θ per problem{' (exact)' if exact else ''}"
    them = "it" if rare == 1 else "them"
    if sh_e and sh_s and not mine:
        return (f" The shared θ loses {them} with the exact expected gradient too (no sampling: "
                f"{numbers_of(shared_exact)}; sampled: {numbers_of(shared_sampled)}), while "
                f"{own_name} keeps {them} ({numbers_of(own)}): in this model the shared "
                f"parameters, not the sampling, lose {RARE_THE}.")
    if sh_s and not sh_e:
        return (f" Here the sampling matters: with the exact expected gradient the shared θ "
                f"keeps {RARE_THE} ({numbers_of(shared_exact)}; sampled "
                f"{numbers_of(shared_sampled)}).")
    if sh_e and not sh_s:
        return (f" The exact expected gradient on the shared θ loses {them} "
                f"({numbers_of(shared_exact)}), while the sampled runs do not yet "
                f"({numbers_of(shared_sampled)}).")
    if mine:
        return (f" With {own_name} {'it falls' if rare == 1 else 'they fall'} too ({numbers_of(own)}): here sharing θ is not "
                f"the only cause.")
    return ""


def story() -> str:
    if step == 0:
        return ("At step 0 nothing has been trained: the policy is the base model, every run's "
                "curve lies on the base's and the optimum at zero KL is the base too. Move the "
                "step slider (or press Play) to watch the runs train.")
    rise = ("rises" if rose_1 else "falls" if p1_now < tr.base_p1 - SEEN else "barely moves")
    s = [f"After {step:,} steps pass@1 {rise} from {fmt.fixed(tr.base_p1, 3)} to "
         f"{fmt.fixed(p1_now, 3)}"]
    if narrowed_256:
        s.append(f" while pass@256 falls from {fmt.fixed(tr.base_p256, 3)} to "
                 f"{fmt.fixed(p256_now, 3)}: the run "
                 f"narrows what the model can solve with many tries.")
    elif lead > SEEN:
        s.append(f"; pass@256 stays at {fmt.fixed(p256_now, 3)} (base {fmt.fixed(tr.base_p256, 3)}), but the base "
                 f"overtakes the trained curve at k = {cross_now:,} and leads it by up to "
                 f"{fmt.fixed(lead, 3)} (at k = {lead_k:,}).")
    else:
        s.append(f", and the trained curve does not fall visibly below the base at any k up to "
                 f"1,024 (pass@256 {fmt.fixed(tr.base_p256, 3)} → {fmt.fixed(p256_now, 3)}): this "
                 f"run does not "
                 f"narrow.")
    if rare == 0:
        s.append(" There are no rare problems here, so nothing can be lost by sharing: every "
                 "problem wants strategy 1.")
    elif rare_fell:
        its = "Its" if rare == 1 else "Their"
        if exact:
            why = (f" Nothing is sampled in this run, so no group is ever all wrong; a group of "
                   f"{g} would be all wrong {fmt.pct(tr.rare_wrong[step], 1)} of the time now "
                   f"(from {fmt.pct(tr.rare_wrong[0], 1)}).")
        else:
            why = (f" {its} groups of {g} are all wrong {fmt.pct(tr.rare_wrong[step], 1)} of the "
                   f"time now (from {fmt.pct(tr.rare_wrong[0], 1)}); such a group carries no "
                   f"reward signal.")
        if kl > 0:
            why += (f" The KL penalty (weight {controls.fmt_number(kl)}) holds the policy near "
                    f"the reference: the run spends only {fmt.fixed(tr.kl[step], 3)} nats.")
        if shared:
            s.append(f" The {rare_name} success falls from "
                     f"{fmt.prob(tr.rare_rate[0])} to {fmt.prob(tr.rare_rate[step])}: "
                     f"the {24 - rare} common problems push the shared θ away from strategy 2, "
                     f"which is wrong for them and the only right answer on "
                     f"{'the rare one' if rare == 1 else 'a rare one'}.{why}")
        else:
            s.append(f" The {RARE_POSS} success falls from {fmt.prob(tr.rare_rate[0])} to "
                     f"{fmt.prob(tr.rare_rate[step])} even without sharing.{why}")
    else:
        before, now = fmt.prob(tr.rare_rate[0]), fmt.prob(tr.rare_rate[step])
        moved = ("stays at " + before if before == now else
                 f"rises from {before} to {now}" if tr.rare_rate[step] > tr.rare_rate[0] + SEEN
                 else f"barely moves, from {before} to {now}")
        s.append(f" The {RARE_POSS} success {moved}.")
    s.append(cause_text())
    ok = bool(tr.opt_ok[: step + 1].all())
    beta = tr.opt.beta[step]
    s.append(f" The optimum with the same mean KL ({fmt.fixed(tr.kl[step], 3)} nats, β = "
             f"{'∞' if not math.isfinite(beta) else fmt.fixed(beta, 4, sig_from=1000, digits=4)}) "
             f"raises every problem's "
             f"solve rate, so its pass@256 is {fmt.fixed(tr.opt_p256[step], 3)}, "
             + ("at or above the base at every k at every step so far (checked)."
                if ok else "BELOW the base somewhere: a failed check, please report it.")
             + ("" if tr.opt.reached[step] else
                " (The run spends more KL than any optimum can: shown at κ = 10,000.)"))
    s.append(" Section 12.7.4's guarantee is for the optimum over all policies, which tilts each "
             "problem on its own, as one θ per problem can and one shared θ cannot.")
    if rose_1 and narrowed_256:
        s.append(" Yue et al. measured the same shape on a real model (open markers).")
    return "".join(s).replace("*", "\\*")


GRID = [("shared", "sampled", shared_sampled), ("shared", "exact", shared_exact),
        ("per problem", "sampled", variant(False, False)),
        ("per problem", "exact", variant(False, True))]


def causal_section() -> None:
    if not page.section("Which ingredient narrows: shared θ or sampling"):
        return
    # one label column: six columns would scroll sideways on a phone
    rows = {"θ, gradient": [f"{a}, {b}" for a, b, _ in GRID],
            "pass@1": [x.p1[step] for *_, x in GRID],
            "pass@256": [x.p256[step] for *_, x in GRID],
            "base overtakes at k": [cross_text(int(x.cross[step])) for *_, x in GRID],
            f"{RARE_POSS} success": [rare_text(x.rare_rate[step]) for *_, x in GRID]}
    layout.small_table(pd.DataFrame(rows), {c: lambda v: fmt.fixed(v, 3) for c in ("pass@1", "pass@256")})
    st.caption(f"All four at step {step:,} with the same estimator, G, lr, kl and rare (the "
               f"sampled ones also the same seed); only θ's sharing and the sampling differ.")
    if step == 0:
        text = "At step 0 all four are the base model."
    else:
        narrow = [narrows(x) for *_, x in GRID]
        base = fmt.fixed(tr.base_p256, 3)
        if narrow == [True, True, False, False]:
            text = (f"Only the shared θ narrows: its pass@256 falls below the base's {base} "
                    f"with sampling and without it, while one θ per problem keeps it. In this "
                    f"model the parameterization, not the sampling, narrows pass@k.")
        elif not any(narrow):
            text = (f"None of the four drops pass@256 visibly below the base's {base} at this "
                    f"step" + (f"; compare the {RARE_POSS} success instead." if rare else "."))
        else:
            which = [f"θ {a}, {b} gradient" if b == "exact" else f"θ {a}, {b}"
                     for (a, b, _), n in zip(GRID, narrow) if n]
            text = (f"pass@256 falls below the base's {base} with " + ", ".join(which[:-1])
                    + (" and " if len(which) > 1 else "") + which[-1] + "; not with the others.")
    st.markdown(text.replace("*", "\\*"))
    at256 = fmt.fixed(tr.base_p256, 3)
    st.markdown(
        "**Measured, not computed here.** The open diamonds and squares are Yue et al.'s (2025) "
        "numbers for Qwen2.5-7B trained with GRPO, without a KL term, on 2,000 mathematics "
        "problems and measured on those problems: pass@1 9.9% → 42.5% after 450 steps, "
        "pass@256 67.2% → 64.3%. They show the shape measured on a real model, not a fit of this "
        f"one: their base model's pass@256 ({fmt.fixed(YUE['base'][1], 3)}) sits far from this "
        f"model's ({at256}) because their problems are not these 24: about "
        f"{fmt.pct(1 - YUE['base'][1])} of theirs go unsolved in 256 tries, while the base model "
        f"here solves every problem at least {fmt.pct(float(prob.base_rates.min()))} of the time. "
        "See also "
        "[pass@k at the optimum](/pass-at-k), [when a group carries signal](/groups) and "
        "[why entropy collapses](/entropy).")


page.explain(story(), extra=causal_section)


# ------------------------------------------------------------------------------ the numbers
def per_step() -> pd.DataFrame:
    df = pd.DataFrame({"step": x_steps, "pass@1": tr.p1, "pass@256": tr.p256,
                       "crossover k (0 = none)": tr.cross, "KL (nats)": tr.kl,
                       "entropy (nats)": tr.entropy, "all-wrong share": tr.all_wrong,
                       "optimum pass@256": tr.opt_p256, "optimum beta": tr.opt.beta,
                       "optimum at or above base": tr.opt_ok})
    if rare:
        df["rare success"] = tr.rare_rate
        df["rare all-wrong share"] = tr.rare_wrong
        df["optimum rare success"] = tr.opt.rates[:, prob.rare].mean(axis=1)
    for i, name in enumerate(labels):
        df[f"{name} success"] = tr.success[:, i]
    return df


def numbers() -> None:
    how = "exact expected gradient, one run" if exact else f"mean over the {loop.RUNS_DEFAULT} runs"
    st.markdown(f"**Per step**, {how}: {estimator} "
                f"({EST}), G = {g}, lr = {controls.fmt_number(lr)}, "
                f"kl = {controls.fmt_number(kl)}, θ {'shared' if shared else 'per problem'}, "
                f"{rare} rare" + ("" if exact else f", seed {seed}") + ".")
    df = per_step()
    shown = df.iloc[sorted(set(range(0, steps + 1, max(1, steps // 20))) | {step, steps})]
    layout.table(shown.iloc[:, :10], digits=4)
    stem = (f"loop_{estimator}_g{g}_lr{controls.fmt_number(lr)}_kl{controls.fmt_number(kl)}_"
            f"{'shared' if shared else 'per-problem'}_rare{rare}_"
            + ("exact" if exact else f"seed{seed}") + f"_steps{steps}")
    layout.csv_download(per_step, f"{stem}.csv", label="Download the per-step table (CSV)",
                        key="loop-csv")
    pk = pd.DataFrame({"k": K_DRAWN.astype(int), "base": tr.base,
                       **{name: x.passk[step] for name, x, *_ in RUN_LINES},
                       "optimum at the same KL": tr.opt_passk[step]})
    layout.csv_download(pk, f"{stem}_passk_step{step}.csv",
                        label=f"Download pass@k at step {step:,} (CSV)", key="loop-passk-csv")


page.details(numbers)
