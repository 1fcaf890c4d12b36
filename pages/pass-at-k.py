"""Section 12.7.4 and Exercise 28.7: pass@k at the optimum, a training run that loses the rare
problems, and estimating pass@k from n samples."""

import math

import numpy as np
import streamlit as st

from klrl_core import pass_at_k as core
from klrl_app import controls, fmt, layout, plots
from klrl_app import pass_at_k_figures as figs
from klrl_app.pass_at_k_figures import yue_pct
from klrl_app.passk import problems_control

K_MAX = 1024
K_STOPS = [1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 25, 32, 40, 50, 64, 80, 100, 128, 160, 200,
           256, 320, 400, 512, 640, 800, 1024]
K_DEFAULT = 10
P_LO, P_HI = 0.001, 0.999           # 0 and 1 are fixed points of the tilt: nothing to see there
# The p slider's stops: dense toward 0 and 1, where pass@k changes fastest on the log-k axis and
# the rare problems are; the browser holds every stop's figures (36 stops: a table of ~200 kB,
# where the former 999 stops of 0.001 would take megabytes, and a drag could not cross them
# one by one). A link may give any p in [P_LO, P_HI].
P_STOPS = [0.001, 0.002, 0.003, 0.005, 0.007, 0.01, 0.015, 0.02, 0.03, 0.04, 0.05, 0.06, 0.08,
           0.1, 0.12, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75,
           0.8, 0.85, 0.9, 0.95, 0.97, 0.99, 0.995, 0.999]
BETA_LO, BETA_HI = 0.01, 5.0
SAMPLES_MAX = 1000                  # exact sums over c stay a few ms per estimator curve
DEFAULT_BEFORE, DEFAULT_AFTER = (0.3, 0.05), (0.9, 0.0)     # Exercise 28.7(b), problems A, B
EXERCISE = "Exercise 28.7(b)'s problems"
LISTED_PROBLEMS = 12                # up to this many problems are listed one by one
THIN = 0.0005                       # a gap below this does not show on a 0-1 axis


page = layout.Page(
    "pass-at-k", "pass@k at the optimum",
    "Section 12.7.4 · Exercise 28.7 (Chapter 28) · Yue et al. (2025)",
    "One training problem, a verifier that pays 1 for a correct answer and 0 otherwise, and a "
    "reference policy π₀ that solves it with probability p. The KL-regularized optimum π* "
    "multiplies every correct answer's probability by e^(1/β) and renormalises. pass@k is the "
    "chance that at least one of k independent attempts is correct.",
)
ui = page.ui
c_p, c_beta, c_k, c_more = page.control_row([3, 3, 3, 2.6])
with c_p:
    p = ui.stops("p", "Solve rate p of π₀", P_STOPS, 0.05, lo=P_LO, hi=P_HI,
                 help="The total probability π₀ gives to correct answers on this problem. The "
                      "ends 0 and 1 are left out: there the optimum cannot change anything. "
                      "A link may give any p from 0.001 to 0.999.")
with c_beta:
    beta = ui.number("beta", "KL weight β (κ = 1/β)", default=0.5, lo=BETA_LO, hi=BETA_HI,
                     step=0.01, inverse_alias="kappa",
                     help="Price of one nat of KL(π ‖ π₀). Small β: a weak anchor, and p* "
                          "approaches 1. A link may also give κ = 1/β.")
with c_k:
    k = ui.stops("k", "Attempts k", K_STOPS, K_DEFAULT, integer=True,
                 help="pass@k counts a problem as solved if any of k independent attempts "
                      "is correct. A link may give any whole k from 1 to 1,024.")
with c_more, page.more_settings():
    samples = ui.integer("samples", "Samples n for the estimators", default=20, lo=1,
                         hi=SAMPLES_MAX, widget="number",
                         help="Exercise 28.7(a): pass@k estimated from n attempts of which c "
                              "are correct (the section “Estimating pass@k from n samples”).")
    before, after = problems_control(ui, (DEFAULT_BEFORE, DEFAULT_AFTER), EXERCISE, (
        ("Solve rates before training (the base model), one per problem",
         "Comma-separated, between 0 and 1 (30% reads as 0.3). Exercise 28.7(b): problem A "
         "0.3, problem B 0.05."),
        ("Solve rates after a training run, same problems, same order",
         "Exercise 28.7(b): A rises to 0.9, B falls to 0 (never solved).")))
page.finish_controls()

# ------------------------------------------------------------------------- one problem
p_star = core.optimal_solve_rate(p, beta)
k_peak, gap_peak = core.largest_optimum_gain(p, beta, K_MAX)
beta_text = controls.fmt_number(beta)


def readout_at(q: float) -> list[tuple[str, str]]:
    """The readout's items at solve rate p = q, β and k as set (closed forms: microseconds)."""
    q_star = float(core.optimal_solve_rate(q, beta))
    # p* is π*'s pass@1: said once
    # fmt.prob: a chance below 1 never reads 1.000 (certain); p is at most 0.999, so p*
    # and every pass@k here are below 1 even where a double rounds them to 1
    out = [("p* (optimum)", fmt.prob(q_star, 3, below_one=True)),
           ("π₀ pass@1", fmt.prob(q, 3))]
    if k > 1:
        out += [(f"π₀ pass@{k}", fmt.prob(float(core.pass_at_k(q, k)), 3, below_one=True)),
                (f"π* pass@{k}", fmt.prob(float(core.pass_at_k(q_star, k)), 3,
                                          below_one=True))]
    return out


helps = ["the optimum's solve rate p·e^(1/β) / (p·e^(1/β) + 1 − p) (Section 12.7.4, step 1), "
         "which is also π*'s pass@1: one attempt.",
         "the reference policy's solve rate p: one attempt."]
if k > 1:
    helps += [f"1 − (1 − p)^{k}: at least one of {k} attempts of π₀ is correct.",
              f"1 − (1 − p*)^{k}: the same for the optimum."]


grid = figs.StopGrid(P_STOPS, beta, k)


def view_at(q) -> layout.View:
    """The readout and both figures at solve rate p = q, β and k as set (closed forms: the
    browser draws it at every stop of p)."""
    return layout.View(readout_at(float(q)), grid.charts(float(q), k, beta_text))


view = page.follow(layout.Instant("p", view_at, setting=(beta, k)), helps)
left, right = page.figures(2)
with left:
    page.chart(view, "pass-at-k-curves")
with right:
    page.chart(view, "pass-at-k-gap")

# ----------------------------------------------------------------- what to look for
factor = math.exp(1.0 / beta)
thin = fmt.fixed(THIN, 4)
# k = 1 … n_head and the last n_tail k below THIN, n_below in all (every k up to 1,024 checked)
n_head, n_tail, n_below, between_above = core.optimum_gain_below(p, beta, THIN, K_MAX)
odds = p / (1 - p)                  # the tilt multiplies the odds of a correct answer
if p_star >= 1 - THIN:
    # p*'s odds are p's odds times the factor: say which of the two puts p* near 1
    cause = ("that is mostly the factor's doing, as Section 12.7.4 says when β → 0: p* "
             "tends to 1 whatever p" if factor >= odds else
             f"that is mostly p's doing: π₀'s odds are already {fmt.sig(odds, 3)} to 1, more "
             f"than the factor {fmt.sig(factor, 3)}")
    regime = (f" At β = {beta_text} p* is within {thin} of 1: the optimum "
              f"multiplies the odds p/(1 − p) = {fmt.sig(odds, 3)} by e^(1/β) = "
              f"{fmt.sig(factor, 3)}, to {fmt.sig(odds * factor, 3)} to 1, so it solves this "
              f"problem almost every time, pass@1 included; {cause}.")
elif p_star - p < 0.01:
    regime = (f" At β = {beta_text} the anchor holds p* within {fmt.sig(p_star - p, 3)} of p, so "
              f"at k = 1 the curves nearly touch; the right-hand panel shows the gap on its own "
              f"scale, positive at every k.")
else:
    regime = ""
if k_peak == K_MAX:
    peak = (" The gap grows all the way to k = 1,024: with p this small even π* needs more "
            "attempts than that to solve the problem reliably.")
else:
    peak = f" The gap is largest at k = {k_peak:,}."
never_zero = ("but it never reaches zero: p* > p, so π* fails all k attempts less often "
              "than π₀, (1 − p*)^k < (1 − p)^k, at every k")
if n_below == K_MAX:
    tail = (f" At every k up to 1,024 the gap is below {thin} (at most "
            f"{fmt.sig(gap_peak, 3)}), too thin to see on the left, {never_zero}.")
elif not between_above:            # not the one rise and one fall of a difference of powers
    tail = f" The gap is below {thin} at {n_below:,} of the k from 1 to 1,024, {never_zero}."
else:
    head = ("" if n_head == 0 else
            f" At k = 1 the gap is below {thin}, too thin to see on the left." if n_head == 1
            else f" Up to k = {n_head:,} the gap is below {thin}, too thin to see on the left.")
    if n_tail:
        tail = (head + f" From k = {K_MAX - n_tail + 1:,} on the gap is below {thin} and the band "
                f"is too thin to see on the left, {never_zero}; both curves approach 1, since any "
                f"problem solved with probability above 0 is solved in enough attempts.")
    else:
        span = "Up to k = 1,024" if n_head == 0 else f"From k = {n_head + 1:,} to 1,024"
        tail = (head + f" {span} the gap stays above {thin}; with still more attempts both "
                f"curves approach 1, since any problem solved with probability above 0 is "
                f"solved eventually, and the gap shrinks, {never_zero}.")
look_for = (
    f"The optimum multiplies every correct answer's probability by e^(1/β) = {fmt.sig(factor, 3)} "
    f"and every incorrect one's by 1, then renormalises; since the normaliser is less than "
    f"e^(1/β), every correct answer gains: p* exceeds p whenever p lies strictly between 0 "
    f"and 1. pass@k = 1 − (1 − p)^k rises with p, so π*'s curve lies above π₀'s at every k, "
    f"for every p and every β: a theorem (Section 12.7.4), not a feature of these settings."
    f"{peak}{regime}{tail}")


# ------------------------------------------------------------------ the problem set
problems = figs.ProblemSet.at(before, after, beta)
cross, lost, fell = problems.cross, problems.lost, problems.fell
is_exercise = (tuple(before) == DEFAULT_BEFORE and tuple(after) == DEFAULT_AFTER)


def problem_set_section() -> None:
    if not page.section("A set of problems: a training run against the optimum"):
        return
    cols = st.columns([3, 2], gap="large")
    with cols[0]:
        chart, alt = problems.chart(k, beta_text)
        plots.show(chart, key="pass-at-k-set", alt=alt)
    with cols[1]:
        table = problems.pass_table(k, beta_text)
        # a pass@k below 1 never reads 1.000 (fmt.prob): only a sure thing does
        layout.small_table(table, {c: (lambda v: fmt.prob(v, 3)) for c in table.columns[1:]})
        if before.size <= LISTED_PROBLEMS:
            optimum = f"optimum (β = {beta_text})"
            layout.small_table(problems.rates_frame("before", "after", optimum),
                               {"before": 3, "after": 3, optimum: 3})
        st.caption("Solve rates per problem; pass@k averages 1 − (1 − rate)^k over the problems. "
                   "Edit the rates under More settings.")
    st.markdown(problem_set_text())
    st.markdown(
        "**Measured, not computed here.** The open diamonds (base) and squares (after GRPO) "
        "are Yue et al.'s (2025) numbers for Qwen2.5-7B trained with GRPO, without a KL term, "
        "on 2,000 mathematics problems, "
        f"measured on those training problems: pass@1 rose from {yue_pct('base', 0)} to "
        f"{yue_pct('trained', 0)} after 450 steps while pass@256 fell from "
        f"{yue_pct('base', 1)} to {yue_pct('trained', 1)}. They are drawn on the same axes for "
        "comparison only; nothing on this page produced them. By the theorem above no optimum "
        "does that on its own training problems, with a penalty or without one, so the "
        "measurement says how far a trained policy sits from the optimum it aims at.")


def problem_set_text() -> str:
    name = "On Exercise 28.7(b)'s two problems" if is_exercise else "On these problems"
    b1, a1 = float(problems.base[0]), float(problems.trained[0])
    first = f"{name} the training run {'raises' if a1 > b1 else 'does not raise'} pass@1"
    if cross is None:
        if fell == 0:
            second = (", and since no problem's rate fell, its curve is on or above the base's "
                      "at every k: a crossover needs a problem that training made rarer.")
        else:
            which = "one problem's rate" if fell == 1 else f"{fell} problems' rates"
            second = (f"; {which} fell, but not enough for the base to overtake it within "
                      f"k ≤ 1,024.")
    else:
        where = "already at k = 1" if cross == 1 else f"from k = {cross:,}"
        stay = ("and stays ahead up to k = 1,024" if core.base_ahead_from(before, after, cross)
                else "though the curves cross again before k = 1,024")
        joint = ", but" if a1 > b1 else ", and"
        second = f"{joint} the base overtakes it {where} {stay}."
        if lost:
            count = "One problem" if lost == 1 else f"{lost} problems"
            second += (f" {count} that the base solves sometimes {'are' if lost > 1 else 'is'} never solved after training, "
                       f"so no number of attempts lifts the trained curve above "
                       f"{fmt.fixed(float(np.mean(after > 0)), 3)}, while the base's tends to "
                       f"{fmt.fixed(float(np.mean(before > 0)), 3)}.")
    movable = (before > 0) & (before < 1)
    if not movable.any():
        opt = (f" The optimum at β = {beta_text} cannot move rates of 0 or 1, so here it "
               f"equals the base at every k.")
    else:
        some = "" if movable.all() else " strictly between 0 and 1 (0 and 1 stay put)"
        opt = (f" The optimum at β = {beta_text}, computed from the base's rates, raises every "
               f"rate{some}, so its curve is above the base's at every k"
               + (": making a problem rarer is something a sampled training loop does, "
                  "sharpening what it samples often, not something the optimum does."
                  if fell else "."))
    return (first + second + opt).replace("*", "\\*")

# ------------------------------------------------------------------------ estimators
k_est = min(k, samples)
est = figs.estimator_curves(p, samples, k_est)
true_e, unb_e, plug_e = figs.estimates_at(est, k_est)


def estimator_text() -> str:
    attempts = "one attempt" if samples == 1 else f"{samples:,} attempts"
    parts = [f"Estimating π₀'s pass@k from n = {fmt.count(samples, 'attempt')} of which c are "
             f"correct (Exercise 28.7(a)). Both expectations are sums over every c, weighted by "
             f"its binomial probability: no sampling."]
    if k > samples:
        parts.append(f"You chose k = {k:,}, but the unbiased estimator needs at least k "
                     f"samples (C(n, k) = 0 when k > n: {attempts} cannot show "
                     f"what {k:,} would do), so this section uses k = {k_est:,}; raise n "
                     f"under More settings to estimate pass@{k:,}.")
    parts.append(f"The unbiased estimator's expectation equals pass@k at every k ≤ n (within "
                 f"{fmt.sig(max(figs.unbiased_deviation(est), 1e-16), 1)} here, rounding): "
                 f"Chen et al.'s 1 − C(n−c, k)/C(n, k) is the chance that k attempts drawn "
                 f"without replacement from the n all fail, and its average over c is (1 − p)^k. "
                 f"To the right of the dashed line (k > n) it is not defined.")
    if k_est == 1:
        parts.append("At k = 1 both estimators are c/n, whose expectation is p: no bias.")
    elif true_e - plug_e < 5e-5:
        parts.append(f"The plug-in estimate 1 − (1 − c/n)^k is biased low by "
                     f"{fmt.sig(max(true_e - plug_e, 1e-16), 2)} at k = {k_est:,}: too little "
                     f"to see with n = {samples:,}.")
    else:
        parts.append(f"The plug-in estimate 1 − (1 − c/n)^k is biased low: (1 − c/n)^k is "
                     f"convex in c, so by Jensen's inequality its average exceeds (1 − p)^k. "
                     f"At k = {k_est:,} it expects {fmt.fixed(plug_e, 3)} against "
                     f"{fmt.fixed(true_e, 3)}, {fmt.pct((true_e - plug_e) / true_e, 1)} low. "
                     f"The bias is 0 at k = 1, tends to (1 − p)^n (all n attempts fail) as k "
                     f"grows, and vanishes as n → ∞.")
    return " ".join(parts).replace("*", "\\*")


def estimator_section() -> None:
    if not page.section("Estimating pass@k from n samples"):
        return
    cols = st.columns([3, 2], gap="large")
    with cols[0]:
        chart, alt = figs.estimator_chart(est, p, samples, k_est, (true_e, unb_e, plug_e))
        plots.show(chart, key="pass-at-k-estimators", alt=alt)
    with cols[1]:
        layout.small_table(figs.estimates_frame(k_est, samples, (true_e, unb_e, plug_e)),
                           {f"k = {k_est:,}, n = {samples:,}":
                            lambda v: fmt.fixed(0.0 if abs(v) < 1e-12 else v, 3)})   # no −0.000
        st.caption("Expectations over c ~ Binomial(n, p), computed exactly. Change n under "
                   "More settings.")
    st.markdown(estimator_text())


page.explain(look_for + " <a href='loop'>The loop page</a> runs such a training loop on "
             "shared parameters and shows pass@k narrowing step by step.",
             extra=lambda: (problem_set_section(), estimator_section()))


# ------------------------------------------------------------------------ the numbers
def numbers() -> None:
    st.markdown(f"**One problem**: p = {controls.fmt_number(p)}, β = {beta_text}, "
                f"p* = {fmt.fixed(p_star, 6)}")
    figs.details(p, p_star, beta_text, grid, problems, est, samples)


page.details(numbers)
