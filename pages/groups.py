"""Figure 12.4: when a group of graded responses carries signal, and where its advantages fall."""

import math

import numpy as np
import pandas as pd
import streamlit as st

from klrl_core import groups
from klrl_app import controls, fmt, layout, lru, plots

K_MAX = 1024
OTHER_KS = (2, 64)  # the reference curves, each with its own dash
OTHER_DASH = {2: "dash", 64: "dot"}
P_GRID = np.linspace(0.0, 1.0, 401)
ROWS_PER_RESPONSE = 32   # calculator: one row per response up to this group size, else per grade
# Above this group size the stems of one p bunch into two narrow clumps on axes that must hold
# every p (issue 31): the second panel then draws each side's advantage against p instead.
K_STEMS = 64
P_SLIDER = np.round(np.linspace(0.01, 0.99, 99), 2)   # the slider's range, where c* is defined

page = layout.Page(
    "groups", "When a group carries signal",
    "Figure 12.4 · Section 12.7.1 · Example 12.2 · Exercise 12.4",
    "A prompt that the policy solves with probability p gets a group of k graded answers. "
    "Each answer's advantage is its grade minus the group's mean, divided by the group's "
    "standard deviation. A group that is all right or all wrong teaches nothing.",
)
ui = page.ui
c_p, c_k = page.control_row([3, 1])
with c_p:
    p = ui.number("p", "Solve rate p of the prompt", default=0.10, lo=0.01, hi=0.99, step=0.01,
                  help="Chance that one sampled response is graded correct, from 0.01 to 0.99.")
with c_k:
    k = ui.integer("k", "Group size k", default=8, lo=2, hi=K_MAX, widget="number",
                   help=f"Responses sampled per prompt, from 2 to {K_MAX:,}.")
page.finish_controls()


def readout_at(p: float) -> list[tuple[str, str]]:
    """The readout's items at solve rate p (k as set)."""
    c = groups.most_likely_mixed_group(p, k)
    right_adv, wrong_adv = (float(a) for a in groups.mixed_group_advantages(c, k))
    signal, flat = groups.signal_probability(p, k), groups.no_signal_probability(p, k)
    return [("Has signal", fmt.prob(float(signal), 2, max_places=3, below_one=True)),
            ("All right or all wrong", fmt.pct(float(flat), max_places=1, positive=True)),
            ("Likeliest mixed group", f"{c:,} of {k:,} correct"),
            ("Correct gets", fmt.fixed(right_adv, 2, signed=True)),
            ("Incorrect gets", fmt.fixed(wrong_adv, 2, signed=True))]


helps = [
    "probability that a group of k is neither all right nor all wrong: 1 − pᵏ − (1 − p)ᵏ.",
    "share of groups whose advantages are all zero: pᵏ + (1 − p)ᵏ.",
    "among groups with at least one right and one wrong answer, the most probable number "
    "correct.",
    "advantage of each correct response in that group (grade minus mean, over the standard "
    "deviation over k).",
    "advantage of each incorrect response in that group.",
]

# --- first panel: chance of signal against p ---------------------------------------------
curves = {kk: groups.signal_probability(P_GRID, kk) for kk in (k, *OTHER_KS)}
others = [kk for kk in OTHER_KS if kk != k]
others_alt = " and ".join(f"k = {kk}" for kk in others)
KIND_STYLE = {
    groups.KIND_CORRECT: ("correct responses", plots.COLORS["correct"]),
    groups.KIND_INCORRECT: ("incorrect responses", plots.COLORS["incorrect"]),
    groups.KIND_NO_SIGNAL: ("responses in groups with no signal", plots.COLORS["neutral"]),
}


@lru.memo
def stem_ranges(k: int, ps: tuple[float, ...]) -> tuple[float, float, float]:
    """The stems' x extent (the advantages with a visible share, at least 1/1000 of the
    largest, at any p in ``ps``) and the largest share at any of them: the second panel's
    axes, the same at every stop of p. Once per k and process."""
    lo, hi, top = math.inf, -math.inf, 0.0
    for q in ps:
        d = groups.advantage_distribution(q, k)
        seen = d.value[d.share >= 1e-3 * d.share.max()]
        lo, hi = min(lo, float(seen.min())), max(hi, float(seen.max()))
        top = max(top, float(d.share.max()))
    return lo, hi, top


@lru.memo
def likeliest_curves(k: int) -> tuple[np.ndarray, np.ndarray]:
    """Advantages (correct, incorrect) in the likeliest mixed group at each p of the slider's
    range, for the large-k view. Once per k and process."""
    c = np.array([groups.most_likely_mixed_group(float(q), k) for q in P_SLIDER])
    right, wrong = groups.mixed_group_advantages(c, k)
    return right, wrong


draw_stems = k <= K_STEMS
if draw_stems:
    p_stops = ui.sliders["p"][2]
    lo_x, hi_x, top_share = stem_ranges(k, tuple(sorted({*map(float, p_stops), p})))
    pad_x = 0.08 * max(hi_x - lo_x, 1.0)
    x_range = [lo_x - pad_x, hi_x + pad_x]
    y_range = [0.0, 1.05 * top_share]
    share_digits = (0 if top_share >= 0.1 else 1 if top_share >= 0.01
                    else 2 if top_share >= 0.001 else 3)
else:
    curve_right, curve_wrong = likeliest_curves(k)
    # Room for the marks at p itself when it lies between the slider's stops (typed by hand).
    right_p, wrong_p = groups.mixed_group_advantages(groups.most_likely_mixed_group(p, k), k)
    lo_x = min(float(curve_wrong.min()), float(wrong_p))
    hi_x = max(float(curve_right.max()), float(right_p))
    top_share = 0.0
    pad_y = 0.06 * (hi_x - lo_x)
    y_range = [lo_x - pad_y, hi_x + pad_y]


def view_at(p: float) -> layout.View:
    """The readout and both charts at solve rate p, k as set (closed forms)."""
    signal = float(groups.signal_probability(p, k))
    no_signal = float(groups.no_signal_probability(p, k))
    c_star = groups.most_likely_mixed_group(p, k)
    adv_right, adv_wrong = (float(a) for a in groups.mixed_group_advantages(c_star, k))
    dist = groups.advantage_distribution(p, k)
    p_text = fmt.fixed(p, 2) if round(p, 2) == p else controls.fmt_number(p)

    # A right margin for the last tick label (1.0), which the large type of the presentation
    # view would otherwise push out; a standoff keeps the y title clear of the tick labels.
    chart = plots.Chart("solve rate p of the prompt", "chance a group has signal", height=400,
                        margin={"r": 24}, yaxis={"title": {"standoff": 12}})
    chart.add(
        x=P_GRID, y=curves[k], mode="lines", name=f"k = {k:,}",
        line={"color": plots.COLORS["optimum"], "width": 3},
        hovertemplate=f"k = {k:,}: p = %{{x:.3f}}, signal %{{y:.3f}}<extra></extra>",
    )
    # The other group sizes are named in the legend, each with its own dash, not by notes on
    # the plot (which would cross the curves or the tick labels).
    for kk in others:
        chart.add(
            x=P_GRID, y=curves[kk], mode="lines", name=f"k = {kk}",
            line={"color": plots.COLORS["neutral"], "width": 2, "dash": OTHER_DASH[kk]},
            hovertemplate=f"k = {kk}: p = %{{x:.3f}}, signal %{{y:.3f}}<extra></extra>",
        )
    chart.add(
        x=[p], y=[signal], mode="markers", name="this prompt",
        marker={"color": plots.COLORS["optimum"], "size": 12, "line": {"width": 2, "color": "white"}},
        hovertemplate=f"p = {p_text}, k = {k:,}: signal "
                      f"{fmt.prob(signal, 2, max_places=3, below_one=True)}<extra></extra>",
    )
    chart.vline(p, plots.COLORS["optimum"])
    # Tick values given outright: with dtick the last one, 1.0, fell a hair outside the range.
    # A little room left of p = 0 and below 0: the two "0.0" tick labels at the origin
    # overlapped on a phone (issue 31).
    chart.update(xaxis={"range": [-0.035, 1], "tickmode": "array", "tickformat": ".1f",
                        "tickvals": [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]},
                 yaxis={"range": [-0.045, 1.05], "dtick": 0.2, "tickformat": ".1f"})
    signal_chart = (chart, (
        f"Line chart of the chance that a group has signal against the solve rate p, for k = "
        f"{k:,} (solid) and {others_alt} (grey, dashed and dotted); every curve is 0 at p = 0 "
        f"and p = 1. The marked prompt, p = {p_text}, has signal with probability "
        f"{fmt.prob(signal, 2, max_places=3, below_one=True)} at k = {k:,}."))

    if not draw_stems:
        return layout.View(readout_at(p), {"groups-signal": signal_chart,
                                           "groups-advantages": curves_chart(p, c_star,
                                                                             adv_right, adv_wrong,
                                                                             p_text)})
    # --- second panel: expected share of responses at each advantage ----------------------
    chart = plots.Chart("advantage", "share of responses", height=400,
                        yaxis={"title": {"standoff": 12}})
    for kind, (name, color) in KIND_STYLE.items():
        sel = dist.kind == kind
        v, s, c = dist.value[sel], dist.share[sel], dist.n_correct[sel]
        if v.size == 0:
            continue
        # The shares in 4-byte floats (7 digits; the hover shows 4): they are what changes
        # from stop to stop, and the table of every stop is half the size.
        s = s.astype(np.float32)
        gap = np.full(v.size, np.nan)
        chart.add(  # the stems: vertical segments from 0 to the share
            x=np.column_stack([v, v, gap]).ravel(),
            y=np.column_stack([0 * s, s, gap.astype(np.float32)]).ravel(),
            mode="lines", line={"color": color, "width": 2.5},
            legendgroup=kind, showlegend=False, hoverinfo="skip",
        )
        if kind == groups.KIND_NO_SIGNAL:
            hover = "no signal (all right or all wrong): %{y:.1%} at advantage 0<extra></extra>"
            custom = None
        else:
            hover = (f"{kind}, %{{customdata}} of {k:,} correct: advantage %{{x:.2f}}, "
                     f"%{{y:.2%}} of responses<extra></extra>")
            custom = c
        chart.add(
            x=v, y=s, mode="markers", name=name, legendgroup=kind, customdata=custom,
            marker={"color": color, "size": 7 if k <= 64 else 4}, hovertemplate=hover,
        )
    # The stems one can see at any p, and the largest share at any p: the same axes at every
    # stop (tiny shares far out would squash the plot).
    chart.update(xaxis={"range": x_range},
                 yaxis={"range": y_range, "tickformat": f".{share_digits}%"})
    stems_chart = (chart, (
        f"Stem chart of the expected share of responses at each advantage, p = {p_text}, "
        f"k = {k:,}: {fmt.pct(no_signal, max_places=1, positive=True)} in the grey no-signal stem "
        f"at 0; in the likeliest "
        f"mixed group, {c_star:,} of {k:,} correct, each correct response gets "
        f"{fmt.fixed(adv_right, 2, signed=True)} and each incorrect one "
        f"{fmt.fixed(adv_wrong, 2, signed=True)}."))
    return layout.View(readout_at(p), {"groups-signal": signal_chart,
                                       "groups-advantages": stems_chart})


def curves_chart(p: float, c_star: int, adv_right: float, adv_wrong: float,
                 p_text: str) -> tuple[plots.Chart, str]:
    """The second panel for large k: the advantage each correct and each incorrect response
    gets in the likeliest mixed group, against p, with this prompt marked."""
    chart = plots.Chart("solve rate p of the prompt", "advantage in the likeliest mixed group",
                        height=400, margin={"r": 24}, yaxis={"title": {"standoff": 12}})
    for name, curve, here, kind in (("correct responses", curve_right, adv_right,
                                     groups.KIND_CORRECT),
                                    ("incorrect responses", curve_wrong, adv_wrong,
                                     groups.KIND_INCORRECT)):
        color = KIND_STYLE[kind][1]
        chart.add(x=P_SLIDER, y=curve, mode="lines", name=name, legendgroup=kind,
                  line={"color": color, "width": 3},
                  hovertemplate=f"{kind}, p = %{{x:.2f}}: advantage %{{y:.2f}}<extra></extra>")
        chart.add(x=[p], y=[here], mode="markers", legendgroup=kind, showlegend=False,
                  marker={"color": color, "size": 12, "line": {"width": 2, "color": "white"}},
                  hovertemplate=f"p = {p_text}, {c_star:,} of {k:,} correct: {kind} "
                                f"advantage {fmt.fixed(here, 2, signed=True)}<extra></extra>")
    chart.vline(p, plots.COLORS["optimum"])
    chart.update(xaxis={"range": [0, 1], "tickmode": "array", "tickformat": ".1f",
                        "tickvals": [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]},
                 yaxis={"range": y_range})
    chart.hline(0, plots.COLORS["neutral"], dash="solid")
    return chart, (
        f"Line chart of the advantage each response gets in the likeliest mixed group of "
        f"{k:,}, against the solve rate p from 0.01 to 0.99: correct responses above 0, "
        f"incorrect ones below. At the marked prompt, p = {p_text}, the likeliest mixed group "
        f"has {c_star:,} of {k:,} correct: each correct response gets "
        f"{fmt.fixed(adv_right, 2, signed=True)} and each incorrect one "
        f"{fmt.fixed(adv_wrong, 2, signed=True)}.")


view = page.follow(layout.Instant("p", view_at, setting=(k, lo_x, hi_x, top_share)), helps)
signal = float(groups.signal_probability(p, k))
no_signal = float(groups.no_signal_probability(p, k))
c_star = groups.most_likely_mixed_group(p, k)
adv_right, adv_wrong = (float(a) for a in groups.mixed_group_advantages(c_star, k))
dist = groups.advantage_distribution(p, k)
pmf = groups.binomial_pmf(p, k)
p_text = fmt.fixed(p, 2) if round(p, 2) == p else controls.fmt_number(p)

left, right = page.figures(2)
with left:
    page.chart(view, "groups-signal")
with right:
    page.chart(view, "groups-advantages")


def look_for() -> str:
    """What to look for, every claim chosen by the numbers at this p and k."""
    # Left panel: zero at both ends (every curve), and bigger groups lift the curve (the chance
    # of signal grows with k at every p strictly between 0 and 1).
    at_p = sorted({k, *OTHER_KS})
    # fmt.prob: a chance just below 1 never reads "1.00" (certain) beside the readout's 0.999
    values = [f"{fmt.prob(float(groups.signal_probability(p, kk)), 2, below_one=True)} for "
              f"k = {kk:,}" for kk in at_p]
    listed = ", ".join(values[:-1]) + " and " + values[-1]
    left_text = (
        "On the left, every curve is zero at both ends: a prompt the policy never or always "
        "solves yields groups whose advantages are all zero. Bigger groups hold the curve up "
        f"over a wider range of p, so hard prompts start to count, at k times the sampling "
        f"cost: at p = {p_text} the chance of signal is {listed}.")

    # Right panel: how much sits in the grey stem, said as it is. Above K_STEMS the panel
    # draws no stems, so the same shares are said of advantage 0.
    share = fmt.pct(no_signal)
    if draw_stems:
        lead, sit, spot = ("On the right, ", "sit in the grey no-signal stem at 0",
                           "the grey no-signal stem at 0")
    else:
        lead, sit, spot = "", "get advantage 0", "the no-signal share (advantage 0)"
    if no_signal > 0.5:
        stem = (f"{lead}most responses ({share}) {sit}: "
                f"their group came back all right or all wrong.")
    elif abs(no_signal - 0.5) < 1e-12:
        stem = (f"{lead}exactly half of the responses (50%) {sit}: "
                f"their group came back all right or all wrong.")
    elif share == "0%":
        stem = (f"{lead}{spot} is practically empty: under 0.5% of responses come from groups "
                f"that are all right or all wrong.")
    else:
        stem = (f"{lead}{share} of responses {sit}, less "
                f"than half: most groups of {k:,} at this solve rate are mixed.")
    stem = stem[0].upper() + stem[1:]

    # Where the rest come from: the likeliest mixed group, and how much of the rest it holds.
    mixed = 1.0 - no_signal
    held = float(pmf[c_star]) / mixed if mixed > 0 else 0.0
    group = f"{c_star:,} of {k:,} correct"
    if k == 2:
        rest = "The rest come from groups with one right and one wrong answer"
    elif held > 0.5:
        rest = (f"The rest come mostly ({fmt.pct(held)}) from groups with {group}, the "
                f"likeliest mixed group")
    else:
        rest = (f"The rest are spread over many mixed groups; the likeliest, {group}, holds "
                f"{fmt.pct(held)} of them")
    n_wrong = k - c_star
    plus, minus = fmt.fixed(adv_right, 2, signed=True), fmt.fixed(adv_wrong, 2, signed=True)
    # With the chapter's normalisation a correct answer among c of k gets sqrt((k - c)/c) and an
    # incorrect one -sqrt(c/(k - c)): the minority side gets the larger magnitude (above 1).
    if 2 * c_star < k:
        who = ("the single right answer gets" if c_star == 1
               else f"the right answers are the minority: each of the {c_star:,} gets")
        push = (f"{rest}. There {who} a large positive advantage ({plus}) while the "
                f"{n_wrong:,} wrong ones each get a small negative one ({minus}).")
    elif 2 * c_star > k:
        who = ("the single wrong answer gets" if n_wrong == 1
               else f"the wrong answers are the minority: each of the {n_wrong:,} gets")
        push = (f"{rest}. There {who} a large negative advantage ({minus}) while the "
                f"{c_star:,} right ones each get a small positive one ({plus}).")
    else:
        push = (f"{rest}. Half right and half wrong, each correct answer gets "
                f"{fmt.fixed(adv_right, 2, signed=True)} and each incorrect one "
                f"{fmt.fixed(adv_wrong, 2, signed=True)}: equal and opposite.")
    right_text = "" if draw_stems else (
        f" On the right, for groups of more than {K_STEMS} the panel draws the advantages in "
        f"the likeliest mixed group at every p, this prompt's marked, instead of a stem for "
        f"each of the {k - 1:,} kinds of mixed group. Other mixed groups give other values; "
        f"\"The numbers behind the figure\" lists every one with its share.")
    return (f"{left_text} {stem} {push} The fewer right answers a group holds, the harder "
            f"each is pushed: a correct answer among c of k gets √((k − c)/c).{right_text}")


if not page.present:
    page.explain(look_for() + " <a href='loop'>The loop page</a> trains on groups like these "
                 "and shows what all-wrong groups do to problems a policy rarely solves.")


def numbers() -> None:
    curve_df = pd.DataFrame({"p": P_GRID})
    for kk in sorted(curves):
        curve_df[f"signal probability k={kk}"] = curves[kk]
    stems = pd.DataFrame({
        "advantage": dist.value, "share of responses": dist.share, "kind": dist.kind,
        "number correct in group": np.where(dist.n_correct < 0, "0 or k",
                                            dist.n_correct.astype(str)),
    }).sort_values("advantage")
    layout.table(stems, digits=5, height=240)
    layout.csv_download(curve_df, f"groups_signal_k_{k}.csv",
                        label="Download the curves (CSV)", key="groups-curves-csv")
    layout.csv_download(stems, f"groups_advantages_p_{controls.fmt_number(p)}_k_{k}.csv",
                        label="Download the advantages and their shares (CSV)", key="groups-stems-csv")


page.details(numbers)


# --- calculator for one group ------------------------------------------------------------------
def calculator() -> None:
    st.markdown(
        "Type the grades of one group, 1 for a correct response and 0 for a wrong one, "
        "separated by commas or spaces. The table shows each response's advantage under the "
        "three normalisations in use."
    )
    text = st.text_input("Grades of one group", value="1,0,0,1", key="groups.calculator",
                         placeholder="e.g. 1,0,0,1")
    try:
        grades = groups.parse_grades(text)
    except ValueError as why:
        st.error(str(why), icon=":material/error:")
        return
    n = grades.size
    mean = grades.mean()
    per_response = pd.DataFrame({"response": [str(i) for i in range(1, n + 1)],
                                 "grade": grades.astype(int)})
    for conv in groups.CONVENTIONS:
        per_response[groups.CONVENTION_LABELS[conv]] = groups.group_advantages(grades, conv)
    if np.ptp(grades) == 0:
        st.info(
            (f"All {n} grades are {int(grades[0])}: every response sits at the group mean, "
             f"so every advantage is 0 under each normalisation. This group teaches nothing."
             if n > 1 else
             f"The one grade is {int(grades[0])}: a lone response is its own group mean, so "
             f"its advantage is 0 under each normalisation. A group of one teaches nothing."),
            icon=":material/block:")
    else:
        sd_k = float(np.sqrt(np.mean((grades - mean) ** 2)))
        sd_k1 = float(np.sqrt(np.sum((grades - mean) ** 2) / (n - 1)))
        st.markdown(
            f"{int(grades.sum())} of {n} correct · group mean {fmt.fixed(mean, 3)} · standard deviation "
            f"{fmt.fixed(sd_k, 3)} over k, {fmt.fixed(sd_k1, 3)} over k − 1."
        )
    signed = {groups.CONVENTION_LABELS[c]: lambda v: fmt.fixed(v, 2, signed=True)
              for c in groups.CONVENTIONS}
    if n <= ROWS_PER_RESPONSE:
        layout.small_table(per_response, {"grade": 0, **signed})
    else:
        # Every response with the same grade gets the same advantage: one row per grade keeps
        # a long group readable (the CSV has every response).
        by_grade = (per_response.drop(columns="response").drop_duplicates("grade")
                    .sort_values("grade", ascending=False))
        by_grade.insert(1, "responses", [int(np.sum(grades == g)) for g in by_grade["grade"]])
        by_grade["grade"] = by_grade["grade"].map({1: "1 (correct)", 0: "0 (wrong)"})
        st.markdown(f"A group of {n:,}: one row per grade, since every response with the same "
                    f"grade gets the same advantage.")
        layout.small_table(by_grade, {"responses": 0, **signed})
    layout.csv_download(per_response, "group_advantages.csv",
                        label="Download every response's advantages (CSV)", key="groups-calc-csv")
    st.caption(
        "÷ std (k): grade minus mean over the population standard deviation, the chapter's "
        "choice. ÷ std (k − 1): over the sample standard deviation instead, as TRL's GRPO "
        "trainer does, which shrinks every advantage by √((k − 1)/k). Centred (Dr. GRPO): "
        "grade minus mean, not divided, so a group's spread stays in the update."
    )


if page.section("Advantages of one group"):
    calculator()
