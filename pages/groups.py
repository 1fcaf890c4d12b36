"""Figure 12.4: when a group of graded responses carries signal, and where its advantages fall."""

import numpy as np
import streamlit as st

from klrl_core import groups
from klrl_app import controls, fmt, layout
from klrl_app import groups_figures as gf

K_MAX = 1024
ROWS_PER_RESPONSE = 32   # calculator: one row per response up to this group size, else per grade

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

figures = gf.Figures.at(k, p, ui.sliders["p"][2])


def view_at(p: float) -> layout.View:
    """The readout and both charts at solve rate p, k as set (closed forms)."""
    return layout.View(readout_at(p), figures.charts(p))


view = page.follow(layout.Instant("p", view_at, setting=figures.setting), helps)
no_signal = float(groups.no_signal_probability(p, k))
c_star = groups.most_likely_mixed_group(p, k)
adv_right, adv_wrong = (float(a) for a in groups.mixed_group_advantages(c_star, k))
p_text = gf.p_text(p)

left, right = page.figures(2)
with left:
    page.chart(view, "groups-signal")
with right:
    page.chart(view, "groups-advantages")


def look_for() -> str:
    """What to look for, every claim chosen by the numbers at this p and k."""
    # Left panel: zero at both ends (every curve), and bigger groups lift the curve (the chance
    # of signal grows with k at every p strictly between 0 and 1).
    at_p = sorted({k, *gf.OTHER_KS})
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
    if figures.stems:
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
    held = groups.likeliest_mixed_share(p, k)
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
        push = (f"{rest}. Half right and half wrong, each correct answer gets {plus} and each "
                f"incorrect one {minus}: equal and opposite.")
    right_text = "" if figures.stems else (
        f" On the right, for groups of more than {gf.K_STEMS} the panel draws the advantages in "
        f"the likeliest mixed group at every p, this prompt's marked, instead of a stem for "
        f"each of the {k - 1:,} kinds of mixed group. Other mixed groups give other values; "
        f"\"The numbers behind the figure\" lists every one with its share.")
    return (f"{left_text} {stem} {push} The fewer right answers a group holds, the harder "
            f"each is pushed: a correct answer among c of k gets √((k − c)/c).{right_text}")


if not page.present:
    page.explain(look_for() + " <a href='loop'>The loop page</a> trains on groups like these "
                 "and shows what all-wrong groups do to problems a policy rarely solves.")


def numbers() -> None:
    stems = gf.stems_frame(p, k)
    layout.table(stems, digits=5, height=240)
    layout.csv_download(gf.curves_frame(figures.curves), f"groups_signal_k_{k}.csv",
                        label="Download the curves (CSV)", key="groups-curves-csv")
    layout.csv_download(stems, f"groups_advantages_p_{controls.fmt_number(p)}_k_{k}.csv",
                        label="Download the advantages and their shares (CSV)",
                        key="groups-stems-csv")


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
    per_response = gf.responses_frame(grades)
    if np.ptp(grades) == 0:
        st.info(
            (f"All {n} grades are {int(grades[0])}: every response sits at the group mean, "
             f"so every advantage is 0 under each normalisation. This group teaches nothing."
             if n > 1 else
             f"The one grade is {int(grades[0])}: a lone response is its own group mean, so "
             f"its advantage is 0 under each normalisation. A group of one teaches nothing."),
            icon=":material/block:")
    else:
        sd_k, sd_k1 = groups.group_standard_deviations(grades)
        st.markdown(
            f"{int(grades.sum())} of {n} correct · group mean {fmt.fixed(grades.mean(), 3)} · "
            f"standard deviation {fmt.fixed(sd_k, 3)} over k, {fmt.fixed(sd_k1, 3)} over k − 1."
        )
    signed = {groups.CONVENTION_LABELS[c]: lambda v: fmt.fixed(v, 2, signed=True)
              for c in groups.CONVENTIONS}
    if n <= ROWS_PER_RESPONSE:
        layout.small_table(per_response, {"grade": 0, **signed})
    else:
        # Every response with the same grade gets the same advantage: one row per grade keeps
        # a long group readable (the CSV has every response).
        st.markdown(f"A group of {n:,}: one row per grade, since every response with the same "
                    f"grade gets the same advantage.")
        layout.small_table(gf.by_grade_frame(per_response, grades), {"responses": 0, **signed})
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
