"""Chapter 28's "Entropy and exploration" and Exercise 28.6: the entropy of a softmax policy
along the natural-gradient step z <- z + eta A, its first-order prediction, and repeated steps
against Cui et al.'s empirical law."""

import numpy as np
import streamlit as st

from klrl_core import entropy as core, user_model
from klrl_app import controls, fmt, layout, plots
from klrl_app import entropy_figures as figs
from klrl_app.entropy_figures import MAX_ABS, MAX_ACTIONS, preset_texts, read_lists, why_text

ETA_LO, ETA_HI, ETA_STEP = 0.05, 5.0, 0.05
STEPS_LO, STEPS_HI = 2, 200
DEFAULT_PRESET = "confident_right"
CUSTOM = "custom"
PRESET_LABELS = {name: spec[0] for name, spec in core.PRESETS.items()}
CHOICES = {**PRESET_LABELS, CUSTOM: "your own lists"}
SHORT = {"confident_right": "confident, rewarded", "confident_wrong": "confident, wrong",
         "uniform": "uniform", CUSTOM: "your own"}
ETA_GRID = np.linspace(0.0, ETA_HI, 501)
ZERO = 1e-12              # a covariance or curvature this small is zero up to rounding


def policy_control(ui) -> tuple[str, np.ndarray, np.ndarray]:
    """The policy: a preset or the reader's own logits and advantages, linked as ``preset``
    (and ``logits``, ``advantages`` for lists of one's own). Lists that cannot be used give a
    notice (from a link) or a warning (typed) and the default preset."""
    key = ui.key("preset")
    text_keys = {n: ui.key(n) for n in ("logits", "advantages")}
    shown = f"the preset “{CHOICES[DEFAULT_PRESET]}”"
    ui.preset_or_lists(
        "preset", core.PRESETS, DEFAULT_PRESET, CUSTOM, ("logits", "advantages"), read_lists,
        lambda lists: core.matching_preset(*lists) or CUSTOM, preset_param="preset",
        preset_texts=preset_texts,
        missing=f"Lists of your own need both `logits` and `advantages`; showing {shown}.",
        bad=lambda why: f"`logits`/`advantages`: {why_text(why)}; showing {shown} instead.",
        own_word=f"`preset=custom` needs `logits` and `advantages` in the link; showing "
                 f"{shown}.",
        unknown=f"`preset`: not one of {', '.join(core.PRESETS)}; showing the default "
                f"“{CHOICES[DEFAULT_PRESET]}”.")

    def preset_chosen() -> None:
        name = st.session_state[key]
        if name in core.PRESETS:
            for n, text in zip(("logits", "advantages"), preset_texts(name)):
                st.session_state[text_keys[n]] = text

    def lists_edited() -> None:
        st.session_state[key] = CUSTOM

    name = st.session_state[key]
    # a link may lock the policy (shown, disabled) or hide it: lock=preset, hide=preset
    state = ui.declare("preset", "Policy and advantages", ("logits", "advantages"),
                       short="the policy")
    if state != controls.HIDE:
        with st.popover(f"Policy: {SHORT[name]}", icon=":material/edit_note:", width="stretch",
                        help="The policy's logits and the actions' advantages: a preset or your "
                             "own lists"):
            st.selectbox("Policy and advantages", list(CHOICES), key=key, format_func=CHOICES.get,
                         on_change=preset_chosen, disabled=state == controls.LOCK,
                         help="Three presets (action 1 is the rewarded one in each), or lists of "
                              "your own.")
            st.text_input("Logits z, one per action", key=text_keys["logits"],
                          on_change=lists_edited, disabled=state == controls.LOCK,
                          help=f"π = softmax(z); comma-separated, 2 to {MAX_ACTIONS} actions, "
                               f"between −{fmt.short(MAX_ABS)} and {fmt.short(MAX_ABS)}. "
                               f"Adding a constant to every logit changes nothing.")
            st.text_input("Advantages A, one per action", key=text_keys["advantages"],
                          on_change=lists_edited, disabled=state == controls.LOCK,
                          help="The step adds η·A(a) to each logit z_a. Same order as the "
                               "logits.")
    if name in core.PRESETS:
        ui.remember("preset", name, name)
        _, z, a = core.PRESETS[name]
        return name, z, a
    texts = {n: st.session_state.get(text_keys[n], "") for n in text_keys}
    try:
        z, a = read_lists(texts["logits"], texts["advantages"])
    except ValueError as why:
        ui.typed.append(f"Your lists: {why_text(why)}. Showing the preset "
                        f"“{CHOICES[DEFAULT_PRESET]}” until they can be read.")
        ui.remember("preset", name, DEFAULT_PRESET)
        _, z, a = core.PRESETS[DEFAULT_PRESET]
        return DEFAULT_PRESET, z, a
    ui.remember("preset", name, CUSTOM)
    for n, values in (("logits", z), ("advantages", a)):
        ui.remember(n, texts[n], user_model.to_text(values))
    return CUSTOM, z, a


def describe(first: int, found: list, where, whole: str = "all the way") -> str:
    """How the entropy moves: "falls all the way", or each turn in order; ``where`` names a
    turn's position ("η ≈ 2.40", "step 5")."""
    if first == 0:
        return "stays where it is"
    if not found:
        return f"falls {whole}" if first < 0 else f"rises {whole}"
    parts = ["rises" if first > 0 else "falls"]
    for x, y, kind in found:
        parts.append(f"until {where(x)} ({fmt.fixed(y, 3)} nats), then "
                     + ("falls" if kind == "peak" else "rises"))
    return " ".join(parts)


# ------------------------------------------------------------------------------ controls
page = layout.Page(
    "entropy", "Why entropy collapses",
    "Chapter 28 · “Entropy and exploration” · Exercise 28.6 · Cui et al. (2025)",
    "A softmax policy over a few actions, each with an advantage A(a). The natural-gradient "
    "step adds η·A(a) to every logit. To first order the entropy changes by −η times the "
    "covariance, under the policy, of log π and A: when the policy already favours what is "
    "rewarded, that covariance is positive and entropy falls.",
)
ui = page.ui
c_eta, c_policy, c_more = page.control_row([3, 2, 1.4])
with c_eta:
    eta = ui.number("eta", "Step size η", default=core.DEFAULT_ETA, lo=ETA_LO, hi=ETA_HI,
                    step=ETA_STEP,
                    help=f"How far one step moves the logits: z ← z + η·A, η from "
                         f"{fmt.short(ETA_LO)} to {fmt.short(ETA_HI)}.")
with c_policy:
    preset, z, adv = policy_control(ui)
with c_more, page.more_settings():
    steps = ui.integer("steps", "Repeated steps", default=core.DEFAULT_STEPS, lo=STEPS_LO,
                       hi=STEPS_HI,
                       help="Steps of size η taken one after another (the section “Repeated "
                            "steps” below): after t steps the logits are z + t·η·A.")
page.finish_controls()

# ------------------------------------------------------------------------------- numbers
n = z.size
h0 = float(core.entropy(core.log_softmax(z)))
cov = core.covariance(z, adv)
curv = core.entropy_curvature(z, adv)
curve, first_dir, eta_turns = core.entropy_turns(z, adv, ETA_HI, ETA_GRID.size - 1)
h_inf, n_top = core.limit_entropy(z, adv)
still = core.advantage_variance(z, adv) <= ZERO       # no step can move the policy
et = fmt.fixed(eta, 6, trim=True)


def readout_at(eta: float) -> tuple[float, float, list[tuple[str, str]]]:
    """The exact entropy after one step of size η, its first-order prediction, and the
    readout's items."""
    h_eta = float(core.entropy_along(z, adv, eta))
    pred = float(core.first_order(z, adv, eta))
    return h_eta, pred, [
        ("H(π)", f"{fmt.fixed(h0, 3)} nats"),
        ("Cov(log π, A)", fmt.fixed(cov, 3, signed=True, min_sig=1)),
        ("H after the step", f"{fmt.fixed(h_eta, 3, min_sig=1)} nats"),
        ("First-order prediction", f"{fmt.fixed(pred, 3)} nats"
         + (" (below 0: no entropy can be)" if pred < 0 else "")),
    ]


helps = [
    f"entropy −Σ π(a) log π(a) of the policy before the step, in nats (at most ln {n} = "
    f"{fmt.fixed(np.log(n), 3)} for {n} actions).",
    "covariance under π of an action's log-probability and its advantage; dH/dη at η = 0 is "
    "minus this (Exercise 28.6).",
    "the exact entropy of softmax(z + η·A) at the chosen η.",
    "H(π) − η·Cov(log π, A): the tangent at η = 0, exact to first order in η.",
]

# ------------------------------------------------------------------------------- figures
figures = figs.Figures(ETA_GRID, curve, z, adv, h0, cov)


def view_at(e) -> layout.View:
    """The readout and both figures at step size η = e (closed forms: the browser draws it
    at every stop of η)."""
    h_e, pred_e, items = readout_at(float(e))
    return layout.View(items, figures.charts(float(e), h_e, pred_e))


view = page.follow(layout.Instant(
    "eta", view_at, setting=(preset, tuple(map(float, z)), tuple(map(float, adv)))), helps)
h_eta, pred, _ = readout_at(eta)
left, right = page.figures(2)
with left:
    page.chart(view, "entropy-eta")
with right:
    page.chart(view, "entropy-policy")


# ------------------------------------------------------------------------ what to look for
def eta_at(x: float) -> str:
    """A turning point's η for a sentence: two decimals, significant figures when smaller."""
    return f"η ≈ {fmt.fixed(x, 2, min_sig=1)}"


def look_for() -> str:
    if still:
        return ("Every action has the same advantage, so the step adds the same amount to "
                "every logit, which leaves π unchanged: the entropy stays at "
                f"{fmt.fixed(h0, 3)} nats for every η, and the covariance and every "
                "higher-order term are zero.")
    rate = fmt.fixed(abs(cov), 3, min_sig=1)
    if cov > ZERO:
        sign = (f"Cov(log π, A) = {fmt.fixed(cov, 3, signed=True, min_sig=1)} is positive: on "
                f"balance the actions the policy already favours carry the higher advantages, so "
                f"at first the step lowers the entropy, at a rate of {rate} nats per unit of η.")
    elif cov < -ZERO:
        sign = (f"Cov(log π, A) = {fmt.fixed(cov, 3, signed=True, min_sig=1)} is negative: on "
                f"balance the policy favours actions with lower advantages, so at first the "
                f"step moves mass toward actions it neglects and raises the entropy, at a rate "
                f"of {rate} nats per unit of η.")
    else:
        second = ("negative, so the entropy falls even so, slowly at first (like η²)"
                  if curv < -ZERO else
                  "positive, so the entropy rises at first, slowly (like η²)"
                  if curv > ZERO else "zero as well")
        sign = (f"Cov(log π, A) = 0: the first-order line is flat and predicts no change. "
                f"The second-order term decides: d²H/dη² = "
                f"{fmt.fixed(curv, 3, signed=True, min_sig=1)} at η = 0, {second}.")

    change = h_eta - h0
    moved = ("down from" if change < -5e-4 else "up from" if change > 5e-4
             else "practically unchanged from")
    err = abs(h_eta - pred)
    at_eta = (f"At η = {et} the exact entropy is {fmt.fixed(h_eta, 3)} nats, {moved} "
              f"{fmt.fixed(h0, 3)}; the first-order line predicts {fmt.fixed(pred, 3)}"
              + (", below 0, which no entropy can be" if pred < 0 else "")
              + f", off by {fmt.fixed(abs(err), 3, min_sig=1)}, an error of "
              f"order η²: it vanishes faster than η as the step shrinks.")
    if fmt.fixed(h_eta, 3) == fmt.fixed(pred, 3):
        at_eta = (f"At η = {et} the exact entropy is {fmt.fixed(h_eta, 3)} nats, {moved} "
                  f"{fmt.fixed(h0, 3)}, and the first-order line predicts it to three decimals.")

    early = [t for t in eta_turns if t[0] < eta]
    if early:
        holds = (f" The covariance only speaks for small steps: up to η = {et} the exact "
                 f"entropy {describe(first_dir, early, eta_at)}.")
    else:
        holds = ""
    whole = describe(first_dir, eta_turns, eta_at)
    chart = ("" if eta >= ETA_HI - 1e-9 else
             f" Across the chart, up to η = {fmt.short(ETA_HI)}, the exact entropy {whole}.")
    if n_top == 1:
        end = (" Larger steps keep piling mass onto the action with the largest advantage, "
               "and the entropy tends to 0.")
    else:
        end = (f" Larger steps pile the mass onto the {n_top} actions that share the largest "
               f"advantage, in π's proportions, and the entropy tends to {fmt.fixed(h_inf, 3)} "
               f"nats.")
    return f"{sign} {at_eta}{holds}{chart}{end}"


page.explain(look_for() + " <a href='loop'>The loop page</a> tracks the entropy of a whole "
             "training run, beside pass@k.")


page.details(lambda: figs.details(figures, z, adv, eta, et))


# ----------------------------------------------------------------------- repeated steps
def repeated_steps() -> None:
    tr = core.trajectory(z, adv, eta, steps)
    fit = figs.cui_fit(tr)
    cols = page.figures(2)
    with cols[0]:
        chart, alt = figs.steps_chart(tr, steps, et)
        plots.show(chart, key="entropy-steps", alt=alt)
    with cols[1]:
        chart, alt = figs.cui_chart(tr, fit, steps)
        plots.show(chart, key="entropy-cui", alt=alt)
    if fit is not None and np.isfinite(fit.r2):
        layout.small_table(figs.fit_frame(fit),
                           {"a": 3, "b": 3, "R²": 4, "rmse": 4, "b − a (R at H = 0)": 3})
    layout.paragraph(trajectory_words(tr, fit))
    layout.csv_download(lambda: figs.steps_frame(tr, fit),
                        f"entropy_steps_eta_{et}_{steps}.csv",
                        label="Download the steps (CSV)", key="entropy-steps-csv")


MIN_FIT_POINTS = 5       # fewer points and two free parameters fit almost any path


def trajectory_words(tr, fit) -> str:
    h, r = tr.entropy, tr.reward
    if still:
        return ("With every advantage equal nothing moves, step after step: there is no "
                "trajectory to fit a law to.")
    steps_x = tr.steps.astype(float)
    how = describe(core.first_direction(h), core.turning_points(steps_x, h),
                   lambda v: f"step {int(round(v))}", "at every step")
    reward = (f"Over {steps} steps of η = {et} the expected advantage rises from "
              f"{fmt.fixed(r[0], 3)} to {fmt.fixed(r[-1], 3)}, as it must: its rate of change "
              f"along the step is η times the variance of A under the current policy, never "
              f"negative. The entropy {how}, ending at {fmt.fixed(h[-1], 3, min_sig=1)} nats.")
    if fit is None or not np.isfinite(fit.r2):
        return (reward + " The entropy barely moves along this trajectory, so there is "
                "nothing to fit Cui et al.'s law to.")
    monotone = not core.turning_points(steps_x, h)
    quality = ("closely" if fit.r2 >= 0.99 else "roughly" if fit.r2 >= 0.9 else "poorly")
    law = (" Cui et al. (2025) found that test performance followed R = −a·e^H + b as "
           "entropy fell across many training runs. The dashed curve is that law fitted to "
           "this model's trajectory, not their measurement: "
           + (f"it fits {quality} here (R² = {fmt.prob(fit.r2, 4)})."
              if h.size >= MIN_FIT_POINTS else
              f"with only {fmt.count(h.size, 'point')} a law with two parameters fits almost "
              f"any path (R² = {fmt.prob(fit.r2, 4)}), so the fit cannot test the law; take "
              f"more steps."))
    if not monotone:
        law += (" The entropy is not monotone along this trajectory: on either side of a turn "
                "the path passes the same entropy twice, with two different rewards, and no "
                "single curve R(H) can pass through both.")
    if n_top == 1:
        reach = (f", an extrapolation, since this trajectory stops at H = {fmt.fixed(h[-1], 3)} "
                 f"nats" if h[-1] > 0.05 else "")
        law += (f" At H = 0 the fitted law gives b − a = {fmt.fixed(fit.b - fit.a, 3)}{reach}; "
                f"in the limit of full collapse this model ends with the largest advantage, "
                f"{fmt.fixed(float(adv.max()), 3)}.")
    return reward + law


if page.section("Repeated steps: entropy against reward"):
    repeated_steps()
