"""What the three tilt pages share (Figures 12.2, 12.3, 12.5): the model (the book's or a
reader's own, chosen by ``choose_model``), the policy panel (reference outline, optimum bars)
and the reward–KL frontier panel, on a KL or a √KL axis."""

from __future__ import annotations

import re
from typing import NamedTuple

import numpy as np
import pandas as pd
import streamlit as st

from klrl_core import best_of_n, model, square_root, tilt, user_model
from klrl_app import layout, lru
from klrl_app.controls import HIDE, LOCK, Controls, fmt_number, kappa_text
from klrl_app.plots import COLORS, Chart

AXES = {"kl": "KL", "sqrt": "√KL"}  # the frontier's x axis (axis=kl|sqrt in the link)


class Book(NamedTuple):
    """A model and everything that does not depend on a slider (computed once per model)."""

    name: str  # preset name, or "Your own lists"
    r: np.ndarray
    log_pi0: np.ndarray
    pi0: np.ndarray
    r_true: np.ndarray
    true_given: bool  # False: r_true is the chapter's bend applied to r
    labels: tuple[str, ...]
    small: bool  # few responses: bars per response, values listed
    kappas: np.ndarray
    frontier: tilt.Tilt
    reward_pi0: float
    true_pi0: float
    frontier_true: np.ndarray  # E_{pi*}[r_true] along the frontier (Figure 12.5)
    peak_kappa: float  # where E_{pi*}[r_true] peaks
    peak: tilt.Tilt
    ladder_n: np.ndarray  # n = 1, 2, 4, ..., 2^17 (Figure 12.3)
    ladder: best_of_n.BestOfN
    kl_max: float  # the frontier's end, log(1/pi0(top level)) (Sec. 12.3.3)
    key: tuple  # what the model was built from (a cache key)


# Built once per model and process, shared read-only by every session. lru.memo, not
# st.cache_resource: Streamlit hashes the argument tuples on every call (~4 ms a run).
@lru.memo
def _build(name: str, pi0: tuple, r: tuple, r_true: tuple | None, labels: tuple[str, ...]) -> Book:
    m = user_model.make_model(
        np.array(pi0), np.array(r), None if r_true is None else np.array(r_true)
    )
    true_given = m.r_true is not None
    rt = m.r_true if true_given else model.true_reward(m.r)
    kappas = tilt.kappa_grid()
    front = tilt.frontier(m.log_pi0, m.r, kappas)
    peak_kappa, peak = tilt.true_reward_peak(m.log_pi0, m.r, rt)
    ladder_n = best_of_n.powers_of_two()
    return Book(
        name,
        m.r,
        m.log_pi0,
        m.pi0,
        rt,
        true_given,
        labels,
        user_model.is_small(m),
        kappas,
        front,
        float(m.pi0 @ m.r),
        float(m.pi0 @ rt),
        front.pi @ rt,
        peak_kappa,
        peak,
        ladder_n,
        best_of_n.best_of_n(m.log_pi0, m.r, ladder_n),
        float(front.kl[-1]),
        (name, pi0, r, r_true),
    )


def book() -> Book:
    """The stated model of the chapter (SPEC.md), shared read-only by every session."""
    p = user_model.PRESETS[user_model.BOOK]
    return _build(user_model.BOOK, p.pi0, p.r, p.r_true, p.labels)


class GaoCurves(NamedTuple):
    """Exact true-reward gain against d = √KL along best-of-n and along the tilt, and Gao et
    al.'s forms fitted to each (chapter 28, "Rewards and their failures")."""

    bon: square_root.Curve
    bon_fit: square_root.GaoFit
    rl: square_root.Curve
    rl_fit: square_root.GaoFit


@lru.memo
def _gao(key: tuple, _b: Book) -> GaoCurves:
    out = []
    for method, curve, fit in (
        ("best_of_n", square_root.best_of_n_curve, square_root.fit_gao_bon),
        ("tilt", square_root.tilt_curve, square_root.fit_gao_rl),
    ):
        d = np.linspace(0.0, square_root.max_d(_b.log_pi0, _b.r, method), 121)[1:]
        c = curve(_b.log_pi0, _b.r, _b.r_true, d=d)
        out += [c, fit(c.d, c.gain)]
    return GaoCurves(*out)


def gao_curves(b: Book) -> GaoCurves | None:
    """Computed once per model and shared (a least-squares fit on 120 exact points each);
    None when the model gives nothing to fit (no KL to spend: a single response, all rewards
    equal)."""
    try:
        return _gao(b.key, b)
    except ValueError:
        return None


def best_of_n_stops(b: Book, kappas, chosen_n: int | None) -> tuple[float, dict[float, int]]:
    """Best-of-n at every stop ``kappas`` of the κ slider: the n at each stop (as chosen, or
    the n whose exact KL is closest to the optimum's there) and the largest probability
    best-of-n gives any response at any stop. The policy panel's y axis reaches that at every
    stop, so nothing rescales while κ is dragged. Computed once per model, stops and n, and
    shared read-only."""
    return _best_of_n_stops(b.key, tuple(float(k) for k in kappas), chosen_n, b)


@lru.memo
def _best_of_n_stops(
    key: tuple, kappas: tuple, chosen_n: int | None, _b: Book
) -> tuple[float, dict[float, int]]:
    b = _b
    if chosen_n is not None:
        ns = {float(k): int(chosen_n) for k in kappas}
    else:
        ns = {
            float(k): best_of_n.matched_n(b.log_pi0, b.r, float(tilt.tilt(b.log_pi0, b.r, k).kl))
            for k in kappas
        }
    levels = np.array(sorted(set(ns.values())), dtype=float)
    top = float(best_of_n.best_of_n(b.log_pi0, b.r, levels).pi.max())
    return top, ns


def is_book(b: Book) -> bool:
    return b.name == user_model.BOOK


def response_table(page, b: Book, columns: dict[str, np.ndarray]) -> None:
    """A small model's responses, one row each, to 3 decimals, in full view under the
    figures (not in the presentation view)."""
    if page.present:
        return
    import pandas as pd

    from klrl_app import fmt
    from klrl_app.layout import small_table

    df = pd.DataFrame({"response": list(b.labels), "r": b.r, "π₀ (reference)": b.pi0, **columns})
    if not is_book(b) and b.true_given:
        df.insert(2, "r* (true)", b.r_true)
    # rewards to 3 decimals; probabilities too, or with their first digits when smaller
    small_table(
        df,
        {
            c: ((lambda v: fmt.fixed(v, 3)) if c.startswith("r") else fmt.prob)
            for c in df.columns[1:]
        },
    )


# ----------------------------------------------------------------------- choosing a model
OWN = "Your own lists"


def choose_model(ui: Controls, with_true: bool = False) -> tuple[Book, str]:
    """The model control, a button that opens presets and two (or three) lists, linked as
    ``pi0``, ``r`` (and ``rtrue``), and the frontier's axis (``axis``). Without lists in the
    link the page shows the book's model; lists that cannot be used give a notice and the
    book's model. Returns the model and the axis ("kl" or "sqrt")."""
    names = list(user_model.PRESETS) + [OWN]
    key, text_keys = ui.key("model"), {p: ui.key(p) for p in ("pi0", "r", "rtrue")}
    # the link: lists that cannot be read are kept as the reader's own (_model_from_lists
    # says what is wrong); lists that repeat a worked example open it
    ui.preset_or_lists(
        "model",
        user_model.PRESETS,
        user_model.BOOK,
        OWN,
        ("pi0", "r", "rtrue") if with_true else ("pi0", "r"),
        user_model.read_model,
        _matching_preset,
        required=("pi0", "r"),
        missing="A model needs both `pi0` and `r`; showing the book's model.",
    )

    def preset_chosen() -> None:
        name = st.session_state[key]
        if name in user_model.PRESETS and name != user_model.BOOK:
            p = user_model.PRESETS[name]
            # the chapter's setting for the example: its beta, its n (on best-of-n)
            if p.beta is not None and ui.key("kappa") in st.session_state:
                st.session_state[ui.key("kappa")] = 1.0 / p.beta
            if p.n is not None and ui.key("n") in st.session_state:
                st.session_state[ui.key("n")] = p.n
            st.session_state[text_keys["pi0"]] = user_model.to_text(p.pi0)
            st.session_state[text_keys["r"]] = user_model.to_text(p.r)
            st.session_state[text_keys["rtrue"]] = user_model.to_text(p.r_true) if p.r_true else ""

    def lists_edited() -> None:
        st.session_state[key] = OWN

    name = st.session_state[key]
    # a preset (lock=model or pi0/r, hide=...) may fix the model, the axis or both
    shown = ui.declare("model", "Model", ("pi0", "r", "rtrue"), short="the model") != HIDE
    off = ui.state("model") == LOCK
    if not shown and ui.state("axis") == HIDE:
        return _model_from_lists(ui, name, text_keys, with_true), axis_control(ui)
    # The button says "Model" alone and its tooltip names the model: "Model: the book's" was
    # cut to "Model: the…" in dpo's narrow column at 1280×720 (issue 31), and the examples'
    # names are longer still.
    with st.popover(
        "Model" if shown else "Frontier's axis",
        icon=":material/edit_note:",
        width="stretch",
        help=f"Showing: {name}. The model, your own lists, and the frontier's axis.",
    ):
        if shown:
            st.selectbox(
                "Model",
                names,
                key=key,
                on_change=preset_chosen,
                disabled=off,
                help="The book's 30-response model, the chapter's worked examples, "
                "or lists of your own.",
            )
        if shown and name != user_model.BOOK:
            st.text_input(
                "π₀: reference probabilities, comma-separated",
                key=text_keys["pi0"],
                on_change=lists_edited,
                help="Normalised if they do not sum to 1.",
                disabled=off,
            )
            st.text_input(
                "r: rewards, comma-separated (any order, ties allowed)",
                key=text_keys["r"],
                on_change=lists_edited,
                disabled=off,
            )
            if with_true:
                st.text_input(
                    "r*: true rewards (optional)",
                    key=text_keys["rtrue"],
                    on_change=lists_edited,
                    disabled=off,
                    help="Empty: the chapter's bend, r − 2.4·max(r − 0.5, 0)².",
                )
        axis = axis_control(ui)
    return _model_from_lists(ui, name, text_keys, with_true), axis


def _model_from_lists(ui: Controls, name: str, text_keys: dict[str, str], with_true: bool) -> Book:
    if name == user_model.BOOK:
        return book()
    texts = [st.session_state.get(text_keys[p], "") for p in ("pi0", "r")]
    rtrue_text = st.session_state.get(text_keys["rtrue"], "") if with_true else ""
    try:
        m = user_model.read_model(texts[0], texts[1], rtrue_text or None)
    except ValueError as why:
        # the reader's own text is not echoed where it reads as a computed nan or inf
        why_text = re.sub(
            r"'[^']*(?:inf|nan)[^']*'",
            "a value that is not a finite number",
            str(why).rstrip("."),
            flags=re.IGNORECASE,
        )
        ui.notice(f"Your lists could not be used ({why_text}); showing the book's model instead.")
        return book()
    for note in m.notes:
        ui.note(note)
    for p, text in user_model.model_text(m).items():
        ui.link_param(p, text)
    preset = user_model.PRESETS.get(name)
    labels = (
        preset.labels
        if preset is not None and len(preset.labels) == m.r.size
        else tuple(f"y{i + 1}" for i in range(m.r.size))
    )
    return _build(
        name, tuple(m.pi0), tuple(m.r), None if m.r_true is None else tuple(m.r_true), labels
    )


def _matching_preset(m: user_model.UserModel) -> str:
    """The worked example whose lists these repeat (with a true reward or without), else
    "Your own lists"."""
    for name, p in user_model.PRESETS.items():
        if (
            name != user_model.BOOK
            and len(p.pi0) == m.pi0.size
            and np.allclose(p.pi0, m.pi0)
            and np.allclose(p.r, m.r)
            and (p.r_true is None) == (m.r_true is None)
        ):
            return name
    return OWN


# --------------------------------------------------------------------------------- panels
def _x(b: Book) -> np.ndarray | list[str]:
    """Bars by reward on the book's model; one labelled bar per response on a small one."""
    return list(b.labels) if b.small else b.r


# The policy panel's y axis is fixed for a model (nothing rescales while κ is dragged), and
# must be readable at every κ: at the pages' default κ the bars reach about 0.1, while at large
# κ one bar reaches 1. When that whole range is more than BREAK_RATIO times what the default κ
# needs, the axis is broken: a linear lower segment from 0 to that need (most of the panel)
# and a compressed upper segment up to the whole range's top, with a break mark between them.
BREAK_RATIO = 2.0
UPPER_SHARE = 0.18  # of the bars' height: the compressed upper segment
GAP_SHARE = 0.05  # of the bars' height: the break between the segments


class Scale(NamedTuple):
    """The policy panel's y axis for a model: linear to ``top``, or broken at ``brk``."""

    brk: float | None
    top: float


def policy_scale(
    b: Book, default_kappa: float, extra: tuple[float, ...] = (), whole: tuple[float, ...] = ()
) -> Scale:
    """The y axis of the policy panel: ``whole`` (largest probabilities over every κ; π*'s
    along the frontier and π₀'s are always included) against what the page's default κ
    needs (π*'s bars there, π₀'s outline and ``extra``, e.g. best-of-n's dots)."""
    need = 1.1 * max(
        float(b.pi0.max()), float(tilt.tilt(b.log_pi0, b.r, default_kappa).pi.max()), *extra
    )
    top = 1.08 * max(float(b.frontier.pi.max()), float(b.pi0.max()), *whole)
    if top <= BREAK_RATIO * need:
        return Scale(None, top)
    return Scale(need, top)


def _bar_domains(c: Chart, lo: float, hi: float) -> None:
    """Put the bars in [lo, hi] of the figure's height (both segments when broken)."""
    if "yaxis3" not in c.layout:
        c.update(yaxis={"domain": [lo, hi]})
        return
    h = hi - lo
    split = hi - UPPER_SHARE * h
    c.update(yaxis={"domain": [lo, split - GAP_SHARE * h]}, yaxis3={"domain": [split, hi]})
    # the break mark: two short slanted strokes across the y axis, in the gap
    mid = split - GAP_SHARE * h / 2
    c.update(
        shapes=[s for s in c.layout.get("shapes", []) if s.get("name") != "break"]
        + [
            {
                "type": "line",
                "name": "break",
                "xref": "paper",
                "yref": "paper",
                "x0": -0.018,
                "x1": 0.018,
                "y0": mid - 0.012 + dy,
                "y1": mid + 0.012 + dy,
                "line": {"color": "#808495", "width": 2},
            }
            for dy in (-0.012, 0.012)
        ]
    )


def _twice(c: Chart, scale: Scale, upper: bool = True, **trace) -> None:
    """A trace on the lower segment, and when the axis is broken (and ``upper``) its copy on
    the upper one: each segment shows the part of a bar, or the dots, inside its range."""
    c.add(**trace)
    if scale.brk is not None and upper:
        c.add(**{**trace, "yaxis": "y3", "showlegend": False})


def policy_panel(
    b: Book,
    pi_star: np.ndarray,
    scale: Scale | None = None,
    height: int = 380,
    y_max: float | None = None,
) -> Chart:
    """pi* as blue bars over the reference pi0 drawn as a violet outline, on ``scale`` (or a
    plain axis to ``y_max``, or to just above the bars)."""
    if scale is None:
        scale = Scale(
            None,
            y_max if y_max is not None else 1.08 * max(float(pi_star.max()), float(b.pi0.max())),
        )
    x_title = "response" if b.small else "response, by its reward r"
    c = Chart(x_title, "probability", height=height, barmode="overlay")
    if b.small:
        width, hover_x = 0.6, "%{x}"
        c.update(xaxis={"type": "category"})
    else:
        gaps = np.diff(np.unique(b.r))
        width = 0.8 * float(gaps.min()) if gaps.size else 0.8
        hover_x = "r = %{x:.3f}"
        span = float(b.r.max() - b.r.min()) or 1.0
        c.update(xaxis={"range": [float(b.r.min()) - 0.04 * span, float(b.r.max()) + 0.04 * span]})
    _twice(
        c,
        scale,
        type="bar",
        x=_x(b),
        y=pi_star,
        width=width,
        name="optimum π*",
        legendgroup="pi",
        marker={"color": COLORS["optimum"], "line": {"width": 0}},
        hovertemplate=hover_x + "<br>π* = %{y:.4f}<extra></extra>",
    )
    # π₀'s outline on the upper segment only if it reaches it (below, plotly.js would draw
    # its clipped outline as a line along the segment's floor)
    _twice(
        c,
        scale,
        scale.brk is not None and float(b.pi0.max()) > scale.brk,
        type="bar",
        x=_x(b),
        y=b.pi0,
        width=width,
        name="reference π₀",
        legendgroup="pi0",
        marker={"color": "rgba(0,0,0,0)", "line": {"color": COLORS["reference"], "width": 2}},
        hovertemplate=hover_x + "<br>π₀ = %{y:.4f}<extra></extra>",
    )
    if scale.brk is None:
        return c.update(yaxis={"range": [0, scale.top]})
    c.update(
        yaxis={"range": [0, scale.brk]},
        yaxis3={
            "range": [scale.brk, scale.top],
            "anchor": "x",
            "nticks": 3,
            "showgrid": True,
            "gridcolor": "rgba(128, 132, 149, 0.25)",
            "zeroline": False,
            "ticklabeloverflow": "allow",
        },
    )
    _bar_domains(c, 0.0, 1.0)
    return c


def scale_text(scale: Scale) -> str:
    """The alt text's words for a broken axis ("" for a plain one)."""
    if scale.brk is None:
        return ""
    from klrl_app import fmt

    return (
        f" The probability axis is broken: linear from 0 to {fmt.fixed(scale.brk, 3)}, "
        f"then compressed from there to {fmt.fixed(scale.top, 2)} above a break mark."
    )


def frontier_x(b: Book, kl, axis: str):
    """The frontier's x coordinate: KL, or d = √KL (Gao et al.'s axis, Section 12.5.4)."""
    kl = np.maximum(np.asarray(kl, dtype=float), 0.0)
    return np.sqrt(kl) if axis == "sqrt" else kl


def frontier_panel(
    b: Book, kl: float, expected: float, kappa: float, height: int = 380, axis: str = "kl"
) -> Chart:
    """Expected reward against KL (or √KL) for every kappa, the current optimum marked
    (Section 12.3.2)."""
    x_title = "√KL from π₀ (√nats)" if axis == "sqrt" else "KL from π₀ (nats)"
    unit = "√nats" if axis == "sqrt" else "nats"
    c = Chart(x_title, "expected reward", height=height)
    c.add(
        x=frontier_x(b, b.frontier.kl, axis),
        y=b.frontier.expected,
        mode="lines",
        name="π* as κ varies",
        line={"color": COLORS["optimum"], "width": 2.5},
        hovertemplate=f"%{{x:.2f}} {unit}<br>E[r] %{{y:.3f}}<extra></extra>",
    )
    c.hline(b.reward_pi0, COLORS["reference"], label="π₀")
    c.add(
        x=frontier_x(b, [kl], axis),
        y=[expected],
        mode="markers",
        name=f"π* at κ = {kappa_text(kappa)}",
        marker={
            "color": "rgba(0,0,0,0)",
            "size": 19,
            "line": {"color": COLORS["optimum"], "width": 3.5},
        },
        hovertemplate=f"%{{x:.2f}} {unit}<br>E[r] %{{y:.3f}}<extra>current π*</extra>",
    )
    x_max = float(frontier_x(b, b.kl_max, axis))
    lo, hi = float(b.r.min()), float(b.r.max())
    pad = 0.04 * ((hi - lo) or 1.0)
    y_lo = min(b.reward_pi0, float(b.frontier.expected.min())) - 3 * pad
    return c.update(
        xaxis={"range": [-0.02 * x_max - 0.05, 1.05 * x_max + 0.05]},
        yaxis={"range": [y_lo, hi + pad]},
    )


def add_best_of_n_dots(c: Chart, b: Book, pi_n: np.ndarray, n: int, scale: Scale) -> None:
    """Best-of-n pi_n as green dots over the policy panel (Figure 12.3); ``scale`` reaches
    the largest of them at any stop (best_of_n_stops)."""
    dots = {
        "mode": "markers",
        "legendgroup": "pin",
        "marker": {
            "color": COLORS["best_of_n"],
            "size": 11 if b.small else 9,
            "line": {"color": "white", "width": 1},
        },
        "hovertemplate": ("%{x}" if b.small else "r = %{x:.3f}")
        + "<br>πₙ = %{y:.4f}<extra></extra>",
    }
    if scale.brk is None:
        c.add(x=_x(b), y=pi_n, name=f"best-of-{n:,} πₙ", **dots)
        return
    # Each dot in one segment only: a dot just outside a segment would still show half of
    # itself over the segment's edge.
    pi_n = np.asarray(pi_n)
    nan = np.asarray(np.nan, dtype=pi_n.dtype)
    c.add(x=_x(b), y=np.where(pi_n <= scale.brk, pi_n, nan), name=f"best-of-{n:,} πₙ", **dots)
    c.add(x=_x(b), y=np.where(pi_n > scale.brk, pi_n, nan), yaxis="y3", showlegend=False, **dots)


def add_best_of_n_ladder(
    c: Chart, b: Book, n: int, kl: float, expected: float, axis: str = "kl"
) -> None:
    """Best-of-n at n = 1, 2, 4, ..., 2^17 under the frontier, and the current n."""
    labels = [f"n = 2^{k} = {int(v):,}" for k, v in enumerate(b.ladder_n)]
    unit = "√nats" if axis == "sqrt" else "nats"
    c.add(
        x=frontier_x(b, b.ladder.kl, axis),
        y=b.ladder.expected,
        mode="markers",
        name="best-of-n, n = 1, 2, 4, … 2¹⁷",
        text=labels,
        marker={"color": COLORS["best_of_n"], "size": 8},
        hovertemplate=f"%{{text}}<br>%{{x:.2f}} {unit}<br>E[r] %{{y:.3f}}<extra></extra>",
    )
    c.add(
        x=frontier_x(b, [kl], axis),
        y=[expected],
        mode="markers",
        name=f"best-of-{n:,}",
        marker={
            "color": COLORS["best_of_n"],
            "size": 14,
            "symbol": "diamond",
            "line": {"color": "white", "width": 2},
        },
        hovertemplate=f"%{{x:.2f}} {unit}<br>E[r] %{{y:.3f}}<extra>current n</extra>",
    )


def add_reward_strip(c: Chart, b: Book) -> None:
    """A strip under the policy bars: proxy r (orange dots) and true r* (dashed aqua), per
    response (Figure 12.5). The bars keep the top of the figure, the strip the bottom."""
    c.add(
        x=_x(b),
        y=b.r,
        mode="markers",
        name="proxy reward r",
        yaxis="y2",
        marker={"color": COLORS["proxy"], "size": 7},
        hovertemplate="r = %{y:.3f}<extra>proxy</extra>",
    )
    c.add(
        x=_x(b),
        y=b.r_true,
        mode="lines+markers" if b.small else "lines",
        name="true reward r*",
        yaxis="y2",
        line={"color": COLORS["true"], "dash": "dash", "width": 2.5},
        hovertemplate="r* = %{y:.3f}<extra>true</extra>",
    )
    lo = float(min(b.r.min(), b.r_true.min()))
    hi = float(max(b.r.max(), b.r_true.max()))
    pad = 0.08 * ((hi - lo) or 1.0)
    _bar_domains(c, 0.36, 1.0)
    c.update(
        yaxis2={
            "domain": [0.0, 0.26],
            "range": [lo - pad, hi + pad],
            "title": {"text": "reward"},
            "nticks": 3,
            "zeroline": False,
            "automargin": True,
        },
        xaxis={"anchor": "y2"},
    )


def axis_control(ui: Controls) -> str:
    """The frontier's x axis, KL or d = √KL (``axis=kl|sqrt``)."""
    return ui.choice(
        "axis",
        "Frontier's x axis",
        AXES,
        default="kl",
        help="KL, or d = √KL as Gao et al. plot it (Section 12.5.4): near the "
        "reference reward grows linearly in d.",
    )


# ------------------------------------------------------------------ the tilt page (Fig. 12.2)
def top_responses(b: Book) -> tuple[np.ndarray, bool]:
    """The responses that share the highest reward (the tilt raises each by the same factor),
    and whether another response has π₀ > 0 (then π* of the top is below 1 at every finite κ)."""
    tops = np.flatnonzero(b.r == b.r.max())
    return tops, bool((b.pi0 > 0).sum() > (b.pi0[tops] > 0).sum())


@lru.memo
def _second_order_law(key: tuple, _b: Book) -> tuple[np.ndarray, np.ndarray]:
    """The second-order law μ + √(2v·KL) (Exercise 12.3) at 200 KLs across the frontier's
    range, kept where it stays on the chart (up to just above the highest reward)."""
    b = _b
    v = float(square_root.reward_variance(b.log_pi0, b.r))
    kl = np.linspace(0.0, b.kl_max, 200)
    law = square_root.sqrt_law(b.reward_pi0, v, kl)
    keep = law <= float(b.r.max()) + 0.02 * float(np.ptp(b.r) or 1.0)
    return kl[keep], law[keep]


def tilt_charts(
    b: Book, t: tilt.Tilt, kappa: float, axis: str, scale: Scale
) -> dict[str, tuple[Chart, str]]:
    """The tilt page's charts at κ, with their alt texts: π* over π₀ on ``scale``, and the
    frontier with the current optimum and the second-order law dashed."""
    from klrl_app import fmt

    kl, reward = float(t.kl), float(t.expected)
    tops, others = top_responses(b)
    if tops.size == 1:
        top = (
            f"The highest-reward response has probability "
            f"{fmt.prob(t.pi[tops[0]], digits=3)} under π* and "
            f"{fmt.prob(b.pi0[tops[0]], digits=3)} under π₀."
        )
    else:
        top = (
            f"The {tops.size} responses tied for the highest reward have probability "
            f"{fmt.prob(t.pi[tops].sum(), digits=3, below_one=others)} together under π* "
            f"and {fmt.prob(b.pi0[tops].sum(), digits=3)} under π₀."
        )
    policy = (
        policy_panel(b, t.pi, scale),
        (
            f"Bar chart of the {b.r.size} responses: the reference π₀ as outlines, the optimum π* "
            f"at κ = {kappa_text(kappa)} as filled bars. {top}{scale_text(scale)}"
        ),
    )
    chart = frontier_panel(b, kl, reward, kappa, axis=axis)
    law_kl, law = _second_order_law(b.key, b)
    chart.add(
        x=frontier_x(b, law_kl, axis),
        y=law,
        mode="lines",
        name="μ + √(2v·KL), second order",
        line={"color": COLORS["accent"], "width": 2, "dash": "dash"},
        hovertemplate="second order: E[r] %{y:.3f}<extra></extra>",
    )
    frontier = (
        chart,
        (
            f"Line chart of expected reward against {'√KL' if axis == 'sqrt' else 'KL'} from π₀ "
            f"for every κ, rising from {fmt.fixed(b.reward_pi0, 2)} and flattening toward "
            f"{fmt.fixed(b.r.max(), 2)}, with the second-order law μ + √(2v·KL) dashed. The "
            f"current optimum is marked at KL {fmt.fixed(kl, 2)} nats and expected reward "
            f"{fmt.fixed(reward, 2)}."
        ),
    )
    return {"tilt-policy": policy, "tilt-frontier": frontier}


def tilt_details(b: Book, pi: np.ndarray, kappa: float) -> None:
    """The tilt page's numbers: π* per response, and two downloads (it, and the frontier)."""
    df = pd.DataFrame(
        {"response": list(b.labels), "reward r": b.r, "reference pi0": b.pi0, "optimum pi*": pi}
    )
    layout.table(df)
    layout.csv_download(df, f"tilt_kappa_{fmt_number(kappa)}.csv", key="tilt-csv")
    fr = pd.DataFrame(
        {"kappa": b.kappas, "KL (nats)": b.frontier.kl, "expected reward": b.frontier.expected}
    )
    layout.csv_download(
        fr, "tilt_frontier.csv", label="Download the frontier (CSV)", key="tilt-frontier-csv"
    )


def best_of_n_details(b: Book, pi: np.ndarray, pi_n: np.ndarray, n: int, kappa: float) -> None:
    """The best-of-n page's numbers: π* and best-of-n per response, and two downloads (it,
    and Figure 12.3's ladder of n = 1 … 2¹⁷)."""
    df = pd.DataFrame(
        {
            "response": list(b.labels),
            "reward r": b.r,
            "reference pi0": b.pi0,
            "optimum pi*": pi,
            f"best-of-{n} pi_n": pi_n,
        }
    )
    layout.table(df)
    layout.csv_download(df, f"best_of_n_kappa_{fmt_number(kappa)}_n_{n}.csv", key="bon-csv")
    ladder = pd.DataFrame(
        {
            "n": b.ladder_n.astype(int),
            "exact KL (nats)": b.ladder.kl,
            "log n - (n-1)/n": b.ladder.bound,
            "expected reward": b.ladder.expected,
        }
    )
    layout.csv_download(
        ladder,
        "best_of_n_ladder.csv",
        label="Download the n = 1 … 2¹⁷ points (CSV)",
        key="bon-ladder-csv",
    )
