"""Drawing shared by the three tilt pages (Figures 12.2, 12.3, 12.5): the book's model,
the policy panel (reference outline, optimum bars) and the reward–KL frontier panel."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from klrl_core import model, tilt
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


@st.cache_resource
def book() -> Book:
    """The stated model and its frontier: computed once, shared by every session."""
    r = model.rewards()
    log_pi0 = model.log_reference(r)
    kappas = tilt.kappa_grid()
    pi0 = np.exp(log_pi0)
    return Book(r, log_pi0, pi0, model.true_reward(r), kappas,
                tilt.frontier(log_pi0, r, kappas), float(pi0 @ r))


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
