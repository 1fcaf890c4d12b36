"""Step labels from rollouts: what a process reward model's labels estimate (Section 12.7.3;
chapter 28's process rewards and Math-Shepherd; Exercise 28.8), on SPEC.md's step model."""

import pandas as pd
import streamlit as st

from klrl_core import step_labels as sl
from klrl_app import fmt, layout, plots
from klrl_app import step_labels_figures as sf
from klrl_app.step_labels_figures import p3

page = layout.Page(
    "step-labels", "Rewarding the steps: labels from rollouts",
    "Section 12.7.3 · Chapter 28 · process rewards, Math-Shepherd · Exercise 28.8",
    "A solution has T steps. To label step t without a human, complete the solution N times "
    "from after step t with a completer μ and count how many completions reach the right "
    "answer (Math-Shepherd's recipe). In this model μ gets each remaining step right with "
    "probability q, its skill; once the solution holds a wrong step, a completion still hits "
    "the right answer with probability g, a lucky guess. The soft label is the fraction that "
    "succeed, the hard label whether at least one does.",
)
ui = page.ui
c_q, c_n, c_g, c_e, c_more = page.control_row([2.1, 1.2, 1.5, 1.1, 1.05])
with c_more, page.more_settings("More"):
    T = ui.integer("steps", "Steps T in a solution", sl.T_DEFAULT, 1, sl.T_MAX,
                   help=f"From 1 to {sl.T_MAX}.")
    seed = ui.seed(help="The same seed draws the same data set of labels.")
with c_q:
    q = ui.number("skill", "Completer's skill q", default=sl.Q_DEFAULT, lo=0.0, hi=1.0,
                  step=0.01, help="The chance that μ gets one remaining step right, 0 to 1.")
with c_n:
    n = ui.integer("n", "Completions N", sl.N_DEFAULT, 1, sl.N_MAX, widget="number",
                   help=f"Completions per step, from 1 to {sl.N_MAX:,}.")
with c_g:
    g = ui.number("guess", "Lucky guess g", default=sl.G_DEFAULT, lo=0.0, hi=1.0,
                  step=0.01, help="After a wrong step, the chance that a completion still "
                                  "reaches the right answer, 0 to 1.")
with c_e:
    err = ui.integer_or_none("error", "Wrong step", sl.ERROR_DEFAULT if sl.ERROR_DEFAULT <= T
                             else T, 1, T, help="The first wrong step of the second solution "
                                                "(every later step stays wrong), or none.")
page.finish_controls()

S = err if err is not None else 1            # the step the readout and the N chart follow


def rank(correct: float, wrong: float) -> str:
    if abs(correct - wrong) <= 1e-12:
        return "a tie"
    return "the wrong step" if wrong > correct else "the correct step"


def items_at(right: sl.Labels, wrong: sl.Labels | None) -> list[tuple[str, str]]:
    out = [(f"correct step {S}, soft", p3(right.soft_mean[S - 1])),
           (f"correct step {S}, hard", p3(right.hard_mean[S - 1]))]
    if wrong is not None:
        out += [(f"wrong step {S}, soft", p3(wrong.soft_mean[S - 1])),
                (f"wrong step {S}, hard", p3(wrong.hard_mean[S - 1])),
                ("ranked higher", rank(right.soft_mean[S - 1], wrong.soft_mean[S - 1]))]
    return out


def view_at(q: float) -> layout.View:
    right = sl.labels(sl.step_values(q, g, T), n)
    wrong = sl.labels(sl.step_values(q, g, T, err), n) if err is not None else None
    return layout.View(items_at(right, wrong), {
        "step-labels-steps": sf.steps_chart(right, wrong, T, err, q, n),
        "step-labels-vs-n": sf.n_chart(q, g, T, S, n, err)})


helps = [
    f"the soft label's mean at step {S} of the correct solution: μ's chance of finishing from "
    f"there, q^(T − t).",
    "the hard label's mean there: 1 − (1 − v)ᴺ, the chance that at least one of N completions "
    "finishes.",
]
if err is not None:
    helps += [f"the soft label's mean at step {S} of the solution whose step {err} is wrong: "
              f"the guess rate g.",
              "the hard label's mean there: 1 − (1 − g)ᴺ.",
              "which of the two steps a process reward model fitted to these labels would "
              "score higher (both labels agree: the hard mean rises with the soft one)."]
view = page.follow(layout.Instant("skill", view_at, setting=(n, g, T, err)), helps)
right = sl.labels(sl.step_values(q, g, T), n)
wrong = sl.labels(sl.step_values(q, g, T, err), n) if err is not None else None

for column, key in zip(page.figures(), ("step-labels-steps", "step-labels-vs-n")):
    with column:
        page.chart(view, key)


# --- what to look for, from the numbers ------------------------------------------------------
def look_for() -> str:
    vc, hc = float(right.soft_mean[S - 1]), float(right.hard_mean[S - 1])
    tries = ("the chance that its one try finishes: at N = 1 the two labels are the same"
             if n == 1 else f"the chance that at least one of {n:,} tries finishes")
    gets = (f"a correct step {S} gets soft {p3(vc)} (μ's chance to finish from there) and "
            f"hard {p3(hc)} ({tries})")
    # Do the labels put every correct step above every wrong one? (The hard label rises with
    # the soft one, so one order holds for both.)
    if wrong is not None:
        separate, ok_min, bad_max = sl.separation(right.v, wrong.v, err)
    if wrong is not None and separate and q == 1:
        parts = [f"A completer that never slips (q = 1) finishes from every correct prefix, so "
                 f"here the labels separate the steps perfectly: every correct step gets soft "
                 f"{p3(1.0)} and hard {p3(1.0)}, every wrong one the guess rate g = "
                 f"{p3(g)} (soft) and {p3(float(wrong.hard_mean[err - 1]))} (hard)."]
    elif wrong is not None and separate:
        parts = [f"Here the labels put every correct step above every wrong one (soft "
                 f"{p3(ok_min)} or more against {p3(bad_max)}), "
                 f"but they measure μ as much as the step: {gets}."]
    elif wrong is None and q == 1:
        parts = [f"A completer that never slips (q = 1) finishes from every correct prefix: "
                 f"every step of the correct solution gets soft and hard labels of {p3(1.0)}."]
    else:
        parts = [f"Both labels follow μ, not the step: {gets}."]
    if wrong is not None:
        vw, hw = float(wrong.soft_mean[S - 1]), float(wrong.hard_mean[S - 1])
        who = rank(vc, vw)
        if who == "the wrong step":
            more = ("more than the correct one" if p3(hw) != p3(hc) else
                    "a higher soft label than the correct one (the hard labels agree to three "
                    "decimals)")
            parts.append(f"The wrong step {S} gets soft {p3(vw)} and hard {p3(hw)}: {more}, so "
                         f"a process reward model fitted to these labels would rank the wrong "
                         f"step higher.")
        elif who == "the correct step":
            than = ("less than the correct one" if p3(hw) != p3(hc) else
                    "a lower soft label than the correct one (the hard labels agree to three "
                    "decimals)")
            parts.append(f"The wrong step {S} gets soft {p3(vw)} and hard {p3(hw)}, {than}: "
                         f"here the labels order the two steps rightly.")
        else:
            parts.append(f"The wrong step {S} gets the same labels ({p3(vw)}, {p3(hw)}): the "
                         f"labels cannot tell the two steps apart.")
        q_star = sl.crossing_skill(g, T, S)
        if 0 < q_star < 1:
            flip = f"At g = {fmt.fixed(g, 2)} that order flips at q = {fmt.fixed(q_star, 3)}"
            if who == "the correct step":
                parts.append(f"{flip}, below this q = {fmt.fixed(q, 2)}: a completer weaker "
                             f"than {fmt.fixed(q_star, 3)} would rank the wrong step {S} above "
                             f"the correct one.")
            elif who == "the wrong step":
                parts.append(f"{flip}, above this q = {fmt.fixed(q, 2)}, which is why the wrong "
                             f"step {S} ranks higher here: a completer stronger than "
                             f"{fmt.fixed(q_star, 3)} would rank the correct step higher.")
            else:
                parts.append(f"{flip}, which is where this q = {fmt.fixed(q, 2)} is: the two "
                             f"steps tie.")
    values = [("correct", vc)] + ([("wrong", float(wrong.v[S - 1]))] if wrong is not None else [])
    inner = [name for name, v in values if 0 < v < 1]
    if inner:
        which = (f"the {inner[0]} step's soft 5%–95% bars narrow around its mean"
                 if len(inner) == 1 else "both steps' soft 5%–95% bars narrow around their means")
        parts.append(f"In the chart of the labels against N, {which} as N grows, "
                     f"while the hard label climbs toward 1: a step of value v > 0 is "
                     f"finished by one of N tries almost surely once N is large, whether "
                     f"or not the step is right.")
    else:
        parts.append(f"In the chart of the labels against N, every value at step {S} is "
                     f"exactly 0 or 1, so both labels are that number at every N.")
    return " ".join(parts)


page.explain(look_for())


# --- Exercise 28.8(b) at this T, g and N ------------------------------------------------------
def exercise_case() -> str:
    qx = 0.3
    c1 = sl.labels(sl.step_values(qx, g, T), n)
    w1 = sl.labels(sl.step_values(qx, g, T, 1), n)
    vc, hc, vw, hw = (float(x[0]) for x in (c1.soft_mean, c1.hard_mean, w1.soft_mean,
                                            w1.hard_mean))
    who = rank(vc, vw)
    verdict = {"the wrong step": "the wrong first step outranks the right one",
               "the correct step": "here the right first step still ranks higher",
               "a tie": "the two first steps tie"}[who]
    return (f"**Exercise 28.8(b)'s case**, a weak completer q = 0.3 with T = {T}, "
            f"g = {fmt.fixed(g, 2)} and N = {n:,}: a correct first step gets soft {p3(vc)} and "
            f"hard {p3(hc)}, a wrong first step gets soft {p3(vw)} and hard {p3(hw)}, so "
            f"{verdict}. A process reward model fitted to these labels learns their expectation "
            f"given the prefix, μ's value function "
            + ("(soft, and hard too: at N = 1 the two labels are the same)" if n == 1 else
               f"(soft) or its best-of-{n:,} success (hard)")
            + ", not whether the step is right. Try it in [Exercise 28.8](exercises).")


REPORTED = pd.DataFrame({
    "study (as the chapters report it)": [
        "Uesato et al. 2022 (AI Alignment, §12.7.3)",
        "Uesato et al. 2022 (RL textbook, ch. 28)",
        "Lightman et al. 2023 (AI Alignment, §12.7.3)"],
    "what was measured": [
        "grade-school word problems: correct final answers resting on at least one wrong step",
        "the same share, previous best against their best system",
        "500 MATH problems, best of 1,860 samples picked by the reward model: share solved"],
    "reported": [
        "12.4% with RL on final-answer correctness; 3.8% for the best process-based method",
        "14.0% → 3.4%",
        "78.2% process-supervised against 72.4% outcome-supervised"],
})

if page.section("A data set's labels, and what was measured"):
    draw_left, draw_right = st.columns([1, 1], gap="large")
    with draw_left:
        chart, alt = sf.draw_chart(right, wrong, T, n, err, seed)
        plots.show(chart, key="step-labels-draw", alt=alt)
        st.button("New draw", icon=":material/casino:", key="step-labels-new-draw",
                  disabled=ui.fixed("seed"),
                  on_click=lambda: ui.set("seed", (seed + 1) % (2**31)),
                  help="Draw another data set (the seed goes up by one; it stays in the link).")
    with draw_right:
        st.markdown("**What was measured** (numbers reported by the papers, as the chapters "
                    "cite them; not the output of the model on this page)")
        layout.small_table(REPORTED, {})
        st.caption(
            "Lightman et al. caution that the two reward models' training data are not "
            "directly comparable; in a smaller comparison where only the kind of supervision "
            "differed, process supervision again came out ahead. Lightman et al. compare "
            "reward models used to pick one solution among many, not training runs; Uesato et "
            "al. also trained policies with RL, and their 12.4% is such a policy, trained on "
            "final-answer correctness. The RL textbook cites Lightman et al. as 2024 (its ICLR "
            "publication) and rounds to 78%.")
    layout.paragraph(exercise_case())


page.details(lambda: sf.numbers(right, wrong, q, g, n, T, S))
