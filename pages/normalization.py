"""Section 12.7.1's wrinkle and Exercise 28.4: how group normalisation weights prompts of
different solve rates, and the group mean as a shortened leave-one-out baseline."""

from __future__ import annotations

import numpy as np
import streamlit as st

from klrl_core import normalization as core
from klrl_app import controls, fmt, layout
from klrl_app import normalization_figures as nf
from klrl_app.normalization_figures import FLAT, K_MAX, K_STOPS, NEAR, near_span

K_DEFAULT = 8
P_LO, P_HI = 0.01, 0.99


page = layout.Page(
    "normalization", "Group normalisation across prompts",
    "Section 12.7.1 · Exercise 28.4 (Chapter 28) · “Normalizations and their biases”",
    "A prompt is solved with probability p; a group of k answers is graded 0 or 1 and each "
    "answer's advantage is computed from its group. Whatever the normalisation, the prompt's "
    "expected update is a weight w times the gradient of p. Mean-centring gives every prompt "
    "the same weight; dividing by the group's standard deviation gives more to prompts that "
    "are nearly always failed or nearly always solved.",
)
ui = page.ui
c_k, c_p = page.control_row([3, 2])
with c_k:
    k = ui.stops("k", "Group size k", K_STOPS, K_DEFAULT, integer=True, hi=K_MAX,
                 help=f"Responses sampled per prompt. A link may give any whole k from 2 to "
                      f"{K_MAX}.")
with c_p:
    p = ui.number("p", "Marked solve rate p", default=0.10, lo=P_LO, hi=P_HI, step=0.01,
                  help="The prompt whose weights the readout gives, from 0.01 to 0.99.")
page.finish_controls()


def readout_at(k: int) -> tuple[dict[str, float], list[tuple[str, str]]]:
    """The weights at the marked p and at p = ½ for group size k, and the readout's items.
    Two points of the weight curves, not the drawn 401 (~5 ms at k = 256)."""
    at = core.weight_curves(np.array([p, 0.5]), k)
    n = {"factor": core.centring_factor(k), "sat": at.saturation, "w_half": float(at.std[1]),
         "w_p": float(at.std[0]), "a_p": float(at.arcsin[0])}
    n["fav_p"], n["fav_max"] = n["w_p"] / n["w_half"], n["sat"] / n["w_half"]
    return n, [
        ("÷ std weight", fmt.fixed(n["w_p"], 2)),
        ("Arcsin law", fmt.fixed(n["a_p"], 2)),
        ("Mean-centred", f"{k - 1}/{k} = {fmt.fixed(n['factor'], 3)}"),
        ("Over p = ½", f"{fmt.fixed(n['fav_p'], 2)}×"),
        ("Ends over p = ½", f"{fmt.fixed(n['fav_max'], 2)}×"),
    ]


numbers_k, _ = readout_at(k)
factor, sat, w_half = numbers_k["factor"], numbers_k["sat"], numbers_k["w_half"]
w_p, a_p = numbers_k["w_p"], numbers_k["a_p"]
fav_p, fav_max = numbers_k["fav_p"], numbers_k["fav_max"]
flat = fav_max - 1.0 < FLAT
pt = fmt.fixed(p, 2) if round(p, 2) == p else controls.fmt_number(p)

helps = [
    "the weight w at the marked p when each advantage is divided by its group's standard "
    "deviation (over k, the chapter's choice): the expected update is w times the gradient "
    "of p. Exact: a sum over the number correct among the other k − 1 answers.",
    "the same weight if the group's standard deviation were replaced by the true one, "
    "√(p(1 − p)): ((k − 1)/k)/√(p(1 − p)), the derivative of ((k − 1)/k)·2·arcsin√p "
    "(Exercise 28.4(c)).",
    "the weight without division: (k − 1)/k at every p, the gradient of p shortened "
    "(Section 12.7.1, Exercise 28.4(b)).",
    "the exact ÷ std weight at the marked p divided by its value at p = ½, where it is "
    "smallest: how much more this prompt counts than a half-solved one.",
    "the largest such factor at this k, reached as p approaches 0 or 1, where the weight "
    "tends to √(k − 1).",
]

def view_at(kk) -> layout.View:
    """The readout and both figures at group size k (the browser draws it at every stop)."""
    kk = int(kk)
    n, items = readout_at(kk)
    return layout.View(items, {
        "normalization-weights": nf.weights_chart(kk, n, p, pt),
        "normalization-objectives": nf.objectives_chart(kk, n["factor"], p, pt)})


view = page.follow(layout.Instant("k", view_at, setting=(p,)), helps)
left, right = page.figures(2)
with left:
    page.chart(view, "normalization-weights")
with right:
    page.chart(view, "normalization-objectives")


# ------------------------------------------------------------------------ what to look for
def look_for() -> str:
    """Every claim chosen by the numbers at this k and p."""
    centred = (f"Mean-centring gives every prompt the same weight {k - 1}/{k}: its update "
               f"follows the gradient of p itself, shortened (the flat grey line on the left, "
               f"the straight one on the right).")
    if flat:
        if k == 2:
            why = ("a mixed group of two is one right and one wrong answer, with advantages "
                   "+1 and −1 whatever p is")
        else:
            why = (f"the sums over the other {k - 1} answers come out the same at every p")
        favour = (f"At k = {k} dividing by the group's standard deviation favours no prompt: "
                  f"{why}, so the exact weight is {fmt.fixed(w_half, 2)} at every p, "
                  f"{fmt.fixed(w_half / factor, 2)}× mean-centring's. The arcsin law, which "
                  f"divides by "
                  f"the true √(p(1 − p)) instead, would favour the ends without bound; a group "
                  f"this small cannot.")
    else:
        favour = (f"At k = {k:,} dividing by the group's standard deviation favours prompts "
                  f"near p = 0 and p = 1: the weight is smallest at p = ½ ({fmt.fixed(w_half, 2)}) "
                  f"and "
                  f"climbs toward √(k − 1) = {fmt.fixed(sat, 2)} at either end, so a prompt almost "
                  f"never or almost always solved counts up to {fmt.fixed(fav_max, 2)}× as much as "
                  f"a "
                  f"half-solved one. The arcsin law, which divides by the true √(p(1 − p)), "
                  f"would make that factor unbounded; a finite group saturates, because a "
                  f"lone success among k answers gets advantage √(k − 1) and never more.")
    span = near_span(k)
    if span is not None:
        lo, hi = span
        digits = 2 if lo >= 0.01 else 3
        favour += (f" Between p = {fmt.fixed(lo, digits)} and {fmt.fixed(hi, digits)} the "
                   f"exact weight is within {fmt.pct(NEAR, 0)} of the arcsin law.")

    diff = w_p / a_p - 1.0
    if abs(diff) < 0.005:
        vs = f"equal to the arcsin law's {fmt.fixed(a_p, 2)} to within 0.5%"
    else:
        side = "above" if diff > 0 else "below"
        vs = f"{fmt.pct(abs(diff))} {side} the arcsin law's {fmt.fixed(a_p, 2)}"
    if flat:
        marked = f"At the marked p = {pt} the weight is {fmt.fixed(w_p, 2)}, {vs}."
    elif abs(p - 0.5) < 1e-12:
        marked = (f"The marked p = ½ is the least favoured solve rate: weight {fmt.fixed(w_p, 2)}, "
                  f"{vs}.")
    else:
        marked = (f"At the marked p = {pt} the weight is {fmt.fixed(w_p, 2)}, "
                  f"{fmt.fixed(fav_p, 2)}× its value "
                  f"at p = ½ and {vs}.")

    move_std = float(core.logit_update(p, k))
    move_c = factor * p * (1 - p)
    logit = (f"What the weight does not change: on a prompt whose solve rate is σ(θ) of a "
             f"single logit θ, the expected step on θ is w·p(1 − p), here "
             f"{fmt.fixed(move_std, 3)} against {fmt.fixed(move_c, 3)} when mean-centred. Both "
             f"shrink to zero as p nears 0 "
             f"or 1: a larger weight does not make up for a gradient of p that vanishes.")
    return f"{favour} {marked} {centred} {logit}"


page.explain(look_for())


def numbers() -> None:
    df = nf.curves_frame(k)
    st.caption("The arcsin law's weight is infinite at p = 0 and p = 1; those cells are empty.")
    layout.csv_download(df, f"normalization_k_{k}.csv", key="normalization-csv")


page.details(numbers)


# ------------------------------------------------------------ the leave-one-out baseline
def leave_one_out_section() -> None:
    df, c_star, grades = nf.leave_one_out_frame(p, k)
    rows = df.to_dict("records")
    mean = float(grades.mean())
    right_b, wrong_b = rows[0]["b_i, mean of the others"], rows[1]["b_i, mean of the others"]
    layout.paragraph(
        f"The group mean r̄ includes each answer's own reward. Split it as r̄ = r_i/G + "
        f"((G − 1)/G)·b_i, with b_i the mean of the other G − 1 rewards, and r_i − r̄ = "
        f"((G − 1)/G)·(r_i − b_i). The leave-one-out baseline b_i does not depend on answer i, "
        f"so it leaves the expected update unbiased (Exercise 28.4(a)); the centred advantage "
        f"is that unbiased one times (G − 1)/G, which is why mean-centring's weight is "
        f"{k - 1}/{k} at every p. Here on the likeliest mixed group at p = {pt} and "
        f"G = k = {k:,}: {c_star:,} correct, {k - c_star:,} wrong, group mean "
        f"{fmt.fixed(mean, 3)}. A correct answer's baseline is {fmt.fixed(right_b, 3)} and a "
        f"wrong one's {fmt.fixed(wrong_b, 3)}; the last two columns agree, as Exercise "
        f"28.4(b) says they must.")
    fmt3 = lambda x: fmt.fixed(x, 3, signed=True) if abs(x) >= 5e-4 else "0.000"  # noqa: E731
    layout.small_table(df, {"answers": 0, "b_i, mean of the others": 3,
                            "r_i − b_i": fmt3, "r_i − r̄": fmt3,
                            f"{k - 1}/{k} · (r_i − b_i)": fmt3})
    layout.paragraph(
        f"To try a group of your own, type its grades in the calculator at the foot of "
        f"[When a group carries signal, set to p = {pt} and k = {k:,}]"
        f"(groups?p={controls.fmt_number(p)}&k={k}): its “centred (Dr. GRPO)” column is "
        f"r_i − r̄, and the identity holds for every group, with any rewards.")


if page.section("The group mean as a shortened leave-one-out baseline"):
    leave_one_out_section()
