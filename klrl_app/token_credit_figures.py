"""The token-credit page's figures (chapter 28's soft Bellman equations, Section 12.1.5): π*'s
token tree, the grid of every token's credit and the per-token advantages of y and y′, with
their text alternatives; and the page's tables and downloads. Numbers come from
klrl_core.token_credit; pages/token-credit.py wires them."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from klrl_app import controls, fmt, layout, plots
from klrl_core import token_credit as tc

CREDIT_SCALE = [[0.0, "#dc2626"], [0.5, "#f3f4f6"], [1.0, "#2563eb"]]


# The token tree drawn with cartesian traces (bars, scatter, shapes): a column per token
# position, a box per prefix. π*'s tree: box height = the prefix's probability under π*;
# the credit grid: every box one row of the 27 responses high, so each of the 39 tokens'
# credits is printed in a box tall enough for it, however rare the prefix (issue 31).


def beta_of(kappa: float) -> float:
    return math.inf if kappa == 0 else 1.0 / kappa


def optimum(kappa: float, rule: str):
    """π* at κ, token by token (the soft tree) and over the 27 whole responses."""
    beta = beta_of(kappa)
    return tc.soft_tree(beta, rule), tc.sequence_tilt(beta, rule)


COLUMNS = [f"token {t + 1}" for t in range(tc.LENGTH)]
ROWS = [tc.N_RESPONSES // len(tc.TOKENS) ** (t + 1) for t in range(tc.LENGTH)]  # 9, 3, 1
# y and y′ outlined in the accent colour (it reads on both themes, and on red and blue
# boxes), told apart by the dash
MARK = {"y": (plots.COLORS["accent"], "solid"), "y′": (plots.COLORS["accent"], "dash")}


def _credit_layout(
    chart: plots.Chart, title: str, scale: bool, columns: list[str], span: float
) -> None:
    chart.update(
        barmode="overlay",
        bargap=0.06,
        showlegend=False,
        xaxis={
            "type": "category",
            "categoryorder": "array",
            "categoryarray": columns,
            "title": {"text": ""},
            "side": "top",
            "fixedrange": True,
        },
        coloraxis={
            "cmin": -span,
            "cmax": span,
            "cmid": 0.0,
            "colorscale": CREDIT_SCALE,
            "showscale": scale,
            "colorbar": {
                "title": {"text": "credit", "side": "right"},
                "orientation": "h",
                "thickness": 10,
                "len": 0.8,
                "x": 0.5,
                "xanchor": "center",
                "y": -0.02,
                "yanchor": "top",
            },
        },
        uniformtext={"minsize": 11, "mode": "hide"},
        annotations=[
            {
                "text": title,
                "x": 0.5,
                "y": 1.0,
                "xref": "paper",
                "yref": "paper",
                "xanchor": "center",
                "yanchor": "bottom",
                "yshift": 22,
                "showarrow": False,
            }
        ],
    )


GRID_COLUMNS = ["1st", "2nd"] + [f"3rd: {a}" for a in tc.TOKENS]
PAIRS = tc.prefixes(2)  # the grid's rows: aa, ab, …, cc


def credit_grid(y: str, y2: str, span: float) -> plots.Chart:
    """Every token's credit in a cell of its own, as a table: one row per two-token prefix
    (aa … cc), its first token's credit (a cell over the three rows it starts), its second's,
    and the credit of each possible third token; y's and y′'s cells outlined. The texts are
    templates over the credits (customdata, set per stop by tree_charts)."""
    k = len(tc.TOKENS)
    chart = plots.Chart("", "", height=400, margin={"l": 4, "r": 30, "t": 58, "b": 72})
    specs = [
        (GRID_COLUMNS[0], [k] * k, np.arange(k) * k),
        (GRID_COLUMNS[1], [1] * k * k, np.arange(k * k)),
    ]
    specs += [(GRID_COLUMNS[2 + a], [1] * k * k, np.arange(k * k)) for a in range(k)]
    for name, height, base in specs:
        chart.add(
            "bar",
            x=[name] * len(height),
            y=height,
            base=base,
            width=0.94,
            name=name,
            texttemplate="%{customdata:+.3f}",
            textposition="inside",
            insidetextanchor="middle",
            textangle=0,
            marker={
                "coloraxis": "coloraxis",
                "line": {"width": 1, "color": "rgba(128,132,149,0.6)"},
            },
            hovertemplate=f"{name} token: credit %{{customdata:+.3f}}<extra></extra>",
        )
    chart.update(
        yaxis={
            "range": [k * k, 0],
            "fixedrange": True,
            "showgrid": False,
            "tickmode": "array",
            "tickvals": np.arange(k * k) + 0.5,
            "ticktext": PAIRS,
            "title": {"text": ""},
        }
    )
    _credit_layout(chart, "each token's credit under π*", True, GRID_COLUMNS, span)
    for name, word in (("y", y), ("y′", y2)):
        color, dash = MARK[name]
        row = PAIRS.index(word[:2])
        cells = [(0, row // k * k, k), (1, row, 1), (2 + tc.TOKENS.index(word[2]), row, 1)]
        for col, top, h in cells:
            chart.layout["shapes"].append(
                {
                    "type": "rect",
                    "xref": "x",
                    "yref": "y",
                    "x0": col - 0.47,
                    "x1": col + 0.47,
                    "y0": top,
                    "y1": top + h,
                    "line": {"color": color, "width": 3 if name == "y" else 2, "dash": dash},
                }
            )
        chart.layout["annotations"].append(
            {
                "text": f"<b>{name}</b>",
                "x": len(GRID_COLUMNS) - 0.5,
                "y": row + 0.5,
                "xref": "x",
                "yref": "y",
                "xanchor": "left",
                "showarrow": False,
                # y and y′ on one row (a shared two-token prefix): one above the other
                "yshift": (0 if y2[:2] != y[:2] else 8 if name == "y" else -8),
            }
        )
    return chart


PLOT_PX = 400 - 58 - 72  # the tree's plot height at its layout (height, top and bottom margins)
LETTER_PX = 22  # a box this tall holds a letter of the chart's type (13 px, presenting 19 px)
# The letters' ink: near-black reads on every box tall enough for a letter, at every setting
# (those boxes' credits are never near the scale's saturated ends; tests/test_app_token_credit
# checks the contrast over every κ and reward rule).
INK = "#111827"


def mass_tree(
    mass, credit: list[np.ndarray], k_text: str, y: str, y2: str, span: float
) -> plots.Chart:
    """π*'s tree: column t stacks the 3^t prefixes' probabilities under π* (box height),
    coloured by the credit of the token into the box; y's and y′'s boxes outlined."""
    chart = plots.Chart("", "", height=400, margin={"l": 4, "r": 4, "t": 58, "b": 72})
    letters: list[tuple] = []  # per column: x, the box's middle, whether a letter fits
    outlines: dict[str, tuple[list, list]] = {"y": ([], []), "y′": ([], [])}
    for t in range(tc.LENGTH):
        # Stacked in single precision, as drawn: the outlines below take their corners from
        # the same sums, so they sit exactly on the boxes' edges (lossy, not an encoding).
        m = np.asarray(mass[t + 1], dtype=np.float32)
        start = np.r_[0.0, np.cumsum(m)[:-1]].astype(np.float32)
        labels = [pre[-1] for pre in tc.prefixes(t + 1)]
        chart.add(
            "bar",
            x=[COLUMNS[t]] * m.size,
            y=m,
            base=start,
            width=0.94,
            name=COLUMNS[t],
            text=labels,
            customdata=credit[t],
            textposition="none",  # the letters: two text traces below
            marker={
                "color": credit[t],
                "coloraxis": "coloraxis",
                "line": {"width": 1, "color": "rgba(128,132,149,0.6)"},
            },
            hovertemplate=(
                "prefix ending in %{text}: probability %{y:.4f} under π*"
                "<br>credit of its last token %{customdata:+.3f}"
                "<extra></extra>"
            ),
        )
        letters.append((np.full(m.size, t), start + m / 2, m * PLOT_PX >= LETTER_PX))
        for name, word in (("y", y), ("y′", y2)):
            i = tc.response_index(word[: t + 1] + "a" * (tc.LENGTH - t - 1)) // ROWS[t]
            # the box's outline (its corners move with the masses at each stop); NaN ends it
            x0, x1 = t - 0.47, t + 0.47
            b0, b1 = float(start[i]), float(start[i] + m[i])
            outlines[name][0].extend([x0, x1, x1, x0, x0, np.nan])
            outlines[name][1].extend([b0, b0, b1, b1, b0, np.nan])
    # y's and y′'s boxes, one trace each (fewer traces: plotly.js draws a stop sooner)
    for name, word in (("y", y), ("y′", y2)):
        color, dash = MARK[name]
        chart.add(
            x=np.array(outlines[name][0]),
            y=np.array(outlines[name][1]),
            mode="lines",
            xaxis="x2",
            line={"color": color, "width": 3 if name == "y" else 2, "dash": dash},
            hoverinfo="skip",
            showlegend=False,
            name=f"{name} = {word}",
        )
    chart.update(
        yaxis={"range": [1, 0], "visible": False, "fixedrange": True},
        xaxis={"range": [-0.5, tc.LENGTH - 0.5]},
        xaxis2={
            "overlaying": "x",
            "range": [-0.5, tc.LENGTH - 0.5],
            "visible": False,
            "fixedrange": True,
        },
    )
    # The letters, only in boxes tall enough for the chart's type (the credits are all in the
    # grid): one text trace whose texts never change, a letter placed (not NaN) where it fits.
    # The bars' own inside text, fitted by plotly.js at every stop, doubled a key press's time
    # (benchmarks/latency); a stop changes only numbers here, as on every other chart.
    x, middle, fits = (np.concatenate(c) for c in zip(*letters))
    chart.add(
        x=x.astype(float),
        y=np.where(fits, middle, np.nan),
        text=[pre[-1] for t in range(tc.LENGTH) for pre in tc.prefixes(t + 1)],
        mode="text",
        xaxis="x2",
        textfont={"color": INK},
        hoverinfo="skip",
        showlegend=False,
        name="letters",
    )
    _credit_layout(chart, f"under π* (κ = {k_text})", False, COLUMNS, span)
    # _credit_layout set the title as the only annotation: the note under the tree again
    chart.layout["annotations"].append(
        {
            "text": "box height = probability under π*;<br>outlined: y (solid), y′ (dashed)",
            "x": 0.5,
            "y": -0.02,
            "xref": "paper",
            "yref": "paper",
            "xanchor": "center",
            "yanchor": "top",
            "showarrow": False,
        }
    )
    return chart


def tree_charts(
    tree, seq, k_text: str, y: str, y2: str, span: float
) -> tuple[plots.Chart, plots.Chart]:
    """π*'s tree (mass under π*) and the grid of every token's credit, both coloured by π*'s
    credits at this κ."""
    credit = [np.asarray(tree.credit[t].ravel()) for t in range(tc.LENGTH)]
    grid = credit_grid(y, y2, span)
    third = credit[2].reshape(-1, len(tc.TOKENS))  # row: two-token prefix
    for trace, values in zip(
        grid.data,
        [credit[0], credit[1]] + [np.ascontiguousarray(third[:, a]) for a in range(third.shape[1])],
    ):
        trace["customdata"] = values
        trace["marker"]["color"] = values
    return mass_tree(tc.node_mass(seq.log_pi), credit, k_text, y, y2, span), grid


def bars_chart(tree, seq, y: str, y2: str, rule: str, span: float) -> plots.Chart:
    groups = [f"y = {y}"] * 3 + [f"y′ = {y2}"] * 3
    tokens = [f"{t + 1}: {ch}" for t, ch in enumerate(y)] + [
        f"{t + 1}: {ch}" for t, ch in enumerate(y2)
    ]
    soft = np.r_[tc.token_credits(tree, y), tc.token_credits(tree, y2)]
    share = np.r_[
        np.full(3, tc.reward(y, rule) - seq.expected),
        np.full(3, tc.reward(y2, rule) - seq.expected),
    ]
    # no x title: the tokens are named under their bars, and a title was cut at 720 px in
    # the presentation view (issue 31)
    chart = plots.Chart("", "advantage given to the token", height=400, margin={"r": 8, "t": 40})
    chart.add(
        "bar",
        x=[groups, tokens],
        y=soft,
        name="soft credit β·ln π*/π_ref",
        marker={"color": plots.COLORS["optimum"]},
        hovertemplate="soft credit %{y:+.3f}<extra></extra>",
    )
    chart.add(
        "bar",
        x=[groups, tokens],
        y=share,
        name="bandit view r(y) − E_π*[r]",
        marker={"color": plots.COLORS["proxy"]},
        hovertemplate="bandit view %{y:+.3f}<extra></extra>",
    )
    top = 1.1 * span
    chart.update(
        yaxis={"range": [-top, top], "zeroline": True, "zerolinecolor": "rgba(128,132,149,0.6)"},
        barmode="group",
    )
    return chart


def charts(tree, seq, y: str, y2: str, rule: str, k_text: str) -> dict:
    """The three figures at one κ, each with its text alternative, for layout.View."""
    R = tc.rewards(rule)
    span = float(R.max() - R.min())  # |credit| and |bandit share| never exceed this
    c, c2 = tc.token_credits(tree, y), tc.token_credits(tree, y2)
    share = tc.reward(y, rule) - seq.expected
    top_ref = tc.top_reward_mass(np.exp(tc.log_pi_ref_sequence()), rule)
    top_pi = tc.top_reward_mass(seq.pi, rule)
    colour = "colour = the credit of the token into the box (red negative, blue positive)"
    tree_alt = (
        f"The token tree under π* (κ = {k_text}), one column per token: box height = "
        f"probability under π*, {colour}; the boxes of y = {y} and y′ = {y2} outlined. "
        f"Responses with the top reward {fmt.fixed(R.max(), 2)} hold "
        f"{fmt.pct(top_pi, 1)} of π*'s mass, against {fmt.pct(top_ref, 1)} under π_ref."
    )
    ref_alt = (
        f"Every token's credit under π* at κ = {k_text}, as a table: one row per two-token "
        f"prefix (aa to cc), its first token's credit, its second's, and the credit of each "
        f"possible third token; {colour}. "
        f"y = {y} is outlined: credits "
        + ", ".join(fmt.fixed(x, 3, signed=True) for x in c)
        + f"; y′ = {y2}: "
        + ", ".join(fmt.fixed(x, 3, signed=True) for x in c2)
        + "."
    )
    bars_alt = (
        f"Per-token advantages. Soft credits of {y}: "
        + ", ".join(fmt.fixed(x, 3, signed=True) for x in c)
        + f"; of {y2}: "
        + ", ".join(fmt.fixed(x, 3, signed=True) for x in c2)
        + f". Bandit view, every token: {y} {fmt.fixed(share, 3, signed=True)}, {y2} "
        f"{fmt.fixed(tc.reward(y2, rule) - seq.expected, 3, signed=True)}."
    )
    opt_tree, ref_tree = tree_charts(tree, seq, k_text, y, y2, span)
    return {
        "token-credit-tree": (opt_tree, tree_alt),
        "token-credit-ref": (ref_tree, ref_alt),
        "token-credit-bars": (bars_chart(tree, seq, y, y2, rule, span), bars_alt),
    }


def responses_frame(tree, seq, rule: str) -> pd.DataFrame:
    """The 27 responses: reward, probabilities under π_ref and π*, implicit reward, share."""
    R = tc.rewards(rule)
    return pd.DataFrame(
        {
            "response": tc.responses(),
            "reward": R,
            "pi_ref": np.exp(tc.log_pi_ref_sequence()),
            "pi_star": seq.pi,
            "implicit reward": [tc.implicit_reward(tree, z) for z in tc.responses()],
            "bandit share": R - seq.expected,
        }
    )


def tokens_frame(tree) -> pd.DataFrame:
    """Every token of the tree: its prefix, π_ref, π*, Q*, the prefix's V* and its credit."""
    rows = []
    for t in range(tc.LENGTH):
        for n, prefix in enumerate(tc.prefixes(t)):
            for a_i, a in enumerate(tc.TOKENS):
                rows.append(
                    {
                        "prefix": prefix or "x",
                        "token": a,
                        "depth": t + 1,
                        "pi_ref": tc.PI_REF[a_i],
                        "pi_star": float(np.exp(tree.log_pi[t][n, a_i])),
                        "Q_star": float(tree.q[t][n, a_i]),
                        "V_star_prefix": float(tree.values[t][n]),
                        "credit": float(tree.credit[t][n, a_i]),
                    }
                )
    return pd.DataFrame(rows)


def numbers(tree, seq, rule: str, kappa: float) -> None:
    """The details: the 27 responses as a table, and both tables as CSV downloads."""
    responses = responses_frame(tree, seq, rule)
    layout.table(responses, digits=4, height=260)
    name = f"kappa_{controls.fmt_number(kappa)}_{rule}"
    layout.csv_download(
        responses,
        f"token_credit_responses_{name}.csv",
        label="Download the 27 responses (CSV)",
        key="token-credit-resp-csv",
    )
    layout.csv_download(
        tokens_frame(tree),
        f"token_credit_tokens_{name}.csv",
        label="Download every token of the tree (CSV)",
        key="token-credit-nodes-csv",
    )
