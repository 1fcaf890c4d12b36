"""The ppo-clip page's figures (Equation 12.2, Section 12.1.4): one sample's objective and its
gradient against the ratio ω under each rule, and several epochs on one batch (KL and the rare
action's probability), each with its text alternative. pages/ppo-clip.py wires them."""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable

import numpy as np

from klrl_app import controls, fmt, plots
from klrl_core import ppo_clip as pc

OMEGA_MAX = 2.5
NAMES = {"plain": "plain", "ppo": "PPO", "clip_higher": "clip-higher", "cispo": "CISPO"}
STYLE = {  # one colour and dash per method, the same in both figures
    "plain": {"color": plots.COLORS["neutral"], "width": 2.5, "dash": "dash"},
    "ppo": {"color": plots.COLORS["optimum"], "width": 4},
    "clip_higher": {"color": plots.COLORS["best_of_n"], "width": 2.5, "dash": "dash"},
    "cispo": {"color": plots.COLORS["accent"], "width": 2.5, "dash": "dot"},
}
SHADE = "rgba(59, 130, 246, 0.13)"
TOP_RANGE = {"both": [-2.65, 2.65], "pos": [-0.2, 2.65], "neg": [-2.65, 0.2]}
SIGN_ALT = {"both": "A = +1 (upper half) and A = −1 (lower half)", "pos": "A = +1",
            "neg": "A = −1"}


def y2_font(present: bool) -> int:
    """The lower panels' y titles (the others follow plots): a long title on a short chart."""
    return 17 if present else 14


@dataclass(frozen=True)
class ClipPanels:
    """What the left figure shows besides ε: the rules, the advantages' signs (link value
    ``sign``), the lower panel's quantity (``grad``: "ratio" or "score") and CISPO's bounds."""

    methods: tuple
    sign: str
    grad: str
    cispo_label: str          # CISPO's legend entry
    cispo_range: str          # its weight bounds in words
    present: bool

    @property
    def signs(self) -> tuple:
        return {"both": (1.0, -1.0), "pos": (1.0,), "neg": (-1.0,)}[self.sign]

    @property
    def low_title(self) -> str:
        return "d objective / dω" if self.grad == "ratio" else "weight on ∇log π"

    @property
    def low_range(self) -> list[float]:
        g_lim = 2.15 if self.grad == "ratio" else 2.65
        return {"both": [-g_lim, g_lim], "pos": [-0.2, g_lim], "neg": [-g_lim, 0.2]}[self.sign]


def clip_charts(e: float, p: ClipPanels, omega: np.ndarray,
                curves_at: Callable[[float, str, float], tuple[np.ndarray, np.ndarray]]
                ) -> dict[str, tuple[plots.Chart, str]]:
    """The left figure at clip range ε = e (``curves_at(a, m, e)``: rule m's objective and
    lower-panel curve on the ω grid for advantage a), with alt texts: the objective above, its
    gradient below, as two charts on one ω axis. Two charts, not two panels of one: plotly.js
    recomputes every trace of a chart when one changes, so the objective (3 traces) is drawn
    at each stop before the gradient (4) is."""
    lo_e, hi_e = (float(v) for v in pc.clip_ratio([0.0, 1e9], e))
    labels = {"plain": "ω·A (plain)", "ppo": "PPO", "clip_higher": "clip-higher",
              "cispo": p.cispo_label}
    top_range, low_range, low_title = TOP_RANGE[p.sign], p.low_range, p.low_title
    top = plots.Chart("", "objective", height=212)
    low = plots.Chart("ratio ω = π_θ(a) / π_old(a)", low_title, height=188)
    # One trace per rule and chart, its A = +1 and A = −1 curves with a gap between
    # (plots.gapped), each point's A in the hover.
    tags = np.asarray(p.signs, dtype=np.int8)
    for m in p.methods:
        per_sign = [curves_at(a, m, e) for a in p.signs]     # (objective, lower) for each A
        for panel, chart, what in ((0, top, "objective"), (1, low, low_title)):
            if m == "cispo" and panel == 0:
                continue   # no objective in omega: its weight is in the lower chart
            chart.add(**plots.gapped(omega, [c[panel] for c in per_sign], tags),
                      mode="lines", name=labels[m], line=STYLE[m],
                      showlegend=(panel == 0) != (m == "cispo"),
                      hovertemplate=f"{NAMES[m]}, A = %{{customdata:+d}}: ω %{{x:.2f}}, "
                                    f"{what} %{{y:.3f}}<extra></extra>")
    # PPO's zero-gradient regions, shaded in both charts, each in its own half-plane. The
    # first carries the legend's entry (a shape's, not an empty trace's: a trace costs the
    # browser a few ms more at every stop).
    for chart, rng in ((top, top_range), (low, low_range)):
        for a in p.signs:
            x0, x1 = (hi_e, OMEGA_MAX) if a > 0 else (0.0, lo_e)
            y0, y1 = (0.0, rng[1]) if a > 0 else (rng[0], 0.0)
            chart.layout["shapes"].append({
                "type": "rect", "xref": "x", "yref": "y", "x0": x0, "x1": x1, "y0": y0,
                "y1": y1, "fillcolor": SHADE, "line": {"width": 0}, "layer": "below",
                "name": "PPO: gradient 0", "legendgroup": "shade",
                "showlegend": chart is top and len(chart.layout["shapes"]) == 0})
        chart.vline(1.0, plots.COLORS["neutral"])
        chart.update(yaxis={"range": rng}, legend={"font": {"size": 12}})
    top.update(xaxis={"range": [0, OMEGA_MAX], "tickvals": [0, 0.5, 1, 1.5, 2, 2.5]})
    plots.stack(top, low, left=54 if p.present else 48, right=24)
    low.update(yaxis={"zeroline": False, "title": {"font": {"size": y2_font(p.present)}}})
    flat_alt = []
    if 1.0 in p.signs:
        flat_alt.append(f"for A = +1 where ω is above {fmt.fixed(hi_e, 2)}")
    if -1.0 in p.signs:
        flat_alt.append(f"for A = −1 where ω is below {fmt.fixed(lo_e, 2)}")
    flat = " and ".join(flat_alt)
    rules = ", ".join(NAMES[m] for m in p.methods if m != "cispo")
    sign_alt = SIGN_ALT[p.sign]
    top_alt = (f"Line chart of one sample's objective against the ratio ω from 0 to "
               f"{fmt.short(OMEGA_MAX)} for {sign_alt}, under {rules}. At ε = "
               f"{fmt.fixed(e, 2)} PPO's objective is flat (shaded) {flat}.")
    what = ("the slope of one sample's objective in ω (for CISPO, the weight on ∇ω)"
            if p.grad == "ratio" else "the weight one sample's update puts on ∇log π")
    cispo_alt = (f"; CISPO's weight is clipped to {p.cispo_range}" if "cispo" in p.methods
                 else "")
    low_alt = (f"Line chart against the ratio ω from 0 to {fmt.short(OMEGA_MAX)} for "
               f"{sign_alt}, below the objective on the same axis: {what}, for "
               f"{', '.join(NAMES[m] for m in p.methods)}{cispo_alt}. At ε = {fmt.fixed(e, 2)} "
               f"PPO's gradient is zero (shaded) {flat}.")
    return {"ppo-clip-surrogate": (top, top_alt), "ppo-clip-gradient": (low, low_alt)}


@dataclass(frozen=True)
class EpochRuns:
    """The right figure's setting: the batch, the step size and the y ranges shared by every
    stop of ε (taken over PPO's runs at all of them), and the rare action."""

    epochs: int
    n_samples: int
    seed: int
    lr: float
    kl_top: float
    rare_top: float
    rare: int                 # the rare action's index
    rare0: float              # its probability under π_old
    present: bool


def epoch_chart(runs: dict, methods, r: EpochRuns) -> tuple[plots.Chart, str]:
    """KL and the rare action's probability against the epoch, for each rule's run."""
    ep = np.arange(r.epochs + 1)
    mode = "lines+markers" if r.epochs <= 20 else "lines"
    p_rare = f"π{chr(0x2080 + r.rare + 1)}"
    chart = plots.Chart("epoch (steps on the same batch)", "KL(π_θ ‖ π_old)", height=416,
                        margin={"r": 12})
    for m in methods:
        chart.add(x=ep, y=runs[m].kl, mode=mode, name=NAMES[m], legendgroup=m,
                  line=STYLE[m], marker={"size": 5},
                  hovertemplate=f"{NAMES[m]}, epoch %{{x}}: KL %{{y:.4f}}<extra></extra>")
    for m in methods:
        chart.add(x=ep, y=runs[m].p_rare, mode=mode, name=NAMES[m], legendgroup=m,
                  yaxis="y2", line=STYLE[m], marker={"size": 5}, showlegend=False,
                  hovertemplate=f"{NAMES[m]}, epoch %{{x}}: π(action {r.rare + 1}) "
                                f"%{{y:.4f}}<extra></extra>")
    chart.add(x=[0, r.epochs], y=[r.rare0, r.rare0], mode="lines", yaxis="y2",
              name=f"start, π_old: {fmt.sig(r.rare0, 2)}",
              line={"color": plots.COLORS["reference"], "dash": "dot", "width": 1.5},
              hoverinfo="skip")
    chart.update(
        yaxis={"domain": [0.5, 1.0], "range": [0, r.kl_top]},
        yaxis2={"domain": [0.0, 0.4], "range": [0, r.rare_top], "automargin": True,
                "title": {"text": f"{p_rare} = π(action {r.rare + 1})",
                          "font": {"size": y2_font(r.present)}}},
        xaxis={"anchor": "y2", "range": [-0.02 * max(r.epochs, 1), r.epochs * 1.02]},
        legend={"font": {"size": 12}})
    kl_e = {m: float(runs[m].kl[-1]) for m in methods}
    rare_e = {m: float(runs[m].p_rare[-1]) for m in methods}
    return chart, (
        f"Two stacked line charts against the epoch, 0 to {r.epochs}, for one batch of "
        f"{r.n_samples:,} samples (seed {r.seed}) at step size {controls.fmt_number(r.lr)}: "
        f"above, KL from the sampling policy, ending at "
        + ", ".join(f"{fmt.sig(kl_e[m], 2)} for {NAMES[m]}" for m in methods)
        + f"; below, the probability of action {r.rare + 1}, from {fmt.sig(r.rare0, 2)} to "
        + ", ".join(f"{fmt.sig(rare_e[m], 2)} for {NAMES[m]}" for m in methods) + ".")
