"""Figure 12.3: exact best-of-n beside the optimum pi* at the same KL."""

import numpy as np

from klrl_core import best_of_n, tilt
from klrl_app import controls, fmt, layout
from klrl_app.tilt_figures import (add_best_of_n_dots, add_best_of_n_ladder, best_of_n_details,
                                   best_of_n_stops, choose_model, frontier_panel, is_book,
                                   policy_panel, policy_scale, response_table, scale_text)

KAPPA_DEFAULT = 20.0

page = layout.Page(
    "best-of-n", "Best-of-n against the optimum",
    "Figure 12.3 · Section 12.5 · Equation (12.8)",
    "Draw n responses from π₀ and keep the one with the highest reward. Here is that policy, "
    "computed exactly, beside the optimum π* that spends the same KL.",
)
ui = page.ui
# the n box wide enough for "the KL-matched n" at 1280×720 (issue 31), the model button
# beside it
left_ctl, right_ctl, model_ctl = page.control_row([2.5, 1.45, 1.4])
with left_ctl:
    kappa = ui.kappa(default=KAPPA_DEFAULT)
with model_ctl:
    b, axis = choose_model(ui)
with right_ctl:
    chosen_n = ui.optional_integer(
        "n", "Number of draws n", 1, best_of_n.N_MAX, when_empty="the KL-matched n",
        help="Leave empty to use the n whose exact KL is closest to the optimum's. "
             "Any n from 1 to 10,000,000 is computed exactly.")
page.finish_controls()

how = "chosen" if chosen_n is not None else "KL-matched"
best = b.r == b.r.max()                       # the highest-reward responses (ties: a level)
d = 2 if is_book(b) else 3                    # the chapter's precision on its own model


# The n at every stop of κ and best-of-n's largest probability at any of them (once per
# model and n, shared by every session).
bon_top, n_at = best_of_n_stops(b, ui.sliders["kappa"][2], chosen_n)


def numbers_at(kappa: float):
    """π* at κ, best-of-n (n as chosen or KL-matched) and the readout's items."""
    t = tilt.tilt(b.log_pi0, b.r, kappa)
    n = n_at[float(kappa)]
    bon = best_of_n.best_of_n(b.log_pi0, b.r, n)
    top = int(np.argmax(bon.pi))
    items = [
        ("π*: KL", f"{fmt.fixed(float(t.kl), d)} nats"),
        ("π*: E[r]", fmt.fixed(float(t.expected), d)),
        (f"n ({how})", f"{n:,}"),
        (f"best-of-{n:,}: KL", f"{fmt.fixed(float(bon.kl), d)} nats"),
        ("log n − (n−1)/n", f"{fmt.fixed(float(bon.bound), d)} nats"),
        (f"best-of-{n:,}: E[r]", fmt.fixed(float(bon.expected), d)),
        (f"its likeliest response (r = {fmt.fixed(b.r[top], 2)})", fmt.pct(bon.pi[top])),
        ("best response: best-of-n / π*",
         f"{fmt.pct(bon.pi[best].sum(), 1)} / {fmt.pct(t.pi[best].sum(), 1)}"),
    ]
    return t, n, bon, items


# One y axis for the policy panel at every stop of κ (nothing rescales while the thumb is
# dragged), readable at every κ: broken when π*'s bars and best-of-n's dots at some κ reach
# far above what the default κ needs (π* there, and best-of-n's n there).
bon_default = float(best_of_n.best_of_n(b.log_pi0, b.r, n_at[KAPPA_DEFAULT]).pi.max())
scale = policy_scale(b, KAPPA_DEFAULT, extra=(bon_default,), whole=(bon_top,))


def view_at(kappa: float) -> layout.View:
    """The readout and both charts at κ (the browser draws this at every stop of κ)."""
    t, n, bon, items = numbers_at(kappa)
    kl_t, reward_t = float(t.kl), float(t.expected)
    kl_n, reward_n = float(bon.kl), float(bon.expected)
    top = int(np.argmax(bon.pi))
    k_text = controls.kappa_text(kappa)
    # The y axis is the scale's at every stop (the dots never pass its top).
    chart = policy_panel(b, t.pi, scale)
    add_best_of_n_dots(chart, b, bon.pi, n, scale)
    policy = (chart, (
        f"Bar chart of the {b.r.size} responses: π* at κ = {k_text} as bars over the outline "
        f"of π₀, best-of-{n:,} as dots. Best-of-{n:,} puts {fmt.pct(bon.pi[top])} on its "
        f"likeliest response (r = {fmt.fixed(b.r[top], 2)}); the highest-reward responses get "
        f"{fmt.pct(bon.pi[best].sum(), 1)} under best-of-{n:,} and "
        f"{fmt.pct(t.pi[best].sum(), 1)} under π*.{scale_text(scale)}"))
    chart = frontier_panel(b, kl_t, reward_t, kappa, axis=axis)
    add_best_of_n_ladder(chart, b, n, kl_n, reward_n, axis=axis)
    front = (chart, (
        f"Expected reward against KL: the frontier of π*, best-of-n at n = 1, 2, 4, … 2¹⁷ below "
        f"it, π* marked at KL {fmt.fixed(kl_t, 2)} nats and reward {fmt.fixed(reward_t, 2)}, best-of-{n:,} at KL "
        f"{fmt.fixed(kl_n, 2)} and reward {fmt.fixed(reward_n, 2)}."))
    return layout.View(items, {"bon-policy": policy, "bon-frontier": front})


view = page.follow(layout.Instant("kappa", view_at, setting=(b.key, chosen_n, axis, scale)), helps=[
    "KL divergence of the optimum from π₀ at this κ.",
    "expected reward of the optimum.",
    "leave the n box empty for the integer n whose exact KL is closest to the optimum's.",
    "exact KL(πₙ ‖ π₀), computed from πₙ(y) = F(y)ⁿ − F⁻(y)ⁿ.",
    "the folklore formula: exact only for continuous rewards, an upper bound here (Eq. 12.8).",
    "expected reward of best-of-n; never above the optimum's at the same KL.",
    "the share of best-of-n's probability on the response it returns most often.",
    "how often each policy returns a highest-reward response; for best-of-n, the chance that "
    "a batch of n draws from π₀ contains one.",
])
t, n, bon, items = numbers_at(kappa)
kl_t, reward_t = float(t.kl), float(t.expected)
kl_n, reward_n, bound = float(bon.kl), float(bon.expected), float(bon.bound)
top = int(np.argmax(bon.pi))
k_text = controls.kappa_text(kappa)

left, right = page.figures()
with left:
    page.chart(view, "bon-policy")
with right:
    page.chart(view, "bon-frontier")

if b.small:
    response_table(page, b, {"π* (optimum)": t.pi, f"πₙ (best-of-{n:,})": bon.pi})

gap = bound - kl_n
if n == 1:
    formula = ("With n = 1 best-of-n is π₀ itself: no KL, and the formula's log 1 − 0 = 0 "
               "agrees.")
elif gap < 0.02 * kl_n:
    formula = (f"Here the folklore formula log n − (n−1)/n gives {fmt.fixed(bound, d)} nats "
               f"against an exact {fmt.fixed(kl_n, d)}: close, because the responses that "
               f"decide best-of-{n:,} are rare, so a batch seldom holds the same one twice. It "
               f"is an upper bound on the exact KL, never below it.")
else:
    formula = (f"Here the folklore formula gives {fmt.fixed(bound, d)} nats against an exact "
               f"{fmt.fixed(kl_n, d)}: it is an upper bound, and loose here because {n:,} "
               f"draws often repeat the same response: best-of-n cannot move further than the "
               f"{b.r.size} responses allow.")
holds_top = float(bon.pi[best].sum())        # P(a batch of n holds a best response)
if kappa == 0:
    grow = "the optimum at κ = 0 is π₀ itself."
else:
    grow = "the optimum's weight exp(κr) keeps growing to the top of the scale."
if holds_top < 0.5:
    batch = (f"Best-of-n can only return what its draws hold, and a batch of {n:,} from π₀ "
             f"holds a best response only {fmt.pct(holds_top, 1)} of the time; {grow}")
else:
    batch = (f"A batch of {n:,} from π₀ holds a best response {fmt.pct(holds_top, 1)} of "
             f"the time, so best-of-n returns one that often; {grow}")
page.explain(
    f"The green dots show best-of-{n:,}: {fmt.pct(bon.pi[top])} of its probability on the "
    f"response with r = {fmt.fixed(b.r[top], 2)}, while the highest-reward responses get "
    f"{fmt.pct(holds_top, 1)} (π*: {fmt.pct(t.pi[best].sum(), 1)}). {batch} On the right every "
    f"best-of-n sits on or below the frontier, which no policy crosses: best-of-{n:,} earns "
    f"{fmt.fixed(reward_n, d)} at {fmt.fixed(kl_n, d)} nats. {formula}"
)


page.details(lambda: best_of_n_details(b, t.pi, bon.pi, n, kappa))
