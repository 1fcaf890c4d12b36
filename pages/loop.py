"""Section 12.7.4: what narrows pass@k in a policy-gradient run. The same model trained with
shared or per-problem parameters, sampled or with its exact expected gradient, against the
KL-matched optimum (whose pass@k never falls); scrubbed step by step."""

from __future__ import annotations

import math
import secrets

import streamlit as st

from klrl_core import loop
from klrl_app import controls, fmt, layout
from klrl_app import loop_figures as lf
from klrl_app.passk import YUE
from klrl_app.loop_figures import cross_text, rare_text

SEED_MAX = 2**31 - 1
G_LO, G_HI = 2, 64
LR_LO, LR_HI, LR_STEP = 0.05, 2.0, 0.05
KL_LO, KL_HI, KL_STEP = 0.0, 2.0, 0.05
STEPS_LO, STEPS_HI = 10, 1000
RARE_HI = 12                       # rare problems stay at most half of the 24
MAX_STOPS = 101                    # stops of the step slider (a table per setting)
SEEN = 0.0005                      # a change below this does not show at three decimals
ESTIMATOR_OPTIONS = {"reinforce": "REINFORCE", "rloo": "RLOO", "grpo": "GRPO",
                     "dr_grpo": "Dr. GRPO"}

TITLE = "What narrows pass@k in training"
page = layout.Page(
    "loop", TITLE,
    "Section 12.7.4 · Chapter 28's lab on pass@k and entropy · Yue et al. (2025)",
    "",            # the model's description is computed from the setting below (model_text)
)
ui = page.ui
c_step, c_play, c_shared, c_exact, c_more = page.control_row([2.6, 0.9, 1.45, 1.75, 1.2])
with c_more, page.more_settings("More"):
    estimator = ui.choice("estimator", "Estimator", ESTIMATOR_OPTIONS, loop.ESTIMATOR_DEFAULT,
                          help="REINFORCE without a baseline, RLOO (leave-one-out mean), GRPO "
                               "(group mean and standard deviation), Dr. GRPO (group mean "
                               "only): Section 12.7.1.")
    g = ui.integer("g", "Group size G", default=loop.G_DEFAULT, lo=G_LO, hi=G_HI,
                   help=f"Answers sampled per problem per step, {G_LO} to {G_HI}. A group "
                        f"that is all wrong carries no signal for any of the four estimators.")
    lr = ui.number("lr", "Step size lr", default=loop.LR_DEFAULT, lo=LR_LO, hi=LR_HI,
                   step=LR_STEP, help="θ ← θ + lr · (the estimator's gradient), on the logits.")
    kl = ui.number("kl", "KL coefficient (k3 as a loss)", default=loop.KL_DEFAULT, lo=KL_LO,
                   hi=KL_HI, step=KL_STEP,
                   help="Weight of the penalty k3 = ρ − 1 − log ρ, ρ = π_ref/π, on the "
                        "sampled answers, differentiated as a loss (GRPO's placement, "
                        "chapter 28). 0: no penalty, as in the run Yue et al. measured.")
    steps = ui.integer("steps", "Training steps", default=loop.STEPS_DEFAULT, lo=STEPS_LO,
                       hi=STEPS_HI, widget="number",
                       help=f"Length of the runs, {STEPS_LO} to {STEPS_HI:,} steps.")
    rare = ui.integer("rare", "Rare problems (of 24)", default=loop.RARE_DEFAULT, lo=0,
                      hi=RARE_HI,
                      help=f"How many of the 24 problems are rare (only strategy 2 right); "
                           f"the rest are common. 0 to {RARE_HI}.")
    seed = ui.seed(help=f"The {loop.RUNS_DEFAULT} sampled runs come from this seed, so a link "
                        f"shows the same runs (the exact gradient draws nothing). Whole numbers "
                        f"from 0 to {SEED_MAX:,}.")
    st.button("New runs", icon=":material/refresh:", disabled=ui.fixed("seed"),
              help=f"Train another {loop.RUNS_DEFAULT} runs from a fresh seed (kept in the link).",
              on_click=lambda: ui.set("seed", secrets.randbelow(SEED_MAX + 1)))
with c_shared:
    shared = ui.switch("shared", "Shared θ", default=True,
                       help="On: one logit vector θ for all 24 problems (a network's shared "
                            "weights). Off: one per problem, so each problem is trained on "
                            "its own, the case the optimum describes.")
with c_exact:
    exact = ui.switch("exact", "Exact gradient", default=False,
                      help="On: no sampling. Each step takes the estimator's expected update "
                           "under the current policy, computed exactly over every outcome of "
                           "a group of G, so one run stands for the mean of infinitely many. "
                           "Off: G answers are sampled per problem per step.")
with c_step:
    step_key = ui.key("step")
    if step_key in st.session_state and st.session_state[step_key] > steps:
        st.session_state[step_key] = steps           # the runs were shortened
    stops, stride = lf.step_stops(steps, MAX_STOPS)   # a linked step between them is kept
    step = ui.stops("step", "Training step", stops, default=steps, integer=True,
                    help=f"Scrub through the {steps:,} steps of the runs"
                         + (f" ({stride} at a time; a link may give any step)" if stride > 1
                            else "") + ": every figure and number shows the policy after "
                         "this many updates.")
with c_play:
    page.play("step")
page.finish_controls()


# ------------------------------------------------------------------------------ the runs
setting = (estimator, g, lr, steps, kl, shared, rare, seed, exact)
runs = lf.Runs(*setting)
tr = runs.variant(shared, exact)
# The pass@k chart's three runs: the shared θ sampled and exact, and one θ per problem (as
# the exact switch says); the switches choose which of them the rest of the page shows.
shared_sampled, shared_exact = runs.variant(True, False), runs.variant(True, True)
own = runs.variant(False, exact)
prob = tr.run.problems
EST = ESTIMATOR_OPTIONS[estimator]
# Words for the rare problems, one or many (rare = 1 is allowed).
rare_the, rare_poss = lf.rare_the(rare), lf.rare_poss(rare)


def problems_text(lo: int, hi: int) -> str:
    return f"problem {lo}" if lo == hi else f"problems {lo}–{hi}"


def model_text() -> str:
    """What is modelled, from the setting (the first screen and About this figure)."""
    right_c, right_r = fmt.pct(loop.REF_COMMON[0]), fmt.pct(loop.REF_RARE_RIGHT)
    head = f"{loop.N_PROBLEMS} problems share {loop.N_STRATEGIES} solution strategies. "
    if rare == 0:
        return head + (f"None is rare: on every problem strategy 1 is right, and the base model "
                       f"picks it {right_c} of the time.")
    return head + (f"On {problems_text(1, 24 - rare)} (common) strategy 1 is right, picked "
                   f"{right_c} of the time by the base model; on {problems_text(25 - rare, 24)} "
                   f"(rare) only strategy 2 is right, picked {right_r} of the time.")


def training_text() -> str:
    theta = ("logits θ shared by all 24 problems, as a network's weights are" if shared else
             "one logit vector θ per problem")
    if exact:
        return (f"Each step adds lr times {EST}'s expected update, computed exactly over every "
                f"group of {g} answers (nothing is sampled), to {theta}. The figures show this "
                f"one run.")
    return (f"Each step samples G = {g} answers per problem, grades them 0/1 and updates {theta} "
            f"with {EST}. {loop.RUNS_DEFAULT} runs are trained at once; the figures show their "
            f"mean.")


page.lead = model_text() + " " + training_text()
st.caption(model_text())


RUN_LINES = lf.run_lines(shared_sampled, shared_exact, own, shared, exact)


def optimum_item(t: int) -> tuple[str, str]:
    """The KL-matched optimum where the base is not saturated: the rare problems' success
    (pass@1 when there are none), checked against the base at every step (opt_ok)."""
    if rare:
        label, now, base = ("Optimum at this KL, rare", fmt.prob(tr.opt_rare_rate[t]),
                            fmt.prob(loop.REF_RARE_RIGHT))
    else:
        label, now, base = ("Optimum at this KL, pass@1", fmt.fixed(tr.opt_passk[t][0], 3),
                            fmt.fixed(tr.base_p1, 3))
    return label, (f"{now} ≥ {base} ✓" if tr.opt_ok[t] else f"{now} ✗ below the base")


def view_at(t) -> layout.View:
    """The readout and the three charts at step t: look-ups in the cached runs."""
    t = int(t)
    items = [
        (f"{EST} step" + (", exact" if exact else ""), f"{t:,} of {steps:,}"),
        ("pass@1 base → now", f"{fmt.fixed(tr.base_p1, 3)} → {fmt.fixed(tr.p1[t], 3)}"),
        ("pass@256 base → now", f"{fmt.fixed(tr.base_p256, 3)} → {fmt.fixed(tr.p256[t], 3)}"),
        ("Base overtakes at k", cross_text(int(tr.cross[t]))),
        (f"{rare_poss.capitalize()} success", "none" if not rare else
         f"{fmt.prob(tr.rare_rate[0])} → {fmt.prob(tr.rare_rate[t])}"),
        optimum_item(t),
    ]
    return layout.View(items, {"loop-problems": lf.problems_chart(tr, t, exact),
                               "loop-passk": lf.passk_chart(tr, t, RUN_LINES),
                               "loop-dynamics": lf.dynamics_chart(tr, t, exact)})


MEAN_OF = "this run (nothing is sampled)" if exact else f"the mean of the {loop.RUNS_DEFAULT} runs"
helps = [
    "the estimator, and the updates made so far; step 0 is the base model itself"
    + ("; exact: each update is the estimator's expected one, so no sample is drawn." if exact
       else "."),
    "the mean over problems of each problem's solve rate (one attempt), for the base model and "
    f"for the trained policy ({MEAN_OF}). Exact, from the policy, not from samples.",
    "the chance that at least one of 256 attempts is right, 1 − (1 − p)^256, averaged over the "
    f"problems ({MEAN_OF}).",
    "the smallest whole k from 1 to 1,024 at which the base model's pass@k exceeds the trained "
    "one's (by more than 10⁻⁹); none if it never does.",
    f"mean solve rate of {rare_the}, base → now." if rare else "there are no rare problems.",
    ("the mean solve rate on the rare problems" if rare else "pass@1")
    + " of the KL-regularized optimum π* ∝ π_ref·exp(r/β), with one β chosen (by bisection) so "
    "that its mean KL over the problems equals the run's at this step, against the base's. ✓: "
    "at every step every problem's optimal solve rate is at least its base rate, so the "
    "optimum's pass@k is at least the base's at every k (Section 12.7.4's derivation). pass@256 "
    f"would not tell them apart: the base model's is already {fmt.fixed(tr.base_p256, 3)} here.",
]
view = page.follow(layout.Instant("step", view_at, setting=setting), helps)
left, right = page.figures()
with left:
    page.chart(view, "loop-problems")
with right:
    page.chart(view, "loop-passk")
page.chart(view, "loop-dynamics")


# ------------------------------------------------------------------------------ the story
p1_now, p256_now, cross_now = float(tr.p1[step]), float(tr.p256[step]), int(tr.cross[step])
lead, lead_k = loop.largest_base_lead(prob.base_rates, tr.run.success[:, step], lf.K_MAX)
narrowed_256, rose_1 = tr.narrowed(step, SEEN), p1_now > tr.base_p1 + SEEN
rare_fell = tr.rare_fell(step, SEEN)
rare_name = "rare problem's" if rare == 1 else f"{rare} rare problems'"


def numbers_of(x: loop.RunCurves) -> str:
    rare_part = f"rare success {rare_text(x.rare_rate[step])}, " if rare else ""
    return f"{rare_part}pass@256 {fmt.fixed(x.p256[step], 3)}"


def cause_text() -> str:
    """Which ingredient loses the rare problems here: the three runs at this step compared."""
    if not rare or step == 0:
        return ""
    sh_s, sh_e = shared_sampled.rare_fell(step, SEEN), shared_exact.rare_fell(step, SEEN)
    mine = own.rare_fell(step, SEEN)
    own_name = f"one θ per problem{' (exact)' if exact else ''}"
    them = "it" if rare == 1 else "them"
    if sh_e and sh_s and not mine:
        return (f" The shared θ loses {them} with the exact expected gradient too (no sampling: "
                f"{numbers_of(shared_exact)}; sampled: {numbers_of(shared_sampled)}), while "
                f"{own_name} keeps {them} ({numbers_of(own)}): in this model the shared "
                f"parameters, not the sampling, lose {rare_the}.")
    if sh_s and not sh_e:
        return (f" Here the sampling matters: with the exact expected gradient the shared θ "
                f"keeps {rare_the} ({numbers_of(shared_exact)}; sampled "
                f"{numbers_of(shared_sampled)}).")
    if sh_e and not sh_s:
        return (f" The exact expected gradient on the shared θ loses {them} "
                f"({numbers_of(shared_exact)}), while the sampled runs do not yet "
                f"({numbers_of(shared_sampled)}).")
    if mine:
        return (f" With {own_name} {'it falls' if rare == 1 else 'they fall'} too "
                f"({numbers_of(own)}): here sharing θ is not the only cause.")
    return ""


def story() -> str:
    if step == 0:
        return ("At step 0 nothing has been trained: the policy is the base model, every run's "
                "curve lies on the base's and the optimum at zero KL is the base too. Move the "
                "step slider (or press Play) to watch the runs train.")
    rise = ("rises" if rose_1 else "falls" if p1_now < tr.base_p1 - SEEN else "barely moves")
    s = [f"After {step:,} steps pass@1 {rise} from {fmt.fixed(tr.base_p1, 3)} to "
         f"{fmt.fixed(p1_now, 3)}"]
    if narrowed_256:
        s.append(f" while pass@256 falls from {fmt.fixed(tr.base_p256, 3)} to "
                 f"{fmt.fixed(p256_now, 3)}: the run narrows what the model can solve with many "
                 f"tries.")
    elif lead > SEEN:
        s.append(f"; pass@256 stays at {fmt.fixed(p256_now, 3)} (base "
                 f"{fmt.fixed(tr.base_p256, 3)}), but the base overtakes the trained curve at "
                 f"k = {cross_now:,} and leads it by up to {fmt.fixed(lead, 3)} "
                 f"(at k = {lead_k:,}).")
    else:
        s.append(f", and the trained curve does not fall visibly below the base at any k up to "
                 f"1,024 (pass@256 {fmt.fixed(tr.base_p256, 3)} → {fmt.fixed(p256_now, 3)}): this "
                 f"run does not narrow.")
    if rare == 0:
        s.append(" There are no rare problems here, so nothing can be lost by sharing: every "
                 "problem wants strategy 1.")
    elif rare_fell:
        its = "Its" if rare == 1 else "Their"
        if exact:
            why = (f" Nothing is sampled in this run, so no group is ever all wrong; a group of "
                   f"{g} would be all wrong {fmt.pct(tr.rare_wrong[step], 1)} of the time now "
                   f"(from {fmt.pct(tr.rare_wrong[0], 1)}).")
        else:
            why = (f" {its} groups of {g} are all wrong {fmt.pct(tr.rare_wrong[step], 1)} of the "
                   f"time now (from {fmt.pct(tr.rare_wrong[0], 1)}); such a group carries no "
                   f"reward signal.")
        if kl > 0:
            why += (f" The KL penalty (weight {controls.fmt_number(kl)}) holds the policy near "
                    f"the reference: the run spends only {fmt.fixed(tr.kl[step], 3)} nats.")
        if shared:
            s.append(f" The {rare_name} success falls from "
                     f"{fmt.prob(tr.rare_rate[0])} to {fmt.prob(tr.rare_rate[step])}: "
                     f"the {24 - rare} common problems push the shared θ away from strategy 2, "
                     f"which is wrong for them and the only right answer on "
                     f"{'the rare one' if rare == 1 else 'a rare one'}.{why}")
        else:
            s.append(f" The {rare_poss} success falls from {fmt.prob(tr.rare_rate[0])} to "
                     f"{fmt.prob(tr.rare_rate[step])} even without sharing.{why}")
    else:
        before, now = fmt.prob(tr.rare_rate[0]), fmt.prob(tr.rare_rate[step])
        moved = ("stays at " + before if before == now else
                 f"rises from {before} to {now}" if tr.rare_rate[step] > tr.rare_rate[0] + SEEN
                 else f"barely moves, from {before} to {now}")
        s.append(f" The {rare_poss} success {moved}.")
    s.append(cause_text())
    ok = bool(tr.opt_ok[: step + 1].all())
    beta = tr.opt.beta[step]
    s.append(f" The optimum with the same mean KL ({fmt.fixed(tr.kl[step], 3)} nats, β = "
             f"{'∞' if not math.isfinite(beta) else fmt.fixed(beta, 4, sig_from=1000, digits=4)})"
             f" raises every problem's solve rate, so its pass@256 is "
             f"{fmt.fixed(tr.opt_p256[step], 3)}, "
             + ("at or above the base at every k at every step so far (checked)."
                if ok else "BELOW the base somewhere: a failed check, please report it.")
             + ("" if tr.opt.reached[step] else
                " (The run spends more KL than any optimum can: shown at κ = 10,000.)"))
    s.append(" Section 12.7.4's guarantee is for the optimum over all policies, which tilts each "
             "problem on its own, as one θ per problem can and one shared θ cannot.")
    if rose_1 and narrowed_256:
        s.append(" Yue et al. measured the same shape on a real model (open markers).")
    return "".join(s).replace("*", "\\*")


GRID = runs.four()


def causal_section() -> None:
    if not page.section("Which ingredient narrows: shared θ or sampling"):
        return
    layout.small_table(lf.four_runs_frame(GRID, step),
                       {c: lambda v: fmt.fixed(v, 3) for c in ("pass@1", "pass@256")})
    st.caption(f"All four at step {step:,} with the same estimator, G, lr, kl and rare (the "
               f"sampled ones also the same seed); only θ's sharing and the sampling differ.")
    if step == 0:
        text = "At step 0 all four are the base model."
    else:
        narrow = [x.narrowed(step, SEEN) for *_, x in GRID]
        base = fmt.fixed(tr.base_p256, 3)
        if narrow == [True, True, False, False]:
            text = (f"Only the shared θ narrows: its pass@256 falls below the base's {base} "
                    f"with sampling and without it, while one θ per problem keeps it. In this "
                    f"model the parameterization, not the sampling, narrows pass@k.")
        elif not any(narrow):
            text = (f"None of the four drops pass@256 visibly below the base's {base} at this "
                    f"step" + (f"; compare the {rare_poss} success instead." if rare else "."))
        else:
            which = [f"θ {a}, {b} gradient" if b == "exact" else f"θ {a}, {b}"
                     for (a, b, _), n in zip(GRID, narrow) if n]
            text = (f"pass@256 falls below the base's {base} with " + ", ".join(which[:-1])
                    + (" and " if len(which) > 1 else "") + which[-1] + "; not with the others.")
    st.markdown(text.replace("*", "\\*"))
    at256 = fmt.fixed(tr.base_p256, 3)
    st.markdown(
        "**Measured, not computed here.** The open diamonds and squares are Yue et al.'s (2025) "
        "numbers for Qwen2.5-7B trained with GRPO, without a KL term, on 2,000 mathematics "
        "problems and measured on those problems: pass@1 9.9% → 42.5% after 450 steps, "
        "pass@256 67.2% → 64.3%. They show the shape measured on a real model, not a fit of this "
        f"one: their base model's pass@256 ({fmt.fixed(YUE['base'][1], 3)}) sits far from this "
        f"model's ({at256}) because their problems are not these 24: about "
        f"{fmt.pct(1 - YUE['base'][1])} of theirs go unsolved in 256 tries, while the base model "
        f"here solves every problem at least {fmt.pct(float(prob.base_rates.min()))} of the time. "
        "See also "
        "[pass@k at the optimum](/pass-at-k), [when a group carries signal](/groups) and "
        "[why entropy collapses](/entropy).")


page.explain(story(), extra=causal_section)


# ------------------------------------------------------------------------------ the numbers
def numbers() -> None:
    how = "exact expected gradient, one run" if exact else f"mean over the {loop.RUNS_DEFAULT} runs"
    st.markdown(f"**Per step**, {how}: {estimator} "
                f"({EST}), G = {g}, lr = {controls.fmt_number(lr)}, "
                f"kl = {controls.fmt_number(kl)}, θ {'shared' if shared else 'per problem'}, "
                f"{rare} rare" + ("" if exact else f", seed {seed}") + ".")
    df = lf.per_step_frame(tr)
    shown = df.iloc[sorted(set(range(0, steps + 1, max(1, steps // 20))) | {step, steps})]
    layout.table(shown.iloc[:, :10], digits=4)
    stem = runs.file_stem()
    layout.csv_download(lambda: lf.per_step_frame(tr), f"{stem}.csv",
                        label="Download the per-step table (CSV)", key="loop-csv")
    layout.csv_download(lf.passk_frame(tr, RUN_LINES, step), f"{stem}_passk_step{step}.csv",
                        label=f"Download pass@k at step {step:,} (CSV)", key="loop-passk-csv")


page.details(numbers)
