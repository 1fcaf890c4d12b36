"""Figure 12.1: REINFORCE on a five-armed bandit, with and without a baseline."""

import math
import secrets

import numpy as np
import streamlit as st

from klrl_core import bandit, baseline
from klrl_app import bandit_figures as figs
from klrl_app import controls, fmt, layout, lru, plots, precompute
from klrl_app.bandit_figures import N_MANY, N_SHOWN, NEAR_ZERO, STEPS

SEED_MAX = 2**31 - 1
CLOSE = 0.05                      # the thick average "close to" the dashed line: within this
# The learning rate's stops: fine where the runs change fastest, coarser above 0.2. Each stop's
# 20 runs go to the browser (figures that follow the hand), so their number sets its table.
LR_GRID = [round(0.01 * i, 2) for i in range(1, 21)] + [round(0.05 * i, 2) for i in range(5, 21)]

page = layout.Page(
    "bandit", "Policy gradient on a bandit",
    "Figure 12.1 · Sections 12.1.2–12.1.3 · Equation (12.1)",
    "Five arms pay noisy rewards with means 1.0, 1.2, 0.8, 1.5 and 1.1; the fourth is best. "
    "A softmax policy starts uniform and follows REINFORCE for 300 pulls. Each thin line is "
    "one learner: watch how many of them find the best arm.",
)
ui = page.ui
c_base, c_lr, c_new, c_more = page.control_row([1.1, 3.2, 1.2, 1.0])
with c_base:
    use_baseline = ui.switch(
        "baseline", "Baseline", default=False,
        help="Subtract a moving average of past rewards, b ← b + 0.1 (r − b), from each "
             "reward before the update; b starts at 0 and is updated after it is used. "
             "Off: b = 0.")
with c_lr:
    lr = ui.stops("lr", "Learning rate", LR_GRID, bandit.DEFAULT_LR, lo=0.01, hi=1.0,
                  help="Step size of every update θ ← θ + lr · (r − b) · (onehot(a) − π). The "
                       "slider steps by 0.01 up to 0.2, then by 0.05; a link may give any "
                       "value from 0.01 to 1.")
with c_new:
    st.button("New runs", icon=":material/refresh:", width="stretch", disabled=ui.fixed("seed"),
              help=f"Draw another {N_SHOWN} runs from a fresh seed (the seed goes into the link). "
                   f"The {N_MANY:,}-run numbers keep their own seed and do not change.",
              on_click=lambda: ui.set("seed", secrets.randbelow(SEED_MAX + 1)))
with c_more, page.more_settings("Seed"):
    seed = ui.seed(default=baseline.PRINTED_FIGURE_SEED,
                   help=f"The {N_SHOWN} runs drawn come from this seed, so a link shows the "
                        f"same runs. The default draw ({baseline.PRINTED_FIGURE_SEED}) is one "
                        f"that matches the printed figure (mean 0.73, spread 0.36, 5 of 20 "
                        f"below one half without a baseline); New runs draws others. Whole "
                        f"numbers from 0 to {SEED_MAX:,}.")
page.finish_controls()


# Every slider stop, both baseline settings, computed once per server process in the
# background (about 75 ms each), nearest the default first; a value not reached yet, or one
# between the stops from a link, is computed on the spot.
MANY = precompute.sweep("bandit-many", figs.many_runs_now, LR_GRID, bandit.DEFAULT_LR,
                        [(False,), (True,)])


# The drawn runs at every stop for the default seed, in the background as above, so that the
# browser's table of stops (figures that follow the hand) has them; another seed's stops are
# stored as runs reach them, and the others say "computing…" during a drag.
DRAWN = precompute.sweep("bandit-drawn", figs.drawn_now, LR_GRID, bandit.DEFAULT_LR,
                         [(False, baseline.PRINTED_FIGURE_SEED),
                          (True, baseline.PRINTED_FIGURE_SEED)])


def readout_at(lr: float, shown: dict, many: dict) -> list[tuple[str, str]]:
    return [
        ("lr", controls.fmt_number(lr)),
        (f"Mean · {N_SHOWN}", fmt.fixed(shown["mean"], 2)),
        (f"Spread · {N_SHOWN}", fmt.fixed(shown["std"], 2)),
        ("Below ½", f"{shown['n_below']} of {N_SHOWN}"),      # not "Below ½ · 20 5 of 20"
        (f"Mean · {N_MANY:,}", fmt.fixed(many["mean"], 2)),
        (f"Spread · {N_MANY:,}", fmt.fixed(many["std"], 2)),
        (f"Below ½ · {N_MANY:,}", fmt.pct(many["share_below"], max_places=1)),
    ]


def view_at(v: float) -> layout.View | None:
    """The readout and Figure 12.1 at learning rate ``v`` (baseline and seed as set), from the
    tables without computing: None if a table has not reached that stop yet."""
    d, many = DRAWN.ready(v, bool(use_baseline), seed), MANY.ready(v, bool(use_baseline))
    if d is None or many is None:
        return None
    return layout.View(readout_at(v, d.summary, many),
                       {"bandit-runs": figs.runs_chart(v, d, many, use_baseline, seed)})


drawn = DRAWN.at(lr, bool(use_baseline), seed)
runs, exact, shown = drawn
mean_path = runs.mean(axis=0)
many = MANY.at(lr, bool(use_baseline))
lr_text = controls.fmt_number(lr)

view = page.follow(layout.Instant("lr", view_at, setting=(bool(use_baseline), seed)), helps=[
    "the learning rate of every run below (the slider's value, repeated for the projector).",
    f"the best arm's probability after {STEPS} updates, averaged over the {N_SHOWN} runs drawn "
    f"(seed {seed}; New runs draws others).",
    f"standard deviation of that probability between the {N_SHOWN} runs drawn (population sd).",
    f"how many of the {N_SHOWN} runs drawn finish with the best arm below one half.",
    f"the same average over {N_MANY:,} runs simulated now at this learning rate and baseline "
    f"setting: {fmt.mean_se(many['mean'], many['se_mean'])} with its Monte Carlo standard "
    f"error. They have their own fixed seed, so New runs does not change them.",
    f"standard deviation of the final best-arm probability across the {N_MANY:,} runs.",
    f"share of the {N_MANY:,} runs finishing below one half: "
    f"{fmt.mean_se(100 * many['share_below'], 100 * many['se_share'])} percent with its "
    f"standard error.",
])
with page.figures(1)[0]:
    page.chart(view, "bandit-runs")


def look_for() -> str:
    """What to look for, each sentence chosen by the numbers on the page (so it stays true at
    every learning rate, baseline setting and seed)."""
    parts = []
    ex_end, avg_end = float(exact[-1]), float(mean_path[-1])
    final = runs[:, -1]
    n_near, n_below = int(np.sum(final < NEAR_ZERO)), shown["n_below"]

    # How far the expected step gets in 300 updates.
    if ex_end < 0.3:
        parts.append(f"At learning rate {lr_text} the policy barely moves in {STEPS} updates: "
                     f"even the dashed line, which takes the expected step every time, only "
                     f"climbs from 0.20 to {fmt.fixed(ex_end, 2)}.")
    elif ex_end < 0.5:
        parts.append(f"At learning rate {lr_text} learning is slow: the dashed line, which takes "
                     f"the expected step every time, climbs from 0.20 to only {fmt.fixed(ex_end, 2)} in "
                     f"{STEPS} updates.")

    # The runs drawn: stuck near zero, below one half, or none.
    if n_near:
        parts.append(
            f"{n_near} of the {N_SHOWN} lines {fmt.agree(n_near, 'ends', 'end')} near zero "
            f"(below 0.1): in "
            f"{fmt.agree(n_near, 'that run', 'those runs')} weaker arms got lucky early and "
            f"took over, and once their probability is high the run almost never pulls the best "
            f"arm again, so it never learns that arm pays more.")
    elif n_below == N_SHOWN:
        parts.append(f"All {N_SHOWN} lines are still below one half, and none ends near zero "
                     f"(below 0.1).")
    elif n_below:
        parts.append(
            f"None of the {N_SHOWN} lines ends near zero: the {n_below} that finish below one "
            f"half still give the best arm between 0.1 and 0.5.")
    else:
        parts.append(f"All {N_SHOWN} lines finish above one half: none of these runs got stuck "
                     f"on a weaker arm.")

    # The thick average against the dashed line.
    gap = ex_end - avg_end
    if gap > CLOSE:
        parts.append(f"The runs that lag behind pull the thick average down to {fmt.fixed(avg_end, 2)}, "
                     f"below the dashed line's {fmt.fixed(ex_end, 2)}.")
    elif gap < -CLOSE:
        parts.append(f"These {N_SHOWN} runs did better than the expected step: the thick average "
                     f"ends at {fmt.fixed(avg_end, 2)}, above the dashed line's {fmt.fixed(ex_end, 2)}.")
    else:
        parts.append(f"The thick average ends at {fmt.fixed(avg_end, 2)}, close to the dashed line's "
                     f"{fmt.fixed(ex_end, 2)}.")

    # The baseline, judged on the 4,000-run numbers at this learning rate.
    other = MANY.at(lr, not use_baseline)
    on, off = (many, other) if use_baseline else (other, many)
    on_pct, off_pct = (fmt.pct(x["share_below"], max_places=1) for x in (on, off))
    if use_baseline:
        lead = (f"With the baseline {on_pct} of {N_MANY:,} runs finish below one half; "
                f"without it {off_pct} do")
    else:
        lead = (f"Without a baseline {off_pct} of {N_MANY:,} runs finish below one half; "
                f"switch the baseline on and {on_pct} do")
    diff = off["share_below"] - on["share_below"]
    noise = 2 * math.hypot(on["se_share"], off["se_share"])
    narrower = on["std"] < off["std"]
    if diff > noise and on_pct != off_pct:
        parts.append(
            f"{lead}: the baseline leaves fewer runs stuck. Each update still points the same "
            f"way on average, but a reward is now judged against what the run usually earns, "
            f"so an ordinary pull of a middling arm pushes that arm down instead of up.")
    elif -diff > noise and on_pct != off_pct:
        why = ""
        if on["mean"] < 0.5 and narrower:
            why = (f" At this learning rate the average run is still below one half after "
                   f"{STEPS} updates ({fmt.fixed(on['mean'], 2)} with the baseline), and the baseline "
                   f"narrows the spread ({fmt.fixed(on['std'], 2)} against {fmt.fixed(off['std'], 2)}), so more "
                   f"runs stay bunched below one half with the average.")
        parts.append(f"{lead}: here the baseline leaves more runs below one half, not "
                     f"fewer.{why}")
    else:
        spread = (f"; it does narrow the spread ({fmt.fixed(on['std'], 2)} against {fmt.fixed(off['std'], 2)})"
                  if narrower and fmt.fixed(on['std'], 2) != fmt.fixed(off['std'], 2) else "")
        parts.append(f"{lead}: at this learning rate the baseline makes no clear difference to "
                     f"that share (within the simulation's noise){spread}.")

    # The learning rate.
    parts.append(
        f"A larger learning rate makes runs commit sooner, to the right arm or a wrong one: "
        f"here {fmt.pct(many['share_committed'], max_places=1)} of the {N_MANY:,} runs end committed "
        f"(best-arm probability above 0.9 or below 0.1) and "
        f"{fmt.pct(many['share_near_zero'], max_places=1)} end near zero.")
    return " ".join(parts)


if not page.present:
    page.explain(look_for())


@lru.memo
def baseline_path(lr: float) -> baseline.PathComparison:
    """Exact moments of one update along the dashed path, b = 0 and b = π·μ (Section 12.1.3)."""
    return baseline.path_comparison(STEPS, lr)


if page.section("What a baseline changes: the noise, not the direction"):
    comp = baseline_path(lr)
    v0, v1 = comp.without.total_var, comp.with_expected.total_var
    gap, ratio = comp.mean_gap, comp.ratio
    c_var, c_mean = page.figures(2)
    with c_var:
        chart, alt = figs.variance_chart(comp, lr_text)
        plots.show(chart, key="bandit-variance", alt=alt)
    with c_mean:
        chart, alt = figs.mean_chart(comp)
        plots.show(chart, key="bandit-mean", alt=alt)
    layout.paragraph(
        "Computed exactly by summing over the five arms, with the unit-variance reward noise "
        "integrated in closed form, for one gradient estimate (r − b)(onehot(a) − π); the "
        "update θ ← θ + lr·(r − b)(onehot(a) − π) moves by lr times it. Here b = π·μ is the "
        "policy's exact expected reward at each step, which this panel can compute; the "
        "Baseline switch above uses a moving average of past rewards instead. The mean "
        "estimate is the same with or without the baseline "
        + ("(the two curves on the right are identical): " if gap == 0 else
           f"(the two curves on the right, each summed over the arms with its own b, differ "
           f"by at most {fmt.standard_form(gap, 1)}, rounding error): ")
        + f"subtracting a "
        f"constant b from every reward changes each sampled estimate, but on average the "
        f"b·(onehot(a) − π) terms cancel. What changes is the spread. At the uniform start one "
        f"estimate's variance is {fmt.fixed(v0[0], 3)} without a baseline and {fmt.fixed(v1[0], 3)} with b = π·μ "
        f"({fmt.pct(ratio[0], 0)} of it); after {STEPS} steps at learning rate {lr_text}, "
        f"{fmt.fixed(v0[-1], 3)} against {fmt.fixed(v1[-1], 3)} ({fmt.pct(ratio[-1], 0)}). "
        + ("On this bandit the expected reward lowers the variance at every step of the path. "
           if np.all(ratio < 1) else
           "Here the expected reward does not lower the variance at every step. ")
        + f"The dotted line is the part due to the reward noise itself, "
        f"{fmt.fixed(comp.without.noise_var[0], 3)} at the start, which no constant baseline removes.")


page.details(lambda: figs.numbers(drawn, lr_text, use_baseline, seed))
