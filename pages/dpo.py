"""Section 12.6: direct preference optimization on the book's model, and where it goes wrong."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd
import streamlit as st

from klrl_core import dpo, tilt, user_model
from klrl_app import controls, fmt, layout, lru, plots, precompute
from klrl_app.plots import COLORS, Chart
from klrl_app.tilt_figures import (choose_model, frontier_panel, frontier_x, is_book,
                                   policy_panel, policy_scale, response_table, scale_text)

PAIR_STOPS = [10, 30, 100, 300, 1_000, 3_000, 10_000, 30_000, 100_000, "all"]
DEFAULT_PAIRS = 1_000
KAPPA_DEFAULT = 20.0
MAX_TYPED_PAIRS = dpo.MAX_PAIRS           # a link may ask for any count up to 10^7
MAX_STEPS = 2_000
# A run is computed to the first of these horizons that covers T and cached: moving T within
# a horizon only slices it (gradient steps are deterministic, so a prefix is the shorter run).
HORIZONS = (200, 500, 1_000, MAX_STEPS)
LABEL_NAMES = {"bt": "BT", "deterministic": "Deterministic"}
# kappa = 0 is beta = infinity, where the DPO loss is not defined; it is drawn as the limit
# beta -> infinity, computed at kappa = 1e-6 (every log ratio below 1e-5: the same to 3 decimals).
KAPPA_FLOOR = 1e-6
DPO_COLOR = COLORS["accent"]
IPO_COLOR = COLORS["best_of_n"]
VANISH_COLOR = COLORS["incorrect"]
# A view on the book's model where the run's true reward clearly rises and then falls while the
# proxy keeps rising (0.60 after 51 steps, 0.52 at 2,000; tests/test_app_dpo.py checks it).
FALL_VIEW = "dpo?pairs=all&kappa=100&steps=2000"


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
    tr = dpo.dpo_gradient_steps(w, lq, beta, horizon)         # lr: the safe default 1/L
    return Run(tr.log_pi, tr.kl, tr.pi @ r, tr.pi @ rt)


@lru.memo
def _run(model_key, pairs, labels: str, seed: int, beta: float, horizon: int,
         _lq, _r, _rt) -> Run:
    return _run_now(_lq, _r, _rt, pairs, labels, seed, beta, horizon)


def _book_model():
    p = user_model.PRESETS[user_model.BOOK]
    return user_model.make_model(np.array(p.pi0), np.array(p.r), np.array(p.r_true))


def _book_run(kappa: float, pairs, labels: str) -> Run:
    """A run on the book's model, seed 0, first horizon: what the background table holds."""
    m = _book_model()
    return _run_now(m.log_pi0, m.r, m.r_true, pairs, labels, 0, 1.0 / kappa, HORIZONS[0])


# The default view's stops on the book's model (seed 0, T <= 200), computed once per server
# process in the background, nearest first (~15 ms each, ~50 kB): every kappa stop at the
# default pairs (the browser draws them during a drag), and every pairs stop at kappa = 20
# with both labels.
NEAR_KAPPAS = precompute.outward(controls.kappa_options(), 20.0)
NEAR = ([(k, DEFAULT_PAIRS, "bt") for k in NEAR_KAPPAS if k > 0]
        + [(20.0, p, lab) for p in PAIR_STOPS for lab in LABEL_NAMES])
NEAR_SET = set(NEAR)
RUNS = precompute.stops("dpo-runs", _book_run, NEAR)


def _book_fit(kappa: float, pairs, labels: str) -> Fit:
    """The comparisons and both optima on the book's model, seed 0 (as _fit computes them)."""
    m = _book_model()
    return _fit_now(dpo.comparisons(m.log_pi0, m.r, pairs, labels, 0), m.log_pi0, 1.0 / kappa)


# The same stops' fits (~3 ms each), so the instant readout (klrl_app/instant.py) finds a
# neighbouring κ's optimum ready as well as its run.
FITS = precompute.stops("dpo-fits", _book_fit, NEAR)


def _horizon(steps: int) -> int:
    return next(h for h in HORIZONS if steps <= h)


def _embed(values: np.ndarray, support: np.ndarray, fill: float) -> np.ndarray:
    """Values on the responses with pi0 > 0, back on every response (``fill`` elsewhere)."""
    out = np.full(support.size, fill)
    out[support] = values
    return out


def _tv(p, q) -> float:
    return 0.5 * float(np.abs(np.asarray(p) - np.asarray(q)).sum())


# --------------------------------------------------------------------------------- page
page = layout.Page(
    "dpo", "Direct preference optimization",
    "Section 12.6 · Equation (12.9) · Table 12.2 · Figure 12.5's true reward",
    "DPO needs no reward model: it fits the policy's own implied reward β·log(π/π₀) to "
    "comparisons of responses drawn from π₀ (Equation 12.9). With every pair and Bradley–Terry "
    "labels its optimum is the tilt π*; a finite number of pairs, deterministic labels and a "
    "finite number of gradient steps each take it somewhere else.",
)
ui = page.ui
c_kappa, c_pairs, c_labels, c_more = page.control_row([2.3, 2.3, 1.8, 1.6])
with c_kappa:
    kappa = ui.kappa(default=KAPPA_DEFAULT)
with c_pairs:
    pairs = ui.count_or_all(
        "pairs", "Pairs drawn from π₀", PAIR_STOPS, DEFAULT_PAIRS, MAX_TYPED_PAIRS, "pairs",
        word_means="the infinite-data limit",
        help="How many pairs (y, y′), both drawn from π₀ and labelled, DPO is fitted to. "
             "'all' is the exact limit of infinitely many.")
with c_labels:
    labels = ui.choice(
        "labels", "Labels", LABEL_NAMES, default="bt",
        help="BT (Bradley–Terry): y beats y′ with probability σ(r(y) − r(y′)). "
             "Deterministic: the higher reward always wins (a tie by a fair coin).")
with c_more:
    with st.popover("Run", icon=":material/settings:", width="stretch",
                    help="Gradient steps T and the seed of the pairs"):
        steps = ui.integer("steps", "Gradient steps T", default=200, lo=0, hi=MAX_STEPS,
                           step=10, help="Plain gradient steps on the DPO loss from π₀, each "
                                         "of size 1/L, with L the loss's largest curvature, "
                                         "which is guaranteed to lower it.")
        seed = ui.seed(help="The same seed draws the same pairs and labels.")
    b, axis = choose_model(ui, with_true=True)
page.finish_controls()

# ----- the numbers
d = 2 if is_book(b) else 3                     # the chapter's precision on its own model
k_eff = max(kappa, KAPPA_FLOOR)
beta = 1.0 / k_eff
k_text = controls.kappa_text(kappa)
sup = b.pi0 > 0                                # DPO needs pi0 > 0: the implied reward divides by it
lq, r_s, rt_s = b.log_pi0[sup], b.r[sup], b.r_true[sup]
# the model as a short cache key: Streamlit hashes it on every call, and 90 floats cost ~2 ms
mkey = (b.name, hash((b.pi0.tobytes(), b.r.tobytes(), b.r_true.tobytes())))


def in_tables(kappa: float) -> bool:
    """The background tables' setting: the book's model, seed 0, a stop near the default."""
    return is_book(b) and seed == 0 and (kappa, pairs, labels) in NEAR_SET


fit = (FITS.get(kappa, pairs, labels) if in_tables(kappa)
       else _fit(mkey, pairs, labels, seed, beta, lq, r_s))
if in_tables(kappa) and steps <= HORIZONS[0]:
    run = RUNS.get(kappa, pairs, labels)
else:
    run = _run(mkey, pairs, labels, seed, beta, _horizon(steps), lq, r_s, rt_s)
n = b.r.size


@dataclass(frozen=True)
class Numbers:
    """What the readout and the two followed figures read at one κ (pairs, labels, T, seed
    and model as set)."""
    star: tilt.Tilt              # the tilt π* at this β
    star_true: float             # E_π*[r*]
    exists: bool                 # the DPO loss has a minimiser
    opt_pi: np.ndarray           # its policy (0 where undefined), on every response
    vanish: np.ndarray           # responses the loss drives to 0 when there is no minimiser
    ipo_pi: np.ndarray
    run_pi: np.ndarray           # the run after T steps
    run_kl: float
    run_proxy: float
    run_true: float
    path: np.ndarray             # steps drawn along the run's path (at most PATH_POINTS)
    tv_opt: float | None
    tv_run: float
    tv_ipo: float
    weights: np.ndarray          # σ(r̂_l − r̂_w) of each pair at the run's policy
    mean_w: float | None
    wrong_share: float           # share of the pairs whose weight is above ½
    resp_w: np.ndarray           # each response's mean pair weight (nan: never compared)
    items: list                  # the readout


# The run's path is drawn at steps spaced evenly in log(1 + step) (the first steps move it
# most), so every κ stop's path fits the browser's table of stops.
PATH_POINTS = 40


def path_steps(steps: int) -> np.ndarray:
    return np.unique(np.rint(np.expm1(np.linspace(0, np.log1p(steps), PATH_POINTS)))
                     .astype(int))


# What depends on the pairs and labels only, not on κ.
off = fit.W.copy()
np.fill_diagonal(off, 0.0)                     # a pair of a response with itself carries nothing
compared = _embed((off.sum(axis=0) + off.sum(axis=1)) > 0, sup, False)
unseen = sup & ~compared                       # a response pi0 never writes is not counted
n_unseen = int(unseen.sum())
n_off = float(off.sum())
touch = off + off.T
touch_all = _embed(touch.sum(axis=1), sup, 0.0)               # comparisons of each response
undefeated = _embed((off.sum(axis=1) > 0) & (off.sum(axis=0) == 0), sup, False)


def numbers_at(kappa: float, fit: Fit, run: Run) -> Numbers:
    """Every number at κ that the readout and the figures read, from klrl_core."""
    beta = 1.0 / max(kappa, KAPPA_FLOOR)
    star = tilt.tilt(b.log_pi0, b.r, max(kappa, KAPPA_FLOOR))
    opt, ipo = fit.opt, fit.ipo
    exists = bool(opt.exists)
    opt_pi = _embed(opt.pi, sup, 0.0)
    # the limit's losers: log pi = -inf exactly (a tiny beta may round a kept share to 0.0)
    vanish = _embed(np.isneginf(opt.log_pi), sup, False) & (not exists)
    ipo_pi = _embed(ipo.pi, sup, 0.0)
    run_pi = np.exp(_embed(run.log_pi[steps], sup, -np.inf))
    tv_opt = _tv(opt_pi, star.pi) if exists else None
    tv_run, tv_ipo = _tv(run_pi, star.pi), _tv(ipo_pi, star.pi)
    # the gradient weight sigma(r_hat_l - r_hat_w) of each pair at the run's policy (step 4)
    weights = dpo.pair_weights(run.log_pi[steps], lq, beta)   # [i, j]: i won against j
    mean_w = float((off * weights).sum() / n_off) if n_off > 0 else None
    wrong_share = float(off[weights > 0.5].sum() / n_off) if n_off > 0 else 0.0
    with np.errstate(invalid="ignore", divide="ignore"):
        resp_w_s = ((off * weights).sum(axis=1) + (off * weights).sum(axis=0)) / touch.sum(axis=1)
    resp_w = _embed(np.where(touch.sum(axis=1) > 0, resp_w_s, np.nan), sup, np.nan)
    run_kl, run_proxy, run_true = (float(run.kl[steps]), float(run.proxy[steps]),
                                   float(run.true[steps]))
    star_true = float(star.pi @ b.r_true)
    n_vanish = int(vanish.sum())
    unseen_text = ("none" if n_unseen == 0 else
                   f"{n_unseen} (π* mass {fmt.fixed(float(star.pi[unseen].sum()), 3)})")
    items = [
        ("TV(DPO optimum, π*)", fmt.fixed(tv_opt, 3) if exists
         else f"no optimum: {n_vanish} → 0"),
        ("TV(run, π*)", f"{fmt.fixed(tv_run, 3)} at T = {steps:,}"),
        ("never compared", unseen_text),
        ("TV(IPO, π*)", fmt.fixed(tv_ipo, 3)),
        ("mean pair weight", "none" if mean_w is None else fmt.fixed(mean_w, 2)),
        ("run: KL", f"{fmt.fixed(run_kl, d)} nats"),
        ("run: E[r] / E[r*]", f"{fmt.fixed(run_proxy, d)} / {fmt.fixed(run_true, d)}"),
        ("π*: E[r] / E[r*]",
         f"{fmt.fixed(float(star.expected), d)} / {fmt.fixed(star_true, d)}"),
    ]
    return Numbers(star, star_true, exists, opt_pi, vanish, ipo_pi, run_pi, run_kl, run_proxy,
                   run_true, path_steps(steps), tv_opt, tv_run, tv_ipo, weights, mean_w,
                   wrong_share, resp_w, items)


xs = list(b.labels) if b.small else b.r
hover_x = "%{x}" if b.small else "r = %{x:.3f}"
f4 = np.float32                                 # single precision: far below a pixel
unit = "√nats" if axis == "sqrt" else "nats"
# The frontier's y axis, fixed over every κ stop: the frontiers of r and r* and π₀'s rewards.
frontier_lo = min(float(b.frontier_true.min()), float(b.frontier.expected.min()), b.reward_pi0)


MARGIN_L = 56   # the policy's and the strip's (plots.stack): wide enough for either's y labels


def responses(k: int) -> str:
    return f"{'no' if k == 0 else f'{k:,}'} response{'' if k == 1 else 's'} " \
           f"{'is' if k == 1 else 'are'}"


# The policy panel's y axis, one for every κ (nothing rescales in a drag): the run, IPO and the
# DPO optimum can put a response near 1 at some κ, so the axis runs to 1.08; it is broken
# above what π₀ and π* at the default κ need, so their bars fill the panel (issue 31 item 6's
# scale, tilt_figures.policy_scale).
POLICY_SCALE = policy_scale(b, KAPPA_DEFAULT, whole=(1.0,))


def policy_chart(kappa: float, nb: Numbers) -> tuple[Chart, str]:
    """π₀, π*, the DPO run, IPO and the DPO optimum (or what it drives to 0); the x axis's
    title is the pair-weight strip's, below it (weights_chart)."""
    n_vanish = int(nb.vanish.sum())
    chart = policy_panel(b, nb.star.pi.astype(f4), POLICY_SCALE, height=290)
    for trace in chart.data:                   # π* and π₀, on one or both segments
        plots.merge(trace, {"name": "π*" if trace["name"] == "optimum π*" else "π₀"})

    def dots(**trace) -> None:
        """Markers on the lower segment and, when the axis is broken, their copy above."""
        chart.add(**trace)
        if POLICY_SCALE.brk is not None:        # above the break only (no row on its floor)
            y = np.where(trace["y"] > POLICY_SCALE.brk, trace["y"], np.nan).astype(f4)
            chart.add(**{**trace, "y": y, "yaxis": "y3", "showlegend": False})

    if nb.exists:
        dots(x=xs, y=nb.opt_pi.astype(f4), mode="markers", name="DPO optimum",
             marker={"color": "rgba(0,0,0,0)", "size": 13, "symbol": "circle",
                     "line": {"color": DPO_COLOR, "width": 2.5}},
             hovertemplate=hover_x + "<br>DPO optimum %{y:.4f}<extra></extra>")
    dots(x=xs, y=nb.run_pi.astype(f4), mode="markers", name=f"DPO, T = {steps:,}",
         marker={"color": DPO_COLOR, "size": 9, "symbol": "diamond"},
         hovertemplate=hover_x + "<br>run %{y:.4f}<extra></extra>")
    dots(x=xs, y=nb.ipo_pi.astype(f4), mode="markers", name="IPO",
         marker={"color": IPO_COLOR, "size": 9, "symbol": "triangle-up"},
         hovertemplate=hover_x + "<br>IPO %{y:.4f}<extra></extra>")
    if n_vanish:
        chart.add(x=[x for x, v in zip(xs, nb.vanish) if v], y=np.zeros(n_vanish),
                  mode="markers", name="DPO → 0", cliponaxis=False,
                  marker={"color": VANISH_COLOR, "size": 10, "symbol": "x-thin",
                          "line": {"color": VANISH_COLOR, "width": 2.5}},
                  hovertemplate=hover_x + "<br>driven to 0<extra></extra>")
    alt = (f"Bar chart of the {n} responses{'' if b.small else ', ordered by their reward r'}: "
           f"π₀ as outlines, π* at κ = "
           f"{controls.kappa_text(kappa)} as bars, the DPO policy after {steps:,} gradient "
           f"steps as diamonds, IPO's optimum as triangles"
           + (", the DPO optimum as rings" if nb.exists else
              f", and {responses(n_vanish)} marked where DPO's loss drives them to 0")
           + (". Every response is compared at least once." if n_unseen == 0 else
              f". {responses(n_unseen).capitalize()} never compared.")
           + scale_text(POLICY_SCALE))
    return chart, alt


def weights_chart(k: float, nb: Numbers, policy: Chart) -> tuple[Chart, str]:
    """The strip below the policy, on its x axis: each response's mean pair weight at the
    run's policy, and the responses never compared. A chart of its own, not a panel of the
    policy's: plotly.js recomputes every trace of a chart when one changes, so the policy's
    chart is drawn at each stop before this one is."""
    # The rings are named in the x axis's title (a legend row would push the strip down).
    x_title = ("response" if b.small else "response, by its reward r") + (
        " · ○ never compared" if n_unseen else "")
    chart = Chart(x_title, "pair weight", height=140, barmode="overlay", showlegend=False)
    plots.stack(policy, chart, left=MARGIN_L)
    width = policy.data[0]["width"]
    chart.add("bar", x=xs, y=nb.resp_w.astype(f4), width=width, name="pair weight",
              marker={"color": DPO_COLOR, "opacity": 0.55},
              hovertemplate=hover_x + "<br>mean weight %{y:.2f}<extra></extra>")
    if n_unseen:
        chart.add(x=[x for x, u in zip(xs, unseen) if u], y=np.full(n_unseen, 0.5),
                  mode="markers", name="never compared",
                  marker={"color": COLORS["neutral"], "size": 9, "symbol": "circle-open",
                          "line": {"width": 2}},
                  hovertemplate=hover_x + "<br>never compared<extra></extra>")
    chart.update(yaxis={"range": [0, 1.05], "tickvals": [0, 0.5, 1], "zeroline": False})
    at = ("at π₀, read in the limit β → ∞" if k == 0 else
          f"at the run's policy after {steps:,} steps")
    alt = (f"Bar chart below the policy, on the same responses: each response's mean pair "
           f"weight {at}"
           + (f", and rings at 0.5 for the {n_unseen} responses never compared" if n_unseen
              else "")
           + f". The mean over pairs is "
           f"{'none' if nb.mean_w is None else fmt.fixed(nb.mean_w, 2)}.")
    return chart, alt


def frontier_chart(kappa: float, nb: Numbers, run: Run) -> tuple[Chart, str]:
    """Reward against KL: π*'s frontiers for r and r*, the DPO run's path and where it is."""
    star = nb.star
    chart = frontier_panel(b, float(star.kl), float(star.expected), kappa, height=446,
                           axis=axis)
    plots.merge(chart.data[0], {"name": "π*, proxy r", "line": {"width": 2}})
    plots.merge(chart.data[-1], {"name": f"π* at κ = {controls.kappa_text(kappa)}"})
    chart.add(x=frontier_x(b, b.frontier.kl, axis), y=b.frontier_true, mode="lines",
              name="π*, true r*", line={"color": COLORS["optimum"], "dash": "dash", "width": 2},
              hovertemplate=f"%{{x:.2f}} {unit}<br>E[r*] %{{y:.3f}}<extra>π*</extra>")
    chart.add(x=frontier_x(b, [float(star.kl)], axis), y=[nb.star_true], mode="markers",
              showlegend=False,
              marker={"color": "rgba(0,0,0,0)", "size": 19,
                      "line": {"color": COLORS["optimum"], "width": 3.5}},
              hovertemplate=f"%{{x:.2f}} {unit}<br>E[r*] %{{y:.3f}}<extra>current π*</extra>")
    path_x = np.asarray(frontier_x(b, run.kl[nb.path], axis), dtype=f4)
    chart.add(x=path_x, y=run.proxy[nb.path].astype(f4), mode="lines",
              name="DPO run, proxy r", line={"color": DPO_COLOR, "width": 3},
              hovertemplate=f"%{{x:.2f}} {unit}<br>E[r] %{{y:.3f}}<extra>run</extra>")
    chart.add(x=path_x, y=run.true[nb.path].astype(f4), mode="lines", name="DPO run, true r*",
              line={"color": DPO_COLOR, "width": 3, "dash": "dash"},
              hovertemplate=f"%{{x:.2f}} {unit}<br>E[r*] %{{y:.3f}}<extra>run</extra>")
    chart.add(x=frontier_x(b, [nb.run_kl, nb.run_kl], axis), y=[nb.run_proxy, nb.run_true],
              mode="markers", name=f"run at T = {steps:,}",
              marker={"color": DPO_COLOR, "size": 13, "symbol": "diamond",
                      "line": {"color": "white", "width": 1.5}},
              hovertemplate=f"%{{x:.2f}} {unit}<br>%{{y:.3f}}<extra>step {steps:,}</extra>")
    top = chart.layout["yaxis"]["range"][1]
    chart.update(yaxis={"range": [frontier_lo - 0.03 * float(np.ptp(b.r) or 1.0), top]})
    alt = (f"Line chart of expected reward against {'√KL' if axis == 'sqrt' else 'KL'} from "
           f"π₀: π*'s frontier for the proxy r (solid) and the true r* (dashed), and the DPO "
           f"run's path over {steps:,} gradient steps in the same two styles. After {steps:,} "
           f"steps the run is at KL {fmt.fixed(nb.run_kl, 2)} nats with proxy {fmt.fixed(nb.run_proxy, 2)} and "
           f"true {fmt.fixed(nb.run_true, 2)}; π* at κ = {controls.kappa_text(kappa)} is at KL "
           f"{fmt.fixed(float(star.kl), 2)} nats, proxy {fmt.fixed(float(star.expected), 2)}, true "
           f"{fmt.fixed(nb.star_true, 2)}.")
    return chart, alt


def view_at(k: float) -> layout.View | None:
    """The readout and both figures at κ = k. Another stop than the run's comes from the
    background tables without computing: None unless its fit and run are there (the book's
    model, seed 0, T ≤ 200, the default pairs and labels); the browser says "computing…"."""
    if k == kappa:
        at_fit, at_run = fit, run
    elif in_tables(k) and steps <= HORIZONS[0]:
        at_fit, at_run = FITS.peek(k, pairs, labels), RUNS.peek(k, pairs, labels)
        if at_fit is None or at_run is None:
            return None
    else:
        return None
    nb = numbers_at(k, at_fit, at_run)
    policy = policy_chart(k, nb)
    return layout.View(nb.items, {"dpo-policy": policy, "dpo-weights": weights_chart(k, nb, policy[0]),
                                  "dpo-frontier": frontier_chart(k, nb, at_run)})


nb = numbers_at(kappa, fit, run)
star, pi_star, opt, ipo = nb.star, nb.star.pi, fit.opt, fit.ipo
exists, opt_pi, vanish, ipo_pi, run_pi = nb.exists, nb.opt_pi, nb.vanish, nb.ipo_pi, nb.run_pi
n_vanish = int(vanish.sum())
run_kl, run_proxy, run_true, star_true = nb.run_kl, nb.run_proxy, nb.run_true, nb.star_true
tv_opt, tv_run, tv_ipo = nb.tv_opt, nb.tv_run, nb.tv_ipo
weights, mean_w, wrong_share, resp_w = nb.weights, nb.mean_w, nb.wrong_share, nb.resp_w

helps = [
    "total-variation distance between the exact minimiser of the DPO loss and the tilt π* at "
    "the same β. When some responses lose to others they never beat back, the loss has no "
    "minimiser: it keeps falling as those responses go to probability 0 (the count).",
    "distance from π* of the policy after T plain gradient steps from π₀: what a training "
    "run on these comparisons reaches.",
    "responses that never meet a different response in a pair, and the probability π* puts "
    "on them. DPO cannot move their logits.",
    "distance from π* of IPO's optimum (Azar et al., 2024): a bounded square loss in place of "
    "the log-sigmoid, so its optimum always exists.",
    "the gradient weight σ(r̂(y_l) − r̂(y_w)) averaged over the pairs at the run's policy "
    "(Section 12.6.1, step 4): ½ at π₀ (T = 0), near 0 for a pair the implied reward already "
    "orders right by a wide margin, near 1 for one it orders wrong. At κ = 0 (β = ∞) the run "
    "stays on π₀ and the weights are read in the limit β → ∞, where the implied reward "
    "β·log(π/π₀) stays finite and moves step by step as at any β.",
    "KL(π ‖ π₀) of the run after T steps.",
    "expected proxy reward r (the reward that labels the pairs) and true reward r* "
    "(Figure 12.5's bend) of the run after T steps.",
    "the same for the tilt π* at this β.",
]
view = page.follow(layout.Instant("kappa", view_at,
                                  setting=(mkey, pairs, labels, seed, steps)), helps)
left, right = page.figures()
with left:
    page.chart(view, "dpo-policy")
    page.chart(view, "dpo-weights")
with right:
    page.chart(view, "dpo-frontier")

if b.small:
    response_table(page, b, {"π*": pi_star, "DPO run": run_pi, "IPO": ipo_pi,
                             **({"DPO optimum": opt_pi} if exists else {})})


# ----- what to look for (every sentence branches on the numbers it describes)
pairs_words = ("every pair" if pairs == "all" else
               f"{int(pairs):,} pair{'' if int(pairs) == 1 else 's'}")
survivors = np.flatnonzero(sup & ~vanish)
if kappa == 0:
    what = ("At κ = 0 (β = ∞) the KL term allows no move at all: π* is π₀, and so are the "
            "run and IPO, because the implied reward β·log(π/π₀) they fit stays finite, so "
            "every log ratio is 0. The implied reward itself, and with it the pair weights, "
            "are read in the limit β → ∞, where the run still fits it to the labels.")
    if not exists:
        what += (f" The loss still has no minimiser: at every finite β it drives the same "
                 f"{fmt.count(n_vanish, 'response')} to 0.")
elif exists and pairs == "all" and labels == "bt":
    what = ("With every pair counted and Bradley–Terry labels the DPO optimum is π* itself "
            "(Table 12.2, last row): the implied reward it fits is r, up to a constant.")
elif exists and labels == "bt":
    what = (f"From {pairs_words} the loss has a minimiser (no response loses to one it never "
            f"beats back, even along a chain), but its implied reward is an estimate of r "
            f"from finitely many noisy labels"
            + (", so the optimum misses π*." if tv_opt >= 0.0005 else
               "; at this β the estimate is good enough to land on π* to three decimals."))
elif exists:
    what = ("These pairs never compare two different rewards, so no label is decisive and "
            "nothing is driven to 0.")
elif labels == "deterministic":
    what = (f"Deterministic labels: the higher reward wins every comparison between "
            f"different rewards, so each loser "
            f"would need an infinitely large gap in implied reward. The loss has no minimiser; "
            f"it keeps falling as the {n_vanish} response"
            + (" beaten by one it never beats back goes " if n_vanish == 1 else
               "s beaten by one they never beat back go ") +
            f"to probability 0, whatever β is (Azar et al., 2024): the KL regularisation "
            f"cannot hold {'it' if n_vanish == 1 else 'them'}.")
    if survivors.size == 1:
        what += (f" Only one response survives ({b.labels[survivors[0]]}, r = "
                 f"{fmt.fixed(float(b.r[survivors[0]]), 2)}).")
else:
    one = n_vanish == 1
    v_s = np.isneginf(opt.log_pi)                           # on the responses with pi0 > 0
    n_beat = int((off[:, v_s].sum(axis=1) > 0).sum())       # responses that beat one of them
    to = "a response" if n_beat == 1 else "responses"
    what = (f"No optimum: among {pairs_words}, {n_vanish} response{'' if one else 's'} "
            f"{'loses' if one else 'lose'} to {to} {'it' if one else 'they'} never "
            f"{'beats' if one else 'beat'} back (even along a chain), so the loss keeps falling "
            f"as {'it goes' if one else 'they go'} to probability 0, whatever β is.")
    if undefeated.any():
        rarest = int(np.flatnonzero(undefeated)[np.argmin(b.pi0[undefeated])])
        m = int(undefeated.sum())
        what += (f" {m} response"
                 f"{' won every one of its' if m == 1 else 's won every one of their'} "
                 f"comparisons ({'' if m == 1 else 'the rarest: '}{b.labels[rarest]}, r = "
                 f"{fmt.fixed(float(b.r[rarest]), 2)}, π₀ = {fmt.prob(float(b.pi0[rarest]))}, "
                 f"{int(touch_all[rarest]):,} comparison{'' if touch_all[rarest] == 1 else 's'}), "
                 f"so nothing bounds {'its' if m == 1 else 'their'} implied reward from above "
                 f"and every response {'it' if m == 1 else 'they'} beat goes to 0.")

if steps == 0:
    run_words = "At T = 0 the run is π₀: open Run to train it."
elif not exists and kappa > 0:
    one = n_vanish == 1
    surv = sup & ~vanish
    if float(b.pi0[vanish].sum()) <= 0.5:
        share = (f"gives {'the vanishing response' if one else f'those {n_vanish} responses'} "
                 f"{fmt.prob(float(run_pi[vanish].sum()))}{'' if one else ' in total'} "
                 f"(π₀: {fmt.prob(float(b.pi0[vanish].sum()))})")
    else:
        share = (f"gives the {int(surv.sum())} survivor{'' if surv.sum() == 1 else 's'} "
                 f"{fmt.prob(float(run_pi[surv].sum()))} (π₀: "
                 f"{fmt.prob(float(b.pi0[surv].sum()))})")
    behind = (float(b.pi0[vanish].sum()) > 0.5
              and float(run_pi[surv].sum()) < float(b.pi0[surv].sum()))
    run_words = (f"The run after {steps:,} steps {share}"
                 + (": so far less than under π₀, the run is nowhere near the limit. "
                    if behind else ". ")
                 + "Each step lowers the loss, which reaches its infimum only in the limit, "
                   "so a run never arrives there.")
elif exists:
    gap = np.abs(run_pi - opt_pi)
    worst = int(np.argmax(gap))
    if gap[worst] < 0.0005:
        run_words = f"After {steps:,} steps the run has reached the optimum."
    else:
        rare = b.pi0[worst] < np.median(b.pi0[sup])
        run_words = (f"After {steps:,} steps the run has not reached the optimum: the largest "
                     f"difference is at {b.labels[worst]} "
                     f"(r = {fmt.fixed(float(b.r[worst]), 2)}), which π₀ "
                     f"writes with probability {fmt.prob(float(b.pi0[worst]))}"
                     + (". A response's logit moves in proportion to its share of the pairs, "
                        "so rare responses are the slowest." if rare else "."))
else:
    run_words = ""

if n_unseen == 0:
    unseen_words = "Every response meets another in at least one pair."
else:
    raised = unseen & (pi_star > b.pi0) & (kappa > 0)       # at kappa = 0, pi* is pi0
    unseen_words = (f"{n_unseen} response{' never meets' if n_unseen == 1 else 's never meet'} "
                    f"another in a pair (grey rings): DPO cannot move "
                    f"{'its logit' if n_unseen == 1 else 'their logits'}"
                    + (", so they keep π₀'s ratios among themselves" if n_unseen > 1 else "")
                    + ". ")
    if raised.any():
        hi = int(np.flatnonzero(raised)[np.argmax(b.r[raised])])
        k_raised = int(raised.sum())
        unseen_words += (f"π* raises {'it' if n_unseen == 1 else f'{k_raised} of them'} "
                         f"above π₀ ({'' if k_raised == 1 else 'the highest: '}r = "
                         f"{fmt.fixed(float(b.r[hi]), 2)}, which π₀ writes with probability "
                         f"{fmt.prob(float(b.pi0[hi]))}): the responses the tilt wants most are "
                         f"the ones a sample from π₀ rarely contains.")
    else:
        unseen_words += ("π* does not raise " + ("it" if n_unseen == 1 else "any of them")
                         + " above π₀.")

page.explain(" ".join(w for w in (what, run_words, unseen_words) if w))

# ----- below the first screen
if page.section("IPO, the pair weights and the true reward along the run"):
    ipo_ratio = float(np.min(ipo.log_pi - lq))
    ipo_words = ("" if kappa == 0 else
                 f": its smallest log ratio log(π/π₀) here is "
                 f"{fmt.fixed(ipo_ratio, 2)}")
    layout.paragraph(
        f"**IPO** (Azar et al., 2024) asks each comparison for a finite gap of 1/(2β) in "
        f"log ratio instead of maximising a likelihood, so its optimum always exists and keeps "
        f"every response{ipo_words}. With every pair its target is π₀·exp(P(y beats π₀)/β), "
        f"a tilt by the win rate, not by r."
        + (" Beside DPO's collapse that is the point: the same deterministic labels leave "
           "IPO finite." if labels == "deterministic" and kappa > 0 else ""))
    if mean_w is None:
        w_words = "No pair compares two different responses, so the loss has no gradient."
    elif steps == 0:
        w_words = ("At T = 0 every pair has weight ½: the implied reward is 0 everywhere, so "
                   "no pair is ordered yet. Move T under Run to watch them change.")
    else:
        faded = float(off[weights < 0.25].sum() / n_off)
        limit = ("At κ = 0 the run never leaves π₀; read in the limit β → ∞, where its implied "
                 "reward stays finite, " if kappa == 0 else "")
        w_words = (f"{limit}{'a' if limit else 'A'}fter {steps:,} steps {fmt.pct(faded, max_places=1)} of "
                   f"the pairs weigh less than ¼ "
                   f"(the implied reward orders them as labelled by a wide margin) and "
                   f"{fmt.pct(wrong_share, max_places=1)} more than ½ (it orders them against their "
                   f"label). ")
        spread = float(np.ptp(r_s))
        if labels == "bt" and mean_w > 0.4:
            w_words += (f"With Bradley–Terry labels on rewards that span {fmt.sig(spread, 2, trim=True)}, the "
                        f"higher reward wins a comparison at most "
                        f"{fmt.pct(1 / (1 + math.exp(-spread)))} of the time: the labels are "
                        f"close to coin flips"
                        + (", the fitted gaps stay small, and most weights stay near ½ however "
                           "long the run." if exists else
                           f" and most weights stay near ½, except those of the pairs with the "
                           f"{fmt.count(n_vanish, 'response')} the loss drives to 0 (it has "
                           f"no minimiser): {'its' if n_vanish == 1 else 'their'} implied "
                           f"reward falls without bound as the run goes on, so those gaps "
                           f"keep growing."))
        elif labels == "deterministic":
            w_words += ("Deterministic labels never contradict each other, so the gaps keep "
                        "growing and the weights keep falling toward 0.")
    layout.paragraph(f"**The pair weights** σ(r̂(y_l) − r̂(y_w)) (Section 12.6.1, step 4). "
                     f"{w_words}")
    fall_link = (f" For a run whose true reward rises and then falls while the proxy keeps "
                 f"rising, open [every pair at κ = 100, 2,000 steps]({FALL_VIEW})"
                 f"{'' if is_book(b) else ' on the book’s model'}.")
    if steps > 0 and kappa == 0:
        layout.paragraph(f"**Overoptimization.** At κ = 0 the run stays on π₀, and so does "
                         f"its true reward r*, {fmt.fixed(b.true_pi0, d)}.{fall_link}")
    elif steps == 0:
        layout.paragraph(f"**Overoptimization.** At T = 0 the run is π₀: no step, no "
                         f"overoptimization yet.{fall_link}")
    elif steps > 0:
        path_true = run.true[:steps + 1]
        front_peak = float(b.peak.pi @ b.r_true)
        peak = int(np.argmax(path_true))
        drop = float(path_true[peak]) - run_true
        if peak < steps and drop >= 0.005:
            # Overoptimization is the proxy rising while r* falls (Figure 12.5): only when the
            # proxy at T is above both its value at r*'s peak and pi0's.
            proxy0, proxy_peak = float(run.proxy[0]), float(run.proxy[peak])
            proxy_up = run_proxy > proxy_peak and run_proxy > proxy0
            if peak == 0:
                o_words = (f"Along the run the true reward r* only fell, from "
                           f"{fmt.fixed(b.true_pi0, d)} under π₀ to {fmt.fixed(run_true, d)}")
            else:
                o_words = (f"Along the run the true reward r* peaked at "
                           f"{fmt.fixed(float(path_true[peak]), d)} "
                           f"after {peak:,} step{'' if peak == 1 else 's'} "
                           f"({fmt.fixed(float(run.kl[peak]), d)} nats) and has fallen "
                           f"to {fmt.fixed(run_true, d)}")
            if proxy_up:
                o_words += (" while the proxy kept rising" if peak > 0 else
                            f" while the proxy rose from {fmt.fixed(proxy0, d)} to "
                            f"{fmt.fixed(run_proxy, d)}")
                o_words += ": direct methods overoptimize too (Rafailov et al., 2024b)."
            else:
                top = max(proxy0, proxy_peak)
                where = "under π₀" if proxy0 >= proxy_peak else "at r*'s peak"
                o_words += (f", and the proxy r did not rise either: it ends at "
                            f"{fmt.fixed(run_proxy, d)}, against {fmt.fixed(top, d)} {where}. "
                            f"That is not overoptimization (the proxy rising as r* falls): "
                            f"the run fits its labels, not r.{fall_link}")
        elif peak < steps:
            best_at = ("π₀'s" if peak == 0 else
                       f"after {peak:,} step{'' if peak == 1 else 's'}")
            o_words = (f"Along the run the true reward r* has levelled off at "
                       f"{fmt.fixed(run_true, d)}: "
                       f"its best, {best_at}, is less than 0.005 higher.{fall_link}")
        else:
            o_words = (f"Up to step {steps:,} the run's true reward r* is still rising: "
                       f"{fmt.fixed(run_true, d)}, against {fmt.fixed(b.true_pi0, d)} under "
                       f"π₀.{fall_link}")
        layout.paragraph(
            f"**Overoptimization.** {o_words} The comparisons were labelled by the proxy r; "
            f"nothing in the DPO loss knows about r*. On π*'s own frontier r* peaks at "
            f"{fmt.fixed(front_peak, d)} ({fmt.fixed(float(b.peak.kl), max(d - 1, 1))} nats)"
            + (f"; the run's best so far, {fmt.fixed(float(path_true.max()), d)}, is above it: the "
               f"frontier is the best policy for r at each KL, not for r*."
               if float(path_true.max()) > front_peak + 0.005 else "."))

if page.section("The implied reward"):
    centre = float(b.pi0 @ b.r)
    rhat_star = _embed(dpo.implied_reward(star.log_pi[sup], lq, beta), sup, np.nan)
    rhat_run = _embed(dpo.implied_reward(run.log_pi[steps], lq, beta), sup, np.nan)
    rhat_ipo = _embed(dpo.implied_reward(ipo.log_pi, lq, beta), sup, np.nan)
    rhat_opt = (_embed(dpo.implied_reward(opt.log_pi, lq, beta), sup, np.nan) if exists
                else None)
    c = Chart("response" if b.small else "response, by its reward r",
              "implied reward r̂ = β·log(π/π₀) + const", height=400)
    if b.small:
        c.update(xaxis={"type": "category"})
    c.add(x=xs, y=b.r - centre, mode="lines+markers" if b.small else "lines",
          name="r − E_π₀[r]", line={"color": COLORS["proxy"], "width": 2.5},
          hovertemplate=hover_x + "<br>%{y:.3f}<extra>r − E_π₀[r]</extra>")
    c.add(x=xs, y=rhat_star, mode="markers", name="π*",
          marker={"color": COLORS["optimum"], "size": 8},
          hovertemplate=hover_x + "<br>r̂ %{y:.3f}<extra>π*</extra>")
    if rhat_opt is not None:
        c.add(x=xs, y=rhat_opt, mode="markers", name="DPO optimum",
              marker={"color": "rgba(0,0,0,0)", "size": 13,
                      "line": {"color": DPO_COLOR, "width": 2.5}},
              hovertemplate=hover_x + "<br>r̂ %{y:.3f}<extra>DPO optimum</extra>")
    c.add(x=xs, y=rhat_run, mode="markers", name=f"DPO after {steps:,} steps",
          marker={"color": DPO_COLOR, "size": 9, "symbol": "diamond"},
          hovertemplate=hover_x + "<br>r̂ %{y:.3f}<extra>run</extra>")
    c.add(x=xs, y=rhat_ipo, mode="markers", name="IPO optimum",
          marker={"color": IPO_COLOR, "size": 8, "symbol": "triangle-up"},
          hovertemplate=hover_x + "<br>r̂ %{y:.3f}<extra>IPO</extra>")
    finite = [a for a in (b.r - centre, rhat_star, rhat_run, rhat_ipo, rhat_opt)
              if a is not None]
    vals = np.concatenate([a[np.isfinite(a)] for a in finite])
    span = float(vals.max() - vals.min()) or 1.0
    c.update(yaxis={"range": [float(vals.min()) - 0.06 * span, float(vals.max()) + 0.06 * span]})
    dev = float(np.nanmax(np.abs(rhat_star - (b.r - centre))))
    dev_words = ("they agree to within 10⁻¹²" if dev < 1e-12
                 else f"largest difference {fmt.standard_form(dev, 2)}")
    plots.show(c, key="dpo-implied", alt=(
        f"Scatter of the implied reward β·log(π/π₀), centred on its π₀-weighted mean, for each "
        f"of the {n} responses: r − E_π₀[r] as a line, π* on it ({dev_words}), the DPO run "
        f"after {steps:,} steps as diamonds and IPO as triangles"
        + (", the DPO optimum as rings." if exists else ".")))
    if kappa == 0:
        rhat_words = ("At β = ∞ every policy here is π₀ and its implied reward is read in the "
                      "limit, where β·log(π/π₀) stays finite.")
    else:
        rhat_words = ""
    flat = (f" The {n_unseen} responses never compared share one implied reward: the data say "
            f"nothing about them." if n_unseen > 1 else "")
    layout.paragraph(
        f"Solve the tilt for the reward: r(y) = β·log(π*(y)/π₀(y)) + β·log Z. Any policy "
        f"implies a reward this way, up to a constant per prompt; here each is centred on its "
        f"π₀-weighted mean. π*'s implied reward is r − E_π₀[r] ({dev_words}). The run's "
        f"implied reward is what DPO has fitted after {steps:,} steps"
        + ("." if exists else "; responses the loss drives to 0 have an implied reward of −∞ "
                              "in the limit, which the run approaches step by step.")
        + f"{flat} {rhat_words}".rstrip())


def numbers() -> None:
    df = pd.DataFrame({
        "response": list(b.labels), "reward r": b.r, "true reward r*": b.r_true,
        "reference pi0": b.pi0, "optimum pi*": pi_star,
        "compared": compared,
        "DPO optimum" if exists else "DPO: driven to 0 (no optimum)":
            opt_pi if exists else vanish,
        f"DPO run after {steps} steps": run_pi, "IPO optimum": ipo_pi,
        "mean pair weight at the run": resp_w,
    })
    layout.table(df)
    stem = (f"dpo_kappa_{controls.fmt_number(kappa)}_pairs_{pairs}_{labels}_seed_{seed}"
            f"_steps_{steps}")
    layout.csv_download(df, f"{stem}.csv", key="dpo-csv")
    path = pd.DataFrame({"step": np.arange(steps + 1), "KL (nats)": run.kl[:steps + 1],
                         "expected proxy reward": run.proxy[:steps + 1],
                         "expected true reward": run.true[:steps + 1]})
    layout.csv_download(path, f"{stem}_path.csv", label="Download the run's path (CSV)",
                        key="dpo-path-csv")
    idx = np.flatnonzero(sup)
    wi, lo_ = np.nonzero(off)
    pairs_df = pd.DataFrame({"winner": [b.labels[idx[i]] for i in wi],
                             "loser": [b.labels[idx[j]] for j in lo_],
                             "count": off[wi, lo_], "weight at the run": weights[wi, lo_]})
    layout.csv_download(pairs_df, f"{stem}_pairs.csv",
                        label="Download the comparisons and their weights (CSV)",
                        key="dpo-pairs-csv")


page.details(numbers)
