"""The normalization page's figures (Section 12.7.1, Exercise 28.4): the weight each solve
rate p receives under each normalisation, and the objective each one climbs, with their text
alternatives. Numbers come from klrl_core.normalization; pages/normalization.py wires them."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from klrl_app import fmt, lru
from klrl_app.plots import COLORS, Chart
from klrl_core import groups, normalization as core

K_STOPS = [2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 48, 64, 96, 128, 192, 256]
K_MAX = 256  # a 401-point curve stays under ~20 ms up to here (klrl_core notes)
# Solve rates spaced like cos: dense near p = 0 and 1, where the arcsin law runs off and the
# exact weight bends toward its ceiling; p = 1/2 is the middle point.
P_GRID = 0.5 * (1.0 - np.cos(np.pi * np.linspace(0.0, 1.0, 401)))
FLAT = 1e-9  # relative spread below this: the weight is the same at every p
NEAR = 0.10  # "within 10% of the arcsin law"
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
    arcsin = np.where(np.isfinite(c.arcsin), c.arcsin, np.nan)  # a gap, not inf, at the ends
    return {
        "std": c.std,
        "std_unbiased": c.std_unbiased,
        "arcsin": arcsin,
        "centred": c.centred,
        "signal": c.signal,
        "obj_std": core.objective_climbed(P_GRID, c.std),
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


LEGEND_CURVES = [
    ("std", STD_NAME, STD_COLOR, 3, "solid"),
    ("arcsin", ARCSIN_NAME, ARCSIN_COLOR, 2.5, "dash"),
    ("centred", CENTRED_NAME, CENTRED_COLOR, 2.5, "dot"),
]
# One y range per panel for every k: the ceiling √(k − 1) and the objectives' ends grow with
# k (checked at every k in the tests), so the largest k sets them and nothing rescales while
# k is dragged.
_top = curves(K_MAX)
Y_TOP = max(1.3 * math.sqrt(K_MAX - 1), 5.2 * core.centring_factor(K_MAX))
# The weights on a log axis (review item 12): on a linear one to Y_TOP the exact weight at small
# k (1.86–2.65 at k = 8) was a flat line in the bottom tenth; on a log one it sits mid-panel and
# its gap to the arcsin law reads as a ratio, the "within 10%" the text speaks of. The bottom
# sits under mean-centring's smallest constant, (k − 1)/k = ½ at k = 2.
Y_BOTTOM = 0.8 * core.centring_factor(min(K_STOPS))
Y_LOG = [math.log10(Y_BOTTOM), math.log10(Y_TOP)]
Y_TICKS = [v for v in (0.5, 1, 2, 5, 10, 20) if Y_BOTTOM <= v <= Y_TOP]
# Tick labels off the origin: the y axis's "0" sat on the x axis's "0.0" (review item 15).
CLEAR_ORIGIN = {"ticklabelstandoff": 10}
OBJ_TOP = 1.05 * max(float(np.max(_top["obj_" + name])) for name in ("std", "arcsin", "centred"))
P_AXIS = {
    "range": [0, 1],
    "tickmode": "array",
    "tickformat": ".1f",
    "tickvals": [0.0, 0.2, 0.4, 0.6, 0.8, 1.0],
}


def weights_chart(kk: int, n: dict, p: float, pt: str) -> tuple[Chart, str]:
    """The weights against p at group size kk, p marked (pt: p as the texts write it)."""
    cv = curves(kk)
    w_p, a_p, factor, sat, w_half = n["w_p"], n["a_p"], n["factor"], n["sat"], n["w_half"]
    flat = n["fav_max"] - 1.0 < FLAT
    c = Chart(
        "solve rate p of the prompt",
        "weight w (expected update = w · ∇p)",
        height=400,
        margin={"r": 24},
        yaxis={"title": {"standoff": 10}},
    )
    for name, label, color, width, dash in LEGEND_CURVES:
        c.add(
            x=P_GRID,
            y=cv[name],
            mode="lines",
            name=label,
            line={"color": color, "width": width, "dash": dash},
            hovertemplate=f"{label}<br>p = %{{x:.3f}}: w = %{{y:.3f}}<extra></extra>",
        )
    c.add(
        x=[p, p, p],
        y=[w_p, a_p, factor],
        mode="markers",
        name=f"p = {pt}",
        marker={
            "size": 11,
            "color": [STD_COLOR, ARCSIN_COLOR, CENTRED_COLOR],
            "line": {"width": 2, "color": "white"},
        },
        hovertemplate=f"p = {pt}: w = %{{y:.3f}}<extra></extra>",
        showlegend=False,
    )
    c.vline(p, COLORS["neutral"])
    if not flat:
        log_sat = math.log10(sat)  # a log axis places annotations by log10
        c.layout["shapes"].append(
            {
                "type": "line",
                "xref": "x domain",
                "x0": 0,
                "x1": 1,
                "yref": "y",
                "y0": sat,
                "y1": sat,
                "line": {"color": STD_COLOR, "dash": "dot", "width": 1.5},
            }
        )
        c.layout["annotations"].append(
            {
                "xref": "x",
                "x": 0.5,
                "yref": "y",
                "y": log_sat,
                "yanchor": "bottom",
                "text": f"ceiling √(k − 1) = {fmt.fixed(sat, 2)}",
                "showarrow": False,
                "font": {"color": STD_COLOR},
            }
        )
    c.update(
        xaxis=P_AXIS,
        yaxis={
            "type": "log",
            "range": Y_LOG,
            "tickvals": Y_TICKS,
            "ticktext": [fmt.short(v) for v in Y_TICKS],
            **CLEAR_ORIGIN,
        },
    )
    return c, (
        f"Line chart, on a logarithmic weight axis, of the weight each solve rate p receives at "
        f"k = {kk:,}: the exact weight "
        f"under division by the group's standard deviation, "
        + (
            f"flat at {fmt.fixed(w_half, 2)}, "
            if flat
            else f"lowest at p = ½ ({fmt.fixed(w_half, 2)}) and rising to √(k − 1) = {fmt.fixed(sat, 2)} "
            f"at both ends, "
        )
        + f"the arcsin law ((k − 1)/k)/√(p(1 − p)), which runs off the top at both ends, and "
        f"mean-centring's constant {fmt.fixed(factor, 3)}. At the marked p = {pt}: "
        f"{fmt.fixed(w_p, 2)}, {fmt.fixed(a_p, 2)} and {fmt.fixed(factor, 3)}."
    )


def objectives_chart(kk: int, factor: float, p: float, pt: str) -> tuple[Chart, str]:
    """The objective each normalisation climbs against p at group size kk, p marked."""
    cv = curves(kk)
    obj_p = {
        "std": float(np.interp(p, P_GRID, cv["obj_std"])),
        "arcsin": factor * float(core.objective_arcsin(p)),
        "centred": factor * p,
    }
    o = Chart(
        "solve rate p of the prompt",
        "objective the update climbs",
        height=400,
        margin={"r": 24},
        yaxis={"title": {"standoff": 10}},
    )
    obj_names = {
        "std": "∫w dp, ÷ group std",
        "arcsin": f"{(kk - 1)}/{kk} · 2·arcsin√p",
        "centred": f"{(kk - 1)}/{kk} · p",
    }
    for name, _label, color, width, dash in LEGEND_CURVES:
        o.add(
            x=P_GRID,
            y=cv["obj_" + name],
            mode="lines",
            name=obj_names[name],
            line={"color": color, "width": width, "dash": dash},
            hovertemplate=f"{obj_names[name]}<br>p = %{{x:.3f}}: %{{y:.3f}}<extra></extra>",
        )
    o.add(
        x=[p, p, p],
        y=[obj_p["std"], obj_p["arcsin"], obj_p["centred"]],
        mode="markers",
        marker={
            "size": 11,
            "color": [STD_COLOR, ARCSIN_COLOR, CENTRED_COLOR],
            "line": {"width": 2, "color": "white"},
        },
        showlegend=False,
        hovertemplate=f"p = {pt}: %{{y:.3f}}<extra></extra>",
    )
    o.vline(p, COLORS["neutral"])
    o.update(xaxis=P_AXIS, yaxis={"range": [0, OBJ_TOP], **CLEAR_ORIGIN})
    return o, (
        f"Line chart of the objective each normalisation climbs against p at k = {kk:,}, each "
        f"curve the running integral of the left panel's weight: mean-centring climbs "
        f"{(kk - 1)}/{kk}·p (a straight line to {fmt.fixed(factor, 3)}), the arcsin law "
        f"{(kk - 1)}/{kk}·2·arcsin√p (to {fmt.fixed(factor * np.pi, 2)}, steepest at the ends), "
        f"and the "
        f"exact group-std weight's integral (to {fmt.fixed(float(cv['obj_std'][-1]), 2)})."
    )


def curves_frame(k: int) -> pd.DataFrame:
    """The curves at group size k, one row per p of the grid (the CSV: exact values)."""
    cv = curves(k)
    return pd.DataFrame(
        {
            "p": P_GRID,
            "weight, divide by group std over k (exact)": cv["std"],
            "weight, divide by group std over k-1 (exact)": cv["std_unbiased"],
            "weight, arcsin law (k-1)/k/sqrt(p(1-p))": cv["arcsin"],
            "weight, mean-centred (k-1)/k": cv["centred"],
            "objective, divide by group std (integral of weight)": cv["obj_std"],
            "objective, (k-1)/k * 2 arcsin sqrt(p)": cv["obj_arcsin"],
            "objective, (k-1)/k * p": cv["obj_centred"],
            "chance a group has signal": cv["signal"],
        }
    )


def leave_one_out_frame(p: float, k: int) -> tuple[pd.DataFrame, int, np.ndarray]:
    """Exercise 28.4(b) on the likeliest mixed group at (p, k): one row per grade, the
    number correct c*, and the group's grades."""
    c_star = groups.most_likely_mixed_group(p, k)
    grades = np.array([1.0] * c_star + [0.0] * (k - c_star))
    loo = core.leave_one_out(grades)
    rows = []
    for grade in (1.0, 0.0):
        i = int(np.flatnonzero(grades == grade)[0])
        rows.append(
            {
                "grade": "1 (correct)" if grade else "0 (wrong)",
                "answers": int(np.sum(grades == grade)),
                "b_i, mean of the others": float(loo.baseline[i]),
                "r_i − b_i": float(loo.loo[i]),
                "r_i − r̄": float(loo.centred[i]),
                f"{k - 1}/{k} · (r_i − b_i)": float(loo.factor * loo.loo[i]),
            }
        )
    return pd.DataFrame(rows), c_star, grades
