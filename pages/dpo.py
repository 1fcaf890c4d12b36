"""Section 12.6: direct preference optimization on the book's model, and where it goes wrong."""

from __future__ import annotations

import math

import numpy as np
import streamlit as st

from klrl_core import dpo
from klrl_app import controls, fmt, layout, plots, precompute
from klrl_app import dpo_figures as figs
from klrl_app.dpo_figures import HORIZONS, KAPPA_FLOOR, MAX_STEPS
from klrl_app.tilt_figures import choose_model, is_book, policy_scale, response_table

PAIR_STOPS = [10, 30, 100, 300, 1_000, 3_000, 10_000, 30_000, 100_000, "all"]
DEFAULT_PAIRS = 1_000
KAPPA_DEFAULT = 20.0
MAX_TYPED_PAIRS = dpo.MAX_PAIRS           # a link may ask for any count up to 10^7
LABEL_NAMES = {"bt": "BT", "deterministic": "Deterministic"}
# A view on the book's model where the run's true reward clearly rises and then falls while the
# proxy keeps rising (0.60 after 51 steps, 0.52 at 2,000; tests/test_app_dpo.py checks it).
FALL_VIEW = "dpo?pairs=all&kappa=100&steps=2000"

# The default view's stops on the book's model (seed 0, T <= 200), computed once per server
# process in the background, nearest first (~15 ms each, ~50 kB): every kappa stop at the
# default pairs (the browser draws them during a drag), and every pairs stop at kappa = 20
# with both labels. The fits (~3 ms each) too, so the instant readout (klrl_app/instant.py)
# finds a neighbouring κ's optimum ready as well as its run.
_STOPS = [k for k in controls.kappa_options() if k > 0]
_MORE = [(20.0, p, lab) for p in PAIR_STOPS for lab in LABEL_NAMES]
RUNS = precompute.sweep("dpo-runs", figs.book_run, _STOPS, 20.0, [(DEFAULT_PAIRS, "bt")],
                        _more=_MORE)
FITS = precompute.sweep("dpo-fits", figs.book_fit, _STOPS, 20.0, [(DEFAULT_PAIRS, "bt")],
                        _more=_MORE)

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
    return is_book(b) and seed == 0 and FITS.planned(kappa, pairs, labels)


fit = (FITS.at(kappa, pairs, labels) if in_tables(kappa)
       else figs.fit(mkey, pairs, labels, seed, beta, lq, r_s))
if in_tables(kappa) and steps <= HORIZONS[0]:
    run = RUNS.at(kappa, pairs, labels)
else:
    run = figs.run(mkey, pairs, labels, seed, beta, figs.horizon(steps), lq, r_s, rt_s)
n = b.r.size

# What depends on the pairs and labels only, not on κ.
off, compared, unseen, touch_all, undefeated = figs.pairs_of(fit.W, sup)
n_unseen = int(unseen.sum())
n_off = float(off.sum())
# The policy panel's y axis, one for every κ (nothing rescales in a drag): the run, IPO and the
# DPO optimum can put a response near 1 at some κ, so the axis runs to 1.08; it is broken
# above what π₀ and π* at the default κ need, so their bars fill the panel (issue 31 item 6's
# scale, tilt_figures.policy_scale).
scene = figs.Scene(b, axis, steps, sup, unseen, policy_scale(b, KAPPA_DEFAULT, whole=(1.0,)))


def readout(nb: figs.Numbers) -> list:
    n_vanish = int(nb.vanish.sum())
    unseen_text = ("none" if n_unseen == 0 else
                   f"{n_unseen} (π* mass {fmt.fixed(float(nb.star.pi[unseen].sum()), 3)})")
    return [
        ("TV(DPO optimum, π*)", fmt.fixed(nb.tv_opt, 3) if nb.exists
         else f"no optimum: {n_vanish} → 0"),
        ("TV(run, π*)", f"{fmt.fixed(nb.tv_run, 3)} at T = {steps:,}"),
        ("never compared", unseen_text),
        ("TV(IPO, π*)", fmt.fixed(nb.tv_ipo, 3)),
        ("mean pair weight", "none" if nb.mean_w is None else fmt.fixed(nb.mean_w, 2)),
        ("run: KL", f"{fmt.fixed(nb.run_kl, d)} nats"),
        ("run: E[r] / E[r*]", f"{fmt.fixed(nb.run_proxy, d)} / {fmt.fixed(nb.run_true, d)}"),
        ("π*: E[r] / E[r*]",
         f"{fmt.fixed(float(nb.star.expected), d)} / {fmt.fixed(nb.star_true, d)}"),
    ]


def view_at(k: float) -> layout.View | None:
    """The readout and both figures at κ = k. Another stop than the run's comes from the
    background tables without computing: None unless its fit and run are there (the book's
    model, seed 0, T ≤ 200, the default pairs and labels); the browser says "computing…"."""
    if k == kappa:
        at_fit, at_run = fit, run
    elif in_tables(k) and steps <= HORIZONS[0]:
        at_fit, at_run = FITS.ready(k, pairs, labels), RUNS.ready(k, pairs, labels)
        if at_fit is None or at_run is None:
            return None
    else:
        return None
    nb = figs.numbers(scene, k, at_fit, at_run, off)
    policy = figs.policy_chart(scene, k, nb)
    return layout.View(readout(nb), {
        "dpo-policy": policy, "dpo-weights": figs.weights_chart(scene, k, nb, policy[0]),
        "dpo-frontier": figs.frontier_chart(scene, k, nb, at_run)})


nb = figs.numbers(scene, kappa, fit, run, off)
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
pairs_words = "every pair" if pairs == "all" else fmt.count(pairs, "pair")
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
    what = (f"No optimum: among {pairs_words}, {fmt.count(n_vanish, 'response')} "
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
                 f"{fmt.count(touch_all[rarest], 'comparison')}), "
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
        share = (f"gives the {fmt.count(surv.sum(), 'survivor')} "
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
                           f"after {fmt.count(peak, 'step')} "
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
                       f"after {fmt.count(peak, 'step')}")
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
    c, dev = figs.implied_chart(scene, beta, star, fit, run)
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
    df, path, comparisons = figs.tables(scene, nb, run, off, compared)
    layout.table(df)
    stem = (f"dpo_kappa_{controls.fmt_number(kappa)}_pairs_{pairs}_{labels}_seed_{seed}"
            f"_steps_{steps}")
    layout.csv_download(df, f"{stem}.csv", key="dpo-csv")
    layout.csv_download(path, f"{stem}_path.csv", label="Download the run's path (CSV)",
                        key="dpo-path-csv")
    layout.csv_download(comparisons, f"{stem}_pairs.csv",
                        label="Download the comparisons and their weights (CSV)",
                        key="dpo-pairs-csv")


page.details(numbers)
