"""The dpo page's runs and figures (Section 12.6): the comparisons, the DPO and IPO optima and
the gradient run, cached; the policy with the pair-weight strip below it, the frontier with the
run's path, and the implied reward, each with its text alternative. pages/dpo.py wires them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd

from klrl_app import controls, fmt, layout, lru, plots, precompute
from klrl_app.plots import COLORS, Chart
from klrl_app.tilt_figures import (
    Book,
    Scale,
    frontier_panel,
    frontier_x,
    is_book,
    policy_panel,
    policy_scale,
    scale_text,
)
from klrl_core import dpo, tilt, user_model

PAIR_STOPS = [10, 30, 100, 300, 1_000, 3_000, 10_000, 30_000, 100_000, "all"]
DEFAULT_PAIRS = 1_000
MAX_STEPS = 2_000
# A run is computed to the first of these horizons that covers T and cached: moving T within
# a horizon only slices it (gradient steps are deterministic, so a prefix is the shorter run).
HORIZONS = (200, 500, 1_000, MAX_STEPS)
# kappa = 0 is beta = infinity, where the DPO loss is not defined; it is drawn as the limit
# beta -> infinity, computed at kappa = 1e-6 (every log ratio below 1e-5: the same to 3 decimals).
KAPPA_FLOOR = 1e-6
DPO_COLOR = COLORS["accent"]
IPO_COLOR = COLORS["best_of_n"]
VANISH_COLOR = COLORS["incorrect"]
MARGIN_L = 56  # the policy's and the strip's (plots.stack): wide enough for either's y labels
# The run's path is drawn at steps spaced evenly in log(1 + step) (the first steps move it
# most), so every κ stop's path fits the browser's table of stops.
PATH_POINTS = 40


# ------------------------------------------------------------------------- computations
class Fit(NamedTuple):
    """Everything that does not depend on T, on the responses with pi0 > 0."""

    W: np.ndarray
    opt: dpo.Optimum
    ipo: dpo.Optimum


class Run(NamedTuple):
    """Gradient steps from pi0: the log policy, KL and rewards at every step 0..horizon."""

    log_pi: np.ndarray
    kl: np.ndarray
    proxy: np.ndarray
    true: np.ndarray


@lru.memo
def _comparisons(model_key, pairs, labels: str, seed: int, _lq, _r) -> np.ndarray:
    return dpo.comparisons(_lq, _r, pairs, labels, seed)


def _fit_now(w: np.ndarray, lq: np.ndarray, beta: float) -> Fit:
    return Fit(w, dpo.dpo_optimum(w, lq, beta), dpo.ipo_optimum(w, lq, beta))


@lru.memo
def _fit(model_key, pairs, labels: str, seed: int, beta: float, _lq, _r) -> Fit:
    return _fit_now(_comparisons(model_key, pairs, labels, seed, _lq, _r), _lq, beta)


def _run_now(lq, r, rt, pairs, labels: str, seed: int, beta: float, horizon: int) -> Run:
    w = dpo.comparisons(lq, r, pairs, labels, seed)
    tr = dpo.dpo_gradient_steps(w, lq, beta, horizon)  # lr: the safe default 1/L
    return Run(tr.log_pi, tr.kl, tr.pi @ r, tr.pi @ rt)


@lru.memo
def _run(model_key, pairs, labels: str, seed: int, beta: float, horizon: int, _lq, _r, _rt) -> Run:
    return _run_now(_lq, _r, _rt, pairs, labels, seed, beta, horizon)


def model_key(b: Book) -> tuple:
    """The model as a short cache key: Streamlit hashes it on every call, and 90 floats cost
    ~2 ms."""
    return (b.name, hash((b.pi0.tobytes(), b.r.tobytes(), b.r_true.tobytes())))


def fit(b: Book, pairs, labels: str, seed: int, beta: float) -> Fit:
    """The comparisons and both optima at one setting, cached per model (DPO needs pi0 > 0:
    the implied reward divides by it, so both are on the responses with pi0 > 0)."""
    sup = b.pi0 > 0
    return _fit(model_key(b), pairs, labels, seed, beta, b.log_pi0[sup], b.r[sup])


def run(b: Book, pairs, labels: str, seed: int, beta: float, steps: int) -> Run:
    """The gradient run to the first horizon that covers ``steps``, cached per model."""
    sup = b.pi0 > 0
    return _run(
        model_key(b),
        pairs,
        labels,
        seed,
        beta,
        horizon(steps),
        b.log_pi0[sup],
        b.r[sup],
        b.r_true[sup],
    )


def _book_model():
    p = user_model.PRESETS[user_model.BOOK]
    return user_model.make_model(np.array(p.pi0), np.array(p.r), np.array(p.r_true))


def book_run(kappa: float, pairs, labels: str) -> Run:
    """A run on the book's model, seed 0, first horizon: what the background table holds."""
    m = _book_model()
    return _run_now(m.log_pi0, m.r, m.r_true, pairs, labels, 0, 1.0 / kappa, HORIZONS[0])


def book_fit(kappa: float, pairs, labels: str) -> Fit:
    """The comparisons and both optima on the book's model, seed 0 (as fit computes them)."""
    m = _book_model()
    return _fit_now(dpo.comparisons(m.log_pi0, m.r, pairs, labels, 0), m.log_pi0, 1.0 / kappa)


def horizon(steps: int) -> int:
    return next(h for h in HORIZONS if steps <= h)


def _tables() -> tuple[precompute.Sweep, precompute.Sweep]:
    """The default view's stops on the book's model (seed 0, T <= 200), computed once per
    server process in the background, nearest first (~15 ms each, ~50 kB): every kappa stop at
    the default pairs (the browser draws them during a drag), and every pairs stop at kappa =
    20 with both labels. The fits (~3 ms each) too, so the instant readout
    (klrl_app/instant.py) finds a neighbouring κ's optimum ready as well as its run."""
    stops = [k for k in controls.kappa_options() if k > 0]
    more = [(20.0, p, lab) for p in PAIR_STOPS for lab in dpo.LABELS]
    return (
        precompute.sweep("dpo-fits", book_fit, stops, 20.0, [(DEFAULT_PAIRS, "bt")], _more=more),
        precompute.sweep("dpo-runs", book_run, stops, 20.0, [(DEFAULT_PAIRS, "bt")], _more=more),
    )


def fit_and_run(
    b: Book, kappa: float, pairs, labels: str, seed: int, steps: int, ready: bool = False
) -> tuple[Fit, Run] | None:
    """The fit and the run at κ for the controls' setting: from the background tables on the
    book's model, seed 0, at a planned stop (the run if T <= 200), else computed now and cached
    per model. With ``ready`` (another stop than the run's, during a drag) never computed:
    None unless both are in the tables (the browser says "computing…")."""
    fits, runs = _tables()
    in_tables = is_book(b) and seed == 0 and fits.planned(kappa, pairs, labels)
    if ready:
        if not (in_tables and steps <= HORIZONS[0]):
            return None
        at_fit, at_run = fits.ready(kappa, pairs, labels), runs.ready(kappa, pairs, labels)
        return None if at_fit is None or at_run is None else (at_fit, at_run)
    beta = 1.0 / max(kappa, KAPPA_FLOOR)
    return (
        fits.at(kappa, pairs, labels) if in_tables else fit(b, pairs, labels, seed, beta),
        runs.at(kappa, pairs, labels)
        if in_tables and steps <= HORIZONS[0]
        else run(b, pairs, labels, seed, beta, steps),
    )


def embed(values: np.ndarray, support: np.ndarray, fill: float) -> np.ndarray:
    """Values on the responses with pi0 > 0, back on every response (``fill`` elsewhere)."""
    out = np.full(support.size, fill)
    out[support] = values
    return out


def _tv(p, q) -> float:
    return 0.5 * float(np.abs(np.asarray(p) - np.asarray(q)).sum())


class Pairs(NamedTuple):
    """What depends on the pairs and labels only, not on κ (self-pairs carry nothing)."""

    off: np.ndarray  # the counts W without its diagonal, on the responses pi0 > 0
    compared: np.ndarray  # every response: met a different one in a pair
    unseen: np.ndarray  # pi0 > 0 and never compared
    touch_all: np.ndarray  # every response's number of comparisons
    undefeated: np.ndarray  # won every one of its comparisons (and has one)

    @property
    def n_unseen(self) -> int:
        return int(self.unseen.sum())


def pairs_of(w: np.ndarray, sup: np.ndarray) -> Pairs:
    off = w.copy()
    np.fill_diagonal(off, 0.0)  # a pair of a response with itself carries nothing
    compared = embed(dpo.responses_seen(w), sup, False)
    return Pairs(
        off,
        compared,
        sup & ~compared,
        embed((off + off.T).sum(axis=1), sup, 0.0),
        embed((off.sum(axis=1) > 0) & (off.sum(axis=0) == 0), sup, False),
    )


@dataclass(frozen=True)
class Scene:
    """What every figure reads besides κ's numbers, as the page's controls set it."""

    b: Book
    axis: str
    steps: int
    sup: np.ndarray  # DPO needs pi0 > 0: the implied reward divides by it
    data: Pairs  # the comparisons: what DPO is fitted to
    scale: Scale  # the policy panel's y axis, one for every κ

    @property
    def xs(self):
        return list(self.b.labels) if self.b.small else self.b.r

    @property
    def hover_x(self) -> str:
        return "%{x}" if self.b.small else "r = %{x:.3f}"

    @property
    def unseen(self) -> np.ndarray:
        return self.data.unseen

    @property
    def n_unseen(self) -> int:
        return self.data.n_unseen


def scene(b: Book, axis: str, steps: int, w: np.ndarray, kappa_default: float) -> Scene:
    sup = b.pi0 > 0
    # The policy panel's y axis, one for every κ (nothing rescales in a drag): the run, IPO and
    # the DPO optimum can put a response near 1 at some κ, so the axis runs to 1.08; it is
    # broken above what π₀ and π* at the default κ need, so their bars fill the panel (issue
    # 31 item 6's scale, tilt_figures.policy_scale).
    return Scene(
        b, axis, steps, sup, pairs_of(w, sup), policy_scale(b, kappa_default, whole=(1.0,))
    )


@dataclass(frozen=True)
class Numbers:
    """What the readout and the two followed figures read at one κ (pairs, labels, T, seed
    and model as set)."""

    star: tilt.Tilt  # the tilt π* at this β
    star_true: float  # E_π*[r*]
    exists: bool  # the DPO loss has a minimiser
    opt_pi: np.ndarray  # its policy (0 where undefined), on every response
    vanish: np.ndarray  # responses the loss drives to 0 when there is no minimiser
    ipo_pi: np.ndarray
    run_pi: np.ndarray  # the run after T steps
    run_kl: float
    run_proxy: float
    run_true: float
    path: np.ndarray  # steps drawn along the run's path (at most PATH_POINTS)
    tv_opt: float | None
    tv_run: float
    tv_ipo: float
    weights: np.ndarray  # σ(r̂_l − r̂_w) of each pair at the run's policy
    mean_w: float | None
    wrong_share: float  # share of the pairs whose weight is above ½
    faded_share: float  # share of the pairs whose weight is below ¼
    resp_w: np.ndarray  # each response's mean pair weight (nan: never compared)


def path_steps(steps: int) -> np.ndarray:
    return np.unique(np.rint(np.expm1(np.linspace(0, np.log1p(steps), PATH_POINTS))).astype(int))


def numbers(s: Scene, kappa: float, fit: Fit, run: Run) -> Numbers:
    """Every number at κ that the readout and the figures read, from klrl_core."""
    b, sup, steps, off = s.b, s.sup, s.steps, s.data.off
    lq = b.log_pi0[sup]
    beta = 1.0 / max(kappa, KAPPA_FLOOR)
    star = tilt.tilt(b.log_pi0, b.r, max(kappa, KAPPA_FLOOR))
    opt, ipo = fit.opt, fit.ipo
    exists = bool(opt.exists)
    opt_pi = embed(opt.pi, sup, 0.0)
    # the limit's losers: log pi = -inf exactly (a tiny beta may round a kept share to 0.0)
    vanish = embed(np.isneginf(opt.log_pi), sup, False) & (not exists)
    ipo_pi = embed(ipo.pi, sup, 0.0)
    run_pi = np.exp(embed(run.log_pi[steps], sup, -np.inf))
    tv_opt = _tv(opt_pi, star.pi) if exists else None
    # the gradient weight sigma(r_hat_l - r_hat_w) of each pair at the run's policy (step 4)
    weights = dpo.pair_weights(run.log_pi[steps], lq, beta)  # [i, j]: i won against j
    n_off = float(off.sum())
    mean_w = float((off * weights).sum() / n_off) if n_off > 0 else None
    wrong_share = float(off[weights > 0.5].sum() / n_off) if n_off > 0 else 0.0
    faded_share = float(off[weights < 0.25].sum() / n_off) if n_off > 0 else 0.0
    touch = off + off.T
    with np.errstate(invalid="ignore", divide="ignore"):
        resp_w_s = ((off * weights).sum(axis=1) + (off * weights).sum(axis=0)) / touch.sum(axis=1)
    resp_w = embed(np.where(touch.sum(axis=1) > 0, resp_w_s, np.nan), sup, np.nan)
    return Numbers(
        star,
        float(star.pi @ b.r_true),
        exists,
        opt_pi,
        vanish,
        ipo_pi,
        run_pi,
        float(run.kl[steps]),
        float(run.proxy[steps]),
        float(run.true[steps]),
        path_steps(steps),
        tv_opt,
        _tv(run_pi, star.pi),
        _tv(ipo_pi, star.pi),
        weights,
        mean_w,
        wrong_share,
        faded_share,
        resp_w,
    )


# ----------------------------------------------------------------------------- figures
def responses(k: int) -> str:
    return f"{'no responses' if k == 0 else fmt.count(k, 'response')} {fmt.agree(k, 'is', 'are')}"


def policy_chart(s: Scene, kappa: float, nb: Numbers) -> tuple[Chart, str]:
    """π₀, π*, the DPO run, IPO and the DPO optimum (or what it drives to 0); the x axis's
    title is the pair-weight strip's, below it (weights_chart)."""
    b, xs, hover_x, steps = s.b, s.xs, s.hover_x, s.steps
    n_vanish = int(nb.vanish.sum())
    chart = policy_panel(b, nb.star.pi, s.scale, height=290)
    for trace in chart.data:  # π* and π₀, on one or both segments
        plots.merge_into(trace, {"name": "π*" if trace["name"] == "optimum π*" else "π₀"})

    def dots(**trace) -> None:
        """Markers on the lower segment and, when the axis is broken, their copy above."""
        chart.add(**trace)
        if s.scale.brk is not None:  # above the break only (no row on its floor)
            y = np.where(trace["y"] > s.scale.brk, trace["y"], np.nan)
            chart.add(**{**trace, "y": y, "yaxis": "y3", "showlegend": False})

    if nb.exists:
        dots(
            x=xs,
            y=nb.opt_pi,
            mode="markers",
            name="DPO optimum",
            marker={
                "color": "rgba(0,0,0,0)",
                "size": 13,
                "symbol": "circle",
                "line": {"color": DPO_COLOR, "width": 2.5},
            },
            hovertemplate=hover_x + "<br>DPO optimum %{y:.4f}<extra></extra>",
        )
    dots(
        x=xs,
        y=nb.run_pi,
        mode="markers",
        name=f"DPO, T = {steps:,}",
        marker={"color": DPO_COLOR, "size": 9, "symbol": "diamond"},
        hovertemplate=hover_x + "<br>run %{y:.4f}<extra></extra>",
    )
    dots(
        x=xs,
        y=nb.ipo_pi,
        mode="markers",
        name="IPO",
        marker={"color": IPO_COLOR, "size": 9, "symbol": "triangle-up"},
        hovertemplate=hover_x + "<br>IPO %{y:.4f}<extra></extra>",
    )
    if n_vanish:
        chart.add(
            x=[x for x, v in zip(xs, nb.vanish) if v],
            y=np.zeros(n_vanish),
            mode="markers",
            name="DPO → 0",
            cliponaxis=False,
            marker={
                "color": VANISH_COLOR,
                "size": 10,
                "symbol": "x-thin",
                "line": {"color": VANISH_COLOR, "width": 2.5},
            },
            hovertemplate=hover_x + "<br>driven to 0<extra></extra>",
        )
    alt = (
        f"Bar chart of the {b.r.size} responses"
        f"{'' if b.small else ', ordered by their reward r'}: π₀ as outlines, π* at κ = "
        f"{controls.kappa_text(kappa)} as bars, the DPO policy after {steps:,} gradient "
        f"steps as diamonds, IPO's optimum as triangles"
        + (
            ", the DPO optimum as rings"
            if nb.exists
            else f", and {responses(n_vanish)} marked where DPO's loss drives them to 0"
        )
        + (
            ". Every response is compared at least once."
            if s.n_unseen == 0
            else f". {responses(s.n_unseen).capitalize()} never compared."
        )
        + scale_text(s.scale)
    )
    return chart, alt


def policies(nb: Numbers) -> dict[str, np.ndarray]:
    """The policies at κ, per response, for the table of a small model."""
    return {
        "π*": nb.star.pi,
        "DPO run": nb.run_pi,
        "IPO": nb.ipo_pi,
        **({"DPO optimum": nb.opt_pi} if nb.exists else {}),
    }


def charts(s: Scene, kappa: float, nb: Numbers, run: Run) -> dict[str, tuple[Chart, str]]:
    """The three followed figures at κ, each with its text alternative."""
    policy = policy_chart(s, kappa, nb)
    return {
        "dpo-policy": policy,
        "dpo-weights": weights_chart(s, kappa, nb, policy[0]),
        "dpo-frontier": frontier_chart(s, kappa, nb, run),
    }


def weights_chart(s: Scene, k: float, nb: Numbers, policy: Chart) -> tuple[Chart, str]:
    """The strip below the policy, on its x axis: each response's mean pair weight at the
    run's policy, and the responses never compared. A chart of its own, not a panel of the
    policy's: plotly.js recomputes every trace of a chart when one changes, so the policy's
    chart is drawn at each stop before this one is."""
    b, xs, hover_x, n_unseen = s.b, s.xs, s.hover_x, s.n_unseen
    # The rings are named in the x axis's title (a legend row would push the strip down).
    x_title = ("response" if b.small else "response, by its reward r") + (
        " · ○ never compared" if n_unseen else ""
    )
    chart = Chart(x_title, "pair weight", height=140, barmode="overlay", showlegend=False)
    plots.stack(policy, chart, left=MARGIN_L)
    width = policy.data[0]["width"]
    chart.add(
        "bar",
        x=xs,
        y=nb.resp_w,
        width=width,
        name="pair weight",
        marker={"color": DPO_COLOR, "opacity": 0.55},
        hovertemplate=hover_x + "<br>mean weight %{y:.2f}<extra></extra>",
    )
    if n_unseen:
        chart.add(
            x=[x for x, u in zip(xs, s.unseen) if u],
            y=np.full(n_unseen, 0.5),
            mode="markers",
            name="never compared",
            marker={
                "color": COLORS["neutral"],
                "size": 9,
                "symbol": "circle-open",
                "line": {"width": 2},
            },
            hovertemplate=hover_x + "<br>never compared<extra></extra>",
        )
    chart.update(yaxis={"range": [0, 1.05], "tickvals": [0, 0.5, 1], "zeroline": False})
    at = (
        "at π₀, read in the limit β → ∞"
        if k == 0
        else f"at the run's policy after {s.steps:,} steps"
    )
    alt = (
        f"Bar chart below the policy, on the same responses: each response's mean pair "
        f"weight {at}"
        + (f", and rings at 0.5 for the {n_unseen} responses never compared" if n_unseen else "")
        + f". The mean over pairs is "
        f"{'none' if nb.mean_w is None else fmt.fixed(nb.mean_w, 2)}."
    )
    return chart, alt


def frontier_chart(s: Scene, kappa: float, nb: Numbers, run: Run) -> tuple[Chart, str]:
    """Reward against KL: π*'s frontiers for r and r*, the DPO run's path and where it is."""
    b, axis, steps, star = s.b, s.axis, s.steps, nb.star
    unit = "√nats" if axis == "sqrt" else "nats"
    chart = frontier_panel(b, float(star.kl), float(star.expected), kappa, height=446, axis=axis)
    plots.merge_into(chart.data[0], {"name": "π*, proxy r", "line": {"width": 2}})
    plots.merge_into(chart.data[-1], {"name": f"π* at κ = {controls.kappa_text(kappa)}"})
    chart.add(
        x=frontier_x(b, b.frontier.kl, axis),
        y=b.frontier_true,
        mode="lines",
        name="π*, true r*",
        line={"color": COLORS["optimum"], "dash": "dash", "width": 2},
        hovertemplate=f"%{{x:.2f}} {unit}<br>E[r*] %{{y:.3f}}<extra>π*</extra>",
    )
    chart.add(
        x=frontier_x(b, [float(star.kl)], axis),
        y=[nb.star_true],
        mode="markers",
        showlegend=False,
        marker={
            "color": "rgba(0,0,0,0)",
            "size": 19,
            "line": {"color": COLORS["optimum"], "width": 3.5},
        },
        hovertemplate=f"%{{x:.2f}} {unit}<br>E[r*] %{{y:.3f}}<extra>current π*</extra>",
    )
    path_x = np.asarray(frontier_x(b, run.kl[nb.path], axis))
    chart.add(
        x=path_x,
        y=run.proxy[nb.path],
        mode="lines",
        name="DPO run, proxy r",
        line={"color": DPO_COLOR, "width": 3},
        hovertemplate=f"%{{x:.2f}} {unit}<br>E[r] %{{y:.3f}}<extra>run</extra>",
    )
    chart.add(
        x=path_x,
        y=run.true[nb.path],
        mode="lines",
        name="DPO run, true r*",
        line={"color": DPO_COLOR, "width": 3, "dash": "dash"},
        hovertemplate=f"%{{x:.2f}} {unit}<br>E[r*] %{{y:.3f}}<extra>run</extra>",
    )
    chart.add(
        x=frontier_x(b, [nb.run_kl, nb.run_kl], axis),
        y=[nb.run_proxy, nb.run_true],
        mode="markers",
        name=f"run at T = {steps:,}",
        marker={
            "color": DPO_COLOR,
            "size": 13,
            "symbol": "diamond",
            "line": {"color": "white", "width": 1.5},
        },
        hovertemplate=f"%{{x:.2f}} {unit}<br>%{{y:.3f}}<extra>step {steps:,}</extra>",
    )
    # The y axis, fixed over every κ stop: the frontiers of r and r* and π₀'s rewards.
    lo = min(float(b.frontier_true.min()), float(b.frontier.expected.min()), b.reward_pi0)
    top = chart.layout["yaxis"]["range"][1]
    chart.update(yaxis={"range": [lo - 0.03 * float(np.ptp(b.r) or 1.0), top]})
    alt = (
        f"Line chart of expected reward against {'√KL' if axis == 'sqrt' else 'KL'} from "
        f"π₀: π*'s frontier for the proxy r (solid) and the true r* (dashed), and the DPO "
        f"run's path over {steps:,} gradient steps in the same two styles. After {steps:,} "
        f"steps the run is at KL {fmt.fixed(nb.run_kl, 2)} nats with proxy "
        f"{fmt.fixed(nb.run_proxy, 2)} and true {fmt.fixed(nb.run_true, 2)}; π* at κ = "
        f"{controls.kappa_text(kappa)} is at KL {fmt.fixed(float(star.kl), 2)} nats, proxy "
        f"{fmt.fixed(float(star.expected), 2)}, true {fmt.fixed(nb.star_true, 2)}."
    )
    return chart, alt


def implied_chart(
    s: Scene, kappa: float, star: tilt.Tilt, fit: Fit, run: Run
) -> tuple[Chart, float]:
    """The implied reward β·log(π/π₀) of π*, the run, IPO and the DPO optimum, each centred on
    its π₀-weighted mean, beside r − E_π₀[r]; and π*'s largest difference from the latter."""
    b, sup, xs, hover_x = s.b, s.sup, s.xs, s.hover_x
    beta = 1.0 / max(kappa, KAPPA_FLOOR)
    lq = b.log_pi0[sup]
    centre = float(b.pi0 @ b.r)
    rhat_star = embed(dpo.implied_reward(star.log_pi[sup], lq, beta), sup, np.nan)
    rhat_run = embed(dpo.implied_reward(run.log_pi[s.steps], lq, beta), sup, np.nan)
    rhat_ipo = embed(dpo.implied_reward(fit.ipo.log_pi, lq, beta), sup, np.nan)
    rhat_opt = (
        embed(dpo.implied_reward(fit.opt.log_pi, lq, beta), sup, np.nan) if fit.opt.exists else None
    )
    c = Chart(
        "response" if b.small else "response, by its reward r",
        "implied reward r̂ = β·log(π/π₀) + const",
        height=400,
    )
    if b.small:
        c.update(xaxis={"type": "category"})
    c.add(
        x=xs,
        y=b.r - centre,
        mode="lines+markers" if b.small else "lines",
        name="r − E_π₀[r]",
        line={"color": COLORS["proxy"], "width": 2.5},
        hovertemplate=hover_x + "<br>%{y:.3f}<extra>r − E_π₀[r]</extra>",
    )
    c.add(
        x=xs,
        y=rhat_star,
        mode="markers",
        name="π*",
        marker={"color": COLORS["optimum"], "size": 8},
        hovertemplate=hover_x + "<br>r̂ %{y:.3f}<extra>π*</extra>",
    )
    if rhat_opt is not None:
        c.add(
            x=xs,
            y=rhat_opt,
            mode="markers",
            name="DPO optimum",
            marker={
                "color": "rgba(0,0,0,0)",
                "size": 13,
                "line": {"color": DPO_COLOR, "width": 2.5},
            },
            hovertemplate=hover_x + "<br>r̂ %{y:.3f}<extra>DPO optimum</extra>",
        )
    c.add(
        x=xs,
        y=rhat_run,
        mode="markers",
        name=f"DPO after {s.steps:,} steps",
        marker={"color": DPO_COLOR, "size": 9, "symbol": "diamond"},
        hovertemplate=hover_x + "<br>r̂ %{y:.3f}<extra>run</extra>",
    )
    c.add(
        x=xs,
        y=rhat_ipo,
        mode="markers",
        name="IPO optimum",
        marker={"color": IPO_COLOR, "size": 8, "symbol": "triangle-up"},
        hovertemplate=hover_x + "<br>r̂ %{y:.3f}<extra>IPO</extra>",
    )
    finite = [a for a in (b.r - centre, rhat_star, rhat_run, rhat_ipo, rhat_opt) if a is not None]
    vals = np.concatenate([a[np.isfinite(a)] for a in finite])
    span = float(vals.max() - vals.min()) or 1.0
    c.update(yaxis={"range": [float(vals.min()) - 0.06 * span, float(vals.max()) + 0.06 * span]})
    return c, float(np.nanmax(np.abs(rhat_star - (b.r - centre))))


def implied_alt(s: Scene, agreement: str, exists: bool) -> str:
    """The implied-reward chart's text alternative; ``agreement`` says how close π*'s
    implied reward is to r − E_π₀[r]."""
    return (
        f"Scatter of the implied reward β·log(π/π₀), centred on its π₀-weighted mean, for "
        f"each of the {s.b.r.size} responses: r − E_π₀[r] as a line, π* on it ({agreement}), "
        f"the DPO run after {s.steps:,} steps as diamonds and IPO as triangles"
        + (", the DPO optimum as rings." if exists else ".")
    )


def details(s: Scene, nb: Numbers, run: Run, stem: str) -> None:
    """The numbers behind the figures: the table per response and three downloads (it, the
    run's path, the comparisons), named ``stem``…csv."""
    df, path, comparisons = tables(s, nb, run)
    layout.table(df)
    layout.csv_download(df, f"{stem}.csv", key="dpo-csv")
    layout.csv_download(
        path, f"{stem}_path.csv", label="Download the run's path (CSV)", key="dpo-path-csv"
    )
    layout.csv_download(
        comparisons,
        f"{stem}_pairs.csv",
        label="Download the comparisons and their weights (CSV)",
        key="dpo-pairs-csv",
    )


def tables(s: Scene, nb: Numbers, run: Run) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The numbers behind the figures: per response, the run's path, and the comparisons."""
    b, steps, off = s.b, s.steps, s.data.off
    df = pd.DataFrame(
        {
            "response": list(b.labels),
            "reward r": b.r,
            "true reward r*": b.r_true,
            "reference pi0": b.pi0,
            "optimum pi*": nb.star.pi,
            "compared": s.data.compared,
            "DPO optimum" if nb.exists else "DPO: driven to 0 (no optimum)": nb.opt_pi
            if nb.exists
            else nb.vanish,
            f"DPO run after {steps} steps": nb.run_pi,
            "IPO optimum": nb.ipo_pi,
            "mean pair weight at the run": nb.resp_w,
        }
    )
    path = pd.DataFrame(
        {
            "step": np.arange(steps + 1),
            "KL (nats)": run.kl[: steps + 1],
            "expected proxy reward": run.proxy[: steps + 1],
            "expected true reward": run.true[: steps + 1],
        }
    )
    idx = np.flatnonzero(s.sup)
    wi, lo_ = np.nonzero(off)
    comparisons = pd.DataFrame(
        {
            "winner": [b.labels[idx[i]] for i in wi],
            "loser": [b.labels[idx[j]] for j in lo_],
            "count": off[wi, lo_],
            "weight at the run": nb.weights[wi, lo_],
        }
    )
    return df, path, comparisons
