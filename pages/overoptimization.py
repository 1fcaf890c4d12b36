"""Figure 12.5: the optimum for a proxy reward, scored by a true reward that disagrees at the top."""

import numpy as np
import pandas as pd

from klrl_core import best_of_n, tilt
from klrl_app import controls, fmt, layout, plots
from klrl_app.plots import COLORS
from klrl_app.tilt_figures import (add_reward_strip, gao_curves, choose_model, frontier_panel,
                                   frontier_x, is_book, policy_panel, policy_scale,
                                   response_table, scale_text)

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
x_unit = "√KL %{x:.2f} √nats" if axis == "sqrt" else "KL %{x:.2f} nats"
if not is_book(b):
    page.lead = (f"{b.name}: a proxy reward r and a true reward r* "
                 + ("as you gave them" if b.true_given else
                    "made by the chapter's bend, r − 2.4·max(r − 0.5, 0)²")
                 + " for each response (the table below). The optimum follows the proxy.")
peak_true = float(tilt.expected_under(b.peak.pi, b.r_true))
peak_kl = float(b.peak.kl)


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
    k_text = controls.kappa_text(kappa)
    chart = policy_panel(b, t.pi, scale, height=430)
    if not b.small:
        chart.update(xaxis={"title": {"text": "responses, in order of proxy reward r"}})
    add_reward_strip(chart, b)
    policy = (chart, (
        f"Bar chart of the {b.r.size} responses: π* at κ = {k_text} over the outline of π₀, "
        f"and below it each response's proxy reward (dots) and true reward (dashed). π* puts "
        f"{fmt.pct(t.pi[b.r_true < b.r].sum())} of its probability on responses whose "
        f"true reward is below their proxy reward.{scale_text(scale)}"))
    chart = frontier_panel(b, kl, proxy, kappa, height=430, axis=axis)
    plots.merge(chart.data[0], {"name": "proxy r", "line": {"color": COLORS["proxy"]}})
    plots.merge(chart.data[-1], {"name": f"κ = {k_text}, proxy",
                                 "marker": {"color": COLORS["proxy"]}})
    chart.add(x=frontier_x(b, b.frontier.kl, axis), y=b.frontier_true, mode="lines",
              name="true r*",
              line={"color": COLORS["true"], "dash": "dash", "width": 2.5},
              hovertemplate=f"{x_unit}<br>E[r*] %{{y:.3f}}<extra></extra>")
    chart.add(x=frontier_x(b, [kl], axis), y=[true], mode="markers", name=f"κ = {k_text}, true",
              marker={"color": COLORS["true"], "size": 13, "line": {"color": "white", "width": 2}},
              hovertemplate=f"{x_unit}<br>E[r*] %{{y:.3f}}<extra>current π*</extra>")
    # The model's ranges (frontier_panel's, lowered to the true curve's minimum): the same
    # at every κ.
    lo = min(float(b.frontier_true.min()), float(chart.layout["yaxis"]["range"][0]))
    chart.update(yaxis={"range": [lo - 0.03 * float(np.ptp(b.r) or 1.0),
                                  chart.layout["yaxis"]["range"][1]]})
    chart.note(float(frontier_x(b, peak_kl, axis)), peak_true, f"peak {fmt.fixed(peak_true, d)}",
               COLORS["true"])
    front = (chart, (
        f"Expected proxy and true reward against KL from π₀ along the optimum: the proxy rises "
        f"toward 1, the true reward peaks at {fmt.fixed(peak_true, 2)} at {fmt.fixed(peak_kl, 1)} nats and falls. "
        f"Current point: KL {fmt.fixed(kl, 2)} nats, proxy {fmt.fixed(proxy, 2)}, true {fmt.fixed(true, 2)}."))
    return layout.View(items, {"over-policy": policy, "over-frontier": front})


view = page.follow(layout.Instant("kappa", view_at, setting=(b.key, axis, scale)), helps=[
    "divergence of the optimum from the reference.",
    "expected proxy reward, the quantity the optimum maximizes (minus β·KL).",
    "expected true reward of the same policy.",
    f"the best true reward anywhere on the frontier, reached at κ = {fmt.fixed(b.peak_kappa, 1)}."
    + ("" if b.true_given else " With no true reward given, r* is the chapter's bend "
       "r − 2.4·max(r − 0.5, 0)²."),
])
t, kl, proxy, true, items = numbers_at(kappa)
k_text = controls.kappa_text(kappa)

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
    kl_t = float(g.rl.kl[i_t])
    t_pk = tilt.tilt(b.log_pi0, b.r, float(np.interp(kl_t, b.frontier.kl, b.kappas)))
    n_pk = best_of_n.matched_n(b.log_pi0, b.r, kl_t)
    bon_pk = best_of_n.best_of_n(b.log_pi0, b.r, n_pk)
    pol = {}
    for name, pi, kl_pol in (("tilt", t_pk.pi, t_pk.kl), ("bon", bon_pk.pi, bon_pk.kl)):
        m = float(tilt.expected_under(pi, b.r))
        pol[name] = (float(kl_pol), m, float(tilt.expected_under(pi, b.r_true)),
                     float(np.sqrt(tilt.expected_under(pi, (b.r - m) ** 2))))
    (klt, rt, tt, st), (klb, rb, tb, sb) = pol["tilt"], pol["bon"]
    at = (f"At about the tilt's peak KL, the tilt (at {fmt.fixed(klt, 2)} nats) and "
          f"best-of-{n_pk:,} (at {fmt.fixed(klb, 2)} nats) earn proxy rewards of "
          f"{fmt.fixed(rt, 3)} and {fmt.fixed(rb, 3)}")
    order = np.argsort(b.r)
    # the proxy's overrating r − r* grows toward the top (the chapter's bend does)
    worst_at_top = bool(np.all(np.diff((b.r - b.r_true)[order]) >= -1e-12))
    if gb > gt and tb > tt and sb < st:
        top = ("the very top, which the proxy overrates most" if worst_at_top else
               "the extremes of the proxy reward")
        return (f"Best-of-n's gain peaks higher than the tilt's, though the tilt earns the most "
                f"proxy reward at any KL: {peaks}. {at}, but the tilt spreads its probability "
                f"wider (the proxy reward's standard deviation {fmt.fixed(st, 3)} against "
                f"{fmt.fixed(sb, 3)}). Best-of-n piles its draws into a narrower band, while "
                f"the tilt's exp(κr) keeps weight on {top}: true reward {fmt.fixed(tb, 3)} "
                f"for best-of-n against {fmt.fixed(tt, 3)} for the tilt.")
    higher = "best-of-n's" if gb > gt else "the tilt's"
    return (f"{higher[0].upper() + higher[1:]} gain peaks higher: {peaks}. {at}, and true "
            f"rewards of {fmt.fixed(tt, 3)} and {fmt.fixed(tb, 3)}.")


g = gao_curves(b)
if g is None and page.section("Gao et al.'s laws, fitted to this model"):
    layout.paragraph("This model gives the optimum no KL to spend (a single response, or equal "
                     "rewards), so there is no curve to fit Gao et al.'s forms to.")
elif g is not None and page.section("Gao et al.'s laws, fitted to this model"):
    chart = plots.Chart("d = √KL from π₀ (√nats)", "true reward gain over π₀", height=380)
    for curve, fit, name, color, form in (
            (g.bon, g.bon_fit, "best-of-n", COLORS["best_of_n"], "d(α − γ·d)"),
            (g.rl, g.rl_fit, "the tilt (RL)", COLORS["optimum"], "d(α − γ·log d)")):
        chart.add(x=curve.d, y=curve.gain, mode="lines", name=f"{name}, exact",
                  line={"color": color, "width": 3},
                  hovertemplate=f"{name}: d %{{x:.2f}}, gain %{{y:.3f}}<extra></extra>")
        chart.add(x=curve.d, y=fit.fitted, mode="lines",
                  name=f"{form}: α = {fmt.fixed(fit.alpha, 3)}, γ = {fmt.fixed(fit.beta, 3)}",
                  line={"color": color, "width": 2, "dash": "dot"},
                  hovertemplate=f"fitted {form}: %{{y:.3f}}<extra></extra>")
    chart.hline(0.0, COLORS["neutral"])
    plots.show(chart, key="over-gao", alt=(
        f"Line chart of the true reward's gain over π₀ against d = √KL: exact along best-of-n "
        f"and along the tilt, each with Gao et al.'s form fitted by least squares "
        f"(best-of-n: α {fmt.fixed(g.bon_fit.alpha, 3)}, γ {fmt.fixed(g.bon_fit.beta, 3)}, R² {fmt.fixed(g.bon_fit.r2, 2)}; "
        f"tilt: α {fmt.fixed(g.rl_fit.alpha, 3)}, γ {fmt.fixed(g.rl_fit.beta, 3)}, R² {fmt.fixed(g.rl_fit.r2, 2)})."))

    def judge(fit) -> str:
        return "closely" if fit.r2 >= 0.98 else "roughly" if fit.r2 >= 0.8 else "poorly"

    layout.paragraph(
        f"Gao et al. measured the gold reward of policies optimised against a proxy and fitted "
        f"d(α − γ·d) along best-of-n and d(α − γ·log d) along RL, with d = √KL (their "
        f"coefficient γ is the β of their paper, written γ here so as not to be read as the "
        f"KL weight β = 1/κ of the slider). Fitted by "
        f"least squares to this model's exact curves (the fit is this model's, not theirs), "
        f"best-of-n gets α = {fmt.fixed(g.bon_fit.alpha, 3)}, γ = {fmt.fixed(g.bon_fit.beta, 3)} (R² "
        f"{fmt.fixed(g.bon_fit.r2, 2)}: it describes the curve {judge(g.bon_fit)}), the tilt α = "
        f"{fmt.fixed(g.rl_fit.alpha, 3)}, γ = {fmt.fixed(g.rl_fit.beta, 3)} (R² {fmt.fixed(g.rl_fit.r2, 2)}, "
        f"{judge(g.rl_fit)}). With γ > 0 both forms rise, peak and fall; a model whose true "
        f"reward never falls can only be fitted with a small or negative γ.")
    layout.paragraph(peaks_text(g))


def numbers() -> None:
    df = pd.DataFrame({"response": list(b.labels), "proxy reward r": b.r, "true reward r*": b.r_true,
                       "reference pi0": b.pi0, "optimum pi*": t.pi})
    layout.table(df)
    layout.csv_download(df, f"overoptimization_kappa_{controls.fmt_number(kappa)}.csv",
                        key="over-csv")
    fr = pd.DataFrame({"kappa": b.kappas, "KL (nats)": b.frontier.kl,
                       "expected proxy reward": b.frontier.expected,
                       "expected true reward": b.frontier_true})
    layout.csv_download(fr, "overoptimization_frontier.csv",
                        label="Download both curves (CSV)", key="over-frontier-csv")


page.details(numbers)
