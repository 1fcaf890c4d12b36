"""Step labels from rollouts: what a process reward model's labels estimate (Section 12.7.3;
chapter 28's process rewards and Math-Shepherd; Exercise 28.8), on SPEC.md's step model."""

import numpy as np
import pandas as pd
import streamlit as st

from klrl_core import step_labels as sl
from klrl_app import controls, fmt, layout, plots

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
with c_more:
    with page.more_settings("More"):
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
N_GRID = np.unique(np.round(np.logspace(0, np.log10(sl.N_MAX), 61)).astype(int))
COL_C, COL_W = plots.COLORS["correct"], plots.COLORS["incorrect"]
# Green and red mean a correct and a wrong step on this page; the two labels are blue and
# violet (the hard label was green, the correct step's colour in the other charts).
SOFT_C, HARD_C = plots.COLORS["optimum"], plots.COLORS["reference"]


def rank(correct: float, wrong: float) -> str:
    if abs(correct - wrong) <= 1e-12:
        return "a tie"
    return "the wrong step" if wrong > correct else "the correct step"


def items_at(right: sl.Labels, wrong: sl.Labels | None) -> list[tuple[str, str]]:
    out = [(f"correct step {S}, soft", fmt.prob(right.soft_mean[S - 1], min_sig=2, max_places=3)),
           (f"correct step {S}, hard", fmt.prob(right.hard_mean[S - 1], min_sig=2, max_places=3))]
    if wrong is not None:
        out += [(f"wrong step {S}, "
                 f"soft", fmt.prob(wrong.soft_mean[S - 1], min_sig=2, max_places=3)),
                (f"wrong step {S}, "
                 f"hard", fmt.prob(wrong.hard_mean[S - 1], min_sig=2, max_places=3)),
                ("ranked higher", rank(right.soft_mean[S - 1], wrong.soft_mean[S - 1]))]
    return out


def panel(chart: plots.Chart, lab: sl.Labels, axis: str, wrong_from: int | None,
          legend: bool) -> None:
    steps = np.arange(1, T + 1)
    for name, mean, lo, hi, color, shift, symbol in (
            ("soft label", lab.soft_mean, lab.soft_lo, lab.soft_hi, SOFT_C,
             -0.13, "circle"),
            ("hard label", lab.hard_mean, lab.hard_lo, lab.hard_hi,
             HARD_C, 0.13, "diamond")):
        f4 = np.float32     # 4-byte floats: the table of every q stop stays small
        chart.add(x=steps + shift, y=mean.astype(f4), mode="markers", name=name,
                  legendgroup=name, showlegend=legend, yaxis=axis,
                  marker={"color": color, "size": 10, "symbol": symbol},
                  error_y={"type": "data", "symmetric": False, "array": (hi - mean).astype(f4),
                           "arrayminus": (mean - lo).astype(f4), "color": color,
                           "thickness": 2, "width": 5},
                  hovertemplate=(f"step %{{x:.0f}}: {name} mean %{{y:.3f}} (bar: its 5%–95% "
                                 f"range)<extra></extra>"))
    yref = "y" if axis == "y" else "y2"
    for t in range(1, T + 1):
        ok = wrong_from is None or t < wrong_from
        if not ok:
            chart.layout["shapes"].append(
                {"type": "rect", "xref": "x", "yref": f"{yref} domain", "x0": t - 0.45,
                 "x1": t + 0.45, "y0": 0, "y1": 1, "fillcolor": COL_W, "opacity": 0.12,
                 "line": {"width": 0}, "layer": "below"})


def steps_chart(right: sl.Labels, wrong: sl.Labels | None) -> plots.Chart:
    two = wrong is not None
    chart = plots.Chart("step t (✓ correct, ✗ wrong)", "", height=400,
                        margin={"t": 40, "r": 8})
    y_range = [-0.04, 1.2]
    ticks = {"tickvals": [0, 0.5, 1], "range": y_range, "fixedrange": True}
    if two:
        chart.update(yaxis={"domain": [0.56, 1.0], **ticks,
                            "title": {"text": "correct solution"}},
                     yaxis2={"domain": [0.0, 0.44], **ticks,
                             "title": {"text": f"wrong from step {err}"}, "showgrid": True,
                             "gridcolor": "rgba(128, 132, 149, 0.25)"})
    else:
        chart.update(yaxis={**ticks, "title": {"text": "correct solution: label"}})
    chart.update(xaxis={"range": [0.4, T + 0.6], "tickmode": "linear", "dtick": 1,
                        "fixedrange": True, "anchor": "y2" if two else "y"})
    panel(chart, right, "y", None, True)
    if two:
        panel(chart, wrong, "y2", err, False)
    # ✓ and ✗ above every step, in green and red (a trace: annotations take the text colour)
    steps = np.arange(1, T + 1)
    for wrong_from, axis in [(None, "y")] + ([(err, "y2")] if two else []):
        ok = [wrong_from is None or t < wrong_from for t in steps]
        chart.symbols(steps, 1.13, ["✓" if k else "✗" for k in ok],
                      [plots.SYMBOL_COLORS["correct" if k else "incorrect"] for k in ok],
                      yaxis=axis)
    return chart


def n_chart(q: float) -> tuple[plots.Chart, str]:
    """Both labels of step S against N, for the correct solution and (if any) the wrong one."""
    chart = plots.Chart("completions N (log scale)", f"label of step {S}", height=400,
                        margin={"t": 40, "r": 22})
    cases = [("correct", sl.step_values(q, g, T)[S - 1], COL_C)]
    if err is not None:
        cases.append(("wrong", g, COL_W))
    alt = []
    for name, v, color in cases:
        over = sl.labels_over_n(v, N_GRID)
        lo, hi, hard = over.soft_lo, over.soft_hi, over.hard_mean
        # 4-byte floats, and the flat soft mean as two points: the browser's table of every
        # q stop stays within its budget (klrl_app/instant.py).
        chart.add(x=np.r_[N_GRID, N_GRID[::-1]], y=np.r_[hi, lo[::-1]].astype(np.float32),
                  mode="lines",
                  fill="toself", fillcolor=color, opacity=0.18, line={"width": 0},
                  showlegend=False, hoverinfo="skip", name=f"{name} step: soft 5%–95%")
        chart.add(x=N_GRID[[0, -1]], y=np.full(2, v), mode="lines",
                  name=f"{name} step: soft (band 5%–95%)", line={"color": color, "width": 2},
                  hovertemplate=f"{name} step: soft mean %{{y:.4f}}<extra></extra>")
        chart.add(x=N_GRID, y=hard.astype(np.float32), mode="lines",
                  name=f"{name} step: hard (dashed)",
                  line={"color": color, "width": 3, "dash": "dash"},
                  hovertemplate=f"{name} step, N = %{{x}}: hard mean %{{y:.3f}}<extra></extra>")
        ns = sorted({1, n, sl.N_MAX})                       # N = 1 or 1,024 only once
        hards = [fmt.prob(float(sl.hard_mean(v, m)), min_sig=2, max_places=3) for m in ns]
        at_n = ([f"{hards[0]} at every N"] if len(set(hards)) == 1 else
                [f"{h} at N = {m:,}" for h, m in zip(hards, ns)])
        alt.append(f"{name} step {S}: soft mean {fmt.prob(v, min_sig=2, max_places=3)} at every N; hard mean "
                   + (", ".join(at_n[:-1]) + " and " if len(at_n) > 1 else "") + at_n[-1])
    chart.vline(n, plots.COLORS["neutral"], dash="dot", width=2)
    chart.update(xaxis={"type": "log", "range": [0, np.log10(sl.N_MAX)],
                        "tickvals": [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024],
                        "fixedrange": True},
                 yaxis={"range": [-0.02, 1.04], "fixedrange": True})
    return chart, (f"Line chart of step {S}'s labels against N on a log axis, N = {n:,} "
                   f"marked: " + "; ".join(alt) + ". Shaded bands: the soft label's 5%–95% "
                   f"range, which narrows as N grows.")


def view_at(q: float) -> layout.View:
    right = sl.labels(sl.step_values(q, g, T), n)
    wrong = sl.labels(sl.step_values(q, g, T, err), n) if err is not None else None
    alt = (f"Per-step labels at q = {fmt.fixed(q, 2)}, N = {n:,}. Correct solution, soft: "
           + ", ".join(fmt.prob(x, min_sig=2, max_places=3) for x in right.soft_mean) + "; hard: "
           + ", ".join(fmt.prob(x, min_sig=2, max_places=3) for x in right.hard_mean) + ".")
    if wrong is not None:
        alt += (f" Solution wrong from step {err}, soft: "
                + ", ".join(fmt.prob(x, min_sig=2, max_places=3) for x in wrong.soft_mean) + "; hard: "
                + ", ".join(fmt.prob(x, min_sig=2, max_places=3) for x in wrong.hard_mean) + ".")
    alt += " Bars: the 5%–95% range of each label over the binomial draw."
    return layout.View(items_at(right, wrong), {
        "step-labels-steps": (steps_chart(right, wrong), alt),
        "step-labels-vs-n": n_chart(q)})


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

left, right_col = page.figures()
with left:
    page.chart(view, "step-labels-steps")
with right_col:
    page.chart(view, "step-labels-vs-n")


# --- what to look for, from the numbers ------------------------------------------------------
def look_for() -> str:
    vc, hc = float(right.soft_mean[S - 1]), float(right.hard_mean[S - 1])
    tries = ("the chance that its one try finishes: at N = 1 the two labels are the same"
             if n == 1 else f"the chance that at least one of {n:,} tries finishes")
    parts = [f"Both labels follow μ, not the step: a correct step {S} gets soft {fmt.prob(vc, min_sig=2, max_places=3)} "
             f"(μ's chance to finish from there) and hard {fmt.prob(hc, min_sig=2, max_places=3)} ({tries})."]
    if wrong is not None:
        vw, hw = float(wrong.soft_mean[S - 1]), float(wrong.hard_mean[S - 1])
        who = rank(vc, vw)
        if who == "the wrong step":
            more = ("more than the correct one" if fmt.prob(hw, min_sig=2, max_places=3) != fmt.prob(hc, min_sig=2, max_places=3) else
                    "a higher soft label than the correct one (the hard labels agree to three "
                    "decimals)")
            parts.append(f"The wrong step {S} gets soft {fmt.prob(vw, min_sig=2, max_places=3)} and hard {fmt.prob(hw, min_sig=2, max_places=3)}: {more}, "
                         f"so a process reward model fitted to these labels would rank the "
                         f"wrong step higher.")
        elif who == "the correct step":
            than = ("less than the correct one" if fmt.prob(hw, min_sig=2, max_places=3) != fmt.prob(hc, min_sig=2, max_places=3) else
                    "a lower soft label than the correct one (the hard labels agree to three "
                    "decimals)")
            parts.append(f"The wrong step {S} gets soft {fmt.prob(vw, min_sig=2, max_places=3)} and hard {fmt.prob(hw, min_sig=2, max_places=3)}, {than}: "
                         f"here the labels order the two steps rightly.")
        else:
            parts.append(f"The wrong step {S} gets the same labels "
                         f"({fmt.prob(vw, min_sig=2, max_places=3)}, "
                         f"{fmt.prob(hw, min_sig=2, max_places=3)}): the "
                         f"labels cannot tell the two steps apart.")
        q_star = sl.crossing_skill(g, T, S)
        if 0 < q_star < 1:
            flip = f"At g = {fmt.fixed(g, 2)} that order flips at q = {fmt.fixed(q_star, 3)}"
            if who == "the correct step":
                parts.append(f"{flip}, below this q = {fmt.fixed(q, 2)}: a completer weaker than "
                             f"{fmt.fixed(q_star, 3)} would rank the wrong step {S} above the correct "
                             f"one.")
            elif who == "the wrong step":
                parts.append(f"{flip}, above this q = {fmt.fixed(q, 2)}, which is why the wrong step "
                             f"{S} ranks higher here: a completer stronger than {fmt.fixed(q_star, 3)} "
                             f"would rank the correct step higher.")
            else:
                parts.append(f"{flip}, which is where this q = {fmt.fixed(q, 2)} is: the two steps "
                             f"tie.")
    inner = [name for name, v in [("correct", vc)] + ([("wrong", float(wrong.v[S - 1]))]
                                                     if wrong is not None else [])
             if 0 < v < 1]
    if inner:
        which = (f"the {inner[0]} step's soft band narrows around its mean" if len(inner) == 1
                 else "both steps' soft bands narrow around their means")
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
            f"g = {fmt.fixed(g, 2)} and N = {n:,}: a correct first step gets soft "
            f"{fmt.prob(vc, min_sig=2, max_places=3)} and hard "
            f"{fmt.prob(hc, min_sig=2, max_places=3)}, a wrong first step gets soft "
            f"{fmt.prob(vw, min_sig=2, max_places=3)} and hard "
            f"{fmt.prob(hw, min_sig=2, max_places=3)}, so {verdict}. "
            f"A process reward model fitted to these labels learns their expectation given the "
            f"prefix, μ's value function "
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
    counts_c = sl.draw_counts(right.v, n, seed)
    counts_w = (sl.draw_counts(wrong.v, n, np.random.SeedSequence(seed).spawn(1)[0]
                               .generate_state(1)[0]) if wrong is not None else None)
    with draw_left:
        chart = plots.Chart("step t", "label in the data set", height=360, barmode="group",
                            margin={"t": 48})
        steps = np.arange(1, T + 1)
        rows = [("correct", counts_c, COL_C)]
        if counts_w is not None:
            rows.append((f"wrong from step {err}", counts_w, COL_W))
        # Each hard label's diamond sits over its own soft bar (the bars of a step are side by
        # side: 0.85 of a step shared by the rows, plots.Chart's bargap 0.15), so that the two
        # solutions' diamonds never cover each other; the axis leaves room below 0 and above 1.
        width = 0.85 / len(rows)
        for i, (name, k, color) in enumerate(rows):
            chart.add("bar", x=steps, y=k / n, name=f"soft, {name}", marker={"color": color},
                      customdata=k, hovertemplate=(f"{name}, step %{{x}}: %{{customdata}} of "
                                                   f"{n:,} finished, soft %{{y:.3f}}"
                                                   f"<extra></extra>"))
            chart.add(x=steps + (i - (len(rows) - 1) / 2) * width, y=(k >= 1).astype(float),
                      mode="markers", name=f"hard, {name}", customdata=steps,
                      marker={"color": color, "symbol": "diamond-open", "size": 11,
                              "line": {"width": 2}}, cliponaxis=False,
                      hovertemplate=f"{name}, step %{{customdata}}: hard %{{y:.0f}}"
                                    f"<extra></extra>")
        chart.update(yaxis={"range": [-0.07, 1.1], "tickvals": [0, 0.5, 1],
                            "fixedrange": True},
                     xaxis={"tickmode": "linear", "dtick": 1, "range": [0.4, T + 0.6],
                            "fixedrange": True})
        alt = (f"Bar chart of one seeded draw (seed {seed}) of the labels, N = {n:,} "
               f"completion{'s' if n > 1 else ''} per step. Correct solution, completions "
               f"that finished: "
               + ", ".join(str(int(x)) for x in counts_c))
        if counts_w is not None:
            alt += (f"; solution wrong from step {err}: "
                    + ", ".join(str(int(x)) for x in counts_w))
        plots.show(chart, key="step-labels-draw", alt=alt + ". Diamonds: the hard labels.")
        st.button("New draw", icon=":material/casino:", key="step-labels-new-draw",
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


def numbers() -> None:
    df = pd.DataFrame({"step": [str(t) for t in range(1, T + 1)], "value correct": right.v,
                       "soft mean correct": right.soft_mean, "soft 5% correct": right.soft_lo,
                       "soft 95% correct": right.soft_hi, "hard mean correct": right.hard_mean,
                       "hard 5% correct": right.hard_lo, "hard 95% correct": right.hard_hi})
    if wrong is not None:
        df["value wrong"] = wrong.v
        df["soft mean wrong"] = wrong.soft_mean
        df["soft 5% wrong"] = wrong.soft_lo
        df["soft 95% wrong"] = wrong.soft_hi
        df["hard mean wrong"] = wrong.hard_mean
        df["hard 5% wrong"] = wrong.hard_lo
        df["hard 95% wrong"] = wrong.hard_hi
    layout.table(df, digits=4)
    name = f"q_{controls.fmt_number(q)}_g_{controls.fmt_number(g)}_n_{n}_T_{T}"
    layout.csv_download(df, f"step_labels_{name}.csv", label="Download the labels (CSV)",
                        key="step-labels-csv")

    def by_n() -> pd.DataFrame:
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

    layout.csv_download(by_n, f"step_labels_by_n_step_{S}_{name}.csv",
                        label=f"Download step {S}'s labels against N (CSV)",
                        key="step-labels-by-n-csv")


page.details(numbers)
