"""Figure 12.4: when a group of graded responses carries signal, and where its advantages fall."""

import numpy as np
import pandas as pd
import streamlit as st

from klrl_core import groups
from klrl_app import controls, layout, plots

K_MAX = 1024
OTHER_KS = (2, 64)  # the dashed reference curves
P_GRID = np.linspace(0.0, 1.0, 401)

slot = layout.header(
    "When a group carries signal",
    "Figure 12.4 · Section 12.7.1 · Example 12.2 · Exercise 12.4",
    "A prompt that the policy solves with probability p gets a group of k graded answers. "
    "Each answer's advantage is its grade minus the group's mean, divided by the group's "
    "standard deviation. A group that is all right or all wrong teaches nothing.",
)

ui = controls.Controls("groups")
c_p, c_k = st.columns([3, 1], gap="medium", vertical_alignment="bottom")
with c_p:
    p = ui.number("p", "Solve rate p of the prompt", default=0.10, lo=0.01, hi=0.99, step=0.01,
                  help="Chance that one sampled response is graded correct.")
with c_k:
    k = ui.integer("k", "Group size k", default=8, lo=2, hi=K_MAX, widget="number",
                   help=f"Responses sampled per prompt, from 2 to {K_MAX:,}.")
ui.finish(slot)

signal = groups.signal_probability(p, k)
no_signal = groups.no_signal_probability(p, k)
c_star = groups.most_likely_mixed_group(p, k)
adv_right, adv_wrong = groups.mixed_group_advantages(c_star, k)
dist = groups.advantage_distribution(p, k)

layout.readout([
    ("Has signal", layout.fmt(signal)),
    ("All right or all wrong", layout.pct(no_signal)),
], helps=[
    "Probability that a group of k is neither all right nor all wrong: 1 − pᵏ − (1 − p)ᵏ.",
    "Share of groups whose advantages are all zero: pᵏ + (1 − p)ᵏ.",
])
layout.readout([
    ("Likeliest mixed group", f"{c_star:,} of {k:,} correct"),
    ("Correct gets", layout.fmt_signed(adv_right)),
    ("Incorrect gets", layout.fmt_signed(adv_wrong)),
], helps=[
    "Among groups with at least one right and one wrong answer, the most probable number correct.",
    "Advantage of each correct response in that group (grade minus mean, over the standard "
    "deviation over k).",
    "Advantage of each incorrect response in that group.",
])
p_text = f"{p:.2f}" if round(p, 2) == p else controls.fmt_number(p)
layout.sentence(
    f"With p = {p_text} and k = {k:,}, a group has something to teach with probability "
    f"{layout.fmt(signal)}; {layout.pct(no_signal)} of groups come back all right or all wrong. "
    f"The likeliest mixed group has {c_star:,} of {k:,} correct: each correct answer gets "
    f"advantage {layout.fmt_signed(adv_right)} and each incorrect one "
    f"{layout.fmt_signed(adv_wrong)}."
)

# --- first panel: chance of signal against p ---------------------------------------------
curves = {kk: groups.signal_probability(P_GRID, kk) for kk in (k, *OTHER_KS)}
left, right = st.columns(2, gap="large")
with left:
    chart = plots.Chart("solve rate p of the prompt", "chance a group has signal", height=400)
    first_other = True
    for kk in OTHER_KS:
        if kk == k:
            continue
        chart.add(
            x=P_GRID, y=curves[kk], mode="lines", name="other group sizes",
            legendgroup="other", showlegend=first_other,
            line={"color": plots.COLORS["neutral"], "width": 1.8, "dash": "dash"},
            hovertemplate=f"k = {kk}: p = %{{x:.3f}}, signal %{{y:.3f}}<extra></extra>",
        )
        first_other = False
        # Label each dashed curve on the curve itself, where it is well apart from the others.
        px = 0.5 if kk == 2 else 0.97
        chart.note(px, float(groups.signal_probability(px, kk)), f"k = {kk}",
                   plots.COLORS["neutral"], showarrow=False, yshift=14 if kk == 2 else 0,
                   xshift=0 if kk == 2 else -8, xanchor="center" if kk == 2 else "right",
                   font={"color": plots.COLORS["neutral"], "size": 13},
                   bgcolor="rgba(128,128,128,0.12)")
    chart.add(
        x=P_GRID, y=curves[k], mode="lines", name=f"group size k = {k:,}",
        line={"color": plots.COLORS["optimum"], "width": 3},
        hovertemplate=f"k = {k:,}: p = %{{x:.3f}}, signal %{{y:.3f}}<extra></extra>",
    )
    chart.add(
        x=[p], y=[signal], mode="markers", name="this prompt", showlegend=False,
        marker={"color": plots.COLORS["optimum"], "size": 12, "line": {"width": 2, "color": "white"}},
        hovertemplate=f"p = {p_text}, k = {k:,}: signal {signal:.2f}<extra></extra>",
    )
    chart.vline(p, plots.COLORS["optimum"])
    chart.update(xaxis={"range": [0, 1], "dtick": 0.2, "tickformat": ".1f"},
                 yaxis={"range": [0, 1.05], "dtick": 0.2, "tickformat": ".1f"})
    plots.show(chart, key="groups-signal")

# --- second panel: expected share of responses at each advantage ----------------------------
KIND_STYLE = {
    groups.KIND_CORRECT: ("correct responses", plots.COLORS["correct"]),
    groups.KIND_INCORRECT: ("incorrect responses", plots.COLORS["incorrect"]),
    groups.KIND_NO_SIGNAL: ("responses in groups with no signal", plots.COLORS["neutral"]),
}
with right:
    chart = plots.Chart("advantage", "share of responses", height=400)
    for kind, (name, color) in KIND_STYLE.items():
        sel = dist.kind == kind
        v, s, c = dist.value[sel], dist.share[sel], dist.n_correct[sel]
        if v.size == 0:
            continue
        gap = np.full(v.size, np.nan)
        chart.add(  # the stems: vertical segments from 0 to the share
            x=np.column_stack([v, v, gap]).ravel(), y=np.column_stack([0 * s, s, gap]).ravel(),
            mode="lines", line={"color": color, "width": 2.5}, legendgroup=kind,
            showlegend=False, hoverinfo="skip",
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
    # Keep the axis on the stems one can see; tiny shares far out would squash the plot.
    visible = dist.share >= 1e-3 * dist.share.max()
    lo_x, hi_x = dist.value[visible].min(), dist.value[visible].max()
    pad = 0.08 * max(hi_x - lo_x, 1.0)
    chart.update(xaxis={"range": [lo_x - pad, hi_x + pad]})
    top = float(dist.share.max())
    digits = 0 if top >= 0.1 else 1 if top >= 0.01 else 2 if top >= 0.001 else 3
    chart.update(yaxis={"rangemode": "tozero", "tickformat": f".{digits}%"})
    plots.show(chart, key="groups-advantages")

layout.look_for(
    "On the left, every curve is zero at both ends: a prompt the policy never or always solves "
    "yields groups whose advantages are all zero. Bigger groups hold the curve up over a wider "
    "range of p, so hard prompts start to count, at k times the sampling cost. On the right, "
    "at a low solve rate most responses sit in the grey no-signal stem; the rest come mostly "
    "from groups with a single correct answer, which gets a large positive advantage while its "
    "many wrong companions each get a small negative one. The rarer the success, the harder it "
    "is pushed."
)

with st.expander("The numbers behind the figure"):
    curve_df = pd.DataFrame({"p": P_GRID})
    for kk in sorted(curves):
        curve_df[f"signal probability k={kk}"] = curves[kk]
    stems = pd.DataFrame({
        "advantage": dist.value, "share of responses": dist.share, "kind": dist.kind,
        "number correct in group": np.where(dist.n_correct < 0, "0 or k", dist.n_correct.astype(str)),
    })
    st.dataframe(stems.sort_values("advantage"), hide_index=True, width="stretch", height=240,
                 column_config={"advantage": st.column_config.NumberColumn(format="%.3f"),
                                "share of responses": st.column_config.NumberColumn(format="%.5f")})
    c1, c2 = st.columns(2)
    with c1:
        layout.csv_download(curve_df, f"groups_signal_k_{k}.csv",
                            label="Download the curves (CSV)", key="groups-curves-csv")
    with c2:
        layout.csv_download(stems, f"groups_advantages_p_{controls.fmt_number(p)}_k_{k}.csv",
                            label="Download the stems (CSV)", key="groups-stems-csv")

# --- calculator for one group ------------------------------------------------------------------
st.subheader("Advantages of one group")
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
else:
    n = grades.size
    mean = grades.mean()
    table = pd.DataFrame({"#": np.arange(1, n + 1), "grade": grades.astype(int)})
    for conv in groups.CONVENTIONS:
        table[groups.CONVENTION_LABELS[conv]] = groups.group_advantages(grades, conv)
    if np.ptp(grades) == 0:
        st.info(
            f"All {n} grades are {int(grades[0])}: every response sits at the group mean, so "
            "every advantage is 0 under each normalisation. This group teaches nothing.",
            icon=":material/block:")
    else:
        sd_k = float(np.sqrt(np.mean((grades - mean) ** 2)))
        sd_k1 = float(np.sqrt(np.sum((grades - mean) ** 2) / (n - 1)))
        st.markdown(
            f"{int(grades.sum())} of {n} correct · group mean {mean:.3f} · standard deviation "
            f"{sd_k:.3f} over k, {sd_k1:.3f} over k − 1."
        )
    fmt = st.column_config.NumberColumn(format="%+.2f")
    st.dataframe(table, hide_index=True, width="stretch",
                 column_config={groups.CONVENTION_LABELS[c]: fmt for c in groups.CONVENTIONS})
    st.caption(
        "÷ std (k): grade minus mean over the population standard deviation, the chapter's "
        "choice. ÷ std (k − 1): over the sample standard deviation instead, as TRL's GRPO "
        "trainer does, which shrinks every advantage by √((k − 1)/k). Centred (Dr. GRPO): "
        "grade minus mean, not divided, so a group's spread stays in the update."
    )
