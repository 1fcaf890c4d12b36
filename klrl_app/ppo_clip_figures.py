"""The ppo-clip page's figures (Equation 12.2, Section 12.1.4): one sample's objective and its
gradient against the ratio ω under each rule, and several epochs on one batch (KL and the rare
action's probability), each with its text alternative; the runs behind them and their tables.
pages/ppo-clip.py wires them and writes the words."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import numpy as np
import pandas as pd

from klrl_app import controls, fmt, layout, lru, plots
from klrl_core import ppo_clip as pc

OMEGA_MAX = 2.5
NAMES = {"plain": "plain", "ppo": "PPO", "clip_higher": "clip-higher", "cispo": "CISPO"}
SAY = {**NAMES, "plain": "the plain surrogate"}  # a rule's name inside a sentence
STYLE = {  # one colour and dash per method, the same in both figures
    "plain": {"color": plots.COLORS["neutral"], "width": 2.5, "dash": "dash"},
    "ppo": {"color": plots.COLORS["optimum"], "width": 4},
    "clip_higher": {"color": plots.COLORS["best_of_n"], "width": 2.5, "dash": "dash"},
    "cispo": {"color": plots.COLORS["accent"], "width": 2.5, "dash": "dot"},
}
SHADE = "rgba(59, 130, 246, 0.13)"
TOP_RANGE = {"both": [-2.65, 2.65], "pos": [-0.2, 2.65], "neg": [-2.65, 0.2]}
SIGN_ALT = {"both": "A = +1 (upper half) and A = −1 (lower half)", "pos": "A = +1", "neg": "A = −1"}
ADVANTAGES = {"both": (1.0, -1.0), "pos": (1.0,), "neg": (-1.0,)}  # link value -> the A drawn

CH_LO, CH_HI = pc.METHOD_EPS["clip_higher"]  # DAPO's [1 - 0.2, 1 + 0.28]
# CISPO's weight bounds: DAPO's range, as clip-higher (so the two differ only in what is
# clipped), or MiniMax-M1's own choice, no lower bound and 1 + eps_high above (eps_high kept at
# clip-higher's 0.28 here). Link value -> (eps_low, eps_high).
CISPO_EPS = {"dapo": (CH_LO, CH_HI), "m1": (pc.EPS_LOW_OPEN, CH_HI)}
# The rules drawn for each choice of "Beside plain and PPO" (link value).
SHOWN_METHODS = {
    "all": ("plain", "ppo", "clip_higher", "cispo"),
    "higher": ("plain", "ppo", "clip_higher"),
    "cispo": ("plain", "ppo", "cispo"),
    "none": ("plain", "ppo"),
}
P_OLD, REWARDS = pc.DEFAULT_P_OLD, pc.DEFAULT_REWARDS
RARE = pc.rare_action(P_OLD, REWARDS)  # action 5: least probable, best reward
RARE0 = float(P_OLD[RARE])  # its probability under π_old
P_RARE = f"π{chr(0x2080 + RARE + 1)}"  # π₅, the rare action's probability


def edges(e: float) -> tuple[float, float]:
    """PPO's clip edges at clip range ε = e: 1 − ε, 1 + ε, as the core clips."""
    lo, hi = pc.clip_ratio([0.0, 1e9], e)
    return float(lo), float(hi)


class CispoBounds(NamedTuple):
    """CISPO's weight bounds (link value ``cispo``) as the page and the alt texts write them."""

    open_below: bool  # no lower bound (MiniMax-M1's setting)
    lo: str  # 1 − eps_low
    hi: str  # 1 + eps_high
    range: str  # the bounds in words, for every sentence that names them


def cispo_bounds(cispo: str) -> CispoBounds:
    eps_low, eps_high = CISPO_EPS[cispo]
    open_below = eps_low == pc.EPS_LOW_OPEN
    lo, hi = fmt.fixed(1 - eps_low, 2), fmt.fixed(1 + eps_high, 2)
    return CispoBounds(
        open_below,
        lo,
        hi,
        f"at most {hi} (no lower bound: MiniMax-M1's setting)" if open_below else f"[{lo}, {hi}]",
    )


def rule_eps(m: str, cispo: str, e: float | None = None) -> tuple[float | None, float | None]:
    """(eps_low, eps_high) of rule m: ε = e for PPO, DAPO's range for clip-higher, the bounds
    chosen (link value ``cispo``) for CISPO, none for the plain surrogate."""
    return {"ppo": (e, e), "plain": (None, None), "cispo": CISPO_EPS[cispo]}.get(m, (CH_LO, CH_HI))


def y2_font(present: bool) -> int:
    """The lower panels' y titles (the others follow plots): a long title on a short chart."""
    return 17 if present else 14


@dataclass(frozen=True)
class ClipPanels:
    """The left figure's setting besides ε: the rules, the advantages' signs (link value
    ``sign``), the lower panel's quantity (``grad``: "ratio" or "score"), the page's ε (whose
    edges are points of the ω grid) and CISPO's bounds (link value ``cispo``)."""

    methods: tuple
    sign: str
    grad: str
    eps: float
    cispo: str
    present: bool

    @property
    def signs(self) -> tuple:
        return ADVANTAGES[self.sign]

    @property
    def low_title(self) -> str:
        return "d objective / dω" if self.grad == "ratio" else "weight on ∇log π"

    @property
    def low_range(self) -> list[float]:
        g_lim = 2.15 if self.grad == "ratio" else 2.65
        return {"both": [-g_lim, g_lim], "pos": [-0.2, g_lim], "neg": [-g_lim, 0.2]}[self.sign]

    @cached_property
    def omega(self) -> np.ndarray:
        """ω every 0.01: every stop's edges 1 ± ε (and DAPO's) are points of it, so the curves
        bend exactly there and every stop shares the same x. A linked ε between stops adds its
        edges."""
        points = [*edges(self.eps), 1.0 - CH_LO, 1.0 + CH_HI]
        return np.unique(
            np.round(
                np.concatenate(
                    [np.linspace(0.0, OMEGA_MAX, 251), [w for w in points if 0 <= w <= OMEGA_MAX]]
                ),
                9,
            )
        )

    def objective(self, a: float, m: str, e: float | None = None) -> np.ndarray:
        """Rule m's objective for one sample of advantage a on the ω grid (PPO's at ε = e, by
        default the page's)."""
        if m == "plain":
            return self.omega * a
        lo, hi = rule_eps(m, self.cispo, self.eps if e is None else e)
        return np.asarray(pc.clipped_surrogate(self.omega, a, lo, hi), dtype=float)

    def lower(self, a: float, m: str, e: float | None = None) -> np.ndarray:
        """The lower panel's quantity for rule m: d/dω, or the weight on ∇log π."""
        lo, hi = rule_eps(m, self.cispo, self.eps if e is None else e)
        if self.grad == "score":
            return np.asarray(pc.score_weight(self.omega, a, m, lo, hi), dtype=float)
        g = np.asarray(pc.ratio_gradient(self.omega, a, m, lo, hi), dtype=float)
        return np.where(np.isfinite(g), g, np.nan)

    @cached_property
    def _without_eps(self) -> dict:
        """The other rules' curves do not move with ε: computed once a run, not at every stop."""
        return {
            (a, m): (self.objective(a, m), self.lower(a, m))
            for a in self.signs
            for m in self.methods
            if m != "ppo"
        }

    def curves_at(self, a: float, m: str, e: float) -> tuple[np.ndarray, np.ndarray]:
        """(objective, lower panel) of rule m for advantage a, PPO's at clip range e."""
        if m != "ppo":
            return self._without_eps[(a, m)]
        return self.objective(a, m, e), self.lower(a, m, e)

    def numbers(self) -> pd.DataFrame:
        """Every curve of the left figure at the page's ε, one column each (CSV)."""
        cols = {"omega": self.omega}
        what = "d/domega" if self.grad == "ratio" else "weight on grad log pi"
        for a in self.signs:
            s = "A=+1" if a > 0 else "A=-1"
            for m in self.methods:
                if m != "cispo":
                    cols[f"objective {NAMES[m]} {s}"] = self.objective(a, m)
            for m in self.methods:
                cols[f"{what} {NAMES[m]} {s}"] = self.lower(a, m)
        return pd.DataFrame(cols)


def clip_charts(e: float, p: ClipPanels) -> dict[str, tuple[plots.Chart, str]]:
    """The left figure at clip range ε = e, with alt texts: the objective above, its gradient
    below, as two charts on one ω axis. Two charts, not two panels of one: plotly.js
    recomputes every trace of a chart when one changes, so the objective (3 traces) is drawn
    at each stop before the gradient (4) is."""
    omega, cispo = p.omega, cispo_bounds(p.cispo)
    lo_e, hi_e = edges(e)
    labels = {
        "plain": "ω·A (plain)",
        "ppo": "PPO",
        "clip_higher": "clip-higher",
        "cispo": f"CISPO, weight {'≤ ' + cispo.hi if cispo.open_below else cispo.range}",
    }
    top_range, low_range, low_title = TOP_RANGE[p.sign], p.low_range, p.low_title
    top = plots.Chart("", "objective", height=212)
    low = plots.Chart("ratio ω = π_θ(a) / π_old(a)", low_title, height=188)
    # One trace per rule and chart, its A = +1 and A = −1 curves with a gap between
    # (plots.gapped), each point's A in the hover.
    tags = np.asarray(p.signs, dtype=np.int8)
    for m in p.methods:
        per_sign = [p.curves_at(a, m, e) for a in p.signs]  # (objective, lower) for each A
        for panel, chart, what in ((0, top, "objective"), (1, low, low_title)):
            if m == "cispo" and panel == 0:
                continue  # no objective in omega: its weight is in the lower chart
            chart.add(
                **plots.gapped(omega, [c[panel] for c in per_sign], tags),
                mode="lines",
                name=labels[m],
                line=STYLE[m],
                showlegend=(panel == 0) != (m == "cispo"),
                hovertemplate=f"{NAMES[m]}, A = %{{customdata:+d}}: ω %{{x:.2f}}, "
                f"{what} %{{y:.3f}}<extra></extra>",
            )
    # PPO's zero-gradient regions, shaded in both charts, each in its own half-plane. The
    # first carries the legend's entry (a shape's, not an empty trace's: a trace costs the
    # browser a few ms more at every stop).
    for chart, rng in ((top, top_range), (low, low_range)):
        for a in p.signs:
            x0, x1 = (hi_e, OMEGA_MAX) if a > 0 else (0.0, lo_e)
            y0, y1 = (0.0, rng[1]) if a > 0 else (rng[0], 0.0)
            chart.layout["shapes"].append(
                {
                    "type": "rect",
                    "xref": "x",
                    "yref": "y",
                    "x0": x0,
                    "x1": x1,
                    "y0": y0,
                    "y1": y1,
                    "fillcolor": SHADE,
                    "line": {"width": 0},
                    "layer": "below",
                    "name": "PPO: gradient 0",
                    "legendgroup": "shade",
                    "showlegend": chart is top and len(chart.layout["shapes"]) == 0,
                }
            )
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
    top_alt = (
        f"Line chart of one sample's objective against the ratio ω from 0 to "
        f"{fmt.short(OMEGA_MAX)} for {sign_alt}, under {rules}. At ε = "
        f"{fmt.fixed(e, 2)} PPO's objective is flat (shaded) {flat}."
    )
    what = (
        "the slope of one sample's objective in ω (for CISPO, the weight on ∇ω)"
        if p.grad == "ratio"
        else "the weight one sample's update puts on ∇log π"
    )
    cispo_alt = f"; CISPO's weight is clipped to {cispo.range}" if "cispo" in p.methods else ""
    low_alt = (
        f"Line chart against the ratio ω from 0 to {fmt.short(OMEGA_MAX)} for "
        f"{sign_alt}, below the objective on the same axis: {what}, for "
        f"{', '.join(NAMES[m] for m in p.methods)}{cispo_alt}. At ε = {fmt.fixed(e, 2)} "
        f"PPO's gradient is zero (shaded) {flat}."
    )
    return {"ppo-clip-surrogate": (top, top_alt), "ppo-clip-gradient": (low, low_alt)}


# ----- the epoch experiment ---------------------------------------------------------------
@lru.memo
def ppo_runs(
    stops: tuple, lr: float, epochs: int, n_samples: int, seed: int, bernoulli: bool
) -> dict:
    """PPO's epochs at every stop of ε (only PPO's run depends on ε; about 1 ms a stop at the
    defaults, 2 ms at 50 epochs): the charts' fixed axes are taken over all of them, and the
    browser's table of stops reads them (shared by every session of this setting)."""
    b = pc.draw_batch(P_OLD, REWARDS, n_samples, seed, bernoulli)
    return {
        e: pc.compare_methods(b, epochs, lr, REWARDS, ("ppo",), eps={"ppo": (e, e)})["ppo"]
        for e in stops
    }


class EpochRuns:
    """The right figure's runs: one batch, the other rules' runs on it and PPO's at every stop
    of ε, with one pair of y ranges for every stop (nothing rescales while ε is dragged)."""

    def __init__(
        self,
        stops: Iterable[float],
        methods: tuple,
        cispo: str,
        lr: float,
        epochs: int,
        n_samples: int,
        seed: int,
        bernoulli: bool,
        present: bool,
    ):
        self.methods, self.lr, self.epochs = methods, lr, epochs
        self.n_samples, self.seed, self.present = n_samples, seed, present
        self.batch = pc.draw_batch(P_OLD, REWARDS, n_samples, seed, bernoulli)
        stops = tuple(round(float(e), 6) for e in stops)  # the ε slider's stops
        self.ppo = ppo_runs(stops, lr, epochs, n_samples, seed, bernoulli)
        others = [m for m in methods if m != "ppo"]
        self.others = pc.compare_methods(
            self.batch, epochs, lr, REWARDS, others, eps={m: rule_eps(m, cispo) for m in others}
        )
        runs = [*self.others.values(), *self.ppo.values()]
        self.kl_top = 1.06 * max(float(t.kl.max()) for t in runs) or 1.0
        self.rare_top = 1.06 * max(max(float(t.p_rare.max()) for t in runs), RARE0)

    def ppo_at(self, e: float) -> pc.EpochTrace:
        """PPO's run at clip range ε = e: a look-up at a stop, computed for a linked value
        between stops."""
        e = round(e, 6)
        if e in self.ppo:
            return self.ppo[e]
        return pc.compare_methods(
            self.batch, self.epochs, self.lr, REWARDS, ("ppo",), eps={"ppo": (e, e)}
        )["ppo"]

    def at(self, e: float) -> dict[str, pc.EpochTrace]:
        """Every rule's run, PPO's at clip range ε = e."""
        return {m: self.ppo_at(e) if m == "ppo" else self.others[m] for m in self.methods}

    def batch_table(self, e: float) -> pd.DataFrame:
        """The batch by action (the mean reward drawn and its advantage, NaN where an action
        was not drawn) and each rule's policy after the last epoch, PPO's at ε = e."""
        means, last = pc.mean_reward_by_action(self.batch), self.at(e)
        return pd.DataFrame(
            {
                "action": np.arange(1, P_OLD.size + 1),
                "pi_old": P_OLD,
                "reward": REWARDS,
                "draws": self.batch.counts,
                "mean reward drawn": means,
                "advantage": means - float(self.batch.rewards.mean()),
                **{f"pi after {NAMES[m]}": last[m].policy[-1] for m in self.methods},
            }
        )

    def epoch_numbers(self, e: float) -> pd.DataFrame:
        """Every rule's run epoch by epoch, PPO's at ε = e (CSV)."""
        frames = []
        for m, t in self.at(e).items():
            lo, hi = (np.nan, np.nan) if m == "plain" else (t.eps_low, t.eps_high)  # no range
            df = pd.DataFrame(
                {
                    "method": NAMES[m],
                    "eps_low": lo,
                    "eps_high": hi,
                    "epoch": np.arange(self.epochs + 1),
                    "KL(pi || pi_old)": t.kl,
                    f"pi(action {RARE + 1})": t.p_rare,
                    "clipped share of the batch": t.clipped_share,
                    "batch surrogate": t.objective,
                    "expected reward": t.expected_reward,
                }
            )
            for j in range(P_OLD.size):
                df[f"pi(action {j + 1})"] = t.policy[:, j]
            frames.append(df)
        return pd.concat(frames, ignore_index=True)

    def same_steps(self, e: float) -> bool:
        """Whether every rule's run, PPO's at ε = e, has taken the same steps (no clip or
        weight has changed an update yet)."""
        runs = list(self.at(e).values())
        return all(np.max(np.abs(t.policy - runs[0].policy)) < 1e-12 for t in runs)


def readout(e: float, r: EpochRuns, signs: tuple) -> list[tuple[str, str]]:
    """The readout's items at clip range ε = e: where PPO's objective is flat for each sign
    drawn, and each rule's KL and π₅ after the last epoch (only PPO's run depends on ε)."""
    lo, hi = edges(e)
    flat = {
        1.0: ("A > 0 flat for", f"ω > {fmt.fixed(hi, 2)}"),
        -1.0: ("A < 0 flat for", f"ω < {fmt.fixed(lo, 2)}"),
    }
    return (
        [flat[a] for a in signs]
        + [("after", fmt.count(r.epochs, "epoch"))]
        + [
            (
                NAMES[m],
                f"KL {fmt.sig(float(t.kl[-1]), 2)}, {P_RARE} {fmt.sig(float(t.p_rare[-1]), 2)}",
            )
            for m, t in r.at(e).items()
        ]
    )


def say(rules: list[str]) -> str:
    """Rules named in a sentence: "PPO", "the plain surrogate and PPO", "PPO, … and CISPO"."""
    return controls.and_list([SAY[m] for m in rules])


def tied(values: dict[str, float], pick) -> list[str]:
    """The rules whose value reads (to two figures) the same as the largest (or smallest)."""
    target = fmt.sig(pick(values.values()), 2)
    return [m for m, v in values.items() if fmt.sig(v, 2) == target]


def epoch_chart(r: EpochRuns, e: float) -> tuple[plots.Chart, str]:
    """KL and the rare action's probability against the epoch, for each rule's run (PPO's at
    clip range ε = e)."""
    runs, methods = r.at(e), r.methods
    ep = np.arange(r.epochs + 1)
    mode = "lines+markers" if r.epochs <= 20 else "lines"
    chart = plots.Chart(
        "epoch (steps on the same batch)", "KL(π_θ ‖ π_old)", height=416, margin={"r": 12}
    )
    for m in methods:
        chart.add(
            x=ep,
            y=runs[m].kl,
            mode=mode,
            name=NAMES[m],
            legendgroup=m,
            line=STYLE[m],
            marker={"size": 5},
            hovertemplate=f"{NAMES[m]}, epoch %{{x}}: KL %{{y:.4f}}<extra></extra>",
        )
    for m in methods:
        chart.add(
            x=ep,
            y=runs[m].p_rare,
            mode=mode,
            name=NAMES[m],
            legendgroup=m,
            yaxis="y2",
            line=STYLE[m],
            marker={"size": 5},
            showlegend=False,
            hovertemplate=f"{NAMES[m]}, epoch %{{x}}: π(action {RARE + 1}) "
            f"%{{y:.4f}}<extra></extra>",
        )
    chart.add(
        x=[0, r.epochs],
        y=[RARE0, RARE0],
        mode="lines",
        yaxis="y2",
        name=f"start, π_old: {fmt.sig(RARE0, 2)}",
        line={"color": plots.COLORS["reference"], "dash": "dot", "width": 1.5},
        hoverinfo="skip",
    )
    chart.update(
        yaxis={"domain": [0.5, 1.0], "range": [0, r.kl_top]},
        yaxis2={
            "domain": [0.0, 0.4],
            "range": [0, r.rare_top],
            "automargin": True,
            "title": {
                "text": f"{P_RARE} = π(action {RARE + 1})",
                "font": {"size": y2_font(r.present)},
            },
        },
        xaxis={"anchor": "y2", "range": [-0.02 * max(r.epochs, 1), r.epochs * 1.02]},
        legend={"font": {"size": 12}},
    )
    kl_e = {m: float(runs[m].kl[-1]) for m in methods}
    rare_e = {m: float(runs[m].p_rare[-1]) for m in methods}
    return chart, (
        f"Two stacked line charts against the epoch, 0 to {r.epochs}, for one batch of "
        f"{r.n_samples:,} samples (seed {r.seed}) at step size {controls.fmt_number(r.lr)}: "
        f"above, KL from the sampling policy, ending at "
        + ", ".join(f"{fmt.sig(kl_e[m], 2)} for {NAMES[m]}" for m in methods)
        + f"; below, the probability of action {RARE + 1}, from {fmt.sig(RARE0, 2)} to "
        + ", ".join(f"{fmt.sig(rare_e[m], 2)} for {NAMES[m]}" for m in methods)
        + "."
    )


def details(runs: EpochRuns, panels: ClipPanels, eps: float, bernoulli: bool) -> None:
    """The numbers behind the figures: the batch by action, and three downloads (the epochs,
    the batch and the surrogate curves)."""
    table = runs.batch_table(eps)
    layout.small_table(
        table,
        {
            "pi_old": 2,
            "reward": lambda v: fmt.fixed(v, 2, trim=True),
            "draws": 0,
            "mean reward drawn": lambda v: fmt.fixed(v, 3),
            "advantage": lambda v: fmt.fixed(v, 3),
            **{c: 4 for c in table.columns[6:]},
        },
    )
    stem = (
        f"ppo_clip_eps_{controls.fmt_number(eps)}_lr_{controls.fmt_number(runs.lr)}"
        f"_epochs_{runs.epochs}_n_{runs.n_samples}_seed_{runs.seed}"
        f"{'_bernoulli' if bernoulli else ''}"
    )
    layout.csv_download(
        lambda: runs.epoch_numbers(eps),
        f"{stem}_epochs.csv",
        label="Download the epochs (CSV)",
        key="ppo-clip-epochs-csv",
    )
    layout.csv_download(
        table, f"{stem}_batch.csv", label="Download the batch (CSV)", key="ppo-clip-batch-csv"
    )
    layout.csv_download(
        panels.numbers,
        f"ppo_clip_eps_{controls.fmt_number(eps)}_{panels.grad}.csv",
        label="Download the surrogate curves (CSV)",
        key="ppo-clip-curves-csv",
    )
