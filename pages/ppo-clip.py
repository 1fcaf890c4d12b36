"""Equation (12.2): PPO's clipped surrogate against the ratio, clip-higher and CISPO beside it,
and what several epochs on one batch do with each (section 12.1.4; chapter 28, "Importance
ratios, clipping, and stale samples")."""

import numpy as np
import pandas as pd

from klrl_core import ppo_clip as pc
from klrl_app import controls, fmt, layout, lru
from klrl_app import ppo_clip_figures as figs
from klrl_app.ppo_clip_figures import NAMES, OMEGA_MAX

CH_LO, CH_HI = pc.METHOD_EPS["clip_higher"]          # DAPO's [1 - 0.2, 1 + 0.28]
# CISPO's weight bounds: DAPO's range, as clip-higher (so the two differ only in what is
# clipped), or MiniMax-M1's own choice, no lower bound and 1 + eps_high above (eps_high kept at
# clip-higher's 0.28 here). Link value -> (eps_low, eps_high).
CISPO_EPS = {"dapo": (CH_LO, CH_HI), "m1": (pc.EPS_LOW_OPEN, CH_HI)}
CISPO_CHOICES = {"dapo": f"[{fmt.fixed(1 - CH_LO, 2)}, {fmt.fixed(1 + CH_HI, 2)}]",
                 "m1": f"MiniMax-M1: at most {fmt.fixed(1 + CH_HI, 2)}"}
P_OLD, REWARDS = pc.DEFAULT_P_OLD, pc.DEFAULT_REWARDS
N_ACTIONS = P_OLD.size
RARE = pc.rare_action(P_OLD, REWARDS)                 # action 5: least probable, best reward
SAY = {**NAMES, "plain": "the plain surrogate"}       # a method's name inside a sentence
# Over seeds 0-99 at the default settings, clip-higher leaves the rare action more probable
# than PPO for this many (tests/test_app_ppo_clip.py recounts it).
CH_WINS_DEFAULT = 55
SIGNS = {"both": "both", "pos": "A > 0", "neg": "A < 0"}
SHOW = {"all": "both", "higher": "clip-higher", "cispo": "CISPO", "none": "none"}
SHOWN_METHODS = {"all": ("plain", "ppo", "clip_higher", "cispo"),
                 "higher": ("plain", "ppo", "clip_higher"),
                 "cispo": ("plain", "ppo", "cispo"), "none": ("plain", "ppo")}

page = layout.Page(
    "ppo-clip", "PPO's clipped surrogate",
    "Equation (12.2) · Section 12.1.4 · Chapter 28: importance ratios, clipping, and stale "
    "samples",
    "Several gradient steps on one batch make the samples stale: the policy that drew them is "
    "no longer the one being trained, and the ratio ω = π_θ(a)/π_old(a) measures how far "
    "each sample's probability has moved. PPO clips the ratio to [1 − ε, 1 + ε] inside a min, "
    "so once a sample has moved past the edge its advantage pushes toward, its gradient is "
    "zero. The figures: the objective of one sample with advantage A = ±1 and, below it, its "
    "gradient; then five actions, one batch drawn from "
    "π_old = (0.40, 0.25, 0.20, 0.10, 0.05) with rewards (0.2, 0.4, 0, 0.3, 1), advantages = "
    "reward minus the batch's mean reward, and several full-batch steps with each rule.",
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
methods = SHOWN_METHODS[show]
signs = {"both": (1.0, -1.0), "pos": (1.0,), "neg": (-1.0,)}[sign]
lo_edge, hi_edge = (float(v) for v in pc.clip_ratio([0.0, 1e9], eps))   # 1 - eps, 1 + eps


def eps_of(m: str, e: float | None = None) -> tuple[float | None, float | None]:
    """(eps_low, eps_high) of a method: the page's ε (or ``e``) for PPO, DAPO's range for
    clip-higher, the chosen bounds for CISPO, none for the plain surrogate."""
    e = eps if e is None else e
    return {"ppo": (e, e), "plain": (None, None), "cispo": CISPO_EPS[cispo]}.get(
        m, (CH_LO, CH_HI))


CISPO_OPEN = CISPO_EPS[cispo][0] == pc.EPS_LOW_OPEN    # no lower bound on CISPO's weight
CISPO_HI = fmt.fixed(1 + CISPO_EPS[cispo][1], 2)
CISPO_LO = fmt.fixed(1 - CISPO_EPS[cispo][0], 2)
# CISPO's weight bounds in words, for every sentence that names them
CISPO_RANGE = (f"at most {CISPO_HI} (no lower bound: MiniMax-M1's setting)" if CISPO_OPEN
               else f"[{CISPO_LO}, {CISPO_HI}]")


# ----- the epoch experiment ---------------------------------------------------------------
EPS_STOPS = [round(float(e), 6) for e in ui.sliders["eps"][2]]      # every stop of the ε slider


@lru.memo
def ppo_runs(lr: float, epochs: int, n_samples: int, seed: int, bernoulli: bool) -> dict:
    """PPO's epochs at every stop of ε (only PPO's run depends on ε; about 1 ms a stop at the
    defaults, 2 ms at 50 epochs): the charts' fixed axes are taken over all of them, and the
    browser's table of stops reads them (shared by every session of this setting)."""
    b = pc.draw_batch(P_OLD, REWARDS, n_samples, seed, bernoulli)
    return {e: pc.compare_methods(b, epochs, lr, REWARDS, ("ppo",), eps={"ppo": (e, e)})["ppo"]
            for e in EPS_STOPS}


def ppo_at(e: float):
    """PPO's run at clip range ε = e: a look-up at a stop, computed for a linked value between
    stops."""
    e = round(e, 6)
    runs = ppo_runs(lr, epochs, n_samples, seed, bernoulli)
    if e in runs:
        return runs[e]
    return pc.compare_methods(batch, epochs, lr, REWARDS, ("ppo",), eps={"ppo": (e, e)})["ppo"]


batch = pc.draw_batch(P_OLD, REWARDS, n_samples, seed, bernoulli)
others = pc.compare_methods(batch, epochs, lr, REWARDS, [m for m in methods if m != "ppo"],
                            eps={m: eps_of(m) for m in methods if m != "ppo"})
traces = {m: ppo_at(eps) if m == "ppo" else others[m] for m in methods}
kl_end = {m: float(traces[m].kl[-1]) for m in methods}
rare_end = {m: float(traces[m].p_rare[-1]) for m in methods}
rare0 = float(P_OLD[RARE])

# ----- readout ----------------------------------------------------------------------------
P5 = f"π{chr(0x2080 + RARE + 1)}"                       # π₅, the rare action's probability
ep_text = f"{epochs} epoch{'s' if epochs > 1 else ''}"


def readout_at(e: float) -> list[tuple[str, str]]:
    """The readout's items at clip range ε = e, every other control as set: only PPO's run
    depends on ε (a look-up in ``ppo_runs``), the other rules keep this run's traces."""
    e = round(e, 6)
    lo, hi = (float(v) for v in pc.clip_ratio([0.0, 1e9], e))
    ppo = ppo_at(e)
    out = []
    if 1.0 in signs:
        out.append(("A > 0 flat for", f"ω > {fmt.fixed(hi, 2)}"))
    if -1.0 in signs:
        out.append(("A < 0 flat for", f"ω < {fmt.fixed(lo, 2)}"))
    out.append(("after", ep_text))
    for m in methods:
        t = ppo if m == "ppo" else traces[m]
        out.append((NAMES[m], f"KL {fmt.sig(float(t.kl[-1]), 2)}, {P5} "
                              f"{fmt.sig(float(t.p_rare[-1]), 2)}"))
    return out


helps = []
if 1.0 in signs:
    helps.append("where PPO's objective for a positive-advantage sample stops growing: past "
                 "1 + ε its gradient is zero (the shaded region, upper half).")
if -1.0 in signs:
    helps.append("where PPO's objective for a negative-advantage sample stops falling: below "
                 "1 − ε its gradient is zero (the shaded region, lower half).")
helps.append(f"for each rule below, after the last epoch: KL(π_θ ‖ π_old) in nats, how far the "
             f"steps on one batch moved the policy from the one that drew it; and {P5}, the "
             f"probability of the rare, best-rewarded action {RARE + 1} (π_old gives it "
             f"{fmt.sig(rare0, 2)}, its reward is {fmt.short(REWARDS[RARE])}; drawn "
             f"{int(batch.counts[RARE])} "
             f"time{'s' if batch.counts[RARE] != 1 else ''} in this batch of {n_samples:,}).")
RULE_HELP = {
    "plain": "the plain importance-weighted surrogate, mean of ω·A over the batch: no clip.",
    "ppo": f"Equation (12.2) with the ratio clipped to [{fmt.fixed(lo_edge, 2)}, "
           f"{fmt.fixed(hi_edge, 2)}].",
    "clip_higher": f"Equation (12.2) with DAPO's asymmetric range [{fmt.fixed(1 - CH_LO, 2)}, "
                   f"{fmt.fixed(1 + CH_HI, 2)}].",
    "cispo": f"each sample's update is clip(ω)·A·∇log π with the weight clipped to "
             f"{CISPO_RANGE} and held fixed: never zero.",
}
helps += [RULE_HELP[m] for m in methods]


# ----- left: one sample's objective and gradient against omega ----------------------------
# ω every 0.01: every stop's edges 1 ± ε (and DAPO's) are points of it, so the curves bend
# exactly there and every stop shares the same x. A linked ε between stops adds its edges.
edges = [lo_edge, hi_edge, 1.0 - CH_LO, 1.0 + CH_HI]
omega = np.unique(np.round(np.concatenate([np.linspace(0.0, OMEGA_MAX, 251),
                                           [e for e in edges if 0 <= e <= OMEGA_MAX]]), 9))


def lower(w: np.ndarray, a: float, m: str, e: float | None = None) -> np.ndarray:
    """The lower panel's quantity for method m: d/d omega, or the weight on grad log pi."""
    lo, hi = eps_of(m, e)
    if grad == "score":
        return np.asarray(pc.score_weight(w, a, m, lo, hi), dtype=float)
    g = np.asarray(pc.ratio_gradient(w, a, m, lo, hi), dtype=float)
    return np.where(np.isfinite(g), g, np.nan)


def objective(w: np.ndarray, a: float, m: str, e: float | None = None) -> np.ndarray:
    if m == "plain":
        return w * a
    lo, hi = eps_of(m, e)
    return np.asarray(pc.clipped_surrogate(w, a, lo, hi), dtype=float)


def clip_numbers() -> pd.DataFrame:
    """Every curve of the left figure, one column each (CSV)."""
    cols = {"omega": omega}
    for a in signs:
        s = "A=+1" if a > 0 else "A=-1"
        for m in methods:
            if m != "cispo":
                cols[f"objective {NAMES[m]} {s}"] = objective(omega, a, m)
        for m in methods:
            what = "d/domega" if grad == "ratio" else "weight on grad log pi"
            cols[f"{what} {NAMES[m]} {s}"] = lower(omega, a, m)
    return pd.DataFrame(cols)


# The other rules' curves do not move with ε: computed once a run, not at every stop.
fixed = {(a, m): (objective(omega, a, m), lower(omega, a, m))
         for a in signs for m in methods if m != "ppo"}


def curves_at(a: float, m: str, e: float) -> tuple[np.ndarray, np.ndarray]:
    """(objective, lower panel) of rule m for advantage a, PPO's at clip range e."""
    if m != "ppo":
        return fixed[(a, m)]
    return objective(omega, a, m, e), lower(omega, a, m, e)


PANELS = figs.ClipPanels(
    methods, sign, grad, f"CISPO, weight {'≤ ' + CISPO_HI if CISPO_OPEN else CISPO_RANGE}",
    CISPO_RANGE, page.present)


# ----- right: KL and the rare action's probability against the epoch ----------------------
# One pair of y ranges for every stop of ε: the other rules' runs do not move with ε, PPO's
# is taken at every stop (ppo_runs), so nothing rescales while ε is dragged.
_all_runs = [others[m] for m in methods if m != "ppo"] + list(
    ppo_runs(lr, epochs, n_samples, seed, bernoulli).values())
kl_top = 1.06 * max(float(t.kl.max()) for t in _all_runs) or 1.0
rare_top = 1.06 * max(max(float(t.p_rare.max()) for t in _all_runs), rare0)


EPOCHS = figs.EpochRuns(epochs, n_samples, seed, lr, kl_top, rare_top, RARE, rare0, page.present)


def epoch_chart_at(e: float) -> tuple:
    """The right figure at clip range ε = e (PPO's run looked up, the others this run's)."""
    return figs.epoch_chart({m: ppo_at(e) if m == "ppo" else others[m] for m in methods},
                            methods, EPOCHS)


def view_at(e: float) -> layout.View:
    """The readout and both figures at clip range ε = e (the browser draws it at every stop)."""
    e = round(float(e), 6)
    return layout.View(readout_at(e), {**figs.clip_charts(e, PANELS, omega, curves_at),
                                       "ppo-clip-epochs": epoch_chart_at(e)})


view = page.follow(layout.Instant(
    "eps", view_at, setting=(sign, show, grad, lr, epochs, n_samples, seed, bernoulli)), helps)
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
            + f"the objective follows "
            f"ω·A down until ω falls to {e_lo} and is flat below it (shaded, gradient zero); "
            f"above {e_hi} it is not clipped, so a penalised action that has become more "
            f"probable is still pushed down.")
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
        clipped = (f"clip(ω)·A·∇log π with the weight clipped to {CISPO_RANGE} and held "
                   f"fixed, so no sample ever loses its gradient")
        if grad == "ratio" and CISPO_OPEN:
            parts.append(
                f"CISPO (pink) clips the importance weight, not the objective: its update is "
                f"{clipped}. Against ω that weight is clip(ω)·A/ω: A up to ω = {CISPO_HI}, "
                f"since below the cap the weight is ω itself, and falling like {CISPO_HI}·A/ω "
                f"above it, where the weight on ∇log π stays {CISPO_HI}·A while ∇ω = ω·∇log π "
                f"grows with ω. Switch the lower panel to the weight on ∇log π (More settings) "
                f"to see it bounded above.")
        elif grad == "ratio":
            parts.append(
                f"CISPO (pink) clips the importance weight, not the objective: its update is "
                f"{clipped}. Against ω that weight is clip(ω)·A/ω: A inside [{CISPO_LO}, "
                f"{CISPO_HI}], falling like {CISPO_HI}·A/ω above it and growing in size like "
                f"{CISPO_LO}·A/ω below it, because ∇ω = ω·∇log π shrinks with ω. Switch the "
                f"lower panel to the weight on ∇log π (More settings) to see it bounded.")
        elif CISPO_OPEN:
            parts.append(
                f"On ∇log π the plain surrogate's weight is ω·A, growing without bound; PPO's "
                f"is ω·A or 0; CISPO's (pink) is min(ω, {CISPO_HI})·A, with no lower bound "
                f"(MiniMax-M1's setting): the plain weight up to ω = {CISPO_HI} and capped "
                f"there, so bounded above, and never zero for a sampled action (ω > 0) unless "
                f"A is.")
        else:
            parts.append(
                f"On ∇log π the plain surrogate's weight is ω·A, growing without bound; PPO's "
                f"is ω·A or 0; CISPO's (pink) is clip(ω)·A, between {CISPO_LO}·A and "
                f"{CISPO_HI}·A: bounded, and never zero unless A is.")
    return " ".join(parts)


def look_right() -> str:
    parts = []
    flat = not np.any(batch.advantages != 0)
    if flat:
        return (f"Every sample in this batch has the same reward, so every advantage is zero "
                f"and no rule moves the policy: KL stays 0 and action {RARE + 1} stays at "
                f"{fmt.sig(rare0, 2)}. Draw another batch (Seed) or more samples.")
    if epochs == 1:
        m0 = methods[0]
        return (f"With one epoch every rule takes the same step: at the sampling policy every "
                f"ratio is 1, inside every range, so neither the clip nor the weight changes "
                f"anything. KL {fmt.sig(kl_end[m0], 2)} for all; action {RARE + 1} goes from "
                f"{fmt.sig(rare0, 2)} to {fmt.sig(rare_end[m0], 2)}. Add epochs to see the rules "
                f"part.")
    same = all(np.max(np.abs(traces[m].policy - traces[methods[0]].policy)) < 1e-12
               for m in methods)
    if same:
        return (f"In {ep_text} no sample's clip has changed its update yet, so every rule has "
                f"taken the same steps: KL {fmt.sig(kl_end['plain'], 2)} for all, action "
                f"{RARE + 1} "
                f"from {fmt.sig(rare0, 2)} to {fmt.sig(rare_end['plain'], 2)}. The first epoch is "
                f"always "
                f"the same (every ω = 1, inside every range); more epochs or a larger step "
                f"size let the ratios reach the edges and the rules part.")
    parts.append("The first epoch is the same step for every rule (every ω = 1, inside every "
                 "range); after it the samples are stale and the rules part.")

    def names(ms: list[str]) -> str:
        said = [SAY[m] for m in ms]
        return said[0] if len(said) == 1 else ", ".join(said[:-1]) + " and " + said[-1]

    def tied(values: dict, pick) -> list[str]:
        """The methods whose value reads the same as the largest (or smallest) one."""
        target = fmt.sig(pick(values.values()), 2)
        return [m for m in methods if fmt.sig(values[m], 2) == target]

    far, near = tied(kl_end, max), tied(kl_end, min)
    parts.append(f"After {ep_text} {names(far)} "
                 f"{'has' if len(far) == 1 else 'have'} moved furthest from the sampling "
                 f"policy (KL {fmt.sig(kl_end[far[0]], 2)}) and {names(near)} "
                 f"least ({fmt.sig(kl_end[near[0]], 2)}).")
    kp, kpl = kl_end["ppo"], kl_end["plain"]
    share = float(traces["ppo"].clipped_share[-1])
    if share == 1:
        stop = ("by the last epoch every sample's ratio has left the range, so every gradient "
                "is zero and PPO has stopped moving")
    elif share > 0:
        stop = (f"by the last epoch the gradient is zero for {fmt.pct(share)} of the "
                f"batch")
    else:
        stop = "at the last epoch no sample's ratio is past its edge"
    if fmt.sig(kp, 2) == fmt.sig(kpl, 2):
        parts.append(f"Here PPO has moved as far as the plain surrogate (KL {fmt.sig(kp, 2)}); "
                     f"{stop}.")
    elif kp < kpl:
        held = fmt.sig(100 * kp / kpl, 2)
        held = "just under 100" if held == "100" else held
        parts.append(f"PPO's clip holds it to {held}% of the plain surrogate's KL: {stop}.")
    else:
        parts.append(f"Here PPO has moved further than the plain surrogate (KL {fmt.sig(kp, 2)} "
                     f"against {fmt.sig(kpl, 2)}); {stop}.")
    if batch.counts[RARE] == 0:
        parts.append(f"Action {RARE + 1}, the rare one with the best reward, was not drawn in "
                     f"this batch, so no rule sees its reward; its probability moves only "
                     f"because the others' do.")
    if "clip_higher" in methods:
        ph, pp = rare_end["clip_higher"], rare_end["ppo"]
        d = 2 if fmt.sig(ph, 2) != fmt.sig(pp, 2) else 4 if fmt.sig(ph, 4) != fmt.sig(pp, 4) else 6
        if fmt.sig(ph, 6) == fmt.sig(pp, 6):
            verdict = (f"Here clip-higher and PPO leave action {RARE + 1} at the same "
                       f"probability ({fmt.sig(pp, 2)})")
        elif ph > pp:
            verdict = (f"Here clip-higher has given action {RARE + 1} more than PPO "
                       f"({fmt.sig(ph, d)} against {fmt.sig(pp, d)})")
        elif ph < pp:
            verdict = (f"Here clip-higher has given action {RARE + 1} less than PPO "
                       f"({fmt.sig(ph, d)} against {fmt.sig(pp, d)})")
        parts.append(verdict + f". That is not a rule: over seeds 0–99 at the default "
                               f"settings clip-higher gives it more for {CH_WINS_DEFAULT} of "
                               f"the 100 batches.")
    if "cispo" in methods:
        kc = kl_end["cispo"]
        clipped = [m for m in ("ppo", "clip_higher") if m in methods]
        k_clip = max(kl_end[m] for m in clipped)
        if kc > k_clip and fmt.sig(kc, 2) != fmt.sig(k_clip, 2):
            s = (f"CISPO zeroes no gradient, so like the plain surrogate it keeps moving: KL "
                 f"{fmt.sig(kc, 2)}, against {fmt.sig(kpl, 2)} for the plain surrogate; its "
                 f"bounded weight "
                 f"is no trust region.")
        else:
            widest = [m for m in clipped if fmt.sig(kl_end[m], 2) == fmt.sig(k_clip, 2)]
            if fmt.sig(kc, 2) == fmt.sig(k_clip, 2):
                s = f"Here CISPO has moved as far as {names(widest)} (KL {fmt.sig(kc, 2)})."
            else:
                s = (f"Here CISPO has moved less far than {names(widest)} (KL {fmt.sig(kc, 2)}, "
                     f"against {fmt.sig(k_clip, 2)}).")
        pc_ = rare_end["cispo"]
        if pc_ < rare0 and fmt.sig(pc_, 2) != fmt.sig(rare0, 2):
            s += (f" It has left action {RARE + 1} below where it started ({fmt.sig(pc_, 2)} "
                  f"against "
                  f"{fmt.sig(rare0, 2)}).")
        else:
            s += f" It takes action {RARE + 1} to {fmt.sig(pc_, 2)}."
        parts.append(s)
    best = tied(rare_end, max)
    if rare_end[best[0]] > rare0 and fmt.sig(rare_end[best[0]], 2) != fmt.sig(rare0, 2):
        parts.append(f"Most probability for action {RARE + 1}: "
                     f"{names(best)} ({fmt.sig(rare_end[best[0]], 2)}, from "
                     f"{fmt.sig(rare0, 2)}).")
    else:
        parts.append(f"No rule has raised action {RARE + 1} clearly above its starting "
                     f"{fmt.sig(rare0, 2)}.")
    if bernoulli:
        drawn = batch.counts > 0
        means = np.bincount(batch.actions, weights=batch.rewards,
                            minlength=N_ACTIONS) / np.maximum(batch.counts, 1)
        excess = np.where(drawn, means - REWARDS, -np.inf)
        k = int(np.argmax(excess))
        if excess[k] > 0:
            pk0 = float(P_OLD[k])
            pl, pp = (float(traces[m].policy[-1, k]) for m in ("plain", "ppo"))
            s = (f"With 0/1 rewards the batch's averages are not the actions' success rates: "
                 f"action {k + 1} paid {fmt.fixed(means[k], 2)} on average in its "
                 f"{int(batch.counts[k])} draw{'s' if batch.counts[k] > 1 else ''}, against a "
                 f"true rate of {fmt.short(REWARDS[k])}. ")
            if pl > pp and pl > pk0 and fmt.sig(pl, 2) != fmt.sig(pp, 2):
                s += (f"The plain surrogate follows this batch, luck included, further than "
                      f"PPO: it takes that action from {fmt.sig(pk0, 2)} to {fmt.sig(pl, 2)}, PPO "
                      f"to "
                      f"{fmt.sig(pp, 2)}.")
            elif pl > pp and fmt.sig(pl, 2) != fmt.sig(pp, 2):
                s += (f"Here neither rule raises it: the plain surrogate leaves it at "
                      f"{fmt.sig(pl, 2)}, PPO at {fmt.sig(pp, 2)}, from {fmt.sig(pk0, 2)}.")
            else:
                s += (f"Here the plain surrogate does not favour it more than PPO: it leaves "
                      f"it at {fmt.sig(pl, 2)}, PPO at {fmt.sig(pp, 2)}, from {fmt.sig(pk0, 2)}.")
            parts.append(s)
        else:
            parts.append("With 0/1 rewards no action paid more in this batch than its success "
                         "rate.")
    return " ".join(parts)


page.explain(look_left() + "</p><p>" + look_right())


# ----- the numbers behind the figures -------------------------------------------------------
def batch_table() -> pd.DataFrame:
    means = np.bincount(batch.actions, weights=batch.rewards,
                        minlength=N_ACTIONS) / np.maximum(batch.counts, 1)
    adv = means - float(batch.rewards.mean())
    return pd.DataFrame({
        "action": np.arange(1, N_ACTIONS + 1), "pi_old": P_OLD, "reward": REWARDS,
        "draws": batch.counts, "mean reward drawn": np.where(batch.counts > 0, means, np.nan),
        "advantage": np.where(batch.counts > 0, adv, np.nan),
        **{f"pi after {NAMES[m]}": traces[m].policy[-1] for m in methods}})


def epoch_numbers() -> pd.DataFrame:
    frames = []
    for m in methods:
        t = traces[m]
        lo, hi = (np.nan, np.nan) if m == "plain" else (t.eps_low, t.eps_high)  # no range
        df = pd.DataFrame({"method": NAMES[m], "eps_low": lo, "eps_high": hi,
                           "epoch": np.arange(epochs + 1), "KL(pi || pi_old)": t.kl,
                           f"pi(action {RARE + 1})": t.p_rare,
                           "clipped share of the batch": t.clipped_share,
                           "batch surrogate": t.objective,
                           "expected reward": t.expected_reward})
        for j in range(N_ACTIONS):
            df[f"pi(action {j + 1})"] = t.policy[:, j]
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


def numbers() -> None:
    table = batch_table()
    layout.small_table(table, {"pi_old": 2, "reward": lambda v: fmt.fixed(v, 2, trim=True), "draws": 0,
                               "mean reward drawn": lambda v: fmt.fixed(v, 3),
                               "advantage": lambda v: fmt.fixed(v, 3),
                               **{c: 4 for c in table.columns[6:]}})
    stem = (f"ppo_clip_eps_{controls.fmt_number(eps)}_lr_{controls.fmt_number(lr)}"
            f"_epochs_{epochs}_n_{n_samples}_seed_{seed}{'_bernoulli' if bernoulli else ''}")
    layout.csv_download(epoch_numbers, f"{stem}_epochs.csv",
                        label="Download the epochs (CSV)", key="ppo-clip-epochs-csv")
    layout.csv_download(table, f"{stem}_batch.csv", label="Download the batch (CSV)",
                        key="ppo-clip-batch-csv")
    layout.csv_download(clip_numbers, f"ppo_clip_eps_{controls.fmt_number(eps)}_{grad}.csv",
                        label="Download the surrogate curves (CSV)", key="ppo-clip-curves-csv")


page.details(numbers)
