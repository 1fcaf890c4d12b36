"""Credit inside a response: the token-level form of the KL-regularized optimum on SPEC.md's
token tree (chapter 28's soft Bellman equations; Section 12.1.5; Exercise 28.2)."""

import math

import numpy as np
import pandas as pd
import streamlit as st

from klrl_core import token_credit as tc
from klrl_app import controls, fmt, layout, plots

page = layout.Page(
    "token-credit", "Credit inside a response",
    "Chapter 28 · the token-level form of the optimum · Section 12.1.5 · Exercise 28.2",
    "A toy language model writes three tokens, each a, b or c, so it has 27 possible "
    "responses; its reference π_ref writes a, b, c with probabilities 0.5, 0.3, 0.2 at every "
    "step. The reward judges the whole response. The KL-regularized optimum π* can be built "
    "token by token, from the last token back (the soft Bellman equations): each token's "
    "credit β·ln π*/π_ref is how much writing it changed the soft value V*. The bandit view "
    "instead hands every token the same advantage, r(y) − E_π*[r].",
)
ui = page.ui
c_kappa, c_rule, c_y, c_y2 = page.control_row([2.6, 2.4, 1, 1])
with c_kappa:
    kappa = ui.kappa(default=2.0)
with c_rule:
    rule = ui.choice("reward", "Reward rule", {r: r for r in tc.RULES}, default="middle",
                     help="middle: r = [y₂ = b] + 0.2·[y₃ = c]; last: r = [y₃ = c]; "
                          "first: r = [y₁ = c]; count: r = (number of c tokens)/3.")
with c_y:
    y = ui.word("y", "Response y", "abc", tc.TOKENS, tc.LENGTH,
                help="Three letters from a, b, c, one token at a time.")
with c_y2:
    y2 = ui.word("y2", "Response y′", "aba", tc.TOKENS, tc.LENGTH,
                 help="Three letters from a, b, c: compared with y token by token.")
page.finish_controls()

R = tc.rewards(rule)


def model_text() -> str:
    """The model in one sentence, from the core's constants, for the first screen."""
    ref = ", ".join(f"{a} {fmt.fixed(q, 1)}" for a, q in zip(tc.TOKENS, tc.PI_REF))
    letters = ", ".join(tc.TOKENS[:-1]) + " or " + tc.TOKENS[-1]
    return (f"The model: {tc.N_RESPONSES} responses of {tc.LENGTH} tokens, each {letters}; "
            f"π_ref writes {ref} at every step; the {rule} rule pays "
            f"{tc.RULE_TEXT[rule]} for the whole response.")


st.caption(model_text())
SPAN = float(R.max() - R.min())          # |credit| and |bandit share| never exceed this
REF_SEQ = tc.log_pi_ref_sequence()
K = tc.shared_prefix(y, y2)
CREDIT_SCALE = [[0.0, "#dc2626"], [0.5, "#f3f4f6"], [1.0, "#2563eb"]]


def beta_of(kappa: float) -> float:
    return math.inf if kappa == 0 else 1.0 / kappa


def at(kappa: float):
    beta = beta_of(kappa)
    return tc.soft_tree(beta, rule), tc.sequence_tilt(beta, rule)


def items_at(tree, seq) -> list[tuple[str, str]]:
    v0 = float(tree.values[0][0])
    return [
        ("V*(x)", fmt.fixed(v0, 3)),
        ("β·ln Z", fmt.fixed(seq.value, 3)),
        (f"implicit reward of {y}", fmt.fixed(tc.implicit_reward(tree, y), 3, signed=True)),
        (f"{y} against "
         f"{y2}", fmt.fixed(tc.implicit_reward_difference(tree, y, y2), 3, signed=True)),
        ("E_π*[r]", fmt.fixed(seq.expected, 3)),
        ("KL(π* ‖ π_ref)", f"{fmt.fixed(seq.kl, 3)} nats"),
        (f"bandit share of {y}", fmt.fixed(tc.reward(y, rule) - seq.expected, 3, signed=True)),
    ]


# The token tree drawn with cartesian traces (bars, scatter, shapes): a column per token
# position, a box per prefix. π*'s tree: box height = the prefix's probability under π*;
# the credit grid: every box one row of the 27 responses high, so each of the 39 tokens'
# credits is printed in a box tall enough for it, however rare the prefix (issue 31).
COLUMNS = [f"token {t + 1}" for t in range(tc.LENGTH)]
ROWS = [tc.N_RESPONSES // len(tc.TOKENS) ** (t + 1) for t in range(tc.LENGTH)]  # 9, 3, 1
# y and y′ outlined in the accent colour (it reads on both themes, and on red and blue
# boxes), told apart by the dash
MARK = {"y": (plots.COLORS["accent"], "solid"), "y′": (plots.COLORS["accent"], "dash")}


def _credit_layout(chart: plots.Chart, title: str, scale: bool, columns: list[str]) -> None:
    chart.update(
        barmode="overlay", bargap=0.06, showlegend=False,
        xaxis={"type": "category", "categoryorder": "array", "categoryarray": columns,
               "title": {"text": ""}, "side": "top", "fixedrange": True},
        coloraxis={"cmin": -SPAN, "cmax": SPAN, "cmid": 0.0, "colorscale": CREDIT_SCALE,
                   "showscale": scale,
                   "colorbar": {"title": {"text": "credit", "side": "right"},
                                "orientation": "h", "thickness": 10, "len": 0.8, "x": 0.5,
                                "xanchor": "center", "y": -0.02, "yanchor": "top"}},
        uniformtext={"minsize": 11, "mode": "hide"},
        annotations=[{"text": title, "x": 0.5, "y": 1.0, "xref": "paper", "yref": "paper",
                      "xanchor": "center", "yanchor": "bottom", "yshift": 22,
                      "showarrow": False}])


GRID_COLUMNS = ["1st", "2nd"] + [f"3rd: {a}" for a in tc.TOKENS]
PAIRS = tc.prefixes(2)                            # the grid's rows: aa, ab, …, cc


def credit_grid() -> plots.Chart:
    """Every token's credit in a cell of its own, as a table: one row per two-token prefix
    (aa … cc), its first token's credit (a cell over the three rows it starts), its second's,
    and the credit of each possible third token; y's and y′'s cells outlined. The texts are
    templates over the credits (customdata, set per stop by tree_charts)."""
    k = len(tc.TOKENS)
    chart = plots.Chart("", "", height=400, margin={"l": 4, "r": 30, "t": 58, "b": 72})
    specs = [(GRID_COLUMNS[0], [k] * k, np.arange(k) * k),
             (GRID_COLUMNS[1], [1] * k * k, np.arange(k * k))]
    specs += [(GRID_COLUMNS[2 + a], [1] * k * k, np.arange(k * k)) for a in range(k)]
    for name, height, base in specs:
        chart.add("bar", x=[name] * len(height), y=height, base=base, width=0.94, name=name,
                  texttemplate="%{customdata:+.3f}", textposition="inside",
                  insidetextanchor="middle", textangle=0,
                  marker={"coloraxis": "coloraxis",
                          "line": {"width": 1, "color": "rgba(128,132,149,0.6)"}},
                  hovertemplate=f"{name} token: credit %{{customdata:+.3f}}<extra></extra>")
    chart.update(yaxis={"range": [k * k, 0], "fixedrange": True, "showgrid": False,
                        "tickmode": "array", "tickvals": np.arange(k * k) + 0.5,
                        "ticktext": PAIRS, "title": {"text": ""}})
    _credit_layout(chart, "each token's credit under π*", True, GRID_COLUMNS)
    for name, word in (("y", y), ("y′", y2)):
        color, dash = MARK[name]
        row = PAIRS.index(word[:2])
        cells = [(0, row // k * k, k), (1, row, 1), (2 + tc.TOKENS.index(word[2]), row, 1)]
        for col, top, h in cells:
            chart.layout["shapes"].append({
                "type": "rect", "xref": "x", "yref": "y", "x0": col - 0.47, "x1": col + 0.47,
                "y0": top, "y1": top + h,
                "line": {"color": color, "width": 3 if name == "y" else 2, "dash": dash}})
        chart.layout["annotations"].append({
            "text": f"<b>{name}</b>", "x": len(GRID_COLUMNS) - 0.5, "y": row + 0.5,
            "xref": "x", "yref": "y", "xanchor": "left", "showarrow": False,
            # y and y′ on one row (a shared two-token prefix): one above the other
            "yshift": (0 if y2[:2] != y[:2] else 8 if name == "y" else -8)})
    return chart


def mass_tree(mass, credit: list[np.ndarray], k_text: str) -> plots.Chart:
    """π*'s tree: column t stacks the 3^t prefixes' probabilities under π* (box height),
    coloured by the credit of the token into the box; y's and y′'s boxes outlined."""
    chart = plots.Chart("", "", height=400, margin={"l": 4, "r": 4, "t": 58, "b": 72})
    for t in range(tc.LENGTH):
        m = np.asarray(mass[t + 1], dtype=np.float32)
        start = np.r_[0.0, np.cumsum(m)[:-1]].astype(np.float32)
        labels = [pre[-1] for pre in tc.prefixes(t + 1)]
        chart.add("bar", x=[COLUMNS[t]] * m.size, y=m, base=start, width=0.94,
                  name=COLUMNS[t], text=labels, customdata=credit[t],
                  texttemplate="%{text}", textposition="inside", insidetextanchor="middle",
                  textangle=0,
                  marker={"color": credit[t], "coloraxis": "coloraxis",
                          "line": {"width": 1, "color": "rgba(128,132,149,0.6)"}},
                  hovertemplate=("prefix ending in %{text}: probability %{y:.4f} under π*"
                                 "<br>credit of its last token %{customdata:+.3f}"
                                 "<extra></extra>"))
        for name, word in (("y", y), ("y′", y2)):
            i = tc.response_index(word[:t + 1] + "a" * (tc.LENGTH - t - 1)) // ROWS[t]
            # y's box: a scatter outline (its corners move with the masses at each stop)
            x0, x1 = t - 0.47, t + 0.47
            b0, b1 = float(start[i]), float(start[i] + m[i])
            color, dash = MARK[name]
            chart.add(x=[x0, x1, x1, x0, x0], y=[b0, b0, b1, b1, b0], mode="lines",
                      xaxis="x2", line={"color": color, "width": 3 if name == "y" else 2,
                                        "dash": dash},
                      hoverinfo="skip", showlegend=False, name=f"{name} = {word}")
    chart.update(yaxis={"range": [1, 0], "visible": False, "fixedrange": True},
                 xaxis={"range": [-0.5, tc.LENGTH - 0.5]},
                 xaxis2={"overlaying": "x", "range": [-0.5, tc.LENGTH - 0.5],
                         "visible": False, "fixedrange": True})
    _credit_layout(chart, f"under π* (κ = {k_text})", False, COLUMNS)
    # letters only in boxes tall enough for 14 px type (the credits are all in the grid)
    chart.update(uniformtext={"minsize": 14, "mode": "hide"})
    # _credit_layout set the title as the only annotation: the note under the tree again
    chart.layout["annotations"].append({
        "text": "box height = probability under π*;<br>outlined: y (solid), y′ (dashed)",
        "x": 0.5, "y": -0.02, "xref": "paper", "yref": "paper", "xanchor": "center",
        "yanchor": "top", "showarrow": False})
    return chart


def tree_charts(tree, seq, k_text: str) -> tuple[plots.Chart, plots.Chart]:
    """π*'s tree (mass under π*) and the grid of every token's credit, both coloured by π*'s
    credits at this κ."""
    credit = [np.asarray(tree.credit[t].ravel(), dtype=np.float32) for t in range(tc.LENGTH)]
    grid = credit_grid()
    third = credit[2].reshape(-1, len(tc.TOKENS))          # row: two-token prefix
    for trace, values in zip(grid.data, [credit[0], credit[1]] +
                             [np.ascontiguousarray(third[:, a]) for a in range(third.shape[1])]):
        trace["customdata"] = values
        trace["marker"]["color"] = values
    return mass_tree(tc.node_mass(seq.log_pi), credit, k_text), grid


def bars_chart(tree, seq) -> plots.Chart:
    groups = [f"y = {y}"] * 3 + [f"y′ = {y2}"] * 3
    tokens = [f"{t + 1}: {ch}" for t, ch in enumerate(y)] + \
             [f"{t + 1}: {ch}" for t, ch in enumerate(y2)]
    soft = np.r_[tc.token_credits(tree, y), tc.token_credits(tree, y2)]
    share = np.r_[np.full(3, tc.reward(y, rule) - seq.expected),
                  np.full(3, tc.reward(y2, rule) - seq.expected)]
    # no x title: the tokens are named under their bars, and a title was cut at 720 px in
    # the presentation view (issue 31)
    chart = plots.Chart("", "advantage given to the token", height=400,
                        margin={"r": 8, "t": 40})
    chart.add("bar", x=[groups, tokens], y=soft, name="soft credit β·ln π*/π_ref",
              marker={"color": plots.COLORS["optimum"]},
              hovertemplate="soft credit %{y:+.3f}<extra></extra>")
    chart.add("bar", x=[groups, tokens], y=share, name="bandit view r(y) − E_π*[r]",
              marker={"color": plots.COLORS["proxy"]},
              hovertemplate="bandit view %{y:+.3f}<extra></extra>")
    top = 1.1 * SPAN
    chart.update(yaxis={"range": [-top, top], "zeroline": True,
                        "zerolinecolor": "rgba(128,132,149,0.6)"}, barmode="group")
    return chart


def view_at(kappa: float) -> layout.View:
    tree, seq = at(kappa)
    k_text = controls.kappa_text(kappa)
    c, c2 = tc.token_credits(tree, y), tc.token_credits(tree, y2)
    share = tc.reward(y, rule) - seq.expected
    best = R == R.max()
    top_ref, top_pi = float(np.exp(REF_SEQ)[best].sum()), float(seq.pi[best].sum())
    colour = "colour = the credit of the token into the box (red negative, blue positive)"
    tree_alt = (
        f"The token tree under π* (κ = {k_text}), one column per token: box height = "
        f"probability under π*, {colour}; the boxes of y = {y} and y′ = {y2} outlined. "
        f"Responses with the top reward {fmt.fixed(R.max(), 2)} hold "
        f"{fmt.pct(top_pi, 1)} of π*'s mass, against {fmt.pct(top_ref, 1)} under π_ref.")
    ref_alt = (
        f"Every token's credit under π* at κ = {k_text}, as a table: one row per two-token "
        f"prefix (aa to cc), its first token's credit, its second's, and the credit of each "
        f"possible third token; {colour}. "
        f"y = {y} is outlined: credits " + ", ".join(fmt.fixed(x, 3, signed=True) for x in c)
        + f"; y′ = {y2}: " + ", ".join(fmt.fixed(x, 3, signed=True) for x in c2) + ".")
    bars_alt = (
        f"Per-token advantages. Soft credits of {y}: "
        + ", ".join(fmt.fixed(x, 3, signed=True) for x in c) + f"; of {y2}: "
        + ", ".join(fmt.fixed(x, 3, signed=True) for x in c2)
        + f". Bandit view, every token: {y} {fmt.fixed(share, 3, signed=True)}, {y2} "
        f"{fmt.fixed(tc.reward(y2, rule) - seq.expected, 3, signed=True)}.")
    opt_tree, ref_tree = tree_charts(tree, seq, k_text)
    return layout.View(items_at(tree, seq), {
        "token-credit-tree": (opt_tree, tree_alt), "token-credit-ref": (ref_tree, ref_alt),
        "token-credit-bars": (bars_chart(tree, seq), bars_alt)})


helps = [
    "the soft value of the prompt, by the backward recursion V*(s) = β·ln Σₐ π_ref(a)·"
    "exp(V*(s a)/β) from V* = r at the leaves.",
    "β times the log of Z = Σ_y π_ref(y)·exp(r(y)/β) over the 27 whole responses: the "
    "sequence-level optimum's value (Exercise 28.1). It equals V*(x).",
    "β·ln π*(y)/π_ref(y), the sum of y's bars: r(y) − V*(x) (Exercise 28.2(a)).",
    "the difference of the two implicit rewards: only the tokens after the shared prefix "
    "count, and it equals r(y) − r(y′) (Exercise 28.2(b)).",
    "the optimum's expected reward.",
    "how far π* moved from the reference, in nats.",
    "the one advantage r(y) − E_π*[r] that a sequence-level estimator puts on every token "
    "of y (Section 12.1.5).",
]
view = page.follow(layout.Instant("kappa", view_at, setting=(rule, y, y2)),
                   [h.replace("*", "\\*") for h in helps])   # markdown: V* and π* stay stars
beta = beta_of(kappa)
tree, seq = at(kappa)
k_text, b_text = controls.kappa_text(kappa), controls.beta_text(kappa)
c, c2 = tc.token_credits(tree, y), tc.token_credits(tree, y2)
share = tc.reward(y, rule) - seq.expected
v0 = float(tree.values[0][0])

# π*'s tree first: the browser draws the first chart in the frame of a move, the others next.
for column, key in zip(st.columns([2.8, 3.6, 3.6], gap="medium"),
                       ("token-credit-tree", "token-credit-ref", "token-credit-bars")):
    with column:
        page.chart(view, key)


# --- what to look for, from the numbers ------------------------------------------------------
def largest_credit_text() -> str:
    """Which of y's tokens carries the largest credit in size; tokens whose credits are the
    same as shown (3 decimals) are named together, as a tie (the count rule's are exact)."""
    t_max = int(np.argmax(np.abs(c)))
    if abs(c[t_max]) < 5e-4:
        return f"At κ = {k_text} every token of {y} gets almost no soft credit."
    shown = fmt.fixed(abs(c[t_max]), 3)
    tied = [t for t in range(tc.LENGTH) if fmt.fixed(abs(c[t]), 3) == shown]
    names = [f"{t + 1} ({y[t]})" for t in tied]
    if len(tied) == 1:
        up = c[t_max] > 0
        return (f"Of {y}'s tokens, token {names[0]} carries the "
                f"{'most credit' if up else 'largest credit in size'} "
                f"({fmt.fixed(c[t_max], 3, signed=True)}): writing it "
                f"{'raised' if up else 'lowered'} the soft value more than any other token of "
                f"{y} did.")
    listed = (" and ".join(names) if len(tied) == 2 else
              ", ".join(names[:-1]) + " and " + names[-1])
    who = (f"tokens {listed}" if len(tied) < tc.LENGTH else f"all three tokens, {listed},")
    exact = np.ptp(c[tied]) < 1e-12
    same_sign = len({bool(c[t] > 0) for t in tied}) == 1
    values = ", ".join(fmt.fixed(c[t], 3, signed=True) for t in tied)
    how = "exactly" if exact else "to the 3 decimals shown"
    if same_sign:
        return (f"Of {y}'s tokens, {who} tie for the largest credit in size ({values}, equal "
                f"{how}): each changed the soft value as much as the other"
                f"{'s' if len(tied) > 2 else ''}.")
    return (f"Of {y}'s tokens, {who} carry credits of the same largest size ({values}, equal "
            f"in size {how}), {'one' if len(tied) == 2 else 'some'} raising the soft value "
            f"and {'one' if len(tied) == 2 else 'some'} lowering it.")


def value_identity_text() -> str:
    """V*(x) = E_π*[r] − β·KL(π* ‖ π_ref): why y's credits and its bandit share differ."""
    total = float(c.sum())
    if kappa == 0:
        return (f"At κ = 0 π* is π_ref, KL is 0 and V*(x) = E_π*[r] = {fmt.fixed(v0, 3)}: "
                f"{y}'s credits sum to its bandit share, {fmt.fixed(total, 3, signed=True)}.")
    beta_kl = beta * seq.kl
    identity = (f"V*(x) = E_π*[r] − β·KL(π* ‖ π_ref) = {fmt.fixed(seq.expected, 3)} − "
                f"{b_text} × {fmt.fixed(seq.kl, 3)} = {fmt.fixed(v0, 3)}, the optimum's "
                f"expected reward less the price of its KL")
    head = (f"{y}'s credits sum to r({y}) − V*(x) = {fmt.fixed(total, 3, signed=True)}, its "
            f"bandit share is r({y}) − E_π*[r] = {fmt.fixed(share, 3, signed=True)}")
    if fmt.fixed(beta_kl, 3) == fmt.fixed(0.0, 3):
        return (f"{head}: they agree to 3 decimals because {identity}, and at κ = {k_text} "
                f"the price β·KL is only {fmt.fixed(beta_kl, 3, min_sig=1)}.")
    return (f"{head}: they differ because {identity}; so for every response the credits "
            f"exceed the bandit share by β·KL = {fmt.fixed(beta_kl, 3)}.")


def look_for() -> str:
    first_level = tree.values[1]
    v1 = float(tc.node_values(tree, y)[1])
    # The bandit view's share on every token of y; "0.000 as well" when it rounds to zero.
    bandit = (f"The bandit view still gives it the whole response's advantage, {fmt.fixed(share, 3, signed=True)}."
              if abs(share) >= 5e-4 else
              f"The bandit view gives it the whole response's advantage, which is "
              f"{fmt.fixed(share, 3, signed=True)} here as well.")
    parts = []
    if np.ptp(first_level) < 1e-12:
        parts.append(
            f"The first token of {y} gets no soft credit ({fmt.fixed(c[0], 3, signed=True)}): "
            f"under the "
            f"{rule} rule every first token leaves the same soft value V* = "
            f"{fmt.fixed(float(first_level[0]), 3)} ahead, so writing {y[0]} changes "
            f"nothing. {bandit}")
    elif abs(c[0]) < 5e-4:
        parts.append(
            f"The first token of {y} gets almost no soft credit ({fmt.fixed(c[0], 3, signed=True)}): the soft "
            f"value after it, {fmt.fixed(v1, 3)}, is almost V*(x) = {fmt.fixed(v0, 3)}. "
            f"{bandit}")
    else:
        parts.append(f"Here the first token matters: writing {y[0]} moves the soft value from "
                     f"{fmt.fixed(v0, 3)} to {fmt.fixed(v1, 3)}, a credit of "
                     f"{fmt.fixed(c[0], 3, signed=True)}, "
                     f"against the bandit view's {fmt.fixed(share, 3, signed=True)} on every "
                     f"token.")
    parts.append(largest_credit_text())
    best = R == R.max()
    ref_top, pi_top = float(np.exp(REF_SEQ)[best].sum()), float(seq.pi[best].sum())
    if kappa == 0:
        parts.append("At κ = 0 (β = ∞) π* is π_ref: the tree's boxes are π_ref's "
                     "probabilities, and each token's credit is its advantage under the "
                     "reference, the change it makes to E_π_ref[r | prefix].")
    else:
        more = ("; raise κ and the mass flows further into them" if pi_top < 0.9995 else
                "; at this κ nearly all of π* is there")
        parts.append(f"In π*'s tree, the responses with the top reward hold "
                     f"{fmt.pct(pi_top, 1)} of the mass at κ = {k_text}, against "
                     f"{fmt.pct(ref_top, 1)} under π_ref{more}.")
    parts.append(value_identity_text())
    return " ".join(parts)


page.explain(look_for())

# --- computed checks ---------------------------------------------------------------------------
if page.section("Checks, computed at this setting"):
    gap = abs(v0 - seq.value)
    total = float(c.sum())
    r_y, r_y2 = tc.reward(y, rule), tc.reward(y2, rule)
    diff = tc.implicit_reward_difference(tree, y, y2)
    beta_z = ("β·ln Z (its limit E_π_ref[r] at β = ∞)" if kappa == 0 else "β·ln Z")
    lines = [
        f"- **V*(x) = {beta_z}**: {fmt.fixed(v0, 6)} from the backward recursion over the "
        f"tree, {fmt.fixed(seq.value, 6)} from the 27 whole responses; "
        + (f"they differ by {fmt.standard_form(gap, 2)}, rounding only." if gap else
           "they are equal in floating point."),
        f"- **Telescoping**: the bars of {y} sum to {fmt.fixed(total, 3, signed=True)}, and r({y}) − V*(x) = "
        f"{fmt.fixed(r_y, 3)} − {fmt.fixed(v0, 3)} = {fmt.fixed(r_y - v0, 3, signed=True)}.",
    ]
    if K == tc.LENGTH:
        lines.append(f"- **Shared prefix**: y and y′ are the same response, so every bar is "
                     f"the same and the difference is 0.")
    elif K == 0:
        lines.append(
            f"- **Shared prefix**: {y} and {y2} differ from the first token, so every token "
            f"counts; their implicit rewards differ by {fmt.fixed(diff, 3, signed=True)} = r({y}) "
            f"− r({y2}) = "
            f"{fmt.fixed(r_y, 3)} − {fmt.fixed(r_y2, 3)}.")
    else:
        shared = ", ".join(fmt.fixed(x, 3, signed=True) for x in c[:K])
        lines.append(
            f"- **Shared prefix** (Exercise 28.2(b)): {y} and {y2} share their first {K} "
            f"token{'s' if K > 1 else ''} ({y[:K]}), whose bars are the same numbers "
            f"({shared}) in both; the tokens after it give the difference "
            f"{fmt.fixed(diff, 3, signed=True)}, "
            f"which is r({y}) − r({y2}) = {fmt.fixed(r_y, 3)} − {fmt.fixed(r_y2, 3)}, "
            f"whatever the prefix.")
    if math.isinf(beta):
        lines.append("- **DPO on the tree**: at κ = 0 (β = ∞) DPO's optimum is π_ref itself; "
                     "move κ above 0 to compare it with π*.")
    else:
        d = tc.dpo_on_tree(beta, rule)
        worst = max(float(np.max(np.abs(a - b))) for a, b in zip(d.credit, tree.credit))
        lines.append(
            f"- **DPO on the tree**: the exact DPO optimum fitted to Bradley–Terry preferences "
            f"on all pairs of the 27 responses (the dpo page's core) has, token by token, the "
            f"same β·log-ratios as π*: the largest gap over the tree's 39 tokens is "
            f"{fmt.standard_form(worst, 2) if worst else 0}. DPO only sees differences of implicit "
            f"rewards between pairs; by the identity above each is a sum of soft credits "
            f"after the shared prefix, so fitting these differences to preferences is "
            f"fitting a soft Q-function, token by token.")
    # Markdown: the stars of V* and π* are letters here, only "**" makes bold.
    layout.paragraph("\n".join(line.replace("**", "\0").replace("*", "\\*").replace("\0", "**")
                               for line in lines))
    layout.paragraph(
        f"Work it by hand in [Exercise 28.2](exercises) (β = 0.5, the middle rule); the "
        f"chapter on RL for language models derives the identities. The reward rule here is "
        f"{tc.RULE_TEXT[rule]}.")


def numbers() -> None:
    rows = []
    for t in range(tc.LENGTH):
        for n, prefix in enumerate(tc.prefixes(t)):
            for a_i, a in enumerate(tc.TOKENS):
                rows.append({"prefix": prefix or "x", "token": a, "depth": t + 1,
                             "pi_ref": tc.PI_REF[a_i],
                             "pi_star": float(np.exp(tree.log_pi[t][n, a_i])),
                             "Q_star": float(tree.q[t][n, a_i]), "V_star_prefix": float(tree.values[t][n]),
                             "credit": float(tree.credit[t][n, a_i])})
    node_df = pd.DataFrame(rows)
    resp = pd.DataFrame({"response": tc.responses(), "reward": R,
                         "pi_ref": np.exp(REF_SEQ), "pi_star": seq.pi,
                         "implicit reward": [tc.implicit_reward(tree, z) for z in tc.responses()],
                         "bandit share": R - seq.expected})
    layout.table(resp, digits=4, height=260)
    name = f"kappa_{controls.fmt_number(kappa)}_{rule}"
    layout.csv_download(resp, f"token_credit_responses_{name}.csv",
                        label="Download the 27 responses (CSV)", key="token-credit-resp-csv")
    layout.csv_download(node_df, f"token_credit_tokens_{name}.csv",
                        label="Download every token of the tree (CSV)",
                        key="token-credit-nodes-csv")


page.details(numbers)
