"""Figure 12.5: the optimum for a proxy reward, scored by a true reward that disagrees at the
top."""

import numpy as np

from klrl_core import overoptimization, tilt
from klrl_app import fmt, layout, plots
from klrl_app import overoptimization_figures as figs
from klrl_app.tilt_figures import choose_model, gao_curves, is_book, policy_scale, response_table

KAPPA_DEFAULT = 20.0

page = layout.Page(
    "overoptimization", "Overoptimizing a proxy", "Figure 12.5 · Section 12.8.1",
    "Read the reward as a proxy: it matches the true reward where π₀ writes most of its "
    "responses and overrates the rare ones at the top (above r = 0.5 the true reward bends "
    "down). The optimum follows the proxy.",
)
ui = page.ui
c_kappa, c_model = page.control_row([3, 1])
with c_kappa:
    kappa = ui.kappa(default=KAPPA_DEFAULT)
with c_model:
    b, axis = choose_model(ui, with_true=True)
page.finish_controls()
d = 2 if is_book(b) else 3                    # the chapter's precision on its own model
if not is_book(b):
    page.lead = (f"{b.name}: a proxy reward r and a true reward r* "
                 + ("as you gave them" if b.true_given else
                    "made by the chapter's bend, r − 2.4·max(r − 0.5, 0)²")
                 + " for each response (the table below). The optimum follows the proxy.")
peak_true, peak_kl = figs.peak(b)


def numbers_at(kappa: float):
    """π* at κ, its KL, proxy and true rewards, and the readout's items."""
    t = tilt.tilt(b.log_pi0, b.r, kappa)
    kl, proxy, true = float(t.kl), float(t.expected), float(tilt.expected_under(t.pi, b.r_true))
    items = [
        ("KL(π* ‖ π₀)", f"{fmt.fixed(kl, d)} nats"),
        ("proxy E[r]", fmt.fixed(proxy, d)),
        ("true E[r*]", fmt.fixed(true, d)),
        ("true reward's peak",
         f"{fmt.fixed(peak_true, d)} at {fmt.fixed(peak_kl, d - 1)} nats"),
    ]
    return t, kl, proxy, true, items


# One y axis for the bars at every κ (nothing rescales in a drag), readable at every κ:
# broken when the largest bar at any κ is far above what the default κ needs.
scale = policy_scale(b, KAPPA_DEFAULT)


def view_at(kappa: float) -> layout.View:
    """The readout and both charts at κ (the browser draws this at every stop of κ)."""
    t, kl, proxy, true, items = numbers_at(kappa)
    return layout.View(items, {
        "over-policy": figs.policy_chart(b, t.pi, kappa, scale),
        "over-frontier": figs.frontier_chart(b, kappa, kl, proxy, true, axis, d)})


view = page.follow(layout.Instant("kappa", view_at, setting=(b.key, axis, scale)), helps=[
    "divergence of the optimum from the reference.",
    "expected proxy reward, the quantity the optimum maximizes (minus β·KL).",
    "expected true reward of the same policy.",
    f"the best true reward anywhere on the frontier, reached at κ = {fmt.fixed(b.peak_kappa, 1)}."
    + ("" if b.true_given else " With no true reward given, r* is the chapter's bend "
       "r − 2.4·max(r − 0.5, 0)²."),
])
t, kl, proxy, true, items = numbers_at(kappa)

left, right = page.figures()
with left:
    page.chart(view, "over-policy")
with right:
    page.chart(view, "over-frontier")

if b.small:
    response_table(page, b, {"π* (optimum)": t.pi})

# Does the true reward ever turn down along the frontier, or fall from the start? (Read off
# the exact curve: a peak where the curve merely saturates is no turn.)
falls_after_peak = peak_true - float(b.frontier_true[-1]) > 1e-3
peak_at_end = not falls_after_peak
peak_at_start = falls_after_peak and peak_true - b.true_pi0 < 1e-3
f = lambda x, k=d: fmt.fixed(x, k)          # noqa: E731 (the readout's precision)
if peak_at_end:
    where = (f"On this model the true reward never turns down along the frontier: at "
             f"{f(kl)} nats it reads {f(true)}, and more KL never lowers it.")
    curve = "Here the proxy's errors never outweigh what it gets right."
elif peak_at_start:
    where = (f"On this model the true reward falls from the first step: at {f(kl)} nats it "
             f"reads {f(true)}, against {f(b.true_pi0)} under π₀.")
    curve = "Every step toward the proxy costs true reward here."
else:
    if kl < peak_kl - 0.05:
        where = (f"At {f(kl)} nats the optimum is still before the peak: more proxy reward "
                 f"still buys more true reward, up to {f(peak_true)} at {f(peak_kl, d - 1)} "
                 f"nats.")
    elif kl <= peak_kl + 0.05:
        where = (f"At {f(kl)} nats the optimum sits at the true reward's peak: the best "
                 f"stopping point along the frontier.")
    else:
        where = (f"At {f(kl)} nats the optimum is past the peak: the proxy says {f(proxy)}, "
                 f"the true reward has fallen from {f(peak_true)} to {f(true)}. The extra KL "
                 f"goes to responses the proxy overrates.")
    curve = "The dashed true reward rises, peaks and falls."
page.explain(
    f"{where} Along the frontier the proxy curve never falls. {curve} Nothing in Equation "
    "(12.4) knows about r*: the KL penalty limits how far the policy moves, not which way the "
    "proxy's errors point."
)


def peaks_text(g) -> str:
    """Which method's true-reward gain peaks higher in the chart above, and why, from the two
    policies at the tilt's peak KL (the tilt wins on the proxy at every KL)."""
    i_b, i_t = int(np.argmax(g.bon.gain)), int(np.argmax(g.rl.gain))
    gb, gt = float(g.bon.gain[i_b]), float(g.rl.gain[i_t])
    peaks = (f"best-of-n's at {fmt.fixed(gb, 3)} (d = {fmt.fixed(g.bon.d[i_b], 2)}) and the "
             f"tilt's at {fmt.fixed(gt, 3)} (d = {fmt.fixed(g.rl.d[i_t], 2)})")
    if max(gb, gt) < 5e-4:
        return (f"On this model the true reward only falls as either method moves away from "
                f"π₀ (the largest gains drawn, {fmt.fixed(gb, 3)} for best-of-n and "
                f"{fmt.fixed(gt, 3)} for the tilt, are at the smallest d): there is no peak "
                f"to compare.")
    if fmt.fixed(gb, 3) == fmt.fixed(gt, 3):
        return f"The two gains peak at the same height: {peaks}."
    # both policies at the tilt's peak KL: π* there, and the n whose KL is closest to it
    n_pk, tl, bn = overoptimization.at_matched_kl(b.log_pi0, b.r, b.r_true, float(g.rl.kl[i_t]),
                                                  b.kappas, b.frontier.kl)
    at = (f"At about the tilt's peak KL, the tilt (at {fmt.fixed(tl.kl, 2)} nats) and "
          f"best-of-{n_pk:,} (at {fmt.fixed(bn.kl, 2)} nats) earn proxy rewards of "
          f"{fmt.fixed(tl.proxy, 3)} and {fmt.fixed(bn.proxy, 3)}")
    if gb > gt and bn.true > tl.true and bn.spread < tl.spread:
        top = ("the very top, which the proxy overrates most"
               if overoptimization.overrating_grows(b.r, b.r_true) else
               "the extremes of the proxy reward")
        return (f"Best-of-n's gain peaks higher than the tilt's, though the tilt earns the most "
                f"proxy reward at any KL: {peaks}. {at}, but the tilt spreads its probability "
                f"wider (the proxy reward's standard deviation {fmt.fixed(tl.spread, 3)} against "
                f"{fmt.fixed(bn.spread, 3)}). Best-of-n piles its draws into a narrower band, "
                f"while the tilt's exp(κr) keeps weight on {top}: true reward "
                f"{fmt.fixed(bn.true, 3)} for best-of-n against {fmt.fixed(tl.true, 3)} for the "
                f"tilt.")
    higher = "Best-of-n's" if gb > gt else "The tilt's"
    return (f"{higher} gain peaks higher: {peaks}. {at}, and true rewards of "
            f"{fmt.fixed(tl.true, 3)} and {fmt.fixed(bn.true, 3)}.")


g = gao_curves(b)
if g is None and page.section("Gao et al.'s laws, fitted to this model"):
    layout.paragraph("This model gives the optimum no KL to spend (a single response, or equal "
                     "rewards), so there is no curve to fit Gao et al.'s forms to.")
elif g is not None and page.section("Gao et al.'s laws, fitted to this model"):
    chart, alt = figs.gao_chart(g)
    plots.show(chart, key="over-gao", alt=alt)

    def judge(fit) -> str:
        return "closely" if fit.r2 >= 0.98 else "roughly" if fit.r2 >= 0.8 else "poorly"

    layout.paragraph(
        f"Gao et al. measured the gold reward of policies optimised against a proxy and fitted "
        f"d(α − γ·d) along best-of-n and d(α − γ·log d) along RL, with d = √KL (their "
        f"coefficient γ is the β of their paper, written γ here so as not to be read as the "
        f"KL weight β = 1/κ of the slider). Fitted by least squares to this model's exact curves "
        f"(the fit is this model's, not theirs), best-of-n gets α = "
        f"{fmt.fixed(g.bon_fit.alpha, 3)}, γ = {fmt.fixed(g.bon_fit.beta, 3)} (R² "
        f"{fmt.fixed(g.bon_fit.r2, 2)}: it describes the curve {judge(g.bon_fit)}), the tilt α = "
        f"{fmt.fixed(g.rl_fit.alpha, 3)}, γ = {fmt.fixed(g.rl_fit.beta, 3)} (R² "
        f"{fmt.fixed(g.rl_fit.r2, 2)}, {judge(g.rl_fit)}). With γ > 0 both forms rise, peak and "
        f"fall; a model whose true reward never falls can only be fitted with a small or "
        f"negative γ.")
    layout.paragraph(peaks_text(g))


page.details(lambda: figs.details(b, t.pi, kappa))
