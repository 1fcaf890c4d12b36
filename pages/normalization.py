"""Section 12.7.1's wrinkle and Exercise 28.4: how group normalisation weights prompts of
different solve rates, and the group mean as a shortened leave-one-out baseline."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from klrl_core import groups, normalization as core
from klrl_app import controls, fmt, layout, lru
from klrl_app.plots import COLORS, Chart

K_STOPS = [2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 48, 64, 96, 128, 192, 256]
K_DEFAULT = 8
K_MAX = 256               # a 401-point curve stays under ~20 ms up to here (klrl_core notes)
P_LO, P_HI = 0.01, 0.99
# Solve rates spaced like cos: dense near p = 0 and 1, where the arcsin law runs off and the
# exact weight bends toward its ceiling; p = 1/2 is the middle point.
P_GRID = 0.5 * (1.0 - np.cos(np.pi * np.linspace(0.0, 1.0, 401)))
FLAT = 1e-9               # relative spread below this: the weight is the same at every p
NEAR = 0.10               # "within 10% of the arcsin law"
STD_COLOR, ARCSIN_COLOR, CENTRED_COLOR = COLORS["optimum"], COLORS["accent"], COLORS["neutral"]
STD_NAME = "÷ group std (exact)"
ARCSIN_NAME = "÷ true std (arcsin law)"
CENTRED_NAME = "mean-centred"


@lru.memo
def curves(k: int) -> dict[str, np.ndarray | float]:
    """Everything drawn against p for one k (pure, so shared by every session: the browser's
    table of stops draws it at every stop of k, ~20 ms a stop at k = 256)."""
    c = core.weight_curves(P_GRID, k)
    factor = core.centring_factor(k)
    arcsin = np.where(np.isfinite(c.arcsin), c.arcsin, np.nan)   # a gap, not inf, at the ends
    # The exact objective: the running integral of the weight, so its slope is the weight.
    steps = np.diff(P_GRID) * 0.5 * (c.std[1:] + c.std[:-1])
    return {
        "std": c.std, "std_unbiased": c.std_unbiased, "arcsin": arcsin, "centred": c.centred,
        "signal": c.signal,
        "obj_std": np.concatenate(([0.0], np.cumsum(steps))),
        "obj_arcsin": factor * np.asarray(core.objective_arcsin(P_GRID)),
        "obj_centred": factor * np.asarray(core.objective_p(P_GRID)),
    }


def near_span(k: int) -> tuple[float, float] | None:
    """The run of solve rates around p = 1/2 where the exact weight is within NEAR of the
    arcsin law (None if p = 1/2 itself is not)."""
    c = curves(k)
    inner = slice(1, -1)
    ratio = c["std"][inner] / c["arcsin"][inner]
    p = P_GRID[inner]
    ok = np.abs(ratio - 1.0) <= NEAR
    mid = int(np.argmin(np.abs(p - 0.5)))
    if not ok[mid]:
        return None
    lo, hi = mid, mid
    while lo > 0 and ok[lo - 1]:
        lo -= 1
    while hi < ok.size - 1 and ok[hi + 1]:
        hi += 1
    return float(p[lo]), float(p[hi])


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


cv = curves(k)
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

# ------------------------------------------------------------------------------- figures
legend_curves = [("std", STD_NAME, STD_COLOR, 3, "solid"),
                 ("arcsin", ARCSIN_NAME, ARCSIN_COLOR, 2.5, "dash"),
                 ("centred", CENTRED_NAME, CENTRED_COLOR, 2.5, "dot")]
# One y range per panel for every k: the ceiling √(k − 1) and the objectives' ends grow with
# k (checked at every k in the tests), so the largest k sets them and nothing rescales while
# k is dragged.
_top = curves(K_MAX)
y_top = max(1.3 * math.sqrt(K_MAX - 1), 5.2 * core.centring_factor(K_MAX))
# The weights on a log axis (review item 12): on a linear one to y_top the exact weight at small
# k (1.86–2.65 at k = 8) was a flat line in the bottom tenth; on a log one it sits mid-panel and
# its gap to the arcsin law reads as a ratio, the "within 10%" the text speaks of. The bottom
# sits under mean-centring's smallest constant, (k − 1)/k = ½ at k = 2.
y_bottom = 0.8 * core.centring_factor(min(K_STOPS))
Y_LOG = [math.log10(y_bottom), math.log10(y_top)]
Y_TICKS = [v for v in (0.5, 1, 2, 5, 10, 20) if y_bottom <= v <= y_top]
# Tick labels off the origin: the y axis's "0" sat on the x axis's "0.0" (review item 15).
CLEAR_ORIGIN = {"ticklabelstandoff": 10}
obj_top = 1.05 * max(float(np.max(_top["obj_" + name])) for name in ("std", "arcsin",
                                                                       "centred"))


def f4(y) -> np.ndarray:
    """A curve that moves with k, in single precision: the browser's table holds it at every
    stop (at most 300 kB); a hover shows three decimals. The CSV keeps the exact values."""
    return np.asarray(y, dtype=np.float32)


def weights_chart(kk: int, n: dict) -> tuple[Chart, str]:
    cv = curves(kk)
    w_p, a_p, factor, sat, w_half = n["w_p"], n["a_p"], n["factor"], n["sat"], n["w_half"]
    flat = n["fav_max"] - 1.0 < FLAT
    c = Chart("solve rate p of the prompt", "weight w (expected update = w · ∇p)", height=400,
              margin={"r": 24}, yaxis={"title": {"standoff": 10}})
    for name, label, color, width, dash in legend_curves:
        c.add(x=P_GRID, y=f4(cv[name]), mode="lines", name=label,
              line={"color": color, "width": width, "dash": dash},
              hovertemplate=f"{label}<br>p = %{{x:.3f}}: w = %{{y:.3f}}<extra></extra>")
    c.add(x=[p, p, p], y=[w_p, a_p, factor], mode="markers", name=f"p = {pt}",
          marker={"size": 11, "color": [STD_COLOR, ARCSIN_COLOR, CENTRED_COLOR],
                  "line": {"width": 2, "color": "white"}},
          hovertemplate=f"p = {pt}: w = %{{y:.3f}}<extra></extra>", showlegend=False)
    c.vline(p, COLORS["neutral"])
    if not flat:
        log_sat = math.log10(sat)            # a log axis places annotations by log10
        c.layout["shapes"].append({"type": "line", "xref": "x domain", "x0": 0, "x1": 1,
                                   "yref": "y", "y0": sat, "y1": sat,
                                   "line": {"color": STD_COLOR, "dash": "dot", "width": 1.5}})
        c.layout["annotations"].append({
            "xref": "x", "x": 0.5, "yref": "y", "y": log_sat, "yanchor": "bottom",
            "text": f"ceiling √(k − 1) = {fmt.fixed(sat, 2)}", "showarrow": False,
            "font": {"color": STD_COLOR}})
    c.update(xaxis={"range": [0, 1], "tickmode": "array", "tickformat": ".1f",
                    "tickvals": [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]},
             yaxis={"type": "log", "range": Y_LOG, "tickvals": Y_TICKS,
                    "ticktext": [fmt.short(v) for v in Y_TICKS], **CLEAR_ORIGIN})
    return c, (
        f"Line chart, on a logarithmic weight axis, of the weight each solve rate p receives at "
        f"k = {kk:,}: the exact weight "
        f"under division by the group's standard deviation, "
        + (f"flat at {fmt.fixed(w_half, 2)}, " if flat else
           f"lowest at p = ½ ({fmt.fixed(w_half, 2)}) and rising to √(k − 1) = {fmt.fixed(sat, 2)} "
           f"at both ends, ")
        + f"the arcsin law ((k − 1)/k)/√(p(1 − p)), which runs off the top at both ends, and "
        f"mean-centring's constant {fmt.fixed(factor, 3)}. At the marked p = {pt}: "
        f"{fmt.fixed(w_p, 2)}, {fmt.fixed(a_p, 2)} and {fmt.fixed(factor, 3)}.")


def objectives_chart(kk: int, factor: float) -> tuple[Chart, str]:
    cv = curves(kk)
    obj_p = {"std": float(np.interp(p, P_GRID, cv["obj_std"])),
             "arcsin": factor * float(core.objective_arcsin(p)),
             "centred": factor * p}
    o = Chart("solve rate p of the prompt", "objective the update climbs", height=400,
              margin={"r": 24}, yaxis={"title": {"standoff": 10}})
    obj_names = {"std": "∫w dp, ÷ group std",
                 "arcsin": f"{(kk - 1)}/{kk} · 2·arcsin√p",
                 "centred": f"{(kk - 1)}/{kk} · p"}
    for name, label, color, width, dash in legend_curves:
        o.add(x=P_GRID, y=f4(cv["obj_" + name]), mode="lines", name=obj_names[name],
              line={"color": color, "width": width, "dash": dash},
              hovertemplate=f"{obj_names[name]}<br>p = %{{x:.3f}}: %{{y:.3f}}<extra></extra>")
    o.add(x=[p, p, p], y=[obj_p["std"], obj_p["arcsin"], obj_p["centred"]], mode="markers",
          marker={"size": 11, "color": [STD_COLOR, ARCSIN_COLOR, CENTRED_COLOR],
                  "line": {"width": 2, "color": "white"}}, showlegend=False,
          hovertemplate=f"p = {pt}: %{{y:.3f}}<extra></extra>")
    o.vline(p, COLORS["neutral"])
    o.update(xaxis={"range": [0, 1], "tickmode": "array", "tickformat": ".1f",
                    "tickvals": [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]},
             yaxis={"range": [0, obj_top], **CLEAR_ORIGIN})
    return o, (
        f"Line chart of the objective each normalisation climbs against p at k = {kk:,}, each "
        f"curve the running integral of the left panel's weight: mean-centring climbs "
        f"{(kk - 1)}/{kk}·p (a straight line to {fmt.fixed(factor, 3)}), the arcsin law "
        f"{(kk - 1)}/{kk}·2·arcsin√p (to {fmt.fixed(factor * np.pi, 2)}, steepest at the ends), "
        f"and the "
        f"exact group-std weight's integral (to {fmt.fixed(float(cv['obj_std'][-1]), 2)}).")


def view_at(kk) -> layout.View:
    """The readout and both figures at group size k (the browser draws it at every stop)."""
    kk = int(kk)
    n, items = readout_at(kk)
    return layout.View(items, {"normalization-weights": weights_chart(kk, n),
                               "normalization-objectives": objectives_chart(kk, n["factor"])})


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
    df = pd.DataFrame({
        "p": P_GRID,
        "weight, divide by group std over k (exact)": cv["std"],
        "weight, divide by group std over k-1 (exact)": cv["std_unbiased"],
        "weight, arcsin law (k-1)/k/sqrt(p(1-p))": cv["arcsin"],
        "weight, mean-centred (k-1)/k": cv["centred"],
        "objective, divide by group std (integral of weight)": cv["obj_std"],
        "objective, (k-1)/k * 2 arcsin sqrt(p)": cv["obj_arcsin"],
        "objective, (k-1)/k * p": cv["obj_centred"],
        "chance a group has signal": cv["signal"],
    })
    st.caption("The arcsin law's weight is infinite at p = 0 and p = 1; those cells are empty.")
    layout.csv_download(df, f"normalization_k_{k}.csv", key="normalization-csv")


page.details(numbers)


# ------------------------------------------------------------ the leave-one-out baseline
def leave_one_out_section() -> None:
    c_star = groups.most_likely_mixed_group(p, k)
    grades = np.array([1.0] * c_star + [0.0] * (k - c_star))
    loo = core.leave_one_out(grades)
    rows = []
    for grade in (1.0, 0.0):
        i = int(np.flatnonzero(grades == grade)[0])
        rows.append({"grade": "1 (correct)" if grade else "0 (wrong)",
                     "answers": int(np.sum(grades == grade)),
                     "b_i, mean of the others": float(loo.baseline[i]),
                     "r_i − b_i": float(loo.loo[i]),
                     "r_i − r̄": float(loo.centred[i]),
                     f"{k - 1}/{k} · (r_i − b_i)": float(loo.factor * loo.loo[i])})
    df = pd.DataFrame(rows)
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
