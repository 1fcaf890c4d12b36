"""Section 12.3.3 (Equation 12.7) and Section 12.4.2: the price of rarity, the prior within a
reward level, and a tilt of a tilt."""

import math

import streamlit as st

from klrl_core import rarity as core
from klrl_app import controls, fmt, layout
from klrl_app import rarity_figures as figs
from klrl_app.rarity_figures import LN10, RARER

P0_LO, P0_HI = 1e-12, 0.5
P0_STOPS = [float(f"{m}e{e}") for e in range(-12, 0) for m in (1, 2, 5)]
BETA_LO, BETA_HI = 1e-4, 10.0
BETA_STOPS = [float(f"{m}e{e}") for e in range(-4, 1)
              for m in (1, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 8)] + [BETA_HI]
DELTA_LO, DELTA_HI = 0.01, 10.0
DEFAULTS = {"p0": 1e-9, "delta": 1.0, "beta": 0.05}
BILLION = 1e-9                      # "a response with reference probability one in a billion"
DEEPSEEK_STEPS, DEEPSEEK_EVERY = 10_400, 400
PRESETS = {
    "One in a billion, Δ = 1, β = 0.05 (Section 12.3.3)": (1e-9, 1.0, 0.05),
    "The same at β = 0.04: below the threshold": (1e-9, 1.0, 0.04),
    "One in a hundred, Δ = 0.5, β = 0.1": (0.01, 0.5, 0.1),
    "DeepSeek-R1-Zero's KL coefficient: β = 0.001, Δ = 1, p₀ = 10⁻¹²": (1e-12, 1.0, 0.001),
}

# ------------------------------------------------------------------------------ controls
PRESET_KEY = "rarity.preset"


def apply_preset() -> None:
    """Set the three controls from the chosen preset, then clear the menu: it names a
    starting point, not the current state (the sliders may move on from it)."""
    name = st.session_state.get(PRESET_KEY)
    if name in PRESETS:
        for control, value in zip(("p0", "delta", "beta"), PRESETS[name]):
            st.session_state[ui.key(control)] = float(value)
    st.session_state[PRESET_KEY] = None


page = layout.Page(
    "rarity", "The price of rarity",
    "Section 12.3.3 · Equation (12.7) · Section 12.4.2 · Example 12.1",
    "A response y₁ that the reference policy writes with probability p₀, and whose reward beats "
    "every other response's by at least Δ. The optimum π* ∝ π₀·exp(r/β) raises its odds by "
    "exp(Δ/β): how rare can y₁ be and still take over? Rarity protects only logarithmically.",
)
ui = page.ui
c_p0, c_delta, c_beta, c_preset = page.control_row([3, 3, 3, 2])
with c_p0:
    p0 = ui.stops("p0", "Reference probability p₀ of y₁", P0_STOPS, DEFAULTS["p0"],
                  lo=P0_LO, hi=P0_HI, fmt=lambda v: fmt.sig(v, 3, trim=True),
                  help="π₀(y₁), on a log scale from 10⁻¹² to ½. A link may give any value "
                          "in that range; it is kept exactly.")
with c_delta:
    delta = ui.number("delta", "Reward gap Δ", default=DEFAULTS["delta"], lo=DELTA_LO,
                      hi=DELTA_HI, step=0.01,
                      help="How much y₁'s reward exceeds every other response's: with two "
                           "responses exactly Δ, with many at least Δ.")
with c_beta:
    beta = ui.stops("beta", "KL weight β (κ = 1/β)", BETA_STOPS, DEFAULTS["beta"],
                    lo=BETA_LO, hi=BETA_HI, fmt=lambda v: fmt.sig(v, 4, trim=True), inverse_alias="kappa",
                    help="Price of one nat of KL(π ‖ π₀), on a log scale. A link may also "
                            "give κ = 1/β.")
with c_preset:
    st.selectbox("Presets", list(PRESETS), index=None, key=PRESET_KEY,
                 disabled=any(ui.fixed(n) for n in ("p0", "delta", "beta")),
                 placeholder="Choose…", on_change=apply_preset,
                 help="Sets p₀, Δ and β to one of the chapter's readings; a menu that closes "
                      "once chosen.")
page.finish_controls()

# ------------------------------------------------------------------------- the numbers
pi_two = core.two_response_optimum(p0, delta, beta)
thr_exact = core.exact_threshold(p0, delta)
thr_bound = core.bound_threshold(p0, delta)
change = core.max_change_factor(delta, beta)
dom = core.dominance_threshold_probability(delta, beta)
log_pi_two = math.log(pi_two)         # pi_two >= p0 >= 1e-12: no underflow
beta_text = fmt.sig(beta, 4, trim=True)
delta_text = controls.fmt_number(delta)


def at_least(bound: float) -> str:
    """"≥ the bound", which is below 1 (y₂ keeps weight at every β > 0): "> 0.999999" alone
    where the bound itself reads so, never "≥ > 0.999999" or "≥ 1.000"."""
    text = fmt.prob(bound, digits=3, below_one=True)
    return text if text.startswith(">") else "≥ " + text


def readout_at(p: float) -> list[tuple[str, str]]:
    """The readout's items at p₀ = p, Δ and β as set (closed forms: microseconds)."""
    exact = core.exact_threshold(p, delta)
    return [
        ("π*(y₁), two responses",
         fmt.prob(core.two_response_optimum(p, delta, beta), digits=3, below_one=True)),
        ("many responses", at_least(core.many_response_lower_bound(p, delta, beta))),
        ("exact threshold β", "none (p₀ ≥ ½)" if math.isinf(exact) else
         figs.threshold_text(exact)),
        ("Eq. 12.7 threshold β", figs.threshold_text(core.bound_threshold(p, delta))),
        ("largest change factor",
         f"exp({fmt.sig(change.log_factor, 3, trim=True)}) = "
         f"{fmt.pow10(change.log_factor / LN10, 3)}"),
    ]


helps = [
    "the optimum's probability of y₁ when the only other response earns exactly Δ less: "
    "p₀·e^{Δ/β} / (p₀·e^{Δ/β} + 1 − p₀) (Equation 12.4).",
    "with any number of other responses, each at least Δ below y₁, π*(y₁) is at least the "
    "two-response value (Section 12.3.3, steps 1-2).",
    "β = Δ / log((1 − p₀)/p₀): below it y₁ holds at least half of π* (step 3; exact for two "
    "responses, sufficient for many).",
    "Equation (12.7): β = Δ / log(1/p₀), below the exact threshold when there is one, and close to it "
    "when p₀ is small; so a sufficient condition too.",
    "e^{(r_max − r_min)/β} with r_max − r_min = Δ here: no response's probability changes by a "
    "larger factor (Section 12.3.3).",
]

# ---------------------------------------------------------------------------- figures
rarer_cost = core.reward_gap_for_rarity(RARER, beta)
ax = figs.axes(sorted({*ui.sliders["p0"][2], p0}), delta, beta, P0_LO, P0_HI)


def view_at(p0: float) -> layout.View:
    """The readout and both charts at p₀, Δ and β as set (closed forms)."""
    return layout.View(readout_at(p0), {
        "rarity-beta": figs.beta_chart(ax, p0, delta, beta, delta_text, beta_text),
        "rarity-gap": figs.gap_chart(ax, p0, delta, beta, delta_text, beta_text, rarer_cost)})


view = page.follow(layout.Instant("p0", view_at, setting=(delta, beta, ax.b_lo, ax.b_hi, ax.p_lo)),
                   helps)

left, right = page.figures(2)
with left:
    page.chart(view, "rarity-beta")
with right:
    page.chart(view, "rarity-gap")

# ------------------------------------------------------------------- what to look for
if math.isinf(thr_exact):
    state = (f"With p₀ = {fmt.sig(p0, 3, trim=True)}, y₁ already holds at least half under π₀, "
             f"and the optimum only raises it: π*(y₁) ≥ ½ at every β, so there is no exact "
             f"threshold; Equation 12.7's condition, sufficient but conservative, asks for β "
             f"below {figs.threshold_text(thr_bound)}.")
elif beta < thr_bound:
    state = (f"At β = {beta_text}, below both thresholds, y₁ dominates: it holds more than "
             f"half of π* with two responses, and at least that much with any number of "
             f"responses whose rewards sit Δ or more below (the shaded band).")
elif beta <= thr_exact:
    state = (f"At β = {beta_text}, y₁ still holds at least half of π*: β is at or below the "
             f"exact threshold Δ / log((1 − p₀)/p₀), though not below Equation 12.7's "
             f"Δ / log(1/p₀), a sufficient condition that is conservative.")
else:
    state = (f"At β = {beta_text}, above both thresholds, y₁ holds less than half of π* with "
             f"two responses. With many responses the bound no longer guarantees half: how "
             f"much y₁ gets then depends on how far below Δ the others' rewards sit (the "
             f"shaded band).")

billion_thr = core.bound_threshold(BILLION, delta)
billion = (f"A billion-to-one response dominates once β falls below Δ/log 10⁹ = Δ/20.7, here "
           f"{figs.threshold_text(billion_thr)}; at β = {beta_text} such a response "
           + ("does." if beta < billion_thr else "does not (by Equation 12.7's condition)."))
rarity = (f"Rarity protects only logarithmically: making y₁ a thousand times rarer "
          f"(p₀ → {fmt.sig(p0 / RARER, 3, trim=True)}) raises the reward gap Equation 12.7 asks for by "
          f"β·log 1000 ≈ 6.9β, here {fmt.sig(rarer_cost, 3)}. {billion}")
if math.log(p0) > dom.log_probability:
    off = "above that line, so the gap does not hold y₁ off: y₁ dominates."
elif math.log(p0) >= dom.exact_log_probability:
    off = (f"below that line, yet not below the exact two-response cut 1/(1 + exp(Δ/β)) = "
           f"{fmt.pow10(dom.exact_log_probability / LN10, 3)}, so with two responses y₁ still "
           f"holds at least half.")
else:
    off = "below that line, and the gap holds y₁ off: with two responses it gets less than half."
other_way = (f"Read the other way, at β = {beta_text} a gap Δ = {delta_text} holds a response "
             f"off only if its reference probability is below exp(−Δ/β) = "
             f"{fmt.pow10(dom.log_probability / LN10, 3)}; p₀ = {fmt.sig(p0, 3, trim=True)} is "
             f"{off}")
rise_log = log_pi_two - math.log(p0)
rise = fmt.pow10(rise_log / LN10, 3)
if change.log_factor < 1:
    limit = ("β is large against Δ: the largest change factor is below e, so no probability "
             "changes by more than that; the optimum only sharpens what π₀ already does and "
             "cannot make a rare response common.")
elif rise_log >= change.log_factor - math.log(2):
    limit = (f"No probability changes by more than the largest change factor. y₁'s own "
             f"probability rises by a factor {rise}, within a factor 2 of that limit: the "
             f"normaliser p₀·exp(Δ/β) + 1 − p₀ is at most 2, so it takes back at most half of "
             f"the gain.")
else:
    limit = (f"No probability changes by more than the largest change factor. y₁'s own "
             f"probability rises by a factor {rise}, well short of that limit: y₁ is common "
             f"enough under π* that the normaliser p₀·exp(Δ/β) + 1 − p₀ takes most of the "
             f"gain back.")
look_for = f"{state} {rarity} {other_way} {limit}"


# --------------------------------------------------------------- within a reward level
example_shown, example_data = figs.example_table(beta)


def example_section() -> None:
    if not page.section("Within a reward level: Example 12.1's two styles"):
        return
    layout.small_table(example_shown, {c: str for c in example_shown.columns[1:]})
    st.markdown(
        "A reference policy answers formally with probability 0.2, casually with 0.1 and "
        "unhelpfully with 0.7; the reward gives both helpful answers 1 and the unhelpful one 0. "
        "As β falls the helpful answers take nearly all the probability, but the odds between "
        "them stay at the reference's 2 : 1 at every β: π\\*(y)/π\\*(y′) = π₀(y)/π₀(y′)·"
        "exp((r(y) − r(y′))/β), and equal rewards cancel. The reward decides between levels "
        "of reward; the prior decides within them (Section 12.4.2).")


# ------------------------------------------------------------------ a tilt of a tilt
resets_shown, resets_data, worst = figs.resets_table(p0, delta, beta)


def resets_section() -> None:
    if not page.section("A tilt of a tilt is a tilt: resetting the reference"):
        return
    layout.small_table(resets_shown, {c: str for c in resets_shown.columns[1:]})
    ds = core.dominance_threshold_probability(core.DEEPSEEK_R1_ZERO_DELTA,
                                              core.DEEPSEEK_R1_ZERO_BETA)
    phases = DEEPSEEK_STEPS // DEEPSEEK_EVERY
    st.markdown(
        f"The page's two responses (p₀ = {fmt.sig(p0, 3, trim=True)}, gap Δ = {delta_text}): m "
        f"optima in a row, each at β = {beta_text} with the reference reset to the previous optimum, "
        f"computed step by step, against one optimum at β/m. Tilting by exp(r/β) m times is "
        f"one tilt by exp(m·r/β), so the columns agree (largest difference in log-probability "
        f"{fmt.sig(worst, 3)}, rounding), and the KL is measured "
        f"from the original π₀ (Section 12.4.2). KL in nats.")
    st.markdown(
        f"**DeepSeek-R1-Zero.** Its developers report a KL coefficient of "
        f"{fmt.short(core.DEEPSEEK_R1_ZERO_BETA)} over {DEEPSEEK_STEPS:,} steps, resetting the reference "
        f"every {DEEPSEEK_EVERY} steps ({phases} phases; m = {phases} above). Read as the β of "
        f"the closed form, a reward gap of {fmt.short(core.DEEPSEEK_R1_ZERO_DELTA)} makes dominant any "
        f"behaviour whose reference probability exceeds exp(−{fmt.fixed(-ds.log_probability, 0)}) = "
        f"{fmt.pow10(ds.log_probability / LN10, 3)}: every p₀ this page offers lies far above "
        f"that. If each phase reached its optimum, the {phases} phases would act as one tilt at β = "
        f"{fmt.short(core.DEEPSEEK_R1_ZERO_BETA)}/{phases} = "
        f"{fmt.sig(core.DEEPSEEK_R1_ZERO_BETA / phases, 3)}. The reading is loose (an inference): "
        f"the coefficient weighs an estimate of the divergence added to the loss, against "
        f"standardized advantages, not a per-token penalty in the reward, but it places such "
        f"training far from the regime where the prior holds. The Presets menu sets β = "
        f"{fmt.short(core.DEEPSEEK_R1_ZERO_BETA)}, Δ = 1.")


page.explain(look_for, extra=lambda: (example_section(), resets_section()))


page.details(lambda: figs.details(ax, p0, delta, beta, example_data, resets_data))
