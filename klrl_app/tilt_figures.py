"""Drawing shared by the three tilt pages (Figures 12.2, 12.3, 12.5): the book's model,
the policy panel (reference outline, optimum bars) and the reward–KL frontier panel."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import streamlit as st

from klrl_core import best_of_n, model, tilt
from klrl_app.controls import kappa_text
from klrl_app.plots import COLORS, Chart

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
                 height: int = 380) -> Chart:
    """pi* as blue bars over the reference pi0 drawn as a violet outline."""
    width = 0.8 * (b.r[1] - b.r[0])
    top = y_max if y_max is not None else 1.08 * max(float(pi_star.max()), float(b.pi0.max()))
    c = Chart("response, by its reward r", "probability", height=height, barmode="overlay")
    c.add("bar", x=b.r, y=pi_star, width=width, name="optimum π*",
          marker={"color": COLORS["optimum"], "line": {"width": 0}},
          hovertemplate="r = %{x:.3f}<br>π* = %{y:.4f}<extra></extra>")
    c.add("bar", x=b.r, y=b.pi0, width=width, name="reference π₀",
          marker={"color": "rgba(0,0,0,0)", "line": {"color": COLORS["reference"], "width": 2}},
          hovertemplate="r = %{x:.3f}<br>π₀ = %{y:.4f}<extra></extra>")
    return c.update(xaxis={"range": [-0.04, 1.04]}, yaxis={"range": [0, top]})


def frontier_panel(b: Book, kl: float, expected: float, kappa: float,
                   height: int = 380) -> Chart:
    """Expected reward against KL for every kappa, the current optimum marked (Section 12.3.2)."""
    c = Chart("KL from π₀ (nats)", "expected reward", height=height)
    c.add(x=b.frontier.kl, y=b.frontier.expected, mode="lines", name="π* as κ varies",
          line={"color": COLORS["optimum"], "width": 2.5},
          hovertemplate="KL %{x:.2f} nats<br>E[r] %{y:.3f}<extra></extra>")
    c.hline(b.reward_pi0, COLORS["reference"], label="π₀")
    c.add(x=[kl], y=[expected], mode="markers", name=f"π* at κ = {kappa_text(kappa)}",
          marker={"color": "rgba(0,0,0,0)", "size": 19,
                  "line": {"color": COLORS["optimum"], "width": 3.5}},
          hovertemplate="KL %{x:.2f} nats<br>E[r] %{y:.3f}<extra>current π*</extra>")
    return c.update(xaxis={"range": [-0.2, KL_AXIS_MAX]}, yaxis={"range": [0.2, 1.04]})


def add_best_of_n_dots(c: Chart, b: Book, pi_n: np.ndarray, n: int) -> None:
    """Best-of-n pi_n as green dots over the policy panel (Figure 12.3)."""
    c.add(x=b.r, y=pi_n, mode="markers", name=f"best-of-{n:,} πₙ",
          marker={"color": COLORS["best_of_n"], "size": 9, "line": {"color": "white", "width": 1}},
          hovertemplate="r = %{x:.3f}<br>πₙ = %{y:.4f}<extra></extra>")
    top = max(float(c.layout["yaxis"]["range"][1]), 1.08 * float(pi_n.max()))
    c.update(yaxis={"range": [0, top]})


def add_best_of_n_ladder(c: Chart, b: Book, n: int, kl: float, expected: float) -> None:
    """Best-of-n at n = 1, 2, 4, ..., 2^17 under the frontier, and the current n."""
    labels = [f"n = 2^{k} = {int(v):,}" for k, v in enumerate(b.ladder_n)]
    c.add(x=b.ladder.kl, y=b.ladder.expected, mode="markers",
          name="best-of-n, n = 1, 2, 4, … 2¹⁷", text=labels,
          marker={"color": COLORS["best_of_n"], "size": 8},
          hovertemplate="%{text}<br>KL %{x:.2f} nats<br>E[r] %{y:.3f}<extra></extra>")
    c.add(x=[kl], y=[expected], mode="markers", name=f"best-of-{n:,}",
          marker={"color": COLORS["best_of_n"], "size": 14, "symbol": "diamond",
                  "line": {"color": "white", "width": 2}},
          hovertemplate="KL %{x:.2f} nats<br>E[r] %{y:.3f}<extra>current n</extra>")


def add_reward_strip(c: Chart, b: Book) -> None:
    """A strip under the policy bars: proxy r (orange dots) and true r* (dashed aqua), per
    response (Figure 12.5). The bars keep the top of the figure, the strip the bottom."""
    c.add(x=b.r, y=b.r, mode="markers", name="proxy reward r", yaxis="y2",
          marker={"color": COLORS["proxy"], "size": 6},
          hovertemplate="r = %{y:.3f}<extra>proxy</extra>")
    c.add(x=b.r, y=b.r_true, mode="lines", name="true reward r*", yaxis="y2",
          line={"color": COLORS["true"], "dash": "dash", "width": 2.5},
          hovertemplate="r* = %{y:.3f}<extra>true</extra>")
    c.update(yaxis={"domain": [0.36, 1.0]},
             yaxis2={"domain": [0.0, 0.26], "range": [-0.08, 1.08], "title": {"text": "reward"},
                     "tickvals": [0, 0.5, 1], "zeroline": False, "automargin": True},
             xaxis={"anchor": "y2"})
