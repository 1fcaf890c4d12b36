"""Chapter 28, left panel and first experiment: where the KL penalty goes, and what it reaches."""

import numpy as np
import streamlit as st

from klrl_core import kl_penalty as core
from klrl_app import controls, fmt, layout, precompute
from klrl_app import kl_penalty_figures as figs

STEPS_MAX = 5000
BETA_LO, BETA_HI, BETA_STEP = 0.05, 5.0, 0.05
REACHED = 0.02                     # total variation at which a policy "has reached" its target
PILED = 0.9                        # share of one response at which a policy "has piled onto" it
SELDOM = 20                        # expected batches holding a response: below this, "seldom"
VISIBLY_OFF = 0.02                 # k3's average this far from the KL (relative): "settles slowly"

page = layout.Page(
    "kl-penalty", "Where the KL penalty goes",
    "Chapter 28 · Estimating and differentiating the KL penalty · left panel · Exercise 28.3",
    "One prompt, ten possible responses, a reference policy π_ref and a reward for each "
    "response. The penalty β·KL(π ‖ π_ref) is estimated from sampled responses, and where that "
    "estimate enters the update decides which policy training ends at.",
)
ui = page.ui
c_beta, c_more = page.control_row([4, 1])
with c_beta:
    beta = ui.number("beta", "KL weight β (κ = 1/β)", default=core.BETA_DEFAULT, lo=BETA_LO,
                     hi=BETA_HI, step=BETA_STEP, inverse_alias="kappa",
                     help="Price of one nat of KL(π ‖ π_ref) in the objective E[r] − β·KL. "
                          "Small β: a weak anchor. A link may also give κ = 1/β.")
with c_more, page.more_settings():
    steps = ui.integer("steps", "Training steps", default=core.STEPS_DEFAULT, lo=100,
                       hi=STEPS_MAX, step=100,
                       help=f"Updates of each of the three policies; every update samples "
                            f"{core.BATCH_DEFAULT} responses and moves the logits with step "
                            f"size {fmt.short(core.LR_DEFAULT)}.")
    seed = ui.seed(default=core.SEED_DEFAULT,
                   help="Draws the prompt (π_ref and the rewards), the samples behind the "
                        "estimator table and every training sample. Seed 0 is the chapter's "
                        "prompt.")
page.finish_controls()


BETA_STOPS = [round(float(b), 4) for b in np.arange(BETA_LO, BETA_HI + BETA_STEP / 2, BETA_STEP)]
Z_MC = core.Z_MC                   # |bias| within this many standard errors: Monte Carlo error

# The process's table of settings (β, seed, steps) -> experiment. Every β stop of the default
# seed and step count is computed once per server process, in the background from the default
# outward (klrl_app.precompute), so a slider move finds its value ready.
EXP = precompute.sweep("kl-penalty", core.run_experiment, BETA_STOPS, core.BETA_DEFAULT,
                       [(core.SEED_DEFAULT, core.STEPS_DEFAULT)], digits=4)


with st.spinner(f"Training the three rules for {steps:,} steps…", show_time=True):
    res = EXP.at(beta, seed, steps)
est = res.estimators
rows = res.summary()


def readout_at(beta: float, res: core.KLPenaltyResult) -> list[tuple[str, str]]:
    """The readout's items at β (seed and steps as set)."""
    est, rows = res.estimators, res.summary()
    return [
        ("κ = 1/β", controls.kappa_text(1.0 / beta)),
        ("KL(π* ‖ π_ref)", f"{fmt.fixed(est.true_kl, 4)} nats"),
        ("k1 estimates < 0", fmt.pct(est.share_negative[0], 1, max_places=3)),
        ("TV(k3 loss, fwd opt.)", fmt.fixed(rows["k3 as a loss"]["tv_to_forward"], 3, min_sig=1)),
        ("TV(π*, fwd opt.)", fmt.fixed(rows["pi* (target)"]["tv_to_forward"], 3, min_sig=1)),
        ("k2's bias", fmt.pct((est.mean[1] - est.true_kl) / est.true_kl)),
        ("k3's spread ÷ k1's", fmt.fixed(float(est.std[2] / est.std[0]), 2, sig_from=10,
                                         digits=2)),
        ("KL of the k1 loss ÷ π*'s",
         f"{fmt.fixed(rows['k1 as a loss']['kl_to_ref'] / est.true_kl, 1)}×"),
    ]


HELPS = [
    "the inverse KL weight, the name the chapter 12 pages use for the same control.",
    "the divergence the target π* ∝ π_ref·exp(r/β) spends: the number the three estimators "
    "below estimate.",
    f"share of the {est.reps:,} estimates of k1 = −log ρ, each the average of "
    f"{est.n_samples} samples of π*, that come out negative.",
    "total-variation distance between the policy trained with k3 as a loss and the optimum "
    "of the forward-KL objective E[r] − β·KL(π_ref ‖ π).",
    "total-variation distance between the two optima: π* (reverse KL) and the forward-KL "
    "optimum.",
    f"how far k2's average over the {est.reps:,} runs lies from the true KL, as a share of it: "
    "measured, so it differs from the exact bias by Monte Carlo error (the chapter: it "
    "underestimates by 17% at β = 0.5).",
    "the spread of one k3 estimate over the spread of one k1 estimate from the same samples "
    "(below 1: k3 is steadier).",
    "the KL that training with k1 differentiated as a loss ends at, over the KL that π* "
    "spends (the chapter: ten times larger).",
]

# --- the policies (the figure) ------------------------------------------------------------
floor = figs.log_floor(seed, tuple(BETA_STOPS))
# The readout and the policies' chart at β; another stop's experiment is looked up in the
# table, never computed (None: not there yet, "computing…" in the browser).
view_at = EXP.view_at(lambda b, res: layout.View(readout_at(b, res), {
    "kl-penalty-policies": figs.policies_chart(b, res, steps, floor, page.present)}), seed, steps)
view = page.follow(layout.Instant("beta", view_at, setting=(seed, steps)), helps=HELPS)

(fig,) = page.figures(1)
with fig:
    st.markdown(f"**The policies reached** after {steps:,} steps · responses sorted by reward · "
                f"log scale, where the rules differ")
    page.chart(view, "kl-penalty-policies")


# --- what to look for: the three training rules ------------------------------------------
def on_log_scale(p: np.ndarray, q: np.ndarray, marks: str, target: str) -> str:
    """Empty if p's marks sit on q's within a factor 2 everywhere; else where they do not."""
    i, ratio = core.furthest_on_log_scale(p, q)
    if 0.5 <= ratio <= 2:
        return ""
    side = "above" if ratio > 1 else "below"
    return (f", though on the log scale its {marks} still stand {side} {target} where "
            f"probabilities are tiny (r = {fmt.fixed(res.r[i], 3)}: {fmt.sig(p[i], 2)} against "
            f"{fmt.sig(q[i], 2)}): responses a policy seldom samples get few updates, so their "
            f"probabilities settle slowly while holding little mass")


pi_k1r, pi_k1l, pi_k3 = res.policies       # in core.RULES order
best, top_k1l = int(np.argmax(res.r)), int(np.argmax(pi_k1l))
tv_k1r = rows["k1 in the reward"]["tv_to_target"]
tv_k3f = rows["k3 as a loss"]["tv_to_forward"]
tv_opt = rows["pi* (target)"]["tv_to_forward"]
tv_ref_target = rows["reference pi_ref"]["tv_to_target"]
tv_ref_forward = rows["reference pi_ref"]["tv_to_forward"]
if tv_k1r <= REACHED:
    k1r = (f"After {steps:,} steps it is {fmt.fixed(tv_k1r, 3, min_sig=1)} from π* in total "
           f"variation" + (on_log_scale(pi_k1r, res.target, "circles", "π*'s bars")
                           or ": its circles sit on π*'s bars") + ".")
elif tv_k1r < tv_ref_target:
    k1r = (f"After {steps:,} steps it has not got there yet: {fmt.fixed(tv_k1r, 3)} away in total "
           f"variation, from {fmt.fixed(tv_ref_target, 3)} at the start.")
else:
    k1r = (f"After {steps:,} steps it is no closer to π* than π_ref was ({fmt.fixed(tv_k1r, 3)} "
           f"against {fmt.fixed(tv_ref_target, 3)} in total variation).")
if tv_opt < 0.01 and rows["k3 as a loss"]["tv_to_target"] <= REACHED:
    near = ("on π* to three decimals (within 0.0005 in total variation)"
            if fmt.fixed(tv_opt, 3) == "0.000"
            else f"within {fmt.fixed(tv_opt, 3)} of π* in total variation")
    k1r += (f" At this β the forward-KL optimum lies {near}, so k3 as a "
            f"loss, which heads for the forward-KL optimum, ends near π* too.")

share_top = float(pi_k1l[top_k1l])
if share_top >= PILED and top_k1l == best:
    k1l = (f"piles onto the best response (r = {fmt.fixed(res.r[best], 3)}: "
           f"{fmt.pct(share_top, 1)} of its probability, against "
           f"{fmt.pct(res.target[best], 1)} under π*).")
elif share_top >= PILED:
    k1l = (f"piles onto the response with r = {fmt.fixed(res.r[top_k1l], 3)} "
           f"({fmt.pct(share_top, 1)} of its probability), not the best one "
           f"(r = {fmt.fixed(res.r[best], 3)}): once one good response fills the batches, the "
           f"better one is seldom drawn and gains only slowly.")
else:
    reward_k1l, reward_ref = rows["k1 as a loss"]["reward"], rows["reference pi_ref"]["reward"]
    if reward_k1l > reward_ref:
        k1l = (f"has raised its expected reward from {fmt.fixed(reward_ref, 3)} to "
               f"{fmt.fixed(reward_k1l, 3)} after {steps:,} steps, with {fmt.pct(share_top, 1)} "
               f"on its likeliest response (r = {fmt.fixed(res.r[top_k1l], 3)}).")
    else:
        k1l = (f"has its expected reward at {fmt.fixed(reward_k1l, 3)} after {steps:,} steps, "
               f"against π_ref's {fmt.fixed(reward_ref, 3)}.")

if tv_k3f <= REACHED:
    k3 = (f"its orange bars end {fmt.fixed(tv_k3f, 3, min_sig=1)} from the forward-KL optimum's "
          f"dashes in total variation" + (on_log_scale(pi_k3, res.forward, "bars", "the dashes")
                                          or ", stopping at the dashes"))
elif tv_k3f < tv_ref_forward:
    k3 = (f"its orange bars head for the forward-KL optimum's dashes but are still "
          f"{fmt.fixed(tv_k3f, 3)} away after {steps:,} steps (π_ref: "
          f"{fmt.fixed(tv_ref_forward, 3)})")
else:
    k3 = (f"its orange bars are no closer to the forward-KL optimum's dashes than π_ref was "
          f"({fmt.fixed(tv_k3f, 3)} against {fmt.fixed(tv_ref_forward, 3)})")

diff = int(np.argmax(np.abs(res.forward - res.target)))
low = int(np.argmin(res.r))
if tv_opt >= 0.01:
    where = (f" The two optima weight π_ref differently, π* by exp(r/β) and the forward-KL "
             f"optimum by β/(λ − r) for a constant λ > max r, so they differ most on the "
             f"response with r = {fmt.fixed(res.r[diff], 3)}: {fmt.sig(res.target[diff], 2)} "
             f"under π*, {fmt.sig(res.forward[diff], 2)} under the forward-KL optimum.")
    if res.forward[low] > res.target[low] and low != diff:
        where += (f" On the lowest-reward response the forward-KL optimum keeps "
                  f"{fmt.sig(res.forward[low], 2)} where π* keeps {fmt.sig(res.target[low], 2)}: "
                  f"dropping a response π_ref likes costs it more.")
else:
    where = f" At this β the two optima nearly coincide ({fmt.fixed(tv_opt, 3)} apart)."
tvs = figs.optima_apart(seed, tuple(BETA_STOPS))
i_max, i_min = int(np.argmax(tvs)), int(np.argmin(tvs))
where += (f" Across the slider's range they are furthest apart at β = "
          f"{controls.fmt_number(BETA_STOPS[i_max])} ({fmt.fixed(tvs[i_max], 3)}) and closest "
          f"at β = {controls.fmt_number(BETA_STOPS[i_min])} ({fmt.fixed(tvs[i_min], 3)}).")

look_for = (
    f"Only the penalty placed in the reward heads for π*: its score-function gradient is the "
    f"gradient of the reverse KL, and at π* every penalized reward r − β·log(π*/π_ref) is "
    f"equal, so the updates stop there. {k1r} Differentiated as a loss, k1's gradient averages "
    f"to zero (Exercise 28.3b), nothing holds the policy back, and it {k1l} k3 as a loss "
    f"follows the gradient of the forward divergence KL(π_ref ‖ π) instead (Exercise 28.3c), "
    f"which punishes dropping responses the reference likes: {k3}.{where} Work the three "
    f"gradients out by hand on three responses in <a href='exercises'>Exercise 28.3</a>."
)


# --- the estimators ------------------------------------------------------------------------
# The exact law of one sample under π* (ten responses) judges the table's means: a heavy tail
# hides from the sample spread (its largest values are seldom drawn).
check = core.estimator_check(res.target, res.pi_ref, est)
bias, se, z, within = check.bias, check.se, check.z, check.within


def nats(x: float, signed: bool = False) -> str:
    """A divergence or an estimate's bias or spread: four decimals, two significant at least."""
    return fmt.fixed(x, 4, signed=signed, min_sig=2)


def bias_clause(k: int) -> str:
    """Whether estimator k's bias column is within Monte Carlo error, in words."""
    said = f"{core.ESTIMATORS[k]}'s bias, {nats(bias[k], signed=True)}, is"
    if within[k]:
        return f"{said} within Monte Carlo error (three standard errors: ±{nats(Z_MC * se[k])})"
    return (f"{said} {fmt.fixed(z[k], 1)} standard errors from zero, more than Monte Carlo "
            f"error usually gives")


n_negative = check.n_negative
if n_negative > 0:
    if est.share_negative[0] >= 0.0005:
        share = f"{fmt.pct(est.share_negative[0], 1)} of its estimates are"
    else:
        share = f"{n_negative:,} of its {est.reps:,} estimates {'is' if n_negative == 1 else 'are'}"
    negative = f"so {share} negative, which no divergence can be."
else:
    negative = (f"yet none of its {est.reps:,} estimates here is negative: π* gives "
                f"{fmt.pct(check.p_positive, 1)} of its samples to responses it likes more than "
                f"π_ref does, where −log ρ is positive, and in every batch drawn they outweighed "
                f"the rest.")
k1_text = f"k1 = −log ρ averages log-ratios of either sign, {negative}"
k3_text = ("k3 = ρ − 1 − log ρ adds ρ − 1, whose expectation under π* is zero, so it keeps k1's "
           "expectation and is never negative (ρ − 1 − log ρ ≥ 0)")

if est.std[2] > est.std[0]:         # a heavy tail
    tail = core.heavy_tail(res.target, res.pi_ref, est.n_samples, est.reps)
    i, one = tail.index, tail.one_sample
    k3_text += (
        f". But here its spread, {nats(est.std[2])}, is larger than k1's {nats(est.std[0])}: k3 "
        f"has a heavy tail. ρ = π_ref/π* is {'huge' if tail.rho >= 100 else 'large'} on the "
        f"responses π* pushes down: the one with r = {fmt.fixed(res.r[i], 3)} has π_ref = "
        f"{fmt.sig(res.pi_ref[i], 2)} but π* = {fmt.sig(res.target[i], 2)}, so ρ = "
        f"{fmt.sig(tail.rho, 2)}, and there ρ − 1 dominates k3. One sample of it adds "
        f"{fmt.sig(one, 2)} nats to its {est.n_samples}-sample estimate, "
        f"{fmt.sig(one / est.true_kl, 2)} times the true KL")
    if tail.expected_batches < SELDOM:
        k3_text += (f", but π* draws it so seldom that the {est.reps:,} batches are expected "
                    f"to contain it {fmt.sig(tail.expected_batches, 2)} times. ")
    else:
        share_var = fmt.pct(tail.variance_share)       # of k3's exact variance
        if tail.variance_share >= 0.5:
            role = f"dominates k3's spread ({share_var} of its variance)"
        elif tail.largest_share:
            role = f"gives {share_var} of k3's variance, more than any other response"
        else:
            role = f"gives {share_var} of k3's variance"
        k3_text += (f"; about {fmt.fixed(tail.expected_batches, 0)} of the {est.reps:,} batches "
                    f"are expected to contain it, and it {role}. ")
    exact_sd = fmt.sig(check.exact_sd[2], 3)
    if tail.p_never > 0.5:
        k3_text += (f"The table has most likely never seen it: the exact spread of one "
                    f"estimate, computed from the ten probabilities, is {exact_sd}, not "
                    f"{fmt.sig(est.std[2], 3)}. ")
    else:
        k3_text += f"The exact spread of one estimate is {exact_sd}. "
    reads = f"{fmt.mean_se(est.mean[2], se[2])} here against the true {nats(est.true_kl)}"
    three_se = f"three standard errors of a mean of {est.reps:,} such estimates"
    if within[2] and abs(bias[2]) >= VISIBLY_OFF * est.true_kl:
        k3_text += (f"Unbiased in expectation, k3's average settles only slowly: it reads "
                    f"{reads}, and {three_se} are ±{fmt.sig(Z_MC * se[2], 3)}.")
    elif within[2]:
        k3_text += (f"Unbiased in expectation, k3's average reads {reads}, within Monte Carlo "
                    f"error ({three_se}: ±{fmt.sig(Z_MC * se[2], 3)}).")
    else:
        k3_text += (f"Unbiased in expectation, k3's average reads {reads}, "
                    f"{fmt.fixed(z[2], 1)} standard errors away: a rare draw, of the kind a "
                    f"heavy tail makes.")
    k1_text += f" Its light tail keeps its average steady: {bias_clause(0)}."
else:
    k3_text += (f"; since ρ − 1 rises where −log ρ falls, it cancels part of k1's fluctuation: "
                f"its spread here is {nats(est.std[2])} against k1's {nats(est.std[0])}. ")
    if within[0] and within[2]:
        k3_text += (f"Both are unbiased in expectation; the bias column here is within Monte "
                    f"Carlo error (three standard errors: ±{nats(Z_MC * se[0])} for k1, "
                    f"±{nats(Z_MC * se[2])} for k3).")
    else:
        joint = ", but " if within[0] != within[2] else " and "
        k3_text += (f"Both are unbiased in expectation; {bias_clause(0)}{joint}"
                    f"{bias_clause(2)}: a rare draw.")

k2_bias = float(check.exact_bias[1])
k2_text = ("k2 = ½(log ρ)² is never negative either, but its expectation is not the KL: it "
           "matches only while log ρ is small. ")
if abs(k2_bias) <= Z_MC * se[1]:
    k2_text += (f"Here π* is close enough to π_ref that its exact bias, computed from the ten "
                f"probabilities, is {nats(k2_bias, signed=True)}, too small to show against "
                f"Monte Carlo error (±{nats(Z_MC * se[1])}).")
else:
    # The readout's "k2's bias" is the runs' mean; say it, then the exact value if it differs.
    measured, exact = (nats(x, signed=True) for x in (bias[1], k2_bias))
    m_share, e_share = (fmt.pct(abs(x) / est.true_kl) for x in (bias[1], k2_bias))
    k2_text += (f"Its bias measured over the runs is {measured}, {m_share} of the KL"
                + (f" (exactly {exact}, {e_share})." if (measured, m_share) != (exact, e_share)
                   else "; the exact value, computed from the ten probabilities, is the same "
                        "to these digits."))
if est.std[1] < min(est.std[0], est.std[2]):
    k2_text += f" Its spread, {nats(est.std[1])}, is the smallest of the three."
elif est.std[1] < est.std[0]:
    k2_text += f" Its spread, {nats(est.std[1])}, is below k1's."
else:
    k2_text += f" Its spread, {nats(est.std[1])}, is not even below k1's here."

est_df = figs.estimator_table(est, se)
summary = figs.summary_table(res)


def more() -> None:
    """The two tables and what the estimator table shows, below the figure."""
    if page.section("Estimating the KL from samples"):
        st.markdown(f"**{est.reps:,} estimates, each the average of {est.n_samples} samples of "
                    f"π\\***, of KL(π* ‖ π_ref) = {fmt.fixed(est.true_kl, 4)} nats")
        layout.small_table(*figs.estimator_shown(est_df, est, se))
        st.caption(f"ρ = π_ref(y)/π*(y) at a sampled response y. Mean ± SE: the average of "
                   f"the {est.reps:,} estimates and its Monte Carlo standard error, the exact "
                   f"spread of one estimate (from the ten probabilities) over √{est.reps:,}; "
                   f"the mean shows the digits that error supports. Bias: mean minus the true "
                   f"KL(π* ‖ π_ref) = {fmt.fixed(est.true_kl, 4)} nats. Spread: standard "
                   f"deviation of one {est.n_samples}-sample estimate, over the {est.reps:,} "
                   f"drawn. Negative: share of the estimates below zero.")
        st.markdown("\n".join(f"- {text}".replace("*", "\\*")
                               for text in (k1_text, k3_text, k2_text)))
    if page.section("Where each policy ends up"):
        layout.small_table(summary, {c: 3 for c in ("E[r]", "KL to π_ref", "TV to π*",
                                                    "TV to fwd opt.")})
        st.caption(f"After {steps:,} training steps. E[r]: expected reward. KL(π ‖ π_ref) in "
                   f"nats. TV: total-variation distance, to π* ∝ π_ref·exp(r/β) and to the "
                   f"forward-KL optimum, which maximizes E[r] − β·KL(π_ref ‖ π).")


page.explain(look_for, extra=more)


page.details(lambda: figs.details(res, est_df, summary, beta, seed, steps))
