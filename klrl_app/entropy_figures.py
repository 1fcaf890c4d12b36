"""The entropy page's figures (chapter 28, "Entropy and exploration", Exercise 28.6): the
entropy against the step size η with its first-order line, the policy before and after one
step, and repeated steps with Cui et al.'s law fitted to them, each with its text alternative.
pages/entropy.py wires them."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from klrl_app import controls, fmt, layout
from klrl_app.plots import COLORS, Chart
from klrl_core import entropy as core, user_model

EXACT_COLOR, FIRST_COLOR = COLORS["optimum"], COLORS["accent"]
BEFORE_COLOR, AFTER_COLOR = COLORS["reference"], COLORS["optimum"]
FIT_COLOR = COLORS["proxy"]
MAX_ACTIONS = 12
MAX_ABS = 100.0  # logits and advantages: e^(eta t A) stays finite in log space anyway


# ------------------------------------------------------------------------ the policy's lists
def preset_texts(name: str) -> tuple[str, str]:
    """A preset's lists as the boxes show them (logits to three decimals)."""
    _, z, a = core.PRESETS[name]
    return user_model.to_text(np.round(z, 3)), user_model.to_text(a)


def why_text(why: ValueError) -> str:
    """A reason for a notice; the reader's own nan or inf is not echoed, where it would read
    as a computed one."""
    return re.sub(
        r"'[^']*(?:inf|nan)[^']*'",
        "a value that is not a finite number",
        str(why).rstrip("."),
        flags=re.IGNORECASE,
    )


def read_lists(logits_text: str, adv_text: str) -> tuple[np.ndarray, np.ndarray]:
    """The reader's logits and advantages; ValueError with a message worded for the reader."""
    z = user_model.parse_values(logits_text, "logits")
    a = user_model.parse_values(adv_text, "advantages")
    for name, v in (("logits", z), ("advantages", a)):
        if v.size < 2:
            raise ValueError(f"{name}: give at least two actions")
        if v.size > MAX_ACTIONS:
            raise ValueError(
                f"{name}: {v.size} values; this page takes at most {MAX_ACTIONS} actions"
            )
        if np.any(np.abs(v) > MAX_ABS):
            raise ValueError(
                f"{name}: values must lie between −{fmt.short(MAX_ABS)} and {fmt.short(MAX_ABS)}"
            )
    if z.size != a.size:
        raise ValueError(
            f"{z.size} logits but {a.size} advantages; give one advantage per "
            f"action, in the same order"
        )
    return z, a


# ------------------------------------------------------------------------------ the figures


def action_labels(adv: np.ndarray) -> list[str]:
    """Each action's name and advantage, for the bars' axis."""
    return [f"a{i + 1}<br>A = {controls.fmt_number(round(float(v), 4))}" for i, v in enumerate(adv)]


@dataclass(frozen=True)
class Figures:
    """Both figures of the policy softmax(z) with advantages ``adv``: the exact entropy
    ``curve`` on ``grid`` and the first-order line h0 − η·cov, which do not move with η."""

    grid: np.ndarray
    curve: np.ndarray
    z: np.ndarray
    adv: np.ndarray
    h0: float
    cov: float

    def charts(self, e: float, h_e: float, pred_e: float) -> dict[str, tuple[Chart, str]]:
        """Both figures at step size η = e, whose exact entropy is h_e and prediction pred_e."""
        y_top = 1.08 * max(float(np.log(self.z.size)), self.h0)  # the same at every η
        pi0 = np.exp(core.log_softmax(self.z))
        pi_e = np.exp(core.log_softmax(self.z + e * self.adv))
        return {
            "entropy-eta": eta_chart(
                e, h_e, pred_e, self.grid, self.curve, self.h0, self.cov, y_top
            ),
            "entropy-policy": policy_chart(e, pi0, pi_e, action_labels(self.adv)),
        }


def eta_chart(
    e: float,
    h_e: float,
    pred_e: float,
    grid: np.ndarray,
    curve: np.ndarray,
    h0: float,
    cov: float,
    y_top: float,
) -> tuple[Chart, str]:
    """Entropy against η on ``grid`` (exact ``curve`` and the line h0 − η·cov, which do not
    move with η), the step η = e marked at its exact entropy h_e and prediction pred_e."""
    e_text = fmt.fixed(e, 6, trim=True)
    eta_hi = float(grid[-1])
    # ticklabelstandoff: the y axis's "0" sat on the x axis's "0" (review item 15)
    c = Chart(
        "step size η",
        "entropy H (nats)",
        height=400,
        margin={"r": 24},
        yaxis={"title": {"standoff": 10}, "ticklabelstandoff": 10},
    )
    c.add(
        x=grid,
        y=curve,
        mode="lines",
        name="exact H(η)",
        line={"color": EXACT_COLOR, "width": 3},
        hovertemplate="η = %{x:.2f}: H = %{y:.3f} nats<extra></extra>",
    )
    c.add(
        x=grid,
        y=h0 - grid * cov,
        mode="lines",
        name="first order H(0) − η·Cov",
        line={"color": FIRST_COLOR, "width": 2.5, "dash": "dash"},
        hovertemplate="η = %{x:.2f}: first order %{y:.3f} nats<extra></extra>",
    )
    c.add(
        x=[e, e],
        y=[h_e, pred_e],
        mode="markers",
        showlegend=False,
        marker={
            "size": 11,
            "color": [EXACT_COLOR, FIRST_COLOR],
            "line": {"width": 2, "color": "white"},
        },
        hovertemplate=f"η = {e_text}: %{{y:.3f}} nats<extra></extra>",
    )
    c.vline(e, COLORS["neutral"])
    c.update(xaxis={"range": [0, eta_hi]}, yaxis={"range": [0, y_top]})
    return c, (
        f"Line chart of the policy's entropy against the step size η from 0 to "
        f"{fmt.short(eta_hi)}: the exact H(η), starting at {fmt.fixed(h0, 3)} nats, and the "
        f"first-order line H(0) − η·Cov "
        f"with slope {fmt.fixed(-cov, 3, signed=True)}. At η = {e_text} the exact entropy is "
        f"{fmt.fixed(h_e, 3)} nats and the line predicts {fmt.fixed(pred_e, 3)}."
    )


def policy_chart(
    e: float, pi0: np.ndarray, pi_e: np.ndarray, labels: list[str]
) -> tuple[Chart, str]:
    """The policy before (pi0) and after (pi_e) one step of size η = e."""
    e_text = fmt.fixed(e, 6, trim=True)
    b = Chart(
        "action and its advantage", "probability", height=400, yaxis={"title": {"standoff": 10}}
    )
    b.add(
        "bar",
        x=labels,
        y=pi0,
        name="π before",
        marker={"color": BEFORE_COLOR},
        hovertemplate="%{x}: π = %{y:.3f}<extra>before</extra>",
    )
    b.add(
        "bar",
        x=labels,
        y=pi_e,
        name=f"after one step of η = {e_text}",
        marker={"color": AFTER_COLOR},
        hovertemplate="%{x}: π = %{y:.3f}<extra>after</extra>",
    )
    b.update(
        barmode="group", yaxis={"range": [0, 1.02], "tickformat": ".1f"}, xaxis={"type": "category"}
    )
    top = int(np.argmax(pi_e))
    return b, (
        f"Grouped bar chart of the {len(labels)} actions' probabilities before and after one "
        f"step of η = {e_text}. The most probable action after the step is a{top + 1}, with "
        f"{fmt.fixed(pi_e[top], 3)} (before: {fmt.fixed(pi0[top], 3)})."
    )


def steps_chart(tr, steps: int, et: str) -> tuple[Chart, str]:
    """The entropy over repeated steps (trajectory ``tr``) and each step's first-order
    prediction from the step before."""
    h = tr.entropy
    s = Chart(
        "step t",
        "entropy H (nats)",
        height=380,
        margin={"r": 24},
        yaxis={"title": {"standoff": 10}, "ticklabelstandoff": 10},
    )
    s.add(
        x=tr.steps,
        y=h,
        mode="lines+markers",
        name="exact, after t steps",
        line={"color": EXACT_COLOR, "width": 2.5},
        marker={"size": 5},
        hovertemplate="step %{x}: H = %{y:.3f} nats<extra></extra>",
    )
    s.add(
        x=tr.steps[1:],
        y=tr.predicted[1:],
        mode="markers",
        name="first order from the step before",
        marker={"size": 7, "symbol": "circle-open", "color": FIRST_COLOR, "line": {"width": 1.5}},
        hovertemplate="step %{x}: predicted %{y:.3f} nats<extra></extra>",
    )
    s.update(yaxis={"rangemode": "tozero"}, xaxis={"rangemode": "tozero"})
    return s, (
        f"Line chart of the entropy over {steps} steps of η = {et}: from {fmt.fixed(h[0], 3)} "
        f"nats "
        f"to {fmt.fixed(h[-1], 3)} nats, with the first-order prediction of each step from the "
        f"one "
        f"before as open circles."
    )


def cui_fit(tr) -> core.CuiFit | None:
    """Cui et al.'s law fitted to the trajectory ``tr``; None when it cannot be (the entropy
    never moves)."""
    try:
        return core.fit_cui(tr.entropy, tr.reward)
    except ValueError:
        return None


def cui_chart(tr, fit, steps: int) -> tuple[Chart, str]:
    """Expected advantage against entropy along the trajectory ``tr``, and Cui et al.'s law
    fitted to it (``fit``, or None)."""
    h, r = tr.entropy, tr.reward
    g = Chart(
        "entropy H (nats)",
        "expected advantage E[A], the reward",
        height=380,
        yaxis={"title": {"standoff": 10}},
    )
    g.add(
        x=h,
        y=r,
        mode="lines+markers",
        name="this model, step by step",
        line={"color": EXACT_COLOR, "width": 2},
        marker={"size": 5},
        customdata=tr.steps,
        hovertemplate="step %{customdata}: H = %{x:.3f}, E[A] = %{y:.3f}<extra></extra>",
    )
    if fit is not None:
        hg = np.linspace(float(h.min()), float(h.max()), 200)
        g.add(
            x=hg,
            y=-fit.a * np.exp(hg) + fit.b,
            mode="lines",
            name="Cui et al.'s law R = −a·e<sup>H</sup> + b, fitted to this trajectory",
            line={"color": FIT_COLOR, "width": 2.5, "dash": "dash"},
            hovertemplate="fitted law: H = %{x:.3f}, R = %{y:.3f}<extra></extra>",
        )
    return g, (
        f"Line chart of the expected advantage against the entropy over {steps} steps, "
        f"from ({fmt.fixed(h[0], 3)} nats, {fmt.fixed(r[0], 3)}) to ({fmt.fixed(h[-1], 3)} "
        f"nats, {fmt.fixed(r[-1], 3)})"
        + (
            f", with Cui et al.'s law −a·e^H + b fitted to these points (a = "
            f"{fmt.fixed(fit.a, 3)}, "
            f"b = {fmt.fixed(fit.b, 3)}, R² = {fmt.fixed(fit.r2, 4)})."
            if fit is not None and np.isfinite(fit.r2)
            else "."
        )
    )


# ------------------------------------------------------------------------------ the tables
def policy_frame(z: np.ndarray, adv: np.ndarray, eta: float, et: str) -> pd.DataFrame:
    """The policy before and after one step of size η (written ``et``)."""
    lp0 = core.log_softmax(z)
    return pd.DataFrame(
        {
            "action": [f"a{i + 1}" for i in range(z.size)],
            "logit z": z,
            "advantage A": adv,
            "pi before": np.exp(lp0),
            f"pi after eta={et}": np.exp(core.log_softmax(z + eta * adv)),
            "log pi before": lp0,
        }
    )


def eta_frame(fig: Figures) -> pd.DataFrame:
    """The exact entropy and its first-order prediction on the figure's η grid."""
    return pd.DataFrame(
        {
            "eta": fig.grid,
            "entropy exact (nats)": fig.curve,
            "first-order prediction (nats)": fig.h0 - fig.grid * fig.cov,
        }
    )


def fit_frame(fit) -> pd.DataFrame:
    """Cui et al.'s law fitted to the trajectory, one row."""
    return pd.DataFrame(
        {
            "fit": ["Cui et al.'s law fitted to this trajectory"],
            "a": [fit.a],
            "b": [fit.b],
            "R²": [fit.r2],
            "rmse": [fit.rmse],
            "b − a (R at H = 0)": [fit.b - fit.a],
        }
    )


def steps_frame(tr, fit) -> pd.DataFrame:
    """The repeated steps, and the fitted law at each (``fit`` None: no fit)."""
    out = pd.DataFrame(
        {
            "step": tr.steps,
            "entropy (nats)": tr.entropy,
            "expected advantage": tr.reward,
            "Cov(log pi, A)": tr.covariance,
            "first-order prediction from previous step (nats)": tr.predicted,
        }
    )
    if fit is not None:
        out["Cui law fitted (expected advantage)"] = fit.fitted
    return out


def details(fig: Figures, z: np.ndarray, adv: np.ndarray, eta: float, et: str) -> None:
    """The numbers behind the figures: the policy before and after the step, and two
    downloads (it, and H along η)."""
    df = policy_frame(z, adv, eta, et)
    layout.table(df)
    layout.csv_download(
        df,
        f"entropy_policy_eta_{et}.csv",
        key="entropy-policy-csv",
        label="Download the policy (CSV)",
    )
    layout.csv_download(
        eta_frame(fig),
        "entropy_along_eta.csv",
        key="entropy-curve-csv",
        label="Download H(η) (CSV)",
    )
