"""Credit inside a response: the token-level form of the KL-regularized optimum on SPEC.md's
token tree (chapter 28's soft Bellman equations; Section 12.1.5; Exercise 28.2)."""

import math

import numpy as np
import streamlit as st

from klrl_core import token_credit as tc
from klrl_app import controls, fmt, layout
from klrl_app import token_credit_figures as tf

page = layout.Page(
    "token-credit", "Credit inside a response",
    "Chapter 28 · the token-level form of the optimum · Section 12.1.5 · Exercise 28.2",
    "A toy language model writes three tokens, each a, b or c, so it has 27 possible "
    "responses; its reference π_ref writes a, b, c with probabilities 0.5, 0.3, 0.2 at every "
    "step. The reward judges the whole response. The KL-regularized optimum π* can be built "
    "token by token, from the last token back (the soft Bellman equations): each token's "
    "credit β·ln π*/π_ref is how much writing it changed the soft value V*. The bandit view "
    "instead hands every token the same advantage, r(y) − E_π*[r].",
)
ui = page.ui
c_kappa, c_rule, c_y, c_y2 = page.control_row([2.6, 2.4, 1, 1])
with c_kappa:
    kappa = ui.kappa(default=2.0)
with c_rule:
    rule = ui.choice("reward", "Reward rule", {r: r for r in tc.RULES}, default="middle",
                     help="middle: r = [y₂ = b] + 0.2·[y₃ = c]; last: r = [y₃ = c]; "
                          "first: r = [y₁ = c]; count: r = (number of c tokens)/3.")
with c_y:
    y = ui.word("y", "Response y", "abc", tc.TOKENS, tc.LENGTH,
                help="Three letters from a, b, c, one token at a time.")
with c_y2:
    y2 = ui.word("y2", "Response y′", "aba", tc.TOKENS, tc.LENGTH,
                 help="Three letters from a, b, c: compared with y token by token.")
page.finish_controls()


def model_text() -> str:
    """The model in one sentence, from the core's constants, for the first screen."""
    ref = ", ".join(f"{a} {fmt.fixed(q, 1)}" for a, q in zip(tc.TOKENS, tc.PI_REF))
    letters = ", ".join(tc.TOKENS[:-1]) + " or " + tc.TOKENS[-1]
    return (f"The model: {tc.N_RESPONSES} responses of {tc.LENGTH} tokens, each {letters}; "
            f"π_ref writes {ref} at every step; the {rule} rule pays "
            f"{tc.RULE_TEXT[rule]} for the whole response.")


st.caption(model_text())


def items_at(tree, seq) -> list[tuple[str, str]]:
    return [
        ("V*(x)", fmt.fixed(float(tree.values[0][0]), 3)),
        ("β·ln Z", fmt.fixed(seq.value, 3)),
        (f"implicit reward of {y}", fmt.fixed(tc.implicit_reward(tree, y), 3, signed=True)),
        (f"{y} against {y2}",
         fmt.fixed(tc.implicit_reward_difference(tree, y, y2), 3, signed=True)),
        ("E_π*[r]", fmt.fixed(seq.expected, 3)),
        ("KL(π* ‖ π_ref)", f"{fmt.fixed(seq.kl, 3)} nats"),
        (f"bandit share of {y}", fmt.fixed(tc.reward(y, rule) - seq.expected, 3, signed=True)),
    ]


def view_at(kappa: float) -> layout.View:
    tree, seq = tf.optimum(kappa, rule)
    return layout.View(items_at(tree, seq),
                       tf.charts(tree, seq, y, y2, rule, controls.kappa_text(kappa)))


helps = [
    "the soft value of the prompt, by the backward recursion V*(s) = β·ln Σₐ π_ref(a)·"
    "exp(V*(s a)/β) from V* = r at the leaves.",
    "β times the log of Z = Σ_y π_ref(y)·exp(r(y)/β) over the 27 whole responses: the "
    "sequence-level optimum's value (Exercise 28.1). It equals V*(x).",
    "β·ln π*(y)/π_ref(y), the sum of y's bars: r(y) − V*(x) (Exercise 28.2(a)).",
    "the difference of the two implicit rewards: only the tokens after the shared prefix "
    "count, and it equals r(y) − r(y′) (Exercise 28.2(b)).",
    "the optimum's expected reward.",
    "how far π* moved from the reference, in nats.",
    "the one advantage r(y) − E_π*[r] that a sequence-level estimator puts on every token "
    "of y (Section 12.1.5).",
]
view = page.follow(layout.Instant("kappa", view_at, setting=(rule, y, y2)),
                   [h.replace("*", "\\*") for h in helps])   # markdown: V* and π* stay stars
beta = tf.beta_of(kappa)
tree, seq = tf.optimum(kappa, rule)
k_text, b_text = controls.kappa_text(kappa), controls.beta_text(kappa)
c, c2 = tc.token_credits(tree, y), tc.token_credits(tree, y2)
share = tc.reward(y, rule) - seq.expected
v0 = float(tree.values[0][0])

# π*'s tree first: the browser draws the first chart in the frame of a move, the others next.
for column, key in zip(st.columns([2.8, 3.6, 3.6], gap="medium"),
                       ("token-credit-tree", "token-credit-ref", "token-credit-bars")):
    with column:
        page.chart(view, key)


# --- what to look for, from the numbers ------------------------------------------------------
def largest_credit_text() -> str:
    """Which of y's tokens carries the largest credit in size; tokens whose credits are the
    same as shown (3 decimals) are named together, as a tie (the count rule's are exact)."""
    t_max = int(np.argmax(np.abs(c)))
    if abs(c[t_max]) < 5e-4:
        return f"At κ = {k_text} every token of {y} gets almost no soft credit."
    shown = fmt.fixed(abs(c[t_max]), 3)
    tied = [t for t in range(tc.LENGTH) if fmt.fixed(abs(c[t]), 3) == shown]
    names = [f"{t + 1} ({y[t]})" for t in tied]
    if len(tied) == 1:
        up = c[t_max] > 0
        return (f"Of {y}'s tokens, token {names[0]} carries the "
                f"{'most credit' if up else 'largest credit in size'} "
                f"({fmt.fixed(c[t_max], 3, signed=True)}): writing it "
                f"{'raised' if up else 'lowered'} the soft value more than any other token of "
                f"{y} did.")
    listed = controls.and_list(names)
    who = (f"tokens {listed}" if len(tied) < tc.LENGTH else f"all three tokens, {listed},")
    exact = np.ptp(c[tied]) < 1e-12
    same_sign = len({bool(c[t] > 0) for t in tied}) == 1
    values = ", ".join(fmt.fixed(c[t], 3, signed=True) for t in tied)
    how = "exactly" if exact else "to the 3 decimals shown"
    if same_sign:
        return (f"Of {y}'s tokens, {who} tie for the largest credit in size ({values}, equal "
                f"{how}): each changed the soft value as much as "
                f"{fmt.agree(len(tied) - 1, 'the other', 'the others')}.")
    return (f"Of {y}'s tokens, {who} carry credits of the same largest size ({values}, equal "
            f"in size {how}), {'one' if len(tied) == 2 else 'some'} raising the soft value "
            f"and {'one' if len(tied) == 2 else 'some'} lowering it.")


def value_identity_text() -> str:
    """V*(x) = E_π*[r] − β·KL(π* ‖ π_ref): why y's credits and its bandit share differ."""
    total = float(c.sum())
    if kappa == 0:
        return (f"At κ = 0 π* is π_ref, KL is 0 and V*(x) = E_π*[r] = {fmt.fixed(v0, 3)}: "
                f"{y}'s credits sum to its bandit share, {fmt.fixed(total, 3, signed=True)}.")
    beta_kl = beta * seq.kl
    identity = (f"V*(x) = E_π*[r] − β·KL(π* ‖ π_ref) = {fmt.fixed(seq.expected, 3)} − "
                f"{b_text} × {fmt.fixed(seq.kl, 3)} = {fmt.fixed(v0, 3)}, the optimum's "
                f"expected reward less the price of its KL")
    head = (f"{y}'s credits sum to r({y}) − V*(x) = {fmt.fixed(total, 3, signed=True)}, its "
            f"bandit share is r({y}) − E_π*[r] = {fmt.fixed(share, 3, signed=True)}")
    if fmt.fixed(beta_kl, 3) == fmt.fixed(0.0, 3):
        return (f"{head}: they agree to 3 decimals because {identity}, and at κ = {k_text} "
                f"the price β·KL is only {fmt.fixed(beta_kl, 3, min_sig=1)}.")
    return (f"{head}: they differ because {identity}; so for every response the credits "
            f"exceed the bandit share by β·KL = {fmt.fixed(beta_kl, 3)}.")


def look_for() -> str:
    first_level = tree.values[1]
    v1 = float(tc.node_values(tree, y)[1])
    # The bandit view's share on every token of y; "0.000 as well" when it rounds to zero.
    bandit = (f"The bandit view still gives it the whole response's advantage, {fmt.fixed(share, 3, signed=True)}."
              if abs(share) >= 5e-4 else
              f"The bandit view gives it the whole response's advantage, which is "
              f"{fmt.fixed(share, 3, signed=True)} here as well.")
    parts = []
    if np.ptp(first_level) < 1e-12:
        parts.append(
            f"The first token of {y} gets no soft credit ({fmt.fixed(c[0], 3, signed=True)}): "
            f"under the {rule} rule every first token leaves the same soft value V* = "
            f"{fmt.fixed(float(first_level[0]), 3)} ahead, so writing {y[0]} changes "
            f"nothing. {bandit}")
    elif abs(c[0]) < 5e-4:
        parts.append(
            f"The first token of {y} gets almost no soft credit ({fmt.fixed(c[0], 3, signed=True)}): the soft "
            f"value after it, {fmt.fixed(v1, 3)}, is almost V*(x) = {fmt.fixed(v0, 3)}. "
            f"{bandit}")
    else:
        parts.append(f"Here the first token matters: writing {y[0]} moves the soft value from "
                     f"{fmt.fixed(v0, 3)} to {fmt.fixed(v1, 3)}, a credit of "
                     f"{fmt.fixed(c[0], 3, signed=True)}, against the bandit view's "
                     f"{fmt.fixed(share, 3, signed=True)} on every token.")
    parts.append(largest_credit_text())
    ref_top = tc.top_reward_mass(np.exp(tc.log_pi_ref_sequence()), rule)
    pi_top = tc.top_reward_mass(seq.pi, rule)
    if kappa == 0:
        parts.append("At κ = 0 (β = ∞) π* is π_ref: the tree's boxes are π_ref's "
                     "probabilities, and each token's credit is its advantage under the "
                     "reference, the change it makes to E_π_ref[r | prefix].")
    else:
        more = ("; raise κ and the mass flows further into them" if pi_top < 0.9995 else
                "; at this κ nearly all of π* is there")
        parts.append(f"In π*'s tree, the responses with the top reward hold "
                     f"{fmt.pct(pi_top, 1)} of the mass at κ = {k_text}, against "
                     f"{fmt.pct(ref_top, 1)} under π_ref{more}.")
    parts.append(value_identity_text())
    return " ".join(parts)


page.explain(look_for())

# --- computed checks ---------------------------------------------------------------------------
if page.section("Checks, computed at this setting"):
    gap = abs(v0 - seq.value)
    total = float(c.sum())
    r_y, r_y2 = tc.reward(y, rule), tc.reward(y2, rule)
    diff = tc.implicit_reward_difference(tree, y, y2)
    K = tc.shared_prefix(y, y2)
    beta_z = ("β·ln Z (its limit E_π_ref[r] at β = ∞)" if kappa == 0 else "β·ln Z")
    lines = [
        f"- **V*(x) = {beta_z}**: {fmt.fixed(v0, 6)} from the backward recursion over the "
        f"tree, {fmt.fixed(seq.value, 6)} from the 27 whole responses; "
        + (f"they differ by {fmt.standard_form(gap, 2)}, rounding only." if gap else
           "they are equal in floating point."),
        f"- **Telescoping**: the bars of {y} sum to {fmt.fixed(total, 3, signed=True)}, and r({y}) − V*(x) = "
        f"{fmt.fixed(r_y, 3)} − {fmt.fixed(v0, 3)} = {fmt.fixed(r_y - v0, 3, signed=True)}.",
    ]
    if K == tc.LENGTH:
        lines.append("- **Shared prefix**: y and y′ are the same response, so every bar is "
                     "the same and the difference is 0.")
    elif K == 0:
        lines.append(
            f"- **Shared prefix**: {y} and {y2} differ from the first token, so every token "
            f"counts; their implicit rewards differ by {fmt.fixed(diff, 3, signed=True)} = "
            f"r({y}) − r({y2}) = {fmt.fixed(r_y, 3)} − {fmt.fixed(r_y2, 3)}.")
    else:
        shared = ", ".join(fmt.fixed(x, 3, signed=True) for x in c[:K])
        lines.append(
            f"- **Shared prefix** (Exercise 28.2(b)): {y} and {y2} share their first {K} "
            f"{fmt.agree(K, 'token', 'tokens')} ({y[:K]}), whose bars are the same numbers "
            f"({shared}) in both; the tokens after it give the difference "
            f"{fmt.fixed(diff, 3, signed=True)}, which is r({y}) − r({y2}) = "
            f"{fmt.fixed(r_y, 3)} − {fmt.fixed(r_y2, 3)}, whatever the prefix.")
    if math.isinf(beta):
        lines.append("- **DPO on the tree**: at κ = 0 (β = ∞) DPO's optimum is π_ref itself; "
                     "move κ above 0 to compare it with π*.")
    else:
        d = tc.dpo_on_tree(beta, rule)
        worst = max(float(np.max(np.abs(a - b))) for a, b in zip(d.credit, tree.credit))
        lines.append(
            f"- **DPO on the tree**: the exact DPO optimum fitted to Bradley–Terry preferences "
            f"on all pairs of the 27 responses (the dpo page's core) has, token by token, the "
            f"same β·log-ratios as π*: the largest gap over the tree's 39 tokens is "
            f"{fmt.standard_form(worst, 2) if worst else 0}. DPO only sees differences of implicit "
            f"rewards between pairs; by the identity above each is a sum of soft credits "
            f"after the shared prefix, so fitting these differences to preferences is "
            f"fitting a soft Q-function, token by token.")
    # Markdown: the stars of V* and π* are letters here, only "**" makes bold.
    layout.paragraph("\n".join(line.replace("**", "\0").replace("*", "\\*").replace("\0", "**")
                               for line in lines))
    layout.paragraph(
        f"Work it by hand in [Exercise 28.2](exercises) (β = 0.5, the middle rule); the "
        f"chapter on RL for language models derives the identities. The reward rule here is "
        f"{tc.RULE_TEXT[rule]}.")


page.details(lambda: tf.numbers(tree, seq, rule, kappa))
