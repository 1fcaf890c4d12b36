"""Drawing shared by the three tilt pages (Figures 12.2, 12.3, 12.5): the book's model,
the policy panel (reference outline, optimum bars) and the reward–KL frontier panel."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from klrl_core import best_of_n, model, tilt
from klrl_app.plots import COLORS, figure

KL_AXIS_MAX = 11.5  # the frontier tends to log(1/pi0(top)) = 10.96 nats


class Book(NamedTuple):
    r: np.ndarray
    log_pi0: np.ndarray
    pi0: np.ndarray
    r_true: np.ndarray
    kappas: np.ndarray
    frontier: tilt.Tilt
    reward_pi0: float
    true_pi0: float
    frontier_true: np.ndarray         # E_{pi*}[r_true] along the frontier (Figure 12.5)
    peak_kappa: float                 # where E_{pi*}[r_true] peaks
    peak: tilt.Tilt
    ladder_n: np.ndarray              # n = 1, 2, 4, ..., 2^17 (Figure 12.3)
    ladder: best_of_n.BestOfN


@st.cache_resource
def book() -> Book:
    """The stated model and everything that does not depend on a slider: computed once,
    shared read-only by every session."""
    r = model.rewards()
    log_pi0 = model.log_reference(r)
    r_true = model.true_reward(r)
    kappas = tilt.kappa_grid()
    pi0 = np.exp(log_pi0)
    front = tilt.frontier(log_pi0, r, kappas)
    peak_kappa, peak = tilt.true_reward_peak(log_pi0, r, r_true)
    ladder_n = best_of_n.powers_of_two()
    return Book(r, log_pi0, pi0, r_true, kappas, front, float(pi0 @ r), float(pi0 @ r_true),
                front.pi @ r_true, peak_kappa, peak, ladder_n,
                best_of_n.best_of_n(log_pi0, r, ladder_n))


def policy_panel(b: Book, pi_star: np.ndarray, y_max: float | None = None,
                 height: int = 380) -> go.Figure:
    """pi* as blue bars over the reference pi0 drawn as a violet outline."""
    width = 0.8 * (b.r[1] - b.r[0])
    fig = figure("response, by its reward r", "probability",
                 height=height, barmode="overlay")
    fig.add_bar(x=b.r, y=pi_star, width=width, name="optimum π*",
                marker=dict(color=COLORS["optimum"], line=dict(width=0)),
                hovertemplate="r = %{x:.3f}<br>π* = %{y:.4f}<extra></extra>")
    fig.add_bar(x=b.r, y=b.pi0, width=width, name="reference π₀",
                marker=dict(color="rgba(0,0,0,0)", line=dict(color=COLORS["reference"], width=2)),
                hovertemplate="r = %{x:.3f}<br>π₀ = %{y:.4f}<extra></extra>")
    fig.update_xaxes(range=[-0.04, 1.04])
    top = y_max if y_max is not None else 1.08 * max(float(pi_star.max()), float(b.pi0.max()))
    fig.update_yaxes(range=[0, top], rangemode="tozero")
    return fig


def frontier_panel(b: Book, kl: float, expected: float, kappa: float,
                   height: int = 380) -> go.Figure:
    """Expected reward against KL for every kappa, the current optimum marked (Section 12.3.2)."""
    fig = figure("KL from π₀ (nats)", "expected reward", height=height)
    fig.add_scatter(x=b.frontier.kl, y=b.frontier.expected, mode="lines", name="π* as κ varies",
                    line=dict(color=COLORS["optimum"], width=2.5),
                    hovertemplate="KL %{x:.2f} nats<br>E[r] %{y:.3f}<extra></extra>")
    fig.add_hline(y=b.reward_pi0, line=dict(color=COLORS["reference"], dash="dot", width=2),
                  annotation_text="π₀", annotation_position="bottom right",
                  annotation_font_color=COLORS["reference"])
    fig.add_scatter(x=[kl], y=[expected], mode="markers", name=f"κ = {kappa:.4g}",
                    marker=dict(color=COLORS["optimum"], size=13,
                                line=dict(color="white", width=2)),
                    hovertemplate="KL %{x:.2f} nats<br>E[r] %{y:.3f}<extra>current π*</extra>")
    fig.update_xaxes(range=[-0.2, KL_AXIS_MAX])
    fig.update_yaxes(range=[0.2, 1.04])
    return fig


def add_best_of_n_dots(fig: go.Figure, b: Book, pi_n: np.ndarray, n: int) -> None:
    """Best-of-n pi_n as green dots over the policy panel (Figure 12.3)."""
    fig.add_scatter(x=b.r, y=pi_n, mode="markers", name=f"best-of-{n:,} πₙ",
                    marker=dict(color=COLORS["best_of_n"], size=9,
                                line=dict(color="white", width=1)),
                    hovertemplate="r = %{x:.3f}<br>πₙ = %{y:.4f}<extra></extra>")
    top = 1.08 * max(float(pi_n.max()), float(fig.layout.yaxis.range[1]) / 1.08)
    fig.update_yaxes(range=[0, top])


def add_best_of_n_ladder(fig: go.Figure, b: Book, n: int, kl: float, expected: float) -> None:
    """Best-of-n at n = 1, 2, 4, ..., 2^17 under the frontier, and the current n."""
    labels = [f"n = 2^{k} = {int(v):,}" for k, v in enumerate(b.ladder_n)]
    fig.add_scatter(x=b.ladder.kl, y=b.ladder.expected, mode="markers",
                    name="best-of-n, n = 1, 2, 4, … 2¹⁷", text=labels,
                    marker=dict(color=COLORS["best_of_n"], size=8),
                    hovertemplate="%{text}<br>KL %{x:.2f} nats<br>E[r] %{y:.3f}<extra></extra>")
    fig.add_scatter(x=[kl], y=[expected], mode="markers", name=f"best-of-{n:,}",
                    marker=dict(color=COLORS["best_of_n"], size=14, symbol="diamond",
                                line=dict(color="white", width=2)),
                    hovertemplate="KL %{x:.2f} nats<br>E[r] %{y:.3f}<extra>current n</extra>")


def add_reward_strip(fig: go.Figure, b: Book) -> None:
    """A strip under the policy bars: proxy r (orange dots) and true r* (dashed aqua), per
    response (Figure 12.5). The bars keep the top of the figure, the strip the bottom."""
    fig.add_scatter(x=b.r, y=b.r, mode="markers", name="proxy reward r", yaxis="y2",
                    marker=dict(color=COLORS["proxy"], size=6),
                    hovertemplate="r = %{y:.3f}<extra>proxy</extra>")
    fig.add_scatter(x=b.r, y=b.r_true, mode="lines", name="true reward r*", yaxis="y2",
                    line=dict(color=COLORS["true"], dash="dash", width=2.5),
                    hovertemplate="r* = %{y:.3f}<extra>true</extra>")
    fig.update_layout(yaxis=dict(domain=[0.36, 1.0]),
                      yaxis2=dict(domain=[0.0, 0.26], range=[-0.08, 1.08], title_text="reward",
                                  tickvals=[0, 0.5, 1], zeroline=False, automargin=True),
                      xaxis=dict(anchor="y2"))
