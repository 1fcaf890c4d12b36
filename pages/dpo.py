"""Section 12.6: direct preference optimization on the book's model, and where it goes wrong."""

from __future__ import annotations

import numpy as np
import streamlit as st

from klrl_core import dpo, overoptimization
from klrl_app import controls, fmt, layout, plots
from klrl_app import dpo_figures as figs
from klrl_app.dpo_figures import DEFAULT_PAIRS, MAX_STEPS, PAIR_STOPS
from klrl_app.fmt import agree
from klrl_app.tilt_figures import choose_model, is_book, response_table

KAPPA_DEFAULT = 20.0
# A view on the book's model where the run's true reward clearly rises and then falls while the
# proxy keeps rising (0.60 after 51 steps, 0.52 at 2,000; tests/test_app_dpo.py checks it).
FALL_VIEW = "dpo?pairs=all&kappa=100&steps=2000"

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
        "pairs", "Pairs drawn from π₀", PAIR_STOPS, DEFAULT_PAIRS, dpo.MAX_PAIRS, "pairs",
        word_means="the infinite-data limit",
        help="How many pairs (y, y′), both drawn from π₀ and labelled, DPO is fitted to. "
             "'all' is the exact limit of infinitely many.")
with c_labels:
    labels = ui.choice(
        "labels", "Labels", {"bt": "BT", "deterministic": "Deterministic"}, default="bt",
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
fit, run = figs.fit_and_run(b, kappa, pairs, labels, seed, steps)
scene = figs.scene(b, axis, steps, fit.W, KAPPA_DEFAULT)
data, n_unseen = scene.data, scene.n_unseen


def readout(nb: figs.Numbers) -> list:
    return [
        ("TV(DPO optimum, π*)", fmt.fixed(nb.tv_opt, 3) if nb.exists
         else f"no optimum: {int(nb.vanish.sum())} → 0"),
        ("TV(run, π*)", f"{fmt.fixed(nb.tv_run, 3)} at T = {steps:,}"),
        ("never compared", "none" if n_unseen == 0 else
         f"{n_unseen} (π* mass {fmt.fixed(nb.star.pi[data.unseen].sum(), 3)})"),
        ("TV(IPO, π*)", fmt.fixed(nb.tv_ipo, 3)),
        ("mean pair weight", "none" if nb.mean_w is None else fmt.fixed(nb.mean_w, 2)),
        ("run: KL", f"{fmt.fixed(nb.run_kl, d)} nats"),
        ("run: E[r] / E[r*]", f"{fmt.fixed(nb.run_proxy, d)} / {fmt.fixed(nb.run_true, d)}"),
        ("π*: E[r] / E[r*]", f"{fmt.fixed(nb.star.expected, d)} / {fmt.fixed(nb.star_true, d)}"),
    ]


def view_at(k: float) -> layout.View | None:
    """The readout and the three figures at κ = k; another stop only from the background tables."""
    got = (fit, run) if k == kappa else figs.fit_and_run(b, k, pairs, labels, seed, steps, True)
    if got is None:
        return None
    nb = figs.numbers(scene, k, *got)
    return layout.View(readout(nb), figs.charts(scene, k, nb, got[1]))


nb = figs.numbers(scene, kappa, fit, run)
n_vanish = int(nb.vanish.sum())

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
                                  setting=(figs.model_key(b), pairs, labels, seed, steps)), helps)
left, right = page.figures()
with left:
    page.chart(view, "dpo-policy")
    page.chart(view, "dpo-weights")
with right:
    page.chart(view, "dpo-frontier")

if b.small:
    response_table(page, b, figs.policies(nb))

# ----- what to look for (every sentence branches on the numbers it describes)
pairs_words = "every pair" if pairs == "all" else fmt.count(pairs, "pair")
they = agree(n_vanish, "it", "they")
if kappa == 0:
    what = ("At κ = 0 (β = ∞) the KL term allows no move at all: π* is π₀, and so are the run and "
            "IPO, because the implied reward β·log(π/π₀) they fit stays finite, so every log "
            "ratio is 0. The implied reward itself, and with it the pair weights, are read in the "
            "limit β → ∞, where the run still fits it to the labels.")
    if not nb.exists:
        what += (f" The loss still has no minimiser: at every finite β it drives the same "
                 f"{fmt.count(n_vanish, 'response')} to 0.")
elif nb.exists and pairs == "all" and labels == "bt":
    what = ("With every pair counted and Bradley–Terry labels the DPO optimum is π* itself "
            "(Table 12.2, last row): the implied reward it fits is r, up to a constant.")
elif nb.exists and labels == "bt":
    what = (f"From {pairs_words} the loss has a minimiser (no response loses to one it never beats "
            f"back, even along a chain), but its implied reward is an estimate of r from finitely "
            f"many noisy labels" + (", so the optimum misses π*." if nb.tv_opt >= 0.0005 else "; "
                                    "at this β the estimate is good enough to land on π* to three "
                                    "decimals."))
elif nb.exists:
    what = ("These pairs never compare two different rewards, so no label is decisive and "
            "nothing is driven to 0.")
elif labels == "deterministic":
    what = (f"Deterministic labels: the higher reward wins every comparison between different "
            f"rewards, so each loser would need an infinitely large gap in implied reward. The "
            f"loss has no minimiser; it keeps falling as the {fmt.count(n_vanish, 'response')} "
            f"beaten by one {they} never {agree(n_vanish, 'beats back goes', 'beat back go')} "
            f"to probability 0, whatever β is (Azar et al., 2024): the KL regularisation cannot "
            f"hold {agree(n_vanish, 'it', 'them')}.")
    survivors = np.flatnonzero(scene.sup & ~nb.vanish)
    if survivors.size == 1:
        last = survivors[0]
        what += f" Only one response survives ({b.labels[last]}, r = {fmt.fixed(b.r[last], 2)})."
else:
    n_beat = int((data.off[:, np.isneginf(fit.opt.log_pi)].sum(axis=1) > 0).sum())  # beat one
    what = (f"No optimum: among {pairs_words}, {fmt.count(n_vanish, 'response')} "
            f"{agree(n_vanish, 'loses', 'lose')} to {agree(n_beat, 'a response', 'responses')} "
            f"{they} never {agree(n_vanish, 'beats', 'beat')} back (even along a chain), so the "
            f"loss keeps falling as {they} {agree(n_vanish, 'goes', 'go')} to probability 0, "
            f"whatever β is.")
    if data.undefeated.any():
        rarest = int(np.flatnonzero(data.undefeated)[np.argmin(b.pi0[data.undefeated])])
        m = int(data.undefeated.sum())
        what += (f" {fmt.count(m, 'response')} won every one of {agree(m, 'its', 'their')} "
                 f"comparisons ({agree(m, '', 'the rarest: ')}{b.labels[rarest]}, r = "
                 f"{fmt.fixed(b.r[rarest], 2)}, π₀ = {fmt.prob(b.pi0[rarest])}, "
                 f"{fmt.count(data.touch_all[rarest], 'comparison')}), so nothing bounds "
                 f"{agree(m, 'its', 'their')} implied reward from above and every response "
                 f"{agree(m, 'it', 'they')} beat goes to 0.")

if steps == 0:
    run_words = "At T = 0 the run is π₀: open Run to train it."
elif not nb.exists and kappa > 0:
    surv = scene.sup & ~nb.vanish
    lost, kept = float(b.pi0[nb.vanish].sum()), float(b.pi0[surv].sum())   # under π₀
    if lost <= 0.5:
        share = (f"gives {agree(n_vanish, 'the vanishing response', f'those {n_vanish} responses')}"
                 f" {fmt.prob(nb.run_pi[nb.vanish].sum())}"
                 f"{agree(n_vanish, '', ' in total')} (π₀: {fmt.prob(lost)})")
    else:
        share = (f"gives the {fmt.count(surv.sum(), 'survivor')} "
                 f"{fmt.prob(nb.run_pi[surv].sum())} (π₀: {fmt.prob(kept)})")
    behind = lost > 0.5 and float(nb.run_pi[surv].sum()) < kept
    run_words = (f"The run after {steps:,} steps {share}"
                 + (": so far less than under π₀, the run is nowhere near the limit. " if behind
                    else ". ") + "Each step lowers the loss, which reaches its infimum only in "
                 "the limit, so a run never arrives there.")
elif nb.exists:
    worst = int(np.argmax(np.abs(nb.run_pi - nb.opt_pi)))
    rare = b.pi0[worst] < np.median(b.pi0[scene.sup])
    if abs(nb.run_pi[worst] - nb.opt_pi[worst]) < 0.0005:
        run_words = f"After {steps:,} steps the run has reached the optimum."
    else:
        run_words = (f"After {steps:,} steps the run has not reached the optimum: the largest "
                     f"difference is at {b.labels[worst]} (r = {fmt.fixed(b.r[worst], 2)}), "
                     f"which π₀ writes with probability {fmt.prob(b.pi0[worst])}"
                     + (". A response's logit moves in proportion to its share of the pairs, so "
                        "rare responses are the slowest." if rare else "."))
else:
    run_words = ""

if n_unseen == 0:
    unseen_words = "Every response meets another in at least one pair."
else:
    raised = data.unseen & (nb.star.pi > b.pi0) & (kappa > 0)       # at kappa = 0, pi* is pi0
    logits = agree(n_unseen, "its logit", "their logits, so they keep π₀'s ratios among themselves")
    unseen_words = (f"{fmt.count(n_unseen, 'response')} never {agree(n_unseen, 'meets', 'meet')} "
                    f"another in a pair (grey rings): DPO cannot move {logits}. ")
    if raised.any():
        hi = int(np.flatnonzero(raised)[np.argmax(b.r[raised])])
        k_raised = int(raised.sum())
        unseen_words += (f"π* raises {agree(n_unseen, 'it', f'{k_raised} of them')} above π₀ "
                         f"({agree(k_raised, '', 'the highest: ')}r = {fmt.fixed(b.r[hi], 2)}"
                         f", which π₀ writes with probability {fmt.prob(b.pi0[hi])}): the "
                         f"responses the tilt wants most are the ones a sample from π₀ rarely "
                         f"contains.")
    else:
        unseen_words += f"π* does not raise {agree(n_unseen, 'it', 'any of them')} above π₀."

page.explain(" ".join(w for w in (what, run_words, unseen_words) if w))

# ----- below the first screen
if page.section("IPO, the pair weights and the true reward along the run"):
    ipo_ratio = fmt.fixed(np.min(fit.ipo.log_pi - b.log_pi0[scene.sup]), 2)
    layout.paragraph(
        f"**IPO** (Azar et al., 2024) asks each comparison for a finite gap of 1/(2β) in log "
        f"ratio instead of maximising a likelihood, so its optimum always exists and keeps every "
        f"response{'' if kappa == 0 else f': its smallest log ratio log(π/π₀) here is {ipo_ratio}'}"
        f". With every pair its target is π₀·exp(P(y beats π₀)/β), a tilt by the win rate, not "
        f"by r."
        + (" Beside DPO's collapse that is the point: the same deterministic labels leave "
           "IPO finite." if labels == "deterministic" and kappa > 0 else ""))
    if nb.mean_w is None:
        w_words = "No pair compares two different responses, so the loss has no gradient."
    elif steps == 0:
        w_words = ("At T = 0 every pair has weight ½: the implied reward is 0 everywhere, so "
                   "no pair is ordered yet. Move T under Run to watch them change.")
    else:
        limit = ("At κ = 0 the run never leaves π₀; read in the limit β → ∞, where its implied "
                 "reward stays finite, " if kappa == 0 else "")
        w_words = (f"{limit}{'a' if limit else 'A'}fter {steps:,} steps "
                   f"{fmt.pct(nb.faded_share, max_places=1)} of the pairs weigh less than ¼ (the "
                   f"implied reward orders them as labelled by a wide margin) and "
                   f"{fmt.pct(nb.wrong_share, max_places=1)} more than ½ (it orders them against "
                   f"their label). ")
        spread = float(np.ptp(b.r[scene.sup]))
        if labels == "bt" and nb.mean_w > 0.4:
            w_words += (f"With Bradley–Terry labels on rewards that span "
                        f"{fmt.sig(spread, 2, trim=True)}, the higher reward wins a comparison at "
                        f"most {fmt.pct(dpo.win_probability(spread))} of the time: the labels are "
                        f"close to coin flips"
                        + (", the fitted gaps stay small, and most weights stay near ½ however "
                           "long the run." if nb.exists else
                           f" and most weights stay near ½, except those of the pairs with the "
                           f"{fmt.count(n_vanish, 'response')} the loss drives to 0 (it has no "
                           f"minimiser): {agree(n_vanish, 'its', 'their')} implied reward falls "
                           f"without bound as the run goes on, so those gaps keep growing."))
        elif labels == "deterministic":
            w_words += ("Deterministic labels never contradict each other, so the gaps keep "
                        "growing and the weights keep falling toward 0.")
    layout.paragraph(f"**The pair weights** σ(r̂(y_l) − r̂(y_w)) (Section 12.6.1, step 4). "
                     f"{w_words}")
    fall_link = (f" For a run whose true reward rises and then falls while the proxy keeps "
                 f"rising, open [every pair at κ = 100, 2,000 steps]({FALL_VIEW})"
                 f"{'' if is_book(b) else ' on the book’s model'}.")
    if steps > 0 and kappa == 0:
        o_words = (f"At κ = 0 the run stays on π₀, and so does its true reward r*, "
                   f"{fmt.fixed(b.true_pi0, d)}.{fall_link}")
    elif steps == 0:
        o_words = f"At T = 0 the run is π₀: no step, no overoptimization yet.{fall_link}"
    else:
        # Overoptimization is the proxy rising while r* falls (Figure 12.5): only when the proxy
        # at T is above both its value at r*'s peak and pi0's (klrl_core.overoptimization).
        tn = overoptimization.turn(run.true[:steps + 1], run.proxy[:steps + 1])
        front_peak = float(b.peak.pi @ b.r_true)
        end, proxy0 = fmt.fixed(nb.run_true, d), float(run.proxy[0])
        if tn.peak < steps and tn.drop >= 0.005:
            o_words = (f"Along the run the true reward r* only fell, from "
                       f"{fmt.fixed(b.true_pi0, d)} under π₀ to {end}" if tn.peak == 0 else
                       f"Along the run the true reward r* peaked at {fmt.fixed(tn.best, d)} after "
                       f"{fmt.count(tn.peak, 'step')} ({fmt.fixed(run.kl[tn.peak], d)} "
                       f"nats) and has fallen to {end}")
            if tn.proxy_rose:
                o_words += (" while the proxy kept rising" if tn.peak > 0 else
                            f" while the proxy rose from {fmt.fixed(proxy0, d)} to "
                            f"{fmt.fixed(nb.run_proxy, d)}")
                o_words += ": direct methods overoptimize too (Rafailov et al., 2024b)."
            else:
                where = "under π₀" if proxy0 >= run.proxy[tn.peak] else "at r*'s peak"
                o_words += (f", and the proxy r did not rise either: it ends at "
                            f"{fmt.fixed(nb.run_proxy, d)}, against "
                            f"{fmt.fixed(max(proxy0, float(run.proxy[tn.peak])), d)} {where}. "
                            f"That is not overoptimization (the proxy rising as r* falls): "
                            f"the run fits its labels, not r.{fall_link}")
        elif tn.peak < steps:
            best_at = "π₀'s" if tn.peak == 0 else f"after {fmt.count(tn.peak, 'step')}"
            o_words = (f"Along the run the true reward r* has levelled off at {end}: its best, "
                       f"{best_at}, is less than 0.005 higher.{fall_link}")
        else:
            o_words = (f"Up to step {steps:,} the run's true reward r* is still rising: {end}, "
                       f"against {fmt.fixed(b.true_pi0, d)} under π₀.{fall_link}")
        o_words += (f" The comparisons were labelled by the proxy r; nothing in the DPO loss "
                    f"knows about r*. On π*'s own frontier r* peaks at {fmt.fixed(front_peak, d)} "
                    f"({fmt.fixed(b.peak.kl, max(d - 1, 1))} nats)"
                    + (f"; the run's best so far, {fmt.fixed(tn.best, d)}, is above it: the "
                       f"frontier is the best policy for r at each KL, not for r*."
                       if tn.best > front_peak + 0.005 else "."))
    layout.paragraph(f"**Overoptimization.** {o_words}")

if page.section("The implied reward"):
    c, dev = figs.implied_chart(scene, kappa, nb.star, fit, run)
    dev_words = ("they agree to within 10⁻¹²" if dev < 1e-12
                 else f"largest difference {fmt.standard_form(dev, 2)}")
    plots.show(c, key="dpo-implied", alt=figs.implied_alt(scene, dev_words, nb.exists))
    layout.paragraph(
        f"Solve the tilt for the reward: r(y) = β·log(π*(y)/π₀(y)) + β·log Z. Any policy implies "
        f"a reward this way, up to a constant per prompt; here each is centred on its π₀-weighted "
        f"mean. π*'s implied reward is r − E_π₀[r] ({dev_words}). The run's implied reward is "
        f"what DPO has fitted after {steps:,} steps"
        + ("." if nb.exists else "; responses the loss drives to 0 have an implied reward of −∞ "
                                 "in the limit, which the run approaches step by step.")
        + (f" The {n_unseen} responses never compared share one implied reward: the data say "
           f"nothing about them." if n_unseen > 1 else "")
        + (" At β = ∞ every policy here is π₀ and its implied reward is read in the limit, "
           "where β·log(π/π₀) stays finite." if kappa == 0 else ""))


page.details(lambda: figs.details(scene, nb, run, f"dpo_kappa_{controls.fmt_number(kappa)}_"
                                               f"pairs_{pairs}_{labels}_seed_{seed}_steps_{steps}"))
