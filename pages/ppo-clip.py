"""Equation (12.2): PPO's clipped surrogate against the ratio, clip-higher and CISPO beside it,
and what several epochs on one batch do with each (section 12.1.4; chapter 28, "Importance
ratios, clipping, and stale samples")."""

import numpy as np

from klrl_core import ppo_clip as pc
from klrl_app import fmt, layout
from klrl_app import ppo_clip_figures as figs
from klrl_app.ppo_clip_figures import CH_HI, CH_LO, P_RARE, RARE, RARE0, REWARDS

CISPO_CHOICES = {"dapo": f"[{fmt.fixed(1 - CH_LO, 2)}, {fmt.fixed(1 + CH_HI, 2)}]",
                 "m1": f"MiniMax-M1: at most {fmt.fixed(1 + CH_HI, 2)}"}
# Over seeds 0-99 at the default settings, clip-higher leaves the rare action more probable
# than PPO for this many (tests/test_app_ppo_clip.py recounts it).
CH_WINS_DEFAULT = 55
SIGNS = {"both": "both", "pos": "A > 0", "neg": "A < 0"}
SHOW = {"all": "both", "higher": "clip-higher", "cispo": "CISPO", "none": "none"}
ACTION = f"action {RARE + 1}"                          # the rare action, in a sentence
START = fmt.sig(RARE0, 2)                              # its probability under π_old

page = layout.Page(
    "ppo-clip", "PPO's clipped surrogate",
    "Equation (12.2) · Section 12.1.4 · Chapter 28: importance ratios, clipping, and stale "
    "samples",
    "Several gradient steps on one batch make the samples stale: the policy that drew them is "
    "no longer the one being trained, and the ratio ω = π_θ(a)/π_old(a) measures how far "
    "each sample's probability has moved. PPO clips the ratio to [1 − ε, 1 + ε] inside a min, "
    "so once a sample has moved past the edge its advantage pushes toward, its gradient is "
    "zero. The figures: the objective of one sample with advantage A = ±1 and, below it, its "
    "gradient; then five actions, one batch drawn from π_old = (0.40, 0.25, 0.20, 0.10, 0.05) "
    "with rewards (0.2, 0.4, 0, 0.3, 1), advantages = reward minus the batch's mean reward, "
    "and several full-batch steps with each rule.",
)
ui = page.ui
c_eps, c_sign, c_more = page.control_row([3, 2.1, 1.5])
with c_eps:
    eps = ui.number("eps", "Clip range ε", default=pc.EPS, lo=0.05, hi=0.5, step=0.01,
                    fmt="%.2f",
                    help="PPO keeps the ratio in [1 − ε, 1 + ε]; the paper suggests 0.2. It "
                         "sets PPO's range in both figures; clip-higher keeps DAPO's "
                         "[0.8, 1.28], and CISPO the bounds chosen under More settings.")
with c_sign:
    sign = ui.choice("sign", "Advantage", SIGNS, "both",
                     help="Draw the sample with a positive advantage (A = +1, upper half), a "
                          "negative one (A = −1, lower half), or both.")
with c_more, page.more_settings():
    show = ui.choice("show", "Beside plain and PPO", SHOW, "all",
                     help="Also draw DAPO's clip-higher range [1 − 0.2, 1 + 0.28] and CISPO's "
                          "clipped importance weight, in both figures.")
    cispo = ui.choice("cispo", "CISPO's weight bounds", CISPO_CHOICES, "dapo",
                      help="CISPO clips its importance weight to [1 − ε_low, 1 + ε_high]. "
                           "[0.80, 1.28]: DAPO's range, the one clip-higher uses, so the two "
                           "rules differ only in what they clip. MiniMax-M1: the setting of "
                           "the paper that introduced CISPO, which puts no lower bound on the "
                           "weight (ε_low set large) and caps it above only, at 1 + ε_high "
                           "(kept at 0.28 here).")
    grad = ui.choice("grad", "Lower left panel", {"ratio": "d/dω", "score": "weight on ∇log π"},
                     "ratio",
                     help="d/dω: the objective's slope in the ratio (for CISPO, the weight it "
                          "puts on ∇ω). Weight on ∇log π: the same times ω, since "
                          "∇ω = ω·∇log π; every rule's update is this weight times ∇log π.")
    lr = ui.number("lr", "Step size", default=pc.DEFAULT_LR, lo=0.5, hi=10.0, step=0.5,
                   help="Step size of each full-batch gradient-ascent step on the logits.")
    epochs = ui.integer("epochs", "Epochs on the batch", default=pc.DEFAULT_EPOCHS, lo=1, hi=50,
                        help="Gradient steps taken on the same batch, from 1 to 50.")
    n_samples = ui.integer("n", "Samples in the batch N", default=pc.DEFAULT_SAMPLES, lo=2,
                           hi=1000, help="Actions drawn from π_old for the batch, 2 to 1,000.")
    seed = ui.seed(default=pc.DEFAULT_SEED,
                   help="The batch is drawn from this seed. The default batch (seed 0) holds "
                        "the rare action twice.")
    bernoulli = ui.switch("bernoulli", "0/1 rewards", default=False,
                          help="Off: each sample's reward is its action's reward. On: each "
                               "action's reward is its chance of a reward of 1, drawn per "
                               "sample, so a batch can flatter a lucky action.")
page.finish_controls()

eps = round(eps, 6)
lr = round(lr, 6)
methods = figs.SHOWN_METHODS[show]
signs = figs.ADVANTAGES[sign]
lo_edge, hi_edge = figs.edges(eps)
bounds = figs.cispo_bounds(cispo)                  # CISPO's weight bounds in words
runs = figs.EpochRuns(ui.sliders["eps"][2], methods, cispo, lr, epochs, n_samples, seed,
                      bernoulli, page.present)
panels = figs.ClipPanels(methods, sign, grad, eps, cispo, page.present)
batch, traces = runs.batch, runs.at(eps)
kl_end = {m: float(traces[m].kl[-1]) for m in methods}
rare_end = {m: float(traces[m].p_rare[-1]) for m in methods}
ep_text = fmt.count(epochs, "epoch")

FLAT_HELP = {
    1.0: "where PPO's objective for a positive-advantage sample stops growing: past 1 + ε its "
         "gradient is zero (the shaded region, upper half).",
    -1.0: "where PPO's objective for a negative-advantage sample stops falling: below 1 − ε its "
          "gradient is zero (the shaded region, lower half).",
}
rule_help = {
    "plain": "the plain importance-weighted surrogate, mean of ω·A over the batch: no clip.",
    "ppo": f"Equation (12.2) with the ratio clipped to [{fmt.fixed(lo_edge, 2)}, "
           f"{fmt.fixed(hi_edge, 2)}].",
    "clip_higher": f"Equation (12.2) with DAPO's asymmetric range [{fmt.fixed(1 - CH_LO, 2)}, "
                   f"{fmt.fixed(1 + CH_HI, 2)}].",
    "cispo": f"each sample's update is clip(ω)·A·∇log π with the weight clipped to "
             f"{bounds.range} and held fixed: never zero.",
}
helps = [FLAT_HELP[a] for a in signs] + [
    f"for each rule below, after the last epoch: KL(π_θ ‖ π_old) in nats, how far the steps on "
    f"one batch moved the policy from the one that drew it; and {P_RARE}, the probability of the "
    f"rare, best-rewarded action {RARE + 1} (π_old gives it {START}, its reward is "
    f"{fmt.short(REWARDS[RARE])}; drawn {fmt.count(batch.counts[RARE], 'time')} in this batch "
    f"of {n_samples:,})."] + [rule_help[m] for m in methods]


def view_at(e: float) -> layout.View:
    """The readout and both figures at clip range ε = e (the browser draws it at every stop)."""
    e = round(float(e), 6)
    charts = {**figs.clip_charts(e, panels), "ppo-clip-epochs": figs.epoch_chart(runs, e)}
    return layout.View(figs.readout(e, runs, signs), charts)


view = page.follow(layout.Instant(
    "eps", view_at, setting=(sign, show, cispo, grad, lr, epochs, n_samples, seed, bernoulli)),
    helps)
left, right = page.figures(2)
with left:
    page.chart(view, "ppo-clip-surrogate")
    page.chart(view, "ppo-clip-gradient")
with right:
    page.chart(view, "ppo-clip-epochs")


# ----- what to look for: every sentence chosen by the numbers ------------------------------
def look_left() -> str:
    parts = []
    e_hi, e_lo, eps_t = fmt.fixed(hi_edge, 2), fmt.fixed(lo_edge, 2), fmt.fixed(eps, 2)
    if 1.0 in signs:
        where = "upper half" if sign == "both" else "A = +1"
        parts.append(
            f"With a positive advantage ({where}) PPO's objective rises with ω like the "
            f"unclipped ω·A until ω = {e_hi}, then stays at {e_hi}·A: past that edge (shaded) "
            f"its gradient is zero, so this batch gives no reason to make the action any more "
            f"probable. Below {e_lo} the min keeps the unclipped term and the gradient is "
            f"still A, which is what makes the objective a pessimistic lower bound on ω·A.")
    if -1.0 in signs:
        where = "lower half" if sign == "both" else "A = −1"
        parts.append(
            f"With a negative advantage ({where}) "
            + ("it is the mirror image: " if 1.0 in signs else
               f"PPO's objective is min(ω·A, clip(ω, {e_lo}, {e_hi})·A): ")
            + f"the objective follows ω·A down until ω falls to {e_lo} and is flat below it "
            f"(shaded, gradient zero); above {e_hi} it is not clipped, so a penalised action "
            f"that has become more probable is still pushed down.")
    if "clip_higher" in methods:
        ch_hi, ch_lo = fmt.fixed(1 + CH_HI, 2), fmt.fixed(1 - CH_LO, 2)
        if eps < CH_HI and 1.0 in signs:
            s = (f"Clip-higher (green) keeps the gradient of a positive-advantage sample until "
                 f"ω = {ch_hi}, beyond PPO's {e_hi} at ε = {eps_t}: an action whose "
                 f"probability is rising, such as a rare exploratory token, can gain more "
                 f"before its gradient stops.")
        elif eps < CH_HI:
            s = (f"Clip-higher (green) differs from PPO on the upper edge ({ch_hi} against "
                 f"{e_hi}), which matters only for positive advantages: switch to A > 0 to "
                 f"see it.")
        elif eps == CH_HI:
            s = (f"At ε = {eps_t} PPO's upper edge is clip-higher's ({ch_hi}); the two "
                 f"differ only below, {e_lo} against {ch_lo}.")
        else:
            s = (f"At ε = {eps_t} PPO's own upper edge, {e_hi}, is above clip-higher's "
                 f"{ch_hi}, so here clip-higher (green) is the narrower range on top; DAPO "
                 f"widens the top of the usual ε = 0.2.")
        if eps != CH_LO and eps < CH_HI:
            s += (f" Its lower edge stays at {ch_lo}, "
                  f"{'above' if lo_edge < 1 - CH_LO else 'below'} PPO's {e_lo} here.")
        parts.append(s)
    if "cispo" in methods:
        lo, hi = bounds.lo, bounds.hi
        weight = (f"CISPO (pink) clips the importance weight, not the objective: its update is "
                  f"clip(ω)·A·∇log π with the weight clipped to {bounds.range} and held fixed, "
                  f"so no sample ever loses its gradient. Against ω that weight is clip(ω)·A/ω: ")
        switch = "Switch the lower panel to the weight on ∇log π (More settings) to see it bounded"
        score = ("On ∇log π the plain surrogate's weight is ω·A, growing without bound; PPO's is "
                 "ω·A or 0; CISPO's (pink) is ")
        if grad == "ratio" and bounds.open_below:
            parts.append(weight + f"A up to ω = {hi}, since below the cap the weight is ω itself, "
                         f"and falling like {hi}·A/ω above it, where the weight on ∇log π stays "
                         f"{hi}·A while ∇ω = ω·∇log π grows with ω. {switch} above.")
        elif grad == "ratio":
            parts.append(weight + f"A inside [{lo}, {hi}], falling like {hi}·A/ω above it and "
                         f"growing in size like {lo}·A/ω below it, because ∇ω = ω·∇log π "
                         f"shrinks with ω. {switch}.")
        elif bounds.open_below:
            parts.append(score + f"min(ω, {hi})·A, with no lower bound (MiniMax-M1's setting): "
                         f"the plain weight up to ω = {hi} and capped there, so bounded above, "
                         f"and never zero for a sampled action (ω > 0) unless A is.")
        else:
            parts.append(score + f"clip(ω)·A, between {lo}·A and {hi}·A: bounded, and never "
                         f"zero unless A is.")
    return " ".join(parts)


def look_right() -> str:
    if not np.any(batch.advantages != 0):
        return (f"Every sample in this batch has the same reward, so every advantage is zero "
                f"and no rule moves the policy: KL stays 0 and {ACTION} stays at {START}. Draw "
                f"another batch (Seed) or more samples.")
    kl_text = {m: fmt.sig(v, 2) for m, v in kl_end.items()}
    if epochs == 1:
        return (f"With one epoch every rule takes the same step: at the sampling policy every "
                f"ratio is 1, inside every range, so neither the clip nor the weight changes "
                f"anything. KL {kl_text[methods[0]]} for all; {ACTION} goes from {START} to "
                f"{fmt.sig(rare_end[methods[0]], 2)}. Add epochs to see the rules part.")
    if runs.same_steps(eps):
        return (f"In {ep_text} no sample's clip has changed its update yet, so every rule has "
                f"taken the same steps: KL {kl_text['plain']} for all, {ACTION} from {START} "
                f"to {fmt.sig(rare_end['plain'], 2)}. The first epoch is always the same (every "
                f"ω = 1, inside every range); more epochs or a larger step size let the ratios "
                f"reach the edges and the rules part.")
    parts = ["The first epoch is the same step for every rule (every ω = 1, inside every "
             "range); after it the samples are stale and the rules part."]
    far, near = figs.tied(kl_end, max), figs.tied(kl_end, min)
    parts.append(f"After {ep_text} {figs.say(far)} {'has' if len(far) == 1 else 'have'} moved "
                 f"furthest from the sampling policy (KL {kl_text[far[0]]}) and {figs.say(near)} "
                 f"least ({kl_text[near[0]]}).")
    share = float(traces["ppo"].clipped_share[-1])
    if share == 1:
        stop = ("by the last epoch every sample's ratio has left the range, so every gradient "
                "is zero and PPO has stopped moving")
    elif share > 0:
        stop = f"by the last epoch the gradient is zero for {fmt.pct(share)} of the batch"
    else:
        stop = "at the last epoch no sample's ratio is past its edge"
    if kl_text["ppo"] == kl_text["plain"]:
        parts.append(f"Here PPO has moved as far as the plain surrogate (KL {kl_text['ppo']}); "
                     f"{stop}.")
    elif kl_end["ppo"] < kl_end["plain"]:
        held = fmt.sig(100 * kl_end["ppo"] / kl_end["plain"], 2)
        held = "just under 100" if held == "100" else held
        parts.append(f"PPO's clip holds it to {held}% of the plain surrogate's KL: {stop}.")
    else:
        parts.append(f"Here PPO has moved further than the plain surrogate (KL {kl_text['ppo']} "
                     f"against {kl_text['plain']}); {stop}.")
    if batch.counts[RARE] == 0:
        parts.append(f"Action {RARE + 1}, the rare one with the best reward, was not drawn in "
                     f"this batch, so no rule sees its reward; its probability moves only "
                     f"because the others' do.")
    if "clip_higher" in methods:
        ph, pp = rare_end["clip_higher"], rare_end["ppo"]
        apart = fmt.sig_apart(ph, pp)        # to 2, 4 or 6 figures, as far as they differ
        verdict = (f"Here clip-higher and PPO leave {ACTION} at the same probability "
                   f"({fmt.sig(pp, 2)})" if apart is None else
                   f"Here clip-higher has given {ACTION} {'more' if ph > pp else 'less'} than "
                   f"PPO ({apart[0]} against {apart[1]})")
        parts.append(verdict + f". That is not a rule: over seeds 0–99 at the default settings "
                               f"clip-higher gives it more for {CH_WINS_DEFAULT} of the 100 "
                               f"batches.")
    if "cispo" in methods:
        clipped = [m for m in ("ppo", "clip_higher") if m in methods]
        k_max = max(kl_end[m] for m in clipped)
        k_clip, widest = fmt.sig(k_max, 2), [m for m in clipped if kl_text[m] == fmt.sig(k_max, 2)]
        if kl_end["cispo"] > k_max and kl_text["cispo"] != k_clip:
            s = (f"CISPO zeroes no gradient, so like the plain surrogate it keeps moving: KL "
                 f"{kl_text['cispo']}, against {kl_text['plain']} for the plain surrogate; its "
                 f"bounded weight is no trust region.")
        elif kl_text["cispo"] == k_clip:
            s = f"Here CISPO has moved as far as {figs.say(widest)} (KL {kl_text['cispo']})."
        else:
            s = (f"Here CISPO has moved less far than {figs.say(widest)} (KL {kl_text['cispo']}, "
                 f"against {k_clip}).")
        p_cispo = fmt.sig(rare_end["cispo"], 2)
        if rare_end["cispo"] < RARE0 and p_cispo != START:
            s += f" It has left {ACTION} below where it started ({p_cispo} against {START})."
        else:
            s += f" It takes {ACTION} to {p_cispo}."
        parts.append(s)
    best = figs.tied(rare_end, max)
    top = fmt.sig(rare_end[best[0]], 2)
    if rare_end[best[0]] > RARE0 and top != START:
        parts.append(f"Most probability for {ACTION}: {figs.say(best)} ({top}, from {START}).")
    else:
        parts.append(f"No rule has raised {ACTION} clearly above its starting {START}.")
    lucky = pc.luckiest_action(batch, REWARDS) if bernoulli else None
    if bernoulli and lucky is None:
        parts.append("With 0/1 rewards no action paid more in this batch than its success "
                     "rate.")
    elif bernoulli:
        p_old = float(figs.P_OLD[lucky])
        p_plain, p_ppo = (float(traces[m].policy[-1, lucky]) for m in ("plain", "ppo"))
        old, plain, ppo = (fmt.sig(p, 2) for p in (p_old, p_plain, p_ppo))
        s = (f"With 0/1 rewards the batch's averages are not the actions' success rates: "
             f"action {lucky + 1} paid {fmt.fixed(pc.mean_reward_by_action(batch)[lucky], 2)} "
             f"on average in its {fmt.count(batch.counts[lucky], 'draw')}, against a true rate "
             f"of {fmt.short(REWARDS[lucky])}. ")
        if p_plain > p_ppo and p_plain > p_old and plain != ppo:
            s += (f"The plain surrogate follows this batch, luck included, further than PPO: it "
                  f"takes that action from {old} to {plain}, PPO to {ppo}.")
        elif p_plain > p_ppo and plain != ppo:
            s += (f"Here neither rule raises it: the plain surrogate leaves it at {plain}, PPO "
                  f"at {ppo}, from {old}.")
        else:
            s += (f"Here the plain surrogate does not favour it more than PPO: it leaves it at "
                  f"{plain}, PPO at {ppo}, from {old}.")
        parts.append(s)
    return " ".join(parts)


page.explain(look_left() + "</p><p>" + look_right())


page.details(lambda: figs.details(runs, panels, eps, bernoulli))
