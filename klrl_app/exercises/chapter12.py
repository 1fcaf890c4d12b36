"""Exercises 12.1-12.4 of *AI Alignment* (Chapter 12), each exercise's numbers and helpers
beside its worked solution.

Every answer, every number of a worked solution and every value a wrong-answer hint reacts to
is computed by ``klrl_core`` when asked for; nothing here is a typed-in result. Statements,
hints and solutions are written for this app (the chapters' sentences are not copied).
"""

from __future__ import annotations

import math

import numpy as np

from klrl_app.exercises.machinery import KAPPA_LIMIT, Exercise, Part, Trap, _f, _vec
from klrl_core import best_of_n as bon
from klrl_core import groups, square_root, tilt
from klrl_core import user_model as um

CH12 = "*AI Alignment*, Chapter 12"


# --------------------------------------------------------------------------- 12.1


def _ex121():
    return um.preset_model("Exercise 12.1")


def _t121(kappa: float = 1.0):
    m = _ex121()
    return tilt.tilt(m.log_pi0, m.r, kappa)


def _solution_12_1() -> str:
    m = _ex121()
    t = _t121()
    z = math.exp(float(t.log_z))
    weights = m.pi0 * np.exp(m.r)
    terms = t.pi * (t.log_pi - m.log_pi0)
    ratios = t.pi / m.pi0
    wide, sharp = _t121(0.0), _t121(KAPPA_LIMIT)
    return "\n".join(
        [
            "**Weights.** With β = 1 each response is weighted by π₀(y)·exp(r(y)): "
            f"{_f(weights[0], 4)}, {_f(weights[1], 4)} and {_f(weights[2], 4)}.",
            "",
            f"**Normalise.** Z is their sum, {_f(z, 4)}, so π* = {_vec(t.pi)}.",
            "",
            f"**Expected reward.** Σ π*(y)·r(y) = {_f(t.expected)} (under π₀ it was "
            f"{_f(wide.expected)}).",
            "",
            f"**KL.** Σ π* log(π*/π₀) with ratios π*/π₀ = {_vec(ratios)}: the three terms are "
            f"{_f(terms[0])}, {_f(terms[1])} and {_f(terms[2])}, which add to {_f(t.kl)} nats.",
            "",
            f"**Equation 12.6.** κ·E[r] − log Z = {_f(t.expected)} − {_f(t.log_z)} = "
            f"{_f(t.expected - t.log_z)} nats, the same number.",
            "",
            f"**Limits.** As β → ∞ nothing may move: π* = π₀, expected reward {_f(wide.expected)}, "
            f"KL {_f(wide.kl)}. As β → 0 all the probability goes to the reward-2 response: "
            f"expected reward {_f(sharp.expected)} and KL {_f(sharp.kl)} nats, which is "
            "log(1/π₀) of that response, the cost of making a 1-in-10 response certain.",
        ]
    )


EX_12_1 = Exercise(
    id="12.1",
    source=CH12,
    title="Tilting three responses by hand",
    statement=(
        "A prompt has three possible responses. The reference policy π₀ picks them with "
        "probabilities 0.7, 0.2 and 0.1, and the reward scores them 0, 1 and 2. Take the KL "
        "weight β = 1. Work out the optimal policy π* ∝ π₀·exp(r/β) (normalising constant Z "
        "included), the expected reward under π*, and the KL divergence KL(π* ‖ π₀) in nats. "
        "Check the KL a second way with Equation 12.6. Finally, say where the expected "
        "reward and the KL go when β shrinks to zero and when it grows without bound."
    ),
    parts=(
        Part(
            "12.1 · normalising constant Z at β = 1",
            lambda: math.exp(float(_t121().log_z)),
            3,
            "Z adds up π₀(y)·exp(r(y)/β) over the three responses.",
            traps=(
                Trap(
                    lambda: float(np.sum(np.exp(_ex121().r))),
                    "Each exp(r(y)) must be weighted by the response's reference "
                    "probability before adding.",
                ),
            ),
        ),
        Part(
            "12.1 · π*(y₁), the reward-0 response",
            lambda: float(_t121().pi[0]),
            3,
            "Weight the response by π₀·exp(r/β), then divide by Z so the three add to one.",
            traps=(
                Trap(
                    lambda: float(_ex121().pi0[0] * np.exp(_ex121().r[0])),
                    "That is the weight before normalising: divide by Z.",
                ),
            ),
        ),
        Part(
            "12.1 · π*(y₂), the reward-1 response",
            lambda: float(_t121().pi[1]),
            3,
            "Weight the response by π₀·exp(r/β), then divide by Z so the three add to one.",
            traps=(
                Trap(
                    lambda: float(_ex121().pi0[1] * np.exp(_ex121().r[1])),
                    "That is the weight before normalising: divide by Z.",
                ),
            ),
        ),
        Part(
            "12.1 · π*(y₃), the reward-2 response",
            lambda: float(_t121().pi[2]),
            3,
            "Weight the response by π₀·exp(r/β), then divide by Z so the three add to one.",
            traps=(
                Trap(
                    lambda: float(_ex121().pi0[2] * np.exp(_ex121().r[2])),
                    "That is the weight before normalising: divide by Z.",
                ),
            ),
        ),
        Part(
            "12.1 · expected reward under π*",
            lambda: float(_t121().expected),
            3,
            "Average the rewards with the probabilities of π*, not of π₀.",
            traps=(
                Trap(
                    lambda: float(_ex121().pi0 @ _ex121().r),
                    "That is the reference policy's expected reward: weight the rewards "
                    "by π* instead.",
                ),
            ),
        ),
        Part(
            "12.1 · KL(π* ‖ π₀) in nats",
            lambda: float(_t121().kl),
            3,
            "Sum π*(y)·log(π*(y)/π₀(y)) over the responses, with natural logarithms.",
            traps=(
                Trap(
                    lambda: float(np.sum(_ex121().pi0 * (_ex121().log_pi0 - _t121().log_pi))),
                    "That is KL(π₀ ‖ π*): the terms must be weighted by π*, with π* on top "
                    "of the ratio.",
                ),
                Trap(
                    lambda: float(_t121().kl) / math.log(2.0),
                    "That is in bits: use natural logarithms for nats.",
                ),
            ),
            unit="nats",
        ),
        Part(
            "12.1 · log Z, for Equation 12.6",
            lambda: float(_t121().log_z),
            3,
            "Take the natural logarithm of the normalising constant.",
            traps=(
                Trap(
                    lambda: float(_t121().log_z) / math.log(10.0),
                    "That is log base 10: Equation 12.6 uses the natural logarithm.",
                ),
            ),
        ),
        Part(
            "12.1 · expected reward as β → ∞",
            lambda: float(_t121(0.0).expected),
            3,
            "When moving away from π₀ costs without limit, which policy is left?",
        ),
        Part(
            "12.1 · expected reward as β → 0",
            lambda: float(_t121(KAPPA_LIMIT).expected),
            3,
            "With no cost for moving, where does all the probability go?",
        ),
        Part(
            "12.1 · KL(π* ‖ π₀) as β → 0, in nats",
            lambda: float(_t121(KAPPA_LIMIT).kl),
            3,
            "A policy sure of one response is log(1/π₀) of that response away from π₀.",
            traps=(
                Trap(
                    lambda: float(_t121(KAPPA_LIMIT).kl) / math.log(10.0),
                    "Use the natural logarithm, not base 10.",
                ),
            ),
            unit="nats",
        ),
    ),
    solution=_solution_12_1,
    link="tilt?pi0=0.7,0.2,0.1&r=0,1,2&beta=1",
)


# --------------------------------------------------------------------------- 12.2


def _coin():
    return um.preset_model("Exercise 12.2: the coin")


def _b122(n: float):
    m = _coin()
    return bon.best_of_n(m.log_pi0, m.r, n)


def _solution_12_2() -> str:
    b = _b122(np.array([2.0, 10.0, 100.0, float(bon.N_MAX)]))
    return "\n".join(
        [
            "**Best of two.** The reward-0 response is kept only if both draws are it, which "
            f"happens with probability ½·½; so π₂ = {_vec(b.pi[0], 2)}.",
            "",
            f"**Exact KL.** ¼·log(¼ / ½) + ¾·log(¾ / ½) = {_f(b.kl[0])} nats, against the formula "
            f"log 2 − ½ = {_f(b.bound[0])}.",
            "",
            "**Why the gap.** The formula assumes every response is rare, so two draws never "
            "coincide. Here each response holds half the mass and the draws coincide half the "
            "time; repeated draws add no selection, so the true KL falls short of the formula "
            "(Equation 12.8 is only an upper bound).",
            "",
            f"**Larger n.** π_n = (2⁻ⁿ, 1 − 2⁻ⁿ). At n = 10 the exact KL is {_f(b.kl[1])} nats "
            f"against the formula's {_f(b.bound[1])}; at n = 100 the formula gives "
            f"{_f(b.bound[2])} while the exact KL is still below log 2 = {_f(b.kl[3])}, its limit: "
            "best-of-n can at most make the reward-1 response certain, which costs log(1/½). "
            "The formula grows like log n, so the gap has no bound.",
        ]
    )


EX_12_2 = Exercise(
    id="12.2",
    source=CH12,
    title="Best-of-two on a fair coin",
    statement=(
        "The reference policy has two responses, equally likely; one earns reward 0 and the "
        "other reward 1. Draw two responses independently and keep the one with the higher "
        "reward. Find the distribution π₂ of the kept response, its exact KL from π₀, and "
        "compare that with the folklore formula log n − (n − 1)/n at n = 2. Explain the "
        "difference, then redo the comparison for n = 10 and n = 100."
    ),
    parts=(
        Part(
            "12.2 · probability that best-of-2 keeps the reward-1 response",
            lambda: float(_b122(2.0).pi[1]),
            3,
            "The reward-0 response is kept only when both draws are that response.",
            traps=(
                Trap(
                    lambda: float(_coin().pi0[1]),
                    "That is one draw's chance: with two draws the reward-0 response "
                    "must come up twice to be kept.",
                ),
            ),
        ),
        Part(
            "12.2 · exact KL(π₂ ‖ π₀) in nats",
            lambda: float(_b122(2.0).kl),
            3,
            "Sum π₂(y)·log(π₂(y)/π₀(y)) over the two responses, with natural logarithms.",
            traps=(
                Trap(
                    lambda: float(_b122(2.0).bound),
                    "That is the formula's value: compute the KL from π₂ directly.",
                ),
                Trap(
                    lambda: float(_b122(2.0).kl) / math.log(2.0),
                    "That is in bits: use natural logarithms for nats.",
                ),
            ),
            unit="nats",
        ),
        Part(
            "12.2 · the formula log n − (n − 1)/n at n = 2",
            lambda: float(_b122(2.0).bound),
            3,
            "Natural logarithm of n, minus (n − 1)/n.",
            traps=(
                Trap(
                    lambda: float(_b122(2.0).kl),
                    "That is the exact KL; this part asks for the formula.",
                ),
            ),
        ),
        Part(
            "12.2 · exact KL at n = 10, in nats",
            lambda: float(_b122(10.0).kl),
            3,
            "π₁₀ puts 2⁻¹⁰ on the reward-0 response; then sum π₁₀·log(π₁₀/π₀).",
            traps=(
                Trap(
                    lambda: float(_b122(10.0).bound),
                    "That is the formula: the exact KL uses π₁₀ itself.",
                ),
            ),
            unit="nats",
        ),
        Part(
            "12.2 · the formula at n = 10",
            lambda: float(_b122(10.0).bound),
            3,
            "Natural logarithm of n, minus (n − 1)/n.",
        ),
        Part(
            "12.2 · the formula at n = 100",
            lambda: float(_b122(100.0).bound),
            3,
            "Natural logarithm of n, minus (n − 1)/n.",
            traps=(
                Trap(
                    lambda: math.log10(100.0) - 99.0 / 100.0,
                    "Use the natural logarithm, not base 10.",
                ),
            ),
        ),
        Part(
            "12.2 · limit of the exact KL as n → ∞, in nats",
            lambda: float(_b122(float(bon.N_MAX)).kl),
            3,
            "For huge n the reward-1 response is kept almost surely: how far is a sure "
            "thing from a fair coin?",
            traps=(
                Trap(
                    lambda: float(_b122(float(bon.N_MAX)).kl) / math.log(2.0),
                    "That is in bits: use natural logarithms for nats.",
                ),
            ),
            unit="nats",
        ),
    ),
    solution=_solution_12_2,
    link="best-of-n?pi0=0.5,0.5&r=0,1&n=2",
)


# --------------------------------------------------------------------------- 12.3


def _book():
    return um.preset_model(um.BOOK)


def _v123() -> float:
    m = _book()
    return float(square_root.reward_variance(m.log_pi0, m.r))


def _so123(kappa: float = 1.0):
    m = _book()
    return square_root.second_order(m.log_pi0, m.r, kappa)


def _exact123(kappa: float = 1.0):
    """(exact gain E_pi*[r] - mu, exact KL) on the book's model."""
    m = _book()
    t = tilt.tilt(m.log_pi0, m.r, kappa)
    return float(t.expected - m.pi0 @ m.r), float(t.kl)


def _law123() -> float:
    return float(square_root.sqrt_law(0.0, _v123(), _exact123()[1]))


def _solution_12_3() -> str:
    m = _book()
    mu = float(m.pi0 @ m.r)
    v = _v123()
    so = _so123()
    gain, kl = _exact123()
    return "\n".join(
        [
            "**Expand.** For small κ, exp(κr) ≈ 1 + κr + ½κ²r², so E_π₀[exp(κr)] ≈ 1 + κμ + "
            "½κ²(v + μ²). With log(1 + u) ≈ u − u²/2 and everything past κ² dropped, "
            "log Z ≈ κμ + ½κ²v.",
            "",
            "**Reward.** The derivative of log Z in κ is the expected reward under π* (Section "
            "12.3.3), so E_π*[r] ≈ μ + κv: a gain of κv.",
            "",
            "**KL.** Equation 12.6 gives KL = κ·E_π*[r] − log Z ≈ κ(μ + κv) − κμ − ½κ²v = ½κ²v.",
            "",
            "**Eliminate κ.** κ ≈ √(2·KL / v), so the gain κv ≈ √(2v·KL): linear in √KL, because "
            "a small change moves the KL by its square and the reward by the change itself.",
            "",
            f"**On the book's model.** μ = {_f(mu, 4)} and v = {_f(v, 4)}. At β = 1 the expansion "
            f"predicts a gain of {_f(so.gain, 4)} at a KL of {_f(so.kl, 4)}; the exact tilt gives "
            f"{_f(gain, 4)} and {_f(kl, 4)}. At the exact KL, √(2v·KL) = {_f(_law123(), 4)}, close "
            "to the exact gain: at β = 1 the tilt is still near the reference.",
        ]
    )


EX_12_3 = Exercise(
    id="12.3",
    source=CH12,
    title="Reward gain against the square root of KL",
    statement=(
        "Under π₀ let the reward have mean μ and variance v, and let κ = 1/β be small. Expand "
        "log Z(κ) = log E_π₀[exp(κr)] up to κ², and use what log Z says about the optimum's "
        "expected reward and KL (Section 12.3.3) to show that the reward gain is about "
        "√(2v·KL(π* ‖ π₀)). Then test the prediction on the book's 30-response model at β = 1 "
        "(answers to 4 decimals)."
    ),
    parts=(
        Part(
            "12.3 · v, the reward variance under π₀ (book's model)",
            _v123,
            4,
            "Variance is the average squared distance from the mean, under π₀.",
            traps=(
                Trap(
                    lambda: float(_book().pi0 @ _book().r ** 2),
                    "That is E[r²]: subtract the squared mean to get the variance.",
                ),
            ),
        ),
        Part(
            "12.3 · predicted gain κv at β = 1",
            lambda: float(_so123().gain),
            4,
            "The first derivative of κμ + ½κ²v, minus μ.",
        ),
        # One unit in the 4th decimal: this part chains from v, which a reader rounds first.
        Part(
            "12.3 · predicted KL ½κ²v at β = 1",
            lambda: float(_so123().kl),
            4,
            "Put the second-order log Z into KL = κ·E[r] − log Z and simplify.",
            tol=1e-4,
            traps=(
                Trap(
                    lambda: float(_so123().gain),
                    "The factor ½ of the second-order term is missing.",
                ),
            ),
        ),
        Part(
            "12.3 · exact gain E_π*[r] − μ at β = 1",
            lambda: _exact123()[0],
            4,
            "Compute π* on the 30 responses at κ = 1 and subtract the reference's mean reward.",
            tol=1e-4,
            traps=(
                Trap(
                    lambda: float(_so123().gain),
                    "That is the second-order prediction; the exact gain comes from π* itself.",
                ),
            ),
        ),
        Part(
            "12.3 · exact KL(π* ‖ π₀) at β = 1, in nats",
            lambda: _exact123()[1],
            4,
            "Sum π*·log(π*/π₀) over the 30 responses, or use Equation 12.6 with the exact log Z.",
            tol=1e-4,
            traps=(
                Trap(
                    lambda: float(_so123().kl),
                    "That is the second-order prediction; the exact KL comes from π* itself.",
                ),
            ),
            unit="nats",
        ),
        Part(
            "12.3 · √(2v·KL) at the exact KL",
            _law123,
            4,
            "Multiply the variance by twice the exact KL, then take the square root.",
            tol=1e-4,
            traps=(
                Trap(
                    lambda: math.sqrt(_v123() * _exact123()[1]),
                    "The factor 2 under the square root is missing.",
                ),
            ),
        ),
    ),
    solution=_solution_12_3,
    link="tilt?beta=1&axis=sqrt",
)


# --------------------------------------------------------------------------- 12.4


def _adv124(convention: str = "std"):
    return groups.mixed_group_advantages(3, 8, convention)


def _solution_12_4() -> str:
    hi, lo = _adv124()
    r = np.array([1.0] * 3 + [0.0] * 5)
    a = groups.group_advantages(r)
    mean = float(r.mean())
    sd = float(np.sqrt(np.mean((r - mean) ** 2)))
    p8 = groups.no_signal_probability(0.05, 8)
    p64 = groups.no_signal_probability(0.05, 64)
    return "\n".join(
        [
            f"**Centre.** The mean reward is 3/8 = {_f(mean)}; centred rewards are "
            f"{_f(1 - mean)} (correct) and {_f(-mean)} (wrong).",
            "",
            f"**Scale.** The standard deviation over the eight rewards (divisor 8) is "
            f"√({_f(mean)}·{_f(1 - mean)}) = {_f(sd)}. A correct answer gets {_f(hi, 2)} = √(5/3), "
            f"a wrong one {_f(lo, 2)} = −√(3/5). Centred values sum to zero: "
            f"3·{_f(hi, 2)} + 5·({_f(lo, 2)}) = {_f(np.sum(a), 2)}.",
            "",
            f"**No signal.** A group is useless if every answer in it is right or every one is wrong: "
            f"0.05⁸ + 0.95⁸ = {_f(p8)}. Two groups in three only cost compute. Groups of 64 bring "
            f"it down to {_f(p64)}, for eight times the samples.",
            "",
            "**For choosing problems.** The signal comes from prompts the policy solves "
            "sometimes; a training set works best at intermediate difficulty for the current "
            "policy, and that band moves as the policy improves.",
        ]
    )


EX_12_4 = Exercise(
    id="12.4",
    source=CH12,
    title="Group-relative advantages",
    statement=(
        "Eight responses to one prompt are graded: three correct (reward 1), five wrong "
        "(reward 0). Compute each response's advantage: its reward minus the group mean, "
        "divided by the standard deviation of the eight rewards (divisor 8). Then take a "
        "prompt the policy solves with probability p = 0.05 and groups of 8: how likely is a "
        "group to carry no training signal, and how does that change with groups of 64?"
    ),
    parts=(
        Part(
            "12.4 · advantage of a correct answer",
            lambda: float(_adv124()[0]),
            2,
            "Subtract the group mean from the reward, then divide by the standard deviation "
            "of the eight rewards.",
            traps=(
                Trap(
                    lambda: float(_adv124("std_unbiased")[0]),
                    "Divide by the standard deviation with divisor 8 (the number of "
                    "rewards), not 7.",
                ),
                Trap(
                    lambda: float(_adv124("dr_grpo")[0]),
                    "That is only centred: divide by the group's standard deviation too.",
                ),
            ),
        ),
        Part(
            "12.4 · advantage of an incorrect answer",
            lambda: float(_adv124()[1]),
            2,
            "Subtract the group mean from the reward, then divide by the standard deviation "
            "of the eight rewards.",
            traps=(
                Trap(
                    lambda: float(_adv124("std_unbiased")[1]),
                    "Divide by the standard deviation with divisor 8 (the number of "
                    "rewards), not 7.",
                ),
                Trap(
                    lambda: float(_adv124("dr_grpo")[1]),
                    "That is only centred: divide by the group's standard deviation too.",
                ),
            ),
        ),
        Part(
            "12.4 · P(no signal) with p = 0.05 and groups of 8",
            lambda: float(groups.no_signal_probability(0.05, 8)),
            3,
            "A group is useless when all eight are right or all eight are wrong.",
            traps=(
                Trap(
                    lambda: float(groups.signal_probability(0.05, 8)),
                    "That is the chance a group does carry signal; the question asks "
                    "for the opposite.",
                ),
            ),
        ),
        Part(
            "12.4 · P(no signal) with p = 0.05 and groups of 64",
            lambda: float(groups.no_signal_probability(0.05, 64)),
            3,
            "The same two ways to be useless, now with 64 responses in the group.",
            traps=(
                Trap(
                    lambda: float(groups.signal_probability(0.05, 64)),
                    "That is the chance a group does carry signal; the question asks "
                    "for the opposite.",
                ),
            ),
        ),
    ),
    solution=_solution_12_4,
    link="groups?p=0.05&k=8",
    link_note=(
        "Its readout gives the share of groups that are all right or all wrong at p = 0.05 "
        "and k = 8 (type 64 for k to compare), but its “likeliest mixed group” is 1 of 8, "
        "not this exercise's group: to see that one, type 1,1,1,0,0,0,0,0 into “Grades of "
        "one group” under “Advantages of one group” at the foot of the page."
    ),
)


EXERCISES: list[Exercise] = [EX_12_1, EX_12_2, EX_12_3, EX_12_4]
