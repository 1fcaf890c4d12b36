"""The groups page's figures (Figure 12.4, Section 12.7.1): the chance that a group has signal
against p, and where a group's advantages fall (a stem per advantage up to K_STEMS, else the
likeliest mixed group's advantages against p), each with its text alternative; and the
tables behind them. Numbers come from klrl_core.groups; pages/groups.py wires them."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from klrl_app import controls, fmt, lru
from klrl_app.plots import COLORS, Chart
from klrl_core import groups

OTHER_KS = (2, 64)  # the reference curves, each with its own dash
OTHER_DASH = {2: "dash", 64: "dot"}
P_GRID = np.linspace(0.0, 1.0, 401)
# Above this group size the stems of one p bunch into two narrow clumps on axes that must hold
# every p (issue 31): the second panel then draws each side's advantage against p instead.
K_STEMS = 64
P_SLIDER = np.round(np.linspace(0.01, 0.99, 99), 2)  # the slider's range, where c* is defined
KIND_STYLE = {
    groups.KIND_CORRECT: ("correct responses", COLORS["correct"]),
    groups.KIND_INCORRECT: ("incorrect responses", COLORS["incorrect"]),
    groups.KIND_NO_SIGNAL: ("responses in groups with no signal", COLORS["neutral"]),
}


def p_text(p: float) -> str:
    """p as the slider shows it, or in full when a link put it between the slider's stops."""
    return fmt.fixed(p, 2) if round(p, 2) == p else controls.fmt_number(p)


def signal_curves(k: int) -> dict[int, np.ndarray]:
    """The chance of signal on P_GRID for k and each of OTHER_KS."""
    return {kk: groups.signal_probability(P_GRID, kk) for kk in (k, *OTHER_KS)}


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


@dataclass(frozen=True)
class Figures:
    """Both panels at group size k, on axes that stay put at every stop of p: ``lo``, ``hi``
    and ``top_share`` fix them (the page's setting of the stop table)."""

    k: int
    curves: dict[int, np.ndarray]
    lo: float
    hi: float
    top_share: float

    @classmethod
    def at(cls, k: int, p: float, p_stops) -> Figures:
        """The panels for k, with room for p (a linked value may lie between ``p_stops``)."""
        if k <= K_STEMS:
            lo, hi, top = stem_ranges(k, tuple(sorted({*map(float, p_stops), p})))
            return cls(k, signal_curves(k), lo, hi, top)
        right, wrong = likeliest_curves(k)
        # Room for the marks at p itself when it lies between the slider's stops.
        right_p, wrong_p = groups.mixed_group_advantages(groups.most_likely_mixed_group(p, k), k)
        return cls(
            k,
            signal_curves(k),
            min(float(wrong.min()), float(wrong_p)),
            max(float(right.max()), float(right_p)),
            0.0,
        )

    @property
    def stems(self) -> bool:
        return self.k <= K_STEMS

    @property
    def setting(self) -> tuple:
        return (self.k, self.lo, self.hi, self.top_share)

    def charts(self, p: float) -> dict[str, tuple[Chart, str]]:
        """Both panels at solve rate p (closed forms)."""
        second = self.stems_chart(p) if self.stems else self.advantage_curves_chart(p)
        return {"groups-signal": self.signal_chart(p), "groups-advantages": second}

    def signal_chart(self, p: float) -> tuple[Chart, str]:
        k, curves = self.k, self.curves
        signal = float(groups.signal_probability(p, k))
        chance = fmt.prob(signal, 2, max_places=3, below_one=True)
        others = [kk for kk in OTHER_KS if kk != k]
        # A right margin for the last tick label (1.0), which the large type of the
        # presentation view would otherwise push out; a standoff keeps the y title clear of
        # the tick labels.
        chart = Chart(
            "solve rate p of the prompt",
            "chance a group has signal",
            height=400,
            margin={"r": 24},
            yaxis={"title": {"standoff": 12}},
        )
        chart.add(
            x=P_GRID,
            y=curves[k],
            mode="lines",
            name=f"k = {k:,}",
            line={"color": COLORS["optimum"], "width": 3},
            hovertemplate=f"k = {k:,}: p = %{{x:.3f}}, signal %{{y:.3f}}<extra></extra>",
        )
        # The other group sizes are named in the legend, each with its own dash, not by notes
        # on the plot (which would cross the curves or the tick labels).
        for kk in others:
            chart.add(
                x=P_GRID,
                y=curves[kk],
                mode="lines",
                name=f"k = {kk}",
                line={"color": COLORS["neutral"], "width": 2, "dash": OTHER_DASH[kk]},
                hovertemplate=f"k = {kk}: p = %{{x:.3f}}, signal %{{y:.3f}}<extra></extra>",
            )
        chart.add(
            x=[p],
            y=[signal],
            mode="markers",
            name="this prompt",
            marker={"color": COLORS["optimum"], "size": 12, "line": {"width": 2, "color": "white"}},
            hovertemplate=f"p = {p_text(p)}, k = {k:,}: signal {chance}<extra></extra>",
        )
        chart.vline(p, COLORS["optimum"])
        # Tick values given outright: with dtick the last one, 1.0, fell a hair outside the
        # range. A little room left of p = 0 and below 0: the two "0.0" tick labels at the
        # origin overlapped on a phone (issue 31).
        chart.update(
            xaxis={
                "range": [-0.035, 1],
                "tickmode": "array",
                "tickformat": ".1f",
                "tickvals": [0.0, 0.2, 0.4, 0.6, 0.8, 1.0],
            },
            yaxis={"range": [-0.045, 1.05], "dtick": 0.2, "tickformat": ".1f"},
        )
        return chart, (
            f"Line chart of the chance that a group has signal against the solve rate p, for "
            f"k = {k:,} (solid) and {' and '.join(f'k = {kk}' for kk in others)} (grey, dashed "
            f"and dotted); every curve is 0 at p = 0 and p = 1. The marked prompt, "
            f"p = {p_text(p)}, has signal with probability {chance} at k = {k:,}."
        )

    def stems_chart(self, p: float) -> tuple[Chart, str]:
        """The expected share of responses at each advantage, a stem each."""
        k = self.k
        dist = groups.advantage_distribution(p, k)
        chart = Chart(
            "advantage", "share of responses", height=400, yaxis={"title": {"standoff": 12}}
        )
        for kind, (name, color) in KIND_STYLE.items():
            sel = dist.kind == kind
            v, s, c = dist.value[sel], dist.share[sel], dist.n_correct[sel]
            if v.size == 0:
                continue
            gap = np.full(v.size, np.nan)
            chart.add(  # the stems: vertical segments from 0 to the share
                x=np.column_stack([v, v, gap]).ravel(),
                y=np.column_stack([0 * s, s, gap]).ravel(),
                mode="lines",
                line={"color": color, "width": 2.5},
                legendgroup=kind,
                showlegend=False,
                hoverinfo="skip",
            )
            if kind == groups.KIND_NO_SIGNAL:
                hover = "no signal (all right or all wrong): %{y:.1%} at advantage 0<extra></extra>"
                custom = None
            else:
                hover = (
                    f"{kind}, %{{customdata}} of {k:,} correct: advantage %{{x:.2f}}, "
                    f"%{{y:.2%}} of responses<extra></extra>"
                )
                custom = c
            chart.add(
                x=v,
                y=s,
                mode="markers",
                name=name,
                legendgroup=kind,
                customdata=custom,
                marker={"color": color, "size": 7 if k <= 64 else 4},
                hovertemplate=hover,
            )
        # The stems one can see at any p, and the largest share at any p: the same axes at
        # every stop (tiny shares far out would squash the plot).
        pad_x = 0.08 * max(self.hi - self.lo, 1.0)
        top = self.top_share
        digits = 0 if top >= 0.1 else 1 if top >= 0.01 else 2 if top >= 0.001 else 3
        chart.update(
            xaxis={"range": [self.lo - pad_x, self.hi + pad_x]},
            yaxis={"range": [0.0, 1.05 * top], "tickformat": f".{digits}%"},
        )
        c_star = groups.most_likely_mixed_group(p, k)
        plus, minus = (
            fmt.fixed(float(a), 2, signed=True) for a in groups.mixed_group_advantages(c_star, k)
        )
        no_signal = fmt.pct(float(groups.no_signal_probability(p, k)), max_places=1, positive=True)
        return chart, (
            f"Stem chart of the expected share of responses at each advantage, "
            f"p = {p_text(p)}, k = {k:,}: {no_signal} in the grey no-signal stem at 0; in the "
            f"likeliest mixed group, {c_star:,} of {k:,} correct, each correct response gets "
            f"{plus} and each incorrect one {minus}."
        )

    def advantage_curves_chart(self, p: float) -> tuple[Chart, str]:
        """The second panel for large k: the advantage each correct and each incorrect
        response gets in the likeliest mixed group, against p, with this prompt marked."""
        k = self.k
        c_star = groups.most_likely_mixed_group(p, k)
        adv_right, adv_wrong = (float(a) for a in groups.mixed_group_advantages(c_star, k))
        chart = Chart(
            "solve rate p of the prompt",
            "advantage in the likeliest mixed group",
            height=400,
            margin={"r": 24},
            yaxis={"title": {"standoff": 12}},
        )
        curve_right, curve_wrong = likeliest_curves(k)
        for curve, here, kind in (
            (curve_right, adv_right, groups.KIND_CORRECT),
            (curve_wrong, adv_wrong, groups.KIND_INCORRECT),
        ):
            name, color = KIND_STYLE[kind]
            chart.add(
                x=P_SLIDER,
                y=curve,
                mode="lines",
                name=name,
                legendgroup=kind,
                line={"color": color, "width": 3},
                hovertemplate=f"{kind}, p = %{{x:.2f}}: advantage %{{y:.2f}}<extra></extra>",
            )
            chart.add(
                x=[p],
                y=[here],
                mode="markers",
                legendgroup=kind,
                showlegend=False,
                marker={"color": color, "size": 12, "line": {"width": 2, "color": "white"}},
                hovertemplate=f"p = {p_text(p)}, {c_star:,} of {k:,} correct: {kind} "
                f"advantage {fmt.fixed(here, 2, signed=True)}"
                f"<extra></extra>",
            )
        chart.vline(p, COLORS["optimum"])
        pad_y = 0.06 * (self.hi - self.lo)
        chart.update(
            xaxis={
                "range": [0, 1],
                "tickmode": "array",
                "tickformat": ".1f",
                "tickvals": [0.0, 0.2, 0.4, 0.6, 0.8, 1.0],
            },
            yaxis={"range": [self.lo - pad_y, self.hi + pad_y]},
        )
        chart.hline(0, COLORS["neutral"], dash="solid")
        return chart, (
            f"Line chart of the advantage each response gets in the likeliest mixed group of "
            f"{k:,}, against the solve rate p from 0.01 to 0.99: correct responses above 0, "
            f"incorrect ones below. At the marked prompt, p = {p_text(p)}, the likeliest mixed "
            f"group has {c_star:,} of {k:,} correct: each correct response gets "
            f"{fmt.fixed(adv_right, 2, signed=True)} and each incorrect one "
            f"{fmt.fixed(adv_wrong, 2, signed=True)}."
        )


# ------------------------------------------------------------------------------ the tables
def curves_frame(curves: dict[int, np.ndarray]) -> pd.DataFrame:
    """The first panel's curves, one column per group size."""
    df = pd.DataFrame({"p": P_GRID})
    for kk in sorted(curves):
        df[f"signal probability k={kk}"] = curves[kk]
    return df


def stems_frame(p: float, k: int) -> pd.DataFrame:
    """Every advantage a response can get at p and k, with its expected share."""
    dist = groups.advantage_distribution(p, k)
    return pd.DataFrame(
        {
            "advantage": dist.value,
            "share of responses": dist.share,
            "kind": dist.kind,
            "number correct in group": np.where(
                dist.n_correct < 0, "0 or k", dist.n_correct.astype(str)
            ),
        }
    ).sort_values("advantage")


def responses_frame(grades: np.ndarray) -> pd.DataFrame:
    """One group's grades and each response's advantage under the three normalisations."""
    df = pd.DataFrame(
        {"response": [str(i) for i in range(1, grades.size + 1)], "grade": grades.astype(int)}
    )
    for conv in groups.CONVENTIONS:
        df[groups.CONVENTION_LABELS[conv]] = groups.group_advantages(grades, conv)
    return df


def by_grade_frame(per_response: pd.DataFrame, grades: np.ndarray) -> pd.DataFrame:
    """``responses_frame`` with one row per grade (every response with the same grade gets the
    same advantage) and the number of responses with it."""
    by_grade = (
        per_response.drop(columns="response")
        .drop_duplicates("grade")
        .sort_values("grade", ascending=False)
    )
    by_grade.insert(1, "responses", [int(np.sum(grades == g)) for g in by_grade["grade"]])
    by_grade["grade"] = by_grade["grade"].map({1: "1 (correct)", 0: "0 (wrong)"})
    return by_grade
